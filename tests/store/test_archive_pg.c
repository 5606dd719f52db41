/* tests/store/test_archive_pg.c: the interpreter archive on PostgreSQL
 * (docs/store.md, "Interpreter archive"): the bytes and manifest in the
 * table archive, written in the transaction of the interpreters row, and
 * a per-host cache that world_interp_get materialises and re-hashes.
 * WORLD_TEST_PG_URI names a database of a throwaway cluster (started by
 * tests/store/archive_pg.sh); without it only the SQLite reference half
 * runs and the rest is skipped with the reason. AILANG_LITE is the
 * interpreter archived (set by make check). Each "host" is a fresh cache
 * directory (world_archive_configure). */
#include "store/store.h"
#include "store/db.h"
#include "common/pause.h"
#include "common/ref.h"
#include "capsule/pin.h"
#include "tests/tap.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char tmpd[] = "/tmp/test_archive_pg.XXXXXX";

static char *slurp(const char *path, size_t *n)
{
	*n = 0;
	FILE *f = fopen(path, "rb");
	if (!f) return NULL;
	size_t cap = 1 << 16, len = 0;
	char *b = malloc(cap);
	size_t r;
	while (b && (r = fread(b + len, 1, cap - len, f)) > 0) {
		len += r;
		if (len == cap) {
			char *nb = realloc(b, cap *= 2);
			if (!nb) { free(b); b = NULL; }
			else b = nb;
		}
	}
	fclose(f);
	*n = len;
	return b;
}

static int same_file(const char *a, const char *b)
{
	size_t na, nb;
	char *x = slurp(a, &na), *y = slurp(b, &nb);
	int same = x && y && na == nb && memcmp(x, y, na) == 0;
	free(x);
	free(y);
	return same;
}

static int mode_of(const char *p)
{
	struct stat sb;
	return lstat(p, &sb) == 0 ? (int)(sb.st_mode & 07777) : -1;
}

static long long ino_of(const char *p)
{
	struct stat sb;
	return lstat(p, &sb) == 0 ? (long long)sb.st_ino : -1;
}

/* Entries of dir whose name starts with prefix. */
static int count_prefix(const char *dir, const char *prefix)
{
	DIR *d = opendir(dir);
	if (!d) return -1;
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)))
		if (strncmp(e->d_name, prefix, strlen(prefix)) == 0) n++;
	closedir(d);
	return n;
}

static int exists(const char *p)
{
	struct stat sb;
	return lstat(p, &sb) == 0;
}

static void host(const char *name, char *cache, size_t n)
{
	snprintf(cache, n, "%s/%s", tmpd, name);
	struct world_archive_opts o = { .cache_dir = cache };
	struct world_err err = { 0, "" };
	if (world_archive_configure(&o, &err) < 0) bail("configure %s: %s", cache, err.msg);
}

/* One value of one row (a text, or a bytea as hex) of a raw query. */
static int pg_query1(struct wdb *db, const char *sql, const char *arg, char *out, size_t n)
{
	struct wdb_stmt *s;
	struct world_err err = { 0, "" };
	out[0] = 0;
	if (wdb_prepare(db, sql, &s, &err) < 0) {
		diag("%s: %s", sql, err.msg);
		return -1;
	}
	if (arg) wdb_bind_text(s, 1, arg, -1, &err);
	int rc = wdb_step(s, &err);
	if (rc == WDB_ROW) {
		const char *t = wdb_column_text(s, 0);
		snprintf(out, n, "%s", t ? t : "");
	} else if (rc < 0) diag("%s: %s", sql, err.msg);
	wdb_finalize(s);
	return rc;
}

static int pg_exec(struct wdb *db, const char *sql, const char *arg)
{
	char ig[8];
	return pg_query1(db, sql, arg, ig, sizeof ig) < 0 ? -1 : 0;
}

/* The cache's interpreter file and manifest of ref under cache. */
static void cache_file(const char *cache, const char *ref, const char *name, char *out, size_t n)
{
	snprintf(out, n, "%s/interpreters/sha256/%.64s/%s", cache, ref + 7, name);
}

