/* cli/verbs_capsule.c: the worldd verbs of capsule/ (see cli/verbs.h):
 * `run` (one pure transition in a capsule), `check` (bounded source check),
 * `profile list` and `profile show` (profiles as data for reviewers).
 * `run` and `check` go through supervisor/supervisor.h (admission,
 * deadlines, caps, error classes and the frame protocol are the
 * supervisor's, the same as `worldd invoke` / `worldd source check`);
 * `run --profile tool-run` is a supervisor tool run (sup_run_tool). */
#include "cli/verbs.h"
#include "store/file.h"
#include "capsule/profile.h"
#include "supervisor/agent.h"
#include "supervisor/supervisor.h"
#include <errno.h>
#include <jansson.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define EXIT_CODES_HELP \
	"exit codes:\n" \
	"  0  ok\n" \
	"  2  usage: bad or missing flags\n" \
	"  3  bad input: input not a JSON object or over 1 MiB, source/interpreter unreadable as given,\n" \
	"     interpreter not a static ELF\n" \
	"  4  not found: interpreter or source file absent\n" \
	" 10  capsule setup failed before exec (\"... capsule setup: STEP: reason\")\n" \
	" 11  deadline exceeded; the capsule (its pid namespace) was killed\n" \
	" 12  output cap: interpreter stdout or stderr over 8 MiB, or output object over 1 MiB;\n" \
	"     the capsule was killed\n" \
	" 13  output is not a JSON object (\"transition output is not a JSON object\")\n" \
	" 14  interpreter failed: non-zero exit or killed by a signal (first line of its stderr)\n" \
	" 15  interpreter hash mismatch (with --ailang-ref): nothing ran\n" \
	" 17  the seccomp filter stopped a syscall (\"syscall denied: NAME\"); capsule killed\n" \
	" 18  the capsule broke the frame protocol (docs/protocol.md)\n"

struct run_flags {
	const char *bin, *ref, *source, *input, *input_file, *profile, *worktree;
	unsigned long long timeout_ms;
	int summary;
};

static int parse_flags(const char *verb, int argc, char **argv, struct run_flags *f, int allow_input)
{
	memset(f, 0, sizeof *f);
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		const char **slot = NULL;
		if (strcmp(a, "--ailang-bin") == 0) slot = &f->bin;
		else if (strcmp(a, "--ailang-ref") == 0) slot = &f->ref;
		else if (strcmp(a, "--source") == 0) slot = &f->source;
		else if (allow_input && strcmp(a, "--input") == 0) slot = &f->input;
		else if (allow_input && strcmp(a, "--input-file") == 0) slot = &f->input_file;
		else if (allow_input && strcmp(a, "--profile") == 0) slot = &f->profile;
		else if (allow_input && strcmp(a, "--worktree") == 0) slot = &f->worktree;
		else if (strcmp(a, "--summary") == 0) { f->summary = 1; continue; }
		else if (strcmp(a, "--timeout-ms") == 0) {
			if (i + 1 >= argc) return worldd_usage(verb, "--timeout-ms needs a value");
			char *end;
			errno = 0;
			f->timeout_ms = strtoull(argv[++i], &end, 10);
			if (errno || *end || f->timeout_ms == 0 || f->timeout_ms > 3600000)
				return worldd_usage(verb, "--timeout-ms '%s' is not a number of ms in 1..3600000", argv[i]);
			continue;
		} else return worldd_usage(verb, "unknown flag '%s'", a);
		if (i + 1 >= argc) return worldd_usage(verb, "%s needs a value", a);
		*slot = argv[++i];
	}
	if (!f->bin) return worldd_usage(verb, "--ailang-bin BIN is required");
	if (!f->source) return worldd_usage(verb, "--source FILE is required");
	if (allow_input && !!f->input == !!f->input_file)
		return worldd_usage(verb, "give exactly one of --input JSON or --input-file F");
	return 0;
}

/* The supervisor for one CLI call: its default limits (DESIGN §4), the
 * deadline of the one phase this verb runs overridden by --timeout-ms (the
 * whole-call deadline is raised to it when it is longer), and the capsule
 * launcher pinning BIN (with --ailang-ref a mismatch runs nothing). */
