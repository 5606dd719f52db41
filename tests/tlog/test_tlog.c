/* tests/tlog/test_tlog.c: the transparency-log library (tlog/) against
 * outside vectors and itself.
 *
 * - RFC 6962 hashing and proofs: the 8-leaf reference tree of Certificate
 *   Transparency's merkle_tree_test (the vectors of transparency-dev/merkle
 *   proof/verify_test.go): every root, the inclusion and consistency proofs
 *   byte for byte, each checked.
 * - The stored-hash layout (Go's sumdb/tlog): index/split round trip, the
 *   count after each append; the root of every size 1..N equal to a direct
 *   RFC 6962 MTH recursion over the leaves (an independent computation);
 *   every inclusion and consistency proof of every size made and checked.
 * - Controls: a changed leaf byte, a wrong index, a wrong size, a flipped
 *   proof bit, a proof cut short or extended, a wrong old root: refused.
 * - Signed notes: Go's own note_test.go vector (PeterNeumann's key signs the
 *   same bytes; Ed25519 is deterministic), Go's malformed notes refused,
 *   another key's signature ignored but not enough, a bad signature, a
 *   generated key, key texts with a wrong hash refused.
 * - Checkpoints: format/parse, the strict size and root, extension lines,
 *   an edited checkpoint refused by its signature. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/tap.h"
#include "tests/tlog/memlog.h"
#include "tlog/checkpoint.h"
#include "tlog/note.h"
#include "tlog/tlog.h"

static struct tlog_hash hx(const char *hex)
{
	struct tlog_hash h;
	for (int i = 0; i < 32; i++)
		sscanf(hex + 2 * i, "%2hhx", &h.b[i]);
	return h;
}

static const char *tohex(const struct tlog_hash *h)
{
	static char buf[4][65];
	static int k;
	char *s = buf[k++ & 3];
	for (int i = 0; i < 32; i++)
		sprintf(s + 2 * i, "%02x", h->b[i]);
	return s;
}

/* The reference tree: leaves and the root of each size 1..8. */
static const char *leaf_hex[8] = {"", "00", "10", "2021", "3031", "40414243", "5051525354555657",
                                  "606162636465666768696a6b6c6d6e6f"};
static const char *root_hex[8] = {
    "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
    "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
    "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
    "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
    "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
    "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
    "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
    "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
};
struct vec {
	int64_t a, b; /* inclusion: leaf index, size; consistency: old, new size */
	int n;
	const char *proof[3];
};
static const struct vec incl[] = {
    {0, 1, 0, {0}},
    {0, 8, 3, {"96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
               "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
               "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4"}},
    {5, 8, 3, {"bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
               "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
               "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7"}},
    {2, 3, 1, {"fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125"}},
    {1, 5, 3, {"6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
               "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
               "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b"}},
};
static const struct vec cons[] = {
    {1, 1, 0, {0}},
    {1, 8, 3, {"96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
               "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
               "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4"}},
    {6, 8, 3, {"0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
               "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
               "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7"}},
    {2, 5, 2, {"5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
               "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b"}},
    {6, 7, 3, {"0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
               "b08693ec2e721597130641e8211e7eedccb4c26413963eee6c1e2ed16ffb1a5f",
               "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7"}},
};

static int proof_is(const struct tlog_hash *p, size_t n, const struct vec *v)
{
	if ((int)n != v->n)
		return 0;
	for (int i = 0; i < v->n; i++) {
		struct tlog_hash e = hx(v->proof[i]);
		if (!tlog_hash_equal(&p[i], &e))
			return 0;
	}
	return 1;
}

