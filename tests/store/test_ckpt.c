/* tests/store/test_ckpt.c: checkpoints off the commit path
 * (world_store_checkpoint_thread, store/db_sqlite_ckpt.c). A handle with the
 * thread: a commit that leaves WORLD_STORE_CKPT_THREAD_FRAMES (8000) frames
 * or more in the WAL wakes the thread, which checkpoints (the committer
 * does not); held at its pause point, the WAL grows past that without a
 * checkpoint in any commit until WORLD_STORE_CKPT_INLINE_FRAMES (32000),
 * where the committer checkpoints itself (the bound); the
 * control, a handle without the thread, has SQLite checkpoint inside the
 * commit that crosses 1000 frames, so its WAL never grows much past that.
 * Every commit is there afterwards. The WAL's frames are read from its
 * size (it is never shrunk, so the size is the most frames it held). */
#include "common/pause.h"
#include "store/store.h"
#include "tests/tap.h"
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char dir[256];
static long long seq;

/* one transaction: an object of 64 KiB (16 overflow pages and more) */
static void commit_one(struct world_store *st)
{
	static char body[65536];
	int n = snprintf(body, sizeof body, "{\"n\":%lld,\"pad\":\"", ++seq);
	memset(body + n, 'x', sizeof body - (size_t)n - 2);
	memcpy(body + sizeof body - 2, "\"}", 2);
	char ref[WORLD_REF_SIZE];
	struct world_err e;
	if (world_object_put(st, "test/ckpt", "ckpt", body, sizeof body, ref, NULL, &e) < 0) bail("put: %s", e.msg);
}

static long long wal_frames(const char *db)
{
	char p[420];
	snprintf(p, sizeof p, "%.400s-wal", db);
	struct stat s;
	if (stat(p, &s) < 0) return 0;
	return s.st_size > 32 ? (s.st_size - 32) / (4096 + 24) : 0;
}

static long long objects(const char *db)
{
	struct world_store *rd;
	struct world_err e;
	if (world_store_open(db, WORLD_STORE_READER, &rd, &e) < 0) bail("reader: %s", e.msg);
	sqlite3_stmt *s;
	long long n = -1;
	if (sqlite3_prepare_v2(world_store_db(rd), "SELECT count(*) FROM objects WHERE semantic_id = 'test/ckpt'", -1, &s,
	                       NULL) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW)
		n = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	world_store_close(rd);
	return n;
}

static struct world_store *open_db(const char *name, char *db, size_t cap)
{
	snprintf(db, cap, "%s/%s", dir, name);
	struct world_store *st;
	struct world_err e;
	/* synchronous=OFF for the writer (tens of MB of commits); the thread's
	 * own connection checkpoints with synchronous=FULL */
	if (world_store_open(db, WORLD_STORE_WRITER | WORLD_STORE_NOSYNC, &st, &e) < 0) bail("open %s: %s", db, e.msg);
	return st;
}

/* the pause hook: holds the checkpoint thread while `hold` is set */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int hold, held;
static void hook(void *ctx, const char *name)
{
	(void)ctx;
	if (strcmp(name, "store.checkpoint") != 0) return;
	pthread_mutex_lock(&mu);
	held++;
	pthread_cond_broadcast(&cv);
	while (hold) pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
}

