/* cli/verbs_capsule.c: the worldd verbs that run capsules (see cli/verbs.h):
 * `run` (one transition call: pure, or effectful with the test broker, or a
 * tool run with --profile tool-run), `check` (the bounded source check),
 * `profile list` and `profile show` (profiles as data for reviewers).
 * `invoke` and `source check` are aliases of `run` and `check` (the same
 * function, flags, output and exit codes: they cost nothing).
 * Everything runs through supervisor/supervisor.h: admission, deadlines,
 * caps, error classes and the frame protocol are the supervisor's. What is
 * the command line's: flags, reading the source and input (`-` = stdin),
 * mapping the capsule's file name host/capsule/main.ail back to the file the
 * user gave, and one --summary format. */
#include "cli/flags.h"
#include "cli/verbs.h"
#include "broker/plan.h"
#include "capsule/profile.h"
#include "capsule/profile_diff.h"
#include "supervisor/agent.h"
#include "supervisor/exec.h"
#include "supervisor/spawner.h"
#include "supervisor/supervisor.h"
#include "supervisor/testbroker.h"
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define STAGED_NAME "host/capsule/main.ail"
#define INPUT_MAX ((size_t)1 << 20) /* = the supervisor's payload_max */

#define S_(x) #x
#define S(x) S_(x)

#define EXIT_CODES_HELP \
	"exit codes:\n" \
	"  0  ok\n" \
	"  2  usage: bad, missing or repeated flags\n" \
	"  3  bad input: input not a JSON object or over 1 MiB, source over 1 MiB,\n" \
	"     source/input not a regular file, test broker refused the plan\n" \
	"  4  not found: interpreter, source or input file absent\n" \
	"  9  I/O: a file could not be read, or standard output could not be written\n" \
	" 10  capsule setup failed before exec (\"... capsule setup: STEP: reason\")\n" \
	" 11  deadline exceeded; the capsule (its pid namespace) was killed\n" \
	" 12  output cap: interpreter stdout or stderr over 8 MiB, or output object over 1 MiB;\n" \
	"     the capsule was killed\n" \
	" 13  output is not a JSON object (\"transition output is not a JSON object\")\n" \
	" 14  interpreter failed: non-zero exit, or killed (\"CPU time limit (N s) exceeded\",\n" \
	"     \"a syscall of a non-native ABI (x32 or i386) was refused\", or the signal)\n" \
	" 15  interpreter hash mismatch (with --ailang-ref): nothing ran\n" \
	" 16  capacity: too many capsules alive\n" \
	" 17  the seccomp filter stopped a syscall (\"syscall denied: NAME\"); capsule killed\n" \
	" 18  the capsule broke the frame protocol (docs/protocol.md)\n"

#define COMMON_FLAGS_HELP \
	"  --ailang-bin BIN        the interpreter (pinned: sha256 into a sealed memfd); default:\n" \
	"                          the installed ailang-lite (worldd --help names it)\n" \
	"  --ailang-ref sha256:HEX refuse to run unless BIN hashes to this ref\n" \
	"  --source FILE|-         the transition source, at most " S(SOURCE_CAP_BYTES) " bytes (1 MiB), staged\n" \
	"                          as host/capsule/main.ail; diagnostics name FILE again\n" \
	"  --timeout-ms N          the wall-time deadline of the phase(s), 1..3600000\n" \
	"  --summary               after the run, the profile, limits and layers applied on stderr\n" \
	"  --show-stderr           copy the capsule's stderr to stderr after the run\n"

#define SOURCE_CAP_BYTES 1048576
_Static_assert(SOURCE_CAP_BYTES == SUP_SOURCE_MAX, "the help text states the supervisor's source cap");

#define CPU_HELP \
	"The CPU-time rlimit is the profile's (transition 5 s, source-check 11 s, tool-run 21 s;\n" \
	"worldd profile show NAME) and --timeout-ms does not raise it: profiles are reviewed\n" \
	"data, not per-call settings. A CPU-bound run past it ends with \"CPU time limit (N s)\n" \
	"exceeded\" (exit 14) however long the wall deadline is.\n"

struct run_opts {
	const char *bin, *ref, *source, *input, *input_file, *profile, *worktree, *declared;
	long long timeout_ms;
	int summary, show_stderr, effectful, test_broker, spawner, require_cgroups;
};

/* ---- helpers ---- */

/* text with every STAGED_NAME replaced by user (malloc'd; NULL on OOM). */
static char *map_name(const char *text, size_t len, const char *user)
{
	size_t sl = strlen(STAGED_NAME), ul = strlen(user), n = 0;
	for (const char *p = text; (p = memmem(p, len - (size_t)(p - text), STAGED_NAME, sl)); p += sl) n++;
	char *out = malloc(len + n * (ul > sl ? ul - sl : 0) + 1);
	if (!out) return NULL;
	char *o = out;
	const char *p = text, *end = text + len;
	while (p < end) {
		const char *q = memmem(p, (size_t)(end - p), STAGED_NAME, sl);
		if (!q) q = end;
		memcpy(o, p, (size_t)(q - p));
		o += q - p;
		if (q == end) break;
		memcpy(o, user, ul);
		o += ul;
		p = q + sl;
	}
	*o = 0;
	return out;
}

static const char *user_name(const struct run_opts *o)
{
	return strcmp(o->source, "-") == 0 ? "(stdin)" : o->source;
}

/* worldd_fail with the staged name mapped back to the user's file. */
static int fail_mapped(const char *verb, const struct run_opts *o, struct world_err *err)
{
	char *m = map_name(err->msg, strlen(err->msg), user_name(o));
	if (m) {
		snprintf(err->msg, sizeof err->msg, "%s", m);
		free(m);
	}
	return worldd_fail(verb, err);
}

