/* store/group.h: group commit on one writer handle (docs/store.md, Group
 * commit).
 *
 * Owns: making the writes of many threads durable with one commit each
 * batch. A caller hands its write (a function writing through the store
 * API) to world_group_run; the writes queued while a batch commits make up
 * the next batch. One thread at a time (the batch's leader, a caller
 * itself) runs a batch: one transaction, first with every write straight
 * in it (no savepoint: a savepoint costs a statement and a copy of every
 * page it changes); when a write fails -- or a store call inside one was
 * undone, even if the write went on -- that transaction is rolled back and
 * the batch runs again, each write in a savepoint of its own (a write that
 * fails is undone alone; the others of its batch stand). Then one COMMIT --
 * one fsync under synchronous=FULL -- and only then does any caller of the
 * batch get its answer. Every check the store makes on a
 * write (the log's index and hash chain, the head compare-and-swap, the
 * invocation record) is made as without the group, inside the batch's
 * transaction, in the order the batch runs.
 *
 * While a group exists, every write to its handle goes through it. */
#ifndef WORLD_STORE_GROUP_H
#define WORLD_STORE_GROUP_H
#include "store/store.h"

struct world_group;

/* st: a WRITER handle, not inside world_store_begin(); the caller keeps it. */
struct world_group *world_group_new(struct world_store *st, struct world_err *err);
void world_group_free(struct world_group *g);

/* Runs fn(st, ctx, err) in the next batch and returns once that batch is
 * durable: 0 when fn succeeded and its writes are committed; -1 with err
 * when fn failed (its writes undone) or the batch could not commit (none of
 * its writes are). fn must not begin or commit transactions itself, and
 * may be run more than once in one batch (each run after the one before's
 * writes were all rolled back: the batch run again with savepoints, or, on
 * PostgreSQL, again whole after losing a race with another writer): what
 * it leaves outside the store must bear that (outputs it sets again, a
 * counter it only moves on). */
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
