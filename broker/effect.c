/* broker/effect.c: see effect.h. */
#include "broker/effect.h"
#include "broker/grants.h"
#include "broker/turn.h"
#include "common/canon.h"
#include "store/store.h"
#include <stdlib.h>
#include <string.h>
#include <time.h>

broker_handler_fn broker_handler_find(const struct broker_handler_entry *table, const char *effect)
{
	for (const struct broker_handler_entry *h = table; h && h->effect; h++)
		if (strcmp(h->effect, effect) == 0) return h->fn;
	return NULL;
}

static int opt_ref(const json_t *v)
{
	return json_is_null(v) || (json_is_string(v) && world_ref_valid(json_string_value(v)));
}

int broker_record_check(const json_t *r, struct world_err *err)
{
	static const char *const keys[] = { "effect", "scope", "cost", "budgetBefore", "budgetAfter", "allowed",
		                            "failed", "denial", "requestRef", "resultRef", NULL };
	if (!json_is_object(r)) return werr(err, WX_INTEGRITY, "effect record: not an object");
	/* A failed effect's record names the handler's reason in an eleventh
	 * field, failure; records written before it was added have ten. */
	const json_t *why = json_object_get(r, "failure");
	size_t want = why ? 11 : 10;
	if (json_object_size(r) != want)
		return werr(err, WX_INTEGRITY, "effect record: want exactly %zu fields, has %zu", want, json_object_size(r));
	if (why && (!json_is_true(json_object_get(r, "failed")) || !json_is_string(why) || !json_string_length(why)))
		return werr(err, WX_INTEGRITY, "effect record law: failure is a non-empty reason, only in a failed record");
	for (const char *const *k = keys; *k; k++)
		if (!json_object_get(r, *k)) return werr(err, WX_INTEGRITY, "effect record: field %s missing", *k);
	json_t *cost = json_object_get(r, "cost"), *bb = json_object_get(r, "budgetBefore"),
	       *ba = json_object_get(r, "budgetAfter"), *al = json_object_get(r, "allowed"),
	       *fa = json_object_get(r, "failed"), *de = json_object_get(r, "denial"),
	       *rq = json_object_get(r, "requestRef"), *rs = json_object_get(r, "resultRef");
	if (!json_is_string(json_object_get(r, "effect")) || !json_is_string(json_object_get(r, "scope")) ||
	    !json_is_integer(cost) || !json_is_integer(bb) || !json_is_integer(ba) || !json_is_boolean(al) ||
	    !json_is_boolean(fa) || !opt_ref(rq) || !opt_ref(rs) || !(json_is_null(de) || json_is_string(de)))
		return werr(err, WX_INTEGRITY, "effect record: a field has the wrong type");
	long long c = json_integer_value(cost), b0 = json_integer_value(bb), b1 = json_integer_value(ba);
	if (c < 0 || b0 < 0 || b1 < 0) return werr(err, WX_INTEGRITY, "effect record: negative cost or budget");
	int allowed = json_is_true(al), failed = json_is_true(fa);
	if (!allowed && failed) return werr(err, WX_INTEGRITY, "effect record law: failed but not allowed");
	if (allowed) {
		if (!json_is_null(de)) return werr(err, WX_INTEGRITY, "effect record law: allowed with a denial label");
		if (b1 != b0 - c) return werr(err, WX_INTEGRITY, "effect record law: budgetAfter %lld != budgetBefore %lld - cost %lld", b1, b0, c);
		if (json_is_null(rq)) return werr(err, WX_INTEGRITY, "effect record law: allowed without requestRef");
		if (failed && !json_is_null(rs)) return werr(err, WX_INTEGRITY, "effect record law: failed with a resultRef");
		if (!failed && json_is_null(rs)) return werr(err, WX_INTEGRITY, "effect record law: succeeded without resultRef");
	} else {
		const char *d = json_string_value(de);
		if (!d || strncmp(d, "denied:", 7) != 0) return werr(err, WX_INTEGRITY, "effect record law: denied without a denial label");
		if (b1 != b0) return werr(err, WX_INTEGRITY, "effect record law: denied but budgetAfter != budgetBefore");
		if (!json_is_null(rq) || !json_is_null(rs)) return werr(err, WX_INTEGRITY, "effect record law: denied with a request or result ref");
	}
	return 0;
}

static long ms_since(const struct timespec *t0)
{
	struct timespec t1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (t1.tv_sec - t0->tv_sec) * 1000 + (t1.tv_nsec - t0->tv_nsec) / 1000000;
}

