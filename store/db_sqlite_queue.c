/* store/db_sqlite_queue.c: the SQLite engine's busy handler and write
 * queue (store/db_sqlite.h; docs/store.md, Many writers).
 *
 * SQLite's write lock is taken by trying: a writer that finds it held is
 * answered SQLITE_BUSY and sleeps in the busy handler (1 ms doubling to
 * 32 ms) before it tries again, so under contention the lock is often free
 * while every waiter naps, and a waiter can lose to newcomers many times
 * (the tail). Writers of this build therefore first queue in the kernel: an
 * exclusive flock(2) on `<db>.write-queue`, taken just before BEGIN
 * IMMEDIATE and released just after its COMMIT or ROLLBACK -- never held
 * between transactions, dropped by the kernel when its holder dies. A
 * waiter sleeps in flock and is woken when the holder releases it. The
 * flock is only a queue: SQLite's lock still decides (writers of other
 * builds, the sqlite3 shell and single-statement writes outside a
 * transaction take it directly and wait in the busy handler).
 *
 * The wait keeps the busy timeout: a per-thread timer (timer_create,
 * SIGEV_THREAD_ID) sends SIGURG to the waiting thread at the deadline and
 * every 5 ms after (a signal landing just before flock sleeps is not lost),
 * the handler does nothing, flock returns EINTR and the wait ends with
 * WX_LOCKED (exit 5). SIGURG's handler is installed only while nobody else
 * has one; a process that has its own falls back to trying the flock
 * without blocking, with the busy handler's naps. */
#include "store/db_sqlite.h"
#include "common/pause.h"
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* The busy handler of every handle: SQLite calls it while another
 * connection (of this process or another) holds the write lock (count =
 * tries so far for this lock, 0 the first). It sleeps a jittered,
 * growing nap (1 ms doubling up to 32 ms, each 50..150% of its nominal
 * length, so writers that collided do not retry in step) and gives up
 * once busy_ms have passed since the first try: the statement then fails
 * with SQLITE_BUSY, reported as WX_LOCKED. */
int ws_sqlite_busy(void *ctx, int count)
{
	struct ws_sqlite *sq = ctx;
	struct world_store *st = sq->st;
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	/* inside a transaction begun through the write queue, the wait there counts */
	if (count == 0) sq->busy_t0 = sq->busy_from_set ? sq->busy_from : now;
	double waited = (double)(now.tv_sec - sq->busy_t0.tv_sec) * 1000.0 +
	                (double)(now.tv_nsec - sq->busy_t0.tv_nsec) / 1e6;
	if (waited >= st->busy_ms) return 0;
	long nominal_us = 1000L << (count < 5 ? count : 5);
	st->busy_rand = st->busy_rand * 6364136223846793005ULL + 1442695040888963407ULL;
	long us = nominal_us / 2 + (long)((st->busy_rand >> 33) % (unsigned long long)nominal_us);
	double left_us = (st->busy_ms - waited) * 1000.0;
	if ((double)us > left_us) us = (long)left_us + 1;
	struct timespec nap = { us / 1000000, (us % 1000000) * 1000 };
	while (nanosleep(&nap, &nap) < 0 && errno == EINTR) {}
	return 1;
}

int ws_sqlite_busy_nap(struct ws_sqlite *sq, int count)
{
	return ws_sqlite_busy(sq, count);
}


static void queue_wake(int sig) { (void)sig; }

/* 1 when SIGURG is ours (installed now or before), 0 when the process has
 * a handler of its own for it. */
static int queue_signal(void)
{
	static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	static int state; /* 0 not yet, 1 ours, -1 someone else's */
	pthread_mutex_lock(&mu);
	if (state == 0) {
		struct sigaction old;
		if (sigaction(SIGURG, NULL, &old) == 0 && !(old.sa_flags & SA_SIGINFO) &&
		    (old.sa_handler == SIG_DFL || old.sa_handler == SIG_IGN)) {
			struct sigaction sa = { 0 };
			sa.sa_handler = queue_wake; /* no SA_RESTART: flock returns EINTR */
			sigemptyset(&sa.sa_mask);
			state = sigaction(SIGURG, &sa, NULL) == 0 ? 1 : -1;
		} else {
			state = (old.sa_flags & SA_SIGINFO) == 0 && old.sa_handler == queue_wake ? 1 : -1;
		}
	}
	int ours = state == 1;
	pthread_mutex_unlock(&mu);
	return ours;
}

static int queue_open(struct world_store *st, struct world_err *err)
{
	struct ws_sqlite *sq = WS_SQ(st);
	char p[4200];
	snprintf(p, sizeof p, "%s.write-queue", st->path);
	int fd = open(p, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) return werr(err, WX_IO, "store %s: write queue %s: %s", st->path, p, strerror(errno));
	sq->qfd = fd;
	return 0;
}

