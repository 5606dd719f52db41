/* store/scan.c: see scan.h. Every statement runs through the store's SQL
 * driver (store/db.h, st->wdb), so the scan runs on SQLite and PostgreSQL
 * alike; each statement's PostgreSQL text, where it differs, is in
 * store/sql.c. The cursors are paged by their keys (struct page): the
 * PostgreSQL driver fetches a result whole, so an unbounded SELECT over
 * 10^6 rows would hold them all at once. */
#include "store/scan.h"
#include "store/tree.h"
#include "store/store_internal.h"
#include "common/canon.h"
#include "common/pause.h"
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
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

/* ---- a cursor read in pages by its key ----
 *
 * Each cursor statement of sql.c (SCAN_*, STREAM_*) takes ?1, the first
 * key of a page (>=), and ?2, the rows of a page, and orders by that key.
 * Where the engine streams (WS_CAP_STREAM: SQLite) a page is unbounded
 * (-1): SQLite steps its result row by row, so one statement is the whole
 * pass. Elsewhere (PostgreSQL) the driver fetches a result whole at the
 * first step: a page is SCAN_PAGE
 * rows, and the next one starts past the last key read (an integer key:
 * key + 1; a text key: >= that key, its row skipped -- the keys are
 * primary keys and the scan reads one snapshot, so it is the first row).
 * Test builds: WORLD_TEST_SCAN_PAGE=N pages by N rows on both backends. */
#define SCAN_PAGE 10000

struct page {
	struct world_store *st;
	struct wdb_stmt *s;
	long long limit;  /* rows a page, -1 = one page */
	long long rows;   /* read from this page (the skipped row included) */
	int col, text;    /* the key's column, and whether it is text */
	long long ikey;   /* the last integer key read */
	char *tkey;       /* the last text key read (paged only) */
	size_t tcap;
	int skip;         /* a text page after the first: its first row is tkey's */
	int oom;          /* page_step failed keeping the key */
};

static long long page_rows(struct world_store *st)
{
#ifdef WORLD_TEST_HOOKS
	const char *e = getenv("WORLD_TEST_SCAN_PAGE");
	if (e && *e) {
		char *end;
		long long n = strtoll(e, &end, 10);
		if (!*end && n > 0) return n;
	}
#endif
	return ws_can(st, WS_CAP_STREAM) ? -1 : SCAN_PAGE;
}

/* sql = WORLD_SQL(X), whose key is column col (text or not) */
static int page_open(struct page *p, struct world_store *st, const char *sql, int col, int text, struct world_err *err)
{
	memset(p, 0, sizeof *p);
	p->st = st;
	p->col = col;
	p->text = text;
	p->limit = page_rows(st);
	return ws_prep(st, sql, &p->s, err);
}

static void page_bind(struct page *p)
{
	wdb_reset(p->s);
	/* a failed bind fails the next step (db.h), which page_step checks */
	(void)wdb_bind_int64(p->s, 2, p->limit, NULL);
	p->rows = 0;
}

/* from the integer key k on */
static void page_from_int(struct page *p, long long k)
{
	page_bind(p);
	(void)wdb_bind_int64(p->s, 1, k, NULL);
}

/* from the text key k on (copied) */
static void page_from_text(struct page *p, const char *k)
{
	page_bind(p);
	(void)wdb_bind_text(p->s, 1, k, -1, NULL);
}

/* WDB_ROW (the row's columns until the next call), WDB_DONE, or a
 * negative enum wdb_fail (the caller formats the error: page_err). */
static int page_step(struct page *p)
{
	for (;;) {
		int s = wdb_step(p->s, NULL);
		if (s < 0) return s;
		if (s == WDB_ROW) {
			p->rows++;
			if (p->limit < 0) return WDB_ROW; /* one page: no key kept */
			if (!p->text) {
				p->ikey = wdb_column_int64(p->s, p->col, NULL);
				return WDB_ROW;
			}
			const char *k = wdb_column_text(p->s, p->col);
			if (p->skip) {
				p->skip = 0;
				if (k && p->tkey && strcmp(k, p->tkey) == 0) continue;
			}
			size_t n = strlen(k ? k : "") + 1;
			if (n > p->tcap) {
				char *t = realloc(p->tkey, n);
				if (!t) {
					p->oom = 1;
					return WDB_FAIL;
				}
				p->tkey = t;
				p->tcap = n;
			}
			memcpy(p->tkey, k ? k : "", n);
			return WDB_ROW;
		}
		/* the end of a page: of the cursor when it was short */
		if (p->limit < 0 || p->rows < p->limit) return WDB_DONE;
		world_pause("scan.page");
		if (p->text) {
			page_from_text(p, p->tkey);
			p->skip = 1;
		} else {
			if (p->ikey == INT64_MAX) return WDB_DONE;
			page_from_int(p, p->ikey + 1);
		}
	}
}

/* page_step's failure as the scan's error: what failed on the store */
static int page_err(struct page *p, const char *what, struct world_err *err)
{
	if (p->oom) return werr(err, WX_FAIL, "scan: out of memory");
	return ws_sqlerr(p->st, 0, what, err);
}

static void page_close(struct page *p)
{
	wdb_finalize(p->s);
	free(p->tkey);
	memset(p, 0, sizeof *p);
}

/* the step of a lookup that failed: the scan stops with this error (a
 * lookup that failed is not a hole: the database could not answer) */
static void lookup_failed(struct world_store *st, int *failed, struct world_err *ferr, const char *what)
{
	if (*failed) return;
	*failed = 1;
	ws_sqlerr(st, 0, what, ferr);
}


/* ---- what a committed call depends on (one entry) ---- */

/* A v1 record's fields read from its canonical bytes without building a
 * json_t, when it has the plain shape the coordinator writes: one object
 * whose members are strings without escapes (of fewer than RP_MAX bytes
 * for the five kept), integers of at most 18 characters, true, false or
 * null. Returns 1 with vals[] (what jstr answers on json_loadb's value:
 * invocationId, transitionFn, interpreter, input, output) and *epoch
 * (json_integer_value of semanticsEpoch), 0 for any other shape: the caller
 * loads that one with jansson. */
#define RP_MAX 512
static int rec_plain(const char *p, size_t n, char bufs[5][RP_MAX], const char *vals[5], long long *epoch)
{
	static const char *const names[5] = { "invocationId", "transitionFn", "interpreter", "input", "output" };
	for (int w = 0; w < 5; w++) vals[w] = NULL;
	*epoch = 0;
	if (n < 2 || p[0] != '{') return 0;
	size_t i = 1;
	if (p[i] == '}') return n == 2;
	for (;;) {
		if (i >= n || p[i] != '"') return 0;
		size_t k = ++i;
		while (i < n && p[i] != '"' && p[i] != '\\') i++;
		if (i >= n || p[i] != '"') return 0; /* an escaped key */
		size_t klen = i - k;
		i++;
		if (i + 1 >= n || p[i] != ':') return 0;
		i++;
		int which = -1;
		for (int w = 0; w < 5; w++)
			if (strlen(names[w]) == klen && memcmp(p + k, names[w], klen) == 0) which = w;
		int is_epoch = klen == 14 && memcmp(p + k, "semanticsEpoch", 14) == 0;
		char c = p[i];
		if (c == '"') {
			size_t v = ++i;
			while (i < n && p[i] != '"' && p[i] != '\\') i++;
			if (i >= n || p[i] != '"') return 0; /* an escape */
			size_t vlen = i - v;
			i++;
			if (which >= 0) {
				if (vlen >= RP_MAX) return 0;
				memcpy(bufs[which], p + v, vlen);
				bufs[which][vlen] = '\0';
				vals[which] = bufs[which];
			}
		} else if (c == '-' || (c >= '0' && c <= '9')) {
			size_t v = i;
			int neg = c == '-';
			if (neg) i++;
			long long x = 0;
			while (i < n && p[i] >= '0' && p[i] <= '9') x = x * 10 + (p[i++] - '0');
			if (i - v > 18 || (i < n && p[i] == '.')) return 0; /* a long integer, a real */
			if (is_epoch) *epoch = neg ? -x : x;
		} else if (c == 't' || c == 'n') {
			i += 4; /* canonical: true, null */
		} else if (c == 'f') {
			i += 5;
		} else {
			return 0; /* an array or object */
		}
		if (i >= n) return 0;
		if (p[i] == '}') return i + 1 == n;
		if (p[i] != ',') return 0;
		i++;
	}
}

/* an invocation record's fields: v[] = invocationId, transitionFn,
 * interpreter, input, output (jstr's answers), epoch = semanticsEpoch
 * (json_integer_value's); j = the loaded record when it is not plain
 * (rec_plain) or is a v2, whose plan and effects are read from it */
struct recv {
	const char *v[5];
	long long epoch;
	json_t *j;
	char bufs[5][RP_MAX];
};

static const char *const rec_names[5] = { "invocationId", "transitionFn", "interpreter", "input", "output" };

/* The fields of the record p[0..n) (canonical): 0, or -1 when jansson cannot load it. */
static int rec_fields(struct recv *rv, const char *p, size_t n, int v2)
{
	rv->j = NULL;
	if (!v2 && rec_plain(p, n, rv->bufs, rv->v, &rv->epoch)) return 0;
	rv->j = json_loadb(p, n, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, NULL);
	if (!rv->j) return -1;
	for (int w = 0; w < 5; w++) rv->v[w] = json_string_value(json_object_get(rv->j, rec_names[w]));
	rv->epoch = json_integer_value(json_object_get(rv->j, "semanticsEpoch"));
	return 0;
}

