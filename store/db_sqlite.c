/* store/db_sqlite.c: the SQLite driver of store/db.h. A writer's open
 * sets what the store's durability contract needs (WAL, synchronous=FULL,
 * docs/store.md) and creates a missing file 0600 before SQLite opens it;
 * transactions are BEGIN IMMEDIATE; a writer behind another's lock waits
 * up to the busy timeout, then fails with WDB_RETRY. */
#include "store/db_internal.h"
#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct sdb {
	struct wdb h;
	sqlite3 *db;
};

struct sstmt {
	struct wdb_stmt h;
	sqlite3_stmt *st;
};

#define SDB(d) ((struct sdb *)(d))
#define SST(s) ((struct sstmt *)(s))

static int classify(int rc)
{
	switch (rc & 0xff) {
	case SQLITE_BUSY:
	case SQLITE_LOCKED: return WDB_RETRY;
	case SQLITE_CONSTRAINT: return WDB_CONFLICT;
	default: return WDB_FAIL;
	}
}

/* one line: "store PATH: WHAT: sqlite's message" */
static int fail(struct sdb *d, int rc, const char *what, struct world_err *err)
{
	int cls = classify(rc);
	int other = (rc & 0xff) == SQLITE_CORRUPT || (rc & 0xff) == SQLITE_NOTADB ? WX_INTEGRITY : WX_IO;
	werr(err, wdb_fail_code(cls, other), "store %s: %s: %s", d->h.name, what,
	     d->db ? sqlite3_errmsg(d->db) : sqlite3_errstr(rc));
	return cls;
}