static void show_stderr(const struct run_opts *o, const char *text, size_t len)
{
	if (!o->show_stderr || !text || !len) return;
	char *m = map_name(text, len, user_name(o));
	fputs(m ? m : text, stderr);
	if ((m ? m : text)[strlen(m ? m : text) - 1] != '\n') fputc('\n', stderr);
	free(m);
}

/* First non-empty line of s (may be NULL), at most cap-1 bytes. */
static void first_line(const char *s, char *out, size_t cap)
{
	out[0] = 0;
	if (!s) return;
	while (*s == '\n' || *s == '\r' || *s == ' ') s++;
	size_t l = strcspn(s, "\r\n");
	if (l >= cap) l = cap - 1;
	memcpy(out, s, l);
	out[l] = 0;
}

static unsigned cpu_limit_s(const char *profile)
{
	const struct capsule_profile *p = capsule_profile_find(profile);
	return p ? (unsigned)p->limits.rlim_cpu_s : 0;
}

/* How a signal-ended interpreter is described: the limits by name. */
static void describe_kill(int sig, const char *profile, char *buf, size_t n)
{
	if (sig == SIGXCPU) snprintf(buf, n, "killed: CPU time limit (%u s) exceeded", cpu_limit_s(profile));
	else if (sig == SIGSYS) snprintf(buf, n, "killed by SIGSYS: a syscall of a non-native ABI (x32 or i386) was refused");
	else snprintf(buf, n, "killed by signal %d (%s)", sig, strsignal(sig));
}

/* The one --summary format of every verb here: the launcher's description of
 * the profile, the supervisor's limits, the layers applied, then one line. */
static void print_summary(const char *verb, struct supervisor *s, enum sup_profile profile, const char *layers,
                          long elapsed_ms, size_t stderr_len)
{
	struct world_err e;
	struct launcher *l = sup_launcher(s);
	const struct sup_limits *lim = sup_get_limits(s);
	fflush(stdout);
	if (l->describe(l, profile, 2, &e) < 0) fprintf(stderr, "worldd %s: describe profile: %s\n", verb, e.msg);
	const char *ref = launcher_capsule_ref(l);
	fprintf(stderr,
	        "  supervisor    deadlines plan %u ms, finish %u ms, pure %u ms, check %u ms, whole call %u ms,\n"
	        "                tool run %u ms; stdout/stderr caps %zu/%zu bytes, output %zu bytes,\n"
	        "                args/plan %zu bytes, source %zu bytes; capacity %u\n"
	        "  applied       %s\n"
	        "worldd %s: capsule profile %s; interpreter %s; %ld ms; capsule stderr %zu bytes\n",
	        lim->plan_ms, lim->finish_ms, lim->pure_ms, lim->check_ms, lim->invocation_ms, lim->tool_ms,
	        lim->stdout_max, lim->stderr_max, lim->output_max, lim->payload_max, SUP_SOURCE_MAX, lim->capacity,
	        layers && layers[0] ? layers : "(no capsule started)", verb, sup_profile_name(profile),
	        ref ? ref : "?", elapsed_ms, stderr_len);
}

static int parse_declared(const char *verb, const char *text, json_t **out);

static int parse_run_opts(const char *verb, int argc, char **argv, struct run_opts *o, int is_run)
{
	memset(o, 0, sizeof *o);
	struct worldd_flag f[] = {
		{ .name = "--ailang-bin", .has_value = 1 }, { .name = "--ailang-ref", .has_value = 1 },
		{ .name = "--source", .has_value = 1 },     { .name = "--timeout-ms", .has_value = 1 },
		{ .name = "--summary" },                    { .name = "--show-stderr" },
		/* run only (from here) */
		{ .name = "--input", .has_value = 1 },      { .name = "--input-file", .has_value = 1 },
		{ .name = "--profile", .has_value = 1 },    { .name = "--worktree", .has_value = 1 },
		{ .name = "--effectful" },                  { .name = "--test-broker" },
		{ .name = "--spawner" },                    { .name = "--require-cgroups" },
		{ .name = "--declared-effects", .has_value = 1 },
		{ .name = NULL },
	};
	if (!is_run) f[6].name = NULL;
	const char *pos[1];
	int npos, rc = worldd_parse_flags(verb, argc, argv, f, pos, 0, &npos);
	if (rc) return rc;
	o->bin = f[0].value ? f[0].value : cli_default_ailang_bin();
	o->ref = f[1].value;
	o->source = f[2].value;
	if (f[3].value && (rc = worldd_flag_ll(verb, "--timeout-ms", f[3].value, 1, 3600000, &o->timeout_ms))) return rc;
	o->summary = f[4].value != NULL;
	o->show_stderr = f[5].value != NULL;
	if (!o->source) return worldd_usage(verb, "--source FILE is required");
	if (!is_run) return 0;
	o->input = f[6].value;
	o->input_file = f[7].value;
	o->profile = f[8].value;
	o->worktree = f[9].value;
	o->effectful = f[10].value != NULL;
	o->test_broker = f[11].value != NULL;
	o->spawner = f[12].value != NULL;
	o->require_cgroups = f[13].value != NULL;
	o->declared = f[14].value;
	if (o->input && o->input_file) return worldd_usage(verb, "give only one of --input JSON and --input-file FILE");
	if (o->input_file && strcmp(o->input_file, "-") == 0 && strcmp(o->source, "-") == 0)
		return worldd_usage(verb, "--source and --input-file cannot both be - (standard input)");
	if (o->effectful && !o->test_broker)
		return worldd_usage(verb, "--effectful needs --test-broker (the real broker runs only through worldd call)");
	if (o->test_broker && !o->effectful) return worldd_usage(verb, "--test-broker goes with --effectful");
	if (o->declared && !o->test_broker) return worldd_usage(verb, "--declared-effects goes with --effectful --test-broker");
	if (o->declared && (rc = parse_declared(verb, o->declared, NULL))) return rc;
	return 0;
}

