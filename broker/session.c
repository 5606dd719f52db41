/* broker/session.c: see session.h. */
#include "broker/session.h"
#include "common/canon.h"
#include "common/ref.h"
#include "store/store.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

int broker_credential_wellformed(const char *s)
{
	if (!s || strlen(s) != BROKER_CREDENTIAL_LEN) return 0;
	for (const char *p = s; *p; p++)
		if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f'))) return 0;
	return 1;
}

int broker_session_mint(struct world_store *st, const char *episode, const struct broker_grant *g, size_t n,
                        long long ttl, char credential[BROKER_CREDENTIAL_LEN + 1], char id[65],
                        long long *expires_at, struct world_err *err)
{
	if (!broker_episode_valid(episode))
		return werr(err, WX_USAGE, "episode \"%s\": must match ^[a-z0-9][a-z0-9-]{0,63}$", episode);
	if (ttl < 1 || ttl > BROKER_TTL_MAX)
		return werr(err, WX_USAGE, "ttl %lld: must be 1 to %lld seconds", ttl, BROKER_TTL_MAX);
	if (n == 0) return werr(err, WX_USAGE, "session mint: at least one --grant is needed");
	unsigned char raw[32];
	size_t got = 0;
	while (got < sizeof raw) {
		ssize_t r = getrandom(raw + got, sizeof raw - got, 0);
		if (r < 0) {
			if (errno == EINTR) continue;
			return werr(err, WX_IO, "session mint: getrandom: %s", strerror(errno));
		}
		got += (size_t)r;
	}
	for (size_t i = 0; i < sizeof raw; i++) snprintf(credential + 2 * i, 3, "%02x", raw[i]);
	explicit_bzero(raw, sizeof raw);
	json_t *gj = broker_grants_to_json(g, n);
	char *gtext = gj ? json_dumps(gj, JSON_COMPACT) : NULL;
	json_decref(gj);
	if (!gtext) return werr(err, WX_FAIL, "session mint: out of memory");
	long long exp = (long long)time(NULL) + ttl;
	int rc = world_session_put(st, credential, episode, gtext, exp, err);
	free(gtext);
	if (rc < 0) {
		explicit_bzero(credential, BROKER_CREDENTIAL_LEN + 1);
		return werr_prefix(err, "session mint");
	}
	char ref[WORLD_REF_SIZE];
	if (world_hash_ref(credential, BROKER_CREDENTIAL_LEN, ref, err) < 0) return -1;
	memcpy(id, ref + 7, 65);
	if (expires_at) *expires_at = exp;
	return 0;
}

int broker_session_open(struct world_store *st, const char *credential, long long now, struct broker_session *out,
                        struct world_err *err)
{
	memset(out, 0, sizeof *out);
	if (!broker_credential_wellformed(credential))
		return werr(err, WX_USAGE, "malformed session credential: expected 64 lowercase hex digits");
	struct world_session s;
	struct world_err e = { 0 };
	if (world_session_get(st, credential, &s, &e) < 0) {
		if (e.code == WX_NOT_FOUND) return werr(err, WX_NOT_FOUND, "unknown session credential");
		if (err) *err = e;
		return -1;
	}
	memcpy(out->credential_id, s.credential_hash + 7, 64);
	out->credential_id[64] = 0;
	if (strlen(s.episode) >= sizeof out->episode) {
		world_session_free(&s);
		return werr(err, WX_INTEGRITY, "session %s: stored episode is too long", out->credential_id);
	}
	memcpy(out->episode, s.episode, strlen(s.episode) + 1);
	out->expires_at = s.expires_at;
	out->created_at = s.created_at;
	json_t *g = world_json_parse(s.grants_json, strlen(s.grants_json), err);
	world_session_free(&s);
	if (!g) return werr_prefix(err, "session %s grants", out->credential_id);
	int rc = broker_grants_from_json(g, &out->grants, &out->ngrants, err);
	json_decref(g);
	if (rc < 0) return -1;
	/* The one expiry rule: live while now < expires_at. */
	if (!(now < out->expires_at)) {
		broker_session_free(out);
		return werr(err, WX_SESSION, "session credential has expired");
	}
	return 0;
}

void broker_session_free(struct broker_session *s)
{
	if (!s) return;
	free(s->grants);
	s->grants = NULL;
	s->ngrants = 0;
}
