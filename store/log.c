/* store/log.c: the log, the worlds and the heads (store.h; docs/store.md,
 * The log).
 *
 * Owns: a log entry's canonical JSON and hash, the checks of a row on its
 * own, the append -- the compare-and-swap of the selected world head in
 * the append's transaction, the tree's leaf (store/tree.c) --, reading
 * entries and worlds back, the registry heads' compare-and-swap, and the
 * lookups of an entry by record or ref and of a world by revision. */
#include "store/store_internal.h"
#include "common/canon.h"
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* the selected world head (store_internal.h, WS_WORLD_HEAD) */
#define WORLD_HEAD_NAME WS_WORLD_HEAD

/* Canonical JSON of the seven hashed fields (and entryHash when non-NULL).
 * Keys are written in canonical (bytewise) order; refs and integers need no
 * escaping, and writtenBy goes through the canonicaliser when it holds a
 * character that needs escaping. */
static char *entry_json(long long index, long long epoch, const char *fn, const char *interp, const char *prev,
                        const char *written_by, const char *tref, const char *entry_hash, size_t *len)
{
	char *wb = NULL;
	size_t wbn;
	if (strpbrk(written_by, "\\\"")) {
		json_t *s = json_string(written_by);
		wb = s ? world_canon_json(s, &wbn, NULL) : NULL;
		json_decref(s);
		if (!wb) return NULL;
	}
	char prevbuf[WORLD_REF_SIZE + 2];
	if (prev && *prev) snprintf(prevbuf, sizeof prevbuf, "\"%s\"", prev);
	else strcpy(prevbuf, "null");
	size_t cap = 512 + strlen(written_by) * 6 + 8;
	char *out = malloc(cap);
	if (!out) { free(wb); return NULL; }
	char hashpart[WORLD_REF_SIZE + 20] = "";
	if (entry_hash) snprintf(hashpart, sizeof hashpart, "\"entryHash\":\"%s\",", entry_hash);
	int n = snprintf(out, cap,
	                 "{%s\"entryIndex\":%lld,\"interpreter\":\"%s\",\"prevEntryHash\":%s,\"semanticsEpoch\":%lld,"
	                 "\"transitionFn\":\"%s\",\"transitionRef\":\"%s\",\"writtenBy\":%s%s%s}",
	                 hashpart, index, interp, prevbuf, epoch, fn, tref, wb ? "" : "\"", wb ? wb : written_by,
	                 wb ? "" : "\"");
	free(wb);
	if (n < 0 || (size_t)n >= cap) { free(out); return NULL; }
	*len = (size_t)n;
	return out;
}

void ws_log_row_read(struct wdb_stmt *s, struct ws_log_row *r)
{
	r->index = wdb_column_int64(s, 0, NULL);
	r->epoch = wdb_column_int64(s, 1, NULL);
	r->hash = (const char *)wdb_column_text(s, 2);
	r->prev = (const char *)wdb_column_text(s, 3);
	r->fn = (const char *)wdb_column_text(s, 4);
	r->interp = (const char *)wdb_column_text(s, 5);
	r->written_by = (const char *)wdb_column_text(s, 6);
	r->tref = (const char *)wdb_column_text(s, 7);
	r->json = wdb_column_blob(s, 8, &r->json_len);
}

static int str_is(json_t *o, const char *key, const char *want)
{
	json_t *v = json_object_get(o, key);
	if (!want) return json_is_null(v);
	return json_is_string(v) && strcmp(json_string_value(v), want) == 0 && strlen(want) == json_string_length(v);
}

static int int_is(json_t *o, const char *key, long long want)
{
	json_t *v = json_object_get(o, key);
	return json_is_integer(v) && json_integer_value(v) == want;
}

static int column_refs_valid(const struct ws_log_row *r)
{
	return world_ref_valid(r->fn) && world_ref_valid(r->interp) && world_ref_valid(r->tref) &&
	       world_ref_valid(r->hash) && (!r->prev || world_ref_valid(r->prev));
}

