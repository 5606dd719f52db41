/* tests/broker/test_record.c: the record law of docs/broker.md ("The effect
 * pipeline", "Record law") and docs/design.md §5.3 at the broker's level.
 *
 * Two halves. broker_record_check, the law as read back (by provenance
 * walks, replay and the integrity scan): a valid record of each kind
 * (succeeded, failed with and without its reason, denied) passes, and each
 * clause broken on its own is refused. broker_effect_run and
 * broker_effect_write over a real store: every decision yields its record
 * (allowed and succeeded, allowed and failed for each way a handler breaks,
 * denied), the record obeys the law and names the request and result
 * actually stored, the request and the effect intent are durable before
 * the handler runs (Test.Probe looks), the outcome's ref is the record, a
 * denial writes the record only, everything lands in the episode; and a
 * decision whose record would break the law is refused with nothing
 * durable.
 *
 * How each clause was checked to fail when removed: a scratch copy of
 * broker/effect.c, mutated as below, linked ahead of libworld.a into this
 * test (the tree untouched); failed assertions:
 *   exactly ten fields (eleven with failure)  count check dropped     2
 *   failure: a reason, only when failed       check dropped           4
 *   field types                               check dropped           2
 *   no negative cost or budget                check dropped           2
 *   never failed without allowed              check dropped           1
 *   allowed: no denial label                  check dropped           1
 *   allowed: budgetAfter = before - cost      check dropped           3
 *   allowed: requestRef                       check dropped           1
 *   failed: no resultRef                      check dropped           1
 *   succeeded: resultRef                      check dropped           1
 *   denied: a denied:* label                  check dropped           2
 *   denied: budgetAfter = budgetBefore        check dropped           1
 *   denied: no refs                           check dropped           2
 *   (the "field missing" check is an equivalent mutant: the type check
 *   refuses an absent field too)
 *   effect intent durable before the handler  intent not written     14
 *   outcome ref = the record                  outcome ref NULL        4
 *   record checked when written               make_record unchecked   1
 *   the failure reason kept                   "handler failed" only   3
 *   output cap                                cap check dropped       5
 *   written objects the episode's             membership dropped      2
 *   request the episode's before dispatch     request not a member    1
 *   one decision per task id                  in-flight check dropped 5 */
#include "tests/broker/broker_fixture.h"

#define R1 "sha256:1111111111111111111111111111111111111111111111111111111111111111"
#define R2 "sha256:2222222222222222222222222222222222222222222222222222222222222222"

static json_t *rec(const char *text)
{
	json_t *j = json_loads(text, JSON_DECODE_ANY, NULL);
	if (!j) bail("bad record fixture %s", text);
	return j;
}

static const char *const ok_text =
	"{\"effect\":\"Test.Echo\",\"scope\":\"s\",\"cost\":1,\"budgetBefore\":5,\"budgetAfter\":4,\"allowed\":true,"
	"\"failed\":false,\"denial\":null,\"requestRef\":\"" R1 "\",\"resultRef\":\"" R2 "\"}";
static const char *const failed_text =
	"{\"effect\":\"Test.Echo\",\"scope\":\"s\",\"cost\":1,\"budgetBefore\":5,\"budgetAfter\":4,\"allowed\":true,"
	"\"failed\":true,\"denial\":null,\"requestRef\":\"" R1 "\",\"resultRef\":null,\"failure\":\"disk on fire\"}";
static const char *const denied_text =
	"{\"effect\":\"Test.Echo\",\"scope\":\"s\",\"cost\":1,\"budgetBefore\":0,\"budgetAfter\":0,\"allowed\":false,"
	"\"failed\":false,\"denial\":\"denied:budget\",\"requestRef\":null,\"resultRef\":null}";

/* base with member key set to the JSON value text (NULL: deleted). */
static void refuse(const char *base, const char *key, const char *value, const char *what)
{
	json_t *r = rec(base);
	if (value) json_object_set_new(r, key, rec(value));
	else json_object_del(r, key);
	struct world_err e = { 0 };
	int rc = broker_record_check(r, &e);
	ok(rc < 0 && e.code == WX_INTEGRITY, "%s: refused (%s)", what, e.msg);
	json_decref(r);
}

