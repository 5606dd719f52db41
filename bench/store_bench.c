/* bench/store_bench.c: store figures (printed, never a test).
 *   1. durable commits/s over N single-entry commits (default 4,000): each
 *      commit = output, input and record objects, log entry, world and
 *      head, one transaction with synchronous=FULL; the same with
 *      synchronous=OFF beside it;
 *   2. group commit: the same verified appends (index, chain and head
 *      taken and checked inside the transaction) from W concurrent writer
 *      threads through store/group.h, for each W of a list (default
 *      1,4,16,64,256): appends/s and the mean batch, and beside each the
 *      same with SQLite's own WAL writes (WORLD_STORE_PLAIN_WAL: what
 *      store/walbuf.c's gathering gives); beside them SQLite's own
 *      bulk insert (rows of the bytes one append adds, one durable
 *      transaction) as the floor, and the ratio; with STORE_BENCH_PG_URI
 *      (store_bench.sh starts a throwaway cluster) the same group rows on
 *      PostgreSQL, W threads on one and on two connections, with the
 *      batches that lost a race and the appends refused after 9 runs;
 *   3. scale: for each size of a list (default 10,000 and 100,000 entries)
 *      the scan store is grown to that many coordinator-shaped calls
 *      (tests/store/sbulk.h: journal, membership, usage; synchronous=OFF)
 *      and scanned in full with every hash: rows/s at each size; at the
 *      largest, the start-up scan (20,000 rows, 2 s budget) and the whole
 *      `worldd why N` and `worldd replay N` of a real call committed
 *      through the coordinator (median of 5 runs each).
 * usage: store_bench DIR [COMMITS [SIZES [WRITERS [WORLDD]]]]
 * SIZES and WRITERS are comma-separated lists; WORLDD is the worldd to
 * time (default $WORLDD; none: those rows are skipped). */
#include "bench/bench.h"
#include "coordinator/coordinator.h"
#include "store/db.h"
#include "store/group.h"
#include "common/ref.h"
#include "store/scan.h"
#include "store/store.h"
#include "tests/coordinator/ctest.h"
#include "tests/store/sbulk.h"
#include <dirent.h>
#include <malloc.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static void die(const char *what, const struct world_err *err)
{
	fprintf(stderr, "store_bench: %s: %s\n", what, err ? err->msg : "failed");
	exit(1);
}

/* ---- one append: output, input and record, then the next entry ---- */

struct appender {
	struct sfix f;
	struct world_log_result last;
};

static int append_next(struct world_store *st, void *ctx, struct world_err *err)
{
	struct appender *a = ctx;
	char out[160], rout[WORLD_REF_SIZE], rrec[WORLD_REF_SIZE], prev[WORLD_REF_SIZE], head[WORLD_REF_SIZE];
	int on = snprintf(out, sizeof out, "{\"answer\":%lld,\"text\":\"benchmark output payload of a typical size\"}",
	                  a->f.n + 1);
	if (world_object_put(st, "world/invocation-output/v1", "bench", out, (size_t)on, rout, NULL, err) < 0 ||
	    sfix_record(st, &a->f, rout, 1, "bench", rrec, err) < 0)
		return -1;
	long long idx;
	if (world_log_next(st, &idx, prev, head, err) < 0) return -1;
	struct world_log_append la = { idx, 1, a->f.src, a->f.interp, prev, "store_bench", rrec, rout, head };
	return world_log_append(st, &la, &a->last, err);
}

static struct world_store *open_store(const char *dir, const char *name, int mode, struct appender *a)
{
	char db[4096];
	snprintf(db, sizeof db, "%s/%s", dir, name);
	struct world_store *st;
	struct world_err err = { 0 };
	if (world_store_open(db, mode, &st, &err) < 0) die("open", &err);
	if (a && sfix_init(st, dir, &a->f, &err) < 0) die("fixture", &err);
	return st;
}

