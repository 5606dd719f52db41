/* cli/world-publish.c: the publisher's command line (docs/design.md §7,
 * docs/publishing.md).
 *
 *   world-publish transitions --store DB --manifest FILE
 *                 (--ailang-bin BIN | --interpreter-ref sha256:...) [--live]
 *                 [--sources-relative-to cwd|manifest]
 *   world-publish check --manifest FILE --ailang-bin BIN [--store DB]
 *                 [--sources-relative-to cwd|manifest]
 *
 * Owns: reading a manifest of transition descriptors, every check a
 * descriptor passes before it is published (keys, id, MCP tool name,
 * schemas, source text, a bounded source check in a `source-check` capsule,
 * `main` taking one argument, the semantics epoch), the attended
 * confirmation (cli/attended.h) and the report. The write itself -- the
 * merge over the head, the sources, the next world/transition-registry/v1
 * object and the compare-and-swap of its head, in one transaction; a
 * retire likewise -- is coordinator/registry.h's, as are the stored
 * formats.
 *
 * Order of `transitions` (why): --live is refused first; the store is
 * opened as the writer before anything else (a running daemon is reported
 * before anyone types a phrase); the manifest, the interpreter, the epoch
 * and every source are checked with reads only; then the attended step;
 * then the comparison with the current head, so an identical republish
 * writes nothing at all, not even the interpreter archive. */
#include "cli/store_uri.h"
#include "cli/attended.h"
#include "cli/default_interp.h"
#include "cli/output.h"
#include "broker/effect.h"
#include "broker/grants.h"
#include "coordinator/catalog.h"
#include "coordinator/confirm.h"
#include "coordinator/registry.h"
#include "common/canon.h"
#include "common/error.h"
#include "common/file.h"
#include "common/jschema.h"
#include "common/ref.h"
#include "store/db.h"
#include "store/store.h"
#include "supervisor/supervisor.h"
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MANIFEST_MAX ((size_t)64 << 20) /* bytes of the manifest file */
#define SOURCE_MAX ((size_t)1 << 20)    /* bytes of one transition source */
#define SCHEMA_MAX ((size_t)256 << 10)  /* bytes of one canonical schema (docs/design.md §10) */
#define ENTRIES_MAX REGISTRY_ENTRIES_MAX /* descriptors per manifest (docs/design.md §10) */
#define ID_MAX 128
#define TOOL_NAME_MAX REGISTRY_TOOL_NAME_MAX
#define TITLE_MAX 1024
#define DESCRIPTION_MAX ((size_t)64 << 10)
#define EFFECTS_MAX 64
#define SOURCE_ID REGISTRY_SOURCE
#define PROVENANCE "world-publish"

static const char *const entry_keys[] = {
	"id", "title", "description", "transitionFnFile", "transitionFn", "inputSchema",
	"outputSchema", "access", "declaredEffects", "semanticsEpoch", "inputRequests", "execution", NULL,
};

/* Appended to a copy of each source for the second bounded check: it only
 * type-checks when the module defines `main` taking exactly one argument. */
static const char main_probe[] =
	"\n-- world-publish: main must take one argument\n"
	"func world_publish_probe_main__(input: string) -> string { main(input) }\n";

struct entry {
	int index;              /* 1-based position in the manifest */
	const json_t *m;        /* the manifest object (borrowed from the root) */
	const char *id;         /* set once the id is valid */
	const char *file;       /* transitionFnFile as given, or NULL */
	char path[4200];        /* the file read, as diagnostics name it: transitionFnFile as given (relative
	                         * to the current directory), or joined to the manifest's directory under
	                         * --sources-relative-to manifest */
	char *source;           /* canonical source (file or stored object) */
	size_t source_len;
	char fn[WORLD_REF_SIZE];
	json_t *input, *output; /* owned */
	json_t *access;         /* owned: null or {cost,effect,scope} */
	json_t *effects;        /* owned: array */
	json_t *asks;           /* owned: inputRequests (coordinator/confirm.h), or NULL */
	json_t *exec;           /* owned: execution {"taskSupport"} (MCP tasks, docs/publishing.md), or NULL */
	const char *title, *description;
	long long epoch;        /* given semanticsEpoch, or 0 */
	char tool[TOOL_NAME_MAX * 2 + 8];
	struct world_err err;   /* code 0 while the entry is fine */
	int checked;            /* the capsule checks ran on this entry's source */
};

/* Where a relative transitionFnFile is read from (--sources-relative-to):
 * the current directory, as the reference defines it (the default), or the
 * manifest's directory when the publisher asks for it; never a guess. */
enum sources_rel { SOURCES_CWD, SOURCES_MANIFEST };

struct manifest {
	json_t *root;
	struct entry *e;
	size_t n;               /* transitions (entries without "kind") */
	json_t *prompts;        /* stored forms (coordinator/catalog.h) of the "kind": "prompt" entries */
	json_t *resources;      /* ... and of the "kind": "resource" entries */
};

/* ---------------------------------------------------------------- helpers */

static const char *prog_verb = "world-publish";

static int fail(const struct world_err *err)
{
	fflush(stdout);
	fprintf(stderr, "%s: %s\n", prog_verb, err->msg[0] ? err->msg : "failed");
	return err->code ? err->code : WX_FAIL;
}

static int usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "%s: usage: ", prog_verb);
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, " (see world-publish --help)\n");
	va_end(ap);
	return WX_USAGE;
}

/* s quoted for a one-line message: printable ASCII and UTF-8 as is, other
 * bytes as \xNN, long strings cut with "...". */
static const char *quote(const char *s, char *out, size_t n)
{
	size_t k = 0;
	out[k++] = '"';
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (k + 8 >= n || (size_t)(p - (const unsigned char *)s) >= 160) {
			k += (size_t)snprintf(out + k, n - k, "...");
			break;
		}
		if (*p < 0x20 || *p == 0x7f || *p == '"' || *p == '\\') k += (size_t)snprintf(out + k, n - k, "\\x%02x", *p);
		else out[k++] = (char)*p;
	}
	if (k + 2 > n) k = n - 2;
	out[k++] = '"';
	out[k] = 0;
	return out;
}

/* "entry "ID"" once the id is known, else "entry #N". */
static const char *ename(const struct entry *e, char *out, size_t n)
{
	if (e->id) {
		char q[400];
		snprintf(out, n, "entry %s", quote(e->id, q, sizeof q));
	} else {
		snprintf(out, n, "entry #%d", e->index);
	}
	return out;
}

static int entry_fail(struct entry *e, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int entry_fail(struct entry *e, int code, const char *fmt, ...)
{
	char name[512], msg[900];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	werr(&e->err, code, "%s: %s", ename(e, name, sizeof name), msg);
	return -1;
}

/* An error from a callee, prefixed with the entry and what was being done. */
static int entry_fail_err(struct entry *e, const struct world_err *cause, const char *what)
{
	return entry_fail(e, cause->code ? cause->code : WX_FAIL, "%s: %s", what, cause->msg);
}

/* ---------------------------------------------------------------- ids */

/* docs/design.md §7: 1-128 bytes of [a-z0-9_./-], in non-empty segments separated
 * by '.' or '/'. */
static int id_check(const char *id, char *why, size_t n)
{
	size_t len = strlen(id);
	if (len == 0 || len > ID_MAX) {
		snprintf(why, n, "is %zu bytes; an id is 1-%d bytes", len, ID_MAX);
		return -1;
	}
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)id[i];
		int sep = c == '.' || c == '/';
		if (!sep && !(c >= 'a' && c <= 'z') && !(c >= '0' && c <= '9') && c != '_' && c != '-') {
			snprintf(why, n, "byte %zu (0x%02x) is not one of [a-z0-9_./-]", i + 1, c);
			return -1;
		}
		if (sep && (i == 0 || i + 1 == len || id[i + 1] == '.' || id[i + 1] == '/')) {
			snprintf(why, n, "has an empty segment at byte %zu (segments are separated by one '.' or '/')",
			         i + 1);
			return -1;
		}
	}
	return 0;
}

/* ---------------------------------------------------------------- fields */

/* A declared effect must be one the broker's handler table serves
 * (broker/handlers.c, read here, never copied): every call of a transition
 * declaring another is refused before execution (coordinator/coordinator.c),
 * so publishing it is refused, naming the effects that do have handlers. */
