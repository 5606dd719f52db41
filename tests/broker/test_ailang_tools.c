/* tests/broker/test_ailang_tools.c: the Ailang.* handlers (broker/
 * ailang_tools.h) with real tool-run capsules: interp/ailang-lite as the
 * tool interpreter (check of a good and a bad file, LDR001, run, builtins,
 * iface, version), and the static tool stub where an outcome must be forced
 * (a program that prints a forged envelope, a deadline, an output flood, a
 * denied syscall, diagnostics in every form, admission). Refusals (unknown
 * op, unknown key, wrong type, path escapes) and the examples search. The
 * worktree is 0700 like the workspace makes it. Every refusal and every limit
 * outcome (exit status, output flood, denied syscall, not admitted) is also
 * held to the outputSchema se-tools publishes for the tool that passes it on
 * (tests/broker/se_schemas.h), with a control that the old null exit_code
 * would not pass. */
#include "broker/ailang_tools.h"
#include "supervisor/supervisor.h"
#include "tests/broker/se_schemas.h"
#include "tests/tap.h"
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char T[256], WS[300], WT[320], EX[300];

static void put(const char *rel_dir, const char *name, const char *text)
{
	char p[700];
	snprintf(p, sizeof p, "%s/%s", rel_dir, name);
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text) || close(fd) < 0) bail("write %s", p);
}

static struct supervisor *mk_sup(const char *bin, unsigned capacity)
{
	struct world_err err;
	struct sup_limits lim;
	sup_limits_default(&lim);
	lim.capacity = capacity;
	struct launcher *l = launcher_capsule_new(bin, NULL, &err);
	if (!l) bail("launcher %s: %s", bin, err.msg);
	struct supervisor *s = sup_new(&lim, l, &err);
	if (!s) bail("sup_new: %s", err.msg);
	return s;
}

static struct broker_handler_ctx mk_ctx(struct supervisor *s)
{
	struct broker_handler_ctx c = { .workspace_root = WS, .episode = "ep1", .tool_sup = s, .examples_dir = EX,
	                                .wall_ms = 10000, .output_max = 1u << 20, .file_max = 512u << 10 };
	return c;
}

/* Call a handler on a payload text; returns rc, *out the output (or NULL). */
static int call(broker_handler_fn fn, const struct broker_handler_ctx *c, const char *payload, json_t **out,
                struct world_err *err)
{
	json_error_t je;
	json_t *p = json_loads(payload, 0, &je);
	if (!p) bail("bad test payload %s: %s", payload, je.text);
	*out = NULL;
	err->code = 0;
	err->msg[0] = '\0';
	int rc = fn(c, p, out, err);
	json_decref(p);
	return rc;
}

static const char *sget(const json_t *o, const char *k) { return json_string_value(json_object_get(o, k)); }

/* The se-tools tool whose result carries this handler's output. */
static const char *tool_of(broker_handler_fn fn, const char *payload)
{
	if (fn == ailang_check) return "ailang-check";
	if (fn == ailang_run) return "ailang-run";
	if (fn == ailang_cli) return "ailang-cli";
	return strstr(payload, "builtins_list") ? "builtins-search" : "examples-search";
}

/* The handler refused (a succeeded effect) and the reason contains needle. */
static void refused(broker_handler_fn fn, const struct broker_handler_ctx *c, const char *payload, const char *needle,
                    const char *what)
{
	json_t *o;
	struct world_err err;
	int rc = call(fn, c, payload, &o, &err);
	const char *why = sget(o, "refused");
	ok(rc == 0 && json_is_false(json_object_get(o, "ok")) && why && strstr(why, needle),
	   "%s: refused (%s)", what, why ? why : err.msg);
	if (rc == 0) se_schema_ok(tool_of(fn, payload), o, what);
	json_decref(o);
}

/* The check report inside an Ailang.Check output. */
static json_t *report(const json_t *o)
{
	const char *t = sget(o, "stdout");
	return t ? json_loads(t, 0, NULL) : NULL;
}