static int make_record(struct broker_effect_out *out, const char *effect, const char *scope, long long cost,
                       long long before, int allowed, int failed, const char *denial, const char *req_ref,
                       const char *res_ref, const char *failure, struct world_err *err)
{
	json_t *r = json_pack("{s:s,s:s,s:I,s:I,s:I,s:b,s:b,s:o,s:o,s:o}", "effect", effect, "scope", scope, "cost",
	                      (json_int_t)cost, "budgetBefore", (json_int_t)before, "budgetAfter",
	                      (json_int_t)(allowed ? before - cost : before), "allowed", allowed, "failed", failed,
	                      "denial", denial ? json_string(denial) : json_null(), "requestRef",
	                      req_ref ? json_string(req_ref) : json_null(), "resultRef",
	                      res_ref ? json_string(res_ref) : json_null());
	if (!r) return werr(err, WX_FAIL, "effect record: out of memory");
	if (failed && json_object_set_new(r, "failure", json_string(failure)) < 0) {
		json_decref(r);
		return werr(err, WX_FAIL, "effect record: out of memory");
	}
	if (broker_record_check(r, err) < 0) { json_decref(r); return werr_prefix(err, "writing"); }
	out->record = world_canon_json(r, &out->record_len, err);
	json_decref(r);
	if (!out->record) return -1;
	return world_hash_ref(out->record, out->record_len, out->record_ref, err);
}

static int effect_run_turn(const struct broker_effect_req *rq, struct broker_effect_out *out, const char *id,
                           const char *name, const char *scope, long long cost, const json_t *payload,
                           const char *subject, struct world_err *err);

int broker_effect_run(const struct broker_effect_req *rq, struct broker_effect_out *out, struct world_err *err)
{
	memset(out, 0, sizeof *out);
	const json_t *e = rq->effect;
	const char *id = json_string_value(json_object_get(e, "id"));
	const char *name = json_string_value(json_object_get(e, "effect"));
	const char *scope = json_string_value(json_object_get(e, "scope"));
	long long cost = json_integer_value(json_object_get(e, "cost"));
	const json_t *payload = json_object_get(e, "payload");
	const struct broker_session *s = rq->session;
	snprintf(out->episode, sizeof out->episode, "%s", s->episode);
	char subject[400];
	snprintf(subject, sizeof subject, "%s#%s", rq->invocation_id, id);

	/* The episode's turn (broker/turn.h), held from the decision until the
	 * handler returned: the effects of one episode run one at a time, so an
	 * edit never replaces a file another effect changed since it read it. */
	broker_turn_take(s->episode);
	int tfd = -1;
	int rc = broker_turn_lock(rq->hctx.workspace_root, s->episode, &tfd, err);
	if (rc == 0) rc = effect_run_turn(rq, out, id, name, scope, cost, payload, subject, err);
	broker_turn_unlock(tfd);
	broker_turn_give(s->episode);
	return rc;
}

