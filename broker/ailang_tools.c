/* broker/ailang_tools.c: see ailang_tools.h. */
#include "broker/ailang_tools.h"
#include "broker/workspace.h"
#include "common/canon.h"
#include "supervisor/supervisor.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_ERRORS 100            /* diagnostics kept by Ailang.Check */
#define EXAMPLES_MAX_FILES 1000   /* entries looked at in examples_dir */
#define EXAMPLES_FILE_MAX ((size_t)256 << 10)
#define EXAMPLES_MAX_RESULTS 50   /* files reported */
#define EXAMPLES_LINES_PER_FILE 5
#define EXAMPLES_LINE_MAX 200     /* bytes of a matching line shown */
#define QUERY_MAX 256
#define EXAMPLES_TOTAL_MAX ((size_t)16 << 20) /* bytes read by one search */

/* ---- payload checks -------------------------------------------------------- */

/* The first member of payload not in allowed, or NULL. */
static const char *unknown_key(const json_t *payload, const char *const *allowed)
{
	const char *key;
	json_t *v;
	json_object_foreach((json_t *)payload, key, v) {
		int known = 0;
		for (size_t i = 0; allowed[i]; i++)
			if (strcmp(key, allowed[i]) == 0) known = 1;
		if (!known) return key;
	}
	return NULL;
}

/* A member that must be a string when present. Returns 0 (value or NULL
 * when absent) or 1 after a refusal. */
static int string_member(const json_t *payload, const char *key, const char **out, json_t **output,
                         const char *effect)
{
	json_t *v = json_object_get(payload, key);
	*out = NULL;
	if (!v) return 0;
	if (!json_is_string(v)) {
		broker_refuse(output, "%s: \"%s\" must be a string", effect, key);
		return 1;
	}
	*out = json_string_value(v);
	return 0;
}

/* Text from a tool is shown as JSON strings: invalid UTF-8 bytes and NUL
 * become '?' (in place). */
static void sanitize(char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		if (s[i] == '\0') {
			s[i++] = '?';
			continue;
		}
		size_t k = world_utf8_seq((const unsigned char *)s + i, n - i);
		if (k == 0) {
			s[i++] = '?';
			continue;
		}
		i += k;
	}
}

/* text with every occurrence of the capsule path of P ("/work/P" and
 * "work/P") replaced by P; malloc'd. */
static char *map_paths(const char *text, const char *path)
{
	if (!path) return strdup(text);
	size_t plen = strlen(path), tlen = strlen(text);
	char *cap = malloc(plen + 8);
	if (!cap) return NULL;
	snprintf(cap, plen + 8, "%s/%s", AILANG_WORKTREE_IN_CAPSULE, path);
	size_t clen = strlen(cap);
	char *out = malloc(tlen + 1); /* never grows: P is shorter than work/P */
	if (!out) {
		free(cap);
		return NULL;
	}
	size_t o = 0;
	for (size_t i = 0; i < tlen;) {
		/* Only at a word start: "network/P" is not the capsule path. */
		char prev = i ? text[i - 1] : ' ';
		int start = !((prev >= 'a' && prev <= 'z') || (prev >= 'A' && prev <= 'Z') || (prev >= '0' && prev <= '9') ||
		              prev == '_' || prev == '-' || prev == '.' || prev == '/');
		if (!start) {
			out[o++] = text[i++];
		} else if (text[i] == '/' && strncmp(text + i + 1, cap, clen) == 0) {
			memcpy(out + o, path, plen);
			o += plen;
			i += clen + 1;
		} else if (strncmp(text + i, cap, clen) == 0) {
			memcpy(out + o, path, plen);
			o += plen;
			i += clen;
		} else {
			out[o++] = text[i++];
		}
	}
	out[o] = '\0';
	free(cap);
	return out;
}

/* A JSON string of bytes (sanitized copy), mapped back to P when path is set. */
static json_t *text_json(const char *s, size_t n, const char *path)
{
	char *c = malloc(n + 1);
	if (!c) return NULL;
	memcpy(c, s, n);
	c[n] = '\0';
	sanitize(c, n);
	char *m = map_paths(c, path);
	free(c);
	if (!m) return NULL;
	json_t *j = json_string(m);
	free(m);
	return j;
}

