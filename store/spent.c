/* store/spent.c: the running budget totals (docs/store.md, Journal and
 * sessions).
 *
 * Why: an effect's budget check sums the costs of its episode's earlier
 * intents for that effect and scope (world_journal_spent), inside the
 * effect's write transaction. Read from the journal that sum reads every
 * such intent -- a cost that grows with the episode, so an episode of n
 * effects cost O(n^2) (bench/live_bench found it: 53% of a daemon's CPU
 * after a few thousand effectful calls). journal_spent_total keeps the
 * sum per (episode, effect, scope), moved by a trigger on every intent the
 * journal gets, in the same transaction (a savepoint or transaction rolled
 * back takes the total back with it), so the check is one primary-key
 * lookup. Journal rows are never updated or deleted: the insert trigger is
 * all it needs.
 *
 * Owns: the table, its trigger and their creation by a writer's open
 * (with the totals of the journal as it is, in the same transaction);
 * on PostgreSQL both are in store/schema_pg.c. */
#include "store/store_internal.h"

static const char spent_ddl[] =
    "CREATE TABLE IF NOT EXISTS journal_spent_total(episode TEXT NOT NULL, effect TEXT NOT NULL,"
    " scope TEXT NOT NULL, spent INTEGER NOT NULL, PRIMARY KEY(episode, effect, scope)) WITHOUT ROWID;"
    "DELETE FROM journal_spent_total;"
    "INSERT INTO journal_spent_total(episode, effect, scope, spent)"
    " SELECT episode, effect, scope, sum(cost) FROM journal WHERE phase = 'intent' AND kind = 'effect'"
    " AND episode IS NOT NULL AND effect IS NOT NULL AND scope IS NOT NULL GROUP BY episode, effect, scope;"
    "DROP TRIGGER IF EXISTS journal_spent_add;"
    "CREATE TRIGGER journal_spent_add AFTER INSERT ON journal WHEN NEW.phase = 'intent' AND NEW.kind = 'effect'"
    " AND NEW.episode IS NOT NULL AND NEW.effect IS NOT NULL AND NEW.scope IS NOT NULL BEGIN"
    " INSERT INTO journal_spent_total(episode, effect, scope, spent) VALUES (NEW.episode, NEW.effect, NEW.scope, NEW.cost)"
    " ON CONFLICT(episode, effect, scope) DO UPDATE SET spent = spent + excluded.spent; END;";

/* Read first (no write lock on a store that has both); else both made --
 * the totals from the journal as it stands -- in one BEGIN IMMEDIATE
 * transaction (see ws_changes_setup for why not a bare DDL statement). */
int ws_spent_setup(struct world_store *st, struct world_err *err)
{
	struct wdb_stmt *s;
	if (ws_prep(st, WORLD_SQL(SPENT_SCHEMA), &s, err) < 0) return -1;
	int rc = wdb_step(s, NULL);
	int n = rc == WDB_ROW ? (int)wdb_column_int64(s, 0, NULL) : -1;
	wdb_finalize(s);
	if (n < 0) return ws_sqlerr(st, 0, "read schema", err);
	if (n == 2) return 0;
	if (ws_exec(st, "BEGIN IMMEDIATE", err) < 0) return -1;
	if (ws_exec(st, spent_ddl, err) < 0 || ws_exec(st, "COMMIT", err) < 0) {
		struct world_err ig;
		ws_exec(st, "ROLLBACK", &ig);
		return -1;
	}
	return 0;
}
