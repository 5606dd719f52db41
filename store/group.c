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
	struct world_group_hooks hooks;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct gjob *head, **tail;
	int leading;            /* a batch is being run */
	long long batches, writes, reruns;
	atomic_llong races; /* batches run again whole after losing a race (PostgreSQL) */
};

struct world_group *world_group_new_hooks(struct world_store *st, const struct world_group_hooks *h,
                                          struct world_err *err)
{
	if (ws_need_writer(st, "group commit", err) < 0) return NULL;
	if (st->in_txn) {
		werr(err, WX_USAGE, "group commit: store %s has a transaction open", st->path);
		return NULL;
	}
	/* a batch's COMMIT does not copy the WAL back itself: the engine's
	 * checkpoints run off the commit path, where it has them (SQLite; a
	 * PostgreSQL server checkpoints on its own) */
	if (world_store_checkpoint_thread(st, err) < 0) return NULL;
	struct world_group *g = calloc(1, sizeof *g);
	if (!g) {
		werr(err, WX_FAIL, "group commit: out of memory");
		return NULL;
	}
	g->st = st;
	if (h) g->hooks = *h;
	g->tail = &g->head;
	atomic_init(&g->races, 0);
	pthread_mutex_init(&g->mu, NULL);
	pthread_cond_init(&g->cv, NULL);
	return g;
}

struct world_group *world_group_new(struct world_store *st, struct world_err *err)
{
	return world_group_new_hooks(st, NULL, err);
}

void world_group_free(struct world_group *g)
{
	if (!g) return;
	pthread_cond_destroy(&g->cv);
	pthread_mutex_destroy(&g->mu);
	free(g);
}

/* Every write of the batch but skip gets e. */
static void fail_all(struct gjob *batch, const struct gjob *skip, const struct world_err *e)
{
	for (struct gjob *j = batch; j; j = j->next)
		if (j != skip) {
			j->rc = -1;
			j->err = *e;
		}
}

/* A transaction for the batch, its caller told (hooks.begun). */
static int begin(struct world_group *g, struct world_err *e)
{
	if (world_store_begin(g->st, e) < 0) return -1;
	if (g->hooks.begun) g->hooks.begun(g->hooks.ctx);
	return 0;
}

/* The first run, in the open transaction: every write straight in it, no
 * savepoint. Returns 0 when every write succeeded and nothing inside them
 * was undone (each job's rc is then 0; the transaction is still open), 1
 * when the run cannot stand (rolled back: nothing of it stays). *failed is
 * then the write the run stopped at when the blame is its alone -- no
 * store call inside a write before it was undone (such a write went on
 * over rows a savepoint would have removed) -- else NULL. */
static int run_flat(struct world_store *st, struct gjob *batch, struct gjob **failed)
{
	*failed = NULL;
	world_store_flat_begin(st);
	unsigned long undone = st->sp_undone;
	int bad = 0;
	for (struct gjob *j = batch; j && !bad; j = j->next) {
		int clean = st->sp_undone == undone;
		j->err = (struct world_err){ 0 };
		j->rc = j->fn(st, j->ctx, &j->err) < 0 ? -1 : 0;
		if (j->rc < 0 && clean) *failed = j;
		/* a write that failed, or one that survived a store call
		 * undone inside it: the run as a whole cannot stand */
		bad = j->rc < 0 || st->sp_undone != undone;
	}
	if (world_store_flat_end(st)) bad = 1;
	if (!bad) return 0;
	world_store_rollback(st);
	return 1;
}

/* The run again, in the open transaction, each write but failed (which
 * keeps the answer the first run gave it) in a savepoint of its own: a
 * write that fails is undone alone and answered with its error; the
 * others stand. Returns 0 with the transaction open when one stood, else
 * -1 with it rolled back. */
