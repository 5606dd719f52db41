/* daemon/a2a.c: the A2A projection (docs/design.md §8.1): the agent card at
 * GET /.well-known/agent.json (the reference's card) and
 * /.well-known/agent-card.json (the same plus the A2A 1.0
 * supportedInterfaces the npm @a2a-js/sdk client selects its transport
 * from), and JSON-RPC at POST /a2a/ in three dialects:
 *   reference  tasks/send   parts [{"type":"data","data":{..}}], state "completed"
 *   A2A 0.3    message/send parts [{"kind":"data","data":{..}}], state "completed"
 *   A2A 1.0    SendMessage  parts [{"data":{..}}], state "TASK_STATE_COMPLETED", result {"task":{..}}
 * plus tasks/get (reference and 0.3) and GetTask (1.0), ListTasks (newest
 * first), CancelTask / tasks/cancel (a working task's call is cancelled
 * through daemon/calls.c; a committed task is finished: not cancelable),
 * GetExtendedAgentCard / agent/getAuthenticatedExtendedCard,
 * SendStreamingMessage / message/stream (a live response: the Task,
 * working, then the artifact and the terminal status as the call ends),
 * SubscribeToTask / tasks/resubscribe (terminal: unsupported); every task
 * carries its history (the caller's message; the failure message). The
 * public card lists the skills open to every session and the bearer
 * security scheme (docs/daemon.md, "A2A"). The skill is
 * metadata.skill_id (of the params, or of the message), or the only skill
 * the session sees. The task id is params.id (tasks/send), else
 * message.taskId, else message.messageId; a task id already committed in
 * the episode answers the committed result (the coordinator re-verifies
 * it), nothing re-runs. A call that fails after it was admitted is a task
 * in state failed whose status message names the error class; a refusal
 * before execution is a JSON-RPC error. tasks/get / GetTask find the
 * task by the journal's invocation row and read the committed call back
 * through the coordinator (coord_committed). */
#include "daemon/http.h"
#include "daemon/home.h"
#include "daemon/a2a_push.h"
#include "daemon/route.h"
#include "common/canon.h"
#include "store/store.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/random.h>
#include <string.h>
#include <strings.h>

enum dialect { D_REF, D_V03, D_V1 };

struct task {
	enum dialect dia;
	int failed;
	int canceled;       /* its caller cancelled it (the journal's "cancelled"): text says where */
	char *context;
	char *text;         /* failed: "CLASS: message" */
	json_t *output;     /* completed: the output object */
	json_t *input;      /* the caller's arguments (history), or NULL */
	char invocation_id[256], world_ref[WORLD_REF_SIZE];
	long long entry_index;
	char leaf_hash[45]; /* the receipt's leaf hash ("" when unknown) */
};

static void task_clear(struct task *t)
{
	free(t->context);
	free(t->text);
	json_decref(t->output);
	json_decref(t->input);
	memset(t, 0, sizeof *t);
}

/* ---- wire forms ---- */

static json_t *part(enum dialect dia, const char *kind, json_t *value)
{
	switch (dia) {
	case D_REF: return json_pack("{s:s,s:o}", "type", kind, kind, value);
	/* 0.3 says "kind"; tasks/get also serves reference clients, which read "type" */
	case D_V03: return json_pack("{s:s,s:s,s:o}", "kind", kind, "type", kind, kind, value);
	default: return json_pack("{s:o}", kind, value);
	}
}

static json_t *task_json(const struct task *t, const char *task_id)
{
	enum dialect dia = t->dia;
	json_t *status;
	if (t->failed || t->canceled) {
		json_t *msg = dia == D_V1 ? json_pack("{s:s,s:s,s:[o]}", "messageId", "status", "role", "ROLE_AGENT", "parts",
		                                      part(dia, "text", json_string(t->text)))
		            : dia == D_V03 ? json_pack("{s:s,s:s,s:s,s:[o]}", "kind", "message", "messageId", "status", "role",
		                                       "agent", "parts", part(dia, "text", json_string(t->text)))
		                           : json_pack("{s:s,s:[o]}", "role", "agent", "parts", part(dia, "text", json_string(t->text)));
		status = json_pack("{s:s,s:o}", "state",
		                   t->canceled ? (dia == D_V1 ? "TASK_STATE_CANCELED" : "canceled")
		                               : (dia == D_V1 ? "TASK_STATE_FAILED" : "failed"),
		                   "message", msg);
	} else {
		status = json_pack("{s:s}", "state", dia == D_V1 ? "TASK_STATE_COMPLETED" : "completed");
	}
	/* a committed call whose output reports failure is failed, and keeps
	 * its artifact and invocation: the entry is in the log */
	json_t *v = json_pack("{s:s,s:o}", "id", task_id, "status", status);
	/* history: the caller's message (its arguments), then the agent's
	 * failure message when there is one */
	json_t *hist = json_array();
	if (t->input) {
		json_t *um = dia == D_V1 ? json_pack("{s:s,s:s,s:s,s:[o]}", "messageId", "input", "taskId", task_id, "role", "ROLE_USER",
		                                     "parts", part(dia, "data", json_incref(t->input)))
		           : dia == D_V03 ? json_pack("{s:s,s:s,s:s,s:s,s:[o]}", "kind", "message", "messageId", "input", "taskId",
		                                      task_id, "role", "user", "parts", part(dia, "data", json_incref(t->input)))
		                          : json_pack("{s:s,s:[o]}", "role", "user", "parts", part(dia, "data", json_incref(t->input)));
		json_array_append_new(hist, um);
	}
	if (t->failed || t->canceled) json_array_append(hist, json_object_get(status, "message"));
	json_object_set_new(v, "history", hist);
	if (dia != D_REF) json_object_set_new(v, "contextId", json_string(t->context ? t->context : ""));
	if (dia == D_V03) json_object_set_new(v, "kind", json_string("task"));
	if (t->output) {
		json_t *art = json_pack("{s:[o]}", "parts", part(dia, "data", json_incref(t->output)));
		if (dia != D_REF) {
			json_object_set_new(art, "artifactId", json_string("output"));
			json_object_set_new(art, "name", json_string("output"));
		}
		json_object_set_new(v, "artifacts", json_pack("[o]", art));
		json_object_set_new(v, "metadata", json_pack("{s:s,s:s,s:I,s:s}", "invocation_id", t->invocation_id, "world_ref",
		                                             t->world_ref, "entry_index", (json_int_t)t->entry_index,
		                                             "leaf_hash", t->leaf_hash));
	} else {
		json_object_set_new(v, "metadata", json_object());
	}
	return v;
}


/* ---- the card ---- */

#define CARD_AUTH_TEXT                                                                                                   \
	"a World session credential (64 hex, minted by the operator with worldd session mint) as "                        \
	"Authorization: Bearer <credential>; there is no OAuth authorization server"

/* The card of dialect v1 (1.0 card fields) for session s; s NULL: the
 * public card, whose skills are the transitions open to every session
 * (access null). NULL + err on a store failure. */
