/* daemon/route.h: the contract between the HTTP server (daemon/server.c)
 * and the projections that answer its routes: the read routes
 * (daemon/reads.c), MCP (daemon/mcp.c) and A2A (daemon/a2a.c).
 *
 * Owns: struct dctx (what every request can reach: the coordinator, the
 * pool of reader store handles, the health facts),
 * struct dreq / struct dresp (one request in, one response out), and the
 * entry points of the projections. The helpers that fill a dresp (the
 * error envelope of docs/design.md §8.1 {"error":{"class","message"}} with
 * its HTTP statuses), read a dreq, check a credential or answer
 * progressively are daemon/http.h's, which the server and the projections
 * both use.
 *
 * A projection never touches libmicrohttpd's response objects: it fills a
 * struct dresp and the server sends it, logs it and frees it. Projections
 * run on the server's pool threads; everything reachable from dctx is safe
 * to use from several threads at once (the coordinator is shared, each
 * reader handle is used by one thread at a time via the pool). */
#ifndef WORLD_DAEMON_ROUTE_H
#define WORLD_DAEMON_ROUTE_H
#include <jansson.h>
#include <pthread.h>
#include <stddef.h>
#include <sys/types.h>
#include "coordinator/coordinator.h"
#include "common/error.h"
#include "common/ref.h"

struct MHD_Connection;
struct world_store;

#define DAEMON_VERSION "0.1.0"
#define DAEMON_MCP_BODY_MAX ((size_t)4 << 20) /* docs/design.md §10 */
#define DAEMON_A2A_BODY_MAX ((size_t)1 << 20) /* docs/design.md §10 */
#define DAEMON_GET_BODY_MAX ((size_t)64 << 10) /* GET routes take no body; anything more is refused */
#define DAEMON_LOG_PAGE_MAX 500               /* docs/design.md §10 */
#define DAEMON_TOKEN_HEX 64

struct dreader; /* one pooled reader handle */

struct dctx {
	struct coordinator *coord;
	struct world_store *writer;      /* owned by the server; only the coordinator writes */
	char db_path[4096];              /* what --store named (a URI may hold a password: never printed) */
	const char *password_file;       /* --store-password-file, for every reader's open */
	char interp_ref[WORLD_REF_SIZE];
	char interp_version[256];
	char base_url[300];              /* "http://HOST:PORT", for the A2A card */
	int open_reads;
	pthread_mutex_t pool_mu;         /* the reader pool */
	struct dreader *pool;            /* free handles */
	struct dreader *all;             /* every handle, closed at shutdown */
};

struct dhdr; /* a request's headers and arguments, copied for a call worker (daemon/http.h) */
struct dlive_seat; /* daemon/http.h */

struct dreq {
	struct dctx *d;
	struct dlive_seat *seat;         /* the server's connection state on a call worker (dlive_start), or NULL */
	struct MHD_Connection *conn;     /* NULL on a call worker: hdrs holds the copies */
	const struct dhdr *hdrs;
	size_t nhdrs;
	const char *method;              /* "GET", "POST", ... */
	const char *path;                /* decoded URL path, no query */
	const char *body;                /* NUL-terminated for convenience */
	size_t body_len;
	char invocation_id[256];         /* set by a projection for the request log ("" = none) */
	char note[128];                  /* extra log text, e.g. the JSON-RPC method */
	char timing[128];                /* " capsule_ms=.. broker_ms=.. commit_ms=.." of a call ("" = none) */
	unsigned long long job;          /* its job's sequence number on a call worker (struct djob), 0 = none */
	/* A2A CancelTask on a worker: what a2a_cancel_early did on the HTTP
	 * thread before it was queued (early: it ran; fired: calls in flight
	 * fired; pend: the pending cancel it left, 0 = none) */
	int cancel_early, cancel_fired;
	unsigned long long cancel_pend;
};

struct dresp {
	int status;                      /* HTTP status */
	char *body;                      /* malloc'd; NULL = empty */
	size_t len;
	const char *ctype;               /* static string; NULL when body is NULL */
	const char *allow;               /* 405: the Allow header */
	int www_auth;                    /* 401: add WWW-Authenticate: Bearer */
	char www_auth_hdr[640];          /* 401: that header's whole value, when dauth filled it ("" = "Bearer") */
	int retry_after_s;               /* 503 StoreUnavailable: a Retry-After header of that many seconds (0 = none) */
	char location[600];              /* 307 NotHome: the Location header, the home's URL (daemon/home.h; "" = none) */
};

