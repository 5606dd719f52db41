/* store/archive.c: the interpreter archive (docs/design.md §6.6).
 * <db>.artifacts/interpreters/sha256/<hex>/ailang (mode 0555) and
 * manifest.json {hash, size, version} (0400) beside it, in directories
 * made 0700 (whatever the umask), each written via a temp file,
 * fsync and rename, then the directory fsync'd, so a crash leaves either
 * nothing or the complete file. Same bytes again: nothing is rewritten.
 * Only interpreters are archived: a static ELF whose `--version` (probed on
 * the bytes read, from a memfd, before anything is written) prints a
 * release line of the contract's form, NAME vMAJOR.MINOR.PATCH (docs/design.md §2:
 * "AILANG v0.41.0", "AILANG-lite v0.1.0 (...)"). A refusal at any step leaves nothing behind:
 * files and directories this call created are removed again.
 *
 * A store that is no local file (WS_CAP_FILE unset: PostgreSQL;
 * docs/store.md, "Interpreter archive") keeps the bytes and the
 * manifest in the row archive(ref, bytes, manifest), written in the
 * transaction of the interpreters row (the server re-hashes the bytes it
 * received against the ref), and a run's interpreter is materialised into
 * a per-host cache laid out like <db>.artifacts, re-hashed at every
 * world_interp_get: a cached file whose bytes are not its ref is refused
 * (one line on stderr) and written again from the database. */
#include "store/store_internal.h"
#include "common/canon.h"
#include "common/elf.h"
#include "common/file.h"
#include "common/pause.h"
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <regex.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define INTERP_MAX_BYTES (512ull << 20)
#define VERSION_PROBE_SECONDS 10

/* The directories one archive call created, so a refusal can remove them. */
struct made_dirs {
	char path[16][4096];
	int n;
};

static int mkdir_one(const char *d, struct made_dirs *made, struct world_err *err)
{
	if (mkdir(d, 0700) == 0) {
		if (made->n < 16) snprintf(made->path[made->n++], sizeof made->path[0], "%s", d);
		/* 0700 whatever the umask: the archive is its owner's only */
		if (chmod(d, 0700) < 0) return werr(err, WX_IO, "archive: chmod 0700 %s: %s", d, strerror(errno));
		return 0;
	}
	if (errno != EEXIST) return werr(err, WX_IO, "archive: mkdir %s: %s", d, strerror(errno));
	return 0;
}

static int mkdir_p(const char *dir, struct made_dirs *made, struct world_err *err)
{
	char tmp[4096];
	if (snprintf(tmp, sizeof tmp, "%s", dir) >= (int)sizeof tmp)
		return werr(err, WX_IO, "archive: path too long: %s", dir);
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/') continue;
		*p = 0;
		if (mkdir_one(tmp, made, err) < 0) return -1;
		*p = '/';
	}
	return mkdir_one(tmp, made, err);
}

static void undo_dirs(const struct made_dirs *made)
{
	for (int i = made->n - 1; i >= 0; i--) rmdir(made->path[i]); /* deepest first; best effort */
}

/* A static ELF for this machine (common/elf.h: the same check the pin
 * applies at run time), worded for the archive. */
static int check_static_elf(const unsigned char *b, size_t n, const char *bin, struct world_err *err)
{
	switch (world_elf_check_static(b, n)) {
	case WORLD_ELF_STATIC: return 0;
	case WORLD_ELF_NOT_ELF:
		return werr(err, WX_BAD_INPUT, "archive: %s: not an ELF binary, so not an interpreter; nothing archived", bin);
	case WORLD_ELF_WRONG_ARCH:
		return werr(err, WX_BAD_INPUT, "archive: %s: not an x86_64 ELF64 binary; nothing archived", bin);
	case WORLD_ELF_BAD_PHDRS:
		return werr(err, WX_BAD_INPUT, "archive: %s: malformed ELF program headers; nothing archived", bin);
	case WORLD_ELF_DYNAMIC: break;
	}
	return werr(err, WX_BAD_INPUT,
	            "archive: %s: dynamically linked, not a static ELF (capsule roots hold no libc); nothing archived", bin);
}

/* docs/design.md §2's release line: a name ("AILANG", "AILANG-lite", a test
 * double's), " v", a version MAJOR.MINOR.PATCH[-pre|+build], then
 * optionally a space and anything. */
static int check_release_line(const char *line, const char *bin, struct world_err *err)
{
	regex_t re;
	if (regcomp(&re, "^[A-Za-z][A-Za-z0-9_-]* v[0-9]+\\.[0-9]+\\.[0-9]+([-+][0-9A-Za-z.-]+)?( .*)?$",
	            REG_EXTENDED | REG_NOSUB) != 0)
		return werr(err, WX_FAIL, "archive: cannot compile the release-line pattern");
	int ok = regexec(&re, line, 0, NULL, 0) == 0;
	regfree(&re);
	if (!ok)
		return werr(err, WX_INTERP,
		            "archive: %s --version printed \"%.200s\", not a release line like \"AILANG v0.41.0\"; nothing archived",
		            bin, line);
	return 0;
}