static json_t *card_json(struct dreq *rq, const struct coord_session *s, int v1, struct world_err *err)
{
	json_t *skills = json_array();
	{
		struct coord_session pub;
		memset(&pub, 0, sizeof pub);
		pub.expires_at = 1;  /* no grants: only what needs none is visible */
		snprintf(pub.episode, sizeof pub.episode, "%s", "-");
		json_t *vis = NULL;
		if (coord_visible(rq->d->coord, s ? s : &pub, &vis, err) < 0) {
			json_decref(skills);
			return NULL;
		}
		size_t i;
		json_t *dsc;
		json_array_foreach(vis, i, dsc) {
			const char *id = json_string_value(json_object_get(dsc, "id"));
			const char *title = json_string_value(json_object_get(dsc, "title"));
			const char *desc = json_string_value(json_object_get(dsc, "description"));
			if (!id) continue;
			json_array_append_new(skills, json_pack("{s:s,s:s,s:s,s:[],s:[]}", "id", id, "name", title && *title ? title : id,
			                                        "description", desc ? desc : "", "tags", "examples"));
		}
		json_decref(vis);
	}
	char url[400];
	snprintf(url, sizeof url, "%s/a2a/", rq->d->base_url);
	json_t *card = json_pack("{s:s,s:s,s:s,s:s,s:{s:b,s:b,s:b},s:[s,s],s:[s],s:o}", "name", "worldd", "description",
	                         "World: published AILANG transitions as skills; every call commits one log entry. "
	                         "A skill takes one JSON object (a data part, or a text part holding the object's JSON) and "
	                         "answers a task whose artifact is its output object. This card lists the skills open to "
	                         "every session; the extended card (GetExtendedAgentCard, with a credential) lists the "
	                         "session's own.",
	                         "url", url, "version", DAEMON_VERSION, "capabilities", "streaming", 1, "pushNotifications", 1,
	                         "stateTransitionHistory", 0, "defaultInputModes", "application/json", "text/plain",
	                         "defaultOutputModes", "application/json", "skills", skills);
	if (v1) {
		json_object_set_new(card, "supportedInterfaces",
		                    json_pack("[{s:s,s:s,s:s}]", "url", url, "protocolBinding", "JSONRPC", "protocolVersion", "1.0"));
		json_object_set_new(json_object_get(card, "capabilities"), "extendedAgentCard", json_true());
		json_object_set_new(card, "securitySchemes",
		                    json_pack("{s:{s:{s:s,s:s}}}", "worldSession", "httpAuthSecurityScheme", "scheme", "Bearer",
		                              "description", CARD_AUTH_TEXT));
		json_object_set_new(card, "securityRequirements", json_pack("[{s:{s:{s:[]}}}]", "schemes", "worldSession", "list"));
	} else {
		json_object_set_new(card, "supportsAuthenticatedExtendedCard", json_true());
		json_object_set_new(card, "securitySchemes",
		                    json_pack("{s:{s:s,s:s,s:s}}", "worldSession", "type", "http", "scheme", "bearer", "description",
		                              CARD_AUTH_TEXT));
		json_object_set_new(card, "security", json_pack("[{s:[]}]", "worldSession"));
	}
	return card;
}

void a2a_card(struct dreq *rq, struct dresp *r, int v1)
{
	struct coord_session *s = NULL;
	int present = 0;
	if (dauth(rq, r, 0, 1, &s, &present) < 0) return;
	struct world_err err = { 0, "" };
	json_t *card = card_json(rq, s, v1, &err);
	coord_session_free(s);
	if (!card) { dresp_internal(rq, r, "visible transitions", &err); return; }
	dresp_json(r, 200, card);
}

/* ---- calls ---- */

static const char *skill_of(const json_t *params, const json_t *message)
{
	const json_t *v = json_object_get(json_object_get(params, "metadata"), "skill_id");
	if (!json_is_string(v)) v = json_object_get(json_object_get(message, "metadata"), "skill_id");
	return json_is_string(v) ? json_string_value(v) : NULL;
}

/* The arguments: the message's only part, a data part holding an object or
 * a text part holding a JSON object. NULL + why. */
static json_t *args_of(const json_t *message, const char **why)
{
	const json_t *parts = json_object_get(message, "parts");
	if (!json_is_array(parts) || json_array_size(parts) != 1) {
		*why = "message.parts must hold exactly one part: a data part with the arguments object, or a text part "
		       "holding the arguments object's JSON text";
		return NULL;
	}
	const json_t *p = json_array_get(parts, 0);
	const json_t *data = json_object_get(p, "data");
	if (data) {
		if (!json_is_object(data)) { *why = "the data part's data must be a JSON object (the arguments)"; return NULL; }
		return json_incref((json_t *)data);
	}
	const json_t *text = json_object_get(p, "text");
	if (json_is_string(text)) {
		/* by its length: the text may hold U+0000 (drpc_nul lets it through) */
		json_t *v = json_loadb(json_string_value(text), json_string_length(text),
		                       JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, NULL);
		if (json_is_object(v)) return v;
		json_decref(v);
		*why = "this text part is not a JSON object: a skill takes its arguments as one JSON object, as the text "
		       "of a text part (e.g. {\"path\":\"src/a.ail\"}) or in a data part; prose is not understood";
		return NULL;
	}
	*why = "message.parts[0] must be a data part (the arguments object) or a text part holding the object's JSON "
	       "(file parts are not accepted)";
	return NULL;
}

/* The descriptor of a visible skill (and, when fn is given, of that
 * transition function), or NULL. */
static const json_t *descriptor_of(const json_t *vis, const char *skill, const char *fn)
{
	size_t i;
	json_t *d;
	json_array_foreach(vis, i, d) {
		const char *id = json_string_value(json_object_get(d, "id"));
		const char *f = json_string_value(json_object_get(d, "transitionFn"));
		if (id && strcmp(id, skill) == 0 && (!fn || (f && strcmp(f, fn) == 0))) return d;
	}
	return NULL;
}

/* A committed output that reports failure or breaks its outputSchema makes
 * the task failed (dresult_verdict, daemon/mcp.c); the note says so. */
static void verdict(struct task *t, const json_t *dsc, char *note, size_t nn)
{
	char why[1100];
	int v = dresult_verdict(dsc, t->output, why, sizeof why);
	if (!v) return;
	char msg[1300];
	if (v == 2) snprintf(msg, sizeof msg, "OutputSchema: the result does not match the skill's outputSchema: %s", why);
	else if (v == 3) snprintf(msg, sizeof msg, "EffectDenied: %s", why);
	else snprintf(msg, sizeof msg, "%s", why);
	t->failed = 1;
	free(t->text);
	t->text = strdup(msg);
	size_t l = strlen(note);
	if (l < nn)
		snprintf(note + l, nn - l, ",%s", v == 2 ? "error=OutputSchema" : v == 3 ? "error=EffectDenied" : "result=failed");
}

/* SendStreamingMessage / message/stream: the stream goes live once the
 * call is admitted (a refusal before it is a plain JSON-RPC error, as the
 * SDK expects) with the Task (submitted) and a status update (working);
 * the terminal events follow when the call ends (stream_final). */
struct a2a_stream {
	struct dreq *rq;
	json_t *id;
	enum dialect dia;
	char task[160], context[160];
	struct dlive *live;
	int failed;          /* could not go live: answered as one event */
	int stream;          /* a stream answers this call (else: push notifications only) */
	char episode[129];   /* push notifications: the task's configs are the episode's */
};

static int stream_event(struct a2a_stream *st, json_t *result, char **out, size_t *len)
{
	json_t *v = json_pack("{s:s,s:O,s:o}", "jsonrpc", "2.0", "id", st->id, "result", result);
	char *j = v ? json_dumps(v, JSON_COMPACT) : NULL;
	json_decref(v);
	if (!j) return -1;
	size_t n = strlen(j);
	char *b = malloc(n + 16);
	if (!b) { free(j); return -1; }
	*len = (size_t)snprintf(b, n + 16, "data: %s\n\n", j);
	free(j);
	*out = b;
	return 0;
}

static json_t *status_update(enum dialect dia, const char *task, const char *ctx, json_t *status, int final)
{
	if (dia == D_V1)
		return json_pack("{s:{s:s,s:s,s:o}}", "statusUpdate", "taskId", task, "contextId", ctx, "status", status);
	return json_pack("{s:s,s:s,s:s,s:o,s:b}", "kind", "status-update", "taskId", task, "contextId", ctx, "status", status,
	                 "final", final);
}

static void stream_push(struct a2a_stream *st, json_t *result)
{
	char *b;
	size_t len;
	if (!result) return;
	if (stream_event(st, result, &b, &len) < 0) return;
	dlive_push(st->live, b, len);
	free(b);
}

/* The task's terminal update for its push-notification webhooks, as a
 * stream ends: its artifact (a committed call's output), then the final
 * status with the task's metadata. */
static void push_final(const char *episode, const char *task, enum dialect dia, const json_t *tj)
{
	if (dia == D_REF || a2a_push_count(episode, task) == 0) return;
	const char *cx = json_string_value(json_object_get(tj, "contextId"));
	if (!cx) cx = episode;
	json_t *art = json_array_get(json_object_get(tj, "artifacts"), 0);
	if (art)
		a2a_push_event(episode, task, dia == D_V03,
		               dia == D_V1 ? json_pack("{s:{s:s,s:s,s:O}}", "artifactUpdate", "taskId", task, "contextId", cx,
		                                       "artifact", art)
		                           : json_pack("{s:s,s:s,s:s,s:O,s:b}", "kind", "artifact-update", "taskId", task,
		                                       "contextId", cx, "artifact", art, "lastChunk", 1));
	json_t *su = status_update(dia, task, cx, json_deep_copy(json_object_get(tj, "status")), 1);
	json_t *md = json_object_get(tj, "metadata");
	if (su && md) json_object_set(dia == D_V1 ? json_object_get(su, "statusUpdate") : su, "metadata", md);
	a2a_push_event(episode, task, dia == D_V03, su);
}