static double ms_since(const struct timespec *t0)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - t0->tv_sec) * 1000.0 + (double)(now.tv_nsec - t0->tv_nsec) / 1e6;
}

static int timed_out(struct world_store *st, struct world_err *err)
{
	return werr(err, WX_LOCKED, "store %s: begin: database is locked (another writer's transaction held it %.1f s)",
	            st->path, st->busy_ms / 1000.0);
}

/* Blocks in flock until the queue is ours or the deadline passes. SIGURG
 * is unblocked only inside the wait, and a SIGURG the timer sent is taken
 * (sigtimedwait) before the thread's signal mask is put back, so none is
 * left to interrupt a later call of this thread (EINTR) that does not
 * expect it. */
static int queue_block(struct world_store *st, struct world_err *err)
{
	struct ws_sqlite *sq = WS_SQ(st);
	sigset_t urg, old;
	sigemptyset(&urg);
	sigaddset(&urg, SIGURG);
	pthread_sigmask(SIG_BLOCK, &urg, &old);
	struct sigevent ev = { 0 };
	ev.sigev_notify = SIGEV_THREAD_ID;
	ev.sigev_signo = SIGURG;
	ev._sigev_un._tid = gettid(); /* sigev_notify_thread_id, which this glibc does not name */
	timer_t tm;
	if (timer_create(CLOCK_MONOTONIC, &ev, &tm) < 0) {
		werr(err, WX_IO, "store %s: write queue timer: %s", st->path, strerror(errno));
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		return -1;
	}
	double left = st->busy_ms - ms_since(&sq->busy_from);
	if (left < 1) left = 1;
	struct itimerspec its = { .it_interval = { 0, 5 * 1000 * 1000 } };
	its.it_value.tv_sec = (time_t)(left / 1000);
	its.it_value.tv_nsec = (long)((left - (double)its.it_value.tv_sec * 1000) * 1e6);
	int rc = -1;
	if (timer_settime(tm, 0, &its, NULL) < 0) {
		werr(err, WX_IO, "store %s: write queue timer: %s", st->path, strerror(errno));
	} else {
		sigset_t open_urg = old;
		sigdelset(&open_urg, SIGURG);
		pthread_sigmask(SIG_SETMASK, &open_urg, NULL);
		for (;;) {
			if (flock(sq->qfd, LOCK_EX) == 0) {
				rc = 0;
				break;
			}
			if (errno != EINTR) {
				werr(err, WX_IO, "store %s: write queue: %s", st->path, strerror(errno));
				break;
			}
			if (ms_since(&sq->busy_from) >= st->busy_ms) {
				timed_out(st, err);
				break;
			}
		}
		pthread_sigmask(SIG_BLOCK, &urg, NULL);
	}
	int del = timer_delete(tm);
	int derr = errno;
	struct timespec zero = { 0, 0 };
	while (sigtimedwait(&urg, NULL, &zero) == SIGURG) {}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (del < 0 && rc == 0) {
		flock(sq->qfd, LOCK_UN);
		return werr(err, WX_IO, "store %s: write queue timer: %s", st->path, strerror(derr));
	}
	return rc;
}

int ws_sqlite_queue_lock(struct world_store *st, struct world_err *err)
{
	struct ws_sqlite *sq = WS_SQ(st);
	clock_gettime(CLOCK_MONOTONIC, &sq->busy_from);
	sq->busy_from_set = 1; /* the busy handler's wait counts from here */
	if (sq->qfd < 0 && queue_open(st, err) < 0) return -1;
	if (flock(sq->qfd, LOCK_EX | LOCK_NB) == 0) return 0;
	if (errno != EWOULDBLOCK)
		return werr(err, WX_IO, "store %s: write queue: %s", st->path, strerror(errno));
	world_pause("store.queued");
	if (queue_signal()) return queue_block(st, err);
	/* SIGURG is the process's own: try again between the busy handler's naps */
	for (int count = 0;; count++) {
		if (flock(sq->qfd, LOCK_EX | LOCK_NB) == 0) return 0;
		if (errno != EWOULDBLOCK)
			return werr(err, WX_IO, "store %s: write queue: %s", st->path, strerror(errno));
		if (!ws_sqlite_busy_nap(sq, count)) return timed_out(st, err);
	}
}

void ws_sqlite_queue_unlock(struct world_store *st)
{
	struct ws_sqlite *sq = WS_SQ(st);
	sq->busy_from_set = 0;
	if (sq->qfd < 0) return;
	if (flock(sq->qfd, LOCK_UN) < 0) {
		/* cannot happen on a valid descriptor; closing it releases the lock */
		close(sq->qfd);
		sq->qfd = -1;
	}
}
