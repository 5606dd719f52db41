/* cli/verbs_call.c: the worldd verbs of the broker and the coordinator (see
 * cli/verbs.h): `call` (one invocation, committed), `session mint` /
 * `session list` / `session revoke`, and `journal` (intents without an
 * outcome; denied calls). Argument parsing only: the work is in coordinator/ and broker/. */
#include "cli/store_uri.h"
#include "broker/grants.h"
#include "broker/session.h"
#include "cli/attended.h"
#include "cli/flags.h"
#include "cli/verbs.h"
#include "coordinator/coordinator.h"
#include "common/file.h"
#include "store/store.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* One byte over the coordinator's 1 MiB cap, so that it is the coordinator
 * that refuses an over-long argument text, with the same words for every caller. */
#define ARGS_READ_MAX (((size_t)1 << 20) + 1)

/* ---- call ---- */

static const char call_help[] =
    "usage: worldd call --store DB --session CRED [--workspace-root DIR --tool-ailang-bin BIN]\n"
    "                   [--examples-dir DIR] [--task ID] [--wait-lock SECONDS]\n"
    "                   SKILL (--json ARGS | --json-file FILE|-)\n"
    "\n"
    "One invocation of the published transition SKILL, locally, under the session\n"
    "whose credential is CRED: the arguments are canonicalised, the transition runs\n"
    "in a capsule under the interpreter it was published with (taken from the\n"
    "store's archive and re-hashed), its planned effects go through the broker, and\n"
    "input, plan, output, invocation record, world and log entry are committed in\n"
    "one transaction. Prints the output object (with its world block) on stdout.\n"
    "A task id already committed in the episode prints the committed output again\n"
    "(nothing re-runs); reused with other arguments it is refused.\n"
    "\n"
    "  --store DB             the store (writer: the daemon must not hold it)\n"
    "  --session CRED         the session credential (64 hex, from worldd session mint)\n"
    "  --workspace-root DIR   worktrees live at DIR/EPISODE (Workspace.*, Ailang.* effects)\n"
    "  --tool-ailang-bin BIN  the tool interpreter for Ailang.* effects (archived and pinned)\n"
    "  --examples-dir DIR     examples searched by Ailang.Discover (default: none)\n"
    "  --task ID              task id, [A-Za-z0-9._-]{1,128} (default: a fresh random one)\n"
    "  --json ARGS            the arguments, a JSON object (at most 1 MiB)\n"
    "  --json-file FILE|-     the arguments from a file or standard input\n"
    WORLDD_WAIT_LOCK_HELP
    "\n"
    "On stderr, one line: committed entry N (invocation ID) or replayed entry N,\n"
    "followed by `; effect ID failed: REASON` when the handler of an effect failed\n"
    "(the reason is in the effect's record and the output's world block too).\n"
    "SIGINT (^C), SIGTERM, SIGHUP: the capsules are killed, their cgroups removed,\n"
    "nothing is committed; one line `interrupted by SIG...`, exit 130, 143, 129.\n"
    "\n"
    "exit codes:\n"
    "  0  committed (or the task's committed result replayed)\n"
    "  2  usage\n"
    "  3  bad input: arguments not a JSON object, over 1 MiB, malformed task id\n"
    "  4  not found: store (nothing is created) or argument file absent\n"
    "  5  another writer's transaction outlasted --wait-lock (default 5 s)\n"
    "  8  task id already used with other arguments, in flight, or indeterminate\n"
    "  9  I/O error\n"
    " 10-18  the run failed (capsule setup, deadline, output cap, not an object,\n"
    "        interpreter, hash mismatch, capacity, syscall denied, protocol); nothing committed\n"
    " 21  refused before execution (unknown or invisible skill, no handler); nothing committed\n"
    " 22  session credential unknown, malformed or expired\n"
    " 23  the plan broke a plan law of docs/design.md §5.2 (named); nothing committed\n"
    " 27  committed, but an effect failed (its handler's reason on stderr)\n"
    " 129, 130, 143  interrupted by SIGHUP, SIGINT, SIGTERM; nothing committed\n";

/* A committed output whose world block has a failed effect: WX_EFFECT_FAILED
 * and "; effect ID failed: REASON" in why; else 0. */
static int failed_effect(const char *output, char *why, size_t len)
{
	json_t *o = json_loads(output, 0, NULL);
	json_t *effs = json_object_get(json_object_get(o, "world"), "effects"), *x;
	size_t i;
	int rc = 0;
	json_array_foreach(effs, i, x) {
		if (strcmp(json_string_value(json_object_get(x, "status")) ?: "", "failed") != 0) continue;
		const char *r = json_string_value(json_object_get(x, "failure"));
		snprintf(why, len, "; effect %s failed: %s", json_string_value(json_object_get(x, "id")) ?: "?",
		         r ? r : "(no reason recorded)");
		rc = WX_EFFECT_FAILED;
		break;
	}
	json_decref(o);
	return rc;
}

