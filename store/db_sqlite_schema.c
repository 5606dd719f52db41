/* store/db_sqlite_schema.c: the World store's schema on SQLite, the one
 * place it is written (PostgreSQL's: store/schema_pg.c): the tables of
 * schema versions 1, 2 and 3 (PRAGMA user_version), a new store's
 * creation, the migrations from 1 and 2, and what a writer's open adds to
 * a store of the current version that lacks it -- the indexes later builds
 * added, the operator token's table, the change counters (store/changes.c),
 * the running budget totals and the episode homes' table (store/home.h).
 *
 * The running budget totals. Why: an effect's budget check sums the costs
 * of its episode's earlier intents for that effect and scope
 * (world_journal_spent), inside the effect's write transaction. Read
 * from the journal that sum reads every such intent -- a cost that grows
 * with the episode, an episode of n effects O(n^2). journal_spent_total
 * keeps the sum per (episode, effect, scope), moved by a trigger on every
 * intent the journal gets, in the same transaction (a savepoint or
 * transaction rolled back takes the total back with it), so the check is
 * one primary-key lookup. Journal rows are never updated or deleted: the
 * insert trigger is all it needs.
 *
 * Every table or trigger added to a store of the current version is read
 * for first (no write lock on a store that has it), else made in one
 * BEGIN IMMEDIATE transaction: a DDL statement on its own would upgrade a
 * read to a write, which SQLite refuses at once (no busy wait) when
 * another writer committed meanwhile (two daemons starting together). */
#include "store/db_sqlite.h"
#include "store/sql.h"
#include "common/canon.h"
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#define WS_STR2(x) #x
#define WS_STR(x) WS_STR2(x)

#define HOME_DDL_SQLITE                                                                                        \
	"CREATE TABLE IF NOT EXISTS episode_homes(episode TEXT PRIMARY KEY, host TEXT NOT NULL, url TEXT NOT NULL," \
	" lease_until INTEGER NOT NULL, claimed_at INTEGER NOT NULL)"

static const char *const schema_sql =
    "CREATE TABLE objects("
    " ref TEXT PRIMARY KEY, semantic_id TEXT NOT NULL, provenance TEXT NOT NULL,"
    " payload BLOB NOT NULL, size INTEGER NOT NULL, created_at INTEGER NOT NULL);"
    "CREATE TABLE log_entries("
    " entry_index INTEGER PRIMARY KEY, semantics_epoch INTEGER NOT NULL,"
    " entry_hash TEXT NOT NULL UNIQUE, prev_entry_hash TEXT, transition_fn TEXT NOT NULL,"
    " interpreter TEXT NOT NULL, written_by TEXT NOT NULL, transition_ref TEXT NOT NULL,"
    " entry_json BLOB NOT NULL, committed_at INTEGER NOT NULL);"
    "CREATE INDEX log_by_record ON log_entries(transition_ref);"
    "CREATE TABLE worlds("
    " ref TEXT PRIMARY KEY, revision INTEGER NOT NULL, state_root TEXT NOT NULL,"
    " log_head TEXT NOT NULL, payload BLOB NOT NULL);"
    "CREATE TABLE heads("
    " name TEXT PRIMARY KEY, ref TEXT NOT NULL, revision INTEGER NOT NULL, updated_at INTEGER NOT NULL);"
    "CREATE TABLE journal("
    " id INTEGER PRIMARY KEY AUTOINCREMENT,"
    " phase TEXT NOT NULL CHECK (phase IN ('intent','outcome')),"
    " intent_id INTEGER, kind TEXT, subject TEXT, episode TEXT, effect TEXT, scope TEXT,"
    " cost INTEGER NOT NULL DEFAULT 0, status TEXT, ref TEXT, at INTEGER NOT NULL);"
    "CREATE UNIQUE INDEX journal_one_outcome ON journal(intent_id) WHERE phase = 'outcome';"
    "CREATE INDEX journal_spent ON journal(episode, effect, scope) WHERE phase = 'intent';"
    "CREATE TABLE sessions("
    " credential_hash TEXT PRIMARY KEY, episode TEXT NOT NULL, grants TEXT NOT NULL,"
    " expires_at INTEGER NOT NULL, created_at INTEGER NOT NULL);"
    "CREATE TABLE interpreters("
    " ref TEXT PRIMARY KEY, version TEXT NOT NULL, size INTEGER NOT NULL, archived_at INTEGER NOT NULL);";

/* The operator token's sha256, one row (docs/daemon.md, "The operator
 * token"): in schema 2's creation SQL and its migration, and created on a
 * writer's open of a version-2 store of a build without it. */
#define OPERATOR_TOKEN_TABLE \
	"CREATE TABLE IF NOT EXISTS operator_token(id INTEGER PRIMARY KEY CHECK (id = 1), token_hash TEXT NOT NULL," \
	" set_at INTEGER NOT NULL)"

