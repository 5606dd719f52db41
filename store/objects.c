/* store/objects.c: the content-addressed objects (store.h; docs/store.md,
 * Objects).
 *
 * Owns: the labels every row carries (semanticId, provenance and the
 * like: ws_check_label), putting an object under the hash of its bytes,
 * reading it back verified, and the lookups by kind and semanticId. */
#include "store/store_internal.h"
#include "common/canon.h"
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int ws_check_label(const char *what, const char *s, size_t max, int required, struct world_err *err)
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
	if (ws_check_label("provenance", provenance, 4096, 0, err) < 0) return -1;
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
	/* stored now, whoever stored it first (struct ws_memo) */
	if (ws_memo_on(st)) {
		struct ws_memo *m = &st->memo;
		memcpy(m->put[m->nput++ % (sizeof m->put / sizeof *m->put)], ref, WORLD_REF_SIZE);
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

int world_objects_of_kind(struct world_store *st, const char *semantic_id, long long since,
                          int (*fn)(void *ctx, const char *ref, long long created_at), void *ctx,
                          struct world_err *err)
{
	if (ws_check_label("semanticId", semantic_id, 256, 1, err) < 0) return -1;
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
