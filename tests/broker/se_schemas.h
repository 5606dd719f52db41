/* tests/broker/se_schemas.h: hold a handler's output to the outputSchema
 * the se-tools package publishes for the tool that passes it on
 * (packages/se-tools/transitions.json, read from $top_srcdir), with the
 * project's own validator (common/jschema.h) -- the check the daemon makes
 * before it hands a result over (daemon/mcp.c, dresult_verdict). The
 * coordinator adds "world" to every output, so the copy validated gets an
 * empty one. Header-only: each test that includes it gets its own copy. */
#ifndef WORLD_TESTS_BROKER_SE_SCHEMAS_H
#define WORLD_TESTS_BROKER_SE_SCHEMAS_H
#include "common/jschema.h"
#include "tests/tap.h"
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static json_t *se_manifest;

/* The outputSchema of tool id (bails when the manifest or the tool is
 * missing: a test of the schemas cannot pass without them). */
__attribute__((unused)) static const json_t *se_output_schema(const char *id)
{
	if (!se_manifest) {
		const char *src = getenv("top_srcdir");
		if (!src) bail("top_srcdir must be set (make check)");
		char p[4096];
		snprintf(p, sizeof p, "%s/packages/se-tools/transitions.json", src);
		json_error_t je;
		se_manifest = json_load_file(p, 0, &je);
		if (!se_manifest) bail("load %s: %s", p, je.text);
	}
	size_t i;
	json_t *d;
	json_array_foreach(se_manifest, i, d) {
		const char *tid = json_string_value(json_object_get(d, "id"));
		if (tid && strcmp(tid, id) == 0) {
			const json_t *s = json_object_get(d, "outputSchema");
			if (!s) bail("se-tools %s has no outputSchema", id);
			return s;
		}
	}
	bail("se-tools has no tool %s", id);
	return NULL;
}

/* 0 when out (plus "world":{}) satisfies tool's outputSchema; else -1 with
 * the validator's line in why. */
__attribute__((unused)) static int se_schema_check(const char *tool, const json_t *out, char *why, size_t n)
{
	if (!json_is_object(out)) {
		snprintf(why, n, "no output object");
		return -1;
	}
	json_t *c = json_deep_copy(out);
	if (!c || json_object_set_new(c, "world", json_object()) < 0) bail("out of memory");
	struct world_err e = { 0, "" };
	int rc = jschema_validate(se_output_schema(tool), c, &e);
	json_decref(c);
	/* a diagnostic longer than why is cut, which is fine for a test message */
	if (snprintf(why, n, "%s", rc < 0 ? e.msg : "valid") >= (int)n && n > 0) why[n - 1] = '\0';
	return rc;
}

/* One assertion: out satisfies the outputSchema of tool. */
__attribute__((unused)) static void se_schema_ok(const char *tool, const json_t *out, const char *what)
{
	char why[512];
	ok(se_schema_check(tool, out, why, sizeof why) == 0, "%s: the output satisfies %s's outputSchema (%s)", what,
	   tool, why);
}
#endif
