/* bench/interp_bench.c: wall-time sampler for the ailang-lite benchmark.
 *
 * Owns: running one command N times (fork + exec, stdout to /dev/null) and
 * printing the median, minimum and 90th percentile wall time in
 * milliseconds. Usage: interp_bench LABEL N CMD [ARGS...]. A run that exits
 * non-zero stops the benchmark (a broken figure is worse than none). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: interp_bench LABEL N CMD [ARGS...]\n");
		return 2;
	}
	const char *label = argv[1];
	char *end;
	long n = strtol(argv[2], &end, 10);
	if (*end || n < 1 || n > 1000000) {
		fprintf(stderr, "interp_bench: bad run count '%s'\n", argv[2]);
		return 2;
	}
	double *ms = malloc((size_t)n * sizeof *ms);
	if (!ms) {
		fprintf(stderr, "interp_bench: out of memory\n");
		return 1;
	}
	for (long i = 0; i < n; i++) {
		struct timespec t0, t1;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		pid_t pid = fork();
		if (pid < 0) {
			fprintf(stderr, "interp_bench: fork: %s\n", strerror(errno));
			return 1;
		}
		if (pid == 0) {
			int fd = open("/dev/null", O_WRONLY);
			if (fd < 0 || dup2(fd, 1) < 0)
				_exit(126);
			execv(argv[3], argv + 3);
			_exit(127);
		}
		int st;
		if (waitpid(pid, &st, 0) < 0) {
			fprintf(stderr, "interp_bench: waitpid: %s\n", strerror(errno));
			return 1;
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			fprintf(stderr, "interp_bench: %s: run %ld of %s failed (status %d)\n", label, i + 1,
			        argv[3], st);
			return 1;
		}
		ms[i] = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
	}
	qsort(ms, (size_t)n, sizeof *ms, cmp_double);
	double med = n % 2 ? ms[n / 2] : (ms[n / 2 - 1] + ms[n / 2]) / 2;
	printf("%-44s median %8.3f ms   min %8.3f ms   p90 %8.3f ms   (%ld runs)\n", label, med, ms[0],
	       ms[(long)((double)(n - 1) * 0.9)], n);
	free(ms);
	return 0;
}
