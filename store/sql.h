/* store/sql.h: every SQL statement that reads or writes rows of a World
 * store, in one table (store/sql.c): the store's own (the core's files, scan.c,
 * archive.c), the provenance walk's (coordinator/provenance.c) and the
 * daemon's read routes' (daemon/reads.c). Callers prepare
 * WORLD_SQL(NAME) rather than a literal, so tests/store/test_query_plans can
 * prepare every statement there is and check its plan with EXPLAIN QUERY
 * PLAN: no statement may read a whole table of the store unless its entry
 * says why it does so by design (its `scan` reason).
 *
 * Not here: the schema itself (each engine's: store/db_sqlite_schema.c,
 * store/schema_pg.c), transaction control (BEGIN,
 * COMMIT, SAVEPOINT, RELEASE, ROLLBACK) and PRAGMAs, which have no plan.
 * Each entry's `sql` is SQLite's text; `pg` says where PostgreSQL's
 * differs (docs/store.md, "The driver seam"). */
#ifndef WORLD_STORE_SQL_H
#define WORLD_STORE_SQL_H

enum world_sql_id {
	/* objects */
	WSQ_OBJECT_EXISTS,
	WSQ_OBJECT_INSERT,
	WSQ_OBJECT_GET,
	WSQ_OBJECT_PAYLOAD,
	WSQ_OBJECT_KIND_PAYLOAD,
	WSQ_OBJECTS_BY_SEMANTIC,
	WSQ_OBJECTS_OF_KIND,
	/* log entries and worlds */
	WSQ_LOG_LAST,
	WSQ_LOG_TIP,
	WSQ_LOG_INSERT,
	WSQ_LOG_GET,
	WSQ_LOG_HASH_AT,
	WSQ_LOG_FIND_HASH,
	WSQ_LOG_FIND_RECORD,
	WSQ_WORLD_INSERT,
	WSQ_WORLD_GET,
	WSQ_WORLD_FIND_REF,
	WSQ_WORLD_FIND_ROOT,
	WSQ_WORLD_ROOT_AT,
	/* heads */
	WSQ_HEAD_GET,
	WSQ_HEAD_PUT,
	/* journal */
	WSQ_JOURNAL_INTENT,
	WSQ_JOURNAL_INTENT_GET,
	WSQ_JOURNAL_INTENTS_GET4,
	WSQ_JOURNAL_OUTCOME,
	WSQ_JOURNAL_SPENT,
	WSQ_JOURNAL_SPENT_SUM,
	WSQ_JOURNAL_FIND,
	WSQ_JOURNAL_INDETERMINATE,
	/* sessions */
	WSQ_SESSION_PUT,
	WSQ_SESSION_GET,
	WSQ_SESSION_LIST,
	WSQ_SESSION_REVOKE_ID,
	WSQ_SESSION_REVOKE_EPISODE,
	/* the operator token */
	WSQ_OPERATOR_TOKEN_GET,
	WSQ_OPERATOR_TOKEN_INIT,
	WSQ_OPERATOR_TOKEN_PUT,
	/* change detection (store/changes.c) */
	WSQ_CHANGES_GET,
	WSQ_SPENT_SCHEMA,
	WSQ_CHANGES_SCHEMA,
	/* episodes (schema 2) */
	WSQ_EPISODE_OBJECT_ADD,
	WSQ_EPISODE_OBJECTS_ADD8,
	WSQ_EPISODE_HAS_OBJECT,
	WSQ_EPISODE_USAGE_GET,
	WSQ_EPISODE_USAGE_ADD,
	WSQ_EPISODE_HAS_ENTRY,
	WSQ_EPISODE_ENTRIES,
	WSQ_EPISODE_LAST_ENTRY,
	WSQ_EPISODE_OBJECT_VISIBLE,
	WSQ_EPISODE_OBJECTS_BY_SEMANTIC,
	WSQ_WORLD_AT,
	/* interpreter archive */
	WSQ_INTERP_INSERT,
	WSQ_INTERP_GET,
	WSQ_BACKUP_INTERPS,
	/* the integrity scan's cursors */
	WSQ_SCAN_LOG,
	WSQ_SCAN_WORLDS,
	WSQ_SCAN_OBJECTS,
	WSQ_STREAM_OBJECTS,
	WSQ_STREAM_WORLDS,
	WSQ_STREAM_JOURNAL,
	WSQ_WINDOW_OBJECTS,
	WSQ_OBJECT_ROWID,
	WSQ_SCAN_ARCHIVE,
	/* opening and migrating */
	WSQ_SCHEMA_TABLES,
	WSQ_MIG_OUTCOME_SUBJECTS,
	WSQ_MIG_CHECK_COMMITS,
	WSQ_MIG_BACKFILL,
	/* the log's Merkle tree, its key and checkpoint (store/tree.c, schema 3) */
	WSQ_TREE_GET,
	WSQ_TREE_PUT,
	WSQ_TREE_LEAVES,
	WSQ_LOG_KEY_GET,
	WSQ_LOG_KEY_INIT,
	WSQ_LOG_KEY_PUT,
	WSQ_LOG_CHECKPOINT_GET,
	WSQ_LOG_CHECKPOINT_PUT,
	/* episode homes (store/home.c) */
	WSQ_HOME_GET,
	WSQ_HOME_CLAIM,
	WSQ_HOME_RENEW,
	WSQ_HOME_MOVE,
	WSQ_HOME_LIST,
	WSQ_COUNT
};

struct world_sql {
	const char *name; /* "OBJECT_GET": the enum name without WSQ_ */
	const char *sql;
	/* NULL: every table it touches is reached through an index (or the
	 * rowid); else why it reads a whole table (or a range of one without
	 * a bound) by design. */
	const char *scan;
	/* The dialect, in this one place: NULL when PostgreSQL runs the same
	 * text, else PostgreSQL's (ON CONFLICT DO NOTHING for INSERT OR
	 * IGNORE, no INDEXED BY / NOT INDEXED, objects.seq for the rowid,
	 * RETURNING id for the journal's new row); "" when the statement is
	 * SQLite's alone (its schema table, the schema-1 migration) and never
	 * runs on PostgreSQL. ws_stmt picks by the handle's driver. */
	const char *pg;
};
/* The SQL dialect an engine speaks (struct ws_engine, dialect): SQLite's
 * text, or PostgreSQL's where its entry has one. */
enum world_sql_dialect { WSQL_SQLITE = 0, WSQL_PG = 1 };
/* The text of statement ID in DIALECT. */
const char *world_sql_text(int id, enum world_sql_dialect dialect);

extern const struct world_sql world_sql[WSQ_COUNT];

#define WORLD_SQL(id) (world_sql[WSQ_##id].sql)
#endif