static void a2a_progress(void *ctx, const char *stage, const char *message)
{
	(void)message;
	struct a2a_stream *st = ctx;
	if (strcmp(stage, "admitted") != 0) return;
	/* push notifications: the task is working (its webhooks are told) */
	if (st->episode[0] && !st->live && !st->failed)
		a2a_push_event(st->episode, st->task, st->dia == D_V03,
		               status_update(st->dia, st->task, st->context,
		                             json_pack("{s:s}", "state", st->dia == D_V1 ? "TASK_STATE_WORKING" : "working"), 0));
	if (!st->stream || st->live || st->failed) return;
	st->live = dlive_start(st->rq, "text/event-stream");
	if (!st->live) { st->failed = 1; return; }
	/* the stream begins with the Task (A2A 1.0 3.1.2), then working */
	enum dialect dia = st->dia;
	json_t *task = json_pack("{s:s,s:s,s:{s:s}}", "id", st->task, "contextId", st->context, "status", "state",
	                         dia == D_V1 ? "TASK_STATE_SUBMITTED" : "submitted");
	if (task && dia != D_V1) json_object_set_new(task, "kind", json_string("task"));
	stream_push(st, dia == D_V1 ? json_pack("{s:o}", "task", task) : task);
	stream_push(st, status_update(dia, st->task, st->context,
	                              json_pack("{s:s}", "state", dia == D_V1 ? "TASK_STATE_WORKING" : "working"), 0));
}

static json_t *send(struct dreq *rq, struct coord_session *s, json_t *id, json_t *params, enum dialect dia,
                    struct a2a_stream *stream)
{
	json_t *message = json_object_get(params, "message");
	if (!json_is_object(message)) return drpc_error(id, -32602, "params.message must be an object");
	const char *task = NULL;
	if (dia == D_REF) {
		json_t *jt = json_object_get(params, "id");
		if (!json_is_string(jt)) return drpc_error(id, -32602, "tasks/send needs params.id (the task id)");
		task = json_string_value(jt);
	} else {
		json_t *jt = json_object_get(message, "taskId");
		if (!json_is_string(jt) || !*json_string_value(jt)) jt = json_object_get(message, "messageId");
		if (json_is_string(jt) && *json_string_value(jt)) task = json_string_value(jt);
	}
	if (task && !coord_task_id_valid(task))
		return drpc_error(id, -32602, "task id \"%.140s\" must be 1-128 characters of [A-Za-z0-9._-]", task);
	const char *why = NULL;
	json_t *args = args_of(message, &why);
	if (!args) return drpc_error(id, -32602, "%s", why);
	const char *skill = skill_of(params, message);
	json_t *vis = NULL;
	{
		struct world_err err = { 0, "" };
		if (coord_visible(rq->d->coord, s, &vis, &err) < 0) {
			json_decref(args);
			dlog("error route=/a2a/: visible transitions: %s", err.msg);
			return drpc_error(id, -32603, "Internal: internal store failure");
		}
	}
	if (!skill) {
		if (json_array_size(vis) != 1) {
			size_t seen = json_array_size(vis); /* counted before vis is freed */
			json_decref(args);
			json_decref(vis);
			return drpc_error(id, -32602, "metadata.skill_id is required (this session sees %zu skills)", seen);
		}
		skill = json_string_value(json_object_get(json_array_get(vis, 0), "id"));
	}
	/* an effectful skill of an episode whose home is another host: answered
	 * before anything runs (daemon/home.h; docs/daemon.md, "Episode homes") */
	if (skill && dhome_on()) {
		size_t vi;
		json_t *vd;
		int eff = 0;
		json_array_foreach(vis, vi, vd) {
			const char *vid = json_string_value(json_object_get(vd, "id"));
			if (vid && strcmp(vid, skill) == 0) eff = json_array_size(json_object_get(vd, "declaredEffects")) > 0;
		}
		struct world_home h;
		struct world_err he = { 0, "" };
		int hr = eff ? dhome_check(s->episode, &h, &he) : 0;
		if (hr != 0) {
			const char *k = hr == 1 ? "NotHome" : coord_error_class(he.code);
			if (hr < 0) dlog("error route=/a2a/ skill=%.128s: %s", skill, he.msg);
			snprintf(rq->note, sizeof rq->note, "%s,skill=%.64s,error=%s", dia == D_REF ? "tasks/send" : dia == D_V03 ? "message/send" : "SendMessage",
			         skill, k);
			if (task) snprintf(rq->invocation_id, sizeof rq->invocation_id, "a2a:%.100s:%s", s->episode, task);
			json_t *e = hr == 1 ? json_pack("{s:s,s:O,s:o}", "jsonrpc", "2.0", "id", id ? id : json_null(), "error",
			                                dhome_rpc_error(s->episode, &h, "/a2a/"))
			                    : drpc_error(id, -32603, "%s: %s", k, he.code == WX_UNAVAILABLE ? "the store's database "
			                                 "server cannot be reached; retry" : "internal store failure");
			json_decref(args);
			json_decref(vis);
			return e;
		}
	}
	char *text = json_dumps(args, JSON_COMPACT | JSON_REAL_PRECISION(17));
	if (!text || !skill) {
		free(text);
		json_decref(args);
		json_decref(vis);
		return drpc_error(id, -32603, "Internal: internal store failure");
	}
	struct coord_call call = { .session = s, .channel = "a2a", .skill_id = skill, .task_id = task, .args = text,
	                           .args_len = strlen(text) };
	struct coord_result res;
	memset(&res, 0, sizeof res);
	struct world_err err = { 0, "" };
	/* the task id names the call for CancelTask of this episode (a task
	 * without an id of the caller's gets a fresh one, so it can be named) */
	char fresh[17];
	if (!task) {
		unsigned char rb[8];
		if (getrandom(rb, sizeof rb, 0) != (ssize_t)sizeof rb) {
			free(text);
			json_decref(args);
			json_decref(vis);
			dlog("error route=/a2a/: task id: getrandom: %s", strerror(errno));
			return drpc_error(id, -32603, "Internal: internal store failure");
		}
		for (int i = 0; i < 8; i++) snprintf(fresh + 2 * i, 3, "%02x", rb[i]);
		task = call.task_id = fresh;
	}
	/* push notifications asked for with the message (A2A 1.0
	 * configuration.taskPushNotificationConfig, 0.3 pushNotificationConfig):
	 * checked against the operator's allowlist before anything runs */
	char pushed[129] = ""; /* the config this request stored (removed again on a refusal) */
	if (dia != D_REF) {
		json_t *conf = json_object_get(params, "configuration");
		json_t *pc = json_object_get(conf, dia == D_V1 ? "taskPushNotificationConfig" : "pushNotificationConfig");
		if (pc && !json_is_null(pc)) {
			struct a2a_push_cfg pcfg;
			char why[700];
			if (a2a_push_parse(pc, dia == D_V03, &pcfg, why, sizeof why) < 0 ||
			    a2a_push_put(s->episode, task, &pcfg, NULL, NULL, why, sizeof why) < 0) {
				free(text);
				json_decref(args);
				json_decref(vis);
				snprintf(rq->note, sizeof rq->note, "%s,error=PushConfig", dia == D_V03 ? "message/send" : "SendMessage");
				return drpc_error(id, -32602, "configuration: %s", why);
			}
			snprintf(pushed, sizeof pushed, "%s", pcfg.id);
		}
	}
	struct a2a_stream pst = { 0 }; /* push notifications of a call answered without a stream */
	if (!stream && dia != D_REF && a2a_push_count(s->episode, task) > 0) stream = &pst;
	char owner[80];
	snprintf(owner, sizeof owner, "a2a:%s", s->episode);
	struct dcall dc;
	int began = dcall_begin(&dc, owner, task, rq->job, &err);
	int registered = began >= 0;
	if (registered) call.cancel = &dc.cancel;
	else dlog("error route=/a2a/: task %.128s is not cancellable: %s", task, err.msg);
	if (began == 1)
		dlog("cancel episode=%s task=%.128s: cancelled while it waited for a call worker; it starts cancelled", s->episode,
		     task);
	json_t *ctx0 = json_object_get(message, "contextId");
	if (registered)
		dcall_set_context(&dc, json_is_string(ctx0) && *json_string_value(ctx0) ? json_string_value(ctx0) : s->episode);
	if (stream) {
		stream->stream = stream != &pst;
		if (dia != D_REF && a2a_push_count(s->episode, task) > 0)
			snprintf(stream->episode, sizeof stream->episode, "%s", s->episode);
		stream->rq = rq;
		stream->id = id;
		stream->dia = dia;
		snprintf(stream->task, sizeof stream->task, "%s", task);
		snprintf(stream->context, sizeof stream->context, "%s",
		         json_is_string(ctx0) && *json_string_value(ctx0) ? json_string_value(ctx0) : s->episode);
		call.on_progress = a2a_progress;
		call.progress_ctx = stream;
	}
	int rc = coord_call(rq->d->coord, &call, &res, &err);
	free(text);
	if (registered) dcall_end(&dc);
	snprintf(rq->note, sizeof rq->note, "%s,skill=%.64s", dia == D_REF ? "tasks/send" : dia == D_V03 ? "message/send" : "SendMessage", skill);
	struct task t;
	memset(&t, 0, sizeof t);
	t.dia = dia;
	t.input = args; /* the history's user message */
	json_t *ctx = json_object_get(message, "contextId");
	t.context = strdup(json_is_string(ctx) && *json_string_value(ctx) ? json_string_value(ctx) : s->episode);
	char tid[160];
	/* the request log names the invocation on every call, failed ones too */
	if (res.invocation_id[0]) snprintf(rq->invocation_id, sizeof rq->invocation_id, "%s", res.invocation_id);
	if (rc < 0) {
		const char *k = coord_error_class(err.code);
		if ((err.code == WX_REFUSED || err.code == WX_BAD_INPUT || err.code == WX_CONFLICT || err.code == WX_USAGE) &&
		    !(stream && stream->live)) {
			if (pushed[0]) a2a_push_del(s->episode, task, pushed); /* refused: nothing to notify */
			task_clear(&t);
			json_decref(vis);
			return drpc_error(id, -32602, "%s", err.msg);
		}
		char msg[1200];
		if (strcmp(k, "Internal") == 0) {
			dlog("error route=/a2a/ skill=%.128s: %s", skill, err.msg); /* skill may live in vis: freed below */
			snprintf(msg, sizeof msg, "%s: internal store failure", k);
		} else snprintf(msg, sizeof msg, "%s: %s", k, err.msg);
		if (err.code == WX_CANCELLED) t.canceled = 1;
		else t.failed = 1;
		t.text = strdup(msg);
		size_t nl = strlen(rq->note);
		if (nl < sizeof rq->note) snprintf(rq->note + nl, sizeof rq->note - nl, ",error=%s", k);
		snprintf(tid, sizeof tid, "%s", task ? task : "unassigned");
	}
	if (rc == 0) {
		snprintf(rq->invocation_id, sizeof rq->invocation_id, "%s", res.invocation_id);
		snprintf(rq->timing, sizeof rq->timing, " capsule_ms=%ld broker_ms=%ld commit_ms=%ld", res.capsule_ms,
		         res.broker_ms, res.commit_ms);
		const char *c1 = strchr(res.invocation_id, ':');
		const char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		snprintf(tid, sizeof tid, "%s", c2 ? c2 + 1 : (task ? task : ""));
		t.output = json_loadb(res.output, res.output_len, JSON_ALLOW_NUL, NULL);
		snprintf(t.invocation_id, sizeof t.invocation_id, "%s", res.invocation_id);
		snprintf(t.world_ref, sizeof t.world_ref, "%s", res.world_ref);
		t.entry_index = res.entry_index;
		snprintf(t.leaf_hash, sizeof t.leaf_hash, "%s", res.leaf_hash);
		coord_result_free(&res);
		if (!json_is_object(t.output)) {
			task_clear(&t);
			json_decref(vis);
			dlog("error route=/a2a/: committed output is not a JSON object");
			return drpc_error(id, -32603, "Internal: internal store failure");
		}
		verdict(&t, descriptor_of(vis, skill, NULL), rq->note, sizeof rq->note);
	}
	json_decref(vis); /* the last use of skill is above */
	vis = NULL;
	json_t *tj = task_json(&t, tid);
	task_clear(&t);
	push_final(s->episode, tid, dia, tj);
	json_t *result = dia == D_V1 ? json_pack("{s:o}", "task", tj) : tj;
	return json_pack("{s:s,s:O,s:o}", "jsonrpc", "2.0", "id", id, "result", result);
}

