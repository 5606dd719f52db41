/* tests/coordinator/prov_fixture.c: `prov-fixture DIR` makes DIR/world.db
 * for the provenance tests (tests/coordinator/prov.sh): ailang-lite
 * archived, epoch 1, and six committed invocations of episode ep1, in this
 * order (entry index = position):
 *   1 t.seen     pure
 *   2 t.echo     effectful, effect ok, finish phase
 *   3 t.refuse   the plan refuses (no effect)
 *   4 t.denied   the broker denies the effect, finish phase
 *   5 t.failing  the handler fails, finish phase
 *   6 t.direct   effect ok, no finish (the handler output is the output)
 * Effects go to test handlers (replay never calls one). Prints nothing.
 * `prov-fixture DIR --forge` then appends entry 7: a CONSISTENT forgery of
 * entry 2 -- a new output (its finish part altered, its world block intact),
 * a new record naming it, the journal's committed outcome and the log entry,
 * every hash right -- which a walk cannot tell from a real call and replay
 * catches at stage finish (docs/provenance.md). */
#include "tests/coordinator/ctest.h"
#include "broker/effect.h"
#include <sqlite3.h>

void coord_set_handlers(struct coordinator *c, const struct broker_handler_entry *table);

static int h_echo(const struct broker_handler_ctx *ctx, const json_t *payload, json_t **out, struct world_err *err)
{
	(void)ctx; (void)err;
	*out = json_pack("{s:b,s:O}", "ok", 1, "payload", payload);
	return 0;
}
static int h_fail(const struct broker_handler_ctx *ctx, const json_t *payload, json_t **out, struct world_err *err)
{
	(void)ctx; (void)payload; (void)out;
	return werr(err, WX_IO, "test handler: disk on fire");
}
static const struct broker_handler_entry handlers[] = {
	{ "Test.Echo", h_echo }, { "Test.Fail", h_fail }, { NULL, NULL },
};

#define DECL "[{\"effect\":\"Test.Echo\",\"scope\":\"s\",\"cost\":1},{\"effect\":\"Test.Fail\",\"scope\":\"s\",\"cost\":1}," \
	     "{\"effect\":\"Test.Echo\",\"scope\":\"t\",\"cost\":1}]"
#define PLAN(effects, finish, result) \
	"{\"plan\":\"world/effect-plan/v1\",\"effects\":[" effects "],\"finish\":" finish ",\"result\":" result "}"
#define EFF(effect, scope, payload) \
	"{\"id\":\"e1\",\"effect\":\"" effect "\",\"scope\":\"" scope "\",\"cost\":1,\"payload\":" payload "}"

static json_t *get_json(struct ctest *t, const char *ref)
{
	struct world_object o;
	struct world_err e;
	if (world_object_get(t->st, ref, &o, &e) < 0) ctest_die("forge: get", &e);
	json_t *j = world_json_parse((const char *)o.payload, o.len, &e);
	world_object_free(&o);
	if (!j) ctest_die("forge: parse", &e);
	return j;
}