/* n appends, one transaction each. Returns appends/s. */
static double commits(const char *dir, const char *name, int mode, long long n, double *bytes_per)
{
	struct appender a = { 0 };
	struct world_store *st = open_store(dir, name, mode, &a);
	struct world_err err = { 0 };
	sqlite3_int64 p0 = 0, p1 = 0;
	sqlite3_stmt *q;
	const char *pc = "SELECT page_count * page_size FROM pragma_page_count, pragma_page_size";
	if (sqlite3_prepare_v2(world_store_db(st), pc, -1, &q, NULL) == SQLITE_OK && sqlite3_step(q) == SQLITE_ROW)
		p0 = sqlite3_column_int64(q, 0);
	sqlite3_finalize(q);
	double t0 = bench_now_s();
	for (long long i = 0; i < n; i++) {
		if (world_store_begin(st, &err) < 0 || append_next(st, &a, &err) < 0 || world_store_commit(st, &err) < 0)
			die("append", &err);
	}
	double s = bench_now_s() - t0;
	if (sqlite3_prepare_v2(world_store_db(st), pc, -1, &q, NULL) == SQLITE_OK && sqlite3_step(q) == SQLITE_ROW)
		p1 = sqlite3_column_int64(q, 0);
	sqlite3_finalize(q);
	if (bytes_per) *bytes_per = n ? (double)(p1 - p0) / (double)n : 0;
	world_store_close(st);
	return n / s;
}

/* ---- group commit: W writer threads ---- */

struct writer {
	struct world_group *g;
	struct appender *a;
	long long n;
	int failed;
	int keep_going;   /* count a failed append and go on (the PostgreSQL rows) */
	long long nfailed;
};

static void *writer_main(void *p)
{
	struct writer *w = p;
	struct world_err err = { 0 };
	for (long long i = 0; i < w->n; i++)
		if (world_group_run(w->g, append_next, w->a, &err) < 0) {
			if (w->keep_going && err.code == WX_LOCKED) {
				w->nfailed++;
				continue;
			}
			fprintf(stderr, "store_bench: group append: %s\n", err.msg);
			w->failed = 1;
			break;
		}
	return NULL;
}

/* where a group row's time went, per append */
struct gstat {
	double mean_batch;  /* appends per batch = per COMMIT (one WAL fsync each) */
	double cpu_us;      /* user + system CPU of the process, all threads */
	double server_us;   /* PostgreSQL rows: CPU of the server's processes (-1: not known) */
	double pages;       /* pages written to the WAL (SQLITE_DBSTATUS_CACHE_WRITE) */
	long long ckpt_bg, ckpt_inline, reruns;
};

static double grouped(const char *dir, int writers, long long n, int mode, struct gstat *gs)
{
	char name[64];
	snprintf(name, sizeof name, "group%d%s.db", writers, mode & WORLD_STORE_PLAIN_WAL ? "-plain" : "");
	struct appender a = { 0 };
	struct world_store *st = open_store(dir, name, mode, &a);
	struct world_err err = { 0 };
	/* an experiment's writer settings (PRAGMAs), e.g. a larger page cache */
	const char *pragmas = getenv("STORE_BENCH_WRITER_PRAGMAS");
	if (pragmas && *pragmas && sqlite3_exec(world_store_db(st), pragmas, NULL, NULL, NULL) != SQLITE_OK)
		die("STORE_BENCH_WRITER_PRAGMAS", NULL);
	struct world_group *g = world_group_new(st, &err);
	if (!g) die("group", &err);
	pthread_t *th = calloc((size_t)writers, sizeof *th);
	struct writer *w = calloc((size_t)writers, sizeof *w);
	if (!th || !w) die("out of memory", NULL);
	int cur, hi;
	sqlite3_db_status(world_store_db(st), SQLITE_DBSTATUS_CACHE_WRITE, &cur, &hi, 1); /* reset */
	double c0 = bench_cpu_us();
	double t0 = bench_now_s();
	for (int i = 0; i < writers; i++) {
		w[i] = (struct writer){ g, &a, n / writers, 0, 0, 0 };
		if (pthread_create(&th[i], NULL, writer_main, &w[i]) != 0) die("pthread_create", NULL);
	}
	for (int i = 0; i < writers; i++) pthread_join(th[i], NULL);
	double s = bench_now_s() - t0;
	double cpu = bench_cpu_us() - c0;
	for (int i = 0; i < writers; i++)
		if (w[i].failed) die("group append", NULL);
	long long batches, done;
	world_group_stats(g, &batches, &done, NULL);
	sqlite3_db_status(world_store_db(st), SQLITE_DBSTATUS_CACHE_WRITE, &cur, &hi, 0);
	gs->mean_batch = batches ? (double)done / (double)batches : 0;
	gs->cpu_us = done ? cpu / (double)done : 0;
	gs->pages = done ? (double)cur / (double)done : 0;
	gs->reruns = world_group_reruns(g);
	world_store_checkpoint_stats(st, &gs->ckpt_bg, &gs->ckpt_inline, NULL);
	world_group_free(g);
	/* every append verified again by the scan: the chain is whole */
	struct world_scan_opts o = { .max_rows = 0 };
	struct world_scan_result r;
	if (world_scan(st, &o, stderr, &r, &err) < 0 || r.holes || r.log_rows != (n / writers) * writers)
		die("scan after the group appends", &err);
	world_store_close(st);
	free(th);
	free(w);
	return (double)done / s;
}

