/* store/copy.h: a portable, verifiable copy of a store between backends
 * (docs/store.md, "Copying a store between backends";
 * docs/operations.md, "Backup and restore"): SQLite -> PostgreSQL,
 * PostgreSQL -> SQLite, SQLite -> SQLite, through the SQL driver
 * (store/db.h) on both ends, so it needs nothing of the store core.
 *
 * Owns: reading SRC in one snapshot (SQLite: one read transaction;
 * PostgreSQL: BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY, on one
 * backend from the first read to the last) table by table in key order --
 * objects (with its insertion order: SQLite's rowid, PostgreSQL's seq),
 * log_entries, worlds, heads, journal, sessions, interpreters,
 * episode_objects, episode_usage, episode_entries, operator_token -- and
 * the interpreter archive (SQLite: <DB>.artifacts; PostgreSQL: the table
 * archive), writing every row byte for byte into DEST, and proving it:
 *   - on the way: every object's ref is the hash of its payload, the log is
 *     one chain (index 1, 2, ...; prevEntryHash = the previous entryHash),
 *     every archived interpreter hashes to its ref (re-hashed where it is
 *     read and again before it is written) and its manifest names that
 *     ref and size, every interpreters row has its archived bytes; on
 *     SQLite every value has its column's type (text, integer, blob; no
 *     NUL in text);
 *   - afterwards: DEST read back (in its own snapshot) has the same row
 *     count and the same digest (SHA-256 over every value, typed) in every
 *     table as SRC; a SQLite DEST is also scanned in full (world_scan,
 *     objects included) and refused unless clean.
 * store_changes (derived counters) is recreated, not copied.
 *
 * DEST is either a path that does not exist (nor DEST.artifacts): the store
 * is made as a new store of this build (world_store_open, WORLD_STORE_WRITER)
 * in a staging directory DIR/.NAME.copy-XXXXXX beside DEST, filled,
 * fsynced, read back, scanned, then renamed into place: NAME.artifacts
 * first, the database last, so DEST exists only complete; a failure
 * removes the staging directory; a killed copy leaves only it (a hidden
 * name, no store at DEST). Or an EMPTY PostgreSQL database (no table,
 * sequence or function of its own): the schema (store/schema_pg.h) and
 * every row are written, read back and compared in ONE transaction, so a
 * failure -- or a kill -- leaves it empty.
 *
 * Credentials: the URI's, PGPASSFILE's, or password_file's (store/db.h); no
 * text this module produces holds a password (URIs are named by wdb_name).
 * Test pause point (common/pause.h): copy.writing, DEST holds the objects
 * but the copy is not complete. */
#ifndef WORLD_STORE_COPY_H
#define WORLD_STORE_COPY_H
#include "common/error.h"
#include "store/scan.h"
#include <stdio.h>

#define WORLD_COPY_TABLES 15 /* the fourteen tables and the archive */

struct world_copy_opts {
	const char *src_password_file;  /* PostgreSQL SRC: file holding the password (NULL = none) */
	const char *dest_password_file; /* PostgreSQL DEST: likewise */
	/* how a SQLite DEST is scanned: the effect record law (may be NULL) */
	int (*effect_record_check)(const json_t *record, struct world_err *err);
	FILE *scan_out; /* a SQLite DEST's hole lines (may be NULL) */
};

struct world_copy_result {
	const char *table[WORLD_COPY_TABLES]; /* names, in copy order */
	long long rows[WORLD_COPY_TABLES];
	char digest[WORLD_COPY_TABLES][65]; /* hex SHA-256 of each table's values */
	int ntables;
	long long log_entries;
	int interpreters;
	int scanned; /* 1: a SQLite DEST scanned clean (scan holds its figures) */
	struct world_scan_result scan;
	char src_name[512], dest_name[512]; /* printable (no password) */
};

/* 0, or -1 with err: WX_USAGE (bad names; the same store twice), WX_CONFLICT
 * (DEST exists / the PostgreSQL DEST is not empty: nothing written),
 * WX_NOT_FOUND (SRC absent, DEST's directory absent), WX_SCHEMA (SRC not a
 * store of this schema version), WX_INTEGRITY (SRC fails a check on the
 * way, or DEST differs from SRC, or a SQLite DEST scans with holes: nothing
 * left at DEST), WX_IO. */
int world_store_copy(const char *src, const char *dest, const struct world_copy_opts *opts,
                     struct world_copy_result *out, struct world_err *err);
#endif
