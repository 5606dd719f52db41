/* tests/broker/test_plan_laws.c: the plan laws of docs/broker.md "Plan
 * laws" (docs/design.md §5.2) at the broker's level: broker_plan_parse over
 * plan texts, each law with a plan it passes and plans it refuses, the
 * refusal WX_PLAN_LAW "plan law LAW: detail" naming that law; the order the
 * laws are checked in (a plan breaking two is refused by the first in the
 * docs' list); the limits (one effect, id of 16, payload of 1 MiB
 * canonical); and which effects the product's handler table serves, with
 * what the pipeline does with an effect no handler serves (a failed,
 * charged effect; the coordinator refuses such a skill before it runs).
 *
 * How each law was checked to fail when removed: a scratch copy of
 * broker/plan.c (or effect.c), mutated as below, linked ahead of
 * libworld.a into this test (the tree untouched); failed assertions:
 *   shape         only_keys accepts unknown keys (effect-shape too)  4
 *   one-effect    the count check dropped                            2
 *   effect-shape  the effect's keys unchecked                        3
 *   effect-id     id_valid not called                                7
 *                 an id of 17 accepted                               1
 *   declared      the declared search's verdict ignored              8
 *   payload       a non-object payload accepted                      4
 *                 the 1 MiB cap dropped                              1
 *   no-world      the payload's world key accepted                   2
 *                 the result's world key accepted                    2
 *   result        an effect with a non-null result accepted          2
 *                 zero effects with a non-object result accepted     4
 *   finish        finish:true without an effect accepted             1
 *   no handler    effect.c: a missing handler falls back to Test.Echo 3 */
#include "broker/plan.h"
#include "tests/broker/broker_fixture.h"

static json_t *declared;

/* Parse text against declared; rc, and err's message in why. */
static int parse(const char *text, struct broker_plan *p, char *why, size_t n)
{
	struct world_err e = { 0 };
	struct broker_plan tmp;
	if (!p) p = &tmp;
	int rc = broker_plan_parse(text, strlen(text), declared, p, &e);
	snprintf(why, n, "%s", rc < 0 ? e.msg : "");
	if (rc < 0 && e.code != WX_PLAN_LAW) snprintf(why, n, "wrong code %d: %s", e.code, e.msg);
	if (rc < 0 && p->root) snprintf(why, n, "refused but the plan was kept");
	if (p == &tmp && rc == 0) broker_plan_free(p);
	return rc;
}

/* The plan is refused by law (its message starts "plan law LAW: "). */
static void refused(const char *law, const char *text, const char *what)
{
	char why[1200], want[64];
	snprintf(want, sizeof want, "plan law %s: ", law);
	int rc = parse(text, NULL, why, sizeof why);
	ok(rc < 0 && strncmp(why, want, strlen(want)) == 0, "%s: refused by law %s (%s)", what, law, why);
}

static void passes(const char *text, const char *what)
{
	char why[1200];
	ok(parse(text, NULL, why, sizeof why) == 0, "%s: passes (%s)", what, why);
}

#define EFF(id, name, scope, cost, payload)                                                                    \
	"{\"id\":" id ",\"effect\":" name ",\"scope\":" scope ",\"cost\":" cost ",\"payload\":" payload "}"
#define PLAN(effects, finish, result)                                                                          \
	"{\"plan\":\"world/effect-plan/v1\",\"effects\":[" effects "],\"finish\":" finish ",\"result\":" result "}"
#define GOOD EFF("\"e1\"", "\"Test.Echo\"", "\"s\"", "1", "{\"a\":1}")