static int fsync_dir(const char *dir, struct world_err *err)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) return werr(err, WX_IO, "archive: open %s: %s", dir, strerror(errno));
	int rc = fsync(fd);
	int e = errno;
	close(fd);
	if (rc < 0) return werr(err, WX_IO, "archive: fsync %s: %s", dir, strerror(e));
	return 0;
}

/* temp file + fsync + rename + dir fsync */
static int atomic_write(const char *dir, const char *name, const void *buf, size_t n, mode_t mode,
                        struct world_err *err)
{
	char tmp[4200], dst[4200];
	snprintf(tmp, sizeof tmp, "%s/.%s.tmp.%ld", dir, name, (long)getpid());
	snprintf(dst, sizeof dst, "%s/%s", dir, name);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) return werr(err, WX_IO, "archive: create %s: %s", tmp, strerror(errno));
	if (write_all(fd, buf, n) < 0 || fchmod(fd, mode) < 0 || fsync(fd) < 0) {
		int e = errno;
		close(fd);
		unlink(tmp);
		return werr(err, WX_IO, "archive: write %s: %s", tmp, strerror(e));
	}
	if (close(fd) < 0) {
		int e = errno;
		unlink(tmp);
		return werr(err, WX_IO, "archive: close %s: %s", tmp, strerror(e));
	}
	if (rename(tmp, dst) < 0) {
		int e = errno;
		unlink(tmp);
		return werr(err, WX_IO, "archive: rename %s -> %s: %s", tmp, dst, strerror(e));
	}
	return fsync_dir(dir, err);
}

/* Run the bytes read from BIN (from a sealed memfd, so the probed program
 * is exactly what will be archived and nothing is written to disk) with
 * --version, an empty environment and a deadline; the first non-empty
 * stdout line is the release string. Messages name bin, the path given. */
