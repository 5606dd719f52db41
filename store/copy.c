/* store/copy.c: the copy between backends (store/copy.h). */
#include "store/copy.h"
#include "store/db.h"
#include "common/file.h"
#include "common/pause.h"
#include "common/ref.h"
#include "store/schema_pg.h"
#include "store/store.h"
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <jansson.h>
#include <libgen.h>
#include <openssl/evp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define COPY_INTERP_MAX (512ull << 20)
#define COPY_MANIFEST_MAX (1 << 16)
#define COPY_SCHEMA 3

/* ---- the tables ---- */

struct ccol {
	const char *name; /* "@seq": SQLite's rowid / PostgreSQL's objects.seq */
	char kind;        /* 'i' integer, 't' text, 'b' blob */
	int null_ok;
};

struct ctab {
	const char *name;
	int ncols;
	struct ccol col[12];
	int nkey;
	int key[3];    /* the columns it is read in order of (its primary key) */
	int ignore;    /* insert ON CONFLICT DO NOTHING: rows the triggers made already (compared after) */
	int check;     /* 1 objects (ref = hash of payload), 2 log_entries (the chain) */
};

static const struct ctab tables[] = {
	{ "objects", 7,
	  { { "@seq", 'i', 0 }, { "ref", 't', 0 }, { "semantic_id", 't', 0 }, { "provenance", 't', 0 },
	    { "payload", 'b', 0 }, { "size", 'i', 0 }, { "created_at", 'i', 0 } },
	  1, { 1 }, 0, 1 },
	{ "log_entries", 10,
	  { { "entry_index", 'i', 0 }, { "semantics_epoch", 'i', 0 }, { "entry_hash", 't', 0 },
	    { "prev_entry_hash", 't', 1 }, { "transition_fn", 't', 0 }, { "interpreter", 't', 0 },
	    { "written_by", 't', 0 }, { "transition_ref", 't', 0 }, { "entry_json", 'b', 0 },
	    { "committed_at", 'i', 0 } },
	  1, { 0 }, 0, 2 },
	{ "worlds", 5,
	  { { "ref", 't', 0 }, { "revision", 'i', 0 }, { "state_root", 't', 0 }, { "log_head", 't', 0 },
	    { "payload", 'b', 0 } },
	  1, { 0 }, 0, 0 },
	{ "heads", 4, { { "name", 't', 0 }, { "ref", 't', 0 }, { "revision", 'i', 0 }, { "updated_at", 'i', 0 } }, 1, { 0 }, 0,
	  0 },
	{ "journal", 12,
	  { { "id", 'i', 0 }, { "phase", 't', 0 }, { "intent_id", 'i', 1 }, { "kind", 't', 1 }, { "subject", 't', 1 },
	    { "episode", 't', 1 }, { "effect", 't', 1 }, { "scope", 't', 1 }, { "cost", 'i', 0 }, { "status", 't', 1 },
	    { "ref", 't', 1 }, { "at", 'i', 0 } },
	  1, { 0 }, 0, 0 },
	{ "sessions", 5,
	  { { "credential_hash", 't', 0 }, { "episode", 't', 0 }, { "grants", 't', 0 }, { "expires_at", 'i', 0 },
	    { "created_at", 'i', 0 } },
	  1, { 0 }, 0, 0 },
	{ "interpreters", 4, { { "ref", 't', 0 }, { "version", 't', 0 }, { "size", 'i', 0 }, { "archived_at", 'i', 0 } }, 1,
	  { 0 }, 0, 0 },
	{ "episode_objects", 2, { { "episode", 't', 0 }, { "ref", 't', 0 } }, 2, { 0, 1 }, 0, 0 },
	{ "episode_usage", 3, { { "episode", 't', 0 }, { "calls", 'i', 0 }, { "bytes", 'i', 0 } }, 1, { 0 }, 0, 0 },
	{ "episode_entries", 2, { { "episode", 't', 0 }, { "entry_index", 'i', 0 } }, 2, { 0, 1 }, 1, 0 },
	{ "operator_token", 3, { { "id", 'i', 0 }, { "token_hash", 't', 0 }, { "set_at", 'i', 0 } }, 1, { 0 }, 0, 0 },
	/* schema 3: the log's tree, key and checkpoint (store/tree.h), copied as they are (the scan of a
	 * SQLite copy recomputes the tree) */
	{ "log_tree", 2, { { "hash_index", 'i', 0 }, { "hash", 'b', 0 } }, 1, { 0 }, 0, 0 },
	{ "log_key", 3, { { "id", 'i', 0 }, { "verifier", 't', 0 }, { "set_at", 'i', 0 } }, 1, { 0 }, 0, 0 },
	{ "log_checkpoint", 4, { { "id", 'i', 0 }, { "tree_size", 'i', 0 }, { "note", 'b', 0 }, { "signed_at", 'i', 0 } }, 1,
	  { 0 }, 0, 0 },
};
#define NTABLES ((int)(sizeof tables / sizeof tables[0]))
#define ARCHIVE_T NTABLES /* the archive's slot in the result */
#define IDX_INTERPRETERS 6

static const char *col_sql(const struct ctab *t, int c, enum wdb_kind k)
{
	if (strcmp(t->col[c].name, "@seq") == 0) return k == WDB_PG ? "seq" : "rowid";
	return t->col[c].name;
}

