/* store/sessions.c: the sessions and the operator token (store.h;
 * docs/store.md, Journal and sessions; docs/daemon.md, "The operator
 * token").
 *
 * Owns: a session's row under the hash of its credential, reading it by
 * credential or hash, listing and revoking; the operator token -- the
 * store keeps sha256(token) in its one-row operator_token table, so every
 * daemon of a store accepts the same token and a rotation is seen by all
 * of them on their next request; the token itself is only ever in
 * <db>.operator-token (0600), for a store that is no local file in the
 * host's cache directory, written by the daemon that installed it and by
 * `worldd token rotate`, and removed by nobody --; and where a store's
 * secret files live (ws_secret_path, also the log key's: store/tree.c). */
#include "store/store_internal.h"
#include "common/canon.h"
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int world_session_put(struct world_store *st, const char *credential, const char *episode, const char *grants_json,
                      long long expires_at, struct world_err *err)
{
	if (ws_need_writer(st, "session put", err) < 0) return -1;
	if (!credential || strlen(credential) < 16)
		return werr(err, WX_BAD_INPUT, "session put: credential shorter than 16 bytes");
	if (ws_check_label("session episode", episode, 256, 1, err) < 0) return -1;
	size_t gl;
	char *g = world_canon_bytes(grants_json ? grants_json : "", grants_json ? strlen(grants_json) : 0, &gl, err);
	if (!g) return werr_prefix(err, "session grants");
	char h[WORLD_REF_SIZE];
	if (world_hash_ref(credential, strlen(credential), h, err) < 0) { free(g); return -1; }
	struct wdb_stmt *s;
	if (ws_prep(st, WORLD_SQL(SESSION_PUT),
	            &s, err) < 0) {
		free(g);
		return -1;
	}
	ws_bind_text(s, 1, h);
	ws_bind_text(s, 2, episode);
	ws_bind_textn(s, 3, g, gl);
	ws_bind_int(s, 4, expires_at);
	ws_bind_int(s, 5, (int64_t)time(NULL));
	/* an engine that answers the insert later (a pipeline) says this
	 * when the credential's key fails then */
	ws_expect_conflict(st, "sessions_pkey", WX_CONFLICT, "session put: credential already registered");
	int rc = wdb_step(s, NULL);
	wdb_finalize(s);
	free(g);
	if (rc == WDB_CONFLICT) return werr(err, WX_CONFLICT, "session put: credential already registered");
	if (rc != WDB_DONE) return ws_sqlerr(st, 0, "session insert", err);
	return 0;
}

int world_session_get(struct world_store *st, const char *credential, struct world_session *out, struct world_err *err)
{
	memset(out, 0, sizeof *out);
	if (!credential || !*credential) return werr(err, WX_BAD_INPUT, "session: empty credential");
	char h[WORLD_REF_SIZE];
	if (world_hash_ref(credential, strlen(credential), h, err) < 0) return -1;
	return world_session_get_hash(st, h, out, err);
}

int world_session_get_hash(struct world_store *st, const char *h, struct world_session *out, struct world_err *err)
{
	memset(out, 0, sizeof *out);
	if (world_ref_parse(h, "session credential hash", NULL, err) < 0) return -1;
	struct wdb_stmt *s;
	if (ws_stmt(st, WORLD_SQL(SESSION_GET), &s, err) < 0)
		return -1;
	ws_bind_text(s, 1, h);
	int rc = wdb_step(s, NULL);
	if (rc != WDB_ROW) {
		ws_done(st, s);
		if (rc == WDB_DONE) return werr(err, WX_NOT_FOUND, "session: unknown credential");
		return ws_sqlerr(st, 0, "session read", err);
	}
	snprintf(out->credential_hash, WORLD_REF_SIZE, "%s", h);
	out->episode = strdup((const char *)wdb_column_text(s, 0));
	out->grants_json = strdup((const char *)wdb_column_text(s, 1));
	out->expires_at = wdb_column_int64(s, 2, NULL);
	out->created_at = wdb_column_int64(s, 3, NULL);
	ws_done(st, s);
	if (!out->episode || !out->grants_json) {
		world_session_free(out);
		return werr(err, WX_FAIL, "session: out of memory");
	}
	return 0;
}

void world_session_free(struct world_session *s)
{
	if (!s) return;
	free(s->episode);
	free(s->grants_json);
	memset(s, 0, sizeof *s);
}

int world_session_list(struct world_store *st, int (*fn)(void *ctx, const struct world_session *s), void *ctx,
                       struct world_err *err)
{
	struct wdb_stmt *s;
	if (ws_prep(st, WORLD_SQL(SESSION_LIST), &s, err) < 0)
		return -1;
	int rc;
	while ((rc = wdb_step(s, NULL)) == WDB_ROW) {
		struct world_session row = { .expires_at = wdb_column_int64(s, 3, NULL),
		                             .created_at = wdb_column_int64(s, 4, NULL) };
		ws_col_ref(s, 0, row.credential_hash);
		row.episode = (char *)wdb_column_text(s, 1);
		row.grants_json = (char *)wdb_column_text(s, 2);
		if (fn(ctx, &row) != 0) break;
	}
	wdb_finalize(s);
	if (rc != WDB_ROW && rc != WDB_DONE) return ws_sqlerr(st, 0, "session list", err);
	return 0;
}

