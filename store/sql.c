/* store/sql.c: the statement table of store/sql.h. The indexes each
 * statement relies on are in each engine's schema (store/db_sqlite_schema.c,
 * store/schema_pg.c) and docs/store.md (Indexes);
 * tests/store/test_query_plans checks every plan. */
#include "store/sql.h"
#include "store/store_internal.h"

#define Q(id, text) [WSQ_##id] = { #id, text, NULL, NULL }
#define SCAN(id, text, why) [WSQ_##id] = { #id, text, why, NULL }
/* the same with PostgreSQL's text (sql.h, `pg`) */
#define QPG(id, text, pg) [WSQ_##id] = { #id, text, NULL, pg }
#define SCANPG(id, text, why, pg) [WSQ_##id] = { #id, text, why, pg }
/* SQLite's alone: never prepared on PostgreSQL */
#define SQLITE_ONLY ""


const struct world_sql world_sql[WSQ_COUNT] = {
	/* objects: by ref (its primary key) */
	Q(OBJECT_EXISTS, "SELECT 1 FROM objects WHERE ref = ?"),
	QPG(OBJECT_INSERT, "INSERT OR IGNORE INTO objects(ref, semantic_id, provenance, payload, size, created_at) VALUES (?,?,?,?,?,?)",
	    "INSERT INTO objects(ref, semantic_id, provenance, payload, size, created_at) VALUES (?,?,?,?,?,?) "
	    "ON CONFLICT DO NOTHING"),
	Q(OBJECT_GET, "SELECT semantic_id, provenance, payload FROM objects WHERE ref = ?"),
	Q(OBJECT_PAYLOAD, "SELECT payload FROM objects WHERE ref = ?"),
	Q(OBJECT_KIND_PAYLOAD, "SELECT semantic_id, payload FROM objects WHERE ref = ?"),
	/* the daemon's page of one semanticId's objects: that kind's objects (objects_by_semantic, kept on
	 * (semantic_id, rowid) so an insert touches the end of its kind, not a random page), sorted by ref.
	 * INDEXED BY: with statistics (ANALYZE) the planner would walk every ref after the cursor instead,
	 * reading all objects to page a rare kind */
	QPG(OBJECTS_BY_SEMANTIC, "SELECT ref, provenance FROM objects INDEXED BY objects_by_semantic WHERE semantic_id = ?1 "
	                         "AND ref > ?2 ORDER BY ref LIMIT ?3",
	    "SELECT ref, provenance FROM objects WHERE semantic_id = ?1 AND ref > ?2 ORDER BY ref LIMIT ?3"),
	/* every object of one kind since a time, in insertion order (objects_by_semantic is (semantic_id) and
	 * so (semantic_id, rowid): no sort), e.g. `worldd journal --denials`; INDEXED BY as above */
	QPG(OBJECTS_OF_KIND, "SELECT ref, created_at FROM objects INDEXED BY objects_by_semantic WHERE semantic_id = ?1 "
	                     "AND created_at >= ?2 ORDER BY rowid",
	    "SELECT ref, created_at FROM objects WHERE semantic_id = ?1 AND created_at >= ?2 ORDER BY seq"),

	/* log entries: by index (the rowid), entryHash (unique), transitionRef (log_by_record) */
	Q(LOG_LAST, "SELECT entry_index, entry_hash FROM log_entries WHERE entry_index = (SELECT max(entry_index) FROM "
	            "log_entries)"),
	/* the log's tip for an append, in one statement (one round trip on
	 * PostgreSQL, not four): the last entry (index, hash; NULLs when the log
	 * is empty), head ?1 (ref, revision; NULLs when absent), and whether
	 * object ?2 is stored */
	Q(LOG_TIP, "SELECT l.entry_index, l.entry_hash, h.ref, h.revision, "
	           "CASE WHEN EXISTS (SELECT 1 FROM objects WHERE ref = ?2) THEN 1 ELSE 0 END FROM (SELECT 1 AS one) AS t "
	           "LEFT JOIN log_entries l ON l.entry_index = (SELECT max(entry_index) FROM log_entries) "
	           "LEFT JOIN heads h ON h.name = ?1"),
	Q(LOG_INSERT, "INSERT INTO log_entries(entry_index, semantics_epoch, entry_hash, prev_entry_hash, transition_fn,"
	              " interpreter, written_by, transition_ref, entry_json, committed_at) VALUES (?,?,?,?,?,?,?,?,?,?)"),
	Q(LOG_GET, "SELECT " WS_LOG_COLS " FROM log_entries WHERE entry_index = ?"),
	Q(LOG_HASH_AT, "SELECT entry_hash FROM log_entries WHERE entry_index = ?"),
	Q(LOG_FIND_HASH, "SELECT entry_index FROM log_entries WHERE entry_hash = ? LIMIT 1"),
	Q(LOG_FIND_RECORD, "SELECT entry_index FROM log_entries WHERE transition_ref = ? ORDER BY entry_index LIMIT 1"),
	/* worlds: by ref (primary key), revision (worlds_by_revision), stateRoot (worlds_by_state_root) */
	Q(WORLD_INSERT, "INSERT INTO worlds(ref, revision, state_root, log_head, payload) VALUES (?,?,?,?,?)"),
	Q(WORLD_GET, "SELECT " WS_WORLD_COLS " FROM worlds WHERE ref = ?"),
	Q(WORLD_FIND_REF, "SELECT revision FROM worlds WHERE ref = ? LIMIT 1"),
	Q(WORLD_FIND_ROOT, "SELECT revision FROM worlds WHERE state_root = ? ORDER BY revision LIMIT 1"),
	Q(WORLD_ROOT_AT, "SELECT state_root FROM worlds WHERE revision = ? ORDER BY ref LIMIT 1"),

	Q(HEAD_GET, "SELECT ref, revision FROM heads WHERE name = ?"),
	Q(HEAD_PUT, "INSERT INTO heads(name, ref, revision, updated_at) VALUES (?,?,?,?) "
	            "ON CONFLICT(name) DO UPDATE SET ref = excluded.ref, revision = excluded.revision, "
	            "updated_at = excluded.updated_at"),

	/* journal: by id, intent_id (journal_one_outcome), (kind, subject)
	 * (journal_by_subject), (episode, effect, scope) (journal_spent) */
	QPG(JOURNAL_INTENT, "INSERT INTO journal(phase, kind, subject, episode, effect, scope, cost, ref, at) "
	                    "VALUES ('intent',?,?,?,?,?,?,?,?)",
	    "INSERT INTO journal(phase, kind, subject, episode, effect, scope, cost, ref, at) "
	    "VALUES ('intent',?,?,?,?,?,?,?,?) RETURNING id"),
	Q(JOURNAL_INTENT_GET, "SELECT kind, subject, (SELECT count(*) FROM journal o WHERE o.phase = 'outcome' AND "
	                      "o.intent_id = i.id) FROM journal i WHERE i.id = ? AND i.phase = 'intent'"),
	/* up to four intents at once (world_journal_expect) */
	Q(JOURNAL_INTENTS_GET4, "SELECT i.id, i.kind, i.subject, (SELECT count(*) FROM journal o WHERE o.phase = 'outcome' "
	                        "AND o.intent_id = i.id) FROM journal i WHERE i.id IN (?1, ?2, ?3, ?4) AND i.phase = 'intent'"),
	Q(JOURNAL_OUTCOME, "INSERT INTO journal(phase, intent_id, kind, subject, status, ref, at) "
	                   "VALUES ('outcome',?,?,?,?,?,?)"),
	/* the running total (store/db_sqlite_schema.c), one primary-key lookup */
	Q(JOURNAL_SPENT, "SELECT coalesce((SELECT spent FROM journal_spent_total WHERE episode = ? AND effect = ? AND "
	                 "scope = ?), 0)"),
	/* PostgreSQL sorts NULL (no outcome) first in DESC, SQLite last */
	QPG(JOURNAL_FIND, "SELECT i.id, i.ref, o.status, o.ref FROM journal i LEFT JOIN journal o ON o.phase = 'outcome' "
	                  "AND o.intent_id = i.id WHERE i.phase = 'intent' AND i.kind = ? AND i.subject = ? "
	                  "ORDER BY (o.status = 'committed') DESC, i.id DESC LIMIT 1",
	    "SELECT i.id, i.ref, o.status, o.ref FROM journal i LEFT JOIN journal o ON o.phase = 'outcome' "
	    "AND o.intent_id = i.id WHERE i.phase = 'intent' AND i.kind = ? AND i.subject = ? "
	    "ORDER BY (o.status = 'committed') DESC NULLS LAST, i.id DESC LIMIT 1"),
	SCAN(JOURNAL_INDETERMINATE,
	     "SELECT i.id, i.kind, i.subject, i.ref FROM journal i WHERE i.phase = 'intent' AND NOT EXISTS "
	     "(SELECT 1 FROM journal o WHERE o.phase = 'outcome' AND o.intent_id = i.id) ORDER BY i.id",
	     "recovery lists every intent without an outcome: one pass over the journal (at the daemon's start and "
	     "`worldd journal`), each intent's outcome looked up by journal_one_outcome"),

	/* sessions: by credential hash (primary key); the table holds one row per live grant */
	Q(SESSION_PUT, "INSERT INTO sessions(credential_hash, episode, grants, expires_at, created_at) VALUES (?,?,?,?,?)"),
	Q(SESSION_GET, "SELECT episode, grants, expires_at, created_at FROM sessions WHERE credential_hash = ?"),
	Q(SESSION_LIST, "SELECT credential_hash, episode, grants, expires_at, created_at FROM sessions "
	                "ORDER BY created_at, credential_hash"),
	Q(SESSION_REVOKE_ID, "DELETE FROM sessions WHERE credential_hash = ?"),
	Q(SESSION_REVOKE_EPISODE, "DELETE FROM sessions WHERE episode = ?"),

	/* the operator token: its one row, by the primary key */
	Q(OPERATOR_TOKEN_GET, "SELECT token_hash FROM operator_token WHERE id = 1"),
	QPG(OPERATOR_TOKEN_INIT, "INSERT OR IGNORE INTO operator_token(id, token_hash, set_at) VALUES (1,?,?)",
	    "INSERT INTO operator_token(id, token_hash, set_at) VALUES (1,?,?) ON CONFLICT DO NOTHING"),
	Q(OPERATOR_TOKEN_PUT, "INSERT INTO operator_token(id, token_hash, set_at) VALUES (1,?,?) ON CONFLICT(id) DO UPDATE "
	                      "SET token_hash = excluded.token_hash, set_at = excluded.set_at"),
	/* change detection: the one counters row (its primary key) */
	/* with the log's tip as LOG_TIP reads it (a writer's look in its
	 * transaction spares world_log_next its read) and an episode's usage
	 * as EPISODE_USAGE_GET reads it (store/changes.c) */
	Q(CHANGES_GET, "SELECT c.sessions, c.registries, l.entry_index, l.entry_hash, h.ref, h.revision, "
	               "(SELECT calls FROM episode_usage WHERE episode = ?2), "
	               "(SELECT bytes FROM episode_usage WHERE episode = ?2) FROM store_changes c "
	               "LEFT JOIN log_entries l ON l.entry_index = (SELECT max(entry_index) FROM log_entries) "
	               "LEFT JOIN heads h ON h.name = ?1 WHERE c.id = 1"),
	/* the budget sum read from the journal: only on a store no writer of
	 * this build has opened (no journal_spent_total yet, store/db_sqlite_schema.c) */
	Q(JOURNAL_SPENT_SUM, "SELECT coalesce(sum(cost), 0) FROM journal WHERE phase = 'intent' AND kind = 'effect' AND "
	                     "episode = ? AND effect = ? AND scope = ?"),
	SCANPG(SPENT_SCHEMA, "SELECT count(*) FROM sqlite_master WHERE name IN ('journal_spent_total', 'journal_spent_add')",
	       "the schema table (a few dozen rows), read once by a writer's open", SQLITE_ONLY),
	SCANPG(CHANGES_SCHEMA, "SELECT count(*) FROM sqlite_master WHERE name = 'store_changes' OR name LIKE 'store_changes_%'",
	       "the schema table (a few dozen rows), read once by a writer's open", SQLITE_ONLY),

	/* episodes: (episode, ref) and (episode) are the primary keys */
	QPG(EPISODE_OBJECT_ADD, "INSERT OR IGNORE INTO episode_objects(episode, ref) VALUES (?,?)",
	    "INSERT INTO episode_objects(episode, ref) VALUES (?,?) ON CONFLICT DO NOTHING"),
	/* up to WS_MEMBERS_AT_ONCE (8) refs of one episode in one statement
	 * (a call's six objects: one round trip on PostgreSQL, not six); the
	 * slots not used are bound NULL and left out */
	QPG(EPISODE_OBJECTS_ADD8, "INSERT OR IGNORE INTO episode_objects(episode, ref) SELECT ?1, column1 FROM "
	                          "(VALUES (?2),(?3),(?4),(?5),(?6),(?7),(?8),(?9)) WHERE column1 IS NOT NULL",
	    "INSERT INTO episode_objects(episode, ref) SELECT ?1, r FROM (VALUES (?2::text),(?3),(?4),(?5),(?6),(?7),"
	    "(?8),(?9)) AS v(r) WHERE r IS NOT NULL ON CONFLICT DO NOTHING"),
	Q(EPISODE_HAS_OBJECT, "SELECT 1 FROM episode_objects WHERE episode = ? AND ref = ?"),
	Q(EPISODE_USAGE_GET, "SELECT calls, bytes FROM episode_usage WHERE episode = ?"),
	/* add to an episode's counts in one statement with no answer to read
	 * (a pipeline defers it): when the sums would pass ?4 / ?5 (LLONG_MAX
	 * less what is added) the new counts are NULL, which the columns' NOT
	 * NULL refuses, and the statement fails whole (store/episodes.c) */
	Q(EPISODE_USAGE_ADD, "INSERT INTO episode_usage(episode, calls, bytes) VALUES (?1,?2,?3) ON CONFLICT(episode) DO UPDATE "
	                     "SET calls = CASE WHEN episode_usage.calls <= ?4 AND episode_usage.bytes <= ?5 "
	                     "THEN episode_usage.calls + excluded.calls END, "
	                     "bytes = CASE WHEN episode_usage.calls <= ?4 AND episode_usage.bytes <= ?5 "
	                     "THEN episode_usage.bytes + excluded.bytes END"),
	/* a session's scoped reads (daemon/reads.c, replay_route.c): episode_entries' key (episode, entry_index) */
	Q(EPISODE_HAS_ENTRY, "SELECT 1 FROM episode_entries WHERE episode = ? AND entry_index = ?"),
	Q(EPISODE_ENTRIES, "SELECT entry_index FROM episode_entries WHERE episode = ? AND entry_index >= ? "
	                   "ORDER BY entry_index LIMIT ?"),
	Q(EPISODE_LAST_ENTRY, "SELECT entry_index FROM episode_entries WHERE episode = ? ORDER BY entry_index DESC LIMIT 1"),
	/* a member (episode_objects' key), or an object of one of the public semantic ids ?3..?5 (objects' key) */
	Q(EPISODE_OBJECT_VISIBLE, "SELECT EXISTS (SELECT 1 FROM episode_objects WHERE episode = ?1 AND ref = ?2) OR "
	                          "EXISTS (SELECT 1 FROM objects WHERE ref = ?2 AND semantic_id IN (?3, ?4, ?5))"),
	/* a page of the episode's members of one semanticId: its members in ref order, each looked up by ref
	 * (CROSS JOIN keeps episode_objects outside: other episodes' objects are never read) */
	Q(EPISODE_OBJECTS_BY_SEMANTIC, "SELECT o.ref, o.provenance FROM episode_objects m CROSS JOIN objects o ON o.ref = m.ref "
	                               "WHERE m.episode = ?4 AND m.ref > ?2 AND o.semantic_id = ?1 ORDER BY m.ref LIMIT ?3"),
	Q(WORLD_AT, "SELECT ref FROM worlds WHERE revision = ? ORDER BY ref LIMIT 1"),

	QPG(INTERP_INSERT, "INSERT OR IGNORE INTO interpreters(ref, version, size, archived_at) VALUES (?,?,?,?)",
	    "INSERT INTO interpreters(ref, version, size, archived_at) VALUES (?,?,?,?) ON CONFLICT DO NOTHING"),
	Q(INTERP_GET, "SELECT version, size FROM interpreters WHERE ref = ?"),
	SCAN(BACKUP_INTERPS, "SELECT ref FROM interpreters ORDER BY ref",
	     "the backup copies every archived interpreter (a handful of rows)"),

	/* the integrity scan (store/scan.c). The cursors are paged by their
	 * keys: ?1 the first key of the page, ?2 its rows (SQLite: -1, one
	 * page, as SQLite steps a result row by row; PostgreSQL fetches a
	 * result whole, so a page is a bounded number of rows) */
	SCAN(SCAN_LOG, "SELECT " WS_LOG_COLS " FROM log_entries WHERE entry_index >= ?1 ORDER BY entry_index LIMIT ?2",
	     "the integrity scan's cursor: every entry once, in index order, from the resume point"),
	SCAN(SCAN_WORLDS, "SELECT " WS_WORLD_COLS " FROM worlds WHERE ref >= ?1 ORDER BY ref LIMIT ?2",
	     "the integrity scan's cursor: every world once, in ref order, from the resume point"),
	SCAN(SCAN_OBJECTS, "SELECT ref, payload FROM objects WHERE ref >= ?1 ORDER BY ref LIMIT ?2",
	     "the integrity scan's --objects cursor: every object once (orphans included), in ref order"),
	/* storage order: the rowid (PostgreSQL: objects.seq, unique) */
	SCANPG(STREAM_OBJECTS, "SELECT ref, semantic_id, payload, rowid FROM objects WHERE rowid >= ?1 ORDER BY rowid LIMIT ?2",
	     "the full integrity scan's first pass: every object once, in storage order, each payload hashed once "
	     "(scan.c, stream_scan)",
	     "SELECT ref, semantic_id, payload, seq FROM objects WHERE seq >= ?1 ORDER BY seq LIMIT ?2"),
	/* storage order on SQLite; PostgreSQL's worlds have no insertion order of their own: by ref (the
	 * pass keeps sets, not an order) */
	SCANPG(STREAM_WORLDS, "SELECT " WS_WORLD_COLS ", rowid FROM worlds WHERE rowid >= ?1 ORDER BY rowid LIMIT ?2",
	     "the full integrity scan's second pass: every world once, in storage order (scan.c, stream_scan)",
	     "SELECT " WS_WORLD_COLS ", ref FROM worlds WHERE ref >= ?1 ORDER BY ref LIMIT ?2"),
	/* the columns JOURNAL_FIND orders and answers by, for every invocation intent; the subject only when it
	 * is text (JOURNAL_FIND binds text: no other value equals it; PostgreSQL's column is text) and its
	 * length in bytes (a text holding a NUL equals no bound subject) */
	SCANPG(STREAM_JOURNAL,
	     "SELECT i.id, CASE WHEN typeof(i.subject) = 'text' THEN i.subject END, i.ref, (o.status = 'committed'), "
	     "o.status, o.ref, length(CAST(i.subject AS BLOB)) FROM journal AS i NOT INDEXED "
	     "LEFT JOIN journal AS o ON o.phase = 'outcome' AND o.intent_id = i.id "
	     "WHERE i.phase = 'intent' AND i.kind = 'invocation' AND i.id >= ?1 ORDER BY i.id LIMIT ?2",
	     "the full integrity scan's journal pass: every intent once, in storage order, its outcome by "
	     "journal_one_outcome (ascending with the intents) instead of one journal_by_subject lookup an entry "
	     "(scan.c, stream_journal)",
	     "SELECT i.id, i.subject, i.ref, (o.status = 'committed'), o.status, o.ref, octet_length(i.subject) "
	     "FROM journal AS i LEFT JOIN journal AS o ON o.phase = 'outcome' AND o.intent_id = i.id "
	     "WHERE i.phase = 'intent' AND i.kind = 'invocation' AND i.id >= ?1 ORDER BY i.id LIMIT ?2"),
	SCANPG(WINDOW_OBJECTS, "SELECT ref, semantic_id, payload, rowid FROM objects WHERE rowid >= ? ORDER BY rowid LIMIT ?",
	     "a budgeted scan's window: a few thousand objects in storage order from an entry's record on (the next "
	     "entries' records, inputs and outputs), instead of a lookup by ref for each (scan.c, memo_fill)",
	     "SELECT ref, semantic_id, payload, seq FROM objects WHERE seq >= ? ORDER BY seq LIMIT ?"),
	QPG(OBJECT_ROWID, "SELECT rowid FROM objects WHERE ref = ?", "SELECT seq FROM objects WHERE ref = ?"),
	/* the scan's check of an archived interpreter where its bytes are in the database (PostgreSQL's
	 * archive table; SQLite keeps them in DB.artifacts, world_interp_verify) */
	QPG(SCAN_ARCHIVE, "SELECT i.version, i.size, NULL, NULL FROM interpreters i WHERE i.ref = ?1",
	    "SELECT i.version, i.size, a.bytes, a.manifest FROM interpreters i LEFT JOIN archive a ON a.ref = i.ref "
	    "WHERE i.ref = ?1"),

	QPG(SCHEMA_TABLES, "SELECT count(*) FROM sqlite_master", SQLITE_ONLY),
	SCANPG(MIG_OUTCOME_SUBJECTS,
	     "UPDATE journal SET kind = (SELECT i.kind FROM journal i WHERE i.id = journal.intent_id), "
	     "subject = (SELECT i.subject FROM journal i WHERE i.id = journal.intent_id) "
	     "WHERE phase = 'outcome' AND EXISTS (SELECT 1 FROM journal i WHERE i.id = journal.intent_id "
	     "AND i.phase = 'intent')",
	     "the schema 1 -> 2 migration, once per store: every outcome row gets its intent's kind and subject",
	     SQLITE_ONLY),
	SCANPG(MIG_CHECK_COMMITS,
	     "SELECT i.kind, i.subject, count(*) FROM journal o JOIN journal i ON i.id = o.intent_id AND "
	     "i.phase = 'intent' WHERE o.phase = 'outcome' AND o.status = 'committed' GROUP BY i.kind, i.subject "
	     "HAVING count(*) > 1 ORDER BY min(o.id) LIMIT 1",
	     "the schema 1 -> 2 migration's check, once per store: every committed outcome once", SQLITE_ONLY),
	SCANPG(MIG_BACKFILL,
	     "SELECT l.transition_ref, l.entry_hash, (SELECT w.ref FROM worlds w WHERE w.revision = l.entry_index AND "
	     "w.log_head = l.entry_hash LIMIT 1) FROM log_entries l ORDER BY l.entry_index",
	     "the schema 1 -> 2 migration's membership backfill, once per store: every entry once (its world by "
	     "worlds_by_revision)",
	     SQLITE_ONLY),

	/* the log's Merkle tree (store/tree.c): a stored hash by its index (Go tlog's layout; the primary key) */
	Q(TREE_GET, "SELECT hash FROM log_tree WHERE hash_index = ?"),
	Q(TREE_PUT, "INSERT INTO log_tree(hash_index, hash) VALUES (?,?)"),
	/* the leaves in order from an entry on: the schema 2 -> 3 backfill and the scan's recomputation */
	SCAN(TREE_LEAVES, "SELECT entry_index, entry_json FROM log_entries WHERE entry_index >= ?1 ORDER BY entry_index "
	                  "LIMIT ?2",
	     "the tree's backfill (schema 2 -> 3, once per store) and the scan's recomputation of the tree: every "
	     "entry once, in index order, by the primary key"),
	/* the verifier key and the latest signed checkpoint: one row each, by the primary key */
	Q(LOG_KEY_GET, "SELECT verifier FROM log_key WHERE id = 1"),
	Q(LOG_KEY_INIT, "INSERT INTO log_key(id, verifier, set_at) VALUES (1,?,?) ON CONFLICT DO NOTHING"),
	Q(LOG_KEY_PUT, "INSERT INTO log_key(id, verifier, set_at) VALUES (1,?,?) ON CONFLICT(id) DO UPDATE "
	               "SET verifier = excluded.verifier, set_at = excluded.set_at"),
	Q(LOG_CHECKPOINT_GET, "SELECT tree_size, note FROM log_checkpoint WHERE id = 1"),
	/* never backwards: a checkpoint of a smaller tree than the stored one is not kept */
	Q(LOG_CHECKPOINT_PUT, "INSERT INTO log_checkpoint(id, tree_size, note, signed_at) VALUES (1,?,?,?) "
	                      "ON CONFLICT(id) DO UPDATE SET tree_size = excluded.tree_size, note = excluded.note, "
	                      "signed_at = excluded.signed_at WHERE excluded.tree_size >= log_checkpoint.tree_size"),
	/* episode homes (store/home.c): by the primary key; a claim never replaces another host's row */
	Q(HOME_GET, "SELECT host, url, lease_until, claimed_at FROM episode_homes WHERE episode = ?"),
	Q(HOME_CLAIM, "INSERT INTO episode_homes(episode, host, url, lease_until, claimed_at) VALUES (?,?,?,?,?) "
	              "ON CONFLICT(episode) DO NOTHING"),
	Q(HOME_RENEW, "UPDATE episode_homes SET lease_until = ?3, url = ?4 WHERE episode = ?1 AND host = ?2"),
	Q(HOME_MOVE, "INSERT INTO episode_homes(episode, host, url, lease_until, claimed_at) VALUES (?1,?2,?3,?4,?5) "
	             "ON CONFLICT(episode) DO UPDATE SET host = excluded.host, url = excluded.url, "
	             "lease_until = excluded.lease_until, claimed_at = excluded.claimed_at"),
	SCAN(HOME_LIST, "SELECT episode, host, url, lease_until, claimed_at FROM episode_homes ORDER BY episode",
	     "worldd episode homes lists every home (an operator's verb)"),
};

_Static_assert(sizeof world_sql / sizeof world_sql[0] == WSQ_COUNT, "one entry per statement id");

const char *world_sql_text(int id, enum world_sql_dialect dialect)
{
	if (id < 0 || id >= WSQ_COUNT) return NULL;
	if (dialect == WSQL_PG && world_sql[id].pg) return world_sql[id].pg;
	return world_sql[id].sql;
}
