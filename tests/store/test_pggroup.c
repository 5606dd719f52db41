/* tests/store/test_pggroup.c: group commit (store/group.h) on PostgreSQL
 * (WORLD_TEST_PG_URI, a throwaway cluster started by tests/store/pggroup.sh).
 *   1. The lost race, made deterministic: group A's batch is held at the
 *      pause point store.group_commit (written, not committed) while group
 *      B's batch, on its own connection, waits on A's rows (seen waiting in
 *      pg_stat_activity); A commits, B's transaction then fails with a
 *      serialization failure, and B's batch is run again whole and commits
 *      on top of A's entry: both appends acknowledged, one chain. The
 *      control, the retry off (WORLD_TEST_PG_RETRIES=0, test builds), gives
 *      B's caller exit 5 and leaves A's entry alone at the head.
 *      And as every writer runs, with the store's write queue (a LOCK
 *      TABLE sent with BEGIN, store/db_pg_store.c): B's batch waits in it
 *      for A's, then commits with no lost race, one chain.
 *   2. Load: 8 threads on each of two groups (two connections), 15
 *      appends each, every one acknowledged and in the log once, the chain
 *      whole (each entry's prevEntryHash the entry before's hash).
 * Without WORLD_TEST_PG_URI (no postgresql-15) every assertion is skipped
 * with the reason. */
#include "store/db.h"
#include "store/group.h"
#include "common/pause.h"
#include "common/ref.h"
#include "store/store.h"
#include "tests/store/sfix.h"
#include "tests/tap.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* One append of a new call on top of whatever the head is (the store's
 * checks all made inside the batch's transaction). */
static int append_one(struct world_store *st, void *ctx, struct world_err *err)
{
	struct world_log_result r;
	return sfix_append_unarchived(st, "group", ctx, "test_pggroup", &r, err);
}

/* the hold: a thread that set hold_me stops at store.group_commit until released */
static __thread int hold_me;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int held, released;

static void hook(void *ctx, const char *name)
{
	(void)ctx;
	if (!hold_me || strcmp(name, "store.group_commit") != 0) return;
	pthread_mutex_lock(&mu);
	held = 1;
	pthread_cond_broadcast(&cv);
	while (!released) pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
	hold_me = 0;
}

struct job {
	struct world_group *g;
	const char *tag;
	int hold, n, rc, code, failed;
	char msg[1024];
};

static void *run_job(void *p)
{
	struct job *j = p;
	hold_me = j->hold;
	for (int i = 0; i < j->n; i++) {
		struct world_err e = { 0, "" };
		char tag[64];
		snprintf(tag, sizeof tag, "%s-%d", j->tag, i);
		/* tag lives on: world_group_run returns once its batch has run (on whichever thread led it) */
		j->rc = world_group_run(j->g, append_one, tag, &e);
		if (j->rc < 0) {
			j->failed++;
			j->code = e.code;
			snprintf(j->msg, sizeof j->msg, "%s", e.msg);
		}
	}
	return NULL;
}

/* the log from entry 1 to the head: 1 when every entry's prev is the one before's hash */
static int chain_whole(struct world_store *st, long long *n)
{
	struct world_err e = { 0, "" };
	char head[WORLD_REF_SIZE], prev[WORLD_REF_SIZE] = "";
	if (world_log_last(st, n, head, &e) < 0) return 0;
	for (long long i = 1; i <= *n; i++) {
		struct world_log_entry le;
		if (world_log_get(st, i, &le, &e) < 0) return 0;
		int linked = strcmp(le.prev_entry_hash, prev) == 0;
		memcpy(prev, le.entry_hash, WORLD_REF_SIZE);
		world_log_entry_free(&le);
		if (!linked) return 0;
	}
	return strcmp(prev, head) == 0;
}

/* queue 0: the store's write queue left out (WORLD_TEST_PG_NO_QUEUE=1),
 * so that B's batch collides with A's; queue 1: as every writer runs, B's
 * batch waits in the queue for A's and then commits with no lost race */
