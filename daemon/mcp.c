/* daemon/mcp.c: MCP Streamable HTTP at POST /mcp/ (docs/design.md §8.1), stateless
 * (no Mcp-Session-Id; GET /mcp/, the notification stream, is daemon/stream.c).
 *
 * Check order: body size (the server, 413) -> credential (401) ->
 * Content-Type application/json (415) -> Accept lists application/json and
 * text/event-stream (406) -> MCP-Protocol-Version supported (400; absent =
 * 2025-03-26) -> JSON (400, -32700) -> JSON-RPC shape (400, -32600).
 * Batches only under 2025-03-26. Notifications and responses: 202, empty.
 * Protocol revision 2026-07-28 beside them, per request: a request whose
 * params._meta names io.modelcontextprotocol/protocolVersion is stateless
 * 2026-07-28 (era_of: the envelope, MCP-Protocol-Version / Mcp-Method /
 * Mcp-Name agreeing with the body, else -32020; modern_stamp: resultType,
 * serverInfo, cache fields); server/discover lists every revision.
 * Answers: text/event-stream `event: message\ndata: JSON\n\n`, or plain
 * JSON when the Accept header gives application/json a higher q.
 *
 * tools/call of a published transition goes to coord_call; a failure of
 * the call is a tool result with isError:true whose text names the error
 * class and message (never an untyped -32603). */
#include "daemon/http.h"
#include "daemon/home.h"
#include "daemon/mcp_input.h"
#include "daemon/route.h"
#include "daemon/mcp_tasks.h"
#include "coordinator/catalog.h"
#include "coordinator/provenance.h"
#include "coordinator/registry.h"
#include "common/jschema.h"
#include "store/store.h"
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The MCP tool name of a transition id (route.h). */
int dtool_name(const char *id, char out[65])
{
	size_t n = registry_tool_name(id, out, 65);
	return n >= 1 && n <= REGISTRY_TOOL_NAME_MAX ? 0 : -1;
}

static const char *const versions[] = { "2025-11-25", "2025-06-18", "2025-03-26" };
#define LEGACY_VERSION "2025-03-26"
/* The stateless revision: no initialize; every request names its version
 * and the client's capabilities in params._meta, and carries the routing
 * headers (docs/daemon.md, "MCP 2026-07-28"). */
#define MODERN_VERSION "2026-07-28"
#define META_VERSION "io.modelcontextprotocol/protocolVersion"
#define META_CAPS "io.modelcontextprotocol/clientCapabilities"
#define META_SERVER "io.modelcontextprotocol/serverInfo"
#define HEADER_MISMATCH (-32020) /* a routing header disagrees with the body */
#define UNSUPPORTED_VERSION (-32022) /* UnsupportedProtocolVersionError (data: supported, requested) */
/* A batch runs on one call worker, its messages one after another, and
 * counts once against its episode's share of the workers: at most this
 * many of its messages are looked at. Each request beyond them (a message
 * with an id) is answered with an error naming the cap and nothing of it
 * runs or is committed; the ones without an id get no answer, as ever.
 * Before the cap one batch of 3,000 tools/call held a worker for 12.8 s. */
#define MCP_BATCH_MAX 32

struct mcp {
	struct dreq *rq;
	struct coord_session *sess;
	const char *version;
	int modern;      /* this request speaks 2026-07-28 */
	json_t *visible; /* lazily loaded descriptors */
	int internal;    /* a host failure happened (already logged) */
	int sse;         /* the answer goes out as text/event-stream */
	int batched;     /* this request is a batch (no progress: one answer for them all) */
	int cancelled;   /* a tools/call of it was cancelled: no answer for it */
	int unavailable; /* a tools/call of it failed: the store's server unreachable (HTTP 503) */
	char home_url[WORLD_HOME_URL_MAX + 1]; /* a tools/call of it is another host's episode's: 307 there (daemon/home.h) */
	int http_status; /* the HTTP status of its refusal (2026-07-28: 400, or 404 for an unknown method); 0 = usual */
	int listen;      /* subscriptions/listen may be opened (mcp_listen_check on the HTTP thread) */
	json_t *listen_id;     /* ... and was: its id (the subscription id) */
	int listen_tools;      /* ... its filter asks for tools list changes */
	int listen_resources;  /* ... and for resources list changes */
	int listen_prompts;    /* ... and for prompts list changes */
	json_t *listen_tasks;  /* ... and for these tasks' status (taskIds; daemon/mcp_tasks.h), or NULL */
	int in_task;           /* a task's own run of its tools/call (daemon/mcp_tasks.c) */
};

/* Progress of one tools/call (coord_call's on_progress): each stage one
 * notifications/progress event on the POST's own response, which goes
 * live (route.h, dlive_start) at the first one. */
struct progress {
	struct mcp *m;
	json_t *token;
	int total, n;
	struct dlive *live;
	struct dcall *call;
	int live_failed;
};

static void on_progress(void *ctx, const char *stage, const char *message)
{
	struct progress *p = ctx;
	if (p->live_failed) return;
	if (!p->live) {
		p->live = dlive_start(p->m->rq, "text/event-stream");
		if (!p->live) { p->live_failed = 1; return; }
		/* 2026-07-28: closing the response stream is the cancel (its
		 * cancellation page); the 2025 revisions say a disconnect is not */
		if (p->m->modern) dlive_cancel_on_gone(p->live, &p->call->cancel);
	}
	/* stage numbers: admitted 1, plan 2, effect 3, finish total-1, commit total */
	int k = strcmp(stage, "admitted") == 0 ? 1 : strcmp(stage, "plan") == 0 ? 2 : strcmp(stage, "effect") == 0 ? 3
	        : strcmp(stage, "finish") == 0 ? p->total - 1 : p->total;
	if (k <= p->n) k = p->n + 1; /* progress MUST increase */
	p->n = k;
	char msg[400];
	snprintf(msg, sizeof msg, "%s: %s", stage, message);
	json_t *ev = json_pack("{s:s,s:s,s:{s:O,s:i,s:i,s:s}}", "jsonrpc", "2.0", "method", "notifications/progress",
	                       "params", "progressToken", p->token, "progress", k, "total", p->total > k ? p->total : k,
	                       "message", msg);
	char *j = ev ? json_dumps(ev, JSON_COMPACT) : NULL;
	json_decref(ev);
	if (!j) return;
	size_t n = strlen(j);
	char *b = malloc(n + 32);
	if (b) {
		int len = snprintf(b, n + 32, "event: message\ndata: %s\n\n", j);
		if (dlive_push(p->live, b, (size_t)len) < 0) p->live_failed = 1;
	}
	free(b);
	free(j);
}

static int supported(const char *v)
{
	for (size_t i = 0; i < sizeof versions / sizeof versions[0]; i++)
		if (strcmp(v, versions[i]) == 0) return 1;
	return 0;
}

/* The q value the Accept header gives this exact media type (-1: not
 * listed or q=0). Parameters other than q are ignored. */
static double accept_q(const char *accept, const char *type)
{
	double best = -1;
	size_t tl = strlen(type);
	const char *p = accept;
	while (p && *p) {
		while (*p == ' ' || *p == '\t' || *p == ',') p++;
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		const char *semi = memchr(p, ';', n);
		size_t mt = semi ? (size_t)(semi - p) : n;
		while (mt && (p[mt - 1] == ' ' || p[mt - 1] == '\t')) mt--;
		if (mt == tl && strncasecmp(p, type, tl) == 0) {
			double q = 1;
			for (const char *s = semi; s && s < p + n; s = memchr(s + 1, ';', (size_t)(p + n - s - 1))) {
				const char *a = s + 1;
				while (*a == ' ') a++;
				if ((a[0] == 'q' || a[0] == 'Q') && a[1] == '=') q = strtod(a + 2, NULL);
				if (s + 1 >= p + n) break;
			}
			if (q > 0 && q > best) best = q;
		}
		p = end;
	}
	return best;
}

static int ctype_is_json(const char *ct)
{
	if (!ct) return 0;
	while (*ct == ' ') ct++;
	size_t n = strcspn(ct, ";");
	while (n && (ct[n - 1] == ' ' || ct[n - 1] == '\t')) n--;
	return n == 16 && strncasecmp(ct, "application/json", 16) == 0;
}


static json_t *rpc_result(json_t *id, json_t *result)
{
	return json_pack("{s:s,s:O,s:o}", "jsonrpc", "2.0", "id", id, "result", result);
}

static int load_visible(struct mcp *m)
{
	if (m->visible) return 0;
	struct world_err err = { 0, "" };
	if (coord_visible(m->rq->d->coord, m->sess, &m->visible, &err) < 0) {
		char msg[1100];
		snprintf(msg, sizeof msg, "visible transitions: %s", err.msg);
		dlog("error route=/mcp/: %s", msg);
		m->internal = 1;
		m->visible = NULL;
		return -1;
	}
	return 0;
}

/* inputSchema / outputSchema as MCP wants them: an object schema. */
static json_t *object_schema(const json_t *s)
{
	if (json_is_object(s) && json_is_string(json_object_get(s, "type")) &&
	    strcmp(json_string_value(json_object_get(s, "type")), "object") == 0)
		return json_deep_copy(s);
	if (json_is_object(s) && !json_object_get(s, "type")) {
		json_t *c = json_deep_copy(s);
		json_object_set_new(c, "type", json_string("object"));
		return c;
	}
	return NULL;
}

/* ---- what a tool is and what its result says (docs/daemon.md, "Tool
 * annotations" and "Tool results") ---- */

/* The effects a transition may declare, by what they do to the episode's
 * worktree. Every Ailang.* effect runs the tool interpreter in a capsule that
 * sees the worktree mounted read-only and nothing else of the host
 * (docs/broker.md), so each only reads; Workspace.Write creates or replaces
 * files. An effect not listed here is judged as the spec's defaults do
 * (not read-only, destructive). The log entry every call commits is World's
 * append-only record of the call, not a change of the agent's environment. */
static const struct { const char *name; int reads_only; } effect_kinds[] = {
	{ "Workspace.Read", 1 }, { "Ailang.Check", 1 }, { "Ailang.Run", 1 }, { "Ailang.Discover", 1 },
	{ "Ailang.CLI", 1 },     { "Workspace.Write", 0 },
};

