/* tests/broker/test_visibility.c: which transitions, prompts and
 * resources a session sees (docs/broker.md "Grants and decisions",
 * docs/design.md §5.1; docs/daemon.md "Agent card" for the public view), at
 * the broker's level over a real store: broker_visible (the rule for one
 * access triple) and catalog_visible (coordinator/catalog.h: the rule
 * applied to a registry's descriptors, called directly, no coordinator).
 *
 * A descriptor whose access is null is visible to every session; one with
 * an access triple is visible when the session's grants allow that triple:
 * effect name and scope exact, live (now < expires_at), its cost within
 * what the episode has left (a cost of 0 always is). Two tenants with the
 * same grants see the same until one spends its budget; the public view
 * (the session the agent card uses without a credential: no grants,
 * expired) sees only the descriptors that need no grant.
 *
 * How each rule was checked to fail when removed: a scratch copy of
 * broker/grants.c or coordinator/catalog.c, mutated as below, linked ahead
 * of libworld.a into this test (the tree untouched); failed assertions:
 *   cost 0: exact effect name   grants.c visible: name compare dropped   3
 *   cost 0: exact scope         grants.c visible: scope compare dropped  2
 *   cost 0: live                grants.c visible: expiry dropped         2
 *   cost > 0: the decision      grants.c visible: always visible        12
 *   cost > 0: spending counted  grants.c decide: remaining = budget      3
 *   access applies at all       catalog.c: access never looked at       12
 *   a malformed access hides    catalog.c: vis = 0 dropped               8
 * MCP tools/list and the agent card list transitions through
 * coord_visible (coordinator/coordinator.c), which applies the same rule
 * through its own copy of catalog_visible's loop; that copy is not covered
 * here (it needs a coordinator). */
#include "coordinator/catalog.h"
#include "tests/broker/broker_fixture.h"

static int vis(const struct broker_session *s, long long now, const char *effect, const char *scope, long long cost)
{
	int v = -1;
	struct world_err e = { 0 };
	if (broker_visible(F.st, s->episode, s->grants, s->ngrants, s->expires_at, now, effect, scope, cost, &v, &e) < 0)
		bail("visible: %s", e.msg);
	return v;
}

static void test_triple(void)
{
	char ca[65], cb[65];
	struct broker_session a, b;
	const char *const g[] = { "Secret.Read=vault:0", "Net.Get=http://x:80:2", NULL };
	bfix_session("vis-a", g, 600, ca, &a);
	bfix_session("vis-b", g, 600, cb, &b);
	long long now = (long long)time(NULL);
	is_int(vis(&a, now, "Secret.Read", "vault", 0), 1, "a granted triple of cost 0: visible");
	is_int(vis(&a, now, "Secret.Read", "vault2", 0), 0, "another scope: hidden");
	is_int(vis(&a, now, "Secret.Read", "vaul", 0), 0, "a prefix of the scope: hidden");
	is_int(vis(&a, now, "Secret.Write", "vault", 0), 0, "another effect: hidden");
	is_int(vis(&a, now, "Secret", "vault", 0), 0, "a prefix of the effect: hidden");
	is_int(vis(&a, now, "secret.read", "vault", 0), 0, "the effect in other case: hidden");
	is_int(vis(&a, a.expires_at - 1, "Secret.Read", "vault", 0), 1, "one second before expiry: visible");
	is_int(vis(&a, a.expires_at, "Secret.Read", "vault", 0), 0, "at expires_at: hidden");
	is_int(vis(&a, now, "Net.Get", "http://x:80", 2), 1, "cost 2 of a budget of 2: visible");
	is_int(vis(&a, now, "Net.Get", "http://x:80", 3), 0, "cost 3 of a budget of 2: hidden");
	is_int(vis(&a, now, "Net.Get", "http://x:8080", 1), 0, "cost 1 in a neighbour scope: hidden");
	is_int(vis(&a, a.expires_at, "Net.Get", "http://x:80", 1), 0, "cost 1 at expires_at: hidden");
	is_int(vis(&a, now, "Net.Get", "http://x:80", -1), 0, "a negative cost: hidden");

	/* tenant a spends its budget; b, with the same grants, does not */
	is_int(bfix_run(&a, "Net.Get", "http://x:80", 2), BROKER_EFFECT_FAILED,
	       "tenant a spends 2 units (no Net.Get handler here: failed, and charged)");
	is_int(vis(&a, now, "Net.Get", "http://x:80", 1), 0, "tenant a: a cost-1 access is now hidden");
	is_int(vis(&a, now, "Net.Get", "http://x:80", 0), 1, "tenant a: a cost-0 access stays visible");
	is_int(vis(&b, now, "Net.Get", "http://x:80", 1), 1, "tenant b: the cost-1 access is still visible");
	is_int(vis(&b, now, "Net.Get", "http://x:80", 2), 1, "tenant b: its whole budget is left");
	broker_session_free(&a);
	broker_session_free(&b);
}