/* A committed task, read back from the store: the journal's invocation
 * row of a2a:EPISODE:TASK, its invocation record, output and log entry,
 * every object re-hashed on read. A call that failed committed nothing
 * and is not found. */
/* Loads a committed task of the episode into t (t->dia set by the caller):
 * 0 found, 1 not found (never committed: a call that failed before its
 * commit, or another episode's), -1 damaged or unreadable (err). */
static int task_load(struct dreq *rq, const struct coord_session *s, struct world_store *st, const char *task,
                     struct task *t, struct world_err *err)
{
	snprintf(t->invocation_id, sizeof t->invocation_id, "a2a:%s:%s", s->episode, task);
	struct world_journal_row jr;
	struct world_object in = { 0 };
	json_t *r = NULL;
	int rc = world_journal_find(st, "invocation", t->invocation_id, &jr, err);
	if (rc == 0 && strcmp(jr.status, "cancelled") == 0) {
		/* cancelled by its caller: a terminal task with no artifact */
		t->canceled = 1;
		t->text = strdup("Cancelled: the task was cancelled before its call committed; nothing was committed");
		t->context = strdup(s->episode);
		return t->text && t->context ? 2 : -1;
	}
	if (rc < 0 || strcmp(jr.status, "committed") != 0) return rc < 0 && err->code != WX_NOT_FOUND ? -1 : 1;
	/* the committed call as the coordinator reads it back */
	struct coord_result cr = { 0 };
	int ok = coord_committed(st, jr.outcome_ref, NULL, &cr, &r, err) == 0;
	if (ok) {
		t->entry_index = cr.entry_index;
		memcpy(t->world_ref, cr.world_ref, WORLD_REF_SIZE);
		memcpy(t->leaf_hash, cr.leaf_hash, sizeof t->leaf_hash);
		t->output = json_loadb(cr.output, cr.output_len, JSON_ALLOW_NUL, NULL);
		ok = json_is_object(t->output);
	}
	coord_result_free(&cr);
	/* the caller's arguments, for the task's history */
	const char *iref = json_string_value(json_object_get(r, "input"));
	if (ok && iref && world_object_get(st, iref, &in, err) == 0) {
		t->input = json_loadb((const char *)in.payload, in.len, JSON_ALLOW_NUL, NULL);
		world_object_free(&in);
	}
	if (ok) {
		/* judged as it was when sent: against the descriptor of the same
		 * transition function, when the registry still has it */
		json_t *vis = NULL;
		const char *sk = json_string_value(json_object_get(r, "skillId"));
		const char *fn = json_string_value(json_object_get(r, "transitionFn"));
		struct world_err ve = { 0, "" };
		if (sk && fn && coord_visible(rq->d->coord, s, &vis, &ve) == 0)
			verdict(t, descriptor_of(vis, sk, fn), rq->note, sizeof rq->note);
		else verdict(t, NULL, rq->note, sizeof rq->note);
		json_decref(vis);
	}
	json_decref(r);
	if (!ok) return -1;
	t->context = strdup(s->episode);
	return 0;
}

/* task_load on a reader of the daemon's: t is zeroed (dia set) first, so
 * it can be cleared whatever the outcome; the same answers as task_load. */
static int task_read(struct dreq *rq, const struct coord_session *s, const char *task, enum dialect dia, struct task *t,
                     struct world_err *err)
{
	memset(t, 0, sizeof *t);
	t->dia = dia;
	struct world_store *st = dreader_get(rq->d, err);
	if (!st) return -1;
	int rc = task_load(rq, s, st, task, t, err);
	dreader_put(rq->d, st);
	return rc;
}

/* A committed task, read back from the store: the journal's invocation
 * row of a2a:EPISODE:TASK, its invocation record, output and log entry,
 * every object re-hashed on read. A call that failed committed nothing
 * and is not found. */
static json_t *get(struct dreq *rq, struct coord_session *s, json_t *id, json_t *params, enum dialect dia)
{
	json_t *jt = json_object_get(params, "id");
	if (!json_is_string(jt) || !coord_task_id_valid(json_string_value(jt)))
		return drpc_error(id, -32602, "params.id must be a task id (1-128 characters of [A-Za-z0-9._-])");
	const char *task = json_string_value(jt);
	struct task t;
	struct world_err err = { 0, "" };
	int rc = task_read(rq, s, task, dia, &t, &err);
	snprintf(rq->invocation_id, sizeof rq->invocation_id, "%s", t.invocation_id);
	if (rc == 1) {
		task_clear(&t);
		return drpc_error(id, -32001, "task not found: \"%s\" (no committed call of this episode has that task id)", task);
	}
	if (rc < 0) {
		task_clear(&t);
		dlog("error route=/a2a/ GetTask %.200s: %s", task, err.msg[0] ? err.msg : "damaged record");
		return drpc_error(id, -32603, "Internal: internal store failure");
	}
	json_t *tj = task_json(&t, task);
	task_clear(&t);
	return json_pack("{s:s,s:O,s:o}", "jsonrpc", "2.0", "id", id, "result", tj);
}

