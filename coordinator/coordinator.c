/* coordinator/coordinator.c: see coordinator.h. */
#include "coordinator/coordinator.h"
#include "coordinator/catalog.h"
#include "tlog/tlog.h"
#include "broker/effect.h"
#include "broker/grants.h"
#include "broker/plan.h"
#include "coordinator/registry.h"
#include "common/canon.h"
#include "common/jschema.h"
#include "common/pause.h"
#include "coordinator/confirm.h"
#include "store/group.h"
#include "store/store.h"
#include "supervisor/launcher.h"
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#define ARGS_MAX ((size_t)1 << 20)
#define MAX_INTERPS 8
#define MAX_INFLIGHT 256
#define MAX_SOURCES 64
#define SESS_CACHE 256

struct interp_slot {
	char ref[WORLD_REF_SIZE];
	struct supervisor *sup;
};

struct coordinator {
	struct coord_config cfg;
	char *workspace_root, *examples_dir, *written_by;
	pthread_mutex_t store_lock;   /* every store call of the coordinator and the broker */
	pthread_mutex_t state_lock;   /* slots and in-flight invocation ids */
	pthread_cond_t inflight_cv;   /* an in-flight invocation id was released */
	struct interp_slot slots[MAX_INTERPS];
	size_t nslots;
	struct supervisor *tool_sup;
	const struct broker_handler_entry *handlers;
	char *inflight[MAX_INFLIGHT];
	/* Caches of immutable, already verified content (guarded by store_lock):
	 * the registry object of the current head, and transition sources by
	 * ref. Content-addressed: a ref names its bytes forever; the store's scan
	 * is what finds a damaged row later. */
	json_t *reg_cache;
	char reg_head[WORLD_REF_SIZE];
	struct { char ref[WORLD_REF_SIZE]; char *bytes; size_t len; } src_cache[MAX_SOURCES];
	size_t nsrc;
	/* Change detection (store.h, world_store_changed; guarded by
	 * store_lock): before each call the store is asked what changed since
	 * chg; a change of the sessions bumps sess_gen (every cached session
	 * older than it is re-read on its next use), a moved registry head
	 * sets reg_stale (the head is read again). Nothing changed: no row is
	 * read for the session or the registry. */
	struct world_changes chg;
	unsigned long long sess_gen, reg_gen;
	/* One look a call, not one per question (changes_since): a caller
	 * takes a mark (mark_seq) when it needs the store's changes seen;
	 * polled_mark is the last mark taken before the latest look began,
	 * and any mark up to it is answered by that look. txn_mark: the mark
	 * of the group commit's transaction open now (group_begun). */
	unsigned long long mark_seq, polled_mark, txn_mark;
	int reg_stale;
	/* sessions as last read from the store, by credential id: valid while
	 * gen == sess_gen; expiry is judged on every use from expires_at */
	struct sess_cached {
		struct broker_session s; /* s.credential_id[0] == 0: a free slot */
		unsigned long long gen;
	} sess_cache[SESS_CACHE];
	unsigned sess_next;           /* the slot the next new session takes (round robin) */
	struct world_group *group; /* the commits (store/group.h); NULL on a read-only store */
};

static long ms_between(const struct timespec *a, const struct timespec *b)
{
	return (b->tv_sec - a->tv_sec) * 1000 + (b->tv_nsec - a->tv_nsec) / 1000000;
}

static char *dup_or_null(const char *s) { return s ? strdup(s) : NULL; }

/* the group commit's hooks (section "group commit") */
static void group_lead(void *ctx);
static void group_begun(void *ctx);
static void group_ended(void *ctx);
static void group_queued(void *ctx);

struct coordinator *coord_new(const struct coord_config *cfg, struct world_err *err)
{
	struct coordinator *c = calloc(1, sizeof *c);
	if (!c) { werr(err, WX_FAIL, "coordinator: out of memory"); return NULL; }
	c->cfg = *cfg;
	c->workspace_root = dup_or_null(cfg->workspace_root);
	c->examples_dir = dup_or_null(cfg->examples_dir);
	c->written_by = strdup(cfg->written_by ? cfg->written_by : "worldd/" PACKAGE_VERSION);
	c->handlers = broker_handlers;
	if (!c->cfg.episode_calls_max) c->cfg.episode_calls_max = COORD_EPISODE_CALLS_DEFAULT;
	if (!c->cfg.episode_bytes_max) c->cfg.episode_bytes_max = COORD_EPISODE_BYTES_DEFAULT;
	pthread_mutex_init(&c->store_lock, NULL);
	pthread_mutex_init(&c->state_lock, NULL);
	pthread_cond_init(&c->inflight_cv, NULL);
	c->reg_stale = 1; /* not read yet */
	if (cfg->tool_ailang_bin) {
		struct world_interp wi;
		if (world_archive_interpreter(cfg->store, cfg->tool_ailang_bin, &wi, err) < 0) {
			werr_prefix(err, "tool interpreter %s", cfg->tool_ailang_bin);
			coord_free(c);
			return NULL;
		}
		struct launcher *l = launcher_capsule_new(wi.path, wi.ref, err);
		c->tool_sup = l ? sup_new(&cfg->limits, l, err) : NULL;
		if (!c->tool_sup) {
			werr_prefix(err, "tool interpreter %s", cfg->tool_ailang_bin);
			coord_free(c);
			return NULL;
		}
	}
	/* the group starts the store's checkpoint thread: the WAL is copied
	 * back there, not inside a batch's COMMIT (docs/store.md, The write
	 * path) */
	if (world_store_is_writer(cfg->store)) {
		const struct world_group_hooks h = { .lead = group_lead, .begun = group_begun, .ended = group_ended,
			                             .queued = group_queued, .ctx = c };
		if (!(c->group = world_group_new_hooks(cfg->store, &h, err))) {
			coord_free(c);
			return NULL;
		}
	}
	return c;
}

void coord_free(struct coordinator *c)
{
	if (!c) return;
	world_group_free(c->group);
	for (size_t i = 0; i < c->nslots; i++) sup_free(c->slots[i].sup);
	sup_free(c->tool_sup);
	for (size_t i = 0; i < MAX_INFLIGHT; i++) free(c->inflight[i]);
	for (size_t i = 0; i < c->nsrc; i++) free(c->src_cache[i].bytes);
	for (size_t i = 0; i < SESS_CACHE; i++) broker_session_free(&c->sess_cache[i].s);
	json_decref(c->reg_cache);
	free(c->workspace_root);
	free(c->examples_dir);
	free(c->written_by);
	pthread_mutex_destroy(&c->store_lock);
	pthread_mutex_destroy(&c->state_lock);
	pthread_cond_destroy(&c->inflight_cv);
	free(c);
}

/* TEST HOOK (coordinator tests only): replace the handler table. */
void coord_set_handlers(struct coordinator *c, const struct broker_handler_entry *table);
void coord_set_handlers(struct coordinator *c, const struct broker_handler_entry *table) { c->handlers = table; }

/* What changed in the store since the last look (call with store_lock
 * held): one PRAGMA when nothing was committed anywhere, else one lookup
 * of the counters row. A failed look counts as "everything changed", so
 * a broken store is read (and its error reported) as without the cache. */
static void changes_poll(struct coordinator *c)
{
	unsigned what = 0;
	struct world_err e = { 0 };
	if (world_store_changed(c->cfg.store, &c->chg, &what, &e) < 0) {
		c->chg.valid = 0;
		what = WORLD_CHANGED_ALL;
	}
	if (what & WORLD_CHANGED_SESSIONS) c->sess_gen++;
	if (what & WORLD_CHANGED_REGISTRIES) {
		c->reg_stale = 1;
		c->reg_gen++;
	}
}

static void req_look_end(void);

/* A mark: "what changed in the store up to now" (store_lock held). A
 * request that asks for one has moved past its session open's look. */
static unsigned long long changes_mark(struct coordinator *c)
{
	req_look_end();
	return ++c->mark_seq;
}

/* Look for changes unless a look began after mark was taken (store_lock
 * held): a look then, under the same lock, saw everything committed
 * before the mark. So a call that looks at its start answers its later
 * questions (registry, session) from that look, as it would have a
 * moment earlier; a revoke or a publish that returned before the call's
 * mark is always seen. */
static void changes_since(struct coordinator *c, unsigned long long mark)
{
	if (c->polled_mark >= mark) return;
	unsigned long long m = c->mark_seq;
	changes_poll(c);
	c->polled_mark = m;
}

