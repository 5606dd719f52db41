/* interp/fuzz.c: libFuzzer target over the lexer, parser, loader and
 * static checker of ailang-lite, the evaluator (an accepted program's
 * `main` runs with input "{}" under an 8 MiB heap cap, so runaway loops end
 * quickly in RT_HEAP), plus the JSON decoder and encoder.
 *
 * Owns: nothing but the harness. Built only by `make interp-fuzz` or by
 * tests/interp/fuzz.sh with clang -fsanitize=fuzzer,address,undefined;
 * never part of the normal build. Every input must end in success or a
 * clean reported error (longjmp back here), never a crash or a hang. */
#include "interp/ail.h"
#include <stdio.h>
#include <string.h>

static int initialized;

static void once(void)
{
	if (initialized)
		return;
	initialized = 1;
	ail_heap_init();
	ail_stack_init();
	ail_std_init();
	ail_err.quiet = 1; /* errors are expected; do not flood the log */
	ail_heap_set_cap((size_t)8 << 20);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	once();
	ail_stack_init(); /* the stack base may differ between calls */
	jmp_buf jb;
	ail_cur_file = "fuzz.ail";
	if (setjmp(jb) == 0) {
		ail_err.jb = &jb;
		struct program *p = ail_load("fuzz.ail", (const char *)data, size, 0);
		ail_check(p);
		ail_eval_init(p);
		struct glob *g = ail_glob_find(p, ail_intern("main", 4));
		if (g && g->fn && g->fn->nparams <= 1) {
			value *arg = v_str("{}", 2);
			value *r = ail_call_func(g->fn, g->fn->nparams, &arg, 1, 1);
			struct buf b = {0};
			v_show(&b, r, 1);
		}
	}
	ail_err.jb = NULL;
	/* the same bytes as JSON: decode, and re-encode what decodes */
	if (setjmp(jb) == 0) {
		ail_err.jb = &jb;
		char why[256];
		value *v = ail_json_decode((const char *)data, size, why, sizeof why);
		if (v) {
			struct buf b = {0};
			ail_json_encode(&b, v, 1, 1);
			char why2[256];
			value *w = ail_json_decode(b.p, b.len, why2, sizeof why2);
			if (!w || !v_equal(v, w, 1, 1)) {
				fprintf(stderr, "fuzz: JSON round trip changed the value\n");
				__builtin_trap();
			}
		}
	}
	ail_err.jb = NULL;
	ail_reset();
	return 0;
}