/* Slow path: name the field whose column disagrees with the stored JSON. */
static const char *log_row_diagnose(const struct ws_log_row *r)
{
	if (!world_canon_is_canonical(r->json, r->json_len)) return "entry";
	json_t *o = world_json_parse(r->json, r->json_len, NULL);
	if (!json_is_object(o) || json_object_size(o) != 8) { json_decref(o); return "entry"; }
	const char *bad = "entry";
	if (!int_is(o, "entryIndex", r->index)) bad = "entryIndex";
	else if (!int_is(o, "semanticsEpoch", r->epoch)) bad = "semanticsEpoch";
	else if (!str_is(o, "transitionFn", r->fn) || !world_ref_valid(r->fn)) bad = "transitionFn";
	else if (!str_is(o, "interpreter", r->interp) || !world_ref_valid(r->interp)) bad = "interpreter";
	else if (!str_is(o, "prevEntryHash", r->prev) || (r->prev && !world_ref_valid(r->prev))) bad = "prevEntryHash";
	else if (!str_is(o, "writtenBy", r->written_by)) bad = "writtenBy";
	else if (!str_is(o, "transitionRef", r->tref) || !world_ref_valid(r->tref)) bad = "transitionRef";
	else if (!str_is(o, "entryHash", r->hash)) bad = "entryHash";
	json_decref(o);
	return bad;
}

const char *ws_log_row_check(const struct ws_log_row *r)
{
	if (!r->hash || !r->fn || !r->interp || !r->written_by || !r->tref || !r->json) return "entry";
	/* Fast path: the stored JSON must be exactly what the columns describe. */
	size_t n;
	char *c = column_refs_valid(r) ? entry_json(r->index, r->epoch, r->fn, r->interp, r->prev, r->written_by,
	                                            r->tref, r->hash, &n)
	                               : NULL;
	int same = c && n == r->json_len && memcmp(c, r->json, n) == 0;
	if (!same) {
		free(c);
		return log_row_diagnose(r);
	}
	/* ... and entryHash must be the hash of the seven fields: the same
	 * text without its first member, "entryHash":"<ref>", (86 bytes, the
	 * ref being valid), so "{" and the rest, without writing it again */
	c[86] = '{';
	char h[WORLD_REF_SIZE];
	int hok = world_hash_ref(c + 86, n - 86, h, NULL) == 0;
	free(c);
	if (!hok || strcmp(h, r->hash) != 0) return "entryHash";
	return NULL;
}

int world_log_last(struct world_store *st, long long *index, char entry_hash[WORLD_REF_SIZE], struct world_err *err)
{
	struct wdb_stmt *s;
	if (ws_stmt(st, WORLD_SQL(LOG_LAST), &s, err) < 0)
		return -1;
	int rc = wdb_step(s, NULL);
	*index = 0;
	entry_hash[0] = '\0';
	if (rc == WDB_ROW) {
		*index = wdb_column_int64(s, 0, NULL);
		ws_col_ref(s, 1, entry_hash);
	} else if (rc != WDB_DONE) {
		ws_done(st, s);
		return ws_sqlerr(st, 0, "log head", err);
	}
	ws_done(st, s);
	return 0;
}

static int head_read(struct world_store *st, const char *name, char ref[WORLD_REF_SIZE], long long *revision,
                     struct world_err *err)
{
	struct wdb_stmt *s;
	if (ws_stmt(st, WORLD_SQL(HEAD_GET), &s, err) < 0) return -1;
	ws_bind_text(s, 1, name);
	int rc = wdb_step(s, NULL);
	ref[0] = '\0';
	if (revision) *revision = 0;
	if (rc == WDB_ROW) {
		ws_col_ref(s, 0, ref);
		if (revision) *revision = wdb_column_int64(s, 1, NULL);
	} else if (rc != WDB_DONE) {
		ws_done(st, s);
		return ws_sqlerr(st, 0, "head read", err);
	}
	ws_done(st, s);
	return 0;
}

static int head_write(struct world_store *st, const char *name, const char *ref, long long revision,
                      struct world_err *err)
{
	struct wdb_stmt *s;
	st->memo.tip_ok = 0; /* a head moves */
	if (ws_stmt(st, WORLD_SQL(HEAD_PUT), &s, err) < 0)
		return -1;
	ws_bind_text(s, 1, name);
	ws_bind_text(s, 2, ref);
	ws_bind_int(s, 3, revision);
	ws_bind_int(s, 4, (int64_t)time(NULL));
	int rc = wdb_step(s, NULL);
	ws_done(st, s);
	if (rc != WDB_DONE) return ws_sqlerr(st, 0, "head write", err);
	return 0;
}