/* ---- the test broker's plan laws ---- */

/* The real broker's law check (broker/plan.c, the one every worldd call
 * runs) for the test broker: a plan that breaks a law is refused here with
 * the same line and exit code (23) as a real call. ctx is the declared
 * effects (--declared-effects) or NULL: a run has no descriptor, so the
 * plan's own (effect, scope, cost) stands in for it and every other law
 * applies unchanged. */
static int run_plan_laws(void *ctx, const char *plan, size_t plan_len, struct world_err *err)
{
	json_t *given = ctx, *declared = given ? json_incref(given) : json_array();
	if (!declared) return werr(err, WX_FAIL, "plan laws: out of memory");
	if (!given) {
		json_t *p = json_loadb(plan, plan_len, JSON_REJECT_DUPLICATES, NULL);
		json_t *ef = json_object_get(p, "effects");
		json_t *e = json_is_array(ef) && json_array_size(ef) == 1 ? json_array_get(ef, 0) : NULL;
		if (json_is_object(e))
			json_array_append_new(declared, json_pack("{s:O?,s:O?,s:O?}", "effect", json_object_get(e, "effect"),
			                                          "scope", json_object_get(e, "scope"), "cost",
			                                          json_object_get(e, "cost")));
		json_decref(p);
	}
	struct broker_plan bp;
	int rc = broker_plan_parse(plan, plan_len, declared, &bp, err);
	if (rc == 0) broker_plan_free(&bp);
	json_decref(declared);
	return rc;
}

/* --declared-effects JSON: an array of {effect, scope, cost}, as a
 * descriptor's declaredEffects (out NULL: only checked). */
static int parse_declared(const char *verb, const char *text, json_t **out)
{
	json_error_t je;
	json_t *v = json_loads(text, JSON_REJECT_DUPLICATES, &je);
	size_t i;
	json_t *d;
	int bad = !json_is_array(v);
	json_array_foreach(v, i, d) {
		if (!json_is_object(d) || json_object_size(d) != 3 || !json_is_string(json_object_get(d, "effect")) ||
		    !json_is_string(json_object_get(d, "scope")) || !json_is_integer(json_object_get(d, "cost")))
			bad = 1;
	}
	if (bad) {
		json_decref(v);
		return worldd_usage(verb, "--declared-effects must be a JSON array of {\"effect\",\"scope\",\"cost\"}");
	}
	if (out) *out = v;
	else json_decref(v);
	return 0;
}

static struct supervisor *make_supervisor(const struct run_opts *o, int check, struct world_err *err)
{
	struct sup_limits lim;
	sup_limits_default(&lim);
	if (o->timeout_ms) {
		unsigned t = (unsigned)o->timeout_ms;
		if (check) lim.check_ms = t;
		else lim.pure_ms = lim.plan_ms = lim.finish_ms = lim.tool_ms = t;
		/* the whole call holds every phase of it */
		unsigned whole = check || !o->effectful ? t : 2 * t;
		if (lim.invocation_ms < whole) lim.invocation_ms = whole;
	}
	/* --spawner: the capsule is made as worldd serve makes each one, by a
	 * capsule spawner forked first (before any thread: the pin's comes
	 * next), which as root shares one empty network namespace and clones
	 * from the template mount namespace (supervisor/spawner.h). Else one
	 * run per process: the pin overlaps the capsule's setup. */
	if (o->spawner && sup_spawner_start(NULL, NULL, err) < 0) return NULL;
	struct launcher *l = o->spawner ? launcher_capsule_new(o->bin, o->ref, err)
	                                : launcher_capsule_begin(o->bin, o->ref, err);
	if (!l) return NULL;
	return sup_new(&lim, l, err);
}

static int print_line(const char *text, size_t len)
{
	fwrite(text, 1, len, stdout);
	fputc('\n', stdout);
	return fflush(stdout) != 0 ? WX_IO : WX_OK;
}

/* ---- run, tool-run profile ---- */

