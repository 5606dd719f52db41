/* tests/store/test_queue.c: the write queue (store/db_sqlite_queue.c). Writers of
 * one store queue in the kernel for a transaction -- an flock on
 * <db>.write-queue taken around BEGIN IMMEDIATE..COMMIT -- instead of
 * sleep-polling SQLite's lock. Across processes: a writer behind another's
 * transaction is seen blocked on the queue in /proc/locks while the
 * holder holds it (not napping in the busy handler), and commits once the
 * holder commits; a holder killed with SIGKILL releases it (the waiter
 * commits, the holder's write is not there); the busy timeout still holds
 * (exit 5, "database is locked", nothing written), and, the control, the
 * same write with the holder gone commits. Between transactions nothing
 * holds the queue. */
#include "store/store.h"
#include "tests/tap.h"
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char dir[256], db[300], qpath[330];

/* The queue file's flock entries in /proc/locks: the holder's pid (0:
 * none) and a blocked waiter's (0: none). */
static void queue_locks(pid_t *holder, pid_t *waiter)
{
	*holder = *waiter = 0;
	struct stat s;
	if (stat(qpath, &s) < 0) return;
	FILE *f = fopen("/proc/locks", "r");
	if (!f) bail("/proc/locks: %s", strerror(errno));
	char line[512];
	while (fgets(line, sizeof line, f)) {
		char *p = strchr(line, ':');
		if (!p) continue;
		p++;
		int blocked = 0;
		while (*p == ' ') p++;
		if (strncmp(p, "->", 2) == 0) { blocked = 1; p += 2; }
		char kind[16], adv[16], rw[16], dev[64];
		int pid;
		if (sscanf(p, "%15s %15s %15s %d %63s", kind, adv, rw, &pid, dev) != 5 || strcmp(kind, "FLOCK") != 0) continue;
		char *ino = strrchr(dev, ':');
		if (!ino || strtoull(ino + 1, NULL, 10) != (unsigned long long)s.st_ino) continue;
		if (blocked) *waiter = pid;
		else *holder = pid;
	}
	fclose(f);
}

static int has_object(const char *body)
{
	char ref[WORLD_REF_SIZE];
	struct world_err e;
	if (world_hash_ref(body, strlen(body), ref, &e) < 0) bail("hash");
	struct world_store *rd;
	if (world_store_open(db, WORLD_STORE_READER, &rd, &e) < 0) bail("reader: %s", e.msg);
	int r = world_object_exists(rd, ref, &e);
	world_store_close(rd);
	return r;
}

/* A child: one transaction writing body. hold >= 0: after the write, say
 * so on fd hold and commit only when a byte arrives on fd go. The exit
 * code is the error's; its message goes to msgfd (when >= 0). */
static pid_t writer(const char *body, double wait_s, int ready, int go, int msgfd)
{
	fflush(stdout);
	pid_t p = fork();
	if (p < 0) bail("fork: %s", strerror(errno));
	if (p) return p;
	struct world_store *st;
	struct world_err e = { 0 };
	int rc = world_store_open_wait(db, WORLD_STORE_WRITER, wait_s, &st, &e);
	char ref[WORLD_REF_SIZE];
	if (rc == 0) rc = world_store_begin(st, &e);
	if (rc == 0) rc = world_object_put(st, "test/queue", "queue", body, strlen(body), ref, NULL, &e);
	if (rc == 0 && ready >= 0) {
		char c = 'r', g;
		if (write(ready, &c, 1) != 1 || read(go, &g, 1) != 1) _exit(99);
	}
	if (rc == 0) rc = world_store_commit(st, &e);
	if (rc < 0 && msgfd >= 0 && write(msgfd, e.msg, strlen(e.msg)) < 0) _exit(98);
	if (rc < 0 && e.code == WX_LOCKED) {
		/* the wait's timer left nothing behind: no SIGURG pending, and a
		 * later sleep of this thread is not interrupted */
		sigset_t p;
		struct timespec t = { 0, 50 * 1000 * 1000 };
		if (sigpending(&p) < 0 || sigismember(&p, SIGURG) || nanosleep(&t, NULL) < 0) _exit(97);
	}
	_exit(rc < 0 ? e.code : 0);
}

static int wait_exit(pid_t p)
{
	int s;
	if (waitpid(p, &s, 0) != p) bail("waitpid: %s", strerror(errno));
	return WIFEXITED(s) ? WEXITSTATUS(s) : 128 + WTERMSIG(s);
}

/* until pid is seen blocked on the queue (at most ~20 s); 1 when it was */
static int seen_blocked(pid_t pid, pid_t *holder)
{
	pid_t w = 0;
	for (int i = 0; i < 4000; i++) {
		queue_locks(holder, &w);
		if (w == pid) return 1;
		struct timespec t = { 0, 5 * 1000 * 1000 };
		nanosleep(&t, NULL);
	}
	return 0;
}

