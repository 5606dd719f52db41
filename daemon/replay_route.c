/* daemon/replay_route.c: POST /v1/replay/{index} -- operator replay of one
 * committed log entry (coordinator/replay.h, docs/provenance.md). The answer
 * is the report `worldd replay N --json` prints: {entry, invocationId,
 * effectful, diverged[, stage, offset, detail]}, 200 whether it diverged or
 * not. It reads through a pooled reader handle and never writes; it needs a
 * credential (a session's or the operator token) even with --open-reads,
 * since it runs capsules. A session replays only its own episode's entries
 * (another's is NotFound, as an absent one); the operator token any. */
#include "coordinator/replay.h"
#include "daemon/http.h"
#include "daemon/route.h"
#include "store/store.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

void replay_handle(struct dreq *rq, struct dresp *r)
{
	const char *rest = rq->path + strlen("/v1/replay/");
	if (strcmp(rq->method, "POST") != 0) {
		dresp_error(r, "BadRequest", "method %.16s not allowed on /v1/replay/ (POST only)", rq->method);
		r->status = 405;
		r->allow = "POST";
		return;
	}
	char *end;
	errno = 0;
	long long idx = strtoll(rest, &end, 10);
	if (!*rest || *end || errno || idx < 1 || rest[0] == '+' || rest[0] == '0') {
		dresp_error(r, "BadRequest", "log index '%.40s' is not an integer >= 1", rest);
		return;
	}
	/* a credential even with --open-reads: it runs capsules */
	struct coord_session *sess = NULL;
	struct world_store *st = dreader_scoped(rq, r, 1, &sess);
	if (!st) return;
	struct world_err err = { 0, "" };
	/* a session replays only its own episode's entries; another's answers
	 * as an absent one does (the store's text), so its existence is not told */
	int mine = 1;
	if (sess && world_episode_has_entry(st, sess->episode, idx, &mine, &err) < 0) {
		dresp_internal(rq, r, "episode entry", &err);
		goto out;
	}
	if (!mine) {
		dresp_error(r, "NotFound", "log entry %lld: not found", idx);
		goto out;
	}
	struct sup_limits lim;
	sup_limits_default(&lim);
	struct replayer *rp = replay_new(st, &lim, &err);
	struct replay_report rep;
	if (!rp || replay_entry(rp, idx, &rep, &err) < 0) {
		if (err.code == WX_NOT_FOUND) dresp_error(r, "NotFound", "%s", err.msg);
		else if (err.code == WX_CAPACITY) dresp_error(r, "Capacity", "%s", err.msg);
		else dresp_internal(rq, r, "replay", &err);
	} else {
		snprintf(rq->invocation_id, sizeof rq->invocation_id, "%s", rep.invocation_id);
		dresp_json(r, 200, replay_report_json(&rep));
	}
	replay_free(rp);
out:
	coord_session_free(sess);
	dreader_put(rq->d, st);
}
