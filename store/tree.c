/* store/tree.c: the log's Merkle tree, key and checkpoint in the store
 * (store/tree.h). The hashing and the proofs are tlog/tlog.h's; this file
 * only reads and writes their stored hashes. */
#include "store/tree.h"
#include "store/store_internal.h"
#include "tlog/checkpoint.h"
#include "tlog/note.h"
#include <errno.h>
#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define KEY_FILE_MAX 4096

static int need_v3(struct world_store *st, const char *what, struct world_err *err)
{
	if (st->version >= 3) return 0;
	return werr(err, WX_SCHEMA, "%s: store %s is at schema version %d (no log tree yet): open it once with a writer "
	            "(worldd serve, or any writing verb) to migrate it to %d", what, st->path, st->version,
	            WORLD_STORE_SCHEMA_VERSION);
}

/* ---- the stored hashes ---- */

/* tlog's read function over log_tree; ctx is the store. When border is
 * given (the scan's recomputation), hashes it holds are taken from it. */
struct tree_reader {
	struct world_store *st;
	/* the handle's cache, for the log it was kept for (else NULL) */
	struct ws_tree_cache *cache;
	/* the right border of the recomputed tree: level -> (position, hash) */
	int have[64];
	int64_t pos[64];
	struct tlog_hash h[64];
};

static int read_one(struct world_store *st, int64_t index, struct tlog_hash *out, struct world_err *err)
{
	struct wdb_stmt *s;
	if (ws_stmt(st, WORLD_SQL(TREE_GET), &s, err) < 0) return -1;
	ws_bind_int(s, 1, index);
	int rc = wdb_step(s, NULL);
	if (rc == WDB_ROW) {
		size_t n = 0;
		const void *b = wdb_column_blob(s, 0, &n);
		if (!b || n != TLOG_HASH_SIZE) {
			ws_done(st, s);
			return werr(err, WX_INTEGRITY, "store %s: log tree: stored hash %lld is %zu bytes, not 32", st->path,
			            (long long)index, n);
		}
		memcpy(out->b, b, TLOG_HASH_SIZE);
		ws_done(st, s);
		return 0;
	}
	ws_done(st, s);
	if (rc == WDB_DONE)
		return werr(err, WX_INTEGRITY, "store %s: log tree: stored hash %lld is missing", st->path, (long long)index);
	return ws_sqlerr(st, 0, "log tree read", err);
}

/* Keep stored hash idx in the handle's cache (struct ws_tree_cache; the
 * oldest goes when it is full). */
static void cache_keep(struct ws_tree_cache *c, int64_t idx, const unsigned char h[32])
{
	const size_t max = sizeof c->idx / sizeof *c->idx;
	for (size_t i = 0; i < c->n; i++)
		if (c->idx[i] == idx) {
			memcpy(c->h[i], h, 32);
			return;
		}
	if (c->n == max) {
		memmove(c->idx, c->idx + 1, (max - 1) * sizeof *c->idx);
		memmove(c->h, c->h + 1, (max - 1) * sizeof *c->h);
		c->n--;
	}
	c->idx[c->n] = idx;
	memcpy(c->h[c->n++], h, 32);
}

static int tree_read(void *ctx, const int64_t *indexes, size_t n, struct tlog_hash *out, struct world_err *err)
{
	struct tree_reader *r = ctx;
	for (size_t i = 0; i < n; i++) {
		int level;
		int64_t k;
		tlog_split_stored_index(indexes[i], &level, &k);
		if (level >= 0 && level < 64 && r->have[level] && r->pos[level] == k) {
			out[i] = r->h[level];
			continue;
		}
		struct ws_tree_cache *c = r->cache;
		size_t j = 0;
		while (c && j < c->n && c->idx[j] != indexes[i]) j++;
		if (c && j < c->n) {
			memcpy(out[i].b, c->h[j], TLOG_HASH_SIZE);
			continue;
		}
		if (read_one(r->st, indexes[i], &out[i], err) < 0) return -1;
		if (c) cache_keep(c, indexes[i], out[i].b);
	}
	return 0;
}