/* The look of a request's session open answers that request's listing
 * and its first call (a look of the store_changes row is a round trip to
 * PostgreSQL): it began after the request arrived, so it saw everything
 * committed before the request started, which is all a request is owed.
 * Kept per thread, for the session the open returned, for a listing and
 * then a call, for at most REQ_LOOK_MS; the call, or any new mark taken
 * on the thread, ends it: anything after looks again. */
enum { REQ_LOOK_VISIBLE = 1, REQ_LOOK_CALL = 2, REQ_LOOK_MS = 1000 };
static _Thread_local struct req_look {
	const struct coordinator *c;
	const struct coord_session *s;
	unsigned long long mark;
	unsigned uses;
	struct timespec at;
	/* the session's episode's usage, read by the same look (its quota
	 * check's, once) */
	int usage_ok;
	long long calls, bytes;
} req_look;

static void req_look_end(void) { req_look.s = NULL; }

static void req_look_keep(const struct coordinator *c, const struct coord_session *s, unsigned long long mark)
{
	req_look = (struct req_look){ .c = c, .s = s, .mark = mark, .uses = REQ_LOOK_VISIBLE | REQ_LOOK_CALL };
	clock_gettime(CLOCK_MONOTONIC, &req_look.at);
	const struct world_changes *t = &c->chg;
	if (t->usage_read && t->usage_episode && strcmp(t->usage_episode, s->episode) == 0) {
		req_look.usage_ok = 1;
		req_look.calls = t->usage_calls;
		req_look.bytes = t->usage_bytes;
	}
}

/* The usage of session s's episode as the request's look read it (once):
 * 1, else 0 (read it). */
static int req_look_usage(const struct coordinator *c, const struct coord_session *s, long long *calls,
                          long long *bytes)
{
	if (req_look.c != c || req_look.s != s || !s || !req_look.usage_ok) return 0;
	req_look.usage_ok = 0;
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (ms_between(&req_look.at, &now) >= REQ_LOOK_MS) return 0;
	*calls = req_look.calls;
	*bytes = req_look.bytes;
	return 1;
}

/* The mark a use of kind `use` of session s answers from: the request's
 * open's, or a new one (store_lock held). */
static unsigned long long req_look_mark(struct coordinator *c, const struct coord_session *s, unsigned use)
{
	if (req_look.c == c && req_look.s == s && s && (req_look.uses & use)) {
		/* a listing may be followed by the call; the call is the last */
		req_look.uses = use == REQ_LOOK_VISIBLE ? REQ_LOOK_CALL : 0;
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (ms_between(&req_look.at, &now) < REQ_LOOK_MS) return req_look.mark;
	}
	return changes_mark(c);
}

void coord_generations(struct coordinator *c, unsigned long long *registries, unsigned long long *sessions)
{
	pthread_mutex_lock(&c->store_lock);
	changes_since(c, changes_mark(c));
	*registries = c->reg_gen;
	*sessions = c->sess_gen;
	pthread_mutex_unlock(&c->store_lock);
}

/* The cached session of credential id, valid or not (NULL: none). Call
 * with store_lock held. */
static struct sess_cached *sess_find(struct coordinator *c, const char *id)
{
	for (size_t i = 0; i < SESS_CACHE; i++)
		if (c->sess_cache[i].s.credential_id[0] && strcmp(c->sess_cache[i].s.credential_id, id) == 0)
			return &c->sess_cache[i];
	return NULL;
}

static int sess_copy(struct broker_session *to, const struct broker_session *from, struct world_err *err)
{
	*to = *from;
	to->grants = from->ngrants ? malloc(from->ngrants * sizeof *from->grants) : NULL;
	if (from->ngrants && !to->grants) {
		memset(to, 0, sizeof *to);
		return werr(err, WX_FAIL, "session: out of memory");
	}
	if (from->ngrants) memcpy(to->grants, from->grants, from->ngrants * sizeof *from->grants);
	return 0;
}

/* Keep s as read from the store now (store_lock held). */
static void sess_keep(struct coordinator *c, const struct broker_session *s)
{
	struct sess_cached *e = sess_find(c, s->credential_id);
	if (!e) {
		e = &c->sess_cache[c->sess_next];
		c->sess_next = (c->sess_next + 1) % SESS_CACHE;
	}
	broker_session_free(&e->s);
	memset(&e->s, 0, sizeof e->s);
	if (sess_copy(&e->s, s, NULL) < 0) return;
	e->gen = c->sess_gen;
}

static void sess_forget(struct coordinator *c, const char *id)
{
	struct sess_cached *e = sess_find(c, id);
	if (!e) return;
	broker_session_free(&e->s);
	memset(&e->s, 0, sizeof e->s);
}

int coord_session_open(struct coordinator *c, const char *credential, struct coord_session **out, struct world_err *err)
{
	*out = calloc(1, sizeof **out);
	if (!*out) return werr(err, WX_FAIL, "session: out of memory");
	char ref[WORLD_REF_SIZE];
	int rc;
	if (!broker_credential_wellformed(credential) || world_hash_ref(credential, strlen(credential), ref, NULL) < 0) {
		rc = broker_session_open(c->cfg.store, credential, (long long)time(NULL), *out, err); /* its refusal */
		goto done;
	}
	pthread_mutex_lock(&c->store_lock);
	unsigned long long mark = changes_mark(c);
	/* the look reads the episode's usage too when the credential's
	 * episode is known (a credential's episode never changes) */
	struct sess_cached *e = sess_find(c, ref + 7);
	char ep[sizeof e->s.episode];
	snprintf(ep, sizeof ep, "%s", e ? e->s.episode : "");
	c->chg.usage_episode = ep[0] ? ep : NULL;
	changes_since(c, mark);
	long long now = (long long)time(NULL);
	if (e && e->gen == c->sess_gen) {
		/* no session changed since it was read: the row is as cached */
		rc = sess_copy(*out, &e->s, err);
		/* the one expiry rule (broker/session.c): live while now < expires_at */
		if (rc == 0 && !(now < (*out)->expires_at)) {
			broker_session_free(*out);
			rc = werr(err, WX_SESSION, "session credential has expired");
		}
	} else {
		rc = broker_session_open(c->cfg.store, credential, now, *out, err);
		/* a connection that died while the server was away fails its
		 * first statement and reconnects on the next: one more read */
		if (rc < 0 && err && err->code == WX_UNAVAILABLE)
			rc = broker_session_open(c->cfg.store, credential, now, *out, err);
		if (rc == 0) sess_keep(c, *out);
		else if (err && err->code == WX_NOT_FOUND) sess_forget(c, ref + 7);
	}
	if (rc == 0) req_look_keep(c, *out, mark);
	c->chg.usage_episode = NULL;
	c->chg.usage_read = 0;
	pthread_mutex_unlock(&c->store_lock);
done:
	if (rc < 0) {
		free(*out);
		*out = NULL;
	}
	return rc;
}

void coord_session_free(struct coord_session *s)
{
	if (!s) return;
	if (req_look.s == s) req_look.s = NULL;
	broker_session_free(s);
	free(s);
}

/* The current registry (new reference), read again (its head, and the
 * registry object it names) only when a registry head moved since it was
 * last read (change detection). Call with store_lock held. */
static int registry_current(struct coordinator *c, unsigned long long mark, json_t **out, struct world_err *err)
{
	*out = NULL;
	changes_since(c, mark);
	if (c->reg_stale) {
		json_t *reg;
		long long rev;
		char head[WORLD_REF_SIZE] = "";
		if (registry_load(c->cfg.store, &reg, &rev, head, err) < 0) return -1;
		json_decref(c->reg_cache);
		c->reg_cache = reg; /* NULL: none published yet */
		memcpy(c->reg_head, head, WORLD_REF_SIZE);
		c->reg_stale = 0;
	}
	*out = c->reg_cache ? json_incref(c->reg_cache) : NULL;
	return 0;
}

