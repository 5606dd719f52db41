/* daemon/workers.c: the call workers of `worldd serve` and their queue
 * (see server.h).
 *
 * Owns: the pool of `capacity` call workers that run a POST's route off
 * libmicrohttpd's threads; the queue they take jobs from, with each
 * episode's fair share (--session-share) and the key a request's share is
 * counted under (share_key, with its cache of credentials seen); handing a
 * whole request over (its headers and arguments copied, the connection
 * suspended, a pending cancel's reach registered) and resuming it with the
 * answer, or ending a live response; answering what is still queued with
 * Capacity at shutdown. The edge (daemon/edge.c) decides what is handed
 * over; the route table (daemon/server.c, run_route) runs it. */
#include "daemon/server.h"
#include "daemon/http.h"
#include "daemon/route.h"
#include "daemon/server_internal.h"
#include "common/pause.h"
#include "store/store.h"
#include <errno.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the call workers ------------------------------------------------
 * libmicrohttpd's own threads must never block (its manual, "Flow
 * control"): each connection is served by one of them, so a call waiting
 * for its capsule there would hold up every other connection of that
 * thread (there are DAEMON_HTTP_THREADS of them, so many connections share
 * each, and their calls would run one after another). So a POST
 * (a call: MCP, A2A, replay), once its body is in, is handed to a pool of
 * `capacity` call workers: the connection is suspended, its headers and
 * arguments are copied, a worker runs the route and stores the response,
 * then resumes the connection; libmicrohttpd calls on_request once more,
 * which queues the stored response. GET routes (reads, health, the card)
 * answer at once on the HTTP threads.
 *
 * Fair shares: one episode holds at most `share` (--session-share) of the
 * workers at once. Each job carries the share of its key (share_key: the
 * episode of its session, read on the HTTP thread before it is queued);
 * a free worker takes the oldest queued job whose share is not full, so
 * an episode's calls beyond its share wait while other episodes' calls go
 * first. Nothing is refused for it: the queue is bounded by the
 * connection limit, and at shutdown every queued job is answered
 * Capacity, whatever its share. */
struct share {
	char key[80];        /* "episode:E", "operator" or "unauthenticated" */
	unsigned running;    /* its jobs on a worker now (<= workers.share) */
	unsigned refs;       /* its jobs queued or running; freed at 0 */
	struct share *next;
};

static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct dconn *head, *tail;
	struct share *shares; /* of the keys with a job queued or running */
	unsigned share;       /* workers one key may hold at once */
	int stopping;
	unsigned n;
	pthread_t t[256]; /* = the most --capacity allows */
} workers = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL, NULL, NULL, 1, 0, 0, { 0 } };

/* The next job for a free worker, taken off the queue: the oldest whose
 * share is not full (any, when stopping: it is answered, not run); NULL
 * when none may run now. Call with workers.mu held. */
static struct dconn *queue_take(void)
{
	struct dconn *prev = NULL, *dc = workers.head;
	while (dc && !workers.stopping && !dc->urgent && dc->share->running >= workers.share) {
		prev = dc;
		dc = dc->next;
	}
	if (!dc) return NULL;
	if (prev) prev->next = dc->next;
	else workers.head = dc->next;
	if (workers.tail == dc) workers.tail = prev;
	dc->next = NULL;
	return dc;
}

/* A job of sh left the queue or a worker for good. Call with workers.mu held. */
static void share_put(struct share *sh)
{
	if (--sh->refs) return;
	for (struct share **p = &workers.shares; *p; p = &(*p)->next)
		if (*p == sh) { *p = sh->next; break; }
	free(sh);
}

static void free_copies(struct dconn *dc)
{
	for (size_t i = 0; i < dc->nhdrs; i++) {
		free(dc->hdrs[i].name);
		free(dc->hdrs[i].value);
	}
	free(dc->hdrs);
	dc->hdrs = NULL;
	dc->nhdrs = dc->hcap = 0;
}

void dconn_free(struct dconn *dc)
{
	free(dc->body);
	free(dc->resp.body);
	free_copies(dc);
	free(dc);
}

/* ---- the workers --------------------------------------------------------- */

/* The worker's end of a live response: the route's body is the last
 * bytes, the response ends, the request is logged; then the worker lets
 * go of the response and of the dconn. */
static void live_finish(struct dconn *dc)
{
	struct dlive *l = dc->seat.live;
	int gone = dlive_end(l, dc->resp.body, dc->resp.len);
	log_request(dc->method, dc->path, gone ? 499 : 200, dc, dc->invocation_id, dc->note, dc->timing);
	dlive_put(l);
	if (atomic_fetch_sub(&dc->seat.refs, 1) == 1) dconn_free(dc); /* on_completed ran: the client left */
}

