/* store/db_sqlite.h: what the SQLite driver's files share -- the store's
 * SQLite engine (store_internal.h, struct ws_engine) spread over
 * db_sqlite_open.c (open, close, change detection's first layer),
 * db_sqlite_schema.c (the schema and its migrations), db_sqlite_queue.c
 * (the busy handler and the flock write queue), db_sqlite_ckpt.c
 * (checkpoints off the commit path), db_sqlite_wal.c (the WAL-gathering
 * VFS, store/walbuf.h) and db_sqlite_backup.c (the online backup); the
 * SQL driver itself is db_sqlite.c (store/db.h). Nothing else includes it.
 *
 * Owns: the engine's state of a store handle (struct ws_sqlite) and the
 * calls between those files. */
#ifndef WORLD_STORE_DB_SQLITE_H
#define WORLD_STORE_DB_SQLITE_H
#include "store/store_internal.h"
#include <sqlite3.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>

struct ws_ckpt;

/* A store handle's SQLite state (st->eng_state). */
struct ws_sqlite {
	struct world_store *st;
	/* the busy handler: since when this lock is waited for */
	struct timespec busy_t0;
	/* the write queue: the flock file, -1 until the first transaction
	 * opens it; since when this transaction's wait counts */
	int qfd;
	int busy_from_set;
	struct timespec busy_from;
	/* the checkpoint thread, NULL when none */
	struct ws_ckpt *ckpt;
	/* change detection: this connection's commits, counted by its commit
	 * hook (PRAGMA data_version does not move for them), and its prepared
	 * PRAGMA data_version (under st->stmt_mu, like the statement cache) */
	atomic_ullong commits;
	struct { struct wdb_stmt *s; int busy; } dv;
	/* the scan's page cache: the size before it grew */
	long long cache_was;
	int cache_set;
};
#define WS_SQ(st) ((struct ws_sqlite *)(st)->eng_state)

/* the connection under the store's driver handle */
static inline sqlite3 *ws_sqlite_raw(struct world_store *st) { return wdb_sqlite_raw(st->wdb); }

/* db_sqlite_open.c: PRAGMA user_version (a file SQLite cannot read is
 * WX_NOT_STORE or WX_SCHEMA, one line). */
int ws_sqlite_user_version(struct world_store *st, int *v, struct world_err *err);

/* db_sqlite_schema.c: a new store's schema, made under the write lock
 * unless another writer made it meanwhile; a schema-1 or -2 store (v)
 * migrated to the current version; the check a schema-1 store must pass
 * before it is touched; the indexes and tables a writer's open adds to
 * a store of the current version that lacks them. */
int ws_sqlite_schema_create(struct world_store *st, struct world_err *err);
int ws_sqlite_migrate(struct world_store *st, int v, struct world_err *err);
int ws_sqlite_mig_check(struct world_store *st, struct world_err *err);
int ws_sqlite_schema_extras(struct world_store *st, struct world_err *err);

/* db_sqlite_queue.c: the busy handler (installed at open; ctx = the
 * state), one nap of it (1, or 0 once the busy timeout has passed), and
 * the write queue of struct ws_engine. */
int ws_sqlite_busy(void *ctx, int count);
int ws_sqlite_busy_nap(struct ws_sqlite *sq, int count);
int ws_sqlite_queue_lock(struct world_store *st, struct world_err *err);
void ws_sqlite_queue_unlock(struct world_store *st);

/* db_sqlite_ckpt.c: the checkpoint thread of struct ws_engine, and its stop before the close. */
int ws_sqlite_ckpt_start(struct world_store *st, struct world_err *err);
void ws_sqlite_ckpt_stats(struct world_store *st, long long *background, long long *inlined, long long *failed);
void ws_sqlite_ckpt_stop(struct world_store *st);

/* db_sqlite_backup.c: world_backup of a SQLite store (store/backup.h). */
struct world_scan_opts;
struct world_backup_result;
int ws_sqlite_backup(const char *src_path, const char *dest, const struct world_scan_opts *scan_opts, FILE *scan_out,
                     struct world_backup_result *out, struct world_err *err);
#endif
