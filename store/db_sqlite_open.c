/* store/db_sqlite_open.c: the store's SQLite engine (store/db_sqlite.h):
 * opening a store file -- what the file is before anything is created
 * beside it, a new store made 0600, a durable writer on the WAL-gathering
 * VFS, a reader that creates nothing where it may not, the busy handler,
 * the schema version read and the schema made or migrated
 * (db_sqlite_schema.c) -- its close, change detection's first layer (the
 * commit hook, PRAGMA data_version) and the scan's page cache; and the
 * engine's table (struct ws_engine). */
#include "store/db_sqlite.h"
#include "store/backup.h"
#include "store/walbuf.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#define WORLD_SCAN_CACHE_KIB 65536 /* the scan's page cache: 64 MiB */
#define WS_STR2(x) #x
#define WS_STR(x) WS_STR2(x)

/* The driver handle over a connection the open set up (it owns it from
 * here, failing or not). */
static int adopt(struct world_store *st, sqlite3 *db, struct world_err *err)
{
	wdb_close(st->wdb);
	st->wdb = NULL;
	if (wdb_sqlite_adopt(db, st->path, &st->wdb, err) < 0) {
		sqlite3_close_v2(db);
		return -1;
	}
	return 0;
}

/* A file SQLite does not recognise is WX_NOT_STORE (its own code), not a
 * schema problem of a real store. */
static int not_readable(struct world_store *st, struct world_err *err)
{
	if (sqlite3_errcode(ws_sqlite_raw(st)) == SQLITE_NOTADB)
		return werr(err, WX_NOT_STORE, "store %s: not a SQLite database (no SQLite header); left untouched", st->path);
	/* An I/O failure is not a schema problem: on a full disk (the -wal or
	 * -shm cannot be made) it is one line saying so, exit WX_IO. */
	int ec = sqlite3_errcode(ws_sqlite_raw(st));
	if (ec == SQLITE_IOERR || ec == SQLITE_FULL) {
		char dir[4200];
		snprintf(dir, sizeof dir, "%s", st->path);
		char *slash = strrchr(dir, '/');
		if (slash) *(slash == dir ? slash + 1 : slash) = '\0';
		else snprintf(dir, sizeof dir, ".");
		struct statvfs vs;
		if (statvfs(dir, &vs) == 0 && vs.f_bavail == 0)
			return werr(err, WX_IO, "store %s: %s (no room for its -wal and -shm); the store is unchanged", st->path,
			            strerror(ENOSPC));
		return werr(err, WX_IO, "store %s: read: %s", st->path, sqlite3_errmsg(ws_sqlite_raw(st)));
	}
	return werr(err, WX_SCHEMA, "store %s: not a readable SQLite database: %s", st->path, sqlite3_errmsg(ws_sqlite_raw(st)));
}

int ws_sqlite_user_version(struct world_store *st, int *v, struct world_err *err)
{
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(ws_sqlite_raw(st), "PRAGMA user_version", -1, &s, NULL) != SQLITE_OK) return not_readable(st, err);
	int rc = sqlite3_step(s);
	if (rc != SQLITE_ROW) {
		sqlite3_finalize(s);
		return not_readable(st, err);
	}
	*v = sqlite3_column_int(s, 0);
	sqlite3_finalize(s);
	return 0;
}

static int count_tables(struct world_store *st, int *n, struct world_err *err)
{
	struct wdb_stmt *s;
	if (ws_prep(st, WORLD_SQL(SCHEMA_TABLES), &s, err) < 0) return -1;
	if (wdb_step(s, NULL) != WDB_ROW) {
		wdb_finalize(s);
		return ws_sqlerr(st, WX_SCHEMA, "read schema", err);
	}
	*n = (int)wdb_column_int64(s, 0, NULL);
	wdb_finalize(s);
	return 0;
}

static int pragma_text(struct world_store *st, const char *sql, char *out, size_t n, struct world_err *err)
{
	struct wdb_stmt *s;
	if (ws_prep(st, sql, &s, err) < 0) return -1;
	if (wdb_step(s, NULL) != WDB_ROW) {
		wdb_finalize(s);
		return ws_sqlerr(st, 0, sql, err);
	}
	const char *t = wdb_column_text(s, 0);
	snprintf(out, n, "%s", t ? t : "(null)");
	wdb_finalize(s);
	return 0;
}