static void test_law_on_read(void)
{
	struct world_err e = { 0 };
	json_t *r = rec(ok_text);
	ok(broker_record_check(r, &e) == 0, "control: a succeeded record obeys the law (%s)", e.msg);
	json_decref(r);
	r = rec(failed_text);
	ok(broker_record_check(r, &e) == 0, "control: a failed record with its reason obeys the law (%s)", e.msg);
	json_object_del(r, "failure");
	ok(broker_record_check(r, &e) == 0, "control: a failed record of ten fields (written before the reason) too");
	json_decref(r);
	r = rec(denied_text);
	ok(broker_record_check(r, &e) == 0, "control: a denied record obeys the law (%s)", e.msg);
	json_decref(r);
	r = json_array();
	ok(broker_record_check(r, &e) < 0, "an array is no record");
	json_decref(r);

	/* exactly the ten fields (eleven with failure) */
	refuse(ok_text, "resultRef", NULL, "nine fields");
	refuse(ok_text, "extra", "1", "an eleventh field that is not failure");
	refuse(failed_text, "extra", "1", "a twelfth field");
	json_t *ren = rec(ok_text);
	json_object_set_new(ren, "scopeX", json_string("s"));
	json_object_del(ren, "scope");
	ok(broker_record_check(ren, &e) < 0, "ten fields, one renamed: refused (%s)", e.msg);
	json_decref(ren);
	/* failure: a non-empty reason, only in a failed record */
	refuse(ok_text, "failure", "\"why\"", "a succeeded record with a failure");
	refuse(denied_text, "failure", "\"why\"", "a denied record with a failure");
	refuse(failed_text, "failure", "\"\"", "an empty failure");
	refuse(failed_text, "failure", "1", "a failure that is no string");
	/* types */
	refuse(ok_text, "cost", "\"1\"", "cost a string");
	refuse(ok_text, "allowed", "1", "allowed not a boolean");
	refuse(ok_text, "requestRef", "\"sha256:xyz\"", "requestRef not a ref");
	refuse(ok_text, "effect", "null", "effect not a string");
	refuse(denied_text, "denial", "1", "denial a number");
	refuse(ok_text, "budgetAfter", "4.5", "a budget that is no integer");
	/* no negative cost or budget */
	refuse(ok_text, "cost", "-1", "negative cost");
	refuse(denied_text, "budgetBefore", "-1", "negative budgetBefore");
	json_t *neg = rec(ok_text);
	json_object_set_new(neg, "budgetBefore", json_integer(0));
	json_object_set_new(neg, "budgetAfter", json_integer(-1));
	ok(broker_record_check(neg, &e) < 0, "budgetAfter below 0 (before 0, cost 1): refused (%s)", e.msg);
	json_decref(neg);
	/* never failed without allowed */
	json_t *fna = rec(denied_text);
	json_object_set_new(fna, "failed", json_true());
	ok(broker_record_check(fna, &e) < 0 && strstr(e.msg, "failed but not allowed"), "failed and not allowed: %s", e.msg);
	json_decref(fna);
	/* allowed */
	refuse(ok_text, "denial", "\"denied:budget\"", "allowed with a denial label");
	refuse(ok_text, "budgetAfter", "5", "allowed and not charged");
	refuse(ok_text, "budgetAfter", "3", "allowed and charged twice");
	refuse(failed_text, "budgetAfter", "5", "failed and not charged");
	refuse(ok_text, "requestRef", "null", "allowed without requestRef");
	refuse(failed_text, "resultRef", "\"" R2 "\"", "failed with a resultRef");
	refuse(ok_text, "resultRef", "null", "succeeded without resultRef");
	/* denied */
	refuse(denied_text, "denial", "null", "denied without a label");
	refuse(denied_text, "denial", "\"allowed\"", "denied with a label not denied:*");
	refuse(denied_text, "budgetAfter", "1", "denied with budgetAfter != budgetBefore");
	refuse(denied_text, "requestRef", "\"" R1 "\"", "denied with a requestRef");
	refuse(denied_text, "resultRef", "\"" R2 "\"", "denied with a resultRef");
}