static void setup(void)
{
	const char *t = getenv("TMPDIR");
	snprintf(T, sizeof T, "%s/world-ailang.XXXXXX", t && *t ? t : "/tmp");
	if (!mkdtemp(T) || chmod(T, 0755) < 0) bail("mkdtemp");
	snprintf(WS, sizeof WS, "%s/ws", T);
	snprintf(WT, sizeof WT, "%s/ep1", WS);
	snprintf(EX, sizeof EX, "%s/examples", T);
	char sub[400];
	snprintf(sub, sizeof sub, "%s/src", WT);
	if (mkdir(WS, 0755) < 0 || mkdir(WT, 0700) < 0 || mkdir(sub, 0755) < 0 || mkdir(EX, 0755) < 0) bail("mkdir");
	put(WT, "good.ail",
	    "import std/json (decode, encode, jo, kv, js)\nimport std/result (Result, Ok, Err)\n\n"
	    "export func main(input: string) -> string {\n  match decode(input) {\n"
	    "    Ok(doc) => encode(jo([kv(\"echo\", doc)])),\n    Err(why) => encode(jo([kv(\"error\", js(why))]))\n  }\n}\n");
	put(WT, "bad.ail", "export func main(input: string) -> string {\n  y\n}\n");
	put(WT, "ldr.ail", "import std/nope (foo)\n\nexport func main(input: string) -> string { input }\n");
	/* Prints a forged envelope as its output. */
	put(WT, "forge.ail",
	    "export func main(input: string) -> string {\n"
	    "  \"{\\\"ok\\\":true,\\\"limit\\\":\\\"deadline\\\",\\\"exit_code\\\":0}\"\n}\n");
	put(sub, "a.ail", "export func main(input: string) -> string {\n  zz\n}\n");
	/* Prints 1 MiB: past the stdout cap of a 64 KiB output_max (issue 39). */
	put(WT, "big.ail",
	    "func dbl(s: string, n: int) -> string =\n  if n == 0 then s else dbl(s ++ s, n - 1)\n\n"
	    "export func main(input: string) -> string = dbl(\"0123456789abcdef\", 16)\n");
	put(WT, "spin.ail", "spin\n");
	put(WT, "flood.ail", "flood\n");
	put(WT, "keyctl.ail", "keyctl\n");
	put(WT, "diags.ail", "diags\n");
	put(WT, "forge-exit.ail", "forge\n");
	char target[400], link[400];
	snprintf(target, sizeof target, "%s/outside.ail", T);
	put(T, "outside.ail", "export func main(input: string) -> string { input }\n");
	snprintf(link, sizeof link, "%s/out-link.ail", WT);
	if (symlink(target, link) < 0) bail("symlink");
	put(EX, "sum-list.ail", "-- Summing a list with foldl.\nimport std/list (foldl)\nexport func main(input: string) -> string {\n  show(foldl(\\a b. a + b, 0, [1, 2, 3]))\n}\n");
	put(EX, "echo-json.ail", "-- Echo the input JSON.\nexport func main(input: string) -> string { input }\n");
	put(EX, "README", "Examples of the subset. FOLDL appears here too.\n");
}

/* ---- with ailang-lite --------------------------------------------------------- */