/* broker_effect_run with the episode's turn held. */
static int effect_run_turn(const struct broker_effect_req *rq, struct broker_effect_out *out, const char *id,
                           const char *name, const char *scope, long long cost, const json_t *payload,
                           const char *subject, struct world_err *err)
{
	const struct broker_session *s = rq->session;
	/* Decide and, when allowed, make the intent durable, under one lock and
	 * in one transaction: two calls of an episode can never both spend the
	 * last unit. */
	struct broker_decision d;
	char req_ref[WORLD_REF_SIZE] = "";
	pthread_mutex_lock(rq->store_lock);
	int rc = world_store_begin(rq->st, err);
	/* Exactly once per task id across processes: an invocation that is in
	 * flight (an intent with no outcome) or committed elsewhere is not run
	 * again. In one process the coordinator's claim already waited for it. */
	struct world_journal_row jr;
	struct world_err fe = { 0 };
	int found = rc == 0 ? world_journal_find(rq->st, "invocation", rq->invocation_id, &jr, &fe) : -1;
	if (rc == 0 && found == 0 && (jr.status[0] == '\0' || strcmp(jr.status, "committed") == 0))
		rc = werr(err, WX_CONFLICT, "task id of %s is %s by another writer; not run again", rq->invocation_id,
		          jr.status[0] ? "already committed" : "in flight");
	else if (rc == 0 && found < 0 && fe.code != WX_NOT_FOUND) {
		*err = fe;
		rc = -1;
	}
	if (rc == 0)
		rc = broker_decide(rq->st, s->episode, s->grants, s->ngrants, s->expires_at, rq->now, name, scope, cost, &d, err);
	if (rc == 0 && d.label == BROKER_ALLOWED) {
		json_t *req = json_pack("{s:s,s:s,s:s,s:s,s:I,s:O}", "invocationId", rq->invocation_id, "effectId", id,
		                        "effect", name, "scope", scope, "cost", (json_int_t)cost, "payload", payload);
		rc = req ? world_object_put_json(rq->st, "world/effect-request/v1", rq->invocation_id, req, req_ref, err)
		         : werr(err, WX_FAIL, "effect request: out of memory");
		json_decref(req);
		char in_ref[WORLD_REF_SIZE];
		if (rc == 0)
			rc = world_object_put(rq->st, "world/invocation-input/v1", rq->invocation_id, rq->input, rq->input_len,
			                      in_ref, NULL, err);
		struct world_journal_intent inv = { .kind = "invocation", .subject = rq->invocation_id,
			                            .episode = s->episode, .ref = rq->input_ref };
		if (rc == 0) rc = world_journal_intent(rq->st, &inv, &out->invocation_intent_id, err);
		struct world_journal_intent ei = { .kind = "effect", .subject = subject, .episode = s->episode,
			                           .effect = name, .scope = scope, .cost = cost, .ref = req_ref };
		if (rc == 0) rc = world_journal_intent(rq->st, &ei, &out->intent_id, err);
		const char *members[] = { req_ref, in_ref };
		if (rc == 0) rc = world_episode_objects_add(rq->st, s->episode, members, 2, err);
	}
	if (rc == 0) rc = world_store_commit(rq->st, err);
	else world_store_rollback(rq->st);
	pthread_mutex_unlock(rq->store_lock);
	if (rc < 0) return werr_prefix(err, "effect %s (%s)", id, name);

	const char *status;
	json_t *output = NULL;
	if (d.label != BROKER_ALLOWED) {
		out->status = BROKER_EFFECT_DENIED;
		status = "denied";
		if (make_record(out, name, scope, cost, d.budget_before, 0, 0, broker_label_name(d.label), NULL, NULL, NULL, err) < 0)
			return -1;
	} else {
		broker_handler_fn fn = broker_handler_find(rq->handlers, name);
		struct world_err he = { 0 };
		struct timespec t0;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		int hrc = fn ? fn(&rq->hctx, payload, &output, &he) : werr(&he, WX_FAIL, "no handler for effect %s", name);
		out->handler_ms = ms_since(&t0);
		if (hrc == 0 && !json_is_object(output)) {
			hrc = werr(&he, WX_FAIL, "handler %s returned no object", name);
		}
		if (hrc == 0) {
			out->result = world_canon_json(output, &out->result_len, &he);
			if (!out->result) hrc = -1;
			else if (out->result_len > rq->hctx.output_max)
				hrc = werr(&he, WX_OUTPUT_CAP, "handler %s output is %zu bytes, over the cap of %zu", name,
				           out->result_len, rq->hctx.output_max);
		}
		char res_ref[WORLD_REF_SIZE];
		if (hrc == 0 && world_hash_ref(out->result, out->result_len, res_ref, err) < 0) hrc = -1;
		if (hrc == 0) {
			out->status = BROKER_EFFECT_OK;
			status = "ok";
			if (make_record(out, name, scope, cost, d.budget_before, 1, 0, NULL, req_ref, res_ref, NULL, err) < 0) {
				json_decref(output);
				return -1;
			}
		} else {
			json_decref(output);
			output = NULL;
			free(out->result);
			out->result = NULL;
			out->status = BROKER_EFFECT_FAILED;
			status = "failed";
			snprintf(out->failure, sizeof out->failure, "%s", he.msg[0] ? he.msg : "handler failed");
			/* The reason goes into the record and the entry (the
			 * transition's results and the call's world block): a failed
			 * effect is never left unexplained. A handler's message may
			 * carry bytes of a path that are not UTF-8 (jansson refuses
			 * them): each such byte becomes '?'. */
			for (size_t i = 0, n = strlen(out->failure); i < n;) {
				size_t k = world_utf8_seq((const unsigned char *)out->failure + i, n - i);
				if (k == 0) out->failure[i++] = '?';
				else i += k;
			}
			if (make_record(out, name, scope, cost, d.budget_before, 1, 1, NULL, req_ref, NULL, out->failure, err) < 0)
				return -1;
		}
	}
	out->entry = json_pack("{s:s,s:s,s:s,s:s,s:o}", "id", id, "effect", name, "status", status, "record",
	                       out->record_ref, "output", output ? output : json_null());
	if (!out->entry) return werr(err, WX_FAIL, "effect result entry: out of memory");
	if (out->status == BROKER_EFFECT_FAILED && json_object_set_new(out->entry, "failure", json_string(out->failure)) < 0)
		return werr(err, WX_FAIL, "effect result entry: out of memory");
	out->output = output;
	return 0;
}

int broker_effect_write(struct world_store *st, const struct broker_effect_out *out, struct world_err *err)
{
	char res_ref[WORLD_REF_SIZE] = "", rec_ref[WORLD_REF_SIZE];
	if (out->result && world_object_put(st, "world/effect-result/v1", "broker", out->result, out->result_len, res_ref,
	                                    NULL, err) < 0)
		return -1;
	if (world_object_put(st, "world/effect-record/v1", "broker", out->record, out->record_len, rec_ref, NULL,
	                     err) < 0)
		return -1;
	const char *members[] = { res_ref, rec_ref };
	if (out->episode[0] && world_episode_objects_add(st, out->episode, members, 2, err) < 0) return -1;
	if (out->intent_id &&
	    world_journal_outcome(st, out->intent_id, out->status == BROKER_EFFECT_OK ? "succeeded" : "failed",
	                          out->record_ref, err) < 0)
		return -1;
	return 0;
}

void broker_effect_out_free(struct broker_effect_out *out)
{
	json_decref(out->entry);
	free(out->record);
	free(out->result);
	memset(out, 0, sizeof *out);
}
