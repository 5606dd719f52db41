/* daemon/mcp_tasks.h: the MCP Tasks extension (io.modelcontextprotocol/tasks,
 * SEP-2663, protocol revision 2026-07-28) over the daemon's calls.
 *
 * Owns: the table of MCP tasks (each a tools/call running on a thread of
 * its own under the call's World task id: the MCP taskId IS the call's
 * task id, its invocation "mcp:EPISODE:TASKID"), the decision to answer a
 * call as a task (its descriptor's execution.taskSupport and the
 * request's declared extension), the methods tasks/get, tasks/update and
 * tasks/cancel (cancel fires the call's cancel handle, daemon/calls.c, as
 * notifications/cancelled does), and the status changes a
 * subscriptions/listen naming taskIds is told of. A task is its creator's:
 * another credential's tasks/get of it is "unknown task". The table is in
 * memory: a restart forgets tasks (the committed calls stay: a tools/call
 * again with the same world/task_id answers the committed result). */
#ifndef WORLD_DAEMON_MCP_TASKS_H
#define WORLD_DAEMON_MCP_TASKS_H
#include <jansson.h>
#include "daemon/route.h"

#define MTASK_EXTENSION "io.modelcontextprotocol/tasks"
#define MTASK_MISSING_CAPABILITY (-32021) /* MissingRequiredClientCapabilityError (HTTP 400) */
#define MTASK_MAX 256                      /* tasks kept at once (over it, with none over: -32603 Capacity) */
#define MTASK_TTL_MS 600000                /* a task is kept this long after it was created */
#define MTASK_POLL_MS 250                  /* the poll interval a task suggests */

/* Whether a request's params._meta client capabilities declare the extension. */
int mtask_declared(const json_t *params);

/* tools/call of the visible descriptor tool (mcp.c's tools_call, after
 * every check before the call runs): NULL when the call runs on its
 * request (the tool declares no task support, or "optional" and the
 * request did not declare the extension); else the answer -- a
 * CreateTaskResult, the call going on on a task thread with params as the
 * request's and params._meta["world/task_id"] the task's id (task, or a
 * fresh random one), having taken *sess (NULL after); or -32021 (with
 * *http_status 400) for a "required" tool and a request that did not
 * declare the extension; or -32603 when no task could be started. */
json_t *mtask_call(struct dreq *rq, struct coord_session **sess, const json_t *tool, json_t *id, const json_t *params,
                   const char *task, int *http_status);

/* tasks/get, tasks/update, tasks/cancel of a 2026-07-28 request (any
 * other tasks/ method is the caller's -32601): the answer; *http_status
 * 400 for the missing extension (-32021). */
json_t *mtask_rpc(struct dreq *rq, const struct coord_session *sess, const char *method, json_t *id,
                  const json_t *params, int *http_status);

/* A subscriptions/listen whose filter names taskIds: NULL when it may
 * (the request declares the extension, ids is an array of task id
 * strings), else the answer (-32021 with *http_status 400, or -32602). */
json_t *mtask_listen_check(json_t *id, const json_t *params, const json_t *ids, int *http_status);

/* The task status notifications of a listen (daemon/stream.c): for each
 * task of owner ("mcp:CREDENTIAL-ID") named in ids whose state changed
 * after *seen, its notifications/tasks params (a DetailedTask) appended
 * to out; *seen moves to the newest change. */
void mtask_changes(const char *owner, const json_t *ids, unsigned long long *seen, json_t *out);
unsigned long long mtask_generation(void);

/* At the daemon's stop, after the call workers and before the coordinator
 * goes: no new task; a task waiting for input ends cancelled; returns once
 * every task thread has ended (each call ends within its deadline). */
void mtask_stop(void);

/* mcp.c: run one tools/call for a task on its thread (modern checks
 * already passed): the whole JSON-RPC answer with id, or NULL when the
 * call was cancelled (*cancelled 1). job: the task's djob (calls.c). */
json_t *mcp_task_run(struct dctx *d, const struct coord_session *sess, json_t *id, json_t *params,
                     unsigned long long job, int *cancelled);
#endif
