/* interp/main.c: the ailang-lite command line (docs/design.md §2, §11).
 *
 * Owns: the verbs `--version`, `check FILE [--json]`, `run [--quiet]
 * [--caps LIST] [--entry NAME] (--args-file F | --args-json J) FILE` and
 * `test FILE`, `builtins [--json]`, `iface FILE`, reading sources and arguments with size limits, and the
 * exit codes: 0 ok, 1 compile / decode / runtime error (one `Error: CODE
 * at FILE:LINE:COL: message` line on stderr), 2 flag error. */
#include "interp/ail.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EXIT_FLAGS 2

static const char usage[] =
	"usage: ailang-lite --version\n"
	"       ailang-lite check [--json] [--library] FILE\n"
	"       ailang-lite run [--quiet] [--caps LIST] [--entry NAME] (--args-file F | --args-json J) FILE\n"
	"       ailang-lite test FILE\n"
	"       ailang-lite builtins [--json]\n"
	"       ailang-lite iface FILE\n"
	"builtins lists every std function this interpreter implements, one per line\n"
	"(MODULE NAME SIGNATURE); with --json one compact line\n"
	"{\"count\":N,\"builtins\":[{\"name\",\"module\",\"signature\",\"effect\"}]} (effect \"\" = pure).\n"
	"iface checks FILE like check, then prints its interface as one compact JSON line\n"
	"{\"file\",\"module\",\"imports\":[...],\"exports\":[{\"name\",\"params\",\"arity\",\"pure\",\"tests\"}],\"constructors\":[{\"name\",\"arity\"}]}.\n"
	"check also refuses what cannot run as a transition: an empty module (CHK_EMPTY), no\n"
	"function main (CHK_NO_MAIN), a main without exactly one parameter (CHK_MAIN_ARITY);\n"
	"--library skips these three for modules that are imported or only tested.\n"
	"A source (FILE, or - for stdin) is at most 1048576 bytes (1 MiB), as in worldd.\n"
	"ailang-lite runs a documented subset of AILANG (docs/ailang-lite.md); it is not upstream AILANG.\n"
	"exit codes: 0 ok, 1 compile/decode/runtime error, 2 flag error\n";

static int flag_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "ailang-lite: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, " (see ailang-lite --help)\n");
	return EXIT_FLAGS;
}

/* Read a whole file ("-" = stdin) into the arena, at most max bytes.
 * Returns NULL with errno-style text in why. */
static char *read_all(const char *path, size_t max, size_t *len, char *why, size_t whylen)
{
	FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
	if (!f) {
		snprintf(why, whylen, "cannot open %s: %s", path, strerror(errno));
		return NULL;
	}
	struct buf b = {0};
	char tmp[65536];
	size_t n;
	while ((n = fread(tmp, 1, sizeof tmp, f)) > 0) {
		if (b.len + n > max) {
			snprintf(why, whylen, "%s is larger than the limit of %zu bytes", path, max);
			if (f != stdin)
				fclose(f);
			return NULL;
		}
		buf_put(&b, tmp, n);
	}
	int err = ferror(f);
	if (f != stdin)
		fclose(f);
	if (err) {
		snprintf(why, whylen, "cannot read %s", path);
		return NULL;
	}
	*len = b.len;
	return b.p ? b.p : ail_strndup("", 0);
}

static int relaxed(void)
{
	const char *r = getenv("AILANG_RELAX_MODULES");
	return r && *r && strcmp(r, "0") != 0 && strcmp(r, "false") != 0;
}

static struct program *load_file(const char *file)
{
	char why[600];
	size_t n;
	ail_cur_file = file;
	char *src = read_all(file, AIL_MAX_SOURCE, &n, why, sizeof why);
	if (!src)
		ail_fail("LDR_READ", 1, 1, "%s", why);
	if (memchr(src, 0, n))
		ail_fail("PAR_UNEXPECTED_CHAR", 1, 1, "source contains a NUL byte");
	struct program *p = ail_load(file, src, n, !relaxed());
	ail_check(p);
	ail_eval_init(p);
	return p;
}

