/* tests/coordinator/test_coordinator.c: one call = one committed log entry.
 * Real capsules (ailang-lite), a real store; effects go to test handlers so
 * the broker's pipeline is tested on its own (the product handlers have
 * their own tests in tests/broker/). */
#include "tests/coordinator/ctest.h"
#include "broker/effect.h"
#include "broker/grants.h"
#include "broker/plan.h"
#include "store/scan.h"
#include "tests/tap.h"
#include <pthread.h>
#include <sqlite3.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>

void coord_set_handlers(struct coordinator *c, const struct broker_handler_entry *table);

static int handler_calls;
static int block_fd = -1;
static pthread_mutex_t calls_lock = PTHREAD_MUTEX_INITIALIZER;

static int h_echo(const struct broker_handler_ctx *ctx, const json_t *payload, json_t **out, struct world_err *err)
{
	(void)ctx; (void)err;
	pthread_mutex_lock(&calls_lock);
	handler_calls++;
	pthread_mutex_unlock(&calls_lock);
	*out = json_pack("{s:b,s:O}", "ok", 1, "payload", payload);
	return 0;
}
static int h_fail(const struct broker_handler_ctx *ctx, const json_t *payload, json_t **out, struct world_err *err)
{
	(void)ctx; (void)payload; (void)out;
	handler_calls++;
	return werr(err, WX_IO, "test handler: disk on fire");
}
static int h_block(const struct broker_handler_ctx *ctx, const json_t *payload, json_t **out, struct world_err *err)
{
	(void)ctx; (void)payload;
	char c;
	handler_calls++;
	if (read(block_fd, &c, 1) < 0) return werr(err, WX_IO, "read");
	*out = json_pack("{s:b}", "ok", 1);
	return 0;
}
static const struct broker_handler_entry test_handlers[] = {
	{ "Test.Echo", h_echo }, { "Test.Fail", h_fail }, { "Test.Block", h_block }, { NULL, NULL },
};

static struct ctest T;

static struct coordinator *new_coord(void)
{
	struct coord_config cfg = { .store = T.st, .written_by = "test/coordinator" };
	sup_limits_default(&cfg.limits);
	struct world_err e;
	struct coordinator *c = coord_new(&cfg, &e);
	if (!c) ctest_die("coord_new", &e);
	coord_set_handlers(c, test_handlers);
	return c;
}

static int call(struct coordinator *c, const char *cred, const char *skill, const char *task, const char *args,
                struct coord_result *r, struct world_err *e)
{
	struct coord_session *s;
	if (coord_session_open(c, cred, &s, e) < 0) return -1;
	struct coord_call cl = { .session = s, .channel = "cli", .skill_id = skill, .task_id = task, .args = args,
		                 .args_len = strlen(args) };
	int rc = coord_call(c, &cl, r, e);
	coord_session_free(s);
	return rc;
}

static json_t *get_json(const char *ref)
{
	struct world_object o;
	struct world_err e;
	if (world_object_get(T.st, ref, &o, &e) < 0) return NULL;
	json_t *v = world_json_parse((const char *)o.payload, o.len, &e);
	world_object_free(&o);
	return v;
}

static char *get_text(const char *ref)
{
	struct world_object o;
	struct world_err e;
	if (world_object_get(T.st, ref, &o, &e) < 0) return NULL;
	char *s = strdup((const char *)o.payload);
	world_object_free(&o);
	return s;
}

static const char *jstr(const json_t *o, const char *path)
{
	/* dotted path, numeric parts index arrays */
	char buf[256];
	snprintf(buf, sizeof buf, "%s", path);
	const json_t *v = o;
	for (char *tok = strtok(buf, "."); tok && v; tok = strtok(NULL, "."))
		v = (*tok >= '0' && *tok <= '9') ? json_array_get(v, (size_t)atoi(tok)) : json_object_get(v, tok);
	return json_is_string(v) ? json_string_value(v) : NULL;
}