/* The log's last entry, the selected world head and whether object ref
 * (NULL: none asked) is stored, read in one statement (LOG_TIP). */
static int log_tip(struct world_store *st, long long *last, char last_hash[WORLD_REF_SIZE], char head[WORLD_REF_SIZE],
                   long long *head_rev, const char *ref, int *have, struct world_err *err)
{
	struct wdb_stmt *s;
	if (ws_stmt(st, WORLD_SQL(LOG_TIP), &s, err) < 0) return -1;
	ws_bind_text(s, 1, WORLD_HEAD_NAME);
	if (ref) ws_bind_text(s, 2, ref);
	else ws_bind_null(s, 2);
	int rc = wdb_step(s, NULL);
	if (rc != WDB_ROW) {
		ws_done(st, s);
		return ws_sqlerr(st, 0, "log head", err);
	}
	*last = wdb_column_int64(s, 0, NULL);
	ws_col_ref(s, 1, last_hash);
	ws_col_ref(s, 2, head);
	if (head_rev) *head_rev = wdb_column_int64(s, 3, NULL);
	if (have) *have = wdb_column_int64(s, 4, NULL) == 1;
	ws_done(st, s);
	return 0;
}

int world_log_next(struct world_store *st, long long *index, char prev[WORLD_REF_SIZE], char world[WORLD_REF_SIZE],
                   struct world_err *err)
{
	long long last, rev;
	const struct ws_memo *mt = &st->memo;
	if (ws_memo_on(st) && mt->tip_ok) {
		/* read in this transaction, under its write lock */
		memcpy(prev, mt->tip_hash, WORLD_REF_SIZE);
		memcpy(world, mt->tip_head, WORLD_REF_SIZE);
		*index = mt->tip_last + 1;
		return 0;
	}
	if (log_tip(st, &last, prev, world, &rev, NULL, NULL, err) < 0) return -1;
	*index = last + 1;
	/* the append that follows in this transaction need not read it again */
	if (ws_memo_on(st)) {
		struct ws_memo *m = &st->memo;
		m->tip_ok = 1;
		m->tip_last = last;
		m->tip_rev = rev;
		memcpy(m->tip_hash, prev, WORLD_REF_SIZE);
		memcpy(m->tip_head, world, WORLD_REF_SIZE);
	}
	return 0;
}

/* Object ref was put in this transaction (struct ws_memo). */
static int memo_put(const struct world_store *st, const char *ref)
{
	const struct ws_memo *m = &st->memo;
	unsigned n = m->nput < sizeof m->put / sizeof *m->put ? m->nput : (unsigned)(sizeof m->put / sizeof *m->put);
	for (unsigned i = 0; i < n; i++)
		if (strcmp(m->put[i], ref) == 0) return 1;
	return 0;
}

/* The entry's transitionRef must be an invocation record (docs/design.md §6.3)
 * whose transitionFn, interpreter and semanticsEpoch are the header's and
 * whose output is the stateRoot: the store refuses a log entry that does not
 * say what it ran. */