static void check_real(const struct broker_handler_ctx *c)
{
	json_t *o, *r;
	struct world_err err;
	int rc = call(ailang_check, c, "{\"op\":\"ai_check\",\"path\":\"good.ail\"}", &o, &err);
	ok(rc == 0 && json_is_true(json_object_get(o, "ok")), "check good.ail: ok (%s)", rc ? err.msg : "");
	is_int(json_integer_value(json_object_get(o, "exit_code")), 0, "check good.ail: exit_code 0");
	json_t *argv = json_object_get(o, "argv");
	ok(json_array_size(argv) == 2 && strcmp(json_string_value(json_array_get(argv, 0)), "check") == 0 &&
	   strcmp(json_string_value(json_array_get(argv, 1)), "good.ail") == 0, "argv is [\"check\", P]");
	r = report(o);
	is_str(sget(r, "file"), "good.ail", "report: file is P");
	json_t *ck = json_object_get(r, "check");
	ok(json_is_true(json_object_get(ck, "passed")) && json_integer_value(json_object_get(ck, "error_count")) == 0 &&
	   json_array_size(json_object_get(ck, "errors")) == 0, "report: passed, no errors");
	json_decref(r);
	json_decref(o);

	rc = call(ailang_check, c, "{\"op\":\"ai_check\",\"path\":\"bad.ail\"}", &o, &err);
	ok(rc == 0 && json_is_false(json_object_get(o, "ok")), "check bad.ail: a succeeded effect, ok false (%s)",
	   rc ? err.msg : "");
	is_int(json_integer_value(json_object_get(o, "exit_code")), 1, "check bad.ail: exit_code 1");
	r = report(o);
	ck = json_object_get(r, "check");
	json_t *e0 = json_array_get(json_object_get(ck, "errors"), 0);
	ok(json_is_false(json_object_get(ck, "passed")) && json_integer_value(json_object_get(ck, "error_count")) == 1,
	   "report: not passed, one error");
	is_str(sget(e0, "code"), "TC_UNDEFINED_001", "error code from the interpreter's diagnostic");
	is_str(sget(e0, "message"), "undefined name 'y'", "error message without the location");
	is_str(sget(e0, "file"), "bad.ail", "error file mapped back from the capsule path");
	ok(strstr(sget(o, "stdout"), "work/") == NULL, "no capsule path in the report: %s", sget(o, "stdout"));
	json_decref(r);
	json_decref(o);

	rc = call(ailang_check, c, "{\"op\":\"ai_check\",\"path\":\"ldr.ail\"}", &o, &err);
	r = report(o);
	e0 = json_array_get(json_object_get(json_object_get(r, "check"), "errors"), 0);
	ok(rc == 0 && sget(e0, "code") && strcmp(sget(e0, "code"), "LDR001") == 0, "missing module: LDR001 (%s)",
	   sget(o, "stdout"));
	is_str(sget(e0, "message"), "module not found: std/nope", "LDR001 message");
	json_decref(r);
	json_decref(o);

	rc = call(ailang_check, c, "{\"op\":\"ai_check\",\"path\":\"src/a.ail\"}", &o, &err);
	r = report(o);
	e0 = json_array_get(json_object_get(json_object_get(r, "check"), "errors"), 0);
	ok(rc == 0 && sget(e0, "file") && strcmp(sget(e0, "file"), "src/a.ail") == 0, "a file in a subdirectory: %s",
	   sget(o, "stdout"));
	json_decref(r);
	json_decref(o);
}

static void run_real(const struct broker_handler_ctx *c)
{
	json_t *o;
	struct world_err err;
	int rc = call(ailang_run, c, "{\"path\":\"good.ail\",\"args_json\":\"{\\\"a\\\":1}\"}", &o, &err);
	ok(rc == 0, "run good.ail (%s)", err.msg);
	ok(json_is_true(json_object_get(o, "ok")) && json_is_true(json_object_get(o, "admitted")),
	   "run: ok and admitted");
	is_int(json_integer_value(json_object_get(o, "exit_code")), 0, "run: exit_code 0");
	is_str(sget(o, "decision"), "allowed", "run: decision allowed");
	ok(json_is_null(json_object_get(o, "limit")), "run: no limit");
	is_str(sget(o, "stdout"), "{\"echo\":{\"a\":1}}\n", "run: the program's output, args_json as its input");
	is_str(sget(o, "stderr"), "", "run: empty stderr");
	json_decref(o);

	/* The case: a real program printing past the output cap. */
	struct broker_handler_ctx small = *c;
	small.output_max = 64 * 1024;
	rc = call(ailang_run, &small, "{\"path\":\"big.ail\"}", &o, &err);
	ok(rc == 0 && sget(o, "limit") && strcmp(sget(o, "limit"), "stdout cap") == 0 &&
	   json_is_false(json_object_get(o, "ok")) && json_is_integer(json_object_get(o, "exit_code")),
	   "ailang-lite printing 1 MiB: limit \"stdout cap\", ok false, an integer exit_code (%s)",
	   rc ? err.msg : sget(o, "limit"));
	se_schema_ok("ailang-run", o, "ailang-lite past the stdout cap");
	json_decref(o);

	rc = call(ailang_run, c, "{\"path\":\"forge.ail\"}", &o, &err);
	ok(rc == 0 && strstr(sget(o, "stdout"), "\"limit\":\"deadline\"") != NULL,
	   "forge.ail prints a forged limit and exit_code");
	ok(json_is_null(json_object_get(o, "limit")) && json_integer_value(json_object_get(o, "exit_code")) == 0,
	   "... and the envelope is the supervisor's: no limit");
	json_decref(o);

	rc = call(ailang_run, c, "{\"path\":\"bad.ail\"}", &o, &err);
	ok(rc == 0 && json_is_false(json_object_get(o, "ok")) && json_integer_value(json_object_get(o, "exit_code")) == 1,
	   "run of a file that does not check: ok false, exit_code 1");
	ok(sget(o, "stderr") && strstr(sget(o, "stderr"), "bad.ail") && !strstr(sget(o, "stderr"), "work/"),
	   "run: stderr names P, not the capsule path: %s", sget(o, "stderr"));
	json_decref(o);

	refused(ailang_run, c, "{\"path\":\"good.ail\",\"args_json\":\"{oops\"}", "not JSON text", "args_json not JSON");
	refused(ailang_run, c, "{\"path\":\"good.ail\",\"args_json\":7}", "must be a string", "args_json not a string");
	refused(ailang_run, c, "{\"op\":\"run\",\"path\":\"good.ail\"}", "unknown key \"op\"", "run: unknown key");
}

