/* bench/run_bench.c: a whole `worldd run` against bubblewrap and an
 * unconfined run of the same interpreter and source (issue 13 item 5),
 * printed side by side from one run, never a test.
 *
 * Rows, each a whole process (fork, exec, wait), interleaved so that machine
 * noise hits all alike:
 *   unconfined       ailang-lite run ... on docs/design.md §2's echo transition
 *   bwrap            the same under `bwrap --unshare-all` (tmpfs root, the
 *                    interpreter, source and args bound read-only)
 *   worldd run       the product: pin, capsule, supervisor, agent, frames
 *   worldd --help    the CLI's own start-up (exec, ld.so, libc, exit)
 *   static no-op     the floor of any exec
 * twice: back to back, and with 250 ms idle before each run (an occasional
 * caller: the kernel's v1 cgroup attach then waits for an RCU grace
 * period). Target: worldd run <= 1.5x bwrap in both.
 *
 * Then where the time of one `worldd run` goes, from the code it runs:
 * start-up (the --help row minus the static no-op), the pin and the shared
 * network namespace (each in a fresh process; the run makes both on their
 * own threads, overlapped with the capsule's set-up), every capsule phase (capsule.h's timing of a capsule running
 * the interpreter directly), and the supervisor call around it.
 *
 * usage: run_bench WORLDD AILANG_LITE NOOP [BWRAP] [N] [IDLE_N] */
#include "bench/bench.h"
#include "capsule/capsule.h"
#include "supervisor/supervisor.h"
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char SRC[] = "module echo\nexport func main(input: string) -> string { \"{\\\"echo\\\":${input}}\" }\n";
static const char ARGS[] = "{\"message\":\"hello, world\"}";
static const char WANT[] = "{\"echo\":{\"message\":\"hello, world\"}}";

enum { R_UNCONF, R_BWRAP, R_WORLDD, R_HELP, R_NOOP, NROWS };
static const char *const row_name[NROWS] = {
	"unconfined ailang-lite run", "bwrap --unshare-all, same run", "worldd run (capsule, supervisor)",
	"worldd --help (CLI start-up only)", "static no-op exec (floor)",
};

struct rows {
	char *const *argv[NROWS];
	char *const *envp[NROWS];
	const char *dir[NROWS];
	const char *want[NROWS];
	int on[NROWS];
};

static int measure(const struct rows *r, int n, int idle_ms, double *t[NROWS])
{
	for (int i = 0; i < n; i++)
		for (int k = 0; k < NROWS; k++) {
			int w = (i + k) % NROWS;
			if (!r->on[w]) continue;
			if (idle_ms) {
				struct timespec ts = { idle_ms / 1000, (long)(idle_ms % 1000) * 1000000L };
				nanosleep(&ts, NULL);
			}
			double v = bench_run_once(r->argv[w], r->envp[w], r->dir[w], r->want[w]);
			if (v < 0) {
				fprintf(stderr, "run_bench: %s: wrong outcome\n", row_name[w]);
				return -1;
			}
			t[w][i] = v;
		}
	return 0;
}

static void print_table(const char *title, const struct rows *r, double *t[NROWS], int n)
{
	printf("%s (%d runs per row, wall ms)\n", title, n);
	printf("  %-36s %8s %8s %8s\n", "", "p50", "p90", "p99");
	for (int w = 0; w < NROWS; w++) {
		if (!r->on[w]) continue;
		printf("  %-36s %8.3f %8.3f %8.3f\n", row_name[w], bench_pct(t[w], n, .5), bench_pct(t[w], n, .9), bench_pct(t[w], n, .99));
	}
	if (r->on[R_BWRAP]) {
		double q = bench_pct(t[R_WORLDD], n, .5) / bench_pct(t[R_BWRAP], n, .5);
		printf("  worldd run / bwrap (p50) = %.2fx (target <= 1.5x: %s)\n", q, q <= 1.5 ? "met" : "NOT met");
	}
}

/* ms of one call of fn in a fresh process (a child), -1 on failure. */
static double fresh_ms(int (*fn)(void *), void *arg)
{
	int pp[2];
	if (pipe(pp) < 0) return -1;
	pid_t c = fork();
	if (c == 0) {
		double a = bench_now_ms();
		int rc = fn(arg);
		double v = rc == 0 ? bench_now_ms() - a : -1;
		_exit(write(pp[1], &v, sizeof v) == sizeof v ? 0 : 1);
	}
	double v = -1;
	if (c < 0 || read(pp[0], &v, sizeof v) != sizeof v) v = -1;
	if (c > 0) waitpid(c, NULL, 0);
	close(pp[0]);
	close(pp[1]);
	return v;
}

static int do_pin(void *arg)
{
	struct world_err err;
	int mfd;
	char ref[80];
	return capsule_pin_interpreter(arg, NULL, &mfd, ref, &err);
}

