/* store/sessions.c: the sessions (store.h; docs/store.md, Journal and
 * sessions).
 *
 * Owns: a session's row under the hash of its credential, reading it by
 * credential or hash, listing and revoking (the operator token and the
 * store's secret files: store/optoken.c). */
#include "store/store_internal.h"
#include "common/canon.h"
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
