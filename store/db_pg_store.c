/* store/db_pg_store.c: the store's PostgreSQL engine (store_internal.h,
 * struct ws_engine) over the PostgreSQL driver (store/db_pg.c, which alone
 * speaks libpq): opening a store -- the connection, the schema of
 * store/schema_pg.c made once or migrated under an advisory lock --, the
 * write queue (a session advisory lock), the session a scan's snapshot
 * runs on, and the backup (a copy to a SQLite file, store/copy.h). */
#include "store/store_internal.h"
#include "store/backup.h"
#include "store/copy.h"
#include "store/schema_pg.h"
#include "common/pause.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A store handle's PostgreSQL state (st->eng_state): none beyond the
 * driver's (the write queue is a LOCK TABLE sent with BEGIN, released by
 * the transaction's end); its presence marks a handle pg_open began. */
struct ws_pg {
	int opened;
};
#define PG_STATE(st) ((struct ws_pg *)(st)->eng_state)

extern const struct ws_engine ws_pg_engine;
static int homes_setup(struct world_store *st, struct world_err *err);

/* One row of one column as int64 (pg_open's reads). */
static int pg_int(struct world_store *st, const char *sql, long long *v, struct world_err *err)
{
	struct wdb_stmt *s;
	if (ws_prep(st, sql, &s, err) < 0) return -1;
	int rc = wdb_step(s, NULL);
	*v = rc == WDB_ROW ? wdb_column_int64(s, 0, NULL) : 0;
	wdb_finalize(s);
	if (rc != WDB_ROW) return ws_sqlerr(st, WX_SCHEMA, "read schema", err);
	return 0;
}

#define PG_TABLES "SELECT count(*) FROM pg_catalog.pg_tables WHERE schemaname = current_schema()"
#define PG_HAS_SCHEMA PG_TABLES " AND tablename = 'world_schema'"

/* The schema of a PostgreSQL store: world_schema's version (PRAGMA
 * user_version's place), or the schema created -- once, whoever else
 * opens the database at the same moment: the creators queue on an
 * advisory lock inside the transaction and read again under it. */
static int pg_schema(struct world_store *st, struct world_err *err)
{
	long long has = 0, v = 0, n = 0;
	if (pg_int(st, PG_HAS_SCHEMA, &has, err) < 0) return -1;
	if (!has) {
		if (pg_int(st, PG_TABLES, &n, err) < 0) return -1;
		if (n > 0) return werr(err, WX_SCHEMA, "store %s: not a World store (no world_schema table, %lld other tables); "
		                       "left untouched", st->path, n);
		if (!st->writer) return werr(err, WX_SCHEMA, "store %s: not a World store (an empty database)", st->path);
		if (st->existing)
			return werr(err, WX_NOT_FOUND, "store %s: an empty database, no World store in it; nothing created (make "
			            "one first: worldd store copy DB %s, or worldd epoch bootstrap --store %s)",
			            st->path, st->path, st->path);
		for (int tries = 0;; tries++) {
			st->retry_seen = 0;
			if (wdb_begin(st->wdb, NULL) < 0) return ws_sqlerr(st, 0, "begin", err);
			int rc = ws_exec(st, "SELECT pg_advisory_xact_lock(20260026)", err);
			if (rc == 0) rc = pg_int(st, PG_HAS_SCHEMA, &has, err);
			if (rc == 0 && !has) rc = wdb_exec(st->wdb, world_pg_schema, NULL) < 0 ? ws_sqlerr(st, 0, "create schema", err) : 0;
			if (rc == 0) rc = wdb_commit(st->wdb, NULL) < 0 ? ws_sqlerr(st, 0, "create schema: commit", err) : 0;
			if (rc == 0) break;
			struct world_err ig;
			wdb_rollback(st->wdb, &ig);
			if (!ws_write_retry(st, tries)) return -1;
		}
	}
	if (pg_int(st, "SELECT version FROM world_schema WHERE id = 1", &v, err) < 0) return -1;
	if (v == 2 && st->writer) {
		/* schema 2 -> 3 (the log's tree: store/tree.h), once, under the
		 * creators' advisory lock: the tables, the tree's backfill, the
		 * version, in one transaction; read again under the lock */
		for (int tries = 0;; tries++) {
			st->retry_seen = 0;
			if (wdb_begin(st->wdb, NULL) < 0) return ws_sqlerr(st, 0, "begin", err);
			long long v2 = 0;
			int rc = ws_exec(st, "SELECT pg_advisory_xact_lock(20260026)", err);
			if (rc == 0) rc = pg_int(st, "SELECT version FROM world_schema WHERE id = 1", &v2, err);
			if (rc == 0 && v2 == 2) {
				st->version = 2;
				rc = wdb_exec(st->wdb, world_pg_schema_v3, NULL) < 0 ? ws_sqlerr(st, 0, "migrate to schema 3", err) : 0;
				if (rc == 0) rc = ws_tree_backfill(st, err);
				if (rc == 0) rc = ws_exec(st, "UPDATE world_schema SET version = 3 WHERE id = 1", err);
			}
			if (rc == 0) rc = wdb_commit(st->wdb, NULL) < 0 ? ws_sqlerr(st, 0, "migrate to schema 3: commit", err) : 0;
			if (rc == 0) break;
			struct world_err ig;
			wdb_rollback(st->wdb, &ig);
			if (!ws_write_retry(st, tries)) return -1;
		}
		if (pg_int(st, "SELECT version FROM world_schema WHERE id = 1", &v, err) < 0) return -1;
	}
	if (v == 2 && !st->writer) {
		st->version = 2; /* read what it holds; the tree's calls answer WX_SCHEMA */
		return 0;
	}
	if (v != WORLD_PG_SCHEMA_VERSION)
		return werr(err, WX_SCHEMA, "store %s: schema version %lld is unknown to this build (knows %d); store left "
		            "untouched", st->path, v, WORLD_PG_SCHEMA_VERSION);
	st->version = (int)v;
	return 0;
}

