/* store/store_internal.h: the store core's one private header, shared by
 * its modules and by the two engines' halves (store/db_sqlite*.c,
 * store/db_pg_store.c). Not for other components.
 *
 * Owns: struct world_store; the core's helpers (statements through the
 * driver seam of store/db.h and the table of store/sql.h, transactions and
 * savepoints, the write retry); and struct ws_engine, what an engine does
 * beyond the SQL of sql.c (opening a store and its schema, the write
 * queue, change detection's first layer, checkpoints, the backup). The
 * core calls an engine through it and tests its capabilities (ws_can);
 * it never asks which engine it runs on. */
#ifndef WORLD_STORE_INTERNAL_H
#define WORLD_STORE_INTERNAL_H
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include "store/store.h"
#include "store/sql.h"
#include "store/db.h"

struct ws_engine;

struct world_store {
	/* the driver handle every statement runs on */
	struct wdb *wdb;
	/* the engine's half (ws_engine_of at open) and its own state */
	const struct ws_engine *eng;
	void *eng_state;
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
	/* how long a write waits for another writer (the busy timeout), and
	 * the state of the jitter of every wait and retry */
	double busy_ms;
	unsigned long long busy_rand;
	int version;   /* the schema version as opened (a reader may hold a 1) */
	/* the statements of store/sql.h this handle has prepared (stmt.c) */
	pthread_mutex_t stmt_mu;
	struct ws_cached { struct wdb_stmt *s; int busy; } stmts[WSQ_COUNT];
	/* a statement of this write failed with WDB_RETRY (serialization
	 * failure, deadlock): ws_write_retry runs it again where the engine
	 * can lose such a race (WS_CAP_RETRY) */
	int retry_seen;
	/* the log's tree (tree.c): entries were appended in this transaction;
	 * the signer of this writer (NULL: none) and its counts */
	int tree_dirty;
	int no_tree; /* WORLD_STORE_NO_TREE (bench only) */
	int existing; /* WORLD_STORE_EXISTING: a database without a store is refused, not made one */
	struct note_signer *signer;
	long long signed_n, sign_failed;
	/* What this write transaction itself wrote or read under its write
	 * lock, kept so that it is not read back from the server (each read
	 * is a round trip to PostgreSQL): the log's tip as world_log_next
	 * read it, the refs of the objects put, the intent inserted last.
	 * Valid from the statement that set it until the transaction ends or
	 * anything of it is undone (ws_memo_clear: ws_txn_begin, commit,
	 * rollback, a failed or rolled back savepoint); the writer holds the
	 * write queue meanwhile, so no other writer can change what it says. */
	struct ws_memo {
		int tip_ok;
		long long tip_last, tip_rev;
		char tip_hash[WORLD_REF_SIZE], tip_head[WORLD_REF_SIZE];
		char put[8][WORLD_REF_SIZE];
		unsigned nput;
		struct ws_memo_intent {
			long long id; /* 0: a free slot */
			int have;     /* it has an outcome */
			char kind[32], subject[1100];
		} intents[4];
		unsigned nintent; /* the slot the next one takes (round robin) */
	} memo;
	/* The log tree's stored hashes this handle last read or wrote, for
	 * the log as it stood after entry `size` whose hash is `tip`: an
	 * append on top of that same entry takes them from here (an entry's
	 * hash names every entry before it, so the stored hashes below it are
	 * these whoever wrote them, committed or not, and whatever was
	 * undone: a different log has a different tip). */
	struct ws_tree_cache {
		long long size; /* 0: empty */
		char tip[WORLD_REF_SIZE];
		size_t n;
		long long idx[96];
		unsigned char h[96][32];
	} tree_cache;
	/* A write the engine may answer later than its statement (a
	 * PostgreSQL pipeline's deferred INSERT) whose constraint, failing
	 * then, means what the statement's own check would have said: the
	 * store's message for it, by the constraint's name (ws_expect_conflict;
	 * ws_sqlerr answers it). Until the transaction ends. */
	struct ws_conflict {
		char constraint[48];
		int code;
		char msg[1400];
	} conflicts[4];
};

/* The name of the selected world head (registry names cannot start with '@'). */
#define WS_WORLD_HEAD "@world"
/* The message for a later failure of constraint `constraint` in this
 * transaction (struct world_store, conflicts); the last one set for a
 * constraint wins. ws_conflicts_clear forgets them. */
