/* store/scan.c: see scan.h. */
#include "store/scan.h"
#include "store/store_internal.h"
#include "store/canon.h"
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

struct budget {
	long long max_rows, rows;
	double max_seconds, t0;
};

static int spent(struct budget *b)
{
	if (b->max_rows > 0 && b->rows >= b->max_rows) return 1;
	if (b->max_seconds > 0 && now_s() - b->t0 >= b->max_seconds) return 1;
	return 0;
}


/* ---- what a committed call depends on (one entry) ---- */

#define DEP_CACHE 64

struct deps {
	struct world_store *st;
	const struct world_scan_opts *opts;
	FILE *out;
	struct world_scan_result *res;
	sqlite3_stmt *obj;    /* semantic_id, payload by ref */
	sqlite3_stmt *world;  /* state_root of the world at a revision */
	/* sources and interpreters are shared by many entries: checked once */
	struct { char ref[WORLD_REF_SIZE]; int bad; } src[DEP_CACHE], interp[DEP_CACHE];
	size_t nsrc, ninterp;
	int quiet;            /* probing: hole() neither prints nor counts */
};

static void hole(struct deps *d, const char *table, long long index, const char *field, const char *ref)
{
	if (d->quiet) return;
	d->res->holes++;
	if (d->out)
		fprintf(d->out, "integrity_hole table=%s index=%lld field=%s ref=%s\n", table, index, field,
		        ref && *ref ? ref : "none");
}

/* json for dep_obj: the payload must be canonical JSON, not parsed */
static json_t *dep_canonical_only;
#define DEP_CANONICAL (&dep_canonical_only)

/* The object ref of kind (or kind2), hash recomputed; with json, the
 * payload must be canonical JSON, parsed into *json unless json is
 * DEP_CANONICAL. A problem is one hole and -1. */
static int dep_obj(struct deps *d, long long index, const char *field, const char *ref, const char *kind,
                   const char *kind2, json_t **json, int *is_kind2)
{
	if (json && json != DEP_CANONICAL) *json = NULL;
	if (!ref || !world_ref_valid(ref)) {
		hole(d, "objects", index, field, ref);
		return -1;
	}
	sqlite3_reset(d->obj);
	sqlite3_bind_text(d->obj, 1, ref, -1, SQLITE_TRANSIENT);
	int ok = 0;
	if (sqlite3_step(d->obj) == SQLITE_ROW) {
		const char *sem = (const char *)sqlite3_column_text(d->obj, 0);
		const char *p = sqlite3_column_blob(d->obj, 1);
		size_t n = (size_t)sqlite3_column_bytes(d->obj, 1);
		char got[WORLD_REF_SIZE];
		d->res->bytes_hashed += n;
		int k1 = sem && strcmp(sem, kind) == 0, k2 = sem && kind2 && strcmp(sem, kind2) == 0;
		if (is_kind2) *is_kind2 = k2;
		ok = world_hash_ref(p ? p : "", n, got, NULL) == 0 && strcmp(got, ref) == 0 && (k1 || k2);
		if (ok && json) {
			ok = world_canon_is_canonical(p ? p : "", n);
			/* canonical bytes are their own canonical form: what
			 * world_json_parse would load, without canonicalising again */
			if (ok && json != DEP_CANONICAL)
				ok = (*json = json_loadb(p ? p : "", n, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL,
				                         NULL)) != NULL;
		}
	}
	sqlite3_reset(d->obj);
	if (!ok) hole(d, "objects", index, field, ref);
	return ok ? 0 : -1;
}

static const char *jstr(const json_t *o, const char *k) { return json_string_value(json_object_get(o, k)); }

static int cached(struct deps *d, int interp, const char *ref, int *bad)
{
	size_t n = interp ? d->ninterp : d->nsrc;
	for (size_t i = 0; i < n; i++) {
		const char *r = interp ? d->interp[i].ref : d->src[i].ref;
		if (strcmp(r, ref) == 0) {
			*bad = interp ? d->interp[i].bad : d->src[i].bad;
			return 1;
		}
	}
	return 0;
}