static int effect_served(struct entry *e, const char *name, const char *what)
{
	if (broker_handler_find(broker_handlers, name)) return 0;
	char list[600] = "";
	size_t k = 0;
	for (const struct broker_handler_entry *h = broker_handlers; h->effect && k < sizeof list; h++) {
		int w = snprintf(list + k, sizeof list - k, "%s%s", k ? ", " : "", h->effect);
		if (w < 0) break;
		k += (size_t)w;
	}
	char q[400];
	return entry_fail(e, WX_BAD_INPUT, "%s: effect %s is served by no handler (effects with a handler: %s)", what,
	                  quote(name, q, sizeof q), list);
}

static int text_field(struct entry *e, const char *key, size_t max, const char **out)
{
	*out = "";
	const json_t *v = json_object_get(e->m, key);
	if (!v) return 0;
	if (!json_is_string(v)) return entry_fail(e, WX_BAD_INPUT, "%s is not a string", key);
	if (json_string_length(v) > max)
		return entry_fail(e, WX_BAD_INPUT, "%s is %zu bytes; at most %zu", key, json_string_length(v), max);
	if (strlen(json_string_value(v)) != json_string_length(v))
		return entry_fail(e, WX_BAD_INPUT, "%s contains a NUL character", key);
	*out = json_string_value(v);
	return 0;
}

/* {effect, scope, cost} -> a new canonical object; what names it. */
static json_t *requirement(struct entry *e, const json_t *v, const char *what)
{
	if (!json_is_object(v)) {
		entry_fail(e, WX_BAD_INPUT, "%s is not an object {effect,scope,cost}", what);
		return NULL;
	}
	const char *k;
	json_t *x;
	json_object_foreach((json_t *)v, k, x) {
		if (strcmp(k, "effect") && strcmp(k, "scope") && strcmp(k, "cost")) {
			char q[400];
			entry_fail(e, WX_BAD_INPUT, "%s: unknown key %s (known: effect, scope, cost)", what,
			           quote(k, q, sizeof q));
			return NULL;
		}
	}
	const json_t *ef = json_object_get(v, "effect"), *sc = json_object_get(v, "scope"),
	             *co = json_object_get(v, "cost");
	if (!json_is_string(ef)) {
		entry_fail(e, WX_BAD_INPUT, "%s: effect must be a string: %s", what, BROKER_EFFECT_GRAMMAR);
		return NULL;
	}
	if (!json_is_string(sc)) {
		entry_fail(e, WX_BAD_INPUT, "%s: scope must be a string: %s", what, BROKER_SCOPE_GRAMMAR);
		return NULL;
	}
	const char *why = broker_requirement_why(json_string_value(ef), json_string_value(sc));
	if (why) {
		char q[400];
		entry_fail(e, WX_BAD_INPUT, "%s: %s, not %s", what, why,
		           quote(strncmp(why, "effect", 6) == 0 ? json_string_value(ef) : json_string_value(sc), q, sizeof q));
		return NULL;
	}
	if (!json_is_integer(co) || json_integer_value(co) < 0 || json_integer_value(co) > (1LL << 53)) {
		entry_fail(e, WX_BAD_INPUT, "%s: cost must be an integer 0..2^53", what);
		return NULL;
	}
	return json_pack("{s:I, s:s, s:s}", "cost", (json_int_t)json_integer_value(co), "effect",
	                 json_string_value(ef), "scope", json_string_value(sc));
}

static json_t *schema_field(struct entry *e, const char *key)
{
	const json_t *v = json_object_get(e->m, key);
	if (!v) return json_pack("{s:s}", "type", "object"); /* documented default */
	if (!json_is_object(v)) {
		entry_fail(e, WX_BAD_INPUT, "%s is not a JSON object", key);
		return NULL;
	}
	struct world_err err = { 0, "" };
	size_t len;
	char *canon = world_canon_json(v, &len, &err);
	if (!canon) {
		entry_fail_err(e, &err, key);
		return NULL;
	}
	free(canon);
	if (len > SCHEMA_MAX) {
		entry_fail(e, WX_BAD_INPUT, "%s is %zu bytes canonicalised; at most %zu", key, len, SCHEMA_MAX);
		return NULL;
	}
	if (jschema_check(v, &err) < 0) {
		entry_fail_err(e, &err, key);
		return NULL;
	}
	/* MCP's inputSchema and outputSchema describe an object (the arguments,
	 * structuredContent); an absent type is the documented object default */
	const json_t *ty = json_object_get(v, "type");
	if (ty && !(json_is_string(ty) && strcmp(json_string_value(ty), "object") == 0)) {
		entry_fail(e, WX_BAD_INPUT, "%s: the top level must be an object schema (\"type\": \"object\"), not %s", key,
		           json_is_string(ty) ? json_string_value(ty) : "a list of types");
		return NULL;
	}
	return json_deep_copy(v);
}

/* dir/rel as an absolute path into out (the path a message says was
 * tried); dir NULL = the current directory. Falls back to the joined
 * relative path when the current directory cannot be named. */
static void path_tried(const char *dir, const char *rel, char *out, size_t n)
{
	char cwd[PATH_MAX];
	int w;
	if (rel[0] == '/') w = snprintf(out, n, "%s", rel);
	else if (dir && dir[0] == '/') w = snprintf(out, n, "%s%s%s", dir, strcmp(dir, "/") ? "/" : "", rel);
	else if (getcwd(cwd, sizeof cwd))
		w = dir && dir[0] ? snprintf(out, n, "%s%s%s/%s", cwd, strcmp(cwd, "/") ? "/" : "", dir, rel)
		                  : snprintf(out, n, "%s%s%s", cwd, strcmp(cwd, "/") ? "/" : "", rel);
	else w = dir && dir[0] ? snprintf(out, n, "%s/%s", dir, rel) : snprintf(out, n, "%s", rel);
	if (w < 0 || (size_t)w >= n) snprintf(out, n, "%s", rel);
}

/* Everything about one entry that needs neither a store nor a capsule.
 * A relative transitionFnFile is read from the current directory (rel
 * SOURCES_CWD, the reference's definition), or from base, the manifest's
 * directory ("" = the current one), under --sources-relative-to manifest.
 * mname is the manifest as messages name it. */