static void test_shape(void)
{
	struct broker_plan p;
	char why[1200];
	ok(parse(PLAN(GOOD, "true", "null"), &p, why, sizeof why) == 0 && p.effect && p.finish == 1 && !p.result &&
	   strcmp(json_string_value(json_object_get(p.effect, "id")), "e1") == 0,
	   "control: an effect plan passes, its one effect and finish kept (%s)", why);
	broker_plan_free(&p);
	ok(parse(PLAN("", "false", "{\"ok\":true}"), &p, why, sizeof why) == 0 && !p.effect && p.finish == 0 &&
	   json_is_true(json_object_get(p.result, "ok")), "control: a plan of no effect passes with its result (%s)", why);
	broker_plan_free(&p);
	passes(PLAN("", "false", "{\"ok\":false,\"refused\":\"no such file\"}"), "a plan that refuses (zero effects)");
	refused("shape", "{\"plan\":", "not JSON");
	refused("shape", "[]", "an array");
	refused("shape", "{\"plan\":\"world/effect-plan/v1\",\"effects\":[],\"result\":{}}", "finish missing");
	refused("shape", "{\"plan\":\"world/effect-plan/v1\",\"effects\":[],\"finish\":false}", "result missing");
	refused("shape", "{\"plan\":\"world/effect-plan/v1\",\"effects\":[],\"finish\":false,\"result\":{},\"x\":1}",
	        "an unknown top-level key");
	refused("shape", "{\"plan\":\"world/effect-plan/v2\",\"effects\":[],\"finish\":false,\"result\":{}}",
	        "another plan kind");
	refused("shape", "{\"plan\":1,\"effects\":[],\"finish\":false,\"result\":{}}", "a plan kind that is no string");
	refused("shape", "{\"plan\":\"world/effect-plan/v1\",\"effects\":{},\"finish\":false,\"result\":{}}",
	        "effects not an array");
	refused("shape", PLAN("", "0", "{}"), "finish not a boolean");
	refused("shape", "{\"plan\":\"world/effect-plan/v1\",\"plan\":\"world/effect-plan/v1\",\"effects\":[],"
	                 "\"finish\":false,\"result\":{}}",
	        "a duplicate key (strict JSON)");
}

static void test_one_effect(void)
{
	passes(PLAN(GOOD, "false", "null"), "one effect");
	refused("one-effect", PLAN(GOOD "," EFF("\"e2\"", "\"Test.Echo\"", "\"s\"", "1", "{}"), "false", "null"),
	        "two effects");
}

static void test_effect_shape(void)
{
	refused("effect-shape", PLAN("\"e1\"", "false", "null"), "an effect that is no object");
	refused("effect-shape", PLAN("{\"id\":\"e1\",\"effect\":\"Test.Echo\",\"scope\":\"s\",\"cost\":1}", "false", "null"),
	        "payload missing");
	refused("effect-shape",
	        PLAN("{\"id\":\"e1\",\"effect\":\"Test.Echo\",\"scope\":\"s\",\"cost\":1,\"payload\":{},\"x\":0}", "false",
	             "null"),
	        "an unknown effect key");
	refused("effect-shape", PLAN(EFF("\"e1\"", "1", "\"s\"", "1", "{}"), "false", "null"), "an effect name that is no string");
	refused("effect-shape", PLAN(EFF("\"e1\"", "\"Test.Echo\"", "null", "1", "{}"), "false", "null"), "a scope that is no string");
	refused("effect-shape", PLAN(EFF("\"e1\"", "\"Test.Echo\"", "\"s\"", "\"1\"", "{}"), "false", "null"), "a cost that is a string");
	refused("effect-shape", PLAN(EFF("\"e1\"", "\"Test.Echo\"", "\"s\"", "1.5", "{}"), "false", "null"), "a cost that is no integer");
	passes(PLAN(EFF("\"e1\"", "\"Test.Echo\"", "\"s\"", "1.0", "{}"), "false", "null"),
	       "cost 1.0, which the one canonical form (docs/design.md §6.2) reads as 1");
}

static void test_effect_id(void)
{
	passes(PLAN(EFF("\"0\"", "\"Test.Echo\"", "\"s\"", "1", "{}"), "false", "null"), "id of one digit");
	passes(PLAN(EFF("\"abcdefghij012345\"", "\"Test.Echo\"", "\"s\"", "1", "{}"), "false", "null"), "id of 16");
	static const char *const bad[] = { "\"E1\"", "\"\"", "\"a_b\"", "\"abcdefghij0123456\"", "\"e-1\"", "\"\\u00e91\"",
		                           "1", NULL };
	for (int i = 0; bad[i]; i++) {
		char plan[512];
		snprintf(plan, sizeof plan,
		         "{\"plan\":\"world/effect-plan/v1\",\"effects\":[{\"id\":%s,\"effect\":\"Test.Echo\",\"scope\":\"s\","
		         "\"cost\":1,\"payload\":{}}],\"finish\":false,\"result\":null}",
		         bad[i]);
		char what[80];
		snprintf(what, sizeof what, "effect id %s", bad[i]);
		refused("effect-id", plan, what);
	}
}

