/* daemon/http.h: the request, response and credential helpers that the
 * server (daemon/server.c, workers.c, edge.c) and every route module (daemon/reads.c,
 * replay_route.c, mcp.c, a2a.c, stream.c, calls.c) use.
 *
 * Owns: the daemon's log line (dlog, dlog_safe); reading a request's
 * headers and query arguments (on an HTTP thread from the connection, on a
 * call worker from the copies in struct dhdr); filling a struct dresp (JSON,
 * text, the error envelope of docs/design.md §8.1 with its HTTP statuses,
 * the 500 of a host failure) and the JSON-RPC error object; the credential
 * check shared by every authenticated route (dauth) with the RFC 6750
 * challenge of a refusal; the pool of reader store handles; the queue of a
 * response that stays open (struct dsse: the notification stream's,
 * daemon/stream.c, and a live response's); and live responses (dlive_*: a
 * call worker's response sent as it goes).
 *
 * Why a module of its own: the route modules answer requests with these
 * helpers and the server calls the route modules; with the helpers in
 * the server that was a circle (docs/architecture.md). The server and the
 * routes both sit above this module, and nothing here calls the server or a
 * route. The server's own state (connections in daemon/edge.c, the call
 * workers and their queue in daemon/workers.c) stays there; a live response reaches its connection only through the
 * struct dlive_seat the server gives it. */
#ifndef WORLD_DAEMON_HTTP_H
#define WORLD_DAEMON_HTTP_H
#include "daemon/route.h"
#include <jansson.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct MHD_Connection;
struct world_store;

/* A header or argument copied off a suspended connection (call workers
 * never touch the connection itself). */
struct dhdr {
	int header;   /* 1 header (names compared without case), 0 query argument */
	char *name, *value;
};

/* A header of the request (case-insensitive name), or NULL. */
const char *dreq_header(const struct dreq *rq, const char *name);
/* A query argument, or NULL. */
const char *dreq_arg(const struct dreq *rq, const char *name);

/* Responses. dresp_json takes a reference to v (steals it) and serialises it
 * compactly; dresp_text copies text. */
void dresp_json(struct dresp *r, int status, json_t *v);
void dresp_text(struct dresp *r, int status, const char *ctype, const char *text, size_t len);
/* The error envelope {"error":{"class":CLASS,"message":MSG}}; the status is
 * the class's (dclass_status). */