#define DEP_CACHE 64

struct deps {
	struct world_store *st;
	const struct world_scan_opts *opts;
	FILE *out;
	struct world_scan_result *res;
	struct wdb_stmt *obj;   /* semantic_id, payload by ref */
	struct wdb_stmt *world; /* state_root of the world at a revision */
	struct wdb_stmt *arch;  /* PostgreSQL: an interpreter's row and archived bytes */
	int failed;             /* a lookup failed: the scan fails with ferr */
	struct world_err ferr;
	/* sources and interpreters are shared by many entries: checked once */
	struct { char ref[WORLD_REF_SIZE]; int bad; } src[DEP_CACHE], interp[DEP_CACHE];
	size_t nsrc, ninterp;
	int quiet;            /* probing: hole() neither prints nor counts */
	struct recv rv;       /* the entry's record (dep_obj's DEP_RECORD) */
	struct memo *memo;    /* a budgeted scan's verdicts, NULL = none (indexed = 1) */
	struct stream *stream;/* the full scan's, during its log pass */
};

/* the verdicts (below: a budgeted scan's, or the full scan's sets):
 * dep_obj's answer, 1 the object is sound, 0 it is not (a hole) */
static int memo_dep(struct deps *d, const char *ref, const char *kind, const char *kind2, json_t **json,
                    int *is_kind2);
struct sobj;
static const struct sobj *verdict(struct deps *d, const char *ref, int fill);
static int memo_source_sound(const struct sobj *o);

static void hole(struct deps *d, const char *table, long long index, const char *field, const char *ref)
{
	/* (after a failed lookup the scan fails: what the database could not
	 * answer is no hole) */
	if (d->quiet || d->failed) return;
	d->res->holes++;
	if (d->out)
		fprintf(d->out, "integrity_hole table=%s index=%lld field=%s ref=%s\n", table, index, field,
		        ref && *ref ? ref : "none");
}

/* json for dep_obj: the payload must be canonical JSON, not parsed */
static json_t *dep_canonical_only;
#define DEP_CANONICAL (&dep_canonical_only)
/* json for dep_obj: canonical, an invocation record, its fields in d->rv */
static json_t *dep_record_fields;
#define DEP_RECORD (&dep_record_fields)

/* The object ref of kind (or kind2), hash recomputed; with json, the
 * payload must be canonical JSON, parsed into *json unless json is
 * DEP_CANONICAL. A problem is one hole and -1. */
static int dep_obj(struct deps *d, long long index, const char *field, const char *ref, const char *kind,
                   const char *kind2, json_t **json, int *is_kind2)
{
	if (json && json != DEP_CANONICAL && json != DEP_RECORD) *json = NULL;
	if (!ref || !world_ref_valid(ref)) {
		hole(d, "objects", index, field, ref);
		return -1;
	}
	if (d->memo || d->stream) {
		int w = memo_dep(d, ref, kind, kind2, json, is_kind2);
		if (!w) hole(d, "objects", index, field, ref);
		return w ? 0 : -1;
	}
	wdb_reset(d->obj);
	/* (ref outlives the step: the statement is reset before returning) */
	(void)wdb_bind_text_nocopy(d->obj, 1, ref, -1, NULL);
	int ok = 0;
	int s = wdb_step(d->obj, NULL);
	if (s < 0) lookup_failed(d->st, &d->failed, &d->ferr, "scan: object lookup");
	if (s == WDB_ROW) {
		const char *sem = wdb_column_text(d->obj, 0);
		size_t n;
		const char *p = wdb_column_blob(d->obj, 1, &n);
		char got[WORLD_REF_SIZE];
		d->res->bytes_hashed += n;
		d->res->objects_verified++;
		int k1 = sem && strcmp(sem, kind) == 0, k2 = sem && kind2 && strcmp(sem, kind2) == 0;
		if (is_kind2) *is_kind2 = k2;
		ok = world_hash_ref(p ? p : "", n, got, NULL) == 0 && strcmp(got, ref) == 0 && (k1 || k2);
		if (ok && json) {
			ok = world_canon_is_canonical(p ? p : "", n);
			/* canonical bytes are their own canonical form: what
			 * world_json_parse would load, without canonicalising again */
			if (ok && json == DEP_RECORD)
				ok = rec_fields(&d->rv, p ? p : "", n, k2) == 0;
			else if (ok && json != DEP_CANONICAL)
				ok = (*json = json_loadb(p ? p : "", n, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL,
				                         NULL)) != NULL;
		}
	}
	wdb_reset(d->obj);
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

/* The source at ref is in canonical source form (docs/design.md §6.2): what ran. */
static int source_canonical(struct deps *d, const char *ref)
{
	wdb_reset(d->obj);
	(void)wdb_bind_text_nocopy(d->obj, 1, ref, -1, NULL);
	int ok = 0;
	int s = wdb_step(d->obj, NULL);
	if (s < 0) lookup_failed(d->st, &d->failed, &d->ferr, "scan: source lookup");
	if (s == WDB_ROW) {
		size_t n, cn = 0;
		const char *p = wdb_column_blob(d->obj, 1, &n);
		char *c = world_canon_source(p, n, &cn, NULL);
		ok = c && cn == n && memcmp(c, p, n) == 0;
		free(c);
	}
	wdb_reset(d->obj);
	return ok;
}

/* The state_root of the world at revision (WORLD_ROOT_AT), "" when none. */
static void root_at(struct deps *d, long long revision, char root[WORLD_REF_SIZE])
{
	root[0] = '\0';
	wdb_reset(d->world);
	(void)wdb_bind_int64(d->world, 1, revision, NULL);
	int s = wdb_step(d->world, NULL);
	if (s < 0) lookup_failed(d->st, &d->failed, &d->ferr, "scan: world lookup");
	if (s == WDB_ROW) ws_col_ref(d->world, 0, root);
	wdb_reset(d->world);
}

/* world_interp_verify where the archive's bytes are in the database
 * (PostgreSQL's archive table, which store/copy.c fills; archive.c reads
 * SQLite's DB.artifacts files): the interpreters row, the bytes hashing to
 * ref and of its recorded size (else WORLD_INTERP_FILE), and the manifest
 * the canonical {hash,size,version} of them (else WORLD_INTERP_MANIFEST).
 * 0 when sound. */
static int interp_verify_db(struct deps *d, const char *ref)
{
	struct world_store *st = d->st;
	if (!d->arch && ws_prep(st, WORLD_SQL(SCAN_ARCHIVE), &d->arch, &d->ferr) < 0) {
		d->failed = 1;
		return WORLD_INTERP_FILE;
	}
	wdb_reset(d->arch);
	(void)wdb_bind_text_nocopy(d->arch, 1, ref, -1, NULL);
	int s = wdb_step(d->arch, NULL), bad = WORLD_INTERP_FILE;
	if (s < 0) lookup_failed(st, &d->failed, &d->ferr, "scan: interpreter lookup");
	if (s == WDB_ROW && !wdb_column_is_null(d->arch, 2)) {
		const char *version = wdb_column_text(d->arch, 0);
		long long size = wdb_column_int64(d->arch, 1, NULL);
		size_t n, mn;
		const void *p = wdb_column_blob(d->arch, 2, &n);
		char got[WORLD_REF_SIZE];
		if (world_hash_ref(p, n, got, NULL) == 0 && strcmp(got, ref) == 0 && size >= 0 && (uint64_t)size == n) {
			bad = WORLD_INTERP_MANIFEST;
			const char *m = wdb_column_blob(d->arch, 3, &mn);
			json_t *j = world_canon_is_canonical(m, mn) ? json_loadb(m, mn, JSON_REJECT_DUPLICATES, NULL) : NULL;
			json_t *h = json_object_get(j, "hash"), *v = json_object_get(j, "version"), *z = json_object_get(j, "size");
			if (json_is_string(h) && strcmp(json_string_value(h), ref) == 0 && json_is_string(v) && version &&
			    strcmp(json_string_value(v), version) == 0 && json_is_integer(z) && json_integer_value(z) == size)
				bad = 0;
			json_decref(j);
		}
	}
	wdb_reset(d->arch);
	return bad;
}

/* The interpreter's check (what failed, 0 when sound), from the archive's
 * files beside a store file, from the database elsewhere. */
static int interp_check(struct deps *d, const char *ref)
{
	if (!ws_can(d->st, WS_CAP_FILE)) return interp_verify_db(d, ref);
	int what = 0;
	return world_interp_verify(d->st, ref, &what, NULL) < 0 ? (what ? what : WORLD_INTERP_FILE) : 0;
}

/* Everything entry r depends on, beyond the row itself. Returns the field
 * of the log_entries hole when the record itself is unsound, else NULL. */
static const char *dep_check(struct deps *d, const struct ws_log_row *r)
{
	int v2 = 0;
	/* a record that is missing, damaged, of another kind, or disagrees
	 * with the header is the entry's own hole (its transitionRef is wrong);
	 * its fields in d->rv (a plain v1 record's without jansson) */
	d->quiet = 1;
	d->rv.j = NULL;
	int rrc = dep_obj(d, r->index, "transitionRef", r->tref, "world/invocation-record/v1", "world/invocation-record/v2",
	                  DEP_RECORD, &v2);
	d->quiet = 0;
	if (rrc < 0) return "transitionRef";
	json_t *rec = d->rv.j; /* NULL for a plain v1 record */
	const char *inv = d->rv.v[0], *fn = d->rv.v[1], *interp = d->rv.v[2], *in = d->rv.v[3];
	if (!inv || !fn || strcmp(fn, r->fn) != 0 || !interp || strcmp(interp, r->interp) != 0 || d->rv.epoch != r->epoch) {
		json_decref(rec);
		return "transitionRef";
	}
	dep_obj(d, r->index, "input", in, "world/invocation-input/v1", NULL, DEP_CANONICAL, NULL);
	const char *out = d->rv.v[4];
	if (dep_obj(d, r->index, "output", out, "world/invocation-output/v1", NULL, DEP_CANONICAL, NULL) == 0) {
		/* the output is the stateRoot of the world of this revision */
		char root[WORLD_REF_SIZE];
		root_at(d, r->index, root);
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
	                 strcmp(jr.intent_ref, in ? in : "") != 0)))
		hole(d, "journal", r->index, "invocation", r->tref);
	int bad;
	if (!cached(d, 0, r->fn, &bad)) {
		d->quiet = 1;
		if (d->memo || d->stream)
			bad = !world_ref_valid(r->fn) || !memo_source_sound(verdict(d, r->fn, 0));
		else
			bad = dep_obj(d, r->index, "transitionFn", r->fn, "world/transition-source/v1", NULL, NULL, NULL) < 0 ||
			      !source_canonical(d, r->fn);
		d->quiet = 0;
		remember(d, 0, r->fn, bad);
	}
	if (bad) hole(d, "objects", r->index, "transitionFn", r->fn);
	if (!cached(d, 1, r->interp, &bad)) {
		bad = interp_check(d, r->interp);
		remember(d, 1, r->interp, bad);
	}
	if (bad) hole(d, "artifacts", r->index, bad == WORLD_INTERP_MANIFEST ? "interpreter.manifest" : "interpreter", r->interp);
	json_decref(rec);
	return NULL;
}

