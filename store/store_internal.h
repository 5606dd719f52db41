/* store/store_internal.h: pieces shared by the store's own modules
 * (store.c, archive.c, scan.c). Not for other components.
 *
 * The seam (issue 26; docs/store.md, "The driver seam"): the store's own
 * statements (store.c, optoken.c, stmt.c's cache) run through the SQL
 * driver of store/db.h on st->wdb. On SQLite that handle wraps the very
 * connection st->db the store set up (wdb_sqlite_adopt): the busy
 * handler, the commit and WAL hooks, the checkpoint thread, the backup,
 * the scan (scan.c), the archive (archive.c) and world_store_db()'s
 * callers keep using the raw sqlite3 *, through ws_prep / ws_col_ref /
 * ws_*_row_read. What is SQLite's alone stays behind st->kind ==
 * WDB_SQLITE. */
#ifndef WORLD_STORE_INTERNAL_H
#define WORLD_STORE_INTERNAL_H
#include <pthread.h>
#include <stdatomic.h>
#include <sqlite3.h>
#include <string.h>
#include <time.h>
#include "store/store.h"
#include "store/sql.h"
#include "store/db.h"

struct world_store {
	/* the driver handle every statement runs on */
	struct wdb *wdb;
	enum wdb_kind kind;
	char *path;
	int writer;
	int in_txn;    /* inside world_store_begin() */
	int sp_depth;  /* ws_sp_begin nesting */
	int sp_own;    /* the outermost ws_sp_begin began the transaction */
	/* sp_flat: inside the caller's transaction, ws_sp_begin/ws_sp_end open
	 * no savepoint (group.c's first run of a batch, which is rolled back
	 * whole and run again with savepoints when anything fails); sp_undone
	 * counts the ws_sp_end(ok = 0) calls made meanwhile */
	int sp_flat;
	unsigned long sp_undone;
	unsigned long flat_mark; /* sp_undone at world_store_flat_begin */
	/* busy_wait: how long a statement waits for another writer, since when, and its jitter */
	double busy_ms;
	struct timespec busy_t0;
	unsigned long long busy_rand;
	int version;   /* the schema version as opened (a reader may hold a 1) */
	/* the statements of store/sql.h this handle has prepared (stmt.c) */
	pthread_mutex_t stmt_mu;
	struct ws_cached { struct wdb_stmt *s; int busy; } stmts[WSQ_COUNT];
	/* change detection (changes.c): this connection's commits, counted by
	 * its commit hook (PRAGMA data_version does not move for them), and
	 * its prepared PRAGMA data_version (under stmt_mu, like the cache) */
	atomic_ullong commits;
	struct { struct wdb_stmt *s; int busy; } dv;
	/* the write queue (queue.c): the flock file, -1 until the first
	 * transaction opens it; since when this transaction's wait counts */
	int qfd;
	int busy_from_set;
	struct timespec busy_from;
	/* the checkpoint thread (checkpoint.c), NULL when none */
	struct ws_ckpt *ckpt;
	/* PostgreSQL: a statement of this write failed with WDB_RETRY
	 * (serialization failure, deadlock): ws_write_retry runs it again */
	int retry_seen;
	/* PostgreSQL's write queue (queue.c): its two statements, and whether
	 * this handle holds it now */
	struct wdb_stmt *pgq_lock, *pgq_unlock;
	int pgq_held;
	/* the log's tree (tree.c): entries were appended in this transaction;
	 * the signer of this writer (NULL: none) and its counts */
	int tree_dirty;
	int no_tree; /* WORLD_STORE_NO_TREE (bench only) */
	int existing; /* WORLD_STORE_EXISTING: a PostgreSQL database without a store is refused, not made one */
	struct note_signer *signer;
	long long signed_n, sign_failed;
};

/* One line for a failed statement: "store PATH: WHAT: the database's
 * message", the exit code from what failed (code overrides it when
 * non-zero). On SQLite the connection's error code and message, as
 * before the seam; otherwise the driver's class of the last failure. */
