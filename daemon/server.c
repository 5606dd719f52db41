/* daemon/server.c: `worldd serve` -- start-up, the HTTP server, routing,
 * request logs and shutdown (see server.h), and the shared helpers of
 * route.h (responses, envelope classes, credentials, the reader pool). */
#include "daemon/server.h"
#include "daemon/home.h"
#include "supervisor/spawner.h"
#include "supervisor/supervisor.h"
#include "daemon/http.h"
#include "daemon/route.h"
#include "broker/effect.h"
#include "broker/exec_probe.h"
#include "broker/exec_profile.h"
#include "coordinator/registry.h"
#include "store/open_opts.h"
#include "common/pause.h"
#include "store/scan.h"
#include "store/store.h"
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include "store/tree.h"
#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define DROP_MAX ((size_t)16 << 20) /* an over-limit body is dropped up to this much more */

/* A call's outcome held while the store does not answer (coordinator.h,
 * on_held): one log line each time it is held, written or given up. */
static void log_held(void *ctx, const char *line)
{
	(void)ctx;
	char l[1200];
	size_t j = 0;
	for (; *line && j + 1 < sizeof l; line++) l[j++] = (*line >= 32 && *line < 127) ? *line : '?';
	l[j] = 0;
	dlog("%s", l);
}

/* A call the capsule's seccomp filter stopped (coordinator.h, on_denial):
 * one line of stable keys, so that an operator can tell afterwards who
 * probed what (docs/daemon.md, Logs). Written before the call's request
 * line; the committed record it names is what `worldd journal --denials`
 * lists. */
static void log_denial(void *ctx, const struct coord_denial *dn)
{
	(void)ctx;
	char sc[64], arch[32], sk[160], ep[80], inv[256], io[96] = "", why[300] = "";
	dlog_safe(sc, sizeof sc, dn->call->syscall);
	dlog_safe(arch, sizeof arch, dn->call->arch);
	dlog_safe(sk, sizeof sk, dn->skill_id);
	dlog_safe(ep, sizeof ep, dn->episode);
	dlog_safe(inv, sizeof inv, dn->invocation_id);
	if (dn->call->has_cmd) {
		char cn[48];
		dlog_safe(cn, sizeof cn, dn->call->cmd_name);
		snprintf(io, sizeof io, " ioctl=%s ioctl_cmd=0x%x", cn, dn->call->cmd);
	}
	if (!dn->record_ref[0]) snprintf(why, sizeof why, " record_error=\"%.280s\"", dn->record_error);
	dlog("denied syscall=%s nr=%d arch=%s%s skill=%s episode=%s invocation_id=%s record=%s%s", sc, dn->call->nr, arch,
	     io, sk, ep, inv, dn->record_ref[0] ? dn->record_ref : "-", why);
}

/* ---- listen address ---- */

int daemon_parse_listen(const char *listen, char host[64], unsigned *port, struct world_err *err)
{
	const char *colon, *h = listen;
	size_t hl;
	if (!listen || !*listen) return werr(err, WX_USAGE, "--listen is empty: expected HOST:PORT on loopback");
	if (listen[0] == '[') {
		const char *close = strchr(listen, ']');
		if (!close || close[1] != ':')
			return werr(err, WX_USAGE, "--listen '%s': expected [::1]:PORT", listen);
		h = listen + 1;
		hl = (size_t)(close - h);
		colon = close + 1;
	} else {
		colon = strrchr(listen, ':');
		if (!colon) return werr(err, WX_USAGE, "--listen '%s': expected HOST:PORT (e.g. %s)", listen, DAEMON_DEFAULT_LISTEN);
		hl = (size_t)(colon - listen);
	}
	if (hl == 0 || hl >= 64) return werr(err, WX_USAGE, "--listen '%s': no host", listen);
	memcpy(host, h, hl);
	host[hl] = 0;
	if (strcmp(host, "127.0.0.1") != 0 && strcmp(host, "::1") != 0 && strcmp(host, "localhost") != 0)
		return werr(err, WX_USAGE,
		            "--listen '%s': %s is not a loopback address; the daemon listens on 127.0.0.1, ::1 or localhost only",
		            listen, host);
	if (strcmp(host, "::1") == 0 && listen[0] != '[')
		return werr(err, WX_USAGE, "--listen '%s': write an IPv6 address in brackets, [::1]:PORT", listen);
	const char *p = colon + 1;
	if (!*p || strspn(p, "0123456789") != strlen(p) || strlen(p) > 5 || atol(p) > 65535)
		return werr(err, WX_USAGE, "--listen '%s': port '%s' is not a number 0-65535", listen, p);
	*port = (unsigned)atol(p);
	return 0;
}

/* ---- the HTTP server ---- */

struct dconn {
	struct timespec start;
	char *body;
	size_t len, cap, limit;
	size_t seen;         /* body bytes received, kept or not */
	int too_large;       /* over limit: the rest is dropped, then 413 */
	int responded;       /* a response was queued */
	int close_after;     /* answer with Connection: close (a framing error, a reserve slot) */
	/* A request handed to a call worker (see "the call workers"): */
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

static atomic_int inflight;

static long ms_since(const struct timespec *t0)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long)((t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000);
}

static void log_request(const char *method, const char *path, int status, const struct dconn *dc,
                        const char *invocation, const char *note, const char *timing)
{
	char m[16], p[256], inv[256], n[128];
	dlog_safe(m, sizeof m, method);
	dlog_safe(p, sizeof p, path);
	dlog_safe(inv, sizeof inv, invocation);
	dlog_safe(n, sizeof n, note);
	dlog("request method=%s route=%s status=%d ms=%ld invocation_id=%s%s%s%s", m, p, status, ms_since(&dc->start), inv,
	     timing ? timing : "", note && *note ? " rpc=" : "", note && *note ? n : "");
}

static enum MHD_Result send_resp(struct MHD_Connection *conn, const char *method, const char *path, struct dresp *r,
                                 const struct dconn *dc, const char *invocation, const char *note,
                                const char *timing)
{
	struct MHD_Response *resp =
	    MHD_create_response_from_buffer(r->len, r->body ? r->body : (void *)"", MHD_RESPMEM_MUST_COPY);
	enum MHD_Result ok = MHD_NO;
	if (resp) {
		if (r->ctype) MHD_add_response_header(resp, "Content-Type", r->ctype);
		if (r->allow) MHD_add_response_header(resp, "Allow", r->allow);
		if (r->www_auth) MHD_add_response_header(resp, "WWW-Authenticate", r->www_auth_hdr[0] ? r->www_auth_hdr : "Bearer");
		if (r->retry_after_s > 0) {
			char ra[16];
			snprintf(ra, sizeof ra, "%d", r->retry_after_s);
			MHD_add_response_header(resp, "Retry-After", ra);
		}
		if (r->location[0]) MHD_add_response_header(resp, "Location", r->location);
		if (r->ctype && strncmp(r->ctype, "text/event-stream", 17) == 0)
			MHD_add_response_header(resp, "Cache-Control", "no-cache");
		MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
		if (dc->close_after) MHD_add_response_header(resp, "Connection", "close");
		ok = MHD_queue_response(conn, (unsigned)r->status, resp);
		MHD_destroy_response(resp);
	}
	log_request(method, path, r->status, dc, invocation, note, timing);
	free(r->body);
	r->body = NULL;
	return ok;
}