/* A store on PostgreSQL: the driver's connection alone (no file beside
 * it, no hooks), the schema of store/schema_pg.c. */
static int pg_open(struct world_store *st, int flags, struct world_err *err)
{
	(void)flags; /* NOSYNC, PLAIN_WAL: SQLite's WAL alone */
	const char *uri = st->path;
	struct ws_pg *q = calloc(1, sizeof *q);
	if (!q) return werr(err, WX_FAIL, "store postgresql://...: out of memory");
	q->opened = 1;
	st->eng_state = q;
	struct wdb_opts o = { .flags = st->writer ? 0 : WDB_READONLY, .busy_timeout_ms = (int)st->busy_ms };
	if (wdb_open(uri, &o, &st->wdb, err) < 0) return -1;
	/* what every message names: never the URI, which may hold a password */
	char *name = strdup(wdb_name(st->wdb));
	if (!name) return werr(err, WX_FAIL, "store %s: out of memory", wdb_name(st->wdb));
	free(st->path);
	st->path = name;
	if (pg_schema(st, err) < 0) return -1;
	return homes_setup(st, err);
}

/* A writer's open: the episode homes' table when it is absent -- looked
 * for first (no lock when there); else made once under the schema's
 * advisory lock, read again under it, so daemons opening one database at
 * once make it once. */
static int homes_setup(struct world_store *st, struct world_err *err)
{
	if (!st->writer) return 0;
	static const char has_sql[] = "SELECT count(*) FROM pg_catalog.pg_tables WHERE schemaname = current_schema() "
	                              "AND tablename = 'episode_homes'";
	for (int tries = 0;; tries++) {
		st->retry_seen = 0;
		struct wdb_stmt *s;
		if (ws_prep(st, has_sql, &s, err) < 0) return -1;
		int rc = wdb_step(s, NULL);
		long long has = rc == WDB_ROW ? wdb_column_int64(s, 0, NULL) : -1;
		wdb_finalize(s);
		if (has < 0) return ws_sqlerr(st, 0, "episode homes: read schema", err);
		if (has) return 0;
		if (wdb_begin(st->wdb, NULL) < 0) return ws_sqlerr(st, 0, "episode homes: begin", err);
		int r = ws_exec(st, "SELECT pg_advisory_xact_lock(20260026)", err);
		if (r == 0) {
			if (ws_prep(st, has_sql, &s, err) < 0) r = -1;
			else {
				rc = wdb_step(s, NULL);
				has = rc == WDB_ROW ? wdb_column_int64(s, 0, NULL) : -1;
				wdb_finalize(s);
				if (has < 0) r = ws_sqlerr(st, 0, "episode homes: read schema", err);
			}
		}
		if (r == 0 && has == 0) r = ws_exec(st, world_pg_schema_homes, err);
		if (r == 0) r = wdb_commit(st->wdb, NULL) < 0 ? ws_sqlerr(st, 0, "episode homes: commit", err) : 0;
		if (r == 0) return 0;
		struct world_err ig;
		wdb_rollback(st->wdb, &ig);
		if (!ws_write_retry(st, tries)) return -1;
	}
}


