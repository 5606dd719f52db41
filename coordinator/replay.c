/* coordinator/replay.c: see replay.h. */
#include "coordinator/replay.h"
#include "broker/effect.h"
#include "broker/plan.h"
#include "coordinator/provenance.h"
#include "common/canon.h"
#include "store/store.h"
#include "supervisor/launcher.h"
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_INTERPS 8

struct replayer {
	struct world_store *st;
	struct sup_limits lim;
	struct { char ref[WORLD_REF_SIZE]; struct supervisor *sup; } slots[MAX_INTERPS];
	size_t nslots;
};

struct replayer *replay_new(struct world_store *st, const struct sup_limits *lim, struct world_err *err)
{
	struct replayer *r = calloc(1, sizeof *r);
	if (!r) { werr(err, WX_FAIL, "replay: out of memory"); return NULL; }
	r->st = st;
	if (lim) r->lim = *lim;
	else sup_limits_default(&r->lim);
	return r;
}

void replay_free(struct replayer *r)
{
	if (!r) return;
	for (size_t i = 0; i < r->nslots; i++) sup_free(r->slots[i].sup);
	free(r);
}

/* The supervisor pinned to interpreter ref (each run re-hashes the archived
 * bytes into a sealed memfd and refuses a mismatch). */
static struct supervisor *sup_for(struct replayer *r, const char *ref, struct world_err *err)
{
	for (size_t i = 0; i < r->nslots; i++)
		if (strcmp(r->slots[i].ref, ref) == 0) return r->slots[i].sup;
	if (r->nslots == MAX_INTERPS) {
		sup_free(r->slots[0].sup);
		memmove(&r->slots[0], &r->slots[1], (MAX_INTERPS - 1) * sizeof r->slots[0]);
		r->nslots--;
	}
	struct world_interp wi;
	if (world_interp_get(r->st, ref, &wi, err) < 0) return NULL;
	struct launcher *l = launcher_capsule_new(wi.path, ref, err);
	struct supervisor *sup = l ? sup_new(&r->lim, l, err) : NULL;
	if (!sup) return NULL;
	snprintf(r->slots[r->nslots].ref, WORLD_REF_SIZE, "%s", ref);
	r->slots[r->nslots++].sup = sup;
	return sup;
}