static int record_matches(struct world_store *st, const struct world_log_append *a, int have_root, struct world_err *err)
{
	struct world_object o;
	if (world_object_get(st, a->transition_ref, &o, err) < 0) {
		if (err && err->code == WX_NOT_FOUND)
			return werr(err, WX_NOT_FOUND, "log append: transitionRef %s: object not stored", a->transition_ref);
		return werr_prefix(err, "log append: transitionRef");
	}
	if (!have_root) {
		world_object_free(&o);
		return werr(err, WX_NOT_FOUND, "log append: stateRoot %s: object not stored", a->state_root);
	}
	int rc = -1;
	json_t *r = NULL;
	if (strcmp(o.semantic_id, "world/invocation-record/v1") != 0 && strcmp(o.semantic_id, "world/invocation-record/v2") != 0) {
		werr(err, WX_BAD_INPUT, "log append: transitionRef %s is a %s, not an invocation record "
		     "(world/invocation-record/v1 or v2)", a->transition_ref, o.semantic_id);
		goto out;
	}
	r = world_json_parse((const char *)o.payload, o.len, err);
	if (!r) { werr_prefix(err, "log append: invocation record %s", a->transition_ref); goto out; }
	const char *fn = json_string_value(json_object_get(r, "transitionFn"));
	const char *in = json_string_value(json_object_get(r, "interpreter"));
	const char *out = json_string_value(json_object_get(r, "output"));
	json_t *ep = json_object_get(r, "semanticsEpoch");
	if (!fn || strcmp(fn, a->transition_fn) != 0)
		werr(err, WX_BAD_INPUT, "log append: invocation record %s names transitionFn %s, the entry %s", a->transition_ref,
		     fn ? fn : "(none)", a->transition_fn);
	else if (!in || strcmp(in, a->interpreter) != 0)
		werr(err, WX_BAD_INPUT, "log append: invocation record %s names interpreter %s, the entry %s", a->transition_ref,
		     in ? in : "(none)", a->interpreter);
	else if (!json_is_integer(ep) || json_integer_value(ep) != a->semantics_epoch)
		werr(err, WX_BAD_INPUT, "log append: invocation record %s names semanticsEpoch %lld, the entry %lld",
		     a->transition_ref, (long long)json_integer_value(ep), a->semantics_epoch);
	else if (!out || strcmp(out, a->state_root) != 0)
		werr(err, WX_BAD_INPUT, "log append: invocation record %s names output %s, not the stateRoot %s",
		     a->transition_ref, out ? out : "(none)", a->state_root);
	else
		rc = 0;
out:
	json_decref(r);
	world_object_free(&o);
	return rc;
}

static int log_append_body(struct world_store *st, const struct world_log_append *a, struct world_log_result *out,
                           struct world_err *err)
{
	long long last, cur_rev;
	char last_hash[WORLD_REF_SIZE], cur[WORLD_REF_SIZE];
	int have_root;
	const struct ws_memo *m = &st->memo;
	if (ws_memo_on(st) && m->tip_ok && memo_put(st, a->state_root)) {
		/* the tip this transaction read under its write lock, and a
		 * stateRoot it put itself: as LOG_TIP would read them */
		last = m->tip_last;
		cur_rev = m->tip_rev;
		memcpy(last_hash, m->tip_hash, WORLD_REF_SIZE);
		memcpy(cur, m->tip_head, WORLD_REF_SIZE);
		have_root = 1;
	} else if (log_tip(st, &last, last_hash, cur, &cur_rev, a->state_root, &have_root, err) < 0)
		return -1;
	if (a->entry_index != last + 1)
		return werr(err, WX_CONFLICT, "log append: entryIndex %lld does not follow the log head %lld (want %lld)",
		            a->entry_index, last, last + 1);
	const char *prev = a->prev_entry_hash && *a->prev_entry_hash ? a->prev_entry_hash : NULL;
	if (last == 0 && prev)
		return werr(err, WX_CONFLICT, "log append: prevEntryHash %s given for the first entry (want null)", prev);
	if (last > 0 && (!prev || strcmp(prev, last_hash) != 0))
		return werr(err, WX_CONFLICT, "log append: prevEntryHash %s is not the entryHash %s of entry %lld",
		            prev ? prev : "null", last_hash, last);
	const char *expect = a->expected_world ? a->expected_world : "";
	if (strcmp(cur, expect) != 0)
		return werr(err, WX_CONFLICT, "log append: selected world head is %s, not the expected %s",
		            *cur ? cur : "(none)", *expect ? expect : "(none)");
	/* the transitionRef's presence is record_matches' read of it */
	if (record_matches(st, a, have_root, err) < 0) return -1;