static void remember(struct deps *d, int interp, const char *ref, int bad)
{
	size_t *n = interp ? &d->ninterp : &d->nsrc;
	if (*n == DEP_CACHE) return;
	if (interp) { snprintf(d->interp[*n].ref, WORLD_REF_SIZE, "%s", ref); d->interp[*n].bad = bad; }
	else { snprintf(d->src[*n].ref, WORLD_REF_SIZE, "%s", ref); d->src[*n].bad = bad; }
	(*n)++;
}

static void dep_effect(struct deps *d, long long index, size_t i, const char *ref, const json_t *pe, const char *inv)
{
	char field[64];
	snprintf(field, sizeof field, "effects[%zu]", i);
	json_t *r;
	if (dep_obj(d, index, field, ref, "world/effect-record/v1", NULL, &r, NULL) < 0) return;
	if (d->opts->effect_record_check && d->opts->effect_record_check(r, NULL) < 0) {
		hole(d, "objects", index, field, ref);
		json_decref(r);
		return;
	}
	const char *req = jstr(r, "requestRef"), *res = jstr(r, "resultRef");
	snprintf(field, sizeof field, "effects[%zu].requestRef", i);
	if (req) dep_obj(d, index, field, req, "world/effect-request/v1", NULL, DEP_CANONICAL, NULL);
	snprintf(field, sizeof field, "effects[%zu].resultRef", i);
	if (res) dep_obj(d, index, field, res, "world/effect-result/v1", NULL, DEP_CANONICAL, NULL);
	if (req) {
		/* the effect's intent names the request, its outcome the record */
		char subject[400];
		snprintf(subject, sizeof subject, "%s#%s", inv, jstr(pe, "id") ? jstr(pe, "id") : "");
		struct world_journal_row jr;
		const char *want = json_is_true(json_object_get(r, "failed")) ? "failed" : "succeeded";
		snprintf(field, sizeof field, "effects[%zu]", i);
		struct world_err je = { 0 };
		int jf = world_journal_find(d->st, "effect", subject, &jr, &je);
		if ((jf < 0 && je.code != WX_NOT_FOUND) ||
		    (jf == 0 && (strcmp(jr.intent_ref, req) != 0 || strcmp(jr.status, want) != 0 || strcmp(jr.outcome_ref, ref) != 0)))
			hole(d, "journal", index, field, ref);
	}
	json_decref(r);
}

/* The source at ref is in canonical source form (DESIGN §6.2): what ran. */
static int source_canonical(struct deps *d, const char *ref)
{
	sqlite3_reset(d->obj);
	sqlite3_bind_text(d->obj, 1, ref, -1, SQLITE_TRANSIENT);
	int ok = 0;
	if (sqlite3_step(d->obj) == SQLITE_ROW) {
		const char *p = sqlite3_column_blob(d->obj, 1);
		size_t n = (size_t)sqlite3_column_bytes(d->obj, 1), cn = 0;
		char *c = p ? world_canon_source(p, n, &cn, NULL) : NULL;
		ok = c && cn == n && memcmp(c, p, n) == 0;
		free(c);
	}
	sqlite3_reset(d->obj);
	return ok;
}

/* Everything entry r depends on, beyond the row itself. Returns the field
 * of the log_entries hole when the record itself is unsound, else NULL. */
