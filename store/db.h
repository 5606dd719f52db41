/* store/db.h: the store's SQL driver -- one small interface over SQLite
 * (store/db_sqlite.c) and PostgreSQL through libpq (store/db_pg.c), so that
 * one code path of the store runs on both (docs/store.md, "The driver
 * seam"). Every statement of the store runs through it. On SQLite the
 * store's engine (store/db_sqlite_open.c) opens and sets up the connection
 * itself and hands it to a handle (wdb_sqlite_adopt); the SQLite engine's
 * own mechanisms (busy handler, hooks, checkpoints, backup) reach it with
 * wdb_sqlite_raw.
 *
 * Owns: naming a database (a path, or a postgresql:// URI), connecting,
 * running SQL with positional parameters, reading columns, the transaction
 * that a head compare-and-swap runs in, and the classification of every
 * failure into what a caller does next. Owns no schema and no store policy
 * (each engine's schema: store/db_sqlite_schema.c, store/schema_pg.c).
 *
 * The contract, for both drivers:
 * - SQL is written with SQLite's positional parameters, `?` or `?N`
 *   (1-based); the PostgreSQL driver rewrites them to `$N` outside string
 *   literals, quoted identifiers and comments (not inside dollar-quoted
 *   bodies: pass those to wdb_exec, which rewrites nothing). The dialect
 *   beyond that is the caller's (INSERT OR IGNORE is SQLite's; ON CONFLICT
 *   DO NOTHING both).
 * - Values: int64, text (UTF-8, no NUL), blob (any bytes, NUL included),
 *   NULL. A blob comes back byte for byte: on PostgreSQL it is bytea, sent
 *   and received in binary format, never escaped (bind blobs with
 *   wdb_bind_blob: text bound to a bytea parameter goes through
 *   PostgreSQL's bytea input, where a backslash is an escape). Integers and
 *   text are sent as text and typed by the server. Bound values are copied
 *   (wdb_bind_*_nocopy: not, on SQLite).
 * - wdb_step runs the statement on its first call after prepare/reset and
 *   returns WDB_ROW for each row, then WDB_DONE. On PostgreSQL the whole
 *   result is fetched at once, so any number of statements of one
 *   connection may be open at a time, as on SQLite.
 * - wdb_begin opens the transaction a write runs in: BEGIN IMMEDIATE on
 *   SQLite (the write lock from the start; a writer behind another waits
 *   up to the busy timeout), BEGIN ISOLATION LEVEL SERIALIZABLE on
 *   PostgreSQL (a transaction that raced another fails, at any statement or
 *   at COMMIT, with WDB_RETRY; the caller rolls back and runs it again).
 *   A compare-and-swap is `UPDATE ... WHERE <expected values>` followed by
 *   wdb_changes(): 1 = it moved, 0 = the head was not what the caller saw.
 *   On PostgreSQL the transaction is pipelined: BEGIN, and each INSERT or
 *   DELETE without RETURNING stepped outside a savepoint, are sent without
 *   waiting (wdb_step answers WDB_DONE at once); the next call that reads
 *   an answer (a row, wdb_changes, wdb_exec, wdb_commit) waits for all of
 *   them in one round trip and returns the first failure among them --
 *   the transaction fails as a whole (wdb_changes answers -1 then).
 * - Every failing call returns a negative enum wdb_fail and sets err (one
 *   line, an exit code of common/error.h): WDB_RETRY (SQLite busy or locked;
 *   PostgreSQL serialization failure or deadlock: run the transaction
 *   again), WDB_UNAVAILABLE (the server cannot be reached or the connection
 *   was lost: answer "unavailable" -- HTTP 503 -- and try again later; the
 *   next call outside a transaction reconnects by itself), WDB_CONFLICT (a
 *   constraint refused the row: unique, check, not null), WDB_FAIL
 *   (anything else). wdb_last_fail() repeats the class of the handle's last
 *   call (0 when it succeeded).
 * - Credentials: a postgresql:// URI may carry a password (or libpq finds
 *   one in PGPASSFILE / ~/.pgpass), or opts.password_file names a file
 *   (owner-only, first line) whose password wins over the URI's. No text
 *   this module produces -- errors, wdb_name() -- ever holds the password:
 *   it names the user, host, port and database only, and every message
 *   from libpq is scrubbed of the password before it is copied.
 * - A handle is used by one thread at a time. */
