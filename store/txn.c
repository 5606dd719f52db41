/* store/txn.c: statements and transactions of the store core (store.h,
 * store_internal.h).
 *
 * Owns: the one-line error of a failed statement (ws_sqlerr, ws_exec),
 * and the store's own words for a constraint that fails after its
 * statement returned (a pipeline's deferred INSERT, ws_expect_conflict);
 * the memo of what a write transaction wrote or read (ws_memo_clear);
 * the transaction a write runs in -- the engine's write queue, then the
 * driver's BEGIN, COMMIT or ROLLBACK, the log tree's checkpoint signed
 * before the COMMIT (store/tree.c) --, the caller's transaction
 * (world_store_begin/commit/rollback), savepoints and the flat run of a
 * group commit (store/group.c), and the jittered retry of a write that
 * lost a race where the engine can lose one. No lock is held between
 * transactions: every write is a short transaction of its own (or runs
 * inside the caller's), queued behind other writers by the engine. */
#include "store/store_internal.h"
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void ws_expect_conflict(struct world_store *st, const char *constraint, int code, const char *fmt, ...)
{
	const size_t n = sizeof st->conflicts / sizeof *st->conflicts;
	struct ws_conflict *c = NULL;
	for (size_t i = 0; i < n && !c; i++)
		if (!strcmp(st->conflicts[i].constraint, constraint)) c = &st->conflicts[i];
	for (size_t i = 0; i < n && !c; i++)
		if (!st->conflicts[i].constraint[0]) c = &st->conflicts[i];
	if (!c || strlen(constraint) >= sizeof c->constraint) return;
	snprintf(c->constraint, sizeof c->constraint, "%s", constraint);
	c->code = code;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->msg, sizeof c->msg, fmt, ap);
	va_end(ap);
}

void ws_conflicts_clear(struct world_store *st)
{
	for (size_t i = 0; i < sizeof st->conflicts / sizeof *st->conflicts; i++) st->conflicts[i].constraint[0] = '\0';
}

/* The store's message for a constraint failure that reached its caller
 * after the statement (ws_expect_conflict), else NULL. */
static const struct ws_conflict *conflict_of(struct world_store *st)
{
	if (wdb_last_fail(st->wdb) != WDB_CONFLICT) return NULL;
	const char *m = wdb_errmsg(st->wdb);
	for (size_t i = 0; m && i < sizeof st->conflicts / sizeof *st->conflicts; i++) {
		const struct ws_conflict *c = &st->conflicts[i];
		char q[64];
		if (!c->constraint[0]) continue;
		snprintf(q, sizeof q, "\"%s\"", c->constraint);
		if (strstr(m, q)) return c;
	}
	return NULL;
}

int ws_sqlerr(struct world_store *st, int code, const char *what, struct world_err *err)
{
	const struct ws_conflict *c = conflict_of(st);
	if (c) return werr(err, c->code, "%s", c->msg);
	/* the driver's class of the last failure (docs/store.md, the table of classes) */
	if (wdb_last_fail(st->wdb) == WDB_RETRY) st->retry_seen = 1;
	return werr(err, code ? code : wdb_last_code(st->wdb, WX_IO), "store %s: %s: %s", st->path, what,
	            wdb_errmsg(st->wdb));
}

int ws_exec(struct world_store *st, const char *sql, struct world_err *err)
{
	if (wdb_exec(st->wdb, sql, NULL) < 0) {
		if (wdb_last_fail(st->wdb) == WDB_RETRY) st->retry_seen = 1;
		return werr(err, wdb_last_code(st->wdb, WX_IO), "store %s: %.60s: %s", st->path, sql, wdb_errmsg(st->wdb));
	}
	return 0;
}

int ws_txn_begin(struct world_store *st, struct world_err *err)
{
	ws_memo_clear(st);
	ws_conflicts_clear(st);
	/* the write queue first, then the transaction */
	if (st->eng->queue_lock(st, err) < 0) return -1;
	if (wdb_begin(st->wdb, NULL) < 0) {
		ws_sqlerr(st, 0, st->eng->begin_what, err);
		st->eng->queue_unlock(st);
		return -1;
	}
	return 0;
}

int ws_txn_commit(struct world_store *st, struct world_err *err)
{
	/* the checkpoint of what this transaction appended, signed in it
	 * (store/tree.c): never ahead of the durable log */
	ws_memo_clear(st);
	if (st->tree_dirty && ws_tree_presign(st, err) < 0) {
		ws_txn_rollback(st);
		return -1;
	}
	int rc = wdb_commit(st->wdb, NULL) < 0 ? ws_sqlerr(st, 0, st->eng->commit_what, err) : 0;
	ws_conflicts_clear(st);
	if (rc < 0) {
		struct world_err ig;
		wdb_rollback(st->wdb, &ig);
	}
	st->eng->queue_unlock(st);
	return rc;
}

void ws_txn_rollback(struct world_store *st)
{
	struct world_err ig;
	ws_memo_clear(st);
	ws_conflicts_clear(st);
	st->tree_dirty = 0;
	wdb_rollback(st->wdb, &ig);
	st->eng->queue_unlock(st);
}

long long ws_last_insert_id(struct world_store *st) { return (long long)wdb_last_insert_id(st->wdb); }

int ws_need_writer(struct world_store *st, const char *what, struct world_err *err)
{
	if (!st->writer)
		return werr(err, WX_USAGE, "%s: store %s was opened read-only (no writer authority)", what, st->path);
	return 0;
}

/* Outside world_store_begin() a write of several statements is its own
 * short BEGIN IMMEDIATE transaction (a SAVEPOINT there would begin a
 * deferred one, whose upgrade to a writer fails at once with SQLITE_BUSY
 * when another process wrote meanwhile, the busy handler never asked);
 * inside one, or nested, it is a savepoint. */
