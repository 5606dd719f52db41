/* daemon/home.h: this daemon's side of an episode's home
 * (docs/daemon.md "Episode homes", docs/operations.md "Past one machine").
 *
 * Owns: the daemon's host id and advertised URL, its own WRITER handle
 * of the store for the homes (store/home.h; used under one mutex, never
 * by the coordinator, so a claim is its own short transaction committed
 * before the call is handed to the coordinator), and the answer of a
 * daemon that is not the episode's home: HTTP 307 to the home's URL and
 * a JSON-RPC error naming it (class NotHome).
 *
 * On when the store is PostgreSQL (daemons on several hosts), or with
 * --host-id on SQLite; otherwise off and free: dhome_check answers "here"
 * without touching the store (one host = always home). Test builds:
 * WORLD_TEST_NO_HOMES=1 turns it off (the control of tests/daemon/home.sh). */
#ifndef WORLD_DAEMON_HOME_H
#define WORLD_DAEMON_HOME_H
#include <jansson.h>
#include "common/error.h"
#include "store/home.h"

#define DHOME_RPC_CODE (-32030) /* the JSON-RPC error code of NotHome */

struct daemon_config;

/* After listening (base_url is this daemon's own URL): the identity, the
 * URL (cfg's --advertise-url, else base_url) and the handle. Logs one line
 * `home: host=H url=U lease_s=N` or `home: off (...)`. */
int dhome_start(const struct daemon_config *cfg, const char *base_url, struct world_err *err);
void dhome_stop(void);
/* 1 when homes are on. */
int dhome_on(void);
/* Before an effectful call of episode runs: 0 = run it here (claimed or
 * renewed when needed; nothing else written), 1 = another host is its
 * home (*h filled), -1 = err (the store: WX_UNAVAILABLE on a server away). */
int dhome_check(const char *episode, struct world_home *h, struct world_err *err);
/* The JSON-RPC error object (to put under "error") naming the home. */
json_t *dhome_rpc_error(const char *episode, const struct world_home *h, const char *path);
#endif
