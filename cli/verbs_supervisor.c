/* cli/verbs_supervisor.c: the worldd verbs of supervisor/ (see cli/verbs.h):
 * `invoke` (one transition call through the supervisor: admission,
 * deadlines, caps and the frame protocol, in a capsule) and `source check`
 * (a bounded source check the same way). Until broker/ exists, an effectful
 * call needs --test-broker (supervisor/testbroker.h). */
#include "cli/verbs.h"
#include "store/file.h"
#include "supervisor/supervisor.h"
#include "supervisor/testbroker.h"
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SOURCE_MAX ((size_t)1 << 20)

#define FLAGS_HELP \
	"  --ailang-bin BIN        the interpreter (pinned: sha256 into a sealed memfd)\n" \
	"  --ailang-ref sha256:HEX refuse to run unless BIN hashes to this ref\n" \
	"  --source FILE           the transition source (staged as host/capsule/main.ail)\n" \
	"  --capacity N            capsules alive at once (default 8)\n" \
	"  --phase-ms N            plan / finish / pure-run / check deadline (defaults 4000/2000/4000/10000)\n" \
	"  --invocation-ms N       whole-call deadline (default 20000)\n" \
	"  --summary               print the capsule profile and what was applied on stderr\n"

#define EXIT_HELP \
	"exit codes:\n" \
	"  0  ok\n" \
	"  2  usage\n" \
	"  3  bad input: --input not a JSON object, over 1 MiB; test broker refused the plan\n" \
	"  4  not found: interpreter or source file absent\n" \
	" 10  capsule setup failed\n" \
	" 11  a phase or the whole-call deadline passed; capsule killed\n" \
	" 12  output cap: stdout/stderr over 8 MiB, output or plan over 1 MiB\n" \
	" 13  transition output (or plan) is not a JSON object\n" \
	" 14  interpreter failed (first line of its stderr)\n" \
	" 15  interpreter hash mismatch (--ailang-ref)\n" \
	" 16  capacity: too many capsules alive\n" \
	" 17  the seccomp filter stopped a syscall (named)\n" \
	" 18  the capsule broke the frame protocol (docs/protocol.md)\n"

struct opts {
	const char *bin, *ref, *source, *input, *input_file;
	int effectful, test_broker, summary;
	long capacity, phase_ms, invocation_ms;
};

static int parse_long(const char *verb, const char *flag, const char *v, long *out)
{
	char *end;
	errno = 0;
	long n = strtol(v, &end, 10);
	if (errno || *end || n <= 0 || n > 600000) return worldd_usage(verb, "%s needs a positive number, got '%s'", flag, v);
	*out = n;
	return 0;
}

static int parse_opts(const char *verb, int argc, char **argv, struct opts *o, int with_input)
{
	memset(o, 0, sizeof *o);
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(a, "--summary") == 0) { o->summary = 1; continue; }
		if (with_input && strcmp(a, "--effectful") == 0) { o->effectful = 1; continue; }
		if (with_input && strcmp(a, "--test-broker") == 0) { o->test_broker = 1; continue; }
		if (!v) return worldd_usage(verb, "unknown flag or missing value: %s", a);
		i++;
		if (strcmp(a, "--ailang-bin") == 0) o->bin = v;
		else if (strcmp(a, "--ailang-ref") == 0) o->ref = v;
		else if (strcmp(a, "--source") == 0) o->source = v;
		else if (with_input && strcmp(a, "--input") == 0) o->input = v;
		else if (with_input && strcmp(a, "--input-file") == 0) o->input_file = v;
		else if (strcmp(a, "--capacity") == 0) { if (parse_long(verb, a, v, &o->capacity)) return WX_USAGE; }
		else if (strcmp(a, "--phase-ms") == 0) { if (parse_long(verb, a, v, &o->phase_ms)) return WX_USAGE; }
		else if (strcmp(a, "--invocation-ms") == 0) { if (parse_long(verb, a, v, &o->invocation_ms)) return WX_USAGE; }
		else return worldd_usage(verb, "unknown flag %s", a);
	}
	if (!o->bin) return worldd_usage(verb, "--ailang-bin is required");
	if (!o->source) return worldd_usage(verb, "--source is required");
	if (with_input && o->input && o->input_file) return worldd_usage(verb, "give only one of --input and --input-file");
	if (o->effectful && !o->test_broker)
		return worldd_usage(verb, "--effectful needs --test-broker (the real broker is not wired to this verb)");
	if (o->test_broker && !o->effectful) return worldd_usage(verb, "--test-broker goes with --effectful");
	return 0;
}

static struct supervisor *make_sup(const struct opts *o, int check, struct world_err *err)
{
	struct sup_limits lim;
	sup_limits_default(&lim);
	if (o->capacity) lim.capacity = (unsigned)o->capacity;
	if (o->phase_ms) {
		if (check) lim.check_ms = (unsigned)o->phase_ms;
		else lim.pure_ms = lim.plan_ms = lim.finish_ms = (unsigned)o->phase_ms;
	}
	if (o->invocation_ms) lim.invocation_ms = (unsigned)o->invocation_ms;
	struct launcher *l = launcher_capsule_new(o->bin, o->ref, err);
	if (!l) return NULL;
	return sup_new(&lim, l, err);
}

