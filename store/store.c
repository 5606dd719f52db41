/* store/store.c: the store's core -- open and close through the engine
 * (struct ws_engine), statements and transactions on the driver seam,
 * objects, log and worlds, heads, journal, sessions, episodes. See store.h
 * for the contracts. No lock is held between transactions: every write is
 * a short transaction of its own (or runs inside the caller's), queued
 * behind other writers by the engine's write queue. */
#include "store/store_internal.h"
#include "common/canon.h"
#include "tlog/note.h"
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define WORLD_HEAD_NAME "@world" /* the selected world head; registry names cannot start with '@' */

int ws_sqlerr(struct world_store *st, int code, const char *what, struct world_err *err)
{
	/* the driver's class of the last failure (docs/store.md, the table of classes) */
	if (wdb_last_fail(st->wdb) == WDB_RETRY) st->retry_seen = 1;
	return werr(err, code ? code : wdb_last_code(st->wdb, WX_IO), "store %s: %s: %s", st->path, what,
	            wdb_errmsg(st->wdb));
}

int ws_exec(struct world_store *st, const char *sql, struct world_err *err)
{
	if (wdb_exec(st->wdb, sql, NULL) < 0) {
		if (wdb_last_fail(st->wdb) == WDB_RETRY) st->retry_seen = 1;
		return werr(err, wdb_last_code(st->wdb, WX_IO), "store %s: %.60s: %s", st->path, sql, wdb_errmsg(st->wdb));
	}
	return 0;
}

int ws_txn_begin(struct world_store *st, struct world_err *err)
{
	/* the write queue first, then the transaction */
	if (st->eng->queue_lock(st, err) < 0) return -1;
	if (wdb_begin(st->wdb, NULL) < 0) {
		ws_sqlerr(st, 0, st->eng->begin_what, err);
		st->eng->queue_unlock(st);
		return -1;
	}
	return 0;
}

int ws_txn_commit(struct world_store *st, struct world_err *err)
{
	/* the checkpoint of what this transaction appended, signed in it
	 * (store/tree.c): never ahead of the durable log */
	if (st->tree_dirty && ws_tree_presign(st, err) < 0) {
		ws_txn_rollback(st);
		return -1;
	}
	int rc = wdb_commit(st->wdb, NULL) < 0 ? ws_sqlerr(st, 0, st->eng->commit_what, err) : 0;
	if (rc < 0) {
		struct world_err ig;
		wdb_rollback(st->wdb, &ig);
	}
	st->eng->queue_unlock(st);
	return rc;
}

void ws_txn_rollback(struct world_store *st)
{
	struct world_err ig;
	st->tree_dirty = 0;
	wdb_rollback(st->wdb, &ig);
	st->eng->queue_unlock(st);
}

long long ws_last_insert_id(struct world_store *st) { return (long long)wdb_last_insert_id(st->wdb); }

int ws_need_writer(struct world_store *st, const char *what, struct world_err *err)
{
	if (!st->writer)
		return werr(err, WX_USAGE, "%s: store %s was opened read-only (no writer authority)", what, st->path);
	return 0;
}

/* Outside world_store_begin() a write of several statements is its own
 * short BEGIN IMMEDIATE transaction (a SAVEPOINT there would begin a
 * deferred one, whose upgrade to a writer fails at once with SQLITE_BUSY
 * when another process wrote meanwhile, the busy handler never asked);
 * inside one, or nested, it is a savepoint. */
int ws_sp_begin(struct world_store *st, struct world_err *err)
{
	if (!st->in_txn && st->sp_depth == 0) {
		if (ws_txn_begin(st, err) < 0) return -1;
		st->sp_depth = 1;
		st->sp_own = 1;
		return 0;
	}
	if (st->sp_flat) {
		st->sp_depth++;
		return 0;
	}
	if (ws_exec(st, "SAVEPOINT w", err) < 0) return -1;
	st->sp_depth++;
	return 0;
}

int ws_sp_end(struct world_store *st, int ok, struct world_err *err)
{
	struct world_err ignore;
	if (st->sp_depth == 1 && st->sp_own) {
		st->sp_depth = 0;
		st->sp_own = 0;
		/* the durable commit of this write */
		if (!ok) {
			ws_txn_rollback(st);
			return -1;
		}
		return ws_txn_commit(st, err);
	}
	st->sp_depth--;
	if (st->sp_flat) {
		/* nothing to undo here: the whole run is undone (group.c) */
		if (!ok) st->sp_undone++;
		return ok ? 0 : -1;
	}
	if (ok) {
		if (ws_exec(st, "RELEASE w", err) == 0) return 0;
		ws_exec(st, "ROLLBACK TO w", &ignore);
		ws_exec(st, "RELEASE w", &ignore);
		return -1;
	}
	ws_exec(st, "ROLLBACK TO w", &ignore);
	ws_exec(st, "RELEASE w", &ignore);
	return -1;
}

int ws_write_retry(struct world_store *st, int tries)
{
	/* only a write that was its own transaction, on an engine where one
	 * can lose a race, that lost one: a transaction of the caller's
	 * (world_store_begin) is the caller's to run again */
	int max = WS_WRITE_RETRIES;
#ifdef WORLD_TEST_HOOKS
	/* test builds: WORLD_TEST_PG_RETRIES=0 turns the retry off, the
	 * control of tests/store/test_pgstore's forced serialization failure */
	const char *e = getenv("WORLD_TEST_PG_RETRIES");
	if (e && *e >= '0' && *e <= '9' && !e[1]) max = *e - '0';
#endif
	if (!ws_can(st, WS_CAP_RETRY) || st->in_txn || st->sp_depth || !st->retry_seen || tries >= max) return 0;
	st->retry_seen = 0;
	/* jittered, growing: 1 ms doubling to 32 ms, each 50..150% of it, so
	 * writers that collided do not collide again in step */
	long nominal_us = 1000L << (tries < 5 ? tries : 5);
	st->busy_rand = st->busy_rand * 6364136223846793005ULL + 1442695040888963407ULL;
	long us = nominal_us / 2 + (long)((st->busy_rand >> 33) % (unsigned long long)nominal_us);
	struct timespec nap = { us / 1000000, (us % 1000000) * 1000 };
	while (nanosleep(&nap, &nap) < 0 && errno == EINTR) {}
	return 1;
}

void ws_col_ref(struct wdb_stmt *s, int col, char out[WORLD_REF_SIZE])
{
	const char *t = wdb_column_text(s, col);
	out[0] = '\0';
	if (t && strlen(t) < WORLD_REF_SIZE) strcpy(out, t);
}

/* ---- open / close ---- */

int world_wait_lock_parse(const char *s, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (!*s || *end || errno || !isfinite(v) || v < 0 || v > 86400) return -1;
	*out = v;
	return 0;
}

int world_store_open_wait(const char *path, int mode, double wait_lock_s, struct world_store **out,
                          struct world_err *err)
{
	*out = NULL;
	int flags = mode & (WORLD_STORE_NOSYNC | WORLD_STORE_PLAIN_WAL);
	int existing = mode & WORLD_STORE_EXISTING;
	int no_tree = mode & WORLD_STORE_NO_TREE;
	mode &= ~(WORLD_STORE_NOSYNC | WORLD_STORE_EXISTING | WORLD_STORE_PLAIN_WAL | WORLD_STORE_NO_TREE);
	if (!path || !*path) return werr(err, WX_USAGE, "store: no database path given");
	if (mode != WORLD_STORE_WRITER && mode != WORLD_STORE_READER)
		return werr(err, WX_USAGE, "store %s: unknown open mode %d", path, mode);
	if (!(wait_lock_s >= 0) || wait_lock_s > 86400)
		return werr(err, WX_USAGE, "store %s: lock wait %g s out of range 0..86400", path, wait_lock_s);
	struct world_store *st = calloc(1, sizeof *st);
	if (!st || !(st->path = strdup(path))) {
		free(st);
		return werr(err, WX_FAIL, "store %s: out of memory", path);
	}
	ws_stmt_init(st);
	st->eng = ws_engine_of(path);
	st->writer = mode == WORLD_STORE_WRITER;
	st->no_tree = no_tree != 0;
	st->existing = existing != 0;
	/* No lock is held between transactions: a write waits for another
	 * writer's transaction up to the busy timeout (--wait-lock, default 5 s). */
	st->busy_ms = wait_lock_s > 0 ? wait_lock_s * 1000.0 : WORLD_STORE_BUSY_MS_DEFAULT;
	{
		struct timespec seed;
		clock_gettime(CLOCK_MONOTONIC, &seed);
		st->busy_rand = (unsigned long long)seed.tv_nsec ^ ((unsigned long long)getpid() << 32) ^ (uintptr_t)st;
	}
	if (st->eng->open(st, flags, err) < 0) {
		world_store_close(st);
		return -1;
	}
	*out = st;
	return 0;
}

