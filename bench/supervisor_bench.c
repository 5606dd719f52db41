/* bench/supervisor_bench.c: runs/s of docs/design.md §2's echo transition through
 * the supervisor in capsules with 1, 2, 8 and 16 in flight, and the added cost
 * per run against an unconfined fork+exec of the same interpreter, measured
 * side by side in one process. Also the supervisor over its unconfined test
 * double (protocol + agent cost without the sandbox). Figures only.
 * usage: supervisor_bench AILANG_LITE [RUNS] */
#include "bench/bench.h"
#include "supervisor/supervisor.h"
#include "capsule/capsule.h"
#include "supervisor/spawner.h"
#include <poll.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
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

/* ---- baseline: unconfined fork+exec of the interpreter ------------------ */
/* One unconfined run of the echo transition in dir: 0, or -1 on a wrong output. */
static int fork_exec_once(const char *bin, const char *dir)
{
	char e1[300], e3[320];
	snprintf(e1, sizeof e1, "AILANG_FS_SANDBOX=%s", dir);
	snprintf(e3, sizeof e3, "AILANG_CACHE_DIR=%s/.capsule-cache", dir);
	char *envp[] = { e1, "AILANG_RELAX_MODULES=1", e3, NULL };
	char *argv[] = { (char *)bin, "run", "--quiet", "--caps", "", "--entry", "main", "--args-file", "args.json",
	                 "host/capsule/main.ail", NULL };
	return bench_run_once(argv, envp, dir, WANT) < 0 ? -1 : 0;
}

/* ---- supervisor runs from N threads ------------------------------------ */
struct load {
	struct supervisor *s;
	int total;
	atomic_int next, good, failed;
	pthread_barrier_t start; /* all threads begin when the clock starts */
	char err[1024];
};

static void *worker(void *p)
{
	struct load *l = p;
	pthread_barrier_wait(&l->start);
	while (atomic_fetch_add(&l->next, 1) < l->total) {
		struct sup_result res;
		struct world_err err;
		int rc = sup_run_pure(l->s, SRC, strlen(SRC), ARGS, strlen(ARGS), &res, &err);
		if (rc == 0 && res.output && strcmp(res.output, WANT) == 0) l->good++;
		else {
			l->failed++;
			snprintf(l->err, sizeof l->err, "%s", rc ? err.msg : "wrong output");
		}
		sup_result_free(&res);
	}
	return NULL;
}

/* Run `total` calls from `inflight` threads; returns the elapsed seconds. */
static double run_sup(struct supervisor *s, int inflight, int total, int *failed)
{
	struct load l;
	memset(&l, 0, sizeof l);
	l.s = s;
	l.total = total;
	pthread_barrier_init(&l.start, NULL, (unsigned)inflight + 1);
	pthread_t th[16];
	for (int i = 0; i < inflight; i++) pthread_create(&th[i], NULL, worker, &l);
	double t0 = bench_now_s();
	pthread_barrier_wait(&l.start);
	for (int i = 0; i < inflight; i++) pthread_join(th[i], NULL);
	double dt = bench_now_s() - t0;
	*failed += l.failed;
	if (l.failed) fprintf(stderr, "  %d failed: %s\n", l.failed, l.err);
	pthread_barrier_destroy(&l.start);
	return dt;
}

/* A bare capsule (no agent, no protocol) running `BIN --version`: setup,
 * exec+exit and reap times are added to t[0..2]. */