static void print_summary(const char *verb, struct supervisor *s, const struct sup_result *res)
{
	struct world_err e;
	struct launcher *l = sup_launcher(s);
	const struct sup_limits *lim = sup_get_limits(s);
	fflush(stdout);
	l->describe(l, res->profile, 2, &e);
	fprintf(stderr,
	        "  supervisor    deadlines plan %u ms, finish %u ms, pure %u ms, check %u ms, whole call %u ms;\n"
	        "                stdout/stderr caps %zu/%zu bytes, output %zu bytes, args/plan %zu bytes; capacity %u\n"
	        "  applied       %s\n"
	        "worldd %s: %s profile; %ld ms; capsule stderr %zu bytes\n",
	        lim->plan_ms, lim->finish_ms, lim->pure_ms, lim->check_ms, lim->invocation_ms, lim->stdout_max,
	        lim->stderr_max, lim->output_max, lim->payload_max, lim->capacity,
	        res->layers[0] ? res->layers : "(not reported)", verb, sup_profile_name(res->profile), res->elapsed_ms,
	        res->stderr_len);
}

static int invoke_run(int argc, char **argv)
{
	const char *verb = "invoke";
	struct opts o;
	int u = parse_opts(verb, argc, argv, &o, 1);
	if (u) return u;
	struct world_err err = { 0, "" };
	char *src = NULL, *in = NULL;
	size_t src_len = 0, in_len = 0;
	if (world_read_file(o.source, SOURCE_MAX, &src, &src_len, &err) < 0) return worldd_fail(verb, &err);
	if (o.input_file) {
		if (world_read_file(o.input_file, (size_t)1 << 20, &in, &in_len, &err) < 0) {
			free(src);
			return worldd_fail(verb, &err);
		}
	} else {
		in = strdup(o.input ? o.input : "{}");
		in_len = in ? strlen(in) : 0;
	}
	struct supervisor *s = make_sup(&o, 0, &err);
	if (!s) {
		free(src);
		free(in);
		return worldd_fail(verb, &err);
	}
	struct sup_result res;
	struct sup_test_broker tb = { 0, 0 };
	int rc = o.effectful ? sup_run_effectful(s, src, src_len, in, in_len, sup_test_broker, &tb, &res, &err)
	                     : sup_run_pure(s, src, src_len, in, in_len, &res, &err);
	int code = WX_OK;
	if (rc < 0) {
		code = worldd_fail(verb, &err);
	} else if (o.effectful) {
		json_t *plan = json_loadb(res.plan, res.plan_len, 0, NULL);
		json_t *out = res.output ? json_loadb(res.output, res.output_len, 0, NULL) : json_null();
		json_t *all = json_pack("{s:o, s:b, s:o}", "plan", plan, "finished", res.finished, "output", out);
		char *text = all ? json_dumps(all, JSON_COMPACT) : NULL;
		if (text) puts(text);
		free(text);
		json_decref(all);
	} else {
		fwrite(res.output, 1, res.output_len, stdout);
		putchar('\n');
	}
	if (o.summary) print_summary(verb, s, &res);
	sup_result_free(&res);
	sup_free(s);
	free(src);
	free(in);
	return code;
}

static int source_check_run(int argc, char **argv)
{
	const char *verb = "source check";
	struct opts o;
	int u = parse_opts(verb, argc, argv, &o, 0);
	if (u) return u;
	struct world_err err = { 0, "" };
	char *src = NULL;
	size_t src_len = 0;
	if (world_read_file(o.source, SOURCE_MAX, &src, &src_len, &err) < 0) return worldd_fail(verb, &err);
	struct supervisor *s = make_sup(&o, 1, &err);
	if (!s) {
		free(src);
		return worldd_fail(verb, &err);
	}
	struct sup_result res;
	int rc = sup_check_source(s, src, src_len, &res, &err);
	int code = WX_OK;
	if (rc < 0) code = worldd_fail(verb, &err);
	else printf("source check: %s accepted\n", o.source);
	if (o.summary) print_summary(verb, s, &res);
	sup_result_free(&res);
	sup_free(s);
	free(src);
	return code;
}

const struct worldd_verb supervisor_verbs[] = {
	{ "invoke", "run one transition call through the supervisor, in a capsule",
	  "usage: worldd invoke --ailang-bin BIN --source FILE [--input JSON | --input-file FILE]\n"
	  "                     [--effectful --test-broker] [--ailang-ref sha256:HEX] [--capacity N]\n"
	  "                     [--phase-ms N] [--invocation-ms N] [--summary]\n\n"
	  "Runs the transition in FILE through the supervisor: admission, a capsule under the\n"
	  "`transition` profile, the frame protocol (docs/protocol.md), per-phase and whole-call\n"
	  "deadlines, output caps. --input is the caller's arguments, a JSON object (default {}).\n"
	  "A pure call prints the output object. --effectful runs the plan phase, hands the plan to\n"
	  "the TEST broker (grants everything, echoes the payload; not the real broker) and runs the\n"
	  "finish phase; prints {\"plan\":...,\"finished\":bool,\"output\":...|null}.\n\n"
	  FLAGS_HELP "  --input JSON / --input-file FILE   the arguments (a JSON object, at most 1 MiB)\n"
	  "  --effectful --test-broker          plan -> test broker -> finish\n\n" EXIT_HELP,
	  invoke_run },
	{ "source check", "check a transition source in a capsule (source-check profile)",
	  "usage: worldd source check --ailang-bin BIN --source FILE [--ailang-ref sha256:HEX]\n"
	  "                           [--phase-ms N] [--summary]\n\n"
	  "Runs `BIN check host/capsule/main.ail` through the supervisor in a capsule under the\n"
	  "`source-check` profile (empty scratch root: a world/* import fails with LDR001).\n"
	  "Prints \"source check: FILE accepted\", or fails with exit 19 and the first diagnostic.\n\n"
	  FLAGS_HELP "\n" EXIT_HELP " 19  the interpreter refused the source (first diagnostic line)\n",
	  source_check_run },
	{ NULL, NULL, NULL, NULL },
};
