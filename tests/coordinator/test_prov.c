/* tests/coordinator/test_prov.c: the provenance and replay APIs in process
 * (coordinator/provenance.h, coordinator/replay.h, and the store pieces they
 * use: world_log_find_ref, world_interp_verify). Calls of every kind are
 * committed through the coordinator with counting test handlers; replay
 * must leave the handler count where it was (it never calls one) and the
 * store unchanged, and every kind must walk and replay clean. Then, in the
 * same store, damage is made and repaired again around each check, so each
 * check has its control (the clean walk or replay just before). */
#include "tests/coordinator/ctest.h"
#include "broker/effect.h"
#include "coordinator/provenance.h"
#include "coordinator/replay.h"
#include "tests/tap.h"
#include <sqlite3.h>
#include <sys/stat.h>

void coord_set_handlers(struct coordinator *c, const struct broker_handler_entry *table);

static int calls;
static int h_echo(const struct broker_handler_ctx *ctx, const json_t *payload, json_t **out, struct world_err *err)
{
	(void)ctx; (void)err;
	calls++;
	*out = json_pack("{s:b,s:O}", "ok", 1, "payload", payload);
	return 0;
}
static int h_fail(const struct broker_handler_ctx *ctx, const json_t *payload, json_t **out, struct world_err *err)
{
	(void)ctx; (void)payload; (void)out;
	calls++;
	return werr(err, WX_IO, "test handler: broken");
}
static const struct broker_handler_entry handlers[] = { { "Test.Echo", h_echo }, { "Test.Fail", h_fail }, { NULL, NULL } };

static struct ctest T;

static long long count(const char *sql)
{
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(world_store_db(T.st), sql, -1, &s, NULL) != SQLITE_OK) return -1;
	long long n = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int64(s, 0) : -1;
	sqlite3_finalize(s);
	return n;
}

static void exec(const char *sql)
{
	char *m = NULL;
	if (sqlite3_exec(world_store_db(T.st), sql, NULL, NULL, &m) != SQLITE_OK) bail("sql %s: %s", sql, m ? m : "");
}

static const char *link_state(const struct prov_walk *w, const char *name)
{
	for (size_t i = 0; i < w->nlinks; i++)
		if (strcmp(w->links[i].name, name) == 0) return w->links[i].ok ? "ok" : "broken";
	return "absent";
}