static void test_vectors(void)
{
	struct tlog_hash empty = tlog_empty_hash();
	is_str(tohex(&empty), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
	       "the tree of 0 leaves: SHA-256 of nothing (RFC 6962)");
	struct memlog m = {0};
	struct world_err err = {0};
	for (int i = 0; i < 8; i++) {
		unsigned char d[16];
		size_t dn = strlen(leaf_hex[i]) / 2;
		for (size_t j = 0; j < dn; j++)
			sscanf(leaf_hex[i] + 2 * j, "%2hhx", &d[j]);
		struct tlog_hash lh = tlog_leaf_hash(d, dn);
		if (memlog_append(&m, &lh, &err) < 0)
			bail("memlog_append: %s", err.msg);
		struct tlog_hash root;
		ok(tlog_tree_hash(i + 1, memlog_read, &m, &root, &err) == 0, "tree hash of size %d", i + 1);
		is_str(tohex(&root), root_hex[i], "RFC 6962 reference tree: the root of size %d", i + 1);
	}
	struct tlog_hash p[TLOG_MAX_PROOF];
	size_t n;
	for (size_t i = 0; i < sizeof incl / sizeof incl[0]; i++) {
		const struct vec *v = &incl[i];
		ok(tlog_prove_record(v->b, v->a, memlog_read, &m, p, &n, &err) == 0 && proof_is(p, n, v),
		   "inclusion proof of leaf %lld in size %lld: the reference hashes, in order", (long long)v->a,
		   (long long)v->b);
		struct tlog_hash vp[3], root = hx(root_hex[v->b - 1]);
		for (int j = 0; j < v->n; j++)
			vp[j] = hx(v->proof[j]);
		struct tlog_hash lh = m.h[tlog_stored_index(0, v->a)];
		is_int(tlog_check_record(vp, (size_t)v->n, v->b, &root, v->a, &lh, &err), 0,
		       "the reference inclusion proof of leaf %lld in size %lld checks", (long long)v->a, (long long)v->b);
	}
	for (size_t i = 0; i < sizeof cons / sizeof cons[0]; i++) {
		const struct vec *v = &cons[i];
		ok(tlog_prove_tree(v->b, v->a, memlog_read, &m, p, &n, &err) == 0 && proof_is(p, n, v),
		   "consistency proof from %lld to %lld: the reference hashes, in order", (long long)v->a,
		   (long long)v->b);
		struct tlog_hash vp[3], r1 = hx(root_hex[v->a - 1]), r2 = hx(root_hex[v->b - 1]);
		for (int j = 0; j < v->n; j++)
			vp[j] = hx(v->proof[j]);
		is_int(tlog_check_tree(vp, (size_t)v->n, v->b, &r2, v->a, &r1, &err), 0,
		       "the reference consistency proof from %lld to %lld checks", (long long)v->a, (long long)v->b);
		if (v->n) {
			vp[v->n - 1].b[0] ^= 16;
			is_int(tlog_check_tree(vp, (size_t)v->n, v->b, &r2, v->a, &r1, &err), -1,
			       "control: a bit flipped in its last hash is refused (%s)", err.msg);
		}
	}
	memlog_free(&m);
}

/* RFC 6962 §2.1 MTH, straight from the definition over leaf hashes. */
static struct tlog_hash mth(const struct tlog_hash *l, int64_t n)
{
	if (n == 1)
		return l[0];
	int64_t k = 1;
	while (k * 2 < n)
		k *= 2;
	struct tlog_hash a = mth(l, k), b = mth(l + k, n - k);
	return tlog_node_hash(&a, &b);
}