/* What schema 2 adds to schema 1 (a new store gets both; a writer migrates
 * a schema-1 store with this, see migrate_v1). */
static const char *const schema_v2_sql =
    "CREATE TABLE episode_objects(episode TEXT NOT NULL, ref TEXT NOT NULL, PRIMARY KEY(episode, ref)) WITHOUT ROWID;"
    "CREATE INDEX episode_objects_by_ref ON episode_objects(ref);"
    "CREATE TABLE episode_usage(episode TEXT PRIMARY KEY, calls INTEGER NOT NULL, bytes INTEGER NOT NULL);"
    "CREATE UNIQUE INDEX journal_one_commit ON journal(kind, subject) WHERE phase = 'outcome' AND status = 'committed';"
    /* Derived, never written by a caller: the log entries whose invocation
     * record (transition_ref) is a member of the episode, kept by two
     * triggers whichever of the entry and the membership comes first, so a
     * session's page of the log is one index range (world_episode_entries). */
    "CREATE TABLE episode_entries(episode TEXT NOT NULL, entry_index INTEGER NOT NULL,"
    " PRIMARY KEY(episode, entry_index)) WITHOUT ROWID;"
    "CREATE TRIGGER episode_entries_by_member AFTER INSERT ON episode_objects BEGIN"
    " INSERT OR IGNORE INTO episode_entries(episode, entry_index)"
    " SELECT NEW.episode, l.entry_index FROM log_entries l WHERE l.transition_ref = NEW.ref; END;"
    "CREATE TRIGGER episode_entries_by_entry AFTER INSERT ON log_entries BEGIN"
    " INSERT OR IGNORE INTO episode_entries(episode, entry_index)"
    " SELECT m.episode, NEW.entry_index FROM episode_objects m WHERE m.ref = NEW.transition_ref; END;"
    "CREATE INDEX worlds_by_revision ON worlds(revision);"
    /* the lookups that read a whole table without them (docs/store.md, Indexes) */
    "CREATE INDEX worlds_by_state_root ON worlds(state_root, revision);"
    "CREATE INDEX objects_by_semantic ON objects(semantic_id);"
    OPERATOR_TOKEN_TABLE ";";

/* What schema 3 adds (store/tree.h): the log's Merkle tree as
 * Go tlog's stored hashes (index -> 32 bytes), the verifier key of its
 * signing key and the latest signed checkpoint, one row each. A new store
 * gets it; a writer migrates a schema-2 store with it and the tree's
 * backfill (migrate_v2). */
static const char *const schema_v3_sql =
    "CREATE TABLE log_tree(hash_index INTEGER PRIMARY KEY, hash BLOB NOT NULL);"
    "CREATE TABLE log_key(id INTEGER PRIMARY KEY CHECK (id = 1), verifier TEXT NOT NULL, set_at INTEGER NOT NULL);"
    "CREATE TABLE log_checkpoint(id INTEGER PRIMARY KEY CHECK (id = 1), tree_size INTEGER NOT NULL,"
    " note BLOB NOT NULL, signed_at INTEGER NOT NULL);";


/* ---- schema 1 -> 2 ---- */

/* Adds ref to the membership of episode (the migration's backfill). */
static int mig_member(struct world_store *st, struct wdb_stmt *ins, const char *episode, const char *ref,
                      struct world_err *err)
{
	if (!ref || !world_ref_valid(ref)) return 0;
	wdb_reset(ins);
	if (wdb_bind_text(ins, 1, episode, -1, NULL) < 0 || wdb_bind_text(ins, 2, ref, -1, NULL) < 0 ||
	    wdb_step(ins, NULL) != WDB_DONE)
		return ws_sqlerr(st, 0, "migrate to schema 2: episode_objects insert", err);
	wdb_reset(ins);
	return 0;
}

/* A stored object's payload parsed as JSON, or NULL (absent, damaged, not
 * JSON: the backfill skips what it cannot read; the scan reports damage). */
static json_t *mig_json(struct world_store *st, const char *ref)
{
	if (!ref || !world_ref_valid(ref)) return NULL;
	struct world_object o;
	struct world_err ig;
	if (world_object_get(st, ref, &o, &ig) < 0) return NULL;
	json_t *v = world_json_parse((const char *)o.payload, o.len, NULL);
	world_object_free(&o);
	if (v && !json_is_object(v)) { json_decref(v); v = NULL; }
	return v;
}

/* The membership of every committed entry: its invocation record, the
 * record's input, output, plan and effect records (with each effect
 * record's request and result), the entry's hash and its world. */