static int validate_entry(struct entry *e, const char *mname, const char *base, enum sources_rel rel)
{
	char q[400], why[200];
	if (!json_is_object(e->m)) return entry_fail(e, WX_BAD_INPUT, "is not a JSON object");
	const json_t *idv = json_object_get(e->m, "id");
	if (!idv) return entry_fail(e, WX_BAD_INPUT, "id is required");
	if (!json_is_string(idv)) return entry_fail(e, WX_BAD_INPUT, "id is not a string");
	const char *id = json_string_value(idv);
	if (strlen(id) != json_string_length(idv)) return entry_fail(e, WX_BAD_INPUT, "id contains a NUL character");
	if (id_check(id, why, sizeof why) < 0) return entry_fail(e, WX_BAD_INPUT, "id %s %s", quote(id, q, sizeof q), why);
	e->id = id;
	size_t tl = registry_tool_name(id, e->tool, sizeof e->tool);
	if (tl > TOOL_NAME_MAX)
		return entry_fail(e, WX_BAD_INPUT, "MCP tool name %s is %zu bytes after escaping; at most %d",
		                  quote(e->tool, q, sizeof q), tl, TOOL_NAME_MAX);
	const char *k;
	json_t *x;
	json_object_foreach((json_t *)e->m, k, x) {
		int known = 0;
		for (size_t i = 0; entry_keys[i]; i++)
			if (strcmp(k, entry_keys[i]) == 0) known = 1;
		if (!known) return entry_fail(e, WX_BAD_INPUT, "unknown key %s", quote(k, q, sizeof q));
	}
	if (text_field(e, "title", TITLE_MAX, &e->title) < 0) return -1;
	if (text_field(e, "description", DESCRIPTION_MAX, &e->description) < 0) return -1;

	const json_t *ff = json_object_get(e->m, "transitionFnFile"), *fr = json_object_get(e->m, "transitionFn");
	if (ff && fr) return entry_fail(e, WX_BAD_INPUT, "give exactly one of transitionFnFile and transitionFn");
	if (!ff && !fr)
		return entry_fail(e, WX_BAD_INPUT,
		                  "a source is required: transitionFnFile (a source file) or transitionFn (a stored "
		                  "source's ref)");
	if (fr) {
		struct world_err err = { 0, "" };
		if (!json_is_string(fr)) return entry_fail(e, WX_BAD_INPUT, "transitionFn is not a string");
		if (world_ref_parse(json_string_value(fr), "transitionFn", NULL, &err) < 0)
			return entry_fail(e, WX_BAD_INPUT, "%s", err.msg);
		snprintf(e->fn, sizeof e->fn, "%s", json_string_value(fr));
	} else {
		if (!json_is_string(ff) || !json_string_length(ff))
			return entry_fail(e, WX_BAD_INPUT, "transitionFnFile is not a non-empty string");
		e->file = json_string_value(ff);
		if (strlen(e->file) != json_string_length(ff))
			return entry_fail(e, WX_BAD_INPUT, "transitionFnFile contains a NUL character");
		char what[1000], mq[400];
		snprintf(what, sizeof what, "transitionFnFile %s of manifest %s", quote(e->file, q, sizeof q),
		         quote(mname, mq, sizeof mq));
		int by_manifest = rel == SOURCES_MANIFEST && e->file[0] != '/' && base[0];
		int pn = by_manifest ? snprintf(e->path, sizeof e->path, "%s/%s", strcmp(base, "/") ? base : "", e->file)
		                     : snprintf(e->path, sizeof e->path, "%s", e->file);
		if (pn < 0 || (size_t)pn >= sizeof e->path) return entry_fail(e, WX_BAD_INPUT, "%s: path too long", what);
		/* the file is opened by the absolute path it resolves to, so the
		 * one line of a refusal names exactly the path tried */
		char tried[PATH_MAX + 64];
		path_tried(NULL, e->path, tried, sizeof tried);
		struct world_err err = { 0, "" };
		char *raw;
		size_t len;
		if (world_read_file(tried, SOURCE_MAX, &raw, &len, &err) < 0) {
			/* a relative path that is there under the other rule: say
			 * so, and still refuse (the rule is the flag's, never a guess) */
			char other[PATH_MAX + 64];
			struct stat sb;
			if (err.code == WX_NOT_FOUND && e->file[0] != '/' && base[0] && strcmp(base, ".") != 0) {
				if (by_manifest) path_tried(NULL, e->file, other, sizeof other);
				else path_tried(base, e->file, other, sizeof other);
				if (stat(other, &sb) == 0 && S_ISREG(sb.st_mode) && strlen(err.msg) + strlen(other) + 80 < sizeof err.msg) {
					size_t ml = strlen(err.msg);
					snprintf(err.msg + ml, sizeof err.msg - ml,
					         by_manifest ? " (relative to the current directory it is %s: drop --sources-relative-to manifest)"
					                     : " (relative to the manifest's directory it is %s: give --sources-relative-to manifest)",
					         other);
				}
			}
			return entry_fail_err(e, &err, what);
		}
		e->source = world_canon_source(raw, len, &e->source_len, &err);
		free(raw);
		if (!e->source) return entry_fail_err(e, &err, what);
		if (world_hash_ref(e->source, e->source_len, e->fn, &err) < 0) return entry_fail_err(e, &err, what);
	}
	if (!(e->input = schema_field(e, "inputSchema"))) return -1;
	if (!(e->output = schema_field(e, "outputSchema"))) return -1;

	const json_t *ac = json_object_get(e->m, "access");
	if (!ac || json_is_null(ac)) e->access = json_null();
	else if (!(e->access = requirement(e, ac, "access"))) return -1;

	const json_t *de = json_object_get(e->m, "declaredEffects");
	e->effects = json_array();
	if (!e->effects) return entry_fail(e, WX_FAIL, "out of memory");
	if (de) {
		if (!json_is_array(de)) return entry_fail(e, WX_BAD_INPUT, "declaredEffects is not an array");
		if (json_array_size(de) > EFFECTS_MAX)
			return entry_fail(e, WX_BAD_INPUT, "declaredEffects has %zu entries; at most %d", json_array_size(de),
			                  EFFECTS_MAX);
		size_t i;
		json_t *r;
		json_array_foreach(de, i, r) {
			char what[64];
			snprintf(what, sizeof what, "declaredEffects[%zu]", i);
			json_t *c = requirement(e, r, what);
			if (!c) return -1;
			json_array_append_new(e->effects, c);
			if (effect_served(e, json_string_value(json_object_get(c, "effect")), what) < 0) return -1;
		}
	}
	const json_t *ir = json_object_get(e->m, "inputRequests");
	if (ir) {
		char why[400];
		if (confirm_decl_check(ir, why, sizeof why) < 0) return entry_fail(e, WX_BAD_INPUT, "%s", why);
		e->asks = json_incref((json_t *)ir);
	}
	/* execution: {"taskSupport": "forbidden" | "optional" | "required"}, the
	 * MCP Tasks extension's (daemon/mcp_tasks.h): whether a call may or
	 * must run as a task */
	const json_t *ex = json_object_get(e->m, "execution");
	if (ex) {
		const char *ts = json_string_value(json_object_get(ex, "taskSupport"));
		if (!json_is_object(ex) || json_object_size(ex) != 1 || !ts ||
		    (strcmp(ts, "forbidden") != 0 && strcmp(ts, "optional") != 0 && strcmp(ts, "required") != 0))
			return entry_fail(e, WX_BAD_INPUT, "execution must be {\"taskSupport\": \"forbidden\", \"optional\" "
			                  "or \"required\"}");
		e->exec = json_incref((json_t *)ex);
	}
	const json_t *ep = json_object_get(e->m, "semanticsEpoch");
	if (ep) {
		if (!json_is_integer(ep) || json_integer_value(ep) < 1)
			return entry_fail(e, WX_BAD_INPUT, "semanticsEpoch must be an integer >= 1");
		e->epoch = json_integer_value(ep);
	}
	return 0;
}

static void manifest_free(struct manifest *mf)
{
	for (size_t i = 0; mf->e && i < mf->n; i++) {
		struct entry *e = &mf->e[i];
		free(e->source);
		json_decref(e->input);
		json_decref(e->output);
		json_decref(e->access);
		json_decref(e->effects);
		json_decref(e->asks);
		json_decref(e->exec);
	}
	free(mf->e);
	json_decref(mf->root);
	json_decref(mf->prompts);
	json_decref(mf->resources);
	memset(mf, 0, sizeof *mf);
}

/* Validates the manifest text read from path (tests/fuzz/fuzz_manifest.c
 * calls it on bytes); per-entry refusals are left in each entry's err (the
 * manifest as a whole failing returns -1). */