static void test_declared(void)
{
	passes(PLAN(EFF("\"r\"", "\"Workspace.Read\"", "\"worktree\"", "0", "{}"), "false", "null"),
	       "the second declared triple");
	refused("declared", PLAN(EFF("\"e1\"", "\"Test.Other\"", "\"s\"", "1", "{}"), "false", "null"), "an undeclared effect");
	refused("declared", PLAN(EFF("\"e1\"", "\"Test.Echo\"", "\"t\"", "1", "{}"), "false", "null"), "a declared effect in another scope");
	refused("declared", PLAN(EFF("\"e1\"", "\"Test.Echo\"", "\"s\"", "0", "{}"), "false", "null"), "a declared effect at a lower cost");
	refused("declared", PLAN(EFF("\"e1\"", "\"Test.Echo\"", "\"s\"", "2", "{}"), "false", "null"), "a declared effect at a higher cost");
	refused("declared", PLAN(EFF("\"e1\"", "\"Test.Echo\"", "\"worktree\"", "1", "{}"), "false", "null"),
	        "name of one triple with the scope of another");
	json_t *keep = declared;
	declared = json_array();
	refused("declared", PLAN(GOOD, "false", "null"), "no declaredEffects at all");
	json_decref(declared);
	declared = json_loads("[{\"effect\":\"Test.Echo\",\"scope\":\"s\",\"cost\":\"1\"}]", 0, NULL);
	refused("declared", PLAN(GOOD, "false", "null"), "a declared cost that is no integer matches nothing");
	json_decref(declared);
	declared = keep;
}

static void test_payload(void)
{
	refused("payload", PLAN(EFF("\"e1\"", "\"Test.Echo\"", "\"s\"", "1", "[]"), "false", "null"), "an array payload");
	refused("payload", PLAN(EFF("\"e1\"", "\"Test.Echo\"", "\"s\"", "1", "\"x\""), "false", "null"), "a string payload");
	refused("payload", PLAN(EFF("\"e1\"", "\"Test.Echo\"", "\"s\"", "1", "null"), "false", "null"), "a null payload");
	passes(PLAN(EFF("\"e1\"", "\"Test.Echo\"", "\"s\"", "1", "{}"), "false", "null"), "an empty object payload");
	/* {"s":"xxx..."} is 8 + n bytes canonical */
	for (int over = 0; over <= 1; over++) {
		size_t n = BROKER_PAYLOAD_MAX - 8 + (size_t)over;
		char *t = malloc(n + 512);
		if (!t) bail("oom");
		int k = snprintf(t, 512, "{\"plan\":\"world/effect-plan/v1\",\"effects\":[{\"id\":\"e1\",\"effect\":\"Test.Echo\","
		                         "\"scope\":\"s\",\"cost\":1,\"payload\":{\"s\":\"");
		memset(t + k, 'x', n);
		snprintf(t + k + n, 512, "\"}}],\"finish\":false,\"result\":null}");
		if (over) refused("payload", t, "a payload of 1 MiB + 1 canonical");
		else passes(t, "a payload of exactly 1 MiB canonical");
		free(t);
	}
	/* the cap is on the canonical form: blanks in the text do not count */
	size_t n = BROKER_PAYLOAD_MAX - 8;
	char *t = malloc(n + 4096);
	if (!t) bail("oom");
	int k = snprintf(t, 512, "{\"plan\":\"world/effect-plan/v1\",\"effects\":[{\"id\":\"e1\",\"effect\":\"Test.Echo\","
	                         "\"scope\":\"s\",\"cost\":1,\"payload\":{    \"s\"   :    \"");
	memset(t + k, 'x', n);
	snprintf(t + k + n, 512, "\"   }}],\"finish\":false,\"result\":null}");
	passes(t, "1 MiB canonical, written with blanks");
	free(t);
}

static void test_no_world(void)
{
	refused("no-world", PLAN(EFF("\"e1\"", "\"Test.Echo\"", "\"s\"", "1", "{\"world\":{}}"), "false", "null"),
	        "a payload holding world");
	passes(PLAN(EFF("\"e1\"", "\"Test.Echo\"", "\"s\"", "1", "{\"worlds\":{}}"), "false", "null"),
	       "control: a payload holding worlds");
	refused("no-world", PLAN("", "false", "{\"ok\":true,\"world\":null}"), "a result holding world");
	passes(PLAN("", "false", "{\"ok\":true,\"World\":null}"), "control: a result holding World");
}

static void test_result_finish(void)
{
	refused("result", PLAN(GOOD, "false", "{}"), "an effect with an object result");
	refused("result", PLAN(GOOD, "true", "{\"ok\":true}"), "an effect and finish with an object result");
	refused("result", PLAN("", "false", "null"), "no effect and a null result");
	refused("result", PLAN("", "false", "[]"), "no effect and an array result");
	refused("result", PLAN("", "false", "\"done\""), "no effect and a string result");
	refused("finish", PLAN("", "true", "{}"), "finish:true without an effect");
	passes(PLAN(GOOD, "true", "null"), "finish:true with an effect");
	passes(PLAN(GOOD, "false", "null"), "finish:false with an effect (the handler's output is the result)");
}

