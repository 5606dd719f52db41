/* bench/exec_bench.c: what one exec call of `true` costs (issue 40 item 7),
 * beside bubblewrap with comparable binds and a plain fork+exec, in one run,
 * the arms interleaved (one call of each in turn), N calls each; p50 and p99.
 *
 *   fork+exec        /bin/true, unconfined (the floor)
 *   bwrap            bwrap --unshare-all --die-with-parent, /usr /etc read-only,
 *                    the merged-/usr symlinks, --dev /dev, --proc /proc, --tmpfs /tmp,
 *                    the worktree at /work and a cache at /cache read-write
 *   sup_run_exec     the exec capsule (supervisor/exec.h), in this process as a
 *                    long-lived supervisor runs it (cgroup pool; the v1 attach kept
 *                    warm as worldd serve does: capsule_cgroup_keepwarm)
 *
 * Goal: sup_run_exec p50 <= 1.5x bwrap's. Arms are a table (`arms[]`): an
 * end-to-end arm (an MCP call through worldd serve) is one more entry with
 * its own setup and one-call function.
 *
 * usage: exec_bench [N]   (N defaults to 50; bench/exec_bench.sh passes EXEC_BENCH_N) */
#include "bench/bench.h"
#include "capsule/capsule.h"
#include "supervisor/exec.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char wt[256], cache[256], bwrap[256];
static int true_fd = -1;

static double arm_fork(void)
{
	char *argv[] = { "/bin/true", NULL };
	return bench_run_once(argv, NULL, wt, NULL);
}

static double arm_bwrap(void)
{
	char *argv[] = { bwrap, "--unshare-all", "--die-with-parent", "--ro-bind", "/usr", "/usr",
		"--symlink", "usr/bin", "/bin", "--symlink", "usr/sbin", "/sbin", "--symlink", "usr/lib", "/lib",
		"--symlink", "usr/lib64", "/lib64", "--ro-bind", "/etc", "/etc", "--dev", "/dev", "--proc", "/proc",
		"--tmpfs", "/tmp", "--bind", wt, "/work", "--bind", cache, "/cache", "--chdir", "/work",
		"--clearenv", "--setenv", "PATH", "/usr/bin:/bin", "/bin/true", NULL };
	return bench_run_once(argv, NULL, NULL, NULL);
}

static double arm_exec(void)
{
	static const char *const argv[] = { "/usr/bin/true", NULL };
	static const char *const envp[] = { "PATH=/usr/bin:/bin", "HOME=/cache", "TMPDIR=/cache", "LANG=C.UTF-8", NULL };
	static const char *const prot[] = { ".git", ".github", ".gitmodules", ".gitattributes", NULL };
	struct sup_exec_req q = { .argv = argv, .argv0_fd = true_fd, .envp = envp, .worktree = wt,
	                          .protected_names = prot, .cache_dir = cache, .wall_ms = 10000 };
	struct sup_exec_result r;
	struct world_err err;
	double t0 = bench_now_ms();
	if (sup_run_exec(&q, &r, &err) < 0) {
		fprintf(stderr, "exec_bench: %s\n", err.msg);
		return -1;
	}
	double t = bench_now_ms() - t0;
	int ok = r.exit_code == 0 && !r.limit[0];
	sup_exec_result_free(&r);
	return ok ? t : -1;
}

struct arm {
	const char *name;
	double (*one)(void);
	int on;
	double *ms;
};

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 50;
	if (n < 1) n = 1;
	const char *bw = getenv("BWRAP");
	snprintf(bwrap, sizeof bwrap, "%s", bw && *bw ? bw : "/usr/bin/bwrap");
	char tmpl[] = "/tmp/world-exec-bench.XXXXXX";
	if (!mkdtemp(tmpl)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(wt, sizeof wt, "%s/work", tmpl);
	snprintf(cache, sizeof cache, "%s/cache", tmpl);
	char git[300];
	snprintf(git, sizeof git, "%s/.git", wt);
	if (mkdir(wt, 0755) < 0 || mkdir(cache, 0755) < 0 || mkdir(git, 0755) < 0) {
		perror("mkdir");
		return 1;
	}
	true_fd = open("/usr/bin/true", O_RDONLY | O_CLOEXEC);
	if (true_fd < 0) {
		perror("/usr/bin/true");
		return 1;
	}
	int warm = capsule_cgroup_keepwarm(true);
	struct arm arms[] = {
		{ "fork+exec /bin/true (unconfined)", arm_fork, 1, NULL },
		{ "bwrap --unshare-all, comparable binds", arm_bwrap, access(bwrap, X_OK) == 0, NULL },
		{ "sup_run_exec /usr/bin/true (exec capsule)", arm_exec, 1, NULL },
	};
	size_t na = sizeof arms / sizeof arms[0];
	for (size_t a = 0; a < na; a++) arms[a].ms = calloc((size_t)n, sizeof(double));
	/* one warm-up call of each, not counted */
	for (size_t a = 0; a < na; a++)
		if (arms[a].on && arms[a].one() < 0) {
			fprintf(stderr, "exec_bench: %s: warm-up call failed\n", arms[a].name);
			if (a != 1) return 1;
			arms[a].on = 0;
		}
	for (int i = 0; i < n; i++)
		for (size_t a = 0; a < na; a++) {
			if (!arms[a].on) continue;
			double t = arms[a].one();
			if (t < 0) {
				fprintf(stderr, "exec_bench: %s: call %d failed\n", arms[a].name, i);
				return 1;
			}
			arms[a].ms[i] = t;
		}
	printf("exec_bench: %d calls each, interleaved; %s; v1 cgroup attach kept warm: %s\n", n,
	       geteuid() == 0 ? "as root" : "unprivileged", warm ? "yes" : "not needed or not possible");
	printf("  %-44s %9s %9s\n", "arm", "p50 ms", "p99 ms");
	double p50[8] = { 0 };
	for (size_t a = 0; a < na; a++) {
		if (!arms[a].on) {
			printf("  %-44s %9s %9s  (not installed)\n", arms[a].name, "-", "-");
			continue;
		}
		p50[a] = bench_pct(arms[a].ms, n, 0.5);
		printf("  %-44s %9.2f %9.2f\n", arms[a].name, p50[a], bench_pct(arms[a].ms, n, 0.99));
	}
	if (arms[1].on && p50[1] > 0) {
		double q = p50[2] / p50[1];
		printf("  sup_run_exec / bwrap (p50) = %.2fx (goal <= 1.5x: %s)\n", q, q <= 1.5 ? "met" : "NOT met");
	}
	capsule_cgroup_keepwarm(false);
	char rm[300];
	snprintf(rm, sizeof rm, "rm -rf '%s'", tmpl);
	if (system(rm) != 0) fprintf(stderr, "exec_bench: could not remove %s\n", tmpl);
	for (size_t a = 0; a < na; a++) free(arms[a].ms);
	return 0;
}