static void test_grants(void)
{
	struct broker_grant g;
	struct world_err e;
	ok(broker_grant_parse("Workspace.Read=worktree:10", &g, &e) == 0 && strcmp(g.effect, "Workspace.Read") == 0 &&
	   strcmp(g.scope, "worktree") == 0 && g.budget == 10, "grant EFFECT=SCOPE:BUDGET parsed");
	ok(broker_grant_parse("Net.Get=http://x:80:5", &g, &e) == 0 && strcmp(g.scope, "http://x:80") == 0 && g.budget == 5,
	   "split at the first = and the last :");
	ok(broker_grant_parse("A.B=s:9007199254740992", &g, &e) == 0, "budget 2^53 accepted");
	static const char *const bad[] = { "Workspace.Read", "A.B=s", "A.B=s:x", "A.B=s:-1", "A.B=s:9007199254740993",
		                           "=s:1", "A.B=:1", "bad name=s:1", "A..B=s:1", "A.B=sc ope:1", "A.B=s:01", NULL };
	for (int i = 0; bad[i]; i++) {
		int rc = broker_grant_parse(bad[i], &g, &e);
		char want[64];
		snprintf(want, sizeof want, "grant \"%s\"", bad[i]);
		ok(rc < 0 && e.code == WX_USAGE && strstr(e.msg, want), "bad grant %s refused naming it: %s", bad[i], e.msg);
	}
	ok(broker_episode_valid("ep-1") && !broker_episode_valid("-ep") && !broker_episode_valid("Ep") &&
	   !broker_episode_valid("") && !broker_episode_valid("a_b"), "episode id rule");
}

static void test_decisions(void)
{
	struct broker_grant g[2];
	struct world_err e;
	broker_grant_parse("Test.Echo=s:2", &g[0], &e);
	broker_grant_parse("Test.Other=t:5", &g[1], &e);
	struct broker_decision d;
	long long now = 1000;
	broker_decide(T.st, "dec", g, 2, now + 10, now, "Test.Echo", "s", 1, &d, &e);
	is_str(broker_label_name(d.label), "allowed", "matching grant: allowed");
	is_int(d.budget_before, 2, "... budget before = the grant's budget");
	broker_decide(T.st, "dec", g, 2, now + 10, now, "Test.None", "s", 1, &d, &e);
	is_str(broker_label_name(d.label), "denied:effect-name", "no grant for the effect: denied:effect-name");
	broker_decide(T.st, "dec", g, 2, now + 10, now, "Test.Echo", "x", 1, &d, &e);
	is_str(broker_label_name(d.label), "denied:scope", "wrong scope: denied:scope");
	broker_decide(T.st, "dec", g, 2, now, now, "Test.Echo", "s", 1, &d, &e);
	is_str(broker_label_name(d.label), "denied:expired", "now == expires_at: denied:expired (live while now < expires_at)");
	broker_decide(T.st, "dec", g, 2, now + 1, now, "Test.Echo", "s", 1, &d, &e);
	is_str(broker_label_name(d.label), "allowed", "now == expires_at - 1: still allowed");
	broker_decide(T.st, "dec", g, 2, now + 10, now, "Test.Echo", "s", 3, &d, &e);
	is_str(broker_label_name(d.label), "denied:budget", "cost over remaining: denied:budget");
	broker_decide(T.st, "dec", g, 2, now + 10, now, "Test.Echo", "s", -1, &d, &e);
	is_str(broker_label_name(d.label), "denied:budget", "negative cost: denied:budget");
	broker_decide(T.st, "dec", g, 0, now + 10, now, "Test.Echo", "s", 0, &d, &e);
	is_str(broker_label_name(d.label), "denied:effect-name", "no grants at all: denied:effect-name");
	/* best-ranked: a scope denial from one grant beats an effect-name denial from another */
	broker_decide(T.st, "dec", g, 2, now + 10, now, "Test.Other", "zz", 0, &d, &e);
	is_str(broker_label_name(d.label), "denied:scope", "best-ranked denial over several grants");
	/* first allowed wins */
	struct broker_grant g2[2];
	broker_grant_parse("Test.Echo=s:0", &g2[0], &e);
	broker_grant_parse("Test.Echo=s:7", &g2[1], &e);
	broker_decide(T.st, "dec", g2, 2, now + 10, now, "Test.Echo", "s", 1, &d, &e);
	ok(d.label == BROKER_ALLOWED && d.grant_index == 1 && d.budget_before == 7, "a later grant allows when the first cannot");
}

