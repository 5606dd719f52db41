/* store/db_sqlite_wal.c: the "world-walbuf" SQLite VFS (store/walbuf.h; docs/store.md,
 * The write path).
 *
 * Why: SQLite writes a transaction's WAL frames one system call at a time
 * -- two per page, the 24-byte frame header and the page -- and a group
 * commit's batch changes hundreds of pages, so the batch's leader spent
 * more time entering the kernel than running the batch. This VFS gathers
 * the frames of the WAL file in memory as SQLite writes them (they are
 * contiguous: each frame follows the last) and hands them to the kernel in
 * one write when SQLite next needs them on file.
 *
 * Why it keeps the durability contract: a WAL frame counts only once the
 * WAL is synced and the wal-index says so, and SQLite updates the
 * wal-index only after the write it syncs (sqlite3WalFrames: frames, then
 * xSync under synchronous=FULL, then the index). The gathered bytes go to
 * the file before every xSync, so what a sync makes durable is exactly
 * what it made durable before; a crash before the sync loses only frames
 * no reader or recovery would use (as a crash before SQLite's own writes
 * did). They also go before any read of the file (a connection re-reading
 * a page it spilled), any truncate, size query or file control, any write
 * that is not the next byte (SQLite overwrites a frame of the open
 * transaction in place), and the close.
 *
 * What it needs: every commit on the handle syncs the WAL -- synchronous=FULL,
 * as every durable writer of the store has. A handle opened with
 * synchronous=OFF (WORLD_STORE_NOSYNC) does not use this VFS: its commits
 * never call xSync, so gathered frames would be in the wal-index before
 * they were in the file. Other files (the database, its shared memory)
 * are opened straight by the default VFS: nothing here touches them. */
#include "store/walbuf.h"
#include "common/pause.h"
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* Past this many gathered bytes the next frame goes to the file first. */
#define WALBUF_CAP (8u << 20)

struct walbuf_file {
	sqlite3_file base;   /* pMethods = walbuf_methods */
	sqlite3_file *real;  /* the default VFS's file, right after this struct */
	unsigned char *buf;  /* gathered bytes, to go at offset `at` */
	size_t len, cap;
	sqlite3_int64 at;
};

static sqlite3_vfs walbuf_vfs;
static sqlite3_vfs *walbuf_base;
static atomic_ullong walbuf_frames_in, walbuf_writes_out;

/* SQLite's unix VFS writes at most 128 KiB - 1 per xWrite (it masks the
 * length with 0x1ffff), so the gathered bytes go in pieces of this size:
 * one system call per some 30 frames instead of two per frame. */
#define WALBUF_PIECE (120u << 10)

/* Hands the gathered bytes to the file and empties the buffer. */
static int flush(struct walbuf_file *f)
{
	int rc = SQLITE_OK;
	for (size_t done = 0; done < f->len && rc == SQLITE_OK;) {
		size_t n = f->len - done < WALBUF_PIECE ? f->len - done : WALBUF_PIECE;
		rc = f->real->pMethods->xWrite(f->real, f->buf + done, (int)n, f->at + (sqlite3_int64)done);
		if (rc == SQLITE_OK) atomic_fetch_add(&walbuf_writes_out, 1);
		done += n;
	}
	/* whatever happened, the buffer is empty: a failed write fails the
	 * sync (commit) or read that needed it, as SQLite's own write would
	 * have, and SQLite writes those frames again when it retries */
	f->len = 0;
	return rc;
}

static int wb_close(sqlite3_file *p)
{
	struct walbuf_file *f = (struct walbuf_file *)p;
	int rc = flush(f);
	int rc2 = f->real->pMethods->xClose(f->real);
	free(f->buf);
	f->buf = NULL;
	return rc != SQLITE_OK ? rc : rc2;
}

static int wb_read(sqlite3_file *p, void *out, int n, sqlite3_int64 off)
{
	struct walbuf_file *f = (struct walbuf_file *)p;
	int rc = flush(f);
	return rc != SQLITE_OK ? rc : f->real->pMethods->xRead(f->real, out, n, off);
}

