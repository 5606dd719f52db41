/* daemon/mcp_tasks.c: the MCP Tasks extension (daemon/mcp_tasks.h;
 * docs/daemon.md, "Tasks").
 *
 * A transition's descriptor says whether its calls run as tasks:
 * "execution": {"taskSupport": "optional" | "required"} (world-publish
 * checks it; none, or "forbidden", never). A tools/call of such a tool
 * whose request declares io.modelcontextprotocol/tasks in its per-request
 * capabilities is answered at once with a CreateTaskResult (SEP-2663: the
 * server decides; the task is in the table before the answer names it)
 * and runs on a thread of its own under its World task id -- the client's
 * params._meta["world/task_id"], else a fresh random one: the MCP taskId
 * and the call's invocation "mcp:EPISODE:TASKID" are the same id. A
 * request that does not declare the extension runs an "optional" tool on
 * itself, as ever, and is refused a "required" one (-32021, HTTP 400,
 * data.requiredCapabilities). tasks/get shows a task (status, and once
 * over the result inlined, or the error), tasks/cancel fires its cancel
 * handle (daemon/calls.c: owner "mcp:CREDENTIAL-ID", key "s:TASKID"; a
 * cancel before the call registered waits for it as a pending cancel,
 * the task's own job having arrived before it). A task whose call asks
 * its caller first (the descriptor's inputRequests, daemon/mcp_input.h)
 * shows input_required with the requests; tasks/update answers them, and
 * the call is made again on the task's thread with the answers.
 *
 * The outcome: a call whose output committed is "completed" -- its result
 * is the tools/call result, isError when the output reports failure; a
 * call that ended without a commit (the transition failed, broke its
 * output contract, ran out of time, the store failed) is "failed" with a
 * JSON-RPC error naming the class; a cancelled one is "cancelled".
 *
 * One mutex guards the table; nothing is held across a call. */
#include "daemon/mcp_tasks.h"
#include "daemon/http.h"
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#define META_CAPS "io.modelcontextprotocol/clientCapabilities"

enum { T_WORKING, T_INPUT_REQUIRED, T_COMPLETED, T_FAILED, T_CANCELLED };
static const char *const status_name[] = { "working", "input_required", "completed", "failed", "cancelled" };

struct mtask {
	int used;
	char id[129];           /* the taskId: the call's World task id */
	char owner[80];         /* "mcp:CREDENTIAL-ID" */
	int status;             /* T_* */
	long long created_ms, updated_ms;
	json_t *result, *error; /* completed: the CallToolResult; failed: the JSON-RPC error */
	json_t *asks;           /* input_required: the requests not answered yet (inputRequests) */
	json_t *answers;        /* input_required: the answers tasks/update gave this round */
	int cancel_asked;       /* tasks/cancel came: a task waiting for input ends cancelled */
	char message[300];      /* statusMessage ("" = none) */
	int done;               /* its thread has ended */
	unsigned long long gen; /* T.gen at its last change */
};

static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	unsigned long long gen;
	unsigned running;       /* task threads not ended yet */
	int stopping;           /* mtask_stop: no new task; one waiting for input ends */
	struct mtask t[MTASK_MAX];
} T = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0, { { 0 } } };

struct run {
	struct dctx *d;
	struct coord_session *sess;
	json_t *params;
	int slot;
	char id[129];
	struct djob job;
};

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void iso(long long ms, char out[32])
{
	time_t s = (time_t)(ms / 1000);
	struct tm tm;
	gmtime_r(&s, &tm);
	char b[24];
	strftime(b, sizeof b, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out, 32, "%s.%03dZ", b, (int)(ms % 1000));
}

int mtask_declared(const json_t *params)
{
	const json_t *caps = json_object_get(json_object_get(params, "_meta"), META_CAPS);
	return json_is_object(json_object_get(json_object_get(caps, "extensions"), MTASK_EXTENSION));
}

static json_t *rpc(json_t *id, json_t *result)
{
	return json_pack("{s:s,s:O,s:o}", "jsonrpc", "2.0", "id", id ? id : json_null(), "result", result);
}

