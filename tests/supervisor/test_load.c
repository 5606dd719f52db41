/* tests/supervisor/test_load.c: 1,000 sequential and 1,000 concurrent runs
 * (8 in flight) of the echo transition; afterwards no zombie, no stray
 * process, no fd leaked and no scratch directory behind. WORLD_SUP_RUNS
 * overrides the count (for quick local runs); CI uses 1,000. The
 * transition is docs/design.md §2's echo under ailang-lite. */
#include "tests/supervisor/suptest.h"
#include "tests/tap.h"
#include <pthread.h>
#include <stdatomic.h>

#define INFLIGHT 8

static struct supervisor *sup;
static const char *src;
static size_t srclen;
static const char *args = "{\"message\":\"hello\"}";
static const char *want;
static atomic_int next_run, good, capacity_refusals, other_failures;
static int total;
static char first_error[1024];
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

static int one(void)
{
	struct sup_result res;
	struct world_err err;
	int rc = sup_run_pure(sup, src, srclen, args, strlen(args), &res, &err);
	int good_run = rc == 0 && res.output && strcmp(res.output, want) == 0;
	if (!good_run) {
		pthread_mutex_lock(&mu);
		if (!first_error[0]) snprintf(first_error, sizeof first_error, "%s", rc ? err.msg : res.output);
		pthread_mutex_unlock(&mu);
		if (rc && err.code == WX_CAPACITY) capacity_refusals++;
		else other_failures++;
	}
	sup_result_free(&res);
	return good_run;
}

/* Workers start and end at their own pace: capsules are cloned while
 * other threads are being created or are exiting (the capsule's setup uses
 * raw set*id syscalls, so glibc's setxid broadcast cannot hang it). */
static void *worker(void *p)
{
	(void)p;
	while (atomic_fetch_add(&next_run, 1) < total)
		if (one()) good++;
	return NULL;
}

int main(void)
{
	const char *tmp = private_tmpdir();
	if (!tmp) bail("mkdtemp");
	const char *n = getenv("WORLD_SUP_RUNS");
	total = n ? atoi(n) : 1000;
	/* The echo transition of docs/design.md §2 under ailang-lite (the test
	 * environment's $AILANG_LITE); the stub interpreter if there is none. */
	const char *interp = getenv("AILANG_LITE");
	if (interp && access(interp, X_OK) == 0) {
		src = "module echo\nexport func main(input: string) -> string { \"{\\\"echo\\\":${input}}\" }\n";
		want = "{\"echo\":{\"message\":\"hello\"}}";
	} else {
		interp = stub_path();
		src = "echo\n";
		want = "{\"input\":\"{\\\"message\\\":\\\"hello\\\"}\"}";
	}
	srclen = strlen(src);
	diag("launcher: %s; interpreter: %s; %d runs each", suptest_launcher_name(), interp, total);

	struct world_err err;
	int fds_base = count_fds();
	struct launcher *l = suptest_launcher(interp, &err);
	if (!l) bail("launcher: %s", err.msg);
	struct sup_limits lim;
	sup_limits_default(&lim);
	lim.capacity = INFLIGHT;
	sup = sup_new(&lim, l, &err);
	if (!sup) bail("sup_new: %s", err.msg);

	int fds0 = count_fds();
	for (int i = 0; i < total; i++)
		if (one()) good++;
	is_int(good, total, "%d sequential runs all return the echo output (first error: %s)", total,
	       first_error[0] ? first_error : "none");
	is_int(count_children(), 0, "after the sequential runs: no child process or zombie");
	is_int(count_fds(), fds0, "after the sequential runs: no fd leaked");
	is_int(count_dir(tmp), 0, "after the sequential runs: no scratch directory");

	good = 0;
	first_error[0] = '\0';
	pthread_t th[INFLIGHT];
	for (int i = 0; i < INFLIGHT; i++) pthread_create(&th[i], NULL, worker, NULL);
	for (int i = 0; i < INFLIGHT; i++) pthread_join(th[i], NULL);
	is_int(good, total, "%d concurrent runs (%d in flight) all return the echo output (first error: %s)", total,
	       INFLIGHT, first_error[0] ? first_error : "none");
	is_int(capacity_refusals, 0, "8 in flight never exceed the capacity of 8");
	is_int(other_failures, 0, "no other failure");
	is_int(sup_alive(sup), 0, "no capsule counted alive");
	sup_free(sup);
	is_int(count_children(), 0, "after the concurrent runs: no child process or zombie");
	is_int(count_fds(), fds_base, "after the concurrent runs and sup_free: no fd leaked");
	is_int(count_dir(tmp), 0, "after the concurrent runs: no scratch directory");
	is_int(count_running(interp), 0, "no interpreter process left anywhere");
	rmdir(tmp);
	return done_testing();
}