json_t *dtool_annotations(const json_t *dsc)
{
	int ro = 1;
	size_t i;
	json_t *de;
	json_array_foreach(json_object_get(dsc, "declaredEffects"), i, de) {
		const char *en = json_string_value(json_object_get(de, "effect"));
		int known = 0;
		for (size_t k = 0; en && k < sizeof effect_kinds / sizeof effect_kinds[0]; k++)
			if (strcmp(en, effect_kinds[k].name) == 0) { known = 1; if (!effect_kinds[k].reads_only) ro = 0; }
		if (!known) ro = 0;
	}
	const char *tid = json_string_value(json_object_get(dsc, "id"));
	const char *title = json_string_value(json_object_get(dsc, "title"));
	/* read-only: nothing to destroy, and a repeat changes nothing; a writer
	 * may replace what was there, and a repeat of an edit may apply again */
	return json_pack("{s:s,s:b,s:b,s:b,s:b}", "title", title && *title ? title : tid ? tid : "", "readOnlyHint", ro,
	                 "destructiveHint", !ro, "idempotentHint", ro, "openWorldHint", 0);
}

int dresult_verdict(const json_t *dsc, const json_t *output, char *why, size_t n)
{
	/* An effect the broker refused (budget, scope, effect name, expiry)
	 * and an output that does not say "ok": true is a refusal, before the
	 * schema (an output the plan never finished has only its world block). */
	const json_t *effs = json_object_get(json_object_get(output, "world"), "effects");
	size_t i;
	const json_t *we;
	if (!json_is_true(json_object_get(output, "ok")))
		json_array_foreach(effs, i, we) {
			if (!json_is_string(json_object_get(we, "status")) ||
			    strcmp(json_string_value(json_object_get(we, "status")), "denied") != 0)
				continue;
			const char *eid = json_string_value(json_object_get(we, "id"));
			const char *rec = json_string_value(json_object_get(we, "record"));
			snprintf(why, n, "effect %.100s was refused by the broker (its record %.80s says why)", eid ? eid : "-",
			         rec ? rec : "-");
			return 3;
		}
	const json_t *schema = json_object_get(dsc, "outputSchema");
	if (schema) {
		struct world_err e = { 0, "" };
		if (jschema_validate(schema, output, &e) < 0) {
			snprintf(why, n, "%s", e.code == WX_FAIL ? "out of memory validating the output" : e.msg);
			return 2;
		}
	}
	const json_t *okv = json_object_get(output, "ok");
	if (json_is_false(okv)) {
		const char *r = json_string_value(json_object_get(output, "refused"));
		if (!r) r = json_string_value(json_object_get(output, "error"));
		snprintf(why, n, "the transition reported failure (\"ok\": false)%s%.900s", r ? ": " : "", r ? r : "");
		return 1;
	}
	return 0;
}

/* The refusal of the first denied effect of a committed output, from its
 * effect record (effect, scope, denial label, budget left, cost): its class
 * -- BudgetExhausted for denied:budget, else EffectDenied -- and why. The
 * record unreadable: why stays dresult_verdict's. */
static const char *denial_why(struct dctx *d, const json_t *out, char *why, size_t n)
{
	const json_t *effs = json_object_get(json_object_get(out, "world"), "effects");
	size_t i;
	const json_t *we;
	const char *rec = NULL;
	json_array_foreach(effs, i, we)
		if (json_is_string(json_object_get(we, "status")) &&
		    strcmp(json_string_value(json_object_get(we, "status")), "denied") == 0) {
			rec = json_string_value(json_object_get(we, "record"));
			break;
		}
	struct world_err err = { 0, "" };
	struct world_store *st = rec ? dreader_get(d, &err) : NULL;
	struct world_object o = { 0 };
	json_t *r = NULL;
	const char *klass = "EffectDenied";
	if (st && world_object_get(st, rec, &o, &err) == 0) r = json_loadb((const char *)o.payload, o.len, 0, NULL);
	dreader_put(d, st);
	const char *label = json_string_value(json_object_get(r, "denial"));
	const char *eff = json_string_value(json_object_get(r, "effect"));
	const char *scope = json_string_value(json_object_get(r, "scope"));
	if (label && eff && scope) {
		long long left = json_integer_value(json_object_get(r, "budgetBefore"));
		long long cost = json_integer_value(json_object_get(r, "cost"));
		if (strcmp(label, "denied:budget") == 0) {
			klass = "BudgetExhausted";
			snprintf(why, n, "the budget of %.100s on %.200s is spent: %lld left, the effect costs %lld (worldd "
			         "session list shows budget/spent/remaining; nothing was written)", eff, scope, left, cost);
		} else
			snprintf(why, n, "effect %.100s on %.200s refused: %.40s (its grants do not allow it; nothing was done)",
			         eff, scope, label);
	}
	json_decref(r);
	world_object_free(&o);
	return klass;
}

/* ---- credentials and the clients that read them (docs/daemon.md,
 * "Credentials and MCP clients") ---- */

/* RFC 9728 resource identifiers: /mcp/ for its path-inserted metadata URL,
 * the daemon's origin for the root one. 0, or -1 for other paths. */
static int resource_of(const struct dctx *d, const char *path, char *out, size_t n)
{
	const char *w = "/.well-known/oauth-protected-resource";
	size_t wl = strlen(w);
	if (strncmp(path, w, wl) != 0) return -1;
	const char *rest = path + wl;
	if (!*rest || strcmp(rest, "/") == 0) snprintf(out, n, "%s/", d->base_url);
	else if (strcmp(rest, "/mcp") == 0 || strcmp(rest, "/mcp/") == 0) snprintf(out, n, "%s/mcp/", d->base_url);
	else return -1;
	return 0;
}

void mcp_resource_metadata(struct dreq *rq, struct dresp *r)
{
	char res[400];
	if (resource_of(rq->d, rq->path, res, sizeof res) < 0) {
		dresp_error(r, "NotFound", "no protected resource metadata here: see /.well-known/oauth-protected-resource/mcp/");
		return;
	}
	/* No authorization_servers: no OAuth authorization server issues
	 * these credentials; an operator mints them (worldd session mint). */
	dresp_json(r, 200,
	           json_pack("{s:s,s:[s],s:s,s:s}", "resource", res, "bearer_methods_supported", "header", "resource_name",
	                     "worldd: published World transitions over MCP and A2A", "worldd_credentials",
	                     "Bearer session credentials (64 hex) are minted by the operator with worldd session mint; "
	                     "there is no OAuth authorization server and no client registration"));
}

int mcp_not_oauth(struct dreq *rq, struct dresp *r)
{
	static const char *const exact[] = { "/register", "/authorize", "/token", "/oauth/register", "/oauth/token", "/oauth/authorize" };
	static const char *const prefix[] = { "/.well-known/oauth-authorization-server", "/.well-known/openid-configuration" };
	const char *p = rq->path;
	int hit = 0;
	for (size_t i = 0; i < sizeof exact / sizeof exact[0]; i++) hit |= strcmp(p, exact[i]) == 0;
	for (size_t i = 0; i < sizeof prefix / sizeof prefix[0]; i++) hit |= strncmp(p, prefix[i], strlen(prefix[i])) == 0;
	/* the path-appended forms too (/mcp/.well-known/openid-configuration) */
	if (strstr(p, "/.well-known/openid-configuration") || strstr(p, "/.well-known/oauth-authorization-server")) hit = 1;
	if (!hit) return -1;
	struct dresp tmp;
	memset(&tmp, 0, sizeof tmp);
	struct coord_session *s = NULL;
	int present = 0;
	char why[600];
	if (dauth(rq, &tmp, 0, 1, &s, &present) == 0)
		snprintf(why, sizeof why, "%s", present ? "the credential this client sent is a live session" : "this client sent no credential");
	else {
		json_t *v = tmp.body ? json_loadb(tmp.body, tmp.len, 0, NULL) : NULL;
		const char *msg = json_string_value(json_object_get(json_object_get(v, "error"), "message"));
		snprintf(why, sizeof why, "the credential this client sent was refused: %s", msg ? msg : "internal store failure");
		json_decref(v);
	}
	free(tmp.body);
	coord_session_free(s);
	dresp_error(r, "NotFound",
	            "worldd is not an OAuth authorization server (no client registration, authorization or token endpoint): "
	            "its MCP endpoint takes a session credential the operator mints (worldd session mint), sent as "
	            "Authorization: Bearer <credential>; %s",
	            why);
	return 0;
}

static json_t *tools_list(struct mcp *m, json_t *id)
{
	if (load_visible(m) < 0) return drpc_error(id, -32603, "Internal: internal store failure");
	json_t *tools = json_array();
	size_t i;
	json_t *dsc;
	json_array_foreach(m->visible, i, dsc) {
		const char *tid = json_string_value(json_object_get(dsc, "id"));
		char name[65];
		if (!tid || dtool_name(tid, name) < 0) {
			dlog("tools/list: transition \"%.128s\" skipped: its MCP name is over 64 bytes", tid ? tid : "?");
			continue;
		}
		json_t *in = object_schema(json_object_get(dsc, "inputSchema"));
		json_t *t = json_pack("{s:s,s:s,s:s,s:o}", "name", name, "title",
		                      json_string_value(json_object_get(dsc, "title")) ? json_string_value(json_object_get(dsc, "title")) : tid,
		                      "description",
		                      json_string_value(json_object_get(dsc, "description")) ? json_string_value(json_object_get(dsc, "description")) : "",
		                      "inputSchema", in ? in : json_pack("{s:s}", "type", "object"));
		json_t *out = object_schema(json_object_get(dsc, "outputSchema"));
		if (out) json_object_set_new(t, "outputSchema", out);
		json_object_set_new(t, "annotations", dtool_annotations(dsc));
		json_array_append_new(tools, t);
	}
	return rpc_result(id, json_pack("{s:o}", "tools", tools));
}

static json_t *tool_error(const char *klass, const char *msg, int code)
{
	char text[1200];
	snprintf(text, sizeof text, "%s: %s", klass, msg);
	return json_pack("{s:[{s:s,s:s}],s:b,s:{s:{s:s,s:s,s:i}}}", "content", "type", "text", "text", text, "isError", 1,
	                 "_meta", "world/error", "class", klass, "message", msg, "exit_code", code);
}

static int header_value(const char *h, char *out, size_t n);

/* 2026-07-28 (SEP-2243, custom headers): each property of the tool's
 * inputSchema annotated "x-mcp-header": NAME (reached through
 * "properties" alone: world-publish allows it nowhere else) whose value
 * the arguments hold (not null) must be mirrored, after Base64-sentinel
 * decoding, in the header Mcp-Param-NAME: a string as it is, an integer
 * or a number compared as a number, a boolean as true / false. NULL when
 * every one agrees, else the -32020 answer (HTTP 400). */
