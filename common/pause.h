/* common/pause.h: test-only pause points in the windows where concurrent
 * calls race (a claim and its check, a file's read and its replace, a
 * commit). Compiled in only with `configure --enable-test-hooks`
 * (scripts/test.sh builds that way; the quick start and `make install`
 * builds do not): without it world_pause() is an empty inline function.
 *
 * Owns: the points' names and the two ways a test holds a thread there.
 *   - In-process (C tests): world_pause_set_hook(fn, ctx): fn(ctx, name) is
 *     called at every point, on the arriving thread; it may block.
 *   - Across processes (shell tests, the daemon): WORLD_TEST_PAUSE names
 *     the points to hold, comma-separated, each "NAME" (hold every
 *     arrival) or "NAME@K" (hold only the K-th arrival in this process), and
 *     WORLD_TEST_PAUSE_DIR a directory. The K-th arrival at NAME creates
 *     DIR/NAME.K.reached, then waits (polling every 5 ms, at most 120 s,
 *     then goes on with a log line) until DIR/NAME.K.go exists.
 *
 * The points (grep for world_pause to see each in place):
 *   coord.session      a call is about to re-check its session in the store
 *   coord.claimed      the call's task id is claimed, nothing has run yet
 *   coord.claim_wait   a call found its task id claimed by another and waits
 *   coord.before_commit the call's output exists, its commit not yet written
 *   coord.held         a call's effect ran and its commit found the store away: the hold starts
 *   coord.batch        a call leads a group commit, before it begins the batch's transaction
 *   coord.queued       a call queued for a group commit another call leads
 *   sup.running        a transition's capsule has its start frame; its event loop has not looked yet
 *   effect.waiting_turn an effect waits for its episode's turn (broker/turn.c)
 *   workspace.edit.read an edit has read the file it is about to replace
 *   daemon.worker      a call worker picked a job up, before it runs it
 *   daemon.queued      the HTTP thread put a call in the workers' queue
 *   backup.copying     a backup copied its first pages into the staging directory
 *   backup.renaming    a backup renamed the archive into place, not yet the database
 *   copy.writing       a store copy wrote its objects into DEST, nothing after them yet
 *   store.checkpoint   a handle's checkpoint thread was woken, before it checkpoints
 *   store.queued       a transaction found the write queue taken, before it waits in it
 *   store.wal_sync     a durable commit's WAL frames are gathered (store/walbuf.c), before they go to the file
 *   store.group_commit a group commit's batch is written, before its COMMIT (store/group.c)
 *   scan.page          a paged scan cursor read a whole page, before it asks for the next (store/scan.c)
 *   home.claim         a daemon found no home for an episode, before it inserts its claim (store/home.c)
 *   archive.materialise an interpreter's bytes are written and fsync'd under a temporary name in the per-host cache (PostgreSQL store), before the rename */
#ifndef WORLD_COMMON_PAUSE_H
#define WORLD_COMMON_PAUSE_H

typedef void (*world_pause_fn)(void *ctx, const char *name);

#ifdef WORLD_TEST_HOOKS
void world_pause(const char *name);
void world_pause_set_hook(world_pause_fn fn, void *ctx);
#define WORLD_PAUSE_COMPILED 1
#else
static inline void world_pause(const char *name) { (void)name; }
static inline void world_pause_set_hook(world_pause_fn fn, void *ctx) { (void)fn; (void)ctx; }
#define WORLD_PAUSE_COMPILED 0
#endif
#endif