/* Reopen st->path read-only as an immutable file (URI form, path escaped). */
static int reopen_immutable(struct world_store *st, struct world_err *err)
{
	ws_stmt_drop(st);
	wdb_close(st->wdb);
	st->wdb = NULL;
	size_t n = strlen(st->path);
	char *uri = malloc(n * 3 + 32);
	if (!uri) return werr(err, WX_FAIL, "store %s: out of memory", st->path);
	char *o = uri + sprintf(uri, "file:");
	for (const unsigned char *c = (const unsigned char *)st->path; *c; c++) {
		if (*c == '%' || *c == '?' || *c == '#' || *c < 0x21 || *c > 0x7e) o += sprintf(o, "%%%02X", *c);
		else *o++ = (char)*c;
	}
	strcpy(o, "?immutable=1");
	sqlite3 *db = NULL;
	int rc = sqlite3_open_v2(uri, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_FULLMUTEX, NULL);
	free(uri);
	if (rc != SQLITE_OK) {
		werr(err, WX_IO, "store %s: open read-only copy: %s", st->path, db ? sqlite3_errmsg(db) : "out of memory");
		sqlite3_close_v2(db);
		return -1;
	}
	sqlite3_extended_result_codes(db, 0);
	return adopt(st, db, err);
}

/* What is at path, before anything is created or locked: 0 absent, 1 an
 * empty file, 2 a regular file (SQLite then says whether it is a database:
 * SQLITE_NOTADB becomes WX_NOT_STORE). Only stat(2): opening and closing the
 * file here would drop every POSIX lock SQLite holds on it in this process
 * (a daemon's writer and reader handles), so its header is not read here. */
static int probe_file(const char *path, struct world_err *err)
{
	struct stat sb;
	if (stat(path, &sb) < 0) {
		if (errno == ENOENT) return 0;
		return werr(err, WX_IO, "store %s: %s", path, strerror(errno));
	}
	if (!S_ISREG(sb.st_mode))
		return werr(err, WX_NOT_STORE, "store %s: not a regular file, so not a SQLite store; left untouched", path);
	return sb.st_size == 0 ? 1 : 2;
}

/* file:PATH?mode=ro[&immutable=1] with PATH percent-escaped. */
static char *reader_uri(const char *path, int immutable)
{
	size_t n = strlen(path);
	char *u = malloc(n * 3 + 64);
	if (!u) return NULL;
	char *p = u + sprintf(u, "file:");
	for (const unsigned char *c = (const unsigned char *)path; *c; c++) {
		if (*c == '%' || *c == '?' || *c == '#' || *c < 0x21 || *c >= 0x7f) p += sprintf(p, "%%%02X", *c);
		else *p++ = (char)*c;
	}
	sprintf(p, "?mode=ro%s", immutable ? "&immutable=1" : "");
	return u;
}

/* A reader creates nothing beside a store it does not own or cannot write
 * to. When the writer's -wal and -shm both exist, SQLite needs to create
 * nothing: open mode=ro and share the writer's WAL index (a live daemon's
 * commits are seen). Otherwise, for a store of another user, or in a
 * directory that is read-only (access(2), a read-only mount, or no write
 * bit at all: root passes access(2) on a 0555 directory), open immutable=1
 * so that SQLite needs no -wal or -shm file. Our own store in a writable
 * directory opens mode=ro. */
static int reader_needs_immutable(const char *path)
{
	char wal[4200], shm[4200];
	snprintf(wal, sizeof wal, "%s-wal", path);
	snprintf(shm, sizeof shm, "%s-shm", path);
	if (access(wal, F_OK) == 0 && access(shm, F_OK) == 0) return 0;
	char *dup = strdup(path);
	if (!dup) return 1;
	char *slash = strrchr(dup, '/');
	const char *dir = ".";
	if (slash == dup) dir = "/";
	else if (slash) { *slash = 0; dir = dup; }
	struct stat fs, ds;
	struct statvfs vfs;
	int ro = stat(path, &fs) != 0 || fs.st_uid != geteuid() || stat(dir, &ds) != 0 || (ds.st_mode & 0222) == 0 ||
	         access(dir, W_OK) != 0 || (statvfs(dir, &vfs) == 0 && (vfs.f_flag & ST_RDONLY));
	free(dup);
	return ro;
}


static int on_commit(void *ctx)
{
	struct ws_sqlite *sq = ctx;
	atomic_fetch_add(&sq->commits, 1);
	return 0; /* 0: let the commit go on */
}

