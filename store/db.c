/* store/db.c: the driver interface's dispatch (store/db.h): which driver
 * a name selects, and every call passed to the handle's driver with the
 * class of its failure remembered. */
#include "store/db_internal.h"
#include <stdio.h>
#include <string.h>
#include <strings.h>

const struct wdb_driver *wdb_pg_driver_enabled;

enum wdb_kind wdb_kind_of(const char *name)
{
	if (name && (strncasecmp(name, "postgresql://", 13) == 0 || strncasecmp(name, "postgres://", 11) == 0))
		return WDB_PG;
	return WDB_SQLITE;
}

int wdb_fail_code(int fail, int code_other)
{
	switch (fail) {
	case WDB_RETRY: return WX_LOCKED;
	case WDB_CONFLICT: return WX_CONFLICT;
	case WDB_UNAVAILABLE: return WX_UNAVAILABLE;
	default: return code_other;
	}
}

int wdb_open(const char *name, const struct wdb_opts *opts, struct wdb **out, struct world_err *err)
{
	static const struct wdb_opts none;
	*out = NULL;
	if (!name || !*name) {
		werr(err, WX_USAGE, "store: no database named (a path or a postgresql:// URI)");
		return WDB_FAIL;
	}
	if (!opts) opts = &none;
	if (wdb_kind_of(name) == WDB_PG) {
		if (!wdb_pg_driver_enabled) {
			/* the URI may hold a password: do not print it */
			werr(err, WX_USAGE, "store postgresql://...: this program is built without the PostgreSQL driver "
			                    "(libpq; see docs/store.md)");
			return WDB_FAIL;
		}
		return wdb_pg_driver_enabled->open(name, opts, out, err);
	}
	return wdb_sqlite_driver.open(name, opts, out, err);
}

void wdb_close(struct wdb *db)
{
	if (db) db->drv->close(db);
}

enum wdb_kind wdb_kind(const struct wdb *db) { return db->drv->kind; }
const char *wdb_name(const struct wdb *db) { return db->name; }
int wdb_last_fail(const struct wdb *db) { return atomic_load_explicit(&db->last_fail, memory_order_relaxed); }

const char *wdb_errmsg(const struct wdb *db)
{
	return db->drv->errmsg ? db->drv->errmsg(db) : db->msg;
}

/* remember the class of a result (negative = failure) */
static int seen(struct wdb *db, int rc)
{
	atomic_store_explicit(&db->last_fail, rc < 0 ? rc : 0, memory_order_relaxed);
	return rc;
}

int wdb_exec(struct wdb *db, const char *sql, struct world_err *err)
{
	return seen(db, db->drv->exec(db, sql, err));
}

int wdb_prepare(struct wdb *db, const char *sql, struct wdb_stmt **out, struct world_err *err)
{
	*out = NULL;
	return seen(db, db->drv->prepare(db, sql, out, err));
}

int wdb_prepare_kept(struct wdb *db, const char *sql, struct wdb_stmt **out, struct world_err *err)
{
	*out = NULL;
	return seen(db, (db->drv->prepare_kept ? db->drv->prepare_kept : db->drv->prepare)(db, sql, out, err));
}

static int bind(struct wdb_stmt *st, int idx, int kind, int64_t v, const void *p, size_t n, struct world_err *err)
{
	if (idx < 1) {
		werr(err, WX_FAIL, "store %s: bind: parameter index %d (they start at 1)", st->db->name, idx);
		snprintf(st->db->msg, sizeof st->db->msg, "bind: parameter index %d (they start at 1)", idx);
		st->bind_fail = WDB_FAIL;
		return seen(st->db, WDB_FAIL);
	}
	if (!st->db->drv->nocopy) kind = kind == 'T' ? 't' : kind == 'B' ? 'b' : kind;
	int rc = st->db->drv->bind(st, idx, kind, v, p, n, err);
	if (rc < 0 && !st->bind_fail) st->bind_fail = rc;
	return seen(st->db, rc);
}

int wdb_bind_int64(struct wdb_stmt *st, int idx, int64_t v, struct world_err *err)
{
	return bind(st, idx, 'i', v, NULL, 0, err);
}

int wdb_bind_text(struct wdb_stmt *st, int idx, const char *s, ptrdiff_t len, struct world_err *err)
{
	if (!s) return bind(st, idx, 'n', 0, NULL, 0, err);
	return bind(st, idx, 't', 0, s, len < 0 ? strlen(s) : (size_t)len, err);
}