/* CancelTask / tasks/cancel. A task whose call is in flight in this
 * episode (daemon/calls.c: keyed by episode and task id) is cancelled: its
 * capsule killed, nothing committed (docs/broker.md, "Cancelled calls");
 * the answer waits for the call to end and then reads the task back, so
 * it says what happened: canceled, or completed when the call committed
 * before the cancel reached it. A committed task is finished (A2A's
 * TaskNotCancelableError), as is a cancelled one; an unknown one is not
 * found. */
#define CANCEL_WAIT_MS 30000 /* longer than a call's whole-invocation deadline (20 s) */

/* Fire the task's call in flight or leave a pending cancel for it (when
 * calls of the episode wait for a call worker): how many were fired. */
static int cancel_now(const char *owner, const char *task, const char *episode, unsigned long long self,
                      unsigned long long *pend)
{
	int fired = dcall_cancel(owner, task, "CancelTask", self, 1, pend);
	dlog("cancel episode=%s task=%.128s: %s", episode, task,
	     fired ? "the call in flight is cancelled"
	           : *pend ? "no call in flight; kept for this episode's calls waiting for a call worker"
	                   : "no call of this episode in flight has that task id");
	return fired;
}

void a2a_cancel_early(struct dreq *rq)
{
	json_t *msg = json_loadb(rq->body, rq->body_len, JSON_REJECT_DUPLICATES, NULL);
	json_t *jt = json_object_get(json_object_get(msg, "params"), "id");
	const char *task = json_string_value(jt);
	struct dresp r;
	memset(&r, 0, sizeof r);
	struct coord_session *s = NULL;
	/* a refused credential or a malformed request: the worker answers it */
	if (task && coord_task_id_valid(task) && dauth(rq, &r, 0, 0, &s, NULL) == 0 && s) {
		char owner[80];
		snprintf(owner, sizeof owner, "a2a:%s", s->episode);
		rq->cancel_early = 1;
		rq->cancel_fired = cancel_now(owner, task, s->episode, 0, &rq->cancel_pend);
	}
	coord_session_free(s);
	free(r.body);
	json_decref(msg);
}
static json_t *cancel(struct dreq *rq, struct coord_session *s, json_t *id, json_t *params, enum dialect dia)
{
	json_t *jt = json_object_get(params, "id");
	if (!json_is_string(jt) || !coord_task_id_valid(json_string_value(jt)))
		return drpc_error(id, -32602, "params.id must be a task id (1-128 characters of [A-Za-z0-9._-])");
	const char *task = json_string_value(jt);
	char owner[80];
	snprintf(owner, sizeof owner, "a2a:%s", s->episode);
	/* fired (or left pending) on the HTTP thread before this request was
	 * queued (a2a_cancel_early), so the cancel was not behind the call */
	unsigned long long pend = rq->cancel_pend;
	int fired = rq->cancel_early ? rq->cancel_fired : cancel_now(owner, task, s->episode, rq->job, &pend);
	if (fired && dcall_wait_gone(owner, task, CANCEL_WAIT_MS) < 0)
		dlog("error route=/a2a/ CancelTask %.128s: the call did not end within %d ms", task, CANCEL_WAIT_MS);
	/* a task still waiting for a call worker: answered once its call
	 * started cancelled and ended (1), or when no such call waited (0) */
	int taken = pend ? dcall_pend_wait(pend, rq->conn ? 0 : CANCEL_WAIT_MS) : 0; /* an HTTP thread never waits */
	if (taken < 0) {
		dlog("error route=/a2a/ CancelTask %.128s: its call did not start within %d ms; the cancel stays pending", task,
		     CANCEL_WAIT_MS);
		return drpc_error(id, -32001, "task not found: \"%s\" is not in flight or committed yet; this cancel is kept "
		                              "for a call of this episode with that task id that is waiting for a call worker "
		                              "(it will start cancelled)", task);
	}
	fired = fired || taken == 1;
	struct task t;
	struct world_err err = { 0, "" };
	int rc = task_read(rq, s, task, dia, &t, &err);
	snprintf(rq->invocation_id, sizeof rq->invocation_id, "%s", t.invocation_id);
	int failed = t.failed;
	if (rc == 2 && fired) {
		/* this cancel stopped it: the task, canceled */
		json_t *tj = task_json(&t, task);
		task_clear(&t);
		json_t *result = tj; /* CancelTask answers the Task itself, in 1.0 and 0.3 */
		return json_pack("{s:s,s:O,s:o}", "jsonrpc", "2.0", "id", id, "result", result);
	}
	task_clear(&t);
	if (rc == 1)
		return drpc_error(id, -32001, "task not found: \"%s\" (no call of this episode with that task id is in flight or "
		                              "committed)", task);
	if (rc < 0) {
		dlog("error route=/a2a/ CancelTask %.200s: %s", task, err.msg[0] ? err.msg : "damaged record");
		return drpc_error(id, -32603, "Internal: internal store failure");
	}
	if (rc == 2)
		return drpc_error(id, -32002, "task cannot be canceled: \"%s\" is canceled already", task);
	return drpc_error(id, -32002, "task cannot be canceled: \"%s\" is %s (its call committed log entry; a committed entry is never undone)",
	                  task, failed ? "failed" : "completed");
}

/* SubscribeToTask / tasks/resubscribe: a task another request can name has
 * committed, so it is in a terminal state: UnsupportedOperation (A2A's rule
 * for terminal tasks); unknown: not found. */
/* SubscribeToTask / tasks/resubscribe. A working task of the episode (its
 * call in flight, daemon/calls.c) is followed: the answer goes live at
 * once with the Task as it is (working), then, when its call ends, the
 * task as committed (or cancelled) is read back and a2a_handle sends its
 * artifact and final status, as for SendStreamingMessage. The wait holds
 * this request's call worker (at most SUBSCRIBE_WAIT_MS, longer than a
 * call's deadline). A committed task is terminal: A2A's
 * UnsupportedOperation. */
#define SUBSCRIBE_WAIT_MS 30000

static json_t *subscribe(struct dreq *rq, struct coord_session *s, json_t *id, json_t *params, enum dialect dia,
                         struct a2a_stream *as)
{
	json_t *jt = json_object_get(params, "id");
	if (!json_is_string(jt) || !coord_task_id_valid(json_string_value(jt)))
		return drpc_error(id, -32602, "params.id must be a task id (1-128 characters of [A-Za-z0-9._-])");
	const char *task = json_string_value(jt);
	char owner[80], context[160];
	snprintf(owner, sizeof owner, "a2a:%s", s->episode);
	if (dcall_lookup(owner, task, context, sizeof context)) {
		as->rq = rq;
		as->id = id;
		as->dia = dia;
		snprintf(as->task, sizeof as->task, "%s", task);
		snprintf(as->context, sizeof as->context, "%s", context[0] ? context : s->episode);
		as->live = dlive_start(rq, "text/event-stream");
		if (as->live) {
			/* the stream begins with the Task as it is now */
			json_t *now = json_pack("{s:s,s:s,s:{s:s}}", "id", as->task, "contextId", as->context, "status", "state",
			                        dia == D_V1 ? "TASK_STATE_WORKING" : "working");
			if (now && dia != D_V1) json_object_set_new(now, "kind", json_string("task"));
			stream_push(as, dia == D_V1 ? json_pack("{s:o}", "task", now) : now);
		}
		dlog("subscribe episode=%s task=%.128s: working; followed until its call ends", s->episode, task);
		if (dcall_wait_gone(owner, task, SUBSCRIBE_WAIT_MS) < 0)
			return drpc_error(id, -32603, "Internal: task \"%s\" is still working after %d s; subscribe again", task,
			                  SUBSCRIBE_WAIT_MS / 1000);
		struct task t;
		struct world_err err = { 0, "" };
		int rc = task_read(rq, s, task, dia, &t, &err);
		if (rc == 1) {
			task_clear(&t);
			/* refused before it ran (nothing recorded): a SendMessage error */
			return drpc_error(id, -32001, "task not found: \"%s\" ended without a committed call (it was refused; its "
			                  "SendMessage got the error)", task);
		}
		if (rc < 0) {
			task_clear(&t);
			dlog("error route=/a2a/ SubscribeToTask %.200s: %s", task, err.msg[0] ? err.msg : "damaged record");
			return drpc_error(id, -32603, "Internal: internal store failure");
		}
		json_t *tj = task_json(&t, task);
		task_clear(&t);
		return json_pack("{s:s,s:O,s:o}", "jsonrpc", "2.0", "id", id, "result",
		                 dia == D_V1 ? json_pack("{s:o}", "task", tj) : tj);
	}
	struct task t;
	struct world_err err = { 0, "" };
	int rc = task_read(rq, s, task, dia, &t, &err);
	int failed = t.failed;
	task_clear(&t);
	if (rc == 1) return drpc_error(id, -32001, "task not found: \"%s\" (no committed call of this episode has that task id)", task);
	if (rc < 0) {
		dlog("error route=/a2a/ SubscribeToTask %.200s: %s", task, err.msg[0] ? err.msg : "damaged record");
		return drpc_error(id, -32603, "Internal: internal store failure");
	}
	return drpc_error(id, -32004, "unsupported operation: task \"%s\" is in a terminal state (%s); read it with GetTask / tasks/get",
	                  task, rc == 2 ? "canceled" : failed ? "failed" : "completed");
}

