/* tests/broker/broker_fixture.h: what the broker-level rule tests
 * (test_grants, test_visibility, test_plan_laws, test_record) share: a real
 * store in a fresh temporary directory, sessions minted through
 * broker/session.h, test effect handlers (Test.Echo answers, Test.Fail
 * breaks, Test.Big answers over the output cap, Test.Bare answers no
 * object, Test.Probe looks at the store while it runs), and one effect run through broker_effect_run with a unique
 * invocation id. Every helper bails on a setup failure, so an assertion
 * only ever judges the rule under test. */
#ifndef WORLD_TESTS_BROKER_FIXTURE_H
#define WORLD_TESTS_BROKER_FIXTURE_H
#include "broker/effect.h"
#include "broker/grants.h"
#include "broker/session.h"
#include "common/canon.h"
#include "common/ref.h"
#include "store/store.h"
#include "tests/tap.h"
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct bfix {
	char dir[512], db[600];
	struct world_store *st;
	pthread_mutex_t lock;
	int calls;   /* handler runs, all test handlers */
	int seq;     /* invocation ids */
	/* what Test.Probe saw of its own effect while it ran */
	int probe_found;        /* its effect intent: 0 found, -1 not */
	char probe_status[16];  /* that intent's outcome ("" = none yet) */
	int probe_in_txn;       /* a store transaction was open */
	int probe_request;      /* its request object stored (1) */
};
static struct bfix F = { .lock = PTHREAD_MUTEX_INITIALIZER };

static inline void bfix_open(const char *name)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(F.dir, sizeof F.dir, "%s/%s.XXXXXX", tmp ? tmp : "/tmp", name);
	if (!mkdtemp(F.dir)) bail("mkdtemp %s failed", F.dir);
	snprintf(F.db, sizeof F.db, "%s/world.db", F.dir);
	struct world_err e = { 0 };
	if (world_store_open(F.db, WORLD_STORE_WRITER, &F.st, &e) < 0) bail("open store %s: %s", F.db, e.msg);
}

static inline void bfix_close(void)
{
	world_store_close(F.st);
	F.st = NULL;
	char cmd[700];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", F.dir);
	if (system(cmd) != 0) diag("cleanup of %s failed", F.dir);
}

static int h_echo(const struct broker_handler_ctx *ctx, const json_t *payload, json_t **out, struct world_err *err)
{
	(void)ctx; (void)err;
	F.calls++;
	*out = json_pack("{s:b,s:O}", "ok", 1, "payload", payload);
	return 0;
}
static int h_fail(const struct broker_handler_ctx *ctx, const json_t *payload, json_t **out, struct world_err *err)
{
	(void)ctx; (void)payload; (void)out;
	F.calls++;
	return werr(err, WX_IO, "test handler: disk on fire");
}
static int h_big(const struct broker_handler_ctx *ctx, const json_t *payload, json_t **out, struct world_err *err)
{
	(void)payload; (void)err;
	F.calls++;
	size_t n = ctx->output_max + 1;
	char *s = malloc(n + 1);
	if (!s) bail("oom");
	memset(s, 'x', n);
	s[n] = 0;
	*out = json_pack("{s:s}", "text", s);
	free(s);
	return 0;
}
static int h_bare(const struct broker_handler_ctx *ctx, const json_t *payload, json_t **out, struct world_err *err)
{
	(void)ctx; (void)payload; (void)err;
	F.calls++;
	*out = json_string("not an object");
	return 0;
}
/* The invocation id of the latest bfix_effect of episode. */
static inline const char *bfix_inv(const char *episode)
{
	static char inv[128];
	snprintf(inv, sizeof inv, "cli:%s:t%d", episode, F.seq);
	return inv;
}
static int h_probe(const struct broker_handler_ctx *ctx, const json_t *payload, json_t **out, struct world_err *err)
{
	(void)payload; (void)err;
	F.calls++;
	char subject[200];
	snprintf(subject, sizeof subject, "%s#e1", bfix_inv(ctx->episode));
	struct world_journal_row row;
	struct world_err e = { 0 };
	F.probe_found = world_journal_find(F.st, "effect", subject, &row, &e);
	snprintf(F.probe_status, sizeof F.probe_status, "%s", F.probe_found == 0 ? row.status : "-");
	F.probe_in_txn = world_store_in_txn(F.st);
	F.probe_request = F.probe_found == 0 && row.intent_ref[0] && world_object_exists(F.st, row.intent_ref, &e) == 1;
	*out = json_pack("{s:b}", "ok", 1);
	return 0;
}
static const struct broker_handler_entry bfix_handlers[] = {
	{ "Test.Echo", h_echo }, { "Test.Fail", h_fail }, { "Test.Big", h_big }, { "Test.Bare", h_bare },
	{ "Test.Probe", h_probe }, { NULL, NULL },
};

