/* tests/store/seff.h: effectful calls and publishes through the store API,
 * for the scan's tests and benchmark (tests/store/sbulk.h makes the pure
 * calls). An effectful call is what the coordinator and the broker commit
 * for a call of one Workspace.Write effect that succeeded: the input, the
 * plan (the effect and its payload: the file's content), the request
 * (the same payload), the result, the effect record (the broker's record
 * law), the output, an invocation record v2 naming plan and effects, the
 * journal's invocation and effect intents with their outcomes, the log
 * entry and world. A publish is what world-publish stores: transition
 * sources in canonical source form, then the next registry object naming
 * them. The scan finds every row it looks for. */
#ifndef WORLD_TESTS_SEFF_H
#define WORLD_TESTS_SEFF_H
#include "tests/store/sbulk.h"
#include "store/store.h"
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* content of n bytes for call k: printable, different for each call */
static inline char *seff_content(long long k, size_t n)
{
	char *c = malloc(n + 1);
	if (!c) return NULL;
	static const char alpha[] = "abcdefghijklmnopqrstuvwxyz0123456789 ";
	unsigned long long x = (unsigned long long)k * 0x9E3779B97F4A7C15ULL + 1;
	for (size_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		c[i] = alpha[x % (sizeof alpha - 1)];
	}
	c[n] = 0;
	return c;
}

/* One effectful call writing `bytes` bytes (inside the caller's
 * transaction, or its rows each in their own). */
static inline int seff_one(struct world_store *st, struct sbulk *b, size_t bytes, struct world_err *err)
{
	long long idx = b->last + 1, n = ++b->f.n;
	char inv[96], subj[128], path[64];
	char in[WORLD_REF_SIZE], plan[WORLD_REF_SIZE], req[WORLD_REF_SIZE], res[WORLD_REF_SIZE], erec[WORLD_REF_SIZE],
		out[WORLD_REF_SIZE], rec[WORLD_REF_SIZE];
	snprintf(inv, sizeof inv, "cli:%s:e%lld", b->episode, n);
	snprintf(subj, sizeof subj, "%s#e1", inv);
	snprintf(path, sizeof path, "notes/%lld.txt", n);
	char *content = seff_content(n, bytes);
	if (!content) return werr(err, WX_FAIL, "seff: out of memory");
	json_t *payload = json_pack("{s:s,s:s}", "path", path, "content", content);
	free(content);
	json_t *ij = json_pack("{s:s,s:I}", "path", path, "n", (json_int_t)n);
	json_t *pj = json_pack("{s:s,s:[{s:s,s:s,s:s,s:i,s:O}],s:n,s:{s:s}}", "plan", "world/effect-plan/v1", "effects",
	                       "id", "e1", "effect", "Workspace.Write", "scope", "ws", "cost", 1, "payload", payload,
	                       "finish", "result", "wrote", path);
	json_t *rq = json_pack("{s:s,s:s,s:s,s:s,s:i,s:O}", "invocationId", inv, "effectId", "e1", "effect",
	                       "Workspace.Write", "scope", "ws", "cost", 1, "payload", payload);
	json_t *rs = json_pack("{s:b,s:s,s:I}", "ok", 1, "path", path, "bytes", (json_int_t)bytes);
	json_decref(payload);
	int rc = -1;
	json_t *er = NULL, *oj = NULL, *rj = NULL;
	if (!ij || !pj || !rq || !rs) {
		werr(err, WX_FAIL, "seff: out of memory");
		goto done;
	}
	if (world_object_put_json(st, "world/invocation-input/v1", inv, ij, in, err) < 0 ||
	    world_object_put_json(st, "world/effect-plan/v1", inv, pj, plan, err) < 0 ||
	    world_object_put_json(st, "world/effect-request/v1", inv, rq, req, err) < 0 ||
	    world_object_put_json(st, "world/effect-result/v1", "broker", rs, res, err) < 0)
		goto done;
	/* the broker's record law (broker/effect.h): succeeded */
	er = json_pack("{s:s,s:s,s:i,s:I,s:I,s:b,s:b,s:n,s:s,s:s}", "effect", "Workspace.Write", "scope", "ws", "cost", 1,
	               "budgetBefore", (json_int_t)(1000000 - n + 1), "budgetAfter", (json_int_t)(1000000 - n), "allowed", 1,
	               "failed", 0, "denial", "requestRef", req, "resultRef", res);
	oj = json_pack("{s:I,s:s,s:{s:[s],s:s}}", "answer", (json_int_t)n, "wrote", path, "world", "effects", "ok",
	               "plan", plan);
	if (!er || !oj) {
		werr(err, WX_FAIL, "seff: out of memory");
		goto done;
	}
	if (world_object_put_json(st, "world/effect-record/v1", "broker", er, erec, err) < 0 ||
	    world_object_put_json(st, "world/invocation-output/v1", inv, oj, out, err) < 0)
		goto done;
	rj = json_pack("{s:s,s:[s],s:s,s:s,s:s,s:s,s:s,s:i,s:s,s:s}", "episodeId", b->episode, "effects", erec, "input",
	               in, "interpreter", b->f.interp, "invocationId", inv, "output", out, "plan", plan, "semanticsEpoch",
	               1, "skillId", "seff", "transitionFn", b->f.src);
	if (!rj) {
		werr(err, WX_FAIL, "seff: out of memory");
		goto done;
	}
	if (world_object_put_json(st, "world/invocation-record/v2", inv, rj, rec, err) < 0) goto done;
	long long ii = 0, ei = 0;
	struct world_journal_intent jin = { .kind = "invocation", .subject = inv, .episode = b->episode, .ref = in };
	struct world_journal_intent jef = { .kind = "effect", .subject = subj, .episode = b->episode,
		                            .effect = "Workspace.Write", .scope = "ws", .cost = 1, .ref = req };
	if (world_journal_intent(st, &jin, &ii, err) < 0 || world_journal_intent(st, &jef, &ei, err) < 0 ||
	    world_journal_outcome(st, ei, "succeeded", erec, err) < 0)
		goto done;
	struct world_log_append a = { idx, 1, b->f.src, b->f.interp, b->prev, "seff", rec, out, b->head };
	struct world_log_result r;
	if (world_log_append(st, &a, &r, err) < 0 || world_journal_outcome(st, ii, "committed", rec, err) < 0) goto done;
	b->last = idx;
	snprintf(b->prev, sizeof b->prev, "%s", r.entry_hash);
	snprintf(b->head, sizeof b->head, "%s", r.world_ref);
	rc = 0;
done:
	json_decref(ij);
	json_decref(pj);
	json_decref(rq);
	json_decref(rs);
	json_decref(er);
	json_decref(oj);
	json_decref(rj);
	return rc;
}