static json_t *param_headers(struct mcp *m, json_t *id, const json_t *schema, const json_t *args, int depth)
{
	const char *key;
	json_t *sub;
	if (depth > 16 || !json_is_object(args)) return NULL;
	json_object_foreach(json_object_get(schema, "properties"), key, sub) {
		json_t *val = json_object_get(args, key);
		if (!val || json_is_null(val)) continue;
		const char *name = json_string_value(json_object_get(sub, "x-mcp-header"));
		if (name) {
			char hn[100], hv[2048];
			snprintf(hn, sizeof hn, "Mcp-Param-%s", name);
			const char *h = dreq_header(m->rq, hn);
			int bad = h && header_value(h, hv, sizeof hv) < 0, same = 0;
			if (h && !bad) {
				char *end = NULL;
				if (json_is_string(val)) same = strcmp(hv, json_string_value(val)) == 0;
				else if (json_is_boolean(val)) same = strcmp(hv, json_is_true(val) ? "true" : "false") == 0;
				else if (json_is_number(val)) same = *hv && strtod(hv, &end) == json_number_value(val) && end && !*end;
			}
			if (!same) {
				m->http_status = 400;
				return drpc_error(id, HEADER_MISMATCH, "header mismatch: %s is %s, arguments.%.100s is %s", hn,
				                  !h ? "absent" : bad ? "invalid Base64" : "another value", key,
				                  json_is_string(val) || json_is_number(val) || json_is_boolean(val) ? "present" : "not a primitive");
			}
		}
		if (json_is_object(val)) {
			json_t *e = param_headers(m, id, sub, val, depth + 1);
			if (e) return e;
		}
	}
	return NULL;
}

/* An output's "content" array, when it has one: 1 to TOOL_CONTENT_MAX MCP
 * content items (coordinator/catalog.h). A "content" that is not an array
 * (ailang-read's file text, a string) is data, not the convention. 0 (none,
 * or valid), -1 with why. */
#define TOOL_CONTENT_MAX 64
static int content_of(const json_t *out, char *why, size_t n)
{
	json_t *items = json_object_get(out, "content");
	if (!json_is_array(items)) return 0;
	if (json_array_size(items) == 0 || json_array_size(items) > TOOL_CONTENT_MAX) {
		snprintf(why, n, "/content must be an array of 1-%d content items", TOOL_CONTENT_MAX);
		return -1;
	}
	size_t i;
	json_t *c;
	json_array_foreach(items, i, c) {
		char w[600];
		if (catalog_content_check(c, w, sizeof w) < 0) {
			snprintf(why, n, "/content/%zu: %s", i, w);
			return -1;
		}
	}
	return 0;
}

static json_t *tools_call(struct mcp *m, json_t *id, json_t *params)
{
	json_t *jname = json_object_get(params, "name");
	if (!json_is_string(jname)) return drpc_error(id, -32602, "tools/call needs params.name (a string)");
	const char *name = json_string_value(jname);
	json_t *args = json_object_get(params, "arguments");
	if (args && !json_is_object(args) && !json_is_null(args))
		return drpc_error(id, -32602, "tools/call: params.arguments must be an object");
	if (load_visible(m) < 0) return drpc_error(id, -32603, "Internal: internal store failure");
	const char *skill = NULL;
	size_t i;
	json_t *dsc, *tool = NULL;
	json_array_foreach(m->visible, i, dsc) {
		const char *tid = json_string_value(json_object_get(dsc, "id"));
		char esc[65];
		if (tid && dtool_name(tid, esc) == 0 && strcmp(esc, name) == 0) { skill = tid; tool = dsc; break; }
	}
	if (!skill) return drpc_error(id, -32602, "unknown tool \"%.200s\"", name);
	if (m->modern && !m->in_task) {
		json_t *e = param_headers(m, id, json_object_get(tool, "inputSchema"), args, 0);
		if (e) return e;
	}
	/* An optional idempotency key: params._meta["world/task_id"]. A retry
	 * with the same key and arguments answers the committed result. */
	const char *task = NULL;
	json_t *tk = json_object_get(json_object_get(params, "_meta"), "world/task_id");
	if (tk) {
		const char *t = json_string_value(tk);
		if (!t || !coord_task_id_valid(t))
			return drpc_error(id, -32602, "params._meta[\"world/task_id\"] must be 1-128 characters of [A-Za-z0-9._-]");
		task = t;
	}
	/* an effectful call of an episode whose home is another host: answered
	 * before anything runs (docs/daemon.md, "Episode homes") */
	if (json_array_size(json_object_get(tool, "declaredEffects")) > 0 && dhome_on()) {
		struct world_home h;
		struct world_err he = { 0, "" };
		int hr = dhome_check(m->sess->episode, &h, &he);
		if (hr < 0) {
			const char *k = coord_error_class(he.code);
			snprintf(m->rq->note, sizeof m->rq->note, "tools/call,error=%s", k);
			dlog("error route=/mcp/ tool=%.128s: %s", skill, he.msg);
			if (he.code == WX_UNAVAILABLE) m->unavailable = 1;
			return rpc_result(id, tool_error(k, he.code == WX_UNAVAILABLE ? "the store's database server cannot be "
			                                     "reached; retry (with the same task id a call runs at most once)"
			                                                          : "internal store failure", he.code));
		}
		if (hr == 1) {
			snprintf(m->rq->note, sizeof m->rq->note, "tools/call,error=NotHome,home=%.60s", h.host);
			if (task) /* the request log names the invocation the home will run */
				snprintf(m->rq->invocation_id, sizeof m->rq->invocation_id, "mcp:%.100s:%s", m->sess->episode, task);
			snprintf(m->home_url, sizeof m->home_url, "%s", h.url);
			json_t *e = json_pack("{s:s,s:O,s:o}", "jsonrpc", "2.0", "id", id ? id : json_null(), "error",
			                      dhome_rpc_error(m->sess->episode, &h, "/mcp/"));
			return e;
		}
	}
	/* a tool whose calls run as tasks (daemon/mcp_tasks.h); the task's
	 * own run comes back here, in_task */
	if (m->modern && !m->in_task && !m->batched) {
		json_t *a = mtask_call(m->rq, &m->sess, tool, id, params, task, &m->http_status);
		if (a) return a;
	}
	/* a skill that asks its caller first (daemon/mcp_input.h) */
	struct mcp_input in;
	int in_http = 0;
	json_t *asked = mcp_input_gate(m->rq, m->sess, tool, id, params, m->modern, task, &in, &in_http);
	if (asked) {
		m->http_status = in_http;
		return asked;
	}
	char *text = args && json_is_object(args) ? json_dumps(args, JSON_COMPACT | JSON_REAL_PRECISION(17)) : strdup("{}");
	if (!text) { mcp_input_free(&in); return drpc_error(id, -32603, "Internal: internal store failure"); }
	struct coord_call call = { .session = m->sess, .channel = "mcp", .skill_id = skill, .task_id = in.task[0] ? in.task : task,
	                           .args = text, .args_len = strlen(text), .inputs = in.inputs, .once = in.once,
	                           .declined = in.declined[0] ? in.declined : NULL };
	struct coord_result res;
	memset(&res, 0, sizeof res);
	struct world_err err = { 0, "" };
	/* cancellable by notifications/cancelled of this session's credential
	 * naming this request id (daemon/calls.c) */
	char owner[80], key[300];
	snprintf(owner, sizeof owner, "mcp:%s", m->sess->credential_id);
	if (json_is_string(id)) snprintf(key, sizeof key, "s:%s", json_string_value(id));
	else snprintf(key, sizeof key, "i:%lld", (long long)json_integer_value(id));
	struct dcall dc;
	int began = dcall_begin(&dc, owner, key, m->rq->job, &err);
	int registered = began >= 0;
	if (!registered) dlog("error route=/mcp/ tool=%.128s: not cancellable: %s", skill, err.msg);
	else call.cancel = &dc.cancel;
	if (began == 1)
		dlog("cancel episode=%s request_id=%.100s: cancelled while it waited for a call worker; it starts cancelled",
		     m->sess->episode, key + 2);
	/* progress: params._meta.progressToken, on the POST's own event stream */
	json_t *ptok = json_object_get(json_object_get(params, "_meta"), "progressToken");
	struct progress pg = { .m = m, .token = ptok, .call = &dc };
	if (registered && m->sse && !m->batched && (json_is_string(ptok) || json_is_integer(ptok))) {
		pg.total = json_array_size(json_object_get(tool, "declaredEffects")) > 0 ? 5 : 3;
		call.on_progress = on_progress;
		call.progress_ctx = &pg;
	}
	int rc = coord_call(m->rq->d->coord, &call, &res, &err);
	free(text);
	mcp_input_free(&in);
	if (pg.live) dlive_cancel_on_gone(pg.live, NULL);
	char reason[200] = "";
	if (registered) {
		snprintf(reason, sizeof reason, "%s", dc.reason);
		dcall_end(&dc);
	}
	if (rc < 0 && err.code == WX_CANCELLED) {
		/* the spec: the receiver of notifications/cancelled SHOULD NOT
		 * answer the cancelled request */
		snprintf(m->rq->note, sizeof m->rq->note, "tools/call,error=Cancelled");
		char safe[200];
		snprintf(safe, sizeof safe, "%s", reason);
		for (char *q = safe; *q; q++)
			if (*q < 0x20 || *q > 0x7e) *q = '?';
		dlog("tools/call cancelled request_id=%.100s tool=%.128s episode=%s: %s%s%s", key + 2, skill, m->sess->episode,
		     err.msg, safe[0] ? "; reason: " : "", safe);
		m->cancelled = 1;
		return NULL;
	}
	/* the request log names the invocation on every call, failed ones too */
	if (res.invocation_id[0]) snprintf(m->rq->invocation_id, sizeof m->rq->invocation_id, "%s", res.invocation_id);
	if (rc < 0) {
		const char *k = coord_error_class(err.code);
		snprintf(m->rq->note, sizeof m->rq->note, "tools/call,error=%s", k);
		json_t *refused = mcp_input_refused(&in, id, err.code, err.msg);
		if (refused) return refused;
		if (err.code == WX_UNAVAILABLE) {
			dlog("error route=/mcp/ tool=%.128s: %s", skill, err.msg);
			m->unavailable = 1;
			return rpc_result(id, tool_error(k, "the store's database server cannot be reached; retry (with the "
			                                     "same task id a call runs at most once)", err.code));
		}
		if (strcmp(k, "Internal") == 0) {
			dlog("error route=/mcp/ tool=%.128s: %s", skill, err.msg);
			return rpc_result(id, tool_error(k, "internal store failure", err.code));
		}
		return rpc_result(id, tool_error(k, err.msg, err.code));
	}
	snprintf(m->rq->invocation_id, sizeof m->rq->invocation_id, "%s", res.invocation_id);
	snprintf(m->rq->timing, sizeof m->rq->timing, " capsule_ms=%ld broker_ms=%ld commit_ms=%ld", res.capsule_ms,
	         res.broker_ms, res.commit_ms);
	json_error_t je;
	/* canonical JSON: a string may hold U+0000 (arguments echoed back) */
	json_t *out = json_loadb(res.output, res.output_len, JSON_ALLOW_NUL, &je);
	json_t *result = NULL;
	if (!json_is_object(out)) {
		dlog("error route=/mcp/ invocation_id=%s: committed output is not a JSON object", res.invocation_id);
		json_decref(out);
		result = tool_error("Internal", "internal store failure", WX_INTEGRITY);
	} else {
		/* The call committed; what its output says decides isError. An
		 * output outside the outputSchema is not handed over as
		 * structuredContent (the spec: it MUST conform); the text says
		 * where it broke the schema and holds the output as committed. */
		char why[1100];
		int v = dresult_verdict(tool, out, why, sizeof why);
		/* the receipt: entry_index and leaf_hash, the entry's leaf in the
		 * log's Merkle tree (GET /v1/log/proof/inclusion proves it) */
		json_t *meta = json_pack("{s:{s:s,s:s,s:I,s:s,s:b}}", "world/invocation", "invocation_id", res.invocation_id,
		                         "world_ref", res.world_ref, "entry_index", (json_int_t)res.entry_index, "leaf_hash",
		                         res.leaf_hash, "replayed", res.replayed);
		if (v == 3) {
			/* a refused effect: isError, the refusal named from its record */
			const char *klass = denial_why(m->rq->d, out, why, sizeof why);
			snprintf(m->rq->note, sizeof m->rq->note, "tools/call,error=%s", klass);
			char head[1300];
			snprintf(head, sizeof head, "%s: %s", klass, why);
			json_object_set_new(meta, "world/error", json_pack("{s:s,s:s}", "class", klass, "message", why));
			result = json_pack("{s:[{s:s,s:s},{s:s,s:s%}],s:o,s:b,s:o}", "content", "type", "text", "text", head,
			                   "type", "text", "text", res.output, res.output_len, "structuredContent", out,
			                   "isError", 1, "_meta", meta);
		} else if (v == 2) {
			snprintf(m->rq->note, sizeof m->rq->note, "tools/call,error=OutputSchema");
			dlog("tools/call invocation_id=%s: output does not match the outputSchema of %.128s: %s", res.invocation_id,
			     skill, why);
			char head[1300];
			snprintf(head, sizeof head, "OutputSchema: the result of %.128s does not match its outputSchema: %s", skill, why);
			json_object_set_new(meta, "world/error", json_pack("{s:s,s:s}", "class", "OutputSchema", "message", why));
			result = json_pack("{s:[{s:s,s:s},{s:s,s:s%}],s:b,s:o}", "content", "type", "text", "text", head, "type",
			                   "text", "text", res.output, res.output_len, "isError", 1, "_meta", meta);
			json_decref(out);
		} else if (content_of(out, why, sizeof why) < 0) {
			/* the output's "content" is not MCP content: nothing of it is
			 * handed over as content; the text says which item and why */
			snprintf(m->rq->note, sizeof m->rq->note, "tools/call,error=Content");
			dlog("tools/call invocation_id=%s: the content of %.128s's result is not MCP content: %s",
			     res.invocation_id, skill, why);
			char head[1300];
			snprintf(head, sizeof head, "Content: the result of %.128s carries content that is not MCP content: %s",
			         skill, why);
			json_object_set_new(meta, "world/error", json_pack("{s:s,s:s}", "class", "Content", "message", why));
			result = json_pack("{s:[{s:s,s:s},{s:s,s:s%}],s:b,s:o}", "content", "type", "text", "text", head, "type",
			                   "text", "text", res.output, res.output_len, "isError", 1, "_meta", meta);
			json_decref(out);
		} else {
			if (v == 1) snprintf(m->rq->note, sizeof m->rq->note, "tools/call,result=failed");
			json_t *items = json_object_get(out, "content");
			/* the output convention (docs/publishing.md): a "content" array
			 * of MCP content items is the result's content, as it is */
			if (json_is_array(items))
				result = json_pack("{s:O,s:o,s:b,s:o}", "content", items, "structuredContent", out, "isError", v == 1,
				                   "_meta", meta);
			else
				result = json_pack("{s:[{s:s,s:s%}],s:o,s:b,s:o}", "content", "type", "text", "text", res.output,
				                   res.output_len, "structuredContent", out, "isError", v == 1, "_meta", meta);
		}
	}
	coord_result_free(&res);
	return rpc_result(id, result);
}

