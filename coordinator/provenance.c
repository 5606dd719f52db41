/* coordinator/provenance.c: see provenance.h. */
#include "coordinator/provenance.h"
#include "broker/effect.h"
#include "broker/plan.h"
#include "common/canon.h"
#include "store/sql.h"
#include "store/store.h"
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

long long prov_first_diff(const char *a, size_t alen, const char *b, size_t blen)
{
	size_t n = alen < blen ? alen : blen;
	for (size_t i = 0; i < n; i++)
		if (a[i] != b[i]) return (long long)i;
	return alen == blen ? -1 : (long long)n;
}

int prov_object_raw(struct world_store *st, const char *ref, char **semantic_id, char **payload, size_t *len,
                    struct world_err *err)
{
	return world_object_get_raw(st, ref, semantic_id, payload, len, err);
}

/* ---- resolving a target ---- */

static int is_invocation_id(const char *s)
{
	return strncmp(s, "mcp:", 4) == 0 || strncmp(s, "a2a:", 4) == 0 || strncmp(s, "cli:", 4) == 0;
}

static int index_of_invocation(struct world_store *st, const char *id, long long *index, struct world_err *err)
{
	struct world_journal_row jr;
	if (world_journal_find(st, "invocation", id, &jr, err) < 0) return -1;
	if (strcmp(jr.status, "failed") == 0 && jr.outcome_ref[0]) {
		/* A call the seccomp filter stopped: its outcome names its denial
		 * record (coordinator.h, struct coord_denial); say what it holds. */
		struct world_object o;
		struct world_err oe;
		if (world_object_get(st, jr.outcome_ref, &o, &oe) == 0) {
			json_t *r = strcmp(o.semantic_id, "world/invocation-denial/v1") == 0
			                ? json_loadb((const char *)o.payload, o.len, 0, NULL) : NULL;
			json_t *dn = json_object_get(json_object_get(r, "error"), "denial");
			const char *sc = json_string_value(json_object_get(dn, "syscall"));
			int rc = dn ? werr(err, WX_NOT_FOUND,
			                   "invocation %s: not committed: the seccomp filter stopped it (syscall %s, nr %lld), "
			                   "denial record %s (worldd journal --denials)",
			                   id, sc ? sc : "?",
			                   (long long)json_integer_value(json_object_get(dn, "nr")), jr.outcome_ref)
			            : 0;
			json_decref(r);
			world_object_free(&o);
			if (rc < 0) return rc;
		}
	}
	if (strcmp(jr.status, "committed") != 0 || !jr.outcome_ref[0])
		return werr(err, WX_NOT_FOUND, "invocation %s: not committed (journal status \"%s\")", id,
		            jr.status[0] ? jr.status : "indeterminate");
	if (world_log_find_record(st, jr.outcome_ref, index, err) < 0)
		return werr_prefix(err, "invocation %s (journal names record %s)", id, jr.outcome_ref);
	return 0;
}

int prov_resolve(struct world_store *st, const char *target, long long *index, struct world_err *err)
{
	if (!target || !*target) return werr(err, WX_USAGE, "no entry given");
	if (strcmp(target, "head") == 0) {
		char h[WORLD_REF_SIZE];
		if (world_log_last(st, index, h, err) < 0) return -1;
		if (*index == 0) return werr(err, WX_NOT_FOUND, "the log is empty");
		return 0;
	}
	if (target[0] >= '0' && target[0] <= '9') {
		char *end;
		long long v = strtoll(target, &end, 10);
		if (*end || v < 1) return werr(err, WX_USAGE, "entry index \"%s\": want a positive integer", target);
		*index = v;
		return 0;
	}
	if (strncmp(target, "sha256:", 7) == 0) return world_log_find_ref(st, target, index, NULL, err);
	if (is_invocation_id(target)) return index_of_invocation(st, target, index, err);
	return werr(err, WX_USAGE, "\"%.200s\": want an index, head, a sha256: ref or an invocation id", target);
}

/* The invocation id a stored object was first written for (its provenance
 * label: the coordinator and the broker label a call's objects with it). */