static int do_netns(void *arg)
{
	(void)arg;
	struct world_err err;
	return capsule_netns_share(true, &err);
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: run_bench WORLDD AILANG_LITE NOOP [BWRAP] [N] [IDLE_N]\n");
		return 2;
	}
	/* absolute: the unconfined row runs in its own directory */
	char *worldd = realpath(argv[1], NULL), *bin = realpath(argv[2], NULL), *noop = realpath(argv[3], NULL);
	if (!worldd || !bin || !noop) {
		fprintf(stderr, "run_bench: %s\n", strerror(errno));
		return 2;
	}
	const char *bwrap = argc > 4 && argv[4][0] ? argv[4] : NULL;
	int n = argc > 5 ? atoi(argv[5]) : 60;
	int idle_n = argc > 6 ? atoi(argv[6]) : 20;
	if (n < 5) n = 5;
	if (idle_n < 3) idle_n = 3;

	char dir[256], p[400], src[400], cache[400], bhost[400], bargs[400];
	const char *tmp = getenv("TMPDIR");
	snprintf(dir, sizeof dir, "%s/world-run-bench.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) return 1;
	snprintf(p, sizeof p, "%s/host", dir); mkdir(p, 0755);
	snprintf(p, sizeof p, "%s/host/capsule", dir); mkdir(p, 0755);
	snprintf(cache, sizeof cache, "%s/.capsule-cache", dir); mkdir(cache, 0700);
	snprintf(src, sizeof src, "%s/host/capsule/main.ail", dir);
	bench_write_file(src, SRC);
	snprintf(bargs, sizeof bargs, "%s/args.json", dir);
	bench_write_file(bargs, "\"{\\\"message\\\":\\\"hello, world\\\"}\"");
	snprintf(bhost, sizeof bhost, "%s/host", dir);

	char e1[300], e3[450];
	snprintf(e1, sizeof e1, "AILANG_FS_SANDBOX=%s", dir);
	snprintf(e3, sizeof e3, "AILANG_CACHE_DIR=%s", cache);
	char *un_env[] = { e1, "AILANG_RELAX_MODULES=1", e3, NULL };
	char *un_argv[] = { bin, "run", "--quiet", "--caps", "", "--entry", "main", "--args-file", "args.json",
	                    "host/capsule/main.ail", NULL };
	char *bw_argv[] = { (char *)bwrap, "--unshare-all", "--die-with-parent", "--tmpfs", "/", "--ro-bind", (char *)bin,
	                    "/ailang", "--ro-bind", bhost, "/host", "--ro-bind", bargs, "/args.json", "--tmpfs",
	                    "/.capsule-cache", "--chdir", "/", "--clearenv", "--setenv", "AILANG_FS_SANDBOX", "/",
	                    "--setenv", "AILANG_RELAX_MODULES", "1", "--setenv", "AILANG_CACHE_DIR", "/.capsule-cache",
	                    "/ailang", "run", "--quiet", "--caps", "", "--entry", "main", "--args-file", "args.json",
	                    "host/capsule/main.ail", NULL };
	char *wd_argv[] = { (char *)worldd, "run", "--ailang-bin", (char *)bin, "--source", src, "--input", (char *)ARGS,
	                    NULL };
	char *help_argv[] = { (char *)worldd, "--help", NULL };
	char *noop_argv[] = { (char *)noop, NULL };
	struct rows r = {
		.argv = { un_argv, bw_argv, wd_argv, help_argv, noop_argv },
		.envp = { un_env, NULL, NULL, NULL, NULL },
		.dir = { dir, NULL, NULL, NULL, NULL },
		.want = { WANT, WANT, WANT, NULL, NULL },
		.on = { 1, bwrap != NULL, 1, 1, 1 },
	};
	double *t[NROWS], *ti[NROWS];
	for (int w = 0; w < NROWS; w++) {
		t[w] = calloc((size_t)n, sizeof(double));
		ti[w] = calloc((size_t)idle_n, sizeof(double));
	}
	printf("whole-process runs of docs/design.md §2's echo transition with %s, %ld cores\n", bin,
	       sysconf(_SC_NPROCESSORS_ONLN));
	printf("host: cgroup favordynmods %s\n", capsule_cgroup_favordynmods()
	           ? "on (a cgroup.procs write never waits for an RCU grace period)"
	           : "off (an attach after a quiet spell waits ~10 ms: see docs/security.md)");
	if (measure(&r, 1, 0, t) < 0) return 1; /* warm-up, and every outcome checked */
	if (measure(&r, n, 0, t) < 0) return 1;
	print_table("back to back", &r, t, n);
	if (measure(&r, idle_n, 250, ti) < 0) return 1;
	print_table("250 ms idle before each run", &r, ti, idle_n);

	/* ---- where one worldd run's time goes ---- */
	printf("where the time of one `worldd run` goes (median ms; in-process parts from the code it runs):\n");
	double help = bench_pct(t[R_HELP], n, .5), floor_ms = bench_pct(t[R_NOOP], n, .5);
	printf("  %-52s %8.3f\n", "exec + start-up + exit of worldd (--help - no-op)", help - floor_ms);
	enum { K = 15 };
	double pin[K], net[K], sup[K], capt[CAPSULE_T_COUNT][K], capwall[K];
	for (int i = 0; i < K; i++) {
		pin[i] = fresh_ms(do_pin, bin);
		net[i] = geteuid() == 0 ? fresh_ms(do_netns, NULL) : 0;
	}
	printf("  %-52s %8.3f\n", "pin: copy 1.2 MB into a sealed memfd, sha256 (*)", bench_pct(pin, K, .5));
	if (geteuid() == 0) printf("  %-52s %8.3f\n", "the shared empty network namespace, made (*)", bench_pct(net, K, .5));
	struct world_err err;
	int memfd;
	char ref[80];
	if (capsule_pin_interpreter(bin, NULL, &memfd, ref, &err) < 0) {
		fprintf(stderr, "pin: %s\n", err.msg);
		return 1;
	}
	/* A capsule running the interpreter directly (no agent): the layers. */
	const struct capsule_profile *prof = capsule_profile_find("transition");
	static const char *const av[] = { "ailang", "run", "--quiet", "--caps", "", "--entry", "main", "--args-file",
	                                  "args.json", "host/capsule/main.ail", NULL };
	static const char lit[] = "\"{\\\"message\\\":\\\"hello, world\\\"}\"";
	struct capsule_file files[] = { { "host/capsule/main.ail", SRC, sizeof SRC - 1 }, { "args.json", lit, sizeof lit - 1 },
	                                { ".capsule-cache/", NULL, 0 } };
	int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	for (int i = 0; i < K; i++) {
		struct capsule_spec cs = { .profile = prof, .interp_fd = memfd, .files = files, .nfiles = 3, .argv = av,
		                           .stdin_fd = devnull, .stdout_fd = devnull, .stderr_fd = devnull };
		struct capsule_handle h;
		struct capsule_report rep;
		double a = bench_now_ms();
		if (capsule_start(&cs, &h, &err) < 0) {
			fprintf(stderr, "capsule_start: %s\n", err.msg);
			return 1;
		}
		struct pollfd pf = { h.pidfd, POLLIN, 0 };
		poll(&pf, 1, -1);
		if (capsule_finish(&h, &rep, &err) < 0) return 1;
		capwall[i] = bench_now_ms() - a;
		for (int k = 0; k < CAPSULE_T_COUNT; k++) capt[k][i] = (double)h.timing.ns[k] / 1e6;
	}
	double setup = 0;
	for (int k = 0; k < CAPSULE_T_COUNT; k++) {
		double v = bench_pct(capt[k], K, .5);
		if (k != CAPSULE_T_REAP && k != CAPSULE_T_FINISH) setup += v;
		printf("  capsule: %-43s %8.3f\n", capsule_phase_names[k], v);
	}
	printf("  %-52s %8.3f\n", "capsule: interpreter exec, run (fresh cache), exit", bench_pct(capwall, K, .5) - setup -
	       bench_pct(capt[CAPSULE_T_FINISH], K, .5));
	printf("  %-52s %8.3f\n", "a bare capsule running it, whole (no agent)", bench_pct(capwall, K, .5));
	struct sup_limits lim;
	sup_limits_default(&lim);
	struct launcher *l = launcher_capsule_new(bin, NULL, &err);
	struct supervisor *s = l ? sup_new(&lim, l, &err) : NULL;
	if (!s) {
		fprintf(stderr, "supervisor: %s\n", err.msg);
		return 1;
	}
	for (int i = 0; i < K; i++) {
		struct sup_result res;
		double a = bench_now_ms();
		int rc = sup_run_pure(s, SRC, sizeof SRC - 1, ARGS, sizeof ARGS - 1, &res, &err);
		sup[i] = bench_now_ms() - a;
		if (rc < 0) {
			fprintf(stderr, "sup_run_pure: %s\n", err.msg);
			return 1;
		}
		sup_result_free(&res);
	}
	sup_free(s);
	printf("  %-52s %8.3f\n", "supervisor call (capsule + agent + frames), whole", bench_pct(sup, K, .5));
	double wr = bench_pct(t[R_WORLDD], n, .5);
	printf("  %-52s %8.3f\n", "worldd run whole (back to back, from above)", wr);
	printf("  %-52s %8.3f\n", "  rest: start-up, sweep, groups, waiting (*), exit", wr - (help - floor_ms) -
	       bench_pct(sup, K, .5));
	printf("  (*) in a fresh process; in `worldd run` both are made on their own threads while the\n"
	       "      groups are made and the capsule is set up (launcher_capsule_begin), so they cost CPU,\n"
	       "      not wall time, unless the two cores are busy\n");
	close(memfd);
	close(devnull);
	snprintf(p, sizeof p, "rm -rf '%s'", dir);
	if (system(p) != 0) fprintf(stderr, "cleanup of %s failed\n", dir);
	return 0;
}
