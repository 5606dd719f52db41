/* tests/coordinator/test_denial.c: a call the seccomp filter stops commits
 * its evidence and nothing else (issue 25, item 4; coordinator.h, struct
 * coord_denial). tests/supervisor/stub-interp is the store's interpreter:
 * `denied` calls keyctl in a pure run, `denied-finish` plans an effect (the
 * broker runs it) and calls keyctl in the finish phase, `echo` is the
 * control. For each denial: the call fails WX_DENIED_SYSCALL, the log is
 * unchanged, the denial record (world/invocation-denial/v1) holds the
 * invocation, episode, skill, source, input and error.denial with the
 * number from <sys/syscall.h>, the journal's invocation outcome is "failed"
 * naming it, record and input are members of the episode, its bytes (not a
 * call) count against the episode quota, on_denial is told once with the
 * same facts, no intent is left open and the store scans clean. The finish
 * denial also names the effect that ran, whose own outcome is kept. A retry
 * of the same task id is denied again and gives the same record (content
 * addressed). The control commits a log entry, writes no denial record and
 * tells on_denial nothing. */
#include <sqlite3.h>
#include <sys/syscall.h>
#include "tests/coordinator/ctest.h"
#include "broker/effect.h"
#include "store/scan.h"
#include "supervisor/supervisor.h"
#include "tests/tap.h"

void coord_set_handlers(struct coordinator *c, const struct broker_handler_entry *table); /* coordinator.c test hook */

static int handler_calls;
static int h_echo(const struct broker_handler_ctx *ctx, const json_t *payload, json_t **out, struct world_err *err)
{
	(void)ctx;
	(void)err;
	handler_calls++;
	*out = json_pack("{s:O}", "echo", payload);
	return 0;
}
static const struct broker_handler_entry handlers[] = { { "Test.Echo", h_echo }, { NULL, NULL } };
static struct ctest T;
#define DECL "[{\"effect\":\"Test.Echo\",\"scope\":\"s\",\"cost\":1}]"

/* what on_denial was told, copied (its strings live only during the call) */
static int told;
static char told_inv[256], told_ep[80], told_skill[80], told_ref[WORLD_REF_SIZE], told_sys[48];
static int told_nr;
static void on_denial(void *ctx, const struct coord_denial *d)
{
	(void)ctx;
	told++;
	snprintf(told_inv, sizeof told_inv, "%s", d->invocation_id);
	snprintf(told_ep, sizeof told_ep, "%s", d->episode);
	snprintf(told_skill, sizeof told_skill, "%s", d->skill_id);
	snprintf(told_ref, sizeof told_ref, "%s", d->record_ref);
	snprintf(told_sys, sizeof told_sys, "%s", d->call->syscall);
	told_nr = d->call->nr;
}

static int call(struct coordinator *c, const char *cred, const char *skill, const char *task,
                struct coord_result *r, struct world_err *e)
{
	struct coord_session *s;
	if (coord_session_open(c, cred, &s, e) < 0) return -1;
	struct coord_call cl = { .session = s, .channel = "cli", .skill_id = skill, .task_id = task, .args = "{}",
		                 .args_len = 2 };
	int rc = coord_call(c, &cl, r, e);
	coord_session_free(s);
	return rc;
}

static int kind_count(const char *kind)
{
	int n = 0;
	sqlite3_stmt *q;
	if (sqlite3_prepare_v2(world_store_db(T.st), "SELECT count(*) FROM objects WHERE semantic_id = ?", -1, &q, NULL) ==
	    SQLITE_OK) {
		sqlite3_bind_text(q, 1, kind, -1, SQLITE_STATIC);
		if (sqlite3_step(q) == SQLITE_ROW) n = sqlite3_column_int(q, 0);
		sqlite3_finalize(q);
	}
	return n;
}

static json_t *record(const char *ref, char kind[64])
{
	struct world_object o;
	struct world_err e;
	if (world_object_get(T.st, ref, &o, &e) < 0) return NULL;
	snprintf(kind, 64, "%s", o.semantic_id);
	json_t *v = json_loadb((const char *)o.payload, o.len, 0, NULL);
	world_object_free(&o);
	return v;
}

