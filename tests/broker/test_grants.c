/* tests/broker/test_grants.c: the broker's grant rules at its own level
 * (broker/grants.h, broker/session.h, broker_effect_run over a real store;
 * docs/broker.md "Sessions", "Grants and decisions", "Budgets").
 *
 * A grant admits exactly the (effect, scope) it names and no more than its
 * budget; budgets belong to the episode (every session of it, revoked or
 * not), not to a session, and one episode's spending never touches
 * another's; a session is live while now < expires_at; a revoked credential
 * opens no session from the next check on. Each refusal has its control: the
 * same request one step inside the rule is allowed.
 *
 * How each rule was checked to fail when removed: a scratch copy of the
 * broker file, mutated as below, linked ahead of libworld.a into this test
 * (the tree untouched); the number of assertions that then failed:
 *   exact effect name   grants.c decide: effect compare dropped       11
 *   exact scope         grants.c decide: scope compare dropped        11
 *   expiry boundary     grants.c decide: now <= expires_at             5
 *                       session.c open: now <= expires_at              1
 *   budget = grant - spent  grants.c decide: remaining = budget       11
 *   best-ranked denial  grants.c decide: l < out->label                5
 *   stored grants re-checked  grants.c from_json: no 2^53 cap          1
 *   mint bounds         session.c mint: ttl upper bound dropped        1
 * Revocation is the store's delete (world_session_revoke) read back by
 * broker_session_open's lookup: no broker line to remove; its assertions
 * each carry a control (the episode's other session, another episode). */
#include "tests/broker/broker_fixture.h"

static void test_grant_form(void)
{
	struct broker_grant g;
	struct world_err e = { 0 };
	ok(broker_grant_parse("Net.Get=http://x:80:5", &g, &e) == 0 && strcmp(g.effect, "Net.Get") == 0 &&
	   strcmp(g.scope, "http://x:80") == 0 && g.budget == 5, "split at the first = and the last :");
	ok(broker_grant_parse("A.B=a=b:1", &g, &e) < 0 && e.code == WX_USAGE && strstr(e.msg, "scope \"a=b\""),
	   "a second = belongs to the scope, where it is refused: %s", e.msg);
	ok(broker_grant_parse("Workspace.Read=worktree:0", &g, &e) == 0 && g.budget == 0, "budget 0 is a grant");
	ok(broker_grant_parse("A.B=s:9007199254740992", &g, &e) == 0 && g.budget == BROKER_BUDGET_MAX,
	   "budget 2^53 accepted");
	char scope128[200], scope129[200];
	memset(scope128, 'a', 128);
	scope128[128] = 0;
	memset(scope129, 'a', 129);
	scope129[129] = 0;
	char t[300];
	snprintf(t, sizeof t, "A.B=%s:1", scope128);
	ok(broker_grant_parse(t, &g, &e) == 0, "scope of 128 bytes accepted");
	snprintf(t, sizeof t, "A.B=%s:1", scope129);
	ok(broker_grant_parse(t, &g, &e) < 0 && e.code == WX_USAGE, "scope of 129 bytes refused: %s", e.msg);
	static const char *const bad[] = { "A.=s:1", ".A=s:1", "1A=s:1", "A.1b=s:1", "A-B=s:1", "A.B=s:",
		                           "A.B=s:+1", "A.B=s: 1", "A.B=s t:1", "A.B=s*:1", "A.B=s:1x", NULL };
	for (int i = 0; bad[i]; i++) {
		int rc = broker_grant_parse(bad[i], &g, &e);
		char want[64];
		snprintf(want, sizeof want, "grant \"%s\"", bad[i]);
		ok(rc < 0 && e.code == WX_USAGE && strstr(e.msg, want), "bad grant %s refused naming it: %s", bad[i], e.msg);
	}

	/* The stored form is read back through the same checks: a row edited by
	 * hand cannot widen a grant. */
	struct broker_grant in[8];
	const char *const texts[] = { "Test.Echo=s:3", "Workspace.Read=worktree:9", NULL };
	bfix_grants(texts, in);
	json_t *j = broker_grants_to_json(in, 2);
	struct broker_grant *back = NULL;
	size_t n = 0;
	ok(j && broker_grants_from_json(j, &back, &n, &e) == 0 && n == 2 && strcmp(back[1].effect, "Workspace.Read") == 0 &&
	   strcmp(back[1].scope, "worktree") == 0 && back[1].budget == 9, "grants survive their JSON form");
	free(back);
	json_decref(j);
	static const char *const forged[] = {
		"[{\"effect\":\"Test.Echo\",\"scope\":\"s\",\"budget\":9007199254740993}]",
		"[{\"effect\":\"Test.Echo\",\"scope\":\"s\",\"budget\":-1}]",
		"[{\"effect\":\"Test.Echo\",\"scope\":\"s t\",\"budget\":1}]",
		"[{\"effect\":\"Test..Echo\",\"scope\":\"s\",\"budget\":1}]",
		"[{\"effect\":\"Test.Echo\",\"scope\":\"s\",\"budget\":\"1\"}]",
		"[{\"effect\":\"Test.Echo\",\"budget\":1}]",
		"{\"effect\":\"Test.Echo\",\"scope\":\"s\",\"budget\":1}",
		NULL,
	};
	for (int i = 0; forged[i]; i++) {
		json_t *fj = json_loads(forged[i], 0, NULL);
		if (!fj) bail("bad fixture %s", forged[i]);
		back = NULL;
		int rc = broker_grants_from_json(fj, &back, &n, &e);
		ok(rc < 0 && e.code == WX_INTEGRITY && back == NULL, "stored grants %s refused on read: %s", forged[i], e.msg);
		json_decref(fj);
	}
}