static int probe_version(const unsigned char *bytes, size_t len, const char *bin, char *out, size_t outn,
                         struct world_err *err)
{
	int mfd = memfd_create("world-archive-probe", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (mfd < 0) return werr(err, WX_IO, "archive: memfd_create: %s", strerror(errno));
	for (size_t off = 0; off < len;) {
		ssize_t w = write(mfd, bytes + off, len - off);
		if (w < 0 && errno == EINTR) continue;
		if (w <= 0) {
			int e = errno;
			close(mfd);
			return werr(err, WX_IO, "archive: copy %s to a memfd: %s", bin, strerror(e));
		}
		off += (size_t)w;
	}
	fcntl(mfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL);
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0) {
		int e = errno;
		close(mfd);
		return werr(err, WX_IO, "archive: pipe: %s", strerror(e));
	}
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(p[0]);
		close(p[1]);
		close(mfd);
		return werr(err, WX_IO, "archive: fork: %s", strerror(e));
	}
	if (pid == 0) {
		int nul = open("/dev/null", O_RDWR);
		if (nul >= 0) { dup2(nul, 0); dup2(nul, 2); }
		dup2(p[1], 1);
		char *argv[] = { (char *)bin, (char *)"--version", NULL };
		char *envp[] = { NULL };
		syscall(SYS_execveat, mfd, "", argv, envp, AT_EMPTY_PATH);
		_exit(127);
	}
	close(mfd);
	close(p[1]);
	char buf[8192];
	size_t n = 0;
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	int timed_out = 0;
	for (;;) {
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		long ms = VERSION_PROBE_SECONDS * 1000L - ((now.tv_sec - t0.tv_sec) * 1000L + (now.tv_nsec - t0.tv_nsec) / 1000000L);
		if (ms <= 0) { timed_out = 1; break; }
		struct pollfd pfd = { p[0], POLLIN, 0 };
		int pr = poll(&pfd, 1, (int)ms);
		if (pr < 0 && errno == EINTR) continue;
		if (pr <= 0) { timed_out = pr == 0; break; }
		char tmp[4096];
		ssize_t r = read(p[0], tmp, sizeof tmp);
		if (r < 0 && errno == EINTR) continue;
		if (r <= 0) break;
		size_t take = (size_t)r < sizeof buf - 1 - n ? (size_t)r : sizeof buf - 1 - n;
		memcpy(buf + n, tmp, take);
		n += take;
	}
	close(p[0]);
	if (timed_out) kill(pid, SIGKILL);
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) return werr(err, WX_IO, "archive: waitpid: %s", strerror(errno));
	if (timed_out) return werr(err, WX_DEADLINE, "archive: %s --version: no answer within %d s", bin, VERSION_PROBE_SECONDS);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127 && n == 0)
		return werr(err, WX_INTERP, "archive: %s --version: could not be executed (exit 127); nothing archived", bin);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return werr(err, WX_INTERP, "archive: %s --version: exited with status %d; nothing archived", bin,
		            WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
	buf[n] = 0;
	char *line = buf, *save = NULL;
	for (char *l = strtok_r(buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		size_t k = strlen(l);
		while (k && (l[k - 1] == '\r' || l[k - 1] == ' ' || l[k - 1] == '\t')) l[--k] = 0;
		while (*l == ' ' || *l == '\t') l++;
		if (*l) { line = l; break; }
		line = NULL;
	}
	if (!line || !*line)
		return werr(err, WX_INTERP, "archive: %s --version printed no release string; nothing archived", bin);
	for (char *c = line; *c; c++)
		if ((unsigned char)*c < 0x20) *c = ' ';
	size_t ll = strlen(line);
	if (ll >= outn) return werr(err, WX_INTERP, "archive: %s --version: release string too long", bin);
	memcpy(out, line, ll + 1);
	return 0;
}

/* The archive's messages carry an "archive: " prefix. */
static int read_file(const char *path, unsigned char **out, size_t *len, size_t max, struct world_err *err)
{
	char *buf = NULL;
	*out = NULL;
	if (world_read_file(path, max, &buf, len, err) < 0) return werr_prefix(err, "archive");
	*out = (unsigned char *)buf;
	return 0;
}

static int read_manifest(const char *path, const char *ref, uint64_t size, char *version, size_t vn)
{
	unsigned char *buf;
	size_t n;
	if (read_file(path, &buf, &n, 1 << 16, NULL) < 0) return -1;
	json_t *m = world_json_parse((const char *)buf, n, NULL);
	free(buf);
	json_t *h = json_object_get(m, "hash"), *v = json_object_get(m, "version"), *s = json_object_get(m, "size");
	int ok = json_is_string(h) && strcmp(json_string_value(h), ref) == 0 && json_is_string(v) &&
	         json_is_integer(s) && (uint64_t)json_integer_value(s) == size && json_string_length(v) < vn;
	if (ok) snprintf(version, vn, "%s", json_string_value(v));
	json_decref(m);
	return ok ? 0 : -1;
}

static int record_interp(struct world_store *st, const struct world_interp *in, struct world_err *err)
{
	struct wdb_stmt *s;
	if (ws_stmt(st, WORLD_SQL(INTERP_INSERT), &s, err) < 0) return -1;
	ws_bind_text(s, 1, in->ref);
	ws_bind_text(s, 2, in->version);
	ws_bind_int(s, 3, (long long)in->size);
	ws_bind_int(s, 4, (long long)time(NULL));
	int rc = wdb_step(s, NULL);
	ws_done(st, s);
	if (rc != WDB_DONE) return ws_sqlerr(st, 0, "interpreter record", err);
	return 0;
}

static int interp_dir(struct world_store *st, const char *ref, char *dir, size_t n)
{
	return snprintf(dir, n, "%s.artifacts/interpreters/sha256/%s", st->path, ref + 7) >= (int)n ? -1 : 0;
}

/* ---- a store that is no file: the archive table and the per-host cache ---- */

/* The cache directory given by world_archive_configure ("" = the default). */
static pthread_mutex_t cache_mu = PTHREAD_MUTEX_INITIALIZER;
static char cache_given[4096];
static atomic_uint cache_tmp_seq;

int world_archive_configure(const struct world_archive_opts *o, struct world_err *err)
{
	const char *d = o && o->cache_dir ? o->cache_dir : "";
	if (*d && *d != '/')
		return werr(err, WX_USAGE, "archive: cache directory %s: not an absolute path", d);
	if (strlen(d) >= sizeof cache_given - 200)
		return werr(err, WX_USAGE, "archive: cache directory %.200s...: path too long", d);
	pthread_mutex_lock(&cache_mu);
	snprintf(cache_given, sizeof cache_given, "%s", d);
	pthread_mutex_unlock(&cache_mu);
	return 0;
}

int world_archive_cache_dir(char *out, size_t n, struct world_err *err)
{
	pthread_mutex_lock(&cache_mu);
	int w = snprintf(out, n, "%s", cache_given);
	pthread_mutex_unlock(&cache_mu);
	if (w > 0 && (size_t)w < n) return 0;
	/* the XDG base directory spec: a relative XDG_CACHE_HOME is ignored */
	const char *x = getenv("XDG_CACHE_HOME");
	if (x && *x == '/') w = snprintf(out, n, "%s/world", x);
	else {
		/* (no getpwuid: NSS in the static programs that link the store) */
		const char *h = getenv("HOME");
		if (!h || *h != '/')
			return werr(err, WX_USAGE, "archive: no per-host cache directory: neither XDG_CACHE_HOME nor HOME is an "
			            "absolute path (give one, or world_archive_configure's cache_dir)");
		w = snprintf(out, n, "%s/.cache/world", h);
	}
	if (w < 0 || (size_t)w >= n - 200) return werr(err, WX_USAGE, "archive: cache directory path too long");
	return 0;
}

static int cache_paths(const char *ref, char *dir, size_t dn, char *bin, size_t bn, struct world_err *err)
{
	char root[4096];
	if (world_archive_cache_dir(root, sizeof root, err) < 0) return -1;
	if (snprintf(dir, dn, "%s/interpreters/sha256/%s", root, ref + 7) >= (int)dn ||
	    snprintf(bin, bn, "%s/ailang", dir) >= (int)bn)
		return werr(err, WX_USAGE, "archive: cache path too long under %s", root);
	return 0;
}

/* The cached file against its ref: 0 its bytes are ref (size bytes), 1 no
 * file, 2 a file of other bytes (*got its hash, or "" when not a regular
 * file), -1 an I/O error. */
static int cache_check(const char *path, const char *ref, uint64_t size, char got[WORLD_REF_SIZE],
                       struct world_err *err)
{
	got[0] = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0) {
		if (errno == ENOENT) return 1;
		if (errno == ELOOP) return 2;
		return werr(err, WX_IO, "interpreter %s: open cached %s: %s", ref, path, strerror(errno));
	}
	struct stat sb;
	if (fstat(fd, &sb) < 0) {
		int e = errno;
		close(fd);
		return werr(err, WX_IO, "interpreter %s: stat cached %s: %s", ref, path, strerror(e));
	}
	if (!S_ISREG(sb.st_mode)) {
		close(fd);
		return 2;
	}
	unsigned char d[WORLD_DIGEST_LEN];
	uint64_t n = 0;
	int rc = world_sha256_fd(fd, path, d, &n, err);
	close(fd);
	if (rc < 0) return werr_prefix(err, "interpreter %s: cached file", ref);
	world_ref_format(d, got);
	return strcmp(got, ref) == 0 && n == size ? 0 : 2;
}