static const char *dep_check(struct deps *d, const struct ws_log_row *r)
{
	json_t *rec;
	int v2 = 0;
	/* a record that is missing, damaged, of another kind, or disagrees
	 * with the header is the entry's own hole (its transitionRef is wrong) */
	d->quiet = 1;
	int rrc = dep_obj(d, r->index, "transitionRef", r->tref, "world/invocation-record/v1", "world/invocation-record/v2",
	                  &rec, &v2);
	d->quiet = 0;
	if (rrc < 0) return "transitionRef";
	const char *inv = jstr(rec, "invocationId");
	if (!inv || !jstr(rec, "transitionFn") || strcmp(jstr(rec, "transitionFn"), r->fn) != 0 || !jstr(rec, "interpreter") ||
	    strcmp(jstr(rec, "interpreter"), r->interp) != 0 ||
	    json_integer_value(json_object_get(rec, "semanticsEpoch")) != r->epoch) {
		json_decref(rec);
		return "transitionRef";
	}
	dep_obj(d, r->index, "input", jstr(rec, "input"), "world/invocation-input/v1", NULL, DEP_CANONICAL, NULL);
	const char *out = jstr(rec, "output");
	if (dep_obj(d, r->index, "output", out, "world/invocation-output/v1", NULL, DEP_CANONICAL, NULL) == 0) {
		/* the output is the stateRoot of the world of this revision */
		char root[WORLD_REF_SIZE] = "";
		sqlite3_reset(d->world);
		sqlite3_bind_int64(d->world, 1, r->index);
		if (sqlite3_step(d->world) == SQLITE_ROW) ws_col_ref(d->world, 0, root);
		sqlite3_reset(d->world);
		if (strcmp(root, out) != 0) hole(d, "objects", r->index, "output", out);
	}
	if (v2) {
		json_t *plan = NULL;
		dep_obj(d, r->index, "plan", jstr(rec, "plan"), "world/effect-plan/v1", NULL, &plan, NULL);
		size_t i;
		json_t *er;
		json_array_foreach(json_object_get(rec, "effects"), i, er)
			dep_effect(d, r->index, i, json_string_value(er), json_array_get(json_object_get(plan, "effects"), i), inv);
		json_decref(plan);
	}
	/* the invocation's committed outcome names this record (and its intent the input) */
	/* (an entry appended by the operator path, `worldd log append`, has no
	 * journal rows: absent rows are not a hole, rows that disagree are) */
	struct world_journal_row jr;
	struct world_err je = { 0 };
	int jf = world_journal_find(d->st, "invocation", inv, &jr, &je);
	if ((jf < 0 && je.code != WX_NOT_FOUND) ||
	    (jf == 0 && (strcmp(jr.status, "committed") != 0 || strcmp(jr.outcome_ref, r->tref) != 0 ||
	                 strcmp(jr.intent_ref, jstr(rec, "input") ? jstr(rec, "input") : "") != 0)))
		hole(d, "journal", r->index, "invocation", r->tref);
	int bad;
	if (!cached(d, 0, r->fn, &bad)) {
		d->quiet = 1;
		bad = dep_obj(d, r->index, "transitionFn", r->fn, "world/transition-source/v1", NULL, NULL, NULL) < 0 ||
		      !source_canonical(d, r->fn);
		d->quiet = 0;
		remember(d, 0, r->fn, bad);
	}
	if (bad) hole(d, "objects", r->index, "transitionFn", r->fn);
	if (!cached(d, 1, r->interp, &bad)) {
		int what = 0;
		bad = world_interp_verify(d->st, r->interp, &what, NULL) < 0 ? (what ? what : WORLD_INTERP_FILE) : 0;
		remember(d, 1, r->interp, bad);
	}
	if (bad) hole(d, "artifacts", r->index, bad == WORLD_INTERP_MANIFEST ? "interpreter.manifest" : "interpreter", r->interp);
	json_decref(rec);
	return NULL;
}