int world_store_open(const char *path, int mode, struct world_store **out, struct world_err *err)
{
	return world_store_open_wait(path, mode, 0, out, err);
}

void world_store_close(struct world_store *st)
{
	if (!st) return;
	if (st->eng->close) st->eng->close(st);
	ws_stmt_fini(st);
	if (st->wdb && st->in_txn) {
		struct world_err ig;
		wdb_rollback(st->wdb, &ig);
	}
	wdb_close(st->wdb);
	note_signer_free(st->signer);
	free(st->path);
	free(st);
}

const char *world_store_path(const struct world_store *st) { return st->path; }
struct sqlite3 *world_store_db(struct world_store *st) { return st->wdb ? wdb_sqlite_raw(st->wdb) : NULL; }

/* Checkpoints off the commit path (store.h): the engine's, where it has them. */
int world_store_checkpoint_thread(struct world_store *st, struct world_err *err)
{
	if (ws_need_writer(st, "checkpoint thread", err) < 0) return -1;
	return st->eng->ckpt_start ? st->eng->ckpt_start(st, err) : 0;
}

void world_store_checkpoint_stats(struct world_store *st, long long *background, long long *inlined,
                                  long long *failed)
{
	long long z[3] = { 0, 0, 0 };
	if (st->eng->ckpt_stats) st->eng->ckpt_stats(st, &z[0], &z[1], &z[2]);
	if (background) *background = z[0];
	if (inlined) *inlined = z[1];
	if (failed) *failed = z[2];
}

int world_store_begin(struct world_store *st, struct world_err *err)
{
	if (ws_need_writer(st, "begin", err) < 0) return -1;
	if (st->in_txn) return werr(err, WX_USAGE, "store %s: transaction already open", st->path);
	if (ws_txn_begin(st, err) < 0) return -1;
	st->in_txn = 1;
	return 0;
}

int world_store_commit(struct world_store *st, struct world_err *err)
{
	if (!st->in_txn) return werr(err, WX_USAGE, "store %s: no transaction open", st->path);
	st->in_txn = 0;
	return ws_txn_commit(st, err);
}

void world_store_rollback(struct world_store *st)
{
	if (!st->in_txn) return;
	st->in_txn = 0;
	ws_txn_rollback(st);
}

/* ---- labels ---- */

static int check_label(const char *what, const char *s, size_t max, int required, struct world_err *err)
{
	if (!s) s = "";
	size_t n = strlen(s);
	if (required && n == 0) return werr(err, WX_BAD_INPUT, "%s: empty", what);
	if (n > max) return werr(err, WX_BAD_INPUT, "%s: %zu bytes, limit %zu", what, n, max);
	for (size_t i = 0; i < n;) {
		unsigned char c = (unsigned char)s[i];
		if (c < 0x20 || c == 0x7f) return werr(err, WX_BAD_INPUT, "%s: control character at byte %zu", what, i);
		size_t k = world_utf8_seq((const unsigned char *)s + i, n - i);
		if (!k) return werr(err, WX_BAD_INPUT, "%s: invalid UTF-8 at byte %zu", what, i);
		i += k;
	}
	return 0;
}

static int check_semantic_id(const char *s, struct world_err *err)
{
	if (!s || !*s) return werr(err, WX_BAD_INPUT, "semanticId: empty");
	size_t n = strlen(s);
	if (n > 256) return werr(err, WX_BAD_INPUT, "semanticId: %zu bytes, limit 256", n);
	for (size_t i = 0; i < n; i++)
		if (s[i] <= 0x20 || s[i] >= 0x7f)
			return werr(err, WX_BAD_INPUT, "semanticId \"%.80s\": byte %zu is not printable ASCII", s, i);
	return 0;
}

/* ---- objects ---- */

int world_object_exists(struct world_store *st, const char *ref, struct world_err *err)
{
	struct wdb_stmt *s;
	if (ws_stmt(st, WORLD_SQL(OBJECT_EXISTS), &s, err) < 0) return -1;
	ws_bind_text(s, 1, ref);
	int rc = wdb_step(s, NULL);
	ws_done(st, s);
	if (rc == WDB_ROW) return 1;
	if (rc == WDB_DONE) return 0;
	return ws_sqlerr(st, 0, "object lookup", err);
}

int world_object_put(struct world_store *st, const char *semantic_id, const char *provenance, const void *payload,
                     size_t len, char ref_out[WORLD_REF_SIZE], int *created, struct world_err *err)
{
	if (created) *created = 0;
	if (ws_need_writer(st, "object put", err) < 0) return -1;
	if (check_semantic_id(semantic_id, err) < 0) return -1;
	if (check_label("provenance", provenance, 4096, 0, err) < 0) return -1;
	if (!payload && len) return werr(err, WX_BAD_INPUT, "object put: no payload");
	char ref[WORLD_REF_SIZE];
	if (world_hash_ref(payload ? payload : "", len, ref, err) < 0) return -1;
	{
		/* One descent of the ref's index, not a lookup and then an insert:
		 * OR IGNORE stores nothing when the ref is there (content
		 * addressing: its row is this one, its semanticId and provenance
		 * the first writer's), and the constraint is checked before
		 * anything is written. */
		struct wdb_stmt *s;
		if (ws_stmt(st, WORLD_SQL(OBJECT_INSERT), &s, err) < 0)
			return -1;
		ws_bind_text(s, 1, ref);
		ws_bind_text(s, 2, semantic_id);
		ws_bind_text(s, 3, provenance ? provenance : "");
		ws_bind_blob(s, 4, payload ? payload : "", len);
		ws_bind_int(s, 5, (int64_t)len);
		ws_bind_int(s, 6, (int64_t)time(NULL));
		int rc = wdb_step(s, NULL);
		/* the count waits for the server's answer (store/db.h): only when asked */
		int added = created && rc == WDB_DONE && wdb_changes(st->wdb) == 1;
		ws_done(st, s);
		if (rc != WDB_DONE) return ws_sqlerr(st, 0, "object insert", err);
		if (created) *created = added;
	}
	memcpy(ref_out, ref, WORLD_REF_SIZE);
	return 0;
}

int world_object_put_json(struct world_store *st, const char *semantic_id, const char *provenance, const json_t *v,
                          char ref_out[WORLD_REF_SIZE], struct world_err *err)
{
	size_t n;
	char *c = world_canon_json(v, &n, err);
	if (!c) return -1;
	int rc = world_object_put(st, semantic_id, provenance, c, n, ref_out, NULL, err);
	free(c);
	return rc;
}

int world_object_get(struct world_store *st, const char *ref, struct world_object *out, struct world_err *err)
{
	memset(out, 0, sizeof *out);
	if (world_ref_parse(ref, "object ref", NULL, err) < 0) return -1;
	struct wdb_stmt *s;
	if (ws_stmt(st, WORLD_SQL(OBJECT_GET), &s, err) < 0) return -1;
	ws_bind_text(s, 1, ref);
	int rc = wdb_step(s, NULL);
	if (rc == WDB_DONE) {
		ws_done(st, s);
		return werr(err, WX_NOT_FOUND, "object %s: not found", ref);
	}
	if (rc != WDB_ROW) {
		ws_done(st, s);
		return ws_sqlerr(st, 0, "object read", err);
	}
	size_t n;
	const void *p = wdb_column_blob(s, 2, &n);
	char got[WORLD_REF_SIZE];
	if (world_hash_ref(p ? p : "", n, got, err) < 0) { ws_done(st, s); return -1; }
	if (strcmp(got, ref) != 0) {
		ws_done(st, s);
		return werr(err, WX_INTEGRITY, "object %s: integrity hole: stored payload hashes to %s", ref, got);
	}
	const char *sid = (const char *)wdb_column_text(s, 0);
	const char *prov = (const char *)wdb_column_text(s, 1);
	out->semantic_id = strdup(sid ? sid : "");
	out->provenance = strdup(prov ? prov : "");
	out->payload = malloc(n + 1);
	if (!out->semantic_id || !out->provenance || !out->payload) {
		ws_done(st, s);
		world_object_free(out);
		return werr(err, WX_FAIL, "object %s: out of memory", ref);
	}
	if (n) memcpy(out->payload, p, n);
	out->payload[n] = 0;
	out->len = n;
	memcpy(out->ref, ref, WORLD_REF_SIZE);
	ws_done(st, s);
	return 0;
}

void world_object_free(struct world_object *o)
{
	if (!o) return;
	free(o->semantic_id);
	free(o->provenance);
	free(o->payload);
	memset(o, 0, sizeof *o);
}

/* ---- log entries ---- */

/* Canonical JSON of the seven hashed fields (and entryHash when non-NULL).
 * Keys are written in canonical (bytewise) order; refs and integers need no
 * escaping, and writtenBy goes through the canonicaliser when it holds a
 * character that needs escaping. */
