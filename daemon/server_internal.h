/* daemon/server_internal.h: what the daemon's server files share (not for
 * the route modules: tests/cli_layout.sh checks they call none of it).
 *
 * Owns: struct dconn, one request's state from its header to its answer,
 * which the connection edge (daemon/edge.c) makes and answers, a call
 * worker (daemon/workers.c) runs, and start-up's route table
 * (daemon/server.c) routes; and the calls between those three files. */
#ifndef WORLD_DAEMON_SERVER_INTERNAL_H
#define WORLD_DAEMON_SERVER_INTERNAL_H
#include "common/error.h"
#include "daemon/http.h"
#include "daemon/route.h"
#include <microhttpd.h>
#include <stdarg.h>
#include <stddef.h>
#include <time.h>

struct share; /* an episode's share of the call workers (workers.c) */

/* One request: made by on_request at its header, freed by dconn_free when
 * both the connection (on_completed) and a live response's worker are done
 * with it. */
struct dconn {
	struct timespec start;
	char *body;
	size_t len, cap, limit;
	size_t seen;         /* body bytes received, kept or not */
	int too_large;       /* over limit: the rest is dropped, then 413 */
	int responded;       /* a response was queued */
	int close_after;     /* answer with Connection: close (a framing error, a reserve slot) */
	/* A request handed to a call worker (daemon/workers.c): */
	struct dlive_seat seat; /* the connection, and a worker's answer (daemon/http.h): answered (1: the worker
	                           has put its response below, 2: started a live one), refs, the live response */
	int urgent;          /* a cancel: a worker takes it past its episode's share */
	int live_queued;     /* send_live ran (the response holds, or has dropped, its reference) */
	struct dctx *d;
	char method[16], path[2048];
	struct dhdr *hdrs;
	size_t nhdrs, hcap;
	struct dresp resp;
	char invocation_id[256], note[128], timing[128];
	struct dconn *next;  /* in the workers' queue */
	struct share *share; /* its episode's share of the workers (set while queued or running) */
	struct djob job;     /* a pending cancel's reach (daemon/calls.c), from queued until its route returned */
	int jobbed;          /* job is registered */
	int cancel_early, cancel_fired; /* A2A CancelTask: a2a_cancel_early ran on the HTTP thread (route.h) */
	unsigned long long cancel_pend;
};

/* Milliseconds since t0 (CLOCK_MONOTONIC). */
static inline long ms_since(const struct timespec *t0)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long)((t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000);
}

/* ---- server.c: the route table ------------------------------------------ */

/* Run the route of a whole request (method, dc->path, the body): its
 * answer and what the request log names are kept in dc. conn is the
 * connection on an HTTP thread, NULL on a worker (the copies are read). */
void run_route(struct dctx *d, struct MHD_Connection *conn, const char *method, struct dconn *dc);

/* ---- workers.c: the call workers and their queue ------------------------ */

/* Start n workers, one key holding at most share of them; 0, or -1 when
 * not one could start (calls are then answered on the HTTP threads). */
int workers_start(unsigned n, unsigned share);
/* Let the workers finish the call each runs, answer what is queued with
 * Capacity, and join them; every suspended connection is resumed. */
void workers_stop(void);
/* Hand the whole request to a worker (1), or 0 to answer it here (no
 * worker, or the copy failed), or -1 when the workers are stopping. */
int hand_over(struct dctx *d, struct MHD_Connection *conn, struct dconn *dc);
/* Free a request's state (its body, its answer, the header copies). */
void dconn_free(struct dconn *dc);

/* ---- edge.c: the connection edge ---------------------------------------- */

/* One request log line for dc (status, time since its start, the route's
 * invocation id, note and timings). */
void log_request(const char *method, const char *path, int status, const struct dconn *dc,
                 const char *invocation, const char *note, const char *timing);
/* Deadlines (seconds) and allowed origins, then the reaper thread that
 * shuts down connections past their deadline; 0, or -1 with err. */
int edge_start(unsigned header_s, unsigned body_s, const char *const *origins, size_t norigins,
               struct world_err *err);
/* Stop and join the reaper (nothing when it never started). */
void edge_stop(void);
/* Requests between their header and their completion. */
int edge_inflight(void);
/* libmicrohttpd's callbacks (MHD_start_daemon): cls is the struct dctx. */
enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
                           const char *version, const char *upload, size_t *upload_size, void **con_cls);
void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                   enum MHD_ConnectionNotificationCode toe);
void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls, enum MHD_RequestTerminationCode toe);
void mhd_log(void *cls, const char *fmt, va_list ap);
#endif