int ws_sqlerr(struct world_store *st, int code, const char *what, struct world_err *err);
/* SQL without parameters: transaction control, PRAGMAs, DDL. */
int ws_exec(struct world_store *st, const char *sql, struct world_err *err);
/* A fresh driver statement (wdb_finalize it). */
int ws_prep(struct world_store *st, const char *sql, struct wdb_stmt **stmt, struct world_err *err);
/* ws_prep for the hot paths: a statement of the table (sql = WORLD_SQL(X))
 * comes from the handle's cache, prepared once, and must be given back
 * with ws_done (which resets it and clears its bindings), never
 * wdb_finalize. Any other text, or a statement whose cached copy is in
 * use, gets a fresh statement that ws_done finalizes. Safe across threads
 * sharing a handle (each caller gets a statement of its own). */
int ws_stmt(struct world_store *st, const char *sql, struct wdb_stmt **stmt, struct world_err *err);
void ws_done(struct world_store *st, struct wdb_stmt *s); /* NULL: nothing */
/* The transaction a write runs in: BEGIN IMMEDIATE on SQLite (after the
 * write queue), the driver's wdb_begin elsewhere; and its end. */
int ws_txn_begin(struct world_store *st, struct world_err *err);
int ws_txn_commit(struct world_store *st, struct world_err *err);
void ws_txn_rollback(struct world_store *st);
/* The id the last INSERT of this connection gave its row (the journal's):
 * SQLite's last_insert_rowid. */
long long ws_last_insert_id(struct world_store *st);
/* Binding for the store's statements: without a copy (the store binds
 * its callers' strings and buffers, which outlive the statement's use,
 * and ws_done clears every binding), a NULL string as NULL. A failed bind
 * is not lost: the statement's next step fails with it (db.h), and every
 * caller checks the step. */
static inline void ws_bind_text(struct wdb_stmt *s, int i, const char *v)
{
	(void)wdb_bind_text_nocopy(s, i, v, -1, NULL);
}
static inline void ws_bind_textn(struct wdb_stmt *s, int i, const char *v, size_t n)
{
	(void)wdb_bind_text_nocopy(s, i, v, (ptrdiff_t)n, NULL);
}
static inline void ws_bind_blob(struct wdb_stmt *s, int i, const void *p, size_t n)
{
	(void)wdb_bind_blob_nocopy(s, i, p, n, NULL);
}
static inline void ws_bind_int(struct wdb_stmt *s, int i, long long v) { (void)wdb_bind_int64(s, i, v, NULL); }
static inline void ws_bind_null(struct wdb_stmt *s, int i) { (void)wdb_bind_null(s, i, NULL); }
void ws_stmt_init(struct world_store *st);  /* at open, before any ws_stmt */
void ws_stmt_drop(struct world_store *st);  /* finalize the cache (before the connection closes) */
void ws_stmt_fini(struct world_store *st);  /* drop, at close */
/* Change detection (changes.c): the commit hook, installed at open, and
 * the counters table and its triggers, created by every writer's open. */
void ws_changes_hook(struct world_store *st);
int ws_changes_setup(struct world_store *st, struct world_err *err);
/* The running budget totals (spent.c): their table and trigger, made by
 * every writer's open of a SQLite store that lacks them. */
int ws_spent_setup(struct world_store *st, struct world_err *err);
/* The episode homes' table (home.c), created by a writer's open when absent. */
int ws_home_setup(struct world_store *st, struct world_err *err);
/* The write queue (queue.c): ws_queue_lock before a transaction's BEGIN
 * IMMEDIATE (waits up to the busy timeout, then WX_LOCKED), ws_queue_unlock
 * after its COMMIT or ROLLBACK. */
int ws_queue_lock(struct world_store *st, struct world_err *err);
void ws_queue_unlock(struct world_store *st);
/* PostgreSQL's write queue (queue.c): a session advisory lock taken before
 * a write transaction's BEGIN (waits up to the busy timeout, then
 * WX_LOCKED), released after its COMMIT or ROLLBACK; _fini finalizes its
 * statements (before the connection closes). */
int ws_pg_queue_lock(struct world_store *st, struct world_err *err);
void ws_pg_queue_unlock(struct world_store *st);
void ws_pg_queue_fini(struct world_store *st);
/* One nap of the busy handler (count = naps so far): 1, or 0 once the busy
 * timeout has passed. */