/* A grant admits exactly what it names: no prefix, no case folding, no
 * neighbour scope, no cost beyond what remains. */
static void test_exact(void)
{
	char cred[65];
	struct broker_session s;
	const char *const g[] = { "Workspace.Read=worktree:5", NULL };
	bfix_session("exact", g, 600, cred, &s);
	long long now = (long long)time(NULL);
	struct broker_decision d;
	is_str(broker_label_name(bfix_decide_at(&s, now, "Workspace.Read", "worktree", 1, &d)), "allowed",
	       "control: the named effect and scope are allowed");
	ok(d.grant_index == 0 && d.budget_before == 5, "... by grant 0, budget before 5 (got %d, %lld)", d.grant_index,
	   d.budget_before);
	static const char *const names[] = { "Workspace.ReadX", "Workspace", "workspace.read", "Workspace.Read.X",
		                             "Workspace.Write", NULL };
	for (int i = 0; names[i]; i++)
		is_str(broker_label_name(bfix_decide_at(&s, now, names[i], "worktree", 1, &d)), "denied:effect-name",
		       "effect %s not admitted by a Workspace.Read grant", names[i]);
	ok(d.budget_before == 0 && d.grant_index == 0, "an effect-name denial reports budget 0");
	static const char *const scopes[] = { "worktree/sub", "worktre", "Worktree", "worktree:", "", "worktree ",
		                              "*", NULL };
	for (int i = 0; scopes[i]; i++)
		is_str(broker_label_name(bfix_decide_at(&s, now, "Workspace.Read", scopes[i], 1, &d)), "denied:scope",
		       "scope \"%s\" not admitted by a worktree grant", scopes[i]);
	is_str(broker_label_name(bfix_decide_at(&s, now, "Workspace.Read", "worktree", 5, &d)), "allowed",
	       "cost = the whole budget: allowed");
	is_str(broker_label_name(bfix_decide_at(&s, now, "Workspace.Read", "worktree", 6, &d)), "denied:budget",
	       "cost one over the budget: denied:budget");
	ok(d.budget_before == 5, "... reporting the remaining 5 (got %lld)", d.budget_before);
	is_str(broker_label_name(bfix_decide_at(&s, now, "Workspace.Read", "worktree", 0, &d)), "allowed",
	       "cost 0: allowed");
	is_str(broker_label_name(bfix_decide_at(&s, now, "Workspace.Read", "worktree", -1, &d)), "denied:budget",
	       "negative cost: denied:budget (a cost never credits)");
	is_str(broker_label_name(bfix_decide_at(&s, now, "Workspace.Read", "worktree", BROKER_BUDGET_MAX, &d)),
	       "denied:budget", "cost 2^53 over a budget of 5: denied:budget");
	broker_session_free(&s);
}

/* Over several grants: the first allowed wins, else the denial that got
 * furthest, whatever the grants' order. */