int ws_tree_append(struct world_store *st, long long entry_index, const char *json, size_t len, unsigned char leaf[32],
                   struct world_err *err)
{
	return ws_tree_append_on(st, entry_index, NULL, NULL, json, len, leaf, err);
}

int ws_tree_append_on(struct world_store *st, long long entry_index, const char *prev, const char *hash,
                      const char *json, size_t len, unsigned char leaf[32], struct world_err *err)
{
	if (entry_index < 1) return werr(err, WX_BAD_INPUT, "log tree: entry index %lld", entry_index);
	int64_t n = entry_index - 1;
	struct tlog_hash lh = tlog_leaf_hash(json, len);
	struct tlog_hash hs[TLOG_MAX_PROOF];
	size_t k = 0;
	struct ws_tree_cache *c = &st->tree_cache;
	/* the cache holds for the log this entry goes on (its tip's hash
	 * names it), else it starts again from this entry */
	int keyed = hash && *hash && strlen(hash) < sizeof c->tip;
	if (!keyed || !(n > 0 && prev && c->size == n && !strcmp(c->tip, prev))) {
		c->size = 0;
		c->n = 0;
	}
	struct tree_reader r = { .st = st, .cache = keyed ? c : NULL };
	if (tlog_stored_hashes_for_append(n, &lh, tree_read, &r, hs, &k, err) < 0) {
		c->size = 0;
		c->n = 0;
		return werr_prefix(err, "log tree: append entry %lld", entry_index);
	}
	int64_t base = tlog_stored_index(0, n);
	for (size_t i = 0; i < k; i++) {
		struct wdb_stmt *s;
		if (ws_stmt(st, WORLD_SQL(TREE_PUT), &s, err) < 0) return -1;
		ws_bind_int(s, 1, base + (int64_t)i);
		ws_bind_blob(s, 2, hs[i].b, TLOG_HASH_SIZE);
		int rc = wdb_step(s, NULL);
		ws_done(st, s);
		if (rc != WDB_DONE) {
			c->size = 0;
			c->n = 0;
			return ws_sqlerr(st, 0, "log tree insert", err);
		}
	}
	if (keyed) { /* the log now ends at this entry */
		for (size_t i = 0; i < k; i++) cache_keep(c, base + (int64_t)i, hs[i].b);
		c->size = entry_index;
		snprintf(c->tip, sizeof c->tip, "%s", hash);
	}
	if (leaf) memcpy(leaf, lh.b, TLOG_HASH_SIZE);
	st->tree_dirty = 1;
	return 0;
}

int ws_tree_backfill(struct world_store *st, struct world_err *err)
{
	long long from = 1;
	for (;;) {
		struct wdb_stmt *s;
		if (ws_prep(st, WORLD_SQL(TREE_LEAVES), &s, err) < 0) return -1;
		ws_bind_int(s, 1, from);
		ws_bind_int(s, 2, 4096);
		long long got = 0;
		int rc;
		while ((rc = wdb_step(s, NULL)) == WDB_ROW) {
			long long idx = wdb_column_int64(s, 0, NULL);
			size_t n = 0;
			const char *j = wdb_column_blob(s, 1, &n);
			if (idx != from) {
				wdb_finalize(s);
				return werr(err, WX_INTEGRITY, "store %s: log tree backfill: entry %lld follows %lld (a gap in the "
				            "log); store left untouched", st->path, idx, from - 1);
			}
			if (ws_tree_append(st, idx, j ? j : "", n, NULL, err) < 0) {
				wdb_finalize(s);
				return -1;
			}
			from++;
			got++;
		}
		wdb_finalize(s);
		if (rc != WDB_DONE) return ws_sqlerr(st, 0, "log tree backfill: log read", err);
		if (got < 4096) break;
	}
	st->tree_dirty = 0;
	return 0;
}

int world_tree_size(struct world_store *st, long long *size, struct world_err *err)
{
	char h[WORLD_REF_SIZE];
	return world_log_last(st, size, h, err);
}