/* Run fn(ctx) with an error handler: returns 0, or -1 after an error was
 * reported. Keeping setjmp here leaves the callers' locals out of its way. */
static int protect(void (*fn)(void *), void *ctx)
{
	jmp_buf jb;
	jmp_buf *prev = ail_err.jb;
	if (setjmp(jb) != 0) {
		ail_err.jb = prev;
		return -1;
	}
	ail_err.jb = &jb;
	fn(ctx);
	ail_err.jb = prev;
	return 0;
}

static void load_cb(void *ctx)
{
	struct program **pp = ctx;
	*pp = load_file((const char *)*pp);
}

/* The entry rules of `check` (not of the reference's check): what a capsule
 * will run must exist, so a check predicts a run. A transition module
 * declares something, defines `main`, and `main` takes exactly the one
 * input string. `check --library` skips them for imported modules and
 * examples. */
static void entry_cb(void *ctx)
{
	struct program *p = load_file((const char *)ctx);
	struct module *m = p->mod;
	if (m->nfuncs == 0 && m->nctors == 0)
		ail_fail("CHK_EMPTY", m->has_name ? m->name_line : 1, m->has_name ? m->name_col : 1,
		         "the module declares nothing: a transition needs func main(input: string) -> string");
	struct func *mainf = NULL;
	for (int i = 0; i < m->nfuncs; i++)
		if (strcmp(m->funcs[i]->name, "main") == 0) mainf = m->funcs[i];
	if (!mainf)
		ail_fail("CHK_NO_MAIN", m->has_name ? m->name_line : 1, m->has_name ? m->name_col : 1,
		         "no function 'main': a transition needs func main(input: string) -> string");
	if (mainf->nparams != 1)
		ail_fail("CHK_MAIN_ARITY", mainf->line, mainf->col,
		         "'main' takes %d parameter%s; a transition's main takes exactly one (the input string)",
		         mainf->nparams, mainf->nparams == 1 ? "" : "s");
}

/* ---------------- check ---------------- */

static int cmd_check(int argc, char **argv)
{
	int json = 0, library = 0;
	const char *file = NULL;
	for (int i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			json = 1;
		else if (strcmp(argv[i], "--library") == 0)
			library = 1;
		else if (argv[i][0] == '-' && argv[i][1])
			return flag_error("check: unknown flag '%s'", argv[i]);
		else if (file)
			return flag_error("check: more than one file ('%s')", argv[i]);
		else
			file = argv[i];
	}
	if (!file)
		return flag_error("check: missing FILE%s", "");
	ail_err.quiet = json;
	int failed;
	if (library) {
		struct program *p = (struct program *)(void *)file;
		failed = protect(load_cb, &p) != 0;
	} else {
		failed = protect(entry_cb, (void *)file) != 0;
	}
	ail_err.quiet = 0;
	if (json) {
		struct buf b = {0};
		buf_puts(&b, "{\"file\":");
		ail_json_quote(&b, file, strlen(file));
		buf_puts(&b, failed ? ",\"passed\":false,\"error_count\":1,\"errors\":[" : ",\"passed\":true,\"error_count\":0,\"errors\":[");
		if (failed) {
			char num[32];
			buf_puts(&b, "{\"code\":");
			ail_json_quote(&b, ail_err.code, strlen(ail_err.code));
			buf_puts(&b, ",\"message\":");
			ail_json_quote(&b, ail_err.msg, strlen(ail_err.msg));
			buf_puts(&b, ",\"file\":");
			ail_json_quote(&b, ail_err.file, strlen(ail_err.file));
			snprintf(num, sizeof num, ",\"line\":%d", ail_err.line);
			buf_puts(&b, num);
			snprintf(num, sizeof num, ",\"column\":%d}", ail_err.col);
			buf_puts(&b, num);
		}
		buf_puts(&b, "]}\n");
		fwrite(b.p, 1, b.len, stdout);
	} else if (!failed) {
		printf("%s: ok\n", file);
	}
	return failed ? 1 : 0;
}