static int path_is(const char *path, const char *a) { return strcmp(path, a) == 0; }

static void dispatch(struct dreq *rq, struct dresp *r)
{
	const char *p = rq->path;
	int get = strcmp(rq->method, "GET") == 0, post = strcmp(rq->method, "POST") == 0;
	if (strncmp(p, "/v1/replay/", 11) == 0) {
		replay_handle(rq, r);
	} else if (strncmp(p, "/v1/", 4) == 0 || path_is(p, "/v1")) {
		reads_handle(rq, r);
	} else if (path_is(p, "/mcp/") || path_is(p, "/mcp")) {
		/* GET opens the notification stream (on_request, open_stream) */
		if (!post) { dresp_error(r, "BadRequest", "method %s not allowed on /mcp/ (POST, or GET for the notification stream: Streamable HTTP)", rq->method); r->status = 405; r->allow = "GET, POST"; }
		else mcp_handle(rq, r);
	} else if (path_is(p, "/a2a/") || path_is(p, "/a2a")) {
		if (!post) { dresp_error(r, "BadRequest", "method %s not allowed on /a2a/ (POST only)", rq->method); r->status = 405; r->allow = "POST"; }
		else a2a_handle(rq, r);
	} else if (strncmp(p, "/.well-known/oauth-protected-resource", 37) == 0) {
		if (!get) { dresp_error(r, "BadRequest", "method %s not allowed on %s (GET only)", rq->method, p); r->status = 405; r->allow = "GET"; }
		else mcp_resource_metadata(rq, r);
	} else if (path_is(p, "/.well-known/agent.json") || path_is(p, "/.well-known/agent-card.json")) {
		if (!get) { dresp_error(r, "BadRequest", "method %s not allowed on %s (GET only)", rq->method, p); r->status = 405; r->allow = "GET"; }
		else a2a_card(rq, r, path_is(p, "/.well-known/agent-card.json"));
	} else if (mcp_not_oauth(rq, r) == 0) {
		/* an OAuth client's discovery or registration: 404 with the reason its credential was refused */
	} else {
		char safe[200];
		dlog_safe(safe, sizeof safe, p);
		dresp_error(r, "NotFound", "no route %s", safe);
	}
}

/* The route dispatch, for tests/fuzz/fuzz_http.c only (route.h): the
 * product reaches dispatch through run_route. */
void daemon_dispatch_for_test(struct dreq *rq, struct dresp *r) { dispatch(rq, r); }

static size_t body_limit(const char *method, const char *url)
{
	if (strcmp(method, "POST") == 0) {
		if (strcmp(url, "/mcp/") == 0 || strcmp(url, "/mcp") == 0) return DAEMON_MCP_BODY_MAX;
		if (strcmp(url, "/a2a/") == 0 || strcmp(url, "/a2a") == 0) return DAEMON_A2A_BODY_MAX;
	}
	return DAEMON_GET_BODY_MAX;
}

static enum MHD_Result early(struct MHD_Connection *conn, const char *method, const char *url, struct dconn *dc,
                             const char *klass, const char *fmt, size_t n)
{
	struct dresp r = { 0 };
	dresp_error(&r, klass, fmt, n);
	dc->responded = 1;
	return send_resp(conn, method, url, &r, dc, "", NULL, NULL);
}

static enum MHD_Result early_msg(struct MHD_Connection *conn, const char *method, const char *url, struct dconn *dc,
                                 const char *klass, const char *msg, int close_after)
{
	struct dresp r = { 0 };
	dresp_error(&r, klass, "%s", msg);
	dc->responded = 1;
	dc->close_after = close_after;
	return send_resp(conn, method, url, &r, dc, "", NULL, NULL);
}

/* ---- the call workers ------------------------------------------------
 * libmicrohttpd's own threads must never block (its manual, "Flow
 * control"): each connection is served by one of them, so a call waiting
 * for its capsule there held up every other connection of that thread
 * (measured with bench/daemon_bench's clients: 5 of 8, and 11 of 16,
 * connections on one thread, their calls run one after another). So a POST
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
 * connection limit as before, and at shutdown every queued job is
 * answered Capacity, whatever its share. */
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

static void dispatch(struct dreq *rq, struct dresp *r);

/* Run the route of a whole request (method, dc->path, the body): its
 * answer and what the request log names are kept in dc. conn is the
 * connection on an HTTP thread, NULL on a worker (the copies are read). */
static void run_route(struct dctx *d, struct MHD_Connection *conn, const char *method, struct dconn *dc)
{
	struct dreq rq = { .d = d, .conn = conn, .seat = conn ? NULL : &dc->seat, .hdrs = dc->hdrs, .nhdrs = dc->nhdrs,
	                   .method = method, .path = dc->path, .body = dc->body ? dc->body : "", .body_len = dc->len,
	                   .job = dc->jobbed ? dc->job.seq : 0, .cancel_early = dc->cancel_early,
	                   .cancel_fired = dc->cancel_fired, .cancel_pend = dc->cancel_pend };
	dispatch(&rq, &dc->resp);
	memcpy(dc->invocation_id, rq.invocation_id, sizeof dc->invocation_id);
	memcpy(dc->note, rq.note, sizeof dc->note);
	memcpy(dc->timing, rq.timing, sizeof dc->timing);
}

/* Queue the answer run_route kept. */
static enum MHD_Result send_kept(struct MHD_Connection *conn, struct dconn *dc)
{
	dc->responded = 1;
	return send_resp(conn, dc->method, dc->path, &dc->resp, dc, dc->invocation_id, dc->note, dc->timing);
}

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

/* ---- live responses: the server's side (daemon/http.h, dlive_start) ---- */

static void free_copies(struct dconn *dc);
static void dconn_free(struct dconn *dc)
{
	free(dc->body);
	free(dc->resp.body);
	free_copies(dc);
	free(dc);
}