/* ---- the streaming full scan (scan.h, WORLD_SCAN_STREAM_MAX_OBJECTS) ----
 *
 * A full scan (no budget, no resume point) reads each table once in its
 * storage order instead of looking each entry's dependencies up by ref:
 * objects first (each payload hashed once; its kind, whether its hash
 * holds, whether it is canonical -- JSON kinds -- or in canonical source
 * form -- sources; a v1 invocation record's fields), then worlds (each row
 * checked; the stateRoot of each revision), then the log in index order,
 * each entry's checks made against those sets, and last each world's
 * logHead against the entry hashes the log pass kept. The checks and the
 * lines are those of the indexed path (dep_check and the worlds loop);
 * world and object lines are sorted by ref as the indexed cursors print
 * them. What the sets cannot answer exactly goes to the indexed lookups:
 * a v2 record's entry (plan, effects, their requests, results and journal
 * rows) is checked by dep_check, a revision with more than one world by
 * WORLD_ROOT_AT; the journal is looked up by journal_by_subject. */

enum { K_OTHER, K_INPUT, K_OUTPUT, K_REC1, K_REC2, K_PLAN, K_EREC, K_EREQ, K_ERES, K_SOURCE };
#define F_HASH 1  /* the payload hashes to the ref */
#define F_CANON 2 /* canonical JSON (JSON kinds), canonical source form (sources) */
#define F_REC 4   /* a v1 record whose fields are in recs[rec] */

struct sobj { unsigned char ref[32]; uint8_t kind, flags; uint32_t rec; };
#define NOSTR ((size_t)-1)
/* a ref-valued field of a record: absent, a valid ref (d), or other text (arena) */
struct sfield { uint8_t tag; unsigned char d[32]; size_t off; };
struct srec { struct sfield in, out; size_t inv, fn, interp; long long epoch; };
struct sworld_root { unsigned char root[32]; uint8_t state; }; /* 0 none, 1 valid root, 2 other text, 3 several worlds */
struct shash { unsigned char h[32]; uint8_t valid; };
struct spending { unsigned char ref[32], head[32]; long long revision; uint8_t root_bad; };
struct shole { char *ref; const char *field; };
/* an invocation intent of the journal: for its subject, the row JOURNAL_FIND
 * answers (the committed one first, then the latest): its ref ("" 0, a ref
 * 1, other text 2), whether its outcome's status is "committed", and the
 * outcome's ref when that is a ref */
struct sjrow {
	size_t subj;     /* arena */
	long long id;
	uint32_t h;
	uint8_t cls;     /* (o.status = 'committed'): 2 true, 1 false, 0 NULL */
	uint8_t committed, out_valid, in_tag;
	unsigned char out[32], in[32];
};

struct stream {
	struct sobj *o;
	size_t no, co;
	uint32_t *start; /* o sorted by ref; start[b] = first of bucket b (top `bits` bits) */
	unsigned bits;
	struct srec *r;
	size_t nr, cr;
	char *a;         /* strings of the records */
	size_t na, ca;
	size_t last_fn, last_interp;
	long long L;     /* the log's last index */
	struct sworld_root *roots; /* [1..L] */
	struct shash *hashes;      /* [1..L] */
	struct spending *pend;
	size_t np, cp;
	struct shole *wh, *oh;     /* world and object holes, sorted before printing */
	size_t nwh, cwh, noh, coh;
	int window;                /* a budgeted scan's window: no --objects rows or holes */
	struct sjrow *j;           /* the journal's invocation intents, one a subject */
	size_t nj, cj;
	uint32_t *jt;              /* open addressing by subject: index + 1, 0 = empty */
	size_t jslots;             /* a power of two, at least twice nj */
};

/* 2 MB pages for the whole 2 MB pages inside p[0..n) when it is large: the
 * sets are hundreds of MB, touched first by the scan itself (a page fault
 * per 4 KiB otherwise) */
static void huge_advice(void *p, size_t n)
{
	const uintptr_t huge = (uintptr_t)2 << 20;
	uintptr_t a = ((uintptr_t)p + huge - 1) & ~(huge - 1), e = ((uintptr_t)p + n) & ~(huge - 1);
	/* advice only: without it the scan is the same, a little slower */
	if (n >= 4 * huge && e > a && madvise((void *)a, e - a, MADV_HUGEPAGE) != 0) {}
}

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap) return 0;
	size_t c = *cap ? *cap : 1024;
	while (c < need) c *= 2;
	void *q = realloc(*p, c * size);
	if (!q) return -1;
	huge_advice(q, c * size);
	*p = q;
	*cap = c;
	return 0;
}

/* n bytes for an array read at random: 2 MB pages when large (a TLB miss
 * less per lookup); NULL when out of memory */
static void *big_alloc(size_t n)
{
	const size_t huge = (size_t)2 << 20;
	if (n < 2 * huge) return malloc(n ? n : 1);
	void *p = NULL;
	size_t rounded = (n + huge - 1) / huge * huge;
	if (posix_memalign(&p, huge, rounded) != 0) return NULL;
	/* advice only: without it the scan is the same, a little slower */
	if (madvise(p, rounded, MADV_HUGEPAGE) != 0) {}
	return p;
}

static size_t arena_put(struct stream *m, const char *str)
{
	if (!str) return NOSTR;
	size_t n = strlen(str) + 1;
	if (grow((void **)&m->a, &m->ca, m->na + n, 1) < 0) return (size_t)-2;
	memcpy(m->a + m->na, str, n);
	size_t off = m->na;
	m->na += n;
	return off;
}

static const char *arena_get(const struct stream *m, size_t off) { return off == NOSTR ? NULL : m->a + off; }

/* a record's string field, the same as the last record's kept once */
static size_t arena_dedup(struct stream *m, size_t *last, const char *str)
{
	if (!str) return NOSTR;
	if (*last != NOSTR && strcmp(m->a + *last, str) == 0) return *last;
	size_t off = arena_put(m, str);
	if (off != (size_t)-2) *last = off;
	return off;
}

static int field_put(struct stream *m, struct sfield *f, const char *str)
{
	f->tag = 0;
	f->off = NOSTR;
	if (!str) return 0;
	if (world_ref_parse(str, "ref", f->d, NULL) == 0) {
		f->tag = 1;
		return 0;
	}
	f->tag = 2;
	return (f->off = arena_put(m, str)) == (size_t)-2 ? -1 : 0;
}

/* the field's text (as the record holds it), NULL when absent */
static const char *field_text(const struct stream *m, const struct sfield *f, char buf[WORLD_REF_SIZE])
{
	if (f->tag == 0) return NULL;
	if (f->tag == 2) return arena_get(m, f->off);
	world_ref_format(f->d, buf);
	return buf;
}

static int kind_of(const char *sem)
{
	static const struct { const char *id; int k; } kinds[] = {
		{ "world/invocation-input/v1", K_INPUT },   { "world/invocation-output/v1", K_OUTPUT },
		{ "world/invocation-record/v1", K_REC1 },   { "world/invocation-record/v2", K_REC2 },
		{ "world/effect-plan/v1", K_PLAN },         { "world/effect-record/v1", K_EREC },
		{ "world/effect-request/v1", K_EREQ },      { "world/effect-result/v1", K_ERES },
		{ "world/transition-source/v1", K_SOURCE },
	};
	if (!sem) return K_OTHER;
	for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++)
		if (strcmp(sem, kinds[i].id) == 0) return kinds[i].k;
	return K_OTHER;
}