#ifndef WORLD_STORE_DB_H
#define WORLD_STORE_DB_H
#include "common/error.h"
#include <stddef.h>
#include <stdint.h>

struct wdb;
struct wdb_stmt;

enum wdb_kind { WDB_SQLITE = 1, WDB_PG = 2 };

/* wdb_step's answers */
enum { WDB_DONE = 0, WDB_ROW = 1 };

/* the classes of failure (negative: every failing call returns one) */
enum wdb_fail {
	WDB_FAIL = -1,        /* anything else: a bad statement, I/O, a bad URI */
	WDB_RETRY = -2,       /* busy / serialization failure: run the transaction again */
	WDB_UNAVAILABLE = -3, /* server unreachable or connection lost */
	WDB_CONFLICT = -4,    /* a constraint refused the write */
};

enum wdb_open_flags {
	WDB_READONLY = 1, /* SQLite: open read-only; PostgreSQL: default_transaction_read_only */
	WDB_CREATE = 2,   /* SQLite: create the file (0600) when absent; PostgreSQL: no effect (the database must exist) */
};

struct wdb_opts {
	int flags;                 /* enum wdb_open_flags */
	const char *password_file; /* PostgreSQL: file holding the password (first line); NULL = none */
	int busy_timeout_ms;       /* how long a writer waits for another's lock (0 = 5000): SQLite's busy timeout,
	                            * PostgreSQL's lock_timeout (every lock wait of the session) */
	int connect_timeout_s;     /* PostgreSQL: connect timeout unless the URI sets one (0 = 5) */
};

/* Which driver a name selects: postgresql:// or postgres:// = WDB_PG,
 * anything else is a SQLite path. */
enum wdb_kind wdb_kind_of(const char *name);

/* Open NAME (a path or a URI). On failure *out is NULL. */
int wdb_open(const char *name, const struct wdb_opts *opts, struct wdb **out, struct world_err *err);
void wdb_close(struct wdb *db);
enum wdb_kind wdb_kind(const struct wdb *db);
/* The name to print: the path, or postgresql://USER@HOST:PORT/DB (never a
 * password). */
const char *wdb_name(const struct wdb *db);
/* The class of the handle's last failure (0 after a success). */
int wdb_last_fail(const struct wdb *db);

/* Run SQL without parameters (several statements separated by ';'). */
int wdb_exec(struct wdb *db, const char *sql, struct world_err *err);

int wdb_prepare(struct wdb *db, const char *sql, struct wdb_stmt **out, struct world_err *err);
/* Binding (1-based index). Text and blob are copied; text len -1 = strlen. */
int wdb_bind_int64(struct wdb_stmt *st, int idx, int64_t v, struct world_err *err);
int wdb_bind_text(struct wdb_stmt *st, int idx, const char *s, ptrdiff_t len, struct world_err *err);
int wdb_bind_blob(struct wdb_stmt *st, int idx, const void *p, size_t n, struct world_err *err);
int wdb_bind_null(struct wdb_stmt *st, int idx, struct world_err *err);
/* WDB_ROW, WDB_DONE or a negative enum wdb_fail. */
int wdb_step(struct wdb_stmt *st, struct world_err *err);
/* Ready to run again; the bindings stay. */
void wdb_reset(struct wdb_stmt *st);
void wdb_finalize(struct wdb_stmt *st);

/* Columns of the current row (0-based), valid until the next step, reset
 * or finalize. A NULL reads as 0 / NULL text / an empty blob. */
int wdb_column_count(struct wdb_stmt *st);
int wdb_column_is_null(struct wdb_stmt *st, int col);
/* int64 of an integer column (PostgreSQL: smallint, integer, bigint,
 * boolean, or an integral numeric such as sum() gives); another type reads
 * as 0 and sets *bad when bad is non-NULL. */
int64_t wdb_column_int64(struct wdb_stmt *st, int col, int *bad);
const char *wdb_column_text(struct wdb_stmt *st, int col);
const void *wdb_column_blob(struct wdb_stmt *st, int col, size_t *n);