/* One file of the cache: a temporary name of this process and call
 * (O_EXCL), the bytes, the mode, fsync, then renamed over NAME (rename is
 * atomic: a concurrent materialiser's file or ours, whole, never a mix);
 * the temporary file goes on any failure. */
static int cache_write(const char *dir, const char *name, const char *ref, const void *buf, size_t n, mode_t mode,
                       int pause, struct world_err *err)
{
	char tmp[4300], dst[4300];
	snprintf(tmp, sizeof tmp, "%s/.%s.tmp.%ld.%u", dir, name, (long)getpid(), atomic_fetch_add(&cache_tmp_seq, 1));
	snprintf(dst, sizeof dst, "%s/%s", dir, name);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) return werr(err, WX_IO, "interpreter %s: create %s: %s", ref, tmp, strerror(errno));
	if (write_all(fd, buf, n) < 0 || fchmod(fd, mode) < 0 || fsync(fd) < 0) {
		int e = errno;
		close(fd);
		unlink(tmp);
		return werr(err, WX_IO, "interpreter %s: write %s: %s", ref, tmp, strerror(e));
	}
	if (close(fd) < 0) {
		int e = errno;
		unlink(tmp);
		return werr(err, WX_IO, "interpreter %s: close %s: %s", ref, tmp, strerror(e));
	}
	if (pause) world_pause("archive.materialise");
	if (rename(tmp, dst) < 0) {
		int e = errno;
		unlink(tmp);
		return werr(err, WX_IO, "interpreter %s: rename %s -> %s: %s", ref, tmp, dst, strerror(e));
	}
	return 0;
}

/* The cache's directories, 0700 whatever the umask (an existing one is
 * left as it is). */
static int cache_mkdirs(const char *dir, const char *ref, struct world_err *err)
{
	char tmp[4096];
	if (snprintf(tmp, sizeof tmp, "%s", dir) >= (int)sizeof tmp)
		return werr(err, WX_USAGE, "interpreter %s: cache path too long", ref);
	for (char *p = tmp + 1;; p++) {
		if (*p && *p != '/') continue;
		char c = *p;
		*p = 0;
		if (mkdir(tmp, 0700) == 0) {
			if (chmod(tmp, 0700) < 0)
				return werr(err, WX_IO, "interpreter %s: chmod 0700 %s: %s", ref, tmp, strerror(errno));
		} else if (errno != EEXIST)
			return werr(err, WX_IO, "interpreter %s: mkdir %s: %s", ref, tmp, strerror(errno));
		if (!c) break;
		*p = c;
	}
	return 0;
}

/* The manifest as the archive writes it: canonical {hash,size,version} of
 * these bytes, version a release line; *version gets it. */
static int manifest_check(const void *m, size_t mn, const char *ref, uint64_t size, char *version, size_t vn)
{
	if (!world_canon_is_canonical((const char *)m, mn)) return -1;
	json_t *j = world_json_parse((const char *)m, mn, NULL);
	json_t *h = json_object_get(j, "hash"), *v = json_object_get(j, "version"), *s = json_object_get(j, "size");
	int ok = json_object_size(j) == 3 && json_is_string(h) && strcmp(json_string_value(h), ref) == 0 &&
	         json_is_string(v) && json_is_integer(s) && (uint64_t)json_integer_value(s) == size &&
	         json_string_length(v) < vn;
	if (ok) snprintf(version, vn, "%s", json_string_value(v));
	json_decref(j);
	return ok ? 0 : -1;
}

/* The bytes of REF into the cache (ailang 0500, manifest.json 0400, in
 * 0700 directories), then the directory fsync'd. */