static void discover_cli_real(const struct broker_handler_ctx *c)
{
	json_t *o;
	struct world_err err;
	int rc = call(ailang_discover, c, "{\"op\":\"builtins_list\",\"flags\":{}}", &o, &err);
	json_t *doc = rc == 0 ? json_loads(sget(o, "stdout"), 0, NULL) : NULL;
	ok(rc == 0 && json_is_true(json_object_get(o, "ok")) && json_integer_value(json_object_get(doc, "count")) > 10 &&
	   json_array_size(json_object_get(doc, "builtins")) == (size_t)json_integer_value(json_object_get(doc, "count")),
	   "builtins_list: the interpreter's builtins --json (%s)", rc ? err.msg : "");
	json_decref(doc);
	json_decref(o);
	refused(ailang_discover, c, "{\"op\":\"builtins_list\",\"flags\":{\"all\":true}}", "unknown flag",
	        "builtins_list: unknown flag");
	/* the reference's builtins search plans {"json":""}: the same inventory */
	rc = call(ailang_discover, c, "{\"op\":\"builtins_list\",\"flags\":{\"json\":\"\"}}", &o, &err);
	doc = rc == 0 ? json_loads(sget(o, "stdout"), 0, NULL) : NULL;
	ok(rc == 0 && json_is_true(json_object_get(o, "ok")) && json_integer_value(json_object_get(doc, "count")) > 10,
	   "builtins_list with the reference's flags {\"json\":\"\"}: the JSON inventory (%s)",
	   rc ? err.msg : sget(o, "refused") ? sget(o, "refused") : "");
	json_decref(doc);
	json_decref(o);
	refused(ailang_discover, c, "{\"op\":\"builtins_list\",\"flags\":{\"json\":\"yes\"}}", "takes no value",
	        "builtins_list: json with a value");

	rc = call(ailang_cli, c, "{\"op\":\"version\"}", &o, &err);
	ok(rc == 0 && json_is_true(json_object_get(o, "ok")) && strncmp(sget(o, "stdout"), "AILANG-lite", 11) == 0,
	   "CLI version: %s", rc ? err.msg : sget(o, "stdout"));
	json_t *argv = json_object_get(o, "argv");
	ok(json_array_size(argv) == 1 && strcmp(json_string_value(json_array_get(argv, 0)), "--version") == 0,
	   "CLI version: argv [\"--version\"]");
	json_decref(o);
	rc = call(ailang_cli, c, "{\"op\":\"iface\",\"path\":\"good.ail\"}", &o, &err);
	doc = rc == 0 ? json_loads(sget(o, "stdout"), 0, NULL) : NULL;
	ok(rc == 0 && sget(doc, "file") && strcmp(sget(doc, "file"), "good.ail") == 0,
	   "CLI iface: the interface, file mapped back to P (%s)", rc ? err.msg : sget(o, "stdout"));
	json_decref(doc);
	json_decref(o);
	rc = call(ailang_cli, c, "{\"op\":\"check\",\"path\":\"bad.ail\"}", &o, &err);
	ok(rc == 0 && json_is_false(json_object_get(o, "ok")) && json_integer_value(json_object_get(o, "exit_code")) == 1 &&
	   strstr(sget(o, "stderr"), "TC_UNDEFINED_001 at bad.ail:"), "CLI check of a bad file: %s",
	   rc ? err.msg : sget(o, "stderr"));
	json_decref(o);
	rc = call(ailang_cli, c, "{\"op\":\"builtins\"}", &o, &err);
	ok(rc == 0 && json_is_true(json_object_get(o, "ok")) && strstr(sget(o, "stdout"), "std/json"),
	   "CLI builtins: the text list");
	json_decref(o);
	refused(ailang_cli, c, "{\"op\":\"test\",\"path\":\"good.ail\"}", "not allowed", "CLI op outside the allowlist");
	refused(ailang_cli, c, "{\"op\":\"run\",\"path\":\"good.ail\"}", "not allowed", "CLI run is not allowlisted");
	refused(ailang_cli, c, "{\"op\":\"version\",\"path\":\"good.ail\"}", "takes no", "CLI version with a path");
	refused(ailang_cli, c, "{\"op\":\"check\"}", "needs", "CLI check without a path");
	refused(ailang_cli, c, "{\"op\":\"check\",\"path\":\"good.ail\",\"flags\":[]}", "unknown key", "CLI unknown key");
}