/* TEST ENTRY (tests/fuzz/fuzz_http.c): server.c's route dispatch of one
 * whole request (method, decoded path, copied headers and query arguments
 * in rq->hdrs with conn NULL, body): what run_route does on a call worker.
 * The product never calls it. */
void daemon_dispatch_for_test(struct dreq *rq, struct dresp *r);

/* The same as dreader_authorised (daemon/http.h), in daemon/reads.c, also
 * handing back who reads: *sess is the session (free with
 * coord_session_free), or NULL for the operator token
 * and, without need_credential (--open-reads), for anyone. A read route
 * shows a session only its own episode's data (scoped reads, docs/daemon.md);
 * NULL sees everything. */
struct world_store *dreader_scoped(struct dreq *rq, struct dresp *r, int need_credential, struct coord_session **sess);

/* MCP tool name of a transition id (registry_tool_name, docs/design.md §7);
 * 0, or -1 when the escaped name is over 64 bytes. */
int dtool_name(const char *id, char out[65]);
/* What a published transition is and what its committed output says
 * (daemon/mcp.c; docs/daemon.md, "Tool annotations" / "Tool results"):
 * the MCP ToolAnnotations of a descriptor, derived from its declared
 * effects; and the verdict on an output: 0 conforms and succeeded,
 * 1 reports failure ("ok": false), 2 violates the descriptor's
 * outputSchema, 3 an effect was denied by the broker and the output does
 * not say "ok": true (a refusal) -- why gets the reason
 * ("POINTER: RULE" for 2). */
json_t *dtool_annotations(const json_t *dsc);
int dresult_verdict(const json_t *dsc, const json_t *output, char *why, size_t n);

/* ---- calls in flight, and cancelling them (daemon/calls.c) ----
 * A call a cancel can reach: its owner ("mcp:CREDENTIAL-ID" or
 * "a2a:EPISODE"), its key (the MCP request id as "s:ID" / "i:N", the A2A
 * task id) and the cancel handle its coord_call watches. Registered on the
 * caller's stack for the call's duration. */
struct dcall {
	char owner[80], key[300];
	struct sup_cancel cancel;
	int fired;                       /* under the registry's lock */
	char reason[200];                /* the canceller's reason ("" = none given) */
	char context[160];               /* an A2A task's contextId (SubscribeToTask shows it); "" for MCP */
	struct dcall *next;
};
/* Register c for a call of the job numbered job (rq->job; 0 = not a
 * queued request): 1 when a pending cancel was waiting for it -- the call
 * starts with its handle fired (c->reason says why) --, 0 when not, -1 +
 * err when the handle cannot be made (the call is not cancellable). */
int dcall_begin(struct dcall *c, const char *owner, const char *key, unsigned long long job, struct world_err *err);
void dcall_end(struct dcall *c);
/* Fire the cancel of every call of owner with key: how many were fired.
 * With pend, when none was in flight and owner has a job outstanding
 * that arrived before this cancel (other than self, the canceller's own
 * job), the cancel is kept for it (a pending cancel, daemon/calls.c) and
 * *pend is its id (0 = none kept); with await, dcall_pend_wait collects
 * its outcome. */
int dcall_cancel(const char *owner, const char *key, const char *reason, unsigned long long self, int await,
                 unsigned long long *pend);
int dcall_fire(const char *owner, const char *key, const char *reason);
/* Set c's context (an A2A task's contextId), under the registry's lock. */
void dcall_set_context(struct dcall *c, const char *context);
/* Whether a call of owner with key is registered: 1 (its context copied
 * into context, n bytes), 0 not. */
int dcall_lookup(const char *owner, const char *key, char *context, size_t n);
/* Wait until no call of owner with key is registered (at most ms): 0, or -1 on time out. */
int dcall_wait_gone(const char *owner, const char *key, unsigned ms);
/* Wait (at most ms) for the outcome of the awaited pending cancel id: 1 a
 * call took it and has ended, 0 it was dropped (no such call waited), -1
 * time out (it stays pending; nobody waits for it any more). */