static void test_session_expiry(void)
{
	char cred[65];
	const char *const g[] = { "Test.Echo=s:1", NULL };
	ctest_session(&T, "exp", g, 100, cred);
	struct broker_session s;
	struct world_err e;
	struct world_session raw;
	world_session_get(T.st, cred, &raw, &e);
	long long exp = raw.expires_at;
	world_session_free(&raw);
	ok(broker_session_open(T.st, cred, exp - 1, &s, &e) == 0, "session live one second before expires_at");
	broker_session_free(&s);
	int rc = broker_session_open(T.st, cred, exp, &s, &e);
	ok(rc < 0 && e.code == WX_SESSION && strcmp(e.msg, "session credential has expired") == 0,
	   "session expired at expires_at exactly: %s", e.msg);
	rc = broker_session_open(T.st, "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", 0, &s, &e);
	ok(rc < 0 && e.code == WX_NOT_FOUND && strcmp(e.msg, "unknown session credential") == 0, "unknown credential");
	rc = broker_session_open(T.st, "0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef", 0, &s, &e);
	ok(rc < 0 && e.code == WX_USAGE, "uppercase credential is malformed");
	ok(strlen(cred) == 64, "credential is 64 hex digits");
	/* only the hash is stored */
	sqlite3_stmt *q;
	sqlite3_prepare_v2(world_store_db(T.st), "SELECT count(*) FROM sessions WHERE credential_hash LIKE ?", -1, &q, NULL);
	char pat[80];
	snprintf(pat, sizeof pat, "%%%s%%", cred);
	sqlite3_bind_text(q, 1, pat, -1, SQLITE_STATIC);
	sqlite3_step(q);
	is_int(sqlite3_column_int(q, 0), 0, "the credential itself is not stored");
	sqlite3_finalize(q);
}

static void test_pure(struct coordinator *c, const char *cred)
{
	struct coord_result r;
	struct world_err e;
	long long before = ctest_log_len(&T);
	int rc = call(c, cred, "t.seen", "task1", "{ \"b\":1, \"a\":2 }", &r, &e);
	ok(rc == 0, "pure call committed: %s", rc ? e.msg : "ok");
	if (rc) return;
	is_str(r.output, "{\"seen\":\"{\\\"a\\\":2,\\\"b\\\":1}\"}", "the transition saw the canonical input");
	is_int(ctest_log_len(&T), before + 1, "exactly one log entry");
	json_t *rec = get_json(r.record_ref);
	const char *in = jstr(rec, "input");
	char *stored = in ? get_text(in) : NULL;
	is_str(stored, "{\"a\":2,\"b\":1}", "stored world/invocation-input/v1 bytes = what the transition saw");
	free(stored);
	is_str(jstr(rec, "invocationId"), "cli:ep1:task1", "invocation id CHANNEL:EPISODE:TASK");
	ok(json_object_get(rec, "plan") == NULL, "pure record (v1) has no plan");
	struct world_object o;
	world_object_get(T.st, r.record_ref, &o, &e);
	is_str(o.semantic_id, "world/invocation-record/v1", "pure record is world/invocation-record/v1");
	world_object_free(&o);
	struct world_world w;
	world_head_get(T.st, &w, &e);
	is_str(w.ref, r.world_ref, "the head moved to the call's world");
	is_str(w.state_root, jstr(rec, "output"), "stateRoot = the output ref");
	json_decref(rec);
	char *out1 = strdup(r.output);
	coord_result_free(&r);

	/* idempotent task ids */
	rc = call(c, cred, "t.seen", "task1", "{\"a\":2,\"b\":1}", &r, &e);
	ok(rc == 0 && r.replayed && strcmp(r.output, out1) == 0, "same task id, same args: the committed result");
	is_int(ctest_log_len(&T), before + 1, "... and nothing re-ran or was committed");
	coord_result_free(&r);
	rc = call(c, cred, "t.seen", "task1", "{\"a\":3}", &r, &e);
	ok(rc < 0 && e.code == WX_CONFLICT && strcmp(e.msg, "task id already used in this session") == 0,
	   "same task id, other args: refused: %s", e.msg);
	free(out1);

	/* refusals before execution commit nothing */
	long long n0 = ctest_log_len(&T);
	rc = call(c, cred, "t.nope", NULL, "{}", &r, &e);
	ok(rc < 0 && e.code == WX_REFUSED && strstr(e.msg, "unknown skill \"t.nope\""), "unknown skill refused: %s", e.msg);
	rc = call(c, cred, "t.seen", NULL, "[1]", &r, &e);
	ok(rc < 0 && e.code == WX_BAD_INPUT, "arguments not an object refused: %s", e.msg);
	rc = call(c, cred, "t.seen", NULL, "{\"a\":1,\"a\":2}", &r, &e);
	ok(rc < 0 && e.code == WX_BAD_INPUT, "duplicate keys refused: %s", e.msg);
	size_t big = (1u << 20) + 16;
	char *huge = malloc(big + 1);
	memset(huge, ' ', big);
	memcpy(huge, "{\"a\":\"", 6);
	memset(huge + 6, 'x', big - 8);
	memcpy(huge + big - 2, "\"}", 2);
	huge[big] = 0;
	rc = call(c, cred, "t.seen", NULL, huge, &r, &e);
	ok(rc < 0 && e.code == WX_BAD_INPUT && strstr(e.msg, "1 MiB"), "arguments over 1 MiB refused: %s", e.msg);
	free(huge);
	rc = call(c, cred, "t.hidden", NULL, "{}", &r, &e);
	ok(rc < 0 && e.code == WX_REFUSED && strstr(e.msg, "not visible"), "invisible skill refused: %s", e.msg);
	rc = call(c, cred, "t.nohandler", NULL, "{}", &r, &e);
	ok(rc < 0 && e.code == WX_REFUSED && strstr(e.msg, "Test.Nobody"), "declared effect without handler refused: %s", e.msg);
	rc = call(c, cred, "t.schema", NULL, "{\"path\":1}", &r, &e);
	ok(rc < 0 && e.code == WX_REFUSED && strstr(e.msg, "/path") && strstr(e.msg, "string"),
	   "arguments failing the input schema refused naming the pointer and rule: %s", e.msg);
	rc = call(c, cred, "t.schema", NULL, "{}", &r, &e);
	ok(rc < 0 && e.code == WX_REFUSED && strstr(e.msg, "path"), "missing required property refused: %s", e.msg);
	rc = call(c, cred, "t.schema", NULL, "{\"path\":\"a\",\"x\":1}", &r, &e);
	ok(rc < 0 && e.code == WX_REFUSED, "additional property refused: %s", e.msg);
	rc = call(c, cred, "t.seen", "bad task id!", "{}", &r, &e);
	ok(rc < 0 && e.code == WX_BAD_INPUT, "malformed task id refused");
	is_int(ctest_log_len(&T), n0, "refusals before execution committed nothing");
	rc = call(c, cred, "t.schema", NULL, "{\"path\":\"a\"}", &r, &e);
	ok(rc == 0, "arguments matching the schema run: %s", rc ? e.msg : "ok");
	if (rc == 0) coord_result_free(&r);
}

