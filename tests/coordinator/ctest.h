/* tests/coordinator/ctest.h: fixtures for tests (and benchmarks) that drive
 * the coordinator: a temporary store with ailang-lite archived and epoch 1
 * bootstrapped, transitions registered through the store API in the format
 * of coordinator/registry.h (publishing is another program), sessions
 * minted through broker/session.h, and generated transition sources. */
#ifndef WORLD_TESTS_CTEST_H
#define WORLD_TESTS_CTEST_H
#include "broker/session.h"
#include "coordinator/coordinator.h"
#include "coordinator/registry.h"
#include "common/canon.h"
#include "store/scan.h"
#include "store/store.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct ctest {
	char dir[256], db[300];
	struct world_store *st;
	struct world_interp interp;
};

static inline void ctest_die(const char *what, const struct world_err *e)
{
	fprintf(stderr, "ctest: %s: %s\n", what, e ? e->msg : "");
	exit(99);
}

/* Open (or create) DIR/world.db as writer, archive $AILANG_LITE and
 * bootstrap epoch 1 for its release (a no-op when already done). */
static inline void ctest_open(struct ctest *t, const char *dir)
{
	snprintf(t->dir, sizeof t->dir, "%s", dir);
	snprintf(t->db, sizeof t->db, "%s/world.db", t->dir);
	struct world_err e;
	if (world_store_open(t->db, WORLD_STORE_WRITER, &t->st, &e) < 0) ctest_die("open", &e);
	const char *bin = getenv("AILANG_LITE");
	if (!bin) ctest_die("AILANG_LITE not set", NULL);
	if (world_archive_interpreter(t->st, bin, &t->interp, &e) < 0) ctest_die("archive", &e);
	long long epoch;
	int created;
	if (registry_epoch_bootstrap(t->st, &t->interp, &epoch, &created, &e) < 0) ctest_die("epoch", &e);
}

/* A fresh temporary directory NAME.XXXXXX under $TMPDIR, opened as above. */
static inline void ctest_init(struct ctest *t, const char *name)
{
	const char *tmp = getenv("TMPDIR");
	char dir[256];
	snprintf(dir, sizeof dir, "%s/%s.XXXXXX", tmp ? tmp : "/tmp", name);
	if (!mkdtemp(dir)) ctest_die("mkdtemp", NULL);
	ctest_open(t, dir);
}

static inline void ctest_fini(struct ctest *t)
{
	world_store_close(t->st);
	char cmd[600];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", t->dir);
	if (system(cmd) != 0) fprintf(stderr, "ctest: cleanup of %s failed\n", t->dir);
}

/* Register (or replace) transition id with source text, declaredEffects
 * and access given as JSON text (access "null" = visible to all). */
static inline void ctest_register(struct ctest *t, const char *id, const char *source, const char *declared,
                                  const char *access, const char *input_schema)
{
	struct world_err e;
	size_t cl;
	char *canon = world_canon_source(source, strlen(source), &cl, &e);
	if (!canon) ctest_die("canon source", &e);
	char src_ref[WORLD_REF_SIZE];
	int created;
	if (world_object_put(t->st, "world/transition-source/v1", "ctest", canon, cl, src_ref, &created, &e) < 0)
		ctest_die("put source", &e);
	free(canon);
	json_t *reg;
	long long rev;
	char head[WORLD_REF_SIZE];
	if (registry_load(t->st, &reg, &rev, head, &e) < 0) ctest_die("registry load", &e);
	json_t *list = json_array();
	if (reg) {
		size_t i;
		json_t *d;
		json_array_foreach(json_object_get(reg, "transitions"), i, d) {
			if (strcmp(json_string_value(json_object_get(d, "id")), id) != 0) json_array_append(list, d);
		}
	}
	json_t *decl = world_json_parse(declared, strlen(declared), &e);
	json_t *acc = world_json_parse(access, strlen(access), &e);
	json_t *schema = world_json_parse(input_schema ? input_schema : "{\"type\":\"object\"}",
	                                  strlen(input_schema ? input_schema : "{\"type\":\"object\"}"), &e);
	if (!decl || !acc || !schema) ctest_die("descriptor json", &e);
	json_array_append_new(list, json_pack("{s:o,s:o,s:s,s:s,s:o,s:s,s:{s:s},s:I,s:s,s:s}", "access", acc,
	                                      "declaredEffects", decl, "description", "test transition", "id", id,
	                                      "inputSchema", schema, "interpreter", t->interp.ref, "outputSchema",
	                                      "type", "object", "semanticsEpoch", (json_int_t)1, "title", id,
	                                      "transitionFn", src_ref));
	json_t *nreg = json_pack("{s:o,s:I,s:o}", "parent", reg ? json_string(head) : json_null(), "revision",
	                         (json_int_t)(rev + 1), "transitions", list);
	char ref[WORLD_REF_SIZE];
	if (world_object_put_json(t->st, REGISTRY_TRANSITIONS, "ctest", nreg, ref, &e) < 0) ctest_die("put registry", &e);
	if (world_registry_head_cas(t->st, REGISTRY_TRANSITIONS, reg ? head : NULL, ref, &rev, &e) < 0)
		ctest_die("registry cas", &e);
	json_decref(nreg);
	json_decref(reg);
}

