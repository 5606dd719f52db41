/* store/db_internal.h: what store/db.c's dispatch and the two drivers
 * (db_sqlite.c, db_pg.c) share: the driver table and the head every
 * handle and statement of a driver starts with. Nothing outside those
 * three files includes it. */
#ifndef WORLD_STORE_DB_INTERNAL_H
#define WORLD_STORE_DB_INTERNAL_H
#include "store/db.h"
#include <stdatomic.h>

struct wdb_driver {
	enum wdb_kind kind;
	int (*open)(const char *name, const struct wdb_opts *opts, struct wdb **out, struct world_err *err);
	void (*close)(struct wdb *db);
	int (*exec)(struct wdb *db, const char *sql, struct world_err *err);
	int (*prepare)(struct wdb *db, const char *sql, struct wdb_stmt **out, struct world_err *err);
	/* kind: 'i' int64, 't' text, 'b' blob, 'n' null; with nocopy set,
	 * also 'T' text and 'B' blob bound without a copy (wdb_bind_*_nocopy) */
	int (*bind)(struct wdb_stmt *st, int idx, int kind, int64_t v, const void *p, size_t n, struct world_err *err);
	int (*step)(struct wdb_stmt *st, struct world_err *err);
	void (*reset)(struct wdb_stmt *st);
	void (*finalize)(struct wdb_stmt *st);
	int (*column_count)(struct wdb_stmt *st);
	int (*column_is_null)(struct wdb_stmt *st, int col);
	int64_t (*column_int64)(struct wdb_stmt *st, int col, int *bad);
	const char *(*column_text)(struct wdb_stmt *st, int col);
	const void *(*column_blob)(struct wdb_stmt *st, int col, size_t *n);
	int64_t (*changes)(struct wdb *db);
	int (*begin)(struct wdb *db, struct world_err *err);
	int (*commit)(struct wdb *db, struct world_err *err);
	int (*rollback)(struct wdb *db, struct world_err *err);
	int nocopy;                                    /* the driver takes 'T' and 'B' */
	void (*clear_bindings)(struct wdb_stmt *st);   /* every parameter NULL again */
	/* NULL: prepare */
	int (*prepare_kept)(struct wdb *db, const char *sql, struct wdb_stmt **out, struct world_err *err);
	const char *(*errmsg)(const struct wdb *db);   /* NULL: the handle's msg */
	int (*lock_next)(struct wdb *db, const char *lock_sql); /* NULL: none (wdb_lock_next answers -1) */
	int (*last_code)(const struct wdb *db, int code_other); /* NULL: wdb_fail_code of the last class */
	int64_t (*last_insert_id)(struct wdb *db);              /* NULL: 0 */
};

/* The first member of every driver's handle. */
struct wdb {
	const struct wdb_driver *drv;
	char name[512]; /* what wdb_name() prints: never a password */
	/* 0 or the last enum wdb_fail; atomic because a SQLite handle may be
	 * shared by threads (the store's, whose connection is FULLMUTEX) */
	atomic_int last_fail;
	char msg[768];  /* the database's message of the last failure (drivers without errmsg) */
};

/* The first member of every driver's statement. */
struct wdb_stmt {
	struct wdb *db;
	int bind_fail; /* 0, or the class of a failed bind: the next step fails with it */
};

extern const struct wdb_driver wdb_sqlite_driver;
/* set by wdb_pg_enable() */
extern const struct wdb_driver *wdb_pg_driver_enabled;

/* The exit code of common/error.h for a class of failure (code_other for
 * WDB_FAIL). */
int wdb_fail_code(int fail, int code_other);
#endif
