/* daemon/mcp_input.c: MCP multi round-trip requests for a tools/call whose
 * skill asks its caller before it runs (daemon/mcp_input.h). */
#include "daemon/mcp_input.h"
#include "daemon/http.h"
#include "coordinator/confirm.h"
#include "common/canon.h"
#include "common/ref.h"
#include <openssl/crypto.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define META_CAPS "io.modelcontextprotocol/clientCapabilities"
#define MISSING_CAPABILITY (-32021) /* MissingRequiredClientCapabilityError (HTTP 400) */

/* The key, read (or made) once: every daemon of the store on this host,
 * and this one after a restart, opens the states the others sealed. */
static pthread_mutex_t key_mu = PTHREAD_MUTEX_INITIALIZER;
static unsigned char key[CONFIRM_KEY_LEN];
static int key_loaded;

static int key_get(struct dctx *d, struct world_err *err)
{
	pthread_mutex_lock(&key_mu);
	int rc = 0;
	if (!key_loaded) {
		rc = confirm_key_load(d->writer, key, err);
		if (rc == 0) {
			key_loaded = 1;
			dlog("start: MCP request states are signed with the store's input state key");
		}
	}
	pthread_mutex_unlock(&key_mu);
	return rc;
}

/* A state's life: CONFIRM_TTL_S; test builds take WORLD_TEST_INPUT_TTL_S
 * (seconds, >= 1), so a test can see one expire. */
static long long ttl_s(void)
{
#ifdef WORLD_TEST_HOOKS
	const char *t = getenv("WORLD_TEST_INPUT_TTL_S");
	if (t && atoll(t) >= 1) return atoll(t);
#endif
	return CONFIRM_TTL_S;
}

void mcp_input_free(struct mcp_input *g)
{
	free(g->inputs);
	g->inputs = NULL;
}

json_t *mcp_input_refused(const struct mcp_input *g, json_t *id, int code, const char *msg)
{
	if (!g->once || code != WX_CONFLICT || strncmp(msg, "requestState", 12) != 0) return NULL;
	return drpc_error(id, -32602, "invalid params: %s", msg);
}

/* The verdict for a request of method on name whose declaration is decl:
 * NULL with *co filled (RUN, DECLINED), or the answer to send (ASK,
 * MISSING, a refusal) with *http. */
static json_t *decide(struct dreq *rq, const struct coord_session *sess, const json_t *decl, const char *method,
                      const char *name, json_t *id, const json_t *params, const char *task, struct confirm_out *co,
                      int *http)
{
	*http = 0;
	memset(co, 0, sizeof *co);
	const char *what = strcmp(method, "tools/call") == 0 ? "tool" : "prompt";
	json_t *resp = json_object_get(params, "inputResponses");
	json_t *jst = json_object_get(params, "requestState");
	if (jst && !json_is_string(jst)) return drpc_error(id, -32602, "invalid params: params.requestState must be a string");
	struct world_err err = { 0, "" };
	if (key_get(rq->d, &err) < 0) {
		dlog("error route=/mcp/ %s=%.128s: %s", what, name, err.msg);
		return drpc_error(id, -32603, "Internal: the request state key cannot be read (the daemon's log says why)");
	}
	/* the request the state is bound to: the name and its arguments' hash */
	json_t *args = json_object_get(params, "arguments");
	json_t *empty = json_object();
	size_t alen;
	char *abytes = world_canon_json(json_is_object(args) ? args : empty, &alen, &err);
	json_decref(empty);
	char aref[WORLD_REF_SIZE];
	if (!abytes || world_hash_ref(abytes, alen, aref, &err) < 0) {
		free(abytes);
		return drpc_error(id, -32602, "invalid params: arguments: %.300s", err.msg);
	}
	free(abytes);
	struct confirm_req cr = {
		.key = key, .principal = sess->credential_id, .method = method, .name = name, .args_ref = aref,
		.caps = json_object_get(json_object_get(params, "_meta"), META_CAPS), .responses = resp,
		.state = json_string_value(jst), .task = task, .now = (long long)time(NULL), .ttl_s = ttl_s(),
	};
	if (confirm_decide(decl, &cr, co, &err) < 0) {
		snprintf(rq->note, sizeof rq->note, "%s,error=InputRefused", method);
		dlog("%s %s=%.128s episode=%s: input refused: %s", method, what, name, sess->episode, err.msg);
		return drpc_error(id, err.code == WX_BAD_INPUT ? -32602 : -32603, "%s%s",
		                  err.code == WX_BAD_INPUT ? "invalid params: " : "Internal: ", err.msg);
	}
	json_t *ans = NULL;
	if (co->v == CONFIRM_MISSING) {
		snprintf(rq->note, sizeof rq->note, "%s,error=MissingCapability", method);
		ans = drpc_error(id, MISSING_CAPABILITY, "missing required client capability: %s %.128s asks its caller "
		                                         "through %s, which the client's capabilities do not declare",
		                 what, name, co->capability);
		json_object_set_new(json_object_get(ans, "error"), "data",
		                    json_pack("{s:{s:{}}}", "requiredCapabilities", co->capability));
		*http = 400;
	} else if (co->v == CONFIRM_ASK) {
		snprintf(rq->note, sizeof rq->note, "%s,input_required=%d", method, co->round);
		char *keys = json_dumps(co->ask, JSON_COMPACT | JSON_SORT_KEYS);
		dlog("input_required %s=%.128s episode=%s task=%s round=%d asks=%.300s", what, name, sess->episode, co->task,
		     co->round, keys ? keys : "?");
		free(keys);
		ans = json_pack("{s:s,s:O,s:{s:s,s:O,s:s}}", "jsonrpc", "2.0", "id", id ? id : json_null(), "result",
		                "resultType", "input_required", "inputRequests", co->ask, "requestState", co->state);
	}
	if (ans) confirm_out_free(co);
	return ans;
}