/* User + system CPU in us of process ROOT and its children (PostgreSQL's
 * postmaster and its backends, walwriter, checkpointer...), from
 * /proc/PID/stat; -1 when ROOT is not readable. A child that exits during
 * a row takes its CPU with it: the rows measure before closing their
 * connections. */
static double proc_tree_cpu_us(long root)
{
	DIR *d = opendir("/proc");
	if (!d) return -1;
	double ticks = 0;
	int seen = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);
		if (*end || pid <= 0) continue;
		char path[64], buf[1024];
		snprintf(path, sizeof path, "/proc/%ld/stat", pid);
		FILE *f = fopen(path, "r");
		if (!f) continue; /* gone since readdir */
		size_t got = fread(buf, 1, sizeof buf - 1, f);
		fclose(f);
		buf[got] = 0;
		/* after the command's closing parenthesis: state ppid ... utime(14) stime(15) */
		char *p = strrchr(buf, ')');
		long ppid;
		unsigned long long ut, stt;
		if (!p || sscanf(p + 2, "%*c %ld %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ppid, &ut, &stt) != 3)
			continue;
		if (pid != root && ppid != root) continue;
		seen |= pid == root;
		ticks += (double)(ut + stt);
	}
	closedir(d);
	return seen ? ticks * 1e6 / (double)sysconf(_SC_CLK_TCK) : -1;
}

#define WS_GROUP_TRIES_PRINTED 9 /* a batch's runs before it is refused: 1 + the store's 8 retries */

/* The same group rows on PostgreSQL (STORE_BENCH_PG_URI; bench/store_bench.sh
 * starts a throwaway cluster): W threads on each of `conns` groups (one
 * connection each), n appends in all, synchronous_commit=on (the driver's).
 * The interpreter is not archived there yet (docs/store.md): the entries
 * name a fixed ref. Every append is checked by the log's count afterwards
 * (the scan does not run on PostgreSQL yet). */