/* A 2026-07-28 result: resultType, the server's identity in _meta, and the
 * cache fields of the cacheable results (SEP-2549: the lists and
 * resources/read; a session's own view: private, not to be reused: ttlMs 0). */
static void modern_stamp(json_t *answer, const char *method)
{
	json_t *res = json_object_get(answer, "result");
	if (!json_is_object(res)) return;
	if (!json_object_get(res, "resultType")) json_object_set_new(res, "resultType", json_string("complete"));
	json_t *meta = json_object_get(res, "_meta");
	if (!json_is_object(meta)) { meta = json_object(); json_object_set_new(res, "_meta", meta); }
	json_object_set_new(meta, META_SERVER, json_pack("{s:s,s:s}", "name", "worldd", "version", DAEMON_VERSION));
	if (strcmp(method, "tools/list") == 0 || strcmp(method, "prompts/list") == 0 ||
	    strcmp(method, "server/discover") == 0 || strncmp(method, "resources/", 10) == 0) {
		json_object_set_new(res, "ttlMs", json_integer(0));
		json_object_set_new(res, "cacheScope", json_string("private"));
	}
}

/* The capabilities: tools whose list changes are sent (the GET /mcp/
 * stream of the 2025 revisions, subscriptions/listen of 2026-07-28:
 * daemon/stream.c), resources (the provenance, immutable: no
 * subscriptions; the list -- an episode's log entries -- changes with its
 * commits, which a listen is told of: server/discover says listChanged,
 * initialize, whose GET stream does not send it, does not), prompts (the
 * templates packages publish: the GET stream and a listen that asks are
 * sent notifications/prompts/list_changed when a publish changes the
 * session's), completions (completion/complete). */
static json_t *capabilities(int listen)
{
	return json_pack("{s:{s:b},s:{s:b,s:b},s:{s:b},s:{}}", "tools", "listChanged", 1, "resources", "listChanged", listen,
	                 "subscribe", 0, "prompts", "listChanged", 1, "completions");
}

static json_t *discover(json_t *id)
{
	/* the tasks extension (SEP-2663), under extensions, never capabilities.tasks */
	json_t *caps = capabilities(1);
	json_object_set_new(caps, "extensions", json_pack("{s:{}}", MTASK_EXTENSION));
	return rpc_result(id, json_pack("{s:[s,s,s,s],s:o,s:s}", "supportedVersions", MODERN_VERSION, "2025-11-25",
	                                "2025-06-18", "2025-03-26", "capabilities", caps, "instructions",
	                                "Each tool is a published World transition; every successful call commits one log entry."));
}

/* UnsupportedProtocolVersionError (-32022, HTTP 400): the revisions this
 * daemon speaks and the one asked for (printable ASCII of it). */
static json_t *unsupported_version(json_t *id, const char *requested)
{
	char req[80];
	size_t k = 0;
	for (const char *c = requested; *c && k + 1 < sizeof req; c++) req[k++] = *c >= 0x20 && *c < 0x7f ? *c : '?';
	req[k] = 0;
	json_t *e = drpc_error(id, UNSUPPORTED_VERSION, "unsupported protocol version \"%s\" (supported: %s, 2025-11-25, "
	                                                "2025-06-18, 2025-03-26)", req, MODERN_VERSION);
	json_object_set_new(json_object_get(e, "error"), "data",
	                    json_pack("{s:[s,s,s,s],s:s}", "supported", MODERN_VERSION, "2025-11-25", "2025-06-18",
	                              "2025-03-26", "requested", req));
	return e;
}

/* A header value without its optional whitespace (RFC 9110 §5.5), and
 * decoded when it is the Base64 sentinel =?base64?...?= (strict: the
 * standard alphabet, whole quads, correct padding). 0, or -1 when the
 * sentinel holds invalid Base64. out gets at most n-1 bytes. */
static int header_value(const char *h, char *out, size_t n)
{
	while (*h == ' ' || *h == '\t') h++;
	size_t len = strlen(h);
	while (len && (h[len - 1] == ' ' || h[len - 1] == '\t')) len--;
	if (len >= 11 && strncmp(h, "=?base64?", 9) == 0 && strncmp(h + len - 2, "?=", 2) == 0) {
		const char *b = h + 9;
		size_t bl = len - 11, o = 0;
		static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
		if (bl % 4) return -1;
		for (size_t i = 0; i < bl; i += 4) {
			unsigned v = 0;
			int pad = 0;
			for (int j = 0; j < 4; j++) {
				char c = b[i + j];
				const char *p = c && c != '=' ? strchr(a, c) : NULL;
				if (c == '=' && i + 4 == bl && j >= 2 && (j == 3 || b[i + 3] == '=')) { pad++; v <<= 6; continue; }
				if (!p || pad) return -1;
				v = (v << 6) | (unsigned)(p - a);
			}
			unsigned char bytes[3] = { (unsigned char)(v >> 16), (unsigned char)(v >> 8), (unsigned char)v };
			for (int j = 0; j < 3 - pad; j++) {
				if (o + 1 >= n) return -1;
				out[o++] = (char)bytes[j];
			}
		}
		out[o] = 0;
		return 0;
	}
	snprintf(out, n, "%.*s", (int)len, h);
	return 0;
}

/* The era of one message: 0 legacy, 1 modern, -1 refused (*err set: an
 * answer to send as it is, with HTTP status m->http_status). The era is
 * the MCP-Protocol-Version header's: 2026-07-28 is stateless (every
 * request carries the _meta envelope: its protocolVersion, equal to the
 * header, and the client's capabilities; else -32602, HTTP 400) and its
 * routing headers agree with the body (Mcp-Method; Mcp-Name for
 * tools/call, prompts/get, resources/read; else -32020, HTTP 400). A body
 * naming 2026-07-28 under another header (or none) is -32020 too. Any
 * other header (2025-x, or absent = 2025-03-26) is the 2025 revisions'
 * initialize handshake. */
