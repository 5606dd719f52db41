/* tests/coordinator/test_confirm.c: coordinator/confirm.h without a daemon --
 * the declaration's checks (each refusal beside a declaration that passes),
 * the verdicts (ask, run, declined, missing capability, optional requests
 * left out), the request state bound to its session, request, declaration,
 * task and expiry, every single-byte change of a state refused (the MAC
 * covers every byte), and the key file made once, 0600, and read back. */
#include "coordinator/confirm.h"
#include "common/error.h"
#include "store/store.h"
#include "tests/tap.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static json_t *J(const char *s)
{
	json_error_t je;
	json_t *v = json_loads(s, 0, &je);
	if (!v) bail("bad test JSON: %s: %s", je.text, s);
	return v;
}

static int decl_ok(const char *s, const char *want_why)
{
	json_t *d = J(s);
	char why[400] = "";
	int rc = confirm_decl_check(d, why, sizeof why);
	json_decref(d);
	if (want_why) return rc < 0 && strstr(why, want_why) != NULL;
	return rc == 0;
}

#define ELIC(msg) "{\"method\":\"elicitation/create\",\"params\":{\"message\":\"" msg "\",\"requestedSchema\":{\"type\":\"object\",\"properties\":{\"ok\":{\"type\":\"boolean\"}},\"required\":[\"ok\"]}}}"
#define SAMP "{\"method\":\"sampling/createMessage\",\"params\":{\"messages\":[{\"role\":\"user\",\"content\":{\"type\":\"text\",\"text\":\"hi\"}}],\"maxTokens\":5}}"

static const unsigned char KEY[CONFIRM_KEY_LEN] = "0123456789abcdef0123456789abcdef";

static struct confirm_req req(const json_t *caps, const json_t *resp, const char *state)
{
	struct confirm_req r = { .key = KEY, .principal = "p1", .method = "tools/call", .name = "t.x",
		                 .args_ref = "sha256:aa", .caps = caps, .responses = resp, .state = state,
		                 .now = 1000, .ttl_s = 60 };
	return r;
}

