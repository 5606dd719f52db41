/* store/group.c: see group.h. */
#include "store/group.h"
#include "store/store_internal.h"
#include "common/pause.h"
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

struct gjob {
	int (*fn)(struct world_store *st, void *ctx, struct world_err *err);
	void *ctx;
	struct world_err err;
	int rc, done;
	struct gjob *next;
};

struct world_group {
	struct world_store *st;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct gjob *head, **tail;
	int leading;            /* a batch is being run */
	long long batches, writes, reruns;
	atomic_llong races; /* batches run again whole after losing a race (PostgreSQL) */
};

struct world_group *world_group_new(struct world_store *st, struct world_err *err)
{
	if (ws_need_writer(st, "group commit", err) < 0) return NULL;
	if (st->in_txn) {
		werr(err, WX_USAGE, "group commit: store %s has a transaction open", st->path);
		return NULL;
	}
	/* a batch's COMMIT no longer copies the WAL back itself (SQLite's;
	 * PostgreSQL's server checkpoints on its own) */
	if (st->kind == WDB_SQLITE && world_store_checkpoint_thread(st, err) < 0) return NULL;
	struct world_group *g = calloc(1, sizeof *g);
	if (!g) {
		werr(err, WX_FAIL, "group commit: out of memory");
		return NULL;
	}
	g->st = st;
	g->tail = &g->head;
	atomic_init(&g->races, 0);
	pthread_mutex_init(&g->mu, NULL);
	pthread_cond_init(&g->cv, NULL);
	return g;
}

void world_group_free(struct world_group *g)
{
	if (!g) return;
	pthread_cond_destroy(&g->cv);
	pthread_mutex_destroy(&g->mu);
	free(g);
}

static void fail_all(struct gjob *batch, const struct world_err *e)
{
	for (struct gjob *j = batch; j; j = j->next) {
		j->rc = -1;
		j->err = *e;
	}
}

/* The first run: every write straight into the batch's transaction, no
 * savepoint (a savepoint costs a statement and a copy of each page it
 * changes). Returns 0 when every write succeeded and nothing inside them
 * was undone (each job's rc is then 0; the transaction is still open), 1
 * when one failed (the transaction is rolled back: nothing of the run
 * stays), -1 when the transaction could not begin (every job answered). */
static int run_flat(struct world_store *st, struct gjob *batch)
{
	struct world_err e = { 0 };
	if (world_store_begin(st, &e) < 0) {
		fail_all(batch, &e);
		return -1;
	}
	st->sp_flat = 1;
	unsigned long undone = st->sp_undone;
	int failed = 0;
	for (struct gjob *j = batch; j && !failed; j = j->next) {
		j->err = (struct world_err){ 0 };
		j->rc = j->fn(st, j->ctx, &j->err) < 0 ? -1 : 0;
		/* a write that failed, or one a caller's fn survived (a store
		 * call undone inside it): the run as a whole cannot stand */
		failed = j->rc < 0 || st->sp_undone != undone;
	}
	st->sp_flat = 0;
	if (!failed) return 0;
	world_store_rollback(st);
	return 1;
}

/* The run again, each write in a savepoint of its own: a write that fails
 * is undone alone and answered with its error; the others stand. Returns
 * with the transaction open when one stood, else rolled back. */
static int run_savepoints(struct world_store *st, struct gjob *batch)
{
	struct world_err e = { 0 };
	if (world_store_begin(st, &e) < 0) {
		fail_all(batch, &e);
		return -1;
	}
	int any = 0;
	for (struct gjob *j = batch; j; j = j->next) {
		j->err = (struct world_err){ 0 };
		j->rc = ws_exec(st, "SAVEPOINT wg", &j->err);
		if (j->rc == 0) j->rc = j->fn(st, j->ctx, &j->err) < 0 ? -1 : 0;
		struct world_err ig;
		if (j->rc < 0) ws_exec(st, "ROLLBACK TO wg", &ig);
		if (ws_exec(st, "RELEASE wg", j->rc < 0 ? &ig : &j->err) < 0 && j->rc == 0) j->rc = -1;
		if (j->rc == 0) any = 1;
	}
	if (!any) {
		world_store_rollback(st);
		return -1;
	}
	return 0;
}

/* Every write of a batch that lost its race and may not run again that
 * did not fail on its own is answered WX_LOCKED (its caller may try
 * again; nothing of the batch was committed). */