/* o's member k as a string, "" when absent or no string. */
static const char *js(const json_t *o, const char *k)
{
	const char *v = json_string_value(json_object_get(o, k));
	return v ? v : "";
}

static json_t *get_json(const char *ref, const char *want_kind)
{
	struct world_object o;
	struct world_err e = { 0 };
	if (world_object_get(F.st, ref, &o, &e) < 0) return NULL;
	json_t *v = strcmp(o.semantic_id, want_kind) == 0 ? world_json_parse((const char *)o.payload, o.len, &e) : NULL;
	world_object_free(&o);
	return v;
}

static int member(const char *episode, const char *ref)
{
	int m = 0;
	struct world_err e = { 0 };
	if (world_episode_has_object(F.st, episode, ref, &m, &e) < 0) bail("membership: %s", e.msg);
	return m;
}

/* The record of out: parsed, law-checked, its ref its hash. */
static json_t *record_of(const struct broker_effect_out *out, const char *what)
{
	struct world_err e = { 0 };
	json_t *r = out->record ? world_json_parse(out->record, out->record_len, &e) : NULL;
	ok(r && broker_record_check(r, &e) == 0, "%s: a record that obeys the law (%s)", what, e.msg);
	char ref[WORLD_REF_SIZE] = "";
	if (out->record) world_hash_ref(out->record, out->record_len, ref, &e);
	ok(world_canon_is_canonical(out->record, out->record_len) && strcmp(ref, out->record_ref) == 0,
	   "%s: canonical, and record_ref is its hash", what);
	return r;
}

static void journal(const char *kind, const char *subject, int *found, struct world_journal_row *row)
{
	struct world_err e = { 0 };
	*found = world_journal_find(F.st, kind, subject, row, &e);
	if (*found < 0 && e.code != WX_NOT_FOUND) bail("journal: %s", e.msg);
}

