/* cli/store_uri.h: owns a store named by a postgresql:// URI in the verbs,
 * in one place for every verb of a program (docs/store.md "PostgreSQL",
 * naming a store):
 * - finding the store a verb names (`--store X`, `--store=X`) in its
 *   argv without parsing the verb's flags;
 * - in the static worldd, which cannot link libpq (docs/HACKING.md):
 *   exec'ing worldd-serve (the same verbs, dynamically linked, with the
 *   PostgreSQL driver) with the same argv when the store is a URI, or
 *   refusing in one line in a build without PostgreSQL;
 * - `--store-password-file FILE`: taken out of argv before the verb parses
 *   it, refused for a SQLite path, and given to every open of the store
 *   (worldd_store_open: store/open_opts.h);
 * - a password written in the URI masked in the process's own argument
 *   area, so /proc/PID/cmdline of this program and of every child forked
 *   from it (the daemon's spawner and capsules) never shows it. */
#ifndef WORLD_CLI_STORE_URI_H
#define WORLD_CLI_STORE_URI_H
#include "store/store.h"

/* The value of the first --store (or --store=) in argv, before any "--";
 * NULL when none. */
const char *worldd_store_arg(int argc, char **argv);

/* For program WHO ("worldd VERB", "world-publish transitions"): takes
 * --store-password-file FILE out of argv (*argc shrinks; given twice, or
 * without a postgresql:// --store, is a usage line and WX_USAGE), keeps
 * it for worldd_store_open, and masks a URI's password in argv's memory
 * (argv[i] then points at a private copy, so the verb still reads it).
 * Returns 0 or the exit code of the line it printed. */
int worldd_store_take(const char *who, int *argc, char **argv);

/* worldd (static): when argv names a postgresql:// store, exec worldd-serve
 * with WORDS and argv (returns only on failure), or, built without
 * PostgreSQL, refuse in one line. *handled = 0 when the store is no URI
 * (the verb runs here). A --store-password-file without a URI store is
 * a usage line. */
int worldd_store_route(const char *verb, const char *const *words, int nwords, int argc, char **argv, int *handled);

/* The --store-password-file of this process (NULL = none). */
const char *worldd_store_password_file(void);

/* world_store_open_opts with the password file taken above. */
int worldd_store_open(const char *name, int mode, double wait_lock_s, struct world_store **out,
                      struct world_err *err);

/* 0, or for a store with no SQLite connection (PostgreSQL) one line
 * "worldd VERB: store NAME: WHAT runs on SQLite stores only (not yet on
 * PostgreSQL)" and WX_USAGE: for a verb whose work still needs the raw
 * SQLite connection (call, why and replay no longer do). */
int worldd_store_sqlite_only(const char *verb, struct world_store *st, const char *what);

/* What every verb that takes --store appends to its --help. */
#define WORLDD_STORE_URI_HELP                                                                    \
	"\n"                                                                                         \
	"DB is a path (SQLite) or a postgresql:// (postgres://) URI,\n"                              \
	"postgresql://USER[:PASSWORD]@HOST[:PORT]/DB[?host=/socket/dir&...]; a URI runs\n"           \
	"the verb in worldd-serve, which is linked with libpq (beside worldd or in\n"                \
	"pkglibexecdir). Its password comes from the URI, from libpq's PGPASSFILE or\n"              \
	"~/.pgpass, or from:\n"                                                                      \
	"  --store-password-file FILE  the first line of FILE (a regular file readable by\n"        \
	"                     its owner only), winning over the URI's; only with a URI.\n"           \
	"A password is never printed: the store is named postgresql://USER@HOST:PORT/DB.\n"
#endif
