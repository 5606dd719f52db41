/* bench/tlog_bench.c: the transparency log's library (tlog/, issue 43 item
 * 6) over an in-memory stored-hash array (tests/tlog/memlog.h), as a store
 * keeps it:
 *   - appends: the stored hashes of each new leaf (tlog_stored_hashes_for_append)
 *     up to LEAVES leaves, per second;
 *   - the root of LEAVES leaves (tlog_tree_hash);
 *   - inclusion proofs of random entries of the full tree: made, and checked,
 *     each timed (p50, p99, max; goal <= 1 ms each);
 *   - consistency proofs between random sizes and the full tree, the same;
 *   - checkpoints signed per second (note_signer_sign of a tlog-checkpoint body,
 *     Ed25519) and verified per second (note_verify_key + parse).
 * Usage: tlog_bench [LEAVES [PROOFS [SIGNS]]] (1000000 10000 5000). Figures
 * only; no threshold. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "tests/tlog/memlog.h"
#include "tlog/checkpoint.h"
#include "tlog/note.h"
#include "tlog/tlog.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next(void)
{
	rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
	return rng;
}

static void report(const char *what, double *us, int n)
{
	printf("%-34s p50 %7.1f us  p99 %7.1f us  max %7.1f us  (%d)\n", what, bench_pct(us, n, 0.5),
	       bench_pct(us, n, 0.99), bench_pct(us, n, 1.0), n);
}

static int die(const char *what, const struct world_err *e)
{
	fprintf(stderr, "tlog_bench: %s: %s\n", what, e->msg);
	return 1;
}

int main(int argc, char **argv)
{
	long long leaves = argc > 1 ? atoll(argv[1]) : 1000000;
	int proofs = argc > 2 ? atoi(argv[2]) : 10000, signs = argc > 3 ? atoi(argv[3]) : 5000;
	if (leaves < 2 || proofs < 1 || signs < 1) {
		fprintf(stderr, "usage: tlog_bench [LEAVES>=2 [PROOFS [SIGNS]]]\n");
		return 2;
	}
	struct world_err e = {0};
	struct memlog m = {0};
	/* appends: leaf hash of a ~200-byte entry + the stored hashes */
	char entry[256];
	memset(entry, 'x', sizeof entry);
	double t0 = bench_now_ms();
	for (long long i = 0; i < leaves; i++) {
		int n = snprintf(entry, sizeof entry, "{\"entry\":%lld,\"payload\":\"", i + 1);
		entry[n] = 'x';
		struct tlog_hash lh = tlog_leaf_hash(entry, 200);
		if (memlog_append(&m, &lh, &e) < 0)
			return die("append", &e);
	}
	double ms = bench_now_ms() - t0;
	printf("tlog bench: %lld leaves, %lld stored hashes (%.0f MB)\n", leaves, (long long)m.nh,
	       (double)m.nh * 32 / 1e6);
	printf("%-34s %.0f appends/s (%.2f us each, leaf hash included)\n", "append (stored hashes)",
	       (double)leaves / (ms / 1e3), ms * 1e3 / (double)leaves);
	struct tlog_hash root;
	t0 = bench_now_ms();
	if (tlog_tree_hash(leaves, memlog_read, &m, &root, &e) < 0)
		return die("tree hash", &e);
	printf("%-34s %.1f us\n", "root of the full tree", (bench_now_ms() - t0) * 1e3);

	double *make = malloc((size_t)proofs * sizeof *make), *check = malloc((size_t)proofs * sizeof *check);
	struct tlog_hash p[TLOG_MAX_PROOF];
	size_t n;
	size_t hashes = 0;
	for (int k = 0; k < proofs; k++) {
		int64_t idx = (int64_t)(next() % (uint64_t)leaves);
		double a = bench_now_ms();
		if (tlog_prove_record(leaves, idx, memlog_read, &m, p, &n, &e) < 0)
			return die("prove record", &e);
		double b = bench_now_ms();
		if (tlog_check_record(p, n, leaves, &root, idx, &m.h[tlog_stored_index(0, idx)], &e) < 0)
			return die("check record", &e);
		make[k] = (b - a) * 1e3, check[k] = (bench_now_ms() - b) * 1e3;
		hashes += n;
	}
	printf("inclusion proofs at %lld leaves: %.1f hashes each\n", leaves, (double)hashes / proofs);
	report("  make (tlog_prove_record)", make, proofs);
	report("  check (tlog_check_record)", check, proofs);
	hashes = 0;
	for (int k = 0; k < proofs; k++) {
		int64_t old = 1 + (int64_t)(next() % (uint64_t)(leaves - 1));
		struct tlog_hash old_root;
		if (tlog_tree_hash(old, memlog_read, &m, &old_root, &e) < 0)
			return die("tree hash", &e);
		double a = bench_now_ms();
		if (tlog_prove_tree(leaves, old, memlog_read, &m, p, &n, &e) < 0)
			return die("prove tree", &e);
		double b = bench_now_ms();
		if (tlog_check_tree(p, n, leaves, &root, old, &old_root, &e) < 0)
			return die("check tree", &e);
		make[k] = (b - a) * 1e3, check[k] = (bench_now_ms() - b) * 1e3;
		hashes += n;
	}
	printf("consistency proofs to %lld leaves: %.1f hashes each\n", leaves, (double)hashes / proofs);
	report("  make (tlog_prove_tree)", make, proofs);
	report("  check (tlog_check_tree)", check, proofs);
	free(make), free(check);

	/* checkpoints: sign, then open (verify + parse) */
	char *sk, *vk, *body;
	if (note_key_generate("example.com/world-bench", &sk, &vk, &e) < 0)
		return die("keygen", &e);
	struct note_signer *s = note_signer_new(sk, &e);
	struct note_vkey key;
	if (!s || note_vkey_parse(vk, &key, &e) < 0)
		return die("key", &e);
	char **notes = calloc((size_t)signs, sizeof *notes);
	t0 = bench_now_ms();
	for (int k = 0; k < signs; k++) {
		if (tlog_checkpoint_format("example.com/world-bench", leaves + k, &root, NULL, &body, &e) < 0 ||
		    note_signer_sign(s, body, strlen(body), &notes[k], &e) < 0)
			return die("sign", &e);
		free(body);
	}
	ms = bench_now_ms() - t0;
	printf("%-34s %.0f signatures/s (%.1f us each, Ed25519)\n", "checkpoints signed", signs / (ms / 1e3),
	       ms * 1e3 / signs);
	t0 = bench_now_ms();
	for (int k = 0; k < signs; k++) {
		struct tlog_checkpoint cp;
		char *text;
		if (note_verify_key(&key, notes[k], strlen(notes[k]), &text, &e) < 0 ||
		    tlog_checkpoint_parse(text, strlen(text), &cp, &e) < 0)
			return die("verify", &e);
		free(text);
		tlog_checkpoint_free(&cp);
	}
	ms = bench_now_ms() - t0;
	printf("%-34s %.0f /s (%.1f us each)\n", "checkpoints verified and parsed", signs / (ms / 1e3), ms * 1e3 / signs);
	for (int k = 0; k < signs; k++)
		free(notes[k]);
	free(notes), free(sk), free(vk);
	note_signer_free(s);
	memlog_free(&m);
	return 0;
}