static int cache_put(const char *dir, const char *ref, const void *b, size_t n, const void *m, size_t mn,
                     struct world_err *err)
{
	if (cache_mkdirs(dir, ref, err) < 0 || cache_write(dir, "ailang", ref, b, n, 0500, 1, err) < 0 ||
	    cache_write(dir, "manifest.json", ref, m, mn, 0400, 0, err) < 0)
		return -1;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) return werr(err, WX_IO, "interpreter %s: open %s: %s", ref, dir, strerror(errno));
	int rc = fsync(fd);
	int e = errno;
	close(fd);
	if (rc < 0) return werr(err, WX_IO, "interpreter %s: fsync %s: %s", ref, dir, strerror(e));
	return 0;
}

/* The one line of a cached file that is not its ref (never given out). */
static void cache_refused(struct world_store *st, const char *ref, const char *path, const char *got)
{
	fprintf(stderr, "world: interpreter %s: cached file %s %s%s, not to its ref; refused, written again from %s\n", ref,
	        path, got[0] ? "hashes to " : "is not a regular file", got, st->path);
}

/* The archive row of REF, as the server holds it: the sha256 of its bytes
 * (hashed by the server: nothing is transferred), their length and the
 * manifest. 0 a row, 1 none. */
#define PG_ARCHIVE_SUM "SELECT 'sha256:' || encode(sha256(bytes), 'hex'), length(bytes), manifest FROM archive WHERE ref = ?1"
static int db_archive_sum(struct world_store *st, const char *ref, char got[WORLD_REF_SIZE], uint64_t *len,
                          char **man, size_t *mn, struct world_err *err)
{
	struct wdb_stmt *s;
	*man = NULL;
	*mn = 0;
	if (ws_prep(st, PG_ARCHIVE_SUM, &s, err) < 0) return -1;
	ws_bind_text(s, 1, ref);
	int rc = wdb_step(s, NULL);
	if (rc == WDB_ROW) {
		ws_col_ref(s, 0, got);
		*len = (uint64_t)wdb_column_int64(s, 1, NULL);
		size_t n;
		const void *m = wdb_column_blob(s, 2, &n);
		*man = malloc(n + 1);
		if (*man) {
			memcpy(*man, m, n);
			(*man)[n] = 0;
			*mn = n;
		}
	}
	wdb_finalize(s);
	if (rc == WDB_DONE) return 1;
	if (rc != WDB_ROW) return ws_sqlerr(st, 0, "archive read", err);
	if (!*man) return werr(err, WX_FAIL, "interpreter %s: out of memory", ref);
	return 0;
}

/* The write: the archive row (only when the bytes the server received
 * hash to ref there too) and the interpreters row, in one transaction (a
 * savepoint of the caller's, inside world_store_begin). */
#define PG_ARCHIVE_PUT                                                                                     \
	"INSERT INTO archive(ref, bytes, manifest) SELECT ?1::text, ?2::bytea, ?3::bytea"                    \
	" WHERE 'sha256:' || encode(sha256(?2::bytea), 'hex') = ?1::text ON CONFLICT (ref) DO NOTHING"
static int db_put_body(struct world_store *st, const struct world_interp *in, const void *b, size_t n, const void *m,
                       size_t mn, int *created, struct world_err *err)
{
	struct wdb_stmt *s;
	if (ws_prep(st, PG_ARCHIVE_PUT, &s, err) < 0) return -1;
	ws_bind_text(s, 1, in->ref);
	ws_bind_blob(s, 2, b, n);
	ws_bind_blob(s, 3, m, mn);
	int rc = wdb_step(s, NULL);
	wdb_finalize(s);
	if (rc != WDB_DONE) return ws_sqlerr(st, 0, "archive insert", err);
	*created = wdb_changes(st->wdb) == 1;
	/* what the table holds now: these bytes, or the same ones of a racing archiver */
	char got[WORLD_REF_SIZE];
	uint64_t len = 0;
	char *man;
	size_t man_n;
	int r = db_archive_sum(st, in->ref, got, &len, &man, &man_n, err);
	if (r < 0) return -1;
	free(man);
	if (r == 1)
		return werr(err, WX_INTEGRITY, "archive: %s: the server's sha256 of the bytes sent is not %s; nothing archived",
		            st->path, in->ref);
	if (strcmp(got, in->ref) != 0 || len != in->size)
		return werr(err, WX_INTEGRITY, "archive: %s: the archive row %s holds %llu bytes hashing to %s; left as is",
		            st->path, in->ref, (unsigned long long)len, got);
	return record_interp(st, in, err);
}

static int db_put(struct world_store *st, const struct world_interp *in, const void *b, size_t n, const void *m,
                  size_t mn, int *created, struct world_err *err)
{
	WS_WRITE(st, err, db_put_body(st, in, b, n, m, mn, created, err));
}