int ws_sp_begin(struct world_store *st, struct world_err *err)
{
	if (!st->in_txn && st->sp_depth == 0) {
		if (ws_txn_begin(st, err) < 0) return -1;
		st->sp_depth = 1;
		st->sp_own = 1;
		return 0;
	}
	if (st->sp_flat) {
		st->sp_depth++;
		return 0;
	}
	if (ws_exec(st, "SAVEPOINT w", err) < 0) return -1;
	st->sp_depth++;
	return 0;
}

int ws_sp_end(struct world_store *st, int ok, struct world_err *err)
{
	struct world_err ignore;
	if (st->sp_depth == 1 && st->sp_own) {
		st->sp_depth = 0;
		st->sp_own = 0;
		/* the durable commit of this write */
		if (!ok) {
			ws_txn_rollback(st);
			return -1;
		}
		return ws_txn_commit(st, err);
	}
	st->sp_depth--;
	if (!ok) ws_memo_clear(st);
	if (st->sp_flat) {
		/* nothing to undo here: the whole run is undone (group.c) */
		if (!ok) st->sp_undone++;
		return ok ? 0 : -1;
	}
	if (ok) {
		if (ws_exec(st, "RELEASE w", err) == 0) return 0;
		ws_memo_clear(st);
		ws_exec(st, "ROLLBACK TO w", &ignore);
		ws_exec(st, "RELEASE w", &ignore);
		return -1;
	}
	ws_exec(st, "ROLLBACK TO w", &ignore);
	ws_exec(st, "RELEASE w", &ignore);
	return -1;
}

int ws_write_retry(struct world_store *st, int tries)
{
	/* only a write that was its own transaction, on an engine where one
	 * can lose a race, that lost one: a transaction of the caller's
	 * (world_store_begin) is the caller's to run again */
	int max = WS_WRITE_RETRIES;
#ifdef WORLD_TEST_HOOKS
	/* test builds: WORLD_TEST_PG_RETRIES=0 turns the retry off, the
	 * control of tests/store/test_pgstore's forced serialization failure */
	const char *e = getenv("WORLD_TEST_PG_RETRIES");
	if (e && *e >= '0' && *e <= '9' && !e[1]) max = *e - '0';
#endif
	if (!ws_can(st, WS_CAP_RETRY) || st->in_txn || st->sp_depth || !st->retry_seen || tries >= max) return 0;
	st->retry_seen = 0;
	/* jittered, growing: 1 ms doubling to 32 ms, each 50..150% of it, so
	 * writers that collided do not collide again in step */
	long nominal_us = 1000L << (tries < 5 ? tries : 5);
	st->busy_rand = st->busy_rand * 6364136223846793005ULL + 1442695040888963407ULL;
	long us = nominal_us / 2 + (long)((st->busy_rand >> 33) % (unsigned long long)nominal_us);
	struct timespec nap = { us / 1000000, (us % 1000000) * 1000 };
	while (nanosleep(&nap, &nap) < 0 && errno == EINTR) {}
	return 1;
}

void ws_col_ref(struct wdb_stmt *s, int col, char out[WORLD_REF_SIZE])
{
	const char *t = wdb_column_text(s, col);
	out[0] = '\0';
	if (t && strlen(t) < WORLD_REF_SIZE) strcpy(out, t);
}

int world_store_begin(struct world_store *st, struct world_err *err)
{
	if (ws_need_writer(st, "begin", err) < 0) return -1;
	if (st->in_txn) return werr(err, WX_USAGE, "store %s: transaction already open", st->path);
	if (ws_txn_begin(st, err) < 0) return -1;
	st->in_txn = 1;
	return 0;
}

int world_store_commit(struct world_store *st, struct world_err *err)
{
	if (!st->in_txn) return werr(err, WX_USAGE, "store %s: no transaction open", st->path);
	st->in_txn = 0;
	return ws_txn_commit(st, err);
}

void world_store_rollback(struct world_store *st)
{
	if (!st->in_txn) return;
	st->in_txn = 0;
	ws_txn_rollback(st);
}

int world_store_is_writer(const struct world_store *st) { return st->writer; }

int world_store_in_txn(const struct world_store *st) { return st->in_txn; }

/* One caller's savepoint inside its world_store_begin() transaction (the
 * coordinator's per-call savepoint in its group commit): SAVEPOINT,
 * RELEASE and ROLLBACK TO take the same text on both backends. */
int world_store_savepoint(struct world_store *st, enum world_savepoint_op op, struct world_err *err)
{
	if (!st->in_txn) return werr(err, WX_USAGE, "store %s: a savepoint needs a transaction", st->path);
	static const char *const sql[] = { [WORLD_SP_BEGIN] = "SAVEPOINT wc", [WORLD_SP_RELEASE] = "RELEASE wc",
		                           [WORLD_SP_ROLLBACK] = "ROLLBACK TO wc" };
	if ((int)op < 0 || (int)op > WORLD_SP_ROLLBACK) return werr(err, WX_USAGE, "store %s: savepoint: bad operation", st->path);
	if (op == WORLD_SP_ROLLBACK) ws_memo_clear(st);
	int rc = ws_exec(st, sql[op], err);
	if (rc < 0) ws_memo_clear(st);
	return rc;
}

void world_store_flat_begin(struct world_store *st)
{
	st->sp_flat = 1;
	st->flat_mark = st->sp_undone;
}

int world_store_flat_end(struct world_store *st)
{
	st->sp_flat = 0;
	return st->sp_undone != st->flat_mark;
}