int main(void)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(dir, sizeof dir, "%s/world-ckpt.XXXXXX", tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) bail("mkdtemp");
	struct world_err e;
	char db[400];

	/* control: no thread; SQLite checkpoints inside the commit crossing 1000 frames */
	struct world_store *c = open_db("control.db", db, sizeof db);
	for (int i = 0; i < 300; i++) commit_one(c);
	long long cbg, cin;
	world_store_checkpoint_stats(c, &cbg, &cin, NULL);
	long long cf = wal_frames(db);
	ok(cf >= 1000 && cf < 1200, "control, no thread: the WAL held at most %lld frames (checkpointed in the commit at 1000)",
	   cf);
	ok(cbg == 0 && cin == 0, "... and the handle counts no checkpoint of its own");
	world_store_close(c);
	is_int(objects(db), 300, "... all 300 commits are there");

	/* the thread checkpoints */
	struct world_store *st = open_db("thread.db", db, sizeof db);
	long long seq0 = seq;
	ok(world_store_checkpoint_thread(st, &e) == 0, "the checkpoint thread starts");
	ok(world_store_checkpoint_thread(st, &e) == 0, "... and a second call changes nothing");
	long long bg = 0, in = 0, failed = 0;
	while (wal_frames(db) < WORLD_STORE_CKPT_THREAD_FRAMES + 20) commit_one(st); /* past the thread's interval */
	for (int i = 0; i < 2000 && bg == 0; i++) {
		world_store_checkpoint_stats(st, &bg, NULL, NULL);
		if (!bg) usleep(5000);
	}
	world_store_checkpoint_stats(st, &bg, &in, &failed);
	ok(bg >= 1 && in == 0 && failed == 0, "the thread checkpointed (%lld), the committer did not (%lld), none failed",
	   bg, in);
	long long before = seq;
	/* twice the thread's interval more (a commit is some 17 frames) */
	while (seq - before < 2 * WORLD_STORE_CKPT_THREAD_FRAMES / 17) commit_one(st);
	world_store_checkpoint_stats(st, &bg, &in, &failed);
	ok(failed == 0 && wal_frames(db) < WORLD_STORE_CKPT_INLINE_FRAMES + 200,
	   "%lld more commits: the WAL stays bounded (%lld frames; %lld checkpoints by the thread, %lld by the committer)",
	   seq - before, wal_frames(db), bg, in);
	world_store_close(st);
	is_int(objects(db), seq - seq0, "... all %lld commits are there", seq - seq0);

	if (!WORLD_PAUSE_COMPILED) {
		for (int i = 0; i < 4; i++) skip("the held checkpoint thread needs --enable-test-hooks", "held thread %d", i);
	} else {
		world_pause_set_hook(hook, NULL);
		hold = 1;
		st = open_db("held.db", db, sizeof db);
		if (world_store_checkpoint_thread(st, &e) < 0) bail("thread: %s", e.msg);
		seq = 0;
		/* the thread's interval: it is woken and held */
		while (wal_frames(db) < WORLD_STORE_CKPT_THREAD_FRAMES + 20) commit_one(st);
		pthread_mutex_lock(&mu);
		while (!held) pthread_cond_wait(&cv, &mu);
		pthread_mutex_unlock(&mu);
		/* up to just under the committer's bound: no commit checkpoints */
		while (wal_frames(db) + 40 < WORLD_STORE_CKPT_INLINE_FRAMES) commit_one(st);
		world_store_checkpoint_stats(st, &bg, &in, NULL);
		ok(in == 0 && bg == 0 && wal_frames(db) > WORLD_STORE_CKPT_THREAD_FRAMES + 1000,
		   "thread held: the WAL grew to %lld frames and no commit checkpointed (off the commit path)", wal_frames(db));
		for (int i = 0; i < 100; i++) commit_one(st);
		world_store_checkpoint_stats(st, &bg, &in, NULL);
		ok(in >= 1, "past %d frames the committer checkpointed itself (%lld times)", WORLD_STORE_CKPT_INLINE_FRAMES, in);
		ok(wal_frames(db) < WORLD_STORE_CKPT_INLINE_FRAMES + 200, "... so the WAL stays bounded (%lld frames)",
		   wal_frames(db));
		long long n = seq;
		pthread_mutex_lock(&mu);
		hold = 0;
		pthread_cond_broadcast(&cv);
		pthread_mutex_unlock(&mu);
		world_store_close(st);
		world_pause_set_hook(NULL, NULL);
		is_int(objects(db), n, "... all %lld commits are there", n);
	}
	char cmd[600];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0) diag("cleanup of %s failed", dir);
	done_testing();
}