/* under T.mu: the slot of owner's task id, or -1; an expired one that is
 * over is dropped (unknown from then on) */
static int find(const char *owner, const char *id)
{
	long long now = now_ms();
	for (int i = 0; i < MTASK_MAX; i++) {
		struct mtask *t = &T.t[i];
		if (!t->used || strcmp(t->id, id) != 0 || strcmp(t->owner, owner) != 0) continue;
		if (t->done && now - t->created_ms > MTASK_TTL_MS) {
			json_decref(t->result);
			json_decref(t->error);
			json_decref(t->asks);
			json_decref(t->answers);
			memset(t, 0, sizeof *t);
			return -1;
		}
		return i;
	}
	return -1;
}

/* under T.mu: a slot for a new task -- a free one, else the oldest task
 * that is over and past its TTL, else the oldest that is over; -1 none */
static int claim(void)
{
	int old = -1, expired = -1;
	long long now = now_ms();
	for (int i = 0; i < MTASK_MAX; i++) {
		struct mtask *t = &T.t[i];
		if (!t->used) return i;
		if (!t->done) continue;
		if (now - t->created_ms > MTASK_TTL_MS && (expired < 0 || t->created_ms < T.t[expired].created_ms)) expired = i;
		if (old < 0 || t->created_ms < T.t[old].created_ms) old = i;
	}
	int i = expired >= 0 ? expired : old;
	if (i >= 0) {
		json_decref(T.t[i].result);
		json_decref(T.t[i].error);
		json_decref(T.t[i].asks);
		json_decref(T.t[i].answers);
		memset(&T.t[i], 0, sizeof T.t[i]);
	}
	return i;
}

/* under T.mu: the Task of a slot; detailed: its result, error or input
 * requests as its status has them (DetailedTask) */
static json_t *task_json(const struct mtask *t, int detailed)
{
	char c[32], u[32];
	iso(t->created_ms, c);
	iso(t->updated_ms, u);
	json_t *o = json_pack("{s:s,s:s,s:s,s:s,s:I,s:I}", "taskId", t->id, "status", status_name[t->status], "createdAt", c,
	                      "lastUpdatedAt", u, "ttlMs", (json_int_t)MTASK_TTL_MS, "pollIntervalMs",
	                      (json_int_t)MTASK_POLL_MS);
	if (!o) return NULL;
	if (t->message[0]) json_object_set_new(o, "statusMessage", json_string(t->message));
	/* copies: an answer is built and freed on other threads than the
	 * table's values */
	if (detailed && t->status == T_COMPLETED && t->result) json_object_set_new(o, "result", json_deep_copy(t->result));
	if (detailed && t->status == T_FAILED && t->error) json_object_set_new(o, "error", json_deep_copy(t->error));
	if (detailed && t->status == T_INPUT_REQUIRED && t->asks)
		json_object_set_new(o, "inputRequests", json_deep_copy(t->asks));
	return o;
}

