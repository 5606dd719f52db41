/* tests/fuzz/fuzz_tlog.c: libFuzzer target over what world-verify reads
 * from strangers (tlog/): the first byte picks the surface, the rest is
 * the input.
 *   0  a signed note, verified against Go's test key (tlog/note.c): what
 *      verifies gives back a text that is a prefix of the note ending in
 *      "\n";
 *   1  a checkpoint body (tlog/checkpoint.c): what parses formats back to
 *      exactly the same bytes (one encoding per checkpoint);
 *   2  a verifier key text: what parses has a name that is a prefix of it;
 *   3  proofs (tlog/tlog.c): sizes and an index from the first 24 bytes,
 *      the rest as hashes, through tlog_check_record and tlog_check_tree
 *      (at most TLOG_MAX_PROOF + 1 hashes): no crash, no read past the
 *      proof. */
#include "tlog/checkpoint.h"
#include "tlog/note.h"
#include "tlog/tlog.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char peter_vkey[] = "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW";

static int64_t i64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 0; i < 8; i++) v = v << 8 | p[i];
	return (int64_t)(v >> 1); /* non-negative, as big as it gets */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct world_err e = { 0, "" };
	if (size == 0) return 0;
	unsigned mode = data[0] % 4;
	const char *in = (const char *)data + 1;
	size--;
	if (mode == 0) {
		char *text = NULL;
		if (note_verify(peter_vkey, in, size, &text, &e) == 0) {
			size_t tl = strlen(text);
			if (tl == 0 || tl > size || memcmp(text, in, tl) != 0 || text[tl - 1] != '\n') __builtin_trap();
			free(text);
		}
	} else if (mode == 1) {
		struct tlog_checkpoint cp;
		if (tlog_checkpoint_parse(in, size, &cp, &e) == 0) {
			char *out = NULL;
			if (tlog_checkpoint_format(cp.origin, cp.size, &cp.root, cp.extensions, &out, &e) < 0) __builtin_trap();
			if (strlen(out) != size || memcmp(out, in, size) != 0) __builtin_trap();
			free(out);
			tlog_checkpoint_free(&cp);
		}
	} else if (mode == 2) {
		char *t = malloc(size + 1);
		if (!t) return 0;
		memcpy(t, in, size);
		t[size] = '\0';
		struct note_vkey k;
		if (note_vkey_parse(t, &k, &e) == 0 && !strstr(t, k.name)) __builtin_trap();
		free(t);
	} else if (size >= 24) {
		const uint8_t *p = (const uint8_t *)in;
		int64_t a = i64(p) % 100000 + 1, b = i64(p + 8) % 100000 + 1, idx = i64(p + 16) % (a + 1);
		size_t n = (size - 24) / TLOG_HASH_SIZE;
		if (n > TLOG_MAX_PROOF + 1) n = TLOG_MAX_PROOF + 1;
		struct tlog_hash *proof = malloc((n ? n : 1) * sizeof *proof), r1, r2, leaf;
		if (!proof) return 0;
		memcpy(proof, p + 24, n * TLOG_HASH_SIZE);
		memset(&r1, 0x11, sizeof r1), memset(&r2, 0x22, sizeof r2), memset(&leaf, 0x33, sizeof leaf);
		(void)tlog_check_record(proof, n, a, &r1, idx, &leaf, &e);
		(void)tlog_check_tree(proof, n, a > b ? a : b, &r1, a > b ? b : a, &r2, &e);
		free(proof);
	}
	return 0;
}