static int mig_backfill(struct world_store *st, struct world_err *err)
{
	struct wdb_stmt *q = NULL, *ins = NULL;
	int rc = -1, src;
	if (ws_prep(st, WORLD_SQL(MIG_BACKFILL), &q, err) < 0)
		return -1;
	if (ws_prep(st, WORLD_SQL(EPISODE_OBJECT_ADD), &ins, err) < 0) goto out;
	while ((src = wdb_step(q, NULL)) == WDB_ROW) {
		const char *tref = wdb_column_text(q, 0);
		json_t *rec = mig_json(st, tref);
		const char *ep = rec ? json_string_value(json_object_get(rec, "episodeId")) : NULL;
		int bad = 0;
		if (ep && *ep && strlen(ep) <= 256) {
			static const char *const keys[] = { "input", "output", "plan" };
			bad = mig_member(st, ins, ep, tref, err) < 0 ||
			      mig_member(st, ins, ep, wdb_column_text(q, 1), err) < 0 ||
			      mig_member(st, ins, ep, wdb_column_text(q, 2), err) < 0;
			for (size_t k = 0; !bad && k < sizeof keys / sizeof keys[0]; k++)
				bad = mig_member(st, ins, ep, json_string_value(json_object_get(rec, keys[k])), err) < 0;
			size_t i;
			json_t *e;
			json_array_foreach(json_object_get(rec, "effects"), i, e) {
				if (bad) break;
				const char *eref = json_string_value(e);
				bad = mig_member(st, ins, ep, eref, err) < 0;
				json_t *er = bad ? NULL : mig_json(st, eref);
				if (er)
					bad = mig_member(st, ins, ep, json_string_value(json_object_get(er, "requestRef")), err) < 0 ||
					      mig_member(st, ins, ep, json_string_value(json_object_get(er, "resultRef")), err) < 0;
				json_decref(er);
			}
		}
		json_decref(rec);
		if (bad) goto out;
	}
	if (src != WDB_DONE) { ws_sqlerr(st, 0, "migrate to schema 2: log read", err); goto out; }
	rc = 0;
out:
	wdb_finalize(q);
	wdb_finalize(ins);
	return rc;
}

/* Two committed outcomes for one (kind, subject) -- judged by their
 * intents, as outcome rows of old writers may lack both -- cannot be
 * migrated: journal_one_commit would not hold. */
int ws_sqlite_mig_check(struct world_store *st, struct world_err *err)
{
	struct wdb_stmt *s;
	if (ws_prep(st, WORLD_SQL(MIG_CHECK_COMMITS), &s, err) < 0)
		return -1;
	int rc = wdb_step(s, NULL);
	if (rc == WDB_ROW) {
		werr(err, WX_SCHEMA, "store %s: cannot migrate to schema 2: %s %s has %d committed outcomes (at most one "
		     "allowed); store left at schema 1, untouched", st->path, wdb_column_text(s, 0),
		     wdb_column_text(s, 1), (int)wdb_column_int64(s, 2, NULL));
		wdb_finalize(s);
		return -1;
	}
	wdb_finalize(s);
	if (rc != WDB_DONE) return ws_sqlerr(st, 0, "migrate to schema 2: journal check", err);
	return 0;
}

/* One transaction: the outcome rows' kind and subject from their intents,
 * the schema-2 tables and indexes, the membership backfill, user_version 2.
 * Any failure rolls all of it back. (mig_check_commits ran before it, so a
 * store journal_one_commit cannot hold for is refused untouched.) */
static int migrate_v1(struct world_store *st, struct world_err *err)
{
	if (ws_exec(st, "BEGIN IMMEDIATE", err) < 0) return -1;
	/* Two writers opening a version-1 store at once: the second finds it
	 * migrated under the write lock and changes nothing. */
	int v = 0;
	if (ws_sqlite_user_version(st, &v, err) < 0) goto fail;
	if (v >= 2 && v <= WORLD_STORE_SCHEMA_VERSION) return ws_exec(st, "COMMIT", err);
	if (v != 1) {
		werr(err, WX_SCHEMA, "store %s: schema version changed to %d while migrating; store left untouched", st->path, v);
		goto fail;
	}
	if (ws_exec(st, WORLD_SQL(MIG_OUTCOME_SUBJECTS), err) < 0)
		goto fail;
	if (ws_exec(st, schema_v2_sql, err) < 0 || mig_backfill(st, err) < 0 ||
	    ws_exec(st, "PRAGMA user_version=2", err) < 0 || ws_exec(st, "COMMIT", err) < 0)
		goto fail;
	return 0;
fail:;
	struct world_err ig;
	ws_exec(st, "ROLLBACK", &ig);
	return -1;
}

/* Schema 2 -> 3 in one transaction: the tree's tables and the tree of
 * every entry (store/tree.c, ws_tree_backfill), user_version 3. Any
 * failure rolls all of it back. */