static struct supervisor *make_supervisor(const struct run_flags *f, int check, struct world_err *err)
{
	struct sup_limits lim;
	sup_limits_default(&lim);
	if (f->timeout_ms) {
		if (check) lim.check_ms = (unsigned)f->timeout_ms;
		else lim.pure_ms = (unsigned)f->timeout_ms;
		if (lim.invocation_ms < f->timeout_ms) lim.invocation_ms = (unsigned)f->timeout_ms;
	}
	struct launcher *l = launcher_capsule_new(f->bin, f->ref, err);
	if (!l) return NULL;
	return sup_new(&lim, l, err);
}

static void print_summary(const char *verb, struct supervisor *s, const struct sup_result *res)
{
	if (!res->layers[0]) return; /* no capsule started */
	const char *ref = launcher_capsule_ref(sup_launcher(s));
	fprintf(stderr, "worldd %s: capsule profile %s; interpreter %s; %s; %ld ms\n", verb,
	        sup_profile_name(res->profile), ref ? ref : "?", res->layers, res->elapsed_ms);
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

/* --profile tool-run: the same call as a tool run through the supervisor
 * (sup_run_tool: admission, deadline, caps; the interpreter is the
 * capsule's first process, its exit status the kernel's), with --worktree
 * mounted read-only at /work. Outcomes map to the same exit codes as the
 * transition path; the output rule (DESIGN §2) is applied here. */
static int run_tool(const struct run_flags *f, const char *src, size_t src_len, const char *input, size_t in_len)
{
	struct world_err err = { 0, "" };
	json_error_t je;
	json_t *v = json_loadb(input, in_len, JSON_REJECT_DUPLICATES, &je);
	int obj = json_is_object(v);
	json_decref(v);
	if (!v) return worldd_fail("run", (werr(&err, WX_BAD_INPUT, "args: malformed JSON at byte %d: %s", je.position, je.text), &err));
	if (!obj) return worldd_fail("run", (werr(&err, WX_BAD_INPUT, "args: not a JSON object"), &err));
	json_t *lit = json_stringn(input, in_len);
	char *args_json = lit ? json_dumps(lit, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
	json_decref(lit);
	if (!args_json) return worldd_fail("run", (werr(&err, WX_BAD_INPUT, "args: cannot be encoded as args.json"), &err));
	struct sup_limits lim;
	sup_limits_default(&lim);
	if (f->timeout_ms) lim.tool_ms = (unsigned)f->timeout_ms;
	struct launcher *l = launcher_capsule_new(f->bin, f->ref, &err);
	struct supervisor *s = l ? sup_new(&lim, l, &err) : NULL;
	if (!s) {
		free(args_json);
		return worldd_fail("run", &err);
	}
	struct launch_file files[2] = {
		{ "host/capsule/main.ail", src, src_len },
		{ "args.json", args_json, strlen(args_json) },
	};
	struct sup_tool_req req = { .args = sup_interp_run_args, .files = files, .nfiles = 2, .worktree = f->worktree };
	struct sup_tool_result res;
	int rc = sup_run_tool(s, &req, &res, &err);
	free(args_json);
	if (f->summary && res.layers[0]) {
		const char *ref = launcher_capsule_ref(sup_launcher(s));
		fprintf(stderr, "worldd run: capsule profile tool-run; interpreter %s; %s; %ld ms\n", ref ? ref : "?",
		        res.layers, res.elapsed_ms);
	}
	sup_free(s);
	if (rc < 0) return worldd_fail("run", &err);
	char line[300];
	first_line(res.stderr_text, line, sizeof line);
	if (strncmp(res.limit, "syscall denied: ", 16) == 0) werr(&err, WX_DENIED_SYSCALL, "%s", res.detail);
	else if (strcmp(res.limit, "deadline") == 0) werr(&err, WX_DEADLINE, "%s", res.detail);
	else if (strcmp(res.limit, "stdout cap") == 0 || strcmp(res.limit, "stderr cap") == 0)
		werr(&err, WX_OUTPUT_CAP, "%s", res.detail);
	else if (res.signal)
		werr(&err, WX_INTERP, "interpreter killed by signal %d (%s)%s%s%s%s in the tool run%s%s", res.signal,
		     strsignal(res.signal), res.limit[0] ? " (" : "", res.limit, res.limit[0] ? " limit" : "",
		     res.limit[0] ? ")" : "", line[0] ? ": " : "", line);
	else if (res.exit_code != 0)
		werr(&err, WX_INTERP, "interpreter exited with status %d in the tool run%s%s%s%s%s", res.exit_code,
		     res.limit[0] ? " (" : "", res.limit[0] ? res.limit : "", res.limit[0] ? " limit)" : "",
		     line[0] ? ": " : "", line);
	if (err.code) {
		sup_tool_result_free(&res);
		return worldd_fail("run", &err);
	}
	/* DESIGN §2: strip exactly one trailing newline; at most 1 MiB; an object. */
	size_t len = res.stdout_len;
	if (len > 0 && res.stdout_text[len - 1] == '\n') res.stdout_text[--len] = '\0';
	if (len > lim.output_max)
		werr(&err, WX_OUTPUT_CAP, "transition output is %zu bytes, over the %zu-byte cap", len, lim.output_max);
	else if (!(v = json_loadb(res.stdout_text, len, JSON_REJECT_DUPLICATES, NULL)) || !json_is_object(v))
		werr(&err, WX_NOT_OBJECT, "transition output is not a JSON object");
	json_decref(v);
	int code = WX_OK;
	if (err.code) {
		code = worldd_fail("run", &err);
	} else {
		fwrite(res.stdout_text, 1, len, stdout);
		fputc('\n', stdout);
		if (fflush(stdout) != 0) code = WX_IO;
	}
	sup_tool_result_free(&res);
	return code;
}

static int cmd_run(int argc, char **argv)
{
	struct run_flags f;
	int rc = parse_flags("run", argc, argv, &f, 1);
	if (rc) return rc;
	struct world_err err = { 0, "" };
	const struct capsule_profile *p = capsule_profile_find(f.profile ? f.profile : "transition");
	if (!p) return worldd_usage("run", "profile '%s' unknown (see worldd profile list)", f.profile);
	if (strcmp(p->name, "source-check") == 0)
		return worldd_usage("run", "profile source-check runs only source checks (worldd check)");
	if (f.worktree && strcmp(p->name, "tool-run") != 0)
		return worldd_usage("run", "--worktree needs --profile tool-run");
	struct sup_limits defaults;
	sup_limits_default(&defaults);
	char *src = NULL, *input = NULL;
	size_t src_len = 0, in_len = 0;
	if (world_read_file(f.source, p->limits.root_size / 2, &src, &src_len, &err) < 0)
		return worldd_fail("run", (werr_prefix(&err, "source"), &err));
	if (f.input_file) {
		if (world_read_file(f.input_file, defaults.payload_max, &input, &in_len, &err) < 0) {
			free(src);
			return worldd_fail("run", (werr_prefix(&err, "input"), &err));
		}
	} else {
		input = strdup(f.input);
		in_len = input ? strlen(input) : 0;
		if (!input) {
			free(src);
			return worldd_fail("run", (werr(&err, WX_FAIL, "out of memory"), &err));
		}
	}
	if (strcmp(p->name, "tool-run") == 0) {
		rc = run_tool(&f, src, src_len, input, in_len);
		free(src);
		free(input);
		return rc;
	}
	struct supervisor *s = make_supervisor(&f, 0, &err);
	if (!s) {
		free(src);
		free(input);
		return worldd_fail("run", &err);
	}
	struct sup_result res;
	rc = sup_run_pure(s, src, src_len, input, in_len, &res, &err);
	free(src);
	free(input);
	if (f.summary) print_summary("run", s, &res);
	int code = WX_OK;
	if (rc < 0) {
		code = worldd_fail("run", &err);
	} else {
		fwrite(res.output, 1, res.output_len, stdout);
		fputc('\n', stdout);
		if (fflush(stdout) != 0) code = WX_IO;
	}
	sup_result_free(&res);
	sup_free(s);
	return code;
}

static int cmd_check(int argc, char **argv)
{
	struct run_flags f;
	int rc = parse_flags("check", argc, argv, &f, 0);
	if (rc) return rc;
	struct world_err err = { 0, "" };
	const struct capsule_profile *p = capsule_profile_find("source-check");
	char *src = NULL;
	size_t src_len = 0;
	if (world_read_file(f.source, p->limits.root_size / 2, &src, &src_len, &err) < 0)
		return worldd_fail("check", (werr_prefix(&err, "source"), &err));
	struct supervisor *s = make_supervisor(&f, 1, &err);
	if (!s) {
		free(src);
		return worldd_fail("check", &err);
	}
	struct sup_result res;
	rc = sup_check_source(s, src, src_len, &res, &err);
	free(src);
	if (f.summary) print_summary("check", s, &res);
	int code = WX_OK;
	char line[300];
	if (rc == 0) {
		printf("accepted: %s\n", f.source);
		if (fflush(stdout) != 0) code = WX_IO;
	} else if (err.code == WX_CHECK_REFUSED && res.check_exit > 128 && res.check_exit < 128 + 65) {
		/* The agent reports a signal as 128+N: the interpreter was killed
		 * (a resource limit, or SIGSYS for a non-native syscall ABI), which
		 * is an interpreter failure, not a refusal of the source. */
		int sig = res.check_exit - 128;
		first_line(res.stderr_text, line, sizeof line);
		werr(&err, WX_INTERP, "source check: interpreter killed by signal %d (%s)%s%s", sig, strsignal(sig),
		     line[0] ? ": " : "", line);
		code = worldd_fail("check", &err);
	} else if (err.code == WX_CHECK_REFUSED) {
		/* The interpreter refused the source: show its diagnostics. */
		if (res.check_stdout) fputs(res.check_stdout, stderr);
		if (res.stderr_text) fwrite(res.stderr_text, 1, res.stderr_len, stderr);
		first_line(res.check_stdout && res.check_stdout[0] ? res.check_stdout : res.stderr_text, line, sizeof line);
		fprintf(stderr, "worldd check: source refused: %s: %s\n", f.source, line);
		code = WX_CHECK_REFUSED;
	} else {
		code = worldd_fail("check", &err);
	}
	sup_result_free(&res);
	sup_free(s);
	return code;
}

static int cmd_profile_list(int argc, char **argv)
{
	(void)argv;
	if (argc) return worldd_usage("profile list", "no arguments expected");
	for (const struct capsule_profile *p = capsule_profiles; p->name; p++)
		printf("%-13s %s\n", p->name, p->purpose);
	return WX_OK;
}

static int cmd_profile_show(int argc, char **argv)
{
	const char *name = NULL, *format = "text";
	for (int i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--format") == 0) {
			if (i + 1 >= argc) return worldd_usage("profile show", "--format needs a value");
			format = argv[++i];
		} else if (argv[i][0] == '-') {
			return worldd_usage("profile show", "unknown flag '%s'", argv[i]);
		} else if (!name) {
			name = argv[i];
		} else {
			return worldd_usage("profile show", "one profile name expected");
		}
	}
	if (!name) return worldd_usage("profile show", "NAME is required");
	if (strcmp(format, "text") && strcmp(format, "json") && strcmp(format, "pfc") && strcmp(format, "bpf"))
		return worldd_usage("profile show", "--format '%s' unknown (text, json, pfc, bpf)", format);
	const struct capsule_profile *p = capsule_profile_find(name);
	if (!p) {
		struct world_err err;
		werr(&err, WX_NOT_FOUND, "profile '%s' not found (see worldd profile list)", name);
		return worldd_fail("profile show", &err);
	}
	struct world_err err = { 0, "" };
	if (capsule_profile_render(p, format, stdout, &err) < 0) return worldd_fail("profile show", &err);
	return WX_OK;
}

const struct worldd_verb capsule_verbs[] = {
	{ "run", "run one pure transition in a capsule; print its output object",
	  "usage: worldd run --ailang-bin BIN --source FILE (--input JSON | --input-file F)\n"
	  "                  [--profile transition|tool-run] [--worktree DIR] [--timeout-ms N]\n"
	  "                  [--ailang-ref sha256:HEX] [--summary]\n\n"
	  "Runs one pure call through the supervisor, exactly as `worldd invoke` does: pins BIN\n"
	  "(sha256 into a sealed memfd; with --ailang-ref a mismatch runs nothing), stages FILE\n"
	  "as host/capsule/main.ail and the input (a JSON object) as args.json (one JSON string\n"
	  "literal) in an empty tmpfs root, and in a capsule of profile transition the\n"
	  "capsule's agent runs\n"
	  "  BIN run --quiet --caps \"\" --entry main --args-file args.json host/capsule/main.ail\n"
	  "under the supervisor's admission, deadlines and caps (docs/protocol.md). The output\n"
	  "(one trailing newline stripped, at most 1 MiB, a JSON object) is printed on stdout.\n"
	  "--timeout-ms overrides the pure-run deadline (4000 ms; the whole-call deadline,\n"
	  "20000 ms, is raised to it when shorter). --summary prints the layers applied (uid\n"
	  "map, cgroups, landlock) on stderr.\n"
	  "--profile tool-run runs the same argv as a supervisor tool run (sup_run_tool): the\n"
	  "interpreter is the capsule's first process, under the same admission and caps,\n"
	  "with the tool-run profile's 20000 ms wall time (or --timeout-ms) and the same exit\n"
	  "codes; --worktree DIR (tool-run only) mounts DIR read-only (ro,nosuid,nodev,noexec)\n"
	  "at /work inside the capsule (a symlink is refused). --profile source-check is\n"
	  "refused (usage): that profile runs only `worldd check`.\n"
	  "Changed from earlier releases: the input must be a JSON object (exit 3), and stderr\n"
	  "over its 8 MiB cap fails the run (exit 12) instead of being dropped.\n\n"
	  EXIT_CODES_HELP,
	  cmd_run },
	{ "check", "run the bounded source check of a transition in a capsule",
	  "usage: worldd check --ailang-bin BIN --source FILE [--timeout-ms N] [--ailang-ref sha256:HEX] [--summary]\n\n"
	  "Runs `BIN check host/capsule/main.ail` through the supervisor (as `worldd source\n"
	  "check` does) in a capsule of profile source-check (empty scratch root holding\n"
	  "only the source; 10 s deadline, or --timeout-ms). Prints \"accepted: FILE\" on\n"
	  "success; on refusal prints the interpreter's diagnostics on stderr, then\n"
	  "\"worldd check: source refused: FILE: FIRST LINE\". An interpreter killed by a\n"
	  "signal is a failure (14), not a refusal.\n\n"
	  EXIT_CODES_HELP
	  " 19  the interpreter refused the source\n",
	  cmd_check },
	{ "profile list", "list the capsule profiles",
	  "usage: worldd profile list\n\nOne line per profile: name and purpose.\n\nexit codes:\n  0 ok\n  2 usage\n",
	  cmd_profile_list },
	{ "profile show", "print a capsule profile (text, json, seccomp pfc or raw bpf)",
	  "usage: worldd profile show NAME [--format text|json|pfc|bpf]\n\n"
	  "Prints every layer of profile NAME: namespaces, identity mapping, mounts,\n"
	  "rlimits, cgroups, limits, capabilities, environment, landlock and the seccomp\n"
	  "allowlist. pfc is libseccomp's PFC export of the filter; bpf is the raw\n"
	  "filter program (struct sock_filter array) for archiving and diffing.\n\n"
	  "exit codes:\n  0 ok\n  2 usage (unknown format)\n  4 profile not found\n  9 write failed\n",
	  cmd_profile_show },
	{ NULL, NULL, NULL, NULL },
};