static int wb_write(sqlite3_file *p, const void *in, int n, sqlite3_int64 off)
{
	struct walbuf_file *f = (struct walbuf_file *)p;
	size_t need = (size_t)n;
	/* only the next byte after the gathered ones, or a new run, is gathered */
	if (f->len && off != f->at + (sqlite3_int64)f->len) {
		int rc = flush(f);
		if (rc != SQLITE_OK) return rc;
	}
	if (f->len + need > WALBUF_CAP) {
		int rc = flush(f);
		if (rc != SQLITE_OK) return rc;
		if (need > WALBUF_PIECE) return f->real->pMethods->xWrite(f->real, in, n, off);
	}
	if (f->len + need > f->cap) {
		size_t cap = f->cap ? f->cap : 256u << 10;
		while (cap < f->len + need) cap *= 2;
		if (cap > WALBUF_CAP) cap = WALBUF_CAP;
		unsigned char *nb = realloc(f->buf, cap);
		if (!nb) {
			/* no memory to gather in: write straight through */
			int rc = flush(f);
			return rc != SQLITE_OK ? rc : f->real->pMethods->xWrite(f->real, in, n, off);
		}
		f->buf = nb;
		f->cap = cap;
	}
	if (f->len == 0) f->at = off;
	memcpy(f->buf + f->len, in, need);
	f->len += need;
	atomic_fetch_add(&walbuf_frames_in, 1);
	return SQLITE_OK;
}

static int wb_truncate(sqlite3_file *p, sqlite3_int64 size)
{
	struct walbuf_file *f = (struct walbuf_file *)p;
	int rc = flush(f);
	return rc != SQLITE_OK ? rc : f->real->pMethods->xTruncate(f->real, size);
}

static int wb_sync(sqlite3_file *p, int flags)
{
	struct walbuf_file *f = (struct walbuf_file *)p;
	/* the window: a commit's frames gathered, none of them on file yet */
	if (f->len) world_pause("store.wal_sync");
	int rc = flush(f);
	return rc != SQLITE_OK ? rc : f->real->pMethods->xSync(f->real, flags);
}

static int wb_file_size(sqlite3_file *p, sqlite3_int64 *size)
{
	struct walbuf_file *f = (struct walbuf_file *)p;
	int rc = flush(f);
	return rc != SQLITE_OK ? rc : f->real->pMethods->xFileSize(f->real, size);
}

static int wb_lock(sqlite3_file *p, int lock)
{
	struct walbuf_file *f = (struct walbuf_file *)p;
	return f->real->pMethods->xLock(f->real, lock);
}

static int wb_unlock(sqlite3_file *p, int lock)
{
	struct walbuf_file *f = (struct walbuf_file *)p;
	return f->real->pMethods->xUnlock(f->real, lock);
}

static int wb_check_reserved(sqlite3_file *p, int *out)
{
	struct walbuf_file *f = (struct walbuf_file *)p;
	return f->real->pMethods->xCheckReservedLock(f->real, out);
}

static int wb_file_control(sqlite3_file *p, int op, void *arg)
{
	struct walbuf_file *f = (struct walbuf_file *)p;
	int rc = flush(f);
	return rc != SQLITE_OK ? rc : f->real->pMethods->xFileControl(f->real, op, arg);
}

static int wb_sector_size(sqlite3_file *p)
{
	struct walbuf_file *f = (struct walbuf_file *)p;
	return f->real->pMethods->xSectorSize(f->real);
}

static int wb_device_characteristics(sqlite3_file *p)
{
	struct walbuf_file *f = (struct walbuf_file *)p;
	return f->real->pMethods->xDeviceCharacteristics(f->real);
}

/* Version 1: a WAL file has no shared memory and is never memory-mapped
 * (both belong to the database file, which this VFS does not wrap). */
static const sqlite3_io_methods walbuf_methods = {
	1,
	wb_close,
	wb_read,
	wb_write,
	wb_truncate,
	wb_sync,
	wb_file_size,
	wb_lock,
	wb_unlock,
	wb_check_reserved,
	wb_file_control,
	wb_sector_size,
	wb_device_characteristics,
	NULL, NULL, NULL, NULL, NULL, NULL,
};