static int verb_call(int argc, char **argv)
{
	const char *verb = "call";
	struct worldd_flag f[] = {
		{ .name = "--store", .has_value = 1 }, { .name = "--session", .has_value = 1 },
		{ .name = "--workspace-root", .has_value = 1 }, { .name = "--tool-ailang-bin", .has_value = 1 },
		{ .name = "--examples-dir", .has_value = 1 }, { .name = "--task", .has_value = 1 },
		{ .name = "--json", .has_value = 1 }, { .name = "--json-file", .has_value = 1 },
		{ .name = "--wait-lock", .has_value = 1 }, { .name = NULL },
	};
	const char *pos[1];
	int npos, rc = worldd_parse_flags(verb, argc, argv, f, pos, 1, &npos);
	if (rc) return rc;
	const char *store = f[0].value, *cred = f[1].value, *ws = f[2].value, *tool = f[3].value, *ex = f[4].value,
	           *task = f[5].value, *json = f[6].value, *jfile = f[7].value;
	if (!store) return worldd_usage(verb, "--store DB is required");
	if (!cred) return worldd_usage(verb, "--session CRED is required");
	double wait = 0;
	if ((rc = worldd_wait_lock(verb, f[8].value, &wait))) return rc;
	if (npos != 1) return worldd_usage(verb, "give exactly one SKILL");
	if (!json == !jfile) return worldd_usage(verb, "give exactly one of --json ARGS or --json-file FILE|-");
	if ((ws == NULL) != (tool == NULL) && tool && !ws)
		return worldd_usage(verb, "--tool-ailang-bin needs --workspace-root");
	struct world_err e = { 0 };
	char *args = NULL;
	size_t args_len = 0;
	if (jfile && (rc = worldd_read_input(verb, "--json-file", jfile, ARGS_READ_MAX, &args, &args_len))) return rc;
	struct world_store *st = NULL;
	struct coordinator *c = NULL;
	struct coord_session *s = NULL;
	struct coord_result res = { 0 };
	/* ^C, SIGTERM, SIGHUP: the capsules are killed, the groups removed,
	 * exit 130/143/129 with one line (the open transaction is never
	 * committed: SQLite rolls it back, PostgreSQL's server when the
	 * connection closes). */
	sup_exit_on_interrupt("worldd call");
	if (worldd_store_open(store, WORLD_STORE_WRITER | WORLD_STORE_EXISTING, wait, &st, &e) < 0) goto fail;
	struct coord_config cfg = { .store = st, .workspace_root = ws, .tool_ailang_bin = tool, .examples_dir = ex,
		                    .written_by = "worldd call/" PACKAGE_VERSION };
	sup_limits_default(&cfg.limits);
	if (!(c = coord_new(&cfg, &e))) goto fail;
	if (coord_session_open(c, cred, &s, &e) < 0) {
		if (e.code == WX_USAGE || e.code == WX_NOT_FOUND) e.code = WX_SESSION;
		goto fail;
	}
	struct coord_call call = { .session = s, .channel = "cli", .skill_id = pos[0], .task_id = task,
		                   .args = json ? json : args, .args_len = json ? strlen(json) : args_len };
	if (coord_call(c, &call, &res, &e) < 0) goto fail;
	printf("%s\n", res.output);
	char why[1200] = "";
	rc = failed_effect(res.output, why, sizeof why); /* stdout is checked for every verb in cli/worldd.c */
	fprintf(stderr, "worldd call: %s entry %lld (invocation %s)%s\n", res.replayed ? "replayed" : "committed",
	        res.entry_index, res.invocation_id, why);
	goto done;
fail:
	rc = worldd_fail(verb, &e);
done:
	coord_result_free(&res);
	coord_session_free(s);
	coord_free(c);
	world_store_close(st);
	free(args);
	return rc;
}

/* ---- session mint ---- */

static const char mint_help[] =
    "usage: worldd session mint --store DB --episode EP --grant EFFECT=SCOPE:BUDGET [--grant ...] [--ttl S]\n"
    "                           [--wait-lock SECONDS]\n"
    "\n"
    "Mints a session credential for episode EP (^[a-z0-9][a-z0-9-]{0,63}$) with the\n"
    "grants given (each split at the first '=' and the last ':'; budget 0..2^53).\n"
    "Attended: refused with CI or GITHUB_ACTIONS set, without a controlling\n"
    "terminal, or when standard input is not that terminal; asks on the terminal\n"
    "  Confirm mint for episode EP (N grant(s), expiry +Ss) with a session credential? [y/N]\n"
    "and proceeds only on y or yes. Prints the credential (64 lowercase hex) once,\n"
    "on stdout; the store keeps only its sha256. On stderr: the session id and expiry.\n"
    "A refused attended step prints `STOP fence=NAME[ reason=R]` and one detail line.\n"
    "\n"
    "  --ttl S   lifetime in seconds (default 3600, at most 31536000); the session\n"
    "            is live while now < expires_at\n"
    WORLDD_WAIT_LOCK_HELP
    "\n"
    "exit codes: 0 minted, 2 usage (bad episode, grant or ttl), 4 no store at DB (nothing created),\n"
    "  5 store busy, 9 I/O, 20 attended step refused (nothing written)\n";

