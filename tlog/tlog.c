/* tlog/tlog.c: see tlog.h. A port of Go's golang.org/x/mod/sumdb/tlog
 * (tlog.go: the same recursions, the same order of hashes), over arrays
 * of at most 2·TLOG_MAX_PROOF stored-hash indexes instead of slices. */
#include "tlog/tlog.h"
#include "tlog/b64.h"

#include <openssl/evp.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* Sizes up to 2^62 leaves: stored indexes (< 2n) and 2n+1 stay in int64. */
#define TLOG_MAX_SIZE ((int64_t)1 << 62)

static EVP_MD *sha256_md;
static pthread_once_t sha256_once = PTHREAD_ONCE_INIT;
static void sha256_fetch(void) { sha256_md = EVP_MD_fetch(NULL, "SHA256", NULL); }

/* SHA-256 of a ‖ b. libcrypto's SHA-256 of memory fails only when it
 * cannot allocate its context: like malloc's failure, fatal. */
static struct tlog_hash sha256_2(const void *a, size_t alen, const void *b, size_t blen)
{
	struct tlog_hash h;
	pthread_once(&sha256_once, sha256_fetch);
	EVP_MD_CTX *c = EVP_MD_CTX_new();
	unsigned int n = 0;
	if (!c || !sha256_md || !EVP_DigestInit_ex(c, sha256_md, NULL) || !EVP_DigestUpdate(c, a, alen) ||
	    (blen && !EVP_DigestUpdate(c, b, blen)) || !EVP_DigestFinal_ex(c, h.b, &n) || n != TLOG_HASH_SIZE)
		abort();
	EVP_MD_CTX_free(c);
	return h;
}

struct tlog_hash tlog_leaf_hash(const void *data, size_t len)
{
	static const unsigned char zero = 0x00;
	return sha256_2(&zero, 1, data, len);
}

struct tlog_hash tlog_node_hash(const struct tlog_hash *l, const struct tlog_hash *r)
{
	unsigned char buf[1 + 2 * TLOG_HASH_SIZE];
	buf[0] = 0x01;
	memcpy(buf + 1, l->b, TLOG_HASH_SIZE);
	memcpy(buf + 1 + TLOG_HASH_SIZE, r->b, TLOG_HASH_SIZE);
	return sha256_2(buf, sizeof buf, NULL, 0);
}

struct tlog_hash tlog_empty_hash(void) { return sha256_2("", 0, NULL, 0); }

int tlog_hash_equal(const struct tlog_hash *a, const struct tlog_hash *b)
{
	return memcmp(a->b, b->b, TLOG_HASH_SIZE) == 0;
}

/* k, the largest power of two below n (1 for n ≤ 2), and log2(k). */
static int64_t maxpow2(int64_t n, int *level)
{
	int l = 0;
	while (((uint64_t)1 << (l + 1)) < (uint64_t)n)
		l++;
	if (level)
		*level = l;
	return (int64_t)1 << l;
}

static int trailing_ones(int64_t n) { return n == -1 ? 64 : __builtin_ctzll((uint64_t)n + 1); }

int64_t tlog_stored_index(int level, int64_t n)
{
	/* Level L's n-th hash is written right after level L+1's (2n+1)-th. */
	for (int l = level; l > 0; l--)
		n = 2 * n + 1;
	/* Level 0's n-th hash is written at n + n/2 + n/4 + ... */
	int64_t i = 0;
	for (; n > 0; n >>= 1)
		i += n;
	return i + level;
}

void tlog_split_stored_index(int64_t index, int *level, int64_t *n)
{
	/* tlog_stored_index(0, n) < 2n: the leaf is in [index/2, index/2 + log2(index)]. */
	int64_t m = index / 2, at = tlog_stored_index(0, m);
	for (;;) {
		/* leaf m adds 1 + trailing_ones(m) hashes */
		int64_t x = at + 1 + trailing_ones(m);
		if (x > index)
			break;
		m++;
		at = x;
	}
	*level = (int)(index - at);
	*n = m >> *level;
}

int64_t tlog_stored_count(int64_t n)
{
	if (n <= 0)
		return 0;
	int64_t c = tlog_stored_index(0, n - 1) + 1;
	for (uint64_t i = (uint64_t)(n - 1); i & 1; i >>= 1)
		c++;
	return c;
}

/* The stored-hash indexes a computation needs, in the order it uses them. */
struct need {
	int64_t v[2 * TLOG_MAX_PROOF];
	size_t n;
	int overflow;
};

