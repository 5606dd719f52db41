/* store/tree.h: the log as a transparency log (docs/provenance.md,
 * "A verifiable log"): its Merkle tree, the verifier key of its signing
 * key, and the latest signed checkpoint, kept in the store.
 *
 * Owns: the table log_tree (Go sumdb/tlog's stored-hash index -> 32-byte
 * hash, "an equivalent table" to C2SP tlog-tiles' full tiles), written by
 * world_log_append in the entry's own transaction (leaf N-1 is entry N,
 * its bytes exactly the entry's canonical JSON as stored, entryHash
 * included); the one-row tables log_key (the verifier key text,
 * NAME+HASH+BASE64) and log_checkpoint (the latest signed checkpoint, a
 * C2SP signed note, and its tree size); the checkpoint signed in the
 * commit of a transaction that appended entries, when the writer handle
 * holds a signer (world_tree_set_signer: at most one signature per
 * transaction, so one per group-commit batch); inclusion and consistency
 * proofs read from the table; the scan's recomputation of the tree.
 * The hashing and proofs are tlog/'s (tlog/tlog.h): nothing here is a
 * second Merkle implementation.
 *
 * Sizes and indexes are World's: entry N (1-based) is leaf N-1; a tree of
 * size S holds entries 1..S. All need schema 3 (a reader of an older
 * store: WX_SCHEMA "open it once with a writer"). */
#ifndef WORLD_STORE_TREE_H
#define WORLD_STORE_TREE_H
#include <stdio.h>
#include "store/store.h"
#include "tlog/tlog.h"

/* The tree's size: the log's last entry index (0 when empty). */
int world_tree_size(struct world_store *st, long long *size, struct world_err *err);
/* The root hash of the tree of the first size entries (size <= the tree's). */
int world_tree_root(struct world_store *st, long long size, struct tlog_hash *root, struct world_err *err);
/* Entry N's stored leaf hash, SHA-256(0x00 || entry N's canonical JSON). */
int world_tree_leaf(struct world_store *st, long long index, struct tlog_hash *leaf, struct world_err *err);
/* Inclusion of entry index (1..size) in the tree of size entries; at most
 * TLOG_MAX_PROOF hashes, RFC 6962 order. WX_NOT_FOUND when size is past
 * the tree or index past size. */
int world_tree_prove_inclusion(struct world_store *st, long long index, long long size,
                               struct tlog_hash proof[TLOG_MAX_PROOF], size_t *n, struct world_err *err);
/* Consistency of the tree of from entries with the tree of to entries
 * (1 <= from <= to <= the tree's size). */
int world_tree_prove_consistency(struct world_store *st, long long from, long long to,
                                 struct tlog_hash proof[TLOG_MAX_PROOF], size_t *n, struct world_err *err);

/* The scan's check: recomputes the stored hashes every entry from..to
 * (inclusive; to = 0: the last) writes from its canonical JSON and
 * compares them with log_tree, printing one line per entry whose hashes
 * differ or are missing:
 *   integrity_hole table=log_tree index=N field=hash
 * (N the entry whose append stores them). Hashes of earlier entries the
 * recomputation needs come from the table (verified when their entries
 * were scanned). *holes is added to. */
int world_tree_check(struct world_store *st, long long from, long long to, FILE *out, long long *holes,
                     struct world_err *err);

/* ---- the signing key ---- */
/* The verifier key text stored for the log (NAME+HASH+BASE64) into vkey;
 * WX_NOT_FOUND when the store has none. */
int world_log_key_get(struct world_store *st, char *vkey, size_t n, struct world_err *err);
/* Stores the verifier key text (checked as one): with replace, whatever
 * was there is replaced; without, only when the store has none (*installed
 * 1 then, else 0). */
int world_log_key_put(struct world_store *st, const char *vkey, int replace, int *installed, struct world_err *err);
/* The key file's path: <db>.log-key, or for a PostgreSQL store
 * CACHE/log-keys/NAME.log-key in the host's cache directory (as the
 * operator token's, store/sessions.c); make_dirs creates that directory
 * (0700). */
int world_log_key_path(const struct world_store *st, char *path, size_t n, int make_dirs, struct world_err *err);
/* Reads a signer key file (0600 or stricter, owned by this user, a regular
 * file not reached through a symlink) into *skey (malloc'd, without its
 * trailing newline). */
int world_log_key_read(const char *path, char **skey, struct world_err *err);
/* Writes skey to path, 0600, through a temporary file, fsync and rename;
 * refuses when path exists. */
int world_log_key_write(const char *path, const char *skey, struct world_err *err);
/* A new key for this store: origin NAME = "world/" + 32 random hex digits
 * (or the given origin), the signer key written to path (refused when it
 * exists), its verifier key stored with world_log_key_put(replace), and
 * the first checkpoint signed for the tree as it is. vkey (may be NULL)
 * gets the verifier key text. */
int world_log_key_init(struct world_store *st, const char *path, const char *origin, int replace, char *vkey,
                       size_t vkeyn, struct world_err *err);

/* ---- checkpoints ---- */
/* This writer handle signs a checkpoint in the commit of every
 * transaction that appended log entries, with the signer key text skey
 * (PRIVATE+KEY+NAME+HASH+DATA; NULL: stop signing); the handle keeps its
 * own parsed copy until the close. Refused (WX_CONFLICT) when skey's
 * verifier key is not the store's. The checkpoint's origin is the key's
 * name. */
int world_tree_set_signer(struct world_store *st, const char *skey, struct world_err *err);
/* Signs and stores a checkpoint of the tree as it is now, in a
 * transaction of its own, with the handle's signer (worldd log checkpoint
 * --sign). */
int world_tree_sign_now(struct world_store *st, struct world_err *err);
/* The latest stored signed checkpoint (malloc'd note, its tree size);
 * WX_NOT_FOUND when none was signed yet. */
int world_log_checkpoint_get(struct world_store *st, char **note, long long *size, struct world_err *err);
/* Counts of this handle: checkpoints signed, signatures that failed
 * (the commit went on without one). */
void world_tree_sign_stats(struct world_store *st, long long *signed_n, long long *failed);
#endif