int dcall_pend_wait(unsigned long long id, unsigned ms);
/* A request handed to the call workers, from queued until its route
 * returned: its owner (as a dcall's: "mcp:CREDENTIAL-ID", "a2a:EPISODE",
 * "" for others) and its number in arrival order (set by begin). */
struct djob {
	char owner[80];
	unsigned long long seq;
	struct djob *next;
};
void dcall_job_begin(struct djob *j, const char *owner);
void dcall_job_end(struct djob *j);
/* A2A CancelTask / tasks/cancel on the HTTP thread, before it is queued
 * (daemon/a2a.c): with a live credential, fires the named task's call in
 * flight or leaves a pending cancel for it, and says so in rq's cancel_*
 * fields, which the worker's CancelTask reads. Answers nothing. */
void a2a_cancel_early(struct dreq *rq);

/* The projections. Each answers one request completely. */
void reads_handle(struct dreq *rq, struct dresp *r);       /* GET /v1/... */
void replay_handle(struct dreq *rq, struct dresp *r);      /* POST /v1/replay/{index} (daemon/replay_route.c) */
void mcp_handle(struct dreq *rq, struct dresp *r);         /* POST /mcp/ */
/* GET /.well-known/oauth-protected-resource[/mcp/] (RFC 9728; the
 * challenge that points at it is daemon/http.h's dwww_authenticate). */
void mcp_resource_metadata(struct dreq *rq, struct dresp *r);
/* The OAuth authorization-server paths a client tries after a 401
 * (/register, /authorize, /token, /.well-known/oauth-authorization-server,
 * /.well-known/openid-configuration...): 0 with r = 404 NotFound saying
 * that worldd is no authorization server and why the credential sent, if
 * any, was refused; -1 (r untouched) for any other path. */
int mcp_not_oauth(struct dreq *rq, struct dresp *r);
void a2a_card(struct dreq *rq, struct dresp *r, int v1);   /* GET /.well-known/agent(-card).json */
void a2a_handle(struct dreq *rq, struct dresp *r);         /* POST /a2a/ */

/* GET /mcp/: the notification stream (daemon/stream.c; docs/daemon.md,
 * "The notification stream"). Answered on an HTTP thread: 0 with *resp a
 * text/event-stream response to queue (it stays open), or -1 with r the
 * refusal (401, 406, 405 under 2026-07-28, 400, 503 Capacity over a cap). */
#define STREAMS_MAX 32          /* open streams, all sessions together */
#define STREAMS_PER_SESSION 4   /* open streams of one session credential */
#define STREAM_KEEPALIVE_S 15   /* an SSE comment after this long without a byte */
#define STREAM_POLL_MS 200      /* how often the stream thread asks what changed */
struct MHD_Response;
int mcp_stream_open(struct dreq *rq, struct dresp *r, struct MHD_Connection *conn, struct MHD_Response **resp);
/* POST /mcp/ subscriptions/listen (2026-07-28): the same stream, opened by
 * a request whose JSON-RPC id is the subscription id; answered on an HTTP
 * thread as GET /mcp/ is: 0 with *resp, or -1 with r the answer (every
 * check of a POST, then the caps). mcp_listen_body says whether a POST
 * body is one (the server routes it here instead of to a call worker). */
int mcp_listen_open(struct dreq *rq, struct dresp *r, struct MHD_Connection *conn, struct MHD_Response **resp);
int mcp_listen_body(const char *body, size_t len);
/* daemon/mcp.c: every check of a POST of rq (mcp_handle's) for a
 * subscriptions/listen: 0 with *sess (to free), *id (a reference: the
 * subscription id) and whether its filter asks for tools, resources and
 * prompts list changes, and *task_ids (a reference, or NULL): the tasks
 * whose status it asks for (daemon/mcp_tasks.h);
 * -1 with r the answer (a refusal, or any other request's answer). */
int mcp_listen_check(struct dreq *rq, struct dresp *r, struct coord_session **sess, json_t **id, int *tools,
                     int *resources, int *prompts, json_t **task_ids);
/* The stream thread (start after the coordinator exists), and the end of
 * every stream (before libmicrohttpd stops: each is resumed and ends). */
int mcp_streams_start(struct dctx *d, struct world_err *err);
void mcp_streams_stop(void);
#endif