static void need_add(struct need *nd, int64_t idx)
{
	if (nd->n < sizeof nd->v / sizeof nd->v[0])
		nd->v[nd->n++] = idx;
	else
		nd->overflow = 1;
}

/* The hashes read for a need, consumed in order. */
struct have {
	const struct tlog_hash *h;
	size_t n, pos;
};

static int read_need(const struct need *nd, tlog_read_fn read_fn, void *ctx, struct tlog_hash *out,
                     const char *what, struct world_err *err)
{
	if (nd->overflow)
		return werr(err, WX_FAIL, "%s: more than %d stored hashes needed (a bug)", what, 2 * TLOG_MAX_PROOF);
	if (nd->n == 0)
		return 0;
	if (read_fn(ctx, nd->v, nd->n, out, err) < 0)
		return werr_prefix(err, "%s", what);
	return 0;
}

/* The stored hashes making up the subtree of leaves [lo, hi) (RFC 6962
 * §2.1): perfect subtrees, largest first, read directly. */
static void subtree_index(int64_t lo, int64_t hi, struct need *nd)
{
	while (lo < hi) {
		int level;
		int64_t k = maxpow2(hi - lo + 1, &level);
		need_add(nd, tlog_stored_index(level, lo >> level));
		lo += k;
	}
}

static struct tlog_hash subtree_hash(int64_t lo, int64_t hi, struct have *hv)
{
	size_t count = 0;
	while (lo < hi) {
		lo += maxpow2(hi - lo + 1, NULL);
		count++;
	}
	/* subtree_index asked for exactly these: hv has them */
	const struct tlog_hash *t = hv->h + hv->pos;
	hv->pos += count;
	struct tlog_hash h = t[count - 1];
	for (size_t i = count - 1; i-- > 0;)
		h = tlog_node_hash(&t[i], &h);
	return h;
}

int tlog_stored_hashes_for_append(int64_t n, const struct tlog_hash *leaf, tlog_read_fn read_fn, void *ctx,
                                  struct tlog_hash out[TLOG_MAX_PROOF], size_t *nout, struct world_err *err)
{
	if (n < 0 || n >= TLOG_MAX_SIZE)
		return werr(err, WX_USAGE, "tlog append: leaf %lld outside 0..2^62", (long long)n);
	struct need nd = {.n = 0};
	int m = trailing_ones(n);
	/* in sorted order: the largest (leftmost) subtree first; n >> i is odd */
	for (int i = m - 1; i >= 0; i--)
		need_add(&nd, tlog_stored_index(i, (n >> i) - 1));
	struct tlog_hash old[TLOG_MAX_PROOF];
	if (read_need(&nd, read_fn, ctx, old, "tlog append", err) < 0)
		return -1;
	struct tlog_hash h = *leaf;
	out[0] = h;
	for (int i = 0; i < m; i++) {
		h = tlog_node_hash(&old[m - 1 - i], &h);
		out[i + 1] = h;
	}
	*nout = (size_t)m + 1;
	return 0;
}

int tlog_tree_hash(int64_t size, tlog_read_fn read_fn, void *ctx, struct tlog_hash *root, struct world_err *err)
{
	if (size < 0 || size > TLOG_MAX_SIZE)
		return werr(err, WX_USAGE, "tlog tree hash: size %lld outside 0..2^62", (long long)size);
	if (size == 0) {
		*root = tlog_empty_hash();
		return 0;
	}
	struct need nd = {.n = 0};
	subtree_index(0, size, &nd);
	struct tlog_hash hs[2 * TLOG_MAX_PROOF];
	if (read_need(&nd, read_fn, ctx, hs, "tlog tree hash", err) < 0)
		return -1;
	struct have hv = {hs, nd.n, 0};
	*root = subtree_hash(0, size, &hv);
	return 0;
}

/* Inclusion (RFC 6962 §2.1.1): the indexes for the proof that leaf n is in
 * the subtree [lo, hi), then the proof itself, innermost hash first. */
static void leaf_proof_index(int64_t lo, int64_t hi, int64_t n, struct need *nd)
{
	if (lo + 1 == hi)
		return;
	int64_t k = maxpow2(hi - lo, NULL);
	if (n < lo + k) {
		leaf_proof_index(lo, lo + k, n, nd);
		subtree_index(lo + k, hi, nd);
	} else {
		subtree_index(lo, lo + k, nd);
		leaf_proof_index(lo + k, hi, n, nd);
	}
}