static int verb_session_mint(int argc, char **argv)
{
	const char *verb = "session mint";
	struct worldd_flag f[] = { { .name = "--store", .has_value = 1 }, { .name = "--episode", .has_value = 1 },
		                   { .name = "--grant", .has_value = 1, .multi = 1 }, { .name = "--ttl", .has_value = 1 },
		                   { .name = "--wait-lock", .has_value = 1 }, { .name = NULL } };
	const char *pos[1];
	int npos, rc = worldd_parse_flags(verb, argc, argv, f, pos, 0, &npos);
	if (rc) return rc;
	if (!f[0].value) return worldd_usage(verb, "--store DB is required");
	if (!f[1].value) return worldd_usage(verb, "--episode EP is required");
	if (!f[2].nvalues) return worldd_usage(verb, "at least one --grant EFFECT=SCOPE:BUDGET is required");
	if (!broker_episode_valid(f[1].value))
		return worldd_usage(verb, "episode '%s' must match ^[a-z0-9][a-z0-9-]{0,63}$", f[1].value);
	double wait = 0;
	if ((rc = worldd_wait_lock(verb, f[4].value, &wait))) return rc;
	long long ttl = 3600;
	if (f[3].value) {
		char *end;
		errno = 0;
		ttl = strtoll(f[3].value, &end, 10);
		if (!*f[3].value || *end || errno || ttl < 1 || ttl > BROKER_TTL_MAX)
			return worldd_usage(verb, "--ttl '%s' must be 1 to %lld seconds", f[3].value, BROKER_TTL_MAX);
	}
	struct broker_grant g[WORLDD_FLAG_MAX_VALUES];
	struct world_err e;
	for (int i = 0; i < f[2].nvalues; i++)
		if (broker_grant_parse(f[2].values[i], &g[i], &e) < 0) return worldd_usage(verb, "%s", e.msg);
	/* Open (and so judge) the store before asking: a question we then
	 * cannot act on wastes the operator's attention. Daemons may be serving
	 * it: the mint is one short write they see on their next request. */
	struct world_store *st;
	if (worldd_store_open(f[0].value, WORLD_STORE_WRITER | WORLD_STORE_EXISTING, wait, &st, &e) < 0) return worldd_fail(verb, &e);
	char question[256];
	snprintf(question, sizeof question,
	         "Confirm mint for episode %s (%d grant(s), expiry +%llds) with a session credential? [y/N] ", f[1].value,
	         f[2].nvalues, ttl);
	struct attended_stop stop;
	if (attended_confirm_yes(question, &stop) < 0) {
		world_store_close(st);
		return attended_report(stderr, &stop);
	}
	char cred[BROKER_CREDENTIAL_LEN + 1], id[65];
	long long exp;
	rc = broker_session_mint(st, f[1].value, g, (size_t)f[2].nvalues, ttl, cred, id, &exp, &e);
	world_store_close(st);
	if (rc < 0) return worldd_fail(verb, &e);
	printf("%s\n", cred);
	explicit_bzero(cred, sizeof cred);
	fprintf(stderr, "worldd session mint: session %s for episode %s, expires_at %lld (+%llds)\n", id, f[1].value, exp,
	        ttl);
	return WX_OK;
}

/* ---- session list / revoke ---- */

static const char list_help[] =
    "usage: worldd session list --store DB [--json]\n"
    "\n"
    "Every session: its id (hex sha256 of the credential; the credential itself is\n"
    "never stored), episode, grants and expiry, and per grant what the episode has\n"
    "spent on that effect and scope and what remains of the budget (spent budget\n"
    "belongs to the episode: it survives revoke and a new mint). Text: one line\n"
    "per session,\n"
    "  ID episode=EP expires_at=UNIX live|expired\n"
    "    grants=EFFECT=SCOPE:BUDGET/spent=S/remaining=R,...\n"
    "--json: one JSON array of {id, episode, grants, expires_at, created_at, live};\n"
    "each grant is {effect, scope, budget, spent, remaining}.\n"
    "Opens the store read-only (works while the daemon runs).\n"
    "\n"
    "exit codes: 0 ok, 2 usage, 4 store absent, 6 not a World store, 9 I/O\n";

struct list_ctx { int json; json_t *arr; long long now; struct world_store *st; struct world_err *e; int failed; };

/* Each grant of a session gains what its episode has spent on that effect
 * and scope (world_journal_spent, as the broker decides) and what remains. */