/* The end of a task's call: its status from the answer (mcp_task_run's). */
static void settle(int slot, const char *id, json_t *answer, int cancelled)
{
	pthread_mutex_lock(&T.mu);
	struct mtask *t = &T.t[slot];
	if (!t->used || strcmp(t->id, id) != 0) { /* cannot happen: a running task's slot is never claimed */
		pthread_mutex_unlock(&T.mu);
		json_decref(answer);
		return;
	}
	json_t *res = json_object_get(answer, "result");
	json_t *err = json_object_get(answer, "error");
	json_decref(t->asks);
	json_decref(t->answers);
	t->asks = t->answers = NULL;
	if (cancelled || !answer) {
		t->status = T_CANCELLED;
		snprintf(t->message, sizeof t->message, "cancelled (tasks/cancel): the call stopped; nothing of it was committed");
	} else if (err) {
		t->status = T_FAILED;
		t->error = json_incref(err);
		snprintf(t->message, sizeof t->message, "%.280s", json_string_value(json_object_get(err, "message")));
	} else if (json_is_true(json_object_get(res, "isError")) &&
	           !json_object_get(json_object_get(res, "_meta"), "world/invocation")) {
		/* no receipt: the call ended before its commit (a tool_error of
		 * mcp.c), a protocol-level failure to the task */
		json_t *we = json_object_get(json_object_get(res, "_meta"), "world/error");
		const char *klass = json_string_value(json_object_get(we, "class"));
		const char *text = json_string_value(json_object_get(json_array_get(json_object_get(res, "content"), 0), "text"));
		t->status = T_FAILED;
		t->error = json_pack("{s:i,s:s,s:O}", "code", klass && strcmp(klass, "BadRequest") == 0 ? -32602 : -32603,
		                     "message", text ? text : "the call failed", "data", we ? we : json_null());
		snprintf(t->message, sizeof t->message, "%.280s", text ? text : "the call failed");
	} else {
		t->status = T_COMPLETED;
		t->result = json_incref(res);
		if (res && !json_object_get(res, "resultType")) json_object_set_new(res, "resultType", json_string("complete"));
	}
	t->done = 1;
	t->updated_ms = now_ms();
	t->gen = ++T.gen;
	json_decref(answer);
	char safe[320];
	snprintf(safe, sizeof safe, "%s", t->message);
	for (char *q = safe; *q; q++)
		if (*q < 0x20 || *q > 0x7e) *q = '?';
	dlog("task task_id=%s status=%s%s%s", t->id, status_name[t->status], safe[0] ? ": " : "", safe);
	pthread_cond_broadcast(&T.cv);
	pthread_mutex_unlock(&T.mu);
}

/* A task's call asks its caller (an InputRequiredResult of daemon/mcp_input.c,
 * the descriptor's inputRequests): the task shows input_required with the
 * requests, tasks/update answers them (one at a time or together), and
 * once every one is answered the call is made again with the answers and
 * the request state, which stays here (SEP-2663's Task has no
 * requestState). 1: answered (*responses set); 0: cancelled; -1: no
 * answer within the task's TTL. */
static int await_input(int slot, const char *id, const json_t *asks, json_t **responses)
{
	pthread_mutex_lock(&T.mu);
	struct mtask *t = &T.t[slot];
	json_decref(t->asks);
	json_decref(t->answers);
	t->asks = json_deep_copy(asks);
	t->answers = json_object();
	t->status = T_INPUT_REQUIRED;
	snprintf(t->message, sizeof t->message, "waiting for %zu answer(s) (tasks/update)", json_object_size(asks));
	t->updated_ms = now_ms();
	t->gen = ++T.gen;
	dlog("task task_id=%s status=input_required: %zu request(s)", id, json_object_size(asks));
	long long until = t->created_ms + MTASK_TTL_MS;
	struct timespec dl = { (time_t)(until / 1000), (long)(until % 1000) * 1000000 };
	int rc = 1;
	while (!t->cancel_asked && !T.stopping && t->asks && json_object_size(t->asks) > 0) {
		if (pthread_cond_timedwait(&T.cv, &T.mu, &dl) == ETIMEDOUT) { rc = -1; break; }
	}
	if (t->cancel_asked || T.stopping) rc = 0;
	*responses = rc == 1 ? t->answers : NULL;
	if (rc != 1) json_decref(t->answers);
	json_decref(t->asks);
	t->asks = t->answers = NULL;
	t->status = T_WORKING;
	t->message[0] = 0;
	t->updated_ms = now_ms();
	t->gen = ++T.gen;
	pthread_mutex_unlock(&T.mu);
	return rc;
}

