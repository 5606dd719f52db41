/* bench/bench.h: what the benchmarks share: a monotonic clock (ms and s),
 * this process's CPU time, percentiles, writing a small fixture file, and one timed whole-process
 * run with its output checked. Header-only: each benchmark is a program of
 * its own. */
#ifndef WORLD_BENCH_BENCH_H
#define WORLD_BENCH_BENCH_H
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static inline double bench_now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static inline double bench_now_s(void)
{
	return bench_now_ms() / 1e3;
}

/* this process's CPU time (user + system, all threads) in microseconds:
 * the machines are shared, so benchmarks print it beside the wall clock */
static inline double bench_cpu_us(void)
{
	struct rusage r;
	if (getrusage(RUSAGE_SELF, &r) < 0) return 0;
	return (double)(r.ru_utime.tv_sec + r.ru_stime.tv_sec) * 1e6 + (double)(r.ru_utime.tv_usec + r.ru_stime.tv_usec);
}

static inline int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* The q-quantile (0..1) of v[0..n), n >= 1; v is left as it was. */
static inline double bench_pct(const double *v, int n, double q)
{
	double *c = malloc((size_t)n * sizeof *c);
	if (!c) return -1;
	memcpy(c, v, (size_t)n * sizeof *c);
	qsort(c, (size_t)n, sizeof *c, bench_cmp_double);
	double r = c[(int)(q * (n - 1) + 0.5)];
	free(c);
	return r;
}

static inline int bench_write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	if (!f) return -1;
	fputs(text, f);
	return fclose(f);
}

/* Run argv (cwd dir, environment envp; NULL = ours) once, stdin and stderr
 * on /dev/null; its stdout, less one trailing newline, is compared with
 * want when want is set. Returns the wall ms, or -1 on a wrong outcome. */
static inline double bench_run_once(char *const argv[], char *const envp[], const char *dir, const char *want)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0) return -1;
	double t0 = bench_now_ms();
	pid_t pid = fork();
	if (pid < 0) return -1;
	if (pid == 0) {
		int dn = open("/dev/null", O_RDWR);
		if ((dir && chdir(dir) < 0) || dup2(p[1], 1) < 0 || dup2(dn, 2) < 0 || dup2(dn, 0) < 0) _exit(126);
		if (envp) execve(argv[0], argv, envp);
		else execv(argv[0], argv);
		_exit(127);
	}
	close(p[1]);
	char buf[4096];
	size_t len = 0;
	ssize_t n;
	/* read to the end: what does not fit is drained, not left to a SIGPIPE
	 * (worldd --help is longer than buf) */
	char drain[4096];
	for (;;) {
		n = len < sizeof buf - 1 ? read(p[0], buf + len, sizeof buf - 1 - len) : read(p[0], drain, sizeof drain);
		if (n < 0 && errno == EINTR) continue;
		if (n <= 0) break;
		if (len < sizeof buf - 1) len += (size_t)n;
	}
	close(p[0]);
	int st;
	if (waitpid(pid, &st, 0) != pid) return -1;
	double t = bench_now_ms() - t0;
	buf[len] = 0;
	if (len && buf[len - 1] == '\n') buf[--len] = 0;
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) return -1;
	if (want && strcmp(buf, want) != 0) return -1;
	return t;
}
#endif