static void test_every_size(void)
{
	enum { N = 130 };
	struct memlog m = {0};
	struct world_err err = {0};
	struct tlog_hash leaves[N], roots[N + 1];
	int bad_count = 0, bad_split = 0, bad_root = 0;
	for (int64_t i = 0; i < N; i++) {
		unsigned char d[8];
		for (int j = 0; j < 8; j++)
			d[j] = (unsigned char)(i >> (8 * j));
		leaves[i] = tlog_leaf_hash(d, sizeof d);
		int64_t before = m.nh;
		if (before != tlog_stored_count(i) || tlog_stored_index(0, i) != before)
			bad_count++;
		if (memlog_append(&m, &leaves[i], &err) < 0)
			bail("append %lld: %s", (long long)i, err.msg);
		if (m.nh != tlog_stored_count(i + 1))
			bad_count++;
		struct tlog_hash want = mth(leaves, i + 1);
		if (tlog_tree_hash(i + 1, memlog_read, &m, &roots[i + 1], &err) < 0 ||
		    !tlog_hash_equal(&roots[i + 1], &want))
			bad_root++;
	}
	for (int64_t x = 0; x < m.nh; x++) {
		int level;
		int64_t k;
		tlog_split_stored_index(x, &level, &k);
		if (tlog_stored_index(level, k) != x)
			bad_split++;
	}
	is_int(bad_count, 0, "stored-hash count and leaf positions agree with tlog_stored_count for 1..%d", N);
	is_int(bad_split, 0, "tlog_split_stored_index inverts tlog_stored_index (%lld stored hashes)",
	       (long long)m.nh);
	is_int(bad_root, 0, "the root of every size 1..%d equals RFC 6962's MTH computed from the leaves", N);

	/* every inclusion proof of every size, and its controls */
	long proofs = 0, bad = 0, wrong_leaf = 0, wrong_index = 0, wrong_size = 0, flipped = 0, cut = 0, extra = 0;
	struct tlog_hash p[TLOG_MAX_PROOF + 1];
	size_t n;
	for (int64_t size = 1; size <= N; size++)
		for (int64_t i = 0; i < size; i++) {
			proofs++;
			if (tlog_prove_record(size, i, memlog_read, &m, p, &n, &err) < 0 ||
			    tlog_check_record(p, n, size, &roots[size], i, &leaves[i], &err) < 0) {
				if (!bad++)
					diag("inclusion %lld/%lld: %s", (long long)i, (long long)size, err.msg);
				continue;
			}
			struct tlog_hash changed = leaves[i];
			changed.b[31] ^= 1;
			wrong_leaf += tlog_check_record(p, n, size, &roots[size], i, &changed, &err) == 0;
			if (size > 1)
				wrong_index += tlog_check_record(p, n, size, &roots[size], (i + 1) % size, &leaves[i], &err) == 0;
			if (size > 1)
			{
				/* the tree of another size, its own root (a size alone, with the same
				 * root, is no claim: the root binds the size through the checkpoint) */
				int64_t other = size - 1 > i ? size - 1 : size + 1;
				if (other <= N)
					wrong_size += tlog_check_record(p, n, other, &roots[other], i, &leaves[i], &err) == 0;
			}
			if (n) {
				p[n / 2].b[7] ^= 8;
				flipped += tlog_check_record(p, n, size, &roots[size], i, &leaves[i], &err) == 0;
				p[n / 2].b[7] ^= 8;
				cut += tlog_check_record(p, n - 1, size, &roots[size], i, &leaves[i], &err) == 0;
			}
			p[n] = roots[size];
			extra += tlog_check_record(p, n + 1, size, &roots[size], i, &leaves[i], &err) == 0;
		}
	is_int(bad, 0, "every inclusion proof of every size 1..%d checks (%ld proofs)", N, proofs);
	is_int(wrong_leaf, 0, "control: a changed leaf byte is refused by every inclusion proof");
	is_int(wrong_index, 0, "control: a wrong index is refused by every inclusion proof");
	is_int(wrong_size, 0, "control: another tree size (with its root) is refused by every inclusion proof");
	is_int(flipped, 0, "control: a flipped proof bit is refused");
	is_int(cut, 0, "control: a proof cut short is refused");
	is_int(extra, 0, "control: a proof with a hash too many is refused");

	/* every consistency proof */
	proofs = bad = 0;
	long wrong_old = 0, wrong_new = 0;
	flipped = cut = extra = 0;
	for (int64_t size = 1; size <= N; size++)
		for (int64_t old = 1; old <= size; old++) {
			proofs++;
			if (tlog_prove_tree(size, old, memlog_read, &m, p, &n, &err) < 0 ||
			    tlog_check_tree(p, n, size, &roots[size], old, &roots[old], &err) < 0) {
				if (!bad++)
					diag("consistency %lld..%lld: %s", (long long)old, (long long)size, err.msg);
				continue;
			}
			if (old < size) {
				struct tlog_hash o = roots[old];
				o.b[0] ^= 1;
				wrong_old += tlog_check_tree(p, n, size, &roots[size], old, &o, &err) == 0;
				wrong_new += tlog_check_tree(p, n, size, &roots[size - 1], old, &roots[old], &err) == 0;
				p[0].b[3] ^= 4;
				flipped += tlog_check_tree(p, n, size, &roots[size], old, &roots[old], &err) == 0;
				p[0].b[3] ^= 4;
				cut += tlog_check_tree(p, n - 1, size, &roots[size], old, &roots[old], &err) == 0;
			}
			p[n] = roots[old];
			extra += tlog_check_tree(p, n + 1, size, &roots[size], old, &roots[old], &err) == 0;
		}
	is_int(bad, 0, "every consistency proof between sizes 1..%d checks (%ld proofs)", N, proofs);
	is_int(wrong_old, 0, "control: a changed old root is refused by every consistency proof");
	is_int(wrong_new, 0, "control: another new root is refused by every consistency proof");
	is_int(flipped, 0, "control: a flipped consistency-proof bit is refused");
	is_int(cut, 0, "control: a consistency proof cut short is refused");
	is_int(extra, 0, "control: a consistency proof with a hash too many is refused");

	/* impossible arguments are usage errors, not proofs */
	ok(tlog_prove_record(5, 5, memlog_read, &m, p, &n, &err) < 0 && err.code == WX_USAGE,
	   "leaf 5 of a tree of 5 is refused (%s)", err.msg);
	ok(tlog_prove_tree(5, 6, memlog_read, &m, p, &n, &err) < 0 && err.code == WX_USAGE,
	   "a consistency proof from 6 to 5 is refused (%s)", err.msg);
	ok(tlog_prove_tree(5, 0, memlog_read, &m, p, &n, &err) < 0 && err.code == WX_USAGE,
	   "a consistency proof from 0 is refused (%s)", err.msg);
	ok(tlog_tree_hash(N + 1, memlog_read, &m, &roots[0], &err) < 0 && err.code == WX_NOT_FOUND &&
	       strstr(err.msg, "tlog tree hash: memlog: stored hash"),
	   "a tree larger than the stored hashes: the read function's error, prefixed (%s)", err.msg);
	memlog_free(&m);
}