static void leaf_proof(int64_t lo, int64_t hi, int64_t n, struct have *hv, struct tlog_hash *p, size_t *np)
{
	if (lo + 1 == hi) /* the leaf: the verifier has its hash */
		return;
	int64_t k = maxpow2(hi - lo, NULL);
	struct tlog_hash th;
	if (n < lo + k) {
		leaf_proof(lo, lo + k, n, hv, p, np);
		th = subtree_hash(lo + k, hi, hv);
	} else {
		th = subtree_hash(lo, lo + k, hv);
		leaf_proof(lo + k, hi, n, hv, p, np);
	}
	p[(*np)++] = th;
}

int tlog_prove_record(int64_t size, int64_t index, tlog_read_fn read_fn, void *ctx,
                      struct tlog_hash proof[TLOG_MAX_PROOF], size_t *n, struct world_err *err)
{
	if (size < 1 || size > TLOG_MAX_SIZE || index < 0 || index >= size)
		return werr(err, WX_USAGE, "inclusion proof: leaf %lld is not in a tree of size %lld",
		            (long long)index, (long long)size);
	struct need nd = {.n = 0};
	leaf_proof_index(0, size, index, &nd);
	struct tlog_hash hs[2 * TLOG_MAX_PROOF];
	if (read_need(&nd, read_fn, ctx, hs, "inclusion proof", err) < 0)
		return -1;
	struct have hv = {hs, nd.n, 0};
	*n = 0;
	leaf_proof(0, size, index, &hv, proof, n);
	return 0;
}

/* The hash of the subtree [lo, hi) implied by proof p[0..np) for leaf n;
 * -1 if the proof has the wrong length for that position. */
static int run_record_proof(const struct tlog_hash *p, size_t np, int64_t lo, int64_t hi, int64_t n,
                            const struct tlog_hash *leaf, struct tlog_hash *out)
{
	if (lo + 1 == hi) {
		if (np != 0)
			return -1;
		*out = *leaf;
		return 0;
	}
	if (np == 0)
		return -1;
	int64_t k = maxpow2(hi - lo, NULL);
	struct tlog_hash th;
	if (n < lo + k) {
		if (run_record_proof(p, np - 1, lo, lo + k, n, leaf, &th) < 0)
			return -1;
		*out = tlog_node_hash(&th, &p[np - 1]);
	} else {
		if (run_record_proof(p, np - 1, lo + k, hi, n, leaf, &th) < 0)
			return -1;
		*out = tlog_node_hash(&p[np - 1], &th);
	}
	return 0;
}

int tlog_check_record(const struct tlog_hash *proof, size_t n, int64_t size, const struct tlog_hash *root,
                      int64_t index, const struct tlog_hash *leaf, struct world_err *err)
{
	if (size < 1 || size > TLOG_MAX_SIZE || index < 0 || index >= size)
		return werr(err, WX_USAGE, "inclusion proof: leaf %lld is not in a tree of size %lld",
		            (long long)index, (long long)size);
	if (n > TLOG_MAX_PROOF)
		return werr(err, WX_INTEGRITY, "inclusion proof: %zu hashes, more than %d", n, TLOG_MAX_PROOF);
	struct tlog_hash th;
	if (run_record_proof(proof, n, 0, size, index, leaf, &th) < 0)
		return werr(err, WX_INTEGRITY,
		            "inclusion proof: %zu hashes is the wrong length for leaf %lld of a tree of size %lld", n,
		            (long long)index, (long long)size);
	if (!tlog_hash_equal(&th, root))
		return werr(err, WX_INTEGRITY,
		            "inclusion proof: leaf %lld does not lead to the root of the tree of size %lld",
		            (long long)index, (long long)size);
	return 0;
}

/* Consistency (RFC 6962 §2.1.2): the sub-proof for the subtree [lo, hi)
 * where the old tree has n leaves (lo < n ≤ hi). */
static void tree_proof_index(int64_t lo, int64_t hi, int64_t n, struct need *nd)
{
	if (n == hi) {
		if (lo != 0)
			subtree_index(lo, hi, nd);
		return;
	}
	int64_t k = maxpow2(hi - lo, NULL);
	if (n <= lo + k) {
		tree_proof_index(lo, lo + k, n, nd);
		subtree_index(lo + k, hi, nd);
	} else {
		subtree_index(lo, lo + k, nd);
		tree_proof_index(lo + k, hi, n, nd);
	}
}

static void tree_proof(int64_t lo, int64_t hi, int64_t n, struct have *hv, struct tlog_hash *p, size_t *np)
{
	if (n == hi) {
		/* the old tree itself: the verifier has its hash */
		if (lo != 0)
			p[(*np)++] = subtree_hash(lo, hi, hv);
		return;
	}
	int64_t k = maxpow2(hi - lo, NULL);
	struct tlog_hash th;
	if (n <= lo + k) {
		tree_proof(lo, lo + k, n, hv, p, np);
		th = subtree_hash(lo + k, hi, hv);
	} else {
		th = subtree_hash(lo, lo + k, hv);
		tree_proof(lo + k, hi, n, hv, p, np);
	}
	p[(*np)++] = th;
}