void dresp_error(struct dresp *r, const char *klass, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* A JSON-RPC 2.0 error object {"jsonrpc","id","error":{"code","message"}}
 * (id NULL = null), shared by the MCP and A2A projections. */
json_t *drpc_error(json_t *id, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* A JSON-RPC body is parsed with these flags: duplicate keys refused, any
 * top-level value, and U+0000 ("\u0000") allowed in a string -- valid JSON,
 * and canonical JSON keeps it (docs/store.md) -- so that a tool's arguments
 * may carry it; drpc_nul then refuses it anywhere else. */
#define DRPC_PARSE_FLAGS (JSON_REJECT_DUPLICATES | JSON_DECODE_ANY | JSON_ALLOW_NUL)
/* U+0000 is data, never a name: 0 when every string of msg holding one
 * sits under one of the data places (JSON pointers in which "#" stands for
 * any array index, e.g. "/params/arguments"; with batch, msg may be an array
 * of such messages); else 1, with where = the JSON pointer of the first
 * string (or key) holding one, for a refusal in the project's words. */
int drpc_nul(const json_t *msg, const char *const *data, int batch, char *where, size_t n);
/* A failure of this host (store I/O, integrity, out of memory): 500
 * Internal "internal store failure"; the cause goes to the log. An err of
 * WX_UNAVAILABLE answers 503 StoreUnavailable instead (below). */
void dresp_internal(struct dreq *rq, struct dresp *r, const char *what, const struct world_err *err);
/* The store's server cannot be reached (WX_UNAVAILABLE: a PostgreSQL store
 * whose server is down or whose connection was lost): 503
 * StoreUnavailable with Retry-After DAEMON_RETRY_AFTER_S. dresp_internal
 * answers this for such an err; the driver reconnects by itself on the
 * next request once the server is back. */
#define DAEMON_RETRY_AFTER_S 1
void dresp_store_unavailable(struct dresp *r);
/* HTTP status of an envelope class (docs/design.md §8.1). */
int dclass_status(const char *klass);
/* Class of a store error code on a read route (bad ref, not found, ...);
 * NULL for host failures, which answer Internal. */
const char *dclass_of_store(int code);


/* The credential check (Authorization: Bearer <64 hex>). With
 * allow_operator, the operator token is accepted too (*sess stays NULL).
 * Returns 0 when authorised (*sess is a session to free, or NULL for the
 * operator), -1 with r filled with the 401 envelope and its exact text:
 *   SessionAbsent   session credential is absent: send Authorization: Bearer <session-credential>
 *   SessionAbsent   malformed Authorization header: expected Bearer <64-hex-credential>
 *   SessionUnknown  unknown session credential
 *   SessionExpired  session credential has expired
 * or 500 on a store failure. With optional, an absent header is not an
 * error: 0 with *sess NULL and *present 0. */
int dauth(struct dreq *rq, struct dresp *r, int allow_operator, int optional, struct coord_session **sess,
          int *present);
/* dauth's two steps, also for the server's fair-share key (workers.c):
 * the credential of an Authorization header value ("Bearer", any case, one
 * or more spaces, exactly 64 lowercase hex), NULL when it is not that; and
 * whether a credential is the store's operator token (read from the store
 * on every request, so a `worldd token rotate` is seen at once). */
const char *dauth_bearer(const char *h);
/* The RFC 6750 challenge of a refused credential (docs/daemon.md,
 * "Credentials and MCP clients"; the metadata it points at is
 * mcp_resource_metadata's): a 401 envelope in r gets r->www_auth_hdr from
 * its class and text (anything else is left as it is). */
void dwww_authenticate(const struct dreq *rq, struct dresp *r);
/* 1 the operator token, 0 not, -1 the store could not say (*why: the error) */
int dauth_operator(struct dctx *d, const char *c, struct world_err *why);

/* Writes one line to the daemon's log (stderr), prefixed "worldd ". */
void dlog(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A log-safe copy of s: printable ASCII only, at most cap-1 bytes ("-" when empty). */
void dlog_safe(char *out, size_t cap, const char *s);

/* A reader handle of the pool (opened on first need), given back with
 * dreader_put. NULL + err when the store cannot be opened. */
struct world_store *dreader_get(struct dctx *d, struct world_err *err);
void dreader_put(struct dctx *d, struct world_store *st);
/* The preamble of a route that reads the store: when need_credential, a
 * session's credential or the operator token (dauth); then a reader handle.
 * NULL with r filled (the 401 envelope, or 500 "reader handle") when either
 * fails; else the handle, given back with dreader_put. */
struct world_store *dreader_authorised(struct dreq *rq, struct dresp *r, int need_credential);
/* Close every handle of the pool (shutdown). */
void dreader_pool_close(struct dctx *d);

/* ---- a response that stays open: the bytes queued for it (daemon/http.c) ----
 * The one machinery of the notification stream (GET /mcp/) and of live
 * responses (below): a libmicrohttpd callback response of unknown size
 * (chunked) whose reader, dsse_read, hands out what is queued and, with
 * nothing queued, suspends the connection (the reader and the access
 * handler are the only places its manual allows) and returns 0, so no
 * thread spins; dsse_push / dsse_end queue bytes or the end and resume
 * it. mu is the owner's lock: it guards every field, and the _locked
 * calls are made with it held. */
struct dsse {
	pthread_mutex_t *mu;
	struct MHD_Connection *conn;
	char *buf;
	size_t len, off, cap;
	int suspended;  /* the reader suspended the connection */
	int closing;    /* end it once the queue is sent */
};
/* Append and wake the connection: 0, or -1 when closing or out of memory (nothing queued). */
int dsse_push_locked(struct dsse *q, const char *bytes, size_t n);
/* The end: what is queued is still sent, then the response ends. */
void dsse_end_locked(struct dsse *q);
/* The reader of the callback response (takes q->mu). */
ssize_t dsse_read(struct dsse *q, char *buf, size_t max);

/* ---- answering progressively ----
 * A route on a call worker may start its response before it ends: status
 * 200 and ctype go out at once, then what dlive_push queues, then -- when
 * the route returns -- its dresp body (the final event), and the response
 * ends. The connection is parked (suspend/resume, as the notification
 * stream's) while nothing is queued. NULL when rq cannot (an HTTP thread,
 * out of memory): answer as usual. */
struct dlive;
struct dlive *dlive_start(struct dreq *rq, const char *ctype);
/* Queue bytes: 0, or -1 when the client has gone (nothing more is sent). */
int dlive_push(struct dlive *l, const char *bytes, size_t n);
/* When the client goes away before the end: fire c (may be NULL to stop). */
void dlive_cancel_on_gone(struct dlive *l, struct sup_cancel *c);

/* The server's side of a live response: what dlive_start needs of the
 * connection a call worker answers. The server's connection state
 * (daemon/server_internal.h, struct dconn) embeds one;
 * rq->seat points at it on a call worker (NULL on an HTTP thread). */
struct dlive_seat {
	struct MHD_Connection *conn;
	atomic_int answered; /* the worker has put its response in the connection state (1), or started a live one (2) */
	atomic_int refs;     /* 1: the connection's; 2 while a live response's worker still runs */
	struct dlive *live;  /* the live response (dlive_start), or NULL */
	const char *ctype;   /* its Content-Type */
};
/* For the server (edge.c, workers.c): the reader of the libmicrohttpd callback
 * response (cls: the dlive) and its free callback (libmicrohttpd is done
 * with the response: sent to its end, or the client left); dlive_abandon
 * when the response will never be made; dlive_end at the worker's end
 * (body, n bytes: the route's answer, the last bytes; returns whether the
 * client had gone), then dlive_put for the worker's reference. */
ssize_t dlive_reader(void *cls, uint64_t pos, char *buf, size_t max);
void dlive_free(void *cls);
void dlive_abandon(struct dlive *l);
int dlive_end(struct dlive *l, const char *body, size_t n);
void dlive_put(struct dlive *l);
#endif