static int manifest_parse(const char *text, size_t len, const char *path, enum sources_rel rel,
                          struct manifest *mf, struct world_err *err)
{
	memset(mf, 0, sizeof *mf);
	char q[400];
	mf->root = world_json_parse(text, len, err);
	if (!mf->root) {
		/* the parser names a byte offset: say the line and column too */
		const char *b = strstr(err->msg, "byte ");
		char *end;
		unsigned long long at = b ? strtoull(b + 5, &end, 10) : 0;
		if (b && end != b + 5 && at <= len) {
			size_t line = 1, col = 1;
			for (size_t i = 0; i < at; i++) {
				if (text[i] == '\n') { line++; col = 1; }
				else if (((unsigned char)text[i] & 0xC0) != 0x80) col++; /* characters, not bytes */
			}
			werr_prefix(err, "line %zu, column %zu", line, col);
		}
		return werr_prefix(err, "manifest %s", quote(strcmp(path, "-") ? path : "(stdin)", q, sizeof q));
	}
	if (!json_is_array(mf->root))
		return werr(err, WX_BAD_INPUT, "manifest %s: not a JSON array of descriptors", quote(path, q, sizeof q));
	size_t total = json_array_size(mf->root);
	if (total == 0) return werr(err, WX_BAD_INPUT, "manifest %s: holds no descriptors", quote(path, q, sizeof q));
	if (total > ENTRIES_MAX)
		return werr(err, WX_BAD_INPUT, "manifest %s: %zu descriptors; at most %d", quote(path, q, sizeof q), total,
		            ENTRIES_MAX);
	/* prompts and resources (an entry with "kind"): checked here, whole */
	mf->prompts = json_array();
	mf->resources = json_array();
	if (!mf->prompts || !mf->resources) return werr(err, WX_FAIL, "manifest: out of memory");
	for (size_t i = 0; i < total; i++) {
		json_t *m = json_array_get(mf->root, i), *kind = json_is_object(m) ? json_object_get(m, "kind") : NULL;
		if (!kind) { mf->n++; continue; }
		const char *k = json_string_value(kind);
		int prompt = k && strcmp(k, "prompt") == 0;
		if (!k || (!prompt && strcmp(k, "resource") != 0))
			return werr(err, WX_BAD_INPUT, "manifest %s: entry #%zu: \"kind\" must be \"prompt\" or \"resource\" (a "
			            "transition's entry has no \"kind\")", quote(path, q, sizeof q), i + 1);
		char why[1400];
		json_t *stored = NULL;
		if ((prompt ? catalog_prompt_from_manifest(m, &stored, why, sizeof why)
		            : catalog_resource_from_manifest(m, &stored, why, sizeof why)) < 0)
			return werr(err, WX_BAD_INPUT, "manifest %s: entry #%zu: %s", quote(path, q, sizeof q), i + 1, why);
		json_t *list = prompt ? mf->prompts : mf->resources;
		size_t j;
		json_t *o;
		json_array_foreach(list, j, o) if (strcmp(catalog_key(o), catalog_key(stored)) == 0) {
			json_decref(stored);
			return werr(err, WX_BAD_INPUT, "manifest %s: entry #%zu: %s \"%.200s\" twice", quote(path, q, sizeof q),
			            i + 1, prompt ? "prompt" : "resource", catalog_key(o));
		}
		size_t bytes = 0;
		char *canon = world_canon_json(stored, &bytes, NULL);
		free(canon);
		if (!canon || bytes > CATALOG_ENTRY_MAX) {
			json_decref(stored);
			return werr(err, WX_BAD_INPUT, "manifest %s: entry #%zu: %zu bytes canonicalised; at most %d",
			            quote(path, q, sizeof q), i + 1, bytes, CATALOG_ENTRY_MAX);
		}
		json_array_append_new(list, stored);
	}
	mf->e = calloc(mf->n ? mf->n : 1, sizeof *mf->e);
	if (!mf->e) return werr(err, WX_FAIL, "manifest: out of memory");
	/* the manifest's directory, without a trailing slash ("/" for one in
	 * the root); "" when it has none (the current directory, or stdin);
	 * read only under --sources-relative-to manifest */
	char base[PATH_MAX] = "";
	const char *slash = strcmp(path, "-") ? strrchr(path, '/') : NULL;
	if (slash) {
		size_t bl = slash == path ? 1 : (size_t)(slash - path);
		if (bl >= sizeof base) return werr(err, WX_BAD_INPUT, "manifest %s: path too long", quote(path, q, sizeof q));
		memcpy(base, path, bl);
		base[bl] = 0;
	}
	for (size_t i = 0, k = 0; i < total; i++) {
		json_t *m = json_array_get(mf->root, i);
		if (json_is_object(m) && json_object_get(m, "kind")) continue;
		mf->e[k].index = (int)i + 1;
		mf->e[k].m = m;
		validate_entry(&mf->e[k++], strcmp(path, "-") ? path : "(stdin)", base, rel);
	}
	for (size_t i = 0; i < mf->n; i++) {
		if (!mf->e[i].id) continue;
		for (size_t j = 0; j < i; j++)
			if (mf->e[j].id && strcmp(mf->e[i].id, mf->e[j].id) == 0) {
				if (!mf->e[i].err.code)
					entry_fail(&mf->e[i], WX_BAD_INPUT, "duplicate id (also entry #%d)", mf->e[j].index);
				break;
			}
	}
	return 0;
}

/* Standard input up to max bytes (--manifest -). A terminal is refused:
 * the manifest is data, never typed where the confirmation is. */
static int read_stdin(size_t max, char **out, size_t *len, struct world_err *err)
{
	if (isatty(STDIN_FILENO)) return werr(err, WX_BAD_INPUT, "stdin is a terminal; pipe the manifest in or give a file");
	size_t cap = 65536, n = 0;
	char *b = malloc(cap);
	for (;;) {
		if (!b) return werr(err, WX_FAIL, "out of memory reading stdin");
		if (n == cap) {
			if (cap > max) { free(b); return werr(err, WX_BAD_INPUT, "stdin is over the %zu-byte cap", max); }
			char *nb = realloc(b, cap * 2);
			if (!nb) free(b);
			b = nb;
			cap *= 2;
			continue;
		}
		ssize_t r = read(STDIN_FILENO, b + n, cap - n);
		if (r < 0 && errno == EINTR) continue;
		if (r < 0) {
			int e = errno;
			free(b);
			return werr(err, WX_IO, "read stdin: %s", strerror(e));
		}
		if (r == 0) break;
		n += (size_t)r;
	}
	if (n > max) { free(b); return werr(err, WX_BAD_INPUT, "stdin is over the %zu-byte cap", max); }
	*out = b;
	*len = n;
	return 0;
}

/* Reads ("-" = standard input) and validates the manifest (manifest_parse). */
static int manifest_load(const char *path, enum sources_rel rel, struct manifest *mf, struct world_err *err)
{
	memset(mf, 0, sizeof *mf);
	char *text;
	size_t len;
	int rc0 = strcmp(path, "-") == 0 ? read_stdin(MANIFEST_MAX, &text, &len, err)
	                                 : world_read_file(path, MANIFEST_MAX, &text, &len, err);
	if (rc0 < 0) return werr_prefix(err, "manifest");
	int rc = manifest_parse(text, len, path, rel, mf, err);
	free(text);
	return rc;
}

/* A transitionFn entry: the stored object must be a transition source in
 * canonical form. */
static int resolve_stored(struct world_store *st, struct entry *e)
{
	struct world_object o;
	struct world_err err = { 0, "" };
	if (world_object_get(st, e->fn, &o, &err) < 0) {
		if (err.code == WX_NOT_FOUND)
			return entry_fail(e, WX_NOT_FOUND,
			                  "transitionFn %s is not stored in this store; publish the source with "
			                  "transitionFnFile first",
			                  e->fn);
		return entry_fail_err(e, &err, "transitionFn");
	}
	int rc = 0;
	if (strcmp(o.semantic_id, SOURCE_ID) != 0) {
		rc = entry_fail(e, WX_BAD_INPUT, "transitionFn %s is a %s object, not %s", e->fn, o.semantic_id, SOURCE_ID);
	} else {
		size_t cl;
		char *c = world_canon_source((const char *)o.payload, o.len, &cl, &err);
		if (!c || cl != o.len || memcmp(c, o.payload, cl) != 0)
			rc = entry_fail(e, WX_BAD_INPUT, "transitionFn %s: the stored source is not canonical", e->fn);
		free(c);
		if (rc == 0) {
			e->source = (char *)o.payload;
			e->source_len = o.len;
			o.payload = NULL;
		}
	}
	world_object_free(&o);
	return rc;
}

/* `export func main(` (or `export pure func main(`) at the start of a line:
 * the interpreter contract has no way to ask which names a module exports,
 * and the probe check below proves only that `main` exists with one
 * parameter. */
static int exports_main(const char *src)
{
	regex_t re;
	if (regcomp(&re, "^[ \t]*(@[A-Za-z_]+\\([^)]*\\)[ \t]*)*export[ \t]+(pure[ \t]+)?func[ \t]+main[ \t]*\\(",
	            REG_EXTENDED | REG_NOSUB | REG_NEWLINE) != 0)
		return 0;
	int found = regexec(&re, src, 0, NULL, 0) == 0;
	regfree(&re);
	return found;
}

/* The bounded source checks of one entry, in source-check capsules. */
static int check_entry(struct supervisor *s, struct entry *e)
{
	struct sup_result res;
	struct world_err err = { 0, "" };
	int rc = sup_check_source(s, e->source, e->source_len, &res, &err);
	sup_result_free(&res);
	if (rc < 0 && err.code == WX_CHECK_REFUSED &&
	    (strstr(err.msg, "CHK_NO_MAIN") || strstr(err.msg, "CHK_MAIN_ARITY") || strstr(err.msg, "CHK_EMPTY"))) {
		/* ailang-lite's check already refuses what has no main(input) */
		const char *why = strstr(err.msg, "): ");
		return entry_fail(e, WX_CHECK_REFUSED, "the source does not define main taking one argument%s%s%s",
		                  why ? " (interpreter: " : "", why ? why + 3 : "", why ? ")" : "");
	}
	if (rc < 0) return entry_fail_err(e, &err, "source check");
	size_t plen = e->source_len + sizeof main_probe;
	char *probe = malloc(plen);
	if (!probe) return entry_fail(e, WX_FAIL, "out of memory");
	memcpy(probe, e->source, e->source_len);
	memcpy(probe + e->source_len, main_probe, sizeof main_probe);
	rc = sup_check_source(s, probe, plen - 1, &res, &err);
	sup_result_free(&res);
	free(probe);
	if (rc < 0 && err.code == WX_CHECK_REFUSED) {
		const char *why = strstr(err.msg, "): ");
		return entry_fail(e, WX_CHECK_REFUSED, "the source does not define main taking one argument%s%s%s",
		                  why ? " (interpreter: " : "", why ? why + 3 : "", why ? ")" : "");
	}
	if (rc < 0) return entry_fail_err(e, &err, "source check (main probe)");
	if (!exports_main(e->source))
		return entry_fail(e, WX_CHECK_REFUSED, "the source does not export main (no `export func main(` line)");
	return 0;
}

