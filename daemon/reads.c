/* daemon/reads.c: the read routes GET /v1/... (docs/design.md §8.1). Each request
 * borrows a reader handle from the pool (WAL readers never block the
 * coordinator's writer). Every route but /v1/health needs a session
 * credential or the operator token, unless the daemon runs --open-reads.
 *
 * Scoped reads: a session sees what its own episode's calls produced or
 * depended on (the store's episode_objects; log entries whose invocation
 * record is a member, and their worlds) plus the public objects (the
 * semantic ids in public_sids); the operator token (and --open-reads)
 * sees everything. What a session may not see answers exactly as what
 * does not exist (NotFound, the same text), so existence is not told. */
#include "daemon/http.h"
#include "daemon/route.h"
#include "store/sql.h"
#include "store/store.h"
#include "store/tree.h"
#include <errno.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>

#define PAGE_DEFAULT 100

/* Objects any session may read: published transition sources and the
 * registries (their descriptors are inside). Everything else an episode's calls store is private to it. */
static const char *const public_sids[] = { "world/transition-source/v1", "world/transition-registry/v1",
	                                   "world/epoch-registry/v1" };
/* EPISODE_OBJECT_VISIBLE (store/sql.c) binds exactly three */
_Static_assert(sizeof public_sids / sizeof public_sids[0] == 3, "EPISODE_OBJECT_VISIBLE takes three public semantic ids");

static int sid_public(const char *sid)
{
	for (size_t i = 0; i < sizeof public_sids / sizeof public_sids[0]; i++)
		if (strcmp(sid, public_sids[i]) == 0) return 1;
	return 0;
}

struct world_store *dreader_scoped(struct dreq *rq, struct dresp *r, int need_credential, struct coord_session **sess)
{
	*sess = NULL;
	if (need_credential && dauth(rq, r, 1, 0, sess, NULL) < 0) return NULL;
	struct world_err err = { 0, "" };
	struct world_store *st = dreader_get(rq->d, &err);
	if (!st) {
		dresp_internal(rq, r, "reader handle", &err);
		coord_session_free(*sess);
		*sess = NULL;
	}
	return st;
}

/* 1 when the episode may read object ref (a member, or a public object),
 * 0 when not (absent or another episode's: the caller answers NotFound
 * either way), -1 with err. */
static int object_visible(struct world_store *st, const char *episode, const char *ref, struct world_err *err)
{
	return world_episode_object_visible(st, episode, ref, public_sids, err);
}

/* *mine = 1 when world ref was made by one of the episode's entries (its
 * revision is the entry's index), 0 when not or when there is no such world. */
static int world_mine(struct world_store *st, const char *episode, const char *ref, int *mine, struct world_err *err)
{
	*mine = 0;
	long long rev = 0;
	int found = world_world_revision(st, ref, &rev, err);
	if (found <= 0) return found;
	return world_episode_has_entry(st, episode, rev, mine, err);
}

static void store_fail(struct dreq *rq, struct dresp *r, const char *what, const struct world_err *err)
{
	const char *k = dclass_of_store(err->code);
	if (k) dresp_error(r, k, "%s", err->msg);
	else dresp_internal(rq, r, what, err);
}

/* A decimal query argument in [min, max]; absent = def. -1 with r filled. */
static int arg_ll(struct dreq *rq, struct dresp *r, const char *name, long long min, long long max, long long def,
                  long long *out)
{
	const char *s = dreq_arg(rq, name);
	if (!s) { *out = def; return 0; }
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (!*s || *end || errno || v < min) {
		dresp_error(r, "BadRequest", "query argument %s must be an integer >= %lld", name, min);
		return -1;
	}
	*out = v > max ? max : v;
	return 0;
}

static json_t *world_json(const struct world_world *w)
{
	return json_pack("{s:s,s:I,s:s,s:s}", "ref", w->ref, "revision", (json_int_t)w->revision, "stateRoot",
	                 w->state_root, "logHead", w->log_head);
}