static void *runner(void *arg)
{
	struct run *r = arg;
	int cancelled = 0;
	json_t *id = json_string(r->id);
	json_t *a = NULL;
	for (int round = 0; id; round++) {
		a = mcp_task_run(r->d, r->sess, id, r->params, r->job.seq, &cancelled);
		json_t *res = json_object_get(a, "result");
		const char *rt = json_string_value(json_object_get(res, "resultType"));
		if (cancelled || !rt || strcmp(rt, "input_required") != 0) break;
		json_t *asks = json_object_get(res, "inputRequests");
		const char *state = json_string_value(json_object_get(res, "requestState"));
		json_t *responses = NULL;
		int got = json_is_object(asks) && state && round < 64 ? await_input(r->slot, r->id, asks, &responses) : -1;
		if (got == 1 && json_object_set_new(r->params, "inputResponses", responses) == 0 &&
		    json_object_set_new(r->params, "requestState", json_string(state)) == 0) {
			json_decref(a);
			continue;
		}
		json_decref(a);
		if (got == 0) { a = NULL; cancelled = 1; break; }
		a = json_pack("{s:s,s:O,s:{s:i,s:s}}", "jsonrpc", "2.0", "id", id, "error", "code", -32603, "message",
		              got < 0 ? "the task's input was not given within its time to live" : "Internal: out of memory");
		break;
	}
	if (!id) a = json_pack("{s:s,s:n,s:{s:i,s:s}}", "jsonrpc", "2.0", "id", "error", "code", -32603, "message",
	                       "Internal: out of memory");
	settle(r->slot, r->id, a, cancelled);
	dcall_job_end(&r->job);
	json_decref(id);
	json_decref(r->params);
	coord_session_free(r->sess);
	free(r);
	pthread_mutex_lock(&T.mu);
	T.running--;
	pthread_cond_broadcast(&T.cv);
	pthread_mutex_unlock(&T.mu);
	return NULL;
}

void mtask_stop(void)
{
	pthread_mutex_lock(&T.mu);
	T.stopping = 1;
	pthread_cond_broadcast(&T.cv);
	if (T.running) dlog("stop: waiting for %u task(s): their calls end within their deadlines", T.running);
	while (T.running > 0) pthread_cond_wait(&T.cv, &T.mu);
	pthread_mutex_unlock(&T.mu);
}

static json_t *create_result(json_t *id, const struct mtask *t)
{
	json_t *o = task_json(t, 0);
	if (!o) return drpc_error(id, -32603, "Internal: out of memory");
	json_object_set_new(o, "resultType", json_string("task"));
	return rpc(id, o);
}

/* The descriptor's execution.taskSupport: 0 forbidden (or none), 1 optional, 2 required. */
static int task_support(const json_t *tool)
{
	const char *ts = json_string_value(json_object_get(json_object_get(tool, "execution"), "taskSupport"));
	return !ts ? 0 : strcmp(ts, "required") == 0 ? 2 : strcmp(ts, "optional") == 0 ? 1 : 0;
}

static json_t *missing_extension(json_t *id, const char *what, int *http_status)
{
	*http_status = 400;
	json_t *e = drpc_error(id, MTASK_MISSING_CAPABILITY,
	                       "missing required client capability: %s needs the extension %s declared in "
	                       "params._meta[\"%s\"].extensions",
	                       what, MTASK_EXTENSION, META_CAPS);
	json_object_set_new(json_object_get(e, "error"), "data",
	                    json_pack("{s:{s:{s:{}}}}", "requiredCapabilities", "extensions", MTASK_EXTENSION));
	return e;
}

