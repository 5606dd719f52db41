/* tlog/tlog.h: the Merkle tree of a transparency log (RFC 6962 / RFC 9162
 * hashing) over hashes kept in caller-provided storage.
 *
 * Owns: the leaf and node hashes, the stored-hash layout, the tree hash of
 * any size, and the inclusion ("record") and consistency ("tree") proofs,
 * each made and checked. A pure library over libcrypto's SHA-256: no store,
 * no I/O; callers give a read function for the hashes they keep.
 *
 * Hashing (RFC 6962 §2.1): leaf = SHA-256(0x00 ‖ bytes), node =
 * SHA-256(0x01 ‖ left ‖ right); the tree of n leaves splits at the largest
 * power of two below n. The tree hash of 0 leaves is SHA-256 of nothing
 * (RFC 6962; Go's sumdb/tlog says all zeros, but never uses it).
 *
 * The stored-hash layout is Go's golang.org/x/mod/sumdb/tlog: appending leaf
 * n (0-based) stores, in order, its leaf hash and the hash of every complete
 * subtree that leaf closes (1 + trailing one-bits of n hashes), so the hash
 * at level L, position k (the subtree of leaves k·2^L .. (k+1)·2^L - 1) sits
 * at the index tlog_stored_index(L, k); leaf n's hashes start at
 * tlog_stored_index(0, n) and tlog_stored_count(n) hashes precede the
 * (n+1)-th leaf's. A C2SP tlog-tiles layout can be derived from the same
 * (level, k) addresses.
 *
 * Proofs are lists of at most TLOG_MAX_PROOF hashes in RFC 6962 order (the
 * order of RFC 9162 §2.1.3 / §2.1.4 and of Go's tlog.RecordProof /
 * tlog.TreeProof), so any of those verifiers checks them.
 *
 * Indexes here are 0-based leaf numbers: World's log entry N is leaf N-1.
 * Errors: WX_USAGE for impossible arguments (an index outside the tree),
 * WX_INTEGRITY for a proof or hash that does not verify, whatever the read
 * function set for its own failures. Thread-safe: no state. */
#ifndef WORLD_TLOG_TLOG_H
#define WORLD_TLOG_TLOG_H
#include <stddef.h>
#include <stdint.h>
#include "common/error.h"

#define TLOG_HASH_SIZE 32
/* A proof of a tree below 2^63 leaves has at most 63 hashes; 64 bounds
 * every array here (also the hashes stored by one append: 1 + 63). */
#define TLOG_MAX_PROOF 64

struct tlog_hash {
	unsigned char b[TLOG_HASH_SIZE];
};

/* Reads the stored hashes at indexes[0..n-1] (tlog_stored_index values)
 * into out[0..n-1], in the same order. Returns 0, or -1 with err set (a
 * hash absent: WX_NOT_FOUND or WX_INTEGRITY, as the store sees it). The
 * library asks for at most 2·TLOG_MAX_PROOF hashes per call, and only for
 * hashes that exist in a tree of the size it was given. */
typedef int (*tlog_read_fn)(void *ctx, const int64_t *indexes, size_t n, struct tlog_hash *out,
                            struct world_err *err);

/* SHA-256(0x00 ‖ data) */
struct tlog_hash tlog_leaf_hash(const void *data, size_t len);
/* SHA-256(0x01 ‖ l ‖ r) */
struct tlog_hash tlog_node_hash(const struct tlog_hash *l, const struct tlog_hash *r);
/* SHA-256 of nothing: the tree hash of 0 leaves. */
struct tlog_hash tlog_empty_hash(void);
int tlog_hash_equal(const struct tlog_hash *a, const struct tlog_hash *b);

/* The stored-hash index of the hash at level `level` (0 = leaves),
 * position n, and its inverse. Go: StoredHashIndex, SplitStoredHashIndex. */
int64_t tlog_stored_index(int level, int64_t n);
void tlog_split_stored_index(int64_t index, int *level, int64_t *n);
/* The number of hashes stored for a tree of n leaves. Go: StoredHashCount. */
int64_t tlog_stored_count(int64_t n);

/* The hashes to store when leaf n (0-based: the tree grows from n to n+1
 * leaves) is appended with leaf hash `leaf`: out[0] = leaf, then one node
 * per completed subtree, to be stored at tlog_stored_index(0, n),
 * tlog_stored_index(0, n) + 1, ... (= tlog_stored_count(n) + i). *nout is
 * at most TLOG_MAX_PROOF. read_fn reads the earlier subtree hashes (none
 * when n is even). Go: StoredHashesForRecordHash. */
int tlog_stored_hashes_for_append(int64_t n, const struct tlog_hash *leaf, tlog_read_fn read_fn, void *ctx,
                                  struct tlog_hash out[TLOG_MAX_PROOF], size_t *nout, struct world_err *err);

/* The root hash of the tree of the first `size` leaves (size ≥ 0). */
int tlog_tree_hash(int64_t size, tlog_read_fn read_fn, void *ctx, struct tlog_hash *root,
                   struct world_err *err);

/* Inclusion: the proof that leaf `index` (0 ≤ index < size) is in the tree
 * of `size` leaves, and its check against that tree's root. */
int tlog_prove_record(int64_t size, int64_t index, tlog_read_fn read_fn, void *ctx,
                      struct tlog_hash proof[TLOG_MAX_PROOF], size_t *n, struct world_err *err);
int tlog_check_record(const struct tlog_hash *proof, size_t n, int64_t size, const struct tlog_hash *root,
                      int64_t index, const struct tlog_hash *leaf, struct world_err *err);

/* Consistency: the proof that the tree of old_size leaves is a prefix of
 * the tree of new_size leaves (0 < old_size ≤ new_size; equal sizes give
 * an empty proof), and its check against both roots. */
int tlog_prove_tree(int64_t new_size, int64_t old_size, tlog_read_fn read_fn, void *ctx,
                    struct tlog_hash proof[TLOG_MAX_PROOF], size_t *n, struct world_err *err);
int tlog_check_tree(const struct tlog_hash *proof, size_t n, int64_t new_size, const struct tlog_hash *new_root,
                    int64_t old_size, const struct tlog_hash *old_root, struct world_err *err);

/* Standard base64 (RFC 4648, padded) of a hash: 44 characters + NUL. */
void tlog_hash_b64(const struct tlog_hash *h, char out[45]);
/* Parses exactly 44 characters of base64 decoding to 32 bytes. */
int tlog_hash_parse_b64(const char *s, size_t len, struct tlog_hash *h, struct world_err *err);
#endif