/* ---- one tool run ------------------------------------------------------------ */

/* Validate P the way Workspace.Read would (workspace_open_file) and build
 * the worktree's host path. Returns 0, 1 after a refusal, -1 with err. */
static int worktree_file(const struct broker_handler_ctx *ctx, const char *effect, const char *path,
                         char *wt, size_t wtlen, json_t **output, struct world_err *err)
{
	char why[300];
	int fd = -1;
	int r = workspace_open_file(ctx, path, &fd, why, sizeof why, err);
	if (r < 0) return werr_prefix(err, "%s", effect);
	if (r == 1) {
		broker_refuse(output, "%s: %s", effect, why);
		return 1;
	}
	close(fd);
	if ((size_t)snprintf(wt, wtlen, "%s/%s", ctx->workspace_root, ctx->episode) >= wtlen)
		return werr(err, WX_USAGE, "%s: worktree path too long", effect);
	return 0;
}

static unsigned wall_of(const struct broker_handler_ctx *ctx)
{
	return ctx->wall_ms ? ctx->wall_ms : BROKER_HANDLER_WALL_MS;
}

static size_t output_max_of(const struct broker_handler_ctx *ctx)
{
	return ctx->output_max ? ctx->output_max : BROKER_HANDLER_OUTPUT_MAX;
}

/* Run the tool; 0 with res (any outcome the supervisor observed), -1 with
 * err when it did not run (err->code WX_CAPACITY: not admitted). Each
 * stream is capped so that both fit the handler's output cap. */
static int tool_exec(const struct broker_handler_ctx *ctx, const char *effect, const char *const *args,
                     const char *worktree, const struct launch_file *files, size_t nfiles,
                     struct sup_tool_result *res, struct world_err *err)
{
	memset(res, 0, sizeof *res);
	if (!ctx->tool_sup)
		return werr(err, WX_USAGE, "%s: no tool interpreter configured (--tool-ailang-bin)", effect);
	size_t cap = output_max_of(ctx) / 2;
	struct sup_tool_req req = {
		.args = args, .files = files, .nfiles = nfiles, .worktree = worktree,
		.wall_ms = wall_of(ctx), .stdout_max = cap, .stderr_max = cap,
	};
	if (sup_run_tool(ctx->tool_sup, &req, res, err) < 0) return werr_prefix(err, "%s", effect);
	return 0;
}

/* A limit, or a signal, ends a Check / Discover / CLI run as a failed
 * effect: the tool broke, it did not answer. */
static int tool_broke(const char *effect, const struct sup_tool_result *res, struct world_err *err)
{
	if (strcmp(res->limit, "deadline") == 0) return werr(err, WX_DEADLINE, "%s: %s", effect, res->detail);
	if (strcmp(res->limit, "stdout cap") == 0 || strcmp(res->limit, "stderr cap") == 0)
		return werr(err, WX_OUTPUT_CAP, "%s: %s", effect, res->detail);
	if (strncmp(res->limit, "syscall denied", 14) == 0)
		return werr(err, WX_DENIED_SYSCALL, "%s: %s", effect, res->detail);
	if (res->limit[0]) return werr(err, WX_INTERP, "%s: the tool interpreter hit its %s limit", effect, res->limit);
	if (res->signal)
		return werr(err, WX_INTERP, "%s: the tool interpreter was killed by signal %d", effect, res->signal);
	return 0;
}

/* Final check of an output object against the output cap. */
static int finish_output(const struct broker_handler_ctx *ctx, const char *effect, json_t *o, json_t **output,
                         struct world_err *err)
{
	if (!o) return werr(err, WX_FAIL, "%s: out of memory building the output", effect);
	char *text = json_dumps(o, JSON_COMPACT);
	size_t n = text ? strlen(text) : 0;
	free(text);
	if (!text) {
		json_decref(o);
		return werr(err, WX_FAIL, "%s: cannot encode the output", effect);
	}
	if (n > output_max_of(ctx)) {
		json_decref(o);
		return werr(err, WX_OUTPUT_CAP, "%s: output is %zu bytes, over the %zu-byte cap", effect, n,
		            output_max_of(ctx));
	}
	*output = o;
	return 0;
}

