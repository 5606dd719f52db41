/* cli/verbs_copy.c: `worldd store copy` (cli/copy_exec.h, store/copy.h). */
#include "cli/copy_exec.h"
#include "cli/serve_exec.h"
#include "cli/flags.h"
#include "cli/verbs.h"
#include "broker/effect.h"
#include "store/copy.h"
#include "store/db.h"
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef WORLD_PKGLIBEXECDIR
#define WORLD_PKGLIBEXECDIR "/usr/local/libexec/world"
#endif

static const char copy_help[] =
    "usage: worldd store copy [--src-password-file FILE] [--dest-password-file FILE] SRC DEST\n"
    "\n"
    "A portable, verified copy of store SRC at DEST, between backends: SQLite to\n"
    "PostgreSQL, PostgreSQL to SQLite, SQLite to SQLite. SRC and DEST are each a\n"
    "path (SQLite; its interpreter archive beside it in NAME.artifacts) or a\n"
    "postgresql:// URI (the archive in the table archive). SRC is read in one\n"
    "snapshot (writers may keep writing it), table by table in key order: objects,\n"
    "log_entries, worlds, heads, journal, sessions, interpreters, episode_objects,\n"
    "episode_usage, episode_entries, operator_token, and the archive; every row\n"
    "byte for byte (store_changes, a counter, is made anew). On the way every\n"
    "object is re-hashed against its ref, the log checked as one chain, every\n"
    "interpreter re-hashed and its manifest checked. DEST must not exist (SQLite:\n"
    "neither DEST nor DEST.artifacts; the store is made as a new store of this build\n"
    "in a staging directory DIR/.NAME.copy-XXXXXX, filled, fsynced, read back,\n"
    "scanned in full, then renamed into place, the archive first and DEST last) or\n"
    "be an EMPTY PostgreSQL database (the schema and every row are written, read\n"
    "back and compared in one transaction). Afterwards DEST's row count and SHA-256\n"
    "digest of every table are compared with SRC's. A failure leaves nothing at DEST\n"
    "(a killed copy: at most the hidden staging directory; remove it).\n"
    "Credentials of a URI: its own, PGPASSFILE's, or the first line of FILE (owner\n"
    "only); a password is never printed: a URI is named postgresql://USER@HOST:PORT/DB.\n"
    "Runs in world-store-copy (linked with libpq), which worldd finds beside itself\n"
    "or in " WORLD_PKGLIBEXECDIR ". Prints one line per table, then a summary:\n"
    "  table NAME rows=N sha256=HEX\n"
    "  copy SRC DEST rows=N entries=N interpreters=N scanned=yes|no\n"
    "\n"
    "  --src-password-file FILE   the password of a postgresql:// SRC\n"
    "  --dest-password-file FILE  the password of a postgresql:// DEST\n"
    "\n"
    "exit codes: 0 copied and verified, 2 usage, 4 SRC absent or DEST's directory\n"
    "  absent, 6 SRC not a store of this schema version, 7 SRC fails a check, DEST\n"
    "  differs from SRC, or a SQLite DEST scans with holes (nothing left at DEST),\n"
    "  8 DEST exists or the PostgreSQL DEST is not empty (nothing written), 9 I/O\n"
    "  or the database server, 24 SRC is not a SQLite store\n";

#ifdef WORLD_STORE_COPY_PROGRAM
static void print_tables(const struct world_copy_result *r)
{
	for (int i = 0; i < r->ntables; i++)
		if (r->table[i]) printf("table %s rows=%lld sha256=%s\n", r->table[i], r->rows[i], r->digest[i]);
}

static long long total_rows(const struct world_copy_result *r)
{
	long long n = 0;
	for (int i = 0; i < r->ntables; i++) n += r->rows[i];
	return n;
}

static int verb_store_copy(int argc, char **argv)
{
	const char *verb = "store copy";
	struct worldd_flag f[] = { { .name = "--src-password-file", .has_value = 1 },
		                   { .name = "--dest-password-file", .has_value = 1 },
		                   { .name = NULL } };
	const char *pos[3];
	int npos, rc = worldd_parse_flags(verb, argc, argv, f, pos, 3, &npos);
	if (rc) return rc;
	if (npos != 2) return worldd_usage(verb, "SRC and DEST are required");
	if (f[0].value && wdb_kind_of(pos[0]) != WDB_PG)
		return worldd_usage(verb, "--src-password-file is for a postgresql:// SRC");
	if (f[1].value && wdb_kind_of(pos[1]) != WDB_PG)
		return worldd_usage(verb, "--dest-password-file is for a postgresql:// DEST");
	struct world_copy_opts o = { .src_password_file = f[0].value, .dest_password_file = f[1].value,
		                     .effect_record_check = broker_record_check, .scan_out = stdout };
	static struct world_copy_result r;
	struct world_err e = { 0, "" };
	if (world_store_copy(pos[0], pos[1], &o, &r, &e) < 0) return worldd_fail(verb, &e);
	print_tables(&r);
	printf("copy %s %s rows=%lld entries=%lld interpreters=%d scanned=%s\n", r.src_name, r.dest_name, total_rows(&r),
	       r.log_entries, r.interpreters, r.scanned ? "yes" : "no");
	return WX_OK;
}

int worldd_backup_via_copy(int argc, char **argv)
{
	const char *verb = "backup";
	struct worldd_flag f[] = { { .name = "--store", .has_value = 1 },
		                   { .name = "--store-password-file", .has_value = 1 },
		                   { .name = NULL } };
	const char *pos[2];
	int npos, rc = worldd_parse_flags(verb, argc, argv, f, pos, 2, &npos);
	if (rc) return rc;
	if (!f[0].value) return worldd_usage(verb, "--store DB is required");
	if (npos != 1) return worldd_usage(verb, "one DEST is required");
	if (wdb_kind_of(f[0].value) != WDB_PG)
		return worldd_usage(verb, "world-store-copy backs up a postgresql:// store only (worldd backup does SQLite)");
	if (wdb_kind_of(pos[0]) == WDB_PG) return worldd_usage(verb, "DEST is a SQLite file (use worldd store copy)");
	struct world_copy_opts o = { .src_password_file = f[1].value, .effect_record_check = broker_record_check,
		                     .scan_out = stdout };
	static struct world_copy_result r;
	struct world_err e = { 0, "" };
	if (world_store_copy(f[0].value, pos[0], &o, &r, &e) < 0) return worldd_fail(verb, &e);
	printf("backup %s entries=%lld rows=%lld interpreters=%d objects=%lld\n", pos[0], r.log_entries, total_rows(&r),
	       r.interpreters, r.scan.object_rows);
	return WX_OK;
}
#else
static int verb_store_copy(int argc, char **argv)
{
	static const char *const w[] = { "store", "copy" };
	return worldd_exec_sibling("store copy", "world-store-copy", "world-store-copy", w, 2, argc, argv);
}

int worldd_backup_via_copy(int argc, char **argv)
{
	static const char *const w[] = { "backup" };
	return worldd_exec_sibling("backup", "world-store-copy", "world-store-copy", w, 1, argc, argv);
}
#endif

const struct worldd_verb copy_verbs[] = {
	{ "store copy", "a verified copy of a store between SQLite and PostgreSQL", copy_help, verb_store_copy },
	{ NULL, NULL, NULL, NULL },
};