static int run_savepoints(struct world_store *st, struct gjob *batch, const struct gjob *failed)
{
	int any = 0;
	for (struct gjob *j = batch; j; j = j->next) {
		if (j == failed) continue;
		j->err = (struct world_err){ 0 };
		j->rc = world_store_savepoint(st, WORLD_SP_BEGIN, &j->err);
		if (j->rc == 0) j->rc = j->fn(st, j->ctx, &j->err) < 0 ? -1 : 0;
		struct world_err ig;
		if (j->rc < 0) world_store_savepoint(st, WORLD_SP_ROLLBACK, &ig);
		if (world_store_savepoint(st, WORLD_SP_RELEASE, j->rc < 0 ? &ig : &j->err) < 0 && j->rc == 0) j->rc = -1;
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

/* One transaction for the whole batch, one COMMIT (one fsync); its first
 * transaction is open when this is called. On PostgreSQL a batch that
 * lost a race with another writer's transaction (a serialization failure,
 * WDB_RETRY, at any write or at the COMMIT) is rolled back whole and run
 * again from its first write, after a jittered nap, up to
 * WS_WRITE_RETRIES times (ws_write_retry): each write's fn runs again
 * then, which world_group_run's contract allows. SQLite never needs it:
 * the batch's BEGIN IMMEDIATE holds the write lock from the start. */
static void run_batch(struct world_group *g, struct gjob *batch, int *rerun)
{
	struct world_store *st = g->st;
	int can_race = ws_can(st, WS_CAP_RETRY); /* SQLite's BEGIN IMMEDIATE never loses a race */
	for (int tries = 0;; tries++) {
		for (struct gjob *j = batch; j; j = j->next) {
			j->rc = 0;
			j->err = (struct world_err){ 0 };
		}
		if (tries) {
			atomic_fetch_add(&g->races, 1);
			struct world_err e = { 0 };
			st->retry_seen = 0;
			if (begin(g, &e) < 0) {
				fail_all(batch, NULL, &e);
				return;
			}
		}
		struct gjob *failed;
		int rc = run_flat(st, batch, &failed);
		if (can_race && rc == 1 && st->retry_seen) {
			/* lost a race: run again whole, or answer it (not again
			 * with savepoints: that would be a retry past the bound) */
			if (ws_write_retry(st, tries)) continue;
			lost_race(st, batch, tries);
			return;
		}
		if (rc == 1) {
			int others = 0;
			for (struct gjob *j = batch; j; j = j->next) others |= j != failed;
			if (!others) return; /* the batch's one write failed: its answer stands */
			*rerun = 1;
			struct world_err e = { 0 };
			st->retry_seen = 0;
			if (begin(g, &e) < 0) {
				fail_all(batch, failed, &e);
				return;
			}
			rc = run_savepoints(st, batch, failed);
			if (can_race && st->retry_seen) {
				/* a write of it lost the race: so does the COMMIT */
				world_store_rollback(st);
				if (ws_write_retry(st, tries)) continue;
				lost_race(st, batch, tries);
				return;
			}
			if (rc < 0) return;
		}
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
	if (g->leading && g->hooks.queued) {
		/* queued behind a batch being run: the next batch may take it */
		pthread_mutex_unlock(&g->mu);
		g->hooks.queued(g->hooks.ctx);
		pthread_mutex_lock(&g->mu);
	}
	while (!j.done) {
		if (g->leading) {
			pthread_cond_wait(&g->cv, &g->mu);
			continue;
		}
		/* lead: this job is queued and nobody else takes the queue
		 * until leading drops, so the batch taken below holds it */
		g->leading = 1;
		pthread_mutex_unlock(&g->mu);
		if (g->hooks.lead) g->hooks.lead(g->hooks.ctx);
		/* the transaction first, the queue after: what queued while
		 * this waited for the write lock rides in this batch */
		struct world_err be = { 0 };
		g->st->retry_seen = 0;
		int open = begin(g, &be) == 0;
		pthread_mutex_lock(&g->mu);
		struct gjob *batch = g->head;
		g->head = NULL;
		g->tail = &g->head;
		pthread_mutex_unlock(&g->mu);
		int rerun = 0;
		if (open) run_batch(g, batch, &rerun);
		else fail_all(batch, NULL, &be);
		if (g->hooks.ended) g->hooks.ended(g->hooks.ctx);
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
