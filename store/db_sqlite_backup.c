/* store/db_sqlite_backup.c: the online backup of a SQLite store
 * (store/backup.h): its pages copied from one read snapshot, its archived
 * interpreters beside the copy, the copy scanned, then renamed into place. */
#include "store/backup.h"
#include "store/db.h"
#include "common/file.h"
#include "common/pause.h"
#include "store/db_sqlite.h"
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define BACKUP_STEP_PAGES 256
#define BACKUP_INTERP_MAX (512ull << 20)
#define BACKUP_MAX_INTERPS 256

/* What this backup made, so a failure removes exactly that. */
struct bk {
	char stage[4096];      /* the staging directory ("" until made) */
	char db[4200];         /* stage/NAME */
	char art[4300];        /* stage/NAME.artifacts */
	char dest_art[4300];   /* DEST.artifacts (set once renamed there) */
	int art_renamed;
	char made[BACKUP_MAX_INTERPS * 3 + 8][4400]; /* files and directories under stage, in creation order */
	int nmade;
};

static int fsync_path(const char *p, int dir, struct world_err *err)
{
	int fd = open(p, (dir ? O_RDONLY | O_DIRECTORY : O_RDONLY) | O_CLOEXEC);
	if (fd < 0) return werr(err, WX_IO, "backup: open %s: %s", p, strerror(errno));
	if (fsync(fd) < 0) {
		int e = errno;
		close(fd);
		return werr(err, WX_IO, "backup: fsync %s: %s", p, strerror(e));
	}
	close(fd);
	return 0;
}

static int note(struct bk *b, const char *p, struct world_err *err)
{
	if (b->nmade >= (int)(sizeof b->made / sizeof b->made[0]))
		return werr(err, WX_FAIL, "backup: more than %d archived interpreters", BACKUP_MAX_INTERPS);
	snprintf(b->made[b->nmade++], sizeof b->made[0], "%s", p);
	return 0;
}

static int mkdir_noted(struct bk *b, const char *d, struct world_err *err)
{
	if (mkdir(d, 0700) < 0) return werr(err, WX_IO, "backup: mkdir %s: %s", d, strerror(errno));
	if (note(b, d, err) < 0) return -1;
	if (chmod(d, 0700) < 0) return werr(err, WX_IO, "backup: chmod 0700 %s: %s", d, strerror(errno));
	return 0;
}

static int write_noted(struct bk *b, const char *p, const void *buf, size_t n, mode_t mode, struct world_err *err)
{
	int fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) return werr(err, WX_IO, "backup: create %s: %s", p, strerror(errno));
	if (note(b, p, err) < 0) { close(fd); return -1; }
	const char *c = buf;
	size_t off = 0;
	while (off < n) {
		ssize_t w = write(fd, c + off, n - off);
		if (w < 0 && errno == EINTR) continue;
		if (w <= 0) {
			int e = w < 0 ? errno : EIO;
			close(fd);
			return werr(err, WX_IO, "backup: write %s: %s", p, strerror(e));
		}
		off += (size_t)w;
	}
	if (fchmod(fd, mode) < 0 || fsync(fd) < 0) {
		int e = errno;
		close(fd);
		return werr(err, WX_IO, "backup: write %s: %s", p, strerror(e));
	}
	if (close(fd) < 0) return werr(err, WX_IO, "backup: close %s: %s", p, strerror(errno));
	return 0;
}

/* Remove what this backup made (newest first), then the staging directory. */
static void undo(struct bk *b)
{
	if (b->art_renamed && rename(b->dest_art, b->art) < 0) {
		/* put back under the stage so it goes with the rest; failing that, leave it named */
		fprintf(stderr, "worldd backup: could not remove %s: %s\n", b->dest_art, strerror(errno));
	}
	for (int i = b->nmade - 1; i >= 0; i--) {
		struct stat sb;
		if (lstat(b->made[i], &sb) < 0) continue;
		if (S_ISDIR(sb.st_mode)) rmdir(b->made[i]);
		else unlink(b->made[i]);
	}
	if (b->db[0]) {
		char side[4300];
		unlink(b->db);
		snprintf(side, sizeof side, "%s-journal", b->db);
		unlink(side);
		snprintf(side, sizeof side, "%s-wal", b->db);
		unlink(side);
		snprintf(side, sizeof side, "%s-shm", b->db);
		unlink(side);
	}
	if (b->stage[0]) rmdir(b->stage);
}

