/* bench/tree_bench.c: what the log's Merkle tree and its signed
 * checkpoints (store/tree.h, issue 43) cost the append rate (printed,
 * never a test). For each W of a list (default 1,64,256): W threads append
 * N verified entries (output, input and record objects, log entry, world,
 * head; durable: synchronous=FULL) through one group commit
 * (store/group.h) to a fresh store, once with the tree written in each
 * append's transaction and a checkpoint signed in each batch's commit
 * (the daemon's way), once without either (WORLD_STORE_NO_TREE, bench
 * only); the two arms alternate, R rounds each, and the medians are
 * printed with their ratio, the batches and signatures. Then one arm's
 * costs in isolation: a checkpoint's root and signature (per batch), an
 * inclusion and a consistency proof from the store's table at its size.
 * usage: tree_bench DIR [N [WRITERS [ROUNDS]]] */
#include "store/group.h"
#include "store/store.h"
#include "store/tree.h"
#include "tests/store/sfix.h"
#include "tlog/checkpoint.h"
#include "tlog/note.h"
#include "bench/bench.h"
#include <pthread.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void die(const char *what, const struct world_err *err)
{
	fprintf(stderr, "tree_bench: %s: %s\n", what, err ? err->msg : "failed");
	exit(1);
}

struct appender {
	struct sfix f;
	struct world_log_result last;
};

/* one append (the group's leader runs the writes one after another) */
static int append_next(struct world_store *st, void *ctx, struct world_err *err)
{
	struct appender *a = ctx;
	char out[160], rout[WORLD_REF_SIZE], rrec[WORLD_REF_SIZE], prev[WORLD_REF_SIZE], head[WORLD_REF_SIZE];
	int on = snprintf(out, sizeof out, "{\"answer\":%lld,\"text\":\"benchmark output payload of a typical size\"}",
	                  a->f.n + 1);
	if (world_object_put(st, "world/invocation-output/v1", "bench", out, (size_t)on, rout, NULL, err) < 0 ||
	    sfix_record(st, &a->f, rout, 1, "bench", rrec, err) < 0)
		return -1;
	long long idx;
	if (world_log_next(st, &idx, prev, head, err) < 0) return -1;
	struct world_log_append la = { idx, 1, a->f.src, a->f.interp, prev, "tree_bench", rrec, rout, head };
	return world_log_append(st, &la, &a->last, err);
}

struct writer {
	struct world_group *g;
	struct appender *a;
	long long n;
	int failed;
};

static void *writer_main(void *p)
{
	struct writer *w = p;
	struct world_err err = { 0 };
	for (long long i = 0; i < w->n; i++)
		if (world_group_run(w->g, append_next, w->a, &err) < 0) {
			fprintf(stderr, "tree_bench: append: %s\n", err.msg);
			w->failed = 1;
			break;
		}
	return NULL;
}

struct run {
	double rate, cpu; /* appends/s; CPU us (user + system, all threads) per append */
	long long batches, signatures;
};

/* one arm: a fresh store, W writers, n appends; tree = 1: the tree and a
 * signer, 2: the tree alone (no signature), 0: neither */