/* The source bytes of ref (a copy the caller frees). Call with store_lock held. */
static int source_get(struct coordinator *c, const char *ref, char **bytes, size_t *len, struct world_err *err)
{
	for (size_t i = 0; i < c->nsrc; i++)
		if (strcmp(c->src_cache[i].ref, ref) == 0) {
			*bytes = malloc(c->src_cache[i].len + 1);
			if (!*bytes) return werr(err, WX_FAIL, "out of memory");
			memcpy(*bytes, c->src_cache[i].bytes, c->src_cache[i].len + 1);
			*len = c->src_cache[i].len;
			return 0;
		}
	struct world_object o;
	if (world_object_get(c->cfg.store, ref, &o, err) < 0) return -1;
	if (strcmp(o.semantic_id, "world/transition-source/v1") != 0) {
		world_object_free(&o);
		return werr(err, WX_INTEGRITY, "%s is a %s, not a world/transition-source/v1", ref, o.semantic_id);
	}
	*bytes = (char *)o.payload;
	*len = o.len;
	o.payload = NULL;
	world_object_free(&o);
	if (c->nsrc < MAX_SOURCES) {
		char *copy = malloc(*len + 1);
		if (copy) {
			memcpy(copy, *bytes, *len + 1);
			snprintf(c->src_cache[c->nsrc].ref, WORLD_REF_SIZE, "%s", ref);
			c->src_cache[c->nsrc].bytes = copy;
			c->src_cache[c->nsrc++].len = *len;
		}
	}
	return 0;
}

/* The transitions s may see (catalog_entry_visible's rule, the one every
 * registry member uses), from the registry this daemon has current. */
int coord_visible(struct coordinator *c, const struct coord_session *s, json_t **out, struct world_err *err)
{
	*out = NULL;
	json_t *reg;
	pthread_mutex_lock(&c->store_lock);
	int rc = registry_current(c, req_look_mark(c, s, REQ_LOOK_VISIBLE), &reg, err);
	if (rc == 0) rc = catalog_visible(c->cfg.store, s, reg, "transitions", out, err);
	pthread_mutex_unlock(&c->store_lock);
	json_decref(reg);
	return rc;
}

/* ---- interpreters ---- */

static struct supervisor *interp_sup(struct coordinator *c, const char *ref, struct world_err *err)
{
	pthread_mutex_lock(&c->state_lock);
	for (size_t i = 0; i < c->nslots; i++)
		if (strcmp(c->slots[i].ref, ref) == 0) {
			pthread_mutex_unlock(&c->state_lock);
			return c->slots[i].sup;
		}
	struct supervisor *sup = NULL;
	if (c->nslots == MAX_INTERPS) {
		werr(err, WX_CAPACITY, "coordinator: more than %d interpreters in use", MAX_INTERPS);
		goto out;
	}
	struct world_interp wi;
	pthread_mutex_lock(&c->store_lock);
	int rc = world_interp_get(c->cfg.store, ref, &wi, err);
	pthread_mutex_unlock(&c->store_lock);
	if (rc < 0) { werr_prefix(err, "interpreter %s", ref); goto out; }
	struct launcher *l = launcher_capsule_new(wi.path, ref, err);
	sup = l ? sup_new(&c->cfg.limits, l, err) : NULL;
	if (sup) {
		snprintf(c->slots[c->nslots].ref, WORLD_REF_SIZE, "%s", ref);
		c->slots[c->nslots++].sup = sup;
	}
out:
	pthread_mutex_unlock(&c->state_lock);
	return sup;
}

/* Claims invocation id for this call: the first half of exactly-once. A
 * call whose id is already claimed waits until that call has finished
 * (committed or failed), then claims it itself; the caller checks the
 * journal only AFTER its claim, so it sees the first call's commit and
 * answers with it instead of running again. */
static int inflight_add(struct coordinator *c, const char *id, struct world_err *err)
{
	pthread_mutex_lock(&c->state_lock);
	int slot, announced = 0;
	for (;;) {
		int busy = 0;
		slot = -1;
		for (int i = 0; i < MAX_INFLIGHT; i++) {
			if (c->inflight[i] && strcmp(c->inflight[i], id) == 0) busy = 1;
			if (!c->inflight[i] && slot < 0) slot = i;
		}
		if (!busy) break;
		if (!announced) {
			/* (the race tests see this call waiting; the scan is redone
			 * under the lock before the wait, so no release is missed) */
			announced = 1;
			pthread_mutex_unlock(&c->state_lock);
			world_pause("coord.claim_wait");
			pthread_mutex_lock(&c->state_lock);
			continue;
		}
		pthread_cond_wait(&c->inflight_cv, &c->state_lock);
	}
	if (slot < 0) {
		pthread_mutex_unlock(&c->state_lock);
		return werr(err, WX_CAPACITY, "coordinator: %d calls in flight", MAX_INFLIGHT);
	}
	c->inflight[slot] = strdup(id);
	pthread_mutex_unlock(&c->state_lock);
	return c->inflight[slot] ? 0 : werr(err, WX_FAIL, "out of memory");
}

static void inflight_del(struct coordinator *c, const char *id)
{
	pthread_mutex_lock(&c->state_lock);
	for (int i = 0; i < MAX_INFLIGHT; i++)
		if (c->inflight[i] && strcmp(c->inflight[i], id) == 0) {
			free(c->inflight[i]);
			c->inflight[i] = NULL;
		}
	pthread_cond_broadcast(&c->inflight_cv);
	pthread_mutex_unlock(&c->state_lock);
}

/* ---- one call ---- */

/* The episode's quotas (coord_config) against what its committed calls used. */
static int quota_check(struct coordinator *c, const struct coord_session *s, size_t in_len, struct world_err *err)
{
	const char *episode = s->episode;
	long long calls = 0, bytes = 0;
	long long cmax = c->cfg.episode_calls_max, bmax = c->cfg.episode_bytes_max;
	if (cmax <= 0 && bmax <= 0) return 0; /* no quota: nothing to read */
	int rc = 0;
	if (!req_look_usage(c, s, &calls, &bytes)) { /* the request's look read it */
		pthread_mutex_lock(&c->store_lock);
		rc = world_episode_usage_get(c->cfg.store, episode, &calls, &bytes, err);
		pthread_mutex_unlock(&c->store_lock);
	}
	if (rc < 0) return -1;
	if (cmax > 0 && calls >= cmax)
		return werr(err, WX_QUOTA, "episode %s has spent its call quota (%lld of %lld calls committed)", episode,
		            calls, cmax);
	if (bmax > 0 && bytes + (long long)in_len > bmax)
		return werr(err, WX_QUOTA, "episode %s has spent its byte quota (%lld of %lld bytes stored; this call's "
		            "input is %zu bytes)", episode, bytes, bmax, in_len);
	return 0;
}

int coord_task_id_valid(const char *s)
{
	size_t n = strlen(s);
	if (n < 1 || n > 128) return 0;
	for (size_t i = 0; i < n; i++) {
		char ch = s[i];
		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '.' ||
		      ch == '_' || ch == '-'))
			return 0;
	}
	return 1;
}

static int session_check(struct coordinator *c, const struct coord_session *s, unsigned long long *gen, int expiry,
                         unsigned long long mark, struct world_err *err);

struct call_state {
	struct coordinator *c;
	const struct coord_call *call;
	const json_t *desc;
	const char *invocation_id;
	const char *input;
	size_t input_len;
	char input_ref[WORLD_REF_SIZE];
	/* filled by the broker callback */
	int have_plan;
	char *plan;             /* canonical plan bytes */
	size_t plan_len;
	char plan_ref[WORLD_REF_SIZE];
	json_t *plan_result;    /* the plan's result (no effects) */
	int have_effect;
	int held_gave_up; /* hold_commit gave up: the intents stay open, nothing more is written */
	struct broker_effect_out eff;
	long broker_ms;
	unsigned long long sess_gen; /* the sessions' generation its session was last found live in */
};

