/* tests/store/test_group.c: group commit (store/group.h). Concurrent
 * writers' verified appends all land, chained, each batch one transaction;
 * a write that fails in a batch is undone alone while the others of its
 * batch commit (the batch is made deterministic: the first write waits
 * until two more are queued behind it); a reader handle or an open
 * transaction is refused. */
#include "store/group.h"
#include "store/scan.h"
#include "store/store.h"
#include "tests/store/sfix.h"
#include "tests/tap.h"
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static struct sfix F;
static struct world_group *G;

/* output, input, record, then the next entry, as the store's own append path */
static int append_next(struct world_store *st, void *ctx, struct world_err *err)
{
	const char *expect = ctx; /* NULL: the current head */
	char out[128], rout[WORLD_REF_SIZE], rrec[WORLD_REF_SIZE], prev[WORLD_REF_SIZE], head[WORLD_REF_SIZE];
	int on = snprintf(out, sizeof out, "{\"answer\":%lld}", F.n + 1);
	if (world_object_put(st, "world/invocation-output/v1", "group", out, (size_t)on, rout, NULL, err) < 0 ||
	    sfix_record(st, &F, rout, 1, "g", rrec, err) < 0)
		return -1;
	long long idx;
	if (world_log_next(st, &idx, prev, head, err) < 0) return -1;
	struct world_log_append a = { idx, 1, F.src, F.interp, prev, "test_group", rrec, rout, expect ? expect : head };
	return world_log_append(st, &a, NULL, err);
}

struct writer { int n, failed; };

static void *writer_main(void *p)
{
	struct writer *w = p;
	struct world_err e;
	for (int i = 0; i < w->n; i++)
		if (world_group_run(G, append_next, NULL, &e) < 0) w->failed++;
	return NULL;
}

/* the first write of a batch: holds its batch open until two more wait */
static volatile int first_running;
static int wait_for_two(struct world_store *st, void *ctx, struct world_err *err)
{
	(void)ctx;
	__atomic_store_n(&first_running, 1, __ATOMIC_SEQ_CST);
	for (int i = 0; i < 1000; i++) {
		long long q = 0;
		world_group_stats(G, NULL, NULL, &q);
		if (q >= 2) break;
		struct timespec t = { 0, 10 * 1000 * 1000 };
		nanosleep(&t, NULL);
	}
	return append_next(st, NULL, err);
}

/* a write that goes on after a store call inside it failed: an object,
 * then an append on a wrong head (refused), then success */
static char tolerant_ref[WORLD_REF_SIZE];
static int tolerant(struct world_store *st, void *ctx, struct world_err *err)
{
	(void)ctx;
	static const char body[] = "{\"tolerant\":1}";
	if (world_object_put(st, "world/invocation-output/v1", "group", body, sizeof body - 1, tolerant_ref, NULL, err) < 0)
		return -1;
	static const char wrong[] = "sha256:2222222222222222222222222222222222222222222222222222222222222222";
	struct world_err ig;
	char prev[WORLD_REF_SIZE], head[WORLD_REF_SIZE];
	long long idx;
	if (world_log_next(st, &idx, prev, head, err) < 0) return -1;
	struct world_log_append a = { idx, 1, F.src, F.interp, prev, "test_group", tolerant_ref, tolerant_ref, wrong };
	if (world_log_append(st, &a, NULL, &ig) == 0) return werr(err, WX_FAIL, "the append on a wrong head was taken");
	return 0;
}

struct one { int (*fn)(struct world_store *, void *, struct world_err *); void *ctx; int rc; struct world_err e; };

static void *one_main(void *p)
{
	struct one *o = p;
	o->rc = world_group_run(G, o->fn, o->ctx, &o->e);
	return NULL;
}

static long long q1(struct world_store *st, const char *sql)
{
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(world_store_db(st), sql, -1, &s, NULL) != SQLITE_OK) return -1;
	long long n = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int64(s, 0) : -1;
	sqlite3_finalize(s);
	return n;
}