static uint32_t bucket(const struct stream *m, const unsigned char *ref)
{
	uint32_t v = (uint32_t)ref[0] << 24 | (uint32_t)ref[1] << 16 | (uint32_t)ref[2] << 8 | ref[3];
	return m->bits ? v >> (32 - m->bits) : 0;
}

static int sobj_cmp(const void *a, const void *b) { return memcmp(a, b, 32); }

static int stream_index(struct stream *m)
{
	/* about one object a bucket: each lookup one bucket and a few compares */
	m->bits = 1;
	while (m->bits < 24 && ((size_t)1 << m->bits) < m->no) m->bits++;
	size_t nb = (size_t)1 << m->bits;
	if (!(m->start = big_alloc((nb + 1) * sizeof *m->start))) return -1;
	memset(m->start, 0, (nb + 1) * sizeof *m->start);
	/* sorted by a counting pass over the buckets (the refs are uniform
	 * hashes: a bucket holds a few), then each bucket by insertion:
	 * linear, where qsort's n log n compares were a tenth of a 10^6 scan */
	for (size_t i = 0; i < m->no; i++) m->start[bucket(m, m->o[i].ref) + 1]++;
	for (size_t b = 0; b < nb; b++) m->start[b + 1] += m->start[b];
	struct sobj *sorted = m->no ? big_alloc(m->no * sizeof *sorted) : NULL;
	uint32_t *fill = malloc(nb * sizeof *fill);
	if ((m->no && !sorted) || !fill) {
		free(sorted);
		free(fill);
		return -1;
	}
	memcpy(fill, m->start, nb * sizeof *fill);
	for (size_t i = 0; i < m->no; i++) sorted[fill[bucket(m, m->o[i].ref)]++] = m->o[i];
	free(fill);
	free(m->o);
	m->o = sorted;
	m->co = m->no;
	for (size_t b = 0; b < nb; b++)
		for (size_t i = m->start[b] + 1; i < m->start[b + 1]; i++) {
			struct sobj x = m->o[i];
			size_t k = i;
			for (; k > m->start[b] && sobj_cmp(&m->o[k - 1], &x) > 0; k--) m->o[k] = m->o[k - 1];
			m->o[k] = x;
		}
	return 0;
}

/* ---- the journal pass ---- */

static uint32_t str_hash(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a */
	for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 0x100000001b3ULL;
	return (uint32_t)(h ^ h >> 32);
}

static const struct sjrow *jfind(const struct stream *m, const char *subj, uint32_t h)
{
	if (!m->jslots || !subj) return NULL;
	for (size_t i = h & (m->jslots - 1);; i = (i + 1) & (m->jslots - 1)) {
		uint32_t t = m->jt[i];
		if (!t) return NULL;
		const struct sjrow *e = &m->j[t - 1];
		if (e->h == h && strcmp(m->a + e->subj, subj) == 0) return e;
	}
}

static int jslots_grow(struct stream *m)
{
	size_t slots = m->jslots ? m->jslots * 2 : 1024;
	uint32_t *t = big_alloc(slots * sizeof *t);
	if (!t) return -1;
	memset(t, 0, slots * sizeof *t);
	for (size_t k = 0; k < m->nj; k++) {
		size_t i = m->j[k].h & (slots - 1);
		while (t[i]) i = (i + 1) & (slots - 1);
		t[i] = (uint32_t)(k + 1);
	}
	free(m->jt);
	m->jt = t;
	m->jslots = slots;
	return 0;
}

/* Every invocation intent once, in storage order, with its outcome; for
 * each subject the row JOURNAL_FIND would answer. Returns 0, 1 beyond the
 * stream's bound, -1 with err. */
static int stream_journal(struct deps *d, struct stream *m, struct world_err *err)
{
	struct page pg;
	if (page_open(&pg, d->st, WORLD_SQL(STREAM_JOURNAL), 0, 0, err) < 0) return -1;
	struct wdb_stmt *q = pg.s;
	page_from_int(&pg, INT64_MIN);
	int rc = -1;
	for (;;) {
		int s = page_step(&pg);
		if (s == WDB_DONE) break;
		if (s != WDB_ROW) { page_err(&pg, "scan journal", err); goto done; }
		/* JOURNAL_FIND binds the subject as text: no other value equals it
		 * (the statement gives a subject that is not text as NULL, and
		 * its length in bytes: a text holding a NUL is no bound text) */
		const char *subj = wdb_column_text(q, 1);
		long long sn = wdb_column_int64(q, 6, NULL);
		if (!subj || (long long)strlen(subj) != sn) continue;
		long long id = wdb_column_int64(q, 0, NULL);
		uint8_t cls = wdb_column_is_null(q, 3) ? 0 : wdb_column_int64(q, 3, NULL) ? 2 : 1;
		uint32_t h = str_hash(subj, (size_t)sn);
		struct sjrow *e = NULL;
		size_t slot = 0;
		if (m->jslots)
			for (slot = h & (m->jslots - 1); m->jt[slot]; slot = (slot + 1) & (m->jslots - 1)) {
				struct sjrow *x = &m->j[m->jt[slot] - 1];
				if (x->h == h && strcmp(m->a + x->subj, subj) == 0) { e = x; break; }
			}
		if (e) {
			/* ORDER BY (o.status = 'committed') DESC, i.id DESC LIMIT 1 */
			if (e->cls > cls || (e->cls == cls && e->id > id)) continue;
		} else {
			if ((long long)m->nj >= WORLD_SCAN_STREAM_MAX_OBJECTS) { rc = 1; goto done; }
			if (grow((void **)&m->j, &m->cj, m->nj + 1, sizeof *m->j) < 0) goto oom;
			size_t off = arena_put(m, subj);
			if (off == (size_t)-2) goto oom;
			e = &m->j[m->nj++];
			e->subj = off;
			e->h = h;
			if (m->nj * 2 > m->jslots) {
				if (jslots_grow(m) < 0) goto oom;
			} else {
				m->jt[slot] = (uint32_t)m->nj;
			}
		}
		e->id = id;
		e->cls = cls;
		/* what world_journal_find copies out: ws_col_ref, status[16] */
		struct world_journal_row jr;
		const char *status = wdb_column_text(q, 4);
		snprintf(jr.status, sizeof jr.status, "%s", status ? status : "");
		ws_col_ref(q, 2, jr.intent_ref);
		ws_col_ref(q, 5, jr.outcome_ref);
		e->committed = strcmp(jr.status, "committed") == 0;
		e->out_valid = world_ref_parse(jr.outcome_ref, "ref", e->out, NULL) == 0;
		e->in_tag = !jr.intent_ref[0] ? 0 : world_ref_parse(jr.intent_ref, "ref", e->in, NULL) == 0 ? 1 : 2;
	}
	rc = 0;
	goto done;
oom:
	werr(err, WX_FAIL, "scan: out of memory");
done:
	page_close(&pg);
	return rc;
}

static const struct sobj *stream_find_d(const struct stream *m, const unsigned char d[32])
{
	uint32_t b = bucket(m, d);
	size_t lo = m->start[b], hi = m->start[b + 1];
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = memcmp(m->o[mid].ref, d, 32);
		if (c == 0) return &m->o[mid];
		if (c < 0) lo = mid + 1;
		else hi = mid;
	}
	return NULL;
}

static const struct sobj *stream_find(const struct stream *m, const char *ref)
{
	unsigned char d[32];
	if (!ref || world_ref_parse(ref, "ref", d, NULL) < 0) return NULL;
	return stream_find_d(m, d);
}

/* the bucket of d on its way into the cache (the lookups of one entry are
 * random reads of arrays of hundreds of MB: started together, they overlap) */
static void stream_prefetch(const struct stream *m, const unsigned char d[32])
{
	__builtin_prefetch(&m->start[bucket(m, d)]);
}

/* dep_obj against the set: the object a record's field names is of kind k,
 * hashes to its ref and is canonical. A problem is one hole (naming the
 * field's text) and -1. */
static int sdep(struct deps *d, const struct stream *m, long long index, const char *field, const struct sfield *f, int k)
{
	const struct sobj *o = f->tag == 1 ? stream_find_d(m, f->d) : NULL; /* absent, or text that is no ref */
	if (!o || o->kind != k || (o->flags & (F_HASH | F_CANON)) != (F_HASH | F_CANON)) {
		char buf[WORLD_REF_SIZE];
		hole(d, "objects", index, field, field_text(m, f, buf));
		return -1;
	}
	return 0;
}


static void stream_free(struct stream *m)
{
	for (size_t i = 0; i < m->nwh; i++) free(m->wh[i].ref);
	for (size_t i = 0; i < m->noh; i++) free(m->oh[i].ref);
	free(m->o);
	free(m->start);
	free(m->r);
	free(m->a);
	free(m->roots);
	free(m->hashes);
	free(m->pend);
	free(m->wh);
	free(m->oh);
	free(m->j);
	free(m->jt);
}

