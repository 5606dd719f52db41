/* daemon/edge.c: the connection edge of `worldd serve` (see server.h).
 *
 * Owns: what happens to a connection before and after its route runs --
 * the slots (ordinary and reserve) and the per-phase deadlines with the
 * reaper thread that enforces them; framing (one Content-Length or one
 * chunked Transfer-Encoding); Origin and Host on /mcp/ and /a2a/; the body
 * limits and the body's collection; the decision where a whole request is
 * answered (a GET or an MCP cancel here, the notification stream opened,
 * a call handed to a worker: daemon/workers.c); queuing the answer (kept
 * or live) and one log line per request. libmicrohttpd's callbacks are
 * these; daemon_serve (daemon/server.c) starts and stops the rest. */
#include "daemon/server.h"
#include "daemon/http.h"
#include "daemon/route.h"
#include "daemon/server_internal.h"
#include <errno.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>

#define DROP_MAX ((size_t)16 << 20) /* an over-limit body is dropped up to this much more */

static atomic_int inflight; /* requests between their header and on_completed */

/* ---- answers and request logs ------------------------------------------ */

void log_request(const char *method, const char *path, int status, const struct dconn *dc,
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

/* Queue the answer run_route kept. */
static enum MHD_Result send_kept(struct MHD_Connection *conn, struct dconn *dc)
{
	dc->responded = 1;
	return send_resp(conn, dc->method, dc->path, &dc->resp, dc, dc->invocation_id, dc->note, dc->timing);
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

/* ---- the edge: slots, deadlines, framing, origins ----------------------
 * libmicrohttpd's connection timeout restarts on every byte, so a client
 * trickling a header line every few seconds would hold a slot for ever. Every
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

void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
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

int edge_start(unsigned header_s, unsigned body_s, const char *const *origins, size_t norigins,
               struct world_err *err)
{
	edge.header_s = header_s;
	edge.body_s = body_s;
	edge.origins = origins;
	edge.norigins = norigins;
	atomic_store(&edge.stop, 0);
	int e = pthread_create(&edge.reaper, NULL, reaper_main, NULL);
	if (e != 0) return werr(err, WX_FAIL, "start the connection reaper thread: pthread_create: %s", strerror(e));
	edge.reaping = 1;
	return 0;
}

void edge_stop(void)
{
	if (!edge.reaping) return;
	atomic_store(&edge.stop, 1);
	pthread_join(edge.reaper, NULL);
	edge.reaping = 0;
}

int edge_inflight(void)
{
	return atomic_load(&inflight);
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

enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
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

void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls, enum MHD_RequestTerminationCode toe)
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

void mhd_log(void *cls, const char *fmt, va_list ap)
{
	(void)cls;
	char line[1024];
	vsnprintf(line, sizeof line, fmt, ap);
	size_t n = strlen(line);
	while (n && (line[n - 1] == '\n' || line[n - 1] == '\r')) line[--n] = 0;
	dlog("http: %s", line);
}