static int list_one(void *ctx, const struct world_session *s)
{
	struct list_ctx *l = ctx;
	const char *id = s->credential_hash + 7;
	int live = l->now < s->expires_at;
	json_error_t je;
	json_t *g = json_loads(s->grants_json, 0, &je);
	size_t i;
	json_t *x;
	json_array_foreach(g, i, x) {
		long long spent = 0, budget = (long long)json_integer_value(json_object_get(x, "budget"));
		if (world_journal_spent(l->st, s->episode, json_string_value(json_object_get(x, "effect")),
		                        json_string_value(json_object_get(x, "scope")), &spent, l->e) < 0) {
			json_decref(g);
			l->failed = 1;
			return 1;
		}
		json_object_set_new(x, "spent", json_integer((json_int_t)spent));
		json_object_set_new(x, "remaining", json_integer((json_int_t)(budget > spent ? budget - spent : 0)));
	}
	if (l->json) {
		json_array_append_new(l->arr, json_pack("{s:s,s:s,s:o,s:I,s:I,s:b}", "id", id, "episode", s->episode,
		                                        "grants", g ? g : json_array(), "expires_at",
		                                        (json_int_t)s->expires_at, "created_at", (json_int_t)s->created_at,
		                                        "live", live));
		return 0;
	}
	printf("%s episode=%s expires_at=%lld %s grants=", id, s->episode, s->expires_at, live ? "live" : "expired");
	json_array_foreach(g, i, x)
		printf("%s%s=%s:%lld/spent=%lld/remaining=%lld", i ? "," : "",
		       json_string_value(json_object_get(x, "effect")), json_string_value(json_object_get(x, "scope")),
		       (long long)json_integer_value(json_object_get(x, "budget")),
		       (long long)json_integer_value(json_object_get(x, "spent")),
		       (long long)json_integer_value(json_object_get(x, "remaining")));
	printf("\n");
	json_decref(g);
	return 0;
}

static int verb_session_list(int argc, char **argv)
{
	const char *verb = "session list";
	struct worldd_flag f[] = { { .name = "--store", .has_value = 1 }, { .name = "--json" }, { .name = NULL } };
	const char *pos[1];
	int npos, rc = worldd_parse_flags(verb, argc, argv, f, pos, 0, &npos);
	if (rc) return rc;
	if (!f[0].value) return worldd_usage(verb, "--store DB is required");
	struct world_err e;
	struct world_store *st;
	if (worldd_store_open(f[0].value, WORLD_STORE_READER, 0, &st, &e) < 0) return worldd_fail(verb, &e);
	struct list_ctx l = { .json = f[1].value != NULL, .arr = json_array(), .now = (long long)time(NULL), .st = st,
		              .e = &e };
	if (world_session_list(st, list_one, &l, &e) < 0 || l.failed) {
		world_store_close(st);
		json_decref(l.arr);
		return worldd_fail(verb, &e);
	}
	world_store_close(st);
	if (l.json) {
		char *t = json_dumps(l.arr, JSON_COMPACT | JSON_SORT_KEYS);
		printf("%s\n", t ? t : "[]");
		free(t);
	}
	json_decref(l.arr);
	return WX_OK;
}

static const char revoke_help[] =
    "usage: worldd session revoke --store DB (ID | --episode EP) [--wait-lock SECONDS]\n"
    "\n"
    "Deletes one session by its id (as worldd session list prints it), or every\n"
    "session of an episode. The episode's spent budget is kept: a new session of\n"
    "the same episode continues from it. Prints `revoked N session(s)`.\n"
    "An id or episode that matches nothing is refused and nothing changes.\n"
    WORLDD_WAIT_LOCK_HELP
    "\n"
    "exit codes: 0 revoked, 2 usage, 4 no such session or no store at DB (nothing created),\n"
    "  5 store busy, 9 I/O\n";

static int verb_session_revoke(int argc, char **argv)
{
	const char *verb = "session revoke";
	struct worldd_flag f[] = { { .name = "--store", .has_value = 1 }, { .name = "--episode", .has_value = 1 },
		                   { .name = "--wait-lock", .has_value = 1 }, { .name = NULL } };
	const char *pos[1];
	int npos, rc = worldd_parse_flags(verb, argc, argv, f, pos, 1, &npos);
	if (rc) return rc;
	if (!f[0].value) return worldd_usage(verb, "--store DB is required");
	if ((npos == 1) == (f[1].value != NULL)) return worldd_usage(verb, "give exactly one of ID or --episode EP");
	char hash[WORLD_REF_SIZE] = "";
	if (npos == 1) {
		snprintf(hash, sizeof hash, "sha256:%s", pos[0]);
		if (!world_ref_valid(hash)) return worldd_usage(verb, "session id '%s' is not 64 lowercase hex digits", pos[0]);
	} else if (!broker_episode_valid(f[1].value)) {
		return worldd_usage(verb, "episode '%s' must match ^[a-z0-9][a-z0-9-]{0,63}$", f[1].value);
	}
	double wait = 0;
	if ((rc = worldd_wait_lock(verb, f[2].value, &wait))) return rc;
	struct world_err e;
	struct world_store *st;
	if (worldd_store_open(f[0].value, WORLD_STORE_WRITER | WORLD_STORE_EXISTING, wait, &st, &e) < 0) return worldd_fail(verb, &e);
	int n = 0;
	rc = world_session_revoke(st, npos ? hash : NULL, npos ? NULL : f[1].value, &n, &e);
	world_store_close(st);
	if (rc < 0) return worldd_fail(verb, &e);
	printf("revoked %d session(s)\n", n);
	return WX_OK;
}

/* ---- journal ---- */