static void test_pipeline(void)
{
	char cred[65];
	struct broker_session s;
	const char *const g[] = { "Test.Probe=s:9", "Test.Fail=s:9", "Test.Big=s:9", "Test.Bare=s:9", "Test.Echo=s:1",
		                  NULL };
	bfix_session("rec", g, 600, cred, &s);
	long long now = (long long)time(NULL);
	struct world_err e = { 0 };
	struct broker_effect_out out;
	struct world_journal_row row;
	int found;
	char subject[200];

	/* allowed and succeeded */
	int rc = bfix_effect(&s, now, "Test.Probe", "s", 2, 1, &out, &e);
	is_int(rc, BROKER_EFFECT_OK, "an allowed effect succeeds (%s)", e.msg);
	is_int(F.probe_found, 0, "while its handler ran, its effect intent was in the journal");
	is_str(F.probe_status, "", "... with no outcome yet");
	ok(F.probe_request, "... naming its request object, already stored");
	is_int(F.probe_in_txn, 0, "... and no store transaction was open (committed before dispatch)");
	json_t *r = record_of(&out, "succeeded");
	ok(json_is_true(json_object_get(r, "allowed")) && json_is_false(json_object_get(r, "failed")) &&
	   json_integer_value(json_object_get(r, "budgetBefore")) == 9 &&
	   json_integer_value(json_object_get(r, "budgetAfter")) == 7,
	   "its record: allowed, not failed, budget 9 -> 7");
	const char *req = json_string_value(json_object_get(r, "requestRef"));
	const char *res = json_string_value(json_object_get(r, "resultRef"));
	json_t *rq = req ? get_json(req, "world/effect-request/v1") : NULL;
	ok(rq && strcmp(js(rq, "invocationId"), bfix_inv("rec")) == 0 &&
	   strcmp(js(rq, "effectId"), "e1") == 0 &&
	   strcmp(js(rq, "effect"), "Test.Probe") == 0 &&
	   json_integer_value(json_object_get(rq, "cost")) == 2 && json_object_size(rq) == 6 &&
	   json_is_object(json_object_get(rq, "payload")),
	   "requestRef names the stored request {invocationId, effectId, effect, scope, cost, payload}");
	json_decref(rq);
	json_t *rs = res ? get_json(res, "world/effect-result/v1") : NULL;
	ok(rs && json_is_true(json_object_get(rs, "ok")), "resultRef names the stored result (the handler's output)");
	json_decref(rs);
	json_t *stored = get_json(out.record_ref, "world/effect-record/v1");
	ok(stored && json_equal(stored, r), "the record is stored as world/effect-record/v1");
	json_decref(stored);
	snprintf(subject, sizeof subject, "%s#e1", bfix_inv("rec"));
	journal("effect", subject, &found, &row);
	ok(found == 0 && strcmp(row.status, "succeeded") == 0 && strcmp(row.outcome_ref, out.record_ref) == 0 &&
	   strcmp(row.intent_ref, req ? req : "") == 0,
	   "journal: the intent names the request, its outcome succeeded names the record");
	journal("invocation", bfix_inv("rec"), &found, &row);
	ok(found == 0 && row.status[0] == 0, "the invocation's intent is durable, left for the caller's commit");
	ok(req && res && member("rec", req) && member("rec", res) && member("rec", out.record_ref), "request, result and record are the episode's");
	ok(!member("other", out.record_ref), "control: not another episode's");
	ok(json_is_object(out.entry) && strcmp(js(out.entry, "status"), "ok") == 0 &&
	   strcmp(js(out.entry, "record"), out.record_ref) == 0 &&
	   json_object_get(out.entry, "output") == out.output && !json_object_get(out.entry, "failure"),
	   "the finish phase's entry names the record and carries the output");
	json_decref(r);
	broker_effect_out_free(&out);

	/* allowed and failed: each way a handler breaks */
	static const struct {
		const char *effect, *why;
	} breaks[] = {
		{ "Test.Fail", "test handler: disk on fire" },
		{ "Test.Big", "handler Test.Big output is " },
		{ "Test.Bare", "handler Test.Bare returned no object" },
	};
	for (size_t i = 0; i < sizeof breaks / sizeof breaks[0]; i++) {
		rc = bfix_effect(&s, now, breaks[i].effect, "s", 1, 1, &out, &e);
		is_int(rc, BROKER_EFFECT_FAILED, "%s: failed", breaks[i].effect);
		r = record_of(&out, breaks[i].effect);
		const char *why = json_string_value(json_object_get(r, "failure"));
		ok(why && strncmp(why, breaks[i].why, strlen(breaks[i].why)) == 0 && json_is_null(json_object_get(r, "resultRef")) &&
		   json_integer_value(json_object_get(r, "budgetAfter")) == json_integer_value(json_object_get(r, "budgetBefore")) - 1,
		   "%s: the record names the reason (%s), no result, charged", breaks[i].effect, why ? why : "none");
		ok(!out.result && !out.output, "%s: no result is kept", breaks[i].effect);
		snprintf(subject, sizeof subject, "%s#e1", bfix_inv("rec"));
		journal("effect", subject, &found, &row);
		ok(found == 0 && strcmp(row.status, "failed") == 0 && strcmp(row.outcome_ref, out.record_ref) == 0,
		   "%s: outcome failed, naming the record", breaks[i].effect);
		ok(strcmp(js(out.entry, "failure"), why ? why : "") == 0 &&
		   strcmp(js(out.entry, "status"), "failed") == 0,
		   "%s: the entry carries the same reason", breaks[i].effect);
		json_decref(r);
		broker_effect_out_free(&out);
	}

	/* denied: the record only */
	is_int(bfix_run(&s, "Test.Echo", "s", 1), BROKER_EFFECT_OK, "control: the 1 unit of Test.Echo runs");
	int calls0 = F.calls;
	rc = bfix_effect(&s, now, "Test.Echo", "s", 1, 1, &out, &e);
	is_int(rc, BROKER_EFFECT_DENIED, "the second: denied");
	r = record_of(&out, "denied");
	ok(strcmp(js(r, "denial"), "denied:budget") == 0 &&
	   json_integer_value(json_object_get(r, "budgetBefore")) == 0, "its record: denied:budget, budget 0");
	is_int(F.calls, calls0, "no handler ran");
	ok(out.intent_id == 0 && out.invocation_intent_id == 0 && !out.result, "no intent, no result");
	snprintf(subject, sizeof subject, "%s#e1", bfix_inv("rec"));
	journal("effect", subject, &found, &row);
	ok(found < 0, "the journal has no effect intent for it");
	journal("invocation", bfix_inv("rec"), &found, &row);
	ok(found < 0, "nor an invocation intent (the caller's commit writes it)");
	ok(member("rec", out.record_ref), "the denial's record is stored, the episode's");
	ok(strcmp(js(out.entry, "status"), "denied") == 0 &&
	   json_is_null(json_object_get(out.entry, "output")), "the entry: denied, no output");
	json_decref(r);
	broker_effect_out_free(&out);

	/* a record the law refuses is never written: a negative cost is
	 * decided denied:budget, but that denial has no lawful record, so the
	 * pipeline fails and nothing of it is durable. (Publishing refuses a
	 * negative declared cost, so no published plan reaches this.) */
	long long spent = bfix_spent("rec", "Test.Echo", "s");
	rc = bfix_effect(&s, now, "Test.Echo", "s", -1, 1, &out, &e);
	ok(rc < 0 && strstr(e.msg, "effect record") != NULL, "cost -1: no record, the pipeline refuses (%s)", e.msg);
	snprintf(subject, sizeof subject, "%s#e1", bfix_inv("rec"));
	journal("effect", subject, &found, &row);
	ok(found < 0 && bfix_spent("rec", "Test.Echo", "s") == spent, "... nothing durable, nothing charged");
	broker_session_free(&s);
}

