/* store/group.h: group commit on one writer handle (docs/store.md, Group
 * commit).
 *
 * Owns: making the writes of many threads durable with one commit each
 * batch -- the one group commit of the house (the coordinator's commits go
 * through it). A caller hands its write (a function writing through the
 * store API) to world_group_run; the writes queued while a batch commits
 * make up the next batch. One thread at a time (the batch's leader, a
 * caller itself) runs a batch. It begins the batch's transaction FIRST and
 * takes the queue after, so every write queued while it waited for the
 * write lock (behind another process's transaction, or its fsync) rides in
 * this batch's one COMMIT. The batch runs first with every write straight
 * in the transaction (no savepoint: a savepoint costs a statement, a round
 * trip on PostgreSQL, and a copy of every page it changes). When a write
 * fails, that transaction is rolled back and the others run again in a
 * second one, each in a savepoint of its own (a write that fails there is
 * undone alone; the others of its batch stand); the write the first run
 * failed at keeps that answer and is not run again. When instead a store
 * call inside a write was undone and the write went on, no write is to
 * blame: the whole batch runs again with savepoints. On PostgreSQL a batch
 * that lost a race with another writer's transaction (a serialization
 * failure) is rolled back and run again whole. Then one COMMIT -- one
 * fsync under synchronous=FULL -- and only then does any caller of the
 * batch get its answer. Every check the store makes on a write (the log's
 * index and hash chain, the head compare-and-swap, the invocation record)
 * is made as without the group, inside the batch's transaction, in the
 * order the batch runs.
 *
 * While a group exists, every write to its handle goes through it. */
#ifndef WORLD_STORE_GROUP_H
#define WORLD_STORE_GROUP_H
#include "store/store.h"

struct world_group;

/* st: a WRITER handle, not inside world_store_begin(); the caller keeps it. */
struct world_group *world_group_new(struct world_store *st, struct world_err *err);

/* What a caller that shares the handle with other code of its own does
 * around a batch (each optional; ctx is passed to each). On the batch's
 * leader, in this order:
 *   lead   before the batch's transaction begins (e.g. take the caller's
 *          own lock on the handle: it then covers every write of the batch);
 *   begun  after each BEGIN of the batch (its first run, its run again with
 *          savepoints, its run again after a lost race);
 *   ended  once the batch's last transaction is committed or rolled back,
 *          before any caller of the batch is answered.
 * On a caller whose write was queued while another caller led a batch:
 *   queued (nothing of the group held; the write may already be taken).
 * A hook must not call world_group_run. */
struct world_group_hooks {
	void (*lead)(void *ctx);
	void (*begun)(void *ctx);
	void (*ended)(void *ctx);
	void (*queued)(void *ctx);
	void *ctx;
};
/* world_group_new with hooks (h is copied; NULL = none). */
struct world_group *world_group_new_hooks(struct world_store *st, const struct world_group_hooks *h,
                                          struct world_err *err);
void world_group_free(struct world_group *g);

/* Runs fn(st, ctx, err) in the next batch and returns once that batch is
 * durable: 0 when fn succeeded and its writes are committed; -1 with err
 * when fn failed (its writes undone) or the batch could not commit (none of
 * its writes are). fn must not begin or commit transactions itself, and
 * may be run more than once in one batch (each run after the one before's
 * writes were all rolled back: the batch run again with savepoints, or, on
 * PostgreSQL, again whole after losing a race with another writer): what
 * it leaves outside the store must bear that (outputs it sets again, a
 * counter it only moves on). Its results beyond err go through ctx (the
 * caller reads them once world_group_run returned 0). */
int world_group_run(struct world_group *g, int (*fn)(struct world_store *st, void *ctx, struct world_err *err),
                    void *ctx, struct world_err *err);

/* Batches committed and writes run so far (the mean batch is
 * writes/batches), and writes queued for the next batch now (any may be
 * NULL). */
void world_group_stats(struct world_group *g, long long *batches, long long *writes, long long *queued);
/* Batches run a second time, with savepoints, because a write failed. */
long long world_group_reruns(struct world_group *g);
/* Batches run again whole because they lost a race with another writer's
 * transaction (PostgreSQL's serialization failures; 0 on SQLite). */
long long world_group_races(struct world_group *g);
#endif