/* world_interp_get with stderr captured into *line (lines counted). */
static int get_capture(struct world_store *st, const char *ref, struct world_interp *wi, struct world_err *err,
                       char *line, size_t ln, int *lines)
{
	char p[512];
	snprintf(p, sizeof p, "%s/stderr.txt", tmpd);
	fflush(stderr);
	int saved = dup(2), fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (saved < 0 || fd < 0) bail("capture stderr: %s", strerror(errno));
	dup2(fd, 2);
	close(fd);
	int rc = world_interp_get(st, ref, wi, err);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	size_t n;
	char *b = slurp(p, &n);
	*lines = 0;
	for (size_t i = 0; b && i < n; i++) *lines += b[i] == '\n';
	snprintf(line, ln, "%.*s", b ? (int)n : 0, b ? b : "");
	free(b);
	return rc;
}

/* The child of the race: materialise ref into cache, held at the pause
 * point until the parent lets it go. Exit 0 when world_interp_get gave a
 * file of ref's bytes. */
static int race_child(const char *uri, const char *cache, const char *pause_dir, const char *ref, const char *src)
{
	setenv("WORLD_TEST_PAUSE", "archive.materialise@1", 1);
	setenv("WORLD_TEST_PAUSE_DIR", pause_dir, 1);
	struct world_archive_opts o = { .cache_dir = cache };
	struct world_err err = { 0, "" };
	struct world_store *st = NULL;
	struct world_interp wi;
	if (world_archive_configure(&o, &err) < 0 || world_store_open(uri, WORLD_STORE_READER, &st, &err) < 0 ||
	    world_interp_get(st, ref, &wi, &err) < 0) {
		fprintf(stderr, "race child: %s\n", err.msg);
		return 1;
	}
	world_store_close(st);
	return same_file(wi.path, src) ? 0 : 2;
}

/* Waits (bounded: a hung child fails the test, it is no threshold) for path. */
static int wait_for(const char *path)
{
	struct timespec step = { 0, 5 * 1000 * 1000 };
	for (int i = 0; i < 60 * 200; i++) {
		if (exists(path)) return 1;
		nanosleep(&step, NULL);
	}
	return 0;
}

static void touch(const char *p)
{
	int fd = open(p, O_WRONLY | O_CREAT, 0600);
	if (fd >= 0) close(fd);
}

static void race(const char *uri, const char *ref, const char *src)
{
#if WORLD_PAUSE_COMPILED
	char cache[512], pa[512], pb[512], dir[4700], ra[600], rb[600], ga[600], gb[600], bin[4800];
	snprintf(cache, sizeof cache, "%s/host-race", tmpd);
	snprintf(pa, sizeof pa, "%s/pause-a", tmpd);
	snprintf(pb, sizeof pb, "%s/pause-b", tmpd);
	mkdir(pa, 0700);
	mkdir(pb, 0700);
	snprintf(dir, sizeof dir, "%s/interpreters/sha256/%.64s", cache, ref + 7);
	snprintf(bin, sizeof bin, "%s/ailang", dir);
	snprintf(ra, sizeof ra, "%s/archive.materialise.1.reached", pa);
	snprintf(rb, sizeof rb, "%s/archive.materialise.1.reached", pb);
	snprintf(ga, sizeof ga, "%s/archive.materialise.1.go", pa);
	snprintf(gb, sizeof gb, "%s/archive.materialise.1.go", pb);
	fflush(NULL);
	pid_t a = fork();
	if (a == 0) _exit(race_child(uri, cache, pa, ref, src));
	pid_t b = a > 0 ? fork() : -1;
	if (b == 0) _exit(race_child(uri, cache, pb, ref, src));
	if (a < 0 || b < 0) bail("fork: %s", strerror(errno));
	int both = wait_for(ra) && wait_for(rb);
	ok(both, "race: both processes are held with their bytes written, before the rename");
	/* the control: both really are inside the window at once -- two
	 * temporary files, no file in place yet */
	is_int(count_prefix(dir, ".ailang.tmp."), 2, "race: two temporary files side by side in %s", dir);
	ok(!exists(bin), "race: ... and no ailang in place yet");
	/* B first: its file goes in place; a reader holds it open while A
	 * renames its own over it */
	touch(gb);
	int sb = -1, sa = -1;
	waitpid(b, &sb, 0);
	ok(WIFEXITED(sb) && WEXITSTATUS(sb) == 0, "race: B materialised ref's bytes (status %d)", sb);
	int rfd = open(bin, O_RDONLY);
	long long ino_b = ino_of(bin);
	touch(ga);
	waitpid(a, &sa, 0);
	ok(WIFEXITED(sa) && WEXITSTATUS(sa) == 0, "race: A, renaming over B's file, got ref's bytes too (status %d)", sa);
	ok(ino_of(bin) != ino_b, "race: A's rename replaced B's file (the control: both wrote)");
	ok(same_file(bin, src), "race: the file in place is the source binary, byte for byte");
	/* B's file, open across the rename, still reads whole */
	char proc[64];
	snprintf(proc, sizeof proc, "/proc/self/fd/%d", rfd);
	ok(rfd >= 0 && same_file(proc, src), "race: a reader of B's file across A's rename read it whole");
	if (rfd >= 0) close(rfd);
	is_int(count_prefix(dir, ".ailang.tmp.") + count_prefix(dir, ".manifest.json.tmp."), 0,
	       "race: no temporary file left behind");
#else
	(void)uri;
	(void)ref;
	(void)src;
	for (int i = 0; i < 9; i++) skip("pause points need configure --enable-test-hooks", "race");
#endif
}