static int index_by_label(struct world_store *st, const char *ref, long long *index, struct world_err *err)
{
	struct world_object o;
	if (world_object_get(st, ref, &o, err) < 0) return -1;
	int rc = is_invocation_id(o.provenance) ? index_of_invocation(st, o.provenance, index, err)
	                                         : werr(err, WX_NOT_FOUND, "object %s carries no invocation id", ref);
	world_object_free(&o);
	return rc;
}

json_t *prov_result_parse(const char *bytes, size_t len, char ref[WORLD_REF_SIZE], struct world_err *err)
{
	json_t *v = world_json_parse(bytes, len, err);
	if (!v) {
		werr_prefix(err, "result");
		return NULL;
	}
	if (!json_is_object(v)) {
		json_decref(v);
		werr(err, WX_BAD_INPUT, "result: not a JSON object");
		return NULL;
	}
	size_t n;
	char *c = world_canon_json(v, &n, err);
	int ok = c && world_hash_ref(c, n, ref, err) == 0;
	free(c);
	if (!ok) {
		json_decref(v);
		return NULL;
	}
	return v;
}

int prov_resolve_result(struct world_store *st, const char *bytes, size_t len, long long *index, struct world_err *err)
{
	char ref[WORLD_REF_SIZE];
	json_t *v = prov_result_parse(bytes, len, ref, err);
	if (!v) return -1;
	struct world_err e = { 0 };
	const char *what = NULL;
	int rc = world_log_find_ref(st, ref, index, &what, &e);
	if (rc == 0 && strcmp(what, "output") != 0) rc = -1;
	json_t *w = json_object_get(v, "world");
	const char *plan = json_string_value(json_object_get(w, "plan"));
	const char *rec = json_string_value(json_object_get(json_array_get(json_object_get(w, "effects"), 0), "record"));
	if (rc < 0 && plan && world_ref_valid(plan)) rc = index_by_label(st, plan, index, &e);
	if (rc < 0 && rec && world_ref_valid(rec)) rc = index_by_label(st, rec, index, &e);
	if (rc < 0)
		werr(err, WX_NOT_FOUND, "result %s: no committed entry has it as output%s", ref,
		     w ? ", nor does its world block lead to one" : " (and it has no world block to follow)");
	json_decref(v);
	return rc;
}

/* ---- the walk ---- */

