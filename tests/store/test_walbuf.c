/* tests/store/test_walbuf.c: the WAL-gathering VFS of durable writers
 * (store/db_sqlite_wal.c).
 *   1. A durable writer's commits reach the WAL file in fewer writes than
 *      SQLite made (gathered); the control, a WORLD_STORE_PLAIN_WAL writer,
 *      goes through none of it.
 *   2. Each commit is visible to another connection as soon as it returns.
 *   3. A transaction larger than the page cache (SQLite spills pages to the
 *      WAL and reads them back before the commit) reads back what it wrote;
 *      the store scans clean.
 *   4. The crash window: a writer process killed (SIGKILL) while held at
 *      store.wal_sync -- its commit's frames gathered, none on file --
 *      leaves every commit it acknowledged and not that one, and the store
 *      scans clean; the control, killed after its last acknowledged commit
 *      with no hold, keeps all of them too. */
#include "common/pause.h"
#include "store/scan.h"
#include "store/store.h"
#include "store/walbuf.h"
#include "tests/tap.h"
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[256];

static void put(struct world_store *st, long long n, size_t size, char ref[WORLD_REF_SIZE])
{
	char *body = malloc(size);
	if (!body) bail("out of memory");
	int k = snprintf(body, size, "{\"n\":%lld,\"pad\":\"", n);
	memset(body + k, 'a' + (int)(n % 26), size - (size_t)k - 2);
	memcpy(body + size - 2, "\"}", 2);
	struct world_err e;
	if (world_object_put(st, "test/walbuf", "walbuf", body, size, ref, NULL, &e) < 0) bail("put %lld: %s", n, e.msg);
	free(body);
}

static int present(struct world_store *st, const char *ref)
{
	struct world_object o;
	struct world_err e;
	if (world_object_get(st, ref, &o, &e) < 0) return 0;
	world_object_free(&o);
	return 1;
}

static int scans_clean(const char *db)
{
	struct world_store *rd;
	struct world_err e;
	if (world_store_open(db, WORLD_STORE_READER, &rd, &e) < 0) bail("reader %s: %s", db, e.msg);
	struct world_scan_opts o = { .max_rows = 0 };
	struct world_scan_result r;
	int rc = world_scan(rd, &o, NULL, &r, &e);
	world_store_close(rd);
	return rc == 0 && r.holes == 0 && r.complete;
}

static struct world_store *open_w(const char *db, int extra)
{
	struct world_store *st;
	struct world_err e;
	if (world_store_open(db, WORLD_STORE_WRITER | extra, &st, &e) < 0) bail("open %s: %s", db, e.msg);
	return st;
}

/* ---- 4: the writer process ---- */

static int ack_fd = -1, reached_fd = -1;
static long long hold_at; /* hold the commit of this number at store.wal_sync (0: none) */
static long long current;

static void child_hook(void *ctx, const char *name)
{
	(void)ctx;
	if (strcmp(name, "store.wal_sync") != 0 || hold_at == 0 || current != hold_at) return;
	char c = 'r';
	if (write(reached_fd, &c, 1) != 1) _exit(3);
	for (;;) pause(); /* killed here */
}

/* Commits 1.. one object each; after each commit returns, writes its ref
 * (one line) to ack_fd. Never returns. */
static void writer_child(const char *db, long long last)
{
	world_pause_set_hook(child_hook, NULL);
	struct world_store *st = open_w(db, 0);
	for (current = 1; current <= last; current++) {
		char ref[WORLD_REF_SIZE], line[WORLD_REF_SIZE + 1];
		put(st, current, 20000, ref);
		int n = snprintf(line, sizeof line, "%s\n", ref);
		if (write(ack_fd, line, (size_t)n) != n) _exit(3);
	}
	char c = 'd';
	if (write(reached_fd, &c, 1) != 1) _exit(3);
	for (;;) pause();
}

/* Runs the writer until it holds (or, hold 0, until it is done), kills it,
 * and returns the acknowledged refs (count in *n). */
static char (*crash_run(const char *db, long long hold, long long last, long long *n))[WORLD_REF_SIZE]
{
	int ack[2], reached[2];
	if (pipe(ack) < 0 || pipe(reached) < 0) bail("pipe");
	hold_at = hold;
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) bail("fork");
	if (pid == 0) {
		close(ack[0]);
		close(reached[0]);
		ack_fd = ack[1];
		reached_fd = reached[1];
		writer_child(db, last);
	}
	close(ack[1]);
	close(reached[1]);
	char c;
	if (read(reached[0], &c, 1) != 1) bail("the writer died before it held");
	if (kill(pid, SIGKILL) < 0) bail("kill");
	int status;
	if (waitpid(pid, &status, 0) != pid || !WIFSIGNALED(status)) bail("the writer was not killed");
	static char refs[512][WORLD_REF_SIZE];
	FILE *f = fdopen(ack[0], "r");
	if (!f) bail("fdopen");
	char line[WORLD_REF_SIZE + 2];
	*n = 0;
	while (*n < 512 && fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = 0;
		if (strlen(line) >= WORLD_REF_SIZE) bail("a ref too long: %s", line);
		memcpy(refs[(*n)++], line, strlen(line) + 1);
	}
	fclose(f);
	close(reached[0]);
	return refs;
}

