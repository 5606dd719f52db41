/* store/changes.c: change detection (store.h, world_store_changed;
 * docs/store.md, "Change detection"). Two layers, cheapest first:
 *   1. did any connection commit anything since the token? PRAGMA
 *      data_version moves when another connection (of this process or
 *      another) committed; it does not move for this connection's own
 *      commits, which the commit hook counts instead. No row is read.
 *   2. if so, which of the cached kinds moved: the counters row of
 *      store_changes (one primary-key lookup), which triggers bump in the
 *      very transaction that changes a session or a registry head -- so
 *      no writer, of this build or a tool's, can change one unnoticed.
 * A commit that bumped the hook's count and then failed only costs the
 * caller one lookup of the counters row.
 *
 * The seam (issue 26): the counters row is read through the SQL driver
 * (store/db.h) like every statement of the store; layer 1 -- the commit
 * hook and PRAGMA data_version -- is SQLite's own and stays on the raw
 * connection st->db, as does the DDL below (INSERT OR IGNORE, SQLite's
 * triggers; store/schema_pg.c holds PostgreSQL's). On PostgreSQL, layer 1
 * is yet to come (LISTEN/NOTIFY or the counters alone). */
#include "store/store_internal.h"

/* The counters row and the triggers that keep it: created (IF NOT EXISTS,
 * safe when two writers open at once) by every writer's open, as the
 * indexes later builds added are. The selected world head ('@world')
 * moves with every committed call and is no registry: it bumps nothing. */
static const char changes_ddl[] =
    "CREATE TABLE IF NOT EXISTS store_changes(id INTEGER PRIMARY KEY CHECK (id = 1),"
    " sessions INTEGER NOT NULL, registries INTEGER NOT NULL);"
    "INSERT OR IGNORE INTO store_changes(id, sessions, registries) VALUES (1, 0, 0);"
    "CREATE TRIGGER IF NOT EXISTS store_changes_session_add AFTER INSERT ON sessions BEGIN"
    " UPDATE store_changes SET sessions = sessions + 1 WHERE id = 1; END;"
    "CREATE TRIGGER IF NOT EXISTS store_changes_session_del AFTER DELETE ON sessions BEGIN"
    " UPDATE store_changes SET sessions = sessions + 1 WHERE id = 1; END;"
    "CREATE TRIGGER IF NOT EXISTS store_changes_session_upd AFTER UPDATE ON sessions BEGIN"
    " UPDATE store_changes SET sessions = sessions + 1 WHERE id = 1; END;"
    "CREATE TRIGGER IF NOT EXISTS store_changes_head_add AFTER INSERT ON heads WHEN NEW.name <> '@world' BEGIN"
    " UPDATE store_changes SET registries = registries + 1 WHERE id = 1; END;"
    "CREATE TRIGGER IF NOT EXISTS store_changes_head_upd AFTER UPDATE ON heads WHEN NEW.name <> '@world' BEGIN"
    " UPDATE store_changes SET registries = registries + 1 WHERE id = 1; END;"
    "CREATE TRIGGER IF NOT EXISTS store_changes_head_del AFTER DELETE ON heads WHEN OLD.name <> '@world' BEGIN"
    " UPDATE store_changes SET registries = registries + 1 WHERE id = 1; END;";

/* The table, its row and its six triggers, when not all there: read
 * first (no write lock on a store that has them), else created in one
 * BEGIN IMMEDIATE transaction -- a DDL statement on its own would upgrade a
 * read to a write, which SQLite refuses at once (no busy wait) when
 * another writer committed meanwhile (two daemons starting together). */
int ws_changes_setup(struct world_store *st, struct world_err *err)
{
	struct wdb_stmt *s;
	if (ws_prep(st, WORLD_SQL(CHANGES_SCHEMA), &s, err) < 0)
		return -1;
	int rc = wdb_step(s, NULL);
	int n = rc == WDB_ROW ? (int)wdb_column_int64(s, 0, NULL) : -1;
	wdb_finalize(s);
	if (n < 0) return ws_sqlerr(st, 0, "read schema", err);
	if (n == 7) return 0;
	if (ws_exec(st, "BEGIN IMMEDIATE", err) < 0) return -1;
	if (ws_exec(st, changes_ddl, err) < 0 || ws_exec(st, "COMMIT", err) < 0) {
		struct world_err ig;
		ws_exec(st, "ROLLBACK", &ig);
		return -1;
	}
	return 0;
}

static int on_commit(void *ctx)
{
	struct world_store *st = ctx;
	atomic_fetch_add(&st->commits, 1);
	return 0; /* 0: let the commit go on */
}

void ws_changes_hook(struct world_store *st)
{
	sqlite3_commit_hook(wdb_sqlite_raw(st->wdb), on_commit, st);
}

static int data_version(struct world_store *st, long long *v, struct world_err *err)
{
	struct wdb_stmt *s = NULL;
	pthread_mutex_lock(&st->stmt_mu);
	int mine = !st->dv.busy;
	if (mine) st->dv.busy = 1;
	pthread_mutex_unlock(&st->stmt_mu);
	if (mine && !st->dv.s && wdb_prepare_kept(st->wdb, "PRAGMA data_version", &st->dv.s, NULL) < 0) st->dv.s = NULL;
	if (mine) s = st->dv.s;
	else if (wdb_prepare(st->wdb, "PRAGMA data_version", &s, NULL) < 0) s = NULL;
	int rc = s ? wdb_step(s, NULL) : WDB_FAIL;
	if (rc == WDB_ROW) *v = wdb_column_int64(s, 0, NULL);
	else ws_sqlerr(st, 0, "PRAGMA data_version", err);
	if (mine) {
		if (s) wdb_reset(s);
		pthread_mutex_lock(&st->stmt_mu);
		st->dv.busy = 0;
		pthread_mutex_unlock(&st->stmt_mu);
	} else {
		wdb_finalize(s);
	}
	return rc == WDB_ROW ? 0 : -1;
}

int world_store_changed(struct world_store *st, struct world_changes *t, unsigned *changed, struct world_err *err)
{
	*changed = 0;
	/* own first: a commit of this connection in progress on another
	 * thread holds the connection's mutex, so the steps below run after
	 * it and read what it wrote */
	unsigned long long own = atomic_load(&st->commits);
	long long dv = 0;
	/* PostgreSQL has no data_version: the counters row is read every time */
	if (st->kind == WDB_SQLITE) {
		if (data_version(st, &dv, err) < 0) return -1;
		if (t->valid && t->data_version == dv && t->own == own) return 0;
	}
	struct wdb_stmt *s;
	long long sess = 0, regs = 0;
	int rc = WDB_FAIL;
	/* a store no writer of this build opened has no counters row: then
	 * everything counts as changed, every time */
	if (ws_stmt(st, WORLD_SQL(CHANGES_GET), &s, NULL) == 0) {
		rc = wdb_step(s, NULL);
		if (rc == WDB_ROW) {
			sess = wdb_column_int64(s, 0, NULL);
			regs = wdb_column_int64(s, 1, NULL);
		}
		ws_done(st, s);
	}
	if (rc != WDB_ROW) {
		t->valid = 0;
		*changed = WORLD_CHANGED_ALL;
		return 0;
	}
	if (!t->valid) *changed = WORLD_CHANGED_ALL;
	else {
		if (sess != t->sessions) *changed |= WORLD_CHANGED_SESSIONS;
		if (regs != t->registries) *changed |= WORLD_CHANGED_REGISTRIES;
	}
	t->valid = 1;
	t->data_version = dv;
	t->own = own;
	t->sessions = sess;
	t->registries = regs;
	return 0;
}