static void *worker_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&workers.mu);
	for (;;) {
		struct dconn *dc;
		while (!(dc = queue_take()) && !workers.stopping) pthread_cond_wait(&workers.cv, &workers.mu);
		if (!dc) break; /* stopping, and nothing left */
		int stopping = workers.stopping;
		struct share *sh = dc->share; /* dc is freed once its connection is resumed and answered */
		if (!stopping) sh->running++;
		/* One free worker is woken per job taken: the queue may hold a
		 * job another free worker can run (its share has room). */
		if (workers.head) pthread_cond_signal(&workers.cv);
		pthread_mutex_unlock(&workers.mu);
		if (stopping) dresp_error(&dc->resp, "Capacity", "the daemon is stopping; the call was not run");
		else {
			world_pause("daemon.worker");
			run_route(dc->d, NULL, dc->method, dc);
		}
		/* its route has returned: no call of it registers any more */
		if (dc->jobbed) dcall_job_end(&dc->job);
		dc->jobbed = 0;
		if (dc->seat.live) live_finish(dc);
		else {
			atomic_store(&dc->seat.answered, 1);
			MHD_resume_connection(dc->seat.conn);
		}
		pthread_mutex_lock(&workers.mu);
		if (!stopping) sh->running--;
		share_put(sh);
	}
	pthread_mutex_unlock(&workers.mu);
	return NULL;
}

/* Start n workers, one key holding at most share of them; 0, or -1 when
 * not one could start (the daemon then answers calls on its HTTP threads,
 * without shares). */
int workers_start(unsigned n, unsigned share)
{
	if (n > sizeof workers.t / sizeof workers.t[0]) n = sizeof workers.t / sizeof workers.t[0];
	workers.share = share ? share : 1;
	for (unsigned i = 0; i < n; i++) {
		int e = pthread_create(&workers.t[workers.n], NULL, worker_main, NULL);
		if (e == 0) workers.n++;
		else dlog("start: call worker %u of %u: pthread_create: %s", i + 1, n, strerror(e));
	}
	return workers.n ? 0 : -1;
}

/* Let the workers finish the call each is running, answer what is still
 * queued with Capacity (not run), and join them: every suspended
 * connection is resumed before libmicrohttpd stops. */
void workers_stop(void)
{
	pthread_mutex_lock(&workers.mu);
	workers.stopping = 1;
	pthread_cond_broadcast(&workers.cv);
	pthread_mutex_unlock(&workers.mu);
	for (unsigned i = 0; i < workers.n; i++) pthread_join(workers.t[i], NULL);
	pthread_mutex_lock(&workers.mu);
	workers.n = 0;
	pthread_mutex_unlock(&workers.mu);
}

/* ---- handing a request over --------------------------------------------- */

static enum MHD_Result copy_value(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
	struct dconn *dc = cls;
	if (dc->nhdrs == dc->hcap) {
		size_t cap = dc->hcap ? 2 * dc->hcap : 16;
		struct dhdr *h = realloc(dc->hdrs, cap * sizeof *h);
		if (!h) return MHD_NO;
		dc->hdrs = h;
		dc->hcap = cap;
	}
	struct dhdr *h = &dc->hdrs[dc->nhdrs];
	h->header = kind == MHD_HEADER_KIND;
	h->name = strdup(key ? key : "");
	h->value = strdup(value ? value : "");
	if (!h->name || !h->value) {
		free(h->name);
		free(h->value);
		return MHD_NO;
	}
	dc->nhdrs++;
	return MHD_YES;
}

/* The key of a request's fair share: the episode of the session its
 * credential names ("episode:E"), "operator" for the operator token,
 * "unauthenticated" for anything else (no, a malformed or an unknown
 * credential: the worker's dauth answers those 401 at once). One read
 * through a pooled reader handle on the HTTP thread (a WAL reader waits
 * for no writer); expiry is not judged here. It only orders the queue:
 * the route's own dauth on the worker decides what the call may do. */
/* The credentials share_key placed lately, by the hash of the credential:
 * the operator token, or a session's episode and credential hash (which
 * never change for a credential). A credential revoked, expired or
 * rotated since keeps its place here until evicted, which only orders
 * the queue: the worker's dauth refuses it at once. It saves a request
 * two store reads (two round trips on PostgreSQL). Unknown credentials
 * are not kept. */
#define SHARE_SEEN 64
static struct {
	pthread_mutex_t mu;
	struct share_seen {
		char id[65];       /* hex sha256 of the credential; "" free */
		int operator;
		char episode[65];
		char hash[72];     /* the session's credential_hash */
	} e[SHARE_SEEN];
	unsigned next;
} share_seen = { .mu = PTHREAD_MUTEX_INITIALIZER };