json_t *mtask_call(struct dreq *rq, struct coord_session **sess, const json_t *tool, json_t *id, const json_t *params,
                   const char *task, int *http_status)
{
	int support = task_support(tool);
	if (!support) return NULL;
	if (!mtask_declared(params)) {
		if (support < 2) return NULL; /* optional: the call runs on its request */
		snprintf(rq->note, sizeof rq->note, "tools/call,error=MissingCapability");
		return missing_extension(id, "this tool (execution.taskSupport \"required\")", http_status);
	}
	char tid[129], owner[80], episode[65];
	if (task) snprintf(tid, sizeof tid, "%s", task);
	else {
		unsigned char b[16];
		ssize_t n = getrandom(b, sizeof b, 0);
		if (n != (ssize_t)sizeof b) {
			dlog("error route=/mcp/: task id: getrandom: %s", n < 0 ? strerror(errno) : "short read");
			return drpc_error(id, -32603, "Internal: no task id could be drawn");
		}
		for (size_t i = 0; i < sizeof b; i++) snprintf(tid + 2 * i, 3, "%02x", b[i]);
	}
	snprintf(owner, sizeof owner, "mcp:%s", (*sess)->credential_id);
	snprintf(episode, sizeof episode, "%s", (*sess)->episode);
	pthread_mutex_lock(&T.mu);
	int slot = find(owner, tid);
	if (slot >= 0) {
		/* the same world/task_id again while its task is kept: that task */
		json_t *a = create_result(id, &T.t[slot]);
		pthread_mutex_unlock(&T.mu);
		snprintf(rq->note, sizeof rq->note, "tools/call,task=%.64s,again", tid);
		return a;
	}
	if (T.stopping) {
		pthread_mutex_unlock(&T.mu);
		return drpc_error(id, -32603, "Unavailable: the daemon is stopping");
	}
	slot = claim();
	if (slot < 0) {
		pthread_mutex_unlock(&T.mu);
		dlog("error route=/mcp/: no task slot free (%d tasks running)", MTASK_MAX);
		return drpc_error(id, -32603, "Capacity: %d tasks are running; retry later", MTASK_MAX);
	}
	struct mtask *t = &T.t[slot];
	t->used = 1;
	snprintf(t->id, sizeof t->id, "%s", tid);
	snprintf(t->owner, sizeof t->owner, "%s", owner);
	t->status = T_WORKING;
	t->created_ms = t->updated_ms = now_ms();
	t->gen = ++T.gen;
	T.running++;
	/* in the table before the answer names it: a tasks/get at once finds it */
	json_t *a = create_result(id, t);
	pthread_mutex_unlock(&T.mu);

	struct run *r = calloc(1, sizeof *r);
	json_t *p = json_deep_copy(params);
	json_t *meta = json_object_get(p, "_meta");
	if (!json_is_object(meta) && p) { meta = json_object(); json_object_set_new(p, "_meta", meta); }
	int ok = a && r && p && meta && json_object_set_new(meta, "world/task_id", json_string(tid)) == 0;
	if (ok) {
		r->d = rq->d;
		r->sess = *sess;
		r->params = p;
		r->slot = slot;
		snprintf(r->id, sizeof r->id, "%s", tid);
		/* the task's own job: a tasks/cancel before its call registers
		 * is kept for it (daemon/calls.c, pending cancels) */
		dcall_job_begin(&r->job, owner);
		pthread_attr_t at;
		pthread_t th;
		int e = pthread_attr_init(&at);
		if (e == 0) {
			e = pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
			if (e == 0) e = pthread_create(&th, &at, runner, r);
			pthread_attr_destroy(&at);
		}
		if (e != 0) {
			dlog("error route=/mcp/: task %s: pthread_create: %s", tid, strerror(e));
			dcall_job_end(&r->job);
			ok = 0;
		}
	}
	if (!ok) {
		json_decref(a);
		json_decref(p);
		free(r);
		pthread_mutex_lock(&T.mu);
		memset(t, 0, sizeof *t);
		T.running--;
		pthread_cond_broadcast(&T.cv);
		pthread_mutex_unlock(&T.mu);
		return drpc_error(id, -32603, "Internal: the task could not be started");
	}
	*sess = NULL; /* the task's thread frees it */
	snprintf(rq->note, sizeof rq->note, "tools/call,task=%.64s", tid);
	snprintf(rq->invocation_id, sizeof rq->invocation_id, "mcp:%s:%s", episode, tid);
	return a;
}