static int migrate_v2(struct world_store *st, struct world_err *err)
{
	if (ws_exec(st, "BEGIN IMMEDIATE", err) < 0) return -1;
	int v = 0;
	if (ws_sqlite_user_version(st, &v, err) < 0) goto fail;
	if (v == WORLD_STORE_SCHEMA_VERSION) return ws_exec(st, "COMMIT", err);
	if (v != 2) {
		werr(err, WX_SCHEMA, "store %s: schema version changed to %d while migrating; store left untouched", st->path, v);
		goto fail;
	}
	if (ws_exec(st, schema_v3_sql, err) < 0 || ws_tree_backfill(st, err) < 0 ||
	    ws_exec(st, "PRAGMA user_version=3", err) < 0 || ws_exec(st, "COMMIT", err) < 0)
		goto fail;
	return 0;
fail:;
	struct world_err ig;
	ws_exec(st, "ROLLBACK", &ig);
	return -1;
}



/* A new store's schema, in one BEGIN IMMEDIATE transaction with its
 * version. */
int ws_sqlite_schema_create(struct world_store *st, struct world_err *err)
{
	/* Another writer may be creating it at this moment: the version
	 * is read again under the write lock, and a store it made is
	 * left as it made it. */
	int v2 = 0;
	if (ws_exec(st, "BEGIN IMMEDIATE", err) < 0) return -1;
	if (ws_sqlite_user_version(st, &v2, err) < 0) {
		struct world_err ig;
		ws_exec(st, "ROLLBACK", &ig);
		return -1;
	}
	if (v2 != 0) {
		if (ws_exec(st, "COMMIT", err) < 0) return -1;
	} else if (ws_exec(st, schema_sql, err) < 0 || ws_exec(st, schema_v2_sql, err) < 0 ||
	    ws_exec(st, schema_v3_sql, err) < 0 ||
	    ws_exec(st, "PRAGMA user_version=" WS_STR(WORLD_STORE_SCHEMA_VERSION), err) < 0 ||
	    ws_exec(st, "COMMIT", err) < 0) {
		struct world_err ig;
		ws_exec(st, "ROLLBACK", &ig);
		return -1;
	}
	return 0;
}

/* A schema-1 or -2 store of a writer's open, to the current version. */
int ws_sqlite_migrate(struct world_store *st, int v, struct world_err *err)
{
	if (v == 1 && migrate_v1(st, err) < 0) return -1;
	st->version = 2;
	return migrate_v2(st, err);
}

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
static int changes_setup(struct world_store *st, struct world_err *err)
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
 * transaction (see changes_setup for why not a bare DDL statement). */
static int spent_setup(struct world_store *st, struct world_err *err)
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

/* The episode homes' table (store/home.h). */
static int homes_setup(struct world_store *st, struct world_err *err)
{
	{
		/* read first (no write lock on a store that has it), else made in
		 * one BEGIN IMMEDIATE (store/changes.c says why not bare DDL) */
		struct wdb_stmt *q;
		if (ws_prep(st, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'episode_homes'", &q, err) < 0)
			return -1;
		int qrc = wdb_step(q, NULL);
		int n = qrc == WDB_ROW ? (int)wdb_column_int64(q, 0, NULL) : -1;
		wdb_finalize(q);
		if (n < 0) return ws_sqlerr(st, 0, "episode homes: read schema", err);
		if (n == 1) return 0;
		if (ws_exec(st, "BEGIN IMMEDIATE", err) < 0) return -1;
		if (ws_exec(st, HOME_DDL_SQLITE, err) < 0 || ws_exec(st, "COMMIT", err) < 0) {
			struct world_err ig;
			ws_exec(st, "ROLLBACK", &ig);
			return -1;
		}
		return 0;
	}
}

int ws_sqlite_schema_extras(struct world_store *st, struct world_err *err)
{
	/* The journal is looked up by (kind, subject) for every call and, by the
	 * scan and the provenance walk, for every entry: without this index each
	 * lookup reads the whole journal. Added to stores of this schema version
	 * when a writer opens them (an index changes no stored fact). So are the
	 * schema-2 indexes version-2 stores of the first schema-2 builds lack
	 * (docs/store.md, Indexes). */
	if (ws_exec(st, "CREATE INDEX IF NOT EXISTS journal_by_subject ON journal(kind, subject) WHERE phase = 'intent';"
	                "CREATE INDEX IF NOT EXISTS worlds_by_revision ON worlds(revision);"
	                "CREATE INDEX IF NOT EXISTS worlds_by_state_root ON worlds(state_root, revision);"
	                "CREATE INDEX IF NOT EXISTS objects_by_semantic ON objects(semantic_id);" OPERATOR_TOKEN_TABLE,
	            err) < 0)
		return -1;
	return changes_setup(st, err) < 0 || spent_setup(st, err) < 0 || homes_setup(st, err) < 0 ? -1 : 0;
}