static int size_ok(struct world_store *st, long long size, const char *what, struct world_err *err)
{
	long long have;
	if (need_v3(st, what, err) < 0 || world_tree_size(st, &have, err) < 0) return -1;
	if (size < 0 || size > have)
		return werr(err, WX_NOT_FOUND, "%s: tree size %lld: the log has %lld entries", what, size, have);
	return 0;
}

int world_tree_root(struct world_store *st, long long size, struct tlog_hash *root, struct world_err *err)
{
	if (size_ok(st, size, "log tree root", err) < 0) return -1;
	struct tree_reader r = { .st = st };
	return tlog_tree_hash(size, tree_read, &r, root, err);
}

int world_tree_leaf(struct world_store *st, long long index, struct tlog_hash *leaf, struct world_err *err)
{
	if (size_ok(st, index, "log leaf", err) < 0) return -1;
	if (index < 1) return werr(err, WX_NOT_FOUND, "log leaf: entry %lld: entries start at 1", index);
	return read_one(st, tlog_stored_index(0, index - 1), leaf, err);
}

int world_tree_prove_inclusion(struct world_store *st, long long index, long long size,
                               struct tlog_hash proof[TLOG_MAX_PROOF], size_t *n, struct world_err *err)
{
	*n = 0;
	if (size_ok(st, size, "inclusion proof", err) < 0) return -1;
	if (index < 1 || index > size)
		return werr(err, WX_NOT_FOUND, "inclusion proof: entry %lld is not in the tree of size %lld", index, size);
	struct tree_reader r = { .st = st };
	return tlog_prove_record(size, index - 1, tree_read, &r, proof, n, err);
}

int world_tree_prove_consistency(struct world_store *st, long long from, long long to,
                                 struct tlog_hash proof[TLOG_MAX_PROOF], size_t *n, struct world_err *err)
{
	*n = 0;
	if (size_ok(st, to, "consistency proof", err) < 0) return -1;
	if (from < 1 || from > to)
		return werr(err, WX_NOT_FOUND, "consistency proof: from %lld: want 1 <= from <= to (%lld)", from, to);
	struct tree_reader r = { .st = st };
	return tlog_prove_tree(to, from, tree_read, &r, proof, n, err);
}

int world_tree_check(struct world_store *st, long long from, long long to, FILE *out, long long *holes,
                     struct world_err *err)
{
	if (st->version < 3) return 0; /* a reader of an older store: no tree to check */
	if (from < 1) from = 1;
	struct tree_reader *r = calloc(1, sizeof *r);
	if (!r) return werr(err, WX_FAIL, "store %s: log tree check: out of memory", st->path);
	r->st = st;
	int ret = 0;
	for (;;) {
		struct wdb_stmt *s;
		if (ws_prep(st, WORLD_SQL(TREE_LEAVES), &s, err) < 0) { ret = -1; break; }
		ws_bind_int(s, 1, from);
		ws_bind_int(s, 2, 4096);
		long long got = 0;
		int rc;
		while ((rc = wdb_step(s, NULL)) == WDB_ROW) {
			long long idx = wdb_column_int64(s, 0, NULL);
			if (to > 0 && idx > to) break;
			size_t len = 0;
			const char *j = wdb_column_blob(s, 1, &len);
			got++;
			from = idx + 1;
			int64_t n = idx - 1;
			struct tlog_hash lh = tlog_leaf_hash(j ? j : "", len), hs[TLOG_MAX_PROOF];
			size_t k = 0;
			struct world_err ce = { 0 };
			int bad = tlog_stored_hashes_for_append(n, &lh, tree_read, r, hs, &k, &ce) < 0;
			if (!bad) {
				/* the border of the tree of idx entries: the highest node this leaf closes */
				int top = (int)k - 1;
				for (int l = 0; l < top; l++) r->have[l] = 0;
				r->have[top] = 1;
				r->pos[top] = n >> top;
				r->h[top] = hs[top];
				int64_t base = tlog_stored_index(0, n);
				for (size_t i = 0; i < k && !bad; i++) {
					struct tlog_hash sh;
					if (read_one(st, base + (int64_t)i, &sh, &ce) < 0 || !tlog_hash_equal(&sh, &hs[i])) bad = 1;
				}
			} else {
				/* cannot recompute past here from the table: start the border afresh */
				memset(r->have, 0, sizeof r->have);
			}
			if (bad) {
				(*holes)++;
				if (out) fprintf(out, "integrity_hole table=log_tree index=%lld field=hash\n", idx);
			}
		}
		wdb_finalize(s);
		if (rc != WDB_DONE && rc != WDB_ROW) { ret = ws_sqlerr(st, 0, "log tree check: log read", err); break; }
		if (got < 4096 || (to > 0 && from > to)) break;
	}
	free(r);
	return ret;
}

