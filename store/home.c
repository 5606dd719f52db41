/* store/home.c: an episode's home (store/home.h; docs/store.md, "Episode
 * homes"). The claim, the renewal and the operator's move (the table is
 * each engine's schema's: store/db_sqlite_schema.c, store/db_pg_store.c). */
#include "store/home.h"
#include "common/pause.h"
#include "store/sql.h"
#include "store/store_internal.h"
#include <string.h>

int world_home_host_check(const char *host, struct world_err *err)
{
	size_t n = host ? strlen(host) : 0;
	if (n < 1 || n > WORLD_HOME_HOST_MAX ||
	    strspn(host, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") != n)
		return werr(err, WX_USAGE, "host id \"%.140s\": must be 1-%d characters of [A-Za-z0-9._-]", host ? host : "",
		            WORLD_HOME_HOST_MAX);
	return 0;
}

int world_home_url_check(const char *url, struct world_err *err)
{
	size_t n = url ? strlen(url) : 0;
	int scheme = url && (strncmp(url, "http://", 7) == 0 || strncmp(url, "https://", 8) == 0);
	int clean = 1;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)url[i] <= 0x20 || (unsigned char)url[i] >= 0x7f) clean = 0;
	if (!scheme || !clean || n > WORLD_HOME_URL_MAX || n <= (size_t)(url[4] == 's' ? 8 : 7))
		return werr(err, WX_USAGE, "advertised URL \"%.140s\": must be http:// or https:// with a host, at most %d "
		            "printable characters without spaces", url ? url : "", WORLD_HOME_URL_MAX);
	return 0;
}

static int check_episode(const char *episode, struct world_err *err)
{
	size_t n = episode ? strlen(episode) : 0;
	if (n < 1 || n > 256) return werr(err, WX_BAD_INPUT, "episode home: episode must be 1-256 bytes");
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)episode[i] < 0x20 || episode[i] == 0x7f)
			return werr(err, WX_BAD_INPUT, "episode home: episode has a control character");
	return 0;
}

static void row_read(struct wdb_stmt *s, struct world_home *h)
{
	const char *host = wdb_column_text(s, 0), *url = wdb_column_text(s, 1);
	snprintf(h->host, sizeof h->host, "%s", host ? host : "");
	snprintf(h->url, sizeof h->url, "%s", url ? url : "");
	h->lease_until = wdb_column_int64(s, 2, NULL);
	h->claimed_at = wdb_column_int64(s, 3, NULL);
}

int world_home_get(struct world_store *st, const char *episode, struct world_home *out, struct world_err *err)
{
	memset(out, 0, sizeof *out);
	if (check_episode(episode, err) < 0) return -1;
	struct wdb_stmt *s;
	if (ws_stmt(st, WORLD_SQL(HOME_GET), &s, err) < 0) return werr_prefix(err, "episode %s: home", episode);
	ws_bind_text(s, 1, episode);
	int rc = wdb_step(s, NULL);
	if (rc == WDB_ROW) row_read(s, out);
	ws_done(st, s);
	if (rc < 0) return ws_sqlerr(st, 0, "episode home: read", err);
	return rc == WDB_ROW;
}

static int claim_body(struct world_store *st, const char *episode, const char *host, const char *url, long long now,
                      long long lease_s, struct world_err *err)
{
	struct wdb_stmt *s;
	if (ws_stmt(st, WORLD_SQL(HOME_CLAIM), &s, err) < 0) return -1;
	ws_bind_text(s, 1, episode);
	ws_bind_text(s, 2, host);
	ws_bind_text(s, 3, url);
	ws_bind_int(s, 4, now + lease_s);
	ws_bind_int(s, 5, now);
	int rc = wdb_step(s, NULL);
	ws_done(st, s);
	if (rc < 0) return ws_sqlerr(st, 0, "episode home: claim", err);
	return 0;
}

static int renew_body(struct world_store *st, const char *episode, const char *host, const char *url,
                      long long until, struct world_err *err)
{
	struct wdb_stmt *s;
	if (ws_stmt(st, WORLD_SQL(HOME_RENEW), &s, err) < 0) return -1;
	ws_bind_text(s, 1, episode);
	ws_bind_text(s, 2, host);
	ws_bind_int(s, 3, until);
	ws_bind_text(s, 4, url);
	int rc = wdb_step(s, NULL);
	ws_done(st, s);
	if (rc < 0) return ws_sqlerr(st, 0, "episode home: renew", err);
	return 0;
}