/* on_request, resumed by dlive_start: queue the live response. */
static enum MHD_Result send_live(struct MHD_Connection *conn, struct dconn *dc)
{
	dc->responded = 1;
	dc->live_queued = 1;
	struct dlive *l = dc->seat.live;
	struct MHD_Response *resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, dlive_reader, l, dlive_free);
	if (!resp) {
		dlive_abandon(l);
		return MHD_NO;
	}
	MHD_add_response_header(resp, "Content-Type", dc->seat.ctype);
	MHD_add_response_header(resp, "Cache-Control", "no-cache");
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	if (dc->close_after) MHD_add_response_header(resp, "Connection", "close");
	enum MHD_Result ok = MHD_queue_response(conn, 200, resp);
	MHD_destroy_response(resp); /* the connection keeps its own reference */
	return ok;
}

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
 * as before, without shares). */
static int workers_start(unsigned n, unsigned share)
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
static void workers_stop(void)
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
static int hand_over(struct dctx *d, struct MHD_Connection *conn, struct dconn *dc)
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

/* ---- the edge: slots, deadlines, framing, origins ----------------------
 * libmicrohttpd's connection timeout restarts on every byte, so a client
 * trickling a header line every few seconds held a slot for ever. Every
 * connection is tracked here from its opening (MHD_OPTION_NOTIFY_CONNECTION)
 * with the time its current request began: its opening or the end of its
 * previous request for the header, the header's end for the body. The
 * reaper thread shuts down (shutdown(2): libmicrohttpd then reads an end
 * of stream and closes it) a connection whose header is not all in within
 * the header deadline or whose body is not all in within the body
 * deadline, however its bytes trickle. A request being answered (a call on
 * a worker) has no deadline here: the call's own deadline bounds it.
 *
 * Slots: DAEMON_CONNECTION_LIMIT ordinary ones and DAEMON_RESERVE_SLOTS
 * beyond them; a connection opened while the ordinary ones are all taken
 * is a reserve connection: it may ask GET /v1/health only (anything else
 * is answered 503 Capacity), is closed after its answer, and its header
 * deadline is DAEMON_RESERVE_DEADLINE_S. One client address holds at most
 * --per-ip-connections of all of them (libmicrohttpd refuses the rest at
 * accept). */
struct dsock {
	int fd;
	int reserve;          /* opened while the ordinary slots were full */
	int killed;           /* shut down by the reaper */
	atomic_int phase;     /* 0 receiving the header, 1 receiving the body, 2 being answered */
	struct timespec t0;   /* when the current phase began (under edge.mu) */
	struct dsock *prev, *next;
};

static struct {
	pthread_mutex_t mu;
	struct dsock *socks;
	unsigned open;        /* tracked connections */
	unsigned header_s, body_s;
	const char *const *origins;
	size_t norigins;
	pthread_t reaper;
	int reaping;
	atomic_int stop;
} edge = { .mu = PTHREAD_MUTEX_INITIALIZER, .header_s = DAEMON_HEADER_DEADLINE_S, .body_s = DAEMON_BODY_DEADLINE_S };

static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe)
{
	(void)cls;
	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
		struct dsock *ds = ci ? calloc(1, sizeof *ds) : NULL;
		*socket_context = ds;
		if (!ds) {
			dlog("error: connection not tracked (no deadline applies to it): %s", ci ? "out of memory" : "no socket");
			return;
		}
		ds->fd = ci->connect_fd;
		pthread_mutex_lock(&edge.mu);
		clock_gettime(CLOCK_MONOTONIC, &ds->t0);
		ds->reserve = edge.open >= DAEMON_CONNECTION_LIMIT;
		edge.open++;
		ds->next = edge.socks;
		if (edge.socks) edge.socks->prev = ds;
		edge.socks = ds;
		pthread_mutex_unlock(&edge.mu);
	} else if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
		struct dsock *ds = *socket_context;
		if (!ds) return;
		/* libmicrohttpd closes the socket after this returns: the reaper
		 * never shuts down a descriptor that was reused */
		pthread_mutex_lock(&edge.mu);
		if (ds->prev) ds->prev->next = ds->next;
		else edge.socks = ds->next;
		if (ds->next) ds->next->prev = ds->prev;
		edge.open--;
		pthread_mutex_unlock(&edge.mu);
		free(ds);
		*socket_context = NULL;
	}
}

static struct dsock *dsock_of(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	return ci ? ci->socket_context : NULL;
}

static void dsock_phase(struct dsock *ds, int phase)
{
	if (!ds) return;
	pthread_mutex_lock(&edge.mu);
	clock_gettime(CLOCK_MONOTONIC, &ds->t0);
	atomic_store(&ds->phase, phase);
	pthread_mutex_unlock(&edge.mu);
}

static void *reaper_main(void *arg)
{
	(void)arg;
	while (!atomic_load(&edge.stop)) {
		struct timespec tick = { 0, 200 * 1000 * 1000 };
		nanosleep(&tick, NULL);
		pthread_mutex_lock(&edge.mu);
		for (struct dsock *ds = edge.socks; ds; ds = ds->next) {
			int phase = atomic_load(&ds->phase);
			if (ds->killed || phase == 2) continue;
			unsigned limit = phase == 1 ? edge.body_s
			                 : ds->reserve && edge.header_s > DAEMON_RESERVE_DEADLINE_S ? DAEMON_RESERVE_DEADLINE_S
			                 : edge.header_s;
			if (ms_since(&ds->t0) <= (long)limit * 1000) continue;
			ds->killed = 1;
			if (shutdown(ds->fd, SHUT_RDWR) < 0 && errno != ENOTCONN)
				dlog("error: shutdown of a connection past its deadline (fd %d): %s", ds->fd, strerror(errno));
			else
				dlog("connection closed: its request's %s did not arrive within %u s%s", phase == 1 ? "body" : "header",
				     limit, ds->reserve ? " (a reserve slot)" : "");
		}
		pthread_mutex_unlock(&edge.mu);
	}
	return NULL;
}

/* Framing (RFC 9112 §6.3): libmicrohttpd 0.9.75 takes the first of two
 * Content-Lengths and lets Transfer-Encoding win over Content-Length; both
 * are refused here before any body byte is read. */
struct framing {
	int cl, te, conflict;
	const char *cl1, *te1;
};

static enum MHD_Result count_framing(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
	(void)kind;
	struct framing *f = cls;
	if (!key) return MHD_YES;
	if (strcasecmp(key, "Content-Length") == 0) {
		if (f->cl && (!value || !f->cl1 || strcmp(value, f->cl1) != 0)) f->conflict = 1;
		if (!f->cl++) f->cl1 = value;
	} else if (strcasecmp(key, "Transfer-Encoding") == 0) {
		if (!f->te++) f->te1 = value;
	}
	return MHD_YES;
}