static const char *const registry_text =
	"{\"transitions\":["
	" {\"id\":\"open\",\"access\":null},"
	" {\"id\":\"noaccess\"},"
	" {\"id\":\"secret\",\"access\":{\"cost\":0,\"effect\":\"Secret.Read\",\"scope\":\"vault\"}},"
	" {\"id\":\"paid\",\"access\":{\"cost\":1,\"effect\":\"Net.Get\",\"scope\":\"http://x:80\"}},"
	" {\"id\":\"other\",\"access\":{\"cost\":0,\"effect\":\"Other.Read\",\"scope\":\"o\"}},"
	" {\"id\":\"broken\",\"access\":{\"cost\":0,\"effect\":\"Secret.Read\"}}],"
	"\"prompts\":["
	" {\"name\":\"p-open\",\"access\":null,\"messages\":[]},"
	" {\"name\":\"p-secret\",\"access\":{\"cost\":0,\"effect\":\"Secret.Read\",\"scope\":\"vault\"},\"messages\":[]}],"
	"\"resources\":["
	" {\"uri\":\"r:open\",\"access\":null},"
	" {\"uri\":\"r:paid\",\"access\":{\"cost\":1,\"effect\":\"Net.Get\",\"scope\":\"http://x:80\"}}]}";

/* The ids (names, uris) of reg's member visible to s, joined by ','. */
static const char *seen(const struct broker_session *s, const json_t *reg, const char *member)
{
	static char buf[8][256];
	static int k;
	char *b = buf[k++ % 8];
	b[0] = 0;
	json_t *out = NULL;
	struct world_err e = { 0 };
	if (catalog_visible(F.st, s, reg, member, &out, &e) < 0) bail("catalog_visible: %s", e.msg);
	size_t i;
	json_t *d;
	json_array_foreach(out, i, d) {
		const char *id = json_string_value(json_object_get(d, "id"));
		if (!id) id = json_string_value(json_object_get(d, "name"));
		if (!id) id = json_string_value(json_object_get(d, "uri"));
		size_t n = strlen(b);
		snprintf(b + n, 256 - n, "%s%s", n ? "," : "", id ? id : "?");
	}
	json_decref(out);
	return b;
}

static void test_catalog(void)
{
	json_t *reg = json_loads(registry_text, 0, NULL);
	if (!reg) bail("registry fixture");
	char ca[65], cb[65], cc[65];
	struct broker_session a, b, c;
	const char *const ga[] = { "Secret.Read=vault:0", "Net.Get=http://x:80:1", NULL };
	const char *const gc[] = { "Other.Read=o:0", NULL };
	bfix_session("cat-a", ga, 600, ca, &a);
	bfix_session("cat-b", ga, 600, cb, &b);
	bfix_session("cat-c", gc, 600, cc, &c);
	/* the public view, as the agent card builds it without a credential */
	struct broker_session pub;
	memset(&pub, 0, sizeof pub);
	pub.expires_at = 1;
	snprintf(pub.episode, sizeof pub.episode, "%s", "-");

	is_str(seen(&a, reg, "transitions"), "open,noaccess,secret,paid", "tenant a sees the open ones and what its grants allow");
	is_str(seen(&b, reg, "transitions"), "open,noaccess,secret,paid", "tenant b, with the same grants, the same");
	is_str(seen(&c, reg, "transitions"), "open,noaccess,other", "tenant c, with another grant, its own");
	is_str(seen(&pub, reg, "transitions"), "open,noaccess", "the public view: only what needs no grant");
	is_str(seen(&a, reg, "prompts"), "p-open,p-secret", "prompts: the same rule (tenant a)");
	is_str(seen(&c, reg, "prompts"), "p-open", "prompts: the same rule (tenant c)");
	is_str(seen(&pub, reg, "prompts"), "p-open", "prompts: the public view");
	is_str(seen(&a, reg, "resources"), "r:open,r:paid", "resources: the same rule (tenant a)");
	is_str(seen(&pub, reg, "resources"), "r:open", "resources: the public view");

	/* tenant a spends its one unit of Net.Get: paid ones leave its view only */
	is_int(bfix_run(&a, "Net.Get", "http://x:80", 1), BROKER_EFFECT_FAILED, "tenant a spends its unit of Net.Get");
	is_str(seen(&a, reg, "transitions"), "open,noaccess,secret", "tenant a no longer sees the paid transition");
	is_str(seen(&a, reg, "resources"), "r:open", "... nor the paid resource");
	is_str(seen(&b, reg, "transitions"), "open,noaccess,secret,paid", "tenant b still does");
	is_str(seen(&pub, reg, "transitions"), "open,noaccess", "the public view is unchanged");

	/* an expired session's grants show nothing that needs one */
	struct broker_session late = a;
	late.expires_at = (long long)time(NULL) - 1;
	is_str(seen(&late, reg, "transitions"), "open,noaccess", "past its expiry a session's grants show nothing");
	is_str(seen(&a, NULL, "transitions"), "", "no registry: nothing");
	json_decref(reg);
	broker_session_free(&a);
	broker_session_free(&b);
	broker_session_free(&c);
}

int main(void)
{
	bfix_open("test_visibility");
	test_triple();
	test_catalog();
	bfix_close();
	return done_testing();
}