static int hole_add(struct shole **h, size_t *n, size_t *cap, const char *ref, const char *field)
{
	if (grow((void **)h, cap, *n + 1, sizeof **h) < 0) return -1;
	char *r = strdup(ref ? ref : "");
	if (!r) return -1;
	(*h)[*n].ref = r;
	(*h)[*n].field = field;
	(*n)++;
	return 0;
}

static int shole_cmp(const void *a, const void *b)
{
	return strcmp(((const struct shole *)a)->ref, ((const struct shole *)b)->ref);
}

/* One object of the stream: hashed, classified, a v1 record's fields kept.
 * Returns -1 on out of memory. */
static int stream_object(struct deps *d, struct stream *m, const char *ref, const char *sem, const char *p, size_t n)
{
	struct world_scan_result *res = d->res;
	res->bytes_hashed += n;
	res->objects_verified++;
	/* the payload's hash against the ref's digest (a ref that is no ref
	 * never equals a hash written out) */
	unsigned char dg[32], got[32];
	int ref_ok = ref && world_ref_parse(ref, "ref", dg, NULL) == 0;
	int hash_ok = ref_ok && world_sha256(p, n, got, NULL) == 0 && memcmp(got, dg, 32) == 0;
	if (d->opts->objects && !m->window) {
		res->object_rows++;
		if (!hash_ok && hole_add(&m->oh, &m->noh, &m->coh, ref, "payload") < 0) return -1;
	}
	if (!ref_ok) return 0; /* no reference can name it */
	if (grow((void **)&m->o, &m->co, m->no + 1, sizeof *m->o) < 0) return -1;
	struct sobj *o = &m->o[m->no++];
	memcpy(o->ref, dg, 32);
	o->kind = (uint8_t)kind_of(sem);
	o->flags = hash_ok ? F_HASH : 0;
	o->rec = 0;
	if (!hash_ok || o->kind == K_OTHER) return 0;
	if (o->kind == K_SOURCE) {
		size_t cn = 0;
		char *c = world_canon_source(p, n, &cn, NULL);
		if (c && cn == n && memcmp(c, p, n) == 0) o->flags |= F_CANON;
		free(c);
		return 0;
	}
	if (!world_canon_is_canonical(p, n)) return 0;
	o->flags |= F_CANON;
	if (o->kind != K_REC1) return 0;
	struct recv rvs, *rv = &rvs; /* (not d->rv: a verdict is made while an entry's record is in use) */
	if (rec_fields(rv, p, n, 0) < 0) {
		o->flags &= (uint8_t)~F_CANON; /* unloadable: dep_obj's hole too */
		return 0;
	}
	const char *const *v = rv->v;
	long long epoch = rv->epoch;
	json_t *rec = rv->j;
	int rc = -1;
	if (grow((void **)&m->r, &m->cr, m->nr + 1, sizeof *m->r) == 0) {
		struct srec *r = &m->r[m->nr];
		r->inv = arena_put(m, v[0]);
		r->fn = arena_dedup(m, &m->last_fn, v[1]);
		r->interp = arena_dedup(m, &m->last_interp, v[2]);
		r->epoch = epoch;
		if (r->inv != (size_t)-2 && r->fn != (size_t)-2 && r->interp != (size_t)-2 &&
		    field_put(m, &r->in, v[3]) == 0 && field_put(m, &r->out, v[4]) == 0) {
			o->rec = (uint32_t)m->nr++;
			o->flags |= F_REC;
			rc = 0;
		}
	}
	json_decref(rec);
	return rc;
}

/* ---- the verdicts of a budgeted scan ----
 *
 * A budgeted or resumed scan (the daemon's start-up scan) checks entries
 * one by one, each dependency found by ref. Verifying an object -- its
 * payload hashed, its kind read, its canonical form checked (canonical
 * source form for a source), a v1 record's fields kept: stream_object, as
 * the full scan does -- leaves a verdict in a set, and every later
 * reference to the object is answered from there, so an object is verified
 * at most once a scan however many entries name it (a source every call
 * runs, an input called again, a state root its world names too). Without
 * the verdicts each entry would verify its window again: on a log stored
 * among many large sources, ~110 ms an entry, and the daemon's start-up
 * budget would cover a few dozen rows of its 20,000.
 *
 * Objects are verified in storage order a window at a time: when an
 * entry's record has no verdict, the objects stored from just before it on
 * (WIN_OBJECTS rows, at most WIN_BYTES of payload) are read in one
 * statement and those without a verdict verified -- the coordinator stores
 * a call's input, output and record together and in log order, so the
 * next entries' are there, and the next window starts where this one
 * ended. Anything else without a verdict is read by ref and verified
 * alone. A verdict answers what a lookup would: the same holes. The set is
 * bounded: past MEMO_MAX objects (some 100 bytes each with a v1 record's
 * fields) it is emptied before the next entry, and later references make
 * their verdicts again. */
#define WIN_OBJECTS 8192
#define WIN_BYTES ((size_t)4 << 20)
#define WIN_BEFORE 64 /* rows before the record: its input and output */
#define MEMO_MAX 524288

struct memo {
	struct stream m;   /* the verdicts, in the order made (stream_object) */
	uint32_t *slot;    /* open addressing over m.o by ref: index + 1, 0 = empty */
	size_t nslots;     /* a power of two, more than twice m.no */
	long long hi;      /* the storage position after the last window's last row, -1 = none */
	struct wdb_stmt *fill, *rowid;
	int forget;        /* test builds: emptied before every entry (the tests' control) */
};

static size_t memo_home(const struct memo *mm, const unsigned char dg[32])
{
	uint64_t h;
	memcpy(&h, dg, sizeof h); /* a SHA-256 digest: uniform */
	return (size_t)h & (mm->nslots - 1);
}

static const struct sobj *memo_find(const struct memo *mm, const unsigned char dg[32])
{
	if (!mm->nslots) return NULL;
	for (size_t i = memo_home(mm, dg);; i = (i + 1) & (mm->nslots - 1)) {
		uint32_t t = mm->slot[i];
		if (!t) return NULL;
		if (memcmp(mm->m.o[t - 1].ref, dg, 32) == 0) return &mm->m.o[t - 1];
	}
}

static void memo_clear(struct memo *mm)
{
	stream_free(&mm->m);
	memset(&mm->m, 0, sizeof mm->m);
	mm->m.last_fn = mm->m.last_interp = NOSTR;
	mm->m.window = 1; /* (not counted as --objects rows) */
	if (mm->slot) memset(mm->slot, 0, mm->nslots * sizeof *mm->slot);
	mm->hi = -1;
}

static void memo_oom(struct deps *d)
{
	if (d->failed) return;
	d->failed = 1;
	werr(&d->ferr, WX_FAIL, "scan: out of memory");
}

/* Verifies one object and keeps its verdict: the verdict, or NULL when
 * its ref is no ref (nothing names it) or out of memory (d->failed). */
static const struct sobj *memo_put(struct deps *d, const char *ref, const char *sem, const char *p, size_t n)
{
	struct memo *mm = d->memo;
	size_t at = mm->m.no;
	if (stream_object(d, &mm->m, ref, sem, p ? p : "", n) < 0) {
		memo_oom(d);
		return NULL;
	}
	if (mm->m.no == at) return NULL;
	if (mm->m.no * 2 > mm->nslots) {
		size_t ns = mm->nslots ? mm->nslots * 2 : 16384;
		uint32_t *t = calloc(ns, sizeof *t);
		if (!t) {
			memo_oom(d);
			return NULL;
		}
		free(mm->slot);
		mm->slot = t;
		mm->nslots = ns;
		at = 0; /* every verdict into the new table */
	}
	for (size_t k = at; k < mm->m.no; k++) {
		size_t i = memo_home(mm, mm->m.o[k].ref);
		while (mm->slot[i]) i = (i + 1) & (mm->nslots - 1);
		mm->slot[i] = (uint32_t)(k + 1);
	}
	return &mm->m.o[mm->m.no - 1];
}

/* The window from the record at ref on (the block comment above). */
static void memo_fill(struct deps *d, const char *ref)
{
	struct memo *mm = d->memo;
	wdb_reset(mm->rowid);
	(void)wdb_bind_text_nocopy(mm->rowid, 1, ref, -1, NULL);
	int s = wdb_step(mm->rowid, NULL);
	long long at = s == WDB_ROW ? wdb_column_int64(mm->rowid, 0, NULL) : -1;
	wdb_reset(mm->rowid);
	if (s < 0) lookup_failed(d->st, &d->failed, &d->ferr, "scan: objects window");
	if (at < 0) return;
	long long from = at > WIN_BEFORE ? at - WIN_BEFORE : 0;
	if (mm->hi >= 0 && from < mm->hi && mm->hi <= at) from = mm->hi; /* the last window read those */
	wdb_reset(mm->fill);
	(void)wdb_bind_int64(mm->fill, 1, from, NULL);
	(void)wdb_bind_int64(mm->fill, 2, WIN_OBJECTS, NULL);
	size_t bytes = 0;
	while ((s = wdb_step(mm->fill, NULL)) == WDB_ROW) {
		const char *r = wdb_column_text(mm->fill, 0);
		size_t n;
		const char *p = wdb_column_blob(mm->fill, 2, &n);
		mm->hi = wdb_column_int64(mm->fill, 3, NULL) + 1;
		unsigned char dg[32];
		if (r && world_ref_parse(r, "ref", dg, NULL) == 0 && memo_find(mm, dg)) continue; /* verified already */
		memo_put(d, r, wdb_column_text(mm->fill, 1), p, n);
		if (d->failed) break;
		if ((bytes += n) >= WIN_BYTES) break;
	}
	wdb_reset(mm->fill);
	if (s < 0) lookup_failed(d->st, &d->failed, &d->ferr, "scan: objects window");
}