int ws_busy_nap(struct world_store *st, int count);
/* The log's tree (tree.c): the stored hashes entry N (leaf N-1, bytes
 * json) closes, written in the caller's transaction (log_append_body);
 * leaf gets its leaf hash. ws_tree_presign: in ws_txn_commit, before the
 * COMMIT of a transaction that appended, the checkpoint of the tree as it
 * now is, signed by the handle's signer and stored (a signature that
 * fails is counted and the commit goes on; a failed statement fails the
 * commit). ws_tree_backfill: the tree of every entry (schema 2 -> 3). */
int ws_tree_append(struct world_store *st, long long entry_index, const char *json, size_t len, unsigned char leaf[32],
                   struct world_err *err);
int ws_tree_presign(struct world_store *st, struct world_err *err);
int ws_tree_backfill(struct world_store *st, struct world_err *err);
/* Stops the checkpoint thread, if any (checkpoint.c), before the close. */
void ws_ckpt_stop(struct world_store *st);
int ws_need_writer(struct world_store *st, const char *what, struct world_err *err);
/* A store's secret file: <db>.SUFFIX, or for a PostgreSQL store
 * CACHE/SUBDIR/NAME.SUFFIX in the host's cache (optoken.c says how). */
int ws_secret_path(const struct world_store *st, const char *what, const char *subdir, const char *suffix, char *path,
                   size_t n, int make_dirs, struct world_err *err);
/* A write of several statements (body: an int expression, 0 = done) in
 * ws_sp_begin/ws_sp_end; on PostgreSQL, when it was its own transaction
 * and lost a race with another (WDB_RETRY), the whole transaction is run
 * again, after a jittered nap, up to WS_WRITE_RETRIES times (SQLite never
 * needs it: its BEGIN IMMEDIATE holds the write lock from the start).
 * Returns from the calling function. */
#define WS_WRITE_RETRIES 8
int ws_write_retry(struct world_store *st, int tries);
#define WS_WRITE(st, err, body)                                                   \
	do {                                                                          \
		for (int ws_try_ = 0;; ws_try_++) {                                       \
			(st)->retry_seen = 0;                                                 \
			if (ws_sp_begin((st), (err)) < 0) {                                   \
				if (ws_write_retry((st), ws_try_)) continue;                      \
				return -1;                                                        \
			}                                                                     \
			int ws_ok_ = (body) == 0;                                             \
			if (ws_sp_end((st), ws_ok_, ws_ok_ ? (err) : NULL) == 0) return 0;    \
			if (!ws_write_retry((st), ws_try_)) return -1;                        \
		}                                                                         \
	} while (0)
/* SAVEPOINT around one write; ws_sp_end(ok=0) undoes it. */
int ws_sp_begin(struct world_store *st, struct world_err *err);
int ws_sp_end(struct world_store *st, int ok, struct world_err *err);
/* Copy a column text into a ref buffer ("" when NULL or too long). */
void ws_col_ref(struct wdb_stmt *s, int col, char out[WORLD_REF_SIZE]);

/* A log_entries row as stored. */
struct ws_log_row {
	long long index, epoch;
	const char *hash, *prev, *fn, *interp, *written_by, *tref; /* prev NULL for none */
	const char *json;
	size_t json_len;
};
/* Checks a row on its own (canonical JSON, columns = JSON, entryHash
 * recomputed). Returns NULL when sound, else the field name of the hole. */
const char *ws_log_row_check(const struct ws_log_row *r);
/* Reads one row into r (strings point into stmt; valid until next step). */
void ws_log_row_read(struct wdb_stmt *s, struct ws_log_row *r);
#define WS_LOG_COLS "entry_index, semantics_epoch, entry_hash, prev_entry_hash, transition_fn, interpreter, written_by, transition_ref, entry_json"

struct ws_world_row {
	const char *ref;
	long long revision;
	const char *state_root, *log_head;
	const char *json;
	size_t json_len;
};
const char *ws_world_row_check(const struct ws_world_row *r);
void ws_world_row_read(struct wdb_stmt *s, struct ws_world_row *r);
#define WS_WORLD_COLS "ref, revision, state_root, log_head, payload"
#endif
