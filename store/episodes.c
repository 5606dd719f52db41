/* store/episodes.c: what an episode holds (store.h; docs/store.md,
 * Episodes).
 *
 * Owns: an episode's object membership (schema 2) and what it sees of
 * them, its usage counters, and the log entries its sessions see (kept by
 * the schema's triggers: one index range per page). */
#include "store/store_internal.h"
#include "common/canon.h"
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
	if (ws_check_label("episode objects: episode", episode, 256, 1, err) < 0) return -1;
	if (n && !refs) return werr(err, WX_BAD_INPUT, "episode objects %s: %zu refs but no array", episode, n);
	/* every ref is checked before anything is written */
	for (size_t i = 0; i < n; i++)
		if (refs[i] && *refs[i] && world_ref_parse(refs[i], "episode object ref", NULL, err) < 0)
			return werr_prefix(err, "episode objects %s", episode);
	/* one statement in the caller's transaction: atomic on its own, and
	 * every caller undoes the transaction when it fails, so it needs no
	 * savepoint (on PostgreSQL, where a statement inside one waits for
	 * its answer, it then rides with the next one) */
	if (st->in_txn && st->sp_depth == 0 && n <= WS_MEMBERS_AT_ONCE) return members_add_body(st, episode, refs, n, err);
	WS_WRITE(st, err, members_add_body(st, episode, refs, n, err));
}

int world_episode_has_object(struct world_store *st, const char *episode, const char *ref, int *member,
                             struct world_err *err)
{
	*member = 0;
	if (need_v2(st, "episode membership", err) < 0) return -1;
	if (ws_check_label("episode membership: episode", episode, 256, 1, err) < 0) return -1;
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
	/* one statement, not a read and a write, and none of its answer read
	 * (no round trip of its own on PostgreSQL: the next read or the COMMIT
	 * carries it): an overflow makes its counts NULL, refused by the NOT
	 * NULL of calls and bytes, now or (a pipeline) at that later wait */
	struct wdb_stmt *s;
	if (ws_stmt(st, WORLD_SQL(EPISODE_USAGE_ADD), &s, err) < 0) return -1;
	ws_bind_text(s, 1, episode);
	ws_bind_int(s, 2, calls);
	ws_bind_int(s, 3, bytes);
	ws_bind_int(s, 4, LLONG_MAX - calls);
	ws_bind_int(s, 5, LLONG_MAX - bytes);
	/* PostgreSQL's message names the column "calls" (the first SET) */
	ws_expect_conflict(st, "calls", WX_BAD_INPUT,
	                   "episode usage %s: adding %lld calls, %lld bytes overflows; nothing changed", episode, calls,
	                   bytes);
	int rc = wdb_step(s, NULL);
	ws_done(st, s);
	/* the only constraint left to fail is the counts' NOT NULL */
	if (rc == WDB_CONFLICT)
		return werr(err, WX_BAD_INPUT, "episode usage %s: adding %lld calls, %lld bytes overflows; nothing changed",
		            episode, calls, bytes);
	if (rc != WDB_DONE) return ws_sqlerr(st, 0, "episode usage write", err);
	return 0;
}

int world_episode_usage_add(struct world_store *st, const char *episode, long long calls, long long bytes,
                            struct world_err *err)
{
	if (ws_need_writer(st, "episode usage", err) < 0 || need_v2(st, "episode usage", err) < 0) return -1;
	if (ws_check_label("episode usage: episode", episode, 256, 1, err) < 0) return -1;
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
	if (ws_check_label("episode usage: episode", episode, 256, 1, err) < 0) return -1;
	return usage_read(st, episode, calls, bytes, err);
}

int world_episode_has_entry(struct world_store *st, const char *episode, long long index, int *member,
                            struct world_err *err)
{
	*member = 0;
	if (need_v2(st, "episode entries", err) < 0) return -1;
	if (ws_check_label("episode entries: episode", episode, 256, 1, err) < 0) return -1;
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
	if (ws_check_label("episode entries: episode", episode, 256, 1, err) < 0) return -1;
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
	if (ws_check_label("episode entries: episode", episode, 256, 1, err) < 0) return -1;
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