static void diverge(struct replay_report *rep, const char *stage, long long offset, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void diverge(struct replay_report *rep, const char *stage, long long offset, const char *fmt, ...)
{
	if (rep->diverged) return;
	rep->diverged = 1;
	snprintf(rep->stage, sizeof rep->stage, "%s", stage);
	rep->offset = offset;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(rep->detail, sizeof rep->detail, fmt, ap);
	va_end(ap);
}

static const char *jstr(const json_t *o, const char *k) { return json_string_value(json_object_get(o, k)); }

/* A stored object's bytes, not trusted: *intact = they hash to ref. */
struct raw { char *sem, *bytes; size_t len; int intact; };

static int raw_get(struct world_store *st, const char *ref, struct raw *o, struct world_err *err)
{
	memset(o, 0, sizeof *o);
	if (!ref || !world_ref_valid(ref)) return werr(err, WX_INTEGRITY, "\"%s\" is not a ref", ref ? ref : "(none)");
	if (prov_object_raw(st, ref, &o->sem, &o->bytes, &o->len, err) < 0) return -1;
	char h[WORLD_REF_SIZE];
	if (world_hash_ref(o->bytes, o->len, h, err) < 0) return -1;
	o->intact = strcmp(h, ref) == 0;
	if (!o->intact) werr(err, WX_INTEGRITY, "object %s: integrity hole: stored payload hashes to %s", ref, h);
	return 0;
}

static void raw_free(struct raw *o)
{
	free(o->sem);
	free(o->bytes);
	memset(o, 0, sizeof *o);
}

struct rctx {
	struct replayer *r;
	struct replay_report *rep;
	const json_t *rec;
	const char *input;
	size_t input_len;
	int got_plan;
	char plan_ref[WORLD_REF_SIZE];
	json_t *plan_result;      /* the re-run plan's result (no effects) */
	int have_effect, finish;
	json_t *entry;            /* the rebuilt finish-phase results entry */
	json_t *eff_output;       /* the stored result object (ok), borrowed from entry */
};

/* The effect of the re-run plan, answered from the recorded effect record. */
static int answer_effect(struct rctx *x, const json_t *pe, struct world_err *err)
{
	struct world_store *st = x->r->st;
	struct replay_report *rep = x->rep;
	const char *ref = json_string_value(json_array_get(json_object_get(x->rec, "effects"), 0));
	const char *id = jstr(pe, "id"), *name = jstr(pe, "effect"), *scope = jstr(pe, "scope");
	long long cost = json_integer_value(json_object_get(pe, "cost"));
	struct raw o = { 0 }, q = { 0 }, s = { 0 };
	json_t *r = NULL, *out = NULL;
	struct world_err e = { 0 };
	int rc = -1;
	if (raw_get(st, ref, &o, &e) < 0 || !o.intact) { diverge(rep, "effects", -1, "effect record: %s", e.msg); goto done; }
	if (strcmp(o.sem, "world/effect-record/v1") != 0) {
		diverge(rep, "effects", -1, "effect record %s is stored as %s", ref, o.sem);
		goto done;
	}
	r = world_json_parse(o.bytes, o.len, &e);
	if (!r || broker_record_check(r, &e) < 0) { diverge(rep, "effects", -1, "effect record %s: %s", ref, e.msg); goto done; }
	if (strcmp(jstr(r, "effect"), name) != 0 || strcmp(jstr(r, "scope"), scope) != 0 ||
	    json_integer_value(json_object_get(r, "cost")) != cost) {
		diverge(rep, "effects", -1, "the re-run plan's effect %s (%s %s cost %lld) is not the recorded one (%s %s cost %lld)",
		        id, name, scope, cost, jstr(r, "effect"), jstr(r, "scope"),
		        (long long)json_integer_value(json_object_get(r, "cost")));
		goto done;
	}
	int allowed = json_is_true(json_object_get(r, "allowed")), failed = json_is_true(json_object_get(r, "failed"));
	const char *status = !allowed ? "denied" : failed ? "failed" : "ok";
	if (allowed) {
		/* the request the broker builds from this plan's effect */
		json_t *req = json_pack("{s:s,s:s,s:s,s:s,s:I,s:O}", "invocationId", jstr(x->rec, "invocationId"), "effectId",
		                        id, "effect", name, "scope", scope, "cost", (json_int_t)cost, "payload",
		                        json_object_get(pe, "payload"));
		size_t n;
		char *c = req ? world_canon_json(req, &n, err) : NULL;
		json_decref(req);
		if (!c) goto done;
		const char *qref = jstr(r, "requestRef");
		if (raw_get(st, qref, &q, &e) < 0) {
			free(c);
			diverge(rep, "effects", -1, "effect request: %s", e.msg);
			goto done;
		}
		long long d = prov_first_diff(c, n, q.bytes, q.len);
		free(c);
		if (d >= 0) {
			diverge(rep, "effects", d, "the request rebuilt from the re-run plan differs from stored request %s", qref);
			goto done;
		}
		if (!q.intact || strcmp(q.sem, "world/effect-request/v1") != 0) {
			diverge(rep, "effects", -1, "effect request %s: %s", qref, q.intact ? "not a world/effect-request/v1" : e.msg);
			goto done;
		}
		char subject[400];
		snprintf(subject, sizeof subject, "%s#%s", jstr(x->rec, "invocationId"), id);
		struct world_journal_row jr;
		if (world_journal_find(st, "effect", subject, &jr, &e) < 0 || strcmp(jr.intent_ref, qref) != 0 ||
		    strcmp(jr.status, failed ? "failed" : "succeeded") != 0 || strcmp(jr.outcome_ref, ref) != 0) {
			diverge(rep, "effects", -1, "journal: the effect intent/outcome of %s do not name the request and record%s%s",
			        subject, e.msg[0] ? ": " : "", e.msg);
			goto done;
		}
	}
	if (allowed && !failed) {
		const char *sref = jstr(r, "resultRef");
		if (raw_get(st, sref, &s, &e) < 0 || !s.intact || strcmp(s.sem, "world/effect-result/v1") != 0) {
			diverge(rep, "effects", -1, "effect result %s: %s", sref, e.msg[0] ? e.msg : "not a world/effect-result/v1");
			goto done;
		}
		out = world_json_parse(s.bytes, s.len, &e);
		if (!json_is_object(out)) {
			diverge(rep, "effects", -1, "effect result %s: not a JSON object%s%s", sref, e.msg[0] ? ": " : "", e.msg);
			goto done;
		}
	}
	/* exactly the entry broker_effect_run builds */
	x->entry = json_pack("{s:s,s:s,s:s,s:s,s:o}", "id", id, "effect", name, "status", status, "record", ref, "output",
	                     out ? json_incref(out) : json_null());
	if (!x->entry) { werr(err, WX_FAIL, "replay: out of memory"); goto done; }
	/* a failed effect's entry carries its record's reason (broker/effect.c) */
	if (json_is_string(json_object_get(r, "failure")))
		json_object_set(x->entry, "failure", json_object_get(r, "failure"));
	x->eff_output = out;
	x->have_effect = 1;
	rc = 0;
done:
	json_decref(out);
	json_decref(r);
	raw_free(&o);
	raw_free(&q);
	raw_free(&s);
	return rc;
}

/* The replay broker: compares the plan, answers the effect from the
 * records. It never calls a handler and never writes. */
static int replay_cb(void *ctx, const char *plan, size_t plan_len, struct sup_broker_reply *reply, struct world_err *err)
{
	struct rctx *x = ctx;
	struct replay_report *rep = x->rep;
	memset(reply, 0, sizeof *reply);
	x->got_plan = 1;
	/* canonicalised as the coordinator does: the parsed plan's canonical JSON */
	json_t *p = world_json_parse(plan, plan_len, err);
	size_t n = 0;
	char *c = p ? world_canon_json(p, &n, err) : NULL;
	struct raw sp = { 0 };
	struct world_err e = { 0 };
	int rc = -1;
	if (!c) {
		diverge(rep, "plan", 0, "the re-run plan is not JSON: %s", err->msg);
		goto out;
	}
	const char *pref = jstr(x->rec, "plan");
	if (raw_get(x->r->st, pref, &sp, &e) < 0) { diverge(rep, "plan", -1, "stored plan: %s", e.msg); goto out; }
	long long d = prov_first_diff(c, n, sp.bytes, sp.len);
	if (d >= 0) { diverge(rep, "plan", d, "the re-run plan differs from stored plan %s", pref); goto out; }
	if (!sp.intact || strcmp(sp.sem, "world/effect-plan/v1") != 0) {
		diverge(rep, "plan", -1, "stored plan %s: %s", pref, sp.intact ? "not a world/effect-plan/v1" : e.msg);
		goto out;
	}
	if (world_hash_ref(c, n, x->plan_ref, err) < 0) goto out;
	json_t *effs = json_object_get(p, "effects");
	size_t ne = json_array_size(effs), nr = json_array_size(json_object_get(x->rec, "effects"));
	if (ne != nr) {
		diverge(rep, "effects", -1, "the plan has %zu effect(s), the record %zu effect record(s)", ne, nr);
		goto out;
	}
	if (ne > 1) { diverge(rep, "effects", -1, "a plan with %zu effects (at most one is lawful)", ne); goto out; }
	x->finish = json_is_true(json_object_get(p, "finish"));
	if (ne == 0) {
		x->plan_result = json_incref(json_object_get(p, "result"));
		rc = 0;
		goto out;
	}
	if (answer_effect(x, json_array_get(effs, 0), err) < 0) goto out;
	if (x->finish) {
		json_t *arr = json_pack("[O]", x->entry);
		reply->results = arr ? world_canon_json(arr, &reply->results_len, err) : NULL;
		json_decref(arr);
		if (!reply->results) goto out;
		reply->finish = 1;
	}
	rc = 0;
out:
	if (rc < 0 && rep->diverged) werr(err, WX_INTEGRITY, "replay diverged at stage %s", rep->stage);
	raw_free(&sp);
	free(c);
	json_decref(p);
	return rc;
}

/* Run failures that mean "could not replay" rather than "diverged". */
static int cannot_run(int code) { return code == WX_SETUP || code == WX_CAPACITY || code == WX_FAIL; }

static int input_stage(struct replayer *r, const struct world_log_entry *le, struct replay_report *rep, json_t **rec,
                       char **src, size_t *src_len, struct raw *in)
{
	struct world_store *st = r->st;
	struct world_err e = { 0 };
	struct world_object o;
	*rec = NULL;
	*src = NULL;
	if (world_object_get(st, le->transition_ref, &o, &e) < 0) { diverge(rep, "input", -1, "invocation record: %s", e.msg); return -1; }
	int v2 = strcmp(o.semantic_id, "world/invocation-record/v2") == 0;
	if (!v2 && strcmp(o.semantic_id, "world/invocation-record/v1") != 0) {
		diverge(rep, "input", -1, "transitionRef %s is a %s, not an invocation record", o.ref, o.semantic_id);
		world_object_free(&o);
		return -1;
	}
	*rec = world_json_parse((const char *)o.payload, o.len, &e);
	world_object_free(&o);
	if (!*rec) { diverge(rep, "input", -1, "invocation record: %s", e.msg); return -1; }
	rep->effectful = v2;
	snprintf(rep->invocation_id, sizeof rep->invocation_id, "%s", jstr(*rec, "invocationId") ? jstr(*rec, "invocationId") : "");
	if (!jstr(*rec, "transitionFn") || strcmp(jstr(*rec, "transitionFn"), le->transition_fn) != 0 ||
	    !jstr(*rec, "interpreter") || strcmp(jstr(*rec, "interpreter"), le->interpreter) != 0 ||
	    json_integer_value(json_object_get(*rec, "semanticsEpoch")) != le->semantics_epoch || !jstr(*rec, "output") ||
	    (v2 && (!jstr(*rec, "plan") || !json_is_array(json_object_get(*rec, "effects"))))) {
		diverge(rep, "input", -1, "invocation record %s does not match the entry header (transitionFn, interpreter, "
		        "semanticsEpoch) or lacks fields", le->transition_ref);
		return -1;
	}
	const char *iref = jstr(*rec, "input");
	if (raw_get(st, iref, in, &e) < 0 || !in->intact) { diverge(rep, "input", -1, "input: %s", e.msg); return -1; }
	if (strcmp(in->sem, "world/invocation-input/v1") != 0 || !world_canon_is_canonical(in->bytes, in->len) ||
	    in->len == 0 || in->bytes[0] != '{') {
		diverge(rep, "input", -1, "input %s is not a canonical world/invocation-input/v1 object", iref);
		return -1;
	}
	struct world_journal_row jr;
	if (world_journal_find(st, "invocation", rep->invocation_id, &jr, &e) < 0 || strcmp(jr.status, "committed") != 0 ||
	    strcmp(jr.outcome_ref, le->transition_ref) != 0 || strcmp(jr.intent_ref, iref) != 0) {
		diverge(rep, "input", -1, "journal: the committed outcome of %s does not name this record and input%s%s",
		        rep->invocation_id, e.msg[0] ? ": " : "", e.msg);
		return -1;
	}
	if (world_object_get(st, le->transition_fn, &o, &e) < 0) { diverge(rep, "input", -1, "transition source: %s", e.msg); return -1; }
	if (strcmp(o.semantic_id, "world/transition-source/v1") != 0) {
		diverge(rep, "input", -1, "transitionFn %s is a %s", o.ref, o.semantic_id);
		world_object_free(&o);
		return -1;
	}
	*src = (char *)o.payload;
	*src_len = o.len;
	o.payload = NULL;
	world_object_free(&o);
	int what;
	if (world_interp_verify(st, le->interpreter, &what, &e) < 0) {
		diverge(rep, "input", -1, "%s: %s", what == WORLD_INTERP_MANIFEST ? "interpreter manifest" : "interpreter", e.msg);
		return -1;
	}
	return 0;
}

/* The stored output (raw) compared with the rebuilt one. */
static void output_stage(struct world_store *st, const json_t *rec, const json_t *output, struct replay_report *rep)
{
	struct world_err e = { 0 };
	size_t n;
	char *c = world_canon_json(output, &n, &e);
	struct raw so;
	const char *oref = jstr(rec, "output");
	if (!c) diverge(rep, "output", -1, "the rebuilt output: %s", e.msg);
	else if (raw_get(st, oref, &so, &e) < 0) diverge(rep, "output", -1, "stored output: %s", e.msg);
	else {
		long long d = prov_first_diff(c, n, so.bytes, so.len);
		if (d >= 0) diverge(rep, "output", d, "the rebuilt output differs from stored output %s", oref);
		else if (!so.intact || strcmp(so.sem, "world/invocation-output/v1") != 0)
			diverge(rep, "output", -1, "stored output %s: %s", oref, so.intact ? "not a world/invocation-output/v1" : e.msg);
		raw_free(&so);
	}
	free(c);
}

/* A run's output object (as the coordinator checks it), or NULL after a
 * divergence at stage. */
static json_t *run_output(const char *bytes, size_t len, const char *stage, struct replay_report *rep)
{
	struct world_err e = { 0 };
	json_t *o = world_json_parse(bytes, len, &e);
	if (!o) diverge(rep, stage, -1, "the re-run output is not JSON: %s", e.msg);
	else if (!json_is_object(o)) diverge(rep, stage, -1, "the re-run output is not a JSON object");
	else if (json_object_get(o, "world")) diverge(rep, stage, -1, "the re-run output has the reserved member \"world\"");
	else return o;
	json_decref(o);
	return NULL;
}

int replay_entry(struct replayer *r, long long index, struct replay_report *rep, struct world_err *err)
{
	memset(rep, 0, sizeof *rep);
	rep->entry_index = index;
	rep->offset = -1;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	struct world_store *st = r->st;
	struct world_log_entry le;
	struct world_err e = { 0 };
	if (world_log_get(st, index, &le, &e) < 0) {
		if (e.code != WX_INTEGRITY) {
			if (err) *err = e;
			return -1;
		}
		diverge(rep, "input", -1, "%s", e.msg);
		return 0;
	}
	json_t *rec = NULL, *output = NULL;
	char *src = NULL;
	size_t src_len = 0;
	struct raw in = { 0 };
	struct sup_result sr = { 0 };
	struct rctx x = { .r = r, .rep = rep };
	int rc = 0;
	if (input_stage(r, &le, rep, &rec, &src, &src_len, &in) < 0) goto done;
	struct supervisor *sup = sup_for(r, le.interpreter, &e);
	if (!sup) {
		if (e.code == WX_HASH_MISMATCH || e.code == WX_INTEGRITY) diverge(rep, "input", -1, "interpreter: %s", e.msg);
		else { if (err) *err = e; rc = -1; }
		goto done;
	}
	if (!rep->effectful) {
		if (sup_run_pure(sup, src, src_len, in.bytes, in.len, &sr, &e) < 0) {
			if (e.code == WX_HASH_MISMATCH) diverge(rep, "input", -1, "interpreter: %s", e.msg);
			else if (cannot_run(e.code)) { if (err) *err = e; rc = -1; }
			else diverge(rep, "output", -1, "the re-run failed: %s", e.msg);
			goto done;
		}
		output = run_output(sr.output, sr.output_len, "output", rep);
		if (output) output_stage(st, rec, output, rep);
		goto done;
	}
	x.rec = rec;
	x.input = in.bytes;
	x.input_len = in.len;
	int grc = sup_run_effectful(sup, src, src_len, in.bytes, in.len, replay_cb, &x, &sr, &e);
	if (rep->diverged) goto done;
	if (grc < 0) {
		if (e.code == WX_HASH_MISMATCH) diverge(rep, "input", -1, "interpreter: %s", e.msg);
		else if (cannot_run(e.code)) { if (err) *err = e; rc = -1; }
		else diverge(rep, !x.got_plan ? "plan" : x.finish ? "finish" : "effects", -1, "the re-run failed: %s", e.msg);
		goto done;
	}
	if (x.finish != (sr.finished != 0)) {
		diverge(rep, "finish", -1, "the plan says finish %s but the finish phase %s", x.finish ? "true" : "false",
		        sr.finished ? "ran" : "did not run");
		goto done;
	}
	if (!x.have_effect) output = json_deep_copy(x.plan_result);
	else if (sr.finished) {
		output = run_output(sr.output, sr.output_len, "finish", rep);
		if (!output) goto done;
		/* the finish output against the stored output less its world block,
		 * when the stored output is intact (a damaged one is the output
		 * stage's to report) */
		struct raw so;
		if (raw_get(st, jstr(rec, "output"), &so, &e) == 0 && so.intact) {
			json_t *sj = world_json_parse(so.bytes, so.len, &e);
			if (sj) {
				json_object_del(sj, "world");
				size_t a, b;
				char *ca = world_canon_json(output, &a, &e), *cb = world_canon_json(sj, &b, &e);
				long long d = ca && cb ? prov_first_diff(ca, a, cb, b) : -1;
				if (d >= 0)
					diverge(rep, "finish", d, "the re-run finish output differs from the stored output (less its world block)");
				free(ca);
				free(cb);
				json_decref(sj);
			}
		}
		raw_free(&so);
		if (rep->diverged) goto done;
	} else if (strcmp(jstr(x.entry, "status"), "ok") == 0)
		output = json_deep_copy(x.eff_output);
	else
		output = json_object();
	if (!output) { rc = werr(err, WX_FAIL, "replay: out of memory"); goto done; }
	json_t *effs = json_array();
	if (x.have_effect) {
		json_t *we = json_pack("{s:O,s:s,s:s}", "id", json_object_get(x.entry, "id"), "status", jstr(x.entry, "status"),
		                       "record", jstr(x.entry, "record"));
		if (we && json_object_get(x.entry, "failure")) json_object_set(we, "failure", json_object_get(x.entry, "failure"));
		json_array_append_new(effs, we);
	}
	json_object_set_new(output, "world", json_pack("{s:o,s:s}", "effects", effs, "plan", x.plan_ref));
	output_stage(st, rec, output, rep);
done:
	clock_gettime(CLOCK_MONOTONIC, &t1);
	rep->elapsed_ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	sup_result_free(&sr);
	json_decref(x.plan_result);
	json_decref(x.entry);
	json_decref(output);
	json_decref(rec);
	raw_free(&in);
	free(src);
	world_log_entry_free(&le);
	return rc;
}

json_t *replay_report_json(const struct replay_report *rep)
{
	json_t *o = json_pack("{s:I,s:s,s:b,s:b}", "entry", (json_int_t)rep->entry_index, "invocationId",
	                      rep->invocation_id, "effectful", rep->effectful, "diverged", rep->diverged);
	if (o && rep->diverged) {
		json_object_set_new(o, "stage", json_string(rep->stage));
		json_object_set_new(o, "offset", rep->offset >= 0 ? json_integer(rep->offset) : json_null());
		json_object_set_new(o, "detail", json_string(rep->detail));
	}
	return o;
}