static void test_ranking(void)
{
	long long now = 1000, exp = 2000;
	struct broker_grant g[8];
	struct broker_decision d;
	struct world_err e = { 0 };
	const char *const a[] = { "Test.Other=s:5", "Test.Echo=t:5", NULL };  /* effect-name, scope */
	const char *const b[] = { "Test.Echo=t:5", "Test.Other=s:5", NULL };
	const char *const c[] = { "Test.Echo=t:5", "Test.Echo=s:1", "Test.Other=s:9", NULL }; /* scope, budget */
	const char *const c2[] = { "Test.Other=s:9", "Test.Echo=s:1", "Test.Echo=t:5", NULL };
	size_t n = bfix_grants(a, g);
	broker_decide(F.st, "rank", g, n, exp, now, "Test.Echo", "s", 2, &d, &e);
	ok(d.label == BROKER_DENIED_SCOPE && d.grant_index == 1, "scope beats effect-name (grant 1 reported)");
	n = bfix_grants(b, g);
	broker_decide(F.st, "rank", g, n, exp, now, "Test.Echo", "s", 2, &d, &e);
	ok(d.label == BROKER_DENIED_SCOPE && d.grant_index == 0, "... in either order (grant 0 reported)");
	n = bfix_grants(c, g);
	broker_decide(F.st, "rank", g, n, exp, now, "Test.Echo", "s", 2, &d, &e);
	ok(d.label == BROKER_DENIED_BUDGET && d.grant_index == 1 && d.budget_before == 1,
	   "budget beats scope and effect-name, reporting that grant's remaining 1 (got %s, %d, %lld)",
	   broker_label_name(d.label), d.grant_index, d.budget_before);
	n = bfix_grants(c2, g);
	broker_decide(F.st, "rank", g, n, exp, now, "Test.Echo", "s", 2, &d, &e);
	ok(d.label == BROKER_DENIED_BUDGET && d.grant_index == 1, "... in either order");
	n = bfix_grants(c, g);
	broker_decide(F.st, "rank", g, n, now, now, "Test.Echo", "s", 2, &d, &e);
	ok(d.label == BROKER_DENIED_EXPIRED && d.budget_before == 0,
	   "expired beats scope (the budget is never looked at once expired)");
	const char *const first[] = { "Test.Echo=s:0", "Test.Echo=s:7", "Test.Echo=s:9", NULL };
	n = bfix_grants(first, g);
	broker_decide(F.st, "rank", g, n, exp, now, "Test.Echo", "s", 1, &d, &e);
	ok(d.label == BROKER_ALLOWED && d.grant_index == 1 && d.budget_before == 7,
	   "the first grant that allows wins (grant 1, budget 7; got %d, %lld)", d.grant_index, d.budget_before);
	n = bfix_grants(first, g);
	broker_decide(F.st, "rank", g, 0, exp, now, "Test.Echo", "s", 0, &d, &e);
	ok(d.label == BROKER_DENIED_EFFECT && d.grant_index == -1, "no grants at all: denied:effect-name, no grant");
}

/* Budgets through the pipeline: spent by allowed effects (succeeded or
 * failed or indeterminate), never by denials, per episode. */
