/* tests/store/test_tree.c: the log's Merkle tree in the store (store/tree.h,
 * issue 43), on SQLite and -- with WORLD_TEST_PG_URI (tests/store/tree.sh
 * starts a throwaway cluster) -- on PostgreSQL:
 *   - every entry's stored leaf is SHA-256(0x00 || its canonical JSON) and
 *     the append's receipt; every root equals a recomputation from the
 *     entries by the plain RFC 6962 recursion written here (the control of
 *     the library's stored-hash arithmetic);
 *   - inclusion and consistency proofs from the store check against those
 *     roots (tlog_check_*), and a wrong index or leaf is refused;
 *   - several writers (handles of their own, as several daemons) and a
 *     group commit's threads append at once: one log, one tree equal to
 *     the recomputation, the scan clean;
 *   - the signer: one signature per transaction (per group-commit batch),
 *     the checkpoint verifies with the store's verifier key;
 *   - SQLite: the scan reports a changed stored hash (control: clean
 *     before); a schema-2 store (tree tables dropped) is migrated by a
 *     writer with the tree backfilled byte for byte, a reader of it gets
 *     WX_SCHEMA from the tree's calls. */
#include "store/tree.h"
#include "store/group.h"
#include "store/scan.h"
#include "store/db.h"
#include "tlog/checkpoint.h"
#include "tlog/note.h"
#include "tests/tap.h"
#include "tests/store/sfix.h"
#include <openssl/evp.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- the reference: RFC 6962 §2.1's recursion over the leaves ---- */
static void sha(const void *a, size_t an, const void *b, size_t bn, const void *c, size_t cn, unsigned char out[32])
{
	EVP_MD_CTX *x = EVP_MD_CTX_new();
	EVP_DigestInit_ex(x, EVP_sha256(), NULL);
	EVP_DigestUpdate(x, a, an);
	if (bn) EVP_DigestUpdate(x, b, bn);
	if (cn) EVP_DigestUpdate(x, c, cn);
	unsigned int n = 32;
	EVP_DigestFinal_ex(x, out, &n);
	EVP_MD_CTX_free(x);
}
static void mth(unsigned char (*leaves)[32], long long n, unsigned char out[32])
{
	if (n == 1) { memcpy(out, leaves[0], 32); return; }
	long long k = 1;
	while (k * 2 < n) k *= 2;
	unsigned char l[32], r[32];
	mth(leaves, k, l);
	mth(leaves + k, n - k, r);
	unsigned char one = 1;
	sha(&one, 1, l, 32, r, 32, out);
}

/* the leaves of entries 1..n as the reference computes them */
static unsigned char (*ref_leaves(struct world_store *st, long long n))[32]
{
	unsigned char (*lv)[32] = calloc((size_t)n + 1, 32);
	for (long long i = 1; i <= n; i++) {
		struct world_log_entry e;
		struct world_err err = { 0 };
		if (world_log_get(st, i, &e, &err) < 0) { diag("entry %lld: %s", i, err.msg); continue; }
		unsigned char z = 0;
		sha(&z, 1, e.json, e.json_len, NULL, 0, lv[i - 1]);
		world_log_entry_free(&e);
	}
	return lv;
}

/* every leaf and every root of the store's tree equal to the reference */
static int tree_matches(struct world_store *st, long long n, const char *what)
{
	unsigned char (*lv)[32] = ref_leaves(st, n);
	int bad = 0;
	for (long long s = 1; s <= n && !bad; s++) {
		struct tlog_hash leaf, root;
		unsigned char want[32];
		struct world_err err = { 0 };
		if (world_tree_leaf(st, s, &leaf, &err) < 0 || memcmp(leaf.b, lv[s - 1], 32)) {
			diag("%s: leaf %lld differs (%s)", what, s, err.msg);
			bad = 1;
		}
		mth(lv, s, want);
		if (world_tree_root(st, s, &root, &err) < 0 || memcmp(root.b, want, 32)) {
			diag("%s: root of size %lld differs (%s)", what, s, err.msg);
			bad = 1;
		}
	}
	free(lv);
	return !bad;
}