/* The interpreter names the copy it checked (host/capsule/main.ail, inside
 * the capsule): the publisher's diagnostics name their own file instead
 * (or the stored source's ref), so FILE:LINE:COL points at what they edit. */
static void name_user_file(struct entry *e)
{
	static const char capsule_file[] = "host/capsule/main.ail";
	char user[4300], out[sizeof e->err.msg];
	if (e->file) snprintf(user, sizeof user, "%s", e->path);
	else snprintf(user, sizeof user, "transitionFn %s", e->fn);
	const char *p = e->err.msg, *hit;
	size_t k = 0;
	if (!strstr(p, capsule_file)) return;
	while ((hit = strstr(p, capsule_file)) && k < sizeof out) {
		k += (size_t)snprintf(out + k, sizeof out - k, "%.*s%s", (int)(hit - p), p, user);
		p = hit + sizeof capsule_file - 1;
	}
	if (k < sizeof out) snprintf(out + k, sizeof out - k, "%s", p);
	memcpy(e->err.msg, out, sizeof out);
	e->err.msg[sizeof e->err.msg - 1] = 0;
}

/* check_entry, once per distinct source: an entry whose source (same ref)
 * was checked already takes that verdict, so a manifest naming one source
 * many times costs two capsule runs, not two per entry. */
static int check_all(struct supervisor *s, struct manifest *mf)
{
	int ok = 0;
	for (size_t i = 0; i < mf->n; i++) {
		struct entry *e = &mf->e[i];
		if (e->err.code) continue;
		const struct entry *same = NULL;
		for (size_t j = 0; j < i && !same; j++)
			if (mf->e[j].checked && strcmp(mf->e[j].fn, e->fn) == 0) same = &mf->e[j];
		if (!same) {
			e->checked = 1;
			if (check_entry(s, e) == 0) ok++;
			else name_user_file(e);
		} else if (same->err.code) {
			const char *why = strstr(same->err.msg, ": ");
			entry_fail(e, same->err.code, "%s", why ? why + 2 : same->err.msg);
		} else {
			ok++;
		}
	}
	return ok;
}

static struct supervisor *make_supervisor(const char *bin, const char *ref, struct world_err *err)
{
	struct sup_limits lim;
	sup_limits_default(&lim);
	struct launcher *l = launcher_capsule_new(bin, ref, err);
	if (!l) return NULL;
	return sup_new(&lim, l, err);
}

/* ---------------------------------------------------------------- registry */

static json_t *descriptor(const struct entry *e, const char *interp, long long epoch)
{
	json_t *d = json_pack("{s:O, s:O, s:s, s:s, s:O, s:s, s:O, s:I, s:s, s:s}", "access", e->access, "declaredEffects",
	                      e->effects, "description", e->description, "id", e->id, "inputSchema", e->input,
	                      "interpreter", interp, "outputSchema", e->output, "semanticsEpoch", (json_int_t)epoch, "title",
	                      e->title, "transitionFn", e->fn);
	/* only when declared, so every other descriptor keeps its bytes */
	if (d && e->asks) json_object_set(d, "inputRequests", e->asks);
	if (d && e->exec) json_object_set(d, "execution", e->exec);
	return d;
}

/* "  new prompt NAME" / "  changed ..." / "  UNCHANGED ..." per prompt and
 * resource of the manifest against cur. */
static void extras_status(const json_t *cur, const struct manifest *mf)
{
	static const char *const members[] = { "prompts", "resources" };
	for (int i = 0; i < 2; i++) {
		size_t j, k;
		json_t *d, *o;
		json_array_foreach(i ? mf->resources : mf->prompts, j, d) {
			const json_t *old = NULL;
			json_array_foreach(cur ? json_object_get(cur, members[i]) : NULL, k, o)
				if (strcmp(catalog_key(o), catalog_key(d)) == 0) old = o;
			printf("  %s %s %s\n", !old ? "new" : registry_same_json(old, d) ? "UNCHANGED" : "changed", i ? "resource" : "prompt",
			       catalog_key(d));
		}
	}
}

/* One line per descriptor of this publish against the registry cur (NULL =
 * none yet): "  new ID", "  changed ID (KEYS)" naming the keys whose bytes
 * differ, "  UNCHANGED ID"; an id retired in cur is "new" again, saying so. */
static void status_lines(const json_t *cur, const json_t *descs)
{
	size_t i;
	json_t *d;
	json_array_foreach(descs, i, d) {
		const char *id = json_string_value(json_object_get(d, "id"));
		const json_t *old = cur ? registry_find(cur, id) : NULL;
		if (!old) {
			const json_t *r = cur ? registry_retired_find(cur, id) : NULL;
			if (r)
				printf("  new %s (retired at revision %lld; published again)\n", id,
				       (long long)json_integer_value(json_object_get(r, "revision")));
			else
				printf("  new %s\n", id);
			continue;
		}
		if (registry_same_json(old, d)) {
			printf("  UNCHANGED %s\n", id);
			continue;
		}
		char keys[512] = "";
		size_t k = 0;
		const char *key;
		json_t *v;
		json_object_foreach(d, key, v) {
			if (registry_same_json(json_object_get(old, key), v)) continue;
			int w = snprintf(keys + k, sizeof keys - k, "%s%s", k ? ", " : "", key);
			if (w < 0 || (size_t)w >= sizeof keys - k) break;
			k += (size_t)w;
		}
		printf("  changed %s (%s)\n", id, keys);
	}
}

/* ---------------------------------------------------------------- verbs */

struct opts {
	const char *store, *manifest, *bin, *iref, *wait_lock, *sources;
	int live;
	enum sources_rel rel;
};

static int parse_opts(int argc, char **argv, struct opts *o, int transitions)
{
	memset(o, 0, sizeof *o);
	/* worldd's conventions: --flag VALUE or --flag=VALUE, a flag given
	 * twice refused */
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		if (transitions && strcmp(a, "--live") == 0) {
			if (o->live) return usage("flag --live given twice");
			o->live = 1;
			continue;
		}
		const char *eq = strncmp(a, "--", 2) == 0 ? strchr(a, '=') : NULL;
		size_t nl = eq ? (size_t)(eq - a) : strlen(a);
		const char *v = eq ? eq + 1 : i + 1 < argc ? argv[i + 1] : NULL;
		if (!v) return usage("unknown flag or missing value: %s", a);
		if (!eq) i++;
		const char **slot = NULL;
		if (nl == 7 && strncmp(a, "--store", nl) == 0) slot = &o->store;
		else if (nl == 10 && strncmp(a, "--manifest", nl) == 0) slot = &o->manifest;
		else if (nl == 12 && strncmp(a, "--ailang-bin", nl) == 0) slot = &o->bin;
		else if (transitions && nl == 17 && strncmp(a, "--interpreter-ref", nl) == 0) slot = &o->iref;
		else if (transitions && nl == 11 && strncmp(a, "--wait-lock", nl) == 0) slot = &o->wait_lock;
		else if (nl == 21 && strncmp(a, "--sources-relative-to", nl) == 0) slot = &o->sources;
		else return usage("unknown flag %.*s", (int)nl, a);
		if (*slot) return usage("flag %.*s given twice", (int)nl, a);
		*slot = v;
	}
	o->rel = SOURCES_CWD;
	if (o->sources) {
		if (strcmp(o->sources, "manifest") == 0) o->rel = SOURCES_MANIFEST;
		else if (strcmp(o->sources, "cwd") != 0)
			return usage("--sources-relative-to takes cwd or manifest, not '%s'", o->sources);
	}
	if (o->rel == SOURCES_MANIFEST && o->manifest && strcmp(o->manifest, "-") == 0)
		return usage("--sources-relative-to manifest needs a manifest file: a manifest on stdin has no directory");
	return 0;
}

/* Print every refused entry (one line each); returns the first one's code. */
static int report_entries(const struct manifest *mf, int all_lines)
{
	int code = 0;
	size_t refused = 0;
	for (size_t i = 0; i < mf->n; i++) {
		const struct entry *e = &mf->e[i];
		if (e->err.code) {
			if (!code) code = e->err.code;
			refused++;
			if (all_lines) printf("refused %s\n", e->err.msg);
			else fprintf(stderr, "%s: %s\n", prog_verb, e->err.msg);
		} else if (all_lines) {
			char name[512];
			printf("ok %s: would publish as MCP tool %s (transitionFn %s)\n", ename(e, name, sizeof name), e->tool,
			       e->fn);
		}
	}
	if (refused && !all_lines)
		fprintf(stderr, "%s: %zu of %zu descriptor(s) refused; nothing was written\n", prog_verb, refused, mf->n);
	return code;
}