	size_t n;
	char *c = entry_json(a->entry_index, a->semantics_epoch, a->transition_fn, a->interpreter, prev, a->written_by,
	                     a->transition_ref, NULL, &n);
	if (!c) return werr(err, WX_FAIL, "log append: cannot build entry JSON");
	char h[WORLD_REF_SIZE];
	int hr = world_hash_ref(c, n, h, err);
	free(c);
	if (hr < 0) return -1;
	c = entry_json(a->entry_index, a->semantics_epoch, a->transition_fn, a->interpreter, prev, a->written_by,
	               a->transition_ref, h, &n);
	if (!c) return werr(err, WX_FAIL, "log append: cannot build entry JSON");
	struct wdb_stmt *s;
	if (ws_stmt(st, WORLD_SQL(LOG_INSERT),
	            &s, err) < 0) {
		free(c);
		return -1;
	}
	ws_bind_int(s, 1, a->entry_index);
	ws_bind_int(s, 2, a->semantics_epoch);
	ws_bind_text(s, 3, h);
	if (prev) ws_bind_text(s, 4, prev);
	else ws_bind_null(s, 4);
	ws_bind_text(s, 5, a->transition_fn);
	ws_bind_text(s, 6, a->interpreter);
	ws_bind_text(s, 7, a->written_by);
	ws_bind_text(s, 8, a->transition_ref);
	ws_bind_blob(s, 9, c, n);
	ws_bind_int(s, 10, (int64_t)time(NULL));
	st->memo.tip_ok = 0; /* the tip moves */
	int rc = wdb_step(s, NULL);
	ws_done(st, s);
	if (rc != WDB_DONE) {
		free(c);
		return ws_sqlerr(st, 0, "log entry insert", err);
	}
	/* the log's Merkle tree (store/tree.c): leaf entry_index - 1 is this
	 * entry's canonical JSON as stored, its hashes in this transaction */
	unsigned char leaf[32] = { 0 };
	rc = st->version >= 3 && !st->no_tree ? ws_tree_append_on(st, a->entry_index, prev, h, c, n, leaf, err) : 0;
	free(c);
	if (rc < 0) return -1;

	char wj[WORLD_WORLD_JSON_SIZE], wref[WORLD_REF_SIZE];
	if (world_world_ref(a->entry_index, a->state_root, h, wj, wref, err) < 0) return -1;
	if (ws_stmt(st, WORLD_SQL(WORLD_INSERT), &s, err) < 0)
		return -1;
	ws_bind_text(s, 1, wref);
	ws_bind_int(s, 2, a->entry_index);
	ws_bind_text(s, 3, a->state_root);
	ws_bind_text(s, 4, h);
	ws_bind_blob(s, 5, wj, strlen(wj));
	rc = wdb_step(s, NULL);
	ws_done(st, s);
	if (rc != WDB_DONE) return ws_sqlerr(st, 0, "world insert", err);
	if (head_write(st, WORLD_HEAD_NAME, wref, cur_rev + 1, err) < 0) return -1;
	if (ws_memo_on(st)) { /* the tip now: this entry */
		struct ws_memo *mw = &st->memo;
		mw->tip_ok = 1;
		mw->tip_last = a->entry_index;
		mw->tip_rev = cur_rev + 1;
		memcpy(mw->tip_hash, h, WORLD_REF_SIZE);
		memcpy(mw->tip_head, wref, WORLD_REF_SIZE);
	}
	if (out) {
		out->entry_index = a->entry_index;
		memcpy(out->entry_hash, h, WORLD_REF_SIZE);
		memcpy(out->world_ref, wref, WORLD_REF_SIZE);
		memcpy(out->leaf_hash, leaf, sizeof leaf);
	}
	return 0;
}

int world_log_append(struct world_store *st, const struct world_log_append *a, struct world_log_result *out,
                     struct world_err *err)
{
	if (ws_need_writer(st, "log append", err) < 0) return -1;
	if (a->entry_index < 1) return werr(err, WX_BAD_INPUT, "log append: entryIndex %lld: must be >= 1", a->entry_index);
	if (a->semantics_epoch < 1)
		return werr(err, WX_BAD_INPUT, "log append: semanticsEpoch %lld: must be >= 1", a->semantics_epoch);
	if (world_ref_parse(a->transition_fn, "transitionFn", NULL, err) < 0 ||
	    world_ref_parse(a->interpreter, "interpreter", NULL, err) < 0 ||
	    world_ref_parse(a->transition_ref, "transitionRef", NULL, err) < 0 ||
	    world_ref_parse(a->state_root, "stateRoot", NULL, err) < 0)
		return -1;
	if (a->prev_entry_hash && *a->prev_entry_hash &&
	    world_ref_parse(a->prev_entry_hash, "prevEntryHash", NULL, err) < 0)
		return -1;
	if (a->expected_world && *a->expected_world &&
	    world_ref_parse(a->expected_world, "expected world", NULL, err) < 0)
		return -1;
	if (ws_check_label("writtenBy", a->written_by, 256, 1, err) < 0) return -1;
	WS_WRITE(st, err, log_append_body(st, a, out, err));
}

