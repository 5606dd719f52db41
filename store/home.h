/* store/home.h: an episode's home (docs/operations.md
 * "Past one machine", docs/store.md "Episode homes").
 *
 * Owns: the table episode_homes(episode, host, url, lease_until,
 * claimed_at): which host serves each episode's worktree, the URL its
 * daemons advertise, and until when its claim is leased. A row is written
 * by a daemon on the episode's first effectful call (world_home_claim,
 * its own short transaction, committed before anything runs), renewed by
 * the home's later effectful calls once half the lease is gone, and moved
 * by an operator (world_home_move: `worldd episode move`). Nothing else
 * writes it; no call of the log reads it.
 *
 * The table is created by a writer's open on both engines when it is
 * absent (as operator_token and journal_spent_total: an operational table,
 * not a stored fact of the log, so the schema version stays; a store no
 * writer of this build has opened has no homes, and a reader answers "no
 * home"). */
#ifndef WORLD_STORE_HOME_H
#define WORLD_STORE_HOME_H
#include "common/error.h"

struct world_store;

#define WORLD_HOME_LEASE_S_DEFAULT 120 /* a claim's lease: renewed by the home's effectful calls */
#define WORLD_HOME_HOST_MAX 128        /* a host id: 1-128 bytes of [A-Za-z0-9._-] */
#define WORLD_HOME_URL_MAX 512         /* an advertised URL: http(s)://, printable ASCII, no spaces */

struct world_home {
	char host[WORLD_HOME_HOST_MAX + 1];
	char url[WORLD_HOME_URL_MAX + 1];
	long long lease_until, claimed_at; /* unix seconds */
};

/* 0 when host is a valid host id, else -1 with WX_USAGE naming what. */
int world_home_host_check(const char *host, struct world_err *err);
/* 0 when url is a valid advertised URL, else -1 with WX_USAGE. */
int world_home_url_check(const char *url, struct world_err *err);

/* The episode's home into *out: 1 found, 0 none (or no table yet), -1 err. */
int world_home_get(struct world_store *st, const char *episode, struct world_home *out, struct world_err *err);

/* Claims the episode for host (advertising url) or renews host's claim:
 * read first (one primary-key lookup: all a call of the home pays while
 * more than half its lease is left); no row: an INSERT that does nothing
 * when another host's claim committed first (ON CONFLICT DO NOTHING, so
 * of two hosts racing exactly one row is written), then read again; the
 * row host's and under half its lease left: the lease moved to now +
 * lease_s and the url written with it (never alone: daemons of one host
 * advertising different URLs would otherwise write at every call). Another host's row is never changed here,
 * expired or not (its worktree is on that host: an operator moves it).
 * *out gets the row as it stands; the caller compares out->host. Needs a
 * WRITER handle outside a transaction of the caller's. */
int world_home_claim(struct world_store *st, const char *episode, const char *host, const char *url, long long now,
                     long long lease_s, struct world_home *out, struct world_err *err);

/* Sets the episode's home to host/url whatever it was (the operator's
 * move), leased until lease_until; *prev gets the row before (*had = 0:
 * there was none). One transaction. */
int world_home_move(struct world_store *st, const char *episode, const char *host, const char *url,
                    long long lease_until, struct world_home *prev, int *had, struct world_err *err);

/* Every home, in episode order: fn(ctx, episode, home), 0 to go on. */
int world_home_list(struct world_store *st, int (*fn)(void *ctx, const char *episode, const struct world_home *h),
                    void *ctx, struct world_err *err);
#endif