static void lost_race(const char *uri, int retries_off, int queue)
{
	struct world_err err = { 0, "" };
	struct world_store *a = NULL, *b = NULL;
	struct wdb *watch = NULL;
	static const struct wdb_opts wo = { 0 };
	const char *what = queue ? "queued" : retries_off ? "control, retry off" : "retry on";
	if (retries_off) setenv("WORLD_TEST_PG_RETRIES", "0", 1);
	else unsetenv("WORLD_TEST_PG_RETRIES");
	if (queue) unsetenv("WORLD_TEST_PG_NO_QUEUE");
	else setenv("WORLD_TEST_PG_NO_QUEUE", "1", 1);
	if (world_store_open(uri, WORLD_STORE_WRITER, &a, &err) < 0 || world_store_open(uri, WORLD_STORE_WRITER, &b, &err) < 0 ||
	    wdb_open(uri, &wo, &watch, &err) < 0)
		bail("%s: open: %s", what, err.msg);
	struct world_group *ga = world_group_new(a, &err), *gb = ga ? world_group_new(b, &err) : NULL;
	if (!gb) bail("%s: group: %s", what, err.msg);
	long long n0 = 0;
	char h0[WORLD_REF_SIZE];
	if (world_log_last(a, &n0, h0, &err) < 0) bail("%s: head: %s", what, err.msg);
	held = released = 0;
	struct job ja = { ga, queue ? "q-a" : retries_off ? "ctl-a" : "a", 1, 1, 0, 0, 0, "" };
	struct job jb = { gb, queue ? "q-b" : retries_off ? "ctl-b" : "b", 0, 1, 0, 0, 0, "" };
	pthread_t ta, tb;
	if (pthread_create(&ta, NULL, run_job, &ja) != 0) bail("pthread_create");
	pthread_mutex_lock(&mu);
	while (!held) pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
	/* A's writes are sent without waiting for their answers (the driver's
	 * pipeline, store/db.h): held, A has sent them; B starts once A's
	 * server process has run them, i.e. waits for A's next message
	 * (bounded: 3000 looks 10 ms apart) */
	for (int i = 0; i < 3000; i++) {
		struct wdb_stmt *q = NULL;
		int64_t busy = -1;
		if (wdb_prepare(watch, "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND "
		                       "pid <> pg_backend_pid() AND xact_start IS NOT NULL AND wait_event IS DISTINCT FROM 'ClientRead'",
		                &q, &err) == 0 &&
		    wdb_step(q, &err) == WDB_ROW)
			busy = wdb_column_int64(q, 0, NULL);
		wdb_finalize(q);
		if (busy == 0) break;
		usleep(10000);
	}
	if (pthread_create(&tb, NULL, run_job, &jb) != 0) bail("pthread_create");
	/* until B's batch waits on A's rows (bounded: 3000 looks 10 ms apart) */
	int waiting = 0;
	for (int i = 0; i < 3000 && !waiting; i++) {
		struct wdb_stmt *q = NULL;
		if (wdb_prepare(watch, "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'", &q, &err) == 0 &&
		    wdb_step(q, &err) == WDB_ROW)
			waiting = wdb_column_int64(q, 0, NULL) > 0;
		wdb_finalize(q);
		if (!waiting) usleep(10000);
	}
	ok(waiting, "%s: B's batch waits on A's %s while A's batch is held before its COMMIT", what,
	   queue ? "place in the write queue (its LOCK TABLE)" : "rows");
	pthread_mutex_lock(&mu);
	released = 1;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	long long n = 0;
	int whole = chain_whole(a, &n);
	ok(ja.rc == 0, "%s: A's append committed: %s", what, ja.msg);
	if (queue) {
		ok(jb.rc == 0 && world_group_races(gb) == 0,
		   "queued: B's batch began after A's commit and committed with no lost race (%lld): %s", world_group_races(gb),
		   jb.msg);
		ok(whole && n == n0 + 2, "queued: ... one chain: %lld entries, A's and B's on top of %lld", n, n0);
	} else if (!retries_off) {
		ok(jb.rc == 0 && world_group_races(gb) >= 1,
		   "B's batch lost the race, was run again whole (%lld times) and committed: %s", world_group_races(gb), jb.msg);
		ok(whole && n == n0 + 2, "... one chain: %lld entries, A's and B's on top of %lld", n, n0);
	} else {
		ok(jb.rc < 0 && jb.code == WX_LOCKED && world_group_races(gb) == 0,
		   "control: without the retry B's caller gets exit %d: %s", jb.code, jb.msg);
		ok(whole && n == n0 + 1, "control: ... and A's entry alone is on top (%lld entries, from %lld)", n, n0);
	}
	unsetenv("WORLD_TEST_PG_RETRIES");
	unsetenv("WORLD_TEST_PG_NO_QUEUE");
	world_group_free(ga);
	world_group_free(gb);
	wdb_close(watch);
	world_store_close(a);
	world_store_close(b);
}