/* The database: one read transaction of the source, copied page by page
 * into stage/NAME (created 0600 before SQLite opens it). The interpreter
 * refs of that same snapshot go into refs. */
static int copy_db(struct world_store *src, struct bk *b, char (*refs)[WORLD_REF_SIZE], int *nrefs, long long *pages,
                   long long *entries, struct world_err *err)
{
	int fd = open(b->db, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) return werr(err, WX_IO, "backup: create %s: %s", b->db, strerror(errno));
	close(fd);
	sqlite3 *dst = NULL;
	if (sqlite3_open_v2(b->db, &dst, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
		werr(err, WX_IO, "backup: open %s: %s", b->db, dst ? sqlite3_errmsg(dst) : "out of memory");
		sqlite3_close_v2(dst);
		return -1;
	}
	int rc = -1;
	sqlite3_backup *bu = NULL;
	int in_read = 0;
	/* the snapshot: every later step reads the same transaction */
	if (ws_exec(src, "BEGIN", err) < 0) goto out;
	in_read = 1;
	struct wdb_stmt *s;
	if (ws_prep(src, WORLD_SQL(BACKUP_INTERPS), &s, err) < 0) goto out;
	int r;
	*nrefs = 0;
	while ((r = wdb_step(s, NULL)) == WDB_ROW) {
		if (*nrefs == BACKUP_MAX_INTERPS) {
			wdb_finalize(s);
			werr(err, WX_FAIL, "backup: more than %d archived interpreters", BACKUP_MAX_INTERPS);
			goto out;
		}
		ws_col_ref(s, 0, refs[(*nrefs)++]);
	}
	wdb_finalize(s);
	if (r != WDB_DONE) { ws_sqlerr(src, 0, "backup: interpreters read", err); goto out; }
	if (ws_prep(src, WORLD_SQL(LOG_LAST), &s, err) < 0) goto out;
	r = wdb_step(s, NULL);
	*entries = r == WDB_ROW ? wdb_column_int64(s, 0, NULL) : 0;
	wdb_finalize(s);
	if (r != WDB_ROW && r != WDB_DONE) { ws_sqlerr(src, 0, "backup: log read", err); goto out; }
	bu = sqlite3_backup_init(dst, "main", ws_sqlite_raw(src), "main");
	if (!bu) {
		werr(err, WX_IO, "backup: start copy to %s: %s", b->db, sqlite3_errmsg(dst));
		goto out;
	}
	int steps = 0;
	for (;;) {
		r = sqlite3_backup_step(bu, BACKUP_STEP_PAGES);
		if (++steps == 1) world_pause("backup.copying"); /* pages copied, the copy not finished */
		if (r == SQLITE_DONE) break;
		if (r == SQLITE_OK) continue;
		if ((r == SQLITE_BUSY || r == SQLITE_LOCKED) && steps < 100000) {
			struct timespec ten = { 0, 10 * 1000 * 1000 };
			nanosleep(&ten, NULL);
			steps++;
			continue;
		}
		werr(err, WX_IO, "backup: copy %s to %s: %s", src->path, b->db, sqlite3_errstr(r));
		goto out;
	}
	*pages = sqlite3_backup_pagecount(bu);
	r = sqlite3_backup_finish(bu);
	bu = NULL;
	if (r != SQLITE_OK) {
		werr(err, WX_IO, "backup: finish copy to %s: %s", b->db, sqlite3_errmsg(dst));
		goto out;
	}
	rc = 0;
out:
	if (bu) sqlite3_backup_finish(bu);
	if (in_read) {
		struct world_err ig;
		ws_exec(src, "COMMIT", &ig);
	}
	if (sqlite3_close(dst) != SQLITE_OK && rc == 0) {
		werr(err, WX_IO, "backup: close %s: %s", b->db, sqlite3_errmsg(dst));
		rc = -1;
	}
	if (rc == 0 && fsync_path(b->db, 0, err) < 0) rc = -1;
	return rc;
}

/* One archived interpreter: its bytes (re-hashed: they must be ref) and
 * manifest.json, into the same place under stage/NAME.artifacts. */
static int copy_interp(const char *src_path, struct bk *b, const char *ref, struct world_err *err)
{
	char from[4400], to[4400], p[4500];
	snprintf(from, sizeof from, "%s.artifacts/interpreters/sha256/%s", src_path, ref + 7);
	snprintf(to, sizeof to, "%s/interpreters/sha256/%s", b->art, ref + 7);
	if (mkdir_noted(b, to, err) < 0) return -1;
	char *bytes;
	size_t n;
	snprintf(p, sizeof p, "%s/ailang", from);
	if (world_read_file(p, BACKUP_INTERP_MAX, &bytes, &n, err) < 0) return werr_prefix(err, "backup: interpreter %s", ref);
	char got[WORLD_REF_SIZE];
	if (world_hash_ref(bytes, n, got, err) < 0) { free(bytes); return -1; }
	if (strcmp(got, ref) != 0) {
		free(bytes);
		return werr(err, WX_INTEGRITY, "backup: %s hashes to %s, not %s; nothing written at the destination", p, got, ref);
	}
	snprintf(p, sizeof p, "%s/ailang", to);
	int rc = write_noted(b, p, bytes, n, 0555, err);
	free(bytes);
	if (rc < 0) return -1;
	snprintf(p, sizeof p, "%s/manifest.json", from);
	if (world_read_file(p, 1 << 16, &bytes, &n, err) < 0) return werr_prefix(err, "backup: interpreter %s", ref);
	snprintf(p, sizeof p, "%s/manifest.json", to);
	rc = write_noted(b, p, bytes, n, 0400, err);
	free(bytes);
	if (rc < 0) return -1;
	return fsync_path(to, 1, err);
}

int ws_sqlite_backup(const char *src_path, const char *dest, const struct world_scan_opts *scan_opts, FILE *scan_out,
                     struct world_backup_result *out, struct world_err *err)
{
	static struct bk b; /* large; one backup per process */
	memset(&b, 0, sizeof b);
	if (!dest || !*dest) return werr(err, WX_USAGE, "backup: empty destination");
	char d1[4096], d2[4096];
	if (snprintf(d1, sizeof d1, "%s", dest) >= (int)sizeof d1 || snprintf(d2, sizeof d2, "%s", dest) >= (int)sizeof d2 ||
	    snprintf(b.dest_art, sizeof b.dest_art, "%s.artifacts", dest) >= (int)sizeof b.dest_art - 200)
		return werr(err, WX_USAGE, "backup: destination path too long: %s", dest);
	const char *dir = dirname(d1), *name = basename(d2);
	if (!*name || strcmp(name, ".") == 0 || strcmp(name, "..") == 0 || strcmp(name, "/") == 0)
		return werr(err, WX_USAGE, "backup: destination %s names no file", dest);
	struct stat sb;
	if (lstat(dest, &sb) == 0)
		return werr(err, WX_CONFLICT, "backup: %s exists; refusing to overwrite it (nothing written)", dest);
	if (errno != ENOENT) return werr(err, WX_IO, "backup: %s: %s", dest, strerror(errno));
	if (lstat(b.dest_art, &sb) == 0)
		return werr(err, WX_CONFLICT, "backup: %s exists; refusing to overwrite it (nothing written)", b.dest_art);
	if (errno != ENOENT) return werr(err, WX_IO, "backup: %s: %s", b.dest_art, strerror(errno));
	if (lstat(dir, &sb) < 0 || !S_ISDIR(sb.st_mode))
		return werr(err, WX_NOT_FOUND, "backup: destination directory %s: %s", dir,
		            errno && !S_ISDIR(sb.st_mode) ? strerror(errno) : "not a directory");

	struct world_store *src;
	if (world_store_open(src_path, WORLD_STORE_READER, &src, err) < 0) return -1;
	if (strcmp(src->path, dest) == 0) {
		world_store_close(src);
		return werr(err, WX_USAGE, "backup: destination is the store itself");
	}
	snprintf(b.stage, sizeof b.stage, "%s/.%s.backup-XXXXXX", dir, name);
	if (!mkdtemp(b.stage)) {
		int e = errno;
		b.stage[0] = 0;
		world_store_close(src);
		return werr(err, WX_IO, "backup: make a staging directory in %s: %s", dir, strerror(e));
	}
	snprintf(b.db, sizeof b.db, "%s/%s", b.stage, name);
	snprintf(b.art, sizeof b.art, "%s/%s.artifacts", b.stage, name);
	static char refs[BACKUP_MAX_INTERPS][WORLD_REF_SIZE];
	int nrefs = 0;
	struct world_store *copy = NULL;
	int rc = copy_db(src, &b, refs, &nrefs, &out->pages, &out->log_entries, err);
	world_store_close(src);
	if (rc < 0) goto fail;
	/* the archive: every interpreter the copy names */
	char p[4500];
	if (mkdir_noted(&b, b.art, err) < 0) goto fail;
	snprintf(p, sizeof p, "%s/interpreters", b.art);
	if (mkdir_noted(&b, p, err) < 0) goto fail;
	snprintf(p, sizeof p, "%s/interpreters/sha256", b.art);
	if (mkdir_noted(&b, p, err) < 0) goto fail;
	for (int i = 0; i < nrefs; i++)
		if (copy_interp(src_path, &b, refs[i], err) < 0) goto fail;
	out->interpreters = nrefs;
	snprintf(p, sizeof p, "%s/interpreters/sha256", b.art);
	if (fsync_path(p, 1, err) < 0) goto fail;
	snprintf(p, sizeof p, "%s/interpreters", b.art);
	if (fsync_path(p, 1, err) < 0 || fsync_path(b.art, 1, err) < 0) goto fail;
	/* the copy is scanned where it stands, before it is given DEST's name */
	if (world_store_open(b.db, WORLD_STORE_READER, &copy, err) < 0) goto fail;
	struct world_scan_opts so = { .objects = 1 };
	if (scan_opts) so.effect_record_check = scan_opts->effect_record_check;
	rc = world_scan(copy, &so, scan_out, &out->scan, err);
	world_store_close(copy);
	copy = NULL;
	if (rc < 0) goto fail;
	if (out->scan.holes || !out->scan.complete) {
		werr(err, WX_INTEGRITY, "backup: the copy has %lld integrity hole(s); nothing written at %s", out->scan.holes,
		     dest);
		goto fail;
	}
	/* a reader may have left -wal/-shm beside the copy: the copy is whole in its file */
	snprintf(p, sizeof p, "%s-wal", b.db);
	if (lstat(p, &sb) == 0 && sb.st_size > 0) {
		werr(err, WX_IO, "backup: %s is not empty after the scan; nothing written at %s", p, dest);
		goto fail;
	}
	unlink(p);
	snprintf(p, sizeof p, "%s-shm", b.db);
	unlink(p);
	if (fsync_path(b.stage, 1, err) < 0) goto fail;
	/* into place: the archive first, the database last */
	if (rename(b.art, b.dest_art) < 0) {
		werr(err, WX_IO, "backup: rename %s to %s: %s", b.art, b.dest_art, strerror(errno));
		goto fail;
	}
	b.art_renamed = 1;
	world_pause("backup.renaming");
	if (rename(b.db, dest) < 0) {
		werr(err, WX_IO, "backup: rename %s to %s: %s", b.db, dest, strerror(errno));
		goto fail;
	}
	if (rmdir(b.stage) < 0) {
		werr(err, WX_IO, "backup: remove %s: %s", b.stage, strerror(errno));
		/* DEST is complete: report it, keep it */
		return -1;
	}
	return fsync_path(dir, 1, err);
fail:
	if (copy) world_store_close(copy);
	undo(&b);
	return -1;
}