static const char *js(const json_t *o, const char *k) { return json_string_value(json_object_get(o, k)); }

/* One denied call: everything the header says. */
static void check_denied(struct coordinator *c, const char *cred, const char *skill, const char *task,
                         const char *where, char ref_out[WORLD_REF_SIZE])
{
	char inv[160];
	snprintf(inv, sizeof inv, "cli:ep-d:%s", task);
	long long before = ctest_log_len(&T), calls0, bytes0, calls1, bytes1;
	struct world_err e = { 0, "" };
	if (world_episode_usage_get(T.st, "ep-d", &calls0, &bytes0, &e) < 0) ctest_die("usage", &e);
	int told0 = told;
	struct coord_result r;
	int rc = call(c, cred, skill, task, &r, &e);
	ok(rc < 0 && e.code == WX_DENIED_SYSCALL && strcmp(e.msg, "syscall denied: keyctl; capsule killed") == 0,
	   "%s: fails WX_DENIED_SYSCALL naming keyctl (%d: %s)", where, e.code, e.msg);
	is_int(ctest_log_len(&T), before, "%s: the log is unchanged", where);
	ok(r.denial_ref[0] != 0, "%s: the result names its denial record %s", where, r.denial_ref);
	snprintf(ref_out, WORLD_REF_SIZE, "%s", r.denial_ref);
	char kind[64] = "";
	json_t *rec = r.denial_ref[0] ? record(r.denial_ref, kind) : NULL;
	json_t *er = json_object_get(rec, "error"), *dn = json_object_get(er, "denial");
	is_str(kind, "world/invocation-denial/v1", "%s: the record's kind", where);
	ok(rec && strcmp(js(rec, "invocationId"), inv) == 0 && strcmp(js(rec, "episodeId"), "ep-d") == 0 &&
	       strcmp(js(rec, "skillId"), skill) == 0 && js(rec, "transitionFn") && js(rec, "interpreter") &&
	       strcmp(js(rec, "interpreter"), T.interp.ref) == 0 && js(rec, "input"),
	   "%s: the record names invocation %s, episode, skill %s, source, interpreter and input", where, inv, skill);
	ok(json_is_object(dn) && strcmp(js(er, "class"), "SyscallDenied") == 0 &&
	       strcmp(js(er, "message"), e.msg) == 0 && strcmp(js(dn, "syscall"), "keyctl") == 0 &&
	       json_integer_value(json_object_get(dn, "nr")) == SYS_keyctl && strcmp(js(dn, "arch"), "x86_64") == 0 &&
	       !json_object_get(dn, "ioctl"),
	   "%s: error {class SyscallDenied, the message, denial {keyctl, nr %d, x86_64}}", where, (int)SYS_keyctl);
	struct world_journal_row jr;
	ok(world_journal_find(T.st, "invocation", inv, &jr, &e) == 0 && strcmp(jr.status, "failed") == 0 &&
	       strcmp(jr.outcome_ref, r.denial_ref) == 0 && rec && strcmp(jr.intent_ref, js(rec, "input")) == 0,
	   "%s: the journal's invocation outcome is \"failed\", naming the record; its intent the input (%s)", where,
	   jr.status);
	int m1 = 0, m2 = 0;
	ok(rec && world_episode_has_object(T.st, "ep-d", r.denial_ref, &m1, &e) == 0 &&
	       world_episode_has_object(T.st, "ep-d", js(rec, "input"), &m2, &e) == 0 && m1 && m2,
	   "%s: record and input are members of the episode", where);
	if (world_episode_usage_get(T.st, "ep-d", &calls1, &bytes1, &e) < 0) ctest_die("usage", &e);
	ok(calls1 == calls0 && bytes1 > bytes0, "%s: its bytes count against the episode quota, not a call (%lld -> %lld calls, %lld -> %lld bytes)",
	   where, calls0, calls1, bytes0, bytes1);
	ok(told == told0 + 1 && strcmp(told_inv, inv) == 0 && strcmp(told_ep, "ep-d") == 0 &&
	       strcmp(told_skill, skill) == 0 && strcmp(told_ref, r.denial_ref) == 0 && strcmp(told_sys, "keyctl") == 0 &&
	       told_nr == SYS_keyctl,
	   "%s: on_denial told once: %s %s %s %s nr %d", where, told_inv, told_ep, told_skill, told_sys, told_nr);
	is_int(ctest_open_intents(&T), 0, "%s: no journal intent left open", where);
	ok(ctest_scan_clean(&T), "%s: the store scans clean", where);
	json_decref(rec);
	coord_result_free(&r);
}