/* The verdict on the object at ref, made now when there is none (with
 * fill, an entry's record: its window first); NULL when it is not stored,
 * its ref is no ref, or the scan failed (d->failed). The verdict is valid
 * until the next one is made. */
static const struct sobj *memo_get(struct deps *d, const char *ref, int fill)
{
	struct memo *mm = d->memo;
	unsigned char dg[32];
	if (!ref || world_ref_parse(ref, "ref", dg, NULL) < 0) return NULL;
	const struct sobj *o = memo_find(mm, dg);
	if (o || d->failed) return o;
	if (fill) {
		memo_fill(d, ref);
		if ((o = memo_find(mm, dg)) || d->failed) return o;
	}
	wdb_reset(d->obj);
	(void)wdb_bind_text_nocopy(d->obj, 1, ref, -1, NULL);
	int s = wdb_step(d->obj, NULL);
	if (s < 0) lookup_failed(d->st, &d->failed, &d->ferr, "scan: object lookup");
	if (s == WDB_ROW) {
		size_t n;
		const char *p = wdb_column_blob(d->obj, 1, &n);
		o = memo_put(d, ref, wdb_column_text(d->obj, 0), p, n);
	}
	wdb_reset(d->obj);
	return o;
}

/* The verdict on the object at ref: from the full scan's sets, which hold
 * every object, else memo_get's. */
static const struct sobj *verdict(struct deps *d, const char *ref, int fill)
{
	if (d->stream) return stream_find(d->stream, ref);
	return memo_get(d, ref, fill);
}

/* a transition source in canonical source form, its hash holding */
static int memo_source_sound(const struct sobj *o)
{
	return o && o->kind == K_SOURCE && (o->flags & (F_HASH | F_CANON)) == (F_HASH | F_CANON);
}

/* d->rv's field w: a copy of str (the set's strings move as it grows);
 * -1 when it does not fit */
static int rv_keep(struct recv *rv, int w, const char *str)
{
	rv->v[w] = NULL;
	if (!str) return 0;
	size_t n = strlen(str) + 1;
	if (n > RP_MAX) return -1;
	if (str != rv->bufs[w]) memmove(rv->bufs[w], str, n);
	rv->v[w] = rv->bufs[w];
	return 0;
}

/* DEP_RECORD from a v1 record's kept fields: 0, -1 when one is too long
 * for d->rv (the record is then read again by ref) */
static int memo_rec(struct deps *d, const struct sobj *o)
{
	const struct stream *m = d->stream ? d->stream : &d->memo->m;
	const struct srec *r = &m->r[o->rec];
	struct recv *rv = &d->rv;
	char b[WORLD_REF_SIZE];
	rv->j = NULL;
	rv->epoch = r->epoch;
	if (rv_keep(rv, 0, arena_get(m, r->inv)) < 0 || rv_keep(rv, 1, arena_get(m, r->fn)) < 0 ||
	    rv_keep(rv, 2, arena_get(m, r->interp)) < 0 || rv_keep(rv, 3, field_text(m, &r->in, b)) < 0 ||
	    rv_keep(rv, 4, field_text(m, &r->out, b)) < 0)
		return -1;
	return 0;
}

/* An object whose verdict is sound, loaded: read again by ref, not
 * verified again (into *json, or with DEP_RECORD into d->rv). 1, or 0 when
 * it cannot be loaded. */
static int memo_load(struct deps *d, const char *ref, json_t **json, int v2)
{
	wdb_reset(d->obj);
	(void)wdb_bind_text_nocopy(d->obj, 1, ref, -1, NULL);
	int s = wdb_step(d->obj, NULL), ok = 0;
	if (s < 0) lookup_failed(d->st, &d->failed, &d->ferr, "scan: object lookup");
	if (s == WDB_ROW) {
		size_t n;
		const char *p = wdb_column_blob(d->obj, 1, &n);
		if (json == DEP_RECORD)
			ok = rec_fields(&d->rv, p ? p : "", n, v2) == 0;
		else
			ok = (*json = json_loadb(p ? p : "", n, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL,
			                         NULL)) != NULL;
	}
	wdb_reset(d->obj);
	return ok;
}

static int memo_dep(struct deps *d, const char *ref, const char *kind, const char *kind2, json_t **json,
                    int *is_kind2)
{
	const struct sobj *o = verdict(d, ref, json == DEP_RECORD);
	int k1 = o && o->kind == kind_of(kind), k2 = o && kind2 && o->kind == kind_of(kind2);
	if (is_kind2) *is_kind2 = k2;
	if (!o || !(o->flags & F_HASH) || !(k1 || k2)) return 0;
	if (!json) return 1;
	if (!(o->flags & F_CANON)) return 0;
	if (json == DEP_CANONICAL) return 1;
	if (json == DEP_RECORD && (o->flags & F_REC) && memo_rec(d, o) == 0) return 1;
	return memo_load(d, ref, json, k2);
}

/* dep_check for an entry whose record the stream holds (v1). */
static const char *stream_dep_check(struct deps *d, struct stream *m, const struct ws_log_row *r)
{
	const struct sobj *ro = stream_find(m, r->tref);
	if (!ro || (ro->kind != K_REC1 && ro->kind != K_REC2) || (ro->flags & (F_HASH | F_CANON)) != (F_HASH | F_CANON))
		return "transitionRef";
	if (!(ro->flags & F_REC)) return dep_check(d, r); /* v2: its plan and effects read by ref, verified in the sets */
	const struct srec *rec = &m->r[ro->rec];
	if (rec->in.tag == 1) stream_prefetch(m, rec->in.d);
	if (rec->out.tag == 1) stream_prefetch(m, rec->out.d);
	const char *inv = arena_get(m, rec->inv), *fn = arena_get(m, rec->fn), *interp = arena_get(m, rec->interp);
	uint32_t ih = inv ? str_hash(inv, strlen(inv)) : 0;
	if (inv && m->jslots) __builtin_prefetch(&m->jt[ih & (m->jslots - 1)]);
	if (!inv || !fn || strcmp(fn, r->fn) != 0 || !interp || strcmp(interp, r->interp) != 0 || rec->epoch != r->epoch)
		return "transitionRef";
	char ib[WORLD_REF_SIZE], ob[WORLD_REF_SIZE];
	sdep(d, m, r->index, "input", &rec->in, K_INPUT);
	if (sdep(d, m, r->index, "output", &rec->out, K_OUTPUT) == 0) {
		const char *out = field_text(m, &rec->out, ob);
		/* the output is the stateRoot of the world of this revision */
		int same = 0;
		const struct sworld_root *w = r->index >= 1 && r->index <= m->L ? &m->roots[r->index] : NULL;
		if (w && w->state == 1) same = memcmp(w->root, rec->out.d, 32) == 0;
		else if (w && w->state == 3) {
			char root[WORLD_REF_SIZE];
			root_at(d, r->index, root);
			same = strcmp(root, out) == 0;
		}
		if (!same) hole(d, "objects", r->index, "output", out);
	}
	/* the invocation's committed outcome names this record (and its intent
	 * the input): the row JOURNAL_FIND answers, from the journal pass */
	const struct sjrow *j = jfind(m, inv, ih);
	int jbad = 0;
	if (j && j->in_tag == 2 && rec->in.tag == 2) {
		const char *in = field_text(m, &rec->in, ib);
		/* two texts that are not refs: compared as the indexed path does */
		struct world_journal_row jr;
		struct world_err je = { 0 };
		int jf = world_journal_find(d->st, "invocation", inv, &jr, &je);
		jbad = (jf < 0 && je.code != WX_NOT_FOUND) ||
		       (jf == 0 && (strcmp(jr.status, "committed") != 0 || strcmp(jr.outcome_ref, r->tref) != 0 ||
		                    strcmp(jr.intent_ref, in ? in : "") != 0));
	} else if (j) {
		int in_same = rec->in.tag == 0 ? j->in_tag == 0
		            : rec->in.tag == 1 ? j->in_tag == 1 && memcmp(j->in, rec->in.d, 32) == 0
		                               : 0;
		jbad = !j->committed || !j->out_valid || memcmp(j->out, ro->ref, 32) != 0 || !in_same;
	}
	if (jbad) hole(d, "journal", r->index, "invocation", r->tref);
	int bad;
	if (!cached(d, 0, r->fn, &bad)) {
		const struct sobj *so = world_ref_valid(r->fn) ? stream_find(m, r->fn) : NULL;
		bad = !so || so->kind != K_SOURCE || (so->flags & (F_HASH | F_CANON)) != (F_HASH | F_CANON);
		remember(d, 0, r->fn, bad);
	}
	if (bad) hole(d, "objects", r->index, "transitionFn", r->fn);
	if (!cached(d, 1, r->interp, &bad)) {
		bad = interp_check(d, r->interp);
		remember(d, 1, r->interp, bad);
	}
	if (bad) hole(d, "artifacts", r->index, bad == WORLD_INTERP_MANIFEST ? "interpreter.manifest" : "interpreter", r->interp);
	return NULL;
}

