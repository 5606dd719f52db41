/* tests/coordinator/test_hostile.c: the hostile interpreter of the escape
 * suite end to end through the coordinator (issue 23, item 3;
 * docs/escape-suite.md). tests/supervisor/hostile-peer is archived and
 * admitted to epoch 1 as the store's interpreter, and WORLD_TEST_AGENT=hostile
 * (a test hook of supervisor.h, test-hook builds only) makes every
 * supervisor the coordinator builds hand it the capsule's frame fds. For a
 * subset of the supervisor-level scenarios (cut frame, over-cap length,
 * out-of-order frame, a law-breaking plan, a flood of effects, a mid-frame
 * stall, and a stall in the finish phase after the broker ran an effect):
 * the call fails with the named error, the log is unchanged, the store
 * scans clean, no journal intent is left open, a call whose effect ran
 * before the violation has its invocation closed as "failed" (the effect's
 * own outcome kept as evidence), and the next normal call commits. */
#include <sqlite3.h>
#include "tests/coordinator/ctest.h"
#include "broker/effect.h"
#include "common/pause.h"
#include "supervisor/supervisor.h"
#include "store/scan.h"
#include "tests/tap.h"

static int handler_calls;
static int h_echo(const struct broker_handler_ctx *ctx, const json_t *payload, json_t **out, struct world_err *err)
{
	(void)ctx;
	(void)err;
	handler_calls++;
	*out = json_pack("{s:O}", "echo", payload);
	return 0;
}
static const struct broker_handler_entry handlers[] = { { "Test.Echo", h_echo }, { NULL, NULL } };

void coord_set_handlers(struct coordinator *c, const struct broker_handler_entry *table); /* coordinator.c test hook */
static struct ctest T;
#define DECL "[{\"effect\":\"Test.Echo\",\"scope\":\"s\",\"cost\":1}]"

static int call(struct coordinator *c, const char *cred, const char *skill, const char *task,
                struct coord_result *r, struct world_err *e)
{
	struct coord_session *s;
	if (coord_session_open(c, cred, &s, e) < 0) return -1;
	struct coord_call cl = { .session = s, .channel = "cli", .skill_id = skill, .task_id = task, .args = "{}",
		                 .args_len = 2 };
	int rc = coord_call(c, &cl, r, e);
	coord_session_free(s);
	return rc;
}

/* Outcomes of STATUS for intents of KIND, read through a second connection
 * (what another process would see once the failure was recorded). */