json_t *mtask_rpc(struct dreq *rq, const struct coord_session *sess, const char *method, json_t *id,
                  const json_t *params, int *http_status)
{
	if (!mtask_declared(params)) return missing_extension(id, method, http_status);
	const char *tid = json_string_value(json_object_get(params, "taskId"));
	if (!tid) return drpc_error(id, -32602, "%s needs params.taskId (a string)", method);
	int update = strcmp(method, "tasks/update") == 0;
	if (update && !json_is_object(json_object_get(params, "inputResponses")))
		return drpc_error(id, -32602, "tasks/update needs params.inputResponses (an object)");
	char owner[80];
	snprintf(owner, sizeof owner, "mcp:%s", sess->credential_id);
	pthread_mutex_lock(&T.mu);
	int slot = find(owner, tid);
	if (slot < 0) {
		pthread_mutex_unlock(&T.mu);
		return drpc_error(id, -32602, "unknown task \"%.128s\" (no task of this session has that id)", tid);
	}
	struct mtask *t = &T.t[slot];
	if (strcmp(method, "tasks/get") == 0) {
		json_t *o = task_json(t, 1);
		pthread_mutex_unlock(&T.mu);
		return o ? rpc(id, o) : drpc_error(id, -32603, "Internal: out of memory");
	}
	int running = !t->done;
	if (update) {
		/* answers to the requests still open; any other key is ignored */
		const char *k;
		json_t *v;
		size_t n = 0;
		json_object_foreach((json_t *)json_object_get(params, "inputResponses"), k, v) {
			if (t->status != T_INPUT_REQUIRED || !t->asks || !json_object_get(t->asks, k)) continue;
			json_object_set_new(t->answers, k, json_deep_copy(v));
			json_object_del(t->asks, k);
			n++;
		}
		if (n) {
			t->updated_ms = now_ms();
			t->gen = ++T.gen;
			pthread_cond_broadcast(&T.cv);
		}
		pthread_mutex_unlock(&T.mu);
		return rpc(id, json_object());
	}
	/* tasks/cancel: an ack; the status settles when the call stops */
	if (running) {
		t->cancel_asked = 1;
		pthread_cond_broadcast(&T.cv);
	}
	pthread_mutex_unlock(&T.mu);
	if (running) {
		unsigned long long pend = 0;
		char key[140];
		snprintf(key, sizeof key, "s:%s", tid);
		int n = dcall_cancel(owner, key, "tasks/cancel", rq->job, 0, &pend);
		dlog("cancel task_id=%s: %s", tid, n ? "the call in flight is cancelled"
		                                     : pend ? "kept for the task's call (not registered yet)"
		                                            : "no call in flight (waiting for input, or ended)");
	}
	return rpc(id, json_object());
}

json_t *mtask_listen_check(json_t *id, const json_t *params, const json_t *ids, int *http_status)
{
	if (!mtask_declared(params)) return missing_extension(id, "subscriptions/listen's taskIds", http_status);
	size_t i;
	json_t *v;
	int ok = json_is_array(ids) && json_array_size(ids) <= MTASK_MAX;
	json_array_foreach(ids, i, v) ok = ok && json_is_string(v) && json_string_length(v) >= 1 && json_string_length(v) <= 128;
	if (!ok)
		return drpc_error(id, -32602, "subscriptions/listen: params.notifications.taskIds must be an array of at most %d "
		                  "task ids (strings of 1 to 128 bytes)", MTASK_MAX);
	return NULL;
}

unsigned long long mtask_generation(void)
{
	pthread_mutex_lock(&T.mu);
	unsigned long long g = T.gen;
	pthread_mutex_unlock(&T.mu);
	return g;
}

void mtask_changes(const char *owner, const json_t *ids, unsigned long long *seen, json_t *out)
{
	pthread_mutex_lock(&T.mu);
	for (int i = 0; i < MTASK_MAX; i++) {
		struct mtask *t = &T.t[i];
		if (!t->used || t->gen <= *seen || strcmp(t->owner, owner) != 0) continue;
		size_t k;
		json_t *v;
		int named = 0;
		json_array_foreach(ids, k, v) named |= json_is_string(v) && strcmp(json_string_value(v), t->id) == 0;
		if (!named) continue;
		json_t *o = task_json(t, 1);
		if (o) json_array_append_new(out, o);
	}
	*seen = T.gen;
	pthread_mutex_unlock(&T.mu);
}
