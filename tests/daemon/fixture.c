/* tests/daemon/fixture.c: sets up a store for the daemon tests through the
 * store API (the daemon must not be running: these take the writer lock).
 *   fixture session DB CREDENTIAL EPISODE GRANTS_JSON EXPIRES_AT
 *       one session row (world_session_put); EXPIRES_AT unix seconds, or
 *       +N / -N seconds from now
 *   fixture publish DB AILANG_BIN ID SOURCE_FILE [ACCESS_JSON [OUTPUT_SCHEMA]]
 *       adds (or replaces) descriptor ID in the transition registry, in the
 *       stored format of coordinator/registry.h: the source is
 *       canonicalised and stored, BIN archived, the head moved by CAS;
 *       FIXTURE_EFFECTFUL='{"effect":E,"scope":S,"cost":N}' in the
 *       environment makes that its one declared effect.
 * Prints nothing on success; one line and exit != 0 on failure. */
#include "coordinator/registry.h"
#include "common/canon.h"
#include "common/file.h"
#include "store/store.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int fail(const struct world_err *e)
{
	fprintf(stderr, "fixture: %s\n", e->msg);
	return e->code ? e->code : 1;
}

static int session(char **a)
{
	struct world_store *st;
	struct world_err e = { 0, "" };
	long long exp = strtoll(a[4], NULL, 10);
	if (a[4][0] == '+' || a[4][0] == '-') exp = (long long)time(NULL) + exp;
	if (world_store_open(a[0], WORLD_STORE_WRITER, &st, &e) < 0) return fail(&e);
	int rc = world_session_put(st, a[1], a[2], a[3], exp, &e);
	world_store_close(st);
	return rc < 0 ? fail(&e) : 0;
}

static int publish(char **a, int n)
{
	struct world_store *st;
	struct world_err e = { 0, "" };
	if (world_store_open(a[0], WORLD_STORE_WRITER, &st, &e) < 0) return fail(&e);
	int rc = 1;
	struct world_interp in;
	char *src = NULL, *canon = NULL;
	size_t len, clen;
	json_t *reg = NULL, *access = NULL;
	if (world_archive_interpreter(st, a[1], &in, &e) < 0) goto out;
	if (world_read_file(a[3], 1 << 20, &src, &len, &e) < 0) goto out;
	canon = world_canon_source(src, len, &clen, &e);
	char src_ref[WORLD_REF_SIZE], reg_ref[WORLD_REF_SIZE], head[WORLD_REF_SIZE] = "";
	int created;
	if (!canon || world_object_put(st, "world/transition-source/v1", "fixture", canon, clen, src_ref, &created, &e) < 0) goto out;
	access = n > 4 ? json_loads(a[4], JSON_DECODE_ANY, NULL) : json_null();
	if (!access) { fprintf(stderr, "fixture: ACCESS_JSON is not JSON\n"); goto out; }
	json_t *oschema = n > 5 ? json_loads(a[5], 0, NULL) : json_pack("{s:s}", "type", "object");
	if (!oschema) { fprintf(stderr, "fixture: OUTPUT_SCHEMA is not JSON\n"); goto out; }
	long long rev = 0;
	json_t *old = NULL;
	if (registry_load(st, &old, &rev, head, &e) < 0) goto out;
	json_t *list = json_array();
	size_t i;
	json_t *d;
	if (old) json_array_foreach(json_object_get(old, "transitions"), i, d)
		if (strcmp(json_string_value(json_object_get(d, "id")), a[2]) != 0) json_array_append(list, d);
	json_decref(old);
	/* FIXTURE_EFFECTFUL='{"effect":..,"scope":..,"cost":..}': its one declared effect */
	const char *fx = getenv("FIXTURE_EFFECTFUL");
	json_t *fxe = fx ? json_loads(fx, 0, NULL) : NULL;
	json_t *declared = json_is_object(fxe) ? json_pack("[o]", fxe) : (json_decref(fxe), json_array());
	json_array_append_new(list, json_pack("{s:O,s:o,s:s,s:s,s:{s:s},s:s,s:o,s:i,s:s,s:s}", "access", access,
	                                      "declaredEffects", declared, "description", "fixture transition", "id", a[2],
	                                      "inputSchema", "type", "object", "interpreter", in.ref, "outputSchema",
	                                      oschema, "semanticsEpoch", 1, "title", a[2], "transitionFn", src_ref));
	/* sorted by id */
	size_t m = json_array_size(list);
	for (size_t x = 1; x < m; x++)
		for (size_t y = x; y > 0; y--) {
			json_t *p = json_array_get(list, y - 1), *q = json_array_get(list, y);
			if (strcmp(json_string_value(json_object_get(p, "id")), json_string_value(json_object_get(q, "id"))) <= 0) break;
			json_incref(p);
			json_array_set(list, y - 1, q);
			json_array_set_new(list, y, p);
		}
	reg = json_pack("{s:o,s:I,s:o}", "parent", head[0] ? json_string(head) : json_null(), "revision",
	                (json_int_t)(rev + 1), "transitions", list);
	long long nrev;
	if (world_object_put_json(st, REGISTRY_TRANSITIONS, "fixture", reg, reg_ref, &e) < 0) goto out;
	if (world_registry_head_cas(st, REGISTRY_TRANSITIONS, head[0] ? head : NULL, reg_ref, &nrev, &e) < 0) goto out;
	rc = 0;
out:
	if (rc && e.msg[0]) fail(&e);
	json_decref(reg);
	json_decref(access);
	free(src);
	free(canon);
	world_store_close(st);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc == 7 && strcmp(argv[1], "session") == 0) return session(argv + 2);
	if (argc >= 6 && argc <= 8 && strcmp(argv[1], "publish") == 0) return publish(argv + 2, argc - 2);
	fprintf(stderr, "usage: fixture session DB CRED EPISODE GRANTS EXPIRES | publish DB BIN ID SOURCE [ACCESS [OUTPUT_SCHEMA]]\n");
	return 2;
}