static void lost_race(struct world_store *st, struct gjob *batch, int tries)
{
	for (struct gjob *j = batch; j; j = j->next)
		if (j->rc == 0) {
			j->rc = -1;
			werr(&j->err, WX_LOCKED, "store %s: group commit: the batch lost a race with another writer's "
			                         "transaction %d time(s); nothing of it was committed", st->path, tries + 1);
		}
}

/* One transaction for the whole batch, one COMMIT (one fsync). On
 * PostgreSQL a batch that lost a race with another writer's transaction
 * (a serialization failure, WDB_RETRY, at any write or at the COMMIT) is
 * rolled back whole and run again from its first write, after a jittered
 * nap, up to WS_WRITE_RETRIES times (ws_write_retry): each write's fn runs
 * again then, which world_group_run's contract allows. SQLite never needs
 * it: the batch's BEGIN IMMEDIATE holds the write lock from the start. */
static void run_batch(struct world_group *g, struct gjob *batch, int *rerun)
{
	struct world_store *st = g->st;
	for (int tries = 0;; tries++) {
		if (tries) atomic_fetch_add(&g->races, 1);
		for (struct gjob *j = batch; j; j = j->next) {
			j->rc = 0;
			j->err = (struct world_err){ 0 };
		}
		st->retry_seen = 0;
		int rc = run_flat(st, batch);
		int pg = st->kind == WDB_PG; /* SQLite's BEGIN IMMEDIATE never loses a race */
		if (pg && rc == 1 && st->retry_seen) {
			/* lost a race: run again whole, or answer it (not again
			 * with savepoints: that would be a retry past the bound) */
			if (ws_write_retry(st, tries)) continue;
			lost_race(st, batch, tries);
			return;
		}
		*rerun |= rc == 1;
		if (rc == 1) {
			st->retry_seen = 0;
			rc = run_savepoints(st, batch);
			if (pg && st->retry_seen) {
				/* a write of it lost the race: so does the COMMIT */
				world_store_rollback(st);
				if (ws_write_retry(st, tries)) continue;
				lost_race(st, batch, tries);
				return;
			}
		}
		if (rc < 0) return;
		world_pause("store.group_commit");
		struct world_err e = { 0 };
		st->retry_seen = 0;
		if (world_store_commit(st, &e) < 0) {
			if (st->retry_seen && ws_write_retry(st, tries)) continue;
			for (struct gjob *j = batch; j; j = j->next)
				if (j->rc == 0) {
					j->rc = -1;
					j->err = e;
				}
		}
		return;
	}
}

int world_group_run(struct world_group *g, int (*fn)(struct world_store *st, void *ctx, struct world_err *err),
                    void *ctx, struct world_err *err)
{
	struct gjob j = { .fn = fn, .ctx = ctx };
	pthread_mutex_lock(&g->mu);
	*g->tail = &j;
	g->tail = &j.next;
	while (!j.done) {
		if (g->leading) {
			pthread_cond_wait(&g->cv, &g->mu);
			continue;
		}
		/* lead: take everything queued (this job among it) */
		g->leading = 1;
		struct gjob *batch = g->head;
		g->head = NULL;
		g->tail = &g->head;
		pthread_mutex_unlock(&g->mu);
		int rerun = 0;
		run_batch(g, batch, &rerun);
		pthread_mutex_lock(&g->mu);
		g->batches++;
		g->reruns += rerun;
		for (struct gjob *b = batch, *next; b; b = next) {
			next = b->next; /* b's owner may return as soon as it sees done */
			g->writes++;
			b->done = 1;
		}
		g->leading = 0;
		pthread_cond_broadcast(&g->cv);
	}
	pthread_mutex_unlock(&g->mu);
	if (j.rc < 0 && err) *err = j.err;
	return j.rc;
}

void world_group_stats(struct world_group *g, long long *batches, long long *writes, long long *queued)
{
	pthread_mutex_lock(&g->mu);
	if (batches) *batches = g->batches;
	if (writes) *writes = g->writes;
	long long n = 0;
	for (struct gjob *j = g->head; j; j = j->next) n++;
	if (queued) *queued = n;
	pthread_mutex_unlock(&g->mu);
}

long long world_group_reruns(struct world_group *g)
{
	pthread_mutex_lock(&g->mu);
	long long n = g->reruns;
	pthread_mutex_unlock(&g->mu);
	return n;
}

long long world_group_races(struct world_group *g) { return atomic_load(&g->races); }
