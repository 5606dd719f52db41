/* store/open_opts.h: owns opening a store with options world_store_open
 * has no parameter for -- today the password file of a postgresql:// store
 * (`--store-password-file`, docs/store.md "PostgreSQL": naming a store).
 * A new function beside store.c's, calling it; nothing in store.c changes. */
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

/* NAME for a message before any driver has parsed it: a path as is, a
 * postgresql:// URI without its password (the userinfo's and any
 * password=... query parameter's dropped), cut to cap. */
void world_store_name_redact(const char *name, char *out, size_t cap);
#endif