static double pg_grouped(const char *uri, int writers, int conns, long long n, struct gstat *gs, long long *races,
                         long long *lost)
{
	struct world_store *st[2] = { NULL, NULL };
	struct world_group *g[2] = { NULL, NULL };
	/* one appender per connection: its group's leader alone moves its counter */
	static struct appender a[2];
	memset(a, 0, sizeof a);
	struct world_err err = { 0 };
	for (int c = 0; c < conns; c++) {
		if (world_store_open(uri, WORLD_STORE_WRITER, &st[c], &err) < 0) die("PostgreSQL open", &err);
		if (!(g[c] = world_group_new(st[c], &err))) die("PostgreSQL group", &err);
	}
	static const char ibytes[] = "an interpreter's bytes";
	static const char src[] = "module sfix\nexport func main(input: string) -> string {\n  input\n}\n";
	/* distinct inputs in every row of every run on the same database */
	static long long next_n;
	if (!next_n) next_n = (long long)time(NULL) * 1000000;
	for (int c = 0; c < conns; c++) {
		if (world_hash_ref(ibytes, strlen(ibytes), a[c].f.interp, &err) < 0 ||
		    world_object_put(st[0], "world/transition-source/v1", "sfix", src, strlen(src), a[c].f.src, NULL, &err) < 0)
			die("PostgreSQL fixture", &err);
		a[c].f.n = next_n;
		next_n += n + 1;
	}
	long long n0;
	char h0[WORLD_REF_SIZE];
	if (world_log_last(st[0], &n0, h0, &err) < 0) die("PostgreSQL head", &err);
	int total = writers * conns;
	pthread_t *th = calloc((size_t)total, sizeof *th);
	struct writer *w = calloc((size_t)total, sizeof *w);
	if (!th || !w) die("out of memory", NULL);
	const char *pm = getenv("STORE_BENCH_PG_PID");
	long server = pm && *pm ? strtol(pm, NULL, 10) : 0;
	double s0 = server > 0 ? proc_tree_cpu_us(server) : -1;
	double c0 = bench_cpu_us();
	double t0 = bench_now_s();
	for (int i = 0; i < total; i++) {
		w[i] = (struct writer){ g[i % conns], &a[i % conns], n / total, 0, 1, 0 };
		if (pthread_create(&th[i], NULL, writer_main, &w[i]) != 0) die("pthread_create", NULL);
	}
	for (int i = 0; i < total; i++) pthread_join(th[i], NULL);
	double secs = bench_now_s() - t0;
	double cpu = bench_cpu_us() - c0;
	double s1 = s0 >= 0 ? proc_tree_cpu_us(server) : -1;
	*lost = 0;
	for (int i = 0; i < total; i++) {
		if (w[i].failed) die("PostgreSQL group append", NULL);
		*lost += w[i].nfailed;
	}
	long long done = 0, batches = 0;
	*races = 0;
	for (int c = 0; c < conns; c++) {
		long long b, d;
		world_group_stats(g[c], &b, &d, NULL);
		batches += b;
		done += d;
		*races += world_group_races(g[c]);
	}
	long long n1;
	if (world_log_last(st[0], &n1, h0, &err) < 0 || n1 - n0 != (n / total) * total - *lost)
		die("PostgreSQL: the log did not grow by every acknowledged append", &err);
	done -= *lost;
	gs->mean_batch = batches ? (double)done / (double)batches : 0;
	gs->cpu_us = done ? cpu / (double)done : 0;
	gs->server_us = s0 >= 0 && s1 >= s0 && done ? (s1 - s0) / (double)done : -1;
	for (int c = 0; c < conns; c++) {
		world_group_free(g[c]);
		world_store_close(st[c]);
	}
	free(th);
	free(w);
	return (double)done / secs;
}

/* SQLite alone: n rows of `bytes` bytes in one durable transaction. */
static double sqlite_bulk(const char *dir, long long n, int bytes)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/bulk.db", dir);
	/* a fresh table each run (a kept directory holds the last run's) */
	char side[4200];
	unlink(path);
	snprintf(side, sizeof side, "%s-wal", path);
	unlink(side);
	snprintf(side, sizeof side, "%s-shm", path);
	unlink(side);
	sqlite3 *db;
	sqlite3_stmt *s;
	if (sqlite3_open(path, &db) != SQLITE_OK ||
	    sqlite3_exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; CREATE TABLE t(k TEXT PRIMARY KEY, v BLOB)",
	                 NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "INSERT INTO t VALUES (?, ?)", -1, &s, NULL) != SQLITE_OK)
		die("sqlite bulk setup", NULL);
	char *blob = malloc((size_t)bytes);
	if (!blob) die("out of memory", NULL);
	memset(blob, 'x', (size_t)bytes);
	double t0 = bench_now_s();
	if (sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK) die("sqlite bulk begin", NULL);
	for (long long i = 0; i < n; i++) {
		char k[80];
		snprintf(k, sizeof k, "sha256:%064lld", i);
		memcpy(blob, k, strlen(k) < (size_t)bytes ? strlen(k) : (size_t)bytes);
		sqlite3_bind_text(s, 1, k, -1, SQLITE_TRANSIENT);
		sqlite3_bind_blob(s, 2, blob, bytes, SQLITE_STATIC);
		if (sqlite3_step(s) != SQLITE_DONE) die("sqlite bulk insert", NULL);
		sqlite3_reset(s);
	}
	if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) die("sqlite bulk commit", NULL);
	double r = n / (bench_now_s() - t0);
	sqlite3_finalize(s);
	sqlite3_close(db);
	free(blob);
	return r;
}

/* ---- scale ---- */

#define STORE_BENCH_FILL_BATCH 100000      /* calls per fill transaction */
#define STORE_BENCH_FILL_CACHE_KIB "-3145728" /* the fill's page cache: 3 GiB */

/* this process's CPU seconds (user + system): the machine is shared, so
 * the scan rows print them beside the wall clock */