static char *entry_json(long long index, long long epoch, const char *fn, const char *interp, const char *prev,
                        const char *written_by, const char *tref, const char *entry_hash, size_t *len)
{
	char *wb = NULL;
	size_t wbn;
	if (strpbrk(written_by, "\\\"")) {
		json_t *s = json_string(written_by);
		wb = s ? world_canon_json(s, &wbn, NULL) : NULL;
		json_decref(s);
		if (!wb) return NULL;
	}
	char prevbuf[WORLD_REF_SIZE + 2];
	if (prev && *prev) snprintf(prevbuf, sizeof prevbuf, "\"%s\"", prev);
	else strcpy(prevbuf, "null");
	size_t cap = 512 + strlen(written_by) * 6 + 8;
	char *out = malloc(cap);
	if (!out) { free(wb); return NULL; }
	char hashpart[WORLD_REF_SIZE + 20] = "";
	if (entry_hash) snprintf(hashpart, sizeof hashpart, "\"entryHash\":\"%s\",", entry_hash);
	int n = snprintf(out, cap,
	                 "{%s\"entryIndex\":%lld,\"interpreter\":\"%s\",\"prevEntryHash\":%s,\"semanticsEpoch\":%lld,"
	                 "\"transitionFn\":\"%s\",\"transitionRef\":\"%s\",\"writtenBy\":%s%s%s}",
	                 hashpart, index, interp, prevbuf, epoch, fn, tref, wb ? "" : "\"", wb ? wb : written_by,
	                 wb ? "" : "\"");
	free(wb);
	if (n < 0 || (size_t)n >= cap) { free(out); return NULL; }
	*len = (size_t)n;
	return out;
}

void ws_log_row_read(struct wdb_stmt *s, struct ws_log_row *r)
{
	r->index = wdb_column_int64(s, 0, NULL);
	r->epoch = wdb_column_int64(s, 1, NULL);
	r->hash = (const char *)wdb_column_text(s, 2);
	r->prev = (const char *)wdb_column_text(s, 3);
	r->fn = (const char *)wdb_column_text(s, 4);
	r->interp = (const char *)wdb_column_text(s, 5);
	r->written_by = (const char *)wdb_column_text(s, 6);
	r->tref = (const char *)wdb_column_text(s, 7);
	r->json = wdb_column_blob(s, 8, &r->json_len);
}

static int str_is(json_t *o, const char *key, const char *want)
{
	json_t *v = json_object_get(o, key);
	if (!want) return json_is_null(v);
	return json_is_string(v) && strcmp(json_string_value(v), want) == 0 && strlen(want) == json_string_length(v);
}

static int int_is(json_t *o, const char *key, long long want)
{
	json_t *v = json_object_get(o, key);
	return json_is_integer(v) && json_integer_value(v) == want;
}

static int column_refs_valid(const struct ws_log_row *r)
{
	return world_ref_valid(r->fn) && world_ref_valid(r->interp) && world_ref_valid(r->tref) &&
	       world_ref_valid(r->hash) && (!r->prev || world_ref_valid(r->prev));
}

/* Slow path: name the field whose column disagrees with the stored JSON. */
static const char *log_row_diagnose(const struct ws_log_row *r)
{
	if (!world_canon_is_canonical(r->json, r->json_len)) return "entry";
	json_t *o = world_json_parse(r->json, r->json_len, NULL);
	if (!json_is_object(o) || json_object_size(o) != 8) { json_decref(o); return "entry"; }
	const char *bad = "entry";
	if (!int_is(o, "entryIndex", r->index)) bad = "entryIndex";
	else if (!int_is(o, "semanticsEpoch", r->epoch)) bad = "semanticsEpoch";
	else if (!str_is(o, "transitionFn", r->fn) || !world_ref_valid(r->fn)) bad = "transitionFn";
	else if (!str_is(o, "interpreter", r->interp) || !world_ref_valid(r->interp)) bad = "interpreter";
	else if (!str_is(o, "prevEntryHash", r->prev) || (r->prev && !world_ref_valid(r->prev))) bad = "prevEntryHash";
	else if (!str_is(o, "writtenBy", r->written_by)) bad = "writtenBy";
	else if (!str_is(o, "transitionRef", r->tref) || !world_ref_valid(r->tref)) bad = "transitionRef";
	else if (!str_is(o, "entryHash", r->hash)) bad = "entryHash";
	json_decref(o);
	return bad;
}

const char *ws_log_row_check(const struct ws_log_row *r)
{
	if (!r->hash || !r->fn || !r->interp || !r->written_by || !r->tref || !r->json) return "entry";
	/* Fast path: the stored JSON must be exactly what the columns describe. */
	size_t n;
	char *c = column_refs_valid(r) ? entry_json(r->index, r->epoch, r->fn, r->interp, r->prev, r->written_by,
	                                            r->tref, r->hash, &n)
	                               : NULL;
	int same = c && n == r->json_len && memcmp(c, r->json, n) == 0;
	if (!same) {
		free(c);
		return log_row_diagnose(r);
	}
	/* ... and entryHash must be the hash of the seven fields: the same
	 * text without its first member, "entryHash":"<ref>", (86 bytes, the
	 * ref being valid), so "{" and the rest, without writing it again */
	c[86] = '{';
	char h[WORLD_REF_SIZE];
	int hok = world_hash_ref(c + 86, n - 86, h, NULL) == 0;
	free(c);
	if (!hok || strcmp(h, r->hash) != 0) return "entryHash";
	return NULL;
}

int world_log_last(struct world_store *st, long long *index, char entry_hash[WORLD_REF_SIZE], struct world_err *err)
{
	struct wdb_stmt *s;
	if (ws_stmt(st, WORLD_SQL(LOG_LAST), &s, err) < 0)
		return -1;
	int rc = wdb_step(s, NULL);
	*index = 0;
	entry_hash[0] = '\0';
	if (rc == WDB_ROW) {
		*index = wdb_column_int64(s, 0, NULL);
		ws_col_ref(s, 1, entry_hash);
	} else if (rc != WDB_DONE) {
		ws_done(st, s);
		return ws_sqlerr(st, 0, "log head", err);
	}
	ws_done(st, s);
	return 0;
}

static int head_read(struct world_store *st, const char *name, char ref[WORLD_REF_SIZE], long long *revision,
                     struct world_err *err)
{
	struct wdb_stmt *s;
	if (ws_stmt(st, WORLD_SQL(HEAD_GET), &s, err) < 0) return -1;
	ws_bind_text(s, 1, name);
	int rc = wdb_step(s, NULL);
	ref[0] = '\0';
	if (revision) *revision = 0;
	if (rc == WDB_ROW) {
		ws_col_ref(s, 0, ref);
		if (revision) *revision = wdb_column_int64(s, 1, NULL);
	} else if (rc != WDB_DONE) {
		ws_done(st, s);
		return ws_sqlerr(st, 0, "head read", err);
	}
	ws_done(st, s);
	return 0;
}

static int head_write(struct world_store *st, const char *name, const char *ref, long long revision,
                      struct world_err *err)
{
	struct wdb_stmt *s;
	if (ws_stmt(st, WORLD_SQL(HEAD_PUT), &s, err) < 0)
		return -1;
	ws_bind_text(s, 1, name);
	ws_bind_text(s, 2, ref);
	ws_bind_int(s, 3, revision);
	ws_bind_int(s, 4, (int64_t)time(NULL));
	int rc = wdb_step(s, NULL);
	ws_done(st, s);
	if (rc != WDB_DONE) return ws_sqlerr(st, 0, "head write", err);
	return 0;
}

/* The log's last entry, the selected world head and whether object ref
 * (NULL: none asked) is stored, read in one statement (LOG_TIP). */
static int log_tip(struct world_store *st, long long *last, char last_hash[WORLD_REF_SIZE], char head[WORLD_REF_SIZE],
                   long long *head_rev, const char *ref, int *have, struct world_err *err)
{
	struct wdb_stmt *s;
	if (ws_stmt(st, WORLD_SQL(LOG_TIP), &s, err) < 0) return -1;
	ws_bind_text(s, 1, WORLD_HEAD_NAME);
	if (ref) ws_bind_text(s, 2, ref);
	else ws_bind_null(s, 2);
	int rc = wdb_step(s, NULL);
	if (rc != WDB_ROW) {
		ws_done(st, s);
		return ws_sqlerr(st, 0, "log head", err);
	}
	*last = wdb_column_int64(s, 0, NULL);
	ws_col_ref(s, 1, last_hash);
	ws_col_ref(s, 2, head);
	if (head_rev) *head_rev = wdb_column_int64(s, 3, NULL);
	if (have) *have = wdb_column_int64(s, 4, NULL) == 1;
	ws_done(st, s);
	return 0;
}