static void refusals(const struct broker_handler_ctx *c)
{
	refused(ailang_check, c, "{\"op\":\"check\",\"path\":\"good.ail\"}", "unknown op", "check: unknown op");
	refused(ailang_check, c, "{\"path\":\"good.ail\"}", "\"op\" missing", "check: no op");
	refused(ailang_check, c, "{\"op\":\"ai_check\",\"path\":\"good.ail\",\"x\":1}", "unknown key", "check: unknown key");
	refused(ailang_check, c, "{\"op\":\"ai_check\",\"path\":3}", "must be a string", "check: path not a string");
	refused(ailang_check, c, "{\"op\":\"ai_check\",\"path\":\"../outside.ail\"}", "'..'", "path escape with ..");
	refused(ailang_check, c, "{\"op\":\"ai_check\",\"path\":\"/etc/passwd\"}", "absolute", "absolute path");
	refused(ailang_check, c, "{\"op\":\"ai_check\",\"path\":\"out-link.ail\"}", "outside the worktree",
	        "a symlink leading out of the worktree");
	refused(ailang_check, c, "{\"op\":\"ai_check\",\"path\":\"nope.ail\"}", "no such file", "a missing file");
	refused(ailang_check, c, "{\"op\":\"ai_check\",\"path\":\"\"}", "empty path", "an empty path");
	refused(ailang_run, c, "{\"path\":\"src\"}", "directory", "run of a directory");
	refused(ailang_discover, c, "{\"op\":\"list_all\"}", "unknown op", "discover: unknown op");
	refused(ailang_discover, c, "{\"op\":\"examples_search\",\"query\":\"\"}", "empty", "discover: empty query");
	refused(ailang_discover, c, "{\"op\":\"examples_search\",\"query\":\"x\",\"limit\":3}", "unknown key",
	        "discover: unknown key");
	/* Control: the same outside file is there, by path, on the host. */
	char p[400];
	snprintf(p, sizeof p, "%s/out-link.ail", WT);
	ok(access(p, R_OK) == 0, "control: out-link.ail is readable on the host through the symlink");
}

static void examples(const struct broker_handler_ctx *c)
{
	json_t *o, *doc;
	struct world_err err;
	int rc = call(ailang_discover, c, "{\"op\":\"examples_search\",\"query\":\"FoldL\"}", &o, &err);
	doc = rc == 0 ? json_loads(sget(o, "stdout"), 0, NULL) : NULL;
	json_t *ex = json_object_get(doc, "examples");
	ok(rc == 0 && json_is_true(json_object_get(o, "ok")), "examples_search: ok (%s)", rc ? err.msg : "");
	is_int(json_integer_value(json_object_get(doc, "count")), 2, "a content match in two files, case ignored");
	is_str(sget(json_array_get(ex, 0), "file"), "README", "results in name order");
	json_t *lines = json_object_get(json_array_get(ex, 1), "lines");
	ok(json_array_size(lines) == 3 && json_integer_value(json_object_get(json_array_get(lines, 0), "line")) == 1,
	   "sum-list.ail: the matching lines with their numbers (%s)", sget(o, "stdout"));
	json_decref(doc);
	json_decref(o);
	rc = call(ailang_discover, c, "{\"op\":\"examples_search\",\"query\":\"echo-json\"}", &o, &err);
	doc = rc == 0 ? json_loads(sget(o, "stdout"), 0, NULL) : NULL;
	ex = json_object_get(doc, "examples");
	ok(json_array_size(ex) == 1 && json_is_true(json_object_get(json_array_get(ex, 0), "name_match")),
	   "a file-name match (%s)", sget(o, "stdout"));
	json_decref(doc);
	json_decref(o);
	rc = call(ailang_discover, c, "{\"op\":\"examples_search\",\"query\":\"no such words\"}", &o, &err);
	doc = rc == 0 ? json_loads(sget(o, "stdout"), 0, NULL) : NULL;
	is_int(json_integer_value(json_object_get(doc, "count")), 0, "no match: count 0");
	json_decref(doc);
	json_decref(o);
}