/* Rows the last INSERT, UPDATE or DELETE stepped on this handle changed. */
int64_t wdb_changes(struct wdb *db);

int wdb_begin(struct wdb *db, struct world_err *err);
int wdb_commit(struct wdb *db, struct world_err *err);
/* Always leaves the handle outside a transaction (also on a lost connection). */
int wdb_rollback(struct wdb *db, struct world_err *err);

/* Binding without a copy: the bytes are read in place by the statement's
 * steps. The caller guarantees they stay alive and unchanged until the
 * binding is replaced or cleared (wdb_clear_bindings) or the statement is
 * finalized. SQLite: SQLITE_STATIC; PostgreSQL copies as wdb_bind_* do. */
int wdb_bind_text_nocopy(struct wdb_stmt *st, int idx, const char *s, ptrdiff_t len, struct world_err *err);
int wdb_bind_blob_nocopy(struct wdb_stmt *st, int idx, const void *p, size_t n, struct world_err *err);
/* Drops every binding (each parameter NULL again). */
void wdb_clear_bindings(struct wdb_stmt *st);
/* A statement kept for the handle's life (a cache's): SQLite prepares it
 * with SQLITE_PREPARE_PERSISTENT; otherwise wdb_prepare. */
int wdb_prepare_kept(struct wdb *db, const char *sql, struct wdb_stmt **out, struct world_err *err);
/* A failed bind is also remembered by the statement: its next wdb_step
 * fails with the bind's class without running, so a caller may check the
 * step alone. */

/* The database's own message for the handle's last failure, without the
 * name or what failed ("" when none); never a password. */
const char *wdb_errmsg(const struct wdb *db);

/* The exit code of common/error.h for a class of failure (CODE_OTHER for
 * WDB_FAIL): what a caller formatting its own message exits with. */
int wdb_fail_code(int fail, int code_other);
/* The exit code for the handle's last failure: SQLite's by its error code
 * (a damaged file WX_INTEGRITY, busy or locked WX_LOCKED), elsewhere
 * wdb_fail_code of its class; CODE_OTHER for anything else. */
int wdb_last_code(const struct wdb *db, int code_other);
/* The rowid the handle's last INSERT gave its row: SQLite's; 0 elsewhere
 * (a statement says RETURNING instead). */
int64_t wdb_last_insert_id(struct wdb *db);

/* SQLite only: wrap a connection the caller opened and set up (busy
 * handler, hooks, pragmas) as a handle, which owns it from then on:
 * wdb_close closes RAW. NAME is what wdb_name() prints. */
struct sqlite3;
int wdb_sqlite_adopt(struct sqlite3 *raw, const char *name, struct wdb **out, struct world_err *err);
/* The SQLite connection under a handle of the SQLite driver, else NULL. */
struct sqlite3 *wdb_sqlite_raw(struct wdb *db);

/* The PostgreSQL driver is linked only into programs that can link libpq
 * dynamically (docs/HACKING.md): such a program calls wdb_pg_enable() once
 * at start-up (store/db_pg.c, libworld_pg.a). Elsewhere a postgresql://
 * name is refused with one line saying this program has no PostgreSQL
 * driver. */
struct wdb_driver;
void wdb_pg_enable(void);
/* The PostgreSQL driver's round trips (each wait for the server's answer;
 * a connection counts one) on DB, or over every handle of the process when
 * DB is NULL; 0 for a SQLite handle. */
uint64_t wdb_pg_round_trips(const struct wdb *db);
/* PostgreSQL: the next transaction begun on DB (wdb_begin) sends LOCK_SQL
 * -- one LOCK TABLE statement; a string that outlives the transaction --
 * right after its BEGIN, in the round trip of its first statement: a
 * write queue.
 * LOCK takes no snapshot, so the SERIALIZABLE transaction's snapshot is
 * taken once the lock is granted, and the lock goes with the COMMIT or
 * ROLLBACK. A wait past the busy timeout fails the transaction with
 * WDB_FAIL, WX_LOCKED (final, not a race to run again). 0, or -1 (and
 * nothing armed) for a handle of another driver or a LOCK_SQL that is not
 * one LOCK statement. */
int wdb_lock_next(struct wdb *db, const char *lock_sql);
#endif