static int db_archive(struct world_store *st, const char *bin, unsigned char *bytes, size_t n, struct world_interp *out,
                      struct world_err *err)
{
	char got[WORLD_REF_SIZE], dir[4096];
	uint64_t len = 0;
	char *man = NULL, *mc = NULL;
	size_t man_n = 0, mn = 0;
	int rc = cache_paths(out->ref, dir, sizeof dir, out->path, sizeof out->path, err);
	if (rc == 0) rc = db_archive_sum(st, out->ref, got, &len, &man, &man_n, err);
	if (rc == 0) {
		/* already archived (same bytes, sound manifest): only the row */
		if (strcmp(got, out->ref) != 0 || len != out->size)
			rc = werr(err, WX_INTEGRITY, "archive: %s: the archive row %s holds %llu bytes hashing to %s; left as is",
			          st->path, out->ref, (unsigned long long)len, got);
		else if (manifest_check(man, man_n, out->ref, out->size, out->version, sizeof out->version) < 0)
			rc = werr(err, WX_INTEGRITY, "archive: %s: the manifest of archive row %s is not the canonical "
			          "{hash,size,version} of its bytes; left as is", st->path, out->ref);
		else if ((rc = check_release_line(out->version, bin, err)) == 0)
			rc = record_interp(st, out, err);
		mc = man;
		mn = man_n;
		out->created = 0;
	} else if (rc == 1) {
		/* every check before anything is written */
		man = NULL;
		rc = probe_version(bytes, n, bin, out->version, sizeof out->version, err);
		if (rc == 0) rc = check_release_line(out->version, bin, err);
		if (rc == 0) {
			json_t *m = json_pack("{sssIss}", "hash", out->ref, "size", (json_int_t)out->size, "version", out->version);
			mc = m ? world_canon_json(m, &mn, err) : NULL;
			json_decref(m);
			if (!mc) rc = werr(err, WX_FAIL, "archive: cannot build manifest.json");
		}
		int created = 0;
		if (rc == 0) rc = db_put(st, out, bytes, n, mc, mn, &created, err);
		out->created = created;
	}
	/* the bytes in hand (hashed: they are ref) into this host's cache,
	 * unless the cache already holds them */
	if (rc == 0 && (rc = cache_check(out->path, out->ref, out->size, got, err)) > 0) {
		if (rc == 2) cache_refused(st, out->ref, out->path, got);
		rc = cache_put(dir, out->ref, bytes, n, mc, mn, err);
	}
	free(mc);
	if (rc < 0) {
		out->path[0] = 0;
		return -1;
	}
	return 0;
}

/* An interpreter of a PostgreSQL store for a run: the cached file, re-hashed
 * against ref; missing or of other bytes (refused with one line) it is
 * written again from the archive row, whose bytes are hashed here before
 * anything is cached. */
static int db_interp_get(struct world_store *st, struct world_interp *out, struct world_err *err)
{
	char dir[4096], got[WORLD_REF_SIZE];
	const char *ref = out->ref;
	if (cache_paths(ref, dir, sizeof dir, out->path, sizeof out->path, err) < 0) return -1;
	int c = cache_check(out->path, ref, out->size, got, err);
	if (c < 0) return -1;
	if (c == 0) return 0;
	if (c == 2) cache_refused(st, ref, out->path, got);
	struct wdb_stmt *s;
	if (ws_prep(st, "SELECT bytes, manifest FROM archive WHERE ref = ?1", &s, err) < 0) return -1;
	ws_bind_text(s, 1, ref);
	int rc = wdb_step(s, NULL);
	if (rc != WDB_ROW) {
		wdb_finalize(s);
		if (rc == WDB_DONE)
			return werr(err, WX_INTEGRITY, "interpreter %s: %s has its interpreters row but no archive row (no bytes); "
			            "nothing cached", ref, st->path);
		return ws_sqlerr(st, 0, "archive read", err);
	}
	size_t n, mn;
	const void *b = wdb_column_blob(s, 0, &n);
	const void *m = wdb_column_blob(s, 1, &mn);
	char version[256];
	rc = world_hash_ref(b, n, got, err);
	if (rc == 0 && (strcmp(got, ref) != 0 || n != out->size))
		rc = werr(err, WX_INTEGRITY, "interpreter %s: the archive row in %s holds %zu bytes hashing to %s (the row "
		          "says %llu); nothing cached", ref, st->path, n, got, (unsigned long long)out->size);
	if (rc == 0 && (manifest_check(m, mn, ref, n, version, sizeof version) < 0 || strcmp(version, out->version) != 0))
		rc = werr(err, WX_INTEGRITY, "interpreter %s: the archive row's manifest in %s is not the canonical "
		          "{hash,size,version} of its bytes and release \"%s\"; nothing cached", ref, st->path, out->version);
	if (rc == 0) rc = cache_put(dir, ref, b, n, m, mn, err);
	wdb_finalize(s);
	if (rc < 0) return -1;
	/* and what is in place now, hashed again (ours, or a concurrent
	 * materialiser's: the same bytes, whole) */
	c = cache_check(out->path, ref, out->size, got, err);
	if (c < 0) return -1;
	if (c)
		return werr(err, WX_INTEGRITY, "interpreter %s: cached file %s hashes to %s right after it was written", ref,
		            out->path, got[0] ? got : "(not a regular file)");
	return 0;
}