int main(void)
{
	const char *tmp = getenv("TMPDIR");
	char dir[256], db[300];
	snprintf(dir, sizeof dir, "%s/world-group.XXXXXX", tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) bail("mkdtemp");
	snprintf(db, sizeof db, "%s/world.db", dir);
	struct world_store *st;
	struct world_err e;
	if (world_store_open(db, WORLD_STORE_WRITER, &st, &e) < 0 || sfix_init(st, dir, &F, &e) < 0) bail("open: %s", e.msg);

	/* refusals */
	struct world_store *rd;
	if (world_store_open(db, WORLD_STORE_READER, &rd, &e) < 0) bail("reader: %s", e.msg);
	ok(!world_group_new(rd, &e) && e.code == WX_USAGE, "a reader handle gets no group (%s)", e.msg);
	world_store_close(rd);
	if (world_store_begin(st, &e) < 0) bail("begin: %s", e.msg);
	ok(!world_group_new(st, &e) && e.code == WX_USAGE, "nor a handle inside a transaction (%s)", e.msg);
	world_store_rollback(st);

	G = world_group_new(st, &e);
	if (!G) bail("group: %s", e.msg);
	enum { W = 8, K = 25 };
	pthread_t th[W];
	struct writer w[W];
	for (int i = 0; i < W; i++) {
		w[i] = (struct writer){ K, 0 };
		if (pthread_create(&th[i], NULL, writer_main, &w[i]) != 0) bail("pthread_create");
	}
	int failed = 0;
	for (int i = 0; i < W; i++) {
		pthread_join(th[i], NULL);
		failed += w[i].failed;
	}
	long long batches, writes;
	world_group_stats(G, &batches, &writes, NULL);
	is_int(failed, 0, "%d writer threads x %d appends: none failed", W, K);
	is_int(writes, W * K, "... %d writes run", W * K);
	ok(batches >= 1 && batches <= writes, "... in %lld batches", batches);
	is_int(q1(st, "SELECT count(*) FROM log_entries"), W * K, "... %d entries in the log", W * K);
	struct world_scan_opts so = { .max_rows = 0 };
	struct world_scan_result sr;
	int src = world_scan(st, &so, stderr, &sr, &e);
	ok(src == 0 && sr.complete && sr.holes == 0 && sr.log_rows == W * K, "... chained and clean: the full scan finds no hole");
	is_int(world_group_reruns(G), 0, "... every batch committed from its first run (no savepoints: nothing failed)");

	/* one batch: a waiting write, a failing one, a good one */
	long long b0, w0;
	world_group_stats(G, &b0, &w0, NULL);
	long long objs = q1(st, "SELECT count(*) FROM objects");
	static const char wrong[] = "sha256:1111111111111111111111111111111111111111111111111111111111111111";
	struct one first = { wait_for_two, NULL, 0, { 0 } }, bad = { append_next, (void *)wrong, 0, { 0 } },
	           good = { append_next, NULL, 0, { 0 } };
	pthread_t t1, t2, t3;
	if (pthread_create(&t1, NULL, one_main, &first) != 0) bail("pthread_create");
	/* until the first runs: its batch has started without the others */
	for (int i = 0; i < 10000 && !__atomic_load_n(&first_running, __ATOMIC_SEQ_CST); i++) usleep(1000);
	if (pthread_create(&t2, NULL, one_main, &bad) != 0 || pthread_create(&t3, NULL, one_main, &good) != 0)
		bail("pthread_create");
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	pthread_join(t3, NULL);
	long long b1, w1;
	world_group_stats(G, &b1, &w1, NULL);
	ok(first.rc == 0, "the first write committed");
	ok(bad.rc < 0 && bad.e.code == WX_CONFLICT, "the write with a wrong expected head failed: %s", bad.e.msg);
	ok(good.rc == 0, "the good write queued with it committed");
	is_int(b1 - b0, 2, "two batches: the first write's, then the failing and the good one together");
	is_int(q1(st, "SELECT count(*) FROM log_entries"), W * K + 2, "two more entries");
	/* 3 objects each for the two committed writes; the failed one's three are undone */
	is_int(q1(st, "SELECT count(*) FROM objects") - objs, 6, "the failed write's objects were undone with it, alone");
	is_int(world_group_reruns(G), 1, "that batch ran a second time, with a savepoint for each write");
	src = world_scan(st, &so, stderr, &sr, &e);
	ok(src == 0 && sr.complete && sr.holes == 0, "the log is still clean");

	/* a write that survives a failed store call inside it: its first run
	 * cannot stand (the failed call wrote without a savepoint), so the
	 * batch runs again and keeps what the write kept */
	long long entries = q1(st, "SELECT count(*) FROM log_entries");
	struct one tol = { tolerant, NULL, 0, { 0 } };
	one_main(&tol);
	ok(tol.rc == 0, "a write going on after its append was refused succeeded");
	is_int(world_group_reruns(G), 2, "... its batch ran again with savepoints");
	ok(world_object_exists(st, tolerant_ref, &e) == 1, "... its object is committed");
	is_int(q1(st, "SELECT count(*) FROM log_entries"), entries, "... and no entry of the refused append");
	/* control: the same good write alone commits from its first run */
	struct one again = { append_next, NULL, 0, { 0 } };
	one_main(&again);
	ok(again.rc == 0, "control: a good write alone commits");
	is_int(world_group_reruns(G), 2, "... from its batch's first run");
	src = world_scan(st, &so, stderr, &sr, &e);
	ok(src == 0 && sr.complete && sr.holes == 0, "the log is clean");

	world_group_free(G);
	world_store_close(st);
	char cmd[600];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0) diag("cleanup of %s failed", dir);
	return done_testing();
}