static void test_budgets(void)
{
	char ca[65], ca2[65], cb[65];
	struct broker_session a, a2, b;
	const char *const g[] = { "Test.Echo=s:3", "Test.Echo=t:1", "Test.Fail=s:2", NULL };
	bfix_session("tenant-a", g, 600, ca, &a);
	bfix_session("tenant-b", g, 600, cb, &b);
	int calls0 = F.calls;
	is_int(bfix_run(&a, "Test.Echo", "s", 1), BROKER_EFFECT_OK, "1st unit of 3: ran");
	is_int(bfix_run(&a, "Test.Echo", "s", 1), BROKER_EFFECT_OK, "2nd unit of 3: ran");
	is_int(bfix_spent("tenant-a", "Test.Echo", "s"), 2, "2 spent");
	is_int(bfix_run(&a, "Test.Echo", "s", 2), BROKER_EFFECT_DENIED, "cost 2 with 1 left: denied");
	is_int(bfix_spent("tenant-a", "Test.Echo", "s"), 2, "a denial spends nothing");
	is_int(bfix_run(&a, "Test.Echo", "s", 1), BROKER_EFFECT_OK, "cost 1 with 1 left (control): ran");
	is_int(bfix_run(&a, "Test.Echo", "s", 1), BROKER_EFFECT_DENIED, "budget exhausted: denied");
	is_int(bfix_run(&a, "Test.Echo", "s", 0), BROKER_EFFECT_OK, "cost 0 still runs on an exhausted budget");
	is_int(F.calls - calls0, 4, "the handler ran for the 4 allowed effects only");
	is_int(bfix_spent("tenant-a", "Test.Echo", "s"), 3, "3 spent of 3");
	is_int(bfix_run(&a, "Test.Echo", "t", 1), BROKER_EFFECT_OK, "another scope of the episode has its own budget");

	/* a second session of the same episode: the budget is the episode's */
	bfix_session("tenant-a", g, 600, ca2, &a2);
	is_int(bfix_run(&a2, "Test.Echo", "s", 1), BROKER_EFFECT_DENIED,
	       "a new session of the episode finds the budget spent");
	/* another tenant: its own budget */
	is_int(bfix_run(&b, "Test.Echo", "s", 3), BROKER_EFFECT_OK, "another episode's budget is whole (cost 3 ran)");
	is_int(bfix_spent("tenant-b", "Test.Echo", "s"), 3, "... and charged to it");
	is_int(bfix_spent("tenant-a", "Test.Echo", "s"), 3, "... not to the first episode");
	is_int(bfix_run(&b, "Test.Echo", "s", 1), BROKER_EFFECT_DENIED, "the second tenant exhausts its own");

	/* failed effects cost */
	is_int(bfix_run(&a, "Test.Fail", "s", 1), BROKER_EFFECT_FAILED, "a breaking handler: failed");
	is_int(bfix_spent("tenant-a", "Test.Fail", "s"), 1, "a failed effect is charged");
	/* an intent with no outcome (crash between intent and outcome) costs */
	struct world_err e = { 0 };
	is_int(bfix_effect(&a, (long long)time(NULL), "Test.Fail", "s", 1, 0, NULL, &e), BROKER_EFFECT_FAILED,
	       "a second failure, its outcome never written");
	is_int(bfix_spent("tenant-a", "Test.Fail", "s"), 2, "the indeterminate effect is charged");
	is_int(bfix_run(&a, "Test.Fail", "s", 1), BROKER_EFFECT_DENIED, "and the budget of 2 is gone");

	/* revoking does not refund */
	int cnt = 0;
	if (world_session_revoke(F.st, NULL, "tenant-a", &cnt, &e) < 0) bail("revoke: %s", e.msg);
	is_int(cnt, 2, "both sessions of tenant-a revoked");
	char ca3[65];
	struct broker_session a3;
	bfix_session("tenant-a", g, 600, ca3, &a3);
	is_int(bfix_run(&a3, "Test.Echo", "s", 1), BROKER_EFFECT_DENIED, "a session minted after revocation: still spent");
	is_int(bfix_run(&a3, "Test.Echo", "t", 0), BROKER_EFFECT_OK, "control: it is live and decides");

	/* duplicate grants do not add up: each is checked against the one total */
	const char *const dup[] = { "Test.Echo=d:2", "Test.Echo=d:3", NULL };
	char cd[65];
	struct broker_session sd;
	bfix_session("dup", dup, 600, cd, &sd);
	int ran = 0;
	for (int i = 0; i < 6; i++) ran += bfix_run(&sd, "Test.Echo", "d", 1) == BROKER_EFFECT_OK;
	is_int(ran, 3, "grants of 2 and 3 on one scope admit 3 units, not 5");
	broker_session_free(&a);
	broker_session_free(&a2);
	broker_session_free(&a3);
	broker_session_free(&b);
	broker_session_free(&sd);
}