static int s_open(const char *name, const struct wdb_opts *opts, struct wdb **out, struct world_err *err)
{
	struct sdb *d = calloc(1, sizeof *d);
	if (!d) return werr(err, WX_IO, "store %s: open: out of memory", name), WDB_FAIL;
	d->h.drv = &wdb_sqlite_driver;
	snprintf(d->h.name, sizeof d->h.name, "%s", name);
	int ro = opts->flags & WDB_READONLY;
	if (!ro && (opts->flags & WDB_CREATE)) {
		/* the store is its owner's only (docs/store.md, file modes) */
		int fd = open(name, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
		if (fd < 0) {
			werr(err, WX_IO, "store %s: create: %s", name, strerror(errno));
			free(d);
			return WDB_FAIL;
		}
		if (close(fd) != 0) {
			werr(err, WX_IO, "store %s: create: close: %s", name, strerror(errno));
			free(d);
			return WDB_FAIL;
		}
	}
	int rc = sqlite3_open_v2(name, &d->db, (ro ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE) | SQLITE_OPEN_FULLMUTEX,
	                         NULL);
	if (rc != SQLITE_OK) {
		int cls = fail(d, rc, "open", err);
		sqlite3_close(d->db);
		free(d);
		return cls;
	}
	sqlite3_extended_result_codes(d->db, 1);
	if ((rc = sqlite3_busy_timeout(d->db, opts->busy_timeout_ms > 0 ? opts->busy_timeout_ms : 5000)) != SQLITE_OK ||
	    (!ro && (rc = sqlite3_exec(d->db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;", NULL, NULL, NULL)) !=
	                SQLITE_OK)) {
		int cls = fail(d, rc, "open: set-up", err);
		sqlite3_close(d->db);
		free(d);
		return cls;
	}
	*out = &d->h;
	return 0;
}

static void s_close(struct wdb *h)
{
	struct sdb *d = SDB(h);
	sqlite3_close_v2(d->db); /* a statement not finalized yet keeps it until it is */
	free(d);
}

int wdb_sqlite_adopt(struct sqlite3 *raw, const char *name, struct wdb **out, struct world_err *err)
{
	*out = NULL;
	struct sdb *d = calloc(1, sizeof *d);
	if (!d) return werr(err, WX_IO, "store %s: open: out of memory", name), WDB_FAIL;
	d->h.drv = &wdb_sqlite_driver;
	snprintf(d->h.name, sizeof d->h.name, "%s", name);
	d->db = raw;
	*out = &d->h;
	return 0;
}

struct sqlite3 *wdb_sqlite_raw(struct wdb *h)
{
	return h && h->drv == &wdb_sqlite_driver ? SDB(h)->db : NULL;
}

static int s_exec(struct wdb *h, const char *sql, struct world_err *err)
{
	struct sdb *d = SDB(h);
	int rc = sqlite3_exec(d->db, sql, NULL, NULL, NULL);
	return rc == SQLITE_OK ? 0 : fail(d, rc, "exec", err);
}

static int prepare(struct wdb *h, const char *sql, unsigned flags, struct wdb_stmt **out, struct world_err *err)
{
	struct sdb *d = SDB(h);
	struct sstmt *s = calloc(1, sizeof *s);
	if (!s) return werr(err, WX_IO, "store %s: prepare: out of memory", h->name), WDB_FAIL;
	int rc = sqlite3_prepare_v3(d->db, sql, -1, flags, &s->st, NULL);
	if (rc != SQLITE_OK) {
		free(s);
		return fail(d, rc, "prepare", err);
	}
	s->h.db = h;
	*out = &s->h;
	return 0;
}

static int s_prepare(struct wdb *h, const char *sql, struct wdb_stmt **out, struct world_err *err)
{
	return prepare(h, sql, 0, out, err);
}

/* a cache's statement, kept for the connection's life: SQLite then keeps
 * it out of its small lookaside allocations */
static int s_prepare_kept(struct wdb *h, const char *sql, struct wdb_stmt **out, struct world_err *err)
{
	return prepare(h, sql, SQLITE_PREPARE_PERSISTENT, out, err);
}

static int s_bind(struct wdb_stmt *sh, int idx, int kind, int64_t v, const void *p, size_t n, struct world_err *err)
{
	struct sstmt *s = SST(sh);
	int rc;
	if (kind == 'i') rc = sqlite3_bind_int64(s->st, idx, v);
	else if (kind == 't') rc = sqlite3_bind_text64(s->st, idx, p, n, SQLITE_TRANSIENT, SQLITE_UTF8);
	else if (kind == 'b') rc = sqlite3_bind_blob64(s->st, idx, p, n, SQLITE_TRANSIENT);
	/* no copy: the caller keeps the bytes until the binding goes (db.h) */
	else if (kind == 'T') rc = sqlite3_bind_text64(s->st, idx, p, n, SQLITE_STATIC, SQLITE_UTF8);
	else if (kind == 'B') rc = sqlite3_bind_blob64(s->st, idx, p, n, SQLITE_STATIC);
	else rc = sqlite3_bind_null(s->st, idx);
	return rc == SQLITE_OK ? 0 : fail(SDB(sh->db), rc, "bind", err);
}

static int s_step(struct wdb_stmt *sh, struct world_err *err)
{
	struct sstmt *s = SST(sh);
	int rc = sqlite3_step(s->st);
	if (rc == SQLITE_ROW) return WDB_ROW;
	if (rc == SQLITE_DONE) return WDB_DONE;
	return fail(SDB(sh->db), rc, "step", err);
}

static void s_reset(struct wdb_stmt *sh) { sqlite3_reset(SST(sh)->st); }
static void s_clear_bindings(struct wdb_stmt *sh) { sqlite3_clear_bindings(SST(sh)->st); }
/* the connection's own: the same text sqlite3_errmsg gives its owner */
static const char *s_errmsg(const struct wdb *h) { return sqlite3_errmsg(SDB(h)->db); }

static void s_finalize(struct wdb_stmt *sh)
{
	sqlite3_finalize(SST(sh)->st);
	free(sh);
}

static int s_column_count(struct wdb_stmt *sh) { return sqlite3_column_count(SST(sh)->st); }
static int s_column_is_null(struct wdb_stmt *sh, int col) { return sqlite3_column_type(SST(sh)->st, col) == SQLITE_NULL; }

static int64_t s_column_int64(struct wdb_stmt *sh, int col, int *bad)
{
	int t = sqlite3_column_type(SST(sh)->st, col);
	if (t != SQLITE_INTEGER && t != SQLITE_NULL && bad) *bad = 1;
	return t == SQLITE_INTEGER ? sqlite3_column_int64(SST(sh)->st, col) : 0;
}

static const char *s_column_text(struct wdb_stmt *sh, int col)
{
	return (const char *)sqlite3_column_text(SST(sh)->st, col);
}

static const void *s_column_blob(struct wdb_stmt *sh, int col, size_t *n)
{
	const void *p = sqlite3_column_blob(SST(sh)->st, col);
	*n = (size_t)sqlite3_column_bytes(SST(sh)->st, col);
	return p ? p : "";
}

static int64_t s_changes(struct wdb *h) { return sqlite3_changes(SDB(h)->db); }

static int s_begin(struct wdb *h, struct world_err *err) { return s_exec(h, "BEGIN IMMEDIATE", err); }
static int s_commit(struct wdb *h, struct world_err *err) { return s_exec(h, "COMMIT", err); }

static int s_rollback(struct wdb *h, struct world_err *err)
{
	struct sdb *d = SDB(h);
	if (sqlite3_get_autocommit(d->db)) return 0; /* nothing open (SQLite may have rolled it back itself) */
	return s_exec(h, "ROLLBACK", err);
}

static int s_last_code(const struct wdb *h, int code_other)
{
	switch (sqlite3_errcode(SDB(h)->db) & 0xff) {
	case SQLITE_CORRUPT:
	case SQLITE_NOTADB: return WX_INTEGRITY;
	case SQLITE_BUSY:
	case SQLITE_LOCKED: return WX_LOCKED;
	default: return code_other;
	}
}

static int64_t s_last_insert_id(struct wdb *h) { return sqlite3_last_insert_rowid(SDB(h)->db); }

const struct wdb_driver wdb_sqlite_driver = {
	.kind = WDB_SQLITE,
	.open = s_open,
	.close = s_close,
	.exec = s_exec,
	.prepare = s_prepare,
	.bind = s_bind,
	.step = s_step,
	.reset = s_reset,
	.finalize = s_finalize,
	.column_count = s_column_count,
	.column_is_null = s_column_is_null,
	.column_int64 = s_column_int64,
	.column_text = s_column_text,
	.column_blob = s_column_blob,
	.changes = s_changes,
	.begin = s_begin,
	.commit = s_commit,
	.rollback = s_rollback,
	.nocopy = 1,
	.clear_bindings = s_clear_bindings,
	.prepare_kept = s_prepare_kept,
	.errmsg = s_errmsg,
	.last_code = s_last_code,
	.last_insert_id = s_last_insert_id,
};