static json_t *entry_json(const struct world_log_entry *e)
{
	return json_pack("{s:{s:I,s:I,s:s,s:s,s:o,s:s},s:s,s:s}", "header", "entryIndex", (json_int_t)e->entry_index,
	                 "semanticsEpoch", (json_int_t)e->semantics_epoch, "transitionFn", e->transition_fn, "interpreter",
	                 e->interpreter, "prevEntryHash", e->prev_entry_hash[0] ? json_string(e->prev_entry_hash) : json_null(),
	                 "writtenBy", e->written_by ? e->written_by : "", "entryHash", e->entry_hash, "transitionRef",
	                 e->transition_ref);
}

static void get_object(struct dreq *rq, struct dresp *r, struct world_store *st, const char *ref, const char *episode)
{
	struct world_err err = { 0, "" };
	const char *pl = dreq_arg(rq, "payload");
	if (pl && strcmp(pl, "true") != 0 && strcmp(pl, "false") != 0) {
		dresp_error(r, "BadRequest", "query argument payload must be true or false");
		return;
	}
	if (world_ref_parse(ref, "object ref", NULL, &err) < 0) { dresp_error(r, "BadRequest", "%s", err.msg); return; }
	if (episode) {
		int v = object_visible(st, episode, ref, &err);
		if (v < 0) { dresp_internal(rq, r, "object visibility", &err); return; }
		/* the store's own answer for an absent object, word for word */
		if (!v) { dresp_error(r, "NotFound", "object %s: not found", ref); return; }
	}
	struct world_object o;
	if (world_object_get(st, ref, &o, &err) < 0) { store_fail(rq, r, "object get", &err); return; }
	json_t *v = json_pack("{s:s,s:s,s:s}", "hash", o.ref, "semanticId", o.semantic_id, "provenance",
	                      o.provenance ? o.provenance : "");
	if (v && pl && strcmp(pl, "true") == 0) {
		size_t cap = 4 * ((o.len + 2) / 3) + 1;
		char *b64 = malloc(cap);
		if (!b64) { world_object_free(&o); json_decref(v); dresp_internal(rq, r, "object payload", NULL); return; }
		EVP_EncodeBlock((unsigned char *)b64, o.payload, (int)o.len);
		json_object_set_new(v, "payload", json_string(b64));
		free(b64);
	}
	world_object_free(&o);
	dresp_json(r, 200, v);
}

struct sid_page {
	json_t *items;
	const char *name;
	long long limit, n;
	int more;
	char last[WORLD_REF_SIZE];
};

static int sid_row(void *ctx, const char *ref, const char *prov)
{
	struct sid_page *pg = ctx;
	if (pg->n == pg->limit) {
		pg->more = 1;
		return 1;
	}
	json_array_append_new(pg->items, json_pack("{s:s,s:s,s:s}", "hash", ref, "semanticId", pg->name, "provenance", prov));
	snprintf(pg->last, sizeof pg->last, "%s", ref);
	pg->n++;
	return 0;
}

/* Objects with one semanticId, ordered by ref, after a cursor
 * (world_objects_by_semantic, through the reader handle). */
static void by_semantic_id(struct dreq *rq, struct dresp *r, struct world_store *st, const char *name,
                           const char *episode)
{
	long long limit;
	if (arg_ll(rq, r, "limit", 1, DAEMON_LOG_PAGE_MAX, PAGE_DEFAULT, &limit) < 0) return;
	const char *after = dreq_arg(rq, "after");
	struct world_err err = { 0, "" };
	if (after && world_ref_parse(after, "after", NULL, &err) < 0) { dresp_error(r, "BadRequest", "%s", err.msg); return; }
	if (!*name || strlen(name) > 256) { dresp_error(r, "BadRequest", "semanticId must be 1-256 bytes"); return; }
	/* A session's listing of a private kind walks its own members in ref
	 * order (the episode_objects key), each looked up in objects by ref:
	 * other episodes' objects are never read. */
	int scoped = episode && !sid_public(name);
	struct sid_page pg = { json_array(), name, limit, 0, 0, "" };
	if (world_objects_by_semantic(st, name, after, limit + 1, scoped ? episode : NULL, sid_row, &pg, &err) < 0) {
		json_decref(pg.items);
		dresp_internal(rq, r, "objects by semanticId", &err);
		return;
	}
	json_t *items = pg.items;
	int more = pg.more;
	const char *last = pg.last;
	dresp_json(r, 200, json_pack("{s:o,s:o}", "items", items, "next", more ? json_string(last) : json_null()));
}