static void test_expiry(void)
{
	char cred[65], id[65];
	struct broker_grant g[8];
	const char *const gt[] = { "Test.Echo=s:5", NULL };
	bfix_grants(gt, g);
	long long exp = 0;
	struct world_err e = { 0 };
	long long t0 = (long long)time(NULL);
	ok(broker_session_mint(F.st, "exp", g, 1, 100, cred, id, &exp, &e) == 0 && exp >= t0 + 100 &&
	   exp <= (long long)time(NULL) + 100, "expires_at = mint time + ttl");
	ok(broker_credential_wellformed(cred) && strlen(id) == 64, "credential and id are 64 hex");
	char ref[WORLD_REF_SIZE];
	world_hash_ref(cred, 64, ref, &e);
	is_str(id, ref + 7, "the id is hex(sha256(credential))");

	struct broker_session s;
	ok(broker_session_open(F.st, cred, exp - 1, &s, &e) == 0, "open one second before expires_at");
	/* the pipeline's decision uses the request's clock */
	int calls0 = F.calls;
	is_int(bfix_effect(&s, exp - 1, "Test.Echo", "s", 1, 1, NULL, &e), BROKER_EFFECT_OK, "effect at expires_at - 1: ran");
	struct broker_effect_out out;
	is_int(bfix_effect(&s, exp, "Test.Echo", "s", 1, 1, &out, &e), BROKER_EFFECT_DENIED, "effect at expires_at: denied");
	ok(out.record && strstr(out.record, "\"denial\":\"denied:expired\""), "... denied:expired in its record");
	broker_effect_out_free(&out);
	is_int(F.calls - calls0, 1, "the handler did not run for the expired one");
	is_int(bfix_spent("exp", "Test.Echo", "s"), 1, "... nor was it charged");
	broker_session_free(&s);
	int rc = broker_session_open(F.st, cred, exp, &s, &e);
	ok(rc < 0 && e.code == WX_SESSION && strcmp(e.msg, "session credential has expired") == 0,
	   "open at expires_at: expired (%s)", e.msg);
	rc = broker_session_open(F.st, cred, exp + 3600, &s, &e);
	ok(rc < 0 && e.code == WX_SESSION, "open an hour later: expired");

	/* mint bounds */
	ok(broker_session_mint(F.st, "exp", g, 1, 0, cred, id, &exp, &e) < 0 && e.code == WX_USAGE, "ttl 0 refused");
	ok(broker_session_mint(F.st, "exp", g, 1, BROKER_TTL_MAX + 1, cred, id, &exp, &e) < 0 && e.code == WX_USAGE,
	   "ttl over a year refused");
	ok(broker_session_mint(F.st, "exp", g, 1, BROKER_TTL_MAX, cred, id, &exp, &e) == 0, "ttl of one year accepted");
	ok(broker_session_mint(F.st, "exp", g, 0, 60, cred, id, &exp, &e) < 0 && e.code == WX_USAGE, "no grant refused");
	ok(broker_session_mint(F.st, "Exp", g, 1, 60, cred, id, &exp, &e) < 0 && e.code == WX_USAGE,
	   "episode outside ^[a-z0-9][a-z0-9-]{0,63}$ refused");
}

static void test_revocation(void)
{
	char c1[65], c2[65], c3[65];
	struct broker_session s1, s2, s3;
	const char *const g[] = { "Test.Echo=s:5", NULL };
	bfix_session("rev-a", g, 600, c1, &s1);
	bfix_session("rev-a", g, 600, c2, &s2);
	bfix_session("rev-b", g, 600, c3, &s3);
	long long now = (long long)time(NULL);
	struct world_err e = { 0 };
	struct broker_session t;
	char hash[80];
	snprintf(hash, sizeof hash, "sha256:%s", s1.credential_id);
	int cnt = 0;
	ok(world_session_revoke(F.st, hash, NULL, &cnt, &e) == 0 && cnt == 1, "revoke one credential by its id");
	int rc = broker_session_open(F.st, c1, now, &t, &e);
	ok(rc < 0 && e.code == WX_NOT_FOUND && strcmp(e.msg, "unknown session credential") == 0,
	   "the revoked credential opens nothing on the next check (%s)", e.msg);
	struct world_session raw;
	rc = world_session_get_hash(F.st, hash, &raw, &e);
	ok(rc < 0 && e.code == WX_NOT_FOUND, "the per-call check by hash finds it gone");
	if (rc == 0) world_session_free(&raw);
	ok(broker_session_open(F.st, c2, now, &t, &e) == 0, "control: the episode's other session still opens");
	broker_session_free(&t);
	rc = world_session_revoke(F.st, hash, NULL, &cnt, &e);
	ok(rc < 0 && e.code == WX_NOT_FOUND, "revoking it again matches nothing: refused");
	ok(world_session_revoke(F.st, NULL, "rev-a", &cnt, &e) == 0 && cnt == 1, "revoke the rest of episode rev-a");
	rc = broker_session_open(F.st, c2, now, &t, &e);
	ok(rc < 0 && e.code == WX_NOT_FOUND, "its last session is gone");
	ok(broker_session_open(F.st, c3, now, &t, &e) == 0 && strcmp(t.episode, "rev-b") == 0,
	   "another episode's session is untouched");
	broker_session_free(&t);
	broker_session_free(&s1);
	broker_session_free(&s2);
	broker_session_free(&s3);
}

int main(void)
{
	bfix_open("test_grants");
	test_grant_form();
	test_exact();
	test_ranking();
	test_budgets();
	test_expiry();
	test_revocation();
	bfix_close();
	return done_testing();
}