int main(void)
{
	ctest_init(&T, "prov");
	/* prov_first_diff */
	is_int(prov_first_diff("abc", 3, "abc", 3), -1, "first_diff: equal");
	is_int(prov_first_diff("abc", 3, "abd", 3), 2, "first_diff: the differing byte");
	is_int(prov_first_diff("ab", 2, "abc", 3), 2, "first_diff: a prefix differs at its end");
	is_int(prov_first_diff("", 0, "", 0), -1, "first_diff: both empty");

	ctest_register(&T, "t.seen", ctest_seen_source, "[]", "null", NULL);
	const char *decl = "[{\"effect\":\"Test.Echo\",\"scope\":\"s\",\"cost\":1},{\"effect\":\"Test.Fail\",\"scope\":\"s\",\"cost\":1},"
	                   "{\"effect\":\"Test.Echo\",\"scope\":\"t\",\"cost\":1}]";
	static const char *const plans[][2] = {
		{ "t.echo", "{\"plan\":\"world/effect-plan/v1\",\"effects\":[{\"id\":\"e1\",\"effect\":\"Test.Echo\",\"scope\":\"s\",\"cost\":1,\"payload\":{\"n\":7}}],\"finish\":true,\"result\":null}" },
		{ "t.refuse", "{\"plan\":\"world/effect-plan/v1\",\"effects\":[],\"finish\":false,\"result\":{\"ok\":false,\"refused\":\"no\"}}" },
		{ "t.denied", "{\"plan\":\"world/effect-plan/v1\",\"effects\":[{\"id\":\"e1\",\"effect\":\"Test.Echo\",\"scope\":\"t\",\"cost\":1,\"payload\":{}}],\"finish\":true,\"result\":null}" },
		{ "t.failing", "{\"plan\":\"world/effect-plan/v1\",\"effects\":[{\"id\":\"e1\",\"effect\":\"Test.Fail\",\"scope\":\"s\",\"cost\":1,\"payload\":{}}],\"finish\":false,\"result\":null}" },
	};
	for (size_t i = 0; i < 4; i++) {
		char *src = ctest_plan_source(plans[i][1]);
		ctest_register(&T, plans[i][0], src, decl, "null", NULL);
		free(src);
	}
	const char *const g[] = { "Test.Echo=s:9", "Test.Fail=s:9", NULL };
	char cred[65];
	ctest_session(&T, "ep1", g, 3600, cred);
	struct coord_config cfg = { .store = T.st, .written_by = "test/prov" };
	sup_limits_default(&cfg.limits);
	struct world_err e;
	struct coordinator *c = coord_new(&cfg, &e);
	if (!c) bail("coord_new: %s", e.msg);
	coord_set_handlers(c, handlers);
	struct coord_session *s;
	if (coord_session_open(c, cred, &s, &e) < 0) bail("session: %s", e.msg);
	static const char *const skills[] = { "t.seen", "t.echo", "t.refuse", "t.denied", "t.failing" };
	char outs[5][WORLD_REF_SIZE], recs[5][WORLD_REF_SIZE], ents[5][WORLD_REF_SIZE];
	for (int i = 0; i < 5; i++) {
		char task[16];
		snprintf(task, sizeof task, "k%d", i);
		struct coord_call cl = { .session = s, .channel = "mcp", .skill_id = skills[i], .task_id = task, .args = "{\"a\":1}", .args_len = 7 };
		struct coord_result r;
		if (coord_call(c, &cl, &r, &e) < 0) bail("%s: %s", skills[i], e.msg);
		world_hash_ref(r.output, r.output_len, outs[i], NULL);
		memcpy(recs[i], r.record_ref, WORLD_REF_SIZE);
		memcpy(ents[i], r.entry_hash, WORLD_REF_SIZE);
		coord_result_free(&r);
	}
	coord_session_free(s);
	coord_free(c);
	is_int(calls, 2, "two handler calls were made (echo, fail); the denial called none");

	/* resolving */
	long long idx = 0;
	const char *what = NULL;
	ok(world_log_find_ref(T.st, ents[1], &idx, &what, &e) == 0 && idx == 2 && strcmp(what, "entry") == 0, "find_ref: entry hash");
	ok(world_log_find_ref(T.st, recs[2], &idx, &what, &e) == 0 && idx == 3 && strcmp(what, "record") == 0, "find_ref: record");
	ok(world_log_find_ref(T.st, outs[3], &idx, &what, &e) == 0 && idx == 4 && strcmp(what, "output") == 0, "find_ref: output");
	ok(prov_resolve(T.st, "mcp:ep1:k4", &idx, &e) == 0 && idx == 5, "resolve: an invocation id through the journal");
	ok(prov_resolve(T.st, "head", &idx, &e) == 0 && idx == 5, "resolve: head");
	ok(prov_resolve(T.st, "mcp:ep1:nope", &idx, &e) < 0 && e.code == WX_NOT_FOUND, "resolve: unknown invocation");
	ok(prov_resolve(T.st, "x", &idx, &e) < 0 && e.code == WX_USAGE, "resolve: malformed target");

	/* every kind walks and replays clean; replay calls no handler, writes nothing */
	struct sup_limits lim;
	sup_limits_default(&lim);
	struct replayer *rp = replay_new(T.st, &lim, &e);
	if (!rp) bail("replay_new: %s", e.msg);
	long long objs = count("SELECT count(*) FROM objects"), jr = count("SELECT count(*) FROM journal");
	for (int i = 1; i <= 5; i++) {
		struct prov_walk w;
		ok(prov_walk(T.st, i, NULL, 0, &w, &e) == 0 && w.broken == 0 && w.nlinks >= 10, "walk %d (%s): %zu links, none broken",
		   i, skills[i - 1], w.nlinks);
		prov_walk_free(&w);
		struct replay_report rep;
		ok(replay_entry(rp, i, &rep, &e) == 0 && !rep.diverged, "replay %d (%s): identical%s%s", i, skills[i - 1],
		   rep.diverged ? ": " : "", rep.diverged ? rep.detail : "");
		is_int(rep.effectful, i > 1, "... effectful as recorded");
	}
	is_int(calls, 2, "replay called no handler");
	ok(count("SELECT count(*) FROM objects") == objs && count("SELECT count(*) FROM journal") == jr,
	   "replay wrote no object and no journal row");
	struct replay_report rep;
	ok(replay_entry(rp, 9, &rep, &e) < 0 && e.code == WX_NOT_FOUND, "replay of an absent entry: WX_NOT_FOUND");
	json_t *rj = (replay_entry(rp, 2, &rep, &e) == 0) ? replay_report_json(&rep) : NULL;
	ok(rj && json_object_size(rj) == 4 && json_is_false(json_object_get(rj, "diverged")), "report JSON: 4 members when identical");
	json_decref(rj);

	/* a result given to the walk: the stored output byte for byte */
	{
		struct world_object o;
		if (world_object_get(T.st, outs[1], &o, &e) < 0) bail("output: %s", e.msg);
		struct prov_walk w;
		ok(prov_walk(T.st, 2, (const char *)o.payload, o.len, &w, &e) == 0 && !strcmp(link_state(&w, "result"), "ok"),
		   "walk with the result: the result link verified");
		prov_walk_free(&w);
		ok(prov_resolve_result(T.st, (const char *)o.payload, o.len, &idx, &e) == 0 && idx == 2, "resolve_result: by its bytes");
		world_object_free(&o);
	}

	/* damage and repair around each check (the clean runs above are the controls) */
	char sql[1024];
	struct prov_walk w;
	snprintf(sql, sizeof sql, "UPDATE objects SET payload = CAST(replace(CAST(payload AS TEXT), '\"n\":7', '\"n\":8') AS BLOB) "
	                          "WHERE semantic_id = 'world/effect-plan/v1' AND CAST(payload AS TEXT) LIKE '%%\"n\":7%%'");
	exec(sql);
	ok(prov_walk(T.st, 2, NULL, 0, &w, &e) == 0 && !strcmp(link_state(&w, "plan"), "broken") && w.broken == 1,
	   "a damaged plan: the plan link alone broken (%zu)", w.broken);
	prov_walk_free(&w);
	ok(replay_entry(rp, 2, &rep, &e) == 0 && rep.diverged && !strcmp(rep.stage, "plan") && rep.offset > 0,
	   "... replay diverges at stage plan, offset %lld", rep.offset);
	exec("UPDATE objects SET payload = CAST(replace(CAST(payload AS TEXT), '\"n\":8', '\"n\":7') AS BLOB) "
	     "WHERE semantic_id = 'world/effect-plan/v1'");
	ok(replay_entry(rp, 2, &rep, &e) == 0 && !rep.diverged, "repaired: identical again");

	struct world_interp wi;
	if (world_interp_get(T.st, T.interp.ref, &wi, &e) < 0) bail("interp: %s", e.msg);
	char man[4200];
	snprintf(man, sizeof man, "%.*s/manifest.json", (int)(strlen(wi.path) - 7), wi.path);
	int kind = 0;
	ok(world_interp_verify(T.st, wi.ref, &kind, &e) == 0, "the archived interpreter verifies");
	char *mb;
	size_t ml;
	FILE *mf = fopen(man, "r");
	mb = malloc(65536);
	ml = mf ? fread(mb, 1, 65535, mf) : 0;
	if (mf) fclose(mf);
	chmod(man, 0644);
	mf = fopen(man, "w");
	if (mf) { fputs("{}", mf); fclose(mf); }
	ok(world_interp_verify(T.st, wi.ref, &kind, &e) < 0 && e.code == WX_INTEGRITY && kind == WORLD_INTERP_MANIFEST,
	   "a damaged manifest: WX_INTEGRITY, named as the manifest (%s)", e.msg);
	ok(replay_entry(rp, 1, &rep, &e) == 0 && rep.diverged && !strcmp(rep.stage, "input"), "... replay diverges at input");
	mf = fopen(man, "w");
	if (mf) { fwrite(mb, 1, ml, mf); fclose(mf); }
	free(mb);
	ok(world_interp_verify(T.st, wi.ref, &kind, &e) == 0, "manifest restored: verifies again");

	replay_free(rp);
	ctest_fini(&T);
	return done_testing();
}
