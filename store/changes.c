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
 * The counters row's statement (CHANGES_GET) also reads what a look is
 * followed by anyway, so that it costs no round trip of its own: the
 * log's tip (kept in a write transaction's memo for world_log_next) and,
 * when asked (usage_episode), an episode's usage.
 *
 * Layer 1 is the engine's (struct ws_engine, data_version: SQLite's in
 * store/db_sqlite_open.c); on an engine without it the counters row is
 * read every time. The counters row and its triggers are part of each
 * engine's schema (store/db_sqlite_schema.c, store/schema_pg.c). */
#include "store/store_internal.h"

int world_store_changed(struct world_store *st, struct world_changes *t, unsigned *changed, struct world_err *err)
{
	*changed = 0;
	t->usage_read = 0;
	unsigned long long own = 0;
	long long dv = 0;
	if (st->eng->data_version) {
		if (st->eng->data_version(st, &dv, &own, err) < 0) return -1;
		if (t->valid && t->data_version == dv && t->own == own) return 0;
	}
	struct wdb_stmt *s;
	long long sess = 0, regs = 0;
	int rc = WDB_FAIL;
	/* a store no writer of this build opened has no counters row: then
	 * everything counts as changed, every time */
	if (ws_stmt(st, WORLD_SQL(CHANGES_GET), &s, NULL) == 0) {
		ws_bind_text(s, 1, WS_WORLD_HEAD);
		if (t->usage_episode) ws_bind_text(s, 2, t->usage_episode);
		else ws_bind_null(s, 2);
		rc = wdb_step(s, NULL);
		if (rc == WDB_ROW) {
			sess = wdb_column_int64(s, 0, NULL);
			regs = wdb_column_int64(s, 1, NULL);
			if (t->usage_episode) { /* no row: nothing used yet */
				t->usage_calls = wdb_column_int64(s, 6, NULL);
				t->usage_bytes = wdb_column_int64(s, 7, NULL);
				t->usage_read = 1;
			}
			/* a writer's look in its transaction: the log's tip as
			 * world_log_next would read it (struct ws_memo) */
			if (ws_memo_on(st)) {
				struct ws_memo *m = &st->memo;
				m->tip_last = wdb_column_int64(s, 2, NULL);
				ws_col_ref(s, 3, m->tip_hash);
				ws_col_ref(s, 4, m->tip_head);
				m->tip_rev = wdb_column_int64(s, 5, NULL);
				m->tip_ok = 1;
			}
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