static void progress(const struct coord_call *call, const char *stage, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void progress(const struct coord_call *call, const char *stage, const char *fmt, ...)
{
	if (!call->on_progress) return;
	char msg[300];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	call->on_progress(call->progress_ctx, stage, msg);
}

static int broker_cb(void *ctx, const char *plan, size_t plan_len, struct sup_broker_reply *reply,
                     struct world_err *err)
{
	struct call_state *cs = ctx;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	memset(reply, 0, sizeof *reply);
	struct broker_plan p;
	if (broker_plan_parse(plan, plan_len, json_object_get(cs->desc, "declaredEffects"), &p, err) < 0) return -1;
	cs->plan = world_canon_json(p.root, &cs->plan_len, err);
	if (!cs->plan || world_hash_ref(cs->plan, cs->plan_len, cs->plan_ref, err) < 0) {
		broker_plan_free(&p);
		return -1;
	}
	cs->have_plan = 1;
	progress(cs->call, "plan", "plan %.80s: %s", cs->plan_ref, p.effect ? "one effect" : "no effect");
	if (!p.effect) {
		cs->plan_result = json_incref(p.result);
		broker_plan_free(&p);
		return 0;
	}
	/* A cancel that landed while the plan phase ran: the effect does not run. */
	if (sup_cancel_fired(cs->call->cancel)) {
		broker_plan_free(&p);
		return werr(err, WX_CANCELLED, "call cancelled before its effect ran; capsule killed");
	}
	struct coordinator *c = cs->c;
	const struct coord_session *s = cs->call->session;
	/* the session is still there before its effect runs (re-read only
	 * when the sessions changed since the call's check) */
	pthread_mutex_lock(&c->store_lock);
	unsigned long long mark = changes_mark(c);
	changes_since(c, mark);
	int live = cs->sess_gen == c->sess_gen ? 0 : session_check(c, s, &cs->sess_gen, 0, mark, err);
	pthread_mutex_unlock(&c->store_lock);
	if (live < 0) {
		broker_plan_free(&p);
		return -1;
	}
	struct broker_effect_req rq = {
		.st = c->cfg.store, .store_lock = &c->store_lock, .session = s, .now = (long long)time(NULL),
		.invocation_id = cs->invocation_id, .input_ref = cs->input_ref, .input = cs->input,
		.input_len = cs->input_len, .effect = p.effect, .handlers = c->handlers,
		.hctx = { .workspace_root = c->workspace_root, .episode = s->episode, .tool_sup = c->tool_sup,
		          .examples_dir = c->examples_dir, .wall_ms = BROKER_HANDLER_WALL_MS,
		          .output_max = BROKER_HANDLER_OUTPUT_MAX, .file_max = BROKER_FILE_MAX,
		          .exec_profiles = c->cfg.exec_profiles, .exec_cache_root = c->cfg.exec_cache_root,
		          .exec_output_max = c->cfg.exec_output_max, .exec_max_ms = c->cfg.exec_max_ms,
		          .cancel = cs->call->cancel },
	};
	const char *ename = json_string_value(json_object_get(p.effect, "effect"));
	/* An exec run is bounded by its profile's timeout_ms (up to the
	 * daemon's --exec-max-ms), not by the invocation deadline, which
	 * bounds the plan capsule's own time. */
	reply->own_deadline = ename && strcmp(ename, "Workspace.Exec") == 0;
	int rc = broker_effect_run(&rq, &cs->eff, err);
	if (rc == 0) {
		cs->have_effect = 1;
		const char *eid = json_string_value(json_object_get(p.effect, "id"));
		progress(cs->call, "effect", "effect %.64s (%.64s) %s", eid ? eid : "?", ename ? ename : "?",
		         cs->eff.status == BROKER_EFFECT_OK ? "succeeded" : cs->eff.status == BROKER_EFFECT_FAILED ? "failed" : "denied");
		if (p.finish) {
			json_t *arr = json_pack("[O]", cs->eff.entry);
			reply->results = arr ? world_canon_json(arr, &reply->results_len, err) : NULL;
			json_decref(arr);
			if (!reply->results) rc = -1;
			else reply->finish = 1;
		}
	}
	broker_plan_free(&p);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	cs->broker_ms += ms_between(&t0, &t1);
	return rc;
}

/* The call failed after an effect may have happened: keep the evidence
 * (record, outcome) and close the invocation's intent as failed. */
static void held_note(struct coordinator *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Test builds: WORLD_TEST_HOLD=0 turns the holds off, the control of
 * tests/daemon/pg_serve.sh (without them a call fails at once when the store is unreachable). */
static int hold_off(void)
{
#ifdef WORLD_TEST_HOOKS
	const char *th = getenv("WORLD_TEST_HOLD");
	return th && strcmp(th, "0") == 0;
#else
	return 0;
#endif
}

/* The effect's outcome and the call's "failed" in one transaction. When
 * the store does not answer, the outcome is held and tried again every
 * 250 ms (at most hold_s, as hold_commit below); an outcome already
 * written (a COMMIT whose answer was lost) is a conflict: done. */
static void record_failure(struct call_state *cs)
{
	if (!cs->have_effect || cs->held_gave_up) return;
	struct coordinator *c = cs->c;
	int hold_s = c->cfg.hold_s > 0 ? c->cfg.hold_s : COORD_HOLD_S;
	struct timespec t0, now;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (long tries = 1;; tries++) {
		struct world_err e = { 0, "" };
		int ok = 0;
		pthread_mutex_lock(&c->store_lock);
		if (world_store_begin(c->cfg.store, &e) == 0) {
			if (broker_effect_write(c->cfg.store, &cs->eff, &e) == 0 &&
			    (!cs->eff.invocation_intent_id ||
			     world_journal_outcome(c->cfg.store, cs->eff.invocation_intent_id, "failed", NULL, &e) == 0))
				ok = world_store_commit(c->cfg.store, &e) == 0;
			else
				world_store_rollback(c->cfg.store);
		}
		pthread_mutex_unlock(&c->store_lock);
		if (ok || e.code != WX_UNAVAILABLE || hold_off()) {
			if (tries > 1)
				held_note(c, "held invocation_id=%s: failed outcome %s after %ld tries", cs->invocation_id,
				          ok ? "written" : "found written", tries);
			return;
		}
		if (tries == 1)
			held_note(c, "held invocation_id=%s: its effect ran and the call failed, the store does not answer "
			          "(%s); the outcome is written when it does", cs->invocation_id, e.msg);
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - t0.tv_sec >= hold_s) {
			held_note(c, "held invocation_id=%s: given up after %d s; its intents stay open: worldd journal "
			          "--indeterminate", cs->invocation_id, hold_s);
			return;
		}
		struct timespec nap = { 0, 250 * 1000000L };
		while (nanosleep(&nap, &nap) < 0 && errno == EINTR) {}
	}
}

/* A cancelled call (WX_CANCELLED): in one transaction its input, the
 * evidence of an effect that ran (as record_failure keeps it), and the
 * invocation's intent -- the effect's, or a new one naming the input --
 * closed "cancelled"; the input is a member of the episode and its bytes
 * count against the byte quota (not the call quota). No log entry. A
 * failure to write is logged by the caller through err's message. */
static int record_cancel(struct call_state *cs, struct world_err *e)
{
	struct coordinator *c = cs->c;
	struct world_store *st = c->cfg.store;
	const char *episode = cs->call->session->episode;
	char in_ref[WORLD_REF_SIZE];
	int created, ok = 0;
	pthread_mutex_lock(&c->store_lock);
	if (world_store_begin(st, e) == 0) {
		long long intent = cs->have_effect ? cs->eff.invocation_intent_id : 0;
		const char *members[] = { cs->input_ref };
		ok = world_object_put(st, "world/invocation-input/v1", cs->invocation_id, cs->input, cs->input_len, in_ref,
		                      &created, e) == 0 &&
		     (!cs->have_effect || broker_effect_write(st, &cs->eff, e) == 0);
		if (ok && !intent) {
			struct world_journal_intent in = { .kind = "invocation", .subject = cs->invocation_id,
				                           .episode = episode, .ref = cs->input_ref };
			ok = world_journal_intent(st, &in, &intent, e) == 0;
		}
		ok = ok && world_journal_outcome(st, intent, "cancelled", NULL, e) == 0 &&
		     world_episode_objects_add(st, episode, members, 1, e) == 0 &&
		     world_episode_usage_add(st, episode, 0, (long long)cs->input_len, e) == 0;
		if (ok) ok = world_store_commit(st, e) == 0;
		else world_store_rollback(st);
	}
	pthread_mutex_unlock(&c->store_lock);
	return ok ? 0 : -1;
}

/* The call was cancelled (err says where): record it; err keeps
 * WX_CANCELLED, with the journal's failure appended when it could not be
 * written. */
static void cancelled(struct call_state *cs, struct world_err *err)
{
	struct world_err e = { 0, "" };
	if (record_cancel(cs, &e) < 0) {
		size_t l = strlen(err->msg);
		snprintf(err->msg + l, sizeof err->msg - l, " (the journal's cancelled outcome was not written: %.400s)", e.msg);
	}
}

/* The denial record of a call the seccomp filter stopped
 * (world/invocation-denial/v1, docs/provenance.md): who (invocation,
 * episode, skill), what ran (source, interpreter, epoch, input) and the
 * denied call inside the error it failed with. Canonical and free of
 * time: the journal row and the object's created_at say when. */
static json_t *denial_record(const struct call_state *cs, const struct sup_denial *dn, const struct world_err *err)
{
	const json_t *d = cs->desc;
	json_t *call = json_pack("{s:s,s:i,s:s}", "syscall", dn->syscall, "nr", dn->nr, "arch", dn->arch);
	if (call && dn->has_cmd) {
		char cmd[16];
		snprintf(cmd, sizeof cmd, "0x%x", dn->cmd);
		json_t *io = json_pack("{s:s}", "cmd", cmd);
		if (io && dn->cmd_name[0]) json_object_set_new(io, "name", json_string(dn->cmd_name));
		if (!io) { json_decref(call); return NULL; }
		json_object_set_new(call, "ioctl", io);
	}
	if (!call) return NULL;
	json_t *rec = json_pack("{s:s,s:s,s:s,s:O,s:O,s:O,s:s,s:{s:s,s:s,s:o}}", "invocationId", cs->invocation_id,
	                        "episodeId", cs->call->session->episode, "skillId", cs->call->skill_id, "transitionFn",
	                        json_object_get(d, "transitionFn"), "interpreter", json_object_get(d, "interpreter"),
	                        "semanticsEpoch", json_object_get(d, "semanticsEpoch"), "input", cs->input_ref, "error",
	                        "class", coord_error_class(WX_DENIED_SYSCALL), "message", err->msg, "denial", call);
	/* an effect that happened before the denial (finish phase) is named */
	if (rec && cs->have_effect) json_object_set_new(rec, "effects", json_pack("[s]", cs->eff.record_ref));
	return rec;
}

/* A call the seccomp filter stopped: commit its evidence (coordinator.h,
 * struct coord_denial) in one transaction -- the effect's evidence too
 * when one happened, as record_failure would -- then tell on_denial. */
static void record_denial(struct call_state *cs, const struct sup_denial *dn, const struct world_err *cerr,
                          char ref[WORLD_REF_SIZE])
{
	struct coordinator *c = cs->c;
	struct world_store *st = c->cfg.store;
	const char *episode = cs->call->session->episode;
	struct world_err e = { 0, "" };
	ref[0] = 0;
	json_t *rec = denial_record(cs, dn, cerr);
	size_t rec_len = 0;
	char *rec_bytes = rec ? world_canon_json(rec, &rec_len, &e) : NULL;
	if (!rec) werr(&e, WX_FAIL, "denial record: out of memory");
	json_decref(rec);
	int ok = 0;
	char rr[WORLD_REF_SIZE], in_ref[WORLD_REF_SIZE];
	pthread_mutex_lock(&c->store_lock);
	if (rec_bytes && world_store_begin(st, &e) == 0) {
		int created;
		long long intent = cs->have_effect ? cs->eff.invocation_intent_id : 0;
		const char *members[] = { cs->input_ref, rr };
		ok = world_object_put(st, "world/invocation-input/v1", cs->invocation_id, cs->input, cs->input_len, in_ref,
		                      &created, &e) == 0 &&
		     world_object_put(st, "world/invocation-denial/v1", cs->invocation_id, rec_bytes, rec_len, rr, &created,
		                      &e) == 0 &&
		     (!cs->have_effect || broker_effect_write(st, &cs->eff, &e) == 0);
		if (ok && !intent) {
			struct world_journal_intent in = { .kind = "invocation", .subject = cs->invocation_id,
				                           .episode = episode, .ref = cs->input_ref };
			ok = world_journal_intent(st, &in, &intent, &e) == 0;
		}
		ok = ok && world_journal_outcome(st, intent, "failed", rr, &e) == 0 &&
		     world_episode_objects_add(st, episode, members, 2, &e) == 0 &&
		     world_episode_usage_add(st, episode, 0, (long long)(cs->input_len + rec_len), &e) == 0;
		if (ok) ok = world_store_commit(st, &e) == 0;
		else world_store_rollback(st);
	}
	pthread_mutex_unlock(&c->store_lock);
	free(rec_bytes);
	if (ok) snprintf(ref, WORLD_REF_SIZE, "%s", rr);
	if (c->cfg.on_denial) {
		struct coord_denial ev = { .invocation_id = cs->invocation_id, .episode = episode,
			                   .skill_id = cs->call->skill_id, .record_ref = ref,
			                   .record_error = ok ? "" : e.msg, .call = dn };
		c->cfg.on_denial(c->cfg.on_denial_ctx, &ev);
	}
}

int coord_committed(struct world_store *st, const char *record_ref, const char *input_ref, struct coord_result *res,
                    json_t **record, struct world_err *err)
{
	struct world_object rec = { 0 }, out = { 0 };
	json_t *r = NULL;
	int rc = -1;
	if (record) *record = NULL;
	if (world_object_get(st, record_ref, &rec, err) < 0) goto done;
	r = world_json_parse((const char *)rec.payload, rec.len, err);
	if (!r) goto done;
	const char *in = json_string_value(json_object_get(r, "input"));
	const char *o = json_string_value(json_object_get(r, "output"));
	if (!in || !o) { werr(err, WX_INTEGRITY, "invocation record %s: no input/output", record_ref); goto done; }
	if (input_ref && strcmp(in, input_ref) != 0) {
		werr(err, WX_CONFLICT, "task id already used in this session");
		goto done;
	}
	long long idx;
	if (world_log_find_record(st, record_ref, &idx, err) < 0) goto done;
	struct world_log_entry le;
	if (world_log_get(st, idx, &le, err) < 0) goto done;
	snprintf(res->entry_hash, WORLD_REF_SIZE, "%s", le.entry_hash);
	struct tlog_hash lh = tlog_leaf_hash(le.json, le.json_len);
	tlog_hash_b64(&lh, res->leaf_hash);
	world_log_entry_free(&le);
	if (world_object_get(st, o, &out, err) < 0) goto done;
	/* the world of that entry: revision idx, stateRoot o, logHead entryHash */
	if (world_world_ref(idx, o, res->entry_hash, NULL, res->world_ref, err) < 0) goto done;
	res->output = malloc(out.len + 1);
	if (!res->output) { werr(err, WX_FAIL, "out of memory"); goto done; }
	memcpy(res->output, out.payload, out.len + 1);
	res->output_len = out.len;
	res->entry_index = idx;
	snprintf(res->record_ref, WORLD_REF_SIZE, "%s", record_ref);
	if (record) {
		*record = r;
		r = NULL;
	}
	rc = 0;
done:
	json_decref(r);
	world_object_free(&rec);
	world_object_free(&out);
	return rc;
}

/* A committed task id: the same arguments get the committed output back
 * (its record, entry and output re-verified); other arguments are refused.
 * Call with store_lock held. */
static int replay_committed(struct coordinator *c, const struct world_journal_row *jr, const char *input_ref,
                            struct coord_result *res, struct world_err *err)
{
	if (coord_committed(c->cfg.store, jr->outcome_ref, input_ref, res, NULL, err) < 0) return -1;
	res->replayed = 1;
	return 0;
}

/* Output of an effectful call (docs/design.md §3), before its world block. */
static json_t *effectful_output(struct call_state *cs, const struct sup_result *sr, struct world_err *err)
{
	if (!cs->have_effect) return json_incref(cs->plan_result);
	if (sr->finished) return world_json_parse(sr->output, sr->output_len, err);
	if (cs->eff.status == BROKER_EFFECT_OK) return json_incref(cs->eff.output);
	return json_object();
}

/* ---- group commit ----
 * Every committed call needs one durable transaction (an fsync of the WAL).
 * The calls go through the store's group commit (store/group.h): calls
 * that finish while another call's batch is being written queue, and the
 * next batch writes all of them in ONE transaction -- flat first, then,
 * when one fails, the others each in a savepoint of their own -- so
 * concurrent callers share one fsync; on PostgreSQL a batch that lost a
 * race with another daemon's transaction runs again whole. An
 * acknowledged call is still durable: nobody is answered before the
 * COMMIT returned. The batch's leader holds store_lock from before its
 * transaction begins until it ended (the hooks below), so every store call
 * of a batch's calls runs under it. Lock order: store_lock, then the
 * group's own lock (held only to take the queue); nobody holding the
 * group's lock waits for store_lock. */
struct commit_job {
	struct call_state *cs;
	const char *rec_kind;
	json_t *record;
	const char *out_bytes;
	size_t out_len;
	const char *out_ref;
	char rec_ref[WORLD_REF_SIZE];
	struct world_log_result lr;
};

static int write_rows(struct world_store *st, void *ctx, struct world_err *err)
{
	struct commit_job *j = ctx;
	struct call_state *cs = j->cs;
	struct coordinator *c = cs->c;
	const json_t *d = cs->desc;
	int effectful = json_array_size(json_object_get(d, "declaredEffects")) > 0;
	char ref[WORLD_REF_SIZE];
	/* A revoke may have landed since the call's check: inside this
	 * transaction (it holds the write lock, so no commit can land
	 * between this look and the COMMIT) the session is read again
	 * whenever the sessions changed since, and a revoked one is refused
	 * here (nothing of the call is committed). Nothing changed: no read. */
	changes_since(c, c->txn_mark); /* one look a transaction (group_begun) */
	if (cs->sess_gen != c->sess_gen && session_check(c, cs->call->session, &cs->sess_gen, 0, c->txn_mark, err) < 0)
		return -1;
	if (world_object_put(st, "world/invocation-input/v1", cs->invocation_id, cs->input, cs->input_len, ref, NULL,
	                     err) < 0)
		return -1;
	if (effectful && world_object_put(st, "world/effect-plan/v1", cs->invocation_id, cs->plan, cs->plan_len, ref,
	                                  NULL, err) < 0)
		return -1;
	/* the effect's and the invocation's intents, read at once for their outcomes */
	const long long expect[] = { cs->have_effect ? cs->eff.intent_id : 0, cs->have_effect ? cs->eff.invocation_intent_id : 0 };
	if (cs->have_effect && world_journal_expect(st, expect, 2, err) < 0) return -1;
	if (cs->have_effect && broker_effect_write(st, &cs->eff, err) < 0) return -1;
	if (world_object_put(st, "world/invocation-output/v1", cs->invocation_id, j->out_bytes, j->out_len, ref, NULL,
	                     err) < 0)
		return -1;
	if (world_object_put_json(st, j->rec_kind, cs->invocation_id, j->record, j->rec_ref, err) < 0) return -1;
	long long intent = cs->have_effect ? cs->eff.invocation_intent_id : 0;
	if (!intent) {
		struct world_journal_intent in = { .kind = "invocation", .subject = cs->invocation_id,
			                           .episode = cs->call->session->episode, .ref = cs->input_ref };
		if (world_journal_intent(st, &in, &intent, err) < 0) return -1;
	}
	if (world_journal_outcome(st, intent, "committed", j->rec_ref, err) < 0) return -1;
	const char *episode = cs->call->session->episode;
	long long idx;
	char prev[WORLD_REF_SIZE], world[WORLD_REF_SIZE];
	if (world_log_next(st, &idx, prev, world, err) < 0) return -1;
	struct world_log_append a = {
		.entry_index = idx, .semantics_epoch = json_integer_value(json_object_get(d, "semanticsEpoch")),
		.transition_fn = json_string_value(json_object_get(d, "transitionFn")),
		.interpreter = json_string_value(json_object_get(d, "interpreter")),
		.prev_entry_hash = prev[0] ? prev : NULL, .written_by = c->written_by, .transition_ref = j->rec_ref,
		.state_root = j->out_ref, .expected_world = world,
	};
	if (world_log_append(st, &a, &j->lr, err) < 0) return -1;
	/* Everything this call produced belongs to its episode (the read
	 * routes show a session only its episode's objects), and counts
	 * against the episode's quotas. */
	const char *members[] = { cs->input_ref, effectful ? cs->plan_ref : NULL, j->out_ref, j->rec_ref,
		                  j->lr.entry_hash, j->lr.world_ref };
	if (world_episode_objects_add(st, episode, members, sizeof members / sizeof *members, err) < 0) return -1;
	long long bytes = (long long)(cs->input_len + j->out_len + (effectful ? cs->plan_len : 0));
	if (cs->have_effect) bytes += (long long)(cs->eff.result_len + cs->eff.record_len);
	return world_episode_usage_add(st, episode, 1, bytes, err);
}

static void group_lead(void *ctx)
{
	struct coordinator *c = ctx;
	world_pause("coord.batch");
	pthread_mutex_lock(&c->store_lock);
}

/* a transaction of the batch began: the store's changes are looked at
 * once in it (write_rows) */
static void group_begun(void *ctx)
{
	struct coordinator *c = ctx;
	c->txn_mark = changes_mark(c);
}

static void group_ended(void *ctx)
{
	struct coordinator *c = ctx;
	pthread_mutex_unlock(&c->store_lock);
}

/* queued: the leader's batch may take it */
static void group_queued(void *ctx)
{
	(void)ctx;
	world_pause("coord.queued");
}

__attribute__((noinline)) static int commit_call(struct call_state *cs, json_t *output, struct coord_result *res,
                                                 struct world_err *err)
{
	struct coordinator *c = cs->c;
	const json_t *d = cs->desc;
	int effectful = json_array_size(json_object_get(d, "declaredEffects")) > 0;
	char out_ref[WORLD_REF_SIZE];
	char *out_bytes = NULL;
	json_t *record = NULL;
	int rc = -1;
	if (effectful) {
		json_t *effs = json_array();
		if (cs->have_effect) {
			json_t *we = json_pack("{s:O,s:s,s:s}", "id", json_object_get(cs->eff.entry, "id"), "status",
			                       json_string_value(json_object_get(cs->eff.entry, "status")), "record",
			                       cs->eff.record_ref);
			/* a failed effect says why, as its record does */
			json_t *why = json_object_get(cs->eff.entry, "failure");
			if (we && why) json_object_set(we, "failure", why);
			json_array_append_new(effs, we);
		}
		json_object_set_new(output, "world", json_pack("{s:o,s:s}", "effects", effs, "plan", cs->plan_ref));
	}
	size_t out_len;
	out_bytes = world_canon_json(output, &out_len, err);
	if (!out_bytes) return -1;
	if (out_len > c->cfg.limits.output_max) {
		free(out_bytes);
		return werr(err, WX_OUTPUT_CAP, "transition output with its world block is %zu bytes, over %zu", out_len,
		            c->cfg.limits.output_max);
	}
	if (world_hash_ref(out_bytes, out_len, out_ref, err) < 0) { free(out_bytes); return -1; }
	record = json_pack("{s:s,s:s,s:s,s:O,s:O,s:O,s:s,s:s}", "invocationId", cs->invocation_id, "episodeId",
	                   cs->call->session->episode, "skillId", cs->call->skill_id, "transitionFn",
	                   json_object_get(d, "transitionFn"), "interpreter", json_object_get(d, "interpreter"),
	                   "semanticsEpoch", json_object_get(d, "semanticsEpoch"), "input", cs->input_ref, "output",
	                   out_ref);
	if (record && effectful) {
		json_object_set_new(record, "plan", json_string(cs->plan_ref));
		json_t *er = json_array();
		if (cs->have_effect) json_array_append_new(er, json_string(cs->eff.record_ref));
		json_object_set_new(record, "effects", er);
	}
	if (!record) { free(out_bytes); return werr(err, WX_FAIL, "invocation record: out of memory"); }
	const char *rec_kind = effectful ? "world/invocation-record/v2" : "world/invocation-record/v1";

	struct commit_job j = { .cs = cs, .rec_kind = rec_kind, .record = record, .out_bytes = out_bytes,
		                .out_len = out_len, .out_ref = out_ref };
	if (!c->group) {
		rc = werr(err, WX_USAGE, "commit: store %s was opened read-only (no writer authority)",
		          world_store_path(c->cfg.store));
	} else if (world_group_run(c->group, write_rows, &j, err) == 0) {
		res->entry_index = j.lr.entry_index;
		memcpy(res->entry_hash, j.lr.entry_hash, WORLD_REF_SIZE);
		memcpy(res->world_ref, j.lr.world_ref, WORLD_REF_SIZE);
		memcpy(res->record_ref, j.rec_ref, WORLD_REF_SIZE);
		struct tlog_hash lh;
		memcpy(lh.b, j.lr.leaf_hash, sizeof lh.b);
		tlog_hash_b64(&lh, res->leaf_hash);
		res->output = out_bytes;
		res->output_len = out_len;
		out_bytes = NULL;
		rc = 0;
	}
	free(out_bytes);
	json_decref(record);
	return rc;
}

/* The session as the store holds it now, not as its request found it:
 * a credential revoked (its row deleted, by any process) or expired since
 * is refused for this call -- each call of a JSON-RPC batch is checked.
 * The row is read again only when the store's sessions changed since it
 * was last read (change detection); expiry is judged from the cached
 * expires_at every time. *gen gets the generation the answer holds for:
 * the commit re-checks the session inside its transaction when the
 * sessions changed after it (write_rows). Call with store_lock held. */
static int session_check(struct coordinator *c, const struct coord_session *s, unsigned long long *gen, int expiry,
                         unsigned long long mark, struct world_err *err)
{
	changes_since(c, mark);
	struct sess_cached *e = sess_find(c, s->credential_id);
	long long exp;
	if (e && e->gen == c->sess_gen) {
		exp = e->s.expires_at;
	} else {
		char h[WORLD_REF_SIZE];
		snprintf(h, sizeof h, "sha256:%s", s->credential_id);
		struct world_session ws;
		struct world_err le = { 0 };
		if (world_session_get_hash(c->cfg.store, h, &ws, &le) < 0) {
			if (le.code == WX_NOT_FOUND) {
				sess_forget(c, s->credential_id);
				return werr(err, WX_SESSION, "session credential has been revoked");
			}
			if (err) *err = le;
			return -1;
		}
		exp = ws.expires_at;
		world_session_free(&ws);
		/* the session as presented (episode, grants) with the row's expiry */
		struct broker_session keep = *s;
		keep.expires_at = exp;
		sess_keep(c, &keep);
	}
	if (gen) *gen = c->sess_gen;
	if (!expiry) return 0;
	/* the one expiry rule (broker/session.c): live while now < expires_at */
	if (!((long long)time(NULL) < exp) || !((long long)time(NULL) < s->expires_at))
		return werr(err, WX_SESSION, "session credential has expired");
	return 0;
}

static int session_live(struct coordinator *c, const struct coord_session *s, unsigned long long *gen,
                        unsigned long long *mark, struct world_err *err)
{
	pthread_mutex_lock(&c->store_lock);
	*mark = req_look_mark(c, s, REQ_LOOK_CALL);
	int rc = session_check(c, s, gen, 1, *mark, err);
	pthread_mutex_unlock(&c->store_lock);
	return rc;
}

static void held_note(struct coordinator *c, const char *fmt, ...)
{
	if (!c->cfg.on_held) return;
	char line[1200];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	c->cfg.on_held(c->cfg.on_denial_ctx, line);
}

/* Outages settle: the call's effect ran -- its handler finished
 * -- but its commit, which writes the effect's outcome with the call's
 * entry, did not reach the store (WX_UNAVAILABLE). Nothing of the call is
 * lost while this process holds it: the commit is tried again every 250 ms
 * until the store answers (at most hold_s), the call's claim on its task id
 * held meanwhile, so a retry of the same id in this daemon waits for it and
 * then answers the committed result. A COMMIT whose answer was lost may
 * have committed: the journal is looked at first, and a committed call is
 * answered from it. Past the hold the call fails as it would have, its
 * intents open (worldd journal --indeterminate; settle). */
static int hold_commit(struct call_state *cs, json_t *output, struct coord_result *res, struct world_err *err)
{
	struct coordinator *c = cs->c;
	int hold_s = c->cfg.hold_s > 0 ? c->cfg.hold_s : COORD_HOLD_S;
	if (hold_off()) return -1;
	struct timespec t0, now;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	held_note(c, "held invocation_id=%s: its effect ran, the store does not answer (%s); its outcome is written "
	          "when it does", cs->invocation_id, err->msg);
	world_pause("coord.held");
	for (long tries = 1;; tries++) {
		struct timespec nap = { 0, 250 * 1000000L };
		while (nanosleep(&nap, &nap) < 0 && errno == EINTR) {}
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - t0.tv_sec >= hold_s) {
			held_note(c, "held invocation_id=%s: given up after %d s (%ld tries); its intents stay open: worldd "
			          "journal --indeterminate", cs->invocation_id, hold_s, tries);
			size_t l = strlen(err->msg);
			snprintf(err->msg + l, sizeof err->msg - l, " (its effect ran; its outcome was held %d s and not written)",
			         hold_s);
			cs->held_gave_up = 1;
			return -1;
		}
		struct world_journal_row jr;
		struct world_err fe = { 0, "" };
		pthread_mutex_lock(&c->store_lock);
		int found = world_journal_find(c->cfg.store, "invocation", cs->invocation_id, &jr, &fe);
		int rc = -1;
		if (found == 0 && strcmp(jr.status, "committed") == 0) {
			rc = replay_committed(c, &jr, cs->input_ref, res, err);
			res->replayed = 0; /* its own commit, whose answer was lost */
		}
		pthread_mutex_unlock(&c->store_lock);
		if (found == 0 && strcmp(jr.status, "committed") == 0) {
			if (rc == 0)
				held_note(c, "held invocation_id=%s: had committed (entry %lld); answered from the journal",
				          cs->invocation_id, res->entry_index);
			return rc;
		}
		if (found < 0 && fe.code == WX_UNAVAILABLE) continue;
		rc = commit_call(cs, output, res, err);
		if (rc == 0) {
			held_note(c, "held invocation_id=%s: outcome written (entry %lld) after %ld tries", cs->invocation_id,
			          res->entry_index, tries);
			return 0;
		}
		if (err->code != WX_UNAVAILABLE) return rc;
	}
}