/* A framing fault of the request's headers, or NULL. */
static const char *framing_fault(struct MHD_Connection *conn)
{
	struct framing f = { 0 };
	MHD_get_connection_values(conn, MHD_HEADER_KIND, count_framing, &f);
	if (f.conflict) return "conflicting Content-Length headers";
	if (f.cl && f.te) return "Content-Length together with Transfer-Encoding";
	if (f.te > 1 || (f.te && (!f.te1 || strcasecmp(f.te1, "chunked") != 0)))
		return "Transfer-Encoding other than one chunked";
	return NULL;
}

/* host[:port] (n bytes) names a loopback host with the daemon's port
 * (absent port: 80). */
static int loopback_authority(const char *a, size_t n, unsigned port)
{
	static const char *const hosts[] = { "localhost", "127.0.0.1", "[::1]" };
	for (size_t i = 0; i < sizeof hosts / sizeof hosts[0]; i++) {
		size_t hl = strlen(hosts[i]);
		if (n < hl || strncasecmp(a, hosts[i], hl) != 0) continue;
		if (n == hl) return port == 80;
		if (a[hl] != ':' || n - hl - 1 < 1 || n - hl - 1 > 5) return 0;
		unsigned p = 0;
		for (size_t j = hl + 1; j < n; j++) {
			if (a[j] < '0' || a[j] > '9') return 0;
			p = p * 10 + (unsigned)(a[j] - '0');
		}
		return p == port;
	}
	return 0;
}

/* The authority of an allowed origin (after "://"). */
static const char *origin_authority(const char *o)
{
	const char *s = strstr(o, "://");
	return s ? s + 3 : o;
}

/* /mcp/ and /a2a/ (DNS rebinding, MCP's Streamable HTTP transport): NULL
 * when Origin is absent or names loopback with the daemon's port or an
 * --allow-origin, and Host (when present) does the same; else the reason. */
static const char *origin_fault(struct MHD_Connection *conn, char *why, size_t cap)
{
	unsigned port = 0;
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_DAEMON);
	const union MHD_DaemonInfo *di = ci ? MHD_get_daemon_info(ci->daemon, MHD_DAEMON_INFO_BIND_PORT) : NULL;
	if (di) port = di->port;
	const char *origin = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Origin");
	const char *host = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Host");
	char safe[200];
	if (origin) {
		int ok = strncasecmp(origin, "http://", 7) == 0 && loopback_authority(origin + 7, strlen(origin + 7), port);
		for (size_t i = 0; !ok && i < edge.norigins; i++) ok = strcasecmp(origin, edge.origins[i]) == 0;
		if (!ok) {
			dlog_safe(safe, sizeof safe, origin);
			snprintf(why, cap, "Origin %s is not allowed (loopback with this daemon's port, or --allow-origin)", safe);
			return why;
		}
	}
	if (host) {
		int ok = loopback_authority(host, strlen(host), port);
		for (size_t i = 0; !ok && i < edge.norigins; i++) ok = strcasecmp(host, origin_authority(edge.origins[i])) == 0;
		if (!ok) {
			dlog_safe(safe, sizeof safe, host);
			snprintf(why, cap, "Host %s is not allowed (loopback with this daemon's port, or an --allow-origin's)", safe);
			return why;
		}
	}
	return NULL;
}

static int rpc_path(const char *url)
{
	return strcmp(url, "/mcp/") == 0 || strcmp(url, "/mcp") == 0 || strcmp(url, "/a2a/") == 0 || strcmp(url, "/a2a") == 0;
}

/* GET /mcp/ (and a POST subscriptions/listen): the notification stream (daemon/stream.c) stays open after
 * this returns; a refusal is answered as any route's. */
static enum MHD_Result open_stream(struct dctx *d, struct MHD_Connection *conn, struct dconn *dc, int listen)
{
	struct dreq rq = { .d = d, .conn = conn, .method = dc->method, .path = dc->path, .body = "", .body_len = 0 };
	struct MHD_Response *resp = NULL;
	if (listen) { /* POST subscriptions/listen (2026-07-28): the same stream */
		rq.body = dc->body;
		rq.body_len = dc->len;
	}
	if ((listen ? mcp_listen_open(&rq, &dc->resp, conn, &resp) : mcp_stream_open(&rq, &dc->resp, conn, &resp)) < 0)
		return send_kept(conn, dc);
	dc->responded = 1;
	enum MHD_Result ok = MHD_queue_response(conn, 200, resp);
	MHD_destroy_response(resp); /* the connection keeps its own reference */
	return ok;
}

/* 1: an MCP notifications/cancelled (one message, no id); 2: an A2A
 * CancelTask / tasks/cancel; 0 anything else. A body without the word is
 * not parsed. */
