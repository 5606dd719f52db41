/* broker/session.h: session credentials (docs/design.md §8.1).
 *
 * Owns: minting a credential (32 bytes from getrandom, shown once as 64
 * lowercase hex; the store keeps only sha256 of it, with the episode, the
 * grants and expires_at), opening a session from a presented credential
 * with the one expiry rule (live while now < expires_at), and the
 * credential id = hex(sha256(credential)) that operators list and revoke. */
#ifndef WORLD_BROKER_SESSION_H
#define WORLD_BROKER_SESSION_H
#include <stddef.h>
#include "broker/grants.h"
#include "common/error.h"

struct world_store;

#define BROKER_CREDENTIAL_LEN 64
#define BROKER_TTL_MAX (365LL * 24 * 3600)

struct broker_session {
	char credential_id[65];   /* hex(sha256(credential)) */
	char episode[65];
	struct broker_grant *grants;
	size_t ngrants;
	long long expires_at;
	long long created_at;
};

/* 1 when s is 64 lowercase hex digits. */
int broker_credential_wellformed(const char *s);
/* Mint: ttl in seconds (1 .. BROKER_TTL_MAX). Writes the session row and
 * returns the credential (once) and its id. */
int broker_session_mint(struct world_store *st, const char *episode, const struct broker_grant *g, size_t n,
                        long long ttl, char credential[BROKER_CREDENTIAL_LEN + 1], char id[65],
                        long long *expires_at, struct world_err *err);
/* Open the session of a presented credential at time now. Errors:
 * WX_USAGE "malformed ...", WX_NOT_FOUND "unknown session credential",
 * WX_SESSION "session credential has expired". */
int broker_session_open(struct world_store *st, const char *credential, long long now, struct broker_session *out,
                        struct world_err *err);
void broker_session_free(struct broker_session *s);
#endif