json_t *mcp_input_gate(struct dreq *rq, const struct coord_session *sess, const json_t *tool, json_t *id,
                       const json_t *params, int modern, const char *task, struct mcp_input *g, int *http)
{
	memset(g, 0, sizeof *g);
	*http = 0;
	const json_t *decl = json_object_get(tool, "inputRequests");
	const char *skill = json_string_value(json_object_get(tool, "id"));
	if (!decl) return NULL;
	if (!modern) {
		snprintf(rq->note, sizeof rq->note, "tools/call,error=InputRequired");
		json_t *r = json_pack("{s:[{s:s,s:s}],s:b}", "content", "type", "text", "text",
		                      "InputRequired: this tool asks its caller for input before it runs (elicitation, "
		                      "sampling or roots); call it under MCP protocol revision 2026-07-28, whose tools/call "
		                      "answers input_required", "isError", 1);
		return json_pack("{s:s,s:O,s:o}", "jsonrpc", "2.0", "id", id ? id : json_null(), "result", r);
	}
	struct confirm_out co;
	json_t *ans = decide(rq, sess, decl, "tools/call", skill, id, params, task, &co, http);
	if (ans) return ans;
	g->inputs = json_dumps(co.inputs, JSON_COMPACT | JSON_SORT_KEYS);
	if (!g->inputs) ans = drpc_error(id, -32603, "Internal: out of memory");
	g->once = co.from_state;
	g->round = co.round;
	snprintf(g->task, sizeof g->task, "%s", co.task);
	if (co.v == CONFIRM_DECLINED) snprintf(g->declined, sizeof g->declined, "%s", co.why);
	confirm_out_free(&co);
	return ans;
}

json_t *mcp_input_prompt(struct dreq *rq, const struct coord_session *sess, const json_t *prompt, json_t *id,
                         const json_t *params, int modern, int *http)
{
	*http = 0;
	const json_t *decl = json_object_get(prompt, "inputRequests");
	const char *name = json_string_value(json_object_get(prompt, "name"));
	if (!decl) return NULL;
	if (!modern)
		return drpc_error(id, -32602, "prompt \"%.128s\" asks its caller for input first (elicitation, sampling or "
		                              "roots); get it under MCP protocol revision 2026-07-28, whose prompts/get answers "
		                              "input_required", name);
	struct confirm_out co;
	json_t *ans = decide(rq, sess, decl, "prompts/get", name, id, params, NULL, &co, http);
	if (ans) return ans;
	if (co.v == CONFIRM_DECLINED) ans = drpc_error(id, -32602, "invalid params: %s; the prompt is not given", co.why);
	confirm_out_free(&co);
	return ans;
}