#define PG_CHECKS 52

int main(void)
{
	if (!mkdtemp(tmpd)) bail("mkdtemp: %s", strerror(errno));
	const char *src = getenv("AILANG_LITE");
	if (!src) bail("AILANG_LITE is not set (run from make check)");
	struct world_err err = { 0, "" };

	/* ---- where the cache is ---- */
	{
		char got[4096];
		struct world_archive_opts rel = { .cache_dir = "relative/cache" };
		ok(world_archive_configure(&rel, &err) < 0 && err.code == WX_USAGE, "a relative cache_dir is refused: %s",
		   err.msg);
		world_archive_configure(NULL, &err);
		setenv("XDG_CACHE_HOME", "/x/cache", 1);
		setenv("HOME", "/h", 1);
		ok(world_archive_cache_dir(got, sizeof got, &err) == 0 && strcmp(got, "/x/cache/world") == 0,
		   "the default: $XDG_CACHE_HOME/world (%s)", got);
		setenv("XDG_CACHE_HOME", "not/absolute", 1);
		ok(world_archive_cache_dir(got, sizeof got, &err) == 0 && strcmp(got, "/h/.cache/world") == 0,
		   "a relative XDG_CACHE_HOME is ignored: $HOME/.cache/world (%s)", got);
		unsetenv("XDG_CACHE_HOME");
		ok(world_archive_cache_dir(got, sizeof got, &err) == 0 && strcmp(got, "/h/.cache/world") == 0,
		   "no XDG_CACHE_HOME: $HOME/.cache/world (%s)", got);
		setenv("HOME", "relative", 1);
		ok(world_archive_cache_dir(got, sizeof got, &err) < 0 && err.code == WX_USAGE && !strchr(err.msg, '\n'),
		   "neither absolute: one line, exit 2: %s", err.msg);
		struct world_archive_opts given = { .cache_dir = "/given/dir" };
		ok(world_archive_configure(&given, &err) == 0 && world_archive_cache_dir(got, sizeof got, &err) == 0 &&
		       strcmp(got, "/given/dir") == 0,
		   "a configured cache_dir wins (%s)", got);
	}

	/* ---- the SQLite reference: DB.artifacts, as ever ---- */
	char lpath[512], lman[4700];
	snprintf(lpath, sizeof lpath, "%s/s.db", tmpd);
	struct world_store *lite = NULL;
	struct world_interp li;
	memset(&li, 0, sizeof li);
	ok(world_store_open(lpath, WORLD_STORE_WRITER, &lite, &err) == 0 &&
	       world_archive_interpreter(lite, src, &li, &err) == 0,
	   "SQLite: interpreter archived: %s", err.msg);
	snprintf(lman, sizeof lman, "%s.artifacts/interpreters/sha256/%.64s/manifest.json", lpath, li.ref + 7);
	ok(strstr(li.path, ".artifacts/interpreters/sha256/") && same_file(li.path, src) && mode_of(li.path) == 0555 &&
	       mode_of(lman) == 0400,
	   "SQLite: in DB.artifacts, 0555 and 0400, the source's bytes (%s)", li.path);
	struct world_interp lg;
	ok(world_interp_get(lite, li.ref, &lg, &err) == 0 && strcmp(lg.path, li.path) == 0,
	   "SQLite: world_interp_get gives the artifacts file, no cache: %s", lg.path);
	world_store_close(lite);

	const char *uri = getenv("WORLD_TEST_PG_URI");
#ifdef WORLD_HAVE_PG
	wdb_pg_enable();
#else
	uri = NULL;
#endif
	if (!uri || !*uri) {
		const char *why = getenv("WORLD_TEST_PG_SKIP") ? getenv("WORLD_TEST_PG_SKIP") : "WORLD_TEST_PG_URI is not set";
		for (int i = 0; i < PG_CHECKS; i++) skip(why, "the PostgreSQL half");
		char rm[600];
		snprintf(rm, sizeof rm, "rm -rf '%s'", tmpd);
		if (system(rm) != 0) diag("could not remove %s", tmpd);
		return done_testing();
	}
	struct wdb *raw = NULL;
	if (wdb_open(uri, NULL, &raw, &err) < 0) bail("raw connection: %s", err.msg);
	char cache[512], bin[4700], man[4700], v[4096];

	/* ---- archive on PostgreSQL ---- */
	host("host-a", cache, sizeof cache);
	struct world_store *pg = NULL;
	struct world_interp pi;
	memset(&pi, 0, sizeof pi);
	ok(world_store_open(uri, WORLD_STORE_WRITER, &pg, &err) == 0, "PostgreSQL store opened: %s", err.msg);
	/* bad input changes nothing: not an ELF */
	char notelf[600];
	snprintf(notelf, sizeof notelf, "%s/not-elf", tmpd);
	FILE *f = fopen(notelf, "w");
	if (f) { fputs("#!/bin/sh\necho AILANG v1.0.0\n", f); fclose(f); }
	chmod(notelf, 0755);
	struct world_interp bad;
	ok(world_archive_interpreter(pg, notelf, &bad, &err) < 0 && err.code == WX_BAD_INPUT,
	   "a script is refused: %s", err.msg);
	pg_query1(raw, "SELECT count(*)::text FROM archive", NULL, v, sizeof v);
	is_str(v, "0", "... and nothing is in the archive table");
	ok(world_archive_interpreter(pg, src, &pi, &err) == 0, "PostgreSQL: interpreter archived: %s", err.msg);
	is_int(pi.created, 1, "... created");
	cache_file(cache, pi.ref, "ailang", bin, sizeof bin);
	cache_file(cache, pi.ref, "manifest.json", man, sizeof man);
	is_str(pi.path, bin, "... its path is this host's cache file");
	ok(same_file(bin, src) && mode_of(bin) == 0500 && mode_of(man) == 0400, "... which is the source, 0500; manifest 0400");
	char d[4700];
	snprintf(d, sizeof d, "%s/interpreters/sha256/%.64s", cache, pi.ref + 7);
	ok(mode_of(d) == 0700 && mode_of(cache) == 0700, "... in 0700 directories");
	/* the rows, as the server holds them */
	pg_query1(raw, "SELECT 'sha256:' || encode(sha256(bytes), 'hex') FROM archive WHERE ref = ?1", pi.ref, v, sizeof v);
	is_str(v, pi.ref, "the archive row's bytes hash to its ref");
	pg_query1(raw, "SELECT encode(bytes, 'hex') FROM archive WHERE ref = ?1", pi.ref, v, 8);
	is_str(v, "7f454c4", "... and are the ELF (its magic)");
	size_t mn;
	char *lm = slurp(lman, &mn);
	char want[4096];
	snprintf(want, sizeof want, "%.*s", lm ? (int)mn : 0, lm ? lm : "");
	free(lm);
	pg_query1(raw, "SELECT convert_from(manifest, 'UTF8') FROM archive WHERE ref = ?1", pi.ref, v, sizeof v);
	is_str(v, want, "the archive row's manifest is SQLite's manifest.json, byte for byte");
	ok(same_file(man, lman), "... and so is the cached manifest.json");
	/* the same interpreters row on both backends */
	is_str(pi.ref, li.ref, "the same ref on SQLite and PostgreSQL");
	pg_query1(raw, "SELECT ref || ' ' || version || ' ' || size FROM interpreters WHERE ref = ?1", pi.ref, v, sizeof v);
	snprintf(want, sizeof want, "%s %s %llu", li.ref, li.version, (unsigned long long)li.size);
	is_str(v, want, "the interpreters row (ref, version, size) is SQLite's");
	struct world_interp again;
	ok(world_archive_interpreter(pg, src, &again, &err) == 0 && again.created == 0 &&
	       strcmp(again.version, li.version) == 0,
	   "archived again: nothing created, the release from the row's manifest (%s)", err.msg);
	pg_query1(raw, "SELECT count(*)::text FROM archive", NULL, v, sizeof v);
	is_str(v, "1", "... still one archive row");

	/* in the transaction of the interpreters row: a rolled-back group keeps neither */
	char src2[600];
	snprintf(src2, sizeof src2, "%s/ailang-2", tmpd);
	{
		size_t n;
		char *b = slurp(src, &n);
		FILE *o = fopen(src2, "wb");
		/* the same program with one byte more: another ref */
		if (!b || !o || fwrite(b, 1, n, o) != n || fputc(0, o) == EOF) bail("copy %s: %s", src, strerror(errno));
		fclose(o);
		free(b);
		chmod(src2, 0755);
	}
	struct world_interp p2;
	ok(world_store_begin(pg, &err) == 0 && world_archive_interpreter(pg, src2, &p2, &err) == 0 && p2.created == 1,
	   "a second interpreter archived inside world_store_begin: %s", err.msg);
	world_store_rollback(pg);
	pg_query1(raw, "SELECT (SELECT count(*) FROM archive WHERE ref = ?1) || ' ' || (SELECT count(*) FROM interpreters "
	          "WHERE ref = ?1)", p2.ref, v, sizeof v);
	is_str(v, "0 0", "rolled back: neither its archive row nor its interpreters row");
	ok(world_archive_interpreter(pg, src2, &p2, &err) == 0, "archived on its own: %s", err.msg);
	pg_query1(raw, "SELECT (SELECT count(*) FROM archive WHERE ref = ?1) || ' ' || (SELECT count(*) FROM interpreters "
	          "WHERE ref = ?1)", p2.ref, v, sizeof v);
	is_str(v, "1 1", "control: committed, both rows");
	world_store_close(pg);

	/* ---- a new host: nothing but the URI ---- */
	host("host-b", cache, sizeof cache);
	cache_file(cache, pi.ref, "ailang", bin, sizeof bin);
	cache_file(cache, pi.ref, "manifest.json", man, sizeof man);
	ok(!exists(cache), "host B's cache does not exist yet");
	pg = NULL;
	ok(world_store_open(uri, WORLD_STORE_READER, &pg, &err) == 0, "host B: store opened read-only: %s", err.msg);
	struct world_interp g;
	char line[1024];
	int lines = 0;
	ok(get_capture(pg, pi.ref, &g, &err, line, sizeof line, &lines) == 0 && strcmp(g.path, bin) == 0,
	   "host B: world_interp_get materialised it: %s %s", g.path, err.msg);
	ok(same_file(bin, src) && mode_of(bin) == 0500 && same_file(man, lman) && mode_of(man) == 0400,
	   "... the source's bytes (0500) and SQLite's manifest (0400)");
	is_int(lines, 0, "... with nothing on stderr (%s)", line);
	snprintf(d, sizeof d, "%s/interpreters/sha256/%.64s", cache, pi.ref + 7);
	is_int(count_prefix(d, "."), 2, "... no temporary file beside it (only . and ..)");
	int fd = -1;
	char pinned[80];
	ok(capsule_pin_interpreter(g.path, pi.ref, &fd, pinned, &err) == 0, "the capsule pins the cached file: %s", err.msg);
	if (fd >= 0) close(fd);
	/* again: a cache hit, hashed again */
	long long ino = ino_of(bin);
	ok(get_capture(pg, pi.ref, &g, &err, line, sizeof line, &lines) == 0 && ino_of(bin) == ino && lines == 0,
	   "again: a cache hit (the same file, not written again): %s", err.msg);

	/* a flipped byte in the cache: refused in one line, written again */
	chmod(bin, 0600);
	fd = open(bin, O_RDWR);
	unsigned char c = 0;
	off_t at = 4096;
	int flipped = fd >= 0 && pread(fd, &c, 1, at) == 1 && (c ^= 0x20, pwrite(fd, &c, 1, at) == 1);
	if (fd >= 0) close(fd);
	chmod(bin, 0500);
	ok(flipped && !same_file(bin, src), "a byte of the cached file flipped");
	fd = -1;
	ok(capsule_pin_interpreter(bin, pi.ref, &fd, pinned, &err) < 0 && err.code == WX_HASH_MISMATCH,
	   "control: the flipped file is refused by the pin (%s)", err.msg);
	if (fd >= 0) close(fd);
	ok(get_capture(pg, pi.ref, &g, &err, line, sizeof line, &lines) == 0, "world_interp_get after the flip: %s", err.msg);
	ok(lines == 1 && strstr(line, pi.ref) && strstr(line, "refused") && strstr(line, bin),
	   "... one line on stderr naming the ref, the file and the refusal: %s", line);
	ok(same_file(bin, src) && ino_of(bin) != ino && mode_of(bin) == 0500, "... and the file is the source's bytes again");
	ok(get_capture(pg, pi.ref, &g, &err, line, sizeof line, &lines) == 0 && lines == 0,
	   "control: the next get finds it sound, says nothing");
	/* a verify reads the row only */
	int what = 0;
	ok(world_interp_verify(pg, pi.ref, &what, &err) == 0, "world_interp_verify: the row is sound: %s", err.msg);
	world_store_close(pg);

	/* ---- a missing archive row: one line, nothing cached ---- */
	pg_exec(raw, "DELETE FROM archive WHERE ref = ?1", p2.ref);
	host("host-c", cache, sizeof cache);
	snprintf(d, sizeof d, "%s/interpreters/sha256/%.64s", cache, p2.ref + 7);
	pg = NULL;
	ok(world_store_open(uri, WORLD_STORE_READER, &pg, &err) == 0, "host C: opened: %s", err.msg);
	err.msg[0] = 0;
	int rc = world_interp_get(pg, p2.ref, &g, &err);
	ok(rc < 0 && err.code == WX_INTEGRITY && strstr(err.msg, p2.ref) && strstr(err.msg, "no archive row") &&
	       !strchr(err.msg, '\n'),
	   "no archive row: refused in one line (exit 7): %s", err.msg);
	ok(!exists(d), "... nothing cached for it");
	ok(world_interp_verify(pg, p2.ref, &what, &err) < 0 && err.code == WX_INTEGRITY && what == WORLD_INTERP_FILE,
	   "... and world_interp_verify reports the hole: %s", err.msg);
	ok(world_interp_get(pg, pi.ref, &g, &err) == 0 && same_file(g.path, src),
	   "control: the other interpreter materialises on host C: %s", err.msg);
	/* a row whose bytes are not its ref: refused, nothing cached */
	pg_exec(raw, "INSERT INTO archive(ref, bytes, manifest) SELECT ?1, bytes, manifest FROM archive", p2.ref);
	rc = world_interp_get(pg, p2.ref, &g, &err);
	ok(rc < 0 && err.code == WX_INTEGRITY && strstr(err.msg, "hashing to") && !exists(d),
	   "an archive row of other bytes: refused, nothing cached: %s", err.msg);
	ok(world_interp_verify(pg, p2.ref, &what, &err) < 0 && err.code == WX_INTEGRITY && what == WORLD_INTERP_FILE,
	   "... world_interp_verify too: %s", err.msg);
	world_store_close(pg);
	pg = NULL;
	struct world_interp p3;
	ok(world_store_open(uri, WORLD_STORE_WRITER, &pg, &err) == 0 &&
	       world_archive_interpreter(pg, src2, &p3, &err) < 0 && err.code == WX_INTEGRITY,
	   "archiving its bytes again leaves the bad row as is, refused: %s", err.msg);
	world_store_close(pg);
	pg_exec(raw, "DELETE FROM archive WHERE ref = ?1", p2.ref);

	/* ---- two processes materialising one ref at once ---- */
	race(uri, pi.ref, src);
	wdb_close(raw);
	char rm[600];
	snprintf(rm, sizeof rm, "rm -rf '%s'", tmpd);
	if (system(rm) != 0) diag("could not remove %s", tmpd);
	return done_testing();
}