static void forge(struct ctest *t)
{
	struct world_err e;
	struct world_log_entry le;
	if (world_log_get(t->st, 2, &le, &e) < 0) ctest_die("forge: entry 2", &e);
	json_t *rec = get_json(t, le.transition_ref);
	json_t *out = get_json(t, json_string_value(json_object_get(rec, "output")));
	json_object_set_new(json_object_get(out, "finished"), "forged", json_true());
	char oref[WORLD_REF_SIZE], rref[WORLD_REF_SIZE];
	if (world_object_put_json(t->st, "world/invocation-output/v1", "forge", out, oref, &e) < 0) ctest_die("forge: output", &e);
	json_object_set_new(rec, "output", json_string(oref));
	if (world_object_put_json(t->st, "world/invocation-record/v2", "forge", rec, rref, &e) < 0) ctest_die("forge: record", &e);
	struct world_journal_intent in = { .kind = "invocation", .subject = json_string_value(json_object_get(rec, "invocationId")),
		                           .episode = "ep1", .ref = json_string_value(json_object_get(rec, "input")) };
	long long id, idx;
	char prev[WORLD_REF_SIZE], world[WORLD_REF_SIZE];
	/* A task is committed once (store schema 2's journal_one_commit), so
	 * the forger, who writes the file as it likes, first turns entry 2's
	 * committed outcome into a failed one. */
	char *sql = sqlite3_mprintf("UPDATE journal SET status = 'failed' WHERE phase = 'outcome' AND status = 'committed' "
	                            "AND kind = 'invocation' AND subject = %Q", in.subject);
	if (!sql || sqlite3_exec(world_store_db(t->st), sql, NULL, NULL, NULL) != SQLITE_OK)
		ctest_die("forge: journal rewrite", NULL);
	sqlite3_free(sql);
	if (world_journal_intent(t->st, &in, &id, &e) < 0 || world_journal_outcome(t->st, id, "committed", rref, &e) < 0 ||
	    world_log_next(t->st, &idx, prev, world, &e) < 0)
		ctest_die("forge: journal", &e);
	struct world_log_append a = { .entry_index = idx, .semantics_epoch = le.semantics_epoch, .transition_fn = le.transition_fn,
		                      .interpreter = le.interpreter, .prev_entry_hash = prev, .written_by = "forger",
		                      .transition_ref = rref, .state_root = oref, .expected_world = world };
	struct world_log_result lr;
	if (world_log_append(t->st, &a, &lr, &e) < 0) ctest_die("forge: append", &e);
	world_log_entry_free(&le);
	json_decref(rec);
	json_decref(out);
}

int main(int argc, char **argv)
{
	if (argc != 2 && !(argc == 3 && strcmp(argv[2], "--forge") == 0)) {
		fprintf(stderr, "usage: prov-fixture DIR [--forge]\n");
		return 2;
	}
	struct ctest t = { 0 };
	ctest_open(&t, argv[1]);
	struct world_err e;
	ctest_register(&t, "t.seen", ctest_seen_source, "[]", "null", NULL);
	static const struct { const char *id, *plan; } plans[] = {
		{ "t.echo", PLAN(EFF("Test.Echo", "s", "{\"n\":7}"), "true", "null") },
		{ "t.refuse", PLAN("", "false", "{\"ok\":false,\"refused\":\"no\"}") },
		{ "t.denied", PLAN(EFF("Test.Echo", "t", "{}"), "true", "null") },
		{ "t.failing", PLAN(EFF("Test.Fail", "s", "{}"), "true", "null") },
		{ "t.direct", PLAN(EFF("Test.Echo", "s", "{\"m\":\"caf\\u00e9\"}"), "false", "null") },
	};
	for (size_t i = 0; i < sizeof plans / sizeof plans[0]; i++) {
		char *src = ctest_plan_source(plans[i].plan);
		ctest_register(&t, plans[i].id, src, DECL, "null", NULL);
		free(src);
	}
	const char *const grants[] = { "Test.Echo=s:5", "Test.Fail=s:5", NULL };
	char cred[65];
	ctest_session(&t, "ep1", grants, 3600, cred);
	struct coord_config cfg = { .store = t.st, .written_by = "test/prov-fixture" };
	sup_limits_default(&cfg.limits);
	struct coordinator *c = coord_new(&cfg, &e);
	if (!c) ctest_die("coord_new", &e);
	coord_set_handlers(c, handlers);
	struct coord_session *s;
	if (coord_session_open(c, cred, &s, &e) < 0) ctest_die("session", &e);
	static const char *const calls[][3] = {
		{ "t.seen", "p1", "{\"b\":[1,2],\"a\":\"x\"}" }, { "t.echo", "e1", "{\"k\":2}" },
		{ "t.refuse", "r1", "{}" }, { "t.denied", "d1", "{}" }, { "t.failing", "f1", "{}" },
		{ "t.direct", "o1", "{\"z\":true}" },
	};
	for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) {
		struct coord_call cl = { .session = s, .channel = "cli", .skill_id = calls[i][0], .task_id = calls[i][1],
			                 .args = calls[i][2], .args_len = strlen(calls[i][2]) };
		struct coord_result r;
		if (coord_call(c, &cl, &r, &e) < 0) ctest_die(calls[i][0], &e);
		if (r.entry_index != (long long)i + 1) ctest_die("unexpected entry index", NULL);
		coord_result_free(&r);
	}
	coord_session_free(s);
	coord_free(c);
	if (argc == 3 && strcmp(argv[2], "--forge") == 0) forge(&t);
	world_store_close(t.st);
	return 0;
}