static const char DECL[] = "[{\"effect\":\"Test.Echo\",\"scope\":\"s\",\"cost\":1},"
                           "{\"effect\":\"Test.Fail\",\"scope\":\"s\",\"cost\":1}]";

static void test_effectful(struct coordinator *c, const char *cred)
{
	struct coord_result r;
	struct world_err e;
	long long before = ctest_log_len(&T);
	int rc = call(c, cred, "t.echo", "e1", "{\"k\":2}", &r, &e);
	ok(rc == 0, "effectful call committed: %s", rc ? e.msg : "ok");
	if (rc) return;
	json_t *out = world_json_parse(r.output, r.output_len, &e);
	is_str(jstr(out, "finished.results.0.status"), "ok", "the finish phase saw the effect ok");
	is_str(jstr(out, "finished.results.0.output.payload.n"), NULL, "payload echoed (object)");
	ok(json_integer_value(json_object_get(json_object_get(json_object_get(json_array_get(json_object_get(
	       json_object_get(out, "finished"), "results"), 0), "output"), "payload"), "n")) == 7,
	   "handler output reached the finish phase");
	const char *rec_ref = jstr(out, "world.effects.0.record");
	ok(rec_ref && strcmp(rec_ref, jstr(out, "finished.results.0.record")) == 0, "world block names the effect record");
	json_t *rec = rec_ref ? get_json(rec_ref) : NULL;
	ok(rec && broker_record_check(rec, &e) == 0, "effect record obeys the law on read");
	ok(json_is_true(json_object_get(rec, "allowed")) && json_is_false(json_object_get(rec, "failed")) &&
	   json_integer_value(json_object_get(rec, "budgetBefore")) == 3 &&
	   json_integer_value(json_object_get(rec, "budgetAfter")) == 2, "allowed record: budget 3 -> 2");
	char *req = jstr(rec, "requestRef") ? get_text(jstr(rec, "requestRef")) : NULL;
	ok(req && strstr(req, "\"invocationId\":\"cli:ep1:e1\""), "request object stored");
	free(req);
	json_t *res = jstr(rec, "resultRef") ? get_json(jstr(rec, "resultRef")) : NULL;
	ok(json_is_true(json_object_get(res, "ok")), "result object stored");
	json_decref(res);
	json_decref(rec);
	json_t *ir = get_json(r.record_ref);
	ok(jstr(ir, "plan") && strcmp(jstr(ir, "plan"), jstr(out, "world.plan")) == 0, "v2 record names the plan");
	ok(json_array_size(json_object_get(ir, "effects")) == 1 && strcmp(jstr(ir, "effects.0"), rec_ref) == 0,
	   "v2 record lists the effect record");
	char *plan = get_text(jstr(ir, "plan"));
	ok(plan && world_canon_is_canonical(plan, strlen(plan)), "plan stored canonical");
	free(plan);
	json_decref(ir);
	json_decref(out);
	is_int(ctest_log_len(&T), before + 1, "one log entry for the effectful call");
	coord_result_free(&r);

	/* failure of the handler: committed as failed, costs budget */
	rc = call(c, cred, "t.failing", "f1", "{}", &r, &e);
	ok(rc == 0, "handler failure still committed: %s", rc ? e.msg : "ok");
	out = rc == 0 ? world_json_parse(r.output, r.output_len, &e) : NULL;
	is_str(jstr(out, "finished.results.0.status"), "failed", "finish phase sees status failed");
	ok(json_is_null(json_object_get(json_array_get(json_object_get(json_object_get(out, "finished"), "results"), 0),
	                                "output")), "... with output null");
	rec = jstr(out, "world.effects.0.record") ? get_json(jstr(out, "world.effects.0.record")) : NULL;
	ok(json_is_true(json_object_get(rec, "failed")) && json_is_null(json_object_get(rec, "resultRef")) &&
	   broker_record_check(rec, &e) == 0, "failed record: failed, no resultRef, law holds");
	json_decref(rec);
	json_decref(out);
	coord_result_free(&r);

	/* denial: a scope the session lacks */
	rc = call(c, cred, "t.denied", "d1", "{}", &r, &e);
	ok(rc == 0, "denied effect committed: %s", rc ? e.msg : "ok");
	out = rc == 0 ? world_json_parse(r.output, r.output_len, &e) : NULL;
	is_str(jstr(out, "finished.results.0.status"), "denied", "finish phase sees status denied");
	rec = jstr(out, "world.effects.0.record") ? get_json(jstr(out, "world.effects.0.record")) : NULL;
	is_str(jstr(rec, "denial"), "denied:scope", "denial record carries the label");
	ok(json_is_false(json_object_get(rec, "allowed")) && json_is_null(json_object_get(rec, "requestRef")) &&
	   broker_record_check(rec, &e) == 0, "denial record: not allowed, no request, law holds");
	json_decref(rec);
	json_decref(out);
	coord_result_free(&r);

	/* a plan that refuses: committed with effects [] */
	rc = call(c, cred, "t.refuse", "r1", "{}", &r, &e);
	ok(rc == 0, "refused plan committed: %s", rc ? e.msg : "ok");
	ok(rc == 0 && strncmp(r.output, "{\"ok\":false,\"refused\":\"no\",\"world\":{\"effects\":[],\"plan\":\"sha256:", 54) == 0,
	   "... its output is the plan's result with effects []: %s", rc == 0 ? r.output : "");
	if (rc == 0) coord_result_free(&r);
}