static int hash_file(const char *path, char ref[WORLD_REF_SIZE], struct world_err *err)
{
	/* O_NONBLOCK: a FIFO is refused below, never waited on */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return werr(err, errno == ENOENT ? WX_NOT_FOUND : WX_IO, "interpreter %s: %s", path, strerror(errno));
	struct stat sb;
	if (fstat(fd, &sb) < 0) {
		int e = errno;
		close(fd);
		return werr(err, WX_IO, "interpreter %s: stat: %s", path, strerror(e));
	}
	if (!S_ISREG(sb.st_mode)) {
		close(fd);
		return werr(err, WX_BAD_INPUT, "interpreter %s: not a regular file", path);
	}
	unsigned char d[WORLD_DIGEST_LEN];
	int rc = world_sha256_fd(fd, path, d, NULL, err);
	close(fd);
	if (rc < 0) return -1;
	world_ref_format(d, ref);
	return 0;
}

/* The epoch of wi's release, which must admit wi's bytes (registry.h). */
static int derive_epoch(struct world_store *st, const struct world_interp *wi, const char *store_path,
                        long long *epoch, struct world_err *err)
{
	const char *release = wi->version;
	if (registry_epoch_for(st, release, epoch, err) == 0) return registry_epoch_admitted(st, wi, epoch, err);
	if (err->code == WX_NOT_FOUND) {
		/* a bootstrapped store needs a new epoch, never a second bootstrap */
		struct world_err e2 = { 0, "" };
		int have = registry_epochs_exist(st, &e2);
		if (have < 0) {
			*err = e2;
			return -1;
		}
		if (have)
			return werr(err, WX_NOT_FOUND,
			            "interpreter release \"%s\" is nominated by no epoch in world/epoch-registry/v1 (never "
			            "defaulted); nominate it as the next epoch first, attended: worldd epoch nominate --store %s "
			            "--ailang-bin BIN",
			            release, store_path);
		return werr(err, WX_NOT_FOUND,
		            "interpreter release \"%s\" is nominated by no epoch in world/epoch-registry/v1 (never "
		            "defaulted); bootstrap it first: worldd epoch bootstrap --store %s --ailang-bin BIN",
		            release, store_path);
	}
	if (err->code == WX_CONFLICT)
		return werr(err, WX_CONFLICT,
		            "interpreter release \"%s\" is nominated by more than one epoch in world/epoch-registry/v1; "
		            "refusing to choose",
		            release);
	return -1;
}

/* A descriptor's semanticsEpoch must be the derived one; reports refusals. */
static int check_epochs(struct manifest *mf, long long epoch, const char *release)
{
	for (size_t i = 0; i < mf->n; i++) {
		struct entry *e = &mf->e[i];
		if (e->epoch && e->epoch != epoch)
			entry_fail(e, WX_CONFLICT,
			           "semanticsEpoch %lld does not nominate interpreter release \"%s\" (world/epoch-registry/v1 "
			           "gives epoch %lld)",
			           e->epoch, release, epoch);
	}
	return report_entries(mf, 0);
}

static int transitions_run(int argc, char **argv)
{
	prog_verb = "world-publish transitions";
	struct opts o;
	int u = parse_opts(argc, argv, &o, 1);
	if (u) return u;
	if (o.live) {
		struct attended_stop stop;
		attended_stop_set(&stop, "mode", "transitions-is-read-only",
		                  "transitions writes a LOCAL registry revision, never a public one; --live is refused "
		                  "rather than ignored");
		return attended_report(stderr, &stop);
	}
	if (!o.store) return usage("--store DB is required");
	if (!o.manifest) return usage("--manifest FILE is required");
	double wait = 0;
	if (o.wait_lock && world_wait_lock_parse(o.wait_lock, &wait) < 0)
		return usage("--wait-lock '%s' is not a number of seconds in 0..86400", o.wait_lock);
	if (o.bin && o.iref) return usage("give at most one of --ailang-bin BIN and --interpreter-ref sha256:...");
	if (!o.bin && !o.iref) o.bin = cli_default_ailang_bin(); /* as every worldd verb */

	struct world_err err = { 0, "" };
	struct stat sb;
	/* a file's store must be there (a postgresql:// one is the server's) */
	if (wdb_kind_of(o.store) != WDB_PG && stat(o.store, &sb) < 0) {
		werr(&err, errno == ENOENT ? WX_NOT_FOUND : WX_IO,
		     "store %s: %s (create and bootstrap it with worldd epoch bootstrap --store %s --ailang-bin BIN)",
		     o.store, strerror(errno), o.store);
		return fail(&err);
	}
	struct world_store *st = NULL;
	/* Daemons may be serving this store: the registry is written in one
	 * short transaction, its head moved by compare-and-swap, and every
	 * daemon reads the new head on its next request. */
	if (worldd_store_open(o.store, WORLD_STORE_WRITER, wait, &st, &err) < 0) return fail(&err);
	int code = WX_OK;
	struct manifest mf;
	struct supervisor *sup = NULL;
	json_t *descs = NULL, *cur = NULL;
	struct registry_source *srcs = NULL;
	if (manifest_load(o.manifest, o.rel, &mf, &err) < 0) { code = fail(&err); goto out; }
	for (size_t i = 0; i < mf.n; i++)
		if (!mf.e[i].err.code && !mf.e[i].file) resolve_stored(st, &mf.e[i]);
	if ((code = report_entries(&mf, 0))) goto out;

	/* the interpreter, by reads only: archived already, or archived after
	 * the attended step */
	char iref[WORLD_REF_SIZE];
	struct world_interp wi;
	int archived = 0;
	if (o.iref) {
		if (world_ref_parse(o.iref, "--interpreter-ref", NULL, &err) < 0) { code = fail(&err); goto out; }
		snprintf(iref, sizeof iref, "%s", o.iref);
	} else if (hash_file(o.bin, iref, &err) < 0) {
		code = fail(&err);
		goto out;
	}
	if (world_interp_get(st, iref, &wi, &err) == 0) {
		archived = 1;
	} else if (err.code != WX_NOT_FOUND || o.iref) {
		if (err.code == WX_NOT_FOUND)
			werr(&err, WX_NOT_FOUND, "interpreter %s is not archived next to the store; give --ailang-bin BIN to "
			     "archive it", iref);
		code = fail(&err);
		goto out;
	}
	long long epoch = 0;
	struct world_interp probed; /* BIN read, not archived: ref and release */
	if (archived) {
		if (derive_epoch(st, &wi, world_store_path(st), &epoch, &err) < 0) { code = fail(&err); goto out; }
	} else {
		int have = registry_epochs_exist(st, &err);
		if (have <= 0) {
			if (have == 0)
				werr(&err, WX_NOT_FOUND,
				     "this store has no world/epoch-registry/v1 (never defaulted); bootstrap it first: worldd "
				     "epoch bootstrap --store %s --ailang-bin BIN",
				     world_store_path(st));
			code = fail(&err);
			goto out;
		}
		/* The epoch of BIN's release, derived before asking: a release no
		 * epoch nominates (or bytes its epoch does not admit) is refused
		 * before the attended step and before anything is archived. */
		if (world_interp_probe(o.bin, &probed, &err) < 0) { code = fail(&err); goto out; }
		if (strcmp(probed.ref, iref) != 0) {
			werr(&err, WX_HASH_MISMATCH, "interpreter %s changed while publishing (%s hashed, %s read next)", o.bin,
			     iref, probed.ref);
			code = fail(&err);
			goto out;
		}
		if (derive_epoch(st, &probed, world_store_path(st), &epoch, &err) < 0) { code = fail(&err); goto out; }
	}
	if ((code = check_epochs(&mf, epoch, archived ? wi.version : probed.version))) goto out;
	if (!(sup = make_supervisor(archived ? wi.path : o.bin, iref, &err))) { code = fail(&err); goto out; }
	check_all(sup, &mf);
	sup_free(sup);
	sup = NULL;
	if ((code = report_entries(&mf, 0))) goto out;

	/* The registry as a whole stays within the manifest limit; and the
	 * comparison, before asking: when the interpreter is archived the
	 * descriptors are known now, and a republish identical to the head
	 * writes nothing, so there is nothing to confirm. */
	{
		int derived0 = 0, same = 0;
		json_t *d0 = json_array(), *now = NULL;
		long long nrv = 0;
		char nh[WORLD_REF_SIZE];
		for (size_t i = 0; d0 && i < mf.n; i++) {
			if (!mf.e[i].epoch) derived0 = 1;
			json_array_append_new(d0, descriptor(&mf.e[i], iref, epoch));
		}
		const struct registry_change c0 = { .descs = d0, .prompts = mf.prompts, .resources = mf.resources };
		if (!d0 || registry_load(st, &now, &nrv, nh, &err) < 0 || registry_publish_check(now, nrv, &c0, &same, &err) < 0) {
			json_decref(d0);
			json_decref(now);
			if (!err.code) werr(&err, WX_FAIL, "out of memory");
			code = fail(&err);
			goto out;
		}
		same &= archived;
		if (same) {
			if (derived0)
				printf("semantics epoch %lld derived from world/epoch-registry/v1 for interpreter release \"%s\"\n",
				       epoch, wi.version);
			printf("transition registry UNCHANGED at revision %lld (head %s); nothing written, nothing to confirm\n",
			       nrv, nh);
			status_lines(now, d0);
			extras_status(now, &mf);
		}
		json_decref(d0);
		json_decref(now);
		if (same) goto out;
	}

	/* the attended step: nothing above wrote anything */
	{
		char intro[8400], phrase[4400];
		snprintf(intro, sizeof intro,
		         "Type exactly, to write a LOCAL transition-registry revision (%zu descriptor(s) from %s):", mf.n,
		         o.manifest);
		if (json_array_size(mf.prompts) + json_array_size(mf.resources))
			snprintf(intro, sizeof intro,
			         "Type exactly, to write a LOCAL transition-registry revision (%zu descriptor(s), %zu prompt(s), "
			         "%zu resource(s) from %s):",
			         mf.n, json_array_size(mf.prompts), json_array_size(mf.resources), o.manifest);
		/* the store as every message names it: never a URI's password */
		snprintf(phrase, sizeof phrase, "publish %zu transitions to %s", mf.n, world_store_path(st));
		struct attended_stop stop;
		if (attended_confirm_phrase(intro, phrase, &stop) < 0) {
			code = attended_report(stderr, &stop);
			goto out;
		}
	}
	if (!archived) {
		if (world_archive_interpreter(st, o.bin, &wi, &err) < 0) { code = fail(&err); goto out; }
		if (strcmp(wi.ref, iref) != 0 || strcmp(wi.version, probed.version) != 0) {
			werr(&err, WX_HASH_MISMATCH,
			     "interpreter %s changed while publishing (%s \"%s\" checked, %s \"%s\" archived)", o.bin, iref,
			     probed.version, wi.ref, wi.version);
			code = fail(&err);
			goto out;
		}
		if (derive_epoch(st, &wi, world_store_path(st), &epoch, &err) < 0) { code = fail(&err); goto out; }
	}
	if ((code = check_epochs(&mf, epoch, wi.version))) goto out;
	int derived = 0;
	descs = json_array();
	if (!(srcs = calloc(mf.n + 1, sizeof *srcs))) {
		werr(&err, WX_FAIL, "publish: out of memory");
		code = fail(&err);
		goto out;
	}
	for (size_t i = 0; i < mf.n; i++) {
		if (!mf.e[i].epoch) derived = 1;
		json_array_append_new(descs, descriptor(&mf.e[i], iref, epoch));
	}

	/* the sources read from files are stored with the revision */
	size_t nsrc = 0;
	for (size_t i = 0; i < mf.n; i++)
		if (mf.e[i].file) {
			const struct entry *e = &mf.e[i];
			srcs[nsrc++] = (struct registry_source){ .id = e->id, .text = e->source, .len = e->source_len, .ref = e->fn };
		}
	const struct registry_change ch = { .descs = descs, .prompts = mf.prompts, .resources = mf.resources,
		                            .sources = srcs, .nsources = nsrc, .provenance = PROVENANCE };
	int published = 0;
	long long nrev = 0;
	char nhead[WORLD_REF_SIZE];
	if (registry_publish(st, &ch, &cur, &nrev, nhead, &published, &err) < 0) { code = fail(&err); goto out; }
	if (derived)
		printf("semantics epoch %lld derived from world/epoch-registry/v1 for interpreter release \"%s\"\n", epoch,
		       wi.version);
	if (!published)
		printf("transition registry UNCHANGED at revision %lld (head %s); nothing written\n", nrev, nhead);
	else
		printf("published transition registry revision %lld (head %s); the daemon's A2A card will list these "
		       "skills on its next read\n",
		       nrev, nhead);
	status_lines(cur, descs);
	extras_status(cur, &mf);
out:
	free(srcs);
	json_decref(descs);
	json_decref(cur);
	if (sup) sup_free(sup);
	if (mf.e || mf.root) manifest_free(&mf);
	world_store_close(st);
	return code;
}