static int sqlite_open(struct world_store *st, int flags, struct world_err *err)
{
	const char *path = st->path;
	int nosync = flags & WORLD_STORE_NOSYNC;
	int plain_wal = nosync || (flags & WORLD_STORE_PLAIN_WAL);
	int existing = st->existing;
	struct ws_sqlite *sq = calloc(1, sizeof *sq);
	if (!sq) return werr(err, WX_FAIL, "store %s: out of memory", path);
	sq->st = st;
	sq->qfd = -1;
	atomic_init(&sq->commits, 0);
	st->eng_state = sq;
	int db_created = 0;
	sqlite3 *db = NULL;
	/* What the file is decides before anything is created beside it. */
	int kind = probe_file(path, err);
	if (kind < 0) goto fail;
	if (kind == 0 && (!st->writer || existing)) {
		werr(err, WX_NOT_FOUND, "store %s: %s%s", path, strerror(ENOENT), st->writer ? "; nothing created" : "");
		goto fail;
	}
	if (!st->writer && kind == 1) {
		werr(err, WX_NOT_STORE, "store %s: an empty file, not a World store; left untouched", path);
		goto fail;
	}
	if (strlen(path) > 4000) {
		werr(err, WX_USAGE, "store %s: path too long", path);
		goto fail;
	}
	int rc;
	if (st->writer && kind == 0) {
		/* A new store is created here, mode 0600 whatever the umask; SQLite
		 * gives its -wal and -shm the database file's mode. */
		int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (fd < 0 && errno != EEXIST) {
			werr(err, WX_IO, "store %s: create: %s", path, strerror(errno));
			goto fail;
		}
		/* EEXIST: made meanwhile by someone else; SQLite judges it below */
		db_created = fd >= 0;
		if (fd >= 0 && fchmod(fd, 0600) < 0) {
			werr(err, WX_IO, "store %s: chmod 0600: %s", path, strerror(errno));
			close(fd);
			goto fail;
		}
		if (fd >= 0 && close(fd) < 0) {
			werr(err, WX_IO, "store %s: close after create: %s", path, strerror(errno));
			goto fail;
		}
	}
	if (st->writer) {
		/* a durable writer's WAL frames go to the file one batch per sync
		 * (store/walbuf.h); a NOSYNC handle's commits never sync, so it
		 * keeps the default VFS */
		rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
		                     plain_wal ? NULL : world_walbuf_vfs());
	} else {
		/* immutable only where nothing may be created: otherwise the plain
		 * read-only open, sharing the writer's WAL index */
		int imm = reader_needs_immutable(path);
		char *uri = imm ? reader_uri(path, 1) : strdup(path);
		if (!uri) {
			werr(err, WX_FAIL, "store %s: out of memory", path);
			goto fail;
		}
		rc = sqlite3_open_v2(uri, &db, SQLITE_OPEN_READONLY | (imm ? SQLITE_OPEN_URI : 0) | SQLITE_OPEN_FULLMUTEX,
		                     NULL);
		free(uri);
	}
	if (rc != SQLITE_OK) {
		werr(err, WX_IO, "store %s: open: %s", path, db ? sqlite3_errmsg(db) : "out of memory");
		sqlite3_close_v2(db);
		goto fail;
	}
	sqlite3_extended_result_codes(db, 0);
	if (adopt(st, db, err) < 0) goto fail;
	if (sqlite3_busy_handler(ws_sqlite_raw(st), ws_sqlite_busy, sq) != SQLITE_OK) {
		werr(err, WX_IO, "store %s: set busy handler: %s", path, sqlite3_errmsg(ws_sqlite_raw(st)));
		goto fail;
	}
	/* Read the version before anything can write: an unknown version is
	 * refused with the file left byte-identical. */
	int v = 0;
	if (ws_sqlite_user_version(st, &v, err) < 0) {
		/* A read-only copy of a WAL store (a directory we cannot write, no
		 * -shm beside it): SQLite cannot set up its shared memory, so the
		 * reader opens the file as immutable -- no writer can be changing
		 * a file in a directory nobody may create the -shm in. */
		int ec = sqlite3_errcode(ws_sqlite_raw(st));
		if (st->writer || (ec != SQLITE_READONLY && ec != SQLITE_CANTOPEN) || reopen_immutable(st, err) < 0 ||
		    ws_sqlite_user_version(st, &v, err) < 0)
			goto fail;
	}
	/* 1 is known too: a writer migrates it below, a reader reads what it
	 * holds (the schema-2 calls answer WX_SCHEMA on it). */
	if (v != 0 && (v < 1 || v > WORLD_STORE_SCHEMA_VERSION)) {
		werr(err, WX_SCHEMA, "store %s: schema version %d is unknown to this build (knows 1 to %d); store left untouched",
		     path, v, WORLD_STORE_SCHEMA_VERSION);
		goto fail;
	}
	st->version = v;
	/* A schema-1 store a writer cannot migrate is refused before anything
	 * (even the journal mode) is changed. */
	if (st->writer && v == 1 && ws_sqlite_mig_check(st, err) < 0) goto fail;
	if (v == 0) {
		int n = 0;
		/* The version and the tables are read in one snapshot: another
		 * writer creating this store at this moment commits its tables and
		 * its version together, and read apart they would look like a
		 * foreign database with tables but no version. */
		int v0 = 0;
		if (ws_exec(st, "BEGIN", err) < 0) goto fail;
		if (ws_sqlite_user_version(st, &v0, err) < 0 || count_tables(st, &n, err) < 0) {
			struct world_err ig;
			ws_exec(st, "ROLLBACK", &ig);
			goto fail;
		}
		if (ws_exec(st, "COMMIT", err) < 0) goto fail;
		if (v0 >= 1 && v0 <= WORLD_STORE_SCHEMA_VERSION) {
			v = v0; /* made by that other writer meanwhile: open it as it is */
			st->version = v;
			n = 0;
			if (st->writer && v == 1 && ws_sqlite_mig_check(st, err) < 0) goto fail;
		} else if (v0 != 0) {
			werr(err, WX_SCHEMA, "store %s: schema version %d is unknown to this build (knows 1 to %d); store left untouched",
			     path, v0, WORLD_STORE_SCHEMA_VERSION);
			goto fail;
		}
		if (v == 0 && (n > 0 || !st->writer)) {
			werr(err, WX_SCHEMA, "store %s: not a World store (user_version 0%s); left untouched", path,
			     n > 0 ? " with tables" : ", empty");
			goto fail;
		}
	}
	if (st->writer) {
		char jm[32];
		/* Leaving a rollback journal (a schema-1 store of an old build, a
		 * file made by the sqlite3 shell) needs the file to itself: while
		 * another writer opening it at the same moment holds a read lock,
		 * SQLite answers BUSY at once (it would deadlock waiting), so the
		 * switch is retried, jittered, within the busy timeout. */
		struct timespec j0, jn;
		clock_gettime(CLOCK_MONOTONIC, &j0);
		for (int tries = 0;; tries++) {
			struct world_err je = { 0 };
			if (pragma_text(st, "PRAGMA journal_mode=WAL", jm, sizeof jm, &je) == 0) break;
			clock_gettime(CLOCK_MONOTONIC, &jn);
			double ms = (double)(jn.tv_sec - j0.tv_sec) * 1000.0 + (double)(jn.tv_nsec - j0.tv_nsec) / 1e6;
			if (je.code != WX_LOCKED || ms >= st->busy_ms) {
				if (err) *err = je;
				goto fail;
			}
			ws_sqlite_busy_nap(sq, tries);
		}
		if (strcmp(jm, "wal") != 0) {
			werr(err, WX_IO, "store %s: cannot switch to WAL journal mode (got %s)", path, jm);
			goto fail;
		}
		if (ws_exec(st, nosync ? "PRAGMA synchronous=OFF" : "PRAGMA synchronous=FULL", err) < 0) goto fail;
		if (v == 0 && ws_sqlite_schema_create(st, err) < 0) goto fail;
		if ((v == 1 || v == 2) && ws_sqlite_migrate(st, v, err) < 0) goto fail;
		st->version = WORLD_STORE_SCHEMA_VERSION;
	}
	if (st->writer && ws_sqlite_schema_extras(st, err) < 0) goto fail;
	/* A savepoint keeps a copy of each page it changes (its statement
	 * journal): in memory, not in a temporary file written and read back
	 * for every savepoint of a commit (docs/store.md, The write path). Set
	 * after the open's own large transactions (schema, migration). */
	if (st->writer && ws_exec(st, "PRAGMA temp_store=MEMORY", err) < 0) goto fail;
	sqlite3_commit_hook(ws_sqlite_raw(st), on_commit, sq);
	return 0;