int tlog_prove_tree(int64_t new_size, int64_t old_size, tlog_read_fn read_fn, void *ctx,
                    struct tlog_hash proof[TLOG_MAX_PROOF], size_t *n, struct world_err *err)
{
	if (old_size < 1 || new_size > TLOG_MAX_SIZE || old_size > new_size)
		return werr(err, WX_USAGE, "consistency proof: from size %lld to %lld: need 0 < from <= to",
		            (long long)old_size, (long long)new_size);
	struct need nd = {.n = 0};
	tree_proof_index(0, new_size, old_size, &nd);
	struct tlog_hash hs[2 * TLOG_MAX_PROOF];
	if (read_need(&nd, read_fn, ctx, hs, "consistency proof", err) < 0)
		return -1;
	struct have hv = {hs, nd.n, 0};
	*n = 0;
	tree_proof(0, new_size, old_size, &hv, proof, n);
	return 0;
}

/* The hashes of the subtree [lo, hi) in the old tree (*oh) and the new
 * (*th) implied by p[0..np); -1 if the proof has the wrong length. */
static int run_tree_proof(const struct tlog_hash *p, size_t np, int64_t lo, int64_t hi, int64_t n,
                          const struct tlog_hash *old, struct tlog_hash *oh, struct tlog_hash *th)
{
	if (n == hi) {
		if (lo == 0) {
			if (np != 0)
				return -1;
			*oh = *th = *old;
			return 0;
		}
		if (np != 1)
			return -1;
		*oh = *th = p[0];
		return 0;
	}
	if (np == 0)
		return -1;
	int64_t k = maxpow2(hi - lo, NULL);
	struct tlog_hash o, t;
	if (n <= lo + k) {
		if (run_tree_proof(p, np - 1, lo, lo + k, n, old, &o, &t) < 0)
			return -1;
		*oh = o;
		*th = tlog_node_hash(&t, &p[np - 1]);
	} else {
		if (run_tree_proof(p, np - 1, lo + k, hi, n, old, &o, &t) < 0)
			return -1;
		*oh = tlog_node_hash(&p[np - 1], &o);
		*th = tlog_node_hash(&p[np - 1], &t);
	}
	return 0;
}

int tlog_check_tree(const struct tlog_hash *proof, size_t n, int64_t new_size, const struct tlog_hash *new_root,
                    int64_t old_size, const struct tlog_hash *old_root, struct world_err *err)
{
	if (old_size < 1 || new_size > TLOG_MAX_SIZE || old_size > new_size)
		return werr(err, WX_USAGE, "consistency proof: from size %lld to %lld: need 0 < from <= to",
		            (long long)old_size, (long long)new_size);
	if (n > TLOG_MAX_PROOF)
		return werr(err, WX_INTEGRITY, "consistency proof: %zu hashes, more than %d", n, TLOG_MAX_PROOF);
	struct tlog_hash oh, th;
	if (run_tree_proof(proof, n, 0, new_size, old_size, old_root, &oh, &th) < 0)
		return werr(err, WX_INTEGRITY, "consistency proof: %zu hashes is the wrong length from size %lld to %lld",
		            n, (long long)old_size, (long long)new_size);
	if (!tlog_hash_equal(&oh, old_root))
		return werr(err, WX_INTEGRITY, "consistency proof: does not lead to the old root (size %lld)",
		            (long long)old_size);
	if (!tlog_hash_equal(&th, new_root))
		return werr(err, WX_INTEGRITY, "consistency proof: does not lead to the new root (size %lld)",
		            (long long)new_size);
	return 0;
}

void tlog_hash_b64(const struct tlog_hash *h, char out[45]) { tlog_b64_encode(h->b, TLOG_HASH_SIZE, out); }

int tlog_hash_parse_b64(const char *s, size_t len, struct tlog_hash *h, struct world_err *err)
{
	struct tlog_hash t;
	if (len != TLOG_B64_LEN(TLOG_HASH_SIZE) || tlog_b64_decode(s, len, t.b, sizeof t.b) != TLOG_HASH_SIZE)
		return werr(err, WX_BAD_INPUT, "hash of %zu characters: not the base64 of 32 bytes (44 characters)", len);
	*h = t;
	return 0;
}