int world_log_next(struct world_store *st, long long *index, char prev[WORLD_REF_SIZE], char world[WORLD_REF_SIZE],
                   struct world_err *err)
{
	long long last;
	if (log_tip(st, &last, prev, world, NULL, NULL, NULL, err) < 0) return -1;
	*index = last + 1;
	return 0;
}

/* The entry's transitionRef must be an invocation record (docs/design.md §6.3)
 * whose transitionFn, interpreter and semanticsEpoch are the header's and
 * whose output is the stateRoot: the store refuses a log entry that does not
 * say what it ran. */
static int record_matches(struct world_store *st, const struct world_log_append *a, int have_root, struct world_err *err)
{
	struct world_object o;
	if (world_object_get(st, a->transition_ref, &o, err) < 0) {
		if (err && err->code == WX_NOT_FOUND)
			return werr(err, WX_NOT_FOUND, "log append: transitionRef %s: object not stored", a->transition_ref);
		return werr_prefix(err, "log append: transitionRef");
	}
	if (!have_root) {
		world_object_free(&o);
		return werr(err, WX_NOT_FOUND, "log append: stateRoot %s: object not stored", a->state_root);
	}
	int rc = -1;
	json_t *r = NULL;
	if (strcmp(o.semantic_id, "world/invocation-record/v1") != 0 && strcmp(o.semantic_id, "world/invocation-record/v2") != 0) {
		werr(err, WX_BAD_INPUT, "log append: transitionRef %s is a %s, not an invocation record "
		     "(world/invocation-record/v1 or v2)", a->transition_ref, o.semantic_id);
		goto out;
	}
	r = world_json_parse((const char *)o.payload, o.len, err);
	if (!r) { werr_prefix(err, "log append: invocation record %s", a->transition_ref); goto out; }
	const char *fn = json_string_value(json_object_get(r, "transitionFn"));
	const char *in = json_string_value(json_object_get(r, "interpreter"));
	const char *out = json_string_value(json_object_get(r, "output"));
	json_t *ep = json_object_get(r, "semanticsEpoch");
	if (!fn || strcmp(fn, a->transition_fn) != 0)
		werr(err, WX_BAD_INPUT, "log append: invocation record %s names transitionFn %s, the entry %s", a->transition_ref,
		     fn ? fn : "(none)", a->transition_fn);
	else if (!in || strcmp(in, a->interpreter) != 0)
		werr(err, WX_BAD_INPUT, "log append: invocation record %s names interpreter %s, the entry %s", a->transition_ref,
		     in ? in : "(none)", a->interpreter);
	else if (!json_is_integer(ep) || json_integer_value(ep) != a->semantics_epoch)
		werr(err, WX_BAD_INPUT, "log append: invocation record %s names semanticsEpoch %lld, the entry %lld",
		     a->transition_ref, (long long)json_integer_value(ep), a->semantics_epoch);
	else if (!out || strcmp(out, a->state_root) != 0)
		werr(err, WX_BAD_INPUT, "log append: invocation record %s names output %s, not the stateRoot %s",
		     a->transition_ref, out ? out : "(none)", a->state_root);
	else
		rc = 0;
out:
	json_decref(r);
	world_object_free(&o);
	return rc;
}

static int log_append_body(struct world_store *st, const struct world_log_append *a, struct world_log_result *out,
                           struct world_err *err)
{
	long long last, cur_rev;
	char last_hash[WORLD_REF_SIZE], cur[WORLD_REF_SIZE];
	int have_root;
	if (log_tip(st, &last, last_hash, cur, &cur_rev, a->state_root, &have_root, err) < 0) return -1;
	if (a->entry_index != last + 1)
		return werr(err, WX_CONFLICT, "log append: entryIndex %lld does not follow the log head %lld (want %lld)",
		            a->entry_index, last, last + 1);
	const char *prev = a->prev_entry_hash && *a->prev_entry_hash ? a->prev_entry_hash : NULL;
	if (last == 0 && prev)
		return werr(err, WX_CONFLICT, "log append: prevEntryHash %s given for the first entry (want null)", prev);
	if (last > 0 && (!prev || strcmp(prev, last_hash) != 0))
		return werr(err, WX_CONFLICT, "log append: prevEntryHash %s is not the entryHash %s of entry %lld",
		            prev ? prev : "null", last_hash, last);
	const char *expect = a->expected_world ? a->expected_world : "";
	if (strcmp(cur, expect) != 0)
		return werr(err, WX_CONFLICT, "log append: selected world head is %s, not the expected %s",
		            *cur ? cur : "(none)", *expect ? expect : "(none)");
	/* the transitionRef's presence is record_matches' read of it */
	if (record_matches(st, a, have_root, err) < 0) return -1;

	size_t n;
	char *c = entry_json(a->entry_index, a->semantics_epoch, a->transition_fn, a->interpreter, prev, a->written_by,
	                     a->transition_ref, NULL, &n);
	if (!c) return werr(err, WX_FAIL, "log append: cannot build entry JSON");
	char h[WORLD_REF_SIZE];
	int hr = world_hash_ref(c, n, h, err);
	free(c);
	if (hr < 0) return -1;
	c = entry_json(a->entry_index, a->semantics_epoch, a->transition_fn, a->interpreter, prev, a->written_by,
	               a->transition_ref, h, &n);
	if (!c) return werr(err, WX_FAIL, "log append: cannot build entry JSON");
	struct wdb_stmt *s;
	if (ws_stmt(st, WORLD_SQL(LOG_INSERT),
	            &s, err) < 0) {
		free(c);
		return -1;
	}
	ws_bind_int(s, 1, a->entry_index);
	ws_bind_int(s, 2, a->semantics_epoch);
	ws_bind_text(s, 3, h);
	if (prev) ws_bind_text(s, 4, prev);
	else ws_bind_null(s, 4);
	ws_bind_text(s, 5, a->transition_fn);
	ws_bind_text(s, 6, a->interpreter);
	ws_bind_text(s, 7, a->written_by);
	ws_bind_text(s, 8, a->transition_ref);
	ws_bind_blob(s, 9, c, n);
	ws_bind_int(s, 10, (int64_t)time(NULL));
	int rc = wdb_step(s, NULL);
	ws_done(st, s);
	if (rc != WDB_DONE) {
		free(c);
		return ws_sqlerr(st, 0, "log entry insert", err);
	}
	/* the log's Merkle tree (store/tree.c): leaf entry_index - 1 is this
	 * entry's canonical JSON as stored, its hashes in this transaction */
	unsigned char leaf[32] = { 0 };
	rc = st->version >= 3 && !st->no_tree ? ws_tree_append(st, a->entry_index, c, n, leaf, err) : 0;
	free(c);
	if (rc < 0) return -1;

	char wj[WORLD_WORLD_JSON_SIZE], wref[WORLD_REF_SIZE];
	if (world_world_ref(a->entry_index, a->state_root, h, wj, wref, err) < 0) return -1;
	if (ws_stmt(st, WORLD_SQL(WORLD_INSERT), &s, err) < 0)
		return -1;
	ws_bind_text(s, 1, wref);
	ws_bind_int(s, 2, a->entry_index);
	ws_bind_text(s, 3, a->state_root);
	ws_bind_text(s, 4, h);
	ws_bind_blob(s, 5, wj, strlen(wj));
	rc = wdb_step(s, NULL);
	ws_done(st, s);
	if (rc != WDB_DONE) return ws_sqlerr(st, 0, "world insert", err);
	if (head_write(st, WORLD_HEAD_NAME, wref, cur_rev + 1, err) < 0) return -1;
	if (out) {
		out->entry_index = a->entry_index;
		memcpy(out->entry_hash, h, WORLD_REF_SIZE);
		memcpy(out->world_ref, wref, WORLD_REF_SIZE);
		memcpy(out->leaf_hash, leaf, sizeof leaf);
	}
	return 0;
}

int world_log_append(struct world_store *st, const struct world_log_append *a, struct world_log_result *out,
                     struct world_err *err)
{
	if (ws_need_writer(st, "log append", err) < 0) return -1;
	if (a->entry_index < 1) return werr(err, WX_BAD_INPUT, "log append: entryIndex %lld: must be >= 1", a->entry_index);
	if (a->semantics_epoch < 1)
		return werr(err, WX_BAD_INPUT, "log append: semanticsEpoch %lld: must be >= 1", a->semantics_epoch);
	if (world_ref_parse(a->transition_fn, "transitionFn", NULL, err) < 0 ||
	    world_ref_parse(a->interpreter, "interpreter", NULL, err) < 0 ||
	    world_ref_parse(a->transition_ref, "transitionRef", NULL, err) < 0 ||
	    world_ref_parse(a->state_root, "stateRoot", NULL, err) < 0)
		return -1;
	if (a->prev_entry_hash && *a->prev_entry_hash &&
	    world_ref_parse(a->prev_entry_hash, "prevEntryHash", NULL, err) < 0)
		return -1;
	if (a->expected_world && *a->expected_world &&
	    world_ref_parse(a->expected_world, "expected world", NULL, err) < 0)
		return -1;
	if (check_label("writtenBy", a->written_by, 256, 1, err) < 0) return -1;
	WS_WRITE(st, err, log_append_body(st, a, out, err));
}