/* ListTasks: the episode's committed A2A tasks, newest first (A2A 1.0:
 * sorted by last update time, descending; a committed task's last update
 * is its commit, so log order reversed), pageSize (1-100, default 50) per
 * page; nextPageToken is the log index the next page goes on below ("" at
 * the end); totalSize is how many tasks match the filters in all pages.
 * Optional contextId (only the episode's: the context of every task
 * here) and status filters. Cancelled tasks have no entry and are not
 * listed (GetTask reads them). */
#define LIST_ENTRIES_MAX 200000 /* entries of one episode looked at (above its default call quota) */

/* Whether entry idx is a task of the episode that passes the filters; *tj
 * (may be NULL) gets its JSON. 1 yes, 0 no, -1 a damaged or unreadable row. */
static int list_one(struct dreq *rq, struct coord_session *s, struct world_store *st, long long idx, const char *prefix,
                    const char *want, enum dialect dia, json_t **tj, struct world_err *err)
{
	size_t pl = strlen(prefix);
	struct world_log_entry le;
	struct world_object rec = { 0 };
	if (world_log_get(st, idx, &le, err) < 0) return -1;
	int got = world_object_get(st, le.transition_ref, &rec, err);
	world_log_entry_free(&le);
	if (got < 0) return -1;
	json_t *r = json_loadb((const char *)rec.payload, rec.len, JSON_ALLOW_NUL, NULL);
	world_object_free(&rec);
	const char *inv = json_string_value(json_object_get(r, "invocationId"));
	int rc = 0;
	if (inv && strncmp(inv, prefix, pl) == 0 && (want || tj)) {
		struct task t;
		memset(&t, 0, sizeof t);
		t.dia = dia;
		int lr = task_load(rq, s, st, inv + pl, &t, err);
		if (lr < 0) rc = -1;
		else if (lr == 0) {
			const char *state = t.failed ? "TASK_STATE_FAILED" : "TASK_STATE_COMPLETED";
			rc = !want || strcmp(want, state) == 0;
			if (rc && tj) *tj = task_json(&t, inv + pl);
		}
		task_clear(&t);
	} else if (inv && strncmp(inv, prefix, pl) == 0) rc = 1;
	json_decref(r);
	return rc;
}

static json_t *list(struct dreq *rq, struct coord_session *s, json_t *id, json_t *params, enum dialect dia)
{
	json_t *jps = json_object_get(params, "pageSize");
	long long ps = 50;
	if (jps && (!json_is_integer(jps) || json_integer_value(jps) < 1 || json_integer_value(jps) > 100))
		return drpc_error(id, -32602, "params.pageSize must be an integer 1-100");
	if (jps) ps = json_integer_value(jps);
	long long below = 0; /* 0: from the newest */
	const char *tok = json_string_value(json_object_get(params, "pageToken"));
	if (tok && *tok) {
		char *end;
		below = strtoll(tok, &end, 10);
		if (*end || below < 1) return drpc_error(id, -32602, "params.pageToken \"%.64s\" is not a token of this list", tok);
	}
	const char *ctx = json_string_value(json_object_get(params, "contextId"));
	const char *want = json_string_value(json_object_get(params, "status"));
	/* no filter: absent, "", TASK_STATE_UNSPECIFIED, or "UNRECOGNIZED" (what
	 * @a2a-js/sdk 1.3 sends for an unset status) */
	if (want && (!*want || strcmp(want, "TASK_STATE_UNSPECIFIED") == 0 || strcmp(want, "UNRECOGNIZED") == 0)) want = NULL;
	if (want && strncmp(want, "TASK_STATE_", 11) != 0)
		return drpc_error(id, -32602, "params.status \"%.40s\" is not a task state (TASK_STATE_COMPLETED, TASK_STATE_FAILED, ...)", want);
	if (json_object_get(params, "status") && !json_is_string(json_object_get(params, "status")))
		return drpc_error(id, -32602, "params.status must be a task state name");
	json_t *jh = json_object_get(params, "historyLength");
	long long hl = json_is_integer(jh) ? json_integer_value(jh) : -1;
	json_t *tasks = json_array();
	if (ctx && *ctx && strcmp(ctx, s->episode) != 0)
		return json_pack("{s:s,s:O,s:{s:o,s:s,s:I,s:I}}", "jsonrpc", "2.0", "id", id, "result", "tasks", tasks,
		                 "nextPageToken", "", "pageSize", (json_int_t)ps, "totalSize", (json_int_t)0);
	struct world_err err = { 0, "" };
	struct world_store *st = dreader_get(rq->d, &err);
	if (!st) { json_decref(tasks); return drpc_error(id, -32603, "Internal: internal store failure"); }
	char prefix[100];
	snprintf(prefix, sizeof prefix, "a2a:%s:", s->episode);
	/* the episode's entry indexes, ascending (an index scan of episode_entries) */
	long long *all = NULL;
	size_t nall = 0, cap = 0;
	int bad = 0;
	for (long long from = 1; nall < LIST_ENTRIES_MAX;) {
		if (cap - nall < 200) {
			size_t nc = cap ? 2 * cap : 256;
			long long *na = realloc(all, nc * sizeof *na);
			if (!na) { bad = 1; werr(&err, WX_FAIL, "ListTasks: out of memory"); break; }
			all = na;
			cap = nc;
		}
		size_t n = 0;
		if (world_episode_entries(st, s->episode, from, 200, all + nall, &n, &err) < 0) { bad = 1; break; }
		nall += n;
		if (n < 200) break;
		from = all[nall - 1] + 1;
	}
	/* the page, newest first, below the token; then the count of the rest */
	long long total = 0, next = 0;
	for (size_t i = nall; !bad && i-- > 0;) {
		int page = (below == 0 || all[i] < below) && (long long)json_array_size(tasks) < ps;
		json_t *tj = NULL;
		int m = list_one(rq, s, st, all[i], prefix, want, dia, page ? &tj : NULL, &err);
		if (m < 0) { bad = 1; break; }
		if (!m) continue;
		total++;
		if (!page) {
			if ((below == 0 || all[i] < below) && !next) next = all[i] + 1; /* the first one past the page */
			continue;
		}
		if (hl >= 0) {
			json_t *h = json_object_get(tj, "history");
			while (json_array_size(h) > (size_t)hl) json_array_remove(h, 0);
		}
		if (json_is_false(json_object_get(params, "includeArtifacts"))) json_object_del(tj, "artifacts");
		json_array_append_new(tasks, tj);
	}
	free(all);
	dreader_put(rq->d, st);
	if (bad) {
		json_decref(tasks);
		dlog("error route=/a2a/ ListTasks: %s", err.msg[0] ? err.msg : "damaged record");
		return drpc_error(id, -32603, "Internal: internal store failure");
	}
	char nt[32] = "";
	if (next) snprintf(nt, sizeof nt, "%lld", next);
	return json_pack("{s:s,s:O,s:{s:o,s:s,s:I,s:I}}", "jsonrpc", "2.0", "id", id, "result", "tasks", tasks,
	                 "nextPageToken", nt, "pageSize", (json_int_t)ps, "totalSize", (json_int_t)total);
}