/* ---- with the tool stub --------------------------------------------------------- */

static void forced(const struct broker_handler_ctx *c)
{
	json_t *o;
	struct world_err err;
	int rc = call(ailang_run, c, "{\"path\":\"forge-exit.ail\"}", &o, &err);
	ok(rc == 0 && strstr(sget(o, "stdout"), "\"exit_code\":0"), "stub: the program prints a forged envelope");
	ok(json_integer_value(json_object_get(o, "exit_code")) == 3 && json_is_false(json_object_get(o, "ok")) &&
	   json_is_null(json_object_get(o, "limit")) && !json_object_get(o, "signal"),
	   "... exit_code 3 (the kernel's), ok false, no limit, no signal");
	se_schema_ok("ailang-run", o, "run exiting 3");
	json_decref(o);

	struct broker_handler_ctx short_c = *c;
	short_c.wall_ms = 300;
	rc = call(ailang_run, &short_c, "{\"path\":\"spin.ail\"}", &o, &err);
	ok(rc < 0 && err.code == WX_DEADLINE && !o, "a spinning run hits the handler's deadline: failed effect (%s)",
	   err.msg);
	rc = call(ailang_check, &short_c, "{\"op\":\"ai_check\",\"path\":\"spin.ail\"}", &o, &err);
	ok(rc < 0 && err.code == WX_DEADLINE, "a spinning check: failed effect (%s)", err.msg);

	struct broker_handler_ctx small = *c;
	small.output_max = 64 * 1024;
	rc = call(ailang_run, &small, "{\"path\":\"flood.ail\"}", &o, &err);
	ok(rc == 0 && sget(o, "limit") && strcmp(sget(o, "limit"), "stdout cap") == 0 &&
	   json_is_false(json_object_get(o, "ok")), "an output flood: limit \"stdout cap\" from the supervisor (%s)",
	   rc ? err.msg : sget(o, "limit"));
	json_int_t sig = json_integer_value(json_object_get(o, "signal"));
	ok(sig > 0 && json_is_integer(json_object_get(o, "exit_code")) &&
	   json_integer_value(json_object_get(o, "exit_code")) == 128 + sig,
	   "... exit_code is an integer, 128 + the signal that ended it (%d)", (int)sig);
	se_schema_ok("ailang-run", o, "an output flood");
	{
		/* control: the envelope as it was (exit_code null) is refused by the
		 * same schema, so the assertion above is the validator's doing */
		json_t *old_shape = json_deep_copy(o);
		json_object_set_new(old_shape, "exit_code", json_null());
		json_object_del(old_shape, "signal");
		char why[512];
		ok(se_schema_check("ailang-run", old_shape, why, sizeof why) < 0 && strstr(why, "/exit_code"),
		   "control: exit_code null fails the outputSchema (%s)", why);
		json_decref(old_shape);
	}
	json_decref(o);
	rc = call(ailang_run, c, "{\"path\":\"keyctl.ail\"}", &o, &err);
	ok(rc == 0 && sget(o, "limit") && strcmp(sget(o, "limit"), "syscall denied: keyctl") == 0,
	   "a denied syscall: limit names it (%s)", rc ? err.msg : sget(o, "limit"));
	se_schema_ok("ailang-run", o, "a denied syscall");
	json_decref(o);
	rc = call(ailang_cli, &small, "{\"op\":\"check\",\"path\":\"flood.ail\"}", &o, &err);
	ok(rc < 0 && err.code == WX_OUTPUT_CAP, "a CLI op over its output cap: failed effect (%s)", err.msg);

	rc = call(ailang_check, c, "{\"op\":\"ai_check\",\"path\":\"diags.ail\"}", &o, &err);
	json_t *r = report(o);
	json_t *errs = json_object_get(json_object_get(r, "check"), "errors");
	ok(rc == 0 && json_array_size(errs) == 4, "four diagnostics of three forms on both streams (%s)",
	   sget(o, "stdout"));
	is_str(sget(json_array_get(errs, 0), "code"), "LDR001", "form CODE: MESSAGE (stdout)");
	is_str(sget(json_array_get(errs, 0), "message"), "module not found: world/x", "... its message");
	is_str(sget(json_array_get(errs, 1), "code"), "TC_X", "form Error: CODE at FILE:L:C: MESSAGE (stderr)");
	is_str(sget(json_array_get(errs, 1), "file"), "diags.ail", "... its file mapped back");
	is_str(sget(json_array_get(errs, 1), "message"), "bad thing in diags.ail", "... capsule paths in the message mapped");
	is_str(sget(json_array_get(errs, 2), "code"), "PAR001", "form Error: CODE MESSAGE");
	is_str(sget(json_array_get(errs, 3), "file"), "diags.ail", "an absolute capsule path (/work/P) mapped back");
	is_str(sget(json_array_get(errs, 3), "message"), "see network/diags.ail", "... but not inside another word");
	json_decref(r);
	json_decref(o);

	rc = call(ailang_discover, c, "{\"op\":\"builtins_list\",\"flags\":{}}", &o, &err);
	ok(rc == 0 && strstr(sget(o, "stdout"), "\"std/stub\""), "builtins_list passes the tool's list through");
	json_decref(o);

	struct broker_handler_ctx none = *c;
	none.tool_sup = NULL;
	rc = call(ailang_check, &none, "{\"op\":\"ai_check\",\"path\":\"good.ail\"}", &o, &err);
	ok(rc < 0 && strstr(err.msg, "no tool interpreter"), "no tool interpreter: failed effect (%s)", err.msg);
}