static struct prov_link *add(struct prov_walk *w, int ok, const char *name, const char *ref, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static struct prov_link *add(struct prov_walk *w, int ok, const char *name, const char *ref, const char *fmt, ...)
{
	if (w->nlinks == w->cap) {
		size_t nc = w->cap ? w->cap * 2 : 32;
		struct prov_link *nl = realloc(w->links, nc * sizeof *nl);
		if (!nl) return NULL;
		w->links = nl;
		w->cap = nc;
	}
	struct prov_link *l = &w->links[w->nlinks++];
	memset(l, 0, sizeof *l);
	l->ok = ok;
	snprintf(l->name, sizeof l->name, "%s", name);
	snprintf(l->ref, sizeof l->ref, "%s", ref ? ref : "");
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(l->detail, sizeof l->detail, fmt, ap);
	va_end(ap);
	if (!ok) w->broken++;
	return l;
}

/* A link the source cannot reach (the daemon serves no journal or archive). */
static void skipped(struct prov_walk *w, const char *name, const char *ref, const struct prov_src *src)
{
	struct prov_link *l = add(w, 1, name, ref, "not reachable through %s", src->where);
	if (l) {
		l->skipped = 1;
		w->skipped++;
	}
}

/* A stored object, re-hashed, of the expected kind (kind2 may be NULL);
 * canonical JSON parsed into *json when json != NULL. On failure the link is
 * added broken and NULL returned... as -1. */
static int get_obj(const struct prov_src *src, struct prov_walk *w, const char *name, const char *ref, const char *kind,
                   const char *kind2, struct world_object *o, json_t **json)
{
	struct world_err e = { 0 };
	memset(o, 0, sizeof *o);
	if (json) *json = NULL;
	if (!ref || !world_ref_valid(ref)) {
		add(w, 0, name, ref, "not a ref");
		return -1;
	}
	if (src->object(src->ctx, ref, o, &e) < 0) {
		add(w, 0, name, ref, "%s", e.msg);
		return -1;
	}
	if (strcmp(o->semantic_id, kind) != 0 && (!kind2 || strcmp(o->semantic_id, kind2) != 0)) {
		add(w, 0, name, ref, "stored as %s, not %s", o->semantic_id, kind);
		world_object_free(o);
		return -1;
	}
	if (json) {
		if (!world_canon_is_canonical((const char *)o->payload, o->len)) {
			add(w, 0, name, ref, "%s payload is not canonical JSON", o->semantic_id);
			world_object_free(o);
			return -1;
		}
		*json = world_json_parse((const char *)o->payload, o->len, &e);
		if (!*json) {
			add(w, 0, name, ref, "%s", e.msg);
			world_object_free(o);
			return -1;
		}
	}
	return 0;
}

static const char *jstr(const json_t *o, const char *k) { return json_string_value(json_object_get(o, k)); }

static void walk_chain(const struct prov_src *src, struct prov_walk *w, const struct world_log_entry *le)
{
	struct world_err e = { 0 };
	struct world_log_entry p;
	if (le->entry_index > 1) {
		if (src->entry(src->ctx, le->entry_index - 1, &p, &e) < 0) {
			add(w, 0, "chain", le->prev_entry_hash, "entry %lld: %s", le->entry_index - 1, e.msg);
			return;
		}
		int ok = strcmp(p.entry_hash, le->prev_entry_hash) == 0;
		world_log_entry_free(&p);
		if (!ok) {
			add(w, 0, "chain", le->prev_entry_hash, "prevEntryHash is not the entryHash of entry %lld",
			    le->entry_index - 1);
			return;
		}
	} else if (le->prev_entry_hash[0]) {
		add(w, 0, "chain", le->prev_entry_hash, "the first entry names a previous entry");
		return;
	}
	long long last;
	if (src->last(src->ctx, &last, &e) < 0) {
		add(w, 0, "chain", le->entry_hash, "%s", e.msg);
		return;
	}
	if (last > le->entry_index) {
		if (src->entry(src->ctx, le->entry_index + 1, &p, &e) < 0) {
			add(w, 0, "chain", le->entry_hash, "entry %lld: %s", le->entry_index + 1, e.msg);
			return;
		}
		int ok = strcmp(p.prev_entry_hash, le->entry_hash) == 0;
		world_log_entry_free(&p);
		if (!ok) {
			add(w, 0, "chain", le->entry_hash, "entry %lld does not name this entry as its previous one",
			    le->entry_index + 1);
			return;
		}
	}
	if (le->entry_index > 1)
		add(w, 1, "chain", le->prev_entry_hash, "prevEntryHash = entryHash of entry %lld%s", le->entry_index - 1,
		    last > le->entry_index ? "; the next entry names this one" : "; this is the head");
	else
		add(w, 1, "chain", "", "first entry (no previous)%s",
		    last > le->entry_index ? "; the next entry names this one" : "; this is the head");
}

static void walk_world(const struct prov_src *src, struct prov_walk *w, const struct world_log_entry *le, const char *out)
{
	struct world_err e = { 0 };
	char ref[WORLD_REF_SIZE] = "";
	struct world_world ww;
	if (world_world_ref(le->entry_index, out, le->entry_hash, NULL, ref, &e) < 0)
		add(w, 0, "world", "", "cannot build the world: %s", e.msg);
	else if (src->world(src->ctx, ref, &ww, &e) < 0)
		add(w, 0, "world", ref, "world {revision %lld, stateRoot = record output, logHead = entryHash}: %s",
		    le->entry_index, e.msg);
	else if (ww.revision != le->entry_index || strcmp(ww.state_root, out) != 0 || strcmp(ww.log_head, le->entry_hash))
		add(w, 0, "world", ref, "stored world's columns differ from its payload");
	else
		add(w, 1, "world", ref, "revision %lld, stateRoot = the record's output, logHead = entryHash", le->entry_index);
}

static void walk_journal(const struct prov_src *src, struct prov_walk *w, const char *inv, const char *input)
{
	struct world_err e = { 0 };
	struct world_journal_row jr;
	if (!src->journal)
		skipped(w, "journal", w->record_ref, src);
	else if (src->journal(src->ctx, "invocation", inv, &jr, &e) < 0)
		add(w, 0, "journal", w->record_ref, "%s", e.msg);
	else if (strcmp(jr.status, "committed") != 0)
		add(w, 0, "journal", w->record_ref, "invocation %s: outcome \"%s\", not committed", inv,
		    jr.status[0] ? jr.status : "none");
	else if (strcmp(jr.outcome_ref, w->record_ref) != 0)
		add(w, 0, "journal", jr.outcome_ref, "the committed outcome names %s, not this record", jr.outcome_ref);
	else if (input && strcmp(jr.intent_ref, input) != 0)
		add(w, 0, "journal", jr.intent_ref, "the invocation intent names %s, not the record's input",
		    jr.intent_ref[0] ? jr.intent_ref : "nothing");
	else
		add(w, 1, "journal", jr.outcome_ref, "intent %lld names the input; its committed outcome names the record",
		    jr.intent_id);
}

static const char *record_status(const json_t *r)
{
	if (!json_is_true(json_object_get(r, "allowed"))) return "denied";
	return json_is_true(json_object_get(r, "failed")) ? "failed" : "ok";
}

/* The world block's entry for an effect record: {id,status,record}, and
 * the failure reason a failed record names (the output carries it too). */
static json_t *wblock_entry(const char *id, const char *status, const char *ref, const json_t *r)
{
	json_t *e = json_pack("{s:s,s:s,s:s}", "id", id, "status", status, "record", ref);
	json_t *why = json_object_get(r, "failure");
	if (e && json_is_string(why)) json_object_set(e, "failure", why);
	return e;
}

/* One effect of a v2 record: its record, request, result and journal.
 * Appends {id,status,record} to wblock (the world block it implies). */
static void walk_effect(const struct prov_src *src, struct prov_walk *w, size_t i, const char *ref, const json_t *plan,
                        const json_t *pe, json_t *wblock)
{
	char name[48];
	struct world_object o;
	json_t *r;
	struct world_err e = { 0 };
	snprintf(name, sizeof name, "effects[%zu].record", i);
	if (get_obj(src, w, name, ref, "world/effect-record/v1", NULL, &o, &r) < 0) return;
	world_object_free(&o);
	const char *id = jstr(pe, "id");
	if (broker_record_check(r, &e) < 0) {
		add(w, 0, name, ref, "%s", e.msg);
		goto done;
	}
	if (!plan) {
		/* the plan link is broken already: check what stands on its own */
		const char *st2 = record_status(r);
		add(w, 1, name, ref, "%s %s cost %lld, %s; the record law holds (the plan is unreadable: not compared with it)",
		    jstr(r, "effect"), jstr(r, "scope"), (long long)json_integer_value(json_object_get(r, "cost")), st2);
		json_array_append_new(wblock, wblock_entry("", st2, ref, r));
		const char *rq2 = jstr(r, "requestRef"), *rs2 = jstr(r, "resultRef");
		json_t *ig;
		snprintf(name, sizeof name, "effects[%zu].request", i);
		if (rq2 && get_obj(src, w, name, rq2, "world/effect-request/v1", NULL, &o, &ig) == 0) {
			add(w, 1, name, rq2, "a canonical request (the plan is unreadable: not compared with it)");
			json_decref(ig);
			world_object_free(&o);
		}
		snprintf(name, sizeof name, "effects[%zu].result", i);
		if (rs2 && get_obj(src, w, name, rs2, "world/effect-result/v1", NULL, &o, &ig) == 0) {
			add(w, json_is_object(ig), name, rs2, json_is_object(ig) ? "the handler's output, a JSON object" : "not a JSON object");
			json_decref(ig);
			world_object_free(&o);
		}
		goto done;
	}
	if (!pe) {
		add(w, 0, name, ref, "the plan has no effect %zu", i);
		goto done;
	}
	if (strcmp(jstr(r, "effect"), jstr(pe, "effect") ? jstr(pe, "effect") : "") != 0 ||
	    strcmp(jstr(r, "scope"), jstr(pe, "scope") ? jstr(pe, "scope") : "") != 0 ||
	    json_integer_value(json_object_get(r, "cost")) != json_integer_value(json_object_get(pe, "cost"))) {
		add(w, 0, name, ref, "effect/scope/cost differ from the plan's effect %s", id ? id : "?");
		goto done;
	}
	const char *status = record_status(r);
	add(w, 1, name, ref, "%s %s cost %lld, %s (budget %lld -> %lld); the record law holds", jstr(r, "effect"),
	    jstr(r, "scope"), (long long)json_integer_value(json_object_get(r, "cost")), status,
	    (long long)json_integer_value(json_object_get(r, "budgetBefore")),
	    (long long)json_integer_value(json_object_get(r, "budgetAfter")));
	json_array_append_new(wblock, wblock_entry(id ? id : "", status, ref, r));
	const char *req = jstr(r, "requestRef"), *res = jstr(r, "resultRef");
	if (req) {
		snprintf(name, sizeof name, "effects[%zu].request", i);
		if (get_obj(src, w, name, req, "world/effect-request/v1", NULL, &o, NULL) == 0) {
			json_t *want = json_pack("{s:s,s:s,s:s,s:s,s:I,s:O}", "invocationId", w->invocation_id, "effectId", id,
			                         "effect", jstr(pe, "effect"), "scope", jstr(pe, "scope"), "cost",
			                         json_integer_value(json_object_get(pe, "cost")), "payload",
			                         json_object_get(pe, "payload"));
			size_t n;
			char *c = want ? world_canon_json(want, &n, &e) : NULL;
			json_decref(want);
			long long d = c ? prov_first_diff(c, n, (const char *)o.payload, o.len) : 0;
			if (d < 0) add(w, 1, name, req, "the request built from the plan's effect %s, byte for byte", id);
			else add(w, 0, name, req, "differs from the request built from the plan's effect %s at byte %lld", id, d);
			free(c);
			world_object_free(&o);
		}
	}
	if (res) {
		json_t *rj;
		snprintf(name, sizeof name, "effects[%zu].result", i);
		if (get_obj(src, w, name, res, "world/effect-result/v1", NULL, &o, &rj) == 0) {
			if (json_is_object(rj)) add(w, 1, name, res, "the handler's output, a JSON object (%zu bytes)", o.len);
			else add(w, 0, name, res, "not a JSON object");
			json_decref(rj);
			world_object_free(&o);
		}
	}
	if (req) {
		snprintf(name, sizeof name, "effects[%zu].journal", i);
		char subject[400];
		snprintf(subject, sizeof subject, "%s#%s", w->invocation_id, id);
		struct world_journal_row jr;
		const char *want = json_is_true(json_object_get(r, "failed")) ? "failed" : "succeeded";
		if (!src->journal) skipped(w, name, ref, src);
		else if (src->journal(src->ctx, "effect", subject, &jr, &e) < 0) add(w, 0, name, req, "%s", e.msg);
		else if (strcmp(jr.intent_ref, req) != 0)
			add(w, 0, name, jr.intent_ref, "the effect intent names %s, not the record's request",
			    jr.intent_ref[0] ? jr.intent_ref : "nothing");
		else if (strcmp(jr.status, want) != 0)
			add(w, 0, name, ref, "outcome \"%s\", the record says %s", jr.status[0] ? jr.status : "none", want);
		else if (strcmp(jr.outcome_ref, ref) != 0)
			add(w, 0, name, jr.outcome_ref, "the outcome names %s, not this record", jr.outcome_ref);
		else
			add(w, 1, name, ref, "intent %lld names the request, outcome %s names the record", jr.intent_id, want);
	}
done:
	json_decref(r);
}

static void walk_plan(const struct prov_src *src, struct prov_walk *w, const json_t *rec, json_t **plan)
{
	struct world_object o;
	*plan = NULL;
	const char *ref = jstr(rec, "plan");
	if (get_obj(src, w, "plan", ref, "world/effect-plan/v1", NULL, &o, plan) < 0) return;
	/* the declared triples are the descriptor's, not in the record: take
	 * the plan's own (the effect record is compared with them below) */
	json_t *decl = json_array();
	size_t i;
	json_t *e;
	json_array_foreach(json_object_get(*plan, "effects"), i, e)
		json_array_append_new(decl, json_pack("{s:O?,s:O?,s:O?}", "effect", json_object_get(e, "effect"), "scope",
		                                      json_object_get(e, "scope"), "cost", json_object_get(e, "cost")));
	struct broker_plan bp;
	struct world_err pe = { 0 };
	if (broker_plan_parse((const char *)o.payload, o.len, decl, &bp, &pe) < 0) {
		add(w, 0, "plan", ref, "%s", pe.msg);
	} else {
		size_t ne = json_array_size(json_object_get(*plan, "effects"));
		size_t nr = json_array_size(json_object_get(rec, "effects"));
		if (ne != nr) add(w, 0, "plan", ref, "plans %zu effect(s), the record lists %zu effect record(s)", ne, nr);
		else add(w, 1, "plan", ref, "canonical; %zu effect(s), finish %s; the plan laws hold", ne, bp.finish ? "true" : "false");
		broker_plan_free(&bp);
	}
	json_decref(decl);
	world_object_free(&o);
}

static void walk_output(const struct prov_src *src, struct prov_walk *w, const json_t *rec, int v2, int plan_ok,
                        json_t *wblock, const char *result, size_t result_len)
{
	struct world_object o;
	json_t *out;
	const char *ref = jstr(rec, "output");
	if (get_obj(src, w, "output", ref, "world/invocation-output/v1", NULL, &o, &out) < 0) return;
	json_t *have = json_object_get(out, "world");
	if (v2 && !plan_ok) {
		/* the effect ids come from the plan: take the output's own */
		size_t i;
		json_t *e;
		json_array_foreach(json_object_get(wblock, "effects"), i, e)
			json_object_set(e, "id", json_object_get(json_array_get(json_object_get(have, "effects"), i), "id"));
	}
	if (!json_is_object(out)) add(w, 0, "output", ref, "not a JSON object");
	else if (!v2 && have) add(w, 0, "output", ref, "a pure output carries a world block");
	else if (v2 && !json_equal(have, wblock)) add(w, 0, "output", ref, "its world block is not the one the plan and the effect records give");
	else add(w, 1, "output", ref, "%s (%zu bytes)", v2 ? "canonical; its world block names the plan and the effect records"
	                                                   : "canonical JSON object, no world block", o.len);
	if (result) {
		struct world_err e = { 0 };
		size_t n = 0;
		char *c = world_canon_bytes(result, result_len, &n, &e);
		long long d = c ? prov_first_diff(c, n, (const char *)o.payload, o.len) : 0;
		char rr[WORLD_REF_SIZE] = "";
		if (c) world_hash_ref(c, n, rr, &e);
		if (!c) add(w, 0, "result", "", "%s", e.msg);
		else if (d < 0) add(w, 1, "result", rr, "the given result is the stored output, byte for byte");
		else add(w, 0, "result", rr, "the given result differs from the stored output at byte %lld", d);
		free(c);
	}
	json_decref(out);
	world_object_free(&o);
}

int prov_walk_src(const struct prov_src *src, long long index, const char *result, size_t result_len,
                  struct prov_walk *w, struct world_err *err)
{
	memset(w, 0, sizeof *w);
	w->entry_index = index;
	struct world_log_entry le;
	struct world_err e = { 0 };
	if (src->entry(src->ctx, index, &le, &e) < 0) {
		if (e.code != WX_INTEGRITY) {
			if (err) *err = e;
			return -1;
		}
		add(w, 0, "entry", "", "%s", e.msg);
		return 0;
	}
	/* recompute here too: the walk trusts no read check it did not make */
	json_t *ej = world_json_parse(le.json, le.json_len, &e);
	char h[WORLD_REF_SIZE] = "";
	if (ej) {
		json_object_del(ej, "entryHash");
		size_t n;
		char *c = world_canon_json(ej, &n, &e);
		if (c) world_hash_ref(c, n, h, &e);
		free(c);
		json_decref(ej);
	}
	if (strcmp(h, le.entry_hash) != 0) {
		add(w, 0, "entry", le.entry_hash, "entryHash recomputed as %s", h[0] ? h : "(unparseable)");
		world_log_entry_free(&le);
		return 0;
	}
	add(w, 1, "entry", le.entry_hash, "entry %lld, entryHash recomputed from its canonical JSON", index);
	walk_chain(src, w, &le);
	snprintf(w->record_ref, sizeof w->record_ref, "%s", le.transition_ref);

	struct world_object ro;
	json_t *rec = NULL, *plan = NULL, *wblock = NULL;
	if (get_obj(src, w, "record", le.transition_ref, "world/invocation-record/v1", "world/invocation-record/v2", &ro,
	            &rec) < 0)
		goto out;
	int v2 = strcmp(ro.semantic_id, "world/invocation-record/v2") == 0;
	world_object_free(&ro);
	static const char *const fields[] = { "invocationId", "episodeId", "skillId", "transitionFn", "interpreter",
		                              "input", "output", NULL };
	for (const char *const *f = fields; *f; f++)
		if (!jstr(rec, *f)) {
			add(w, 0, "record", le.transition_ref, "field %s missing or not a string", *f);
			goto out;
		}
	if (v2 && (!jstr(rec, "plan") || !json_is_array(json_object_get(rec, "effects")))) {
		add(w, 0, "record", le.transition_ref, "a v2 record without plan or effects");
		goto out;
	}
	snprintf(w->invocation_id, sizeof w->invocation_id, "%s", jstr(rec, "invocationId"));
	if (strcmp(jstr(rec, "transitionFn"), le.transition_fn) != 0 || strcmp(jstr(rec, "interpreter"), le.interpreter) != 0 ||
	    json_integer_value(json_object_get(rec, "semanticsEpoch")) != le.semantics_epoch) {
		add(w, 0, "record", le.transition_ref, "transitionFn, interpreter or semanticsEpoch differ from the entry header");
		goto out;
	}
	add(w, 1, "record", le.transition_ref, "%s of %s (%s); transitionFn, interpreter, semanticsEpoch = the header",
	    v2 ? "invocation record v2" : "invocation record v1", w->invocation_id, jstr(rec, "skillId"));
	walk_world(src, w, &le, jstr(rec, "output"));
	walk_journal(src, w, w->invocation_id, jstr(rec, "input"));

	struct world_object o;
	json_t *in;
	if (get_obj(src, w, "input", jstr(rec, "input"), "world/invocation-input/v1", NULL, &o, &in) == 0) {
		if (json_is_object(in)) add(w, 1, "input", o.ref, "canonical JSON object (%zu bytes)", o.len);
		else add(w, 0, "input", o.ref, "not a JSON object");
		json_decref(in);
		world_object_free(&o);
	}
	wblock = json_object();
	json_t *effs = json_array();
	if (v2) {
		walk_plan(src, w, rec, &plan);
		size_t i;
		json_t *er;
		json_array_foreach(json_object_get(rec, "effects"), i, er)
			walk_effect(src, w, i, json_string_value(er), plan, json_array_get(json_object_get(plan, "effects"), i), effs);
		json_object_set_new(wblock, "plan", json_string(jstr(rec, "plan")));
	}
	json_object_set_new(wblock, "effects", effs);
	walk_output(src, w, rec, v2, plan != NULL, wblock, result, result_len);

	if (get_obj(src, w, "source", le.transition_fn, "world/transition-source/v1", NULL, &o, NULL) == 0) {
		size_t n;
		char *c = world_canon_source((const char *)o.payload, o.len, &n, &e);
		if (c && n == o.len && memcmp(c, o.payload, n) == 0)
			add(w, 1, "source", o.ref, "transition source in canonical form (%zu bytes)", o.len);
		else
			add(w, 0, "source", o.ref, "not in canonical source form%s%s", c ? "" : ": ", c ? "" : e.msg);
		free(c);
		world_object_free(&o);
	}
	int what = 0;
	struct world_interp wi;
	if (!src->interp) {
		skipped(w, "interpreter", le.interpreter, src);
		skipped(w, "interpreter.manifest", le.interpreter, src);
	} else if (src->interp(src->ctx, le.interpreter, &what, &wi, &e) == 0) {
		add(w, 1, "interpreter", le.interpreter, "archived file hashes to the ref (%llu bytes)",
		    (unsigned long long)wi.size);
		add(w, 1, "interpreter.manifest", le.interpreter, "manifest.json: %s", wi.version);
	} else if (what == WORLD_INTERP_MANIFEST) {
		add(w, 1, "interpreter", le.interpreter, "archived file hashes to the ref");
		add(w, 0, "interpreter.manifest", le.interpreter, "%s", e.msg);
	} else {
		add(w, 0, "interpreter", le.interpreter, "%s", e.msg);
	}
out:
	json_decref(wblock);
	json_decref(plan);
	json_decref(rec);
	world_log_entry_free(&le);
	return 0;
}

void prov_walk_free(struct prov_walk *w)
{
	free(w->links);
	memset(w, 0, sizeof *w);
}

json_t *prov_walk_json(const struct prov_walk *w)
{
	json_t *links = json_array();
	for (size_t i = 0; i < w->nlinks; i++)
		json_array_append_new(links, json_pack("{s:s,s:s,s:o,s:s}", "name", w->links[i].name, "ref", w->links[i].ref,
		                                       "ok", w->links[i].skipped ? json_null() : json_boolean(w->links[i].ok),
		                                       "detail", w->links[i].detail));
	return json_pack("{s:I,s:s,s:s,s:o,s:I,s:I,s:I}", "entry", (json_int_t)w->entry_index, "invocationId",
	                 w->invocation_id, "record", w->record_ref, "links", links, "verified",
	                 (json_int_t)(w->nlinks - w->broken - w->skipped), "broken", (json_int_t)w->broken, "unreachable",
	                 (json_int_t)w->skipped);
}

/* ---- the store as a source ---- */

static int st_object(void *ctx, const char *ref, struct world_object *o, struct world_err *err)
{
	return world_object_get(ctx, ref, o, err);
}
static int st_entry(void *ctx, long long index, struct world_log_entry *e, struct world_err *err)
{
	return world_log_get(ctx, index, e, err);
}
static int st_last(void *ctx, long long *index, struct world_err *err)
{
	char h[WORLD_REF_SIZE];
	return world_log_last(ctx, index, h, err);
}
static int st_world(void *ctx, const char *ref, struct world_world *w, struct world_err *err)
{
	return world_world_get(ctx, ref, w, err);
}
static int st_journal(void *ctx, const char *kind, const char *subject, struct world_journal_row *r, struct world_err *err)
{
	return world_journal_find(ctx, kind, subject, r, err);
}
static int st_interp(void *ctx, const char *ref, int *what, struct world_interp *wi, struct world_err *err)
{
	if (world_interp_verify(ctx, ref, what, err) < 0) return -1;
	return world_interp_get(ctx, ref, wi, err);
}

void prov_src_store(struct prov_src *s, struct world_store *st)
{
	memset(s, 0, sizeof *s);
	s->ctx = st;
	snprintf(s->where, sizeof s->where, "store %s", world_store_path(st));
	s->object = st_object;
	s->entry = st_entry;
	s->last = st_last;
	s->world = st_world;
	s->journal = st_journal;
	s->interp = st_interp;
}

int prov_walk(struct world_store *st, long long index, const char *result, size_t result_len, struct prov_walk *w,
              struct world_err *err)
{
	struct prov_src s;
	prov_src_store(&s, st);
	return prov_walk_src(&s, index, result, result_len, w, err);
}