/* A session's page: its own entries from `from` on (one range of the
 * store's episode_entries), next = its next entry's index. */
static void log_page_scoped(struct dreq *rq, struct dresp *r, struct world_store *st, const char *episode,
                            long long from, long long limit)
{
	struct world_err err = { 0, "" };
	long long idx[DAEMON_LOG_PAGE_MAX + 1];
	size_t n = 0;
	if (world_episode_entries(st, episode, from, (size_t)limit + 1, idx, &n, &err) < 0) {
		store_fail(rq, r, "episode entries", &err);
		return;
	}
	json_t *items = json_array();
	for (size_t i = 0; i < n && i < (size_t)limit; i++) {
		struct world_log_entry e;
		if (world_log_get(st, idx[i], &e, &err) < 0) {
			json_decref(items);
			store_fail(rq, r, "log get", &err);
			return;
		}
		json_array_append_new(items, entry_json(&e));
		world_log_entry_free(&e);
	}
	dresp_json(r, 200, json_pack("{s:o,s:o}", "items", items, "next",
	                             n > (size_t)limit ? json_integer(idx[limit]) : json_null()));
}

static void log_page(struct dreq *rq, struct dresp *r, struct world_store *st, const char *episode)
{
	long long from, limit, last;
	if (arg_ll(rq, r, "from", 1, (long long)1 << 62, 1, &from) < 0) return;
	if (arg_ll(rq, r, "limit", 1, DAEMON_LOG_PAGE_MAX, PAGE_DEFAULT, &limit) < 0) return;
	if (episode) { log_page_scoped(rq, r, st, episode, from, limit); return; }
	struct world_err err = { 0, "" };
	char h[WORLD_REF_SIZE];
	if (world_log_last(st, &last, h, &err) < 0) { store_fail(rq, r, "log last", &err); return; }
	json_t *items = json_array();
	long long i = from;
	for (; i <= last && i < from + limit; i++) {
		struct world_log_entry e;
		if (world_log_get(st, i, &e, &err) < 0) {
			json_decref(items);
			store_fail(rq, r, "log get", &err);
			return;
		}
		json_array_append_new(items, entry_json(&e));
		world_log_entry_free(&e);
	}
	dresp_json(r, 200, json_pack("{s:o,s:o}", "items", items, "next", i <= last ? json_integer(i) : json_null()));
}

/* ---- the verifiable log (store/tree.h; docs/daemon.md) ---- */

/* A required decimal query argument >= 1. */
static int arg_req(struct dreq *rq, struct dresp *r, const char *name, long long *out)
{
	if (!dreq_arg(rq, name)) {
		dresp_error(r, "BadRequest", "query argument %s is required", name);
		return -1;
	}
	return arg_ll(rq, r, name, 1, (long long)1 << 62, 1, out);
}

/* a proof as text/plain: one base64 hash a line, RFC 6962 order (what
 * `worldd log prove` prints, byte for byte) */
static void proof_text(struct dreq *rq, struct dresp *r, const struct tlog_hash *p, size_t n)
{
	char *t = malloc(n * 45 + 1);
	if (!t) { dresp_internal(rq, r, "log proof", NULL); return; }
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		tlog_hash_b64(&p[i], t + o);
		o += 44;
		t[o++] = '\n';
	}
	dresp_text(r, 200, "text/plain; charset=utf-8", t, o);
	free(t);
}