static void plan_law(struct coordinator *c, const char *cred, const char *id, const char *law)
{
	struct coord_result r;
	struct world_err e;
	long long n0 = ctest_log_len(&T);
	int rc = call(c, cred, id, NULL, "{}", &r, &e);
	char want[64];
	snprintf(want, sizeof want, "plan law %s:", law);
	ok(rc < 0 && e.code == WX_PLAN_LAW && strstr(e.msg, want), "plan breaking law %s fails naming it: %s", law,
	   rc < 0 ? e.msg : "committed!");
	is_int(ctest_log_len(&T), n0, "... and commits nothing");
}

struct conc { struct coordinator *c; const char *cred; int allowed, denied, errors; };
static void *conc_thread(void *arg)
{
	struct conc *k = arg;
	for (int i = 0; i < 3; i++) {
		struct coord_result r;
		struct world_err e;
		if (call(k->c, k->cred, "t.budget", NULL, "{}", &r, &e) < 0) { __sync_fetch_and_add(&k->errors, 1); continue; }
		if (strstr(r.output, "\"status\":\"ok\"")) __sync_fetch_and_add(&k->allowed, 1);
		else if (strstr(r.output, "\"status\":\"denied\"")) __sync_fetch_and_add(&k->denied, 1);
		coord_result_free(&r);
	}
	return NULL;
}