static const char journal_help[] =
    "usage: worldd journal --store DB --indeterminate [--json]\n"
    "       worldd journal --store DB --denials [--since WHEN] [--episode EP] [--json]\n"
    "\n"
    "--indeterminate lists every journal intent without an outcome: an effect (or\n"
    "a call) that may or may not have happened because the process died between\n"
    "the intent and its outcome. They are never re-run and never closed silently;\n"
    "the same task id is refused while its effect is indeterminate (a daemon that\n"
    "lost the store after an effect holds its outcome and writes it when the store\n"
    "answers; what is left is settled by `worldd journal settle ID`). One line each:\n"
    "  indeterminate intent=ID kind=effect|invocation subject=SUBJECT ref=REF\n"
    "then `N indeterminate intent(s)`. --json: a JSON array of {id, kind, subject, ref}.\n"
    "\n"
    "--denials lists the calls the capsule's seccomp filter stopped, oldest first,\n"
    "from their committed denial records (world/invocation-denial/v1, each\n"
    "re-hashed on read; docs/security.md, \"Where denials are recorded\"). One line each:\n"
    "  denied at=TIME syscall=NAME nr=N arch=ARCH [ioctl=NAME|- ioctl_cmd=0xHEX]\n"
    "         skill=ID episode=EP invocation_id=ID record=REF\n"
    "(on one line) then `N denial(s)`. --json: a JSON array of {at, record,\n"
    "invocationId, episodeId, skillId, syscall, nr, arch, ioctl?, message}.\n"
    "  --since WHEN   only denials recorded at or after WHEN: unix seconds,\n"
    "                 YYYY-MM-DDTHH:MM:SSZ (UTC), or an age: N followed by s, m, h\n"
    "                 or d (30m = the last 30 minutes)\n"
    "  --episode EP   only that episode's\n"
    "\n"
    "Both open the store read-only, so they work while daemons serve it.\n"
    "\n"
    "exit codes: 0 ok (whether or not any are listed), 2 usage, 4 store absent, 6 schema,\n"
    "            7 a denial record that does not re-hash, 9 I/O\n";

struct jctx {
	int json;
	json_t *arr;
	long long n;
	struct world_store *st;
	const char *episode;
	struct world_err err;
	int failed;
};

static int journal_one(void *ctx, long long id, const char *kind, const char *subject, const char *ref)
{
	struct jctx *j = ctx;
	j->n++;
	if (j->json)
		json_array_append_new(j->arr, json_pack("{s:I,s:s,s:s,s:s?}", "id", (json_int_t)id, "kind", kind, "subject",
		                                        subject, "ref", ref));
	else
		printf("indeterminate intent=%lld kind=%s subject=%s ref=%s\n", id, kind, subject, ref ? ref : "-");
	return 0;
}

/* A field of a denial record for a key=value line: printable ASCII without
 * spaces or '=', so the line stays one line of keys and values. */
static void kv_safe(char *out, size_t len, const char *s)
{
	size_t k = 0;
	for (; s && *s && k + 1 < len; s++)
		out[k++] = (*s > ' ' && *s < 0x7f && *s != '=') ? *s : '?';
	if (!k && k + 1 < len) out[k++] = '-';
	out[k] = 0;
}

static int denial_one(void *ctx, const char *ref, long long at)
{
	struct jctx *j = ctx;
	struct world_object o;
	if (world_object_get(j->st, ref, &o, &j->err) < 0) {
		j->failed = 1;
		return 1;
	}
	json_t *r = json_loadb((const char *)o.payload, o.len, 0, NULL);
	world_object_free(&o);
	json_t *er = json_object_get(r, "error"), *dn = json_object_get(er, "denial");
	const char *ep = json_string_value(json_object_get(r, "episodeId"));
	if (!json_is_object(dn) || !ep) {
		json_decref(r);
		j->failed = 1;
		werr(&j->err, WX_INTEGRITY, "denial record %s: no error.denial or episodeId", ref);
		return 1;
	}
	if (j->episode && strcmp(ep, j->episode) != 0) {
		json_decref(r);
		return 0;
	}
	j->n++;
	char when[32] = "-";
	time_t t = (time_t)at;
	struct tm tm;
	if (gmtime_r(&t, &tm)) strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
	json_t *io = json_object_get(dn, "ioctl");
	if (j->json) {
		json_t *v = json_pack("{s:s,s:s,s:O,s:O,s:O,s:O,s:O,s:O,s:O}", "at", when, "record", ref, "invocationId",
		                      json_object_get(r, "invocationId"), "episodeId", json_object_get(r, "episodeId"),
		                      "skillId", json_object_get(r, "skillId"), "syscall", json_object_get(dn, "syscall"),
		                      "nr", json_object_get(dn, "nr"), "arch", json_object_get(dn, "arch"), "message",
		                      json_object_get(er, "message"));
		if (v && io) json_object_set(v, "ioctl", io);
		if (v) json_array_append_new(j->arr, v);
	} else {
		char sc[64], arch[32], sk[160], e[80], inv[300], ion[48] = "", iol[120] = "";
		kv_safe(sc, sizeof sc, json_string_value(json_object_get(dn, "syscall")));
		kv_safe(arch, sizeof arch, json_string_value(json_object_get(dn, "arch")));
		kv_safe(sk, sizeof sk, json_string_value(json_object_get(r, "skillId")));
		kv_safe(e, sizeof e, ep);
		kv_safe(inv, sizeof inv, json_string_value(json_object_get(r, "invocationId")));
		if (io) {
			char cmd[24];
			kv_safe(ion, sizeof ion, json_string_value(json_object_get(io, "name")));
			kv_safe(cmd, sizeof cmd, json_string_value(json_object_get(io, "cmd")));
			snprintf(iol, sizeof iol, " ioctl=%s ioctl_cmd=%s", ion, cmd);
		}
		printf("denied at=%s syscall=%s nr=%lld arch=%s%s skill=%s episode=%s invocation_id=%s record=%s\n", when, sc,
		       (long long)json_integer_value(json_object_get(dn, "nr")), arch, iol, sk, e, inv, ref);
	}
	json_decref(r);
	return 0;
}