/* The push-notification config methods, A2A 1.0 and 0.3 names: 0 none,
 * else which (1 create/set, 2 get, 3 list, 4 delete). */
static int push_method(const char *mn)
{
	static const struct { const char *name; int op; } names[] = {
		{ "CreateTaskPushNotificationConfig", 1 }, { "GetTaskPushNotificationConfig", 2 },
		{ "ListTaskPushNotificationConfigs", 3 },  { "ListTaskPushNotificationConfig", 3 },
		{ "DeleteTaskPushNotificationConfig", 4 }, { "tasks/pushNotificationConfig/set", 1 },
		{ "tasks/pushNotificationConfig/get", 2 }, { "tasks/pushNotificationConfig/list", 3 },
		{ "tasks/pushNotificationConfig/delete", 4 },
	};
	for (size_t i = 0; i < sizeof names / sizeof *names; i++)
		if (strcmp(mn, names[i].name) == 0) return names[i].op;
	return 0;
}

struct still_ctx {
	const char *owner, *task;
};

/* called under the configs' lock: the task's call is still in flight */
static int still_working(void *p)
{
	struct still_ctx *c = p;
	char cx[160];
	return dcall_lookup(c->owner, c->task, cx, sizeof cx);
}

/* Create / Get / List / Delete a task's push-notification configs (A2A
 * 1.0 3.1.7-3.1.10; 0.3 tasks/pushNotificationConfig/set, get, list, delete). A config is
 * created for a working task of the episode (its call in flight; or with
 * the message itself, SendMessage's configuration): a committed or
 * canceled task changes no more (-32004). Get, List and Delete work on
 * any task of the episode that has configs or is known. */
static json_t *push_rpc(struct dreq *rq, struct coord_session *s, json_t *id, json_t *params, const char *mn, int op)
{
	int v03 = strncmp(mn, "tasks/", 6) == 0;
	const json_t *jt = json_object_get(params, v03 && op != 1 ? "id" : "taskId");
	const json_t *jc = op == 1 ? (v03 ? json_object_get(params, "pushNotificationConfig") : params)
	                           : json_object_get(params, v03 ? "pushNotificationConfigId" : "id");
	if (!json_is_string(jt) || !coord_task_id_valid(json_string_value(jt)))
		return drpc_error(id, -32602, "params.%s must be a task id (1-128 characters of [A-Za-z0-9._-])",
		                  v03 && op != 1 ? "id" : "taskId");
	const char *task = json_string_value(jt);
	const char *cid = op != 1 && json_is_string(jc) ? json_string_value(jc) : NULL;
	if (op != 1 && jc && !json_is_null(jc) && !json_is_string(jc))
		return drpc_error(id, -32602, "the config id must be a string");
	if (op == 4 && (!cid || !*cid)) return drpc_error(id, -32602, "params.%s (the config id) is required", v03 ? "pushNotificationConfigId" : "id");
	char owner[80], cx[160];
	snprintf(owner, sizeof owner, "a2a:%s", s->episode);
	snprintf(rq->invocation_id, sizeof rq->invocation_id, "a2a:%s:%s", s->episode, task);
	int working = dcall_lookup(owner, task, cx, sizeof cx);
	int known = working || a2a_push_count(s->episode, task) > 0;
	const char *state = "working";
	if (!working) {
		struct task t;
		struct world_err err = { 0, "" };
		int rc = task_read(rq, s, task, D_V1, &t, &err);
		state = rc == 2 ? "canceled" : t.failed ? "failed" : "completed";
		task_clear(&t);
		if (rc < 0) {
			dlog("error route=/a2a/ %s %.200s: %s", mn, task, err.msg[0] ? err.msg : "damaged record");
			return drpc_error(id, -32603, "Internal: internal store failure");
		}
		if (rc == 0 || rc == 2) known = 1;
	}
	if (!known)
		return drpc_error(id, -32001, "task not found: \"%s\" (no call of this episode with that task id is in flight or "
		                              "committed)", task);
	json_t *res = NULL;
	if (op == 1) {
		struct a2a_push_cfg c;
		char why[700];
		if (!working)
			return drpc_error(id, -32004, "unsupported operation: task \"%s\" is in a terminal state (%s); it changes no "
			                              "more, so its webhook would never be called (read it with GetTask)", task, state);
		if (a2a_push_parse(jc, v03, &c, why, sizeof why) < 0) return drpc_error(id, -32602, "%s", why);
		struct still_ctx sc = { owner, task };
		int pr = a2a_push_put(s->episode, task, &c, still_working, &sc, why, sizeof why);
		if (pr < 0) return drpc_error(id, -32602, "%s", why);
		if (pr == 1)
			return drpc_error(id, -32004, "unsupported operation: task \"%s\" has just reached a terminal state; it "
			                              "changes no more (read it with GetTask)", task);
		dlog("push episode=%s task=%.128s config=%s: created for a working task", s->episode, task, c.id);
		res = a2a_push_json(task, &c, v03);
	} else if (op == 2) {
		struct a2a_push_cfg c;
		if (a2a_push_get(s->episode, task, cid, &c) < 0)
			return drpc_error(id, -32001, "push notification config not found: task \"%s\" has %s%.130s%s", task,
			                  cid && *cid ? "no config \"" : "no config", cid && *cid ? cid : "", cid && *cid ? "\"" : "");
		res = a2a_push_json(task, &c, v03);
	} else if (op == 3) {
		json_t *l = a2a_push_list(s->episode, task, v03);
		res = v03 ? l : json_pack("{s:o,s:s}", "configs", l, "nextPageToken", "");
	} else {
		/* idempotent (A2A 1.0 3.1.10): a config deleted twice is deleted */
		if (a2a_push_del(s->episode, task, cid))
			dlog("push episode=%s task=%.128s config=%.128s: deleted", s->episode, task, cid);
		res = v03 ? json_null() : json_object();
	}
	if (!res) return drpc_error(id, -32603, "Internal: out of memory");
	return json_pack("{s:s,s:O,s:o}", "jsonrpc", "2.0", "id", id, "result", res);
}