static int run_tool(const char *verb, const struct run_opts *o, struct supervisor *s, const char *src,
                    size_t src_len, const char *input, size_t in_len)
{
	struct world_err err = { 0, "" };
	json_error_t je;
	json_t *v = json_loadb(input, in_len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &je);
	int obj = json_is_object(v);
	json_decref(v);
	if (!v) return worldd_fail(verb, (werr(&err, WX_BAD_INPUT, "args: malformed JSON at byte %d: %s", je.position, je.text), &err));
	if (!obj) return worldd_fail(verb, (werr(&err, WX_BAD_INPUT, "args: not a JSON object"), &err));
	json_t *lit = json_stringn(input, in_len);
	char *args_json = lit ? json_dumps(lit, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
	json_decref(lit);
	if (!args_json) return worldd_fail(verb, (werr(&err, WX_BAD_INPUT, "args: cannot be encoded as args.json"), &err));
	struct launch_file files[2] = {
		{ STAGED_NAME, src, src_len },
		{ "args.json", args_json, strlen(args_json) },
	};
	struct sup_tool_req req = { .args = sup_interp_run_args, .files = files, .nfiles = 2, .worktree = o->worktree };
	struct sup_tool_result res;
	int rc = sup_run_tool(s, &req, &res, &err);
	free(args_json);
	if (o->summary) print_summary(verb, s, SUP_PROFILE_TOOL_RUN, res.layers, res.elapsed_ms, res.stderr_len);
	if (rc < 0) return fail_mapped(verb, o, &err);
	show_stderr(o, res.stderr_text, res.stderr_len);
	char line[300], how[160];
	first_line(res.stderr_text, line, sizeof line);
	if (strncmp(res.limit, "syscall denied: ", 16) == 0) werr(&err, WX_DENIED_SYSCALL, "%s", res.detail);
	else if (strcmp(res.limit, "deadline") == 0) werr(&err, WX_DEADLINE, "%s", res.detail);
	else if (strcmp(res.limit, "stdout cap") == 0 || strcmp(res.limit, "stderr cap") == 0)
		werr(&err, WX_OUTPUT_CAP, "%s", res.detail);
	else if (res.signal) {
		describe_kill(res.signal, "tool-run", how, sizeof how);
		int named = res.signal == SIGXCPU || res.signal == SIGSYS;
		werr(&err, WX_INTERP, "interpreter %s%s%s%s in the tool run%s%s", how,
		     !named && res.limit[0] ? " (" : "", !named ? res.limit : "", !named && res.limit[0] ? " limit)" : "",
		     line[0] ? ": " : "", line);
	} else if (res.exit_code != 0)
		werr(&err, WX_INTERP, "interpreter exited with status %d in the tool run%s%s%s%s%s", res.exit_code,
		     res.limit[0] ? " (" : "", res.limit[0] ? res.limit : "", res.limit[0] ? " limit)" : "",
		     line[0] ? ": " : "", line);
	if (err.code) {
		sup_tool_result_free(&res);
		return fail_mapped(verb, o, &err);
	}
	/* docs/design.md §2: strip exactly one trailing newline; at most 1 MiB; an object. */
	size_t len = res.stdout_len, max = sup_get_limits(s)->output_max;
	if (len > 0 && res.stdout_text[len - 1] == '\n') res.stdout_text[--len] = '\0';
	if (len > max)
		werr(&err, WX_OUTPUT_CAP, "transition output is %zu bytes, over the %zu-byte cap", len, max);
	else if (!(v = json_loadb(res.stdout_text, len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, NULL)) ||
	         !json_is_object(v))
		werr(&err, WX_NOT_OBJECT, "transition output is not a JSON object");
	json_decref(v);
	int code = err.code ? worldd_fail(verb, &err) : print_line(res.stdout_text, len);
	sup_tool_result_free(&res);
	return code;
}

/* ---- run ---- */

static int cmd_run_as(const char *verb, int argc, char **argv)
{
	struct run_opts o;
	int rc = parse_run_opts(verb, argc, argv, &o, 1);
	if (rc) return rc;
	struct world_err err = { 0, "" };
	const struct capsule_profile *p = capsule_profile_find(o.profile ? o.profile : "transition");
	if (!p) return worldd_usage(verb, "profile '%s' unknown (see worldd profile list)", o.profile);
	int tool = strcmp(p->name, "tool-run") == 0;
	if (strcmp(p->name, "source-check") == 0)
		return worldd_usage(verb, "profile source-check runs only source checks (worldd check)");
	if (o.worktree && !tool) return worldd_usage(verb, "--worktree needs --profile tool-run");
	if (o.effectful && tool) return worldd_usage(verb, "--effectful runs the transition profile, not tool-run");
	char *src = NULL, *input = NULL;
	size_t src_len = 0, in_len = 0;
	if ((rc = worldd_read_input(verb, "source", o.source, SUP_SOURCE_MAX, &src, &src_len))) return rc;
	if (o.input_file) {
		if ((rc = worldd_read_input(verb, "input", o.input_file, INPUT_MAX, &input, &in_len))) {
			free(src);
			return rc;
		}
	} else {
		input = strdup(o.input ? o.input : "{}");
		in_len = input ? strlen(input) : 0;
	}
	char who[32];
	snprintf(who, sizeof who, "worldd %s", verb);
	sup_exit_on_interrupt(who);
	/* Limits are never silently missing: one line when the capsule gets
	 * no memory or pids group, a refusal with --require-cgroups. */
	char cgline[700];
	if (!o.spawner && sup_cgroups_check(cgline, sizeof cgline)) {
		if (o.require_cgroups) {
			free(src);
			free(input);
			return worldd_fail(verb, (werr(&err, WX_SETUP, "--require-cgroups: %s", cgline), &err));
		}
		fprintf(stderr, "worldd %s: %s\n", verb, cgline);
	}
	struct supervisor *s = input ? make_supervisor(&o, 0, &err) : NULL;
	if (!input) werr(&err, WX_FAIL, "out of memory");
	if (!s) {
		free(src);
		free(input);
		return fail_mapped(verb, &o, &err);
	}
	if (tool) {
		rc = run_tool(verb, &o, s, src, src_len, input, in_len);
		sup_free(s);
		free(src);
		free(input);
		return rc;
	}
	json_t *declared = NULL;
	if (o.declared && parse_declared(verb, o.declared, &declared)) {
		sup_free(s);
		free(src);
		free(input);
		return worldd_fail(verb, (werr(&err, WX_FAIL, "--declared-effects: out of memory"), &err));
	}
	struct sup_result res;
	struct sup_test_broker tb = { 0, 0 };
	struct sup_test_broker_laws tl = { run_plan_laws, declared, &tb };
	rc = o.effectful ? sup_run_effectful(s, src, src_len, input, in_len, sup_test_broker_with_laws, &tl, &res, &err)
	                 : sup_run_pure(s, src, src_len, input, in_len, &res, &err);
	json_decref(declared);
	free(src);
	free(input);
	if (o.summary) print_summary(verb, s, SUP_PROFILE_TRANSITION, res.layers, res.elapsed_ms, res.stderr_len);
	show_stderr(&o, res.stderr_text, res.stderr_len);
	int code = WX_OK;
	if (rc < 0) {
		code = fail_mapped(verb, &o, &err);
	} else if (o.effectful) {
		json_t *plan = json_loadb(res.plan, res.plan_len, JSON_ALLOW_NUL, NULL);
		json_t *out = res.output ? json_loadb(res.output, res.output_len, JSON_ALLOW_NUL, NULL) : json_null();
		json_t *all = json_pack("{s:o, s:b, s:o}", "plan", plan, "finished", res.finished, "output", out);
		char *text = all ? json_dumps(all, JSON_COMPACT) : NULL;
		if (text) code = print_line(text, strlen(text));
		else code = worldd_fail(verb, (werr(&err, WX_FAIL, "out of memory printing the result"), &err));
		free(text);
		json_decref(all);
	} else {
		code = print_line(res.output, res.output_len);
	}
	sup_result_free(&res);
	sup_free(s);
	return code;
}

static int cmd_run(int argc, char **argv) { return cmd_run_as("run", argc, argv); }
static int cmd_invoke(int argc, char **argv) { return cmd_run_as("invoke", argc, argv); }

/* ---- check ---- */

static int cmd_check_as(const char *verb, int argc, char **argv)
{
	struct run_opts o;
	int rc = parse_run_opts(verb, argc, argv, &o, 0);
	if (rc) return rc;
	struct world_err err = { 0, "" };
	char *src = NULL;
	size_t src_len = 0;
	if ((rc = worldd_read_input(verb, "source", o.source, SUP_SOURCE_MAX, &src, &src_len))) return rc;
	char who[32];
	snprintf(who, sizeof who, "worldd %s", verb);
	sup_exit_on_interrupt(who);
	struct supervisor *s = make_supervisor(&o, 1, &err);
	if (!s) {
		free(src);
		return fail_mapped(verb, &o, &err);
	}
	struct sup_result res;
	rc = sup_check_source(s, src, src_len, &res, &err);
	free(src);
	if (o.summary) print_summary(verb, s, SUP_PROFILE_SOURCE_CHECK, res.layers, res.elapsed_ms, res.stderr_len);
	show_stderr(&o, res.stderr_text, res.stderr_len);
	int code = WX_OK;
	char line[600], how[160];
	if (rc == 0) {
		printf("accepted: %s\n", user_name(&o));
		if (fflush(stdout) != 0) code = WX_IO;
	} else if (err.code == WX_CHECK_REFUSED && res.check_exit > 128 && res.check_exit < 128 + 65) {
		/* The agent reports a signal as 128+N: the interpreter was killed
		 * (a resource limit, or SIGSYS for a non-native syscall ABI), which
		 * is an interpreter failure, not a refusal of the source. */
		first_line(res.stderr_text, line, sizeof line);
		describe_kill(res.check_exit - 128, "source-check", how, sizeof how);
		werr(&err, WX_INTERP, "source check: interpreter %s%s%s", how, line[0] ? ": " : "", line);
		code = fail_mapped(verb, &o, &err);
	} else if (err.code == WX_CHECK_REFUSED) {
		/* One line per diagnostic, each once: the interpreter prints its
		 * diagnostics on stdout (check) or stderr; they name the file the
		 * user gave. */
		const char *diag = res.check_stdout && res.check_stdout[0] ? res.check_stdout : res.stderr_text;
		first_line(diag, line, sizeof line);
		werr(&err, WX_CHECK_REFUSED, "source refused: %s", line[0] ? line : "(the interpreter printed no diagnostic)");
		code = fail_mapped(verb, &o, &err);
	} else {
		code = fail_mapped(verb, &o, &err);
	}
	sup_result_free(&res);
	sup_free(s);
	return code;
}

static int cmd_check(int argc, char **argv) { return cmd_check_as("check", argc, argv); }
static int cmd_source_check(int argc, char **argv) { return cmd_check_as("source check", argc, argv); }

/* ---- profiles ---- */

static int cmd_profile_list(int argc, char **argv)
{
	const char *V = "profile list";
	struct worldd_flag f[] = { { .name = "--json" }, { .name = NULL } };
	const char *pos[1];
	int npos, rc = worldd_parse_flags(V, argc, argv, f, pos, 0, &npos);
	if (rc) return rc;
	if (f[0].value) {
		json_t *arr = json_array();
		for (const struct capsule_profile *p = capsule_profiles; p->name; p++)
			json_array_append_new(arr, json_pack("{s:s, s:s}", "name", p->name, "purpose", p->purpose));
		char *t = json_dumps(arr, JSON_COMPACT);
		json_decref(arr);
		if (!t) {
			struct world_err err;
			return worldd_fail(V, (werr(&err, WX_FAIL, "out of memory"), &err));
		}
		printf("%s\n", t);
		free(t);
		return WX_OK;
	}
	for (const struct capsule_profile *p = capsule_profiles; p->name; p++)
		printf("%-13s %s\n", p->name, p->purpose);
	return WX_OK;
}

static int cmd_profile_show(int argc, char **argv)
{
	const char *V = "profile show";
	struct worldd_flag f[] = { { .name = "--format", .has_value = 1 }, { .name = NULL } };
	const char *pos[1];
	int npos, rc = worldd_parse_flags(V, argc, argv, f, pos, 1, &npos);
	if (rc) return rc;
	const char *format = f[0].value ? f[0].value : "text";
	if (npos != 1) return worldd_usage(V, "NAME is required");
	const char *name = pos[0];
	if (strcmp(format, "text") && strcmp(format, "json") && strcmp(format, "pfc") && strcmp(format, "bpf"))
		return worldd_usage(V, "--format '%s' unknown (text, json, pfc, bpf)", format);
	const struct capsule_profile *p = capsule_profile_find(name);
	struct world_err err = { 0, "" };
	if (!p) {
		werr(&err, WX_NOT_FOUND, "profile '%s' not found (see worldd profile list)", name);
		return worldd_fail(V, &err);
	}
	struct capsule_host_facts host;
	capsule_host_facts_read(&host);
	if (capsule_profile_render(p, format, &host, stdout, &err) < 0) return worldd_fail(V, &err);
	return WX_OK;
}

/* A profile document: NAME of this build, or (file) a saved
 * `profile show --format json`. NULL with the exit code in *rc. */
static json_t *diff_side(const char *V, const char *name, const char *file, int *rc)
{
	struct world_err err = { 0, "" };
	if (!file) {
		const struct capsule_profile *p = capsule_profile_find(name);
		if (!p) {
			*rc = worldd_fail(V, (werr(&err, WX_NOT_FOUND, "profile '%s' not found (see worldd profile list)", name), &err));
			return NULL;
		}
		json_t *o = capsule_profile_json(p, NULL);
		if (!o) *rc = worldd_fail(V, (werr(&err, WX_FAIL, "profile %s: out of memory", name), &err));
		return o;
	}
	char *text = NULL;
	size_t len = 0;
	if ((*rc = worldd_read_input(V, "--against", file, 16u << 20, &text, &len))) return NULL;
	json_error_t je;
	json_t *o = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	free(text);
	if (!o) {
		*rc = worldd_fail(V, (werr(&err, WX_BAD_INPUT, "--against %s: malformed JSON at byte %d: %s", file,
		                           je.position, je.text), &err));
		return NULL;
	}
	if (!json_is_object(o) || !json_is_string(json_object_get(o, "profile")) ||
	    !json_is_object(json_object_get(o, "seccomp"))) {
		json_decref(o);
		*rc = worldd_fail(V, (werr(&err, WX_BAD_INPUT, "--against %s: not a profile (an object with \"profile\" "
		                           "and \"seccomp\", as profile show --format json prints)", file), &err));
		return NULL;
	}
	return o;
}

static int cmd_profile_diff(int argc, char **argv)
{
	const char *V = "profile diff";
	struct worldd_flag f[] = { { .name = "--against", .has_value = 1 }, { .name = "--json" },
	                           { .name = "--exit-code" }, { .name = NULL } };
	const char *pos[2];
	int npos, rc = worldd_parse_flags(V, argc, argv, f, pos, 2, &npos);
	if (rc) return rc;
	const char *against = f[0].value;
	if (against && npos != 1) return worldd_usage(V, "with --against FILE give one profile NAME (this build's)");
	if (!against && npos != 2) return worldd_usage(V, "give two profile names A B, or NAME --against FILE");
	char label_a[600];
	if (against) snprintf(label_a, sizeof label_a, "%s", against);
	else snprintf(label_a, sizeof label_a, "%s", pos[0]);
	const char *name_b = against ? pos[0] : pos[1];
	json_t *a = diff_side(V, against ? NULL : pos[0], against, &rc);
	if (!a) return rc;
	if (against) snprintf(label_a, sizeof label_a, "%s (%s)", json_string_value(json_object_get(a, "profile")), against);
	json_t *b = diff_side(V, name_b, NULL, &rc);
	if (!b) {
		json_decref(a);
		return rc;
	}
	json_t *changes = capsule_profile_diff(a, b);
	struct world_err err = { 0, "" };
	int wrc = -1;
	if (changes && f[1].value) {
		json_t *doc = json_pack("{s:s,s:s,s:b,s:O}", "a", label_a, "b", name_b, "same",
		                        json_array_size(changes) == 0, "changes", changes);
		char *t = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
		json_decref(doc);
		if (t) wrc = printf("%s\n", t) < 0 || fflush(stdout) != 0 ? -1 : 0;
		free(t);
	} else if (changes) {
		wrc = capsule_profile_diff_text(changes, label_a, name_b, stdout);
	}
	size_t n = changes ? json_array_size(changes) : 0;
	json_decref(a);
	json_decref(b);
	json_decref(changes);
	if (wrc < 0) return worldd_fail(V, (werr(&err, WX_IO, "writing the difference to standard output failed"), &err));
	return f[2].value && n ? WX_FAIL : WX_OK;
}

#define PROFILE_DIFF_HELP \
	"usage: worldd profile diff A B [--json] [--exit-code]\n" \
	"       worldd profile diff NAME --against FILE [--json] [--exit-code]\n\n" \
	"The layer-by-layer difference of two profiles: every value of `profile show\n" \
	"--format json` (namespaces, identity, mounts, rlimits soft/hard, cgroups, limits,\n" \
	"capabilities, environment, argv, landlock rules, seccomp default, arch guards and\n" \
	"each rule) from a to b. Rules, mounts and landlock rules are matched by syscall or\n" \
	"path: one added syscall is one line. --against FILE compares a profile saved from\n" \
	"another build (`worldd profile show NAME --format json > FILE`) as a with this\n" \
	"build's NAME as b: what changed between two releases. The this_host layer (the\n" \
	"machine's landlock ABI and cgroups) is not compared.\n\n" \
	"Text: one [layer] header per changed layer, then \"+ path: value\" (only in b),\n" \
	"\"- path: value\" (only in a), \"~ path: A -> B\"; the last line counts the changes.\n" \
	"--json: {\"a\",\"b\",\"same\":bool,\"changes\":[{\"layer\",\"path\",\"op\":\"added\"|\"removed\"|\n" \
	"\"changed\",\"a\",\"b\"}]}.\n\n" \
	"exit codes:\n  0 ok (with --exit-code: no difference)\n  1 with --exit-code: the profiles differ\n" \
	"  2 usage\n  3 bad input: FILE is not JSON or not a profile\n  4 profile or FILE not found\n" \
	"  9 FILE unreadable, or write failed\n"

#define RUN_HELP \
	"usage: worldd run [--ailang-bin BIN] --source FILE|- [--input JSON | --input-file FILE|-]\n" \
	"                  [--effectful --test-broker] [--profile transition|tool-run] [--worktree DIR]\n" \
	"                  [--timeout-ms N] [--ailang-ref sha256:HEX] [--summary] [--show-stderr]\n" \
	"                  [--spawner] [--require-cgroups]\n\n" \
	"Runs one transition call through the supervisor (admission, deadlines, caps and the\n" \
	"frame protocol, docs/protocol.md): pins BIN, stages FILE as host/capsule/main.ail and\n" \
	"the input (a JSON object, default {}) as args.json (one JSON string literal) in an\n" \
	"empty tmpfs root, and in a capsule of profile transition the capsule's agent runs\n" \
	"  BIN run --quiet --caps \"\" --entry main --args-file args.json host/capsule/main.ail\n" \
	"A pure call prints the output object (one trailing newline stripped, at most 1 MiB,\n" \
	"a JSON object). --effectful runs the plan phase, hands the plan to the TEST broker\n" \
	"(grants everything, echoes the payload; not the real broker: that is worldd call)\n" \
	"and runs the finish phase; prints {\"plan\":...,\"finished\":bool,\"output\":...|null}.\n" \
	"The test broker applies the real broker's plan laws first (broker/plan.c, docs/design.md\n" \
	"§5.2): a plan that breaks one is refused with the line and exit code (23) a\n" \
	"worldd call of it gives. A run has no descriptor: the declared law checks the plan's\n" \
	"effect against --declared-effects JSON (a descriptor's declaredEffects array) when\n" \
	"given, else the plan's own (effect, scope, cost) stands in for it.\n" \
	"--profile tool-run runs the same argv as a supervisor tool run: the interpreter is\n" \
	"the capsule's first process, with the same exit codes; --worktree DIR (tool-run only)\n" \
	"mounts DIR read-only at /work (a symlink is refused). --profile source-check is\n" \
	"refused (usage): that profile runs only worldd check.\n" \
	"Errors are one line; the capsule's file name is mapped back to FILE.\n\n" \
	COMMON_FLAGS_HELP \
	"  --input JSON            the arguments, a JSON object (at most 1 MiB; \\u0000 accepted)\n" \
	"  --input-file FILE|-     the arguments from a file or standard input\n" \
	"  --effectful --test-broker  plan -> test broker (the plan laws, then an echo) -> finish\n" \
	"  --declared-effects JSON    with --test-broker: the declaredEffects the declared law\n" \
	"                          checks, e.g. '[{\"effect\":\"Workspace.Read\",\"scope\":\"worktree\",\"cost\":1}]'\n" \
	"  --profile NAME          transition (default) or tool-run\n" \
	"  --worktree DIR          tool-run only: DIR mounted read-only at /work\n" \
	"  --spawner               make the capsule as worldd serve does: in a capsule spawner\n" \
	"                          forked first, as root with the shared empty network namespace\n" \
	"                          and the template mount namespace (docs/security.md); slower\n" \
	"                          for one run, for checking the daemon's path from the CLI\n" \
	"  --require-cgroups       refuse (exit 10) when the capsule would get no memory or pids\n" \
	"                          cgroup; without it, one stderr line names what is missing,\n" \
	"                          why, and the rlimits that remain, and the run goes on\n\n" \
	"--timeout-ms sets each phase's deadline (defaults: pure 4000 ms, plan 4000, finish\n" \
	"2000, tool run 20000); the whole-call deadline (20000 ms) is raised to hold them.\n" \
	CPU_HELP \
	"worldd invoke is an alias of worldd run (same flags, output and exit codes).\n\n" \
	EXIT_CODES_HELP \
	" 23  --effectful --test-broker: the plan broke a plan law (named; as worldd call)\n"

#define CHECK_HELP \
	"usage: worldd check [--ailang-bin BIN] --source FILE|- [--timeout-ms N]\n" \
	"                    [--ailang-ref sha256:HEX] [--summary] [--show-stderr]\n\n" \
	"Runs `BIN check host/capsule/main.ail` through the supervisor in a capsule of profile\n" \
	"source-check (empty scratch root holding only the source: a world/* import fails\n" \
	"with LDR001; 10000 ms deadline, or --timeout-ms). Prints \"accepted: FILE\" on\n" \
	"success. A refusal is one line on stderr,\n" \
	"  worldd check: source refused: Error: CODE at FILE:LINE:COL: message\n" \
	"(exit 19). An interpreter killed is a failure (14), not a refusal.\n\n" \
	COMMON_FLAGS_HELP "\n" CPU_HELP \
	"worldd source check is an alias of worldd check (same flags, output and exit codes).\n\n" \
	EXIT_CODES_HELP \
	" 19  the interpreter refused the source\n"

/* ---- one command in an exec capsule (worldd capsule exec) ---- */

#define CAPSULE_EXEC_HELP \
	"usage: worldd capsule exec --worktree DIR [--cache DIR] [--ro DIR]... [--protect NAME]...\n" \
	"                           [--cwd REL] [--env K=V]... [--wall-ms N] [--memory BYTES] [--pids N]\n" \
	"                           [--cpu-ms N] [--output-max BYTES] -- PROGRAM [ARGS...]\n\n" \
	"Runs PROGRAM (an absolute path, executed by the fd opened here) in an exec capsule\n" \
	"(profile exec: docs/exec.md \"The exec capsule\") -- the mechanism of Workspace.Exec\n" \
	"without its policy, for `worldd audit` and for an operator trying a toolchain: DIR\n" \
	"read-write at /work, the cache at /cache, each --ro read-only at its path, each\n" \
	"--protect name of DIR read-only; the environment is exactly the --env pairs.\n" \
	"Prints the result as one JSON object (exit_code, timed_out, limit, duration_ms,\n" \
	"stdout, stderr, their byte counts, truncation and sha256, denied, protected_created,\n" \
	"profile, digest, layers).\n\n" \
	"exit codes:\n  0 the command ran (its own status is in the JSON)\n  2 usage\n" \
	"  4 worktree or program not found\n  10 the capsule could not be set up\n"

static int cmd_capsule_exec(int argc, char **argv)
{
	const char *V = "capsule exec";
	struct sup_exec_req q;
	memset(&q, 0, sizeof q);
	const char *ro[17] = { 0 }, *prot[33] = { 0 }, *env[65] = { 0 };
	size_t nro = 0, nprot = 0, nenv = 0;
	int i = 0; /* argv holds the arguments after the verb */
	for (; i < argc && strcmp(argv[i], "--"); i += 2) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!v) return worldd_usage(V, "%s needs a value", a);
		if (!strcmp(a, "--worktree")) q.worktree = v;
		else if (!strcmp(a, "--cache")) q.cache_dir = v;
		else if (!strcmp(a, "--cwd")) q.cwd_rel = v;
		else if (!strcmp(a, "--ro") && nro < 16) ro[nro++] = v;
		else if (!strcmp(a, "--protect") && nprot < 32) prot[nprot++] = v;
		else if (!strcmp(a, "--env") && nenv < 64) env[nenv++] = v;
		else if (!strcmp(a, "--wall-ms")) q.wall_ms = (unsigned)strtoul(v, NULL, 10);
		else if (!strcmp(a, "--memory")) q.memory_max = strtoull(v, NULL, 10);
		else if (!strcmp(a, "--pids")) q.pids_max = (unsigned)strtoul(v, NULL, 10);
		else if (!strcmp(a, "--cpu-ms")) q.cpu_ms = (unsigned)strtoul(v, NULL, 10);
		else if (!strcmp(a, "--output-max")) q.output_max = strtoull(v, NULL, 10);
		else return worldd_usage(V, "unknown flag %s (or too many of it)", a);
	}
	if (!q.worktree || i + 1 >= argc) return worldd_usage(V, "--worktree DIR and -- PROGRAM are required");
	char **cmd = argv + i + 1;
	struct world_err err;
	if (cmd[0][0] != '/') return worldd_fail(V, (werr(&err, WX_USAGE, "PROGRAM must be an absolute path"), &err));
	int fd = open(cmd[0], O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return worldd_fail(V, (werr(&err, errno == ENOENT ? WX_NOT_FOUND : WX_IO, "%s: %s", cmd[0], strerror(errno)),
		                       &err));
	q.argv = (const char *const *)cmd;
	q.argv0_fd = fd;
	q.envp = env;
	q.read_roots = ro;
	q.protected_names = prot;
	struct sup_exec_result r;
	int rc = sup_run_exec(&q, &r, &err);
	close(fd);
	if (rc < 0) return worldd_fail(V, &err);
	json_t *o = json_pack("{s:i,s:b,s:s,s:I,s:s%,s:I,s:b,s:s,s:s%,s:I,s:b,s:s,s:s,s:s,s:s,s:s,s:s}",
		"exit_code", r.exit_code, "timed_out", r.timed_out, "limit", r.limit, "duration_ms",
		(json_int_t)r.duration_ms, "stdout", r.out.text, r.out.len, "stdout_bytes", (json_int_t)r.out.bytes,
		"stdout_truncated", r.out.truncated, "stdout_sha256", r.out.sha256, "stderr", r.err.text, r.err.len,
		"stderr_bytes", (json_int_t)r.err.bytes, "stderr_truncated", r.err.truncated, "stderr_sha256",
		r.err.sha256, "denied", r.denied, "protected_created", r.protected_created, "profile", r.profile_name,
		"digest", r.profile_digest, "layers", r.layers);
	sup_exec_result_free(&r);
	char *t = o ? json_dumps(o, JSON_COMPACT) : NULL;
	json_decref(o);
	if (!t) return worldd_fail(V, (werr(&err, WX_FAIL, "out of memory"), &err));
	int w = printf("%s\n", t);
	free(t);
	if (w < 0 || fflush(stdout) != 0) return worldd_fail(V, (werr(&err, WX_IO, "write: %s", strerror(errno)), &err));
	return WX_OK;
}