/* A plan breaking two laws is refused by the first of the docs' list:
 * shape, one-effect, effect-shape, effect-id, declared, payload, no-world,
 * result, finish. */
static void test_order(void)
{
	refused("shape",
	        "{\"plan\":\"world/effect-plan/v1\",\"effects\":[" GOOD "," GOOD "],\"finish\":false,\"result\":null,\"x\":1}",
	        "shape before one-effect");
	refused("one-effect", PLAN("\"e1\",\"e2\"", "false", "null"), "one-effect before effect-shape");
	refused("effect-shape",
	        PLAN("{\"id\":\"E1\",\"effect\":\"Test.Echo\",\"scope\":\"s\",\"cost\":1,\"payload\":{},\"x\":0}", "false", "null"),
	        "effect-shape before effect-id");
	refused("effect-id", PLAN(EFF("\"E1\"", "\"Test.Other\"", "\"s\"", "1", "{}"), "false", "null"),
	        "effect-id before declared");
	refused("declared", PLAN(EFF("\"e1\"", "\"Test.Other\"", "\"s\"", "1", "[]"), "false", "null"),
	        "declared before payload");
	refused("payload", PLAN(EFF("\"e1\"", "\"Test.Echo\"", "\"s\"", "1", "[]"), "false", "{}"),
	        "payload before result");
	refused("no-world", PLAN(EFF("\"e1\"", "\"Test.Echo\"", "\"s\"", "1", "{\"world\":1}"), "false", "{}"),
	        "no-world before result");
	refused("result", PLAN("", "true", "null"), "result before finish");
	refused("no-world", PLAN("", "true", "{\"world\":1}"), "no-world before finish");
}

/* Which effects the product serves, and what the pipeline makes of an
 * effect no handler serves. */
static void test_handlers(void)
{
	static const char *const served[] = { "Workspace.Read", "Workspace.Write", "Workspace.Exec", "Ailang.Check",
		                              "Ailang.Run", "Ailang.Discover", "Ailang.CLI", NULL };
	for (int i = 0; served[i]; i++)
		ok(broker_handler_find(broker_handlers, served[i]) != NULL, "the product serves %s", served[i]);
	static const char *const not_served[] = { "Net.Get", "workspace.read", "Workspace", "Workspace.Read.X",
		                                  "Test.Echo", "", NULL };
	for (int i = 0; not_served[i]; i++)
		ok(broker_handler_find(broker_handlers, not_served[i]) == NULL, "the product serves no \"%s\"", not_served[i]);
	ok(broker_handler_find(NULL, "Workspace.Read") == NULL, "an absent table serves nothing");

	bfix_open("test_plan_laws");
	char cred[65];
	struct broker_session s;
	const char *const g[] = { "Test.Nobody=s:2", "Test.Echo=s:2", NULL };
	bfix_session("no-handler", g, 600, cred, &s);
	int calls0 = F.calls;
	struct broker_effect_out out;
	struct world_err e = { 0 };
	int rc = bfix_effect(&s, (long long)time(NULL), "Test.Nobody", "s", 1, 1, &out, &e);
	is_int(rc, BROKER_EFFECT_FAILED, "an allowed effect no handler serves: failed (%s)", e.msg);
	is_str(out.failure, "no handler for effect Test.Nobody", "... naming the effect");
	is_int(F.calls - calls0, 0, "... no handler ran");
	is_int(bfix_spent("no-handler", "Test.Nobody", "s"), 1, "... and it is charged (its intent was durable first)");
	broker_effect_out_free(&out);
	is_int(bfix_run(&s, "Test.Echo", "s", 1), BROKER_EFFECT_OK, "control: a served effect of the session runs");
	broker_session_free(&s);
	bfix_close();
}

int main(void)
{
	declared = json_loads("[{\"effect\":\"Test.Echo\",\"scope\":\"s\",\"cost\":1},"
	                      "{\"effect\":\"Workspace.Read\",\"scope\":\"worktree\",\"cost\":0}]",
	                      0, NULL);
	if (!declared) bail("declared fixture");
	test_shape();
	test_one_effect();
	test_effect_shape();
	test_effect_id();
	test_declared();
	test_payload();
	test_no_world();
	test_result_finish();
	test_order();
	test_handlers();
	json_decref(declared);
	return done_testing();
}