int coord_call(struct coordinator *c, const struct coord_call *call, struct coord_result *res, struct world_err *err)
{
	memset(res, 0, sizeof *res);
	struct timespec t0, t1, t2;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	const struct coord_session *s = call->session;
	char task[129];
	if (call->task_id) {
		if (!coord_task_id_valid(call->task_id))
			return werr(err, WX_BAD_INPUT, "task id \"%.140s\": must match [A-Za-z0-9._-]{1,128}", call->task_id);
		snprintf(task, sizeof task, "%s", call->task_id);
	} else {
		unsigned char r[8];
		if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r)
			return werr(err, WX_IO, "task id: getrandom: %s", strerror(errno));
		for (int i = 0; i < 8; i++) snprintf(task + 2 * i, 3, "%02x", r[i]);
	}
	snprintf(res->invocation_id, sizeof res->invocation_id, "%s:%s:%s", call->channel ? call->channel : "cli",
	         s->episode, task);
	world_pause("coord.session");
	unsigned long long sess_gen = 0, mark = 0;
	if (session_live(c, s, &sess_gen, &mark, err) < 0) return -1;
	if (call->args_len > ARGS_MAX)
		return werr(err, WX_BAD_INPUT, "arguments are %zu bytes, over the 1 MiB cap", call->args_len);
	json_t *args = world_json_parse(call->args, call->args_len, err);
	if (!args) return werr_prefix(err, "arguments");
	if (!json_is_object(args)) {
		json_decref(args);
		return werr(err, WX_BAD_INPUT, "arguments must be a JSON object");
	}
	struct call_state cs = { .c = c, .call = call, .invocation_id = res->invocation_id, .sess_gen = sess_gen };
	size_t in_len;
	char *input = call->inputs ? confirm_input(args, call->inputs, &in_len, err) : world_canon_json(args, &in_len, err);
	json_t *reg = NULL;
	int rc = -1, inflight = 0, effectful = 0;
	struct sup_result sr = { 0 };
	json_t *output = NULL;
	if (!input) goto out;
	cs.input = input;
	cs.input_len = in_len;
	if (world_hash_ref(input, in_len, cs.input_ref, err) < 0) goto out;

	pthread_mutex_lock(&c->store_lock);
	int lrc = registry_current(c, mark, &reg, err); /* as the call's start saw the store */
	const json_t *d = lrc == 0 && reg ? registry_find(reg, call->skill_id) : NULL;
	int vis = 0;
	if (d && catalog_entry_visible(c->cfg.store, s, d, (long long)time(NULL), &vis, err) < 0) lrc = -1;
	pthread_mutex_unlock(&c->store_lock);
	if (lrc < 0) goto out;
	if (!d) { werr(err, WX_REFUSED, "unknown skill \"%s\"", call->skill_id); goto out; }
	if (!vis) { werr(err, WX_REFUSED, "skill \"%s\" is not visible to this session (grants do not satisfy its access)", call->skill_id); goto out; }
	if (json_object_get(d, "inputRequests") && !call->inputs) {
		werr(err, WX_REFUSED, "skill \"%s\" asks its caller for input before it runs (inputRequests); call it over MCP "
		     "2026-07-28, whose tools/call answers input_required", call->skill_id);
		goto out;
	}

	/* Exactly once per task id: claim the id first (a call with the same id
	 * in flight is waited for), THEN look for a committed outcome, so the
	 * check and the claim cannot be split by another call of the same id. */
	if (inflight_add(c, res->invocation_id, err) < 0) goto out;
	inflight = 1;
	world_pause("coord.claimed");
	struct world_journal_row jr;
	struct world_err fe = { 0 };
	pthread_mutex_lock(&c->store_lock);
	/* A task id this call drew itself (64 random bits) names no earlier
	 * call: nothing to look up (the journal's unique committed outcome
	 * still refuses a second commit of one id, see below). */
	int found = call->task_id ? world_journal_find(c->cfg.store, "invocation", res->invocation_id, &jr, &fe)
	                          : (werr(&fe, WX_NOT_FOUND, "task id %s: drawn for this call", task), -1);
	if (call->once && found == 0) {
		pthread_mutex_unlock(&c->store_lock);
		werr(err, WX_CONFLICT, "requestState already used: its call %s has run (journal: %s); a state runs once",
		     res->invocation_id, jr.status[0] ? jr.status : "indeterminate");
		goto out;
	}
	if (found == 0 && strcmp(jr.status, "committed") == 0) {
		rc = replay_committed(c, &jr, cs.input_ref, res, err);
		pthread_mutex_unlock(&c->store_lock);
		if (rc == 0) {
			progress(call, "admitted", "%s: task id already committed", res->invocation_id);
			progress(call, "commit", "replayed entry %lld", res->entry_index);
		}
		goto out;
	}
	pthread_mutex_unlock(&c->store_lock);
	if (found < 0 && fe.code != WX_NOT_FOUND) { *err = fe; goto out; }
	if (found == 0 && jr.status[0] == 0) {
		werr(err, WX_CONFLICT, "task id of %s has an indeterminate effect (see worldd journal --indeterminate); not re-run",
		     res->invocation_id);
		goto out;
	}
	cs.desc = d;
	json_t *declared = json_object_get(d, "declaredEffects");
	size_t i;
	json_t *de;
	json_array_foreach(declared, i, de) {
		const char *en = json_string_value(json_object_get(de, "effect"));
		if (!en || !broker_handler_find(c->handlers, en)) {
			werr(err, WX_REFUSED, "skill \"%s\" declares effect %s, which no handler here serves", call->skill_id,
			     en ? en : "(unnamed)");
			goto out;
		}
	}
	/* The caller's arguments against the published input schema, before
	 * anything runs (docs/publishing.md: the subset and its messages). */
	json_t *schema = json_object_get(d, "inputSchema");
	if (schema) {
		struct world_err se;
		if (jschema_validate(schema, args, &se) < 0) {
			werr(err, WX_REFUSED, "arguments of %s do not match its input schema: %s", call->skill_id, se.msg);
			goto out;
		}
	}
	if (quota_check(c, s, in_len, err) < 0) goto out;
	if (call->declined) {
		struct world_err de = { 0, "" };
		if (record_cancel(&cs, &de) < 0) werr(err, WX_REFUSED, "%s; nothing ran (its journal outcome was not written: %.300s)", call->declined, de.msg);
		else werr(err, WX_REFUSED, "%s; nothing ran (journal: cancelled)", call->declined);
		goto out;
	}
	const char *interp = json_string_value(json_object_get(d, "interpreter"));
	const char *fn = json_string_value(json_object_get(d, "transitionFn"));
	if (!interp || !fn) { werr(err, WX_INTEGRITY, "registry descriptor %s lacks interpreter/transitionFn", call->skill_id); goto out; }
	struct supervisor *sup = interp_sup(c, interp, err);
	if (!sup) goto out;
	char *src = NULL;
	size_t src_len = 0;
	pthread_mutex_lock(&c->store_lock);
	int grc = source_get(c, fn, &src, &src_len, err);
	pthread_mutex_unlock(&c->store_lock);
	if (grc < 0) { werr_prefix(err, "transition source of %s", call->skill_id); goto out; }
	effectful = json_array_size(declared) > 0;
	progress(call, "admitted", "%s admitted: %s", res->invocation_id, effectful ? "effectful" : "pure");
	if (effectful)
		grc = sup_run_effectful_cancellable(sup, src, src_len, input, in_len, broker_cb, &cs, call->cancel, &sr, err);
	else
		grc = sup_run_pure_cancellable(sup, src, src_len, input, in_len, call->cancel, &sr, err);
	free(src);
	res->capsule_ms = sr.elapsed_ms - cs.broker_ms;
	res->broker_ms = cs.broker_ms;
	if (grc < 0 && err && err->code == WX_DENIED_SYSCALL && sr.denial.syscall[0]) {
		record_denial(&cs, &sr.denial, err, res->denial_ref);
		goto out;
	}
	if (grc < 0 && err && err->code == WX_CANCELLED) {
		cancelled(&cs, err);
		goto out;
	}
	if (grc < 0) goto failed;
	output = effectful ? effectful_output(&cs, &sr, err) : world_json_parse(sr.output, sr.output_len, err);
	if (!output) goto failed;
	if (!json_is_object(output)) { werr(err, WX_NOT_OBJECT, "transition output is not a JSON object"); goto failed; }
	if (json_object_get(output, "world")) {
		werr(err, WX_PLAN_LAW, "transition output has the reserved member \"world\"");
		goto failed;
	}
	progress(call, "finish", "%s", effectful && !sr.finished ? "the plan's result is the output" : "the transition's output is in");
	clock_gettime(CLOCK_MONOTONIC, &t1);
	world_pause("coord.before_commit");
	if (sup_cancel_fired(call->cancel)) {
		werr(err, WX_CANCELLED, "call cancelled after its output was in, before its commit; nothing committed");
		cancelled(&cs, err);
		goto out;
	}
	rc = commit_call(&cs, output, res, err);
	if (rc < 0 && err && err->code == WX_UNAVAILABLE && cs.have_effect) rc = hold_commit(&cs, output, res, err);
	clock_gettime(CLOCK_MONOTONIC, &t2);
	res->commit_ms = ms_between(&t1, &t2);
	if (rc == 0) {
		progress(call, "commit", "committed entry %lld", res->entry_index);
		goto out;
	}
	/* Another writer of the store committed this task id first (the
	 * journal's unique committed outcome refused ours): answer with its
	 * result, as a retry would get. Only a pure call can get here: an
	 * effectful one is refused before its effect (broker/effect.c). */
	if (err && err->code == WX_CONFLICT && !cs.have_effect) {
		struct world_err ce = *err;
		pthread_mutex_lock(&c->store_lock);
		found = world_journal_find(c->cfg.store, "invocation", res->invocation_id, &jr, &fe);
		if (found == 0 && strcmp(jr.status, "committed") == 0) rc = replay_committed(c, &jr, cs.input_ref, res, err);
		pthread_mutex_unlock(&c->store_lock);
		if (rc == 0) goto out;
		if (found != 0 || strcmp(jr.status, "committed") != 0) *err = ce;
	}
