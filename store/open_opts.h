/* store/open_opts.h: owns opening a store with options world_store_open
 * has no parameter for -- today the password file of a postgresql:// store
 * (`--store-password-file`, docs/store.md "PostgreSQL": naming a store) --
 * and the one reader of password files, which the PostgreSQL driver's
 * wdb_opts.password_file (store/db.h) reads through as well. */
#ifndef WORLD_STORE_OPEN_OPTS_H
#define WORLD_STORE_OPEN_OPTS_H
#include "store/store.h"
#include <stddef.h>

struct world_store_open_opts {
	/* a postgresql:// store's password: the first line of this file (a
	 * regular file readable by its owner only, as store/db.h's
	 * wdb_opts.password_file), winning over the URI's own; NULL = none.
	 * Refused (WX_USAGE) for a SQLite path. */
	const char *password_file;
	/* as world_store_open_wait's wait_lock_s (0 = the default) */
	double wait_lock_s;
};

/* world_store_open_wait(name, mode, o->wait_lock_s, ...) with o's options
 * (o may be NULL). The password never appears in err or in
 * world_store_path(*out): the driver names the store
 * postgresql://USER@HOST:PORT/DB and scrubs every message of it. */
int world_store_open_opts(const char *name, int mode, const struct world_store_open_opts *o,
                          struct world_store **out, struct world_err *err);

/* The password in the file PATH: its first line (without the line end),
 * read only when PATH is a regular file (not a symbolic link) readable by
 * its owner only, the line not empty and holding no NUL byte. *out is the
 * caller's to wipe (explicit_bzero) and free. Every error is one line
 * naming SHOWN (the store, never its password) and PATH: WX_NOT_FOUND when
 * there is no such file, WX_USAGE for a file the rules refuse, else
 * WX_IO (WX_FAIL out of memory); no byte of the file is ever in it. */
int world_password_file_read(const char *shown, const char *path, char **out, struct world_err *err);

/* NAME for a message before any driver has parsed it: a path as is, a
 * postgresql:// URI without its password (the userinfo's and any
 * password=... query parameter's dropped), cut to cap. */
void world_store_name_redact(const char *name, char *out, size_t cap);
#endif