int world_log_get(struct world_store *st, long long index, struct world_log_entry *out, struct world_err *err)
{
	memset(out, 0, sizeof *out);
	struct wdb_stmt *s;
	if (ws_stmt(st, WORLD_SQL(LOG_GET), &s, err) < 0) return -1;
	ws_bind_int(s, 1, index);
	int rc = wdb_step(s, NULL);
	if (rc == WDB_DONE) {
		ws_done(st, s);
		return werr(err, WX_NOT_FOUND, "log entry %lld: not found", index);
	}
	if (rc != WDB_ROW) {
		ws_done(st, s);
		return ws_sqlerr(st, 0, "log entry read", err);
	}
	struct ws_log_row r;
	ws_log_row_read(s, &r);
	const char *bad = ws_log_row_check(&r);
	if (bad) {
		ws_done(st, s);
		return werr(err, WX_INTEGRITY, "log entry %lld: integrity hole in field %s", index, bad);
	}
	out->entry_index = r.index;
	out->semantics_epoch = r.epoch;
	snprintf(out->transition_fn, WORLD_REF_SIZE, "%s", r.fn);
	snprintf(out->interpreter, WORLD_REF_SIZE, "%s", r.interp);
	snprintf(out->prev_entry_hash, WORLD_REF_SIZE, "%s", r.prev ? r.prev : "");
	snprintf(out->transition_ref, WORLD_REF_SIZE, "%s", r.tref);
	snprintf(out->entry_hash, WORLD_REF_SIZE, "%s", r.hash);
	out->written_by = strdup(r.written_by);
	out->json = malloc(r.json_len + 1);
	if (out->json) {
		memcpy(out->json, r.json, r.json_len);
		out->json[r.json_len] = 0;
	}
	out->json_len = r.json_len;
	ws_done(st, s);
	if (!out->written_by || !out->json) {
		world_log_entry_free(out);
		return werr(err, WX_FAIL, "log entry %lld: out of memory", index);
	}
	/* the chain link to the previous entry must hold too */
	if (index > 1) {
		char prev_hash[WORLD_REF_SIZE];
		if (ws_stmt(st, WORLD_SQL(LOG_HASH_AT), &s, err) < 0) {
			world_log_entry_free(out);
			return -1;
		}
		ws_bind_int(s, 1, index - 1);
		rc = wdb_step(s, NULL);
		prev_hash[0] = 0;
		if (rc == WDB_ROW) ws_col_ref(s, 0, prev_hash);
		ws_done(st, s);
		if (strcmp(prev_hash, out->prev_entry_hash) != 0) {
			world_log_entry_free(out);
			return werr(err, WX_INTEGRITY, "log entry %lld: integrity hole in field prevEntryHash", index);
		}
	}
	return 0;
}

void world_log_entry_free(struct world_log_entry *e)
{
	if (!e) return;
	free(e->written_by);
	free(e->json);
	memset(e, 0, sizeof *e);
}

void ws_world_row_read(struct wdb_stmt *s, struct ws_world_row *r)
{
	r->ref = (const char *)wdb_column_text(s, 0);
	r->revision = wdb_column_int64(s, 1, NULL);
	r->state_root = (const char *)wdb_column_text(s, 2);
	r->log_head = (const char *)wdb_column_text(s, 3);
	r->json = wdb_column_blob(s, 4, &r->json_len);
}