/* GET /v1/log/checkpoint (public), /v1/log/proof/consistency (public: it
 * tells tree hashes and sizes only), /v1/log/proof/inclusion and
 * /v1/log/leaf/N (scoped as /v1/log/N: a session its own episode's
 * entries, what it may not see answering as what does not exist). ep is
 * NULL for the operator token, --open-reads and the public routes. */
static void log_tree_route(struct dreq *rq, struct dresp *r, struct world_store *st, int which, const char *rest,
                           const char *ep)
{
	struct world_err err = { 0, "" };
	struct tlog_hash p[TLOG_MAX_PROOF];
	size_t n = 0;
	long long a, b;
	int mine = 1;
	switch (which) {
	case 0: { /* checkpoint */
		char *note = NULL;
		if (world_log_checkpoint_get(st, &note, NULL, &err) < 0) { store_fail(rq, r, "log checkpoint", &err); return; }
		dresp_text(r, 200, "text/plain; charset=utf-8", note, strlen(note));
		free(note);
		return;
	}
	case 1: /* consistency */
		if (arg_req(rq, r, "from", &a) < 0 || arg_req(rq, r, "to", &b) < 0) return;
		if (world_tree_prove_consistency(st, a, b, p, &n, &err) < 0) { store_fail(rq, r, "consistency proof", &err); return; }
		proof_text(rq, r, p, n);
		return;
	case 2: /* inclusion */
		if (arg_req(rq, r, "index", &a) < 0 || arg_req(rq, r, "size", &b) < 0) return;
		if (ep && world_episode_has_entry(st, ep, a, &mine, &err) < 0) { store_fail(rq, r, "episode entry", &err); return; }
		if (!mine) { dresp_error(r, "NotFound", "log entry %lld: not found", a); return; }
		if (world_tree_prove_inclusion(st, a, b, p, &n, &err) < 0) { store_fail(rq, r, "inclusion proof", &err); return; }
		proof_text(rq, r, p, n);
		return;
	default: { /* leaf */
		char *end;
		errno = 0;
		long long i = strtoll(rest, &end, 10);
		if (!*rest || *end || errno || i < 1 || rest[0] == '+' || rest[0] == '0') {
			dresp_error(r, "BadRequest", "log index '%.40s' is not an integer >= 1", rest);
			return;
		}
		struct world_log_entry e;
		if (ep && world_episode_has_entry(st, ep, i, &mine, &err) < 0) { store_fail(rq, r, "episode entry", &err); return; }
		if (!mine) { dresp_error(r, "NotFound", "log entry %lld: not found", i); return; }
		if (world_log_get(st, i, &e, &err) < 0) { store_fail(rq, r, "log get", &err); return; }
		/* the leaf's exact bytes: the entry's canonical JSON as stored, no newline */
		dresp_text(r, 200, "application/octet-stream", e.json, e.json_len);
		world_log_entry_free(&e);
		return;
	}
	}
}

/* 1 when the store answers a read now (the head, through a pooled reader;
 * a reader whose connection died is tried once more: it reconnects), else
 * 0 with *err the reason. */
static int store_ready(struct dctx *d, struct world_err *err)
{
	for (int attempt = 0; attempt < 2; attempt++) {
		*err = (struct world_err){ 0, "" };
		struct world_store *st = dreader_get(d, err);
		struct world_world w;
		int rc = st ? world_head_get(st, &w, err) : -1;
		dreader_put(d, st);
		if (rc == 0 || (rc < 0 && err->code == WX_NOT_FOUND)) return 1; /* an empty log answers too */
		if (err->code != WX_UNAVAILABLE) return 0;
	}
	return 0;
}