static void share_place(const struct share_seen *e, const char *path, char key[80], char owner[80])
{
	if (e->operator) {
		snprintf(key, 80, "operator");
		return;
	}
	snprintf(key, 80, "episode:%s", e->episode);
	/* the owner its calls register under (daemon/calls.c): what a pending cancel names */
	int mcp = strcmp(path, "/mcp/") == 0 || strcmp(path, "/mcp") == 0;
	if (mcp && strncmp(e->hash, "sha256:", 7) == 0) snprintf(owner, 80, "mcp:%.64s", e->hash + 7);
	else if (strcmp(path, "/a2a/") == 0 || strcmp(path, "/a2a") == 0) snprintf(owner, 80, "a2a:%s", e->episode);
}

static void share_key(struct dctx *d, struct MHD_Connection *conn, const char *path, char key[80], char owner[80])
{
	snprintf(key, 80, "unauthenticated");
	owner[0] = 0;
	const char *c = dauth_bearer(MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization"));
	if (!c) return;
	char ref[WORLD_REF_SIZE];
	struct share_seen found = { .id = "" };
	if (world_hash_ref(c, strlen(c), ref, NULL) == 0) {
		pthread_mutex_lock(&share_seen.mu);
		for (unsigned i = 0; i < SHARE_SEEN; i++)
			if (strcmp(share_seen.e[i].id, ref + 7) == 0) {
				found = share_seen.e[i];
				break;
			}
		pthread_mutex_unlock(&share_seen.mu);
		if (found.id[0]) {
			share_place(&found, path, key, owner);
			return;
		}
		snprintf(found.id, sizeof found.id, "%s", ref + 7);
	}
	if (dauth_operator(d, c, NULL) > 0) {
		found.operator = 1;
	} else {
		struct world_err err = { 0, "" };
		struct world_store *st = dreader_get(d, &err);
		struct world_session s;
		if (st && world_session_get(st, c, &s, &err) == 0) {
			snprintf(found.episode, sizeof found.episode, "%s", s.episode);
			snprintf(found.hash, sizeof found.hash, "%s", s.credential_hash);
			world_session_free(&s);
			dreader_put(d, st);
		} else {
			if (!st || err.code != WX_NOT_FOUND) {
				char p[256];
				dlog_safe(p, sizeof p, path);
				dlog("error route=%s: the session of a queued call (for its fair share): %s", p,
				     err.msg[0] ? err.msg : "failed");
			}
			dreader_put(d, st);
			return;
		}
	}
	share_place(&found, path, key, owner);
	if (!found.id[0]) return;
	pthread_mutex_lock(&share_seen.mu);
	share_seen.e[share_seen.next] = found;
	share_seen.next = (share_seen.next + 1) % SHARE_SEEN;
	pthread_mutex_unlock(&share_seen.mu);
}

/* Hand the whole request to a worker (1), or 0 to answer it here (no
 * worker, or the copy failed), or -1 when the workers are stopping (the
 * call is answered Capacity, not run). */
int hand_over(struct dctx *d, struct MHD_Connection *conn, struct dconn *dc)
{
	pthread_mutex_lock(&workers.mu);
	unsigned n = workers.n;
	pthread_mutex_unlock(&workers.mu);
	if (!n) return 0;
	/* The count includes the entry a failed copy stopped at (-1: no
	 * connection), so it equals the copies only when all were made. */
	int kinds = MHD_HEADER_KIND | MHD_GET_ARGUMENT_KIND;
	if (MHD_get_connection_values(conn, (enum MHD_ValueKind)kinds, copy_value, dc) != (int)dc->nhdrs) {
		free_copies(dc);
		return 0;
	}
	struct share *fresh = calloc(1, sizeof *fresh);
	if (!fresh) {
		free_copies(dc);
		return 0;
	}
	char owner[80];
	share_key(d, conn, dc->path, fresh->key, owner);
	dc->seat.conn = conn;
	dc->d = d;
	dc->next = NULL;
	/* counted before it can run: a cancel from now on may wait for it */
	dcall_job_begin(&dc->job, owner);
	dc->jobbed = 1;
	pthread_mutex_lock(&workers.mu);
	if (workers.stopping) {
		/* the workers may be gone already: nobody would resume it */
		pthread_mutex_unlock(&workers.mu);
		dcall_job_end(&dc->job);
		dc->jobbed = 0;
		free(fresh);
		free_copies(dc);
		return -1;
	}
	MHD_suspend_connection(conn);
	struct share *sh = workers.shares;
	while (sh && strcmp(sh->key, fresh->key) != 0) sh = sh->next;
	if (!sh) {
		sh = fresh;
		fresh = NULL;
		sh->next = workers.shares;
		workers.shares = sh;
	}
	sh->refs++;
	dc->share = sh;
	if (workers.tail) workers.tail->next = dc;
	else workers.head = dc;
	workers.tail = dc;
	pthread_cond_signal(&workers.cv);
	pthread_mutex_unlock(&workers.mu);
	free(fresh);
	world_pause("daemon.queued"); /* test-only (common/pause.h): the job is in the queue */
	return 1;
}