void ws_expect_conflict(struct world_store *st, const char *constraint, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
void ws_conflicts_clear(struct world_store *st);
/* Forget the memo (struct world_store, memo). */
static inline void ws_memo_clear(struct world_store *st)
{
	st->memo.tip_ok = 0;
	st->memo.nput = 0;
	for (size_t i = 0; i < sizeof st->memo.intents / sizeof *st->memo.intents; i++) st->memo.intents[i].id = 0;
}
/* A write transaction is open on st: a memo may be kept. */
static inline int ws_memo_on(const struct world_store *st) { return st->in_txn || st->sp_depth > 0; }

/* What an engine can do or needs (struct ws_engine, caps). */
enum ws_cap {
	/* the store is a local file: its interpreters, secrets and write
	 * queue live in files beside it (else in the database and the host's
	 * cache) */
	WS_CAP_FILE = 1,
	/* a write transaction may lose a race with another's (serialization
	 * failure, deadlock) and is run again (ws_write_retry) */
	WS_CAP_RETRY = 2,
	/* a statement's rows are read as they are stepped, in rowid order: a
	 * whole-table read is one statement keyed by its integer rowid (else
	 * pages keyed by text, store/scan.c) */
	WS_CAP_STREAM = 4,
};

struct world_scan_opts;
struct world_backup_result;

/* An engine's half of the store: SQLite's in store/db_sqlite*.c,
 * PostgreSQL's in store/db_pg_store.c. NULL ops: the engine has none. */
struct ws_engine {
	int caps;                   /* enum ws_cap */
	enum world_sql_dialect dialect; /* which text of store/sql.c's statements it runs */
	const char *snapshot_begin; /* BEGIN of a read-only transaction whose statements share one snapshot */
	const char *begin_what, *commit_what; /* what a failed write BEGIN, COMMIT is called in its message */
	/* open st->path (st->writer, existing, no_tree, busy_ms set): the
	 * driver handle, the schema made or migrated (a writer) or read,
	 * st->version; flags = WORLD_STORE_NOSYNC|PLAIN_WAL. On
	 * failure it leaves nothing it created; the caller closes st. */
	int (*open)(struct world_store *st, int flags, struct world_err *err);
	/* its state, before the driver handle closes */
	void (*close)(struct world_store *st);
	/* the write queue: taken before a write transaction's BEGIN (waits up
	 * to the busy timeout, then WX_LOCKED), released after its end */
	int (*queue_lock)(struct world_store *st, struct world_err *err);
	void (*queue_unlock)(struct world_store *st);
	/* change detection's first layer: a version that moves when another
	 * connection committed, and this handle's own commits */
	int (*data_version)(struct world_store *st, long long *version, unsigned long long *own, struct world_err *err);
	/* checkpoints off the commit path: the thread, and its counts */
	int (*ckpt_start)(struct world_store *st, struct world_err *err);
	void (*ckpt_stats)(struct world_store *st, long long *background, long long *inlined, long long *failed);
	/* the scan's page cache: grown (on = 1), given back (on = 0) */
	void (*scan_cache)(struct world_store *st, int on);
	/* the server session a statement runs on (it changes when the driver
	 * reconnects) */
	long long (*session_id)(struct world_store *st);
	/* world_backup of a store of this engine (store/backup.h) */
	int (*backup)(const char *src_path, const char *dest, const struct world_scan_opts *scan_opts, FILE *scan_out,
	              struct world_backup_result *out, struct world_err *err);
};
/* The engine a name selects (store/db.c: as wdb_kind_of selects a driver). */
const struct ws_engine *ws_engine_of(const char *name);
static inline int ws_can(const struct world_store *st, int cap) { return (st->eng->caps & cap) != 0; }

/* One line for a failed statement: "store PATH: WHAT: the database's
 * message", the exit code the driver gives the handle's last failure
 * (wdb_last_code; code overrides it when non-zero). */
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
/* The transaction a write runs in: the engine's write queue, then the
 * driver's wdb_begin (SQLite's BEGIN IMMEDIATE, PostgreSQL's
 * SERIALIZABLE); and its end. */
int ws_txn_begin(struct world_store *st, struct world_err *err);
int ws_txn_commit(struct world_store *st, struct world_err *err);
void ws_txn_rollback(struct world_store *st);
/* The id the last INSERT of this connection gave its row (the journal's):
 * the driver's wdb_last_insert_id (0 where the statement says RETURNING). */
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
/* The log's tree (tree.c): the stored hashes entry N (leaf N-1, bytes
 * json) closes, written in the caller's transaction (log_append_body);
 * leaf gets its leaf hash. ws_tree_presign: in ws_txn_commit, before the
 * COMMIT of a transaction that appended, the checkpoint of the tree as it
 * now is, signed by the handle's signer and stored (a signature that
 * fails is counted and the commit goes on; a failed statement fails the
 * commit). ws_tree_backfill: the tree of every entry (schema 2 -> 3). */
int ws_tree_append(struct world_store *st, long long entry_index, const char *json, size_t len, unsigned char leaf[32],
                   struct world_err *err);
/* The same, for an append on top of entry entry_index - 1 whose hash is
 * prev (NULL or "": none), the new entry's hash being hash: the stored
 * hashes this handle read or wrote for the log as it stood after that
 * entry (struct world_store, tree_cache) are not read again. */
int ws_tree_append_on(struct world_store *st, long long entry_index, const char *prev, const char *hash,
                      const char *json, size_t len, unsigned char leaf[32], struct world_err *err);
int ws_tree_presign(struct world_store *st, struct world_err *err);
int ws_tree_backfill(struct world_store *st, struct world_err *err);
int ws_need_writer(struct world_store *st, const char *what, struct world_err *err);
/* A label's check (store/objects.c): at most max bytes of UTF-8, no control
 * character, non-empty when required; errors name what. */
int ws_check_label(const char *what, const char *s, size_t max, int required, struct world_err *err);
/* A store's secret file: <db>.SUFFIX, or for a PostgreSQL store
 * CACHE/SUBDIR/NAME.SUFFIX in the host's cache (store/sessions.c says how). */
int ws_secret_path(const struct world_store *st, const char *what, const char *subdir, const char *suffix, char *path,
                   size_t n, int make_dirs, struct world_err *err);
/* A write of several statements (body: an int expression, 0 = done) in
 * ws_sp_begin/ws_sp_end; where the engine can lose a race (WS_CAP_RETRY),
 * a write that was its own transaction and lost one (WDB_RETRY) is run
 * again whole, after a jittered nap, up to WS_WRITE_RETRIES times (SQLite
 * never needs it: its BEGIN IMMEDIATE holds the write lock from the
 * start).
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