void reads_handle(struct dreq *rq, struct dresp *r)
{
	const char *p = rq->path;
	enum { HEALTH, READY, HEAD, OBJECT, BY_SID, LOG_ONE, LOG_PAGE, WORLD, REGISTRY, LOG_CHECKPOINT, LOG_CONSISTENCY,
	       LOG_INCLUSION, LOG_LEAF } route;
	const char *rest = NULL;
	int health_ready = 0;
	if (strcmp(p, "/v1/health") == 0) route = HEALTH;
	else if (strcmp(p, "/v1/ready") == 0) route = READY;
	else if (strcmp(p, "/v1/log/checkpoint") == 0) route = LOG_CHECKPOINT;
	else if (strcmp(p, "/v1/log/proof/consistency") == 0) route = LOG_CONSISTENCY;
	else if (strcmp(p, "/v1/log/proof/inclusion") == 0) route = LOG_INCLUSION;
	else if (strncmp(p, "/v1/log/leaf/", 13) == 0) { route = LOG_LEAF; rest = p + 13; }
	else if (strcmp(p, "/v1/head") == 0) route = HEAD;
	else if (strncmp(p, "/v1/objects/by-semantic-id/", 27) == 0) { route = BY_SID; rest = p + 27; }
	else if (strncmp(p, "/v1/objects/", 12) == 0 && p[12]) { route = OBJECT; rest = p + 12; }
	else if (strcmp(p, "/v1/log") == 0 || strcmp(p, "/v1/log/") == 0) route = LOG_PAGE;
	else if (strncmp(p, "/v1/log/", 8) == 0) { route = LOG_ONE; rest = p + 8; }
	else if (strncmp(p, "/v1/worlds/", 11) == 0 && p[11]) { route = WORLD; rest = p + 11; }
	else if (strncmp(p, "/v1/registry/", 13) == 0 && p[13]) { route = REGISTRY; rest = p + 13; }
	else { dresp_error(r, "NotFound", "no route %.200s", p); return; }
	if (strcmp(rq->method, "GET") != 0) {
		dresp_error(r, "BadRequest", "method %.16s not allowed on %.200s (GET only)", rq->method, p);
		r->status = 405;
		r->allow = "GET";
		return;
	}
	if (route == READY || route == HEALTH) {
		/* whether the store answers now: a load balancer probes
		 * /v1/ready (503 while the store does not answer), a liveness
		 * check /v1/health (200 while the daemon runs, ready beside) */
		struct world_err re = { 0, "" };
		int ready = store_ready(rq->d, &re);
		if (route == READY) {
			json_t *v = ready ? json_pack("{s:b}", "ready", 1)
			                  : json_pack("{s:b,s:s,s:s}", "ready", 0, "class", "StoreUnavailable", "message",
			                              re.msg[0] ? re.msg : "the store does not answer");
			if (!v) {
				struct world_err oom = { WX_FAIL, "out of memory" };
				dresp_internal(rq, r, "ready", &oom);
				return;
			}
			dresp_json(r, ready ? 200 : 503, v);
			if (!ready) r->retry_after_s = DAEMON_RETRY_AFTER_S;
			return;
		}
		health_ready = ready;
	}
	if (route == HEALTH) {
		/* open to anyone: status, version and the interpreter pin
		 * (interpreter_ref is the replay pin, in every record a caller
		 * already holds). Only the operator token is
		 * also shown where the store is (db_path). A credential that is
		 * not the operator's is not judged here. */
		struct coord_session *s = NULL;
		struct dresp scratch = { 0 };
		int present = 0;
		int op = dreq_header(rq, "Authorization") && dauth(rq, &scratch, 1, 1, &s, &present) == 0 && present && !s;
		free(scratch.body);
		coord_session_free(s);
		json_t *h = json_pack("{s:s,s:b,s:s,s:s,s:s}", "status", "ok", "ready", health_ready, "daemon_version",
		                      DAEMON_VERSION, "interpreter_ref", rq->d->interp_ref, "interpreter_version",
		                      rq->d->interp_version);
		if (h && op && json_object_set_new(h, "db_path", json_string(world_store_path(rq->d->writer))) < 0) {
			json_decref(h);
			h = NULL;
		}
		if (!h) {
			struct world_err oom = { WX_FAIL, "out of memory" };
			dresp_internal(rq, r, "health", &oom);
			return;
		}
		dresp_json(r, 200, h);
		return;
	}
	struct coord_session *sess = NULL;
	/* the checkpoint and consistency proofs are public: no credential */
	int pub = route == LOG_CHECKPOINT || route == LOG_CONSISTENCY;
	struct world_store *st = dreader_scoped(rq, r, !pub && !rq->d->open_reads, &sess);
	if (!st) return;
	/* NULL: the operator token (or --open-reads) sees everything */
	const char *ep = sess ? sess->episode : NULL;
	struct world_err err = { 0, "" };
	switch (route) {
	case HEAD: {
		struct world_world w;
		long long last = 0;
		if (ep) {
			/* a session's head: the world of its episode's newest entry */
			if (world_episode_last_entry(st, ep, &last, &err) < 0) store_fail(rq, r, "episode head", &err);
			else if (!last) dresp_error(r, "NotFound", "no world yet: this session's episode committed nothing");
			else if (world_world_at(st, last, &w, &err) < 0) store_fail(rq, r, "episode head world", &err);
			else dresp_json(r, 200, world_json(&w));
		} else if (world_head_get(st, &w, &err) < 0) {
			if (err.code == WX_NOT_FOUND) dresp_error(r, "NotFound", "no world yet: nothing was ever committed");
			else store_fail(rq, r, "world head", &err);
		} else dresp_json(r, 200, world_json(&w));
		break;
	}
	case OBJECT: get_object(rq, r, st, rest, ep); break;
	case BY_SID: by_semantic_id(rq, r, st, rest, ep); break;
	case LOG_PAGE: log_page(rq, r, st, ep); break;
	case LOG_CHECKPOINT: log_tree_route(rq, r, st, 0, NULL, NULL); break;
	case LOG_CONSISTENCY: log_tree_route(rq, r, st, 1, NULL, NULL); break;
	case LOG_INCLUSION: log_tree_route(rq, r, st, 2, NULL, ep); break;
	case LOG_LEAF: log_tree_route(rq, r, st, 3, rest, ep); break;
	case LOG_ONE: {
		char *end;
		errno = 0;
		long long i = strtoll(rest, &end, 10);
		if (!*rest || *end || errno || i < 1 || rest[0] == '+' || rest[0] == '0') {
			dresp_error(r, "BadRequest", "log index '%.40s' is not an integer >= 1", rest);
			break;
		}
		struct world_log_entry e;
		int mine = 1;
		if (ep && world_episode_has_entry(st, ep, i, &mine, &err) < 0) store_fail(rq, r, "episode entry", &err);
		else if (!mine) dresp_error(r, "NotFound", "log entry %lld: not found", i); /* the store's text for none */
		else if (world_log_get(st, i, &e, &err) < 0) store_fail(rq, r, "log get", &err);
		else { dresp_json(r, 200, entry_json(&e)); world_log_entry_free(&e); }
		break;
	}
	case WORLD: {
		if (world_ref_parse(rest, "world ref", NULL, &err) < 0) { dresp_error(r, "BadRequest", "%s", err.msg); break; }
		struct world_world w;
		int mine = 1;
		/* a session's world: its membership is judged before the row is read
		 * and verified, so another's (even a damaged one) answers as none */
		if (ep && world_mine(st, ep, rest, &mine, &err) < 0) store_fail(rq, r, "episode world", &err);
		else if (!mine) dresp_error(r, "NotFound", "world %s: not found", rest); /* the store's text for none */
		else if (world_world_get(st, rest, &w, &err) < 0) store_fail(rq, r, "world get", &err);
		else dresp_json(r, 200, world_json(&w));
		break;
	}
	case REGISTRY: {
		char ref[WORLD_REF_SIZE];
		long long rev;
		if (world_registry_head_get(st, rest, ref, &rev, &err) < 0) store_fail(rq, r, "registry head", &err);
		else dresp_json(r, 200, json_pack("{s:s,s:s,s:I}", "name", rest, "ref", ref, "revision", (json_int_t)rev));
		break;
	}
	default: break;
	}
	coord_session_free(sess);
	dreader_put(rq->d, st);
}