/* ---- the key ---- */

int world_log_key_get(struct world_store *st, char *vkey, size_t n, struct world_err *err)
{
	if (need_v3(st, "log key", err) < 0) return -1;
	struct wdb_stmt *s;
	if (ws_stmt(st, WORLD_SQL(LOG_KEY_GET), &s, err) < 0) return -1;
	int rc = wdb_step(s, NULL);
	int ret = 0;
	if (rc == WDB_ROW) {
		const char *v = wdb_column_text(s, 0);
		if (!v || strlen(v) >= n) ret = werr(err, WX_INTEGRITY, "store %s: log key: stored verifier key unreadable", st->path);
		else snprintf(vkey, n, "%s", v);
	} else if (rc == WDB_DONE) {
		ret = werr(err, WX_NOT_FOUND, "store %s: no log signing key yet (worldd log key init)", st->path);
	} else {
		ret = ws_sqlerr(st, 0, "log key read", err);
	}
	ws_done(st, s);
	return ret;
}

static int key_put_body(struct world_store *st, const char *vkey, int replace, int *installed, struct world_err *err)
{
	struct wdb_stmt *s;
	if (ws_stmt(st, replace ? WORLD_SQL(LOG_KEY_PUT) : WORLD_SQL(LOG_KEY_INIT), &s, err) < 0) return -1;
	ws_bind_text(s, 1, vkey);
	ws_bind_int(s, 2, (long long)time(NULL));
	int rc = wdb_step(s, NULL);
	int n = rc == WDB_DONE ? (int)wdb_changes(st->wdb) : 0;
	ws_done(st, s);
	if (rc != WDB_DONE) return ws_sqlerr(st, 0, "log key write", err);
	*installed = n > 0;
	return 0;
}

int world_log_key_put(struct world_store *st, const char *vkey, int replace, int *installed, struct world_err *err)
{
	int ig;
	if (!installed) installed = &ig;
	*installed = 0;
	if (ws_need_writer(st, "log key", err) < 0 || need_v3(st, "log key", err) < 0) return -1;
	struct note_vkey k;
	if (note_vkey_parse(vkey, &k, err) < 0) return werr_prefix(err, "log key");
	WS_WRITE(st, err, key_put_body(st, vkey, replace, installed, err));
}

int world_log_key_path(const struct world_store *st, char *path, size_t n, int make_dirs, struct world_err *err)
{
	return ws_secret_path(st, "log key", "log-keys", "log-key", path, n, make_dirs, err);
}