static void bare_capsules(int memfd, int n, double t[3])
{
	struct world_err err;
	const struct capsule_profile *prof = capsule_profile_find("transition");
	static const char *const argv_v[] = { "ailang", "--version", NULL };
	struct capsule_file files[1] = { { "host/capsule/main.ail", SRC, sizeof SRC - 1 } };
	for (int i = 0; i < n; i++) {
		struct capsule_spec cs = { .profile = prof, .interp_fd = memfd, .files = files, .nfiles = 1,
		                           .argv = argv_v, .stdin_fd = -1, .stdout_fd = -1, .stderr_fd = -1 };
		struct capsule_handle h;
		struct capsule_report rep;
		double a = bench_now_s();
		if (capsule_start(&cs, &h, &err) < 0) {
			fprintf(stderr, "capsule_start: %s\n", err.msg);
			exit(1);
		}
		double b = bench_now_s();
		struct pollfd pf = { h.pidfd, POLLIN, 0 };
		poll(&pf, 1, -1);
		double c = bench_now_s();
		capsule_finish(&h, &rep, &err);
		t[0] += b - a;
		t[1] += c - b;
		t[2] += bench_now_s() - c;
	}
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: supervisor_bench AILANG_LITE [RUNS]\n");
		return 2;
	}
	/* absolute: the baseline row runs in its own directory */
	char *bin = realpath(argv[1], NULL);
	if (!bin) {
		fprintf(stderr, "supervisor_bench: %s: %s\n", argv[1], strerror(errno));
		return 2;
	}
	int runs = argc > 2 ? atoi(argv[2]) : 500;
	/* Like the daemon: the capsule spawner first, while this process is
	 * small and has one thread (supervisor/spawner.h). */
	struct world_err serr;
	struct sup_spawner_info spi;
	if (sup_spawner_start(NULL, &spi, &serr) < 0) {
		fprintf(stderr, "%s\n", serr.msg);
		return 1;
	}
	char dir[256];
	const char *tmp = getenv("TMPDIR");
	snprintf(dir, sizeof dir, "%s/world-sup-bench.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) return 1;
	char p[400];
	snprintf(p, sizeof p, "%s/host", dir); mkdir(p, 0700);
	snprintf(p, sizeof p, "%s/host/capsule", dir); mkdir(p, 0700);
	snprintf(p, sizeof p, "%s/.capsule-cache", dir); mkdir(p, 0700);
	snprintf(p, sizeof p, "%s/host/capsule/main.ail", dir); bench_write_file(p, SRC);
	snprintf(p, sizeof p, "%s/args.json", dir); bench_write_file(p, "\"{\\\"message\\\":\\\"hello, world\\\"}\"");

	/* Rows are measured in interleaved rounds so that a change in the
	 * machine's load during the run hits every row alike. */
	enum { ROUNDS = 10 };
	int per = runs / ROUNDS > 0 ? runs / ROUNDS : 1;
	runs = per * ROUNDS;
	printf("echo transition (docs/design.md §2) with %s, %d runs per row in %d interleaved rounds, %ld cores;\n"
	       "capsules made by the capsule spawner (pid %d) unless the row says otherwise\n", bin, runs,
	       ROUNDS, sysconf(_SC_NPROCESSORS_ONLN), (int)spi.pid);
	/* own_netns: as root the spawner's capsules share one empty network
	 * namespace; these rows switch that off around their runs, to show
	 * what it saves. here: the capsules are clones of this process (the
	 * launcher_capsule_new_here rows), as before the spawner. */
	int root = geteuid() == 0;
	struct { const char *name; int unconfined; int here; int inflight; int own_netns; struct supervisor *s; double t; int failed; } rows[] = {
		{ "supervisor + capsule, 1 in flight", 0, 0, 1, 0, NULL, 0, 0 },
		{ "supervisor + capsule, 2 in flight", 0, 0, 2, 0, NULL, 0, 0 },
		{ "supervisor + capsule, 8 in flight", 0, 0, 8, 0, NULL, 0, 0 },
		{ "supervisor + capsule, 16 in flight", 0, 0, 16, 0, NULL, 0, 0 },
		{ "  same, 1 in flight, a netns per capsule", 0, 0, 1, 1, NULL, 0, 0 },
		{ "  same, 8 in flight, a netns per capsule", 0, 0, 8, 1, NULL, 0, 0 },
		{ "  capsules cloned from this process, 2 in flight", 0, 1, 2, 0, NULL, 0, 0 },
		{ "  capsules cloned from this process, 16 in flight", 0, 1, 16, 0, NULL, 0, 0 },
		{ "supervisor + unconfined test double, 1 in flight", 1, 0, 1, 0, NULL, 0, 0 },
		{ "supervisor + unconfined test double, 2 in flight", 1, 0, 2, 0, NULL, 0, 0 },
		{ "supervisor + unconfined test double, 16 in flight", 1, 0, 16, 0, NULL, 0, 0 },
	};
	size_t nrows = sizeof rows / sizeof rows[0];
	for (size_t i = 0; i < nrows; i++) {
		struct world_err err;
		struct launcher *l = rows[i].unconfined ? launcher_unconfined_new(bin, &err)
		                     : rows[i].here     ? launcher_capsule_new_here(bin, NULL, &err)
		                                        : launcher_capsule_new(bin, NULL, &err);
		struct sup_limits lim;
		sup_limits_default(&lim);
		lim.capacity = (unsigned)rows[i].inflight;
		if (l) rows[i].s = sup_new(&lim, l, &err);
		if (!rows[i].s) {
			fprintf(stderr, "supervisor: %s\n", err.msg);
			return 1;
		}
	}
	struct world_err err;
	int memfd;
	char ref[80];
	if (capsule_pin_interpreter(bin, NULL, &memfd, ref, &err) < 0) {
		fprintf(stderr, "pin: %s\n", err.msg);
		return 1;
	}
	double base_t = 0, bare[3] = { 0, 0, 0 };
	int bad = 0;
	for (int round = 0; round < ROUNDS; round++) {
		double t0 = bench_now_s();
		for (int i = 0; i < per; i++) bad += fork_exec_once(bin, dir) < 0;
		base_t += bench_now_s() - t0;
		for (size_t i = 0; i < nrows; i++) {
			if (rows[i].own_netns && !root) continue;
			if (rows[i].own_netns) sup_spawner_netns_share(false, NULL);
			rows[i].t += run_sup(rows[i].s, rows[i].inflight, per, &rows[i].failed);
			if (rows[i].own_netns && sup_spawner_netns_share(true, &err) < 0) {
				fprintf(stderr, "%s\n", err.msg);
				return 1;
			}
		}
		bare_capsules(memfd, per, bare);
	}
	close(memfd);
	snprintf(p, sizeof p, "rm -rf '%s'", dir);
	if (system(p) != 0) fprintf(stderr, "cleanup of %s failed\n", dir);
	if (bad) fprintf(stderr, "  baseline: %d wrong outputs\n", bad);

	double base = runs / base_t;
	printf("%-50s %9s %9s %12s\n", "path", "runs/s", "ms/run", "added ms/run");
	printf("%-50s %9.0f %9.2f %12s\n", "unconfined fork+exec of ailang-lite, 1 at a time", base, 1000.0 / base, "-");
	for (size_t i = 0; i < nrows; i++) {
		if (rows[i].own_netns && !root) {
			sup_free(rows[i].s);
			continue;
		}
		double r = runs / rows[i].t;
		/* Added cost: time per run against the baseline (for N in flight,
		 * the throughput-equivalent time per run). */
		printf("%-50s %9.0f %9.2f %12.2f%s\n", rows[i].name, r, 1000.0 / r, 1000.0 / r - 1000.0 / base,
		       rows[i].failed ? "  (failures, see above)" : "");
		sup_free(rows[i].s);
	}
	printf("capsule vs fork+exec, 1 in flight: %.1fx the time per run\n", rows[0].t / base_t);
	/* rows 1 and 3: 2 and 16 in flight (same number of runs each); 6
	 * and 7 the same with capsules cloned from this process */
	printf("16 in flight vs 2 in flight: %.2fx the rate (target >= 1, no collapse: %s)\n", rows[1].t / rows[3].t,
	       rows[3].t <= rows[1].t ? "met" : "NOT met");
	printf("  with capsules cloned from this process instead: %.2fx; 16 in flight, spawner vs cloned here: %.2fx the rate\n",
	       rows[6].t / rows[7].t, rows[7].t / rows[3].t);
	printf("a bare capsule (no agent, no protocol; BIN --version): setup %.2f ms, exec+exit %.2f ms, reap %.2f ms;\n"
	       "  the setup is the most a pool of pre-confined capsules could take off one call's latency\n",
	       bare[0] * 1000 / runs, bare[1] * 1000 / runs, bare[2] * 1000 / runs);
	return 0;
}