int main(void)
{
	/* ---- the declaration ---- */
	ok(decl_ok("[{\"confirm\":" ELIC("go?") "}]", NULL), "control: one round of one elicitation is a declaration");
	ok(decl_ok("[{\"a\":" ELIC("1") "},{\"b\":" SAMP ",\"r\":{\"method\":\"roots/list\",\"params\":{},\"optional\":true}}]", NULL),
	   "control: two rounds, sampling and an optional roots request");
	ok(decl_ok("[]", "1 to 8 rounds"), "no rounds: refused");
	ok(decl_ok("[{}]", "inputRequests[0] must be an object of 1 to 16"), "an empty round: refused");
	ok(decl_ok("[{\"a b\":" ELIC("x") "}]", "key \"a b\""), "a key with a space: refused naming it");
	ok(decl_ok("[{\"a\":" ELIC("x") "},{\"a\":" ELIC("y") "}]", "already asked in round 0"), "a key asked twice: refused");
	ok(decl_ok("[{\"a\":{\"method\":\"tools/call\",\"params\":{}}}]", "method must be"), "another method: refused");
	ok(decl_ok("[{\"a\":{\"method\":\"elicitation/create\",\"params\":{\"message\":\"m\"}}}]", "requestedSchema"),
	   "an elicitation without its requestedSchema: refused");
	ok(decl_ok("[{\"a\":{\"method\":\"sampling/createMessage\",\"params\":{\"messages\":[],\"maxTokens\":5}}}]", "messages"),
	   "a sampling request without messages: refused");
	ok(decl_ok("[{\"a\":{\"method\":\"roots/list\",\"params\":{},\"optional\":1}}]", "optional must be"),
	   "optional not a boolean: refused");
	ok(decl_ok("[{\"a\":{\"method\":\"roots/list\",\"params\":{},\"why\":1}}]", "unknown member \"why\""),
	   "an unknown member: refused naming it");

	/* ---- verdicts ---- */
	json_t *d = J("[{\"confirm\":" ELIC("go?") ",\"model\":" SAMP "},{\"r\":{\"method\":\"roots/list\",\"params\":{},\"optional\":true}}]");
	json_t *all = J("{\"elicitation\":{},\"sampling\":{},\"roots\":{}}"), *noroots = J("{\"elicitation\":{},\"sampling\":{}}");
	json_t *nosamp = J("{\"elicitation\":{}}");
	struct confirm_out o;
	struct world_err e = { 0, "" };
	struct confirm_req r = req(all, NULL, NULL);
	ok(confirm_decide(d, &r, &o, &e) == 0 && o.v == CONFIRM_ASK && json_object_size(o.ask) == 2 && o.round == 1 &&
	   strncmp(o.task, "in-", 3) == 0, "round 1 asked (both requests), a task id drawn (%s)", o.task);
	char *s1 = o.state ? strdup(o.state) : NULL;
	char task1[129];
	snprintf(task1, sizeof task1, "%s", o.task);
	confirm_out_free(&o);
	r = req(nosamp, NULL, NULL);
	ok(confirm_decide(d, &r, &o, &e) == 0 && o.v == CONFIRM_MISSING && strcmp(o.capability, "sampling") == 0,
	   "a required sampling request, the client without sampling: missing capability sampling");
	confirm_out_free(&o);
	json_t *part = J("{\"confirm\":{\"action\":\"accept\",\"content\":{\"ok\":true}}}");
	r = req(all, part, s1);
	ok(confirm_decide(d, &r, &o, &e) == 0 && o.v == CONFIRM_ASK && json_object_size(o.ask) == 1 &&
	   json_object_get(o.ask, "model") && strcmp(o.task, task1) == 0,
	   "round 1 half answered: asked again for what it lacks (model), under the same task id");
	char *s1b = o.state ? strdup(o.state) : NULL;
	confirm_out_free(&o);
	json_t *model = J("{\"model\":{\"role\":\"assistant\",\"content\":{\"type\":\"text\",\"text\":\"x\"}}}");
	r = req(noroots, model, s1b);
	ok(confirm_decide(d, &r, &o, &e) == 0 && o.v == CONFIRM_RUN && o.from_state && o.round == 2 &&
	   json_object_size(json_object_get(o.inputs, "responses")) == 2 &&
	   json_object_size(json_object_get(o.inputs, "requests")) == 2,
	   "round 1 answered, the client without roots: round 2's optional roots left out, it runs with both answers");
	confirm_out_free(&o);
	r = req(all, model, s1b);
	ok(confirm_decide(d, &r, &o, &e) == 0 && o.v == CONFIRM_ASK && o.round == 2 && json_object_get(o.ask, "r"),
	   "control: the same with roots declared: round 2 asks the roots");
	confirm_out_free(&o);
	json_t *decl = J("{\"confirm\":{\"action\":\"decline\"},\"model\":{\"role\":\"assistant\",\"content\":{\"type\":\"text\",\"text\":\"x\"}}}");
	r = req(all, decl, s1);
	ok(confirm_decide(d, &r, &o, &e) == 0 && o.v == CONFIRM_DECLINED && strstr(o.why, "decline to confirm") &&
	   json_object_get(json_object_get(o.inputs, "responses"), "confirm"),
	   "a declined elicitation: declined, the answer kept (%s)", o.why);
	confirm_out_free(&o);
	json_t *badans = J("{\"confirm\":{\"action\":\"accept\",\"content\":{\"ok\":\"yes\"}}}");
	r = req(all, badans, s1);
	ok(confirm_decide(d, &r, &o, &e) < 0 && e.code == WX_BAD_INPUT && strstr(e.msg, "requestedSchema"),
	   "an accepted answer outside its requestedSchema: refused (%s)", e.msg);
	json_t *notobj = J("[1]");
	r = req(all, notobj, NULL);
	ok(confirm_decide(d, &r, &o, &e) < 0 && strstr(e.msg, "must be an object"), "inputResponses not an object: refused");

	/* ---- the state's bindings ---- */
	struct { const char *what, *principal, *name, *args; long long now; const char *want; } bind[] = {
		{ "another session", "p2", "t.x", "sha256:aa", 1000, "another session" },
		{ "another tool", "p1", "t.y", "sha256:aa", 1000, "another request" },
		{ "other arguments", "p1", "t.x", "sha256:bb", 1000, "other arguments" },
		{ "past its expiry", "p1", "t.x", "sha256:aa", 1061, "expired 1 s ago" },
	};
	for (size_t i = 0; i < sizeof bind / sizeof bind[0]; i++) {
		r = req(all, part, s1);
		r.principal = bind[i].principal;
		r.name = bind[i].name;
		r.args_ref = bind[i].args;
		r.now = bind[i].now;
		ok(confirm_decide(d, &r, &o, &e) < 0 && strstr(e.msg, bind[i].want), "a state presented by %s: refused (%s)",
		   bind[i].what, e.msg);
	}
	r = req(all, part, s1);
	r.now = 1059;
	ok(confirm_decide(d, &r, &o, &e) == 0, "control: the same state within its life, by its session, for its request");
	confirm_out_free(&o);
	r = req(all, part, s1);
	r.task = "other-task";
	ok(confirm_decide(d, &r, &o, &e) < 0 && strstr(e.msg, "bound to task id"), "a state with another task id given: refused");
	json_t *d2 = J("[{\"confirm\":" ELIC("really?") ",\"model\":" SAMP "},{\"r\":{\"method\":\"roots/list\",\"params\":{},\"optional\":true}}]");
	r = req(all, part, s1);
	ok(confirm_decide(d2, &r, &o, &e) < 0 && strstr(e.msg, "republished"), "a state for another declaration: refused");
	/* every single-byte change of the state is refused */
	size_t n = strlen(s1), refused = 0;
	char *t = strdup(s1);
	for (size_t i = 0; i < n; i++) {
		for (int k = 0; k < 2; k++) {
			memcpy(t, s1, n + 1);
			t[i] = k ? (t[i] == 'A' ? 'B' : 'A') : (t[i] == '_' ? '-' : '_');
			if (strcmp(t, s1) == 0) { refused++; continue; }
			r = req(all, part, t);
			if (confirm_decide(d, &r, &o, &e) < 0 && e.code == WX_BAD_INPUT) refused++;
			else confirm_out_free(&o);
		}
	}
	is_int(refused, 2 * n, "every one of the %zu single-byte changes of a state is refused", 2 * n);
	/* The MAC is 32 bytes: 43 base64url characters, the last carrying 2
	 * unused low bits. Setting one spells the same bytes another way; the
	 * loop above meets such a change only when the substitute letter
	 * happens to differ in those bits alone, so it is tried here always. */
	static const char A64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
	memcpy(t, s1, n + 1);
	const char *at = strchr(A64, t[n - 1]);
	ok(at && ((at - A64) & 3) == 0, "the state's last character has its unused bits clear");
	if (at) t[n - 1] = A64[(at - A64) | 1];
	r = req(all, part, t);
	ok(confirm_decide(d, &r, &o, &e) < 0 && e.code == WX_BAD_INPUT,
	   "the same state spelled with an unused bit of its last character set: refused");
	free(t);

	/* ---- the key file ---- */
	char dir[] = "/tmp/test_confirm.XXXXXX", db[300], kp[400];
	if (!mkdtemp(dir)) bail("mkdtemp");
	snprintf(db, sizeof db, "%s/world.db", dir);
	struct world_store *st;
	if (world_store_open(db, WORLD_STORE_WRITER, &st, &e) < 0) bail("store: %s", e.msg);
	unsigned char k1[CONFIRM_KEY_LEN], k2[CONFIRM_KEY_LEN];
	ok(confirm_key_load(st, k1, &e) == 0, "the key is made on first use");
	snprintf(kp, sizeof kp, "%s.input-key", db);
	struct stat sb;
	ok(stat(kp, &sb) == 0 && (sb.st_mode & 0777) == 0600, "... in <db>.input-key, mode 0600");
	ok(confirm_key_load(st, k2, &e) == 0 && memcmp(k1, k2, sizeof k1) == 0, "... and read back the same");
	chmod(kp, 0644);
	ok(confirm_key_load(st, k2, &e) < 0 && strstr(e.msg, "chmod 600"), "a key file others may read is refused (%s)", e.msg);
	world_store_close(st);
	unlink(kp);
	char wal[400];
	snprintf(wal, sizeof wal, "%s-wal", db); unlink(wal);
	snprintf(wal, sizeof wal, "%s-shm", db); unlink(wal);
	unlink(db);
	rmdir(dir);

	free(s1);
	free(s1b);
	json_decref(d); json_decref(d2); json_decref(all); json_decref(noroots); json_decref(nosamp); json_decref(part);
	json_decref(model); json_decref(decl); json_decref(badans); json_decref(notobj);
	return done_testing();
}