static int sql_select(const struct ctab *t, enum wdb_kind k, char *b, size_t n)
{
	size_t o = (size_t)snprintf(b, n, "SELECT ");
	for (int c = 0; c < t->ncols && o < n; c++) o += (size_t)snprintf(b + o, n - o, "%s%s", c ? ", " : "", col_sql(t, c, k));
	if (o < n) o += (size_t)snprintf(b + o, n - o, " FROM %s ORDER BY ", t->name);
	for (int i = 0; i < t->nkey && o < n; i++) {
		int c = t->key[i];
		/* byte order on both: SQLite's BINARY is memcmp, PostgreSQL's "C" likewise */
		o += (size_t)snprintf(b + o, n - o, "%s%s%s", i ? ", " : "", col_sql(t, c, k),
		                      k == WDB_PG && t->col[c].kind == 't' ? " COLLATE \"C\"" : "");
	}
	return o < n ? 0 : -1;
}

static int sql_insert(const struct ctab *t, enum wdb_kind k, char *b, size_t n)
{
	size_t o = (size_t)snprintf(b, n, "INSERT INTO %s(", t->name);
	for (int c = 0; c < t->ncols && o < n; c++) o += (size_t)snprintf(b + o, n - o, "%s%s", c ? ", " : "", col_sql(t, c, k));
	int seq = strcmp(t->col[0].name, "@seq") == 0;
	if (o < n) o += (size_t)snprintf(b + o, n - o, ")%s VALUES (", seq && k == WDB_PG ? " OVERRIDING SYSTEM VALUE" : "");
	for (int c = 0; c < t->ncols && o < n; c++) o += (size_t)snprintf(b + o, n - o, "%s?%d", c ? ", " : "", c + 1);
	if (o < n) o += (size_t)snprintf(b + o, n - o, ")%s", t->ignore ? " ON CONFLICT DO NOTHING" : "");
	return o < n ? 0 : -1;
}

/* SQLite keeps any value in any column: a value of another type than its
 * column's (or text holding a NUL, which a C string would cut) is refused. */
static int sql_typecheck(const struct ctab *t, char *b, size_t n)
{
	size_t o = (size_t)snprintf(b, n, "SELECT count(*) FROM %s WHERE NOT (", t->name);
	for (int c = 0; c < t->ncols && o < n; c++) {
		const char *nm = col_sql(t, c, WDB_SQLITE);
		const char *ty = t->col[c].kind == 'i' ? "integer" : t->col[c].kind == 't' ? "text" : "blob";
		o += (size_t)snprintf(b + o, n - o, "%s(%s%s%s typeof(%s) = '%s'%s%s%s)", c ? " AND " : "",
		                      t->col[c].null_ok ? nm : "", t->col[c].null_ok ? " IS NULL OR" : "", "", nm, ty,
		                      t->col[c].kind == 't' ? " AND instr(CAST(" : "", t->col[c].kind == 't' ? nm : "",
		                      t->col[c].kind == 't' ? " AS BLOB), x'00') = 0" : "");
	}
	if (o < n) o += (size_t)snprintf(b + o, n - o, ")");
	return o < n ? 0 : -1;
}

/* ---- digests ---- */

struct dig {
	EVP_MD_CTX *md;
	long long rows;
};

static int dig_start(struct dig *d, struct world_err *err)
{
	d->rows = 0;
	d->md = EVP_MD_CTX_new();
	if (!d->md || EVP_DigestInit_ex(d->md, EVP_sha256(), NULL) != 1) {
		EVP_MD_CTX_free(d->md);
		d->md = NULL;
		return werr(err, WX_FAIL, "copy: cannot start a SHA-256 digest");
	}
	return 0;
}

static int dig_add(struct dig *d, char tag, const void *p, size_t n, struct world_err *err)
{
	unsigned char h[9];
	h[0] = (unsigned char)tag;
	for (int i = 0; i < 8; i++) h[1 + i] = (unsigned char)((uint64_t)n >> (56 - 8 * i));
	if (EVP_DigestUpdate(d->md, h, sizeof h) != 1 || (n && EVP_DigestUpdate(d->md, p, n) != 1))
		return werr(err, WX_FAIL, "copy: SHA-256 update failed");
	return 0;
}

static int dig_int(struct dig *d, int64_t v, struct world_err *err)
{
	unsigned char b[8];
	for (int i = 0; i < 8; i++) b[i] = (unsigned char)((uint64_t)v >> (56 - 8 * i));
	return dig_add(d, 'i', b, 8, err);
}

static int dig_end(struct dig *d, char hex[65], struct world_err *err)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned len = 0;
	int ok = EVP_DigestFinal_ex(d->md, md, &len) == 1 && len == 32;
	EVP_MD_CTX_free(d->md);
	d->md = NULL;
	if (!ok) return werr(err, WX_FAIL, "copy: SHA-256 final failed");
	for (int i = 0; i < 32; i++) snprintf(hex + 2 * i, 3, "%02x", md[i]);
	return 0;
}

static void dig_drop(struct dig *d)
{
	EVP_MD_CTX_free(d->md);
	d->md = NULL;
}

/* ---- one value: read, digested, bound into the insert (ins may be NULL) ---- */

struct val {
	int null;
	int64_t i;
	const char *p;
	size_t n;
};