static void test_budget(struct coordinator *c)
{
	char cred[65], cred2[65], cred3[65];
	const char *const g[] = { "Test.Echo=s:3", NULL };
	ctest_session(&T, "budget", g, 3600, cred);
	int ok_n = 0, denied_n = 0;
	for (int i = 0; i < 4; i++) {
		struct coord_result r;
		struct world_err e;
		if (call(c, cred, "t.budget", NULL, "{}", &r, &e) < 0) continue;
		if (strstr(r.output, "\"status\":\"ok\"")) ok_n++;
		if (strstr(r.output, "\"status\":\"denied\"")) denied_n++;
		coord_result_free(&r);
	}
	ok(ok_n == 3 && denied_n == 1, "budget 3 at cost 1: three allowed, the fourth denied (%d/%d)", ok_n, denied_n);
	ctest_session(&T, "budget", g, 3600, cred2);
	struct coord_result r;
	struct world_err e;
	int rc = call(c, cred2, "t.budget", NULL, "{}", &r, &e);
	ok(rc == 0 && strstr(r.output, "\"status\":\"denied\""), "a new session of the same episode finds the budget spent");
	if (rc == 0) {
		json_t *out = world_json_parse(r.output, r.output_len, &e);
		json_t *rec = get_json(jstr(out, "world.effects.0.record"));
		is_str(jstr(rec, "denial"), "denied:budget", "... denied:budget");
		json_decref(rec);
		json_decref(out);
		coord_result_free(&r);
	}
	/* survives a restart: a new coordinator and store handle */
	world_store_close(T.st);
	if (world_store_open(T.db, WORLD_STORE_WRITER, &T.st, &e) < 0) ctest_die("reopen", &e);
	coord_free(c);
	c = new_coord();
	rc = call(c, cred2, "t.budget", NULL, "{}", &r, &e);
	ok(rc == 0 && strstr(r.output, "\"status\":\"denied\""), "after a restart the episode's budget is still spent");
	if (rc == 0) coord_result_free(&r);

	const char *const g5[] = { "Test.Echo=s:5", NULL };
	ctest_session(&T, "conc", g5, 3600, cred3);
	struct conc k = { .c = c, .cred = cred3 };
	pthread_t th[8];
	for (int i = 0; i < 8; i++) pthread_create(&th[i], NULL, conc_thread, &k);
	for (int i = 0; i < 8; i++) pthread_join(th[i], NULL);
	ok(k.allowed == 5, "8 concurrent callers x 3 calls on budget 5: exactly 5 allowed (got %d, %d denied, %d errors)",
	   k.allowed, k.denied, k.errors);
	long long spent = -1;
	world_journal_spent(T.st, "conc", "Test.Echo", "s", &spent, &e);
	is_int(spent, 5, "spent never exceeds the budget (remaining never below zero)");
	coord_free(c);
}