/* The floor of a full scan: SQLite alone reading what the scan reads (every
 * object, entry and world, in storage order, and the journal's invocation
 * intents with their outcomes) and SHA-256 over the same bytes (each
 * payload, entry and world), on a fresh read-only connection. */
static double scan_floor(const char *db, double *cpu, double *mb)
{
	static const struct { const char *sql; int blob; } q[] = {
		{ "SELECT ref, semantic_id, payload FROM objects", 2 },
		{ "SELECT * FROM log_entries ORDER BY entry_index", 8 },
		{ "SELECT ref, revision, state_root, log_head, payload FROM worlds", 4 },
		{ "SELECT i.id, i.subject, i.ref, o.status, o.ref FROM journal AS i NOT INDEXED LEFT JOIN journal AS o "
		  "ON o.phase = 'outcome' AND o.intent_id = i.id WHERE i.phase = 'intent' AND i.kind = 'invocation'", -1 },
	};
	sqlite3 *h;
	if (sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) die("floor: open", NULL);
	double t0 = bench_now_s(), c0 = (bench_cpu_us() / 1e6);
	uint64_t bytes = 0;
	unsigned char d[32], x = 0;
	if (sqlite3_exec(h, "BEGIN", NULL, NULL, NULL) != SQLITE_OK) die("floor: begin", NULL);
	for (size_t i = 0; i < sizeof q / sizeof *q; i++) {
		sqlite3_stmt *s;
		if (sqlite3_prepare_v2(h, q[i].sql, -1, &s, NULL) != SQLITE_OK) die("floor: prepare", NULL);
		int rc;
		while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
			int nc = sqlite3_column_count(s);
			for (int c = 0; c < nc; c++) {
				if (c == q[i].blob) {
					const void *p = sqlite3_column_blob(s, c);
					size_t n = (size_t)sqlite3_column_bytes(s, c);
					if (world_sha256(p ? p : "", n, d, NULL) < 0) die("floor: sha256", NULL);
					bytes += n;
					x ^= d[0];
				} else if (sqlite3_column_type(s, c) == SQLITE_TEXT) {
					x ^= (unsigned char)sqlite3_column_bytes(s, c);
				}
			}
		}
		if (rc != SQLITE_DONE) die("floor: step", NULL);
		sqlite3_finalize(s);
	}
	sqlite3_exec(h, "COMMIT", NULL, NULL, NULL);
	sqlite3_close(h);
	*cpu = (bench_cpu_us() / 1e6) - c0;
	(void)x;
	*mb = (double)bytes / 1e6;
	return bench_now_s() - t0;
}

/* world_scan on a reader of its own, as `worldd scan` runs it (not the
 * filling connection, whose page cache holds the fill's pages) */
static void scan_reader(const char *db, const struct world_scan_opts *o, FILE *out, struct world_scan_result *r,
                        double *wall, double *cpu)
{
	struct world_store *rd;
	struct world_err err = { 0 };
	if (world_store_open(db, WORLD_STORE_READER, &rd, &err) < 0) die("open the scan store to read", &err);
	double t0 = bench_now_s(), c0 = (bench_cpu_us() / 1e6);
	if (world_scan(rd, o, out, r, &err) < 0) die("scan", &err);
	*wall = bench_now_s() - t0;
	*cpu = (bench_cpu_us() / 1e6) - c0;
	world_store_close(rd);
}

/* Open (creating) the scan store at db: a registry, the transition, the
 * bulk fixture on its last entry; the page cache of the fill. */
static void scan_store_open(struct ctest *t, struct sbulk *b, const char *db)
{
	struct world_err err = { 0 };
	if (world_store_open(db, WORLD_STORE_WRITER | WORLD_STORE_NOSYNC, &t->st, &err) < 0) die("open scan store", &err);
	const char *bin = getenv("AILANG_LITE");
	if (!bin) die("AILANG_LITE is not set (make bench sets it)", NULL);
	long long epoch;
	int created;
	if (world_archive_interpreter(t->st, bin, &t->interp, &err) < 0 ||
	    registry_epoch_bootstrap(t->st, &t->interp, &epoch, &created, &err) < 0)
		die("archive / epoch", &err);
	ctest_register(t, "t.seen", ctest_seen_source, "[]", "null", NULL);
	/* growing the fixture: its random SHA-256-keyed index pages stay in a
	 * large page cache (the default 2 MB spilled them to the WAL and read
	 * them back: 560 s for 10^6 entries) and are written once per batch */
	if (sqlite3_exec(world_store_db(t->st), "PRAGMA cache_size=" STORE_BENCH_FILL_CACHE_KIB, NULL, NULL, NULL) !=
	    SQLITE_OK)
		die("fill cache_size", NULL);
	memset(b, 0, sizeof *b);
	b->episode = "bench";
	if (sbulk_init(t->st, t->dir, b, &err) < 0) die("bulk fixture", &err);
	/* a kept store: its calls are numbered on from its last index, so
	 * their invocation ids are new */
	if (b->last > b->f.n) b->f.n = b->last;
}