/* ---- appends ---- */
static int append_one(struct world_store *st, void *ctx, struct world_err *err)
{
	const char *tag = ctx;
	struct world_log_result r;
	return sfix_append_unarchived(st, "k", tag, "test_tree", &r, err);
}

/* one append in a transaction of its own, again while it loses a race */
static int append_txn(struct world_store *st, const char *tag, struct world_log_result *r, struct world_err *err)
{
	for (int tries = 0; tries < 200; tries++) {
		if (world_store_begin(st, err) < 0) {
			if (err->code == WX_LOCKED || err->code == WX_CONFLICT) { usleep(1000); continue; }
			return -1;
		}
		if (sfix_append_unarchived(st, "k", tag, "test_tree", r, err) == 0 && world_store_commit(st, err) == 0) return 0;
		world_store_rollback(st);
		if (err->code != WX_LOCKED && err->code != WX_CONFLICT && err->code != WX_UNAVAILABLE) return -1;
		usleep(1000 + (unsigned)(rand() % 2000));
	}
	return -1;
}

struct wjob {
	const char *path;
	int id, n, failed;
	char msg[1100];
};
static void *writer_thread(void *p)
{
	struct wjob *j = p;
	struct world_store *st;
	struct world_err err = { 0 };
	if (world_store_open_wait(j->path, WORLD_STORE_WRITER, 30, &st, &err) < 0) {
		j->failed = 1;
		snprintf(j->msg, sizeof j->msg, "%s", err.msg);
		return NULL;
	}
	for (int i = 0; i < j->n; i++) {
		char tag[64];
		snprintf(tag, sizeof tag, "w%d-%d", j->id, i);
		struct world_log_result r;
		if (append_txn(st, tag, &r, &err) < 0) {
			j->failed++;
			snprintf(j->msg, sizeof j->msg, "%s", err.msg);
		}
	}
	world_store_close(st);
	return NULL;
}

struct gjob {
	struct world_group *g;
	int id, n, failed;
	char msg[1100];
};
static void *group_thread(void *p)
{
	struct gjob *j = p;
	for (int i = 0; i < j->n; i++) {
		char tag[64];
		snprintf(tag, sizeof tag, "g%d-%d", j->id, i);
		struct world_err err = { 0 };
		if (world_group_run(j->g, append_one, tag, &err) < 0) {
			j->failed++;
			snprintf(j->msg, sizeof j->msg, "%s", err.msg);
		}
	}
	return NULL;
}

/* the scan's hole lines other than the unarchived interpreter's (the
 * fixture names an interpreter it never archives: sfix_append_unarchived),
 * the first of them into lines */
struct kjob {
	const char *path;
	char key[600], vkey[1024], msg[1100];
	int rc, code;
};
static void *keyinit_thread(void *p)
{
	struct kjob *j = p;
	struct world_store *st;
	struct world_err err = { 0 };
	j->rc = -1;
	if (world_store_open_wait(j->path, WORLD_STORE_WRITER, 30, &st, &err) == 0) {
		j->rc = world_log_key_init(st, j->key, NULL, 0, j->vkey, sizeof j->vkey, &err);
		world_store_close(st);
	}
	j->code = err.code;
	snprintf(j->msg, sizeof j->msg, "%s", err.msg);
	return NULL;
}

static long long scan_holes(struct world_store *st, char *lines, size_t n)
{
	struct world_scan_opts o = { 0 };
	struct world_scan_result r;
	struct world_err err = { 0 };
	size_t cap = 1 << 22;
	char *buf = calloc(1, cap);
	FILE *f = fmemopen(buf, cap, "w");
	int rc = world_scan(st, &o, f, &r, &err);
	fclose(f);
	if (rc < 0) { diag("scan: %s", err.msg); free(buf); return -1; }
	long long holes = 0;
	size_t o2 = 0;
	lines[0] = 0;
	for (char *l = strtok(buf, "\n"); l; l = strtok(NULL, "\n")) {
		if (strstr(l, "table=artifacts") && strstr(l, "field=interpreter")) continue;
		holes++;
		if (o2 + strlen(l) + 2 < n) o2 += (size_t)snprintf(lines + o2, n - o2, "%s\n", l);
	}
	free(buf);
	return holes;
}