fail:
	/* A refused open leaves nothing it created -- but only while the file is
	 * still empty: a writer that made the file may have lost the race to
	 * create the store in it to another writer, whose store is not ours
	 * to remove. */
	struct stat dbst;
	if (db_created && stat(path, &dbst) == 0 && dbst.st_size == 0) {
		/* the new (still empty) database and any -wal/-shm SQLite made for it */
		ws_stmt_drop(st);
		wdb_close(st->wdb);
		st->wdb = NULL;
		char side[4200];
		unlink(path);
		snprintf(side, sizeof side, "%s-wal", path);
		unlink(side);
		snprintf(side, sizeof side, "%s-shm", path);
		unlink(side);
	}
	return -1;
}

static void sqlite_close(struct world_store *st)
{
	struct ws_sqlite *sq = WS_SQ(st);
	if (!sq) return;
	ws_sqlite_ckpt_stop(st);
	wdb_finalize(sq->dv.s);
	if (sq->qfd >= 0) close(sq->qfd);
	free(sq);
	st->eng_state = NULL;
}

/* Layer 1 of change detection (store/changes.c): PRAGMA data_version
 * moves when another connection (of this process or another) committed;
 * this connection's own commits are counted by its commit hook. */
static int sqlite_data_version(struct world_store *st, long long *v, unsigned long long *own, struct world_err *err)
{
	struct ws_sqlite *sq = WS_SQ(st);
	/* own first: a commit of this connection in progress on another
	 * thread holds the connection's mutex, so the step below runs after
	 * it and reads what it wrote */
	*own = atomic_load(&sq->commits);
	struct wdb_stmt *s = NULL;
	pthread_mutex_lock(&st->stmt_mu);
	int mine = !sq->dv.busy;
	if (mine) sq->dv.busy = 1;
	pthread_mutex_unlock(&st->stmt_mu);
	if (mine && !sq->dv.s && wdb_prepare_kept(st->wdb, "PRAGMA data_version", &sq->dv.s, NULL) < 0) sq->dv.s = NULL;
	if (mine) s = sq->dv.s;
	else if (wdb_prepare(st->wdb, "PRAGMA data_version", &s, NULL) < 0) s = NULL;
	int rc = s ? wdb_step(s, NULL) : WDB_FAIL;
	if (rc == WDB_ROW) *v = wdb_column_int64(s, 0, NULL);
	else ws_sqlerr(st, 0, "PRAGMA data_version", err);
	if (mine) {
		if (s) wdb_reset(s);
		pthread_mutex_lock(&st->stmt_mu);
		sq->dv.busy = 0;
		pthread_mutex_unlock(&st->stmt_mu);
	} else {
		wdb_finalize(s);
	}
	return rc == WDB_ROW ? 0 : -1;
}