/* The full scan, streaming. Returns 0 when it ran, 1 when the store is
 * beyond the stream's bound (nothing printed: the caller runs the indexed
 * path), -1 with err. */
static int stream_scan(struct deps *d, FILE *out, struct world_err *err)
{
	struct world_store *st = d->st;
	struct world_scan_result *res = d->res;
	struct stream m = { .last_fn = NOSTR, .last_interp = NOSTR };
	struct page pg = { 0 };
	int rc = -1;
	/* objects, in storage order (the key: rowid, PostgreSQL's seq) */
	if (page_open(&pg, st, WORLD_SQL(STREAM_OBJECTS), 3, 0, err) < 0) goto done;
	page_from_int(&pg, INT64_MIN);
	for (;;) {
		int s = page_step(&pg);
		if (s == WDB_DONE) break;
		if (s != WDB_ROW) { page_err(&pg, "scan objects", err); goto done; }
		if (m.no >= WORLD_SCAN_STREAM_MAX_OBJECTS) { rc = 1; goto done; }
		size_t n;
		const char *p = wdb_column_blob(pg.s, 2, &n);
		if (stream_object(d, &m, wdb_column_text(pg.s, 0), wdb_column_text(pg.s, 1), p, n) < 0) goto oom;
	}
	page_close(&pg);
	if (stream_index(&m) < 0) goto oom;
	/* the journal's invocation intents, by subject */
	int jr = stream_journal(d, &m, err);
	if (jr != 0) { rc = jr; goto done; }

	/* the log's extent, then worlds in storage order */
	char last_hash[WORLD_REF_SIZE];
	if (world_log_last(st, &m.L, last_hash, err) < 0) goto done;
	if (m.L < 0) m.L = 0;
	if (m.L > WORLD_SCAN_STREAM_MAX_OBJECTS) { rc = 1; goto done; } /* (a damaged index too far out, or a huge log) */
	m.roots = calloc((size_t)m.L + 2, sizeof *m.roots);
	m.hashes = calloc((size_t)m.L + 2, sizeof *m.hashes);
	if (m.roots) huge_advice(m.roots, ((size_t)m.L + 2) * sizeof *m.roots);
	if (m.hashes) huge_advice(m.hashes, ((size_t)m.L + 2) * sizeof *m.hashes);
	if (!m.roots || !m.hashes) goto oom;
	/* (the key: the rowid, storage order, where the engine streams; else the ref, sql.c) */
	if (page_open(&pg, st, WORLD_SQL(STREAM_WORLDS), 5, !ws_can(st, WS_CAP_STREAM), err) < 0) goto done;
	if (pg.text) page_from_text(&pg, "");
	else page_from_int(&pg, INT64_MIN);
	for (;;) {
		int s = page_step(&pg);
		if (s == WDB_DONE) break;
		if (s != WDB_ROW) { page_err(&pg, "scan worlds", err); goto done; }
		struct ws_world_row w;
		ws_world_row_read(pg.s, &w);
		res->world_rows++;
		res->bytes_hashed += w.json_len;
		/* what WORLD_ROOT_AT answers for this revision */
		if (w.revision >= 1 && w.revision <= m.L) {
			struct sworld_root *wr = &m.roots[w.revision];
			if (wr->state) wr->state = 3;
			else wr->state = w.state_root && world_ref_parse(w.state_root, "ref", wr->root, NULL) == 0 ? 1 : 2;
		}
		const char *bad = ws_world_row_check(&w);
		if (bad) {
			if (hole_add(&m.wh, &m.nwh, &m.cwh, w.ref, bad) < 0) goto oom;
			continue;
		}
		/* its logHead is checked once the log pass has the entry hashes */
		if (grow((void **)&m.pend, &m.cp, m.np + 1, sizeof *m.pend) < 0) goto oom;
		struct spending *pw = &m.pend[m.np++];
		if (world_ref_parse(w.ref, "ref", pw->ref, NULL) < 0 || world_ref_parse(w.log_head, "ref", pw->head, NULL) < 0)
			goto oom; /* cannot be: the row check parsed both */
		pw->revision = w.revision;
		const struct sobj *so = stream_find(&m, w.state_root);
		pw->root_bad = !so || !(so->flags & F_HASH);
	}
	page_close(&pg);

	/* the log, in index order */
	d->stream = &m;
	if (page_open(&pg, st, WORLD_SQL(SCAN_LOG), 0, 0, err) < 0) goto done;
	page_from_int(&pg, 1);
	char prev_hash[WORLD_REF_SIZE] = "";
	long long expect = 1;
	for (;;) {
		int s = page_step(&pg);
		if (s == WDB_DONE) break;
		if (s != WDB_ROW) { page_err(&pg, "scan log_entries", err); goto done; }
		struct ws_log_row r;
		ws_log_row_read(pg.s, &r);
		res->log_rows++;
		res->bytes_hashed += r.json_len;
		if (r.index >= 1 && r.index <= m.L)
			m.hashes[r.index].valid = r.hash && world_ref_parse(r.hash, "ref", m.hashes[r.index].h, NULL) == 0;
		const char *bad = ws_log_row_check(&r);
		if (!bad && r.index != expect) bad = "entryIndex";
		if (!bad && r.index == 1 && r.prev) bad = "prevEntryHash";
		if (!bad && r.index > 1 && (!r.prev || strcmp(r.prev, prev_hash) != 0)) bad = "prevEntryHash";
		if (!bad) bad = stream_dep_check(d, &m, &r);
		if (bad && !d->failed) {
			res->holes++;
			if (out) fprintf(out, "integrity_hole table=log_entries index=%lld field=%s\n", r.index, bad);
		}
		snprintf(prev_hash, sizeof prev_hash, "%s", r.hash ? r.hash : "");
		expect = r.index + 1;
	}
	page_close(&pg);
	res->resume_log_index = expect;
	if (d->failed) {
		*err = d->ferr;
		goto done;
	}

	/* each world's logHead: the entry hash at its revision */
	for (size_t i = 0; i < m.np; i++) {
		const struct spending *pw = &m.pend[i];
		const struct shash *h = pw->revision >= 1 && pw->revision <= m.L ? &m.hashes[pw->revision] : NULL;
		const char *bad = !h || !h->valid || memcmp(h->h, pw->head, 32) != 0 ? "logHead" : pw->root_bad ? "stateRoot" : NULL;
		if (bad) {
			char ref[WORLD_REF_SIZE];
			world_ref_format(pw->ref, ref);
			if (hole_add(&m.wh, &m.nwh, &m.cwh, ref, bad) < 0) goto oom;
		}
	}
	if (m.nwh) qsort(m.wh, m.nwh, sizeof *m.wh, shole_cmp);
	for (size_t i = 0; i < m.nwh; i++) {
		res->holes++;
		if (out) fprintf(out, "integrity_hole table=worlds ref=%s field=%s\n", m.wh[i].ref, m.wh[i].field);
	}
	if (m.noh) qsort(m.oh, m.noh, sizeof *m.oh, shole_cmp);
	for (size_t i = 0; i < m.noh; i++) {
		res->holes++;
		if (out) fprintf(out, "integrity_hole table=objects ref=%s field=payload\n", m.oh[i].ref);
	}
	res->complete = 1;
	rc = 0;
	goto done;
oom:
	werr(err, WX_FAIL, "scan: out of memory");
	rc = -1;
done:
	d->stream = NULL;
	page_close(&pg);
	stream_free(&m);
	return rc;
}

/* The entry hash at index (LOG_HASH_AT), "" when none. */
static void hash_at(struct deps *d, struct wdb_stmt *entry, long long index, char h[WORLD_REF_SIZE])
{
	h[0] = '\0';
	wdb_reset(entry);
	(void)wdb_bind_int64(entry, 1, index, NULL);
	int s = wdb_step(entry, NULL);
	if (s < 0) lookup_failed(d->st, &d->failed, &d->ferr, "scan: entry lookup");
	if (s == WDB_ROW) ws_col_ref(entry, 0, h);
	wdb_reset(entry);
}

/* ws_object_check on the driver: NULL when the object is there and its
 * payload hashes to ref, else why. */
static const char *object_check(struct deps *d, struct wdb_stmt *get, const char *ref, uint64_t *bytes)
{
	wdb_reset(get);
	(void)wdb_bind_text_nocopy(get, 1, ref, -1, NULL);
	int s = wdb_step(get, NULL);
	const char *why = NULL;
	if (s != WDB_ROW) {
		if (s < 0) lookup_failed(d->st, &d->failed, &d->ferr, "scan: object lookup");
		why = s == WDB_DONE ? "object missing" : "object unreadable";
	} else {
		size_t n;
		const void *p = wdb_column_blob(get, 0, &n);
		char got[WORLD_REF_SIZE];
		if (world_hash_ref(p, n, got, NULL) < 0) why = "hash failed";
		else {
			if (bytes) *bytes += n;
			d->res->objects_verified++;
			if (strcmp(got, ref) != 0) why = "payload hash mismatch";
		}
	}
	wdb_reset(get);
	return why;
}

/* Test builds: WORLD_TEST_SCAN_FORGET=1 empties a budgeted scan's
 * verdicts before every entry, so each entry verifies its window again:
 * the per-entry cost of before them, the tests' control. */