static int claim_write(struct world_store *st, const char *episode, const char *host, const char *url, long long now,
                       long long lease_s, struct world_err *err)
{
	WS_WRITE(st, err, claim_body(st, episode, host, url, now, lease_s, err));
}

static int renew_write(struct world_store *st, const char *episode, const char *host, const char *url,
                       long long until, struct world_err *err)
{
	WS_WRITE(st, err, renew_body(st, episode, host, url, until, err));
}

int world_home_claim(struct world_store *st, const char *episode, const char *host, const char *url, long long now,
                     long long lease_s, struct world_home *out, struct world_err *err)
{
	if (ws_need_writer(st, "episode home claim", err) < 0 || check_episode(episode, err) < 0 ||
	    world_home_host_check(host, err) < 0 || world_home_url_check(url, err) < 0)
		return -1;
	if (lease_s < 2) return werr(err, WX_USAGE, "episode home: lease %lld s is under 2 s", lease_s);
	int got = world_home_get(st, episode, out, err);
	if (got < 0) return -1;
	if (!got) {
		/* the window two hosts race in: each saw no home */
		world_pause("home.claim");
		if (claim_write(st, episode, host, url, now, lease_s, err) < 0) return werr_prefix(err, "episode %s", episode);
		got = world_home_get(st, episode, out, err);
		if (got < 0) return -1;
		if (!got) return werr(err, WX_IO, "episode %s: home claimed, then not found", episode);
		return 0;
	}
	if (strcmp(out->host, host) != 0) return 0;
	/* the URL is written with a renewal, never alone: daemons of one host
	 * advertising different URLs would otherwise write at every call */
	if (out->lease_until - now >= lease_s / 2) return 0;
	if (renew_write(st, episode, host, url, now + lease_s, err) < 0) return werr_prefix(err, "episode %s", episode);
	got = world_home_get(st, episode, out, err);
	if (got < 0) return -1;
	if (!got) return werr(err, WX_IO, "episode %s: home renewed, then not found", episode);
	return 0;
}

static int move_body(struct world_store *st, const char *episode, const char *host, const char *url,
                     long long lease_until, struct world_home *prev, int *had, struct world_err *err)
{
	int got = world_home_get(st, episode, prev, err);
	if (got < 0) return -1;
	*had = got;
	struct wdb_stmt *s;
	if (ws_stmt(st, WORLD_SQL(HOME_MOVE), &s, err) < 0) return -1;
	ws_bind_text(s, 1, episode);
	ws_bind_text(s, 2, host);
	ws_bind_text(s, 3, url);
	ws_bind_int(s, 4, lease_until);
	ws_bind_int(s, 5, (long long)time(NULL));
	int rc = wdb_step(s, NULL);
	ws_done(st, s);
	if (rc < 0) return ws_sqlerr(st, 0, "episode home: move", err);
	return 0;
}

int world_home_move(struct world_store *st, const char *episode, const char *host, const char *url,
                    long long lease_until, struct world_home *prev, int *had, struct world_err *err)
{
	if (ws_need_writer(st, "episode home move", err) < 0 || check_episode(episode, err) < 0 ||
	    world_home_host_check(host, err) < 0 || world_home_url_check(url, err) < 0)
		return -1;
	WS_WRITE(st, err, move_body(st, episode, host, url, lease_until, prev, had, err));
}

int world_home_list(struct world_store *st, int (*fn)(void *ctx, const char *episode, const struct world_home *h),
                    void *ctx, struct world_err *err)
{
	struct wdb_stmt *s;
	if (ws_stmt(st, WORLD_SQL(HOME_LIST), &s, err) < 0) return -1;
	int rc;
	while ((rc = wdb_step(s, NULL)) == WDB_ROW) {
		struct world_home h;
		const char *ep = wdb_column_text(s, 0);
		const char *host = wdb_column_text(s, 1), *url = wdb_column_text(s, 2);
		snprintf(h.host, sizeof h.host, "%s", host ? host : "");
		snprintf(h.url, sizeof h.url, "%s", url ? url : "");
		h.lease_until = wdb_column_int64(s, 3, NULL);
		h.claimed_at = wdb_column_int64(s, 4, NULL);
		if (fn(ctx, ep ? ep : "", &h) != 0) break;
	}
	ws_done(st, s);
	if (rc < 0) return ws_sqlerr(st, 0, "episode homes: list", err);
	return 0;
}