int world_log_get(struct world_store *st, long long index, struct world_log_entry *out, struct world_err *err)
{
	memset(out, 0, sizeof *out);
	struct wdb_stmt *s;
	if (ws_stmt(st, WORLD_SQL(LOG_GET), &s, err) < 0) return -1;
	ws_bind_int(s, 1, index);
	int rc = wdb_step(s, NULL);
	if (rc == WDB_DONE) {
		ws_done(st, s);
		return werr(err, WX_NOT_FOUND, "log entry %lld: not found", index);
	}
	if (rc != WDB_ROW) {
		ws_done(st, s);
		return ws_sqlerr(st, 0, "log entry read", err);
	}
	struct ws_log_row r;
	ws_log_row_read(s, &r);
	const char *bad = ws_log_row_check(&r);
	if (bad) {
		ws_done(st, s);
		return werr(err, WX_INTEGRITY, "log entry %lld: integrity hole in field %s", index, bad);
	}
	out->entry_index = r.index;
	out->semantics_epoch = r.epoch;
	snprintf(out->transition_fn, WORLD_REF_SIZE, "%s", r.fn);
	snprintf(out->interpreter, WORLD_REF_SIZE, "%s", r.interp);
	snprintf(out->prev_entry_hash, WORLD_REF_SIZE, "%s", r.prev ? r.prev : "");
	snprintf(out->transition_ref, WORLD_REF_SIZE, "%s", r.tref);
	snprintf(out->entry_hash, WORLD_REF_SIZE, "%s", r.hash);
	out->written_by = strdup(r.written_by);
	out->json = malloc(r.json_len + 1);
	if (out->json) {
		memcpy(out->json, r.json, r.json_len);
		out->json[r.json_len] = 0;
	}
	out->json_len = r.json_len;
	ws_done(st, s);
	if (!out->written_by || !out->json) {
		world_log_entry_free(out);
		return werr(err, WX_FAIL, "log entry %lld: out of memory", index);
	}
	/* the chain link to the previous entry must hold too */
	if (index > 1) {
		char prev_hash[WORLD_REF_SIZE];
		if (ws_stmt(st, WORLD_SQL(LOG_HASH_AT), &s, err) < 0) {
			world_log_entry_free(out);
			return -1;
		}
		ws_bind_int(s, 1, index - 1);
		rc = wdb_step(s, NULL);
		prev_hash[0] = 0;
		if (rc == WDB_ROW) ws_col_ref(s, 0, prev_hash);
		ws_done(st, s);
		if (strcmp(prev_hash, out->prev_entry_hash) != 0) {
			world_log_entry_free(out);
			return werr(err, WX_INTEGRITY, "log entry %lld: integrity hole in field prevEntryHash", index);
		}
	}
	return 0;
}

void world_log_entry_free(struct world_log_entry *e)
{
	if (!e) return;
	free(e->written_by);
	free(e->json);
	memset(e, 0, sizeof *e);
}

/* ---- worlds ---- */

void ws_world_row_read(struct wdb_stmt *s, struct ws_world_row *r)
{
	r->ref = (const char *)wdb_column_text(s, 0);
	r->revision = wdb_column_int64(s, 1, NULL);
	r->state_root = (const char *)wdb_column_text(s, 2);
	r->log_head = (const char *)wdb_column_text(s, 3);
	r->json = wdb_column_blob(s, 4, &r->json_len);
}

const char *ws_world_row_check(const struct ws_world_row *r)
{
	if (!r->ref || !r->state_root || !r->log_head || !r->json) return "payload";
	if (!world_ref_valid(r->state_root)) return "stateRoot";
	if (!world_ref_valid(r->log_head)) return "logHead";
	char want[WORLD_WORLD_JSON_SIZE];
	if (world_world_ref(r->revision, r->state_root, r->log_head, want, NULL, NULL) < 0) return "payload";
	if (strlen(want) != r->json_len || memcmp(want, r->json, r->json_len) != 0) {
		/* say which column disagrees with the payload */
		json_t *o = world_json_parse(r->json, r->json_len, NULL);
		const char *bad = "payload";
		if (json_is_object(o)) {
			if (!int_is(o, "revision", r->revision)) bad = "revision";
			else if (!str_is(o, "stateRoot", r->state_root)) bad = "stateRoot";
			else if (!str_is(o, "logHead", r->log_head)) bad = "logHead";
		}
		json_decref(o);
		return bad;
	}
	char h[WORLD_REF_SIZE];
	if (world_hash_ref(r->json, r->json_len, h, NULL) < 0 || strcmp(h, r->ref) != 0) return "ref";
	return NULL;
}

int world_world_get(struct world_store *st, const char *ref, struct world_world *out, struct world_err *err)
{
	memset(out, 0, sizeof *out);
	if (world_ref_parse(ref, "world ref", NULL, err) < 0) return -1;
	struct wdb_stmt *s;
	if (ws_stmt(st, WORLD_SQL(WORLD_GET), &s, err) < 0) return -1;
	ws_bind_text(s, 1, ref);
	int rc = wdb_step(s, NULL);
	if (rc == WDB_DONE) {
		ws_done(st, s);
		return werr(err, WX_NOT_FOUND, "world %s: not found", ref);
	}
	if (rc != WDB_ROW) {
		ws_done(st, s);
		return ws_sqlerr(st, 0, "world read", err);
	}
	struct ws_world_row r;
	ws_world_row_read(s, &r);
	const char *bad = ws_world_row_check(&r);
	if (bad) {
		ws_done(st, s);
		return werr(err, WX_INTEGRITY, "world %s: integrity hole in field %s", ref, bad);
	}
	snprintf(out->ref, WORLD_REF_SIZE, "%s", r.ref);
	out->revision = r.revision;
	snprintf(out->state_root, WORLD_REF_SIZE, "%s", r.state_root);
	snprintf(out->log_head, WORLD_REF_SIZE, "%s", r.log_head);
	snprintf(out->json, sizeof out->json, "%.*s", (int)r.json_len, r.json);
	ws_done(st, s);
	return 0;
}

int world_head_get(struct world_store *st, struct world_world *out, struct world_err *err)
{
	char ref[WORLD_REF_SIZE];
	if (head_read(st, WORLD_HEAD_NAME, ref, NULL, err) < 0) return -1;
	if (!*ref) {
		memset(out, 0, sizeof *out);
		return werr(err, WX_NOT_FOUND, "world head: no entry committed yet");
	}
	return world_world_get(st, ref, out, err);
}

/* ---- registry heads ---- */

static int check_registry_name(const char *name, struct world_err *err)
{
	if (!name || !*name) return werr(err, WX_BAD_INPUT, "registry head: empty name");
	size_t n = strlen(name);
	if (n > 128) return werr(err, WX_BAD_INPUT, "registry head \"%.40s...\": name longer than 128 bytes", name);
	for (size_t i = 0; i < n; i++) {
		char c = name[i];
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '/' || c == '-'))
			return werr(err, WX_BAD_INPUT, "registry head \"%s\": byte %zu not in [a-z0-9_./-]", name, i);
	}
	return 0;
}

int world_registry_head_get(struct world_store *st, const char *name, char ref[WORLD_REF_SIZE], long long *revision,
                            struct world_err *err)
{
	if (check_registry_name(name, err) < 0) return -1;
	if (head_read(st, name, ref, revision, err) < 0) return -1;
	if (!*ref) return werr(err, WX_NOT_FOUND, "registry head %s: none yet", name);
	return 0;
}

static int registry_cas_body(struct world_store *st, const char *name, const char *expected, const char *new_ref,
                             long long *revision, struct world_err *err)
{
	char cur[WORLD_REF_SIZE];
	long long rev;
	if (head_read(st, name, cur, &rev, err) < 0) return -1;
	const char *exp = expected ? expected : "";
	if (strcmp(cur, exp) != 0)
		return werr(err, WX_CONFLICT, "registry head %s: is %s, not the expected %s; nothing written", name,
		            *cur ? cur : "(none)", *exp ? exp : "(none)");
	int have = world_object_exists(st, new_ref, err);
	if (have < 0) return -1;
	if (!have) return werr(err, WX_NOT_FOUND, "registry head %s: new head %s: object not stored", name, new_ref);
	if (head_write(st, name, new_ref, rev + 1, err) < 0) return -1;
	if (revision) *revision = rev + 1;
	return 0;
}

