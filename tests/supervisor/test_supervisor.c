/* tests/supervisor/test_supervisor.c: one call at a time through the
 * supervisor: pure, effectful and check paths; deadlines; caps; interpreter
 * failures; capacity refusal; and a capsule side that breaks the protocol
 * (garbage, a 2 GiB length prefix, frames after its output, killed
 * mid-protocol, out of order, never reading its input). Every case also
 * checks that nothing leaked. */
#include "supervisor/agent.h"
#include "supervisor/frame.h"
#include "common/file.h"
#include "supervisor/testbroker.h"
#include "tests/supervisor/suptest.h"
#include "tests/tap.h"
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <signal.h>
#include <stdint.h>
#include <time.h>

static struct supervisor *mk(struct sup_limits *lim)
{
	struct world_err err;
	struct launcher *l = suptest_launcher(stub_path(), &err);
	if (!l) bail("launcher: %s", err.msg);
	struct supervisor *s = sup_new(lim, l, &err);
	if (!s) bail("sup_new: %s", err.msg);
	return s;
}

static int pure(struct supervisor *s, const char *src, const char *args, struct sup_result *res, struct world_err *err)
{
	return sup_run_pure(s, src, strlen(src), args, strlen(args), res, err);
}

/* Run a pure call; expect failure with code; return the message. */
static void expect_fail(struct supervisor *s, const char *src, int code, const char *needle, const char *what)
{
	struct sup_result res;
	struct world_err err = { 0, "" };
	int rc = pure(s, src, "{}", &res, &err);
	ok(rc < 0 && err.code == code, "%s: fails with code %d (got %d: %s)", what, code, err.code, err.msg);
	if (needle) ok(strstr(err.msg, needle) != NULL, "%s: message names it: %s", what, err.msg);
	sup_result_free(&res);
}

/* ---- hostile capsule sides (TEST HOOK agents) ---- */
static int agent_garbage(void *arg, const struct launch_exec *ex)
{
	(void)arg;
	const char g[] = "hello, this is not a frame at all";
	write_all(ex->proto_out, g, sizeof g);
	pause();
	return 0;
}
static int agent_huge_prefix(void *arg, const struct launch_exec *ex)
{
	(void)arg;
	const unsigned char h[] = { 0x80, 0, 0, 0, '{', '"' };
	write_all(ex->proto_out, h, sizeof h);
	pause();
	return 0;
}
static void read_start(const struct launch_exec *ex)
{
	sup_agent_alloc_init();
	json_t *st = NULL;
	frame_read(ex->proto_in, FRAME_MAX, &st, NULL);
}
static void send_json(const struct launch_exec *ex, const char *text)
{
	json_t *f = json_loads(text, 0, NULL);
	frame_write(ex->proto_out, f, FRAME_MAX, NULL);
}
static int agent_after_output(void *arg, const struct launch_exec *ex)
{
	(void)arg;
	read_start(ex);
	send_json(ex, "{\"type\":\"output\",\"output\":\"{}\"}");
	send_json(ex, "{\"type\":\"output\",\"output\":\"{\\\"again\\\":1}\"}");
	return 0;
}
static int agent_half_frame(void *arg, const struct launch_exec *ex)
{
	(void)arg;
	read_start(ex);
	const char h[] = { 0, 0, 0, 100, '{', '"', 't' };
	write_all(ex->proto_out, h, sizeof h);
	pause(); /* killed from outside */
	return 0;
}
static int agent_out_of_order(void *arg, const struct launch_exec *ex)
{
	(void)arg;
	read_start(ex);
	send_json(ex, "{\"type\":\"output\",\"output\":\"{}\"}");
	pause();
	return 0;
}
static int agent_extra_member(void *arg, const struct launch_exec *ex)
{
	(void)arg;
	read_start(ex);
	send_json(ex, "{\"type\":\"output\",\"output\":\"{}\",\"note\":\"hi\"}");
	pause();
	return 0;
}
static int agent_unknown_type(void *arg, const struct launch_exec *ex)
{
	(void)arg;
	read_start(ex);
	send_json(ex, "{\"type\":\"hello\"}");
	pause();
	return 0;
}
static int agent_plan_then_deaf(void *arg, const struct launch_exec *ex)
{
	(void)arg;
	read_start(ex);
	send_json(ex, "{\"type\":\"plan\",\"plan\":\"{\\\"plan\\\":\\\"world/effect-plan/v1\\\",\\\"effects\\\":[{\\\"id\\\":\\\"e1\\\",\\\"effect\\\":\\\"T\\\",\\\"payload\\\":{}}],\\\"finish\\\":true}\"}");
	pause(); /* never reads the (large) results frame */
	return 0;
}
static int agent_cut_and_exit(void *arg, const struct launch_exec *ex)
{
	(void)arg;
	read_start(ex);
	const char h[] = { 0, 0, 0, 100, '{' };
	write_all(ex->proto_out, h, sizeof h);
	return 0;
}
static int agent_silent_exit(void *arg, const struct launch_exec *ex)
{
	(void)arg;
	read_start(ex);
	return 7;
}