static int check_run(int argc, char **argv)
{
	prog_verb = "world-publish check";
	struct opts o;
	int u = parse_opts(argc, argv, &o, 0);
	if (u) return u;
	if (!o.manifest) return usage("--manifest FILE is required");
	if (!o.bin) o.bin = cli_default_ailang_bin();
	struct world_err err = { 0, "" };
	struct world_store *st = NULL;
	if (o.store && worldd_store_open(o.store, WORLD_STORE_READER, 0, &st, &err) < 0) return fail(&err);
	struct manifest mf;
	int code = WX_OK;
	struct supervisor *sup = NULL;
	if (manifest_load(o.manifest, o.rel, &mf, &err) < 0) { code = fail(&err); goto out; }
	for (size_t i = 0; i < mf.n; i++) {
		struct entry *e = &mf.e[i];
		if (e->err.code || e->file) continue;
		if (st) resolve_stored(st, e);
		else entry_fail(e, WX_NOT_FOUND, "transitionFn %s cannot be resolved without --store DB", e->fn);
	}
	if (!(sup = make_supervisor(o.bin, NULL, &err))) { code = fail(&err); goto out; }
	size_t ok = (size_t)check_all(sup, &mf);
	code = report_entries(&mf, 1);
	size_t j;
	json_t *x;
	json_array_foreach(mf.prompts, j, x) printf("ok prompt \"%s\": would publish\n", catalog_key(x));
	json_array_foreach(mf.resources, j, x) printf("ok resource \"%s\": would publish\n", catalog_key(x));
	printf("%zu of %zu descriptor(s) would publish\n", ok, mf.n);
out:
	if (sup) sup_free(sup);
	if (mf.e || mf.root) manifest_free(&mf);
	if (st) world_store_close(st);
	return code;
}

/* ---------------------------------------------------------------- retire */