int world_log_key_read(const char *path, char **skey, struct world_err *err)
{
	*skey = NULL;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		return werr(err, e == ENOENT ? WX_NOT_FOUND : WX_IO, "log key %s: open: %s", path, strerror(e));
	}
	struct stat sb;
	if (fstat(fd, &sb) < 0) {
		int e = errno;
		close(fd);
		return werr(err, WX_IO, "log key %s: stat: %s", path, strerror(e));
	}
	if (!S_ISREG(sb.st_mode)) {
		close(fd);
		return werr(err, WX_BAD_INPUT, "log key %s: not a regular file", path);
	}
	if (sb.st_uid != geteuid() || (sb.st_mode & 077)) {
		close(fd);
		return werr(err, WX_BAD_INPUT, "log key %s: mode %04o owner %u: want 0600 or stricter, owned by uid %u", path,
		            (unsigned)(sb.st_mode & 07777), (unsigned)sb.st_uid, (unsigned)geteuid());
	}
	char *buf = malloc(KEY_FILE_MAX + 1);
	if (!buf) {
		close(fd);
		return werr(err, WX_FAIL, "log key %s: out of memory", path);
	}
	size_t n = 0;
	for (;;) {
		ssize_t r = read(fd, buf + n, KEY_FILE_MAX + 1 - n);
		if (r < 0 && errno == EINTR) continue;
		if (r < 0) {
			int e = errno;
			OPENSSL_cleanse(buf, KEY_FILE_MAX + 1);
			free(buf);
			close(fd);
			return werr(err, WX_IO, "log key %s: read: %s", path, strerror(e));
		}
		if (r == 0) break;
		n += (size_t)r;
		if (n > KEY_FILE_MAX) {
			OPENSSL_cleanse(buf, KEY_FILE_MAX + 1);
			free(buf);
			close(fd);
			return werr(err, WX_BAD_INPUT, "log key %s: more than %d bytes", path, KEY_FILE_MAX);
		}
	}
	close(fd);
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' ')) n--;
	buf[n] = 0;
	if (n == 0 || memchr(buf, 0, n) || strchr(buf, '\n')) {
		OPENSSL_cleanse(buf, KEY_FILE_MAX + 1);
		free(buf);
		return werr(err, WX_BAD_INPUT, "log key %s: not one signer key line (PRIVATE+KEY+NAME+HASH+DATA)", path);
	}
	*skey = buf;
	return 0;
}

static void fsync_dir_of(const char *path)
{
	char dir[4096];
	snprintf(dir, sizeof dir, "%s", path);
	char *slash = strrchr(dir, '/');
	if (slash) { if (slash == dir) slash[1] = 0; else *slash = 0; } else snprintf(dir, sizeof dir, ".");
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) { (void)fsync(dfd); close(dfd); }
}

/* skey to a temporary file beside path (0600, fsync'd); tmp gets its name */
static int key_tmp(const char *path, const char *skey, char *tmp, size_t tmpn, struct world_err *err)
{
	if (snprintf(tmp, tmpn, "%s.tmp.%ld", path, (long)getpid()) >= (int)tmpn)
		return werr(err, WX_IO, "log key %s: path too long", path);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) return werr(err, WX_IO, "log key: create %s: %s", tmp, strerror(errno));
	size_t n = strlen(skey);
	int bad = fchmod(fd, 0600) < 0 || write(fd, skey, n) != (ssize_t)n || write(fd, "\n", 1) != 1 || fsync(fd) < 0;
	int e = errno;
	if (close(fd) < 0 && !bad) { bad = 1; e = errno; }
	if (bad) {
		unlink(tmp);
		return werr(err, WX_IO, "log key: write %s: %s", tmp, strerror(e));
	}
	return 0;
}

/* the temporary file to path, refused when path exists (link, not rename) */
static int key_place(const char *tmp, const char *path, struct world_err *err)
{
	if (link(tmp, path) < 0) {
		int e = errno;
		unlink(tmp);
		return werr(err, e == EEXIST ? WX_CONFLICT : WX_IO, "log key %s: %s%s", path, strerror(e),
		            e == EEXIST ? " (a key file is there already; nothing changed)" : "");
	}
	unlink(tmp);
	fsync_dir_of(path);
	return 0;
}

int world_log_key_write(const char *path, const char *skey, struct world_err *err)
{
	char tmp[4400];
	if (key_tmp(path, skey, tmp, sizeof tmp, err) < 0) return -1;
	return key_place(tmp, path, err);
}

/* ---- checkpoints ---- */

static int checkpoint_store(struct world_store *st, long long size, const char *note, struct world_err *err)
{
	struct wdb_stmt *s;
	if (ws_stmt(st, WORLD_SQL(LOG_CHECKPOINT_PUT), &s, err) < 0) return -1;
	ws_bind_int(s, 1, size);
	ws_bind_blob(s, 2, note, strlen(note));
	ws_bind_int(s, 3, (long long)time(NULL));
	int rc = wdb_step(s, NULL);
	ws_done(st, s);
	if (rc != WDB_DONE) return ws_sqlerr(st, 0, "log checkpoint write", err);
	return 0;
}