static void backend(const char *name, const char *path, const char *dir, int is_pg)
{
	struct world_err err = { 0 };
	struct world_store *st = NULL;
	ok(world_store_open(path, WORLD_STORE_WRITER, &st, &err) == 0, "%s: store opened (%s)", name, err.msg);
	if (!st) return;

	/* 1. sequential appends: the receipt, the leaves, the roots */
	int receipts = 1;
	for (int i = 0; i < 21; i++) {
		char tag[32];
		snprintf(tag, sizeof tag, "s%d", i);
		struct world_log_result r;
		if (sfix_append_unarchived(st, "k", tag, "test_tree", &r, &err) < 0) { diag("append: %s", err.msg); receipts = 0; break; }
		struct tlog_hash leaf;
		if (world_tree_leaf(st, r.entry_index, &leaf, &err) < 0 || memcmp(leaf.b, r.leaf_hash, 32)) receipts = 0;
	}
	ok(receipts, "%s: each append's receipt is its stored leaf hash", name);
	ok(tree_matches(st, 21, name), "%s: 21 leaves and every root (sizes 1..21) equal the RFC 6962 recursion", name);

	/* 2. proofs from the store check against those roots */
	int proofs = 1, refused = 1;
	for (long long s = 1; s <= 21; s++) {
		struct tlog_hash root, p[TLOG_MAX_PROOF], leaf;
		size_t np;
		world_tree_root(st, s, &root, &err);
		for (long long i = 1; i <= s; i++) {
			world_tree_leaf(st, i, &leaf, &err);
			if (world_tree_prove_inclusion(st, i, s, p, &np, &err) < 0 ||
			    tlog_check_record(p, np, s, &root, i - 1, &leaf, &err) < 0) {
				diag("inclusion %lld in %lld: %s", i, s, err.msg);
				proofs = 0;
			}
			/* controls: another index, another leaf */
			struct world_err ce = { 0 };
			if (s > 1 && tlog_check_record(p, np, s, &root, i % s, &leaf, &ce) == 0) refused = 0;
			struct tlog_hash other = leaf;
			other.b[0] ^= 1;
			if (tlog_check_record(p, np, s, &root, i - 1, &other, &ce) == 0) refused = 0;
		}
		for (long long a = 1; a <= s; a++) {
			struct tlog_hash old;
			world_tree_root(st, a, &old, &err);
			if (world_tree_prove_consistency(st, a, s, p, &np, &err) < 0 ||
			    tlog_check_tree(p, np, s, &root, a, &old, &err) < 0) {
				diag("consistency %lld -> %lld: %s", a, s, err.msg);
				proofs = 0;
			}
		}
	}
	ok(proofs, "%s: every inclusion and consistency proof of sizes 1..21 checks against the roots", name);
	ok(refused, "%s: control: a proof with another index or another leaf is refused", name);
	struct tlog_hash pp[TLOG_MAX_PROOF];
	size_t npp;
	ok(world_tree_prove_inclusion(st, 5, 22, pp, &npp, &err) < 0 && err.code == WX_NOT_FOUND,
	   "%s: a size past the tree is not found (%s)", name, err.msg);
	ok(world_tree_prove_inclusion(st, 6, 5, pp, &npp, &err) < 0 && err.code == WX_NOT_FOUND,
	   "%s: an index past the size is not found (%s)", name, err.msg);

	/* 3. the signing key and one signature per transaction */
	char kpath[512], vkey[1024];
	snprintf(kpath, sizeof kpath, "%s/%s.log-key", dir, name);
	ok(world_log_key_init(st, kpath, NULL, 0, vkey, sizeof vkey, &err) == 0, "%s: log key made (%s)", name, err.msg);
	char *skey = NULL;
	ok(world_log_key_read(kpath, &skey, &err) == 0, "%s: its file reads back, 0600 (%s)", name, err.msg);
	ok(world_log_key_init(st, kpath, NULL, 0, NULL, 0, &err) < 0 && err.code == WX_CONFLICT,
	   "%s: a second key init is refused (%s)", name, err.msg);
	ok(world_tree_set_signer(st, skey, &err) == 0, "%s: the handle signs with it (%s)", name, err.msg);
	long long s0, f0, s1;
	world_tree_sign_stats(st, &s0, &f0);
	int ok5 = world_store_begin(st, &err) == 0;
	for (int i = 0; ok5 && i < 5; i++) {
		char tag[32];
		snprintf(tag, sizeof tag, "b%d", i);
		ok5 = append_one(st, tag, &err) == 0;
	}
	ok5 = ok5 && world_store_commit(st, &err) == 0;
	world_tree_sign_stats(st, &s1, NULL);
	ok(ok5 && s1 == s0 + 1, "%s: five appends in one transaction: one signature (%lld -> %lld) %s", name, s0, s1, err.msg);
	char *note = NULL;
	long long csize = 0;
	ok(world_log_checkpoint_get(st, &note, &csize, &err) == 0 && csize == 26, "%s: the checkpoint is of size 26 (%lld)",
	   name, csize);
	struct tlog_checkpoint cp = { 0 };
	struct tlog_hash root26;
	world_tree_root(st, 26, &root26, &err);
	ok(note && tlog_checkpoint_open(vkey, note, strlen(note), &cp, &err) == 0 && cp.size == 26 &&
	   tlog_hash_equal(&cp.root, &root26), "%s: it verifies with the store's verifier key, its root the tree's (%s)", name,
	   err.msg);
	char stored_vkey[1024];
	ok(world_log_key_get(st, stored_vkey, sizeof stored_vkey, &err) == 0 && !strcmp(stored_vkey, vkey),
	   "%s: the store holds the verifier key %s", name, vkey);
	ok(cp.origin && !strncmp(cp.origin, "world/", 6) && !strncmp(vkey, cp.origin, strlen(cp.origin)),
	   "%s: origin %s is the key's name", name, cp.origin ? cp.origin : "");
	/* control: another key does not verify it */
	char *sk2 = NULL, *vk2 = NULL;
	note_key_generate(cp.origin ? cp.origin : "x", &sk2, &vk2, &err);
	struct tlog_checkpoint cp2 = { 0 };
	ok(vk2 && note && tlog_checkpoint_open(vk2, note, strlen(note), &cp2, &err) < 0,
	   "%s: control: another key of the same name refuses it", name);
	ok(world_tree_set_signer(st, sk2, &err) < 0 && err.code == WX_CONFLICT,
	   "%s: a key that is not the store's cannot sign (%s)", name, err.msg);
	tlog_checkpoint_free(&cp);
	tlog_checkpoint_free(&cp2);
	free(sk2);
	free(vk2);
	free(note);

	/* 4. several writers at once: four handles (as four daemons) and a
	 * group commit's eight threads on a fifth */
	struct world_group *g = world_group_new(st, &err);
	ok(g != NULL, "%s: group commit (%s)", name, err.msg);
	enum { NW = 4, NG = 8, PER = 10 };
	struct wjob wj[NW];
	struct gjob gj[NG];
	pthread_t wt[NW], gt[NG];
	for (int i = 0; i < NW; i++) {
		wj[i] = (struct wjob){ .path = path, .id = i, .n = PER };
		pthread_create(&wt[i], NULL, writer_thread, &wj[i]);
	}
	for (int i = 0; i < NG; i++) {
		gj[i] = (struct gjob){ .g = g, .id = i, .n = PER };
		pthread_create(&gt[i], NULL, group_thread, &gj[i]);
	}
	int failed = 0;
	for (int i = 0; i < NW; i++) {
		pthread_join(wt[i], NULL);
		if (wj[i].failed) { failed += wj[i].failed; diag("writer %d: %s", i, wj[i].msg); }
	}
	for (int i = 0; i < NG; i++) {
		pthread_join(gt[i], NULL);
		if (gj[i].failed) { failed += gj[i].failed; diag("group thread %d: %s", i, gj[i].msg); }
	}
	long long batches = 0, writes = 0;
	world_group_stats(g, &batches, &writes, NULL);
	world_group_free(g);
	long long size = 0;
	world_tree_size(st, &size, &err);
	is_int(failed, 0, "%s: %d writers and %d group threads: every append acknowledged", name, NW, NG);
	is_int((int)size, 26 + (NW + NG) * PER, "%s: the log has every entry once", name);
	ok(tree_matches(st, size, name), "%s: one tree, equal to the recomputation from the entries", name);
	world_tree_sign_stats(st, &s1, NULL);
	ok(s1 - s0 - 1 <= batches && s1 - s0 - 1 >= 1, "%s: the group signed at most once per batch (%lld signatures, %lld "
	   "batches of %lld writes)", name, s1 - s0 - 1, batches, writes);
	char lines[4096] = "";
	is_int((int)scan_holes(st, lines, sizeof lines), 0, "%s: the scan recomputes the tree: clean %s", name, lines);

	if (is_pg) {
		/* 5'. PostgreSQL: the scan catches a changed stored hash; a
		 * version-2 database (the tree's tables dropped) is migrated by a
		 * writer with the tree backfilled */
		world_store_close(st);
		st = NULL;
		static const struct wdb_opts wo = { 0 };
		struct wdb *raw = NULL;
		ok(wdb_open(path, &wo, &raw, &err) == 0, "%s: the driver's own connection (%s)", name, err.msg);
		if (raw) wdb_exec(raw, "UPDATE log_tree SET hash = decode(repeat('00', 32), 'hex') WHERE hash_index = 7", &err);
		struct world_store *rd = NULL;
		char lines2[4096] = "";
		long long h = -1;
		if (world_store_open(path, WORLD_STORE_READER, &rd, &err) == 0) h = scan_holes(rd, lines2, sizeof lines2);
		world_store_close(rd);
		ok(h >= 1 && strstr(lines2, "integrity_hole table=log_tree index="), "%s: a changed stored hash is a hole: %s",
		   name, lines2);
		if (raw) wdb_exec(raw, "DROP TABLE log_tree; DROP TABLE log_key; DROP TABLE log_checkpoint; "
		                       "UPDATE world_schema SET version = 2 WHERE id = 1", &err);
		rd = NULL;
		struct tlog_hash r2;
		ok(world_store_open(path, WORLD_STORE_READER, &rd, &err) == 0 && world_tree_root(rd, 1, &r2, &err) < 0 &&
		   err.code == WX_SCHEMA, "%s: a reader of the version-2 database: the tree's calls answer WX_SCHEMA (%s)", name,
		   err.msg);
		world_store_close(rd);
		ok(world_store_open(path, WORLD_STORE_WRITER, &st, &err) == 0, "%s: a writer migrates it (%s)", name, err.msg);
		long long v = 0;
		struct wdb_stmt *vs = NULL;
		if (raw && wdb_prepare(raw, "SELECT version FROM world_schema WHERE id = 1", &vs, &err) == 0 &&
		    wdb_step(vs, NULL) == WDB_ROW)
			v = wdb_column_int64(vs, 0, NULL);
		wdb_finalize(vs);
		is_int((int)v, 3, "%s: world_schema says 3", name);
		if (st) {
			ok(tree_matches(st, size, name), "%s: the backfilled tree equals the recomputation (%lld entries)", name, size);
			char lines3[4096] = "";
			is_int((int)scan_holes(st, lines3, sizeof lines3), 0, "%s: and scans clean %s", name, lines3);
		}
		wdb_close(raw);
	}
	if (!is_pg) {
		/* 5. the scan catches a changed stored hash */
		sqlite3 *raw;
		sqlite3_open(path, &raw);
		sqlite3_exec(raw, "UPDATE log_tree SET hash = zeroblob(32) WHERE hash_index = 7", NULL, NULL, NULL);
		char lines2[4096] = "";
		long long h = scan_holes(st, lines2, sizeof lines2);
		ok(h >= 1 && strstr(lines2, "integrity_hole table=log_tree index="), "%s: a changed stored hash is a hole: %s",
		   name, lines2);
		/* 6. schema 2 -> 3: the tree dropped, the writer backfills it */
		world_store_close(st);
		st = NULL;
		char *before = NULL;
		sqlite3_exec(raw, "DROP TABLE log_tree; DROP TABLE log_key; DROP TABLE log_checkpoint; PRAGMA user_version=2;",
		             NULL, NULL, &before);
		sqlite3_free(before);
		sqlite3_close(raw);
		struct world_store *rd = NULL;
		ok(world_store_open(path, WORLD_STORE_READER, &rd, &err) == 0, "%s: a reader opens the schema-2 store", name);
		struct tlog_hash r;
		ok(rd && world_tree_root(rd, 1, &r, &err) < 0 && err.code == WX_SCHEMA,
		   "%s: ... the tree's calls answer WX_SCHEMA (%s)", name, err.msg);
		world_store_close(rd);
		ok(world_store_open(path, WORLD_STORE_WRITER, &st, &err) == 0, "%s: a writer migrates it (%s)", name, err.msg);
		if (st) {
			ok(tree_matches(st, size, name), "%s: the backfilled tree equals the recomputation (%lld entries)", name, size);
			char lines3[4096] = "";
			is_int((int)scan_holes(st, lines3, sizeof lines3), 0, "%s: and scans clean %s", name, lines3);
			char vk[1024];
			ok(world_log_key_get(st, vk, sizeof vk, &err) < 0 && err.code == WX_NOT_FOUND,
			   "%s: a migrated store has no key until one is made (%s)", name, err.msg);
			/* two key inits at once, each on a handle of its own: one key */
			struct kjob kj[2];
			pthread_t kt[2];
			for (int i = 0; i < 2; i++) {
				kj[i] = (struct kjob){ .path = path };
				snprintf(kj[i].key, sizeof kj[i].key, "%s/race%d.log-key", dir, i);
				pthread_create(&kt[i], NULL, keyinit_thread, &kj[i]);
			}
			for (int i = 0; i < 2; i++) pthread_join(kt[i], NULL);
			int won = (kj[0].rc == 0) + (kj[1].rc == 0);
			int w = kj[0].rc == 0 ? 0 : 1;
			ok(won == 1 && kj[1 - w].code == WX_CONFLICT, "%s: two key inits at once: one made the key, the other "
			   "refused (%s)", name, kj[1 - w].msg);
			ok(world_log_key_get(st, vk, sizeof vk, &err) == 0 && !strcmp(vk, kj[w].vkey) &&
			   access(kj[w].key, F_OK) == 0 && access(kj[1 - w].key, F_OK) != 0,
			   "%s: ... the store's verifier key is the winner's, whose file alone exists", name);
		}
	}
	free(skey);
	world_store_close(st);
}

int main(void)
{
	char dir[] = "/tmp/test_tree.XXXXXX";
	if (!mkdtemp(dir)) {
		printf("Bail out! mkdtemp failed\n");
		return 1;
	}
	char path[256];
	snprintf(path, sizeof path, "%s/t.db", dir);
	backend("sqlite", path, dir, 0);
	const char *uri = getenv("WORLD_TEST_PG_URI");
#ifdef WORLD_HAVE_PG
	wdb_pg_enable();
#else
	uri = NULL;
#endif
	if (!uri || !*uri) {
		const char *why = getenv("WORLD_TEST_PG_SKIP") ? getenv("WORLD_TEST_PG_SKIP") : "WORLD_TEST_PG_URI is not set";
		for (int i = 0; i < 31; i++) skip(why, "the PostgreSQL half");
	} else {
		backend("postgresql", uri, dir, 1);
	}
	char cmd[300];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	if (system(cmd) != 0) diag("could not remove %s", dir);
	return done_testing();
}