struct holder { pid_t pid; int go; };

static struct holder hold(const char *body)
{
	int r[2], g[2];
	if (pipe(r) < 0 || pipe(g) < 0) bail("pipe");
	struct holder h = { writer(body, 0, r[1], g[0], -1), g[1] };
	char c;
	if (read(r[0], &c, 1) != 1) bail("the holder did not start its transaction");
	close(r[0]);
	close(r[1]);
	close(g[0]);
	return h;
}

static void release(struct holder *h)
{
	char c = 'c';
	if (write(h->go, &c, 1) != 1) bail("release");
	close(h->go);
}

int main(void)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(dir, sizeof dir, "%s/world-queue.XXXXXX", tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) bail("mkdtemp");
	snprintf(db, sizeof db, "%s/world.db", dir);
	snprintf(qpath, sizeof qpath, "%s.write-queue", db);
	struct world_store *st;
	struct world_err e;
	if (world_store_open(db, WORLD_STORE_WRITER, &st, &e) < 0) bail("open: %s", e.msg);
	char ref[WORLD_REF_SIZE];
	if (world_store_begin(st, &e) < 0 || world_object_put(st, "test/queue", "q", "{\"a\":0}", 7, ref, NULL, &e) < 0 ||
	    world_store_commit(st, &e) < 0)
		bail("first write: %s", e.msg);
	struct stat qs;
	ok(stat(qpath, &qs) == 0 && (qs.st_mode & 0777) == 0600, "the first transaction made %s.write-queue, mode 0600",
	   "world.db");
	pid_t h, w;
	queue_locks(&h, &w);
	ok(h == 0 && w == 0, "between transactions nothing holds the queue (an open writer handle, idle)");

	/* a waiter blocks in the kernel while the holder holds it */
	struct holder a = hold("{\"a\":1}");
	queue_locks(&h, &w);
	is_int(h, a.pid, "control: the holder's transaction shows in /proc/locks as its flock");
	pid_t b = writer("{\"b\":1}", 30, -1, -1, -1);
	ok(seen_blocked(b, &h) && h == a.pid, "a second writer is seen blocked on the queue behind the holder");
	ok(has_object("{\"b\":1}") == 0, "... and has written nothing");
	release(&a);
	is_int(wait_exit(a.pid), 0, "the holder commits");
	is_int(wait_exit(b), 0, "... and the waiter commits after it");
	ok(has_object("{\"a\":1}") == 1 && has_object("{\"b\":1}") == 1, "... both writes are there");
	queue_locks(&h, &w);
	ok(h == 0 && w == 0, "... and nothing holds the queue afterwards");

	/* a killed holder releases it */
	a = hold("{\"a\":2}");
	b = writer("{\"b\":2}", 30, -1, -1, -1);
	ok(seen_blocked(b, &h), "a writer waits behind a holder");
	kill(a.pid, SIGKILL);
	is_int(wait_exit(a.pid), 128 + SIGKILL, "the holder is killed inside its transaction");
	close(a.go);
	is_int(wait_exit(b), 0, "the waiter gets the queue and commits");
	ok(has_object("{\"a\":2}") == 0 && has_object("{\"b\":2}") == 1, "... the killed holder's write is not there, the waiter's is");

	/* the busy timeout still holds */
	a = hold("{\"a\":3}");
	int m[2];
	if (pipe(m) < 0) bail("pipe");
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	b = writer("{\"b\":3}", 0.3, -1, -1, m[1]);
	close(m[1]);
	int code = wait_exit(b);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	char msg[512] = "";
	ssize_t n = read(m[0], msg, sizeof msg - 1);
	msg[n > 0 ? n : 0] = 0;
	close(m[0]);
	is_int(code, WX_LOCKED, "behind a held transaction, --wait-lock 0.3: exit %d (WX_LOCKED; 97 would be a SIGURG "
	       "left pending or interrupting a later sleep)", WX_LOCKED);
	ok(strstr(msg, "database is locked") != NULL, "... one line saying so: %s", msg);
	double waited = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	ok(waited >= 0.3, "... after waiting its timeout (%.2f s)", waited);
	ok(has_object("{\"b\":3}") == 0, "... and nothing of it is written");
	release(&a);
	is_int(wait_exit(a.pid), 0, "the holder commits");
	b = writer("{\"b\":3}", 0.3, -1, -1, -1);
	is_int(wait_exit(b), 0, "control: the same write with --wait-lock 0.3 commits once the queue is free");
	ok(has_object("{\"b\":3}") == 1, "... and is there");

	world_store_close(st);
	char cmd[600];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0) diag("cleanup of %s failed", dir);
	done_testing();
}