struct bg {
	struct supervisor *s; const char *src; int rc; struct world_err err; const char *args;
	atomic_int done;
};
static void *bg_pure(void *p)
{
	struct bg *b = p;
	struct sup_result res;
	b->rc = pure(b->s, b->src, b->args ? b->args : "{}", &res, &b->err);
	atomic_store(&b->done, 1);
	sup_result_free(&res);
	return NULL;
}

static long ms_since(struct timespec *t0)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

/* The test broker after 1 s, with reply->own_deadline = *(int *)ctx. */
static int slow_broker(void *ctx, const char *plan, size_t plan_len, struct sup_broker_reply *reply, struct world_err *err)
{
	struct timespec one = { 1, 0 };
	nanosleep(&one, NULL);
	int rc = sup_test_broker(NULL, plan, plan_len, reply, err);
	reply->own_deadline = *(int *)ctx;
	return rc;
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
	lim.stdout_max = lim.stderr_max = 2u << 20; /* floods end sooner */
	struct supervisor *s = mk(&lim);
	struct sup_result res;
	struct world_err err;

	/* sup_new owns its launcher even when it refuses: the launcher's fds
	 * must be gone (and, under ASan, its memory is not leaked). */
	{
		int before = count_fds();
		struct sup_limits bad = lim;
		bad.capacity = 0;
		struct launcher *l = suptest_launcher(stub_path(), &err);
		if (!l) bail("launcher: %s", err.msg);
		struct supervisor *none = sup_new(&bad, l, &err);
		ok(!none && err.code == WX_USAGE, "sup_new refuses capacity 0 (got %d: %s)", err.code, err.msg);
		is_int(count_fds(), before, "a refused sup_new released its launcher's fds");
	}

	/* Pure. */
	int rc = pure(s, "echo\n", "{\"a\":1}", &res, &err);
	ok(rc == 0, "pure echo runs (%s)", rc ? err.msg : "ok");
	is_str(res.output, "{\"input\":\"{\\\"a\\\":1}\"}", "output is the interpreter's stdout minus one newline");
	is_int(res.output_len, strlen("{\"input\":\"{\\\"a\\\":1}\"}"), "output length");
	sup_result_free(&res);

	/* Effectful: plan -> test broker -> finish. */
	struct sup_test_broker tb = { 0, 0 };
	const char *src = "effect\n";
	rc = sup_run_effectful(s, src, strlen(src), "{\"k\":\"v\"}", 9, sup_test_broker, &tb, &res, &err);
	ok(rc == 0, "effectful run (%s)", rc ? err.msg : "ok");
	ok(res.plan && strstr(res.plan, "world/effect-plan/v1"), "plan bytes returned");
	ok(res.finished, "finish phase ran");
	ok(res.output && strstr(res.output, "\"finished\":true"), "finish output returned");
	ok(res.output && strstr(res.output, "\\\"phase\\\":\\\"finish\\\",\\\"args\\\":{\\\"k\\\":\\\"v\\\"},\\\"results\\\":[{\\\"id\\\":\\\"e1\\\""),
	   "finish input is {phase:finish, args:ARGS, results:[...]}");
	is_int(tb.calls, 1, "broker saw one plan");
	sup_result_free(&res);

	/* The finish phase runs exactly like the plan phase (docs/design.md §2): cwd =
	 * the sandbox root, --args-file args.json (rewritten in place with the
	 * finish input), source at host/capsule/main.ail. */
	/* The interpreter's fd 0 is open and at end of stream, never closed
	 * (a closed fd 0 would be reused by its next open()). */
	rc = pure(s, "stdin\n", "{}", &res, &err);
	is_str(rc == 0 ? res.output : err.msg, "{\"stdin\":\"eof\"}", "interpreter stdin is open at end of stream");
	sup_result_free(&res);

	src = "where\n";
	rc = sup_run_effectful(s, src, strlen(src), "{\"w\":2}", 7, sup_test_broker, &tb, &res, &err);
	ok(rc == 0 && res.finished && res.output, "effectful 'where' run finishes (%s)", rc ? err.msg : "ok");
	{
		json_error_t je;
		json_t *o = res.output ? json_loads(res.output, 0, &je) : NULL;
		const char *cwd = json_string_value(json_object_get(o, "cwd"));
		const char *sb = json_string_value(json_object_get(o, "sandbox"));
		const char *in = json_string_value(json_object_get(o, "input"));
		ok(cwd && sb && sb[0] && strcmp(cwd, sb) == 0, "finish phase: cwd %s is the sandbox root %s", cwd ? cwd : "?",
		   sb ? sb : "?");
		is_str(json_string_value(json_object_get(o, "argsfile")), "args.json", "finish phase: --args-file args.json");
		is_str(json_string_value(json_object_get(o, "source")), "host/capsule/main.ail",
		       "finish phase: source at host/capsule/main.ail");
		ok(json_is_true(json_object_get(o, "finish")) && in && strncmp(in, "{\"phase\":\"finish\",\"args\":{\"w\":2},", strlen("{\"phase\":\"finish\",\"args\":{\"w\":2},")) == 0,
		   "finish phase read the finish input from args.json: %.60s", in ? in : "?");
		if (!suptest_unconfined()) {
			/* Only args.json is writable: the rest of the root stays read-only. */
			ok(json_integer_value(json_object_get(o, "create_errno")) == EROFS,
			   "finish phase: a new file in the root is refused (EROFS)");
			ok(json_integer_value(json_object_get(o, "rename_errno")) != 0,
			   "finish phase: args.json cannot be renamed (errno %d)",
			   (int)json_integer_value(json_object_get(o, "rename_errno")));
			ok(json_integer_value(json_object_get(o, "unlink_errno")) != 0,
			   "finish phase: the staged source cannot be removed (errno %d)",
			   (int)json_integer_value(json_object_get(o, "unlink_errno")));
		}
		json_decref(o);
	}
	sup_result_free(&res);

	/* A plan without effects: no finish phase. */
	src = "refuse\n";
	rc = sup_run_effectful(s, src, strlen(src), "{}", 2, sup_test_broker, &tb, &res, &err);
	ok(rc == 0 && !res.finished && res.output == NULL, "plan without effects: no finish phase (%s)", rc ? err.msg : "ok");
	sup_result_free(&res);

	/* The broker refuses: the call fails with the broker's error. */
	src = "notobject\n";
	rc = sup_run_effectful(s, src, strlen(src), "{}", 2, sup_test_broker, &tb, &res, &err);
	ok(rc < 0 && err.code == WX_NOT_OBJECT, "a plan that is not an object fails (%s)", err.msg);
	sup_result_free(&res);

	/* Source checks. */
	src = "module main\nexport func main(x: string) -> string { x }\n";
	rc = sup_check_source(s, src, strlen(src), &res, &err);
	ok(rc == 0 && res.check_exit == 0, "check accepts a plain source (%s)", rc ? err.msg : "ok");
	is_int(res.profile, SUP_PROFILE_SOURCE_CHECK, "check runs under the source-check profile");
	sup_result_free(&res);
	src = "module main\nimport world/secrets (get)\n";
	rc = sup_check_source(s, src, strlen(src), &res, &err);
	ok(rc < 0 && err.code == WX_CHECK_REFUSED, "check refuses a world/* import (code %d)", err.code);
	ok(strstr(err.msg, "LDR001") != NULL, "refusal carries the diagnostic: %s", err.msg);
	sup_result_free(&res);

	/* Input checks happen before anything starts. */
	rc = pure(s, "echo\n", "[1]", &res, &err);
	ok(rc < 0 && err.code == WX_BAD_INPUT, "args that are not an object refused: %s", err.msg);
	sup_result_free(&res);
	char *bigargs = malloc((1u << 20) + 16);
	memset(bigargs, ' ', (1u << 20) + 8);
	memcpy(bigargs, "{", 1);
	memcpy(bigargs + (1u << 20) + 7, "}", 2);
	rc = pure(s, "echo\n", bigargs, &res, &err);
	ok(rc < 0 && err.code == WX_BAD_INPUT && strstr(err.msg, "cap"), "args over 1 MiB refused: %s", err.msg);
	sup_result_free(&res);
	free(bigargs);

	/* Deadlines: killed within the deadline plus a generous bound. */
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	expect_fail(s, "spin\n", WX_DEADLINE, "pure run phase deadline (1500 ms)", "spinning interpreter");
	long el = ms_since(&t0);
	ok(el >= 1500 && el < 1500 + 3000, "spinning interpreter killed after %ld ms (deadline 1500 ms + bound 3000 ms)", el);
	src = "spin-finish\n";
	rc = sup_run_effectful(s, src, strlen(src), "{}", 2, sup_test_broker, NULL, &res, &err);
	ok(rc < 0 && err.code == WX_DEADLINE && strstr(err.msg, "finish phase"), "finish phase deadline: %s", err.msg);
	sup_result_free(&res);
	{
		struct sup_limits l2 = lim;
		l2.invocation_ms = 700;
		struct supervisor *s2 = mk(&l2);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		expect_fail(s2, "spin\n", WX_DEADLINE, "whole-invocation deadline (700 ms)", "whole-invocation deadline");
		el = ms_since(&t0);
		ok(el >= 700 && el < 700 + 3000, "killed at the whole-invocation deadline after %ld ms", el);
		/* An effect under a deadline of its own (an exec run, docs/exec.md):
		 * the broker's 1 s does not count against the 700 ms; the control,
		 * the same broker without own_deadline, fails at the deadline. */
		int own = 1;
		rc = sup_run_effectful(s2, "effect\n", 7, "{}", 2, slow_broker, &own, &res, &err);
		ok(rc == 0 && res.finished, "a 1 s effect with its own deadline under a 700 ms invocation deadline completes (%s)",
		   rc ? err.msg : "ok");
		sup_result_free(&res);
		own = 0;
		rc = sup_run_effectful(s2, "effect\n", 7, "{}", 2, slow_broker, &own, &res, &err);
		ok(rc < 0 && err.code == WX_DEADLINE && strstr(err.msg, "while the broker handled the plan"),
		   "control: the same 1 s effect without it fails at the invocation deadline: %s", rc ? err.msg : "ran");
		sup_result_free(&res);
		sup_free(s2);
	}

	/* Caps and interpreter failures. */
	expect_fail(s, "flood-stdout\n", WX_OUTPUT_CAP, "stdout exceeded", "stdout flood");
	expect_fail(s, "flood-stderr\n", WX_OUTPUT_CAP, "stderr exceeded", "stderr flood");
	expect_fail(s, "big\n", WX_OUTPUT_CAP, "over the 1048576-byte cap", "output over 1 MiB (under the stdout cap)");
	expect_fail(s, "notobject\n", WX_NOT_OBJECT, "transition output is not a JSON object", "output not an object");
	expect_fail(s, "badutf8\n", WX_NOT_OBJECT, "transition output is not a JSON object", "output not UTF-8");
	expect_fail(s, "fail\n", WX_INTERP, "RT001", "interpreter exits 1");
	if (suptest_unconfined()) {
		skip("the test double has no seccomp filter", "a denied syscall is reported by name");
		skip("the test double has no seccomp filter", "... with its code");
	} else {
		expect_fail(s, "denied\n", WX_DENIED_SYSCALL, "syscall denied: keyctl", "a denied syscall");
	}

	/* A process left behind inside the capsule does not outlive it. Control
	 * first: while the capsule runs, the sleeper is visible by name. */
	{
		char args[64], name[32];
		snprintf(args, sizeof args, "{\"tag\":%d}", (int)getpid());
		snprintf(name, sizeof name, "orph%d", (int)getpid());
		name[15] = '\0';
		struct bg ob = { s, "orphan-wait\n", 0, { 0, "" }, NULL, 0 };
		ob.args = args;
		pthread_t oth;
		pthread_create(&oth, NULL, bg_pure, &ob);
		int seen = 0;
		while (!seen && !atomic_load(&ob.done)) {
			seen = count_named(name) > 0;
			if (!seen) usleep(2000);
		}
		pthread_join(oth, NULL);
		ok(seen, "control: the sleeper %s is alive while its capsule runs", name);
		ok(ob.rc == 0, "a transition that forks a sleeper still returns (%s)", ob.rc ? ob.err.msg : "ok");
		is_int(count_named(name), 0, "after the call the sleeper is gone");
		rc = pure(s, "orphan\n", args, &res, &err);
		ok(rc == 0 && res.output && strstr(res.output, "\"orphan\":") && !strstr(res.output, "\"orphan\":-"),
		   "orphan without waiting: forked (%s)", rc ? err.msg : res.output);
		sup_result_free(&res);
		is_int(count_named(name), 0, "... and the sleeper is gone");
	}
	is_int(count_running(stub_path()), 0, "no interpreter process is left anywhere (unconfined check)");

	/* Capacity: 2 slots held by spinners, the third call is refused now. */
	{
		struct sup_limits l3 = lim;
		l3.capacity = 2;
		struct supervisor *s3 = mk(&l3);
		struct bg b[2] = { { s3, "spin\n", 0, { 0, "" }, NULL, 0 }, { s3, "spin\n", 0, { 0, "" }, NULL, 0 } };
		pthread_t th[2];
		for (int i = 0; i < 2; i++) pthread_create(&th[i], NULL, bg_pure, &b[i]);
		for (int i = 0; i < 1000 && sup_alive(s3) < 2; i++) usleep(2000);
		is_int(sup_alive(s3), 2, "two capsules alive");
		if (!suptest_unconfined()) {
			/* As root the capsule launcher's capsules share one empty
			 * network namespace; unprivileged each has its own. */
			usleep(100 * 1000);
			char ns[4][64], self[64] = "";
			int k = children_netns(ns, 4);
			ssize_t sl = readlink("/proc/self/ns/net", self, sizeof self - 1);
			if (sl > 0) self[sl] = '\0';
			ok(k == 2 && strcmp(ns[0], self) != 0 && strcmp(ns[1], self) != 0,
			   "both capsules are outside the supervisor's network namespace (%s; %d read)", self, k);
			if (geteuid() == 0)
				ok(k == 2 && strcmp(ns[0], ns[1]) == 0, "as root they share one empty network namespace (%s, %s)",
				   k > 0 ? ns[0] : "?", k > 1 ? ns[1] : "?");
			else
				ok(k == 2 && strcmp(ns[0], ns[1]) != 0, "unprivileged each has its own (%s, %s)",
				   k > 0 ? ns[0] : "?", k > 1 ? ns[1] : "?");
		}
		clock_gettime(CLOCK_MONOTONIC, &t0);
		rc = pure(s3, "echo\n", "{}", &res, &err);
		el = ms_since(&t0);
		ok(rc < 0 && err.code == WX_CAPACITY, "third call refused with WX_CAPACITY: %s", err.msg);
		ok(strstr(err.msg, "capacity") && strstr(err.msg, "limit 2"), "message says capacity and the limit");
		ok(el < 1000, "refused at once (%ld ms), not queued", el);
		sup_result_free(&res);
		for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
		ok(b[0].err.code == WX_DEADLINE && b[1].err.code == WX_DEADLINE, "the spinners ended at their deadline");
		rc = pure(s3, "echo\n", "{}", &res, &err);
		ok(rc == 0, "after they are reaped a call is admitted again");
		sup_result_free(&res);
		sup_free(s3);
	}

	/* A hostile capsule side. */
	struct { int (*agent)(void *, const struct launch_exec *); int code; const char *needle; const char *what; } bad[] = {
		{ agent_garbage, WX_PROTOCOL, "length prefix", "garbage instead of a frame" },
		{ agent_huge_prefix, WX_PROTOCOL, "length prefix 2147483648", "a 2 GiB length prefix" },
		{ agent_after_output, WX_PROTOCOL, "after its final message", "a frame after its output" },
		{ agent_extra_member, WX_PROTOCOL, "unexpected member \"note\"", "an unknown member" },
		{ agent_unknown_type, WX_PROTOCOL, "\"hello\" frame", "an unknown frame type" },
		{ agent_cut_and_exit, WX_PROTOCOL, "inside a frame", "a frame cut by exit" },
		{ agent_silent_exit, WX_PROTOCOL, "exit status 7", "exit without a reply" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		sup_set_agent(s, bad[i].agent);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		expect_fail(s, "echo\n", bad[i].code, bad[i].needle, bad[i].what);
		el = ms_since(&t0);
		ok(el < 1500, "%s: ended at once (%ld ms), not at the deadline", bad[i].what, el);
	}
	/* Out of order: an output while the plan is expected. */
	sup_set_agent(s, agent_out_of_order);
	rc = sup_run_effectful(s, "effect\n", 7, "{}", 2, sup_test_broker, NULL, &res, &err);
	ok(rc < 0 && err.code == WX_PROTOCOL && strstr(err.msg, "waited for its plan"), "out-of-order frame: %s", err.msg);
	sup_result_free(&res);
	/* A capsule that never reads a 900 KiB results frame: no stall. */
	sup_set_agent(s, agent_plan_then_deaf);
	char *args = malloc(900 * 1024);
	memset(args, ' ', 900 * 1024 - 1);
	args[0] = '{';
	args[900 * 1024 - 2] = '}';
	args[900 * 1024 - 1] = '\0';
	clock_gettime(CLOCK_MONOTONIC, &t0);
	rc = sup_run_effectful(s, "effect\n", 7, args, strlen(args), sup_test_broker, NULL, &res, &err);
	el = ms_since(&t0);
	ok(rc < 0 && err.code == WX_DEADLINE && strstr(err.msg, "finish phase"),
	   "a capsule that never reads its results ends at the finish deadline: %s", err.msg);
	ok(el < 1500 + 3000, "... after %ld ms", el);
	sup_result_free(&res);
	free(args);
	/* Killed mid-protocol, half a frame sent. */
	sup_set_agent(s, agent_half_frame);
	struct bg b = { s, "echo\n", 0, { 0, "" }, NULL, 0 };
	pthread_t th;
	pthread_create(&th, NULL, bg_pure, &b);
	int victim = 0;
	for (int i = 0; i < 1000 && !(victim = first_child()); i++) usleep(2000);
	usleep(100000);
	ok(victim > 0 && kill(victim, SIGKILL) == 0, "killed the capsule (pid %d) from outside", victim);
	pthread_join(th, NULL);
	ok(b.rc < 0 && b.err.code == WX_PROTOCOL && strstr(b.err.msg, "killed by signal 9") && strstr(b.err.msg, "inside a frame"), "killed mid-protocol: %s", b.err.msg);
	sup_set_agent(s, NULL);

	rc = pure(s, "echo\n", "{}", &res, &err);
	ok(rc == 0, "the supervisor still works after all that");
	sup_result_free(&res);

	/* Two supervisors (two launchers) in one process, started from
	 * several threads at once: every call returns its echo. */
	{
		struct supervisor *s4 = mk(&lim);
		enum { NB = 4, ROUNDS = 5 };
		int good = 0;
		for (int round = 0; round < ROUNDS; round++) {
			struct bg b[NB];
			pthread_t th[NB];
			for (int i = 0; i < NB; i++) {
				b[i] = (struct bg){ i % 2 ? s4 : s, "echo\n", 0, { 0, "" }, "{\"two\":1}", 0 };
				pthread_create(&th[i], NULL, bg_pure, &b[i]);
			}
			for (int i = 0; i < NB; i++) {
				pthread_join(th[i], NULL);
				good += b[i].rc == 0;
			}
		}
		is_int(good, NB * ROUNDS, "%d calls through two supervisors from %d threads at once all return", NB * ROUNDS, NB);
		sup_free(s4);
	}
	sup_free(s);

	is_int(count_children(), 0, "no child process (or zombie) remains");
	is_int(count_fds(), fds0, "no fd leaked");
	is_int(count_dir(tmp), 0, "no scratch directory left in TMPDIR");
	rmdir(tmp);
	return done_testing();
}