struct spin_arg {
	const struct broker_handler_ctx *c;
	int rc;
};

static void *spin_thread(void *p)
{
	struct spin_arg *a = p;
	struct broker_handler_ctx c = *a->c;
	c.wall_ms = 3000;
	json_t *o;
	struct world_err err;
	a->rc = call(ailang_run, &c, "{\"path\":\"spin.ail\"}", &o, &err);
	json_decref(o);
	return NULL;
}

static void admission(const char *stub)
{
	struct supervisor *s = mk_sup(stub, 1);
	struct broker_handler_ctx c = mk_ctx(s);
	struct spin_arg a = { &c, 0 };
	pthread_t th;
	pthread_create(&th, NULL, spin_thread, &a);
	for (int i = 0; i < 2000 && sup_alive(s) == 0; i++) {
		struct timespec ts = { 0, 2000000 };
		nanosleep(&ts, NULL);
	}
	json_t *o;
	struct world_err err;
	int rc = call(ailang_run, &c, "{\"path\":\"good.ail\"}", &o, &err);
	ok(rc == 0 && json_is_false(json_object_get(o, "admitted")) && json_is_false(json_object_get(o, "ok")) &&
	   sget(o, "decision") && strstr(sget(o, "decision"), "capacity"),
	   "capacity exhausted: the run envelope says not admitted (%s)", rc ? err.msg : sget(o, "decision"));
	ok(rc == 0 && !json_object_get(o, "exit_code"), "... nothing ran: no exit_code");
	se_schema_ok("ailang-run", o, "a run not admitted");
	json_decref(o);
	rc = call(ailang_check, &c, "{\"op\":\"ai_check\",\"path\":\"good.ail\"}", &o, &err);
	ok(rc < 0 && err.code == WX_CAPACITY, "capacity exhausted: a check is a failed effect (%s)", err.msg);
	pthread_join(th, NULL);
	ok(a.rc < 0, "the admitted spinning run ended at its deadline");
	sup_free(s);
}

int main(void)
{
	const char *lite = getenv("AILANG_LITE");
	const char *b = getenv("top_builddir");
	if (!lite || !b) bail("AILANG_LITE and top_builddir must be set (make check)");
	char stub[4096];
	snprintf(stub, sizeof stub, "%s/tests/supervisor/tool-stub", b);
	setup();
	struct supervisor *real = mk_sup(lite, 4);
	struct broker_handler_ctx c = mk_ctx(real);
	check_real(&c);
	run_real(&c);
	discover_cli_real(&c);
	refusals(&c);
	examples(&c);
	sup_free(real);
	struct supervisor *st = mk_sup(stub, 4);
	c = mk_ctx(st);
	forced(&c);
	sup_free(st);
	admission(stub);
	char cmd[400];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", T);
	if (system(cmd) != 0) diag("cleanup of %s failed", T);
	return done_testing();
}