static int retire_run(int argc, char **argv)
{
	prog_verb = "world-publish retire";
	const char *store = NULL, *wait_lock = NULL;
	char *ids[ENTRIES_MAX];
	int n = 0, flags = 1;
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		if (flags && strcmp(a, "--") == 0) { flags = 0; continue; }
		if (flags && strncmp(a, "--", 2) == 0) {
			const char *eq = strchr(a, '=');
			size_t nl = eq ? (size_t)(eq - a) : strlen(a);
			const char *v = eq ? eq + 1 : i + 1 < argc ? argv[i + 1] : NULL;
			const char **slot = nl == 7 && strncmp(a, "--store", nl) == 0       ? &store
			                    : nl == 11 && strncmp(a, "--wait-lock", nl) == 0 ? &wait_lock
			                                                                     : NULL;
			if (!slot) return usage("unknown flag %.*s", (int)nl, a);
			if (!v) return usage("flag %.*s needs a value", (int)nl, a);
			if (*slot) return usage("flag %.*s given twice", (int)nl, a);
			if (!eq) i++;
			*slot = v;
			continue;
		}
		if (n == ENTRIES_MAX) return usage("more than %d ids", ENTRIES_MAX);
		char why[200], q[400];
		if (id_check(a, why, sizeof why) < 0) return usage("id %s %s", quote(a, q, sizeof q), why);
		for (int j = 0; j < n; j++)
			if (strcmp(ids[j], a) == 0) return usage("id \"%s\" given twice", a);
		ids[n++] = argv[i];
	}
	if (!store) return usage("--store DB is required");
	if (!n) return usage("give the id(s) of the transition(s) to retire");
	double wait = 0;
	if (wait_lock && world_wait_lock_parse(wait_lock, &wait) < 0)
		return usage("--wait-lock '%s' is not a number of seconds in 0..86400", wait_lock);

	struct world_err err = { 0, "" };
	struct stat sb;
	if (wdb_kind_of(store) != WDB_PG && stat(store, &sb) < 0) {
		werr(&err, errno == ENOENT ? WX_NOT_FOUND : WX_IO, "store %s: %s", store, strerror(errno));
		return fail(&err);
	}
	struct world_store *st = NULL;
	if (worldd_store_open(store, WORLD_STORE_WRITER, wait, &st, &err) < 0) return fail(&err);
	json_t *cur = NULL, *before = NULL, *payload = NULL;
	long long rev = 0;
	char head[WORLD_REF_SIZE];
	int code = WX_OK, live = 0;
	if (registry_retire_check(st, ids, n, &cur, &rev, head, &live, &err) < 0) { code = fail(&err); goto out; }
	if (live) {
		char intro[600], phrase[4400];
		snprintf(intro, sizeof intro,
		         "Type exactly, to retire %d transition(s) from the LOCAL transition registry (sessions stop seeing "
		         "them; their history stays):", live);
		snprintf(phrase, sizeof phrase, "retire %d transitions from %s", live, world_store_path(st));
		struct attended_stop stop;
		if (attended_confirm_phrase(intro, phrase, &stop) < 0) {
			code = attended_report(stderr, &stop);
			goto out;
		}
		if (registry_retire(st, ids, n, PROVENANCE, &before, &payload, &rev, head, &err) < 0) {
			code = fail(&err);
			goto out;
		}
		json_decref(cur);
		cur = before;
		before = NULL;
	}
	if (payload)
		printf("retired from transition registry revision %lld (head %s); sessions stop seeing them on their next "
		       "request, and worldd why / replay of their calls still work\n",
		       rev, head);
	else
		printf("transition registry UNCHANGED at revision %lld (head %s); nothing written, nothing to confirm\n", rev,
		       head);
	for (int j = 0; j < n; j++) {
		const json_t *r = registry_retired_find(payload ? payload : cur, ids[j]);
		char tool[TOOL_NAME_MAX * 2 + 8];
		registry_tool_name(ids[j], tool, sizeof tool);
		if (payload && registry_find(cur, ids[j])) printf("  retired %s (MCP tool %s)\n", ids[j], tool);
		else printf("  UNCHANGED %s (retired at revision %lld)\n", ids[j],
		            (long long)json_integer_value(json_object_get(r, "revision")));
	}
out:
	json_decref(before);
	json_decref(payload);
	json_decref(cur);
	world_store_close(st);
	return code;
}

static const char help[] =
	"usage: world-publish transitions --store DB --manifest FILE\n"
	"                     [--ailang-bin BIN | --interpreter-ref sha256:HEX] [--live]\n"
	"                     [--wait-lock SECONDS] [--sources-relative-to cwd|manifest]\n"
	"       world-publish check --manifest FILE [--ailang-bin BIN] [--store DB]\n"
	"                     [--sources-relative-to cwd|manifest]\n"
	"       world-publish retire --store DB [--wait-lock SECONDS] ID...\n"
	"       world-publish --version\n"
	"Flags take --flag VALUE or --flag=VALUE; a flag given twice is refused. Without\n"
	"--ailang-bin (or --interpreter-ref), the installed interpreter " WORLD_AILANG_LITE_DEFAULT "\n"
	"is used, as by worldd.\n"
	"A relative transitionFnFile is read from the current directory, as the reference defines\n"
	"it: publish a package from its repository's root (world-publish check --manifest\n"
	"packages/se-tools/transitions.json from the root of World's checkout, or of the installed\n"
	"share directory). --sources-relative-to manifest reads them from the manifest's directory\n"
	"instead (never with --manifest -); cwd is the default. An absolute path is read as given.\n"
	"A source that cannot be read is one line naming the manifest, the entry and the path tried.\n\n"
	"transitions: checks every descriptor of the manifest (a JSON array; docs/publishing.md;\n"
	"an entry with \"kind\": \"prompt\" or \"resource\" is a prompt template or a resource the\n"
	"package publishes beside its transitions, stored and versioned with them)\n"
	"and that each declaredEffects effect is one an effect handler serves (the broker's handler\n"
	"table; a refusal lists them), checks each source under the pinned interpreter in a\n"
	"source-check capsule (empty scratch root: world/* imports fail with LDR001) and that it\n"
	"exports main taking one argument, asks for a typed confirmation at the controlling\n"
	"terminal, then writes the sources and the next world/transition-registry/v1 revision\n"
	"(compare-and-swap of its head) in one transaction.\n"
	"--manifest - reads the manifest from stdin; a FIFO or a device given as the manifest, a\n"
	"source or BIN is refused, never read.\n"
	"One line per descriptor follows the outcome: new, changed (naming the keys), UNCHANGED.\n"
	"An identical republish writes nothing and asks nothing. Daemons serving the store keep serving and list the\n"
	"new skills from their next request; --live is refused; --wait-lock SECONDS is how long the\n"
	"write waits for another writer's transaction (default 5) before exit 5. --ailang-bin\n"
	"archives BIN next to the store (if not yet); --interpreter-ref names an interpreter already archived there. The\n"
	"semantics epoch is derived from world/epoch-registry/v1 (worldd epoch bootstrap), never\n"
	"defaulted.\n\n"
	"check: every check but the store write and the attended step; one line per descriptor\n"
	"(\"ok ...\" or \"refused ...\"); exit 0 only when every descriptor would publish. --store DB\n"
	"(read only) resolves transitionFn refs.\n\n"
	"retire: takes the published IDs out of what sessions see (tools/list, the A2A card,\n"
	"calls), after a typed confirmation at the controlling terminal; their descriptors stay\n"
	"in the registry's earlier revisions and the ids in its \"retired\" list, so worldd why and\n"
	"replay of their calls still work; publishing an id again makes it live. One line per id:\n"
	"retired, or UNCHANGED when it was retired already (then nothing is asked or written).\n\n"
	"DB is a path (SQLite) or a postgresql:// (postgres://) URI (this program is linked with\n"
	"libpq); a URI's password comes from the URI, PGPASSFILE / ~/.pgpass, or\n"
	"--store-password-file FILE (its first line; a regular file readable by its owner only;\n"
	"only with a URI), and is never printed: the store is named postgresql://USER@HOST:PORT/DB.\n\n"
	"exit codes:\n"
	"  0  published, retired, unchanged, or (check) every descriptor would publish\n"
	"  2  usage\n"
	"  3  bad input: manifest, descriptor field, id, tool name, schema, source text, a\n"
	"     declared effect no handler serves\n"
	"  4  not found: store, manifest, source file, stored source, archived interpreter, epoch,\n"
	"     (retire) an id that is not published\n"
	"  5  another writer's transaction outlasted --wait-lock (default 5 s)\n"
	"  8  conflict: same-id conflict, head kept moving, ambiguous epoch, semanticsEpoch mismatch\n"
	" 19  the source check refused the source (or it lacks main taking one argument)\n"
	" 20  attended step refused (STOP fence=... line on stderr)\n"
	"  other codes as in worldd --help (capsule setup, I/O, integrity)\n";

static int dispatch(int argc, char **argv)
{
	if (argc < 2) {
		fputs(help, stderr);
		return WX_USAGE;
	}
	if (argc == 2 && strcmp(argv[1], "--version") == 0) {
		printf("world-publish (World) " PACKAGE_VERSION "\n");
		return WX_OK;
	}
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			fputs(help, stdout);
			return WX_OK;
		}
	/* a postgresql:// --store and --store-password-file, as in worldd
	 * (cli/store_uri.h): this program links the PostgreSQL driver */
	if (strcmp(argv[1], "transitions") == 0 || strcmp(argv[1], "check") == 0 || strcmp(argv[1], "retire") == 0) {
		char who[64];
		snprintf(who, sizeof who, "world-publish %s", argv[1]);
		int vargc = argc - 2, rc = worldd_store_take(who, &vargc, argv + 2);
		if (rc) return rc;
		argc = vargc + 2;
	}
	if (strcmp(argv[1], "transitions") == 0) return transitions_run(argc - 2, argv + 2);
	if (strcmp(argv[1], "check") == 0) return check_run(argc - 2, argv + 2);
	if (strcmp(argv[1], "retire") == 0) return retire_run(argc - 2, argv + 2);
	fprintf(stderr, "world-publish: unknown verb '%s' (see world-publish --help)\n", argv[1]);
	return WX_USAGE;
}

/* As in worldd: output lost to a full disk or a closed pipe is exit 9. */
int main(int argc, char **argv)
{
#ifdef WORLD_HAVE_PG
	wdb_pg_enable();
#endif
	return cli_close_stdout("world-publish", dispatch(argc, argv));
}