/* ---------------- run ---------------- */

struct runctx {
	const char *entry, *args_file, *args_json, *file;
	struct buf out;
};

static void run_cb(void *ctx)
{
	struct runctx *rc = ctx;
	const char *entry = rc->entry, *args_file = rc->args_file, *args_json = rc->args_json;
	struct program *p = load_file(rc->file);
	struct glob *g = ail_glob_find(p, ail_intern(entry, strlen(entry)));
	if (!g || !g->fn)
		ail_fail("RUN_ENTRY", 1, 1, "entrypoint '%s' not found", entry);
	struct func *fn = g->fn;
	value *argv1[1];
	int n = 0;
	if (args_file || args_json) {
		char why[600];
		size_t len;
		const char *text;
		if (args_json && strcmp(args_json, "-") != 0) {
			text = args_json;
			len = strlen(args_json);
		} else {
			text = read_all(args_file ? args_file : "-", AIL_MAX_ARGS, &len, why, sizeof why);
			if (!text)
				ail_fail("ARG_DECODE_MISMATCH", 1, 1, "%s", why);
		}
		char *input;
		size_t ilen;
		if (ail_json_string_literal(text, len, &input, &ilen, why, sizeof why) != 0)
			ail_fail("ARG_DECODE_MISMATCH", fn->line, fn->col, "argument of '%s' (string): %s", entry, why);
		if (fn->nparams != 1)
			ail_fail("ARG_DECODE_MISMATCH", fn->line, fn->col,
			         "entrypoint '%s' takes %d arguments; one string argument was given", entry, fn->nparams);
		argv1[0] = v_str_own(input, ilen);
		n = 1;
	} else if (fn->nparams != 0) {
		ail_fail("ARG_DECODE_MISMATCH", fn->line, fn->col,
		         "entrypoint '%s' takes %d argument%s; pass --args-file or --args-json", entry,
		         fn->nparams, fn->nparams == 1 ? "" : "s");
	}
	value *r = ail_call_func(fn, n, argv1, fn->line, fn->col);
	if (r->k == V_STR)
		buf_put(&rc->out, r->u.str.s, r->u.str.len);
	else if (r->k != V_UNIT)
		v_show(&rc->out, r, 1);
	buf_putc(&rc->out, '\n');
}

static int cmd_run(int argc, char **argv)
{
	const char *entry = "main", *args_file = NULL, *args_json = NULL, *file = NULL;
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--quiet") == 0 || strcmp(a, "-q") == 0)
			continue;
		/* --flag=value, as Go's flag package also accepts */
		const char *eq = strchr(a, '=');
		if (a[0] == '-' && a[1] == '-' && eq) {
			static const char *const valued[] = {"--caps", "--entry", "--args-file", "--args-json"};
			size_t fl = (size_t)(eq - a);
			int known = 0;
			for (size_t k = 0; k < sizeof valued / sizeof valued[0]; k++)
				if (strlen(valued[k]) == fl && strncmp(a, valued[k], fl) == 0) {
					known = 1;
					if (k == 1)
						entry = eq + 1;
					else if (k == 2)
						args_file = eq + 1;
					else if (k == 3)
						args_json = eq + 1;
				}
			if (!known)
				return flag_error("run: unknown flag '%s'", a);
			continue;
		}
		if (strcmp(a, "--caps") == 0 || strcmp(a, "--entry") == 0 || strcmp(a, "--args-file") == 0 ||
		    strcmp(a, "--args-json") == 0) {
			if (i + 1 >= argc)
				return flag_error("run: flag '%s' needs a value", a);
			const char *v = argv[++i];
			if (strcmp(a, "--entry") == 0)
				entry = v;
			else if (strcmp(a, "--args-file") == 0)
				args_file = v;
			else if (strcmp(a, "--args-json") == 0)
				args_json = v;
			/* --caps: ailang-lite implements no effects, so every capability
			 * list is accepted and nothing is granted */
			continue;
		}
		if (a[0] == '-' && a[1])
			return flag_error("run: unknown flag '%s'", a);
		if (file)
			return flag_error("run: more than one file ('%s')", a);
		file = a;
	}
	if (!file)
		return flag_error("run: missing FILE%s", "");
	if (args_file && args_json)
		return flag_error("run: give only one of --args-file and --args-json%s", "");
	if (!*entry)
		return flag_error("run: --entry needs a name%s", "");
	struct runctx rc = {entry, args_file, args_json, file, {0}};
	if (protect(run_cb, &rc) != 0)
		return 1;
	struct buf out = rc.out;
	if (fwrite(out.p, 1, out.len, stdout) != out.len || fflush(stdout) != 0) {
		fprintf(stderr, "Error: RT_OUTPUT at %s:1:1: cannot write the result to stdout: %s\n", file,
		        strerror(errno));
		return 1;
	}
	return 0;
}