int world_scan(struct world_store *st, const struct world_scan_opts *opts, FILE *out, struct world_scan_result *res,
               struct world_err *err)
{
	memset(res, 0, sizeof *res);
	struct budget b = { opts->max_rows, 0, opts->max_seconds, now_s() };
	long long from = opts->resume_log_index > 1 ? opts->resume_log_index : 1;
	const char *wfrom = opts->resume_world_ref && *opts->resume_world_ref ? opts->resume_world_ref : WORLD_SCAN_ZERO_REF;
	if (opts->resume_log_index < 0)
		return werr(err, WX_BAD_INPUT, "scan: resume log index %lld is negative", opts->resume_log_index);
	if (world_ref_parse(wfrom, "resume world ref", NULL, err) < 0) return -1;
	if (opts->max_rows < 0 || opts->max_seconds < 0) return werr(err, WX_BAD_INPUT, "scan: negative budget");

	sqlite3_stmt *logs = NULL, *worlds = NULL, *obj = NULL, *entry = NULL, *objs = NULL;
	const char *ofrom = opts->resume_object_ref && *opts->resume_object_ref ? opts->resume_object_ref : WORLD_SCAN_ZERO_REF;
	if (world_ref_parse(ofrom, "resume object ref", NULL, err) < 0) return -1;
	struct deps *d = calloc(1, sizeof *d);
	if (!d) return werr(err, WX_FAIL, "scan: out of memory");
	d->st = st;
	d->opts = opts;
	d->out = out;
	d->res = res;
	int rc = -1;
	/* One read transaction: the scan sees one consistent snapshot (inside a
	 * caller's group it sees that group's view). */
	int own_txn = !st->in_txn;
	if (own_txn && ws_exec(st, "BEGIN", err) < 0) {
		free(d);
		return -1;
	}
	if (ws_prep(st, WORLD_SQL(SCAN_LOG), &logs, err) < 0 ||
	    ws_prep(st, WORLD_SQL(SCAN_WORLDS), &worlds, err) < 0 ||
	    ws_prep(st, WORLD_SQL(OBJECT_PAYLOAD), &obj, err) < 0 ||
	    ws_prep(st, WORLD_SQL(LOG_HASH_AT), &entry, err) < 0 ||
	    ws_prep(st, WORLD_SQL(OBJECT_KIND_PAYLOAD), &d->obj, err) < 0 ||
	    ws_prep(st, WORLD_SQL(WORLD_ROOT_AT), &d->world, err) < 0 ||
	    ws_prep(st, WORLD_SQL(SCAN_OBJECTS), &objs, err) < 0)
		goto done;