int world_session_revoke(struct world_store *st, const char *credential_hash, const char *episode, int *count,
                         struct world_err *err)
{
	if (ws_need_writer(st, "session revoke", err) < 0) return -1;
	if ((credential_hash == NULL) == (episode == NULL))
		return werr(err, WX_USAGE, "session revoke: give exactly one of a session id or an episode");
	struct wdb_stmt *s;
	if (ws_prep(st, credential_hash ? WORLD_SQL(SESSION_REVOKE_ID)
	                                : WORLD_SQL(SESSION_REVOKE_EPISODE), &s, err) < 0)
		return -1;
	ws_bind_text(s, 1, credential_hash ? credential_hash : episode);
	int rc = wdb_step(s, NULL);
	wdb_finalize(s);
	if (rc != WDB_DONE) return ws_sqlerr(st, 0, "session delete", err);
	int n = wdb_changes(st->wdb);
	if (count) *count = n;
	if (n == 0)
		return werr(err, WX_NOT_FOUND, "session revoke: no session %s \"%s\"; nothing changed",
		            credential_hash ? "with id" : "of episode", credential_hash ? credential_hash : episode);
	return 0;
}

/* ---- the operator token ---- */

int world_operator_token_match(struct world_store *st, const char *token, int *match, struct world_err *err)
{
	*match = 0;
	if (!token || !*token) return 0;
	char h[WORLD_REF_SIZE];
	if (world_hash_ref(token, strlen(token), h, err) < 0) return -1;
	struct wdb_stmt *s;
	struct world_err pe = { 0, "" };
	if (ws_stmt(st, WORLD_SQL(OPERATOR_TOKEN_GET), &s, &pe) < 0) {
		/* a version-2 store no writer of this build has opened yet: no token */
		if (strstr(pe.msg, "no such table")) return 0;
		if (err) *err = pe;
		return -1;
	}
	int rc = wdb_step(s, NULL);
	if (rc == WDB_ROW) {
		const char *v = wdb_column_text(s, 0);
		*match = v && strlen(v) == WORLD_REF_LEN && CRYPTO_memcmp(v, h, WORLD_REF_LEN) == 0;
	}
	ws_done(st, s);
	if (rc != WDB_ROW && rc != WDB_DONE) return ws_sqlerr(st, 0, "operator token read", err);
	return 0;
}

int world_operator_token_install(struct world_store *st, const char *token, int replace, int *installed,
                                 struct world_err *err)
{
	if (installed) *installed = 0;
	if (ws_need_writer(st, "operator token", err) < 0) return -1;
	if (!token || strlen(token) < 32) return werr(err, WX_BAD_INPUT, "operator token: shorter than 32 bytes");
	char h[WORLD_REF_SIZE];
	if (world_hash_ref(token, strlen(token), h, err) < 0) return -1;
	struct wdb_stmt *s;
	if (ws_stmt(st, replace ? WORLD_SQL(OPERATOR_TOKEN_PUT) : WORLD_SQL(OPERATOR_TOKEN_INIT), &s, err) < 0) return -1;
	ws_bind_text(s, 1, h);
	ws_bind_int(s, 2, (long long)time(NULL));
	int rc = wdb_step(s, NULL);
	int n = rc == WDB_DONE ? (int)wdb_changes(st->wdb) : 0;
	ws_done(st, s);
	if (rc != WDB_DONE) return ws_sqlerr(st, 0, "operator token write", err);
	if (installed) *installed = n > 0;
	return 0;
}

/* A store's secret file (docs/daemon.md "The operator token",
 * docs/provenance.md "A verifiable log"): a SQLite store's sits beside it,
 * <db>.SUFFIX. A PostgreSQL store has no file of its own to put it beside:
 * it goes to the host's cache directory (the one the interpreter archive
 * materialises into, 0700), CACHE/SUBDIR/NAME.SUFFIX, NAME the store's name
 * as the driver gives it (postgresql://USER@HOST:PORT/DB, never a
 * password) without its scheme, every byte but [A-Za-z0-9.@-] written
 * '_'. One file per host and store. make_dirs makes the cache (and its
 * parents: a fresh $XDG_CACHE_HOME or ~/.cache) and SUBDIR, owner only.
 * Errors start with WHAT. */
