/* store/schema_pg.h: the World store's schema for PostgreSQL, the one
 * place it is written (SQLite's: store/db_sqlite_schema.c), the
 * translation of SQLite's tables, indexes and triggers; made and migrated
 * by the PostgreSQL engine's open (store/db_pg_store.c) and by
 * worldd store copy (store/copy.c). tests/store/test_db checks that it has
 * every table and column of a fresh SQLite store.
 *
 * The translation: the same tables, columns and index names; INTEGER is
 * BIGINT (SQLite integers are 64-bit), BLOB is BYTEA, the journal's
 * AUTOINCREMENT id an identity column, WITHOUT ROWID tables plain tables
 * with the same primary keys, the partial indexes the same, the triggers
 * PL/pgSQL functions. Two things SQLite has implicitly are columns here:
 * `objects.seq` (SQLite's rowid: insertion order, which OBJECTS_OF_KIND
 * sorts by) and the table `world_schema` (PRAGMA user_version). One table
 * holds what SQLite keeps beside the database: `archive`, the interpreter
 * archive's bytes and manifest.json (store/copy.h fills it). */
#ifndef WORLD_STORE_SCHEMA_PG_H
#define WORLD_STORE_SCHEMA_PG_H

#define WORLD_PG_SCHEMA_VERSION 3

/* What schema 3 adds (the log's tree, key and checkpoint: store/tree.h);
 * a writer migrates a version-2 database with it and the tree's backfill. */
#define WORLD_PG_SCHEMA_V3                                                                              \
	"CREATE TABLE log_tree(hash_index BIGINT PRIMARY KEY, hash BYTEA NOT NULL);"                        \
	"CREATE TABLE log_key(id BIGINT PRIMARY KEY CHECK (id = 1), verifier TEXT NOT NULL, set_at BIGINT NOT NULL);" \
	"CREATE TABLE log_checkpoint(id BIGINT PRIMARY KEY CHECK (id = 1), tree_size BIGINT NOT NULL,"        \
	" note BYTEA NOT NULL, signed_at BIGINT NOT NULL);"
extern const char world_pg_schema_v3[];

/* Creates every table, index, function and trigger, and the one row of
 * world_schema and store_changes; for a database without them (run it in
 * one transaction). */
extern const char world_pg_schema[];
/* The episode homes' table (store/home.h), made by a writer's open of a
 * database that lacks it. */
extern const char world_pg_schema_homes[];
/* The columns PostgreSQL has beyond SQLite's ("table.column" each, NULL
 * ended): SQLite keeps them implicitly. */
extern const char *const world_pg_schema_extra_columns[];
/* Tables PostgreSQL has beyond SQLite's (NULL ended). */
extern const char *const world_pg_schema_extra_tables[];
#endif