/* --since: unix seconds, YYYY-MM-DDTHH:MM:SSZ, or an age (Ns, Nm, Nh, Nd). */
static int parse_since(const char *verb, const char *s, long long *out)
{
	struct tm tm;
	memset(&tm, 0, sizeof tm);
	const char *end = strptime(s, "%Y-%m-%dT%H:%M:%SZ", &tm);
	if (end && !*end) {
		*out = (long long)timegm(&tm);
		return 0;
	}
	char *e;
	errno = 0;
	long long v = strtoll(s, &e, 10);
	if (e != s && errno == 0 && v >= 0 && s[0] >= '0' && s[0] <= '9') {
		long long mul = !*e ? 0 : strcmp(e, "s") == 0 ? 1 : strcmp(e, "m") == 0 ? 60 : strcmp(e, "h") == 0 ? 3600
		                : strcmp(e, "d") == 0 ? 86400 : -1;
		if (mul == 0) { *out = v; return 0; }
		if (mul > 0 && v <= 100LL * 365 * 86400 / mul) { *out = (long long)time(NULL) - v * mul; return 0; }
	}
	return worldd_usage(verb, "--since '%s': want unix seconds, YYYY-MM-DDTHH:MM:SSZ or an age like 30m, 2h, 7d", s);
}

static int verb_journal(int argc, char **argv)
{
	const char *verb = "journal";
	struct worldd_flag f[] = { { .name = "--store", .has_value = 1 }, { .name = "--indeterminate" },
		                   { .name = "--json" }, { .name = "--denials" }, { .name = "--since", .has_value = 1 },
		                   { .name = "--episode", .has_value = 1 }, { .name = NULL } };
	const char *pos[1];
	int npos, rc = worldd_parse_flags(verb, argc, argv, f, pos, 0, &npos);
	if (rc) return rc;
	if (!f[0].value) return worldd_usage(verb, "--store DB is required");
	int denials = f[3].value != NULL;
	if (!f[1].value == !denials) return worldd_usage(verb, "give exactly one of --indeterminate or --denials");
	if (!denials && (f[4].value || f[5].value)) return worldd_usage(verb, "--since and --episode go with --denials");
	long long since = 0;
	if (f[4].value && (rc = parse_since(verb, f[4].value, &since))) return rc;
	if (f[5].value && !broker_episode_valid(f[5].value))
		return worldd_usage(verb, "episode '%s' must match ^[a-z0-9][a-z0-9-]{0,63}$", f[5].value);
	struct world_err e;
	struct world_store *st;
	if (worldd_store_open(f[0].value, WORLD_STORE_READER, 0, &st, &e) < 0) return worldd_fail(verb, &e);
	struct jctx j = { .json = f[2].value != NULL, .arr = json_array(), .st = st, .episode = f[5].value };
	if (denials) {
		rc = world_objects_of_kind(st, "world/invocation-denial/v1", since, denial_one, &j, &e);
		if (rc == 0 && j.failed) {
			e = j.err;
			rc = -1;
		}
	} else {
		rc = world_journal_indeterminate(st, journal_one, &j, &e);
	}
	world_store_close(st);
	if (rc < 0) { json_decref(j.arr); return worldd_fail(verb, &e); }
	if (j.json) {
		char *t = json_dumps(j.arr, JSON_COMPACT | JSON_SORT_KEYS);
		printf("%s\n", t ? t : "[]");
		free(t);
	} else if (denials) {
		printf("%lld denial(s)\n", j.n);
	} else {
		printf("%lld indeterminate intent(s)\n", j.n);
	}
	json_decref(j.arr);
	return WX_OK;
}

/* ---- journal settle ---- */

