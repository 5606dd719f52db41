/* tests/store/sbulk.h: stores of many committed calls, fast, for the plan
 * and growth tests and the store benchmark. Each call is what the
 * coordinator commits for a pure call, through the store API: input,
 * output, invocation record v1 (tests/store/sfix.h's source and archived
 * interpreter), the journal's invocation intent (naming the input) and its
 * committed outcome (naming the record), the log entry and world, the
 * episode's membership of all six refs and its usage. The scan and the
 * provenance walk find every row they look for. */
#ifndef WORLD_TESTS_SBULK_H
#define WORLD_TESTS_SBULK_H
#include "tests/store/sfix.h"
#include "store/store.h"
#include <stdio.h>
#include <string.h>

struct sbulk {
	struct sfix f;
	long long last;                       /* the log's last index */
	char prev[WORLD_REF_SIZE];            /* its entryHash ("" when empty) */
	char head[WORLD_REF_SIZE];            /* the selected world ("" when none) */
	const char *episode;                  /* "sbulk" unless set */
	int no_journal;                       /* 1: entries without journal rows (the operator path) */
};

/* dir: scratch directory (sfix_init). Picks up an existing log's head. */
static inline int sbulk_init(struct world_store *st, const char *dir, struct sbulk *b, struct world_err *err)
{
	memset(&b->f, 0, sizeof b->f);
	b->head[0] = 0;
	if (!b->episode) b->episode = "sbulk";
	if (sfix_init(st, dir, &b->f, err) < 0) return -1;
	if (world_log_last(st, &b->last, b->prev, err) < 0) return -1;
	struct world_world w;
	struct world_err ig;
	if (world_head_get(st, &w, &ig) == 0) snprintf(b->head, sizeof b->head, "%s", w.ref);
	return 0;
}

/* One committed call (inside the caller's transaction, or its own rows
 * each in their own). */
static inline int sbulk_one(struct world_store *st, struct sbulk *b, struct world_err *err)
{
	long long idx = b->last + 1, n = ++b->f.n;
	char in[WORLD_REF_SIZE], out[WORLD_REF_SIZE], rec[WORLD_REF_SIZE], inv[96], body[1024], ip[96], op[160];
	int il = snprintf(ip, sizeof ip, "{\"n\":%lld}", n);
	int ol = snprintf(op, sizeof op, "{\"answer\":%lld,\"text\":\"benchmark output payload of a typical size\"}", n);
	snprintf(inv, sizeof inv, "cli:%s:b%lld", b->episode, n);
	if (world_object_put(st, "world/invocation-input/v1", inv, ip, (size_t)il, in, NULL, err) < 0 ||
	    world_object_put(st, "world/invocation-output/v1", inv, op, (size_t)ol, out, NULL, err) < 0)
		return -1;
	int bl = snprintf(body, sizeof body,
	                  "{\"episodeId\":\"%s\",\"input\":\"%s\",\"interpreter\":\"%s\",\"invocationId\":\"%s\","
	                  "\"output\":\"%s\",\"semanticsEpoch\":1,\"skillId\":\"sbulk\",\"transitionFn\":\"%s\"}",
	                  b->episode, in, b->f.interp, inv, out, b->f.src);
	if (world_object_put(st, "world/invocation-record/v1", inv, body, (size_t)bl, rec, NULL, err) < 0) return -1;
	long long intent = 0;
	struct world_journal_intent ji = { .kind = "invocation", .subject = inv, .episode = b->episode, .ref = in };
	if (!b->no_journal && world_journal_intent(st, &ji, &intent, err) < 0) return -1;
	struct world_log_append a = { idx, 1, b->f.src, b->f.interp, b->prev, "sbulk", rec, out, b->head };
	struct world_log_result r;
	if (world_log_append(st, &a, &r, err) < 0) return -1;
	if (!b->no_journal && world_journal_outcome(st, intent, "committed", rec, err) < 0) return -1;
	const char *members[] = { in, out, rec, r.entry_hash, r.world_ref };
	if (world_episode_objects_add(st, b->episode, members, sizeof members / sizeof *members, err) < 0 ||
	    world_episode_usage_add(st, b->episode, 1, il + ol, err) < 0)
		return -1;
	b->last = idx;
	snprintf(b->prev, sizeof b->prev, "%s", r.entry_hash);
	snprintf(b->head, sizeof b->head, "%s", r.world_ref);
	return 0;
}

/* n calls, one transaction per batch of them. */
static inline int sbulk_fill(struct world_store *st, struct sbulk *b, long long n, long long batch, struct world_err *err)
{
	for (long long i = 0; i < n; i++) {
		if (i % batch == 0 && world_store_begin(st, err) < 0) return -1;
		if (sbulk_one(st, b, err) < 0) {
			world_store_rollback(st);
			return -1;
		}
		if (((i + 1) % batch == 0 || i + 1 == n) && world_store_commit(st, err) < 0) return -1;
	}
	return 0;
}
#endif