static int era_of(struct mcp *m, json_t *msg, json_t **err)
{
	json_t *id = json_object_get(msg, "id");
	if (id && !json_is_string(id) && !json_is_integer(id)) return 0; /* one() answers the shape */
	const char *mn = json_string_value(json_object_get(msg, "method"));
	json_t *params = json_object_get(msg, "params");
	json_t *meta = json_object_get(params, "_meta");
	json_t *pv = json_object_get(meta, META_VERSION);
	const char *hv = dreq_header(m->rq, "MCP-Protocol-Version");
	if (!hv || strcmp(hv, MODERN_VERSION) != 0) {
		if (!json_is_string(pv) || !mn || (hv && strcmp(json_string_value(pv), hv) == 0)) return 0;
		*err = drpc_error(id, HEADER_MISMATCH, "header mismatch: MCP-Protocol-Version is %.64s, the body's "
		                                       "params._meta[\"%s\"] is %.64s", hv ? hv : "absent", META_VERSION,
		                  json_string_value(pv));
		return -1;
	}
	if (!mn || !id) return 1; /* a notification or a response: nothing to answer, nothing routes on it */
	if (!json_is_object(meta)) {
		*err = drpc_error(id, -32602, "invalid params: protocol revision %s carries params._meta (\"%s\" and \"%s\") "
		                              "on every request; this one has %s", MODERN_VERSION, META_VERSION, META_CAPS,
		                  json_is_object(params) ? "no _meta object" : "no params object");
		return -1;
	}
	if (!json_is_string(pv)) {
		*err = drpc_error(id, -32602, "invalid params: params._meta[\"%s\"] must be a string (the revision: %s)",
		                  META_VERSION, MODERN_VERSION);
		return -1;
	}
	if (strcmp(json_string_value(pv), hv) != 0) {
		*err = drpc_error(id, HEADER_MISMATCH, "header mismatch: MCP-Protocol-Version is %s, the body's "
		                                       "params._meta[\"%s\"] is %.64s", hv, META_VERSION, json_string_value(pv));
		return -1;
	}
	if (!json_is_object(json_object_get(meta, META_CAPS))) {
		*err = drpc_error(id, -32602, "invalid params: params._meta[\"%s\"] must be an object (the client's capabilities)",
		                  META_CAPS);
		return -1;
	}
	const char *hm = dreq_header(m->rq, "Mcp-Method");
	char hmv[200];
	if (!hm || header_value(hm, hmv, sizeof hmv) < 0 || strcmp(hmv, mn) != 0) {
		*err = drpc_error(id, HEADER_MISMATCH, "header mismatch: Mcp-Method is %.100s, the body's method is %.100s",
		                  hm ? hm : "absent", mn);
		return -1;
	}
	const char *field = strcmp(mn, "tools/call") == 0 || strcmp(mn, "prompts/get") == 0 ? "name"
	                    : strcmp(mn, "resources/read") == 0                            ? "uri"
	                    : strcmp(mn, "tasks/get") == 0 || strcmp(mn, "tasks/update") == 0 ||
	                              strcmp(mn, "tasks/cancel") == 0 ? "taskId" /* SEP-2663's routing headers */
	                                                                                   : NULL;
	const char *bv = field ? json_string_value(json_object_get(params, field)) : NULL;
	if (bv) {
		const char *hn = dreq_header(m->rq, "Mcp-Name");
		char hnv[2048];
		int bad = hn && header_value(hn, hnv, sizeof hnv) < 0;
		if (!hn || bad || strcmp(hnv, bv) != 0) {
			*err = drpc_error(id, HEADER_MISMATCH, "header mismatch: Mcp-Name is %.100s%s, params.%s is %.100s",
			                  hn ? hn : "absent", bad ? " (invalid Base64)" : "", field, bv);
			return -1;
		}
	}
	return 1;
}

/* ---- resources: the provenance over MCP (docs/daemon.md, "Resources") ----
 * world://log/{index}, world://objects/{ref}, world://why/{index}; a session
 * sees its own episode's entries and objects only, exactly as on the read
 * routes (whose code answers log and objects: the same scoping, the same
 * "not found" for another episode's data). */
#define RES_PAGE 50

static json_t *resources_templates_world(json_t *id);

/* The prompts or package resources (member "prompts" / "resources" of the
 * transition registry, coordinator/catalog.h) the session may see: 0 with
 * *out (a new array), -1 when the store failed (logged; *out NULL). */
static int catalog_of(struct mcp *m, const char *member, json_t **out)
{
	struct world_err err = { 0, "" };
	json_t *reg = NULL;
	long long rev = 0;
	*out = NULL;
	struct world_store *st = dreader_get(m->rq->d, &err);
	int rc = st ? registry_load(st, &reg, &rev, NULL, &err) : -1;
	if (rc == 0) rc = catalog_visible(st, m->sess, reg, member, out, &err);
	if (st) dreader_put(m->rq->d, st);
	json_decref(reg);
	if (rc < 0) dlog("error route=/mcp/ %s: %s", member, err.msg);
	return rc;
}

static const json_t *catalog_find(const json_t *list, const char *key)
{
	size_t i;
	json_t *d;
	json_array_foreach(list, i, d) if (strcmp(catalog_key(d), key) == 0) return d;
	return NULL;
}

static json_t *prompts_list(struct mcp *m, json_t *id)
{
	json_t *list;
	if (catalog_of(m, "prompts", &list) < 0) return drpc_error(id, -32603, "Internal: internal store failure");
	json_t *out = json_array();
	size_t i, j;
	json_t *p, *a;
	json_array_foreach(list, i, p) {
		json_t *args = json_array();
		json_array_foreach(json_object_get(p, "arguments"), j, a)
			json_array_append_new(args, json_pack("{s:O,s:O,s:O}", "name", json_object_get(a, "name"), "description",
			                                      json_object_get(a, "description"), "required",
			                                      json_object_get(a, "required")));
		json_array_append_new(out, json_pack("{s:O,s:O,s:O,s:o}", "name", json_object_get(p, "name"), "title",
		                                     json_object_get(p, "title"), "description",
		                                     json_object_get(p, "description"), "arguments", args));
	}
	json_decref(list);
	return rpc_result(id, json_pack("{s:o}", "prompts", out));
}

static json_t *prompts_get(struct mcp *m, json_t *id, json_t *params)
{
	const char *pn = json_string_value(json_object_get(params, "name"));
	if (!pn) return drpc_error(id, -32602, "prompts/get needs params.name (a string)");
	json_t *list;
	if (catalog_of(m, "prompts", &list) < 0) return drpc_error(id, -32603, "Internal: internal store failure");
	/* one answer for a prompt that does not exist and one the session may not see */
	const json_t *p = catalog_find(list, pn);
	if (!p) {
		json_decref(list);
		return drpc_error(id, -32602, "unknown prompt \"%.200s\"", pn);
	}
	/* a prompt that asks its caller first (daemon/mcp_input.h) */
	int in_http = 0;
	json_t *asked = mcp_input_prompt(m->rq, m->sess, p, id, params, m->modern, &in_http);
	if (asked) {
		json_decref(list);
		m->http_status = in_http;
		return asked;
	}
	char why[800];
	json_t *msgs = catalog_prompt_render(p, json_object_get(params, "arguments"), why, sizeof why);
	json_t *ans = msgs ? rpc_result(id, json_pack("{s:O,s:o}", "description", json_object_get(p, "description"),
	                                              "messages", msgs))
	                   : drpc_error(id, -32602, "%s", why);
	json_decref(list);
	return ans;
}

/* completion/complete: a prompt's argument (its declared "values" that start
 * with the value typed), or a resource template's -- the session's own
 * entry indexes for world://log/{index} and world://why/{index}. */
#define COMPLETE_MAX 100
#define COMPLETE_SCAN 5000
static json_t *complete(struct mcp *m, json_t *id, json_t *params)
{
	json_t *ref = json_object_get(params, "ref"), *arg = json_object_get(params, "argument");
	const char *type = json_string_value(json_object_get(ref, "type"));
	const char *an = json_string_value(json_object_get(arg, "name"));
	const char *av = json_string_value(json_object_get(arg, "value"));
	if (!type || !an || !av)
		return drpc_error(id, -32602, "completion/complete needs params.ref {type, name | uri} and params.argument {name, value}");
	size_t vl = strlen(av);
	json_t *values = json_array();
	size_t total = 0;
	int more = 0;
	if (strcmp(type, "ref/prompt") == 0) {
		const char *pn = json_string_value(json_object_get(ref, "name"));
		json_t *list;
		if (!pn) { json_decref(values); return drpc_error(id, -32602, "completion/complete: ref/prompt needs a name"); }
		if (catalog_of(m, "prompts", &list) < 0) { json_decref(values); return drpc_error(id, -32603, "Internal: internal store failure"); }
		const json_t *p = catalog_find(list, pn), *decl = NULL;
		size_t i;
		json_t *a, *v;
		json_array_foreach(p ? json_object_get(p, "arguments") : NULL, i, a)
			if (strcmp(json_string_value(json_object_get(a, "name")), an) == 0) decl = a;
		if (!decl) {
			json_decref(list);
			json_decref(values);
			return p ? drpc_error(id, -32602, "completion/complete: prompt \"%.200s\" has no argument \"%.64s\"", pn, an)
			         : drpc_error(id, -32602, "unknown prompt \"%.200s\"", pn);
		}
		json_array_foreach(json_object_get(decl, "values"), i, v)
			if (strncmp(json_string_value(v), av, vl) == 0) {
				if (total++ < COMPLETE_MAX) json_array_append(values, v);
			}
		json_decref(list);
	} else if (strcmp(type, "ref/resource") == 0) {
		const char *uri = json_string_value(json_object_get(ref, "uri"));
		if (!uri) { json_decref(values); return drpc_error(id, -32602, "completion/complete: ref/resource needs a uri"); }
		if (strcmp(uri, "world://log/{index}") == 0 || strcmp(uri, "world://why/{index}") == 0) {
			if (strcmp(an, "index") != 0) {
				json_decref(values);
				return drpc_error(id, -32602, "completion/complete: %.64s has no variable \"%.64s\" (it has index)", uri, an);
			}
			struct world_err err = { 0, "" };
			struct world_store *st = dreader_get(m->rq->d, &err);
			long long from = 1, idx[500];
			size_t n = 0, seen = 0;
			int rc = st ? 0 : -1;
			/* oldest first, at most COMPLETE_SCAN entries looked at */
			while (rc == 0 && seen < COMPLETE_SCAN) {
				rc = world_episode_entries(st, m->sess->episode, from, 500, idx, &n, &err);
				if (rc < 0 || n == 0) break;
				for (size_t i = 0; i < n; i++) {
					char d[32];
					snprintf(d, sizeof d, "%lld", idx[i]);
					if (strncmp(d, av, vl) == 0 && total++ < COMPLETE_MAX) json_array_append_new(values, json_string(d));
				}
				seen += n;
				from = idx[n - 1] + 1;
				if (n < 500) break;
			}
			if (seen >= COMPLETE_SCAN) more = 1;
			if (st) dreader_put(m->rq->d, st);
			if (rc < 0) {
				json_decref(values);
				dlog("error route=/mcp/ completion/complete: %s", err.msg);
				return drpc_error(id, -32603, "Internal: internal store failure");
			}
		} else if (strcmp(uri, "world://objects/{ref}") == 0 || strcmp(uri, "world://objects/{ref}/payload") == 0) {
			/* a ref is not guessed: none offered */
		} else {
			json_t *list;
			if (catalog_of(m, "resources", &list) < 0) { json_decref(values); return drpc_error(id, -32603, "Internal: internal store failure"); }
			const json_t *r = catalog_find(list, uri);
			char var[64];
			snprintf(var, sizeof var, "{%.60s}", an);
			int has = r && json_object_get(r, "uriTemplate") && strstr(uri, var);
			json_decref(list);
			if (!has) {
				json_decref(values);
				return drpc_error(id, -32602, "completion/complete: no resource template %.200s with a variable \"%.64s\"", uri, an);
			}
			/* a package's template declares no values: none offered */
		}
	} else {
		json_decref(values);
		return drpc_error(id, -32602, "completion/complete: params.ref.type must be ref/prompt or ref/resource");
	}
	return rpc_result(id, json_pack("{s:{s:o,s:I,s:b}}", "completion", "values", values, "total", (json_int_t)total,
	                                "hasMore", more || total > COMPLETE_MAX));
}