/* The checkpoint of the tree as it is in this transaction, signed:
 * *note NULL (and 0) when the signature itself failed. */
static int checkpoint_sign(struct world_store *st, struct note_signer *sg, long long *size, char **note,
                           struct world_err *err)
{
	*note = NULL;
	if (world_tree_size(st, size, err) < 0) return -1;
	struct tlog_hash root;
	struct tree_reader r = { .st = st };
	if (tlog_tree_hash(*size, tree_read, &r, &root, err) < 0) return werr_prefix(err, "log checkpoint");
	char *body = NULL;
	struct world_err se = { 0 };
	if (tlog_checkpoint_format(note_signer_name(sg), *size, &root, NULL, &body, &se) < 0 ||
	    note_signer_sign(sg, body, strlen(body), note, &se) < 0) {
		free(body);
		*note = NULL;
		st->sign_failed++;
		return 0;
	}
	free(body);
	return 0;
}

int ws_tree_presign(struct world_store *st, struct world_err *err)
{
	int dirty = st->tree_dirty;
	st->tree_dirty = 0;
	if (!dirty || !st->signer) return 0;
	long long size;
	char *note;
	if (checkpoint_sign(st, st->signer, &size, &note, err) < 0) return -1;
	if (!note) return 0;
	int rc = checkpoint_store(st, size, note, err);
	free(note);
	if (rc == 0) st->signed_n++;
	return rc;
}

int world_tree_set_signer(struct world_store *st, const char *skey, struct world_err *err)
{
	if (ws_need_writer(st, "log signer", err) < 0 || need_v3(st, "log signer", err) < 0) return -1;
	if (!skey) {
		note_signer_free(st->signer);
		st->signer = NULL;
		return 0;
	}
	char have[1024];
	if (world_log_key_get(st, have, sizeof have, err) < 0) return -1;
	char *vk = NULL;
	if (note_skey_vkey(skey, &vk, err) < 0) return werr_prefix(err, "log key");
	if (strcmp(vk, have) != 0) {
		werr(err, WX_CONFLICT, "log key: its verifier key %s is not the store's %s", vk, have);
		free(vk);
		return -1;
	}
	free(vk);
	struct note_signer *sg = note_signer_new(skey, err);
	if (!sg) return werr_prefix(err, "log key");
	note_signer_free(st->signer);
	st->signer = sg;
	return 0;
}

static int sign_now_body(struct world_store *st, struct world_err *err)
{
	long long size;
	char *note;
	if (checkpoint_sign(st, st->signer, &size, &note, err) < 0) return -1;
	if (!note) return werr(err, WX_FAIL, "log checkpoint: the signature failed");
	int rc = checkpoint_store(st, size, note, err);
	free(note);
	if (rc == 0) st->signed_n++;
	return rc;
}

int world_tree_sign_now(struct world_store *st, struct world_err *err)
{
	if (ws_need_writer(st, "log checkpoint", err) < 0 || need_v3(st, "log checkpoint", err) < 0) return -1;
	if (!st->signer) return werr(err, WX_USAGE, "log checkpoint: this handle holds no signing key");
	WS_WRITE(st, err, sign_now_body(st, err));
}

int world_log_checkpoint_get(struct world_store *st, char **note, long long *size, struct world_err *err)
{
	*note = NULL;
	if (size) *size = 0;
	if (need_v3(st, "log checkpoint", err) < 0) return -1;
	struct wdb_stmt *s;
	if (ws_stmt(st, WORLD_SQL(LOG_CHECKPOINT_GET), &s, err) < 0) return -1;
	int rc = wdb_step(s, NULL);
	int ret = 0;
	if (rc == WDB_ROW) {
		size_t n = 0;
		const char *b = wdb_column_blob(s, 1, &n);
		char *c = malloc(n + 1);
		if (!c) ret = werr(err, WX_FAIL, "store %s: log checkpoint: out of memory", st->path);
		else {
			if (n) memcpy(c, b, n);
			c[n] = 0;
			*note = c;
			if (size) *size = wdb_column_int64(s, 0, NULL);
		}
	} else if (rc == WDB_DONE) {
		ret = werr(err, WX_NOT_FOUND, "store %s: no signed checkpoint yet", st->path);
	} else {
		ret = ws_sqlerr(st, 0, "log checkpoint read", err);
	}
	ws_done(st, s);
	return ret;
}