int world_registry_head_cas(struct world_store *st, const char *name, const char *expected, const char *new_ref,
                            long long *revision, struct world_err *err)
{
	if (ws_need_writer(st, "registry head", err) < 0) return -1;
	if (check_registry_name(name, err) < 0) return -1;
	if (expected && *expected && world_ref_parse(expected, "expected head", NULL, err) < 0) return -1;
	if (world_ref_parse(new_ref, "new head", NULL, err) < 0) return -1;
	WS_WRITE(st, err, registry_cas_body(st, name, expected, new_ref, revision, err));
}

/* ---- journal ---- */

static void bind_opt(struct wdb_stmt *s, int i, const char *v)
{
	if (v) ws_bind_text(s, i, v);
	else ws_bind_null(s, i);
}

int world_journal_intent(struct world_store *st, const struct world_journal_intent *in, long long *id,
                         struct world_err *err)
{
	if (ws_need_writer(st, "journal intent", err) < 0) return -1;
	if (!in->kind || (strcmp(in->kind, "invocation") != 0 && strcmp(in->kind, "effect") != 0))
		return werr(err, WX_BAD_INPUT, "journal intent: kind \"%s\": want invocation or effect",
		            in->kind ? in->kind : "");
	if (check_label("journal intent subject", in->subject, 1024, 1, err) < 0) return -1;
	if (in->cost < 0) return werr(err, WX_BAD_INPUT, "journal intent %s: cost %lld is negative", in->subject, in->cost);
	if (in->ref && world_ref_parse(in->ref, "journal intent ref", NULL, err) < 0) return -1;
	struct wdb_stmt *s;
	if (ws_stmt(st, WORLD_SQL(JOURNAL_INTENT), &s, err) < 0)
		return -1;
	ws_bind_text(s, 1, in->kind);
	ws_bind_text(s, 2, in->subject);
	bind_opt(s, 3, in->episode);
	bind_opt(s, 4, in->effect);
	bind_opt(s, 5, in->scope);
	ws_bind_int(s, 6, in->cost);
	bind_opt(s, 7, in->ref);
	ws_bind_int(s, 8, (int64_t)time(NULL));
	int rc = wdb_step(s, NULL);
	long long rid = 0;
	/* PostgreSQL's text says RETURNING id (sql.c); SQLite's counts it */
	if (rc == WDB_ROW) {
		rid = wdb_column_int64(s, 0, NULL);
		rc = WDB_DONE;
	} else if (rc == WDB_DONE) {
		rid = ws_last_insert_id(st);
	}
	ws_done(st, s);
	if (rc != WDB_DONE) return ws_sqlerr(st, 0, "journal intent insert", err);
	if (id) *id = rid;
	return 0;
}

static int outcome_body(struct world_store *st, long long intent_id, const char *status, const char *ref,
                        struct world_err *err)
{
	struct wdb_stmt *s;
	if (ws_stmt(st, WORLD_SQL(JOURNAL_INTENT_GET), &s, err) < 0)
		return -1;
	ws_bind_int(s, 1, intent_id);
	int rc = wdb_step(s, NULL);
	if (rc != WDB_ROW) {
		ws_done(st, s);
		if (rc == WDB_DONE) return werr(err, WX_NOT_FOUND, "journal outcome: intent %lld not found", intent_id);
		return ws_sqlerr(st, 0, "journal read", err);
	}
	char kind[32], subject[1100];
	snprintf(kind, sizeof kind, "%s", (const char *)wdb_column_text(s, 0));
	snprintf(subject, sizeof subject, "%s", (const char *)wdb_column_text(s, 1));
	int have = (int)wdb_column_int64(s, 2, NULL);
	ws_done(st, s);
	if (have) return werr(err, WX_CONFLICT, "journal outcome: intent %lld (%s) already has an outcome", intent_id, subject);
	if (ws_stmt(st, WORLD_SQL(JOURNAL_OUTCOME), &s, err) < 0)
		return -1;
	ws_bind_int(s, 1, intent_id);
	ws_bind_text(s, 2, kind);
	ws_bind_text(s, 3, subject);
	ws_bind_text(s, 4, status);
	bind_opt(s, 5, ref);
	ws_bind_int(s, 6, (int64_t)time(NULL));
	rc = wdb_step(s, NULL);
	ws_done(st, s);
	/* the only constraint left to fail is journal_one_commit */
	if (rc == WDB_CONFLICT && strcmp(status, "committed") == 0)
		return werr(err, WX_CONFLICT, "journal outcome: %s %s already committed (intent %lld not committed)", kind,
		            subject, intent_id);
	if (rc != WDB_DONE) return ws_sqlerr(st, 0, "journal outcome insert", err);
	return 0;
}

int world_journal_outcome(struct world_store *st, long long intent_id, const char *status, const char *ref,
                          struct world_err *err)
{
	if (ws_need_writer(st, "journal outcome", err) < 0) return -1;
	if (!status || (strcmp(status, "succeeded") != 0 && strcmp(status, "failed") != 0 &&
	                strcmp(status, "committed") != 0 && strcmp(status, "cancelled") != 0))
		return werr(err, WX_BAD_INPUT, "journal outcome: status \"%s\": want succeeded, failed, committed or cancelled",
		            status ? status : "");
	if (ref && world_ref_parse(ref, "journal outcome ref", NULL, err) < 0) return -1;
	WS_WRITE(st, err, outcome_body(st, intent_id, status, ref, err));
}

int world_journal_spent(struct world_store *st, const char *episode, const char *effect, const char *scope,
                        long long *spent, struct world_err *err)
{
	struct wdb_stmt *s;
	/* a store no writer of this build opened has no running totals
	 * (store/db_sqlite_schema.c): its readers sum the journal */
	if (ws_stmt(st, WORLD_SQL(JOURNAL_SPENT), &s, NULL) < 0 && ws_stmt(st, WORLD_SQL(JOURNAL_SPENT_SUM), &s, err) < 0)
		return -1;
	bind_opt(s, 1, episode);
	bind_opt(s, 2, effect);
	bind_opt(s, 3, scope);
	int rc = wdb_step(s, NULL);
	if (rc != WDB_ROW) {
		ws_done(st, s);
		return ws_sqlerr(st, 0, "journal sum", err);
	}
	*spent = wdb_column_int64(s, 0, NULL);
	ws_done(st, s);
	return 0;
}

int world_objects_of_kind(struct world_store *st, const char *semantic_id, long long since,
                          int (*fn)(void *ctx, const char *ref, long long created_at), void *ctx,
                          struct world_err *err)
{
	if (check_label("semanticId", semantic_id, 256, 1, err) < 0) return -1;
	struct wdb_stmt *s;
	/* its own statement: fn may use the handle's cached ones meanwhile */
	if (ws_prep(st, WORLD_SQL(OBJECTS_OF_KIND), &s, err) < 0) return -1;
	ws_bind_text(s, 1, semantic_id);
	ws_bind_int(s, 2, since);
	int rc, stop = 0;
	while (!stop && (rc = wdb_step(s, NULL)) == WDB_ROW)
		stop = fn(ctx, (const char *)wdb_column_text(s, 0), wdb_column_int64(s, 1, NULL)) != 0;
	wdb_finalize(s);
	if (!stop && rc != WDB_DONE) return ws_sqlerr(st, 0, "objects of a kind", err);
	return 0;
}

int world_journal_indeterminate(struct world_store *st,
                                int (*fn)(void *ctx, long long id, const char *kind, const char *subject,
                                          const char *ref),
                                void *ctx, struct world_err *err)
{
	struct wdb_stmt *s;
	if (ws_prep(st, WORLD_SQL(JOURNAL_INDETERMINATE),
	            &s, err) < 0)
		return -1;
	int rc;
	while ((rc = wdb_step(s, NULL)) == WDB_ROW) {
		if (fn(ctx, wdb_column_int64(s, 0, NULL), (const char *)wdb_column_text(s, 1),
		       (const char *)wdb_column_text(s, 2), (const char *)wdb_column_text(s, 3)) != 0)
			break;
	}
	wdb_finalize(s);
	if (rc != WDB_ROW && rc != WDB_DONE) return ws_sqlerr(st, 0, "journal scan", err);
	return 0;
}

/* ---- sessions ---- */