static int cancel_kind(const char *url, const struct dconn *dc)
{
	int mcp = strcmp(url, "/mcp/") == 0 || strcmp(url, "/mcp") == 0;
	int a2a = strcmp(url, "/a2a/") == 0 || strcmp(url, "/a2a") == 0;
	if ((!mcp && !a2a) || !dc->body || dc->len > 65536 || !memmem(dc->body, dc->len, "ancel", 5)) return 0;
	json_t *v = json_loadb(dc->body, dc->len, JSON_REJECT_DUPLICATES, NULL);
	const char *m = json_string_value(json_object_get(v, "method"));
	int k = 0;
	if (mcp && m && strcmp(m, "notifications/cancelled") == 0 && !json_object_get(v, "id")) k = 1;
	if (a2a && m && (strcmp(m, "CancelTask") == 0 || strcmp(m, "tasks/cancel") == 0)) k = 2;
	json_decref(v);
	return k;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
                                  const char *version, const char *upload, size_t *upload_size, void **con_cls)
{
	(void)version;
	struct dctx *d = cls;
	struct dconn *dc = *con_cls;
	if (!dc) {
		dc = calloc(1, sizeof *dc);
		if (!dc) return MHD_NO;
		atomic_init(&dc->seat.refs, 1);
		clock_gettime(CLOCK_MONOTONIC, &dc->start);
		dc->limit = body_limit(method, url);
		*con_cls = dc;
		atomic_fetch_add(&inflight, 1);
		struct dsock *ds = dsock_of(conn);
		dsock_phase(ds, 1); /* the header is in: the body's deadline runs */
		/* framing first: with an ambiguous length nothing after it can be read */
		const char *fault = framing_fault(conn);
		if (fault) return early_msg(conn, method, url, dc, "BadRequest", fault, 1);
		if (ds && ds->reserve && !(strcmp(method, "GET") == 0 && strcmp(url, "/v1/health") == 0))
			return early_msg(conn, method, url, dc, "Capacity",
			                 "every connection slot is taken; this reserve slot answers GET /v1/health only", 1);
		if (ds && ds->reserve) dc->close_after = 1;
		char why[600];
		if (rpc_path(url) && (fault = origin_fault(conn, why, sizeof why)))
			return early_msg(conn, method, url, dc, "Forbidden", fault, 0);
		/* the body size is checked before any body byte is read (docs/design.md §8.1) */
		const char *cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Length");
		if (cl) {
			char *end;
			errno = 0;
			unsigned long long n = strtoull(cl, &end, 10);
			if (errno || *end || n > dc->limit)
				return early(conn, method, url, dc, "PayloadTooLarge", "request body is over the limit of %zu bytes", dc->limit);
		}
		return MHD_YES;
	}
	if (*upload_size) {
		size_t n = *upload_size;
		*upload_size = 0;
		if (dc->responded) return MHD_YES;
		/* libmicrohttpd cannot answer in the middle of an upload: a body
		 * found too large (chunked, no Content-Length) is read and dropped
		 * to its end, then answered 413; one that goes on far beyond the
		 * limit, or too slowly, has its connection closed. */
		if (ms_since(&dc->start) > (long)edge.body_s * 1000) {
			dlog("request method=%.8s route=%.100s closed: body did not arrive within %u s", method, url, edge.body_s);
			return MHD_NO;
		}
		dc->seen += n;
		if (dc->too_large || n > dc->limit - dc->len) {
			dc->too_large = 1;
			if (dc->seen > dc->limit + DROP_MAX) {
				dlog("request method=%.8s route=%.100s closed: body over %zu bytes", method, url, dc->limit + DROP_MAX);
				return MHD_NO;
			}
			return MHD_YES;
		}
		if (dc->len + n + 1 > dc->cap) {
			size_t cap = dc->cap ? dc->cap : 4096;
			while (cap < dc->len + n + 1) cap *= 2;
			char *b = realloc(dc->body, cap);
			if (!b) return MHD_NO;
			dc->body = b;
			dc->cap = cap;
		}
		memcpy(dc->body + dc->len, upload, n);
		dc->len += n;
		dc->body[dc->len] = 0;
		return MHD_YES;
	}
	if (dc->responded) return MHD_YES;
	int answered = atomic_load(&dc->seat.answered);
	if (answered == 2) return send_live(conn, dc); /* resumed by dlive_start: a worker answers as it goes */
	if (answered) return send_kept(conn, dc); /* resumed: a worker's answer */
	if (dc->too_large) return early(conn, method, url, dc, "PayloadTooLarge", "request body is over the limit of %zu bytes", dc->limit);
	/* the whole request is here: a call goes to a worker */
	dsock_phase(dsock_of(conn), 2);
	snprintf(dc->method, sizeof dc->method, "%s", method);
	snprintf(dc->path, sizeof dc->path, "%s", url);
	if (strcmp(method, "GET") == 0 && (strcmp(url, "/mcp/") == 0 || strcmp(url, "/mcp") == 0))
		return open_stream(d, conn, dc, 0);
	if (strcmp(method, "POST") == 0 && (strcmp(url, "/mcp/") == 0 || strcmp(url, "/mcp") == 0) &&
	    mcp_listen_body(dc->body, dc->len))
		return open_stream(d, conn, dc, 1);
	/* A cancel must not wait behind the call it cancels: MCP's
	 * notifications/cancelled is answered here (202 at once, no store
	 * write), A2A's CancelTask goes to a worker past its episode's share. */
	int kind = strcmp(method, "POST") == 0 ? cancel_kind(url, dc) : 0;
	if (kind == 1) {
		run_route(d, conn, method, dc);
		return send_kept(conn, dc);
	}
	dc->urgent = kind == 2;
	if (kind == 2) {
		/* fire (or keep for a queued task) here, before the CancelTask
		 * itself waits for a worker: the task it names may be queued
		 * ahead of it; the worker then waits and answers */
		struct dreq rq = { .d = d, .conn = conn, .method = method, .path = dc->path, .body = dc->body, .body_len = dc->len };
		a2a_cancel_early(&rq);
		dc->cancel_early = rq.cancel_early;
		dc->cancel_fired = rq.cancel_fired;
		dc->cancel_pend = rq.cancel_pend;
	}
	int worker = strcmp(method, "POST") == 0 ? hand_over(d, conn, dc) : 0;
	if (worker > 0) return MHD_YES;
	if (worker < 0) dresp_error(&dc->resp, "Capacity", "the daemon is stopping; the call was not run");
	else run_route(d, conn, method, dc);
	return send_kept(conn, dc);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls, enum MHD_RequestTerminationCode toe)
{
	(void)cls; (void)toe;
	dsock_phase(dsock_of(conn), 0); /* the next request's header deadline runs from here */
	struct dconn *dc = *con_cls;
	if (!dc) return;
	*con_cls = NULL;
	atomic_fetch_sub(&inflight, 1);
	/* resumed for a live response but ended before it was queued */
	if (dc->seat.live && !dc->live_queued) dlive_abandon(dc->seat.live);
	/* a live response's worker may still run (the client left): it frees dc */
	if (atomic_fetch_sub(&dc->seat.refs, 1) == 1) dconn_free(dc);
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	(void)cls;
	char line[1024];
	vsnprintf(line, sizeof line, fmt, ap);
	size_t n = strlen(line);
	while (n && (line[n - 1] == '\n' || line[n - 1] == '\r')) line[--n] = 0;
	dlog("http: %s", line);
}

/* ---- operator token ---- */

/* The first daemon of a store without a token installs one and writes
 * its file (<db>.operator-token; a PostgreSQL store's in this host's cache
 * directory: world_operator_token_path); the others use the store's (its
 * file untouched: a daemon on another host of a PostgreSQL store has none
 * until the operator copies it there or rotates the token);
 * nobody removes the file at exit; `worldd token rotate` replaces both. */
static int token_setup(struct dctx *d, char path[4200], int *created, struct world_err *err)
{
	char tok[65];
	int rc = world_operator_token_new(d->writer, 0, tok, path, 4200, created, err);
	OPENSSL_cleanse(tok, sizeof tok);
	return rc;
}

/* ---- start-up and shutdown ---- */

static int report_indeterminate(void *ctx, long long id, const char *kind, const char *subject, const char *ref)
{
	long long *n = ctx;
	char k[64], s[300], r[100];
	dlog_safe(k, sizeof k, kind);
	dlog_safe(s, sizeof s, subject);
	dlog_safe(r, sizeof r, ref);
	printf("journal_indeterminate id=%lld kind=%s subject=%s ref=%s\n", id, k, s, r);
	(*n)++;
	return 0;
}

/* Without --workspace-root the effects whose handler opens the worktree
 * (Workspace.*, Ailang.Check/Run/CLI) fail ("no workspace root"), each
 * charged to its session: refuse to serve a store with such transitions
 * published. 0, or -1 with err naming one. */