/* The write queue.
 *
 * Every write transaction on PostgreSQL is SERIALIZABLE, and every append
 * moves the log's one head: two writers' transactions in flight at once
 * always collide, the later one fails with a serialization failure, and
 * under load a writer can lose its race many times running (bench/
 * store_bench's two-connection rows refused appends after nine runs). So
 * writers queue first, as SQLite's do on their flock: the transaction's
 * first command, right after BEGIN, is LOCK TABLE world_schema IN
 * EXCLUSIVE MODE (wdb_lock_next, store/db.h) -- LOCK takes no
 * snapshot, so the writer that got the lock reads what the one before it
 * committed -- and the lock goes with the COMMIT or ROLLBACK (or the
 * session, a writer killed or its connection lost). The driver sends it
 * with BEGIN in the round trip of the transaction's first statement: the
 * queue costs no round trip of its own. EXCLUSIVE conflicts with itself
 * and with writes of world_schema, never with a read. The wait is bounded
 * by the session's lock_timeout (the busy timeout, store/db_pg.c): past
 * it, WX_LOCKED, not retried. Readers take nothing. Test builds: WORLD_TEST_PG_NO_QUEUE=1
 * leaves the queue out, so that tests can make two transactions collide
 * and watch the retries (tests/store/test_pgstore, test_pggroup). */

static int pg_queue_off(void)
{
#ifdef WORLD_TEST_HOOKS
	const char *e = getenv("WORLD_TEST_PG_NO_QUEUE");
	return e && strcmp(e, "1") == 0;
#else
	return 0;
#endif
}

static int pg_queue_lock(struct world_store *st, struct world_err *err)
{
	if (pg_queue_off()) return 0;
	world_pause("store.queued");
	if (wdb_lock_next(st->wdb, "LOCK TABLE world_schema IN EXCLUSIVE MODE") < 0)
		return werr(err, WX_FAIL, "store %s: write queue: not a PostgreSQL handle", st->path);
	return 0;
}

/* the lock went with the transaction */
static void pg_queue_unlock(struct world_store *st) { (void)st; }

static void pg_close(struct world_store *st)
{
	if (!PG_STATE(st)) return;
	free(PG_STATE(st));
	st->eng_state = NULL;
}

/* The backend's pid: the driver reconnects by itself outside a
 * transaction of its own (wdb_begin), which a scan's snapshot is not, so
 * the pid at its start and at its end tells one snapshot from pages read
 * on a new connection (as store/copy.c does). */
static long long pg_session_id(struct world_store *st)
{
	struct wdb_stmt *s = NULL;
	long long pid = 0;
	if (wdb_prepare(st->wdb, "SELECT pg_backend_pid()", &s, NULL) == 0 && wdb_step(s, NULL) == WDB_ROW)
		pid = wdb_column_int64(s, 0, NULL);
	wdb_finalize(s);
	return pid;
}

/* A PostgreSQL store's backup: the copy between backends writes DEST, a
 * SQLite file (store/copy.h). */
static int pg_backup(const char *src_path, const char *dest, const struct world_scan_opts *scan_opts, FILE *scan_out,
                     struct world_backup_result *out, struct world_err *err)
{
	struct world_copy_opts co = { .effect_record_check = scan_opts ? scan_opts->effect_record_check : NULL,
		                      .scan_out = scan_out };
	static struct world_copy_result cr;
	if (ws_engine_of(dest) == &ws_pg_engine) return werr(err, WX_USAGE, "backup: DEST is a SQLite file (use store copy)");
	if (world_store_copy(src_path, dest, &co, &cr, err) < 0) return -1;
	out->log_entries = cr.log_entries;
	out->interpreters = cr.interpreters;
	out->scan = cr.scan;
	return 0;
}

const struct ws_engine ws_pg_engine = {
	.caps = WS_CAP_RETRY,
	/* BEGIN alone would give each statement -- each page -- a snapshot of
	 * its own: REPEATABLE READ keeps the first one to the end */
	.dialect = WSQL_PG,
	.snapshot_begin = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
	.begin_what = "begin",
	.commit_what = "commit",
	.open = pg_open,
	.close = pg_close,
	.queue_lock = pg_queue_lock,
	.queue_unlock = pg_queue_unlock,
	.session_id = pg_session_id,
	.backup = pg_backup,
};