/* A larger page cache for the scan's lookups (interior pages of the
 * SHA-256-keyed indexes stay; the default 2 MB held too few of them at
 * 10^6 entries), given back at the end. */
static void sqlite_scan_cache(struct world_store *st, int on)
{
	struct ws_sqlite *sq = WS_SQ(st);
	struct world_err ce;
	if (!on) {
		if (!sq->cache_set) return;
		char back[64];
		snprintf(back, sizeof back, "PRAGMA cache_size=%lld", sq->cache_was);
		ws_exec(st, back, &ce);
		sq->cache_set = 0;
		return;
	}
	long long was = 0;
	struct wdb_stmt *cs = NULL;
	if (wdb_prepare(st->wdb, "PRAGMA cache_size", &cs, NULL) == 0 && wdb_step(cs, NULL) == WDB_ROW)
		was = wdb_column_int64(cs, 0, NULL);
	wdb_finalize(cs);
	sq->cache_was = was;
	sq->cache_set = was != 0 && (was > 0 ? was * 4 : -was) < WORLD_SCAN_CACHE_KIB &&
	                ws_exec(st, "PRAGMA cache_size=-" WS_STR(WORLD_SCAN_CACHE_KIB), &ce) == 0;
}

const struct ws_engine ws_sqlite_engine = {
	.caps = WS_CAP_FILE | WS_CAP_STREAM,
	.dialect = WSQL_SQLITE,
	.snapshot_begin = "BEGIN",
	.begin_what = "BEGIN IMMEDIATE",
	.commit_what = "COMMIT",
	.open = sqlite_open,
	.close = sqlite_close,
	.queue_lock = ws_sqlite_queue_lock,
	.queue_unlock = ws_sqlite_queue_unlock,
	.data_version = sqlite_data_version,
	.ckpt_start = ws_sqlite_ckpt_start,
	.ckpt_stats = ws_sqlite_ckpt_stats,
	.scan_cache = sqlite_scan_cache,
	.backup = ws_sqlite_backup,
};
