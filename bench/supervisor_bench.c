/* bench/supervisor_bench.c: runs/s of DESIGN §2's echo transition through
 * the supervisor in capsules with 1, 2 and 8 in flight, and the added cost
 * per run against an unconfined fork+exec of the same interpreter, measured
 * side by side in one process. Also the supervisor over its unconfined test
 * double (protocol + agent cost without the sandbox). Figures only.
 * usage: supervisor_bench AILANG_LITE [RUNS] */
#include "supervisor/supervisor.h"
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

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* ---- baseline: unconfined fork+exec of the interpreter ------------------ */
static int fork_exec_once(const char *bin, const char *dir)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0) return -1;
	pid_t pid = fork();
	if (pid < 0) return -1;
	if (pid == 0) {
		if (chdir(dir) < 0 || dup2(p[1], 1) < 0) _exit(126);
		char e1[300], e3[320];
		snprintf(e1, sizeof e1, "AILANG_FS_SANDBOX=%s", dir);
		snprintf(e3, sizeof e3, "AILANG_CACHE_DIR=%s/.capsule-cache", dir);
		char *envp[] = { e1, "AILANG_RELAX_MODULES=1", e3, NULL };
		char *argv[] = { (char *)bin, "run", "--quiet", "--caps", "", "--entry", "main", "--args-file", "args.json",
		                 "host/capsule/main.ail", NULL };
		execve(bin, argv, envp);
		_exit(127);
	}
	close(p[1]);
	char buf[4096];
	size_t len = 0;
	ssize_t n;
	while ((n = read(p[0], buf + len, sizeof buf - 1 - len)) > 0) len += (size_t)n;
	close(p[0]);
	int st;
	waitpid(pid, &st, 0);
	buf[len] = '\0';
	if (len && buf[len - 1] == '\n') buf[--len] = '\0';
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 && strcmp(buf, WANT) == 0 ? 0 : -1;
}

static int write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	if (!f) return -1;
	fputs(text, f);
	return fclose(f);
}

/* ---- supervisor runs from N threads ------------------------------------ */
struct load {
	struct supervisor *s;
	int total;
	atomic_int next, good, failed;
	pthread_barrier_t start, end;
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
	pthread_barrier_wait(&l->end);
	return NULL;
}

static double run_sup(struct launcher *lch, int inflight, int total, int *failed)
{
	struct world_err err;
	struct sup_limits lim;
	sup_limits_default(&lim);
	lim.capacity = inflight;
	struct supervisor *s = sup_new(&lim, lch, &err);
	if (!s) {
		fprintf(stderr, "sup_new: %s\n", err.msg);
		exit(1);
	}
	struct load l;
	memset(&l, 0, sizeof l);
	l.s = s;
	l.total = total;
	pthread_barrier_init(&l.start, NULL, (unsigned)inflight + 1);
	pthread_barrier_init(&l.end, NULL, (unsigned)inflight);
	pthread_t th[16];
	for (int i = 0; i < inflight; i++) pthread_create(&th[i], NULL, worker, &l);
	double t0 = now();
	pthread_barrier_wait(&l.start);
	for (int i = 0; i < inflight; i++) pthread_join(th[i], NULL);
	double dt = now() - t0;
	*failed = l.failed;
	if (l.failed) fprintf(stderr, "  %d failed: %s\n", l.failed, l.err);
	sup_free(s);
	return total / dt;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: supervisor_bench AILANG_LITE [RUNS]\n");
		return 2;
	}
	const char *bin = argv[1];
	int runs = argc > 2 ? atoi(argv[2]) : 500;
	char dir[256];
	const char *tmp = getenv("TMPDIR");
	snprintf(dir, sizeof dir, "%s/world-sup-bench.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) return 1;
	char p[400];
	snprintf(p, sizeof p, "%s/host", dir); mkdir(p, 0700);
	snprintf(p, sizeof p, "%s/host/capsule", dir); mkdir(p, 0700);
	snprintf(p, sizeof p, "%s/.capsule-cache", dir); mkdir(p, 0700);
	snprintf(p, sizeof p, "%s/host/capsule/main.ail", dir); write_file(p, SRC);
	snprintf(p, sizeof p, "%s/args.json", dir); write_file(p, "\"{\\\"message\\\":\\\"hello, world\\\"}\"");

	printf("echo transition (DESIGN §2) with %s, %d runs per row, %ld cores\n", bin, runs, sysconf(_SC_NPROCESSORS_ONLN));
	int bad = 0;
	double t0 = now();
	for (int i = 0; i < runs; i++) bad += fork_exec_once(bin, dir) < 0;
	double base = runs / (now() - t0);
	snprintf(p, sizeof p, "rm -rf '%s'", dir);
	if (system(p) != 0) fprintf(stderr, "cleanup of %s failed\n", dir);
	if (bad) fprintf(stderr, "  baseline: %d wrong outputs\n", bad);

	printf("%-50s %9s %9s %12s\n", "path", "runs/s", "ms/run", "added ms/run");
	printf("%-50s %9.0f %9.2f %12s\n", "unconfined fork+exec of ailang-lite, 1 at a time", base, 1000.0 / base, "-");
	struct { const char *name; int unconfined; int inflight; } rows[] = {
		{ "supervisor + capsule, 1 in flight", 0, 1 },
		{ "supervisor + capsule, 2 in flight", 0, 2 },
		{ "supervisor + capsule, 8 in flight", 0, 8 },
		{ "supervisor + unconfined test double, 1", 1, 1 },
	};
	double one = 0;
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		struct world_err err;
		struct launcher *l = rows[i].unconfined ? launcher_unconfined_new(bin, &err) : launcher_capsule_new(bin, NULL, &err);
		if (!l) {
			fprintf(stderr, "launcher: %s\n", err.msg);
			return 1;
		}
		int failed;
		double r = run_sup(l, rows[i].inflight, runs, &failed);
		if (i == 0) one = r;
		/* Added cost: wall time per run against the baseline (for N in
		 * flight, the throughput-equivalent time per run). */
		printf("%-50s %9.0f %9.2f %12.2f%s\n", rows[i].name, r, 1000.0 / r, 1000.0 / r - 1000.0 / base,
		       failed ? "  (failures, see above)" : "");
	}
	printf("capsule vs fork+exec, 1 in flight: %.1fx the time per run\n", base / one);
	return 0;
}
