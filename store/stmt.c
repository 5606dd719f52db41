/* store/stmt.c: the prepared statements a store handle keeps (see
 * store_internal.h, ws_stmt). Preparing a statement costs more than running
 * most of the store's (an index lookup or one insert), and the hot paths --
 * an append, a read of an object or an entry, each entry of the scan --
 * run several each time: each handle prepares each statement of the table
 * (store/sql.h) once and keeps it, reset, between uses. The statements
 * are the SQL driver's (store/db.h, on st->wdb), so the same cache serves
 * SQLite and PostgreSQL. */
#include "store/store_internal.h"

void ws_stmt_init(struct world_store *st)
{
	pthread_mutex_init(&st->stmt_mu, NULL);
	memset(st->stmts, 0, sizeof st->stmts);
}

/* The table entry whose text is sql (by pointer: WORLD_SQL(X)), or -1. */
static int stmt_id(const char *sql)
{
	for (int i = 0; i < WSQ_COUNT; i++)
		if (world_sql[i].sql == sql) return i;
	return -1;
}

/* The text the handle's driver runs for sql: a statement of the table in
 * its dialect (sql.h, `pg`), any other text as it is. */
static const char *dialect(struct world_store *st, int id, const char *sql)
{
	return id >= 0 ? world_sql_text(id, st->eng->dialect) : sql;
}

static int prep(struct world_store *st, int id, const char *sql, struct wdb_stmt **stmt, struct world_err *err)
{
	const char *text = dialect(st, id, sql);
	if (!*text) {
		*stmt = NULL;
		return werr(err, WX_FAIL, "store %s: statement %s is SQLite's alone (store/sql.c)", st->path,
		            world_sql[id].name);
	}
	if (wdb_prepare(st->wdb, text, stmt, NULL) < 0) {
		*stmt = NULL;
		return ws_sqlerr(st, 0, "prepare", err);
	}
	return 0;
}


int ws_prep(struct world_store *st, const char *sql, struct wdb_stmt **stmt, struct world_err *err)
{
	return prep(st, stmt_id(sql), sql, stmt, err);
}

int ws_stmt(struct world_store *st, const char *sql, struct wdb_stmt **stmt, struct world_err *err)
{
	*stmt = NULL;
	int id = stmt_id(sql);
	if (id >= 0) {
		pthread_mutex_lock(&st->stmt_mu);
		struct ws_cached *c = &st->stmts[id];
		int mine = !c->busy;
		if (mine) c->busy = 1;
		pthread_mutex_unlock(&st->stmt_mu);
		if (mine) {
			/* this slot is ours until ws_done: nobody else touches c->s */
			const char *text = dialect(st, id, sql);
			if (!c->s && (!*text || wdb_prepare_kept(st->wdb, text, &c->s, NULL) < 0)) {
				c->s = NULL;
				pthread_mutex_lock(&st->stmt_mu);
				c->busy = 0;
				pthread_mutex_unlock(&st->stmt_mu);
				if (!*text)
					return werr(err, WX_FAIL, "store %s: statement %s is SQLite's alone (store/sql.c)", st->path,
					            world_sql[id].name);
				return ws_sqlerr(st, 0, "prepare", err);
			}
			*stmt = c->s;
			return 0;
		}
		/* in use further up this thread's stack, or by another thread: a fresh one */
	}
	return prep(st, id, sql, stmt, err);
}

void ws_done(struct world_store *st, struct wdb_stmt *s)
{
	if (!s) return;
	pthread_mutex_lock(&st->stmt_mu);
	for (int i = 0; i < WSQ_COUNT; i++) {
		struct ws_cached *c = &st->stmts[i];
		if (c->busy && c->s == s) {
			wdb_reset(s);
			wdb_clear_bindings(s);
			c->busy = 0;
			pthread_mutex_unlock(&st->stmt_mu);
			return;
		}
	}
	pthread_mutex_unlock(&st->stmt_mu);
	wdb_finalize(s);
}

void ws_stmt_drop(struct world_store *st)
{
	pthread_mutex_lock(&st->stmt_mu);
	for (int i = 0; i < WSQ_COUNT; i++) {
		wdb_finalize(st->stmts[i].s);
		st->stmts[i].s = NULL;
		st->stmts[i].busy = 0;
	}
	pthread_mutex_unlock(&st->stmt_mu);
}

void ws_stmt_fini(struct world_store *st)
{
	ws_stmt_drop(st);
	pthread_mutex_destroy(&st->stmt_mu);
}
