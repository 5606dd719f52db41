/* daemon/home.c: this daemon's side of an episode's home (daemon/home.h). */
#include "daemon/home.h"
#include "daemon/http.h"
#include "daemon/server.h"
#include "store/open_opts.h"
#include "common/pause.h"
#include "store/store.h"
#include "store/db.h"
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static struct {
	pthread_mutex_t mu;        /* the handle: one call at a time */
	struct world_store *st;    /* NULL: homes off */
	char host[WORLD_HOME_HOST_MAX + 1];
	char url[WORLD_HOME_URL_MAX + 1];
	long long lease_s;
} H = { PTHREAD_MUTEX_INITIALIZER, NULL, "", "", 0 };

int dhome_on(void) { return H.st != NULL; }

int dhome_start(const struct daemon_config *cfg, const char *base_url, struct world_err *err)
{
	int pg = wdb_kind_of(cfg->store_path) == WDB_PG;
	if (!pg && !cfg->host_id) {
		dlog("home: off (a SQLite store without --host-id: one host, always the home)");
		return 0;
	}
#if WORLD_PAUSE_COMPILED
	const char *off = getenv("WORLD_TEST_NO_HOMES");
	if (off && strcmp(off, "1") == 0) {
		dlog("home: off (WORLD_TEST_NO_HOMES=1, a test build's control)");
		return 0;
	}
#endif
	if (cfg->host_id) {
		if (world_home_host_check(cfg->host_id, err) < 0) return werr_prefix(err, "--host-id");
		snprintf(H.host, sizeof H.host, "%s", cfg->host_id);
	} else {
		char hn[256];
		if (gethostname(hn, sizeof hn) != 0)
			return werr(err, WX_FAIL, "home: gethostname: %s (give --host-id)", strerror(errno));
		hn[sizeof hn - 1] = 0;
		/* the host id is the name up to its first dot, as [A-Za-z0-9._-] */
		char *dot = strchr(hn, '.');
		if (dot) *dot = 0;
		if (world_home_host_check(hn, err) < 0) return werr_prefix(err, "home: this host's name (give --host-id)");
		snprintf(H.host, sizeof H.host, "%.128s", hn);
	}
	const char *url = cfg->advertise_url ? cfg->advertise_url : base_url;
	if (world_home_url_check(url, err) < 0) return werr_prefix(err, "--advertise-url");
	snprintf(H.url, sizeof H.url, "%s", url);
	size_t n = strlen(H.url);
	while (n > 8 && H.url[n - 1] == '/') H.url[--n] = 0; /* the routes are appended to it */
	H.lease_s = cfg->home_lease_s > 0 ? cfg->home_lease_s : WORLD_HOME_LEASE_S_DEFAULT;
	struct world_store_open_opts oo = { .password_file = cfg->store_password_file };
	if (world_store_open_opts(cfg->store_path, WORLD_STORE_WRITER | WORLD_STORE_EXISTING, &oo, &H.st, err) < 0)
		return werr_prefix(err, "home: open the store");
	dlog("home: host=%s url=%s lease_s=%lld (an episode's effectful calls run on the host that claimed it; "
	     "elsewhere they are answered 307 NotHome)", H.host, H.url, H.lease_s);
	return 0;
}

void dhome_stop(void)
{
	pthread_mutex_lock(&H.mu);
	if (H.st) world_store_close(H.st);
	H.st = NULL;
	pthread_mutex_unlock(&H.mu);
}

int dhome_check(const char *episode, struct world_home *h, struct world_err *err)
{
	memset(h, 0, sizeof *h);
	if (!H.st) return 0;
	pthread_mutex_lock(&H.mu);
	int rc = H.st ? world_home_claim(H.st, episode, H.host, H.url, (long long)time(NULL), H.lease_s, h, err) : 0;
	pthread_mutex_unlock(&H.mu);
	if (rc < 0) return -1;
	if (!h->host[0] || strcmp(h->host, H.host) == 0) return 0;
	return 1;
}

json_t *dhome_rpc_error(const char *episode, const struct world_home *h, const char *path)
{
	long long now = (long long)time(NULL);
	char msg[2400], loc[WORLD_HOME_URL_MAX + 16];
	snprintf(loc, sizeof loc, "%s%s", h->url, path);
	snprintf(msg, sizeof msg,
	         "NotHome: episode %s has its home on host %s (%s): its effectful calls run there; send this call to %s "
	         "(pure calls and reads run on any daemon)%s",
	         episode, h->host, h->url, loc,
	         h->lease_until < now ? "; that home's lease has expired: if its host is gone, an operator moves the "
	                                "episode (worldd episode move)"
	                              : "");
	return json_pack("{s:i,s:s,s:{s:s,s:s,s:s,s:s,s:s,s:I}}", "code", DHOME_RPC_CODE, "message", msg, "data", "class",
	                 "NotHome", "episode", episode, "host", h->host, "url", h->url, "location", loc, "leaseUntil",
	                 (json_int_t)h->lease_until);
}