const struct worldd_verb capsule_verbs[] = {
	{ "capsule exec", "run one command in an exec capsule (Workspace.Exec's mechanism); print the result",
	  CAPSULE_EXEC_HELP, cmd_capsule_exec },
	{ "run", "run one transition call in a capsule; print its output object", RUN_HELP, cmd_run },
	{ "invoke", "alias of worldd run", RUN_HELP, cmd_invoke },
	{ "check", "run the bounded source check of a transition in a capsule", CHECK_HELP, cmd_check },
	{ "source check", "alias of worldd check", CHECK_HELP, cmd_source_check },
	{ "profile list", "list the capsule profiles",
	  "usage: worldd profile list [--json]\n\nOne line per profile: name and purpose; --json: one JSON array\n"
	  "[{\"name\",\"purpose\"}].\n\nexit codes:\n  0 ok\n  2 usage\n  9 write failed\n",
	  cmd_profile_list },
	{ "profile show", "print a capsule profile (text, json, seccomp pfc or raw bpf)",
	  "usage: worldd profile show NAME [--format text|json|pfc|bpf]\n\n"
	  "Prints every layer of profile NAME with the values a capsule gets: namespaces,\n"
	  "identity mapping, mounts (tmpfs sizes and options), every rlimit as set (soft /\n"
	  "hard, and the ones left inherited), cgroup limits and, on this host, where the\n"
	  "groups go or why there are none, limits, capabilities, environment, landlock\n"
	  "rules (asked, and granted under this kernel's ABI), the seccomp default action,\n"
	  "the arch and x32 guards (read back from the BPF) and every rule. pfc is\n"
	  "libseccomp's PFC export of the filter with the x32 guard written in (libseccomp\n"
	  "leaves it out); bpf is the raw filter program (struct sock_filter array) for\n"
	  "archiving. json is what `worldd profile diff --against FILE` reads.\n\n"
	  "exit codes:\n  0 ok\n  2 usage (unknown format)\n  4 profile not found\n  9 write failed\n",
	  cmd_profile_show },
	{ "profile diff", "the layer-by-layer difference of two profiles (or against a saved one)",
	  PROFILE_DIFF_HELP, cmd_profile_diff },
	{ NULL, NULL, NULL, NULL },
};