failed:
	record_failure(&cs);
out:
	if (inflight) inflight_del(c, res->invocation_id);
	if (cs.have_effect) broker_effect_out_free(&cs.eff);
	free(cs.plan);
	json_decref(cs.plan_result);
	json_decref(output);
	sup_result_free(&sr);
	json_decref(reg);
	json_decref(args);
	free(input);
	clock_gettime(CLOCK_MONOTONIC, &t2);
	res->elapsed_ms = ms_between(&t0, &t2);
	return rc;
}

void coord_result_free(struct coord_result *r)
{
	free(r->output);
	r->output = NULL;
}

const char *coord_error_class(int code)
{
	switch (code) {
	case WX_USAGE: case WX_BAD_INPUT: case WX_REFUSED: return "BadRequest";
	case WX_NOT_FOUND: return "NotFound";
	case WX_SESSION: return "SessionExpired";
	case WX_CONFLICT: return "HeadConflict";
	case WX_DEADLINE: return "Timeout";
	case WX_CAPACITY: return "Capacity";
	case WX_UNAVAILABLE: return "StoreUnavailable";
	case WX_QUOTA: return "QuotaExceeded";
	case WX_CANCELLED: return "Cancelled";
	case WX_OUTPUT_CAP: return "PayloadTooLarge";
	case WX_PLAN_LAW: return "PlanLaw";
	case WX_NOT_OBJECT: return "NotAnObject";
	case WX_DENIED_SYSCALL: return "SyscallDenied";
	case WX_INTERP: return "InterpreterFailed";
	case WX_SETUP: return "CapsuleSetup";
	case WX_PROTOCOL: return "Protocol";
	case WX_HASH_MISMATCH: return "HashMismatch";
	default: return "Internal";
	}
}