static const char peter_skey[] = "PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz";
static const char peter_vkey[] = "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW";
static const char peter_text[] = "If you think cryptography is the answer to your problem,\n"
                                 "then you don't know what your problem is.\n";
static const char peter_sig[] = "\xe2\x80\x94 PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n";
static const char enoch_sig[] = "\xe2\x80\x94 EnochRoot rwz+eBzmZa0SO3NbfRGzPCpDckykFXSdeX+MNtCOXm2/5n2tiOHp+vAF1aGrQ5ovTG01oOTGwnWLox33WWd1RvMc+QQ=\n";

static int verify(const char *vkey, const char *note, struct world_err *err)
{
	char *text = NULL;
	int rc = note_verify(vkey, note, strlen(note), &text, err);
	free(text);
	return rc;
}

static void test_notes(void)
{
	struct world_err err = {0};
	char *signed_note = NULL, *text = NULL, *vk = NULL, want[1024];
	snprintf(want, sizeof want, "%s\n%s", peter_text, peter_sig);
	ok(note_sign(peter_skey, peter_text, &signed_note, &err) == 0, "note_sign with Go's test key");
	is_str(signed_note, want, "the signed note is byte for byte Go's (golang.org/x/mod/sumdb/note TestSign)");
	ok(note_verify(peter_vkey, want, strlen(want), &text, &err) == 0, "Go's signed note verifies (%s)", err.msg);
	is_str(text, peter_text, "note_verify gives back the text");
	free(text), free(signed_note);
	ok(note_skey_vkey(peter_skey, &vk, &err) == 0, "note_skey_vkey");
	is_str(vk, peter_vkey, "the verifier key derived from the signer key is Go's");
	free(vk);
	struct note_vkey k;
	ok(note_vkey_parse("  PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW\n", &k, &err) == 0 &&
	       k.hash == 0xc74f20a3 && !strcmp(k.name, "PeterNeumann"),
	   "a verifier key read from a file (final newline) parses: name and hash");

	/* another key's signature is ignored, as Go does, but it is not ours */
	char buf[2048];
	snprintf(buf, sizeof buf, "%s\n%s%s", peter_text, enoch_sig, peter_sig);
	is_int(verify(peter_vkey, buf, &err), 0, "another key's signature beside ours is ignored");
	{
		/* a witness whose name is longer than any key of ours: still only ignored */
		char longname[400];
		memset(longname, 'w', 300);
		longname[300] = '\0';
		snprintf(buf, sizeof buf, "%s\n%s\xe2\x80\x94 %s AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n",
		         peter_text, peter_sig, longname);
		is_int(verify(peter_vkey, buf, &err), 0, "another key's line with a 300-byte name is ignored, as Go does (%s)", err.msg);
	}
	snprintf(buf, sizeof buf, "%s\n%s", peter_text, enoch_sig);
	ok(verify(peter_vkey, buf, &err) < 0 && err.code == WX_INTEGRITY, "control: a note signed only by another key is refused (%s)",
	   err.msg);
	/* a bad signature by our key */
	snprintf(buf, sizeof buf, "%s\n%s", peter_text, peter_sig);
	char *x = strstr(buf, "x08go/ZJ") + 10;
	*x = *x == 'A' ? 'B' : 'A';
	ok(verify(peter_vkey, buf, &err) < 0 && err.code == WX_INTEGRITY, "control: a changed signature is refused (%s)",
	   err.msg);
	/* an edited text */
	snprintf(buf, sizeof buf, "%s\n%s", peter_text, peter_sig);
	buf[3] = 'X';
	ok(verify(peter_vkey, buf, &err) < 0 && err.code == WX_INTEGRITY, "control: an edited text is refused (%s)", err.msg);
	/* Go's malformed notes (note_test.go) */
	const char *bad[7];
	char b[7][1024];
	snprintf(b[0], 1024, "%s", peter_text);
	snprintf(b[1], 1024, "%s\n", peter_text);
	snprintf(b[2], 1024, "%s\n%.*s", peter_text, (int)strlen(peter_sig) - 1, peter_sig);
	snprintf(b[3], 1024, "\x01%s\n%s", peter_text, peter_sig);
	snprintf(b[4], 1024, "\xff%s\n%s", peter_text, peter_sig);
	snprintf(b[5], 1024, "%s\n\xe2\x80\x94 Bad Name x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=", peter_text);
	snprintf(b[6], 1024, "%s\n%sUnexpected line.\n", peter_text, peter_sig);
	int refused = 0;
	for (int i = 0; i < 7; i++) {
		bad[i] = b[i];
		refused += verify(peter_vkey, bad[i], &err) < 0 && err.code == WX_BAD_INPUT;
	}
	is_int(refused, 7, "Go's seven malformed notes are refused as malformed");
	/* key texts */
	ok(note_vkey_parse("PeterNeumann+c74f20a4+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW", &k, &err) < 0 &&
	       err.code == WX_BAD_INPUT,
	   "a verifier key whose hash does not match is refused (%s)", err.msg);
	ok(note_vkey_parse("PeterNeumann+173116ae+ZRpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW", &k, &err) < 0,
	   "a verifier key of an unknown algorithm is refused (%s)", err.msg);
	ok(note_vkey_parse("Peter Neumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW", &k, &err) < 0,
	   "a name with a space is refused (%s)", err.msg);
	ok(note_sign(peter_vkey, peter_text, &signed_note, &err) < 0 && err.code == WX_BAD_INPUT,
	   "a verifier key is no signer key (%s)", err.msg);
	ok(note_sign(peter_skey, "no newline", &signed_note, &err) < 0 && err.code == WX_BAD_INPUT,
	   "a text without its final newline is not signed (%s)", err.msg);

	/* a generated key */
	char *sk = NULL, *vk2 = NULL;
	ok(note_key_generate("example.com/world", &sk, &vk2, &err) == 0, "note_key_generate");
	ok(sk && !strncmp(sk, "PRIVATE+KEY+example.com/world+", 30) && strlen(sk) == 30 + 9 + 44,
	   "the signer key reads PRIVATE+KEY+NAME+HASH+BASE64(33 bytes)");
	ok(note_sign(sk, "hello\n", &signed_note, &err) == 0, "the generated key signs");
	is_int(verify(vk2, signed_note, &err), 0, "and its verifier key verifies (%s)", err.msg);
	ok(verify(peter_vkey, signed_note, &err) < 0 && err.code == WX_INTEGRITY,
	   "control: another key refuses it (%s)", err.msg);
	ok(note_skey_vkey(sk, &vk, &err) == 0 && !strcmp(vk, vk2), "the derived verifier key is the generated one");
	free(vk), free(sk), free(vk2), free(signed_note);
	ok(note_key_generate("bad+name", &sk, &vk2, &err) < 0, "a name with '+' is refused (%s)", err.msg);
	/* a signer used many times */
	struct note_signer *s = note_signer_new(peter_skey, &err);
	int same = 0;
	for (int i = 0; s && i < 3; i++) {
		char *o = NULL;
		same += note_signer_sign(s, peter_text, strlen(peter_text), &o, &err) == 0 && !strcmp(o, want);
		free(o);
	}
	note_signer_free(s);
	is_int(same, 3, "a parsed signer signs again and again, the same bytes");
}