static struct run arm(const char *dir, int writers, long long n, int tree, int round)
{
	char db[4200], key[4300];
	snprintf(db, sizeof db, "%s/t%d-%d-%d.db", dir, writers, tree, round);
	snprintf(key, sizeof key, "%s.log-key", db);
	struct world_err err = { 0 };
	struct world_store *st;
	if (world_store_open(db, WORLD_STORE_WRITER | (tree ? 0 : WORLD_STORE_NO_TREE), &st, &err) < 0) die(db, &err);
	struct appender a = { 0 };
	if (sfix_init(st, dir, &a.f, &err) < 0) die("fixture", &err);
	if (tree == 1) {
		char *skey = NULL;
		if (world_log_key_init(st, key, "bench.example/log", 0, NULL, 0, &err) < 0 ||
		    world_log_key_read(key, &skey, &err) < 0 || world_tree_set_signer(st, skey, &err) < 0)
			die("log key", &err);
		free(skey);
	}
	long long s0 = 0;
	world_tree_sign_stats(st, &s0, NULL);
	struct world_group *g = world_group_new(st, &err);
	if (!g) die("group", &err);
	pthread_t *th = calloc((size_t)writers, sizeof *th);
	struct writer *w = calloc((size_t)writers, sizeof *w);
	if (!th || !w) die("out of memory", NULL);
	double c0 = bench_cpu_us();
	double t0 = bench_now_s();
	for (int i = 0; i < writers; i++) {
		w[i] = (struct writer){ g, &a, n / writers, 0 };
		if (pthread_create(&th[i], NULL, writer_main, &w[i]) != 0) die("pthread_create", NULL);
	}
	for (int i = 0; i < writers; i++) pthread_join(th[i], NULL);
	double s = bench_now_s() - t0;
	for (int i = 0; i < writers; i++)
		if (w[i].failed) die("group append", NULL);
	struct run r = { 0 };
	long long done = 0, s1 = 0;
	world_group_stats(g, &r.batches, &done, NULL);
	world_tree_sign_stats(st, &s1, NULL);
	r.signatures = s1 - s0;
	r.rate = (double)done / s;
	r.cpu = done ? (bench_cpu_us() - c0) / (double)done : 0;
	world_group_free(g);
	world_store_close(st);
	/* the files go: a run's store is not the next one's */
	static const char *const sfx[] = { "", "-wal", "-shm", ".write-queue", ".log-key" };
	for (size_t i = 0; i < sizeof sfx / sizeof sfx[0]; i++) {
		char p[4400];
		snprintf(p, sizeof p, "%s%s", db, sfx[i]);
		unlink(p);
	}
	char cmd[4400];
	snprintf(cmd, sizeof cmd, "rm -rf '%s.artifacts'", db);
	if (system(cmd) != 0) fprintf(stderr, "tree_bench: could not remove %s.artifacts\n", db);
	free(th);
	free(w);
	return r;
}

static int cmp_d(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return a < b ? -1 : a > b;
}