static int wb_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *p, int flags, int *out_flags)
{
	(void)vfs;
	if (!(flags & SQLITE_OPEN_WAL)) {
		/* anything but the WAL is the default VFS's own file, in the
		 * space SQLite gave us (szOsFile covers it) */
		return walbuf_base->xOpen(walbuf_base, name, p, flags, out_flags);
	}
	struct walbuf_file *f = (struct walbuf_file *)p;
	memset(f, 0, sizeof *f);
	f->real = (sqlite3_file *)(f + 1);
	int rc = walbuf_base->xOpen(walbuf_base, name, f->real, flags, out_flags);
	/* on failure pMethods stays NULL: SQLite then calls no xClose */
	if (rc == SQLITE_OK) f->base.pMethods = &walbuf_methods;
	else if (f->real->pMethods) {
		f->real->pMethods->xClose(f->real);
	}
	return rc;
}

static int wb_delete(sqlite3_vfs *v, const char *n, int s) { (void)v; return walbuf_base->xDelete(walbuf_base, n, s); }
static int wb_access(sqlite3_vfs *v, const char *n, int fl, int *o)
{
	(void)v;
	return walbuf_base->xAccess(walbuf_base, n, fl, o);
}
static int wb_full_pathname(sqlite3_vfs *v, const char *n, int no, char *o)
{
	(void)v;
	return walbuf_base->xFullPathname(walbuf_base, n, no, o);
}
static void *wb_dlopen(sqlite3_vfs *v, const char *n) { (void)v; return walbuf_base->xDlOpen(walbuf_base, n); }
static void wb_dlerror(sqlite3_vfs *v, int n, char *o) { (void)v; walbuf_base->xDlError(walbuf_base, n, o); }
static void (*wb_dlsym(sqlite3_vfs *v, void *h, const char *s))(void)
{
	(void)v;
	return walbuf_base->xDlSym(walbuf_base, h, s);
}
static void wb_dlclose(sqlite3_vfs *v, void *h) { (void)v; walbuf_base->xDlClose(walbuf_base, h); }
static int wb_randomness(sqlite3_vfs *v, int n, char *o) { (void)v; return walbuf_base->xRandomness(walbuf_base, n, o); }
static int wb_sleep(sqlite3_vfs *v, int us) { (void)v; return walbuf_base->xSleep(walbuf_base, us); }
static int wb_current_time(sqlite3_vfs *v, double *o) { (void)v; return walbuf_base->xCurrentTime(walbuf_base, o); }
static int wb_last_error(sqlite3_vfs *v, int n, char *o) { (void)v; return walbuf_base->xGetLastError(walbuf_base, n, o); }
static int wb_current_time64(sqlite3_vfs *v, sqlite3_int64 *o)
{
	(void)v;
	return walbuf_base->xCurrentTimeInt64(walbuf_base, o);
}

static pthread_once_t walbuf_once = PTHREAD_ONCE_INIT;
static int walbuf_rc = SQLITE_ERROR;

static void walbuf_register(void)
{
	walbuf_base = sqlite3_vfs_find(NULL);
	if (!walbuf_base || walbuf_base->iVersion < 2) return;
	walbuf_vfs = (sqlite3_vfs){
		.iVersion = 2,
		.szOsFile = (int)sizeof(struct walbuf_file) + walbuf_base->szOsFile,
		.mxPathname = walbuf_base->mxPathname,
		.zName = WORLD_WALBUF_VFS,
		.xOpen = wb_open,
		.xDelete = wb_delete,
		.xAccess = wb_access,
		.xFullPathname = wb_full_pathname,
		.xDlOpen = wb_dlopen,
		.xDlError = wb_dlerror,
		.xDlSym = wb_dlsym,
		.xDlClose = wb_dlclose,
		.xRandomness = wb_randomness,
		.xSleep = wb_sleep,
		.xCurrentTime = wb_current_time,
		.xGetLastError = wb_last_error,
		.xCurrentTimeInt64 = wb_current_time64,
	};
	walbuf_rc = sqlite3_vfs_register(&walbuf_vfs, 0);
}

const char *world_walbuf_vfs(void)
{
	pthread_once(&walbuf_once, walbuf_register);
	return walbuf_rc == SQLITE_OK ? WORLD_WALBUF_VFS : NULL;
}

void world_walbuf_stats(unsigned long long *writes_in, unsigned long long *writes_out)
{
	if (writes_in) *writes_in = atomic_load(&walbuf_frames_in);
	if (writes_out) *writes_out = atomic_load(&walbuf_writes_out);
}
