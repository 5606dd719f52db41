/* bench/store_bench.c: store figures (printed, never a test).
 *   1. durable commits/s over N single-entry commits (default 10,000): each
 *      commit = output, input and record objects, log entry, world and head, one
 *      transaction with synchronous=FULL; the same with synchronous=OFF
 *      beside it, and the ratio;
 *   2. integrity-scan throughput over a store of M entries (default
 *      100,000): rows/s and MB/s hashed, and the start-up budgeted scan.
 * usage: store_bench DIR [N [M]] */
#include "store/scan.h"
#include "store/store.h"
#include "tests/store/sfix.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void die(const char *what, const struct world_err *err)
{
	fprintf(stderr, "store_bench: %s: %s\n", what, err->msg);
	exit(1);
}

/* Appends n entries, committing every `batch` entries. Returns seconds. */
static double fill(struct world_store *st, const char *dir, long long n, long long batch)
{
	struct world_err err = {0};
	struct sfix f = { 0 };
	if (sfix_init(st, dir, &f, &err) < 0) die("fixture", &err);
	long long last;
	char prev[WORLD_REF_SIZE], head[WORLD_REF_SIZE] = "";
	if (world_log_last(st, &last, prev, &err) < 0) die("log last", &err);
	struct world_world w;
	if (world_head_get(st, &w, &err) == 0) strcpy(head, w.ref);
	double t0 = now_s();
	for (long long i = 0; i < n; i++) {
		if (i % batch == 0 && world_store_begin(st, &err) < 0) die("begin", &err);
		long long idx = last + 1 + i;
		char out[160];
		char rout[WORLD_REF_SIZE], rrec[WORLD_REF_SIZE];
		int on = snprintf(out, sizeof out, "{\"answer\":%lld,\"text\":\"benchmark output payload of a typical size\"}", idx);
		if (world_object_put(st, "world/invocation-output/v1", "bench", out, (size_t)on, rout, NULL, &err) < 0)
			die("put output", &err);
		if (sfix_record(st, &f, rout, 1, "bench", rrec, &err) < 0) die("put record", &err);
		struct world_log_append a = { idx, 1, f.src, f.interp, prev, "store_bench", rrec, rout, head };
		struct world_log_result r;
		if (world_log_append(st, &a, &r, &err) < 0) die("log append", &err);
		strcpy(prev, r.entry_hash);
		strcpy(head, r.world_ref);
		if ((i + 1) % batch == 0 || i + 1 == n)
			if (world_store_commit(st, &err) < 0) die("commit", &err);
	}
	return now_s() - t0;
}

static double commits(const char *dir, const char *name, int mode, long long n)
{
	char db[4096];
	snprintf(db, sizeof db, "%s/%s", dir, name);
	struct world_store *st;
	struct world_err err = {0};
	if (world_store_open(db, mode, &st, &err) < 0) die("open", &err);
	double s = fill(st, dir, n, 1);
	world_store_close(st);
	return n / s;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: store_bench DIR [COMMITS [SCAN_ENTRIES]]\n");
		return 2;
	}
	const char *dir = argv[1];
	long long n = argc > 2 ? atoll(argv[2]) : 10000;
	long long m = argc > 3 ? atoll(argv[3]) : 100000;

	double durable = commits(dir, "durable.db", WORLD_STORE_WRITER, n);
	double nosync = commits(dir, "nosync.db", WORLD_STORE_WRITER | WORLD_STORE_NOSYNC, n);
	printf("commits: %lld single-entry commits (3 objects + entry + world + head each)\n", n);
	printf("  durable (WAL, synchronous=FULL): %10.0f commits/s\n", durable);
	printf("  not durable (synchronous=OFF):   %10.0f commits/s   (%.1fx the durable rate; the difference is fsync)\n",
	       nosync, nosync / durable);

	char db[4096];
	snprintf(db, sizeof db, "%s/scan.db", dir);
	struct world_store *st;
	struct world_err err = {0};
	if (world_store_open(db, WORLD_STORE_WRITER | WORLD_STORE_NOSYNC, &st, &err) < 0) die("open", &err);
	double fs = fill(st, dir, m, 1000);
	world_store_close(st);
	printf("scan store: %lld entries written in batches of 1000 in %.1f s\n", m, fs);
	if (world_store_open(db, WORLD_STORE_READER, &st, &err) < 0) die("open reader", &err);
	struct world_scan_opts o = { .effect_record_check = NULL };
	struct world_scan_result r;
	double t0 = now_s();
	if (world_scan(st, &o, stdout, &r, &err) < 0) die("scan", &err);
	double s = now_s() - t0;
	long long rows = r.log_rows + r.world_rows;
	printf("full scan: %lld rows (%lld entries + %lld worlds), %s, %llu bytes hashed in %.2f s\n", rows, r.log_rows,
	       r.world_rows, r.holes ? "HOLES FOUND" : "clean", (unsigned long long)r.bytes_hashed, s);
	printf("  %10.0f rows/s   %8.1f MB/s hashed (entries, worlds and the payloads they name)\n", rows / s,
	       (double)r.bytes_hashed / 1e6 / s);
	struct world_scan_opts so = { .max_rows = WORLD_SCAN_START_ROWS, .max_seconds = WORLD_SCAN_START_SECONDS };
	t0 = now_s();
	FILE *devnull = fopen("/dev/null", "w");
	if (world_scan(st, &so, devnull, &r, &err) < 0) die("scan", &err);
	fclose(devnull);
	printf("start-up scan budget (%d rows, %.0f s): %lld rows in %.3f s, complete=%s\n", WORLD_SCAN_START_ROWS,
	       WORLD_SCAN_START_SECONDS, r.log_rows + r.world_rows, now_s() - t0, r.complete ? "yes" : "no");
	world_store_close(st);
	return 0;
}