static int take(struct wdb *db, const struct ctab *t, int c, struct wdb_stmt *s, struct dig *d, struct wdb_stmt *ins,
                struct val *v, struct world_err *err)
{
	const struct ccol *cc = &t->col[c];
	memset(v, 0, sizeof *v);
	if (wdb_column_is_null(s, c)) {
		if (!cc->null_ok)
			return werr(err, WX_INTEGRITY, "copy: %s: %s.%s is NULL in a row (row %lld)", wdb_name(db), t->name,
			            cc->name, d->rows + 1);
		v->null = 1;
		if (dig_add(d, 'n', NULL, 0, err) < 0) return -1;
		return ins ? (wdb_bind_null(ins, c + 1, err) < 0 ? -1 : 0) : 0;
	}
	switch (cc->kind) {
	case 'i': {
		int bad = 0;
		v->i = wdb_column_int64(s, c, &bad);
		if (bad)
			return werr(err, WX_INTEGRITY, "copy: %s: %s.%s is not an integer (row %lld)", wdb_name(db), t->name,
			            cc->name, d->rows + 1);
		if (dig_int(d, v->i, err) < 0) return -1;
		return ins ? (wdb_bind_int64(ins, c + 1, v->i, err) < 0 ? -1 : 0) : 0;
	}
	case 't':
		v->p = wdb_column_text(s, c);
		if (!v->p) v->p = "";
		v->n = strlen(v->p);
		if (dig_add(d, 't', v->p, v->n, err) < 0) return -1;
		return ins ? (wdb_bind_text(ins, c + 1, v->p, (ptrdiff_t)v->n, err) < 0 ? -1 : 0) : 0;
	default:
		v->p = wdb_column_blob(s, c, &v->n);
		if (!v->p) v->p = "";
		if (dig_add(d, 'b', v->p, v->n, err) < 0) return -1;
		return ins ? (wdb_bind_blob(ins, c + 1, v->p, v->n, err) < 0 ? -1 : 0) : 0;
	}
}

/* ---- the interpreters a copy carries ---- */

struct interps {
	char (*ref)[WORLD_REF_SIZE];
	int64_t *size;
	int n, cap;
};

static int interps_add(struct interps *ip, const char *ref, size_t n, int64_t size, struct world_err *err)
{
	if (n != WORLD_REF_LEN || !world_ref_valid(ref))
		return werr(err, WX_INTEGRITY, "copy: interpreters row with a malformed ref");
	if (ip->n == ip->cap) {
		int cap = ip->cap ? ip->cap * 2 : 16;
		void *r = realloc(ip->ref, (size_t)cap * sizeof *ip->ref);
		if (!r) return werr(err, WX_FAIL, "copy: out of memory");
		ip->ref = r;
		void *s = realloc(ip->size, (size_t)cap * sizeof *ip->size);
		if (!s) return werr(err, WX_FAIL, "copy: out of memory");
		ip->size = s;
		ip->cap = cap;
	}
	memcpy(ip->ref[ip->n], ref, WORLD_REF_SIZE);
	ip->size[ip->n++] = size;
	return 0;
}

/* An archived interpreter as the copy accepts it: its bytes hash to its
 * ref, its size is the interpreters row's, its manifest.json names both. */
static int interp_check(const char *where, const char *ref, int64_t size, const void *bytes, size_t n,
                        const void *man, size_t mn, struct world_err *err)
{
	char got[WORLD_REF_SIZE];
	if (world_hash_ref(bytes, n, got, err) < 0) return -1;
	if (strcmp(got, ref) != 0)
		return werr(err, WX_INTEGRITY, "copy: %s: interpreter %s hashes to %s; nothing written at the destination", where,
		            ref, got);
	if ((int64_t)n != size)
		return werr(err, WX_INTEGRITY, "copy: %s: interpreter %s is %zu bytes, its row says %lld", where, ref, n,
		            (long long)size);
	json_error_t je;
	json_t *m = json_loadb(man, mn, 0, &je);
	const char *h = m ? json_string_value(json_object_get(m, "hash")) : NULL;
	json_t *sz = m ? json_object_get(m, "size") : NULL;
	int ok = h && strcmp(h, ref) == 0 && json_is_integer(sz) && json_integer_value(sz) == (json_int_t)n;
	json_decref(m);
	if (!ok) return werr(err, WX_INTEGRITY, "copy: %s: the manifest of interpreter %s does not name its hash and size", where, ref);
	return 0;
}

/* ---- files ---- */

static int fsync_path(const char *p, int dir, struct world_err *err)
{
	int fd = open(p, (dir ? O_RDONLY | O_DIRECTORY : O_RDONLY) | O_CLOEXEC);
	if (fd < 0) return werr(err, WX_IO, "copy: open %s: %s", p, strerror(errno));
	if (fsync(fd) < 0) {
		int e = errno;
		close(fd);
		return werr(err, WX_IO, "copy: fsync %s: %s", p, strerror(e));
	}
	if (close(fd) < 0) return werr(err, WX_IO, "copy: close %s: %s", p, strerror(errno));
	return 0;
}

static int mkdir0700(const char *d, struct world_err *err)
{
	if (mkdir(d, 0700) < 0) return werr(err, WX_IO, "copy: mkdir %s: %s", d, strerror(errno));
	if (chmod(d, 0700) < 0) return werr(err, WX_IO, "copy: chmod 0700 %s: %s", d, strerror(errno));
	return 0;
}

static int write_new(const char *p, const void *buf, size_t n, mode_t mode, struct world_err *err)
{
	int fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) return werr(err, WX_IO, "copy: create %s: %s", p, strerror(errno));
	if (write_all(fd, buf, n) < 0 || fchmod(fd, mode) < 0 || fsync(fd) < 0) {
		int e = errno;
		close(fd);
		return werr(err, WX_IO, "copy: write %s: %s", p, strerror(e));
	}
	if (close(fd) < 0) return werr(err, WX_IO, "copy: close %s: %s", p, strerror(errno));
	return 0;
}

static int rm_one(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)ftw;
	if (flag == FTW_DP) rmdir(p);
	else unlink(p);
	return 0;
}

/* rename without replacing: DEST (or DEST.artifacts) made by someone else
 * after the checks is never overwritten (an empty directory would be) */
static int rename_new(const char *from, const char *to, struct world_err *err)
{
	if (renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) == 0) return 0;
	if (errno == EEXIST)
		return werr(err, WX_CONFLICT, "copy: %s appeared while the copy ran; refusing to overwrite it", to);
	return werr(err, WX_IO, "copy: rename %s to %s: %s", from, to, strerror(errno));
}