int ws_secret_path(const struct world_store *st, const char *what, const char *subdir, const char *suffix, char *path,
                   size_t n, int make_dirs, struct world_err *err)
{
	if (ws_can(st, WS_CAP_FILE)) {
		if (snprintf(path, n, "%s.%s", st->path, suffix) >= (int)n)
			return werr(err, WX_IO, "%s: store path too long: %s", what, st->path);
		return 0;
	}
	char root[4096];
	if (world_archive_cache_dir(root, sizeof root, err) < 0) return werr_prefix(err, what);
	const char *name = st->path;
	const char *scheme = strstr(name, "://");
	if (scheme) name = scheme + 3;
	char safe[600];
	size_t k = 0;
	for (const char *c = name; *c && k < sizeof safe - 1; c++)
		safe[k++] = ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '.' ||
		             *c == '@' || *c == '-') ? *c : '_';
	safe[k] = 0;
	char dir[4300];
	if (snprintf(dir, sizeof dir, "%s/%s", root, subdir) >= (int)sizeof dir ||
	    snprintf(path, n, "%s/%s.%s", dir, safe, suffix) >= (int)n)
		return werr(err, WX_IO, "%s: path too long under %s", what, root);
	if (!make_dirs) return 0;
	for (char *sl = strchr(root + 1, '/'); sl; sl = strchr(sl + 1, '/')) {
		*sl = 0;
		int e = mkdir(root, 0700) < 0 ? errno : 0;
		*sl = '/';
		if (e && e != EEXIST) return werr(err, WX_IO, "%s: mkdir %.*s: %s", what, (int)(sl - root), root, strerror(e));
	}
	const char *levels[2] = { root, dir };
	for (int i = 0; i < 2; i++) {
		if (mkdir(levels[i], 0700) < 0 && errno != EEXIST)
			return werr(err, WX_IO, "%s: mkdir %s: %s", what, levels[i], strerror(errno));
		struct stat sb;
		if (lstat(levels[i], &sb) < 0) return werr(err, WX_IO, "%s: stat %s: %s", what, levels[i], strerror(errno));
		if (!S_ISDIR(sb.st_mode)) return werr(err, WX_IO, "%s: %s: not a directory", what, levels[i]);
	}
	if (chmod(dir, 0700) < 0) return werr(err, WX_IO, "%s: chmod %s: %s", what, dir, strerror(errno));
	return 0;
}

int world_operator_token_path(const struct world_store *st, char *path, size_t n, struct world_err *err)
{
	return ws_secret_path(st, "operator token", "operator-tokens", "operator-token", path, n, 0, err);
}

int world_input_key_path(const struct world_store *st, char *path, size_t n, int make_dirs, struct world_err *err)
{
	return ws_secret_path(st, "input state key", "input-keys", "input-key", path, n, make_dirs, err);
}

int world_operator_token_new(struct world_store *st, int replace, char token[65], char *path, size_t pathn,
                             int *installed, struct world_err *err)
{
	token[0] = 0;
	*installed = 0;
	if (ws_need_writer(st, "operator token", err) < 0) return -1;
	if (ws_secret_path(st, "operator token", "operator-tokens", "operator-token", path, pathn, 1, err) < 0) return -1;
	unsigned char raw[32];
	if (RAND_bytes(raw, sizeof raw) != 1) return werr(err, WX_IO, "operator token: no random bytes from libcrypto");
	for (int i = 0; i < 32; i++) snprintf(token + 2 * i, 3, "%02x", raw[i]);
	OPENSSL_cleanse(raw, sizeof raw);
	/* The file first, under a temporary name: installed in the store, it
	 * is renamed into place; not installed (another daemon's token is the
	 * store's), it goes again. */
	char tmp[4300];
	if (snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid()) >= (int)sizeof tmp) {
		OPENSSL_cleanse(token, 65);
		return werr(err, WX_IO, "operator token: store path too long: %s", st->path);
	}
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		int e = errno;
		OPENSSL_cleanse(token, 65);
		return werr(err, WX_IO, "operator token: create %s: %s", tmp, strerror(e));
	}
	char line[66];
	memcpy(line, token, 64);
	line[64] = '\n';
	int bad = fchmod(fd, 0600) < 0 || write(fd, line, 65) != 65 || fsync(fd) < 0;
	int e = errno;
	OPENSSL_cleanse(line, sizeof line);
	if (close(fd) < 0 && !bad) { bad = 1; e = errno; }
	if (bad) {
		unlink(tmp);
		OPENSSL_cleanse(token, 65);
		return werr(err, WX_IO, "operator token: write %s: %s", tmp, strerror(e));
	}
	int ins = 0, rc = world_operator_token_install(st, token, replace, &ins, err);
	if (rc < 0 || !ins) {
		unlink(tmp);
		OPENSSL_cleanse(token, 65);
		return rc; /* not installed: the store's token stays, and its file */
	}
	if (rename(tmp, path) < 0) {
		e = errno;
		unlink(tmp);
		OPENSSL_cleanse(token, 65);
		return werr(err, WX_IO, "operator token: rename %s to %s: %s (the store holds a new token nobody has: "
		            "run worldd token rotate)", tmp, path, strerror(e));
	}
	/* the rename itself durable */
	char dir[4096];
	snprintf(dir, sizeof dir, "%s", path);
	char *slash = strrchr(dir, '/');
	if (slash) { if (slash == dir) slash[1] = 0; else *slash = 0; } else snprintf(dir, sizeof dir, ".");
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) { (void)fsync(dfd); close(dfd); }
	*installed = 1;
	return 0;
}