const char *ws_world_row_check(const struct ws_world_row *r)
{
	if (!r->ref || !r->state_root || !r->log_head || !r->json) return "payload";
	if (!world_ref_valid(r->state_root)) return "stateRoot";
	if (!world_ref_valid(r->log_head)) return "logHead";
	char want[WORLD_WORLD_JSON_SIZE];
	if (world_world_ref(r->revision, r->state_root, r->log_head, want, NULL, NULL) < 0) return "payload";
	if (strlen(want) != r->json_len || memcmp(want, r->json, r->json_len) != 0) {
		/* say which column disagrees with the payload */
		json_t *o = world_json_parse(r->json, r->json_len, NULL);
		const char *bad = "payload";
		if (json_is_object(o)) {
			if (!int_is(o, "revision", r->revision)) bad = "revision";
			else if (!str_is(o, "stateRoot", r->state_root)) bad = "stateRoot";
			else if (!str_is(o, "logHead", r->log_head)) bad = "logHead";
		}
		json_decref(o);
		return bad;
	}
	char h[WORLD_REF_SIZE];
	if (world_hash_ref(r->json, r->json_len, h, NULL) < 0 || strcmp(h, r->ref) != 0) return "ref";
	return NULL;
}

int world_world_get(struct world_store *st, const char *ref, struct world_world *out, struct world_err *err)
{
	memset(out, 0, sizeof *out);
	if (world_ref_parse(ref, "world ref", NULL, err) < 0) return -1;
	struct wdb_stmt *s;
	if (ws_stmt(st, WORLD_SQL(WORLD_GET), &s, err) < 0) return -1;
	ws_bind_text(s, 1, ref);
	int rc = wdb_step(s, NULL);
	if (rc == WDB_DONE) {
		ws_done(st, s);
		return werr(err, WX_NOT_FOUND, "world %s: not found", ref);
	}
	if (rc != WDB_ROW) {
		ws_done(st, s);
		return ws_sqlerr(st, 0, "world read", err);
	}
	struct ws_world_row r;
	ws_world_row_read(s, &r);
	const char *bad = ws_world_row_check(&r);
	if (bad) {
		ws_done(st, s);
		return werr(err, WX_INTEGRITY, "world %s: integrity hole in field %s", ref, bad);
	}
	snprintf(out->ref, WORLD_REF_SIZE, "%s", r.ref);
	out->revision = r.revision;
	snprintf(out->state_root, WORLD_REF_SIZE, "%s", r.state_root);
	snprintf(out->log_head, WORLD_REF_SIZE, "%s", r.log_head);
	snprintf(out->json, sizeof out->json, "%.*s", (int)r.json_len, r.json);
	ws_done(st, s);
	return 0;
}

int world_head_get(struct world_store *st, struct world_world *out, struct world_err *err)
{
	char ref[WORLD_REF_SIZE];
	if (head_read(st, WORLD_HEAD_NAME, ref, NULL, err) < 0) return -1;
	if (!*ref) {
		memset(out, 0, sizeof *out);
		return werr(err, WX_NOT_FOUND, "world head: no entry committed yet");
	}
	return world_world_get(st, ref, out, err);
}

static int check_registry_name(const char *name, struct world_err *err)
{
	if (!name || !*name) return werr(err, WX_BAD_INPUT, "registry head: empty name");
	size_t n = strlen(name);
	if (n > 128) return werr(err, WX_BAD_INPUT, "registry head \"%.40s...\": name longer than 128 bytes", name);
	for (size_t i = 0; i < n; i++) {
		char c = name[i];
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '/' || c == '-'))
			return werr(err, WX_BAD_INPUT, "registry head \"%s\": byte %zu not in [a-z0-9_./-]", name, i);
	}
	return 0;
}

int world_registry_head_get(struct world_store *st, const char *name, char ref[WORLD_REF_SIZE], long long *revision,
                            struct world_err *err)
{
	if (check_registry_name(name, err) < 0) return -1;
	if (head_read(st, name, ref, revision, err) < 0) return -1;
	if (!*ref) return werr(err, WX_NOT_FOUND, "registry head %s: none yet", name);
	return 0;
}

static int registry_cas_body(struct world_store *st, const char *name, const char *expected, const char *new_ref,
                             long long *revision, struct world_err *err)
{
	char cur[WORLD_REF_SIZE];
	long long rev;
	if (head_read(st, name, cur, &rev, err) < 0) return -1;
	const char *exp = expected ? expected : "";
	if (strcmp(cur, exp) != 0)
		return werr(err, WX_CONFLICT, "registry head %s: is %s, not the expected %s; nothing written", name,
		            *cur ? cur : "(none)", *exp ? exp : "(none)");
	int have = world_object_exists(st, new_ref, err);
	if (have < 0) return -1;
	if (!have) return werr(err, WX_NOT_FOUND, "registry head %s: new head %s: object not stored", name, new_ref);
	if (head_write(st, name, new_ref, rev + 1, err) < 0) return -1;
	if (revision) *revision = rev + 1;
	return 0;
}