static void load(const char *uri)
{
	struct world_err err = { 0, "" };
	struct world_store *a = NULL, *b = NULL;
	if (world_store_open(uri, WORLD_STORE_WRITER, &a, &err) < 0 || world_store_open(uri, WORLD_STORE_WRITER, &b, &err) < 0)
		bail("load: open: %s", err.msg);
	struct world_group *g[2] = { world_group_new(a, &err), NULL };
	if (g[0]) g[1] = world_group_new(b, &err);
	if (!g[1]) bail("load: group: %s", err.msg);
	long long n0 = 0;
	char h0[WORLD_REF_SIZE];
	if (world_log_last(a, &n0, h0, &err) < 0) bail("load: head: %s", err.msg);
	enum { THREADS = 8, EACH = 15 };
	static struct job jobs[2 * THREADS];
	static char tags[2 * THREADS][32];
	pthread_t th[2 * THREADS];
	for (int i = 0; i < 2 * THREADS; i++) {
		snprintf(tags[i], sizeof tags[i], "load%d", i);
		jobs[i] = (struct job){ g[i % 2], tags[i], 0, EACH, 0, 0, 0, "" };
		if (pthread_create(&th[i], NULL, run_job, &jobs[i]) != 0) bail("pthread_create");
	}
	int failed = 0;
	for (int i = 0; i < 2 * THREADS; i++) {
		pthread_join(th[i], NULL);
		failed += jobs[i].failed;
		if (jobs[i].failed) diag("load: %s: exit %d: %s", tags[i], jobs[i].code, jobs[i].msg);
	}
	long long n = 0;
	int whole = chain_whole(a, &n);
	long long races = world_group_races(g[0]) + world_group_races(g[1]), b0, b1;
	world_group_stats(g[0], &b0, NULL, NULL);
	world_group_stats(g[1], &b1, NULL, NULL);
	is_int(failed, 0, "load: %d threads on two groups (two connections), %d appends each: none failed", 2 * THREADS, EACH);
	ok(whole && n == n0 + 2 * THREADS * EACH,
	   "load: ... all %d in the log once, one chain (%lld entries; %lld batches, %lld run again after a lost race)",
	   2 * THREADS * EACH, n - n0, b0 + b1, races);
	world_group_free(g[0]);
	world_group_free(g[1]);
	world_store_close(a);
	world_store_close(b);
}

int main(void)
{
	const char *uri = getenv("WORLD_TEST_PG_URI");
#ifdef WORLD_HAVE_PG
	wdb_pg_enable();
#else
	uri = NULL; /* built --without-postgresql */
#endif
	if (!WORLD_PAUSE_COMPILED || !uri || !*uri) {
		const char *why = !WORLD_PAUSE_COMPILED ? "the held batch needs --enable-test-hooks"
		                  : getenv("WORLD_TEST_PG_SKIP") ? getenv("WORLD_TEST_PG_SKIP")
		                                                 : "WORLD_TEST_PG_URI is not set";
		for (int i = 0; i < 11; i++) skip(why, "group commit on PostgreSQL %d", i);
		return done_testing();
	}
	world_pause_set_hook(hook, NULL);
	lost_race(uri, 0, 0);
	lost_race(uri, 1, 0);
	lost_race(uri, 0, 1);
	world_pause_set_hook(NULL, NULL);
	load(uri);
	return done_testing();
}