/* Remove a tree this copy made (best effort: it is being abandoned). */
static void rm_tree(const char *p)
{
	struct stat sb;
	if (!p[0] || lstat(p, &sb) < 0) return;
	nftw(p, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static int read_archived(const char *art, const char *ref, char **bytes, size_t *n, char **man, size_t *mn,
                         struct world_err *err)
{
	char p[4400];
	*bytes = *man = NULL;
	snprintf(p, sizeof p, "%s/interpreters/sha256/%s/ailang", art, ref + 7);
	if (world_read_file(p, COPY_INTERP_MAX, bytes, n, err) < 0) return werr_prefix(err, "copy: interpreter %s", ref);
	snprintf(p, sizeof p, "%s/interpreters/sha256/%s/manifest.json", art, ref + 7);
	if (world_read_file(p, COPY_MANIFEST_MAX, man, mn, err) < 0) {
		free(*bytes);
		*bytes = NULL;
		return werr_prefix(err, "copy: interpreter %s", ref);
	}
	return 0;
}

/* ---- small queries ---- */

static int query_int(struct wdb *db, const char *sql, int64_t *v, int *have, struct world_err *err)
{
	struct wdb_stmt *s;
	if (wdb_prepare(db, sql, &s, err) < 0) return -1;
	int r = wdb_step(s, err);
	if (have) *have = r == WDB_ROW;
	*v = r == WDB_ROW ? wdb_column_int64(s, 0, NULL) : 0;
	wdb_finalize(s);
	return r < 0 ? -1 : 0;
}

/* ---- one copy ---- */

struct cp {
	const struct world_copy_opts *o;
	struct world_copy_result *out;
	struct wdb *src, *dst;
	enum wdb_kind sk, dk;
	char src_art[4300];   /* SQLite SRC: its archive */
	int64_t src_pid;      /* PostgreSQL SRC: the backend of the snapshot */
	struct interps ip;    /* SRC's interpreters rows, by ref */
	/* SQLite DEST */
	char dest[4096], dest_art[4300], dir[4096], stage[4096], db[4200], art[4300];
	int art_renamed;
};

static int src_snapshot(struct cp *c, struct world_err *err)
{
	int64_t v = 0;
	int have = 0;
	if (c->sk == WDB_PG) {
		if (wdb_exec(c->src, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", err) < 0) return -1;
		if (query_int(c->src, "SELECT pg_backend_pid()", &c->src_pid, NULL, err) < 0) return -1;
		struct world_err qe = { 0, "" };
		if (query_int(c->src, "SELECT version FROM world_schema WHERE id = 1", &v, &have, &qe) < 0 || !have)
			return werr(err, WX_SCHEMA, "copy: %s is not a World store (no world_schema row)", wdb_name(c->src));
		if (v != COPY_SCHEMA)
			return werr(err, WX_SCHEMA, "copy: %s: schema version %lld; this build copies version %d", wdb_name(c->src),
			            (long long)v, COPY_SCHEMA);
		return 0;
	}
	if (wdb_exec(c->src, "BEGIN", err) < 0) return -1;
	/* the first read starts the read transaction: everything after sees it */
	if (query_int(c->src, "SELECT count(*) FROM sqlite_master", &v, NULL, err) < 0 ||
	    query_int(c->src, "PRAGMA user_version", &v, NULL, err) < 0)
		return -1;
	if (v == 1 || v == 2)
		return werr(err, WX_SCHEMA, "copy: %s is a schema-%lld store: open it once with a writer of this build (it "
		                            "migrates) and copy it then", wdb_name(c->src), (long long)v);
	if (v != COPY_SCHEMA)
		return werr(err, WX_SCHEMA, "copy: %s: not a World store of schema version %d (user_version %lld)", wdb_name(c->src),
		            COPY_SCHEMA, (long long)v);
	return 0;
}

static int src_snapshot_end(struct cp *c, struct world_err *err)
{
	if (c->sk == WDB_PG) {
		int64_t pid = 0;
		if (query_int(c->src, "SELECT pg_backend_pid()", &pid, NULL, err) < 0) return -1;
		if (pid != c->src_pid)
			return werr(err, WX_IO, "copy: %s: the connection was lost and made again while reading: not one snapshot; "
			                        "nothing written at the destination", wdb_name(c->src));
		return wdb_exec(c->src, "COMMIT", err);
	}
	return wdb_exec(c->src, "COMMIT", err);
}

/* One table from SRC into DEST (ins on the dest), digested and checked. */
static int copy_table(struct cp *c, int ti, struct world_err *err)
{
	const struct ctab *t = &tables[ti];
	char sql[4096];
	if (c->sk == WDB_SQLITE) {
		int64_t bad = 0;
		if (sql_typecheck(t, sql, sizeof sql) < 0) return werr(err, WX_FAIL, "copy: statement too long");
		if (query_int(c->src, sql, &bad, NULL, err) < 0) return -1;
		if (bad)
			return werr(err, WX_INTEGRITY, "copy: %s: %lld row(s) of %s hold a value of another type than its column's "
			                               "(or text with a NUL); nothing written at the destination",
			            wdb_name(c->src), (long long)bad, t->name);
	}
	struct wdb_stmt *s = NULL, *ins = NULL;
	struct dig d = { 0 };
	if (sql_select(t, c->sk, sql, sizeof sql) < 0 || wdb_prepare(c->src, sql, &s, err) < 0) goto fail;
	if (sql_insert(t, c->dk, sql, sizeof sql) < 0 || wdb_prepare(c->dst, sql, &ins, err) < 0) goto fail;
	if (dig_start(&d, err) < 0) goto fail;
	char prev_hash[WORLD_REF_SIZE] = "";
	int r;
	while ((r = wdb_step(s, err)) == WDB_ROW) {
		struct val v[12];
		for (int k = 0; k < t->ncols; k++)
			if (take(c->src, t, k, s, &d, ins, &v[k], err) < 0) goto fail;
		if (t->check == 1) { /* objects: the ref is the hash of the payload */
			char got[WORLD_REF_SIZE];
			if (world_hash_ref(v[4].p, v[4].n, got, err) < 0) goto fail;
			if (v[1].n != WORLD_REF_LEN || memcmp(got, v[1].p, WORLD_REF_LEN) != 0) {
				werr(err, WX_INTEGRITY, "copy: %s: object %.80s: its payload hashes to %s; nothing written at the "
				                        "destination", wdb_name(c->src), v[1].p, got);
				goto fail;
			}
		} else if (t->check == 2) { /* the log: one chain from index 1 */
			int broken = v[0].i != d.rows + 1 || v[2].n != WORLD_REF_LEN ||
			             (d.rows == 0 ? !v[3].null : v[3].null || strcmp(v[3].p, prev_hash) != 0);
			if (broken) {
				werr(err, WX_INTEGRITY, "copy: %s: log entry %lld does not continue the chain (index or prevEntryHash); "
				                        "nothing written at the destination", wdb_name(c->src), (long long)v[0].i);
				goto fail;
			}
			memcpy(prev_hash, v[2].p, WORLD_REF_LEN);
			prev_hash[WORLD_REF_LEN] = 0;
		}
		if (ti == IDX_INTERPRETERS && interps_add(&c->ip, v[0].p, v[0].n, v[2].i, err) < 0) goto fail;
		r = wdb_step(ins, err);
		wdb_reset(ins);
		if (r < 0) {
			werr_prefix(err, "copy: %s row %lld into %s", t->name, d.rows + 1, wdb_name(c->dst));
			goto fail;
		}
		d.rows++;
	}
	if (r < 0) goto fail;
	wdb_finalize(s);
	wdb_finalize(ins);
	s = ins = NULL;
	c->out->table[ti] = t->name;
	c->out->rows[ti] = d.rows;
	if (ti == 1) c->out->log_entries = d.rows;
	if (dig_end(&d, c->out->digest[ti], err) < 0) return -1;
	if (ti == 0 && d.rows > 0) world_pause("copy.writing");
	return 0;
fail:
	dig_drop(&d);
	wdb_finalize(s);
	wdb_finalize(ins);
	return -1;
}

/* The archive from SRC (re-hashed) into DEST (re-hashed again before it
 * is written: the bytes in hand are the bytes checked). */
static int archive_put(struct cp *c, const char *ref, const void *b, size_t n, const void *m, size_t mn,
                       struct wdb_stmt *ins, struct world_err *err)
{
	if (c->dk == WDB_PG) {
		if (wdb_bind_text(ins, 1, ref, -1, err) < 0 || wdb_bind_blob(ins, 2, b, n, err) < 0 ||
		    wdb_bind_blob(ins, 3, m, mn, err) < 0)
			return -1;
		int r = wdb_step(ins, err);
		wdb_reset(ins);
		return r < 0 ? werr_prefix(err, "copy: interpreter %s into %s", ref, wdb_name(c->dst)) : 0;
	}
	char p[4500];
	snprintf(p, sizeof p, "%s/interpreters/sha256/%s", c->art, ref + 7);
	if (mkdir0700(p, err) < 0) return -1;
	snprintf(p, sizeof p, "%s/interpreters/sha256/%s/ailang", c->art, ref + 7);
	if (write_new(p, b, n, 0555, err) < 0) return -1;
	snprintf(p, sizeof p, "%s/interpreters/sha256/%s/manifest.json", c->art, ref + 7);
	if (write_new(p, m, mn, 0400, err) < 0) return -1;
	snprintf(p, sizeof p, "%s/interpreters/sha256/%s", c->art, ref + 7);
	return fsync_path(p, 1, err);
}

static int dig_archive_one(struct dig *d, const char *ref, const void *b, size_t n, const void *m, size_t mn,
                           struct world_err *err)
{
	if (dig_add(d, 't', ref, strlen(ref), err) < 0 || dig_add(d, 'b', b, n, err) < 0 || dig_add(d, 'b', m, mn, err) < 0)
		return -1;
	d->rows++;
	return 0;
}

/* Reads the archive of db (kind k; art = its directory on SQLite) for the
 * interpreters ip, in ref order; each element checked, digested, and when
 * c is non-NULL written into DEST. */
static int archive_walk(struct cp *c, struct wdb *db, enum wdb_kind k, const char *art, const struct interps *ip,
                        struct dig *d, struct world_err *err)
{
	struct wdb_stmt *ins = NULL, *s = NULL;
	int rc = -1;
	if (c && c->dk == WDB_PG &&
	    wdb_prepare(c->dst, "INSERT INTO archive(ref, bytes, manifest) VALUES (?1, ?2, ?3)", &ins, err) < 0)
		return -1;
	if (k == WDB_SQLITE) {
		for (int i = 0; i < ip->n; i++) {
			char *b, *m;
			size_t n, mn;
			if (read_archived(art, ip->ref[i], &b, &n, &m, &mn, err) < 0) goto out;
			int r = interp_check(art, ip->ref[i], ip->size[i], b, n, m, mn, err);
			if (r == 0) r = dig_archive_one(d, ip->ref[i], b, n, m, mn, err);
			if (r == 0 && c) r = archive_put(c, ip->ref[i], b, n, m, mn, ins, err);
			free(b);
			free(m);
			if (r < 0) goto out;
		}
		rc = 0;
		goto out;
	}
	if (wdb_prepare(db, "SELECT ref, bytes, manifest FROM archive ORDER BY ref COLLATE \"C\"", &s, err) < 0) goto out;
	int r, i = 0;
	while ((r = wdb_step(s, err)) == WDB_ROW) {
		const char *ref = wdb_column_text(s, 0);
		size_t n, mn;
		const void *b = wdb_column_blob(s, 1, &n), *m = wdb_column_blob(s, 2, &mn);
		if (!ref || i >= ip->n || strcmp(ref, ip->ref[i]) != 0) {
			werr(err, WX_INTEGRITY, "copy: %s: the archive holds %.80s, which no interpreters row names", wdb_name(db),
			     ref ? ref : "(null)");
			goto out;
		}
		if (interp_check(wdb_name(db), ref, ip->size[i], b, n, m, mn, err) < 0 ||
		    dig_archive_one(d, ref, b, n, m, mn, err) < 0)
			goto out;
		if (c && archive_put(c, ref, b, n, m, mn, ins, err) < 0) goto out;
		i++;
	}
	if (r < 0) goto out;
	if (i < ip->n) {
		werr(err, WX_INTEGRITY, "copy: %s: interpreter %s has no archived bytes", wdb_name(db), ip->ref[i]);
		goto out;
	}
	rc = 0;
out:
	wdb_finalize(s);
	wdb_finalize(ins);
	return rc;
}

static int copy_archive(struct cp *c, struct world_err *err)
{
	struct dig d = { 0 };
	if (dig_start(&d, err) < 0) return -1;
	if (c->dk == WDB_SQLITE) {
		char p[4500];
		if (mkdir0700(c->art, err) < 0) goto fail;
		snprintf(p, sizeof p, "%s/interpreters", c->art);
		if (mkdir0700(p, err) < 0) goto fail;
		snprintf(p, sizeof p, "%s/interpreters/sha256", c->art);
		if (mkdir0700(p, err) < 0) goto fail;
	}
	if (archive_walk(c, c->src, c->sk, c->src_art, &c->ip, &d, err) < 0) goto fail;
	if (c->dk == WDB_SQLITE) {
		char p[4500];
		snprintf(p, sizeof p, "%s/interpreters/sha256", c->art);
		if (fsync_path(p, 1, err) < 0) goto fail;
		snprintf(p, sizeof p, "%s/interpreters", c->art);
		if (fsync_path(p, 1, err) < 0 || fsync_path(c->art, 1, err) < 0) goto fail;
	}
	c->out->table[ARCHIVE_T] = "archive";
	c->out->rows[ARCHIVE_T] = d.rows;
	c->out->interpreters = (int)d.rows;
	return dig_end(&d, c->out->digest[ARCHIVE_T], err);
fail:
	dig_drop(&d);
	return -1;
}

/* DEST read back in its own snapshot (db is open on it; PostgreSQL: inside
 * the writing transaction), every table's count and digest against SRC's. */
static int verify(struct cp *c, struct wdb *db, enum wdb_kind k, const char *art, struct world_err *err)
{
	struct interps ip = { 0 };
	int rc = -1;
	char sql[4096], hex[65];
	for (int ti = 0; ti < NTABLES; ti++) {
		const struct ctab *t = &tables[ti];
		if (k == WDB_SQLITE) {
			int64_t bad = 0;
			if (sql_typecheck(t, sql, sizeof sql) < 0 || query_int(db, sql, &bad, NULL, err) < 0) goto out;
			if (bad) {
				werr(err, WX_INTEGRITY, "copy: the copy's %s holds %lld value(s) of another type", t->name, (long long)bad);
				goto out;
			}
		}
		struct wdb_stmt *s;
		struct dig d = { 0 };
		if (sql_select(t, k, sql, sizeof sql) < 0 || wdb_prepare(db, sql, &s, err) < 0) goto out;
		if (dig_start(&d, err) < 0) {
			wdb_finalize(s);
			goto out;
		}
		int r;
		while ((r = wdb_step(s, err)) == WDB_ROW) {
			struct val v[12];
			int bad = 0;
			for (int col = 0; col < t->ncols && !bad; col++) bad = take(db, t, col, s, &d, NULL, &v[col], err) < 0;
			if (!bad && ti == IDX_INTERPRETERS) bad = interps_add(&ip, v[0].p, v[0].n, v[2].i, err) < 0;
			if (bad) {
				r = -1;
				break;
			}
			d.rows++;
		}
		wdb_finalize(s);
		if (r < 0 || dig_end(&d, hex, err) < 0) {
			dig_drop(&d);
			goto out;
		}
		if (d.rows != c->out->rows[ti] || strcmp(hex, c->out->digest[ti]) != 0) {
			werr(err, WX_INTEGRITY, "copy: the copy's %s differs from the source's (%lld rows, sha256 %.12s; the source: "
			                        "%lld rows, sha256 %.12s); nothing left at %s", t->name, d.rows, hex,
			     c->out->rows[ti], c->out->digest[ti], c->out->dest_name);
			goto out;
		}
	}
	struct dig d = { 0 };
	if (dig_start(&d, err) < 0) goto out;
	if (archive_walk(NULL, db, k, art, &ip, &d, err) < 0 || dig_end(&d, hex, err) < 0) {
		dig_drop(&d);
		goto out;
	}
	if (d.rows != c->out->rows[ARCHIVE_T] || strcmp(hex, c->out->digest[ARCHIVE_T]) != 0) {
		werr(err, WX_INTEGRITY, "copy: the copy's interpreter archive differs from the source's; nothing left at %s",
		     c->out->dest_name);
		goto out;
	}
	rc = 0;
out:
	free(ip.ref);
	free(ip.size);
	return rc;
}

static const char pg_empty_sql[] =
    "SELECT (SELECT count(*) FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace"
    " WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_toast%'"
    " AND n.nspname NOT LIKE 'pg\\_temp\\_%')"
    " + (SELECT count(*) FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace"
    " WHERE n.nspname NOT IN ('pg_catalog', 'information_schema'))";

/* The identity columns continue after the copied values. */
static const char pg_sequences_sql[] =
    "SELECT setval(pg_get_serial_sequence('objects', 'seq'), max(seq)) FROM objects HAVING count(*) > 0;"
    "SELECT setval(pg_get_serial_sequence('journal', 'id'), max(id)) FROM journal HAVING count(*) > 0";

static int copy_rows(struct cp *c, struct world_err *err)
{
	if (src_snapshot(c, err) < 0) return -1;
	for (int ti = 0; ti < NTABLES; ti++)
		if (copy_table(c, ti, err) < 0) return -1;
	if (copy_archive(c, err) < 0) return -1;
	return src_snapshot_end(c, err);
}

static int to_pg(struct cp *c, struct world_err *err)
{
	int64_t n = 0;
	if (wdb_begin(c->dst, err) < 0) return -1;
	if (query_int(c->dst, pg_empty_sql, &n, NULL, err) < 0) goto fail;
	if (n != 0) {
		werr(err, WX_CONFLICT, "copy: %s is not an empty database (%lld relation(s) or function(s) of its own); refusing "
		                       "to write into it (nothing written)", wdb_name(c->dst), (long long)n);
		goto fail;
	}
	if (wdb_exec(c->dst, world_pg_schema, err) < 0) {
		werr_prefix(err, "copy: create the schema in %s", wdb_name(c->dst));
		goto fail;
	}
	if (copy_rows(c, err) < 0) goto fail;
	if (wdb_exec(c->dst, pg_sequences_sql, err) < 0) goto fail;
	if (verify(c, c->dst, WDB_PG, NULL, err) < 0) goto fail;
	if (wdb_commit(c->dst, err) < 0) return werr_prefix(err, "copy: commit into %s", wdb_name(c->dst));
	return 0;
fail: {
	struct world_err ig;
	wdb_rollback(c->dst, &ig);
	return -1;
}
}

static int to_sqlite(struct cp *c, struct world_err *err)
{
	/* a new store of this build, made by the store itself */
	struct world_store *st;
	if (world_store_open(c->db, WORLD_STORE_WRITER, &st, err) < 0) return werr_prefix(err, "copy: create %s", c->db);
	world_store_close(st);
	static const struct wdb_opts wo = { 0 };
	if (wdb_open(c->db, &wo, &c->dst, err) < 0) return -1;
	for (int ti = 0; ti < NTABLES; ti++) {
		char sql[256];
		int64_t n = 0;
		snprintf(sql, sizeof sql, "SELECT count(*) FROM %s", tables[ti].name);
		if (query_int(c->dst, sql, &n, NULL, err) < 0) return -1;
		if (n)
			return werr(err, WX_FAIL, "copy: a new store of this build has %lld row(s) in %s; the copy does not know them",
			            (long long)n, tables[ti].name);
	}
	if (wdb_begin(c->dst, err) < 0) return -1;
	if (copy_rows(c, err) < 0) {
		struct world_err ig;
		wdb_rollback(c->dst, &ig);
		return -1;
	}
	if (wdb_commit(c->dst, err) < 0) return werr_prefix(err, "copy: commit into %s", c->db);
	wdb_close(c->dst);
	c->dst = NULL;
	/* read back in a snapshot of its own */
	static const struct wdb_opts ro = { .flags = WDB_READONLY };
	struct wdb *rb;
	if (wdb_open(c->db, &ro, &rb, err) < 0) return -1;
	int rc = wdb_exec(rb, "BEGIN", err) < 0 ? -1 : verify(c, rb, WDB_SQLITE, c->art, err);
	if (rc == 0) rc = wdb_exec(rb, "COMMIT", err) < 0 ? -1 : 0;
	wdb_close(rb);
	if (rc < 0) return -1;
	/* and scanned in full where it stands */
	if (world_store_open(c->db, WORLD_STORE_READER, &st, err) < 0) return werr_prefix(err, "copy: scan %s", c->db);
	struct world_scan_opts so = { .objects = 1, .effect_record_check = c->o->effect_record_check };
	rc = world_scan(st, &so, c->o->scan_out, &c->out->scan, err);
	world_store_close(st);
	if (rc < 0) return werr_prefix(err, "copy: scan %s", c->db);
	if (c->out->scan.holes || !c->out->scan.complete)
		return werr(err, WX_INTEGRITY, "copy: the copy has %lld integrity hole(s); nothing written at %s",
		            c->out->scan.holes, c->dest);
	c->out->scanned = 1;
	/* the copy is whole in its file: nothing may be left beside it */
	char p[4500];
	struct stat sb;
	snprintf(p, sizeof p, "%s-wal", c->db);
	if (lstat(p, &sb) == 0 && sb.st_size > 0)
		return werr(err, WX_IO, "copy: %s is not empty after the copy was closed; nothing written at %s", p, c->dest);
	static const char *const side[] = { "-wal", "-shm", ".write-queue", "-journal" };
	for (size_t i = 0; i < sizeof side / sizeof side[0]; i++) {
		snprintf(p, sizeof p, "%s%s", c->db, side[i]);
		if (unlink(p) < 0 && errno != ENOENT) return werr(err, WX_IO, "copy: remove %s: %s", p, strerror(errno));
	}
	if (fsync_path(c->db, 0, err) < 0 || fsync_path(c->stage, 1, err) < 0) return -1;
	/* into place: the archive first, the database last */
	if (rename_new(c->art, c->dest_art, err) < 0) return -1;
	c->art_renamed = 1;
	if (rename_new(c->db, c->dest, err) < 0) return -1;
	c->art_renamed = 0;
	if (rmdir(c->stage) < 0) {
		werr(err, WX_IO, "copy: %s is complete, but its staging directory %s could not be removed: %s", c->dest,
		     c->stage, strerror(errno));
		c->stage[0] = 0; /* DEST is complete: keep it */
		return -1;
	}
	c->stage[0] = 0;
	return fsync_path(c->dir, 1, err);
}

static int dest_sqlite_prepare(struct cp *c, const char *dest, struct world_err *err)
{
	char d1[4096], d2[4096];
	if (snprintf(c->dest, sizeof c->dest, "%s", dest) >= (int)sizeof c->dest - 200 ||
	    snprintf(d1, sizeof d1, "%s", dest) >= (int)sizeof d1 || snprintf(d2, sizeof d2, "%s", dest) >= (int)sizeof d2)
		return werr(err, WX_USAGE, "copy: destination path too long: %.200s", dest);
	snprintf(c->dest_art, sizeof c->dest_art, "%s.artifacts", dest);
	const char *dir = dirname(d1), *name = basename(d2);
	if (!*name || strcmp(name, ".") == 0 || strcmp(name, "..") == 0 || strcmp(name, "/") == 0)
		return werr(err, WX_USAGE, "copy: destination %s names no file", dest);
	snprintf(c->dir, sizeof c->dir, "%s", dir);
	struct stat sb;
	if (lstat(dest, &sb) == 0)
		return werr(err, WX_CONFLICT, "copy: %s exists; refusing to overwrite it (nothing written)", dest);
	if (errno != ENOENT) return werr(err, WX_IO, "copy: %s: %s", dest, strerror(errno));
	if (lstat(c->dest_art, &sb) == 0)
		return werr(err, WX_CONFLICT, "copy: %s exists; refusing to overwrite it (nothing written)", c->dest_art);
	if (errno != ENOENT) return werr(err, WX_IO, "copy: %s: %s", c->dest_art, strerror(errno));
	if (stat(dir, &sb) < 0) return werr(err, WX_NOT_FOUND, "copy: destination directory %s: %s", dir, strerror(errno));
	if (!S_ISDIR(sb.st_mode)) return werr(err, WX_NOT_FOUND, "copy: destination directory %s: not a directory", dir);
	snprintf(c->stage, sizeof c->stage, "%s/.%s.copy-XXXXXX", dir, name);
	if (!mkdtemp(c->stage)) {
		int e = errno;
		c->stage[0] = 0;
		return werr(err, WX_IO, "copy: make a staging directory in %s: %s", dir, strerror(e));
	}
	snprintf(c->db, sizeof c->db, "%s/%s", c->stage, name);
	snprintf(c->art, sizeof c->art, "%s/%s.artifacts", c->stage, name);
	return 0;
}

int world_store_copy(const char *src, const char *dest, const struct world_copy_opts *opts,
                     struct world_copy_result *out, struct world_err *err)
{
	static const struct world_copy_opts none;
	if (!opts) opts = &none;
	memset(out, 0, sizeof *out);
	out->ntables = WORLD_COPY_TABLES;
	if (!src || !*src || !dest || !*dest) return werr(err, WX_USAGE, "copy: SRC and DEST are required");
	struct cp *c = calloc(1, sizeof *c);
	if (!c) return werr(err, WX_FAIL, "copy: out of memory");
	c->o = opts;
	c->out = out;
	c->sk = wdb_kind_of(src);
	c->dk = wdb_kind_of(dest);
	int rc = -1;
	/* SRC first (nothing of DEST is made before SRC opens as a store) */
	if (c->sk == WDB_SQLITE) {
		struct stat sb;
		if (stat(src, &sb) < 0) {
			werr(err, errno == ENOENT ? WX_NOT_FOUND : WX_IO, "copy: store %s: %s", src, strerror(errno));
			goto out;
		}
		if (!S_ISREG(sb.st_mode)) {
			werr(err, WX_NOT_STORE, "copy: store %s: not a regular file", src);
			goto out;
		}
		if (snprintf(c->src_art, sizeof c->src_art, "%s.artifacts", src) >= (int)sizeof c->src_art - 200) {
			werr(err, WX_USAGE, "copy: source path too long");
			goto out;
		}
	}
	struct wdb_opts so = { .flags = WDB_READONLY, .password_file = opts->src_password_file };
	if (wdb_open(src, &so, &c->src, err) < 0) goto out;
	snprintf(out->src_name, sizeof out->src_name, "%s", wdb_name(c->src));
	if (c->dk == WDB_PG) {
		struct wdb_opts dop = { .password_file = opts->dest_password_file };
		if (wdb_open(dest, &dop, &c->dst, err) < 0) goto out;
		snprintf(out->dest_name, sizeof out->dest_name, "%s", wdb_name(c->dst));
		rc = to_pg(c, err);
	} else {
		snprintf(out->dest_name, sizeof out->dest_name, "%s", dest);
		if (dest_sqlite_prepare(c, dest, err) < 0) goto out;
		rc = to_sqlite(c, err);
	}
out:
	if (c->src) wdb_close(c->src);
	if (c->dst) wdb_close(c->dst);
	if (rc < 0 && c->dk == WDB_SQLITE) {
		if (c->art_renamed) rm_tree(c->dest_art); /* ours: renamed there by this copy, DEST not yet */
		if (c->stage[0]) rm_tree(c->stage);
	}
	free(c->ip.ref);
	free(c->ip.size);
	free(c);
	return rc;
}