static int outcomes(const char *kind, const char *status)
{
	sqlite3 *db;
	sqlite3_stmt *q;
	int n = -1;
	if (sqlite3_open_v2(T.db, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) return -1;
	if (sqlite3_prepare_v2(db,
	                       "SELECT count(*) FROM journal o JOIN journal i ON i.id = o.intent_id"
	                       " WHERE o.phase = 'outcome' AND i.kind = ?1 AND o.status = ?2",
	                       -1, &q, NULL) == SQLITE_OK) {
		sqlite3_bind_text(q, 1, kind, -1, SQLITE_STATIC);
		sqlite3_bind_text(q, 2, status, -1, SQLITE_STATIC);
		if (sqlite3_step(q) == SQLITE_ROW) n = sqlite3_column_int(q, 0);
		sqlite3_finalize(q);
	}
	sqlite3_close(db);
	return n;
}

struct scen {
	const char *name;
	int effectful;
	int code;
	const char *needle;
	int handler_runs; /* effects the broker ran before the violation */
};
static const struct scen scens[] = {
	{ "cut-body", 0, WX_PROTOCOL, "capsule ended before sending its output (", 0 },
	{ "over-cap", 0, WX_PROTOCOL, "frame: length prefix 2162689 over the 2162688-byte frame cap", 0 },
	{ "plan-in-pure", 0, WX_PROTOCOL, "capsule sent a \"plan\" frame while the supervisor waited for its output", 0 },
	{ "law-declared", 1, WX_PLAN_LAW, "plan law declared:", 0 },
	{ "law-one-effect", 1, WX_PLAN_LAW, "plan law one-effect:", 0 },
	{ "stall-body", 0, WX_DEADLINE, "pure run phase deadline (1500 ms) passed; capsule killed", 0 },
	{ "stall-finish", 1, WX_DEADLINE, "finish phase deadline (1500 ms) passed; capsule killed", 1 },
};

int main(void)
{
	if (!WORLD_PAUSE_COMPILED) {
		skip("built without --enable-test-hooks: WORLD_TEST_AGENT is a test hook", "the hostile interpreter through the coordinator");
		return done_testing();
	}
	const char *b = getenv("top_builddir");
	char peer[4096];
	snprintf(peer, sizeof peer, "%s/tests/supervisor/hostile-peer", b ? b : ".");
	if (setenv("AILANG_LITE", peer, 1) < 0 || setenv("WORLD_TEST_AGENT", "hostile", 1) < 0) {
		perror("setenv");
		return 99;
	}
	ctest_init(&T, "hostile");
	ok(1, "hostile-peer archived as %s and admitted to epoch 1", T.interp.ref);
	char id[64];
	for (size_t i = 0; i < sizeof scens / sizeof scens[0]; i++) {
		char src[128];
		snprintf(id, sizeof id, "h.%s", scens[i].name);
		snprintf(src, sizeof src, "%s\n", scens[i].name);
		ctest_register(&T, id, src, scens[i].effectful ? DECL : "[]", "null", NULL);
	}
	ctest_register(&T, "h.ok", "ok\n", "[]", "null", NULL);
	ctest_register(&T, "h.effect", "effect\n", DECL, "null", NULL);

	struct coord_config cfg = { .store = T.st, .written_by = "test/hostile" };
	sup_limits_default(&cfg.limits);
	cfg.limits.pure_ms = cfg.limits.plan_ms = cfg.limits.finish_ms = 1500;
	struct world_err e;
	struct coordinator *c = coord_new(&cfg, &e);
	if (!c) ctest_die("coord_new", &e);
	coord_set_handlers(c, handlers);
	char cred[65];
	const char *const g[] = { "Test.Echo=s:100", NULL };
	ctest_session(&T, "ep-hostile", g, 3600, cred);

	struct coord_result r;
	char task[64];
	int n = 0;
	for (size_t i = 0; i < sizeof scens / sizeof scens[0]; i++) {
		const struct scen *sc = &scens[i];
		snprintf(id, sizeof id, "h.%s", sc->name);
		long long before = ctest_log_len(&T);
		int hc = handler_calls;
		int inv_failed = outcomes("invocation", "failed"), eff_done = outcomes("effect", "succeeded");
		memset(&r, 0, sizeof r);
		memset(&e, 0, sizeof e);
		snprintf(task, sizeof task, "task-%d", n++);
		int rc = call(c, cred, id, task, &r, &e);
		ok(rc < 0 && e.code == sc->code, "%s: the call fails with code %d (got rc %d, code %d: %s)", sc->name,
		   sc->code, rc, e.code, e.msg);
		ok(strstr(e.msg, sc->needle) != NULL, "%s: named error \"%s\"", sc->name, sc->needle);
		if (rc == 0) coord_result_free(&r);
		is_int(handler_calls - hc, sc->handler_runs, "%s: the broker ran %d effect(s)", sc->name, sc->handler_runs);
		is_int(ctest_log_len(&T), before, "%s: nothing committed (log length %lld)", sc->name, before);
		ok(ctest_scan_clean(&T), "%s: the store scans clean", sc->name);
		is_int(ctest_open_intents(&T), 0, "%s: no journal intent is left open", sc->name);
		is_int(outcomes("invocation", "failed") - inv_failed, sc->handler_runs ? 1 : 0,
		       "%s: the invocation is %s in the journal", sc->name,
		       sc->handler_runs ? "closed as failed" : "not closed as failed (nothing ran)");
		is_int(outcomes("effect", "succeeded") - eff_done, sc->handler_runs,
		       "%s: the effect that ran keeps its outcome (%d)", sc->name, sc->handler_runs);
		/* The next normal call commits (pure, then effectful in turn). */
		const char *next = (i % 2) ? "h.effect" : "h.ok";
		memset(&r, 0, sizeof r);
		snprintf(task, sizeof task, "task-%d", n++);
		rc = call(c, cred, next, task, &r, &e);
		ok(rc == 0, "%s: then a normal call (%s) commits (%s)", sc->name, next, rc == 0 ? "ok" : e.msg);
		if (rc == 0) coord_result_free(&r);
		is_int(ctest_log_len(&T), before + 1, "%s: the log grew by one", sc->name);
	}
	ok(ctest_scan_clean(&T), "the whole store scans clean at the end");
	coord_free(c);
	ctest_fini(&T);
	return done_testing();
}