/* The exec profiles (--exec-profile; broker/exec_profile.h): loaded, mapped
 * and probed at start-up, before anything is written; kept for the life of
 * the daemon (the coordinator's handler context points at them). */
static struct exec_profiles exec_set;

static int exec_start(const struct daemon_config *cfg, const struct world_store *st, struct world_err *err)
{
	if (!cfg->n_exec_profiles) return 0;
	/* the store's folder, when the store is a file */
	char store_dir[PATH_MAX] = "";
	if (!strstr(cfg->store_path, "://")) {
		char rp[PATH_MAX];
		if (!realpath(cfg->store_path, rp)) return werr(err, WX_IO, "exec profiles: realpath %s: %s", cfg->store_path, strerror(errno));
		snprintf(store_dir, sizeof store_dir, "%s", dirname(rp));
	}
	const char *home = getenv("HOME");
	struct exec_profile_env pe = { .workspace_root = cfg->workspace_root, .store_dir = store_dir[0] ? store_dir : NULL,
		                       .home = home && home[0] == '/' ? home : NULL, .homes_dir = "/home",
		                       .max_ms = cfg->exec_max_ms };
	for (size_t i = 0; i < cfg->n_exec_profiles; i++) {
		struct exec_profile *p;
		if (exec_profile_load(cfg->exec_profiles[i], &pe, &p, err) < 0) return -1;
		if (exec_profiles_add(&exec_set, p, err) < 0) {
			exec_profile_free(p);
			return -1;
		}
	}
	for (size_t i = 0; i < cfg->n_exec_episode_projects; i++)
		if (exec_profiles_map(&exec_set, cfg->exec_episode_projects[i], err) < 0) return -1;
	/* The daemon's own secret files: none may lie under a tree the exec
	 * capsule shows (the probe's arm "secrets", broker/exec_probe.h). A path
	 * the daemon cannot name is one start-up line: that file is not read. */
	char tok_path[4200] = "", key_path[4400] = "";
	struct world_err ig = { 0, "" };
	if (world_operator_token_path(st, tok_path, sizeof tok_path, &ig) < 0) {
		dlog("start: exec profiles: no operator token file path to check: %s", ig.msg);
		tok_path[0] = '\0';
	}
	if (cfg->log_key) snprintf(key_path, sizeof key_path, "%s", cfg->log_key);
	else if (world_log_key_path(st, key_path, sizeof key_path, 0, &ig) < 0) key_path[0] = '\0';
	const struct exec_secret secrets[] = {
		{ "store password file (--store-password-file)", cfg->store_password_file },
		{ "operator token file", tok_path },
		{ "log signing key file", key_path },
	};
	struct exec_probe_env xe = { .workspace_root = cfg->workspace_root, .store_dir = pe.store_dir, .home = pe.home,
		                     .secrets = secrets, .nsecrets = sizeof secrets / sizeof secrets[0] };
	for (size_t i = 0; i < exec_set.n; i++) {
		struct exec_profile *p = exec_set.p[i];
		char note[1024];
		exec_probe_run(p, &xe, note, sizeof note);
		if (p->probe_failure[0])
			dlog("start: exec profile %s (project %s, %s): not offered: %s", p->file, p->project, p->digest, p->probe_failure);
		else
			dlog("start: exec profile %s (project %s, %s): offered; probe: %s", p->file, p->project, p->digest, note);
	}
	return 0;
}

static int effects_need_workspace(struct world_store *st, struct world_err *err)
{
	json_t *reg = NULL, *d, *e;
	long long rev;
	if (registry_load(st, &reg, &rev, NULL, err) < 0) return -1;
	size_t i, k, n = 0;
	const char *first = NULL, *eff = NULL;
	json_array_foreach(json_object_get(reg, "transitions"), i, d) {
		json_array_foreach(json_object_get(d, "declaredEffects"), k, e) {
			const char *name = json_string_value(json_object_get(e, "effect"));
			/* the handlers that open the episode's worktree (broker/handlers.c);
			 * an effect with no handler at all is refused before it runs */
			if (!name || (strncmp(name, "Workspace.", 10) != 0 && strcmp(name, "Ailang.Check") != 0 &&
			              strcmp(name, "Ailang.Run") != 0 && strcmp(name, "Ailang.CLI") != 0))
				continue;
			if (!n++) {
				first = json_string_value(json_object_get(d, "id"));
				eff = name;
			}
			break;
		}
	}
	int rc = 0;
	if (n)
		rc = werr(err, WX_USAGE,
		          "%zu published transition(s) have effects that need a worktree (first: %s declares %s): "
		          "give --workspace-root DIR",
		          n, first ? first : "?", eff);
	json_decref(reg);
	return rc;
}

/* The log's signing key (issue 43, store/tree.h): the coordinator's
 * writer signs a checkpoint in the commit of each batch that appended.
 * --log-key FILE must be there and be the store's key; without it the
 * store's default file is used when there is one, else one start-up line
 * and no signatures. */
static int log_signer_start(struct dctx *d, const struct daemon_config *cfg, struct world_err *err)
{
	char path[4400];
	struct world_err pe = { 0, "" };
	if (cfg->log_key) snprintf(path, sizeof path, "%s", cfg->log_key);
	else if (world_log_key_path(d->writer, path, sizeof path, 0, &pe) < 0) {
		dlog("start: log checkpoints not signed: %s", pe.msg);
		return 0;
	}
	char *skey = NULL;
	struct world_err ke = { 0, "" };
	if (world_log_key_read(path, &skey, &ke) < 0) {
		if (cfg->log_key || ke.code != WX_NOT_FOUND) {
			*err = ke;
			return werr_prefix(err, "--log-key");
		}
		dlog("start: log checkpoints not signed: no key file %s (worldd log key init)", path);
		return 0;
	}
	int rc = world_tree_set_signer(d->writer, skey, err);
	OPENSSL_cleanse(skey, strlen(skey));
	free(skey);
	if (rc < 0) return werr_prefix(err, "--log-key %s", path);
	char vkey[1024] = "";
	struct world_err ig;
	world_log_key_get(d->writer, vkey, sizeof vkey, &ig);
	dlog("start: log checkpoints signed in each commit batch by %s (key file %s)", vkey, path);
	return 0;
}

