/* store/backup.h: the online backup (docs/operations.md, "Backup and
 * restore").
 *
 * Owns: copying a live store -- daemons and other writers may be writing it
 * -- to DEST and DEST.artifacts, the same layout a store has. The database
 * is copied with SQLite's online backup API inside one read transaction of
 * the source, so the copy is the store as of that transaction's start (every
 * commit acknowledged before the backup began is in it; writers are not
 * blocked: WAL). Every interpreter the copied interpreters table names is
 * copied from <DB>.artifacts with its manifest.json, its bytes re-hashed
 * against its ref. Everything is written into a staging directory
 * DIR/.NAME.backup-XXXXXX beside DEST (DIR and NAME: DEST's directory and
 * file name), scanned there (world_scan, no budget: a copy with a hole is
 * not a backup), then renamed into place: NAME.artifacts to DEST.artifacts
 * first, the database to DEST last, so a result without DEST's database
 * never looks like a store, and DEST exists only complete. A failure
 * removes what it made; a killed backup leaves only the staging directory
 * (a hidden name, no store at DEST): remove it. DEST or DEST.artifacts
 * existing is refused (WX_CONFLICT) before anything is written.
 * A postgresql:// SRC (in a program that enabled the PostgreSQL driver) is
 * copied by world_store_copy (store/copy.h) instead: the same staged,
 * scanned SQLite DEST; pages stays 0. */
#ifndef WORLD_STORE_BACKUP_H
#define WORLD_STORE_BACKUP_H
#include "common/error.h"
#include "store/scan.h"

struct world_backup_result {
	long long pages;        /* database pages copied */
	long long log_entries;  /* entries in the copy */
	int interpreters;       /* archived interpreters copied */
	struct world_scan_result scan;
};

/* scan_opts: how the copy is scanned (the caller's effect record law);
 * its budget and cursors are ignored (the whole copy is scanned). A scan
 * with holes is WX_INTEGRITY, the hole lines printed to scan_out (may be
 * NULL), nothing left at DEST. */
int world_backup(const char *src, const char *dest, const struct world_scan_opts *scan_opts, FILE *scan_out,
                 struct world_backup_result *out, struct world_err *err);
#endif
