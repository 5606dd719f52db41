/* bench/daemon_bench.c: MCP tools/call throughput and latency against a
 * running `worldd serve` (durable commits), at several client counts, beside
 * the bare supervisor+capsule runs/s of the same echo transition measured in
 * the same run, in interleaved rounds. Each client is one thread with one
 * keep-alive HTTP/1.1 connection on 127.0.0.1 (a minimal client: Content-
 * Length bodies only, which is what the daemon sends). Figures only.
 * usage: daemon_bench PORT CREDENTIAL AILANG_LITE CALLS TOOL ARGS [TOOL ARGS...]
 * Prints per tool and client count: calls/s, p50, p99 (ms), x bare. */
#include "supervisor/launcher.h"
#include "supervisor/spawner.h"
#include "supervisor/supervisor.h"
#include "bench/bench.h"
#include "bench/mcp_client.h"
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static const char ECHO[] = "module echo\nexport func main(input: string) -> string { \"{\\\"echo\\\":${input}}\" }\n";
static const char EARGS[] = "{\"message\":\"hello, world\"}";

static int port;
static const char *cred;

struct client {
	const char *body;
	size_t blen;
	int calls, failures;
	double *lat;
	char sample[512];
};

static void *client_main(void *arg)
{
	struct client *c = arg;
	int fd = -1;
	size_t cap = 1 << 20;
	char *buf = malloc(cap);
	for (int i = 0; i < c->calls; i++) {
		double t0 = bench_now_s();
		if (bench_mcp_call(port, cred, &fd, c->body, c->blen, buf, cap, NULL) < 0) {
			c->failures++;
			snprintf(c->sample, sizeof c->sample, "%.500s", buf);
		}
		c->lat[i] = (bench_now_s() - t0) * 1000.0;
	}
	if (fd >= 0) close(fd);
	free(buf);
	return NULL;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

struct bare_job { struct supervisor *sup; int runs, fails; };
static void *bare_main(void *arg)
{
	struct bare_job *j = arg;
	for (int i = 0; i < j->runs; i++) {
		struct sup_result r;
		struct world_err e;
		if (sup_run_pure(j->sup, ECHO, sizeof ECHO - 1, EARGS, sizeof EARGS - 1, &r, &e) < 0) j->fails++;
		sup_result_free(&r);
	}
	return NULL;
}

static double bare_rate(struct supervisor *sup, int inflight, int total)
{
	pthread_t th[16];
	struct bare_job j[16];
	double t0 = bench_now_s();
	for (int k = 0; k < inflight; k++) {
		j[k] = (struct bare_job){ .sup = sup, .runs = total / inflight };
		pthread_create(&th[k], NULL, bare_main, &j[k]);
	}
	for (int k = 0; k < inflight; k++) pthread_join(th[k], NULL);
	return (double)(total / inflight * inflight) / (bench_now_s() - t0);
}

int main(int argc, char **argv)
{
	if (argc < 7 || (argc - 5) % 2 != 0) {
		fprintf(stderr, "usage: daemon_bench PORT CREDENTIAL AILANG_LITE CALLS TOOL ARGS [TOOL ARGS...]\n");
		return 2;
	}
	long all_fails = 0;
	/* As in the daemon: the capsule spawner first (supervisor/spawner.h). */
	struct world_err se;
	if (sup_spawner_start(NULL, NULL, &se) < 0) { fprintf(stderr, "daemon_bench: %s\n", se.msg); return 1; }
	port = atoi(argv[1]);
	cred = argv[2];
	int calls = atoi(argv[4]);
	struct world_err e;
	struct sup_limits lim;
	sup_limits_default(&lim);
	struct launcher *l = launcher_capsule_new(argv[3], NULL, &e);
	struct supervisor *sup = l ? sup_new(&lim, l, &e) : NULL;
	if (!sup) { fprintf(stderr, "daemon_bench: %s\n", e.msg); return 1; }
	static const int counts[] = { 1, 8, 16 };
	printf("MCP tools/call against worldd serve (durable commits, capacity 8), %d calls per row,\n"
	       "beside the bare supervisor+capsule echo at min(clients, 8) in flight, measured in the same run\n\n", calls);
	printf("  %-14s %7s %9s %8s %8s %9s %9s %7s\n", "tool", "clients", "calls/s", "p50 ms", "p99 ms", "bare/s",
	       "x bare", "failed");
	for (int t = 5; t + 1 < argc; t += 2) {
		for (size_t ci = 0; ci < sizeof counts / sizeof counts[0]; ci++) {
			int n = counts[ci];
			int inflight = n < 8 ? n : 8;
			double bare = bare_rate(sup, inflight, calls);
			char body[4096];
			snprintf(body, sizeof body,
			         "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"%s\",\"arguments\":%s}}",
			         argv[t], argv[t + 1]);
			struct client cl[16];
			pthread_t th[16];
			double *lat = calloc((size_t)calls + 16, sizeof *lat);
			int per = calls / n;
			double t0 = bench_now_s();
			for (int k = 0; k < n; k++) {
				cl[k] = (struct client){ .body = body, .blen = strlen(body), .calls = per, .lat = lat + k * per };
				pthread_create(&th[k], NULL, client_main, &cl[k]);
			}
			int fails = 0;
			for (int k = 0; k < n; k++) {
				pthread_join(th[k], NULL);
				fails += cl[k].failures;
			}
			double wall = bench_now_s() - t0;
			int done = per * n;
			qsort(lat, (size_t)done, sizeof *lat, cmp_d);
			double rate = done / wall;
			printf("  %-14s %7d %9.1f %8.2f %8.2f %9.1f %9.2f %7d\n", argv[t], n, rate, lat[done / 2],
			       lat[(int)(done * 0.99)], bare, rate / bare, fails);
			for (int k = 0; k < n && fails; k++)
				if (cl[k].failures) { printf("    a failed answer: %.300s\n", cl[k].sample); break; }
			all_fails += fails;
			free(lat);
		}
	}
	printf("\ntargets (issue 10): MCP echo >= 0.7x the bare rate and >= 200 calls/s; p99 < 50 ms at 8 clients\n");
	sup_free(sup);
	/* Figures are never asserted, but a benchmark whose calls fail is
	 * broken, and make bench-smoke must say so. */
	if (all_fails) fprintf(stderr, "daemon_bench: %ld calls failed (see the rows above)\n", all_fails);
	return all_fails ? 1 : 0;
}