static int parse_list(const char *s, long long *out, int max)
{
	int n = 0;
	while (*s && n < max) {
		char *end;
		long long v = strtoll(s, &end, 10);
		if (end == s || v < 1) return -1;
		out[n++] = v;
		s = *end == ',' ? end + 1 : end;
		if (*end && *end != ',') return -1;
	}
	return n;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: tree_bench DIR [N [WRITERS [ROUNDS]]]\n");
		return 2;
	}
	const char *dir = argv[1];
	long long n = argc > 2 ? atoll(argv[2]) : 4096;
	long long wl[16];
	int nw = parse_list(argc > 3 ? argv[3] : "1,64,256", wl, 16);
	int rounds = argc > 4 ? atoi(argv[4]) : 3;
	if (n < 1 || nw < 1 || rounds < 1 || rounds > 15) {
		fprintf(stderr, "tree_bench: N, WRITERS and ROUNDS must be positive (ROUNDS at most 15)\n");
		return 2;
	}
	printf("durable verified appends/s through one group commit, with the Merkle tree and a signed checkpoint per\n"
	       "batch beside neither (median of %d alternating rounds, %lld appends each)\n", rounds, n);
	for (int k = 0; k < nw; k++) {
		int W = (int)wl[k];
		long long per = n / W > 0 ? n / W * W : W;
		double with[15], without[15], bare[15], cw[15], co[15];
		struct run last = { 0 };
		for (int r = 0; r < rounds; r++) {
			struct run a = arm(dir, W, per, 1, r), b = arm(dir, W, per, 0, r), c = arm(dir, W, per, 2, r);
			with[r] = a.rate;
			without[r] = b.rate;
			bare[r] = c.rate;
			cw[r] = a.cpu;
			co[r] = b.cpu;
			last = a;
		}
		qsort(with, (size_t)rounds, sizeof with[0], cmp_d);
		qsort(without, (size_t)rounds, sizeof without[0], cmp_d);
		qsort(bare, (size_t)rounds, sizeof bare[0], cmp_d);
		qsort(cw, (size_t)rounds, sizeof cw[0], cmp_d);
		qsort(co, (size_t)rounds, sizeof co[0], cmp_d);
		double mw = with[rounds / 2], mo = without[rounds / 2], mb = bare[rounds / 2];
		printf("writers=%-4d tree+signed %9.0f/s   tree unsigned %9.0f/s   neither %9.0f/s   ratio %.3f (cost %+.1f %%)   "
		       "last round: %lld batches, %lld signatures\n",
		       W, mw, mb, mo, mw / mo, (1.0 - mw / mo) * 100.0, last.batches, last.signatures);
		printf("             CPU per append: tree+signed %.1f us, neither %.1f us (%+.1f %%)\n", cw[rounds / 2],
		       co[rounds / 2], (cw[rounds / 2] / co[rounds / 2] - 1.0) * 100.0);
	}

	/* a store of n entries with the tree: what one checkpoint and one proof cost */
	char db[4200], key[4300];
	snprintf(db, sizeof db, "%s/proofs.db", dir);
	snprintf(key, sizeof key, "%s.log-key", db);
	struct world_err err = { 0 };
	struct world_store *st;
	if (world_store_open(db, WORLD_STORE_WRITER | WORLD_STORE_NOSYNC, &st, &err) < 0) die(db, &err);
	struct appender a = { 0 };
	if (sfix_init(st, dir, &a.f, &err) < 0) die("fixture", &err);
	if (world_store_begin(st, &err) < 0) die("begin", &err);
	for (long long i = 0; i < n; i++)
		if (append_next(st, &a, &err) < 0) die("append", &err);
	if (world_store_commit(st, &err) < 0) die("commit", &err);
	char *skey = NULL;
	if (world_log_key_init(st, key, "bench.example/log", 0, NULL, 0, &err) < 0 || world_log_key_read(key, &skey, &err) < 0)
		die("log key", &err);
	struct note_signer *sg = note_signer_new(skey, &err);
	if (!sg) die("signer", &err);
	int reps = 2000;
	double t0 = bench_now_s();
	for (int i = 0; i < reps; i++) {
		struct tlog_hash root;
		char *body = NULL, *note = NULL;
		if (world_tree_root(st, n, &root, &err) < 0 ||
		    tlog_checkpoint_format("bench.example/log", n, &root, NULL, &body, &err) < 0 ||
		    note_signer_sign(sg, body, strlen(body), &note, &err) < 0)
			die("checkpoint", &err);
		free(body);
		free(note);
	}
	double cp_us = (bench_now_s() - t0) / reps * 1e6;
	struct tlog_hash p[TLOG_MAX_PROOF];
	size_t np;
	t0 = bench_now_s();
	for (int i = 0; i < reps; i++)
		if (world_tree_prove_inclusion(st, 1 + (i * 7919LL) % n, n, p, &np, &err) < 0) die("inclusion", &err);
	double inc_us = (bench_now_s() - t0) / reps * 1e6;
	t0 = bench_now_s();
	for (int i = 0; i < reps; i++)
		if (world_tree_prove_consistency(st, 1 + (i * 7919LL) % n, n, p, &np, &err) < 0) die("consistency", &err);
	double con_us = (bench_now_s() - t0) / reps * 1e6;
	printf("at %lld entries: a checkpoint (root from the table + Ed25519 signature) %.1f us; an inclusion proof "
	       "%.1f us; a consistency proof %.1f us (from the store's table, %d each)\n",
	       n, cp_us, inc_us, con_us, reps);
	note_signer_free(sg);
	free(skey);
	world_store_close(st);
	return 0;
}