static double run_median(char *const argv[], const char *what)
{
	double t[5];
	for (int i = 0; i < 5; i++)
		if ((t[i] = bench_run_once(argv, NULL, NULL, NULL)) < 0) {
			fprintf(stderr, "store_bench: %s failed\n", what);
			return -1;
		}
	return bench_pct(t, 5, 0.5);
}

static int parse_list(const char *s, long long *out, int max)
{
	int n = 0;
	while (s && *s && n < max) {
		char *end;
		long long v = strtoll(s, &end, 10);
		if (end == s || v < 1) return -1;
		out[n++] = v;
		s = *end == ',' ? end + 1 : end;
		if (*end && *end != ',') return -1;
	}
	return n;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: store_bench DIR [COMMITS [SIZES [WRITERS [WORLDD]]]]\n");
		return 2;
	}
	const char *dir = argv[1];
	long long n = argc > 2 ? atoll(argv[2]) : 4000;
	long long sizes[16], writers[16];
	int nsizes = parse_list(argc > 3 ? argv[3] : "10000,100000", sizes, 16);
	int nwriters = parse_list(argc > 4 ? argv[4] : "1,4,16,64,256", writers, 16);
	const char *worldd = argc > 5 ? argv[5] : getenv("WORLDD");
	if (n < 1 || nsizes < 1 || nwriters < 1) {
		fprintf(stderr, "store_bench: COMMITS, SIZES and WRITERS must be positive (lists comma-separated)\n");
		return 2;
	}

	double per = 0;
	double durable = commits(dir, "durable.db", WORLD_STORE_WRITER, n, &per);
	double plain = commits(dir, "durable-plain.db", WORLD_STORE_WRITER | WORLD_STORE_PLAIN_WAL, n, NULL);
	double nosync = commits(dir, "nosync.db", WORLD_STORE_WRITER | WORLD_STORE_NOSYNC, n, NULL);
	printf("commits: %lld single-entry commits (3 objects + entry + world + head each, %.0f bytes of database each)\n", n,
	       per);
	printf("  durable (WAL, synchronous=FULL):   %10.0f commits/s\n", durable);
	printf("  the same, SQLite's own WAL writes: %10.0f commits/s   (WAL frames gathered, store/walbuf.h: %.2fx)\n", plain,
	       durable / plain);
	printf("  not durable (synchronous=OFF):     %10.0f commits/s   (%.1fx the durable rate; the difference is fsync)\n",
	       nosync, nosync / durable);

	int row = per > 64 ? (int)per : 64;
	double floor = sqlite_bulk(dir, n, row);
	double sqlite_rows[16] = { 0 };
	printf("group commit (store/group.h): %lld verified appends (the same rows, index, chain and head checked in the "
	       "transaction), durable\n", n);
	for (int i = 0; i < nwriters; i++) {
		if (writers[i] > 4096) writers[i] = 4096;
		struct gstat gs = { 0 }, gp = { 0 };
		double r = grouped(dir, (int)writers[i], n, WORLD_STORE_WRITER, &gs);
		sqlite_rows[i] = r;
		double rp = grouped(dir, (int)writers[i], n, WORLD_STORE_WRITER | WORLD_STORE_PLAIN_WAL, &gp);
		printf("  %3lld writer thread(s):              %10.0f appends/s   (mean batch %.1f; %.2fx the single-commit rate; "
		       "%.3f of the floor)\n", writers[i], r, gs.mean_batch, r / durable, r / floor);
		printf("                                     per append: %.2f fsyncs, %.0f us CPU, %.1f WAL pages; "
		       "checkpoints %lld in the thread, %lld in a commit; %lld batches run again\n",
		       gs.mean_batch > 0 ? 1 / gs.mean_batch : 0, gs.cpu_us, gs.pages, gs.ckpt_bg, gs.ckpt_inline, gs.reruns);
		printf("      the same, SQLite's own WAL writes: %6.0f appends/s   (mean batch %.1f; %.0f us CPU per append; "
		       "gathering: %.2fx)\n", rp, gp.mean_batch, gp.cpu_us, r / rp);
	}
	printf("  floor: SQLite's own bulk insert of %lld rows of %d bytes (one durable transaction): %.0f rows/s\n", n, row,
	       floor);
	const char *pg_uri = getenv("STORE_BENCH_PG_URI");
	if (pg_uri && *pg_uri) {
#ifdef WORLD_HAVE_PG
		wdb_pg_enable();
		printf("group commit on PostgreSQL (a throwaway cluster on this machine, synchronous_commit=on; the same appends, "
		       "the fixed interpreter ref aside)\n");
		for (int i = 0; i < nwriters; i++)
			for (int conns = 1; conns <= 2; conns++) {
				struct gstat gs = { 0 };
				long long races = 0, lost = 0;
				double r = pg_grouped(pg_uri, (int)writers[i], conns, n, &gs, &races, &lost);
				char server[64] = "the server's CPU not read: STORE_BENCH_PG_PID unset";
				if (gs.server_us >= 0) snprintf(server, sizeof server, "%.0f us of the server's", gs.server_us);
				printf("  %3lld writer thread(s) x %d connection(s): %7.0f appends/s   (mean batch %.1f; CPU per append: "
				       "%.0f us of this process, %s; %lld batches run again after a lost race, %lld appends refused "
				       "after %d; %.2fx SQLite's %lld-thread row)\n",
				       writers[i], conns, r, gs.mean_batch, gs.cpu_us, server, races, lost, WS_GROUP_TRIES_PRINTED,
				       r / sqlite_rows[i], writers[i]);
			}
#else
		printf("group commit on PostgreSQL: skipped (built --without-postgresql)\n");
#endif
	} else {
		printf("group commit on PostgreSQL: skipped (%s)\n",
		       getenv("STORE_BENCH_PG_SKIP") ? getenv("STORE_BENCH_PG_SKIP") : "STORE_BENCH_PG_URI is not set");
	}

	/* the scan store (scan.db): grown through each size in turn; the
	 * largest size's store is kept as scan-N.db beside it and, when an
	 * earlier run in the same directory (STORE_BENCH_DIR) left it, used
	 * instead of growing one (10^6 entries: 4.6 GB, some 10 minutes here) */
	struct ctest t = { 0 };
	struct sbulk b;
	struct world_err err = { 0 };
	snprintf(t.dir, sizeof t.dir, "%s", dir);
	snprintf(t.db, sizeof t.db, "%s/scan.db", dir);
	long long top = 0;
	for (int i = 0; i < nsizes; i++)
		if (sizes[i] > top) top = sizes[i];
	char kept[sizeof t.db];
	if (snprintf(kept, sizeof kept, "%s/scan-%lld.db", dir, top) >= (int)sizeof kept) die("DIR is too long", NULL);
	int have_kept = access(kept, F_OK) == 0;
	scan_store_open(&t, &b, t.db);
	printf("scale: full scan with every hash (entries, worlds, the records, inputs, outputs, journal rows they name)\n");
	long long largest = 0;
	for (int i = 0; i < nsizes; i++) {
		if (sizes[i] == top && have_kept) {
			world_store_close(t.st);
			snprintf(t.db, sizeof t.db, "%s", kept);
			scan_store_open(&t, &b, t.db);
		}
		/* a store already larger than this size (a kept one, beyond the
		 * few entries each run adds on top): no row for it */
		if (b.last > sizes[i] + sizes[i] / 100 + 16) continue;
		double t0 = bench_now_s();
		if (b.last < sizes[i] && sbulk_fill(t.st, &b, sizes[i] - b.last, STORE_BENCH_FILL_BATCH, &err) < 0)
			die("fill", &err);
		double fs = bench_now_s() - t0;
		struct world_scan_opts o = { .max_rows = 0 };
		struct world_scan_result r;
		double s, sc;
		scan_reader(t.db, &o, stdout, &r, &s, &sc);
		long long rows = r.log_rows + r.world_rows;
		printf("  %8lld entries (%s %.1f s): %lld rows, %s, %.1f MB hashed in %.2f s (cpu %.2f s): %10.0f rows/s  "
		       "%6.1f MB/s\n",
		       b.last, fs < 0.05 ? "kept, grown in" : "grown in", fs, rows, r.holes ? "HOLES FOUND" : "clean",
		       (double)r.bytes_hashed / 1e6, s, sc, rows / s, (double)r.bytes_hashed / 1e6 / s);
		double fc, fmb, f = scan_floor(t.db, &fc, &fmb);
		printf("    floor: SQLite reading the same rows (objects, entries, worlds, journal) + SHA-256 of the same %.1f MB "
		       "in %.2f s (cpu %.2f s): %10.0f rows/s   (the scan: %.2f of the floor)\n",
		       fmb, f, fc, rows / f, f / s);
		largest = b.last;
	}
	if (!have_kept) {
		/* kept for the next run in this directory: scan.db becomes scan-N.db */
		world_store_close(t.st);
		char from[4300], to[4300];
		snprintf(from, sizeof from, "%s.artifacts", t.db);
		snprintf(to, sizeof to, "%s.artifacts", kept);
		if (rename(t.db, kept) < 0 || rename(from, to) < 0) {
			perror("store_bench: keep the scan store");
			return 1;
		}
		snprintf(t.db, sizeof t.db, "%s", kept);
		scan_store_open(&t, &b, t.db);
	}
	struct world_scan_opts so = { .max_rows = WORLD_SCAN_START_ROWS, .max_seconds = WORLD_SCAN_START_SECONDS };
	struct world_scan_result r;
	double sw, sc;
	scan_reader(t.db, &so, NULL, &r, &sw, &sc);
	printf("  start-up scan budget (%d rows, %.0f s) at %lld entries: %lld rows in %.3f s (cpu %.3f s), complete=%s\n",
	       WORLD_SCAN_START_ROWS, WORLD_SCAN_START_SECONDS, largest, r.log_rows + r.world_rows, sw, sc,
	       r.complete ? "yes" : "no");

	/* one real call on top, then why and replay of it, each a whole worldd process */
	char cred[65];
	const char *const g[] = { "Test.Echo=s:1", NULL };
	ctest_session(&t, "bench-call", g, 3600, cred);
	struct coord_config cfg = { .store = t.st, .written_by = "store_bench" };
	sup_limits_default(&cfg.limits);
	struct coordinator *c = coord_new(&cfg, &err);
	struct coord_session *s = NULL;
	if (!c || coord_session_open(c, cred, &s, &err) < 0) die("coordinator", &err);
	struct coord_call call = { .session = s, .channel = "cli", .skill_id = "t.seen", .task_id = "bench",
		                   .args = "{\"a\":1}", .args_len = 7 };
	struct coord_result res;
	if (coord_call(c, &call, &res, &err) < 0) die("call", &err);
	long long entry = res.entry_index;
	coord_result_free(&res);
	coord_session_free(s);
	coord_free(c);
	world_store_close(t.st);
	/* the fill's page cache (up to 3 GiB) is freed but stays mapped in the
	 * heap, and each timed fork below would copy its page tables (50 ms of
	 * `worldd --version` instead of 3): give it back first */
	malloc_trim(0);
	if (!worldd || !*worldd) {
		printf("  worldd why / replay: skipped (no worldd given: $WORLDD)\n");
		return 0;
	}
	char idx[32];
	snprintf(idx, sizeof idx, "%lld", entry);
	char *why[] = { (char *)worldd, "why", idx, "--store", t.db, NULL };
	char *rep[] = { (char *)worldd, "replay", idx, "--store", t.db, NULL };
	char *ver[] = { (char *)worldd, "--version", NULL };
	double tv = run_median(ver, "worldd --version");
	double tw = run_median(why, "worldd why");
	double tr = run_median(rep, "worldd replay");
	printf("  at %lld entries, entry %lld (a pure call through the coordinator), whole processes, median of 5:\n",
	       entry, entry);
	printf("    worldd why %lld:    %8.1f ms\n    worldd replay %lld: %8.1f ms   (a capsule runs the transition again)\n"
	       "    worldd --version: %8.1f ms   (the process alone)\n", entry, tw, entry, tr, tv);
	return tw < 0 || tr < 0 ? 1 : 0;
}
