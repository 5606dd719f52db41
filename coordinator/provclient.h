/* coordinator/provclient.h: a provenance walk through the daemon's read
 * routes (`worldd why --addr URL`, docs/provenance.md).
 *
 * Owns: a minimal HTTP/1.0 client for the loopback daemon (GET only, one
 * connection per request, bounded reply size and socket timeouts), the
 * prov_src that reads objects (GET /v1/objects/{ref}?payload=true), log
 * entries (GET /v1/log/{index}, /v1/log?from&limit), worlds
 * (GET /v1/worlds/{ref}) and the head (GET /v1/head) with a bearer
 * credential, and resolving a target the way prov_resolve does, by walking
 * the log newest first (at most PROV_CLIENT_SCAN_MAX entries) where no route
 * answers directly. Nothing the daemon says is trusted: every object is
 * re-hashed here, every entry hash recomputed by the walk. The daemon serves
 * no journal and no interpreter archive, so those links are listed as not
 * reachable. */
#ifndef WORLD_COORDINATOR_PROVCLIENT_H
#define WORLD_COORDINATOR_PROVCLIENT_H
#include "coordinator/provenance.h"

#define PROV_CLIENT_SCAN_MAX 5000      /* entries examined to resolve a ref or id */
#define PROV_CLIENT_REPLY_MAX ((size_t)64 << 20)
#define PROV_CLIENT_TIMEOUT_S 30

struct prov_client;

/* url: "http://HOST:PORT" (a trailing slash allowed; HOST a name, an IPv4
 * address or [IPv6]); bearer: a session credential or the operator token
 * (64 hex), or NULL. WX_USAGE for a malformed URL. */
struct prov_client *prov_client_new(const char *url, const char *bearer, struct world_err *err);
void prov_client_free(struct prov_client *c);
void prov_src_client(struct prov_src *s, struct prov_client *c);
/* As prov_resolve / prov_resolve_result, through the daemon. */
int prov_client_resolve(struct prov_client *c, const char *target, long long *index, struct world_err *err);
int prov_client_resolve_result(struct prov_client *c, const char *bytes, size_t len, long long *index,
                               struct world_err *err);
#endif