int world_session_put(struct world_store *st, const char *credential, const char *episode, const char *grants_json,
                      long long expires_at, struct world_err *err)
{
	if (ws_need_writer(st, "session put", err) < 0) return -1;
	if (!credential || strlen(credential) < 16)
		return werr(err, WX_BAD_INPUT, "session put: credential shorter than 16 bytes");
	if (check_label("session episode", episode, 256, 1, err) < 0) return -1;
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

int world_journal_find(struct world_store *st, const char *kind, const char *subject, struct world_journal_row *out,
                       struct world_err *err)
{
	memset(out, 0, sizeof *out);
	struct wdb_stmt *s;
	if (ws_stmt(st, WORLD_SQL(JOURNAL_FIND), &s, err) < 0)
		return -1;
	ws_bind_text(s, 1, kind);
	ws_bind_text(s, 2, subject);
	int rc = wdb_step(s, NULL);
	if (rc != WDB_ROW) {
		ws_done(st, s);
		if (rc == WDB_DONE) return werr(err, WX_NOT_FOUND, "journal: no %s intent for %s", kind, subject);
		return ws_sqlerr(st, 0, "journal find", err);
	}
	out->intent_id = wdb_column_int64(s, 0, NULL);
	ws_col_ref(s, 1, out->intent_ref);
	const char *status = wdb_column_text(s, 2);
	snprintf(out->status, sizeof out->status, "%s", status ? status : "");
	ws_col_ref(s, 3, out->outcome_ref);
	ws_done(st, s);
	return 0;
}

int world_log_find_record(struct world_store *st, const char *record_ref, long long *index, struct world_err *err)
{
	struct wdb_stmt *s;
	if (ws_stmt(st, WORLD_SQL(LOG_FIND_RECORD), &s,
	            err) < 0)
		return -1;
	ws_bind_text(s, 1, record_ref);
	int rc = wdb_step(s, NULL);
	if (rc == WDB_ROW) *index = wdb_column_int64(s, 0, NULL);
	ws_done(st, s);
	if (rc == WDB_DONE) return werr(err, WX_NOT_FOUND, "log: no entry for invocation record %s", record_ref);
	if (rc != WDB_ROW) return ws_sqlerr(st, 0, "log find", err);
	return 0;
}

int world_log_find_ref(struct world_store *st, const char *ref, long long *index, const char **what,
                       struct world_err *err)
{
	const struct { const char *sql, *what; } q[] = {
		{ WORLD_SQL(LOG_FIND_HASH), "entry" },
		{ WORLD_SQL(LOG_FIND_RECORD), "record" },
		{ WORLD_SQL(WORLD_FIND_REF), "world" },
		{ WORLD_SQL(WORLD_FIND_ROOT), "output" },
	};
	if (world_ref_parse(ref, "ref", NULL, err) < 0) return -1;
	for (size_t i = 0; i < sizeof q / sizeof q[0]; i++) {
		struct wdb_stmt *s;
		if (ws_stmt(st, q[i].sql, &s, err) < 0) return -1;
		ws_bind_text(s, 1, ref);
		int rc = wdb_step(s, NULL);
		if (rc == WDB_ROW) *index = wdb_column_int64(s, 0, NULL);
		ws_done(st, s);
		if (rc == WDB_ROW) {
			if (what) *what = q[i].what;
			return 0;
		}
		if (rc != WDB_DONE) return ws_sqlerr(st, 0, "log find", err);
	}
	return werr(err, WX_NOT_FOUND, "%s: no log entry, invocation record, world or output of that ref", ref);
}

/* ---- episodes: membership and usage ---- */

static int need_v2(struct world_store *st, const char *what, struct world_err *err)
{
	if (st->version >= 2) return 0;
	return werr(err, WX_SCHEMA, "%s: store %s is schema version %d: open it once with a writer (worldd serve, or any "
	            "writing verb) to migrate it to %d", what, st->path, st->version, WORLD_STORE_SCHEMA_VERSION);
}

#define WS_MEMBERS_AT_ONCE 8 /* the slots of EPISODE_OBJECTS_ADD8 */
static int members_add_body(struct world_store *st, const char *episode, const char *const *refs, size_t n,
                            struct world_err *err)
{
	struct wdb_stmt *s = NULL;
	int ok = ws_stmt(st, WORLD_SQL(EPISODE_OBJECTS_ADD8), &s, err) == 0;
	size_t i = 0;
	while (ok && i < n) {
		int slot = 0;
		wdb_reset(s);
		ws_bind_text(s, 1, episode);
		for (; i < n && slot < WS_MEMBERS_AT_ONCE; i++)
			if (refs[i] && *refs[i]) ws_bind_text(s, 2 + slot++, refs[i]);
		if (!slot) break;
		for (int k = slot; k < WS_MEMBERS_AT_ONCE; k++) ws_bind_null(s, 2 + k);
		if (wdb_step(s, NULL) != WDB_DONE) ok = ws_sqlerr(st, 0, "episode objects insert", err) == 0;
	}
	ws_done(st, s);
	return ok ? 0 : -1;
}

int world_episode_objects_add(struct world_store *st, const char *episode, const char *const *refs, size_t n,
                              struct world_err *err)
{
	if (ws_need_writer(st, "episode objects", err) < 0 || need_v2(st, "episode objects", err) < 0) return -1;
	if (check_label("episode objects: episode", episode, 256, 1, err) < 0) return -1;
	if (n && !refs) return werr(err, WX_BAD_INPUT, "episode objects %s: %zu refs but no array", episode, n);
	/* every ref is checked before anything is written */
	for (size_t i = 0; i < n; i++)
		if (refs[i] && *refs[i] && world_ref_parse(refs[i], "episode object ref", NULL, err) < 0)
			return werr_prefix(err, "episode objects %s", episode);
	WS_WRITE(st, err, members_add_body(st, episode, refs, n, err));
}

int world_episode_has_object(struct world_store *st, const char *episode, const char *ref, int *member,
                             struct world_err *err)
{
	*member = 0;
	if (need_v2(st, "episode membership", err) < 0) return -1;
	if (check_label("episode membership: episode", episode, 256, 1, err) < 0) return -1;
	if (world_ref_parse(ref, "episode membership ref", NULL, err) < 0) return -1;
	struct wdb_stmt *s;
	if (ws_stmt(st, WORLD_SQL(EPISODE_HAS_OBJECT), &s, err) < 0) return -1;
	ws_bind_text(s, 1, episode);
	ws_bind_text(s, 2, ref);
	int rc = wdb_step(s, NULL);
	ws_done(st, s);
	if (rc == WDB_ROW) *member = 1;
	else if (rc != WDB_DONE) return ws_sqlerr(st, 0, "episode membership lookup", err);
	return 0;
}

static int usage_read(struct world_store *st, const char *episode, long long *calls, long long *bytes,
                      struct world_err *err)
{
	*calls = *bytes = 0;
	struct wdb_stmt *s;
	if (ws_stmt(st, WORLD_SQL(EPISODE_USAGE_GET), &s, err) < 0) return -1;
	ws_bind_text(s, 1, episode);
	int rc = wdb_step(s, NULL);
	if (rc == WDB_ROW) {
		*calls = wdb_column_int64(s, 0, NULL);
		*bytes = wdb_column_int64(s, 1, NULL);
	}
	ws_done(st, s);
	if (rc != WDB_ROW && rc != WDB_DONE) return ws_sqlerr(st, 0, "episode usage read", err);
	return 0;
}

static int usage_add_body(struct world_store *st, const char *episode, long long calls, long long bytes,
                          struct world_err *err)
{
	/* one statement, not a read and a write (a round trip less on
	 * PostgreSQL): the overflow check is its WHERE */
	struct wdb_stmt *s;
	if (ws_stmt(st, WORLD_SQL(EPISODE_USAGE_ADD), &s, err) < 0) return -1;
	ws_bind_text(s, 1, episode);
	ws_bind_int(s, 2, calls);
	ws_bind_int(s, 3, bytes);
	ws_bind_int(s, 4, LLONG_MAX - calls);
	ws_bind_int(s, 5, LLONG_MAX - bytes);
	int rc = wdb_step(s, NULL);
	ws_done(st, s);
	if (rc == WDB_DONE)
		return werr(err, WX_BAD_INPUT, "episode usage %s: adding %lld calls, %lld bytes overflows; nothing changed",
		            episode, calls, bytes);
	if (rc != WDB_ROW) return ws_sqlerr(st, 0, "episode usage write", err);
	return 0;
}

int world_episode_usage_add(struct world_store *st, const char *episode, long long calls, long long bytes,
                            struct world_err *err)
{
	if (ws_need_writer(st, "episode usage", err) < 0 || need_v2(st, "episode usage", err) < 0) return -1;
	if (check_label("episode usage: episode", episode, 256, 1, err) < 0) return -1;
	if (calls < 0 || bytes < 0)
		return werr(err, WX_BAD_INPUT, "episode usage %s: calls %lld and bytes %lld must not be negative", episode,
		            calls, bytes);
	WS_WRITE(st, err, usage_add_body(st, episode, calls, bytes, err));
}

int world_episode_usage_get(struct world_store *st, const char *episode, long long *calls, long long *bytes,
                            struct world_err *err)
{
	*calls = *bytes = 0;
	if (need_v2(st, "episode usage", err) < 0) return -1;
	if (check_label("episode usage: episode", episode, 256, 1, err) < 0) return -1;
	return usage_read(st, episode, calls, bytes, err);
}

/* ---- episodes: the log entries a session sees ---- */

int world_episode_has_entry(struct world_store *st, const char *episode, long long index, int *member,
                            struct world_err *err)
{
	*member = 0;
	if (need_v2(st, "episode entries", err) < 0) return -1;
	if (check_label("episode entries: episode", episode, 256, 1, err) < 0) return -1;
	struct wdb_stmt *s;
	if (ws_stmt(st, WORLD_SQL(EPISODE_HAS_ENTRY), &s, err) < 0) return -1;
	ws_bind_text(s, 1, episode);
	ws_bind_int(s, 2, index);
	int rc = wdb_step(s, NULL);
	ws_done(st, s);
	if (rc == WDB_ROW) *member = 1;
	else if (rc != WDB_DONE) return ws_sqlerr(st, 0, "episode entries lookup", err);
	return 0;
}

int world_episode_entries(struct world_store *st, const char *episode, long long from, size_t max, long long *out,
                          size_t *n, struct world_err *err)
{
	*n = 0;
	if (need_v2(st, "episode entries", err) < 0) return -1;
	if (check_label("episode entries: episode", episode, 256, 1, err) < 0) return -1;
	if (max == 0) return 0;
	struct wdb_stmt *s;
	if (ws_stmt(st, WORLD_SQL(EPISODE_ENTRIES), &s, err) < 0)
		return -1;
	ws_bind_text(s, 1, episode);
	ws_bind_int(s, 2, from);
	ws_bind_int(s, 3, max > (size_t)1 << 30 ? (int64_t)1 << 30 : (int64_t)max);
	int rc;
	while ((rc = wdb_step(s, NULL)) == WDB_ROW && *n < max) out[(*n)++] = wdb_column_int64(s, 0, NULL);
	ws_done(st, s);
	if (rc != WDB_ROW && rc != WDB_DONE) return ws_sqlerr(st, 0, "episode entries read", err);
	return 0;
}

int world_episode_last_entry(struct world_store *st, const char *episode, long long *index, struct world_err *err)
{
	*index = 0;
	if (need_v2(st, "episode entries", err) < 0) return -1;
	if (check_label("episode entries: episode", episode, 256, 1, err) < 0) return -1;
	struct wdb_stmt *s;
	if (ws_stmt(st, WORLD_SQL(EPISODE_LAST_ENTRY), &s, err) < 0)
		return -1;
	ws_bind_text(s, 1, episode);
	int rc = wdb_step(s, NULL);
	if (rc == WDB_ROW) *index = wdb_column_int64(s, 0, NULL);
	ws_done(st, s);
	if (rc != WDB_ROW && rc != WDB_DONE) return ws_sqlerr(st, 0, "episode entries read", err);
	return 0;
}

int world_world_at(struct world_store *st, long long revision, struct world_world *out, struct world_err *err)
{
	memset(out, 0, sizeof *out);
	struct wdb_stmt *s;
	if (ws_stmt(st, WORLD_SQL(WORLD_AT), &s, err) < 0) return -1;
	ws_bind_int(s, 1, revision);
	int rc = wdb_step(s, NULL);
	char ref[WORLD_REF_SIZE] = "";
	if (rc == WDB_ROW) ws_col_ref(s, 0, ref);
	ws_done(st, s);
	if (rc == WDB_DONE) return werr(err, WX_NOT_FOUND, "world of revision %lld: not found", revision);
	if (rc != WDB_ROW) return ws_sqlerr(st, 0, "world by revision", err);
	return world_world_get(st, ref, out, err);
}

/* ---- what other components read and do through the store, not its raw handle ---- */

int world_store_is_writer(const struct world_store *st) { return st->writer; }

int world_store_in_txn(const struct world_store *st) { return st->in_txn; }

/* One caller's savepoint inside its world_store_begin() transaction (the
 * coordinator's per-call savepoint in its group commit): SAVEPOINT,
 * RELEASE and ROLLBACK TO take the same text on both backends. */
int world_store_savepoint(struct world_store *st, enum world_savepoint_op op, struct world_err *err)
{
	if (!st->in_txn) return werr(err, WX_USAGE, "store %s: a savepoint needs a transaction", st->path);
	static const char *const sql[] = { [WORLD_SP_BEGIN] = "SAVEPOINT wc", [WORLD_SP_RELEASE] = "RELEASE wc",
		                           [WORLD_SP_ROLLBACK] = "ROLLBACK TO wc" };
	if ((int)op < 0 || (int)op > WORLD_SP_ROLLBACK) return werr(err, WX_USAGE, "store %s: savepoint: bad operation", st->path);
	return ws_exec(st, sql[op], err);
}

void world_store_flat_begin(struct world_store *st)
{
	st->sp_flat = 1;
	st->flat_mark = st->sp_undone;
}

int world_store_flat_end(struct world_store *st)
{
	st->sp_flat = 0;
	return st->sp_undone != st->flat_mark;
}

int world_object_get_raw(struct world_store *st, const char *ref, char **semantic_id, char **payload, size_t *len,
                         struct world_err *err)
{
	*semantic_id = NULL;
	*payload = NULL;
	*len = 0;
	struct wdb_stmt *s;
	if (ws_stmt(st, WORLD_SQL(OBJECT_KIND_PAYLOAD), &s, err) < 0) return -1;
	ws_bind_text(s, 1, ref);
	int rc = wdb_step(s, NULL);
	if (rc != WDB_ROW) {
		ws_done(st, s);
		if (rc == WDB_DONE) return werr(err, WX_NOT_FOUND, "object %s: not stored", ref);
		return ws_sqlerr(st, 0, "object read", err);
	}
	const char *sem = wdb_column_text(s, 0);
	size_t n = 0;
	const void *p = wdb_column_blob(s, 1, &n);
	*semantic_id = strdup(sem ? sem : "");
	*payload = malloc(n + 1);
	if (!*semantic_id || !*payload) {
		ws_done(st, s);
		free(*semantic_id);
		free(*payload);
		*semantic_id = *payload = NULL;
		return werr(err, WX_FAIL, "out of memory");
	}
	if (n) memcpy(*payload, p, n);
	(*payload)[n] = 0;
	*len = n;
	ws_done(st, s);
	return 0;
}

int world_episode_object_visible(struct world_store *st, const char *episode, const char *ref,
                                 const char *const public_kinds[3], struct world_err *err)
{
	struct wdb_stmt *s;
	if (ws_stmt(st, WORLD_SQL(EPISODE_OBJECT_VISIBLE), &s, err) < 0) return -1;
	ws_bind_text(s, 1, episode);
	ws_bind_text(s, 2, ref);
	for (int i = 0; i < 3; i++) ws_bind_text(s, 3 + i, public_kinds[i]);
	int rc = wdb_step(s, NULL);
	int v = rc == WDB_ROW ? wdb_column_int64(s, 0, NULL) != 0 : -1;
	ws_done(st, s);
	if (v < 0) return ws_sqlerr(st, 0, "object visibility", err);
	return v;
}

int world_world_revision(struct world_store *st, const char *ref, long long *revision, struct world_err *err)
{
	*revision = 0;
	struct wdb_stmt *s;
	if (ws_stmt(st, WORLD_SQL(WORLD_FIND_REF), &s, err) < 0) return -1;
	ws_bind_text(s, 1, ref);
	int rc = wdb_step(s, NULL);
	if (rc == WDB_ROW) *revision = wdb_column_int64(s, 0, NULL);
	ws_done(st, s);
	if (rc != WDB_ROW && rc != WDB_DONE) return ws_sqlerr(st, 0, "world lookup", err);
	return rc == WDB_ROW;
}

int world_objects_by_semantic(struct world_store *st, const char *semantic_id, const char *after, long long limit,
                              const char *episode, int (*fn)(void *ctx, const char *ref, const char *provenance),
                              void *ctx, struct world_err *err)
{
	struct wdb_stmt *s;
	const char *sql = episode ? WORLD_SQL(EPISODE_OBJECTS_BY_SEMANTIC) : WORLD_SQL(OBJECTS_BY_SEMANTIC);
	/* its own statement: fn may use the handle's cached ones meanwhile */
	if (ws_prep(st, sql, &s, err) < 0) return -1;
	ws_bind_text(s, 1, semantic_id);
	ws_bind_text(s, 2, after ? after : "");
	ws_bind_int(s, 3, limit);
	if (episode) ws_bind_text(s, 4, episode);
	int rc, stop = 0;
	while (!stop && (rc = wdb_step(s, NULL)) == WDB_ROW) {
		const char *ref = wdb_column_text(s, 0), *prov = wdb_column_text(s, 1);
		stop = fn(ctx, ref ? ref : "", prov ? prov : "") != 0;
	}
	wdb_finalize(s);
	if (!stop && rc != WDB_DONE) return ws_sqlerr(st, 0, "objects by semanticId", err);
	return 0;
}