static json_t *resources_templates(struct mcp *m, json_t *id)
{
	json_t *list;
	if (catalog_of(m, "resources", &list) < 0) return drpc_error(id, -32603, "Internal: internal store failure");
	json_t *ans = resources_templates_world(id);
	json_t *arr = json_object_get(json_object_get(ans, "result"), "resourceTemplates");
	size_t i;
	json_t *r;
	json_array_foreach(list, i, r) if (json_object_get(r, "uriTemplate"))
		json_array_append_new(arr, json_pack("{s:O,s:O,s:O,s:O}", "uriTemplate", json_object_get(r, "uriTemplate"), "name",
		                                     json_object_get(r, "name"), "description", json_object_get(r, "description"),
		                                     "mimeType", json_object_get(r, "mimeType")));
	json_decref(list);
	return ans;
}

/* A package resource (its uri, or one of its templates matching) as
 * resources/read answers it; NULL when none matches (*found 0). */
static json_t *package_read(struct mcp *m, json_t *id, const char *uri, int *found)
{
	json_t *list;
	*found = 1;
	if (catalog_of(m, "resources", &list) < 0) return drpc_error(id, -32603, "Internal: internal store failure");
	size_t i;
	json_t *r, *vars = NULL, *c = NULL;
	json_array_foreach(list, i, r) {
		const char *u = json_string_value(json_object_get(r, "uri"));
		const char *t = json_string_value(json_object_get(r, "uriTemplate"));
		if (u && strcmp(u, uri) == 0) { c = catalog_resource_contents(r, uri, NULL); break; }
		if (t && catalog_template_match(t, uri, &vars)) { c = catalog_resource_contents(r, uri, vars); break; }
	}
	json_decref(vars);
	int matched = i < json_array_size(list);
	json_decref(list);
	if (!matched) { *found = 0; return NULL; }
	if (!c) return drpc_error(id, -32603, "Internal: out of memory");
	return rpc_result(id, json_pack("{s:[o]}", "contents", c));
}

static json_t *resources_templates_world(json_t *id)
{
	return rpc_result(id, json_pack("{s:[{s:s,s:s,s:s,s:s},{s:s,s:s,s:s,s:s},{s:s,s:s,s:s,s:s},{s:s,s:s,s:s,s:s}]}",
	                                "resourceTemplates",
	                                "uriTemplate", "world://log/{index}", "name", "log entry", "description",
	                                "one entry of this episode's log (GET /v1/log/N)", "mimeType", "application/json",
	                                "uriTemplate", "world://why/{index}", "name", "provenance walk", "description",
	                                "why an entry of this episode is what it is: the verified links of its walk (worldd why)",
	                                "mimeType", "application/json", "uriTemplate", "world://objects/{ref}", "name", "object",
	                                "description", "an object this episode made or read, or a public one (GET /v1/objects/REF)",
	                                "mimeType", "application/json", "uriTemplate", "world://objects/{ref}/payload", "name",
	                                "object payload", "description",
	                                "the bytes of such an object, as stored (their sha256 is in its ref's hash input)",
	                                "mimeType", "application/octet-stream"));
}

static json_t *resources_list(struct mcp *m, json_t *id, json_t *params)
{
	long long from = 1;
	const char *cur = json_string_value(json_object_get(params, "cursor"));
	if (json_object_get(params, "cursor") && !cur) return drpc_error(id, -32602, "params.cursor must be a string");
	if (cur) {
		char *end;
		from = strtoll(cur, &end, 10);
		if (!*cur || *end || from < 1) return drpc_error(id, -32602, "params.cursor \"%.64s\" is not a cursor of this list", cur);
	}
	struct world_err err = { 0, "" };
	struct world_store *st = dreader_get(m->rq->d, &err);
	long long idx[RES_PAGE + 1];
	size_t n = 0;
	if (!st || world_episode_entries(st, m->sess->episode, from, RES_PAGE + 1, idx, &n, &err) < 0) {
		if (st) dreader_put(m->rq->d, st);
		dlog("error route=/mcp/ resources/list: %s", err.msg);
		return drpc_error(id, -32603, "Internal: internal store failure");
	}
	dreader_put(m->rq->d, st);
	json_t *list = json_array();
	if (!cur) {
		/* the package resources of fixed URI, on the first page */
		json_t *pk;
		if (catalog_of(m, "resources", &pk) < 0) { json_decref(list); return drpc_error(id, -32603, "Internal: internal store failure"); }
		size_t j;
		json_t *r;
		json_array_foreach(pk, j, r) if (json_object_get(r, "uri"))
			json_array_append_new(list, json_pack("{s:O,s:O,s:O,s:O}", "uri", json_object_get(r, "uri"), "name",
			                                      json_object_get(r, "name"), "description",
			                                      json_object_get(r, "description"), "mimeType",
			                                      json_object_get(r, "mimeType")));
		json_decref(pk);
	}
	for (size_t i = 0; i < n && i < RES_PAGE; i++) {
		char uri[64], name[64];
		snprintf(uri, sizeof uri, "world://log/%lld", idx[i]);
		snprintf(name, sizeof name, "log entry %lld", idx[i]);
		json_array_append_new(list, json_pack("{s:s,s:s,s:s}", "uri", uri, "name", name, "mimeType", "application/json"));
	}
	json_t *res = json_pack("{s:o}", "resources", list);
	if (n > RES_PAGE) {
		char nc[32];
		snprintf(nc, sizeof nc, "%lld", idx[RES_PAGE]);
		json_object_set_new(res, "nextCursor", json_string(nc));
	}
	return rpc_result(id, res);
}

static int index_of(const char *s, long long *out)
{
	char *end;
	if (!*s || strspn(s, "0123456789") != strlen(s) || strlen(s) > 18) return -1;
	*out = strtoll(s, &end, 10);
	return *out >= 1 ? 0 : -1;
}

/* An error of resources/read with data.uri = the URI asked for (SEP-2164).
 * A resource that does not exist, or that the session may not see (the
 * same answer), is -32002 under the 2025 revisions and -32602 under
 * 2026-07-28 (its schema retired -32002). */
static json_t *with_uri(json_t *e, const char *uri)
{
	json_t *u = json_string(uri);
	if (u) json_object_set_new(json_object_get(e, "error"), "data", json_pack("{s:o}", "uri", u));
	return e;
}
#define NOT_FOUND(m) ((m)->modern ? -32602 : -32002)

static json_t *object_payload(struct mcp *m, json_t *id, const char *uri, const char *ref);

static json_t *resources_read(struct mcp *m, json_t *id, json_t *params)
{
	const char *uri = json_string_value(json_object_get(params, "uri"));
	if (!uri) return drpc_error(id, -32602, "resources/read needs params.uri (a string)");
	char path[400];
	long long n;
	if (strncmp(uri, "world://why/", 12) == 0) {
		if (index_of(uri + 12, &n) < 0) return with_uri(drpc_error(id, -32602, "resource not found: %.200s (world://why/{index} takes a log index)", uri), uri);
		struct world_err err = { 0, "" };
		struct world_store *st = dreader_get(m->rq->d, &err);
		int member = 0;
		if (!st || world_episode_has_entry(st, m->sess->episode, n, &member, &err) < 0) {
			if (st) dreader_put(m->rq->d, st);
			dlog("error route=/mcp/ resources/read %.200s: %s", uri, err.msg);
			return drpc_error(id, -32603, "Internal: internal store failure");
		}
		if (!member) {
			dreader_put(m->rq->d, st);
			return with_uri(drpc_error(id, NOT_FOUND(m), "resource not found: %.200s (log entry %lld: not found)", uri, n), uri);
		}
		struct prov_walk w;
		memset(&w, 0, sizeof w);
		int rc = prov_walk(st, n, NULL, 0, &w, &err);
		dreader_put(m->rq->d, st);
		json_t *wj = rc == 0 ? prov_walk_json(&w) : NULL;
		prov_walk_free(&w);
		char *text = wj ? json_dumps(wj, JSON_COMPACT) : NULL;
		json_decref(wj);
		if (!text) {
			dlog("error route=/mcp/ resources/read %.200s: %s", uri, err.msg[0] ? err.msg : "walk failed");
			return drpc_error(id, -32603, "Internal: internal store failure");
		}
		json_t *res = json_pack("{s:[{s:s,s:s,s:s}]}", "contents", "uri", uri, "mimeType", "application/json", "text", text);
		free(text);
		return rpc_result(id, res);
	}
	if (strncmp(uri, "world://log/", 12) == 0) {
		if (index_of(uri + 12, &n) < 0) return with_uri(drpc_error(id, -32602, "resource not found: %.200s (world://log/{index} takes a log index)", uri), uri);
		snprintf(path, sizeof path, "/v1/log/%lld", n);
	} else if (strncmp(uri, "world://objects/", 16) == 0) {
		struct world_err e = { 0, "" };
		size_t ul = strlen(uri);
		if (ul > 24 && strcmp(uri + ul - 8, "/payload") == 0) {
			char ref[WORLD_REF_SIZE + 8];
			if (ul - 24 >= sizeof ref || (snprintf(ref, sizeof ref, "%.*s", (int)(ul - 24), uri + 16), world_ref_parse(ref, "ref", NULL, &e) < 0))
				return with_uri(drpc_error(id, -32602, "resource not found: %.200s (%s)", uri, e.msg[0] ? e.msg : "not a ref"), uri);
			return object_payload(m, id, uri, ref);
		}
		if (world_ref_parse(uri + 16, "ref", NULL, &e) < 0)
			return with_uri(drpc_error(id, -32602, "resource not found: %.200s (%s)", uri, e.msg), uri);
		snprintf(path, sizeof path, "/v1/objects/%s", uri + 16);
	} else {
		int found = 0;
		json_t *pa = package_read(m, id, uri, &found);
		if (found) return pa;
		return with_uri(drpc_error(id, NOT_FOUND(m), "resource not found: %.200s (neither a resource published by a package "
		                                             "nor world://log/{index}, world://why/{index}, world://objects/{ref})", uri), uri);
	}
	/* the read route answers it, with its scoping, for this same request's credential */
	struct dreq sub = *m->rq;
	sub.method = "GET";
	sub.path = path;
	sub.body = "";
	sub.body_len = 0;
	struct dresp r;
	memset(&r, 0, sizeof r);
	reads_handle(&sub, &r);
	json_t *ans;
	if (r.status == 200 && r.body) {
		char *text = strndup(r.body, r.len);
		ans = text ? rpc_result(id, json_pack("{s:[{s:s,s:s,s:s}]}", "contents", "uri", uri, "mimeType", "application/json", "text", text))
		           : drpc_error(id, -32603, "Internal: internal store failure");
		free(text);
	} else if (r.status == 404) {
		json_t *v = r.body ? json_loadb(r.body, r.len, 0, NULL) : NULL;
		const char *msg = json_string_value(json_object_get(json_object_get(v, "error"), "message"));
		ans = with_uri(drpc_error(id, NOT_FOUND(m), "resource not found: %.200s (%.300s)", uri, msg ? msg : "not found"), uri);
		json_decref(v);
	} else if (r.status == 400) {
		json_t *v = r.body ? json_loadb(r.body, r.len, 0, NULL) : NULL;
		const char *msg = json_string_value(json_object_get(json_object_get(v, "error"), "message"));
		ans = with_uri(drpc_error(id, -32602, "resource not found: %.200s (%.300s)", uri, msg ? msg : "bad request"), uri);
		json_decref(v);
	} else ans = drpc_error(id, -32603, "Internal: internal store failure");
	free(r.body);
	return ans;
}