/* Mint a session; credential into cred (65 bytes). */
static inline void ctest_session(struct ctest *t, const char *episode, const char *const *grants, long long ttl,
                                 char cred[65])
{
	struct broker_grant g[8];
	size_t n = 0;
	struct world_err e;
	for (; grants[n]; n++)
		if (broker_grant_parse(grants[n], &g[n], &e) < 0) ctest_die("grant", &e);
	char id[65];
	long long exp;
	if (broker_session_mint(t->st, episode, g, n, ttl, cred, id, &exp, &e) < 0) ctest_die("mint", &e);
}

/* Append s to a source string literal, escaped for AILANG. */
static inline void ctest_lit(char *out, size_t cap, const char *s)
{
	size_t o = strlen(out);
	for (; *s && o + 3 < cap; s++) {
		if (*s == '"' || *s == '\\') out[o++] = '\\';
		out[o++] = *s;
	}
	out[o] = 0;
}

/* An effectful transition whose plan phase returns plan (JSON text) and
 * whose finish phase returns {"finished": FINISH-INPUT}. */
static inline char *ctest_plan_source(const char *plan)
{
	size_t cap = strlen(plan) * 2 + 512;
	char *s = malloc(cap);
	snprintf(s, cap, "module t\nimport std/string (contains)\nexport func main(input: string) -> string {\n"
	                 "  if contains(input, \"\\\"phase\\\":\\\"plan\\\"\") then \"");
	ctest_lit(s, cap, plan);
	strncat(s, "\" else \"{\\\"finished\\\":${input}}\"\n}\n", cap - strlen(s) - 1);
	return s;
}

/* A pure transition returning {"seen": INPUT-AS-A-STRING}. */
static const char ctest_seen_source[] =
    "module seen\nimport std/json (encode, jo, kv, js)\n"
    "export func main(input: string) -> string {\n  encode(jo([kv(\"seen\", js(input))]))\n}\n";
/* The index of the log's last entry. */
static inline long long ctest_log_len(struct ctest *t)
{
	long long idx;
	char h[WORLD_REF_SIZE];
	struct world_err e;
	if (world_log_last(t->st, &idx, h, &e) < 0) ctest_die("log last", &e);
	return idx;
}

static inline int ctest_count_cb(void *ctx, long long id, const char *kind, const char *subject, const char *ref)
{
	(void)id, (void)kind, (void)subject, (void)ref;
	++*(int *)ctx;
	return 0;
}
/* Intents without an outcome: what a crash would leave indeterminate. */
static inline int ctest_open_intents(struct ctest *t)
{
	int n = 0;
	struct world_err e;
	if (world_journal_indeterminate(t->st, ctest_count_cb, &n, &e) < 0) ctest_die("journal indeterminate", &e);
	return n;
}

/* A full integrity scan finds no hole. */
static inline int ctest_scan_clean(struct ctest *t)
{
	struct world_scan_opts so = { 0 };
	struct world_scan_result sr;
	struct world_err e;
	return world_scan(t->st, &so, NULL, &sr, &e) == 0 && sr.holes == 0 && sr.complete;
}

#endif