static int scan_forget(void)
{
#ifdef WORLD_TEST_HOOKS
	const char *e = getenv("WORLD_TEST_SCAN_FORGET");
	return e && strcmp(e, "1") == 0;
#else
	return 0;
#endif
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

	struct wdb_stmt *obj = NULL, *entry = NULL;
	struct page logs = { 0 }, worlds = { 0 }, objs = { 0 };
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
	 * caller's group it sees that group's view): the engine's BEGIN of one. */
	int own_txn = !st->in_txn;
	if (own_txn && ws_exec(st, st->eng->snapshot_begin, err) < 0) {
		free(d);
		return -1;
	}
	/* where the driver may reconnect under this snapshot (a server's
	 * session), the session at the start and at the end tells one
	 * snapshot from pages read on a new connection (as store/copy.c does) */
	long long pid0 = own_txn && st->eng->session_id ? st->eng->session_id(st) : 0;
	/* the engine's page cache, grown for the scan's lookups and given back at the end */
	if (st->eng->scan_cache) st->eng->scan_cache(st, 1);
	if (page_open(&logs, st, WORLD_SQL(SCAN_LOG), 0, 0, err) < 0 ||
	    page_open(&worlds, st, WORLD_SQL(SCAN_WORLDS), 0, 1, err) < 0 ||
	    ws_prep(st, WORLD_SQL(OBJECT_PAYLOAD), &obj, err) < 0 ||
	    ws_prep(st, WORLD_SQL(LOG_HASH_AT), &entry, err) < 0 ||
	    ws_prep(st, WORLD_SQL(OBJECT_KIND_PAYLOAD), &d->obj, err) < 0 ||
	    ws_prep(st, WORLD_SQL(WORLD_ROOT_AT), &d->world, err) < 0 ||
	    page_open(&objs, st, WORLD_SQL(SCAN_OBJECTS), 0, 1, err) < 0)
		goto done;

	/* a full scan streams each table once (stream_scan); beyond its bound,
	 * or asked to, it takes the indexed path below like a budgeted one */
	if (!opts->indexed && opts->max_rows == 0 && opts->max_seconds == 0 && from == 1 &&
	    strcmp(wfrom, WORLD_SCAN_ZERO_REF) == 0 && strcmp(ofrom, WORLD_SCAN_ZERO_REF) == 0) {
		int sr = stream_scan(d, out, err);
		if (sr < 0) goto done;
		if (sr == 0) {
			snprintf(res->resume_world_ref, sizeof res->resume_world_ref, "%s", wfrom);
			snprintf(res->resume_object_ref, sizeof res->resume_object_ref, "%s", ofrom);
			rc = 0;
			goto done;
		}
		memset(res, 0, sizeof *res);
	}

	/* a budgeted or resumed scan: its verdicts (not the tests' indexed = 1,
	 * which looks every dependency up by ref and verifies it there) */
	struct memo memo = { .hi = -1 };
	if (!opts->indexed) {
		memo_clear(&memo);
		memo.forget = scan_forget();
		d->memo = &memo;
		if (ws_prep(st, WORLD_SQL(WINDOW_OBJECTS), &memo.fill, err) < 0 ||
		    ws_prep(st, WORLD_SQL(OBJECT_ROWID), &memo.rowid, err) < 0)
			goto done;
	}

	/* the previous entry's hash, for the chain check at the resume point */
	char prev_hash[WORLD_REF_SIZE] = "";
	if (from > 1) hash_at(d, entry, from - 1, prev_hash);
	long long expect = from;
	int log_done = 0;
	page_from_int(&logs, from);
	for (;;) {
		int s = page_step(&logs);
		if (s == WDB_DONE) { log_done = 1; break; }
		if (s != WDB_ROW) { page_err(&logs, "scan log_entries", err); goto done; }
		struct ws_log_row r;
		ws_log_row_read(logs.s, &r);
		if (spent(&b)) { expect = r.index; break; }
		b.rows++;
		res->log_rows++;
		res->bytes_hashed += r.json_len;
		/* (between entries: no verdict is in use) */
		if (d->memo && (d->memo->forget || d->memo->m.no >= MEMO_MAX)) memo_clear(d->memo);
		const char *bad = ws_log_row_check(&r);
		if (!bad && r.index != expect) bad = "entryIndex";
		if (!bad && r.index == 1 && r.prev) bad = "prevEntryHash";
		if (!bad && r.index > 1 && (!r.prev || strcmp(r.prev, prev_hash) != 0)) bad = "prevEntryHash";
		if (!bad) bad = dep_check(d, &r);
		if (bad && !d->failed) {
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
		page_from_text(&worlds, wfrom);
		for (;;) {
			int s = page_step(&worlds);
			if (s == WDB_DONE) { worlds_done = 1; break; }
			if (s != WDB_ROW) { page_err(&worlds, "scan worlds", err); goto done; }
			struct ws_world_row r;
			ws_world_row_read(worlds.s, &r);
			if (spent(&b)) {
				snprintf(res->resume_world_ref, sizeof res->resume_world_ref, "%s", r.ref ? r.ref : "");
				break;
			}
			b.rows++;
			res->world_rows++;
			res->bytes_hashed += r.json_len;
			const char *bad = ws_world_row_check(&r);
			if (!bad) {
				char h[WORLD_REF_SIZE];
				hash_at(d, entry, r.revision, h);
				if (strcmp(h, r.log_head) != 0) bad = "logHead";
			}
			if (!bad && d->memo) {
				if (d->memo->m.no >= MEMO_MAX) memo_clear(d->memo);
				const struct sobj *o = memo_get(d, r.state_root, 0);
				if (!o || !(o->flags & F_HASH)) bad = "stateRoot";
			} else if (!bad && object_check(d, obj, r.state_root, &res->bytes_hashed)) {
				bad = "stateRoot";
			}
			if (bad && !d->failed) {
				res->holes++;
				if (out) fprintf(out, "integrity_hole table=worlds ref=%s field=%s\n", r.ref ? r.ref : "", bad);
			}
		}
	}
	snprintf(res->resume_object_ref, sizeof res->resume_object_ref, "%s", ofrom);
	int objects_done = !opts->objects;
	if (opts->objects && log_done && worlds_done) {
		/* every object, orphans included: its ref from its payload */
		page_from_text(&objs, ofrom);
		for (;;) {
			int s = page_step(&objs);
			if (s == WDB_DONE) { objects_done = 1; break; }
			if (s != WDB_ROW) { page_err(&objs, "scan objects", err); goto done; }
			const char *ref = wdb_column_text(objs.s, 0);
			if (spent(&b)) {
				snprintf(res->resume_object_ref, sizeof res->resume_object_ref, "%s", ref ? ref : "");
				break;
			}
			b.rows++;
			res->object_rows++;
			/* an object the scan verified already: its verdict */
			unsigned char dg[32];
			const struct sobj *o =
				d->memo && ref && world_ref_parse(ref, "ref", dg, NULL) == 0 ? memo_find(d->memo, dg) : NULL;
			int sound = o && (o->flags & F_HASH);
			if (!o) {
				size_t n;
				const void *p = wdb_column_blob(objs.s, 1, &n);
				res->bytes_hashed += n;
				res->objects_verified++;
				char got[WORLD_REF_SIZE];
				sound = ref && world_hash_ref(p, n, got, NULL) == 0 && strcmp(got, ref) == 0;
			}
			if (!sound) {
				res->holes++;
				if (out) fprintf(out, "integrity_hole table=objects ref=%s field=payload\n", ref ? ref : "");
			}
		}
	}
	/* a lookup the database could not answer: no verdict (it would have
	 * been printed as a hole) */
	if (d->failed) {
		*err = d->ferr;
		goto done;
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
	if (pid0 && st->eng->session_id(st) != pid0) {
		rc = werr(err, wdb_fail_code(WDB_UNAVAILABLE, WX_IO),
		          "store %s: scan: the connection was lost and made again during the scan (not one snapshot); "
		          "scan again", st->path);
	}
done:
	/* the log's Merkle tree (store/tree.h): recomputed for the entries
	 * this scan covered, in its snapshot; a mismatch is a hole line */
	if (rc == 0) {
		long long tto = res->complete ? 0 : res->resume_log_index - 1;
		if ((res->complete || tto >= from) && world_tree_check(st, from, tto, out, &res->holes, err) < 0) rc = -1;
	}
	page_close(&logs);
	page_close(&worlds);
	page_close(&objs);
	wdb_finalize(obj);
	wdb_finalize(entry);
	wdb_finalize(d->obj);
	wdb_finalize(d->world);
	wdb_finalize(d->arch);
	if (d->memo) {
		stream_free(&d->memo->m);
		free(d->memo->slot);
		wdb_finalize(d->memo->fill);
		wdb_finalize(d->memo->rowid);
	}
	free(d);
	struct world_err ig;
	if (st->eng->scan_cache) st->eng->scan_cache(st, 0);
	if (own_txn) ws_exec(st, "COMMIT", &ig);
	return rc;
}

int world_scan_start(struct world_store *st, int (*effect_record_check)(const json_t *record, struct world_err *err),
                     FILE *out, struct world_scan_result *res, struct world_err *err)
{
	struct world_scan_opts o = { .max_rows = WORLD_SCAN_START_ROWS, .max_seconds = WORLD_SCAN_START_SECONDS,
		                     .effect_record_check = effect_record_check };
	return world_scan(st, &o, out, res, err);
}