static const char settle_help[] =
    "usage: worldd journal settle ID --as failed|succeeded --store DB [--workspace-root DIR]\n"
    "\n"
    "Closes journal intent ID, one `worldd journal --indeterminate` lists, that no\n"
    "daemon could settle: the process holding its outcome died, or held it past\n"
    "its limit (docs/daemon.md, \"Outages settle\"). Attended. First the evidence\n"
    "is printed on stdout, what the journal and the worktree know:\n"
    "  intent ID kind=K subject=S episode=EP\n"
    "  journal: ...      the intent, and whether the call's invocation intent is\n"
    "                    open and whether the call committed\n"
    "  request: ...      the effect's request (effect, scope, cost, payload)\n"
    "  handler: ...      what its handler left in the store (for an open intent:\n"
    "                    nothing -- its result never reached it)\n"
    "  worktree: ...     with --workspace-root DIR and a Workspace.* request naming a\n"
    "                    path: the file DIR/EP/PATH (absent, or its size and sha256,\n"
    "                    and whether it holds the content the request wrote)\n"
    "then the phrase `settle intent ID as STATUS` is typed at the terminal. In one\n"
    "transaction: a world/journal-settlement/v1 record (intent, kind, subject, as,\n"
    "by: operator), the intent's outcome STATUS naming it, and the call's open\n"
    "invocation intent closed `failed` (the call was never committed: a retry with\n"
    "the same task id runs it again -- its effect too, so settle `succeeded` only\n"
    "when the evidence shows it happened, and retry with a new task id). One line:\n"
    "  settled intent=ID as=STATUS invocation_intent=N|- record=REF\n"
    "An invocation intent alone is settled `failed` only.\n"
    "\n"
    "exit codes: 0 settled, 2 usage (--as, an invocation as succeeded), 4 no store at DB,\n"
    "  or no open intent ID, 5 busy, 6 schema, 8 the intent was closed meanwhile,\n"
    "  9 I/O, 20 not confirmed at a terminal (refused under CI), 29 the store's\n"
    "  PostgreSQL server unreachable\n";

struct settle_find {
	long long id;
	int found;
	char kind[32], subject[400], ref[WORLD_REF_SIZE];
};

static int settle_one(void *ctx, long long id, const char *kind, const char *subject, const char *ref)
{
	struct settle_find *f = ctx;
	if (id != f->id) return 0;
	f->found = 1;
	snprintf(f->kind, sizeof f->kind, "%s", kind ? kind : "");
	snprintf(f->subject, sizeof f->subject, "%s", subject ? subject : "");
	snprintf(f->ref, sizeof f->ref, "%s", ref ? ref : "");
	return 1;
}

/* The worktree's evidence for a Workspace.* request naming a path. */
static void settle_worktree(const char *root, const char *episode, const json_t *payload)
{
	const char *path = json_string_value(json_object_get(payload, "path"));
	if (!path) { printf("  worktree: the request names no path\n"); return; }
	if (!root) { printf("  worktree: not looked at (give --workspace-root DIR to see DIR/%s/%s)\n", episode, path); return; }
	if (path[0] == '/' || strstr(path, "..")) { printf("  worktree: the request's path %s is not inside a worktree\n", path); return; }
	char full[4096];
	snprintf(full, sizeof full, "%s/%s/%s", root, episode, path);
	char *buf = NULL;
	size_t len = 0;
	struct world_err e = { 0, "" };
	if (world_read_file(full, 64u << 20, &buf, &len, &e) < 0) {
		printf("  worktree: %s: %s\n", full, e.code == WX_NOT_FOUND ? "absent" : e.msg);
		return;
	}
	char h[WORLD_REF_SIZE] = "";
	world_hash_ref(buf, len, h, NULL);
	const char *content = json_string_value(json_object_get(payload, "content"));
	char ch[WORLD_REF_SIZE] = "";
	if (content) world_hash_ref(content, strlen(content), ch, NULL);
	printf("  worktree: %s: %zu bytes, %s%s%s\n", full, len, h,
	       content ? (strcmp(h, ch) == 0 ? "; it holds the content the request wrote" : "; it does not hold the content the request wrote")
	               : "", "");
	free(buf);
}