/* world://objects/{ref}/payload: the object's bytes as a blob. Whether the
 * session may see the object is the read route's answer (GET
 * /v1/objects/REF for this request's credential: 404 for another
 * episode's, as for none); the bytes are then read from the store. */
static json_t *object_payload(struct mcp *m, json_t *id, const char *uri, const char *ref)
{
	char path[200];
	snprintf(path, sizeof path, "/v1/objects/%s", ref);
	struct dreq sub = *m->rq;
	sub.method = "GET";
	sub.path = path;
	sub.body = "";
	sub.body_len = 0;
	struct dresp r;
	memset(&r, 0, sizeof r);
	reads_handle(&sub, &r);
	int status = r.status;
	free(r.body);
	if (status == 404) return with_uri(drpc_error(id, NOT_FOUND(m), "resource not found: %.200s (object %s: not found)", uri, ref), uri);
	if (status != 200) return drpc_error(id, -32603, "Internal: internal store failure");
	struct world_err err = { 0, "" };
	struct world_store *st = dreader_get(m->rq->d, &err);
	struct world_object o;
	if (!st || world_object_get(st, ref, &o, &err) < 0) {
		if (st) dreader_put(m->rq->d, st);
		dlog("error route=/mcp/ resources/read %.200s: %s", uri, err.msg);
		return drpc_error(id, -32603, "Internal: internal store failure");
	}
	dreader_put(m->rq->d, st);
	char *b64 = malloc(4 * ((o.len + 2) / 3) + 1);
	if (b64) EVP_EncodeBlock((unsigned char *)b64, o.payload, (int)o.len);
	world_object_free(&o);
	if (!b64) return drpc_error(id, -32603, "Internal: out of memory");
	json_t *ans = rpc_result(id, json_pack("{s:[{s:s,s:s,s:s}]}", "contents", "uri", uri, "mimeType",
	                                       "application/octet-stream", "blob", b64));
	free(b64);
	return ans;
}

/* One JSON-RPC message; NULL when it needs no answer (notification, response). */
static json_t *one(struct mcp *m, json_t *msg, int batched)
{
	if (!json_is_object(msg)) return drpc_error(NULL, -32600, "invalid request: a JSON-RPC message is an object");
	json_t *id = json_object_get(msg, "id");
	json_t *method = json_object_get(msg, "method");
	json_t *jv = json_object_get(msg, "jsonrpc");
	if (id && !json_is_string(id) && !json_is_integer(id))
		return drpc_error(NULL, -32600, "invalid request: id must be a string or an integer");
	if (!json_is_string(jv) || strcmp(json_string_value(jv), "2.0") != 0)
		return drpc_error(id, -32600, "invalid request: jsonrpc must be \"2.0\"");
	if (!method) {
		if (id && (json_object_get(msg, "result") || json_object_get(msg, "error"))) return NULL; /* a response */
		return drpc_error(id, -32600, "invalid request: no method");
	}
	if (!json_is_string(method)) return drpc_error(id, -32600, "invalid request: method must be a string");
	const char *mn = json_string_value(method);
	json_t *params = json_object_get(msg, "params");
	if (params && !json_is_object(params) && !json_is_array(params))
		return drpc_error(id, -32600, "invalid request: params must be an object or an array");
	if (!id && strcmp(mn, "notifications/cancelled") == 0) {
		/* cancel this session's request of that id, if it is in flight
		 * (a malformed or unknown one is ignored, as the spec says) */
		json_t *rid = json_object_get(params, "requestId");
		const char *reason = json_string_value(json_object_get(params, "reason"));
		char owner[80], key[300];
		snprintf(owner, sizeof owner, "mcp:%s", m->sess->credential_id);
		if (json_is_string(rid)) snprintf(key, sizeof key, "s:%s", json_string_value(rid));
		else if (json_is_integer(rid)) snprintf(key, sizeof key, "i:%lld", (long long)json_integer_value(rid));
		else key[0] = 0;
		/* none in flight while this credential has requests waiting for
		 * a call worker: kept for them (daemon/calls.c, pending cancels) */
		unsigned long long pend = 0;
		int n = key[0] ? dcall_cancel(owner, key, reason, m->rq->job, 0, &pend) : 0;
		if (!batched)
			snprintf(m->rq->note, sizeof m->rq->note, "notifications/cancelled,fired=%d%s", n, pend ? ",pending=1" : "");
		dlog("cancel episode=%s request_id=%.100s: %s", m->sess->episode, key[0] ? key + 2 : "(malformed)",
		     n ? "the call in flight is cancelled"
		       : pend ? "no call of this session in flight has that id; kept for its requests waiting for a call worker"
		              : "no call of this session in flight has that id (ignored)");
		return NULL;
	}
	if (!id) return NULL; /* a notification: nothing to answer (notifications/initialized, ...) */
	if (!batched) snprintf(m->rq->note, sizeof m->rq->note, "%.100s", mn);
	if (strcmp(mn, "server/discover") == 0) return discover(id);
	if (m->modern) {
		/* 2026-07-28 dropped initialize, ping, logging/setLevel and
		 * resources/(un)subscribe: those, as any method it does not
		 * have, are 404 with -32601 (its Streamable HTTP page) */
		static const char *const modern[] = { "tools/list", "tools/call", "resources/list", "resources/templates/list",
		                                      "resources/read", "prompts/list", "prompts/get", "subscriptions/listen",
		                                      "completion/complete", "tasks/get", "tasks/update", "tasks/cancel" };
		int known = 0;
		for (size_t i = 0; i < sizeof modern / sizeof modern[0]; i++) known |= strcmp(mn, modern[i]) == 0;
		if (!known) {
			m->http_status = 404;
			return drpc_error(id, -32601, "method not found: %.200s is not a method of protocol revision %s%s", mn,
			                  MODERN_VERSION, strcmp(mn, "initialize") == 0 ? " (stateless: use server/discover)" : "");
		}
	}
	if (strcmp(mn, "initialize") == 0) {
		if (batched) return drpc_error(id, -32600, "initialize must not be part of a batch");
		json_t *pv = json_object_get(params, "protocolVersion");
		const char *v = json_is_string(pv) && supported(json_string_value(pv)) ? json_string_value(pv) : versions[0];
		/* tools.listChanged: the GET /mcp/ stream (daemon/stream.c) sends
		 * notifications/tools/list_changed under every revision initialize
		 * serves */
		return rpc_result(id, json_pack("{s:s,s:o,s:{s:s,s:s},s:s}", "protocolVersion", v, "capabilities", capabilities(0),
		                                "serverInfo", "name", "worldd", "version", DAEMON_VERSION, "instructions",
		                                "Each tool is a published World transition; every successful call commits one log entry."));
	}
	if (strcmp(mn, "ping") == 0) return rpc_result(id, json_object());
	if (strcmp(mn, "tools/list") == 0) return tools_list(m, id);
	if (strcmp(mn, "resources/list") == 0) return resources_list(m, id, params);
	if (strcmp(mn, "resources/templates/list") == 0) return resources_templates(m, id);
	if (strcmp(mn, "completion/complete") == 0) {
		if (!json_is_object(params)) return drpc_error(id, -32602, "completion/complete needs params {ref, argument}");
		return complete(m, id, params);
	}
	if (strcmp(mn, "resources/read") == 0) {
		if (!json_is_object(params)) return drpc_error(id, -32602, "resources/read needs params {uri}");
		return resources_read(m, id, params);
	}
	/* the prompt templates packages publish (coordinator/catalog.h) */
	if (strcmp(mn, "prompts/list") == 0) return prompts_list(m, id);
	if (strcmp(mn, "prompts/get") == 0) return prompts_get(m, id, params);
	if (strcmp(mn, "tools/call") == 0) {
		if (!json_is_object(params)) return drpc_error(id, -32602, "tools/call needs params {name, arguments}");
		return tools_call(m, id, params);
	}
	if (m->modern && strncmp(mn, "tasks/", 6) == 0) return mtask_rpc(m->rq, m->sess, mn, id, params, &m->http_status);
	if (strcmp(mn, "subscriptions/listen") == 0) {
		if (!m->modern) return drpc_error(id, -32601, "method not found: subscriptions/listen is a method of protocol "
		                                              "revision %s (the 2025 revisions: GET /mcp/)", MODERN_VERSION);
		json_t *f = json_object_get(params, "notifications");
		if (!json_is_object(f)) return drpc_error(id, -32602, "subscriptions/listen needs params.notifications (an object: the filter)");
		if (!m->listen) /* the server opens listens on its HTTP thread (mcp_listen_check) */
			return drpc_error(id, -32603, "subscriptions/listen could not be opened for this request");
		m->listen_id = json_incref(id);
		m->listen_tools = json_is_true(json_object_get(f, "toolsListChanged"));
		m->listen_resources = json_is_true(json_object_get(f, "resourcesListChanged"));
		m->listen_prompts = json_is_true(json_object_get(f, "promptsListChanged"));
		/* taskIds: the tasks extension's status notifications, for a
		 * request that declares it (daemon/mcp_tasks.h) */
		json_t *tids = json_object_get(f, "taskIds");
		if (tids) {
			json_t *e = mtask_listen_check(id, params, tids, &m->http_status);
			if (e) {
				json_decref(m->listen_id);
				m->listen_id = NULL;
				return e;
			}
			m->listen_tasks = json_incref(tids);
		}
		return NULL;
	}
	return drpc_error(id, -32601, "method not found: %.200s", mn);
}

