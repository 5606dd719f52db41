/* tests/supervisor/test_cancel.c: cancelling a call that runs (struct
 * sup_cancel, supervisor.h). A spinning capsule whose deadlines are far
 * away is killed by its cancel handle mid-run: the call fails with
 * WX_CANCELLED naming the phase, no process, fd or admission slot is left.
 * A handle fired before the call starts nothing; a cancel landing while
 * the broker callback runs stops the call before its finish phase.
 * Controls: an unfired handle changes nothing (pure and effectful calls
 * complete), and the same spin without a cancel is still running when it
 * is looked at (only the cancel ended it). */
#include "supervisor/testbroker.h"
#include "tests/supervisor/suptest.h"
#include "tests/tap.h"
#include <pthread.h>
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

struct bg {
	struct supervisor *s;
	const struct sup_cancel *cancel;
	int rc;
	struct world_err err;
};

static void *bg_spin(void *p)
{
	struct bg *b = p;
	struct sup_result res;
	b->rc = sup_run_pure_cancellable(b->s, "spin\n", 5, "{}", 2, b->cancel, &res, &b->err);
	sup_result_free(&res);
	return NULL;
}

/* Wait (bounded: 30 s of 10 ms looks) until a capsule process exists. */
static int wait_capsule(void)
{
	for (int i = 0; i < 3000; i++) {
		if (first_child() > 0) return 1;
		struct timespec ts = { 0, 10 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	return 0;
}

struct fire_broker {
	struct sup_cancel *cancel;
	int calls;
};
/* The cancel lands while the broker handles the plan. */
static int broker_fires(void *ctx, const char *plan, size_t plan_len, struct sup_broker_reply *reply,
                        struct world_err *err)
{
	struct fire_broker *fb = ctx;
	fb->calls++;
	sup_cancel_fire(fb->cancel);
	return sup_test_broker(NULL, plan, plan_len, reply, err);
}

int main(void)
{
	diag("launcher under test: %s", suptest_launcher_name());
	int fds0 = count_fds();
	struct sup_limits lim;
	sup_limits_default(&lim);
	/* far away: only the cancel may end the spin */
	lim.pure_ms = lim.plan_ms = lim.finish_ms = lim.invocation_ms = 60000;
	struct supervisor *s = mk(&lim);
	struct world_err err = { 0, "" };
	struct sup_result res;

	/* control: an unfired handle changes nothing */
	struct sup_cancel c;
	if (sup_cancel_init(&c, &err) < 0) bail("sup_cancel_init: %s", err.msg);
	ok(!sup_cancel_fired(&c), "a new handle is not fired");
	int rc = sup_run_pure_cancellable(s, "echo\n", 5, "{\"a\":1}", 7, &c, &res, &err);
	ok(rc == 0 && res.output && strstr(res.output, "\"input\""), "pure call with an unfired handle completes (%s)",
	   rc ? err.msg : res.output);
	sup_result_free(&res);
	rc = sup_run_effectful_cancellable(s, "effect\n", 7, "{}", 2, sup_test_broker, NULL, &c, &res, &err);
	ok(rc == 0 && res.finished, "effectful call with an unfired handle runs its finish phase (%s)", rc ? err.msg : "ok");
	sup_result_free(&res);

	/* a spin cancelled mid-run */
	struct bg b = { s, &c, 0, { 0, "" } };
	pthread_t t;
	if (pthread_create(&t, NULL, bg_spin, &b) != 0) bail("pthread_create");
	ok(wait_capsule(), "the spinning capsule is running");
	ok(sup_alive(s) == 1, "one capsule admitted while it spins (control: nothing has ended it)");
	sup_cancel_fire(&c);
	ok(sup_cancel_fired(&c), "the handle is fired");
	pthread_join(t, NULL);
	ok(b.rc < 0 && b.err.code == WX_CANCELLED, "the spin fails with WX_CANCELLED (got %d: %s)", b.err.code, b.err.msg);
	ok(strstr(b.err.msg, "cancelled during the pure run phase; capsule killed") != NULL, "message names the phase: %s",
	   b.err.msg);
	is_int(count_children(), 0, "no capsule process is left");
	is_int((int)sup_alive(s), 0, "its admission slot is released");

	/* a handle fired before the call: nothing starts */
	rc = sup_run_pure_cancellable(s, "echo\n", 5, "{}", 2, &c, &res, &err);
	ok(rc < 0 && err.code == WX_CANCELLED && strstr(err.msg, "before its capsule started"),
	   "a fired handle starts nothing (%s)", err.msg);
	sup_result_free(&res);
	sup_cancel_close(&c);
	sup_cancel_fire(&c); /* a closed handle is ignored */
	ok(!sup_cancel_fired(&c), "a closed handle is not fired");

	/* the cancel lands while the broker handles the plan: no finish phase */
	struct sup_cancel c2;
	if (sup_cancel_init(&c2, &err) < 0) bail("sup_cancel_init: %s", err.msg);
	struct fire_broker fb = { &c2, 0 };
	rc = sup_run_effectful_cancellable(s, "effect\n", 7, "{}", 2, broker_fires, &fb, &c2, &res, &err);
	ok(rc < 0 && err.code == WX_CANCELLED && strstr(err.msg, "while the broker handled the plan"),
	   "a cancel during the broker callback fails the call (%d: %s)", err.code, err.msg);
	ok(fb.calls == 1 && !res.finished && !res.output, "the broker ran once, no finish phase, no output");
	sup_result_free(&res);
	sup_cancel_close(&c2);

	is_int(count_children(), 0, "no process left at the end");
	sup_free(s);
	is_int(count_fds(), fds0, "no fd left (the handles closed, the supervisor freed)");
	return done_testing();
}
