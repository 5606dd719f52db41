/* store/group.c: see group.h. */
#include "store/group.h"
#include "store/store_internal.h"
#include <pthread.h>
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
	long long batches, writes;
};

struct world_group *world_group_new(struct world_store *st, struct world_err *err)
{
	if (ws_need_writer(st, "group commit", err) < 0) return NULL;
	if (st->in_txn) {
		werr(err, WX_USAGE, "group commit: store %s has a transaction open", st->path);
		return NULL;
	}
	struct world_group *g = calloc(1, sizeof *g);
	if (!g) {
		werr(err, WX_FAIL, "group commit: out of memory");
		return NULL;
	}
	g->st = st;
	g->tail = &g->head;
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

/* One transaction for the whole batch, a savepoint for each write. */
static void run_batch(struct world_group *g, struct gjob *batch)
{
	struct world_store *st = g->st;
	struct world_err e = { 0 };
	if (world_store_begin(st, &e) < 0) {
		for (struct gjob *j = batch; j; j = j->next) { j->rc = -1; j->err = e; }
		return;
	}
	int any = 0;
	for (struct gjob *j = batch; j; j = j->next) {
		j->rc = ws_exec(st, "SAVEPOINT wg", &j->err);
		if (j->rc == 0) j->rc = j->fn(st, j->ctx, &j->err) < 0 ? -1 : 0;
		struct world_err ig;
		if (j->rc < 0) ws_exec(st, "ROLLBACK TO wg", &ig);
		if (ws_exec(st, "RELEASE wg", j->rc < 0 ? &ig : &j->err) < 0 && j->rc == 0) j->rc = -1;
		if (j->rc == 0) any = 1;
	}
	if (!any) {
		world_store_rollback(st);
		return;
	}
	if (world_store_commit(st, &e) < 0)
		for (struct gjob *j = batch; j; j = j->next)
			if (j->rc == 0) {
				j->rc = -1;
				j->err = e;
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
		run_batch(g, batch);
		pthread_mutex_lock(&g->mu);
		g->batches++;
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