/* ---------------- test ---------------- */

static void show_short(struct buf *b, value *v)
{
	struct buf t = {0};
	v_show(&t, v, 0);
	if (t.len > 300) {
		buf_put(b, t.p, 300);
		buf_puts(b, "...");
	} else if (t.len) {
		buf_put(b, t.p, t.len);
	}
}

struct testctx {
	struct func *fn;
	struct test_row *row;
	int ok;
	struct buf msg;
};

/* One tests row: requires (if any) on the input, the call, ensures on the
 * result, then structural equality with the expected value. */
static void test_cb(void *ctx)
{
	struct testctx *tc = ctx;
	struct func *fn = tc->fn;
	struct test_row *row = tc->row;
	value *in = ail_eval(row->input, NULL);
	value *want = ail_eval(row->expected, NULL);
	value **args = ail_alloc((size_t)(fn->nparams ? fn->nparams : 1) * sizeof *args);
	if (fn->nparams == 1) {
		args[0] = in;
	} else if (fn->nparams == 0) {
		if (in->k != V_UNIT)
			ail_fail("TEST_ARITY", row->line, row->col, "'%s' takes no arguments; use () as the input", fn->name);
	} else {
		if (in->k != V_TUPLE || in->u.agg.n != fn->nparams)
			ail_fail("TEST_ARITY", row->line, row->col,
			         "'%s' takes %d arguments; the input must be a tuple of %d", fn->name,
			         fn->nparams, fn->nparams);
		for (int k = 0; k < fn->nparams; k++)
			args[k] = in->u.agg.items[k];
	}
	env *en = NULL;
	for (int k = 0; k < fn->nparams; k++) {
		env *e = ail_alloc(sizeof *e);
		e->name = fn->params[k].name;
		e->val = args[k];
		e->next = en;
		en = e;
	}
	for (int k = 0; k < fn->nrequires; k++) {
		value *c = ail_eval(fn->requires_[k], en);
		if (c->k != V_BOOL || !c->u.b) {
			buf_puts(&tc->msg, "RT_CONTRACT: requires clause is false for this input");
			return;
		}
	}
	value *got = ail_call_func(fn, fn->nparams, args, row->line, row->col);
	env *re = ail_alloc(sizeof *re);
	re->name = ail_intern("result", 6);
	re->val = got;
	re->next = en;
	for (int k = 0; k < fn->nensures; k++) {
		value *c = ail_eval(fn->ensures_[k], re);
		if (c->k != V_BOOL || !c->u.b) {
			buf_puts(&tc->msg, "RT_CONTRACT: ensures clause is false for this input");
			return;
		}
	}
	if (!v_equal(got, want, row->line, row->col)) {
		buf_puts(&tc->msg, "got ");
		show_short(&tc->msg, got);
		buf_puts(&tc->msg, ", want ");
		show_short(&tc->msg, want);
		return;
	}
	tc->ok = 1;
}