/* world_interp_verify on PostgreSQL: the archive row itself (reads only;
 * the cache is world_interp_get's). */
static int db_interp_verify(struct world_store *st, const struct world_interp *wi, int *what, struct world_err *err)
{
	char got[WORLD_REF_SIZE], version[256];
	uint64_t len = 0;
	char *man;
	size_t mn;
	int r = db_archive_sum(st, wi->ref, got, &len, &man, &mn, err);
	if (r < 0) return -1;
	if (r == 1)
		return werr(err, WX_INTEGRITY, "interpreter %s: %s has no archive row (no bytes)", wi->ref, st->path);
	if (strcmp(got, wi->ref) != 0 || len != wi->size) {
		free(man);
		return werr(err, WX_INTEGRITY, "interpreter %s: the archive row in %s holds %llu bytes hashing to %s (the "
		            "store recorded %llu)", wi->ref, st->path, (unsigned long long)len, got,
		            (unsigned long long)wi->size);
	}
	*what = WORLD_INTERP_MANIFEST;
	int bad = manifest_check(man, mn, wi->ref, len, version, sizeof version) < 0 || strcmp(version, wi->version) != 0;
	free(man);
	if (bad)
		return werr(err, WX_INTEGRITY, "interpreter %s: the archive row's manifest in %s is not the canonical "
		            "{hash,size,version} of its bytes (%llu bytes, release \"%s\")", wi->ref, st->path,
		            (unsigned long long)len, wi->version);
	return 0;
}

int world_interp_probe(const char *bin, struct world_interp *out, struct world_err *err)
{
	memset(out, 0, sizeof *out);
	unsigned char *bytes;
	size_t n;
	if (read_file(bin, &bytes, &n, INTERP_MAX_BYTES, err) < 0) return -1;
	int rc = check_static_elf(bytes, n, bin, err);
	if (rc == 0) rc = world_hash_ref(bytes, n, out->ref, err);
	if (rc == 0) rc = probe_version(bytes, n, bin, out->version, sizeof out->version, err);
	if (rc == 0) rc = check_release_line(out->version, bin, err);
	free(bytes);
	if (rc < 0) {
		memset(out, 0, sizeof *out);
		return -1;
	}
	out->size = n;
	return 0;
}

int world_archive_interpreter(struct world_store *st, const char *bin, struct world_interp *out, struct world_err *err)
{
	memset(out, 0, sizeof *out);
	if (ws_need_writer(st, "archive", err) < 0) return -1;
	unsigned char *bytes;
	size_t n;
	if (read_file(bin, &bytes, &n, INTERP_MAX_BYTES, err) < 0) return -1;
	if (check_static_elf(bytes, n, bin, err) < 0 || world_hash_ref(bytes, n, out->ref, err) < 0) {
		free(bytes);
		return -1;
	}
	out->size = n;
	if (!ws_can(st, WS_CAP_FILE)) {
		int rc = db_archive(st, bin, bytes, n, out, err);
		free(bytes);
		return rc;
	}
	char dir[4096];
	if (interp_dir(st, out->ref, dir, sizeof dir) < 0 ||
	    snprintf(out->path, sizeof out->path, "%s/ailang", dir) >= (int)sizeof out->path) {
		free(bytes);
		return werr(err, WX_IO, "archive: store path too long");
	}
	char manifest[4200];
	snprintf(manifest, sizeof manifest, "%s/manifest.json", dir);

	/* Already archived (same bytes, sound manifest): only the row. */
	int have_bin = 0;
	unsigned char *old;
	size_t oldn;
	struct world_err e2;
	if (read_file(out->path, &old, &oldn, INTERP_MAX_BYTES, &e2) == 0) {
		char oldref[WORLD_REF_SIZE];
		int hr = world_hash_ref(old, oldn, oldref, err);
		free(old);
		if (hr < 0) { free(bytes); return -1; }
		if (strcmp(oldref, out->ref) != 0) {
			free(bytes);
			return werr(err, WX_INTEGRITY, "archive: %s: archived bytes hash to %s, not %s; left as is", out->path,
			            oldref, out->ref);
		}
		have_bin = 1;
	} else if (e2.code != WX_NOT_FOUND) {
		free(bytes);
		*err = e2;
		return -1;
	}
	if (have_bin && read_manifest(manifest, out->ref, out->size, out->version, sizeof out->version) == 0 &&
	    check_release_line(out->version, bin, err) == 0) {
		free(bytes);
		out->created = 0;
		return record_interp(st, out, err);
	}
	/* Every check before anything is written. */
	if (probe_version(bytes, n, bin, out->version, sizeof out->version, err) < 0 ||
	    check_release_line(out->version, bin, err) < 0) {
		free(bytes);
		return -1;
	}
	json_t *m = json_pack("{sssIss}", "hash", out->ref, "size", (json_int_t)out->size, "version", out->version);
	size_t mn;
	char *mc = m ? world_canon_json(m, &mn, err) : NULL;
	json_decref(m);
	if (!mc) {
		free(bytes);
		return werr(err, WX_FAIL, "archive: cannot build manifest.json");
	}
	struct made_dirs made = { .n = 0 };
	int wrote_bin = 0, wrote_manifest = 0;
	int rc = mkdir_p(dir, &made, err);
	if (rc == 0 && !have_bin) {
		rc = atomic_write(dir, "ailang", bytes, n, 0555, err);
		wrote_bin = rc == 0;
	}
	if (rc == 0) {
		rc = atomic_write(dir, "manifest.json", mc, mn, 0400, err);
		wrote_manifest = rc == 0;
	}
	free(bytes);
	free(mc);
	if (rc == 0) rc = record_interp(st, out, err);
	if (rc < 0) {
		/* leave nothing behind: what this call wrote goes again */
		if (wrote_manifest && !have_bin) unlink(manifest);
		if (wrote_bin) unlink(out->path);
		undo_dirs(&made);
		return -1;
	}
	out->created = !have_bin;
	return 0;
}