static void answer(struct dresp *r, json_t *v, int sse)
{
	if (!sse) { dresp_json(r, 200, v); return; }
	char *s = json_dumps(v, JSON_COMPACT);
	json_decref(v);
	if (!s) { dresp_error(r, "Internal", "internal store failure"); return; }
	size_t n = strlen(s);
	char *b = malloc(n + 32);
	if (!b) { free(s); dresp_error(r, "Internal", "internal store failure"); return; }
	/* JSON from json_dumps has no raw newline, so one data: line holds it */
	int m = snprintf(b, n + 32, "event: message\ndata: %s\n\n", s);
	free(s);
	free(r->body);
	r->status = 200;
	r->body = b;
	r->len = (size_t)m;
	r->ctype = "text/event-stream";
}

/* Every check of a POST and the answer (docs/daemon.md, "MCP"); with
 * m->listen, a subscriptions/listen that passed them is left for the
 * caller (m->listen_id set, r untouched). */
/* The session could not be checked because the store does not answer
 * (dauth's 503): a JSON-RPC request with an id is answered as documented,
 * a tools/call with an isError result of class StoreUnavailable, any other
 * method with a JSON-RPC error naming it -- in the same 503 with
 * Retry-After -- not with a bare error envelope. */
static void store_down(struct dresp *r, const struct dreq *rq)
{
	json_t *msg = json_loadb(rq->body, rq->body_len, 0, NULL);
	json_t *id = json_object_get(msg, "id");
	const char *method = json_string_value(json_object_get(msg, "method"));
	if (!method || !(json_is_string(id) || json_is_integer(id))) {
		json_decref(msg);
		return;
	}
	const char *text = "the store's database server cannot be reached; retry (with the same task id a call runs at "
	                   "most once)";
	json_t *a = strcmp(method, "tools/call") == 0 ? rpc_result(id, tool_error("StoreUnavailable", text, WX_UNAVAILABLE))
	                                               : drpc_error(id, -32603, "StoreUnavailable: %s", text);
	json_decref(msg);
	if (!a) return;
	int retry = r->retry_after_s;
	free(r->body);
	r->body = NULL;
	dresp_json(r, 503, a);
	r->retry_after_s = retry;
}

static void handle(struct mcp *m, struct dresp *r)
{
	struct dreq *rq = m->rq;
	if (dauth(rq, r, 0, 0, &m->sess, NULL) < 0) {
		if (r->status == 503) store_down(r, rq);
		goto out;
	}
	if (!ctype_is_json(dreq_header(rq, "Content-Type"))) {
		dresp_error(r, "BadRequest", "Content-Type must be application/json");
		r->status = 415;
		goto out;
	}
	const char *accept = dreq_header(rq, "Accept");
	double qj = accept ? accept_q(accept, "application/json") : -1;
	double qs = accept ? accept_q(accept, "text/event-stream") : -1;
	if (qj < 0 || qs < 0) {
		dresp_error(r, "BadRequest", "Accept must list both application/json and text/event-stream");
		r->status = 406;
		goto out;
	}
	int sse = !(qj > qs);
	m->sse = sse;
	const char *ver = dreq_header(rq, "MCP-Protocol-Version");
	if (!ver) ver = LEGACY_VERSION;
	json_error_t je;
	json_t *msg = json_loadb(rq->body, rq->body_len, DRPC_PARSE_FLAGS, &je);
	if (!supported(ver) && strcmp(ver, MODERN_VERSION) != 0) {
		/* UnsupportedProtocolVersionError, with the request's id when it has one */
		json_t *id = json_object_get(msg, "id");
		dresp_json(r, 400, unsupported_version(json_is_string(id) || json_is_integer(id) ? id : NULL, ver));
		json_decref(msg);
		goto out;
	}
	m->version = ver;
	if (!msg) {
		dresp_json(r, 400, drpc_error(NULL, -32700, "parse error: %s at byte %d", je.text, je.position));
		goto out;
	}
	static const char *const nul_data[] = { "/params/arguments", NULL };
	char nul_at[400];
	if (drpc_nul(msg, nul_data, 1, nul_at, sizeof nul_at)) {
		json_t *jid = json_is_object(msg) ? json_object_get(msg, "id") : NULL;
		if (json_is_string(jid) && memchr(json_string_value(jid), 0, json_string_length(jid))) jid = NULL;
		dresp_json(r, 400, drpc_error(json_is_string(jid) || json_is_integer(jid) ? jid : NULL, -32600,
		                              "invalid request: the string at %s holds U+0000 (a NUL character); World "
		                              "takes one only as data, inside a tool's arguments (params.arguments)",
		                              nul_at));
		json_decref(msg);
		goto out;
	}
	if (json_is_array(msg)) {
		if (strcmp(ver, LEGACY_VERSION) != 0) {
			dresp_json(r, 400, drpc_error(NULL, -32600, "invalid request: batches are accepted only under MCP-Protocol-Version 2025-03-26 (this request says %s)", ver));
		} else if (json_array_size(msg) == 0) {
			dresp_json(r, 400, drpc_error(NULL, -32600, "invalid request: empty batch"));
		} else {
			m->batched = 1;
			json_t *outs = json_array();
			size_t i;
			json_t *e;
			size_t n = json_array_size(msg);
			if (n > MCP_BATCH_MAX) snprintf(rq->note, sizeof rq->note, "batch=%zu,over_cap=%zu", n, n - MCP_BATCH_MAX);
			else snprintf(rq->note, sizeof rq->note, "batch=%zu", n);
			json_array_foreach(msg, i, e) {
				json_t *a;
				if (i < MCP_BATCH_MAX) a = one(m, e, 1);
				else {
					json_t *id = json_object_get(e, "id");
					a = json_is_string(id) || json_is_integer(id)
					        ? drpc_error(id, -32600, "invalid request: a batch holds at most %d messages; "
					                                 "this is message %zu, not run (send it in another batch)",
					                     MCP_BATCH_MAX, i + 1)
					        : NULL;
				}
				if (a) json_array_append_new(outs, a);
			}
			if (json_array_size(outs) == 0 && m->cancelled) {
				json_decref(outs); /* only a cancelled request: no answer, an empty stream */
				dresp_text(r, 200, "text/event-stream", "", 0);
			} else if (json_array_size(outs) == 0) { json_decref(outs); r->status = 202; }
			else answer(r, outs, sse);
		}
	} else {
		json_t *eerr = NULL;
		int era = json_is_object(msg) ? era_of(m, msg, &eerr) : 0;
		m->modern = era == 1;
		if (era < 0) m->http_status = 400;
		json_t *a = era < 0 ? eerr : one(m, msg, 0);
		if (a && m->modern && json_object_get(a, "result"))
			modern_stamp(a, json_string_value(json_object_get(msg, "method")));
		if (!a && m->listen_id) {
			/* subscriptions/listen: the caller opens the stream */
		} else if (!a && m->cancelled) dresp_text(r, 200, "text/event-stream", "", 0); /* no answer: an empty stream */
		else if (!a) r->status = 202;
		else {
			json_t *err = json_object_get(a, "error");
			int code = err ? (int)json_integer_value(json_object_get(err, "code")) : 0;
			if (m->http_status) dresp_json(r, m->http_status, a);
			else if (code == -32600 || code == HEADER_MISMATCH) dresp_json(r, 400, a);
			else answer(r, a, sse);
			/* the call's answer says StoreUnavailable; the status says so
			 * to the client's HTTP layer too (a batch keeps 200: its other
			 * answers are whole) */
			if (m->unavailable) {
				r->status = 503;
				r->retry_after_s = DAEMON_RETRY_AFTER_S;
			}
			/* another host's episode: 307 to its home, the body the
			 * JSON-RPC error naming it (a batch keeps 200, as above) */
			if (m->home_url[0] && !m->unavailable) {
				r->status = 307;
				snprintf(r->location, sizeof r->location, "%s/mcp/", m->home_url);
			}
		}
	}
	json_decref(msg);
out:
	json_decref(m->visible);
	m->visible = NULL;
}

void mcp_handle(struct dreq *rq, struct dresp *r)
{
	struct mcp m = { .rq = rq };
	handle(&m, r);
	json_decref(m.listen_id);
	json_decref(m.listen_tasks);
	coord_session_free(m.sess);
}

int mcp_listen_check(struct dreq *rq, struct dresp *r, struct coord_session **sess, json_t **id, int *tools,
                     int *resources, int *prompts, json_t **task_ids)
{
	struct mcp m = { .rq = rq, .listen = 1 };
	handle(&m, r);
	if (!m.listen_id) {
		json_decref(m.listen_tasks);
		coord_session_free(m.sess);
		return -1;
	}
	*task_ids = m.listen_tasks;
	snprintf(rq->note, sizeof rq->note, "subscriptions/listen");
	*sess = m.sess;
	*id = m.listen_id;
	*tools = m.listen_tools;
	*resources = m.listen_resources;
	*prompts = m.listen_prompts;
	return 0;
}

json_t *mcp_task_run(struct dctx *d, const struct coord_session *sess, json_t *id, json_t *params,
                     unsigned long long job, int *cancelled)
{
	/* the request's checks (headers, _meta) passed when the task was made */
	struct dreq rq = { .d = d, .method = "POST", .path = "/mcp/", .body = "", .job = job };
	struct mcp m = { .rq = &rq, .sess = (struct coord_session *)sess, .version = MODERN_VERSION, .modern = 1,
	                 .in_task = 1 };
	json_t *a = tools_call(&m, id, params);
	json_decref(m.visible);
	*cancelled = m.cancelled;
	if (rq.invocation_id[0]) dlog("task task_id=%s invocation_id=%s%s", json_string_value(id), rq.invocation_id, rq.timing);
	return a;
}