int main(void)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(dir, sizeof dir, "%s/world-walbuf.XXXXXX", tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) bail("mkdtemp");
	char db[400], ref[WORLD_REF_SIZE];
	ok(world_walbuf_vfs() != NULL, "the VFS %s is registered", WORLD_WALBUF_VFS);

	/* 1. gathered, and the control */
	snprintf(db, sizeof db, "%s/plain.db", dir);
	struct world_store *st = open_w(db, WORLD_STORE_PLAIN_WAL);
	unsigned long long in0, out0, in1, out1;
	world_walbuf_stats(&in0, &out0);
	for (int i = 1; i <= 20; i++) put(st, i, 40000, ref);
	world_walbuf_stats(&in1, &out1);
	ok(in1 == in0 && out1 == out0, "control: a PLAIN_WAL writer's 20 commits go through no gathering (%llu writes)",
	   in1 - in0);
	world_store_close(st);

	snprintf(db, sizeof db, "%s/gathered.db", dir);
	st = open_w(db, 0);
	struct world_store *rd;
	struct world_err e;
	if (world_store_open(db, WORLD_STORE_READER, &rd, &e) < 0) bail("reader: %s", e.msg);
	world_walbuf_stats(&in0, &out0);
	int seen = 0;
	for (int i = 1; i <= 20; i++) {
		put(st, i, 40000, ref);
		seen += present(rd, ref); /* 2. another connection, right after the commit */
	}
	world_walbuf_stats(&in1, &out1);
	ok(in1 - in0 >= 20 * 2 * 10 && (out1 - out0) * 5 < in1 - in0,
	   "a durable writer's 20 commits of 40 KB: SQLite's %llu WAL writes reached the file in %llu", in1 - in0,
	   out1 - out0);
	is_int(seen, 20, "each commit was visible to another connection as soon as it returned");
	world_store_close(rd);
	world_store_close(st);
	ok(scans_clean(db), "... and the store scans clean");

	/* 3. spilled pages read back inside the transaction */
	snprintf(db, sizeof db, "%s/spill.db", dir);
	st = open_w(db, 0);
	if (sqlite3_exec(world_store_db(st), "PRAGMA cache_size=8", NULL, NULL, NULL) != SQLITE_OK) bail("cache_size");
	static char refs[200][WORLD_REF_SIZE];
	if (world_store_begin(st, &e) < 0) bail("begin: %s", e.msg);
	world_walbuf_stats(&in0, &out0);
	for (int i = 0; i < 200; i++) put(st, 1000 + i, 6000, refs[i]);
	world_walbuf_stats(&in1, &out1);
	int back = 0;
	for (int i = 0; i < 200; i++) back += present(st, refs[i]);
	ok(in1 > in0, "a 1.2 MB transaction on an 8-page cache spilled to the WAL before its commit (%llu writes)",
	   in1 - in0);
	is_int(back, 200, "... and read back every object it wrote, re-hashed, inside the transaction");
	if (world_store_commit(st, &e) < 0) bail("commit: %s", e.msg);
	world_store_close(st);
	if (world_store_open(db, WORLD_STORE_READER, &rd, &e) < 0) bail("reader: %s", e.msg);
	back = 0;
	for (int i = 0; i < 200; i++) back += present(rd, refs[i]);
	world_store_close(rd);
	is_int(back, 200, "... all 200 committed, read by another connection");
	ok(scans_clean(db), "... and the store scans clean");

	/* 4. the crash window */
	if (!WORLD_PAUSE_COMPILED) {
		for (int i = 0; i < 6; i++) skip("the crash window needs --enable-test-hooks", "crash %d", i);
	} else {
		snprintf(db, sizeof db, "%s/crash.db", dir);
		long long n = 0;
		char (*acked)[WORLD_REF_SIZE] = crash_run(db, 40, 100, &n);
		is_int(n, 39, "held at store.wal_sync in commit 40 and killed: 39 commits were acknowledged");
		st = open_w(db, 0);
		int kept = 0;
		for (long long i = 0; i < n; i++) kept += present(st, acked[i]);
		long long rows = -1;
		sqlite3_stmt *q;
		if (sqlite3_prepare_v2(world_store_db(st), "SELECT count(*) FROM objects WHERE semantic_id = 'test/walbuf'", -1,
		                       &q, NULL) == SQLITE_OK && sqlite3_step(q) == SQLITE_ROW)
			rows = sqlite3_column_int64(q, 0);
		sqlite3_finalize(q);
		world_store_close(st);
		is_int(kept, 39, "... every acknowledged commit survived the kill");
		is_int(rows, 39, "... and the held commit, its frames only gathered, is not there");
		ok(scans_clean(db), "... and the store scans clean");

		snprintf(db, sizeof db, "%s/crash-control.db", dir);
		acked = crash_run(db, 0, 60, &n);
		st = open_w(db, 0);
		kept = 0;
		for (long long i = 0; i < n; i++) kept += present(st, acked[i]);
		world_store_close(st);
		ok(n == 60 && kept == 60, "control: killed with no hold, all %lld acknowledged commits survived (%d)", n,
		   kept);
		ok(scans_clean(db), "... and the store scans clean");
	}
	char cmd[400];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0) bail("rm %s", dir);
	return tap_done();
}