int daemon_serve(const struct daemon_config *cfg, struct world_err *err)
{
	char host[64];
	unsigned port = 0;
	const char *listen = cfg->listen ? cfg->listen : DAEMON_DEFAULT_LISTEN;
	if (daemon_parse_listen(listen, host, &port, err) < 0) return -1;
	unsigned capacity = cfg->capacity ? cfg->capacity : DAEMON_DEFAULT_CAPACITY;
	if (capacity > 256) return werr(err, WX_USAGE, "--capacity %u is over 256", capacity);
	unsigned share = cfg->session_share ? cfg->session_share : DAEMON_DEFAULT_SHARE(capacity);
	if (share > capacity)
		return werr(err, WX_USAGE, "--session-share %u is over the capacity (%u call workers)", share, capacity);
	if (cfg->tool_ailang_bin && !cfg->workspace_root)
		return werr(err, WX_USAGE, "--tool-ailang-bin needs --workspace-root");

	/* Block the stop signals before any thread exists: every thread inherits
	 * the mask, and the main thread takes them with sigwait. Capsules reset
	 * their mask (capsule/capsule.c). */
	sigset_t stop;
	sigemptyset(&stop);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGINT);
	if (pthread_sigmask(SIG_BLOCK, &stop, NULL) != 0) return werr(err, WX_FAIL, "block SIGTERM/SIGINT failed");
	signal(SIGPIPE, SIG_IGN);

	/* The capsule spawner first, while this process is small and has one
	 * thread: every capsule is a clone of the spawner, whose size does not
	 * grow with the calls in flight (supervisor/spawner.h). It also removes
	 * the groups of dead makers and, on v1 without favordynmods, keeps the
	 * cgroup attach fast (it is the process that attaches). */
	/* Under systemd with Delegate=memory pids the service's group offers
	 * the controllers but, holding this process, cannot enable them for
	 * children: move into a leaf first (capsule.h, capsule_cgroup_delegate),
	 * before the spawner is forked, so that it and its capsules follow. */
	char dnote[1200];
	int drc = sup_cgroup_delegate_self(dnote, sizeof dnote);
	if (drc != 1 || strstr(dnote, "offers no")) dlog("start: cgroup delegation: %s", dnote);
	struct sup_spawner_opts so_sp = { .keepwarm = true };
	struct sup_spawner_info spi;
	struct world_err sperr = { 0, "" };
	bool spawner = sup_spawner_start(&so_sp, &spi, &sperr) == 0;

	static struct dctx d; /* static: MHD's threads and the signal path see it until exit */
	memset(&d, 0, sizeof d);
	pthread_mutex_init(&d.pool_mu, NULL);
	d.open_reads = cfg->open_reads;
	snprintf(d.db_path, sizeof d.db_path, "%s", cfg->store_path);
	d.password_file = cfg->store_password_file;
	char token_path[4200] = "";
	struct MHD_Daemon *mhd = NULL;
	int rc = -1;

	/* Start-up refusals come before anything is written (the archive, the
	 * epoch, the token). Limits are never silently missing: no memory or
	 * pids group for the capsules is one line, or with --require-cgroups a
	 * refusal (supervisor.h: sup_cgroups_check). */
	char cgline[700];
	if (sup_cgroups_check(cgline, sizeof cgline)) {
		if (cfg->require_cgroups) {
			werr(err, WX_SETUP, "--require-cgroups: %s", cgline);
			goto out;
		}
		dlog("start: %s", cgline);
	}
	struct world_store_open_opts oo = { .password_file = cfg->store_password_file };
	if (world_store_open_opts(cfg->store_path, WORLD_STORE_WRITER | WORLD_STORE_EXISTING, &oo, &d.writer, err) < 0)
		goto out;
	if (!cfg->workspace_root && effects_need_workspace(d.writer, err) != 0) goto out;
	if (exec_start(cfg, d.writer, err) < 0) goto out;
	struct world_interp interp;
	if (world_archive_interpreter(d.writer, cfg->ailang_bin, &interp, err) < 0) goto out;
	snprintf(d.interp_ref, sizeof d.interp_ref, "%s", interp.ref);
	snprintf(d.interp_version, sizeof d.interp_version, "%s", interp.version);
	long long epoch = 0;
	int created = 0;
	if (registry_epoch_bootstrap(d.writer, &interp, &epoch, &created, err) < 0) goto out;
	dlog("start store=%s interpreter=%s release=\"%s\" epoch=%lld%s", world_store_path(d.writer), d.interp_ref, d.interp_version, epoch,
	     created ? " (epoch registry bootstrapped)" : "");
	long long indeterminate = 0;
	if (world_journal_indeterminate(d.writer, report_indeterminate, &indeterminate, err) < 0) goto out;
	if (indeterminate)
		dlog("journal: %lld intent(s) without an outcome are indeterminate; none is re-run", indeterminate);
	struct world_scan_result sr;
	/* the record law is the broker's */
	if (world_scan_start(d.writer, broker_record_check, stdout, &sr, err) < 0) goto out;
	dlog("scan log_rows=%lld world_rows=%lld holes=%lld complete=%d", sr.log_rows, sr.world_rows, sr.holes, sr.complete);
	if (log_signer_start(&d, cfg, err) < 0) goto out;

	int keepwarm;
	if (spawner) {
		dlog("start: capsule spawner pid=%d (every capsule is made by it: docs/daemon.md)", (int)spi.pid);
		if (spi.sweep_error[0]) dlog("start: %s", spi.sweep_error);
		if (spi.template_error[0])
			dlog("start: %s; capsules copy the daemon's mount table instead (docs/security.md)", spi.template_error);
		if (spi.swept) dlog("start: removed %u capsule cgroup(s) left by processes that are gone", spi.swept);
		keepwarm = spi.keepwarm;
	} else {
		/* Capsules are then clones of this process: slower under load,
		 * as confined. */
		dlog("start: %s; capsules are made by the daemon itself", sperr.msg);
		unsigned removed = 0;
		struct world_err e = { 0, "" };
		if (sup_cgroups_sweep(&removed, &e) < 0) dlog("start: %s", e.msg);
		if (removed) dlog("start: removed %u capsule cgroup(s) left by processes that are gone", removed);
		keepwarm = sup_cgroup_keepwarm(true);
	}
	/* v1 cgroups without favordynmods: an attach after a quiet spell waits
	 * for an RCU grace period (~10 ms); keep it fast (capsule.h). */
	if (keepwarm == 1)
		dlog("start: cgroup v1 without favordynmods: a keeper thread keeps capsule attaches from waiting "
		     "(favordynmods on the host makes it unneeded: docs/security.md)");
	else
		dlog("start: capsule cgroup attaches do not wait (favordynmods on, cgroup v2, or no v1 group to write)");

	struct coord_config cc = { .store = d.writer, .workspace_root = cfg->workspace_root,
	                           .tool_ailang_bin = cfg->tool_ailang_bin, .examples_dir = cfg->examples_dir,
	                           .written_by = "worldd/" DAEMON_VERSION,
	                           .episode_calls_max = cfg->episode_calls_max,
	                           .episode_bytes_max = cfg->episode_bytes_max, .on_denial = log_denial,
	                           .exec_profiles = exec_set.n ? &exec_set : NULL, .exec_output_max = cfg->exec_output_max,
	                           .exec_max_ms = cfg->exec_max_ms };
	sup_limits_default(&cc.limits);
	cc.limits.capacity = capacity;
	cc.on_held = log_held;
	d.coord = coord_new(&cc, err);
	if (!d.coord) goto out;
	int token_created = 0;
	if (token_setup(&d, token_path, &token_created, err) < 0) goto out;
	dlog("operator token: %s (%s)", token_path,
	     token_created ? "the store had none: a new one, written to that file"
	                   : "the store's, shared by every daemon of it; the file is left as it is");

	if (mcp_streams_start(&d, err) < 0) goto out;

	struct sockaddr_in sin;
	struct sockaddr_in6 sin6;
	struct sockaddr *sa;
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ITC | MHD_ALLOW_SUSPEND_RESUME;
	if (strcmp(host, "::1") == 0) {
		memset(&sin6, 0, sizeof sin6);
		sin6.sin6_family = AF_INET6;
		sin6.sin6_addr = in6addr_loopback;
		sin6.sin6_port = htons((uint16_t)port);
		sa = (struct sockaddr *)&sin6;
		flags |= MHD_USE_IPv6;
	} else {
		memset(&sin, 0, sizeof sin);
		sin.sin_family = AF_INET;
		sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		sin.sin_port = htons((uint16_t)port);
		sa = (struct sockaddr *)&sin;
	}
	if (workers_start(capacity, share) < 0) dlog("start: no call worker could start; calls run on the HTTP threads");
	edge.header_s = cfg->header_deadline_s ? cfg->header_deadline_s : DAEMON_HEADER_DEADLINE_S;
	edge.body_s = cfg->body_deadline_s ? cfg->body_deadline_s : DAEMON_BODY_DEADLINE_S;
	edge.origins = cfg->allow_origins;
	edge.norigins = cfg->n_allow_origins;
	unsigned per_ip = cfg->per_ip_connections < 0 ? 0 /* libmicrohttpd: no limit */
	                  : cfg->per_ip_connections ? (unsigned)cfg->per_ip_connections : DAEMON_PER_IP_DEFAULT;
	atomic_store(&edge.stop, 0);
	int e = pthread_create(&edge.reaper, NULL, reaper_main, NULL);
	if (e != 0) {
		werr(err, WX_FAIL, "start the connection reaper thread: pthread_create: %s", strerror(e));
		goto out;
	}
	edge.reaping = 1;
	mhd = MHD_start_daemon(flags, (uint16_t)port, NULL, NULL, on_request, &d,
	                       MHD_OPTION_SOCK_ADDR, sa,
	                       MHD_OPTION_THREAD_POOL_SIZE, (unsigned)DAEMON_HTTP_THREADS,
	                       MHD_OPTION_CONNECTION_LIMIT, (unsigned)(DAEMON_CONNECTION_LIMIT + DAEMON_RESERVE_SLOTS),
	                       MHD_OPTION_PER_IP_CONNECTION_LIMIT, per_ip,
	                       MHD_OPTION_STRICT_FOR_CLIENT, (int)1, /* HTTP/1.1 without Host: 400 */
	                       MHD_OPTION_NOTIFY_CONNECTION, on_connection, &d,
	                       MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)DAEMON_IDLE_TIMEOUT_S,
	                       MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(64 << 10),
	                       MHD_OPTION_NOTIFY_COMPLETED, on_completed, &d,
	                       MHD_OPTION_EXTERNAL_LOGGER, mhd_log, &d,
	                       MHD_OPTION_END);
	if (!mhd) {
		werr(err, WX_IO, "listen on %s failed (address in use, or no permission)", listen);
		goto out;
	}
	const union MHD_DaemonInfo *info = MHD_get_daemon_info(mhd, MHD_DAEMON_INFO_BIND_PORT);
	unsigned real = info ? info->port : port;
	if (strcmp(host, "::1") == 0) snprintf(d.base_url, sizeof d.base_url, "http://[::1]:%u", real);
	else snprintf(d.base_url, sizeof d.base_url, "http://%s:%u", host, real);
	/* episode homes (daemon/home.h): the advertised URL defaults to this one */
	if (dhome_start(cfg, d.base_url, err) < 0) goto out;
	printf("worldd listening on %s\n", d.base_url);
	fflush(stdout);
	dlog("listening url=%s capacity=%u session_share=%u open_reads=%d operator_token=%s header_deadline_s=%u "
	     "body_deadline_s=%u per_ip_connections=%u allow_origins=%zu", d.base_url, capacity, share, d.open_reads, token_path,
	     edge.header_s, edge.body_s, per_ip, edge.norigins);

	int sig = 0;
	while (sigwait(&stop, &sig) != 0) {}
	dlog("stop signal=%s: no new connections; waiting up to %d ms for %d request(s) in flight", sig == SIGTERM ? "SIGTERM" : "SIGINT",
	     DAEMON_DRAIN_MS, atomic_load(&inflight));
	MHD_socket ls = MHD_quiesce_daemon(mhd);
	if (ls != MHD_INVALID_SOCKET) close(ls);
	/* the notification streams end now, so the drain below is not held up */
	mcp_streams_stop();
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (atomic_load(&inflight) > 0 && ms_since(&t0) < DAEMON_DRAIN_MS) {
		struct timespec ten = { 0, 10 * 1000 * 1000 };
		nanosleep(&ten, NULL);
	}
	/* The workers finish the calls they run (every call is bounded by its
	 * invocation deadline) and answer what is queued, resuming every
	 * connection, before libmicrohttpd stops. */
	workers_stop();
	MHD_stop_daemon(mhd);
	mhd = NULL;
	rc = 0;
out:
	workers_stop();
	mcp_streams_stop(); /* no connection may stay suspended when libmicrohttpd stops */
	if (mhd) MHD_stop_daemon(mhd);
	if (edge.reaping) {
		atomic_store(&edge.stop, 1);
		pthread_join(edge.reaper, NULL);
		edge.reaping = 0;
	}
	if (d.coord) coord_free(d.coord); /* reaps every capsule */
	dhome_stop();
	exec_profiles_free(&exec_set);
	/* The spawner removes its pooled groups and exits; waited for, so
	 * nothing of ours is left when "stopped" is logged. */
	if (spawner) sup_spawner_stop();
	dreader_pool_close(&d);
	if (d.writer) world_store_close(d.writer); /* releases the writer lock */
	if (rc == 0) dlog("stopped");
	return rc;
}
