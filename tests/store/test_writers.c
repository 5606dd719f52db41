/* tests/store/test_writers.c: several writers share one store (no lock is
 * held between transactions; docs/store.md, "Many writers"): writers of one
 * process and of several processes open the store at once, the log head
 * moves by compare-and-swap inside each transaction (a stale append is
 * refused, the chain never forks), four processes appending at once leave
 * one contiguous chain holding every acknowledged commit, a write that finds
 * another writer's transaction waits for it (the busy timeout, --wait-lock)
 * and past it is refused WX_LOCKED with nothing written, and writers
 * creating a new store at once all get the same store. */
#include "store/scan.h"
#include "store/store.h"
#include "tests/store/sfix.h"
#include "tests/tap.h"
#include <errno.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char dir[256], db[300];
static struct sfix F;

static struct world_store *open_w(const char *path, double wait)
{
	struct world_store *st = NULL;
	struct world_err err = { 0 };
	if (world_store_open_wait(path, WORLD_STORE_WRITER, wait, &st, &err) < 0) bail("open %s: %s", path, err.msg);
	return st;
}

static long long q1(struct world_store *st, const char *sql)
{
	sqlite3_stmt *s;
	if (sqlite3_prepare_v2(world_store_db(st), sql, -1, &s, NULL) != SQLITE_OK) return -1;
	long long n = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int64(s, 0) : -1;
	sqlite3_finalize(s);
	return n;
}

/* One call-like commit in its own transaction: output, record, entry. */
static int commit_one(struct world_store *st, const char *tag, long long *index, struct world_err *err)
{
	if (world_store_begin(st, err) < 0) return -1;
	long long idx;
	char prev[WORLD_REF_SIZE], world[WORLD_REF_SIZE], out[WORLD_REF_SIZE], rec[WORLD_REF_SIZE];
	char payload[160];
	snprintf(payload, sizeof payload, "{\"out\":\"%s\"}", tag);
	int rc = world_log_next(st, &idx, prev, world, err);
	if (rc == 0) rc = world_object_put(st, "world/invocation-output/v1", tag, payload, strlen(payload), out, NULL, err);
	if (rc == 0) rc = sfix_record(st, &F, out, 1, tag, rec, err);
	struct world_log_append a = { idx, 1, F.src, F.interp, prev[0] ? prev : NULL, "test", rec, out, world };
	if (rc == 0) rc = world_log_append(st, &a, NULL, err);
	if (rc == 0) rc = world_store_commit(st, err);
	else world_store_rollback(st);
	if (rc == 0 && index) *index = idx;
	return rc;
}

static void scan_clean(struct world_store *st, long long entries, const char *what)
{
	struct world_scan_opts so = { 0 };
	struct world_scan_result sr;
	struct world_err err = { 0 };
	char buf[4096] = "";
	FILE *f = fmemopen(buf, sizeof buf, "w");
	int rc = world_scan(st, &so, f, &sr, &err);
	fclose(f);
	ok(rc == 0 && sr.complete && sr.holes == 0 && sr.log_rows == entries, "%s: the scan is clean, %lld entries (%lld, %s%s)",
	   what, entries, sr.log_rows, err.msg, buf);
}