static void test_checkpoints(void)
{
	struct world_err err = {0};
	struct tlog_hash root = tlog_leaf_hash("x", 1);
	char *body = NULL, b64[45];
	tlog_hash_b64(&root, b64);
	ok(tlog_checkpoint_format("example.com/world", 12, &root, NULL, &body, &err) == 0, "checkpoint format");
	char want[200];
	snprintf(want, sizeof want, "example.com/world\n12\n%s\n", b64);
	is_str(body, want, "the body is origin, size, base64 root, each on its line");
	struct tlog_checkpoint cp;
	ok(tlog_checkpoint_parse(body, strlen(body), &cp, &err) == 0 && cp.size == 12 &&
	       !strcmp(cp.origin, "example.com/world") && tlog_hash_equal(&cp.root, &root) && !strcmp(cp.extensions, ""),
	   "parse gives back origin, size and root");
	tlog_checkpoint_free(&cp);
	free(body);
	ok(tlog_checkpoint_format("o", 0, &root, "ext one\next two\n", &body, &err) == 0, "format with extension lines");
	ok(tlog_checkpoint_parse(body, strlen(body), &cp, &err) == 0 && cp.size == 0 &&
	       !strcmp(cp.extensions, "ext one\next two\n"),
	   "size 0 and extension lines parse, kept verbatim");
	tlog_checkpoint_free(&cp);
	free(body);
	const char *bad[] = {"o\n012\n%s\n", "o\n-1\n%s\n", "o\n\n%s\n", "o\n1a\n%s\n", "o\n+1\n%s\n",
	                     "o\n99999999999999999999\n%s\n", "\n1\n%s\n", "o\n1\n%s", "o\n1\n%s\n\n",
	                     "o\n1\n%s\next", "o\n1\n%s=\n", "o\n1\nAAAA%s\n", "o\n 1\n%s\n"};
	int refused = 0;
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char t[200];
		snprintf(t, sizeof t, bad[i], b64);
		if (tlog_checkpoint_parse(t, strlen(t), &cp, &err) < 0 && err.code == WX_BAD_INPUT)
			refused++;
		else
			diag("accepted: %s", bad[i]), tlog_checkpoint_free(&cp);
	}
	is_int(refused, (long long)(sizeof bad / sizeof bad[0]),
	       "malformed bodies refused: leading zero, sign, empty or overlong size, no origin, no final newline, "
	       "an empty extension line, a root not of 32 bytes");
	const char *good = "o\n1\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n";
	ok(tlog_checkpoint_parse(good, strlen(good), &cp, &err) == 0,
	   "control: the same shape with a good root parses");
	tlog_checkpoint_free(&cp);

	/* signed: an edited checkpoint is refused by its signature */
	char *sk = NULL, *vk = NULL, *sn = NULL;
	if (note_key_generate("example.com/world", &sk, &vk, &err) < 0)
		bail("keygen: %s", err.msg);
	tlog_checkpoint_format("example.com/world", 7, &root, NULL, &body, &err);
	note_sign(sk, body, &sn, &err);
	ok(tlog_checkpoint_open(vk, sn, strlen(sn), &cp, &err) == 0 && cp.size == 7, "a signed checkpoint opens");
	tlog_checkpoint_free(&cp);
	char *ed = strdup(sn);
	ed[strlen("example.com/world\n")] = '8';
	ok(tlog_checkpoint_open(vk, ed, strlen(ed), &cp, &err) < 0 && err.code == WX_INTEGRITY,
	   "control: the same checkpoint with its size edited is refused (%s)", err.msg);
	char *sk2 = NULL, *vk2 = NULL;
	note_key_generate("example.com/world", &sk2, &vk2, &err);
	ok(tlog_checkpoint_open(vk2, sn, strlen(sn), &cp, &err) < 0 && err.code == WX_INTEGRITY,
	   "control: another key of the same name refuses it (%s)", err.msg);
	free(sk), free(vk), free(sk2), free(vk2), free(sn), free(ed), free(body);
}

int main(void)
{
	test_vectors();
	test_every_size();
	test_notes();
	test_checkpoints();
	return done_testing();
}