static int cmd_test(int argc, char **argv)
{
	const char *file = NULL;
	for (int i = 0; i < argc; i++) {
		if (argv[i][0] == '-' && argv[i][1])
			return flag_error("test: unknown flag '%s'", argv[i]);
		if (file)
			return flag_error("test: more than one file ('%s')", argv[i]);
		file = argv[i];
	}
	if (!file)
		return flag_error("test: missing FILE%s", "");
	struct program *p = (struct program *)(void *)file;
	if (protect(load_cb, &p) != 0)
		return 1;
	int passed = 0, failed = 0;
	for (int i = 0; i < p->mod->nfuncs; i++) {
		struct func *fn = p->mod->funcs[i];
		for (int t = 0; t < fn->ntests; t++) {
			struct testctx tc = {fn, &fn->tests[t], 0, {0}};
			if (protect(test_cb, &tc) != 0) {
				tc.ok = 0;
				tc.msg.len = 0;
				buf_puts(&tc.msg, ail_err.code);
				buf_puts(&tc.msg, ": ");
				buf_puts(&tc.msg, ail_err.msg);
			}
			if (tc.ok) {
				passed++;
				printf("PASS %s #%d\n", fn->name, t + 1);
			} else {
				failed++;
				printf("FAIL %s #%d (%s:%d): %s\n", fn->name, t + 1, file, tc.row->line, tc.msg.p);
			}
		}
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}

/* ---------------- builtins ---------------- */

/* The list comes from the evaluator's own table (ail_builtin_get), so it
 * names exactly what a program can import and call. */
static int cmd_builtins(int argc, char **argv)
{
	int json = 0;
	for (int i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			json = 1;
		else if (argv[i][0] == '-' && argv[i][1])
			return flag_error("builtins: unknown flag '%s'", argv[i]);
		else
			return flag_error("builtins: unexpected argument '%s'", argv[i]);
	}
	struct buf b = {0};
	int n = 0;
	while (ail_builtin_get(n))
		n++;
	if (json) {
		char num[64];
		snprintf(num, sizeof num, "{\"count\":%d,\"builtins\":[", n);
		buf_puts(&b, num);
	}
	for (int id = 0; id < n; id++) {
		const struct builtin *bi = ail_builtin_get(id);
		if (json) {
			buf_puts(&b, id ? ",{\"name\":" : "{\"name\":");
			ail_json_quote(&b, bi->name, strlen(bi->name));
			buf_puts(&b, ",\"module\":");
			ail_json_quote(&b, bi->module, strlen(bi->module));
			buf_puts(&b, ",\"signature\":");
			ail_json_quote(&b, bi->signature, strlen(bi->signature));
			buf_puts(&b, ",\"effect\":");
			ail_json_quote(&b, bi->effect, strlen(bi->effect));
			buf_putc(&b, '}');
		} else {
			buf_puts(&b, bi->module);
			buf_putc(&b, ' ');
			buf_puts(&b, bi->name);
			buf_putc(&b, ' ');
			buf_puts(&b, bi->signature);
			buf_putc(&b, '\n');
		}
	}
	if (json)
		buf_puts(&b, "]}\n");
	if (fwrite(b.p, 1, b.len, stdout) != b.len) {
		fprintf(stderr, "Error: RT_OUTPUT at builtins:1:1: cannot write the list to stdout: %s\n", strerror(errno));
		return 1;
	}
	return 0;
}

/* ---------------- iface ---------------- */

/* The module's interface: what another program (or an agent through the
 * Ailang.CLI handler) can learn without running it. ailang-lite ignores
 * types, so parameters are names only. */
static int cmd_iface(int argc, char **argv)
{
	const char *file = NULL;
	for (int i = 0; i < argc; i++) {
		if (argv[i][0] == '-' && argv[i][1])
			return flag_error("iface: unknown flag '%s'", argv[i]);
		if (file)
			return flag_error("iface: more than one file ('%s')", argv[i]);
		file = argv[i];
	}
	if (!file)
		return flag_error("iface: missing FILE%s", "");
	struct program *p = (struct program *)(void *)file;
	if (protect(load_cb, &p) != 0)
		return 1;
	struct module *m = p->mod;
	struct buf b = {0};
	char num[64];
	buf_puts(&b, "{\"file\":");
	ail_json_quote(&b, file, strlen(file));
	buf_puts(&b, ",\"module\":");
	if (m->has_name)
		ail_json_quote(&b, m->name, strlen(m->name));
	else
		buf_puts(&b, "null");
	buf_puts(&b, ",\"imports\":[");
	for (int i = 0; i < m->nimports; i++) {
		if (i)
			buf_putc(&b, ',');
		ail_json_quote(&b, m->imports[i].path, strlen(m->imports[i].path));
	}
	buf_puts(&b, "],\"exports\":[");
	int first = 1;
	for (int i = 0; i < m->nfuncs; i++) {
		struct func *fn = m->funcs[i];
		if (!fn->exported)
			continue;
		buf_puts(&b, first ? "{\"name\":" : ",{\"name\":");
		first = 0;
		ail_json_quote(&b, fn->name, strlen(fn->name));
		buf_puts(&b, ",\"params\":[");
		for (int k = 0; k < fn->nparams; k++) {
			if (k)
				buf_putc(&b, ',');
			ail_json_quote(&b, fn->params[k].name, strlen(fn->params[k].name));
		}
		snprintf(num, sizeof num, "],\"arity\":%d,\"pure\":%s,\"tests\":%d}", fn->nparams,
		         fn->pure ? "true" : "false", fn->ntests);
		buf_puts(&b, num);
	}
	buf_puts(&b, "],\"constructors\":[");
	for (int i = 0; i < m->nctors; i++) {
		buf_puts(&b, i ? ",{\"name\":" : "{\"name\":");
		ail_json_quote(&b, m->ctors[i].name, strlen(m->ctors[i].name));
		snprintf(num, sizeof num, ",\"arity\":%d}", m->ctors[i].arity);
		buf_puts(&b, num);
	}
	buf_puts(&b, "]}\n");
	if (fwrite(b.p, 1, b.len, stdout) != b.len) {
		fprintf(stderr, "Error: RT_OUTPUT at %s:1:1: cannot write the interface to stdout: %s\n", file,
		        strerror(errno));
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	ail_heap_init();
	ail_stack_init();
	ail_std_init();
	int rc;
	if (argc < 2) {
		fputs(usage, stderr);
		return EXIT_FLAGS;
	}
	const char *verb = argv[1];
	if (strcmp(verb, "--version") == 0 || strcmp(verb, "version") == 0) {
		printf("%s (ailang-lite: a C subset interpreter, not upstream AILANG)\n", AIL_VERSION);
		return 0;
	}
	if (strcmp(verb, "--help") == 0 || strcmp(verb, "-h") == 0 || strcmp(verb, "help") == 0) {
		fputs(usage, stdout);
		return 0;
	}
	if (strcmp(verb, "check") == 0)
		rc = cmd_check(argc - 2, argv + 2);
	else if (strcmp(verb, "run") == 0)
		rc = cmd_run(argc - 2, argv + 2);
	else if (strcmp(verb, "test") == 0)
		rc = cmd_test(argc - 2, argv + 2);
	else if (strcmp(verb, "builtins") == 0)
		rc = cmd_builtins(argc - 2, argv + 2);
	else if (strcmp(verb, "iface") == 0)
		rc = cmd_iface(argc - 2, argv + 2);
	else
		rc = flag_error("unknown command '%s'", verb);
	if (fflush(stdout) != 0 && rc == 0)
		rc = 1;
	ail_heap_free_all();
	return rc;
}