/* A publish: nsrc transition sources of about `bytes` bytes each (lines of
 * text, canonical source form), tagged by tag, then a registry object
 * naming them (in one transaction of its own). */
static inline int seff_publish(struct world_store *st, const char *tag, int nsrc, size_t bytes, struct world_err *err)
{
	json_t *list = json_array();
	char *text = malloc(bytes + 128);
	if (!list || !text) {
		json_decref(list);
		free(text);
		return werr(err, WX_FAIL, "seff: out of memory");
	}
	int rc = -1;
	if (world_store_begin(st, err) < 0) goto out;
	for (int i = 0; i < nsrc; i++) {
		size_t k = (size_t)snprintf(text, 128, "module %s_%d\n", tag, i);
		for (long long line = 0; k + 80 < bytes; line++) {
			char *c = seff_content((long long)i * 100003 + line, 60);
			if (!c) goto fail;
			k += (size_t)snprintf(text + k, 128, "  let v%lld = \"%s\"\n", line, c);
			free(c);
		}
		k += (size_t)snprintf(text + k, 128, "export func main(input: string) -> string { input }\n");
		char ref[WORLD_REF_SIZE];
		if (world_object_put(st, "world/transition-source/v1", tag, text, k, ref, NULL, err) < 0) goto fail;
		char id[64];
		snprintf(id, sizeof id, "%s.t%d", tag, i);
		if (json_array_append_new(list, json_pack("{s:s,s:s}", "id", id, "transitionFn", ref)) < 0) goto fail;
	}
	json_t *reg = json_pack("{s:n,s:i,s:O}", "parent", "revision", 1, "transitions", list);
	char rref[WORLD_REF_SIZE];
	int put = reg ? world_object_put_json(st, "world/transition-registry/v1", tag, reg, rref, err) : -1;
	json_decref(reg);
	if (put < 0) goto fail;
	rc = world_store_commit(st, err);
	goto out;
fail:
	world_store_rollback(st);
out:
	json_decref(list);
	free(text);
	return rc;
}
#endif