	/* the previous entry's hash, for the chain check at the resume point */
	char prev_hash[WORLD_REF_SIZE] = "";
	if (from > 1) {
		sqlite3_bind_int64(entry, 1, from - 1);
		if (sqlite3_step(entry) == SQLITE_ROW) ws_col_ref(entry, 0, prev_hash);
		sqlite3_reset(entry);
	}
	long long expect = from;
	int log_done = 0;
	sqlite3_bind_int64(logs, 1, from);
	for (;;) {
		int s = sqlite3_step(logs);
		if (s == SQLITE_DONE) { log_done = 1; break; }
		if (s != SQLITE_ROW) { ws_sqlerr(st, 0, "scan log_entries", err); goto done; }
		struct ws_log_row r;
		ws_log_row_read(logs, &r);
		if (spent(&b)) { expect = r.index; break; }
		b.rows++;
		res->log_rows++;
		res->bytes_hashed += r.json_len;
		const char *bad = ws_log_row_check(&r);
		if (!bad && r.index != expect) bad = "entryIndex";
		if (!bad && r.index == 1 && r.prev) bad = "prevEntryHash";
		if (!bad && r.index > 1 && (!r.prev || strcmp(r.prev, prev_hash) != 0)) bad = "prevEntryHash";
		if (!bad) bad = dep_check(d, &r);
		if (bad) {
			res->holes++;
			if (out) fprintf(out, "integrity_hole table=log_entries index=%lld field=%s\n", r.index, bad);
		}
		snprintf(prev_hash, sizeof prev_hash, "%s", r.hash ? r.hash : "");
		expect = r.index + 1;
	}
	res->resume_log_index = expect;
	snprintf(res->resume_world_ref, sizeof res->resume_world_ref, "%s", wfrom);
	int worlds_done = 0;
	if (log_done) {
		sqlite3_bind_text(worlds, 1, wfrom, -1, SQLITE_STATIC);
		for (;;) {
			int s = sqlite3_step(worlds);
			if (s == SQLITE_DONE) { worlds_done = 1; break; }
			if (s != SQLITE_ROW) { ws_sqlerr(st, 0, "scan worlds", err); goto done; }
			struct ws_world_row r;
			ws_world_row_read(worlds, &r);
			if (spent(&b)) {
				snprintf(res->resume_world_ref, sizeof res->resume_world_ref, "%s", r.ref ? r.ref : "");
				break;
			}
			b.rows++;
			res->world_rows++;
			res->bytes_hashed += r.json_len;
			const char *bad = ws_world_row_check(&r);
			if (!bad) {
				char h[WORLD_REF_SIZE] = "";
				sqlite3_reset(entry);
				sqlite3_bind_int64(entry, 1, r.revision);
				if (sqlite3_step(entry) == SQLITE_ROW) ws_col_ref(entry, 0, h);
				sqlite3_reset(entry);
				if (strcmp(h, r.log_head) != 0) bad = "logHead";
			}
			if (!bad && ws_object_check(st, obj, r.state_root, &res->bytes_hashed)) bad = "stateRoot";
			if (bad) {
				res->holes++;
				if (out) fprintf(out, "integrity_hole table=worlds ref=%s field=%s\n", r.ref ? r.ref : "", bad);
			}
		}
	}
	snprintf(res->resume_object_ref, sizeof res->resume_object_ref, "%s", ofrom);
	int objects_done = !opts->objects;
	if (opts->objects && log_done && worlds_done) {
		/* every object, orphans included: its ref from its payload */
		sqlite3_bind_text(objs, 1, ofrom, -1, SQLITE_STATIC);
		for (;;) {
			int s = sqlite3_step(objs);
			if (s == SQLITE_DONE) { objects_done = 1; break; }
			if (s != SQLITE_ROW) { ws_sqlerr(st, 0, "scan objects", err); goto done; }
			const char *ref = (const char *)sqlite3_column_text(objs, 0);
			if (spent(&b)) {
				snprintf(res->resume_object_ref, sizeof res->resume_object_ref, "%s", ref ? ref : "");
				break;
			}
			b.rows++;
			res->object_rows++;
			const void *p = sqlite3_column_blob(objs, 1);
			size_t n = (size_t)sqlite3_column_bytes(objs, 1);
			res->bytes_hashed += n;
			char got[WORLD_REF_SIZE];
			if (!ref || world_hash_ref(p ? p : "", n, got, NULL) < 0 || strcmp(got, ref) != 0) {
				res->holes++;
				if (out) fprintf(out, "integrity_hole table=objects ref=%s field=payload\n", ref ? ref : "");
			}
		}
	}
	res->complete = log_done && worlds_done && objects_done;
	if (!res->complete && out) {
		fprintf(out, "integrity_scan_incomplete log_rows=%lld world_rows=%lld holes=%lld resume_log_index=%lld "
		             "resume_world_ref=%s",
		        res->log_rows, res->world_rows, res->holes, res->resume_log_index, res->resume_world_ref);
		if (opts->objects) fprintf(out, " object_rows=%lld resume_object_ref=%s", res->object_rows, res->resume_object_ref);
		fputc('\n', out);
	}
	rc = 0;
done:
	sqlite3_finalize(logs);
	sqlite3_finalize(worlds);
	sqlite3_finalize(obj);
	sqlite3_finalize(entry);
	sqlite3_finalize(objs);
	sqlite3_finalize(d->obj);
	sqlite3_finalize(d->world);
	free(d);
	struct world_err ig;
	if (own_txn) ws_exec(st, "COMMIT", &ig);
	return rc;
}