/* The interpreters row of ref: version and size. */
static int interp_row(struct world_store *st, const char *ref, struct world_interp *out, struct world_err *err)
{
	memset(out, 0, sizeof *out);
	if (world_ref_parse(ref, "interpreter ref", NULL, err) < 0) return -1;
	struct wdb_stmt *s;
	if (ws_stmt(st, WORLD_SQL(INTERP_GET), &s, err) < 0) return -1;
	ws_bind_text(s, 1, ref);
	int rc = wdb_step(s, NULL);
	if (rc != WDB_ROW) {
		ws_done(st, s);
		if (rc == WDB_DONE) return werr(err, WX_NOT_FOUND, "interpreter %s: not archived in this store", ref);
		return ws_sqlerr(st, 0, "interpreter read", err);
	}
	const char *ver = wdb_column_text(s, 0);
	snprintf(out->version, sizeof out->version, "%s", ver ? ver : "");
	out->size = (uint64_t)wdb_column_int64(s, 1, NULL);
	ws_done(st, s);
	snprintf(out->ref, sizeof out->ref, "%s", ref);
	return 0;
}

int world_interp_get(struct world_store *st, const char *ref, struct world_interp *out, struct world_err *err)
{
	if (interp_row(st, ref, out, err) < 0) return -1;
	if (!ws_can(st, WS_CAP_FILE)) return db_interp_get(st, out, err);
	char dir[4096];
	if (interp_dir(st, ref, dir, sizeof dir) < 0 ||
	    snprintf(out->path, sizeof out->path, "%s/ailang", dir) >= (int)sizeof out->path)
		return werr(err, WX_IO, "interpreter %s: store path too long", ref);
	return 0;
}

int world_interp_verify(struct world_store *st, const char *ref, int *what, struct world_err *err)
{
	int w;
	if (!what) what = &w;
	*what = WORLD_INTERP_FILE;
	struct world_interp wi;
	if (!ws_can(st, WS_CAP_FILE)) {
		if (interp_row(st, ref, &wi, err) < 0) return -1;
		return db_interp_verify(st, &wi, what, err);
	}
	if (world_interp_get(st, ref, &wi, err) < 0) return -1;
	int fd = open(wi.path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return werr(err, errno == ENOENT ? WX_INTEGRITY : WX_IO, "interpreter %s: archived file %s: %s", ref, wi.path,
		            strerror(errno));
	unsigned char d[WORLD_DIGEST_LEN];
	uint64_t n = 0;
	int rc = world_sha256_fd(fd, wi.path, d, &n, err);
	close(fd);
	if (rc < 0) return -1;
	char got[WORLD_REF_SIZE];
	world_ref_format(d, got);
	if (strcmp(got, ref) != 0)
		return werr(err, WX_INTEGRITY, "interpreter %s: archived file %s hashes to %s", ref, wi.path, got);
	if (n != wi.size)
		return werr(err, WX_INTEGRITY, "interpreter %s: archived file is %llu bytes, the store recorded %llu", ref,
		            (unsigned long long)n, (unsigned long long)wi.size);
	*what = WORLD_INTERP_MANIFEST;
	char dir[4096], manifest[4200], version[256];
	if (interp_dir(st, ref, dir, sizeof dir) < 0) return werr(err, WX_IO, "interpreter %s: store path too long", ref);
	snprintf(manifest, sizeof manifest, "%s/manifest.json", dir);
	unsigned char *buf;
	size_t mn;
	if (read_file(manifest, &buf, &mn, 1 << 16, err) < 0) {
		if (err && err->code == WX_NOT_FOUND) err->code = WX_INTEGRITY;
		return -1;
	}
	int canon = world_canon_is_canonical((const char *)buf, mn);
	free(buf);
	if (!canon || read_manifest(manifest, ref, n, version, sizeof version) < 0 || strcmp(version, wi.version) != 0)
		return werr(err, WX_INTEGRITY,
		            "interpreter %s: %s is not the canonical {hash,size,version} of the archived file (%llu bytes, "
		            "release \"%s\")", ref, manifest, (unsigned long long)n, wi.version);
	return 0;
}
