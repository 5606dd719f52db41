/* bench/scan_bench.c: the daemon's start-up scan (world_scan_start, what
 * `worldd serve` calls, with the broker's record law) beside the full
 * streaming scan (`worldd scan`), on stores of realistic payloads: large
 * transition sources shared by every call and published among the log,
 * and calls writing 64 KiB. Figures only; nothing is judged.
 *
 *   scan_bench DIR SIZES
 *
 * First the store of issue 39 (150 effectful calls, three publishes of
 * SOURCES sources of 40 KB, 4 calls), then one store grown through SIZES
 * (entries, comma-separated, ascending) by the store's own API
 * (tests/store/sbulk.h, seff.h): a publish of SOURCES sources of 40 KB
 * first and after every PUBLISH_EVERY entries, one call in WRITE_EVERY an
 * effectful call writing 64 KiB (its plan and request each hold the
 * content), the others pure calls. At each size, on the store opened as
 * serve opens it: the start-up scan (20,000 rows, 2 s), then the full
 * scan, each with rows covered, seconds, rows/s, objects verified and MB
 * hashed; in a test build (WORLD_TEST_SCAN_FORGET) also the start-up scan
 * with its verdicts forgotten before every entry: the per-entry cost of the
 * code before them (SCAN_BENCH_BEFORE=0: not). Env: SCAN_BENCH_SOURCES (300), SCAN_BENCH_WRITE_EVERY
 * (64), SCAN_BENCH_PUBLISH_EVERY (100000). A store DIR/scan.db left by an
 * earlier run with SCAN_BENCH_DIR (bench/scan_bench.sh) is grown on from
 * its last entry; sizes it already passed are scanned at its size. */
#include "store/scan.h"
#include "store/store.h"
#include "broker/effect.h"
#include "tests/store/seff.h"
#include "bench/bench.h"
#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static void die(const char *what, const struct world_err *e)
{
	fprintf(stderr, "scan_bench: %s%s%s\n", what, e ? ": " : "", e ? e->msg : "");
	exit(1);
}

static long long env_ll(const char *name, long long dflt)
{
	const char *v = getenv(name);
	if (!v || !*v) return dflt;
	char *end;
	long long n = strtoll(v, &end, 10);
	if (*end || n < 0) {
		fprintf(stderr, "scan_bench: %s=%s: want a count\n", name, v);
		exit(2);
	}
	return n;
}

/* how: 0 the start-up scan, 1 the same with its verdicts forgotten every
 * entry (test builds), 2 the full scan */
static void one_scan(const char *db, int how, const char *what)
{
	struct world_store *st;
	struct world_err err = { 0 };
	/* as serve opens it */
	if (world_store_open(db, WORLD_STORE_WRITER | WORLD_STORE_EXISTING, &st, &err) < 0) die("open the store", &err);
	FILE *out = fopen("/dev/null", "w");
	if (!out) die("open /dev/null", NULL);
	if (how == 1) setenv("WORLD_TEST_SCAN_FORGET", "1", 1);
	struct world_scan_result r;
	struct world_scan_opts o = { .effect_record_check = broker_record_check };
	double t0 = bench_now_s(), c0 = (bench_cpu_us() / 1e6);
	int rc = how == 2 ? world_scan(st, &o, out, &r, &err) : world_scan_start(st, broker_record_check, out, &r, &err);
	double s = bench_now_s() - t0, c = (bench_cpu_us() / 1e6) - c0;
	unsetenv("WORLD_TEST_SCAN_FORGET");
	if (rc < 0) die("scan", &err);
	fclose(out);
	world_store_close(st);
	if (r.holes) die("the store is not clean", NULL);
	long long rows = r.log_rows + r.world_rows;
	printf("    %-44s %8lld rows in %6.3f s (cpu %6.3f s): %9.0f rows/s  complete=%d  %7lld objects verified, "
	       "%8.1f MB hashed\n",
	       what, rows, s, c, s > 0 ? rows / s : 0, r.complete, r.objects_verified, r.bytes_hashed / 1048576.0);
	fflush(stdout);
}

static void scans(const char *db, long long entries)
{
	printf("  %lld entries:\n", entries);
	one_scan(db, 0, "start-up scan (20000 rows, 2 s budget)");
#ifdef WORLD_TEST_HOOKS
	if (env_ll("SCAN_BENCH_BEFORE", 1) != 0) one_scan(db, 1, "  before: verdicts forgotten every entry");
#endif
	one_scan(db, 2, "full scan (streaming, no budget)");
}