int main(void)
{
	snprintf(dir, sizeof dir, "/tmp/world-test-writers.XXXXXX");
	if (!mkdtemp(dir)) bail("mkdtemp");
	snprintf(db, sizeof db, "%s/world.db", dir);
	struct world_err err = { 0 };
	struct world_store *a = open_w(db, 0);
	if (sfix_init(a, dir, &F, &err) < 0) bail("fixture: %s", err.msg);

	/* two writers of one process: both open (each a connection of its own) */
	struct world_store *b = NULL;
	ok(world_store_open(db, WORLD_STORE_WRITER, &b, &err) == 0, "a second writer opens beside the first (%s)", err.msg);
	if (!b) bail("second writer");
	char lock[400];
	snprintf(lock, sizeof lock, "%s.writer.lock", db);
	ok(access(lock, F_OK) < 0, "no writer lock file is made");
	long long i1 = 0, i2 = 0;
	ok(commit_one(a, "a1", &i1, &err) == 0 && commit_one(b, "b1", &i2, &err) == 0 && i1 == 1 && i2 == 2,
	   "both commit, the second on the first's head (%lld, %lld, %s)", i1, i2, err.msg);

	/* the head CAS: b prepares an append on head 2, a commits entry 3 first */
	long long idx;
	char prev[WORLD_REF_SIZE], world[WORLD_REF_SIZE], out[WORLD_REF_SIZE], rec[WORLD_REF_SIZE];
	if (world_log_next(b, &idx, prev, world, &err) < 0) bail("next: %s", err.msg);
	ok(commit_one(a, "a2", &i1, &err) == 0 && i1 == 3, "the first writer commits entry 3");
	if (world_object_put(b, "world/invocation-output/v1", "b2", "{\"out\":\"b2\"}", 12, out, NULL, &err) < 0 ||
	    sfix_record(b, &F, out, 1, "b2", rec, &err) < 0)
		bail("b2: %s", err.msg);
	struct world_log_append st_a = { idx, 1, F.src, F.interp, prev, "test", rec, out, world };
	ok(world_log_append(b, &st_a, NULL, &err) < 0 && err.code == WX_CONFLICT,
	   "an append prepared on the old head is refused: HeadConflict (%s)", err.msg);
	struct world_log_append st_b = { idx + 1, 1, F.src, F.interp, prev, "test", rec, out, world };
	ok(world_log_append(b, &st_b, NULL, &err) < 0 && err.code == WX_CONFLICT,
	   "... and at the next index with the old prevEntryHash, a fork, too (%s)", err.msg);
	is_int((int)q1(a, "SELECT count(*) FROM log_entries"), 3, "nothing of the refused appends is written");
	world_store_close(b);

	/* four processes appending at once: one chain, every acknowledged commit in it */
	enum { NPROC = 4, PER = 40 };
	int p[2];
	if (pipe(p) < 0) bail("pipe");
	pid_t kids[NPROC];
	for (int k = 0; k < NPROC; k++) {
		kids[k] = fork();
		if (kids[k] < 0) bail("fork");
		if (kids[k] == 0) {
			close(p[0]);
			struct world_store *c = NULL;
			struct world_err e = { 0 };
			if (world_store_open(db, WORLD_STORE_WRITER, &c, &e) < 0) _exit(10 + e.code);
			for (int n = 0; n < PER; n++) {
				char tag[64];
				long long ix;
				snprintf(tag, sizeof tag, "p%d-%d", k, n);
				if (commit_one(c, tag, &ix, &e) < 0) {
					fprintf(stderr, "writer %d: %s\n", k, e.msg);
					_exit(3);
				}
				char line[96];
				int len = snprintf(line, sizeof line, "%s %lld\n", tag, ix);
				if (write(p[1], line, (size_t)len) != len) _exit(4);
			}
			world_store_close(c);
			_exit(0);
		}
	}
	close(p[1]);
	int bad = 0;
	for (int k = 0; k < NPROC; k++) {
		int status;
		waitpid(kids[k], &status, 0);
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) bad++;
	}
	FILE *acks = fdopen(p[0], "r");
	char tag[64];
	long long ix;
	int acked = 0, present = 0;
	while (acks && fscanf(acks, "%63s %lld", tag, &ix) == 2) {
		acked++;
		char sql[256];
		snprintf(sql, sizeof sql,
		         "SELECT count(*) FROM log_entries l JOIN objects o ON o.ref = l.transition_ref WHERE l.entry_index = %lld "
		         "AND instr(CAST(o.payload AS TEXT), '\"cli:sfix:%s') > 0", ix, tag);
		if (q1(a, sql) == 1) present++;
	}
	if (acks) fclose(acks);
	is_int(bad, 0, "four writer processes ran to the end, none refused");
	is_int(acked, NPROC * PER, "every commit was acknowledged");
	is_int(present, acked, "each acknowledged commit is the entry its writer was told");
	is_int((int)q1(a, "SELECT count(*) FROM log_entries"), 3 + NPROC * PER, "entries 1..N, no more");
	is_int((int)q1(a, "SELECT max(entry_index) - min(entry_index) + 1 FROM log_entries"), 3 + NPROC * PER,
	       "contiguous indexes");
	is_int((int)q1(a, "SELECT count(*) FROM log_entries l JOIN log_entries p ON p.entry_index = l.entry_index - 1 "
	                  "WHERE l.prev_entry_hash IS NOT p.entry_hash"), 0, "each entry chains to the one before it");
	scan_clean(a, 3 + NPROC * PER, "after four concurrent writers");

	/* the busy timeout: a child holds a write transaction 1.5 s */
	int go[2];
	if (pipe(go) < 0) bail("pipe");
	pid_t holder = fork();
	if (holder == 0) {
		close(go[0]);
		struct world_store *c = NULL;
		struct world_err e = { 0 };
		if (world_store_open(db, WORLD_STORE_WRITER, &c, &e) < 0 || world_store_begin(c, &e) < 0) _exit(3);
		char r[WORLD_REF_SIZE];
		if (world_object_put(c, "world/x/v1", "holder", "held", 4, r, NULL, &e) < 0) _exit(3);
		if (write(go[1], "x", 1) != 1) _exit(4);
		usleep(1500 * 1000);
		_exit(world_store_commit(c, &e) < 0 ? 5 : 0);
	}
	close(go[1]);
	char c;
	if (read(go[0], &c, 1) != 1) bail("holder did not begin");
	close(go[0]);
	struct world_store *w = open_w(db, 0.2);
	char r[WORLD_REF_SIZE];
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	int rc = world_object_put(w, "world/x/v1", "waiter", "short", 5, r, NULL, &err);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double waited = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	ok(rc < 0 && err.code == WX_LOCKED && !strchr(err.msg, '\n') && strstr(err.msg, db),
	   "--wait-lock 0.2: a write behind another writer's transaction is refused WX_LOCKED, one line naming the store (%s)",
	   err.msg);
	ok(waited >= 0.15, "... after waiting for it (%.2f s)", waited);
	world_store_close(w);
	is_int((int)q1(a, "SELECT count(*) FROM objects WHERE provenance = 'waiter'"), 0, "... and nothing of it is written");
	/* control: with the default timeout (5 s) the same write waits and commits */
	w = open_w(db, 0);
	ok(world_object_put(w, "world/x/v1", "waiter", "short", 5, r, NULL, &err) == 0,
	   "control: with the default busy timeout the write waits for the holder, then commits (%s)", err.msg);
	int status;
	waitpid(holder, &status, 0);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the holder committed its transaction");
	is_int((int)q1(a, "SELECT count(*) FROM objects WHERE provenance IN ('waiter', 'holder')"), 2, "both writes are in the store");
	world_store_close(w);

	/* four processes create one new store at once: all open it, one schema */
	char fresh[320];
	snprintf(fresh, sizeof fresh, "%s/fresh.db", dir);
	int bar[2];
	if (pipe(bar) < 0) bail("pipe");
	for (int k = 0; k < NPROC; k++) {
		kids[k] = fork();
		if (kids[k] == 0) {
			close(bar[1]);
			char x;
			if (read(bar[0], &x, 1) < 0) _exit(4); /* EOF: all start together */
			struct world_store *s = NULL;
			struct world_err e = { 0 };
			if (world_store_open(fresh, WORLD_STORE_WRITER, &s, &e) < 0) {
				fprintf(stderr, "create %d: %s\n", k, e.msg);
				_exit(3);
			}
			char rr[WORLD_REF_SIZE];
			char pl[16];
			snprintf(pl, sizeof pl, "k%d", k);
			int prc = world_object_put(s, "world/x/v1", "creator", pl, strlen(pl), rr, NULL, &e);
			world_store_close(s);
			_exit(prc < 0 ? 5 : 0);
		}
	}
	close(bar[0]);
	close(bar[1]);
	bad = 0;
	for (int k = 0; k < NPROC; k++) {
		waitpid(kids[k], &status, 0);
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) bad++;
	}
	is_int(bad, 0, "four writers creating one new store at once all open it and write");
	struct world_store *fr = open_w(fresh, 0);
	is_int((int)q1(fr, "PRAGMA user_version"), WORLD_STORE_SCHEMA_VERSION, "... it has the schema once, at the current version");
	is_int((int)q1(fr, "SELECT count(*) FROM objects WHERE provenance = 'creator'"), NPROC, "... and every writer's object");
	world_store_close(fr);

	world_store_close(a);
	char cmd[600];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0) diag("cleanup failed");
	return done_testing();
}
