/* store/open.c: opening and closing a store handle (store.h).
 *
 * Owns: the open's arguments (mode, lock wait), the handle, the engine a
 * name selects (ws_engine_of) and its open -- which makes, migrates or
 * reads the schema (store/db_sqlite_schema.c, store/schema_pg.c) --, the
 * close, and the engine's services on a handle that are no statement
 * (checkpoints off the commit path). */
#include "store/store_internal.h"
#include "tlog/note.h"
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int world_wait_lock_parse(const char *s, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (!*s || *end || errno || !isfinite(v) || v < 0 || v > 86400) return -1;
	*out = v;
	return 0;
}

int world_store_open_wait(const char *path, int mode, double wait_lock_s, struct world_store **out,
                          struct world_err *err)
{
	*out = NULL;
	int flags = mode & (WORLD_STORE_NOSYNC | WORLD_STORE_PLAIN_WAL);
	int existing = mode & WORLD_STORE_EXISTING;
	int no_tree = mode & WORLD_STORE_NO_TREE;
	mode &= ~(WORLD_STORE_NOSYNC | WORLD_STORE_EXISTING | WORLD_STORE_PLAIN_WAL | WORLD_STORE_NO_TREE);
	if (!path || !*path) return werr(err, WX_USAGE, "store: no database path given");
	if (mode != WORLD_STORE_WRITER && mode != WORLD_STORE_READER)
		return werr(err, WX_USAGE, "store %s: unknown open mode %d", path, mode);
	if (!(wait_lock_s >= 0) || wait_lock_s > 86400)
		return werr(err, WX_USAGE, "store %s: lock wait %g s out of range 0..86400", path, wait_lock_s);
	struct world_store *st = calloc(1, sizeof *st);
	if (!st || !(st->path = strdup(path))) {
		free(st);
		return werr(err, WX_FAIL, "store %s: out of memory", path);
	}
	ws_stmt_init(st);
	st->eng = ws_engine_of(path);
	st->writer = mode == WORLD_STORE_WRITER;
	st->no_tree = no_tree != 0;
	st->existing = existing != 0;
	/* No lock is held between transactions: a write waits for another
	 * writer's transaction up to the busy timeout (--wait-lock, default 5 s). */
	st->busy_ms = wait_lock_s > 0 ? wait_lock_s * 1000.0 : WORLD_STORE_BUSY_MS_DEFAULT;
	{
		struct timespec seed;
		clock_gettime(CLOCK_MONOTONIC, &seed);
		st->busy_rand = (unsigned long long)seed.tv_nsec ^ ((unsigned long long)getpid() << 32) ^ (uintptr_t)st;
	}
	if (st->eng->open(st, flags, err) < 0) {
		world_store_close(st);
		return -1;
	}
	*out = st;
	return 0;
}

int world_store_open(const char *path, int mode, struct world_store **out, struct world_err *err)
{
	return world_store_open_wait(path, mode, 0, out, err);
}

void world_store_close(struct world_store *st)
{
	if (!st) return;
	if (st->eng->close) st->eng->close(st);
	ws_stmt_fini(st);
	if (st->wdb && st->in_txn) {
		struct world_err ig;
		wdb_rollback(st->wdb, &ig);
	}
	wdb_close(st->wdb);
	note_signer_free(st->signer);
	free(st->path);
	free(st);
}

const char *world_store_path(const struct world_store *st) { return st->path; }

struct sqlite3 *world_store_db(struct world_store *st) { return st->wdb ? wdb_sqlite_raw(st->wdb) : NULL; }

/* Checkpoints off the commit path (store.h): the engine's, where it has them. */
int world_store_checkpoint_thread(struct world_store *st, struct world_err *err)
{
	if (ws_need_writer(st, "checkpoint thread", err) < 0) return -1;
	return st->eng->ckpt_start ? st->eng->ckpt_start(st, err) : 0;
}

void world_store_checkpoint_stats(struct world_store *st, long long *background, long long *inlined,
                                  long long *failed)
{
	long long z[3] = { 0, 0, 0 };
	if (st->eng->ckpt_stats) st->eng->ckpt_stats(st, &z[0], &z[1], &z[2]);
	if (background) *background = z[0];
	if (inlined) *inlined = z[1];
	if (failed) *failed = z[2];
}
