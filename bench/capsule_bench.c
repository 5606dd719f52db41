/* bench/capsule_bench.c: what confinement costs (printed, never a test).
 *
 * Runs the same static no-op several ways, interleaved so that machine
 * noise hits all alike: unconfined (fork + exec), `bwrap --unshare-all`
 * with an empty tmpfs root, a capsule of profile `transition` (the
 * interpreter pinned once, as the supervisor does) and, as root, the same
 * capsule joining the shared empty network namespace (capsule_netns_share),
 * both cloned from the template mount namespace (capsule_mount_template),
 * and the shared-netns capsule once more cloned from this process's own
 * mount table, as before the template. Prints p50/p90/p99 of
 * the wall time of each, the overhead of each over the unconfined run and
 * their ratio (goal: capsule overhead <= 1/4 of bubblewrap's), then the
 * median cost of each capsule layer from capsule.h's phase timing.
 *
 * usage: capsule_bench NOOP [BWRAP] [N] */
#include "bench/bench.h"
#include "capsule/capsule.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double run_argv(char *const argv[], int devnull)
{
	double t0 = bench_now_ms();
	pid_t pid = fork();
	if (pid == 0) {
		dup2(devnull, 0);
		dup2(devnull, 1);
		dup2(devnull, 2);
		execv(argv[0], argv);
		_exit(127);
	}
	int st;
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr, "capsule_bench: %s failed\n", argv[0]);
		exit(1);
	}
	return bench_now_ms() - t0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: capsule_bench NOOP [BWRAP] [N]\n");
		return 2;
	}
	const char *noop = argv[1];
	const char *bwrap = argc > 2 && argv[2][0] ? argv[2] : NULL;
	int n = argc > 3 ? atoi(argv[3]) : 200;
	if (n < 5) n = 5;
	int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	struct world_err err = { 0, "" };
	int memfd;
	char ref[80];
	double tp = bench_now_ms();
	if (capsule_pin_interpreter(noop, NULL, &memfd, ref, &err) < 0) {
		fprintf(stderr, "capsule_bench: %s\n", err.msg);
		return 1;
	}
	double pin_ms = bench_now_ms() - tp;
	const struct capsule_profile *p = capsule_profile_find("transition");
	struct capsule_file files[] = { { "host/capsule/main.ail", "noop", 4 }, { "args.json", "\"{}\"", 4 },
	                                { ".capsule-cache/", NULL, 0 } };
	struct capsule_spec spec = { .profile = p, .interp_fd = memfd, .files = files, .nfiles = 3,
	                             .stdin_fd = devnull, .stdout_fd = devnull, .stderr_fd = devnull };
	double *tu = calloc((size_t)n, sizeof(double)), *tb = calloc((size_t)n, sizeof(double)),
	       *tc = calloc((size_t)n, sizeof(double)), *ts = calloc((size_t)n, sizeof(double)),
	       *tn = calloc((size_t)n, sizeof(double));
	int root = geteuid() == 0;
	double *phase[CAPSULE_T_COUNT], *sphase[CAPSULE_T_COUNT];
	for (int k = 0; k < CAPSULE_T_COUNT; k++) {
		phase[k] = calloc((size_t)n, sizeof(double));
		sphase[k] = calloc((size_t)n, sizeof(double));
	}
	char *un_argv[] = { (char *)noop, NULL };
	char *bw_argv[] = { (char *)bwrap, "--unshare-all", "--die-with-parent", "--tmpfs", "/", "--ro-bind",
	                    (char *)noop, "/noop", "/noop", NULL };
	char summary[512] = "";
	/* warm-up: one of each */
	run_argv(un_argv, devnull);
	if (bwrap) run_argv(bw_argv, devnull);
	for (int i = 0; i < n + 1; i++) {
		for (int j = 0; j < 5; j++) {
			int which = (i + j) % 5; /* rotate the order */
			if (which == 0) {
				double t = run_argv(un_argv, devnull);
				if (i > 0) tu[i - 1] = t;
			} else if (which == 1) {
				if (!bwrap) continue;
				double t = run_argv(bw_argv, devnull);
				if (i > 0) tb[i - 1] = t;
			} else {
				int shared = which >= 3, tmpl = which != 4;
				if (shared && !root) continue;
				/* outside the timed window: make or drop the shared namespace
				 * and the template */
				if (capsule_netns_share(shared, &err) < 0 ||
				    (root && capsule_mount_template(tmpl, &err) < 0)) {
					fprintf(stderr, "capsule_bench: %s\n", err.msg);
					return 1;
				}
				struct capsule_handle h;
				struct capsule_report r;
				double t0 = bench_now_ms();
				if (capsule_start(&spec, &h, &err) < 0 || capsule_finish(&h, &r, &err) < 0) {
					fprintf(stderr, "capsule_bench: %s\n", err.msg);
					return 1;
				}
				double t = bench_now_ms() - t0;
				if (!r.exited || r.exit_status != 0) {
					fprintf(stderr, "capsule_bench: capsule run failed (status %d signal %d %s)\n",
					        r.exit_status, r.term_signal, r.setup_error);
					return 1;
				}
				if (i > 0 && which == 4) tn[i - 1] = t;
				if (i > 0 && which == 3) {
					ts[i - 1] = t;
					for (int k = 0; k < CAPSULE_T_COUNT; k++) sphase[k][i - 1] = (double)h.timing.ns[k] / 1e6;
				}
				if (i > 0 && !shared) {
					tc[i - 1] = t;
					for (int k = 0; k < CAPSULE_T_COUNT; k++) phase[k][i - 1] = (double)h.timing.ns[k] / 1e6;
				}
				if (i == 0 && !shared) capsule_describe(&h, summary, sizeof summary);
			}
		}
	}
	double u50 = bench_pct(tu, n, .5), u90 = bench_pct(tu, n, .9), u99 = bench_pct(tu, n, .99);
	double c50 = bench_pct(tc, n, .5), c90 = bench_pct(tc, n, .9), c99 = bench_pct(tc, n, .99);
	printf("capsule benchmark: static no-op, %d interleaved runs each (wall ms)\n", n);
	printf("  capsule layers: %s\n", summary);
	printf("  %-34s %8s %8s %8s\n", "", "p50", "p90", "p99");
	printf("  %-34s %8.3f %8.3f %8.3f\n", "unconfined (fork+exec)", u50, u90, u99);
	double b50 = 0;
	if (bwrap) {
		b50 = bench_pct(tb, n, .5);
		double b90 = bench_pct(tb, n, .9), b99 = bench_pct(tb, n, .99);
		printf("  %-34s %8.3f %8.3f %8.3f\n", "bwrap --unshare-all, tmpfs root", b50, b90, b99);
	}
	printf("  %-34s %8.3f %8.3f %8.3f\n", "capsule (transition profile)", c50, c90, c99);
	double s50 = 0;
	if (root) {
		s50 = bench_pct(ts, n, .5);
		double s90 = bench_pct(ts, n, .9), s99 = bench_pct(ts, n, .99);
		printf("  %-34s %8.3f %8.3f %8.3f\n", "capsule, shared empty netns", s50, s90, s99);
		printf("  %-34s %8.3f %8.3f %8.3f\n", "  the same, caller's mount table", bench_pct(tn, n, .5),
		       bench_pct(tn, n, .9), bench_pct(tn, n, .99));
	}
	printf("  ratios (p50): capsule/unconfined %.2fx", c50 / u50);
	if (bwrap) printf(", bwrap/unconfined %.2fx, capsule/bwrap %.2fx", b50 / u50, c50 / b50);
	printf("\n  overhead over unconfined (p50): capsule %.3f ms", c50 - u50);
	if (bwrap) {
		printf(", bwrap %.3f ms; capsule overhead / bwrap overhead = %.2f (goal <= 0.25: %s)",
		       b50 - u50, (c50 - u50) / (b50 - u50), (c50 - u50) <= 0.25 * (b50 - u50) ? "met" : "NOT met");
	}
	if (root && bwrap)
		printf("\n  with the shared network namespace: overhead %.3f ms; / bwrap overhead = %.2f (goal <= 0.25: %s)",
		       s50 - u50, (s50 - u50) / (b50 - u50), (s50 - u50) <= 0.25 * (b50 - u50) ? "met" : "NOT met");
	if (root && bwrap)
		printf("\n  the same without the template mount namespace: overhead %.3f ms; / bwrap overhead = %.2f",
		       bench_pct(tn, n, .5) - u50, (bench_pct(tn, n, .5) - u50) / (b50 - u50));
	printf("\n  pin (sha256 into a sealed memfd, once per interpreter): %.3f ms\n", pin_ms);
	printf("  capsule layers, ms per run (p99: where the stalls are):\n");
	printf("    %-38s %16s %16s\n", "", "own netns", root ? "shared netns" : "");
	printf("    %-38s %8s %8s %8s %8s\n", "", "p50", "p99", root ? "p50" : "", root ? "p99" : "");
	for (int k = 0; k < CAPSULE_T_COUNT; k++) {
		printf("    %-38s %8.3f %8.3f", capsule_phase_names[k], bench_pct(phase[k], n, .5), bench_pct(phase[k], n, .99));
		if (root) printf(" %8.3f %8.3f", bench_pct(sphase[k], n, .5), bench_pct(sphase[k], n, .99));
		printf("\n");
	}
	/* An occasional caller: 250 ms idle before each capsule, without and
	 * with capsule_cgroup_keepwarm (what a long-lived daemon can do). */
	enum { SPARSE = 12 };
	double sw[2][SPARSE], sa[2][SPARSE];
	int kept = 0;
	for (int i = 0; i < SPARSE; i++)
		for (int k = 0; k < 2; k++) {
			if (k == 1) kept = capsule_cgroup_keepwarm(true);
			struct timespec idle = { 0, 250 * 1000 * 1000 };
			nanosleep(&idle, NULL);
			struct capsule_handle h;
			struct capsule_report r;
			double t0 = bench_now_ms();
			if (capsule_start(&spec, &h, &err) < 0 || capsule_finish(&h, &r, &err) < 0) {
				fprintf(stderr, "capsule_bench: %s\n", err.msg);
				return 1;
			}
			sw[k][i] = bench_now_ms() - t0;
			sa[k][i] = (double)h.timing.ns[CAPSULE_T_CGATTACH] / 1e6;
			if (k == 1) capsule_cgroup_keepwarm(false);
		}
	printf("  250 ms idle before each capsule (%d runs): whole p50 %.3f ms, cgroup attach p50 %.3f p90 %.3f ms\n",
	       SPARSE, bench_pct(sw[0], SPARSE, .5), bench_pct(sa[0], SPARSE, .5), bench_pct(sa[0], SPARSE, .9));
	if (kept)
		printf("  the same with capsule_cgroup_keepwarm:      whole p50 %.3f ms, cgroup attach p50 %.3f p90 %.3f ms\n",
		       bench_pct(sw[1], SPARSE, .5), bench_pct(sa[1], SPARSE, .5), bench_pct(sa[1], SPARSE, .9));
	else
		printf("  capsule_cgroup_keepwarm: not needed or not possible here (v2, favordynmods, or no right)\n");
	capsule_netns_share(false, &err);
	close(memfd);
	return 0;
}