static int verb_journal_settle(int argc, char **argv)
{
	const char *verb = "journal settle";
	struct worldd_flag f[] = { { .name = "--store", .has_value = 1 }, { .name = "--as", .has_value = 1 },
		                   { .name = "--workspace-root", .has_value = 1 }, { .name = NULL } };
	const char *pos[1];
	int npos, rc = worldd_parse_flags(verb, argc, argv, f, pos, 1, &npos);
	if (rc) return rc;
	if (!f[0].value) return worldd_usage(verb, "--store DB is required");
	if (npos != 1) return worldd_usage(verb, "give the intent's ID (worldd journal --indeterminate lists them)");
	char *end;
	errno = 0;
	long long id = strtoll(pos[0], &end, 10);
	if (errno || *end || id <= 0) return worldd_usage(verb, "intent ID '%s': want a positive integer", pos[0]);
	const char *as = f[1].value;
	if (!as || (strcmp(as, "failed") != 0 && strcmp(as, "succeeded") != 0))
		return worldd_usage(verb, "--as failed or --as succeeded is required");
	struct world_err e = { 0, "" };
	struct world_store *st;
	if (worldd_store_open(f[0].value, WORLD_STORE_WRITER, 5, &st, &e) < 0) return worldd_fail(verb, &e);
	struct settle_find sf = { .id = id };
	if (world_journal_indeterminate(st, settle_one, &sf, &e) < 0) { world_store_close(st); return worldd_fail(verb, &e); }
	if (!sf.found) {
		world_store_close(st);
		werr(&e, WX_NOT_FOUND, "journal intent %lld: no open intent of that id (worldd journal --indeterminate)", id);
		return worldd_fail(verb, &e);
	}
	int effect = strcmp(sf.kind, "effect") == 0;
	if (!effect && strcmp(as, "succeeded") == 0) {
		world_store_close(st);
		return worldd_usage(verb, "intent %lld is an invocation's: it is settled failed only (a call is committed only "
		                    "by its commit)", id);
	}
	/* the call: the subject up to '#' (an effect's is INVOCATION#EFFECT) */
	char inv[400];
	snprintf(inv, sizeof inv, "%s", sf.subject);
	char *hash = strchr(inv, '#');
	if (hash) *hash = 0;
	char episode[128] = "-";
	const char *c1 = strchr(inv, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
	if (c1 && c2 && (size_t)(c2 - c1 - 1) < sizeof episode) snprintf(episode, sizeof episode, "%.*s", (int)(c2 - c1 - 1), c1 + 1);
	struct world_journal_row jr = { 0 };
	struct world_err fe = { 0, "" };
	int ifound = world_journal_find(st, "invocation", inv, &jr, &fe);
	if (ifound < 0 && fe.code != WX_NOT_FOUND) { world_store_close(st); return worldd_fail(verb, &fe); }
	long long inv_intent = ifound == 0 && jr.status[0] == 0 && jr.intent_id != id ? jr.intent_id : 0;

	printf("intent %lld kind=%s subject=%s episode=%s\n", id, sf.kind, sf.subject, episode);
	printf("  journal: the intent has no outcome; the call %s: %s\n", inv,
	       ifound < 0 ? "has no invocation intent"
	       : strcmp(jr.status, "committed") == 0 ? "COMMITTED (its entry holds the effect's outcome)"
	       : jr.status[0] ? jr.status : "its invocation intent has no outcome either: nothing of it was committed");
	json_t *req = NULL;
	if (effect && sf.ref[0]) {
		struct world_object o = { 0 };
		if (world_object_get(st, sf.ref, &o, &e) == 0) req = json_loadb((const char *)o.payload, o.len, 0, NULL);
		world_object_free(&o);
	}
	if (effect) {
		char *pl = req ? json_dumps(json_object_get(req, "payload"), JSON_COMPACT | JSON_SORT_KEYS) : NULL;
		printf("  request: %s effect=%s scope=%s cost=%lld payload=%.600s\n", sf.ref[0] ? sf.ref : "-",
		       req ? json_string_value(json_object_get(req, "effect")) : "?",
		       req ? json_string_value(json_object_get(req, "scope")) : "?",
		       req ? (long long)json_integer_value(json_object_get(req, "cost")) : 0LL, pl ? pl : "?");
		free(pl);
		printf("  handler: no effect record or result in the store: whether it ran, and how, never reached it\n");
		const char *en = req ? json_string_value(json_object_get(req, "effect")) : NULL;
		if (en && strncmp(en, "Workspace.", 10) == 0) settle_worktree(f[2].value, episode, json_object_get(req, "payload"));
		else printf("  worktree: the request is not a Workspace.* effect\n");
	} else {
		printf("  request: the call's input %s\n", sf.ref[0] ? sf.ref : "-");
	}
	fflush(stdout);
	char phrase[128];
	snprintf(phrase, sizeof phrase, "settle intent %lld as %s", id, as);
	struct attended_stop stop;
	if (attended_confirm_phrase("To close this intent, type:", phrase, &stop) < 0) {
		json_decref(req);
		world_store_close(st);
		return attended_report(stderr, &stop);
	}
	json_t *rec = json_pack("{s:I,s:s,s:s,s:s,s:s,s:I}", "intent", (json_int_t)id, "kind", sf.kind, "subject", sf.subject,
	                        "as", as, "by", "operator", "at", (json_int_t)time(NULL));
	char ref[WORLD_REF_SIZE] = "";
	rc = rec ? world_store_begin(st, &e) : werr(&e, WX_FAIL, "settlement record: out of memory");
	if (rc == 0) {
		rc = world_object_put_json(st, "world/journal-settlement/v1", inv, rec, ref, &e);
		if (rc == 0) rc = world_journal_outcome(st, id, as, ref, &e);
		if (rc == 0 && inv_intent) rc = world_journal_outcome(st, inv_intent, "failed", ref, &e);
		if (rc == 0) rc = world_store_commit(st, &e);
		else world_store_rollback(st);
	}
	json_decref(rec);
	json_decref(req);
	world_store_close(st);
	if (rc < 0) return worldd_fail(verb, &e);
	if (inv_intent) printf("settled intent=%lld as=%s invocation_intent=%lld record=%s\n", id, as, inv_intent, ref);
	else printf("settled intent=%lld as=%s invocation_intent=- record=%s\n", id, as, ref);
	return WX_OK;
}

const struct worldd_verb broker_verbs[] = {
	{ "call", "one invocation of a published transition, committed to the log", call_help, verb_call },
	{ "session mint", "mint a session credential for an episode (attended)", mint_help, verb_session_mint },
	{ "session list", "list sessions (ids, episodes, grants, expiry)", list_help, verb_session_list },
	{ "session revoke", "delete a session or every session of an episode", revoke_help, verb_session_revoke },
	{ "journal", "list journal intents without an outcome, or the calls the seccomp filter denied", journal_help, verb_journal },
	{ "journal settle", "close an indeterminate journal intent as failed or succeeded, with its evidence (attended)",
	  settle_help, verb_journal_settle },
	{ NULL, NULL, NULL, NULL },
};