int main(void)
{
	const char *b = getenv("top_builddir");
	char stub[4096];
	snprintf(stub, sizeof stub, "%s/tests/supervisor/stub-interp", b ? b : ".");
	if (setenv("AILANG_LITE", stub, 1) < 0) {
		perror("setenv");
		return 99;
	}
	ctest_init(&T, "denial");
	ctest_register(&T, "d.pure", "denied\n", "[]", "null", NULL);
	ctest_register(&T, "d.finish", "denied-finish\n", DECL, "null", NULL);
	ctest_register(&T, "d.echo", "echo\n", "[]", "null", NULL);
	char cred[65];
	const char *grants[] = { "Test.Echo=s:10", NULL };
	ctest_session(&T, "ep-d", grants, 3600, cred);
	struct coord_config cfg = { .store = T.st, .written_by = "test/denial", .on_denial = on_denial };
	sup_limits_default(&cfg.limits);
	struct world_err e = { 0, "" };
	struct coordinator *c = coord_new(&cfg, &e);
	if (!c) ctest_die("coord_new", &e);
	coord_set_handlers(c, handlers);

	/* control first: an allowed call of the same interpreter */
	struct coord_result r;
	long long before = ctest_log_len(&T);
	int rc = call(c, cred, "d.echo", "ok1", &r, &e);
	ok(rc == 0 && ctest_log_len(&T) == before + 1 && r.denial_ref[0] == 0,
	   "control: an allowed call commits one entry and names no denial (%s)", rc ? e.msg : "ok");
	coord_result_free(&r);
	ok(told == 0 && kind_count("world/invocation-denial/v1") == 0, "control: no denial record, on_denial not told");

	char ref1[WORLD_REF_SIZE], ref2[WORLD_REF_SIZE], ref3[WORLD_REF_SIZE];
	check_denied(c, cred, "d.pure", "p1", "pure", ref1);

	handler_calls = 0;
	check_denied(c, cred, "d.finish", "f1", "finish phase", ref2);
	is_int(handler_calls, 1, "finish phase: the planned effect ran before the denial");
	char kind[64];
	json_t *rec = record(ref2, kind);
	json_t *effs = json_object_get(rec, "effects");
	const char *eff = json_string_value(json_array_get(effs, 0));
	char kind2[64] = "";
	json_t *er = eff ? record(eff, kind2) : NULL;
	ok(json_array_size(effs) == 1 && strcmp(kind2, "world/effect-record/v1") == 0,
	   "finish phase: the denial record names the effect record that ran (%s)", kind2);
	struct world_journal_row jr;
	ok(world_journal_find(T.st, "effect", "cli:ep-d:f1#e1", &jr, &e) == 0 && strcmp(jr.status, "succeeded") == 0,
	   "finish phase: the effect's own outcome is kept (%s)", jr.status);
	json_decref(er);
	json_decref(rec);

	/* a retry of a denied task id is run again (it was not committed) */
	check_denied(c, cred, "d.pure", "p1", "retry of p1", ref3);
	is_str(ref3, ref1, "retry: the same denial gives the same record (content addressed)");
	is_int(kind_count("world/invocation-denial/v1"), 2, "two distinct denial records in all");

	coord_free(c);
	ctest_fini(&T);
	return done_testing();
}