/* kill -9 during an effect (after the intent, before the outcome). */
static void test_crash(void)
{
	char cred[65];
	const char *const g[] = { "Test.Block=s:5", NULL };
	ctest_session(&T, "crash", g, 3600, cred);
	world_store_close(T.st);
	T.st = NULL;
	int pfd[2];
	if (pipe(pfd) < 0) bail("pipe");
	pid_t pid = fork();
	if (pid == 0) {
		close(pfd[1]);
		block_fd = pfd[0];
		struct world_err e;
		if (world_store_open(T.db, WORLD_STORE_WRITER, &T.st, &e) < 0) _exit(3);
		struct coordinator *c = new_coord();
		struct coord_result r;
		call(c, cred, "t.block", "k1", "{}", &r, &e);
		_exit(0);
	}
	close(pfd[0]);
	struct world_store *rd = NULL;
	struct world_err e;
	int seen = 0;
	for (int i = 0; i < 400 && !seen; i++) {
		struct timespec ts = { 0, 25000000 };
		nanosleep(&ts, NULL);
		if (!rd && world_store_open(T.db, WORLD_STORE_READER, &rd, &e) < 0) continue;
		struct world_journal_row jr;
		if (world_journal_find(rd, "effect", "cli:crash:k1#e1", &jr, &e) == 0) seen = 1;
	}
	world_store_close(rd);
	ok(seen, "the effect intent is durable while the handler runs");
	kill(pid, SIGKILL);
	int status;
	waitpid(pid, &status, 0);
	close(pfd[1]);
	ok(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "the calling process was killed with SIGKILL");
	if (world_store_open(T.db, WORLD_STORE_WRITER, &T.st, &e) < 0) ctest_die("reopen after kill", &e);
	struct world_scan_opts so = { 0 };
	struct world_scan_result sr;
	ok(world_scan(T.st, &so, NULL, &sr, &e) == 0 && sr.holes == 0 && sr.complete, "the store scans clean after the kill");
	struct world_journal_row jr;
	ok(world_journal_find(T.st, "effect", "cli:crash:k1#e1", &jr, &e) == 0 && jr.status[0] == 0,
	   "the effect intent has no outcome: indeterminate");
	struct coordinator *c = new_coord();
	int calls0 = handler_calls;
	struct coord_result r;
	int rc = call(c, cred, "t.block", "k1", "{}", &r, &e);
	ok(rc < 0 && e.code == WX_CONFLICT && strstr(e.msg, "indeterminate"), "the same task is not re-run: %s", e.msg);
	is_int(handler_calls, calls0, "... the handler was not called again");
	long long spent;
	world_journal_spent(T.st, "crash", "Test.Block", "s", &spent, &e);
	is_int(spent, 1, "the indeterminate effect's cost stays charged");
	coord_free(c);
}