/* Parse grant texts (NULL-terminated) into g (room for 8); bails on a bad one. */
static inline size_t bfix_grants(const char *const *texts, struct broker_grant *g)
{
	size_t n = 0;
	struct world_err e = { 0 };
	for (; texts[n]; n++) {
		if (n == 8) bail("more than 8 grants");
		if (broker_grant_parse(texts[n], &g[n], &e) < 0) bail("grant %s: %s", texts[n], e.msg);
	}
	return n;
}

/* Mint a session of episode with the grants and open it at now. */
static inline void bfix_session(const char *episode, const char *const *grants, long long ttl, char cred[65],
                         struct broker_session *s)
{
	struct broker_grant g[8];
	size_t n = bfix_grants(grants, g);
	char id[65];
	long long exp;
	struct world_err e = { 0 };
	if (broker_session_mint(F.st, episode, g, n, ttl, cred, id, &exp, &e) < 0) bail("mint %s: %s", episode, e.msg);
	if (s && broker_session_open(F.st, cred, (long long)time(NULL), s, &e) < 0) bail("open %s: %s", episode, e.msg);
}

/* One effect {id, effect, scope, cost, payload} through the pipeline under a
 * fresh invocation id; when write, its pending objects and outcome written
 * in a transaction of their own (as the call's commit would), else left
 * unwritten (a crash between the intent and the outcome). Returns
 * broker_effect_run's status (enum broker_effect_status) or -1 with err;
 * *keep gets the output when given (the caller frees it). */
static inline int bfix_effect(const struct broker_session *s, long long now, const char *effect, const char *scope,
                       long long cost, int write, struct broker_effect_out *keep, struct world_err *err)
{
	char inv[128];
	++F.seq;
	snprintf(inv, sizeof inv, "%s", bfix_inv(s->episode));
	static const char input[] = "{}";
	char in_ref[WORLD_REF_SIZE];
	struct world_err e = { 0 };
	if (world_hash_ref(input, 2, in_ref, &e) < 0) bail("hash: %s", e.msg);
	json_t *eff = json_pack("{s:s,s:s,s:s,s:I,s:{s:i}}", "id", "e1", "effect", effect, "scope", scope, "cost",
	                        (json_int_t)cost, "payload", "n", F.seq);
	struct broker_effect_req rq = { .st = F.st, .store_lock = &F.lock, .session = s, .now = now,
		                        .invocation_id = inv, .input_ref = in_ref, .input = input, .input_len = 2,
		                        .effect = eff, .handlers = bfix_handlers };
	rq.hctx.episode = s->episode;
	rq.hctx.output_max = 4096;
	rq.hctx.wall_ms = BROKER_HANDLER_WALL_MS;
	rq.hctx.file_max = BROKER_FILE_MAX;
	struct broker_effect_out out;
	int rc = broker_effect_run(&rq, &out, err);
	json_decref(eff);
	if (rc < 0) return -1;
	pthread_mutex_lock(&F.lock);
	if (write && (world_store_begin(F.st, &e) < 0 || broker_effect_write(F.st, &out, &e) < 0 ||
	              world_store_commit(F.st, &e) < 0))
		bail("write effect of %s: %s", inv, e.msg);
	pthread_mutex_unlock(&F.lock);
	int st = (int)out.status;
	if (keep) *keep = out;
	else broker_effect_out_free(&out);
	return st;
}

static inline int bfix_run(const struct broker_session *s, const char *effect, const char *scope, long long cost)
{
	struct world_err e = { 0 };
	int rc = bfix_effect(s, (long long)time(NULL), effect, scope, cost, 1, NULL, &e);
	if (rc < 0) bail("effect run %s/%s: %s", effect, scope, e.msg);
	return rc;
}

static inline long long bfix_spent(const char *episode, const char *effect, const char *scope)
{
	long long spent = -1;
	struct world_err e = { 0 };
	if (world_journal_spent(F.st, episode, effect, scope, &spent, &e) < 0) bail("spent: %s", e.msg);
	return spent;
}

/* Decide at now with the session's grants and expiry; returns the label. */
static inline enum broker_label bfix_decide_at(const struct broker_session *s, long long now, const char *effect,
                                        const char *scope, long long cost, struct broker_decision *d)
{
	struct broker_decision dd;
	struct world_err e = { 0 };
	if (!d) d = &dd;
	if (broker_decide(F.st, s->episode, s->grants, s->ngrants, s->expires_at, now, effect, scope, cost, d, &e) < 0)
		bail("decide: %s", e.msg);
	return d->label;
}
#endif
