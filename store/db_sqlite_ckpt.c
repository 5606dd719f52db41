/* store/db_sqlite_ckpt.c: the SQLite engine's checkpoints off the commit
 * path (store.h, world_store_checkpoint_thread; docs/store.md, The write
 * path).
 *
 * Without it SQLite checkpoints inside the COMMIT that leaves 1000 frames
 * or more in the WAL: the committing thread (a group's leader, the whole
 * batch waiting for its answer) copies those pages into the database and
 * fsyncs it. With it, this handle's WAL hook only wakes a thread of the
 * handle's own, once per WORLD_STORE_CKPT_THREAD_FRAMES new frames, which
 * checkpoints on a connection of its own (PASSIVE: it never waits for, nor
 * holds up, a writer or a reader; SQLite restarts the WAL from its start
 * at the next write once every frame is copied back). The interval is 8
 * times SQLite's: an index page that many batches change is copied back
 * (and fsynced) once per interval, not once per 1000 frames.
 * The committing thread checkpoints itself only when the WAL has grown to
 * WS_CKPT_INLINE_FRAMES (the thread cannot keep up), so the WAL stays
 * bounded. Durability is unchanged: a checkpoint copies what is already
 * committed (and fsynced) in the WAL, under the connection's
 * synchronous=FULL (the WAL fsynced before, the database after). */
#include "store/db_sqlite.h"
#include "common/pause.h"
#include <signal.h>
#include <stdlib.h>

#define WS_CKPT_FRAMES WORLD_STORE_CKPT_THREAD_FRAMES        /* the thread's interval */
#define WS_CKPT_INLINE_FRAMES WORLD_STORE_CKPT_INLINE_FRAMES /* past this the committer checkpoints itself */

struct ws_ckpt {
	sqlite3 *db;              /* the thread's connection */
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int want, stop;
	int next_at;              /* the WAL's frame count at which to wake the thread next */
	atomic_llong background, inlined, failed;
};

/* The WAL hook of the writer handle: after each of its commits, with the
 * WAL's frame count (SQLite holds the connection's mutex). */
static int ckpt_hook(void *ctx, sqlite3 *db, const char *name, int frames)
{
	struct ws_ckpt *ck = ctx;
	if (frames >= WS_CKPT_INLINE_FRAMES) {
		/* SQLITE_BUSY: the thread is checkpointing this moment */
		int rc = sqlite3_wal_checkpoint_v2(db, name, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
		if (rc == SQLITE_OK) atomic_fetch_add(&ck->inlined, 1);
		else if (rc != SQLITE_BUSY) atomic_fetch_add(&ck->failed, 1);
	} else {
		/* once per WS_CKPT_FRAMES new frames, not after every commit past
		 * them: a checkpoint costs two fsyncs, and while the writers go on
		 * the WAL is never all copied back (it restarts only then) */
		pthread_mutex_lock(&ck->mu);
		if (frames < ck->next_at - WS_CKPT_FRAMES) ck->next_at = WS_CKPT_FRAMES; /* restarted */
		if (frames >= ck->next_at) {
			ck->next_at = frames + WS_CKPT_FRAMES;
			ck->want = 1;
			pthread_cond_signal(&ck->cv);
		}
		pthread_mutex_unlock(&ck->mu);
	}
	return SQLITE_OK;
}

static void *ckpt_main(void *p)
{
	struct ws_ckpt *ck = p;
	pthread_mutex_lock(&ck->mu);
	for (;;) {
		while (!ck->want && !ck->stop) pthread_cond_wait(&ck->cv, &ck->mu);
		if (ck->stop) break;
		ck->want = 0;
		pthread_mutex_unlock(&ck->mu);
		world_pause("store.checkpoint");
		/* SQLITE_BUSY: another connection (another daemon) is
		 * checkpointing this WAL now; the next wake-up tries again */
		int rc = sqlite3_wal_checkpoint_v2(ck->db, "main", SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
		if (rc == SQLITE_OK) atomic_fetch_add(&ck->background, 1);
		else if (rc != SQLITE_BUSY) atomic_fetch_add(&ck->failed, 1);
		pthread_mutex_lock(&ck->mu);
	}
	pthread_mutex_unlock(&ck->mu);
	return NULL;
}

int ws_sqlite_ckpt_start(struct world_store *st, struct world_err *err)
{
	struct ws_sqlite *sq = WS_SQ(st);
	if (sq->ckpt) return 0;
	struct ws_ckpt *ck = calloc(1, sizeof *ck);
	if (!ck) return werr(err, WX_FAIL, "store %s: checkpoint thread: out of memory", st->path);
	if (sqlite3_open_v2(st->path, &ck->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_FULLMUTEX, NULL) != SQLITE_OK ||
	    sqlite3_exec(ck->db, "PRAGMA synchronous=FULL", NULL, NULL, NULL) != SQLITE_OK) {
		werr(err, WX_IO, "store %s: checkpoint connection: %s", st->path,
		     ck->db ? sqlite3_errmsg(ck->db) : "out of memory");
		sqlite3_close_v2(ck->db);
		free(ck);
		return -1;
	}
	pthread_mutex_init(&ck->mu, NULL);
	pthread_cond_init(&ck->cv, NULL);
	ck->next_at = WS_CKPT_FRAMES;
	/* the thread takes no signal: the process's handlers stay where they were */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int rc = pthread_create(&ck->th, NULL, ckpt_main, ck);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		pthread_cond_destroy(&ck->cv);
		pthread_mutex_destroy(&ck->mu);
		sqlite3_close_v2(ck->db);
		free(ck);
		return werr(err, WX_FAIL, "store %s: checkpoint thread: %s", st->path, strerror(rc));
	}
	sq->ckpt = ck;
	/* replaces SQLite's autocheckpoint on this connection */
	sqlite3_wal_hook(ws_sqlite_raw(st), ckpt_hook, ck);
	return 0;
}

void ws_sqlite_ckpt_stats(struct world_store *st, long long *background, long long *inlined, long long *failed)
{
	struct ws_ckpt *ck = WS_SQ(st)->ckpt;
	*background = ck ? atomic_load(&ck->background) : 0;
	*inlined = ck ? atomic_load(&ck->inlined) : 0;
	*failed = ck ? atomic_load(&ck->failed) : 0;
}

void ws_sqlite_ckpt_stop(struct world_store *st)
{
	struct ws_ckpt *ck = WS_SQ(st)->ckpt;
	if (!ck) return;
	/* SQLite's autocheckpoint again for whatever this connection still commits */
	sqlite3_wal_autocheckpoint(ws_sqlite_raw(st), WORLD_STORE_CKPT_FRAMES);
	pthread_mutex_lock(&ck->mu);
	ck->stop = 1;
	pthread_cond_signal(&ck->cv);
	pthread_mutex_unlock(&ck->mu);
	pthread_join(ck->th, NULL);
	sqlite3_close_v2(ck->db);
	pthread_cond_destroy(&ck->cv);
	pthread_mutex_destroy(&ck->mu);
	free(ck);
	WS_SQ(st)->ckpt = NULL;
}