void a2a_handle(struct dreq *rq, struct dresp *r)
{
	struct coord_session *s = NULL;
	if (dauth(rq, r, 0, 0, &s, NULL) < 0) {
		/* the store does not answer (503): a JSON-RPC request with an id
		 * gets a JSON-RPC error naming StoreUnavailable in that 503, not
		 * a bare envelope */
		json_t *msg = r->status == 503 ? json_loadb(rq->body, rq->body_len, 0, NULL) : NULL;
		json_t *id = json_object_get(msg, "id");
		if (json_is_string(id) || json_is_integer(id)) {
			int retry = r->retry_after_s;
			dresp_json(r, 503, drpc_error(id, -32603, "StoreUnavailable: the store's database server cannot be "
			                                          "reached; retry (with the same task id a call runs at most once)"));
			r->retry_after_s = retry;
		}
		json_decref(msg);
		return;
	}
	const char *ct = dreq_header(rq, "Content-Type");
	size_t n = ct ? strcspn(ct, ";") : 0;
	while (n && (ct[n - 1] == ' ')) n--;
	if (!ct || n != 16 || strncasecmp(ct, "application/json", 16) != 0) {
		dresp_error(r, "BadRequest", "Content-Type must be application/json");
		r->status = 415;
		coord_session_free(s);
		return;
	}
	json_error_t je;
	json_t *msg = json_loadb(rq->body, rq->body_len, DRPC_PARSE_FLAGS, &je);
	/* U+0000 only as data: inside the message's parts (the arguments) */
	static const char *const nul_data[] = { "/params/message/parts/#/data", "/params/message/parts/#/text", NULL };
	char nul_at[400] = "";
	int nul = msg && drpc_nul(msg, nul_data, 0, nul_at, sizeof nul_at);
	json_t *out = NULL;
	int stream = 0; /* SendStreamingMessage / message/stream: a result goes out as SSE events */
	struct a2a_stream as = { 0 };
	/* A2A-Version (1.0 clients send it; absent = 0.3): what this agent speaks */
	const char *av = dreq_header(rq, "A2A-Version");
	if (av && *av && strcmp(av, "1.0") != 0 && strcmp(av, "0.3") != 0 && strcmp(av, "0.3.0") != 0) {
		json_t *jid = json_is_object(msg) ? json_object_get(msg, "id") : NULL;
		out = drpc_error(json_is_string(jid) || json_is_integer(jid) ? jid : NULL, -32009,
		                 "unsupported A2A-Version \"%.32s\" (this agent speaks 1.0 and 0.3)", av);
	} else if (!msg) out = drpc_error(NULL, -32700, "parse error: %s at byte %d", je.text, je.position);
	else if (nul) {
		json_t *jid = json_is_object(msg) ? json_object_get(msg, "id") : NULL;
		if (json_is_string(jid) && memchr(json_string_value(jid), 0, json_string_length(jid))) jid = NULL;
		out = drpc_error(json_is_string(jid) || json_is_integer(jid) ? jid : NULL, -32600,
		                 "invalid request: the string at %s holds U+0000 (a NUL character); World takes one only "
		                 "as data, inside the message's parts (the arguments)", nul_at);
	}
	else if (!json_is_object(msg)) out = drpc_error(NULL, -32600, "invalid request: one JSON-RPC request object (no batches on /a2a/)");
	else {
		json_t *id = json_object_get(msg, "id");
		json_t *m = json_object_get(msg, "method");
		json_t *jv = json_object_get(msg, "jsonrpc");
		json_t *params = json_object_get(msg, "params");
		json_t *noparams = NULL; /* JSON-RPC lets params be omitted (agent/getAuthenticatedExtendedCard does) */
		if (!params) params = noparams = json_object();
		if (!json_is_string(jv) || strcmp(json_string_value(jv), "2.0") != 0 || !json_is_string(m) ||
		    (id && !json_is_string(id) && !json_is_integer(id)))
			out = drpc_error(json_is_string(id) || json_is_integer(id) ? id : NULL, -32600,
			                "invalid request: expected {\"jsonrpc\":\"2.0\",\"id\",\"method\",\"params\"}");
		else if (!id) out = NULL; /* a notification: nothing to answer */
		else if (!json_is_object(params)) out = drpc_error(id, -32602, "params must be an object");
		else {
			const char *mn = json_string_value(m);
			snprintf(rq->note, sizeof rq->note, "%.100s", mn);
			if (strcmp(mn, "tasks/send") == 0) out = send(rq, s, id, params, D_REF, NULL);
			else if (strcmp(mn, "message/send") == 0) out = send(rq, s, id, params, D_V03, NULL);
			else if (strcmp(mn, "SendMessage") == 0) out = send(rq, s, id, params, D_V1, NULL);
			else if (strcmp(mn, "tasks/get") == 0) out = get(rq, s, id, params, D_V03);
			else if (strcmp(mn, "GetTask") == 0) out = get(rq, s, id, params, D_V1);
			else if (strcmp(mn, "SendStreamingMessage") == 0) { out = send(rq, s, id, params, D_V1, &as); stream = 1; }
			else if (strcmp(mn, "message/stream") == 0) { out = send(rq, s, id, params, D_V03, &as); stream = 1; }
			else if (strcmp(mn, "SubscribeToTask") == 0) { out = subscribe(rq, s, id, params, D_V1, &as); stream = 1; }
			else if (strcmp(mn, "tasks/resubscribe") == 0) { out = subscribe(rq, s, id, params, D_V03, &as); stream = 1; }
			else if (strcmp(mn, "ListTasks") == 0) out = list(rq, s, id, params, D_V1);
			else if (strcmp(mn, "CancelTask") == 0) out = cancel(rq, s, id, params, D_V1);
			else if (strcmp(mn, "tasks/cancel") == 0) out = cancel(rq, s, id, params, D_V03);
			else if (strcmp(mn, "GetExtendedAgentCard") == 0 || strcmp(mn, "agent/getAuthenticatedExtendedCard") == 0) {
				struct world_err err = { 0, "" };
				json_t *card = card_json(rq, s, strcmp(mn, "GetExtendedAgentCard") == 0, &err);
				if (!card) {
					dlog("error route=/a2a/ %s: visible transitions: %s", mn, err.msg);
					out = drpc_error(id, -32603, "Internal: internal store failure");
				} else out = json_pack("{s:s,s:O,s:o}", "jsonrpc", "2.0", "id", id, "result", card);
			} else if (push_method(mn)) out = push_rpc(rq, s, id, params, mn, push_method(mn));
			else out = drpc_error(id, -32601, "method not found: %.200s (this agent answers the eleven A2A 1.0 methods -- SendMessage, SendStreamingMessage, GetTask, ListTasks, CancelTask, SubscribeToTask, Create/Get/Delete TaskPushNotificationConfig, ListTaskPushNotificationConfigs, GetExtendedAgentCard -- their 0.3 names and tasks/send)", mn);
		}
		json_decref(noparams);
	}
	coord_session_free(s);
	if (!out) { json_decref(msg); r->status = 202; return; }
	json_t *e = json_object_get(out, "error");
	int code = e ? (int)json_integer_value(json_object_get(e, "code")) : 0;
	if (stream && as.live) {
		/* the stream is live (Task, working already sent): the terminal
		 * events, an artifact update with the output when there is one,
		 * then the final status (A2A 1.0 3.1.2: the stream closes at a
		 * terminal state) */
		json_t *res = json_object_get(out, "result");
		json_t *tk = as.dia == D_V1 ? json_object_get(res, "task") : res;
		json_t *tid = json_object_get(tk, "id"), *ctx = json_object_get(tk, "contextId");
		const char *task = json_is_string(tid) ? json_string_value(tid) : as.task;
		const char *cx = json_is_string(ctx) ? json_string_value(ctx) : as.context;
		char *body = NULL;
		size_t blen = 0;
		json_t *evs = json_array();
		if (e) json_array_append(evs, out); /* an error after admission (not expected): as is */
		else {
			json_t *art = json_array_get(json_object_get(tk, "artifacts"), 0);
			if (art) {
				json_t *au = as.dia == D_V1
				                 ? json_pack("{s:{s:s,s:s,s:O}}", "artifactUpdate", "taskId", task, "contextId", cx, "artifact", art)
				                 : json_pack("{s:s,s:s,s:s,s:O,s:b}", "kind", "artifact-update", "taskId", task, "contextId",
				                             cx, "artifact", art, "lastChunk", 1);
				json_array_append_new(evs, au);
			}
			json_t *su = status_update(as.dia, task, cx, json_deep_copy(json_object_get(tk, "status")), 1);
			json_t *md = json_object_get(tk, "metadata");
			if (su && md) json_object_set(as.dia == D_V1 ? json_object_get(su, "statusUpdate") : su, "metadata", md);
			json_array_append_new(evs, su);
		}
		size_t i;
		json_t *ev;
		json_array_foreach(evs, i, ev) {
			char *b;
			size_t len;
			int ok = e ? ((b = json_dumps(ev, JSON_COMPACT)) != NULL) : stream_event(&as, json_incref(ev), &b, &len) == 0;
			if (!ok) continue;
			if (e) {
				size_t n = strlen(b);
				char *w = malloc(n + 16);
				if (!w) { free(b); continue; }
				len = (size_t)snprintf(w, n + 16, "data: %s\n\n", b);
				free(b);
				b = w;
			}
			char *nb = realloc(body, blen + len + 1);
			if (nb) {
				memcpy(nb + blen, b, len);
				blen += len;
				nb[blen] = 0;
				body = nb;
			}
			free(b);
		}
		json_decref(evs);
		json_decref(out);
		json_decref(msg);
		dresp_text(r, 200, "text/event-stream", body ? body : "", blen);
		free(body);
		return;
	}
	json_decref(msg);
	if (stream && !e) {
		/* the call ran inside this request: the stream is its final task,
		 * one event, then the end of the response */
		char *j = json_dumps(out, JSON_COMPACT);
		json_decref(out);
		size_t n = j ? strlen(j) : 0;
		char *b = j ? malloc(n + 16) : NULL;
		if (!b) { free(j); dresp_error(r, "Internal", "internal store failure"); return; }
		int len = snprintf(b, n + 16, "data: %s\n\n", j);
		dresp_text(r, 200, "text/event-stream", b, (size_t)len);
		free(b);
		free(j);
		return;
	}
	/* NotHome (daemon/home.h): 307 to the home's /a2a/, the body the error */
	char hloc[600] = "";
	json_t *hl = code == DHOME_RPC_CODE ? json_object_get(json_object_get(e, "data"), "location") : NULL;
	if (json_is_string(hl)) snprintf(hloc, sizeof hloc, "%s", json_string_value(hl));
	dresp_json(r, code == -32700 || code == -32600 ? 400 : 200, out);
	if (hloc[0]) {
		r->status = 307;
		snprintf(r->location, sizeof r->location, "%s", hloc);
	}
}