int world_registry_head_cas(struct world_store *st, const char *name, const char *expected, const char *new_ref,
                            long long *revision, struct world_err *err)
{
	if (ws_need_writer(st, "registry head", err) < 0) return -1;
	if (check_registry_name(name, err) < 0) return -1;
	if (expected && *expected && world_ref_parse(expected, "expected head", NULL, err) < 0) return -1;
	if (world_ref_parse(new_ref, "new head", NULL, err) < 0) return -1;
	WS_WRITE(st, err, registry_cas_body(st, name, expected, new_ref, revision, err));
}

int world_log_find_record(struct world_store *st, const char *record_ref, long long *index, struct world_err *err)
{
	struct wdb_stmt *s;
	if (ws_stmt(st, WORLD_SQL(LOG_FIND_RECORD), &s,
	            err) < 0)
		return -1;
	ws_bind_text(s, 1, record_ref);
	int rc = wdb_step(s, NULL);
	if (rc == WDB_ROW) *index = wdb_column_int64(s, 0, NULL);
	ws_done(st, s);
	if (rc == WDB_DONE) return werr(err, WX_NOT_FOUND, "log: no entry for invocation record %s", record_ref);
	if (rc != WDB_ROW) return ws_sqlerr(st, 0, "log find", err);
	return 0;
}

int world_log_find_ref(struct world_store *st, const char *ref, long long *index, const char **what,
                       struct world_err *err)
{
	const struct { const char *sql, *what; } q[] = {
		{ WORLD_SQL(LOG_FIND_HASH), "entry" },
		{ WORLD_SQL(LOG_FIND_RECORD), "record" },
		{ WORLD_SQL(WORLD_FIND_REF), "world" },
		{ WORLD_SQL(WORLD_FIND_ROOT), "output" },
	};
	if (world_ref_parse(ref, "ref", NULL, err) < 0) return -1;
	for (size_t i = 0; i < sizeof q / sizeof q[0]; i++) {
		struct wdb_stmt *s;
		if (ws_stmt(st, q[i].sql, &s, err) < 0) return -1;
		ws_bind_text(s, 1, ref);
		int rc = wdb_step(s, NULL);
		if (rc == WDB_ROW) *index = wdb_column_int64(s, 0, NULL);
		ws_done(st, s);
		if (rc == WDB_ROW) {
			if (what) *what = q[i].what;
			return 0;
		}
		if (rc != WDB_DONE) return ws_sqlerr(st, 0, "log find", err);
	}
	return werr(err, WX_NOT_FOUND, "%s: no log entry, invocation record, world or output of that ref", ref);
}

int world_world_at(struct world_store *st, long long revision, struct world_world *out, struct world_err *err)
{
	memset(out, 0, sizeof *out);
	struct wdb_stmt *s;
	if (ws_stmt(st, WORLD_SQL(WORLD_AT), &s, err) < 0) return -1;
	ws_bind_int(s, 1, revision);
	int rc = wdb_step(s, NULL);
	char ref[WORLD_REF_SIZE] = "";
	if (rc == WDB_ROW) ws_col_ref(s, 0, ref);
	ws_done(st, s);
	if (rc == WDB_DONE) return werr(err, WX_NOT_FOUND, "world of revision %lld: not found", revision);
	if (rc != WDB_ROW) return ws_sqlerr(st, 0, "world by revision", err);
	return world_world_get(st, ref, out, err);
}

int world_world_revision(struct world_store *st, const char *ref, long long *revision, struct world_err *err)
{
	*revision = 0;
	struct wdb_stmt *s;
	if (ws_stmt(st, WORLD_SQL(WORLD_FIND_REF), &s, err) < 0) return -1;
	ws_bind_text(s, 1, ref);
	int rc = wdb_step(s, NULL);
	if (rc == WDB_ROW) *revision = wdb_column_int64(s, 0, NULL);
	ws_done(st, s);
	if (rc != WDB_ROW && rc != WDB_DONE) return ws_sqlerr(st, 0, "world lookup", err);
	return rc == WDB_ROW;
}