/* ---- Ailang.Check ------------------------------------------------------------ */

static int is_code_char(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

/* The file of a diagnostic, as the caller knows it. */
static char *diag_file(const char *f, size_t n, const char *path)
{
	static const char pre1[] = "/" AILANG_WORKTREE_IN_CAPSULE "/", pre2[] = AILANG_WORKTREE_IN_CAPSULE "/";
	if (n == 0) return strdup(path);
	if (n >= sizeof pre1 - 1 && strncmp(f, pre1, sizeof pre1 - 1) == 0) {
		f += sizeof pre1 - 1;
		n -= sizeof pre1 - 1;
	} else if (n >= sizeof pre2 - 1 && strncmp(f, pre2, sizeof pre2 - 1) == 0) {
		f += sizeof pre2 - 1;
		n -= sizeof pre2 - 1;
	}
	return strndup(f, n);
}

/* One diagnostic line -> {"code","message","file"}, or NULL when the line is
 * not one. Forms: "Error: CODE at FILE:LINE:COL: MESSAGE", "Error: CODE:
 * MESSAGE", "Error: CODE MESSAGE" and "CODE: MESSAGE" (e.g. "LDR001: module
 * not found: X"); a message that repeats "CODE: " first loses it. */
static json_t *parse_diag(const char *line, const char *path)
{
	const char *p = line;
	int had_error = strncmp(p, "Error: ", 7) == 0;
	if (had_error) p += 7;
	const char *c0 = p;
	while (is_code_char(*p)) p++;
	size_t clen = (size_t)(p - c0);
	if (clen == 0 || clen > 64) return NULL;
	if (!had_error) {
		/* "CODE: ..." only for codes that look like codes: upper case and a digit. */
		int digit = 0, lower = 0;
		for (const char *q = c0; q < p; q++) {
			if (*q >= '0' && *q <= '9') digit = 1;
			if (*q >= 'a' && *q <= 'z') lower = 1;
		}
		if (!digit || lower || strncmp(p, ": ", 2) != 0) return NULL;
	}
	char *file = NULL;
	const char *msg;
	if (strncmp(p, " at ", 4) == 0) {
		const char *loc = p + 4, *end = strstr(loc, ": ");
		if (!end) end = loc + strlen(loc);
		/* FILE:LINE:COL: drop the two numeric suffixes */
		const char *f_end = end;
		for (int k = 0; k < 2; k++) {
			const char *q = f_end;
			while (q > loc && q[-1] >= '0' && q[-1] <= '9') q--;
			if (q < f_end && q > loc && q[-1] == ':') f_end = q - 1;
		}
		file = diag_file(loc, (size_t)(f_end - loc), path);
		msg = *end ? end + 2 : "";
	} else if (strncmp(p, ": ", 2) == 0) {
		msg = p + 2;
	} else {
		msg = p;
		while (*msg == ' ') msg++;
	}
	if (strncmp(msg, c0, clen) == 0 && strncmp(msg + clen, ": ", 2) == 0) msg += clen + 2;
	if (!file) file = strdup(path);
	char *code = strndup(c0, clen);
	char *m = map_paths(msg, path);
	json_t *o = code && file && m ? json_pack("{s:s,s:s,s:s}", "code", code, "message", m, "file", file) : NULL;
	free(code);
	free(file);
	free(m);
	return o;
}

/* Every diagnostic line of text into errors (at most MAX_ERRORS). */
static void collect_diags(char *text, const char *path, json_t *errors)
{
	for (char *line = text; line && *line;) {
		char *nl = strchr(line, '\n');
		if (nl) *nl = '\0';
		size_t l = strlen(line);
		if (l && line[l - 1] == '\r') line[l - 1] = '\0';
		if (json_array_size(errors) < MAX_ERRORS) {
			json_t *d = parse_diag(line, path);
			if (d) json_array_append_new(errors, d);
		}
		line = nl ? nl + 1 : NULL;
	}
}

static void first_nonempty(const char *s, char *out, size_t n)
{
	out[0] = '\0';
	while (s && *s) {
		while (*s == '\n' || *s == '\r' || *s == ' ') s++;
		size_t l = strcspn(s, "\r\n");
		if (l) {
			snprintf(out, n, "%.*s", (int)l, s);
			return;
		}
	}
}

int ailang_check(const struct broker_handler_ctx *ctx, const json_t *payload, json_t **output,
                 struct world_err *err)
{
	static const char *const keys[] = { "op", "path", NULL };
	const char *E = "Ailang.Check", *op, *path;
	*output = NULL;
	if (!json_is_object(payload)) return broker_refuse(output, "%s: the payload is not an object", E);
	const char *bad = unknown_key(payload, keys);
	if (bad) return broker_refuse(output, "%s: unknown key \"%.64s\"", E, bad);
	if (string_member(payload, "op", &op, output, E) || string_member(payload, "path", &path, output, E)) return 0;
	if (!op) return broker_refuse(output, "%s: \"op\" missing (want \"ai_check\")", E);
	if (strcmp(op, "ai_check") != 0) return broker_refuse(output, "%s: unknown op \"%.64s\" (want \"ai_check\")", E, op);
	if (!path) return broker_refuse(output, "%s: \"path\" missing", E);
	char wt[4200];
	int r = worktree_file(ctx, E, path, wt, sizeof wt, output, err);
	if (r) return r < 0 ? -1 : 0;
	char *inpath = malloc(strlen(path) + 8);
	if (!inpath) return werr(err, WX_FAIL, "%s: out of memory", E);
	sprintf(inpath, "%s/%s", AILANG_WORKTREE_IN_CAPSULE, path);
	const char *args[] = { "check", inpath, NULL };
	struct sup_tool_result res;
	r = tool_exec(ctx, E, args, wt, NULL, 0, &res, err);
	free(inpath);
	if (r < 0) return -1;
	if (tool_broke(E, &res, err) < 0) {
		sup_tool_result_free(&res);
		return -1;
	}
	/* Diagnostics may be on either stream (docs/design.md §2): stdout first. */
	sanitize(res.stdout_text, res.stdout_len);
	sanitize(res.stderr_text, res.stderr_len);
	json_t *errors = json_array();
	int passed = res.exit_code == 0;
	if (!passed && errors) {
		char line[300];
		first_nonempty(res.stdout_text[0] ? res.stdout_text : res.stderr_text, line, sizeof line);
		collect_diags(res.stdout_text, path, errors);
		collect_diags(res.stderr_text, path, errors);
		if (json_array_size(errors) == 0) {
			char msg[400];
			snprintf(msg, sizeof msg, "%s", line[0] ? line : "the tool interpreter refused the file");
			char *m = map_paths(msg, path);
			json_array_append_new(errors, json_pack("{s:s,s:s,s:s}", "code", "CHECK", "message", m ? m : msg,
			                                        "file", path));
			free(m);
		}
	}
	int exit_code = res.exit_code;
	sup_tool_result_free(&res);
	json_t *report = errors ? json_pack("{s:s,s:{s:b,s:I,s:o}}", "file", path, "check", "passed", passed,
	                                    "error_count", (json_int_t)json_array_size(errors), "errors", errors)
	                        : NULL;
	char *text = report ? json_dumps(report, JSON_COMPACT) : NULL;
	json_decref(report);
	if (!text) return werr(err, WX_FAIL, "%s: out of memory building the report", E);
	json_t *o = json_pack("{s:b,s:[s,s],s:i,s:s}", "ok", passed, "argv", "check", path, "exit_code", exit_code,
	                      "stdout", text);
	free(text);
	return finish_output(ctx, E, o, output, err);
}

/* ---- Ailang.Run ------------------------------------------------------------------ */

int ailang_run(const struct broker_handler_ctx *ctx, const json_t *payload, json_t **output,
               struct world_err *err)
{
	static const char *const keys[] = { "path", "args_json", NULL };
	const char *E = "Ailang.Run", *path, *args_text;
	*output = NULL;
	if (!json_is_object(payload)) return broker_refuse(output, "%s: the payload is not an object", E);
	const char *bad = unknown_key(payload, keys);
	if (bad) return broker_refuse(output, "%s: unknown key \"%.64s\"", E, bad);
	if (string_member(payload, "path", &path, output, E) || string_member(payload, "args_json", &args_text, output, E))
		return 0;
	if (!path) return broker_refuse(output, "%s: \"path\" missing", E);
	if (!args_text) args_text = "{}";
	json_error_t je;
	json_t *a = json_loads(args_text, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &je);
	if (!a) return broker_refuse(output, "%s: args_json is not JSON text (%.100s)", E, je.text);
	json_decref(a);
	char wt[4200];
	int r = worktree_file(ctx, E, path, wt, sizeof wt, output, err);
	if (r) return r < 0 ? -1 : 0;
	/* args.json holds ONE JSON string literal whose text is the input. */
	json_t *lit = json_string(args_text);
	char *args_file = lit ? json_dumps(lit, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
	json_decref(lit);
	char *inpath = malloc(strlen(path) + 8);
	if (!args_file || !inpath) {
		free(args_file);
		free(inpath);
		return werr(err, WX_FAIL, "%s: out of memory", E);
	}
	sprintf(inpath, "%s/%s", AILANG_WORKTREE_IN_CAPSULE, path);
	const char *args[] = { "run", "--quiet", "--caps", "", "--entry", "main", "--args-file", "args.json", inpath, NULL };
	struct launch_file files[1] = { { "args.json", args_file, strlen(args_file) } };
	struct sup_tool_result res;
	r = tool_exec(ctx, E, args, wt, files, 1, &res, err);
	free(args_file);
	free(inpath);
	if (r < 0 && err->code == WX_CAPACITY) {
		/* Not admitted: the envelope says so (the supervisor's word). */
		/* Nothing ran, so there is no exit_code (the published outputSchema
		 * types it as an integer: absent, never null). */
		json_t *o = json_pack("{s:b,s:b,s:s,s:s,s:s,s:s}", "ok", 0, "admitted", 0, "decision", "refused: capacity",
		                      "limit", "capacity", "stdout", "", "stderr", err->msg);
		return finish_output(ctx, E, o, output, err);
	}
	if (r < 0) return -1;
	if (strcmp(res.limit, "deadline") == 0) {
		werr(err, WX_DEADLINE, "%s: %s", E, res.detail);
		sup_tool_result_free(&res);
		return -1;
	}
	json_t *out = text_json(res.stdout_text, res.stdout_len, path);
	json_t *errt = text_json(res.stderr_text, res.stderr_len, path);
	int ok = res.exit_code == 0 && !res.signal && !res.limit[0];
	/* exit_code is always an integer, as the published outputSchema (ours
	 * and the reference's) types it: a run a signal ended (a cap kill, a
	 * denied syscall) reports 128+N, as a shell does, and "signal": N beside
	 * it, so the two never read alike (docs/broker.md, "Run envelope"). */
	json_t *o = out && errt ? json_pack("{s:b,s:b,s:I,s:s,s:o,s:O,s:O}", "ok", ok, "admitted", 1, "exit_code",
	                                    (json_int_t)(res.signal ? 128 + res.signal : res.exit_code), "decision",
	                                    "allowed", "limit", res.limit[0] ? json_string(res.limit) : json_null(),
	                                    "stdout", out, "stderr", errt)
	                        : NULL;
	if (o && res.signal && json_object_set_new(o, "signal", json_integer(res.signal)) < 0) {
		json_decref(o);
		o = NULL;
	}
	json_decref(out);
	json_decref(errt);
	sup_tool_result_free(&res);
	return finish_output(ctx, E, o, output, err);
}

/* ---- Ailang.Discover ---------------------------------------------------------------- */

static int builtins_list(const struct broker_handler_ctx *ctx, const json_t *payload, json_t **output,
                         struct world_err *err)
{
	static const char *const keys[] = { "op", "flags", NULL };
	const char *E = "Ailang.Discover";
	const char *bad = unknown_key(payload, keys);
	if (bad) return broker_refuse(output, "%s: unknown key \"%.64s\"", E, bad);
	json_t *flags = json_object_get(payload, "flags");
	if (flags && !json_is_object(flags)) return broker_refuse(output, "%s: \"flags\" must be an object", E);
	/* The reference's tool passes its CLI flags here, a bare flag as "":
	 * its builtins search plans {"json":""}. The answer is always the JSON
	 * inventory, so json ("" or true) changes nothing; any other flag
	 * would be silently ignored, so it is refused. */
	const char *fk;
	json_t *fv;
	json_object_foreach(flags, fk, fv) {
		int bare = (json_is_string(fv) && json_string_length(fv) == 0) || json_is_true(fv);
		if (strcmp(fk, "json") != 0)
			return broker_refuse(output, "%s: unknown flag \"%.64s\" (builtins_list takes only json)", E, fk);
		if (!bare)
			return broker_refuse(output, "%s: flag \"json\" takes no value (\"\" or true)", E);
	}
	const char *args[] = { "builtins", "--json", NULL };
	struct sup_tool_result res;
	if (tool_exec(ctx, E, args, NULL, NULL, 0, &res, err) < 0) return -1;
	if (tool_broke(E, &res, err) < 0) {
		sup_tool_result_free(&res);
		return -1;
	}
	if (res.exit_code != 0) {
		char line[300];
		first_nonempty(res.stderr_text, line, sizeof line);
		werr(err, WX_INTERP, "%s: builtins --json exited with status %d%s%s", E, res.exit_code, line[0] ? ": " : "",
		     line);
		sup_tool_result_free(&res);
		return -1;
	}
	size_t n = res.stdout_len;
	while (n && (res.stdout_text[n - 1] == '\n' || res.stdout_text[n - 1] == '\r')) n--;
	json_t *doc = json_loadb(res.stdout_text, n, JSON_REJECT_DUPLICATES, NULL);
	int okk = json_is_object(doc) && json_is_array(json_object_get(doc, "builtins"));
	json_decref(doc);
	if (!okk) {
		sup_tool_result_free(&res);
		return werr(err, WX_NOT_OBJECT, "%s: builtins --json printed no {\"count\",\"builtins\"} object", E);
	}
	json_t *o = json_pack("{s:b,s:s%}", "ok", 1, "stdout", res.stdout_text, n);
	sup_tool_result_free(&res);
	return finish_output(ctx, E, o, output, err);
}

static void lower(char *s)
{
	for (; *s; s++)
		if (*s >= 'A' && *s <= 'Z') *s = (char)(*s - 'A' + 'a');
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Read a regular file of examples_dir (no symlink followed, no fifo waited
 * on, at most EXAMPLES_FILE_MAX bytes). NULL when it is none of that. */
static char *read_example(int dfd, const char *name, size_t *len)
{
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) return NULL;
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (size_t)st.st_size > EXAMPLES_FILE_MAX) {
		close(fd);
		return NULL;
	}
	char *b = malloc(EXAMPLES_FILE_MAX + 1);
	size_t got = 0;
	while (b && got < EXAMPLES_FILE_MAX) {
		ssize_t n = read(fd, b + got, EXAMPLES_FILE_MAX - got);
		if (n < 0 && errno == EINTR) continue;
		if (n <= 0) break;
		got += (size_t)n;
	}
	close(fd);
	if (!b) return NULL;
	b[got] = '\0';
	*len = got;
	return b;
}

static int examples_search(const struct broker_handler_ctx *ctx, const json_t *payload, json_t **output,
                           struct world_err *err)
{
	static const char *const keys[] = { "op", "query", NULL };
	const char *E = "Ailang.Discover", *q;
	const char *bad = unknown_key(payload, keys);
	if (bad) return broker_refuse(output, "%s: unknown key \"%.64s\"", E, bad);
	if (string_member(payload, "query", &q, output, E)) return 0;
	if (!q || !*q) return broker_refuse(output, "%s: \"query\" missing or empty", E);
	if (strlen(q) > QUERY_MAX) return broker_refuse(output, "%s: query longer than %d bytes", E, QUERY_MAX);
	if (!ctx->examples_dir) return werr(err, WX_USAGE, "%s: no examples directory configured", E);
	int dfd = open(ctx->examples_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) return werr(err, WX_IO, "%s: examples directory %s: %s", E, ctx->examples_dir, strerror(errno));
	int dfd2 = dup(dfd);
	DIR *d = dfd2 >= 0 ? fdopendir(dfd2) : NULL;
	if (!d) {
		int e = errno;
		if (dfd2 >= 0) close(dfd2);
		close(dfd);
		return werr(err, WX_IO, "%s: examples directory %s: %s", E, ctx->examples_dir, strerror(e));
	}
	char **names = NULL;
	size_t nn = 0, seen = 0;
	struct dirent *de;
	while ((de = readdir(d)) && seen < EXAMPLES_MAX_FILES) {
		seen++;
		if (de->d_name[0] == '.') continue;
		char **g = realloc(names, (nn + 1) * sizeof *names);
		if (!g) break;
		names = g;
		if (!(names[nn] = strdup(de->d_name))) break;
		nn++;
	}
	closedir(d);
	qsort(names, nn, sizeof *names, cmp_str);
	char ql[QUERY_MAX + 1];
	snprintf(ql, sizeof ql, "%s", q);
	lower(ql);
	json_t *results = json_array();
	/* The handler's wall cap and a total read budget bound the search. */
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	size_t total = 0;
	int late = 0;
	for (size_t i = 0; i < nn && results && json_array_size(results) < EXAMPLES_MAX_RESULTS; i++) {
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if ((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000 >= (long)wall_of(ctx)) {
			late = 1;
			break;
		}
		if (total >= EXAMPLES_TOTAL_MAX) break;
		size_t len = 0;
		char *body = read_example(dfd, names[i], &len);
		if (!body) continue;
		total += len;
		char nl[300];
		snprintf(nl, sizeof nl, "%s", names[i]);
		lower(nl);
		int name_match = strstr(nl, ql) != NULL;
		json_t *lines = json_array();
		int lineno = 0;
		for (char *line = body; line && lines && json_array_size(lines) < EXAMPLES_LINES_PER_FILE;) {
			char *end = strchr(line, '\n');
			if (end) *end = '\0';
			lineno++;
			char low[EXAMPLES_LINE_MAX * 4 + 1];
			snprintf(low, sizeof low, "%s", line);
			lower(low);
			if (strstr(low, ql)) {
				size_t l = strlen(line);
				if (l > EXAMPLES_LINE_MAX) l = EXAMPLES_LINE_MAX;
				char shown[EXAMPLES_LINE_MAX + 1];
				memcpy(shown, line, l);
				shown[l] = '\0';
				sanitize(shown, l);
				json_array_append_new(lines, json_pack("{s:i,s:s}", "line", lineno, "text", shown));
			}
			line = end ? end + 1 : NULL;
		}
		free(body);
		char fname[300];
		snprintf(fname, sizeof fname, "%s", names[i]);
		sanitize(fname, strlen(fname));
		if (lines && (name_match || json_array_size(lines) > 0))
			json_array_append_new(results, json_pack("{s:s,s:b,s:o}", "file", fname, "name_match", name_match,
			                                         "lines", lines));
		else
			json_decref(lines);
	}
	close(dfd);
	for (size_t i = 0; i < nn; i++) free(names[i]);
	free(names);
	if (late) {
		json_decref(results);
		return werr(err, WX_DEADLINE, "%s: examples search passed the %u ms deadline", E, wall_of(ctx));
	}
	json_t *doc = results ? json_pack("{s:s,s:I,s:o}", "query", q, "count", (json_int_t)json_array_size(results),
	                                  "examples", results)
	                      : NULL;
	char *text = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
	json_decref(doc);
	if (!text) return werr(err, WX_FAIL, "%s: out of memory building the search result", E);
	json_t *o = json_pack("{s:b,s:s}", "ok", 1, "stdout", text);
	free(text);
	return finish_output(ctx, E, o, output, err);
}

int ailang_discover(const struct broker_handler_ctx *ctx, const json_t *payload, json_t **output,
                    struct world_err *err)
{
	const char *E = "Ailang.Discover", *op;
	*output = NULL;
	if (!json_is_object(payload)) return broker_refuse(output, "%s: the payload is not an object", E);
	if (string_member(payload, "op", &op, output, E)) return 0;
	if (!op) return broker_refuse(output, "%s: \"op\" missing (builtins_list or examples_search)", E);
	if (strcmp(op, "builtins_list") == 0) return builtins_list(ctx, payload, output, err);
	if (strcmp(op, "examples_search") == 0) return examples_search(ctx, payload, output, err);
	return broker_refuse(output, "%s: unknown op \"%.64s\" (builtins_list or examples_search)", E, op);
}

/* ---- Ailang.CLI ---------------------------------------------------------------------- */

int ailang_cli(const struct broker_handler_ctx *ctx, const json_t *payload, json_t **output,
               struct world_err *err)
{
	static const char *const keys[] = { "op", "path", NULL };
	const char *E = "Ailang.CLI", *op, *path;
	*output = NULL;
	if (!json_is_object(payload)) return broker_refuse(output, "%s: the payload is not an object", E);
	const char *bad = unknown_key(payload, keys);
	if (bad) return broker_refuse(output, "%s: unknown key \"%.64s\"", E, bad);
	if (string_member(payload, "op", &op, output, E) || string_member(payload, "path", &path, output, E)) return 0;
	if (!op) return broker_refuse(output, "%s: \"op\" missing (version, builtins, check or iface)", E);
	/* The allowlist: op -> the interpreter's argv; the last two take P. */
	int takes_path;
	const char *verb;
	if (strcmp(op, "version") == 0) verb = "--version", takes_path = 0;
	else if (strcmp(op, "builtins") == 0) verb = "builtins", takes_path = 0;
	else if (strcmp(op, "check") == 0) verb = "check", takes_path = 1;
	else if (strcmp(op, "iface") == 0) verb = "iface", takes_path = 1;
	else return broker_refuse(output, "%s: op \"%.64s\" is not allowed (version, builtins, check or iface)", E, op);
	if (takes_path && !path) return broker_refuse(output, "%s: op %s needs \"path\"", E, op);
	if (!takes_path && path) return broker_refuse(output, "%s: op %s takes no \"path\"", E, op);
	char wt[4200];
	char *inpath = NULL;
	if (takes_path) {
		int r = worktree_file(ctx, E, path, wt, sizeof wt, output, err);
		if (r) return r < 0 ? -1 : 0;
		inpath = malloc(strlen(path) + 8);
		if (!inpath) return werr(err, WX_FAIL, "%s: out of memory", E);
		sprintf(inpath, "%s/%s", AILANG_WORKTREE_IN_CAPSULE, path);
	}
	const char *args[] = { verb, inpath, NULL };
	struct sup_tool_result res;
	int r = tool_exec(ctx, E, args, takes_path ? wt : NULL, NULL, 0, &res, err);
	free(inpath);
	if (r < 0) return -1;
	if (tool_broke(E, &res, err) < 0) {
		sup_tool_result_free(&res);
		return -1;
	}
	json_t *out = text_json(res.stdout_text, res.stdout_len, path);
	json_t *errt = text_json(res.stderr_text, res.stderr_len, path);
	json_t *argv = json_array();
	json_array_append_new(argv, json_string(verb));
	if (takes_path) json_array_append_new(argv, json_string(path));
	json_t *o = out && errt && argv ? json_pack("{s:b,s:O,s:i,s:O,s:O}", "ok", res.exit_code == 0, "argv", argv,
	                                            "exit_code", res.exit_code, "stdout", out, "stderr", errt)
	                                : NULL;
	json_decref(out);
	json_decref(errt);
	json_decref(argv);
	sup_tool_result_free(&res);
	return finish_output(ctx, E, o, output, err);
}