/* One task id is decided once: while its effect is in flight, and once
 * committed, the same invocation is refused before any decision. */
static void test_once(void)
{
	char cred[65];
	struct broker_session s;
	const char *const g[] = { "Test.Echo=s:9", NULL };
	bfix_session("once", g, 600, cred, &s);
	struct world_err e = { 0 };
	struct broker_effect_out out;
	int rc = bfix_effect(&s, (long long)time(NULL), "Test.Echo", "s", 1, 0, &out, &e);
	is_int(rc, BROKER_EFFECT_OK, "first run of the task (outcome left unwritten)");
	char inv[128];
	snprintf(inv, sizeof inv, "%s", bfix_inv("once"));
	json_t *eff = json_pack("{s:s,s:s,s:s,s:i,s:{}}", "id", "e1", "effect", "Test.Echo", "scope", "s", "cost", 1, "payload");
	char in_ref[WORLD_REF_SIZE];
	world_hash_ref("{}", 2, in_ref, &e);
	struct broker_effect_req rq = { .st = F.st, .store_lock = &F.lock, .session = &s, .now = (long long)time(NULL),
		                        .invocation_id = inv, .input_ref = in_ref, .input = "{}", .input_len = 2,
		                        .effect = eff, .handlers = bfix_handlers };
	rq.hctx.episode = s.episode;
	rq.hctx.output_max = 4096;
	struct broker_effect_out again;
	int calls0 = F.calls;
	rc = broker_effect_run(&rq, &again, &e);
	ok(rc < 0 && e.code == WX_CONFLICT && strstr(e.msg, "in flight"), "the same task while in flight: refused (%s)", e.msg);
	is_int(F.calls, calls0, "... nothing ran");
	is_int(bfix_spent("once", "Test.Echo", "s"), 1, "... nothing charged");
	/* the caller commits: effect outcome and invocation committed */
	if (world_store_begin(F.st, &e) < 0 || broker_effect_write(F.st, &out, &e) < 0 ||
	    world_journal_outcome(F.st, out.invocation_intent_id, "committed", NULL, &e) < 0 || world_store_commit(F.st, &e) < 0)
		bail("commit: %s", e.msg);
	rc = broker_effect_run(&rq, &again, &e);
	ok(rc < 0 && e.code == WX_CONFLICT && strstr(e.msg, "already committed"), "the same task once committed: refused (%s)",
	   e.msg);
	is_int(F.calls, calls0, "... nothing ran");
	json_decref(eff);
	broker_effect_out_free(&out);
	broker_session_free(&s);
}

int main(void)
{
	test_law_on_read();
	bfix_open("test_record");
	test_pipeline();
	test_once();
	bfix_close();
	return done_testing();
}