static int key_init_body(struct world_store *st, const char *vkey, int replace, int *installed, struct world_err *err)
{
	if (key_put_body(st, vkey, replace, installed, err) < 0) return -1;
	if (!*installed) return 0;
	return sign_now_body(st, err);
}

int world_log_key_init(struct world_store *st, const char *path, const char *origin, int replace, char *vkey_out,
                       size_t vkeyn, struct world_err *err)
{
	if (ws_need_writer(st, "log key init", err) < 0 || need_v3(st, "log key init", err) < 0) return -1;
	char name[NOTE_NAME_MAX + 1];
	if (origin && *origin) {
		if (strlen(origin) > NOTE_NAME_MAX) return werr(err, WX_BAD_INPUT, "log key init: origin longer than %d bytes", NOTE_NAME_MAX);
		snprintf(name, sizeof name, "%s", origin);
	} else {
		unsigned char raw[16];
		if (RAND_bytes(raw, sizeof raw) != 1) return werr(err, WX_IO, "log key init: no random bytes from libcrypto");
		int o = snprintf(name, sizeof name, "world/");
		for (int i = 0; i < 16; i++) o += snprintf(name + o, sizeof name - (size_t)o, "%02x", raw[i]);
	}
	struct stat sb;
	if (lstat(path, &sb) == 0)
		return werr(err, WX_CONFLICT, "log key init: %s exists already; nothing changed", path);
	char have[1024];
	struct world_err ge = { 0 };
	if (!replace && world_log_key_get(st, have, sizeof have, &ge) == 0)
		return werr(err, WX_CONFLICT, "log key init: store %s has a log key already (%s); nothing changed", st->path, have);
	if (ge.code && ge.code != WX_NOT_FOUND) {
		if (err) *err = ge;
		return -1;
	}
	char *skey = NULL, *vkey = NULL;
	if (note_key_generate(name, &skey, &vkey, err) < 0) return werr_prefix(err, "log key init");
	char tmp[4400];
	int rc = key_tmp(path, skey, tmp, sizeof tmp, err);
	struct note_signer *old = st->signer;
	st->signer = NULL;
	if (rc == 0) {
		st->signer = note_signer_new(skey, err);
		if (!st->signer) rc = -1;
	}
	int installed = 0;
	if (rc == 0) {
		struct world_err we = { 0 };
		rc = -1;
		for (int tries = 0;; tries++) {
			st->retry_seen = 0;
			if (ws_sp_begin(st, &we) < 0) {
				if (ws_write_retry(st, tries)) continue;
				break;
			}
			int ok = key_init_body(st, vkey, replace, &installed, &we) == 0;
			if (ws_sp_end(st, ok, ok ? &we : NULL) == 0) { rc = 0; break; }
			if (!ws_write_retry(st, tries)) break;
		}
		if (rc < 0 && err) *err = we;
		if (rc == 0 && !installed) {
			rc = werr(err, WX_CONFLICT, "log key init: store %s got a log key from another writer meanwhile; nothing "
			          "changed", st->path);
		}
		if (rc < 0) unlink(tmp);
		else rc = key_place(tmp, path, err);
	}
	note_signer_free(st->signer);
	st->signer = old;
	OPENSSL_cleanse(skey, strlen(skey));
	free(skey);
	if (rc == 0 && vkey_out) snprintf(vkey_out, vkeyn, "%s", vkey);
	free(vkey);
	return rc;
}

void world_tree_sign_stats(struct world_store *st, long long *signed_n, long long *failed)
{
	if (signed_n) *signed_n = st->signed_n;
	if (failed) *failed = st->sign_failed;
}
