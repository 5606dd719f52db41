/* tests/supervisor/test_hostile.c: the hostile interpreter of the escape
 * suite (issue 23, item 3; docs/escape-suite.md). A native program
 * (tests/supervisor/hostile_peer.c) is the supervisor's pinned interpreter;
 * a compromised agent (sup_set_agent, the supervisor's test hook) hands it
 * the capsule's frame fds, and it sends cut, oversized, interleaved and
 * out-of-order frames, plans breaking each law of broker/plan.c, floods of
 * frames and effects, and stalls mid-frame. For each scenario: the call
 * fails with its named error (code and message), the broker is called only
 * when a whole plan arrived (and then refuses it naming the law, through
 * the real broker_plan_parse), nothing of the capsule is left (no process
 * named hostilepeer, no child, no capsule admitted, no fd), and the same
 * supervisor then serves a normal call with the real agent. */
#include "broker/plan.h"
#include "supervisor/agent.h"
#include "supervisor/frame.h"
#include "tests/supervisor/suptest.h"
#include "tests/tap.h"
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <time.h>

/* The compromised agent: runs the pinned interpreter with the frame fds as
 * its stdin and stdout, through the launcher's own spawn_interp (so, with
 * the capsule launcher, the sealed memfd in the confined capsule). */
static int agent_hostile(void *arg, const struct launch_exec *ex)
{
	(void)arg;
	static const char *const args[] = { "hostile", "host/capsule/main.ail", NULL };
	pid_t p = ex->spawn_interp(ex, args, ex->proto_in, ex->proto_out, 2);
	if (p < 0) return 126;
	/* Only the peer holds the frame pipes now: its exit is their end. */
	if (close(ex->proto_in) < 0 || close(ex->proto_out) < 0) return 125;
	int st = 0;
	while (waitpid(p, &st, 0) < 0)
		if (errno != EINTR) return 124;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* The broker: the real plan validator over a descriptor declaring one
 * effect (Test.Echo, scope s, cost 1); records every call. */
struct rec_broker { int calls; };
static int real_plan_broker(void *ctx, const char *plan, size_t len, struct sup_broker_reply *reply,
                            struct world_err *err)
{
	struct rec_broker *rb = ctx;
	rb->calls++;
	reply->finish = 0;
	reply->results = NULL;
	reply->results_len = 0;
	json_t *declared = json_loads("[{\"effect\":\"Test.Echo\",\"scope\":\"s\",\"cost\":1}]", 0, NULL);
	if (!declared) return werr(err, WX_FAIL, "test broker: declared");
	struct broker_plan bp;
	int rc = broker_plan_parse(plan, len, declared, &bp, err);
	json_decref(declared);
	if (rc < 0) return -1;
	int finish = bp.finish;
	broker_plan_free(&bp);
	if (finish) {
		static const char r[] = "[{\"id\":\"e1\",\"effect\":\"Test.Echo\",\"status\":\"ok\"}]";
		reply->results = strdup(r);
		if (!reply->results) return werr(err, WX_FAIL, "test broker: out of memory");
		reply->results_len = strlen(r);
		reply->finish = 1;
	}
	return 0;
}

static char *peer_path(void)
{
	static char p[4096];
	const char *b = getenv("top_builddir");
	snprintf(p, sizeof p, "%s/tests/supervisor/hostile-peer", b ? b : ".");
	return p;
}

struct scenario {
	const char *name;
	int effectful;
	int code;
	const char *needle;
	int broker_calls; /* how many times the broker must have been called */
	const char *needle2; /* a second part of the message, or NULL (between
	                      * them: the wait status, "exit status 0" or
	                      * "killed by signal 9", as the race of the peer's
	                      * exit and the supervisor's kill goes) */
};

/* Each scenario and its named error (docs/escape-suite.md lists them). */
static const struct scenario scenarios[] = {
	{ "cut-header", 0, WX_PROTOCOL, "capsule ended before sending its output (", 0, "; its protocol pipe closed inside a frame)" },
	{ "cut-body", 0, WX_PROTOCOL, "capsule ended before sending its output (", 0, "; its protocol pipe closed inside a frame)" },
	{ "over-cap", 0, WX_PROTOCOL, "capsule during the pure run phase: frame: length prefix 2162689 over the 2162688-byte frame cap", 0, NULL },
	{ "huge-prefix", 0, WX_PROTOCOL, "frame: length prefix 4294967295 over the 2162688-byte frame cap", 0, NULL },
	{ "zero-prefix", 0, WX_PROTOCOL, "frame: zero length prefix", 0, NULL },
	{ "not-json", 0, WX_PROTOCOL, "frame: malformed JSON at byte", 0, NULL },
	{ "bad-utf8", 0, WX_PROTOCOL, "frame: malformed JSON at byte", 0, NULL },
	{ "dup-type", 0, WX_PROTOCOL, "duplicate object key", 0, NULL },
	{ "no-type", 0, WX_PROTOCOL, "frame: no string member \"type\"", 0, NULL },
	{ "unknown-type", 0, WX_PROTOCOL, "capsule sent a \"hello\" frame while the supervisor waited for its output", 0, NULL },
	{ "extra-member", 0, WX_PROTOCOL, "capsule frame \"output\": unexpected member \"note\"", 0, NULL },
	{ "forged-class", 0, WX_PROTOCOL, "capsule frame \"error\": unknown class \"root\"", 0, NULL },
	{ "plan-in-pure", 0, WX_PROTOCOL, "capsule sent a \"plan\" frame while the supervisor waited for its output", 0, NULL },
	{ "results-from-capsule", 0, WX_PROTOCOL, "capsule sent a \"results\" frame while the supervisor waited for its output", 0, NULL },
	{ "start-from-capsule", 0, WX_PROTOCOL, "capsule sent a \"start\" frame while the supervisor waited for its output", 0, NULL },
	{ "output-not-object", 0, WX_NOT_OBJECT, "transition output is not a JSON object", 0, NULL },
	{ "output-over-cap", 0, WX_OUTPUT_CAP, "capsule frame \"output\": output is 1048577 bytes, over the 1048576-byte cap", 0, NULL },
	{ "two-outputs", 0, WX_PROTOCOL, "after its final message", 0, NULL },
	{ "flood-frames", 0, WX_PROTOCOL, "after its final message", 0, NULL },
	{ "interleaved", 0, WX_PROTOCOL, "frame: malformed JSON at byte", 0, NULL },
	{ "stall-header", 0, WX_DEADLINE, "pure run phase deadline (1500 ms) passed; capsule killed", 0, NULL },
	{ "stall-body", 0, WX_DEADLINE, "pure run phase deadline (1500 ms) passed; capsule killed", 0, NULL },
	{ "stall-silent", 0, WX_DEADLINE, "pure run phase deadline (1500 ms) passed; capsule killed", 0, NULL },
	{ "output-before-plan", 1, WX_PROTOCOL, "capsule sent a \"output\" frame while the supervisor waited for its plan", 0, NULL },
	{ "checked-in-effectful", 1, WX_PROTOCOL, "capsule sent a \"checked\" frame while the supervisor waited for its plan", 0, NULL },
	{ "two-plans", 1, WX_PROTOCOL, "capsule sent a \"plan\" frame while the supervisor waited for its output", 1, NULL },
	{ "flood-plans", 1, WX_PROTOCOL, "capsule sent a \"plan\" frame while the supervisor waited for its output", 1, NULL },
	{ "plan-not-object", 1, WX_NOT_OBJECT, "transition plan is not a JSON object", 0, NULL },
	{ "plan-over-cap", 1, WX_OUTPUT_CAP, "capsule frame \"plan\": plan is 1048577 bytes, over the 1048576-byte cap", 0, NULL },
	{ "garbage-between", 1, WX_PROTOCOL, "capsule during the finish phase: frame: length prefix 1195463234 over the 2162688-byte frame cap", 1, NULL },
	{ "stall-finish", 1, WX_DEADLINE, "finish phase deadline (1500 ms) passed; capsule killed", 1, NULL },
	{ "law-shape", 1, WX_PLAN_LAW, "plan law shape:", 1, NULL },
	{ "law-one-effect", 1, WX_PLAN_LAW, "plan law one-effect:", 1, NULL },
	{ "law-effect-shape", 1, WX_PLAN_LAW, "plan law effect-shape:", 1, NULL },
	{ "law-effect-id", 1, WX_PLAN_LAW, "plan law effect-id:", 1, NULL },
	{ "law-declared", 1, WX_PLAN_LAW, "plan law declared:", 1, NULL },
	{ "law-payload", 1, WX_PLAN_LAW, "plan law payload:", 1, NULL },
	{ "law-no-world", 1, WX_PLAN_LAW, "plan law no-world:", 1, NULL },
	{ "law-result", 1, WX_PLAN_LAW, "plan law result:", 1, NULL },
	{ "law-finish", 1, WX_PLAN_LAW, "plan law finish:", 1, NULL },
};

static int run(struct supervisor *s, const char *src, int effectful, struct rec_broker *rb, struct sup_result *res,
               struct world_err *err)
{
	if (effectful)
		return sup_run_effectful(s, src, strlen(src), "{\"k\":1}", 7, real_plan_broker, rb, res, err);
	return sup_run_pure(s, src, strlen(src), "{\"k\":1}", 7, res, err);
}

struct bg { struct supervisor *s; int rc; struct world_err err; atomic_int done; };
static void *bg_stall(void *p)
{
	struct bg *b = p;
	struct sup_result res;
	struct rec_broker rb = { 0 };
	b->rc = run(b->s, "stall-silent\n", 0, &rb, &res, &b->err);
	sup_result_free(&res);
	atomic_store(&b->done, 1);
	return NULL;
}

int main(void)
{
	const char *tmp = private_tmpdir();
	if (!tmp) bail("mkdtemp");
	diag("launcher under test: %s", suptest_launcher_name());
	int fds0 = count_fds();
	struct sup_limits lim;
	sup_limits_default(&lim);
	lim.pure_ms = lim.plan_ms = lim.finish_ms = 1500;
	struct world_err err = { 0, "" };
	struct launcher *l = suptest_launcher(peer_path(), &err);
	if (!l) bail("launcher: %s", err.msg);
	struct supervisor *s = sup_new(&lim, l, &err);
	if (!s) bail("sup_new: %s", err.msg);
	struct sup_result res;

	/* Controls: the peer is a working interpreter under the real agent,
	 * and the process probe sees a live peer. */
	int rc = run(s, "ok\n", 0, NULL, &res, &err);
	ok(rc == 0 && res.output && strcmp(res.output, "{\"served\":true}") == 0,
	   "control: the real agent runs the peer as an interpreter (%s)", rc ? err.msg : res.output);
	sup_result_free(&res);
	struct rec_broker rb = { 0 };
	rc = run(s, "effect\n", 1, &rb, &res, &err);
	ok(rc == 0 && res.finished && rb.calls == 1 && res.output && strcmp(res.output, "{\"finished\":true}") == 0,
	   "control: an effectful call passes the real plan validator and finishes (%s)", rc ? err.msg : "ok");
	sup_result_free(&res);
	sup_set_agent(s, agent_hostile);
	{
		struct bg b = { s, 0, { 0, "" }, 0 };
		pthread_t th;
		if (pthread_create(&th, NULL, bg_stall, &b) != 0) bail("pthread_create");
		int seen = 0;
		while (!atomic_load(&b.done) && !seen) {
			seen = count_named("hostilepeer") > 0;
			struct timespec ts = { 0, 10 * 1000000L };
			nanosleep(&ts, NULL);
		}
		pthread_join(th, NULL);
		ok(seen, "control: a stalling hostile peer is seen alive by the process probe");
		ok(b.rc < 0 && b.err.code == WX_DEADLINE, "control: ... and killed at the deadline (%s)", b.err.msg);
		is_int(count_named("hostilepeer"), 0, "control: ... and gone after the call");
	}

	for (size_t i = 0; i < sizeof scenarios / sizeof scenarios[0]; i++) {
		const struct scenario *sc = &scenarios[i];
		char src[96];
		snprintf(src, sizeof src, "%s\n", sc->name);
		struct rec_broker b = { 0 };
		err = (struct world_err){ 0, "" };
		sup_set_agent(s, agent_hostile);
		rc = run(s, src, sc->effectful, &b, &res, &err);
		ok(rc < 0 && err.code == sc->code, "%s: fails with code %d (got %d: %s)", sc->name, sc->code, err.code, err.msg);
		ok(strstr(err.msg, sc->needle) != NULL && (!sc->needle2 || strstr(err.msg, sc->needle2)),
		   "%s: the error names it (want \"%s\"%s%s)", sc->name, sc->needle, sc->needle2 ? " ... " : "",
		   sc->needle2 ? sc->needle2 : "");
		ok(!res.output, "%s: no output returned", sc->name);
		is_int(b.calls, sc->broker_calls, "%s: broker called %d time(s)", sc->name, sc->broker_calls);
		sup_result_free(&res);
		ok(count_named("hostilepeer") == 0 && count_children() == 0 && sup_alive(s) == 0,
		   "%s: the capsule is gone (no peer process, no child, none admitted)", sc->name);
		/* The same supervisor keeps serving. */
		sup_set_agent(s, NULL);
		rc = run(s, i % 2 ? "effect\n" : "ok\n", i % 2, &b, &res, &err);
		ok(rc == 0 && res.output, "%s: the next %s call on the same supervisor succeeds (%s)", sc->name,
		   i % 2 ? "effectful" : "pure", rc ? err.msg : res.output);
		sup_result_free(&res);
	}
	sup_free(s);
	is_int(count_fds(), fds0, "no fd leaked over every scenario");
	is_int(count_dir(tmp), 0, "no scratch directory left");
	rmdir(tmp);
	return done_testing();
}