int main(void)
{
	ctest_init(&T, "coord");
	test_grants();
	test_decisions();
	test_session_expiry();

	ctest_register(&T, "t.seen", ctest_seen_source, "[]", "null", NULL);
	ctest_register(&T, "t.schema", ctest_seen_source, "[]", "null",
	               "{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\"}},\"required\":[\"path\"],"
	               "\"additionalProperties\":false}");
	ctest_register(&T, "t.hidden", ctest_seen_source, "[]", "{\"effect\":\"Test.Secret\",\"scope\":\"s\",\"cost\":0}", NULL);
	ctest_register(&T, "t.nohandler", ctest_seen_source, "[{\"effect\":\"Test.Nobody\",\"scope\":\"s\",\"cost\":1}]", "null", NULL);
	char *src;
#define REG_PLAN(id, plan, decl) do { src = ctest_plan_source(plan); ctest_register(&T, id, src, decl, "null", NULL); free(src); } while (0)
	REG_PLAN("t.echo", "{\"plan\":\"world/effect-plan/v1\",\"effects\":[{\"id\":\"e1\",\"effect\":\"Test.Echo\",\"scope\":\"s\",\"cost\":1,\"payload\":{\"n\":7}}],\"finish\":true,\"result\":null}", DECL);
	REG_PLAN("t.failing", "{\"plan\":\"world/effect-plan/v1\",\"effects\":[{\"id\":\"e1\",\"effect\":\"Test.Fail\",\"scope\":\"s\",\"cost\":1,\"payload\":{}}],\"finish\":true,\"result\":null}", DECL);
	REG_PLAN("t.denied", "{\"plan\":\"world/effect-plan/v1\",\"effects\":[{\"id\":\"e1\",\"effect\":\"Test.Echo\",\"scope\":\"t\",\"cost\":1,\"payload\":{}}],\"finish\":true,\"result\":null}",
	         "[{\"effect\":\"Test.Echo\",\"scope\":\"t\",\"cost\":1}]");
	REG_PLAN("t.refuse", "{\"plan\":\"world/effect-plan/v1\",\"effects\":[],\"finish\":false,\"result\":{\"ok\":false,\"refused\":\"no\"}}", DECL);
	REG_PLAN("t.budget", "{\"plan\":\"world/effect-plan/v1\",\"effects\":[{\"id\":\"e1\",\"effect\":\"Test.Echo\",\"scope\":\"s\",\"cost\":1,\"payload\":{}}],\"finish\":false,\"result\":null}", DECL);
	REG_PLAN("t.block", "{\"plan\":\"world/effect-plan/v1\",\"effects\":[{\"id\":\"e1\",\"effect\":\"Test.Block\",\"scope\":\"s\",\"cost\":1,\"payload\":{}}],\"finish\":false,\"result\":null}",
	         "[{\"effect\":\"Test.Block\",\"scope\":\"s\",\"cost\":1}]");
	/* plans breaking each law */
	REG_PLAN("law.shape", "{\"plan\":\"world/effect-plan/v1\",\"effects\":[],\"finish\":false,\"result\":{},\"extra\":1}", DECL);
	REG_PLAN("law.kind", "{\"plan\":\"world/effect-plan/v2\",\"effects\":[],\"finish\":false,\"result\":{}}", DECL);
	REG_PLAN("law.two", "{\"plan\":\"world/effect-plan/v1\",\"effects\":[{\"id\":\"a\",\"effect\":\"Test.Echo\",\"scope\":\"s\",\"cost\":1,\"payload\":{}},{\"id\":\"b\",\"effect\":\"Test.Echo\",\"scope\":\"s\",\"cost\":1,\"payload\":{}}],\"finish\":false,\"result\":null}", DECL);
	REG_PLAN("law.id", "{\"plan\":\"world/effect-plan/v1\",\"effects\":[{\"id\":\"E-1\",\"effect\":\"Test.Echo\",\"scope\":\"s\",\"cost\":1,\"payload\":{}}],\"finish\":false,\"result\":null}", DECL);
	REG_PLAN("law.undeclared", "{\"plan\":\"world/effect-plan/v1\",\"effects\":[{\"id\":\"a\",\"effect\":\"Test.Echo\",\"scope\":\"s\",\"cost\":2,\"payload\":{}}],\"finish\":false,\"result\":null}", DECL);
	REG_PLAN("law.payload", "{\"plan\":\"world/effect-plan/v1\",\"effects\":[{\"id\":\"a\",\"effect\":\"Test.Echo\",\"scope\":\"s\",\"cost\":1,\"payload\":[1]}],\"finish\":false,\"result\":null}", DECL);
	REG_PLAN("law.world", "{\"plan\":\"world/effect-plan/v1\",\"effects\":[],\"finish\":false,\"result\":{\"world\":1}}", DECL);
	REG_PLAN("law.result", "{\"plan\":\"world/effect-plan/v1\",\"effects\":[],\"finish\":false,\"result\":null}", DECL);
	REG_PLAN("law.result2", "{\"plan\":\"world/effect-plan/v1\",\"effects\":[{\"id\":\"a\",\"effect\":\"Test.Echo\",\"scope\":\"s\",\"cost\":1,\"payload\":{}}],\"finish\":false,\"result\":{}}", DECL);
	REG_PLAN("law.finish", "{\"plan\":\"world/effect-plan/v1\",\"effects\":[],\"finish\":true,\"result\":{}}", DECL);
	REG_PLAN("law.effshape", "{\"plan\":\"world/effect-plan/v1\",\"effects\":[{\"id\":\"a\",\"effect\":\"Test.Echo\",\"scope\":\"s\",\"cost\":1}],\"finish\":false,\"result\":null}", DECL);

	struct coordinator *c = new_coord();
	char cred[65];
	const char *const g[] = { "Test.Echo=s:3", "Test.Fail=s:3", NULL };
	ctest_session(&T, "ep1", g, 3600, cred);
	test_pure(c, cred);
	test_effectful(c, cred);
	plan_law(c, cred, "law.shape", "shape");
	plan_law(c, cred, "law.kind", "shape");
	plan_law(c, cred, "law.two", "one-effect");
	plan_law(c, cred, "law.id", "effect-id");
	plan_law(c, cred, "law.undeclared", "declared");
	plan_law(c, cred, "law.payload", "payload");
	plan_law(c, cred, "law.world", "no-world");
	plan_law(c, cred, "law.result", "result");
	plan_law(c, cred, "law.result2", "result");
	plan_law(c, cred, "law.finish", "finish");
	plan_law(c, cred, "law.effshape", "effect-shape");
	test_budget(c);
	test_crash();
	struct world_scan_opts so = { 0 };
	struct world_scan_result sr;
	struct world_err e;
	ok(world_scan(T.st, &so, NULL, &sr, &e) == 0 && sr.holes == 0, "the whole store scans clean at the end");
	ctest_fini(&T);
	return done_testing();
}