int wdb_bind_blob(struct wdb_stmt *st, int idx, const void *p, size_t n, struct world_err *err)
{
	return bind(st, idx, 'b', 0, n ? p : "", n, err);
}

int wdb_bind_null(struct wdb_stmt *st, int idx, struct world_err *err)
{
	return bind(st, idx, 'n', 0, NULL, 0, err);
}

int wdb_bind_text_nocopy(struct wdb_stmt *st, int idx, const char *s, ptrdiff_t len, struct world_err *err)
{
	if (!s) return bind(st, idx, 'n', 0, NULL, 0, err);
	return bind(st, idx, 'T', 0, s, len < 0 ? strlen(s) : (size_t)len, err);
}

int wdb_bind_blob_nocopy(struct wdb_stmt *st, int idx, const void *p, size_t n, struct world_err *err)
{
	return bind(st, idx, 'B', 0, n ? p : "", n, err);
}

void wdb_clear_bindings(struct wdb_stmt *st)
{
	if (!st) return;
	st->db->drv->clear_bindings(st);
	st->bind_fail = 0;
}

int wdb_step(struct wdb_stmt *st, struct world_err *err)
{
	if (st->bind_fail) {
		/* what the bind said (the message is the handle's last) */
		werr(err, wdb_fail_code(st->bind_fail, WX_IO), "store %s: bind: %s", st->db->name, wdb_errmsg(st->db));
		return seen(st->db, st->bind_fail);
	}
	return seen(st->db, st->db->drv->step(st, err));
}

void wdb_reset(struct wdb_stmt *st)
{
	if (st) st->db->drv->reset(st);
}

void wdb_finalize(struct wdb_stmt *st)
{
	if (st) st->db->drv->finalize(st);
}

int wdb_column_count(struct wdb_stmt *st) { return st->db->drv->column_count(st); }

static int col_ok(struct wdb_stmt *st, int col)
{
	return col >= 0 && col < st->db->drv->column_count(st);
}

int wdb_column_is_null(struct wdb_stmt *st, int col)
{
	return col_ok(st, col) ? st->db->drv->column_is_null(st, col) : 1;
}

int64_t wdb_column_int64(struct wdb_stmt *st, int col, int *bad)
{
	if (bad) *bad = 0;
	if (!col_ok(st, col)) {
		if (bad) *bad = 1;
		return 0;
	}
	return st->db->drv->column_int64(st, col, bad);
}

const char *wdb_column_text(struct wdb_stmt *st, int col)
{
	return col_ok(st, col) ? st->db->drv->column_text(st, col) : NULL;
}

const void *wdb_column_blob(struct wdb_stmt *st, int col, size_t *n)
{
	*n = 0;
	if (!col_ok(st, col)) return "";
	return st->db->drv->column_blob(st, col, n);
}

int64_t wdb_changes(struct wdb *db) { return db->drv->changes(db); }

int wdb_begin(struct wdb *db, struct world_err *err) { return seen(db, db->drv->begin(db, err)); }
int wdb_commit(struct wdb *db, struct world_err *err) { return seen(db, db->drv->commit(db, err)); }
int wdb_rollback(struct wdb *db, struct world_err *err) { return seen(db, db->drv->rollback(db, err)); }

int wdb_last_code(const struct wdb *db, int code_other)
{
	if (db->drv->last_code) return db->drv->last_code(db, code_other);
	int fail = wdb_last_fail(db);
	return wdb_fail_code(fail ? fail : WDB_FAIL, code_other);
}

int64_t wdb_last_insert_id(struct wdb *db) { return db->drv->last_insert_id ? db->drv->last_insert_id(db) : 0; }

/* The store's engines (store/store_internal.h): one per driver, chosen as
 * the driver is. */
struct ws_engine;
extern const struct ws_engine ws_sqlite_engine, ws_pg_engine;
const struct ws_engine *ws_engine_of(const char *name);
const struct ws_engine *ws_engine_of(const char *name)
{
	return wdb_kind_of(name) == WDB_PG ? &ws_pg_engine : &ws_sqlite_engine;
}

int wdb_lock_next(struct wdb *db, const char *lock_sql)
{
	return db->drv->lock_next ? db->drv->lock_next(db, lock_sql) : -1;
}