static struct world_store *open_grow(const char *db, struct sbulk *b, const char *dir, const char *episode)
{
	struct world_store *st;
	struct world_err err = { 0 };
	if (world_store_open(db, WORLD_STORE_WRITER | WORLD_STORE_NOSYNC, &st, &err) < 0) die("open the store", &err);
	/* the fill's random SHA-256-keyed index pages stay in a large page
	 * cache, written once a batch (bench/store_bench.c) */
	if (sqlite3_exec(world_store_db(st), "PRAGMA cache_size=-2097152", NULL, NULL, NULL) != SQLITE_OK)
		die("fill cache_size", NULL);
	memset(b, 0, sizeof *b);
	b->episode = episode;
	if (sbulk_init(st, dir, b, &err) < 0) die("fixture", &err);
	if (b->last > b->f.n) b->f.n = b->last; /* a kept store: new invocation ids */
	return st;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: scan_bench DIR SIZES\n");
		return 2;
	}
	const char *dir = argv[1];
	int nsrc = (int)env_ll("SCAN_BENCH_SOURCES", 300);
	long long write_every = env_ll("SCAN_BENCH_WRITE_EVERY", 64), publish_every = env_ll("SCAN_BENCH_PUBLISH_EVERY", 100000);
	if (nsrc < 1 || write_every < 1 || publish_every < 1) {
		fprintf(stderr, "scan_bench: SCAN_BENCH_SOURCES, _WRITE_EVERY and _PUBLISH_EVERY are at least 1\n");
		return 2;
	}
	long long sizes[16];
	int ns = 0;
	for (char *p = argv[2]; *p && ns < 16;) {
		char *end;
		sizes[ns] = strtoll(p, &end, 10);
		if (end == p || sizes[ns] <= 0 || (ns && sizes[ns] < sizes[ns - 1])) {
			fprintf(stderr, "scan_bench: sizes: want ascending positive counts, got %s\n", argv[2]);
			return 2;
		}
		ns++;
		p = *end == ',' ? end + 1 : end;
	}
	struct world_err err = { 0 };
	char db[4096];
	struct sbulk b;

	/* issue 39's store */
	static const char *const sfx[] = { "", "-wal", "-shm" };
	for (int i = 0; i < 3; i++) {
		snprintf(db, sizeof db, "%s/issue.db%s", dir, sfx[i]);
		if (unlink(db) < 0 && errno != ENOENT) die("remove the last issue store", NULL);
	}
	snprintf(db, sizeof db, "%s/issue.db", dir);
	struct world_store *st = open_grow(db, &b, dir, "issue");
	double t0 = bench_now_s();
	if (world_store_begin(st, &err) < 0) die("begin", &err);
	for (int i = 0; i < 150; i++)
		if (seff_one(st, &b, 300, &err) < 0) die("effectful call", &err);
	if (world_store_commit(st, &err) < 0) die("commit", &err);
	static const char *const tags[] = { "pa", "pb", "pc" };
	for (int p = 0; p < 3; p++)
		if (seff_publish(st, tags[p], nsrc, 40000, &err) < 0) die("publish", &err);
	if (world_store_begin(st, &err) < 0) die("begin", &err);
	for (int i = 0; i < 4; i++)
		if (seff_one(st, &b, 300, &err) < 0) die("effectful call", &err);
	if (world_store_commit(st, &err) < 0) die("commit", &err);
	world_store_close(st);
	printf("issue 39's store: 150 effectful calls, 3 publishes of %d sources of 40 KB, 4 calls (built in %.1f s)\n", nsrc,
	       bench_now_s() - t0);
	scans(db, b.last);

	/* the grown store */
	snprintf(db, sizeof db, "%s/scan.db", dir);
	st = open_grow(db, &b, dir, "bench");
	printf("grown store: one call in %lld writes 64 KiB (effectful), the others pure; %d sources of 40 KB published "
	       "first and every %lld entries\n",
	       write_every, nsrc, publish_every);
	for (int i = 0; i < ns; i++) {
		t0 = bench_now_s();
		long long from = b.last;
		while (b.last < sizes[i]) {
			if (b.last % publish_every == 0) {
				char tag[32];
				snprintf(tag, sizeof tag, "p%lld", b.last);
				if (seff_publish(st, tag, nsrc, 40000, &err) < 0) die("publish", &err);
			}
			long long stop = (b.last / publish_every + 1) * publish_every;
			if (stop > sizes[i]) stop = sizes[i];
			if (world_store_begin(st, &err) < 0) die("begin", &err);
			while (b.last < stop) {
				int rc = (b.last + 1) % write_every == 0 ? seff_one(st, &b, 65536, &err) : sbulk_one(st, &b, &err);
				if (rc < 0) die("call", &err);
				if (b.last % 20000 == 0 && b.last < stop) {
					if (world_store_commit(st, &err) < 0 || world_store_begin(st, &err) < 0) die("commit", &err);
				}
			}
			if (world_store_commit(st, &err) < 0) die("commit", &err);
		}
		if (from < b.last) printf("  (grown from %lld to %lld entries in %.1f s)\n", from, b.last, bench_now_s() - t0);
		world_store_close(st);
		scans(db, b.last);
		if (i + 1 < ns) st = open_grow(db, &b, dir, "bench");
	}
	return 0;
}
