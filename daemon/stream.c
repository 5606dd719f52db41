/* daemon/stream.c: GET /mcp/ -- the server-to-client stream of MCP
 * Streamable HTTP (2025-03-26 and later; docs/daemon.md, "The notification
 * stream"). A client that GETs /mcp/ with its credential and Accept:
 * text/event-stream gets a text/event-stream response that stays open; the
 * daemon sends on it `notifications/tools/list_changed` when the tools its
 * session sees change (a transition published or retired, by any process
 * on the store, noticed through the coordinator's change detection), SSE
 * comments as keep-alives, and ends it when its session is revoked or
 * expires, when the daemon stops, or never more than the caps allow.
 *
 * libmicrohttpd (0.9.75, internal polling threads): the response is a
 * callback response of unknown size (chunked). Its reader hands out what
 * is queued; with nothing queued it suspends the connection (the only safe
 * places to suspend are the access handler and this reader, its manual
 * says) and returns 0, so no thread spins; the stream thread queues bytes
 * and resumes it. A suspended connection is not timed out and does not see
 * its client leave: the keep-alive (every STREAM_KEEPALIVE_S) resumes it,
 * and a write to a closed socket ends it. Every stream is ended and
 * resumed before libmicrohttpd stops (it must not stop with a connection
 * suspended).
 *
 * A client that goes away is seen at once: a suspended connection is not
 * watched by libmicrohttpd (nor would the 15 s keep-alive's write fail on
 * a socket whose peer left: the first write to it succeeds), so the
 * stream thread polls each stream's socket for its hang-up (POLLRDHUP) at
 * every look (STREAM_POLL_MS) and ends the stream; libmicrohttpd then
 * closes the connection and frees the stream, so it no longer counts
 * against the caps.
 *
 * The same stream answers a 2026-07-28 POST subscriptions/listen
 * (mcp_listen_open): its first message is
 * notifications/subscriptions/acknowledged, every notification carries the
 * subscription id (the request's id) in
 * params._meta["io.modelcontextprotocol/subscriptionId"], only what the
 * filter asked for and the server honours is sent (toolsListChanged, and
 * resourcesListChanged: a commit of the session's episode, or a publish
 * or retire that changes the package resources it sees; taskIds: the
 * status of each task named, daemon/mcp_tasks.h, as notifications/tasks),
 * and a stream the server ends is closed with the listen request's response. */
#include "daemon/http.h"
#include "daemon/mcp_tasks.h"
#include "daemon/route.h"
#include "coordinator/catalog.h"
#include "coordinator/registry.h"
#include "store/store.h"
#include <microhttpd.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

struct stream {
	unsigned long long serial;  /* names it across an unlock (pointers are reused) */
	struct MHD_Connection *conn;
	char cred[65];              /* its credential: the session is opened again after a change */
	char id[65];                /* the credential id, for the per-session cap */
	char episode[65];
	long long expires_at;
	char *tools;                /* the visible tool names last told, one per line */
	char *prompts;              /* the visible prompt names last told, one per line */
	int prompts_wanted;         /* notify prompts list changes (GET /mcp/: always; a listen: its filter) */
	char *prompts_notify;       /* a listen's prompts list_changed event */
	char *pkg_res;              /* the visible package resource keys last told, one per line */
	json_t *sub_id;             /* a listen's subscription id (its request's id); NULL for GET /mcp/ */
	json_t *task_ids;           /* a listen's taskIds (daemon/mcp_tasks.h), or NULL */
	unsigned long long task_seen; /* ... the task table's change it was last told of */
	struct dsse q;              /* bytes queued for the client (q.mu = &S.mu) */
	time_t last;                /* when bytes were last queued */
	int fd;                     /* its connection's socket, polled for the client's hang-up (-1: unknown) */
	int tools_wanted;           /* notify tools list changes (GET /mcp/: always; a listen: its filter) */
	int res_wanted;             /* a listen asking for resources list changes (its episode's log entries) */
	long long res_last;         /* ... the episode's newest entry it was last told of (0: none) */
	char *notify;               /* a listen's tools list_changed event (with its subscription id); NULL: notify_event */
	char *res_notify;           /* a listen's resources list_changed event */
	char *final;                /* a listen's response, sent when the server ends it; NULL for GET /mcp/ */
	struct stream *next;
};

static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct stream *list;
	unsigned n;
	unsigned long long serial;
	struct dctx *d;
	pthread_t th;
	int running, stop;
	unsigned long long reg_gen, sess_gen;
	long long log_last;        /* the log's last index at the last look (resources listens) */
} S = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

static const char notify_event[] =
    "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n";
static const char prompts_event[] =
    "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/prompts/list_changed\"}\n\n";

static char *event_of(const char *json);

/* Queue bytes on s and wake its connection. Call with S.mu held. A client
 * that reads nothing for a long time cannot make the queue grow without
 * bound: notifications are coalesced (stream_main). */
static void push(struct stream *s, const char *bytes, size_t n)
{
	if (s->q.closing) return;
	if (dsse_push_locked(&s->q, bytes, n) < 0) {
		dlog("stream episode=%s closed: out of memory", s->episode);
		dsse_end_locked(&s->q);
		return;
	}
	s->last = time(NULL);
}

/* End s: what is queued is still sent, then a listen's response (its
 * graceful end). Call with S.mu held. */
static void end(struct stream *s, const char *why)
{
	if (s->q.closing) return;
	dlog("stream episode=%s closed: %s", s->episode, why);
	if (s->final) dsse_push_locked(&s->q, s->final, strlen(s->final));
	dsse_end_locked(&s->q);
}

/* Whether s's client has closed its connection (or the socket is gone). */
static int client_gone(const struct stream *s)
{
	if (s->fd < 0) return 0;
	struct pollfd pf = { .fd = s->fd, .events = POLLRDHUP };
	return poll(&pf, 1, 0) == 1 && (pf.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL));
}

/* End s when its client has gone (nothing more is sent to it: no final
 * response): 1, or 0 when it is still there. Call with S.mu held. */
static int gone_end(struct stream *s)
{
	if (s->q.closing || !client_gone(s)) return 0;
	free(s->final);
	s->final = NULL;
	end(s, "its client closed the connection");
	return 1;
}

static ssize_t reader(void *cls, uint64_t pos, char *buf, size_t max)
{
	(void)pos;
	struct stream *s = cls;
	return dsse_read(&s->q, buf, max);
}

static void stream_free(void *cls)
{
	struct stream *s = cls;
	pthread_mutex_lock(&S.mu);
	for (struct stream **p = &S.list; *p; p = &(*p)->next)
		if (*p == s) {
			*p = s->next;
			S.n--;
			break;
		}
	pthread_mutex_unlock(&S.mu);
	free(s->tools);
	free(s->prompts);
	free(s->notify);
	free(s->prompts_notify);
	free(s->res_notify);
	free(s->final);
	free(s->pkg_res);
	json_decref(s->sub_id);
	json_decref(s->task_ids);
	free(s->q.buf);
	free(s);
}

/* The names of the tools s sees, one per line (malloc'd), or NULL when
 * the session is gone (*gone: 1 revoked or expired, 0 another failure). */
/* The keys of a catalog member (coordinator/catalog.h) s sees, one per
 * line (malloc'd), or NULL with err. */
static char *keys_of(struct world_store *st, const struct coord_session *sess, const json_t *reg, const char *member,
                     struct world_err *err)
{
	json_t *vis = NULL;
	if (catalog_visible(st, sess, reg, member, &vis, err) < 0) return NULL;
	size_t cap = 1, i;
	json_t *p;
	json_array_foreach(vis, i, p) cap += strlen(catalog_key(p)) + 1;
	char *out = malloc(cap);
	if (out) {
		size_t o = 0;
		out[0] = 0;
		json_array_foreach(vis, i, p) o += (size_t)snprintf(out + o, cap - o, "%s\n", catalog_key(p));
	} else werr(err, WX_FAIL, "out of memory");
	json_decref(vis);
	return out;
}

static char *tools_of(struct dctx *d, const char *cred, long long *expires_at, int *gone, char **prompts,
                      char **pkg_res)
{
	*gone = 0;
	*prompts = NULL;
	*pkg_res = NULL;
	struct coord_session *sess = NULL;
	struct world_err err = { 0, "" };
	if (coord_session_open(d->coord, cred, &sess, &err) < 0) {
		*gone = err.code == WX_NOT_FOUND || err.code == WX_SESSION;
		if (!*gone) dlog("error: stream session: %s", err.msg);
		return NULL;
	}
	*expires_at = sess->expires_at;
	json_t *vis = NULL;
	char *out = NULL;
	if (coord_visible(d->coord, sess, &vis, &err) < 0) {
		dlog("error: stream tools: %s", err.msg);
		goto done;
	}
	size_t cap = 1, i;
	json_t *dsc;
	json_array_foreach(vis, i, dsc) cap += 66;
	out = malloc(cap);
	if (!out) goto done;
	out[0] = 0;
	size_t o = 0;
	json_array_foreach(vis, i, dsc) {
		char name[65];
		const char *id = json_string_value(json_object_get(dsc, "id"));
		if (!id || dtool_name(id, name) < 0) continue; /* tools/list leaves it out too */
		o += (size_t)snprintf(out + o, cap - o, "%s\n", name);
	}
	/* the prompt names and package resources it sees
	 * (coordinator/catalog.h): a failure to read them fails the look, as
	 * the tools' does */
	json_decref(vis);
	vis = NULL;
	json_t *reg = NULL;
	long long rev = 0;
	struct world_store *st = dreader_get(d, &err);
	int rc = st ? registry_load(st, &reg, &rev, NULL, &err) : -1;
	if (rc == 0) *prompts = keys_of(st, sess, reg, "prompts", &err);
	if (*prompts) *pkg_res = keys_of(st, sess, reg, "resources", &err);
	if (st) dreader_put(d, st);
	json_decref(reg);
	if (!*prompts || !*pkg_res) {
		dlog("error: stream prompts and resources: %s", err.msg[0] ? err.msg : "out of memory");
		free(*prompts);
		*prompts = NULL;
		free(out);
		out = NULL;
		goto done;
	}
done:
	json_decref(vis);
	coord_session_free(sess);
	return out;
}

/* The stream thread: every STREAM_POLL_MS the coordinator's change
 * detection is asked whether a registry or a session changed (one PRAGMA
 * when nothing was committed); when one did, each stream's session is
 * opened again and its tools listed: a stream whose tools differ from
 * what it was last told gets one notification, a stream whose session is
 * gone is ended. Expiry and keep-alives are judged by the clock. */
struct snap {
	unsigned long long serial;
	char cred[65], episode[65];
};

/* The listens asking for resources list changes: when the log's last
 * entry moved since the last look, each one's episode's newest entry is
 * read again, and a listen whose episode has a newer one than it was told
 * of gets notifications/resources/list_changed (its resources are its
 * episode's log entries, "Resources" in docs/daemon.md). Called without
 * S.mu (the store is read); n bounds the snapshot. */
static void resources_look(unsigned n)
{
	struct world_err err = { 0, "" };
	struct world_store *st = dreader_get(S.d, &err);
	long long last = 0;
	char hash[WORLD_REF_SIZE];
	if (!st || world_log_last(st, &last, hash, &err) < 0) {
		if (st) dreader_put(S.d, st);
		dlog("error: stream resources: %s", err.msg);
		return;
	}
	if (last == S.log_last) {
		dreader_put(S.d, st);
		return;
	}
	S.log_last = last;
	struct snap_res { unsigned long long serial; char episode[65]; } *sn = n ? calloc(n, sizeof *sn) : NULL;
	unsigned k = 0;
	pthread_mutex_lock(&S.mu);
	for (struct stream *s = S.list; s && sn && k < n; s = s->next)
		if (s->res_wanted && !s->q.closing) {
			sn[k].serial = s->serial;
			memcpy(sn[k].episode, s->episode, sizeof s->episode);
			k++;
		}
	pthread_mutex_unlock(&S.mu);
	for (unsigned i = 0; i < k; i++) {
		long long newest = 0;
		if (world_episode_last_entry(st, sn[i].episode, &newest, &err) < 0) {
			dlog("error: stream resources of episode %s: %s", sn[i].episode, err.msg);
			continue;
		}
		pthread_mutex_lock(&S.mu);
		struct stream *s = S.list;
		while (s && s->serial != sn[i].serial) s = s->next;
		if (s && !s->q.closing && newest != s->res_last) {
			s->res_last = newest;
			push(s, s->res_notify, strlen(s->res_notify));
			dlog("stream episode=%s notified: notifications/resources/list_changed (entry %lld)", s->episode, newest);
		} else if (s && !s->q.closing)
			dlog("stream episode=%s unchanged: the log moved, its episode's resources did not", s->episode);
		pthread_mutex_unlock(&S.mu);
	}
	free(sn);
	dreader_put(S.d, st);
}

/* Send s the status of each task it names that changed since it was last
 * told, as notifications/tasks (a DetailedTask, with its subscription id).
 * Call with S.mu held. */
static void task_push(struct stream *s)
{
	char owner[80];
	snprintf(owner, sizeof owner, "mcp:%s", s->id);
	json_t *changed = json_array();
	if (!changed) return;
	mtask_changes(owner, s->task_ids, &s->task_seen, changed);
	size_t i;
	json_t *t;
	json_array_foreach(changed, i, t) {
		json_object_set_new(t, "_meta", json_pack("{s:O}", "io.modelcontextprotocol/subscriptionId", s->sub_id));
		json_t *ev = json_pack("{s:s,s:s,s:O}", "jsonrpc", "2.0", "method", "notifications/tasks", "params", t);
		char *j = ev ? json_dumps(ev, JSON_COMPACT) : NULL;
		char *e = event_of(j);
		if (e) push(s, e, strlen(e));
		dlog("stream episode=%s notified: notifications/tasks task_id=%s status=%s", s->episode,
		     json_string_value(json_object_get(t, "taskId")), json_string_value(json_object_get(t, "status")));
		free(e);
		free(j);
		json_decref(ev);
	}
	json_decref(changed);
}

static void *stream_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&S.mu);
	while (!S.stop) {
		struct timespec until;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += (long)STREAM_POLL_MS * 1000000L;
		until.tv_sec += until.tv_nsec / 1000000000L;
		until.tv_nsec %= 1000000000L;
		pthread_cond_timedwait(&S.cv, &S.mu, &until);
		if (S.stop) break;
		time_t now = time(NULL);
		for (struct stream *s = S.list; s; s = s->next) {
			if (s->q.closing) continue;
			if (gone_end(s)) continue;
			if (!(now < s->expires_at)) end(s, "its session expired");
			else if (now - s->last >= STREAM_KEEPALIVE_S) push(s, ": keep-alive\n\n", 14);
		}
		/* the tasks listens name: their status changes (daemon/mcp_tasks.h) */
		unsigned long long tg = mtask_generation();
		for (struct stream *s = S.list; s; s = s->next)
			if (s->task_ids && !s->q.closing && s->task_seen < tg) task_push(s);
		unsigned n = S.n;
		int res_any = 0;
		for (struct stream *s = S.list; s; s = s->next) res_any |= s->res_wanted && !s->q.closing;
		pthread_mutex_unlock(&S.mu);
		if (res_any) resources_look(n);
		unsigned long long rg = 0, sg = 0;
		coord_generations(S.d->coord, &rg, &sg);
		pthread_mutex_lock(&S.mu);
		if (rg == S.reg_gen && sg == S.sess_gen) continue;
		S.reg_gen = rg;
		S.sess_gen = sg;
		/* a snapshot: the sessions are opened without S.mu held (the
		 * readers of every stream wait on it) */
		struct snap *sn = n ? calloc(n, sizeof *sn) : NULL;
		unsigned k = 0;
		for (struct stream *s = S.list; s && sn && k < n; s = s->next)
			if (!s->q.closing) {
				sn[k].serial = s->serial;
				memcpy(sn[k].cred, s->cred, sizeof s->cred);
				memcpy(sn[k].episode, s->episode, sizeof s->episode);
				k++;
			}
		pthread_mutex_unlock(&S.mu);
		for (unsigned i = 0; i < k; i++) {
			long long exp = 0;
			int gone = 0;
			char *prompts = NULL, *pkg_res = NULL;
			char *tools = tools_of(S.d, sn[i].cred, &exp, &gone, &prompts, &pkg_res);
			pthread_mutex_lock(&S.mu);
			struct stream *s = S.list;
			while (s && s->serial != sn[i].serial) s = s->next;
			if (s && !s->q.closing) {
				if (gone) end(s, "its session was revoked or expired");
				else if (tools && strcmp(tools, s->tools ? s->tools : "") != 0) {
					free(s->tools);
					s->tools = tools;
					tools = NULL;
					s->expires_at = exp;
					if (s->tools_wanted) {
						if (s->notify) push(s, s->notify, strlen(s->notify));
						else push(s, notify_event, sizeof notify_event - 1);
						dlog("stream episode=%s notified: notifications/tools/list_changed", s->episode);
					} else
						dlog("stream episode=%s unchanged: its tools changed; its subscription's filter does not ask for them", s->episode);
				} else if (tools) {
					s->expires_at = exp;
					dlog("stream episode=%s unchanged: the store changed, the tools it sees did not", s->episode);
				}
				if (!gone && prompts && strcmp(prompts, s->prompts ? s->prompts : "") != 0) {
					free(s->prompts);
					s->prompts = prompts;
					prompts = NULL;
					if (s->prompts_wanted) {
						if (s->prompts_notify) push(s, s->prompts_notify, strlen(s->prompts_notify));
						else push(s, prompts_event, sizeof prompts_event - 1);
						dlog("stream episode=%s notified: notifications/prompts/list_changed", s->episode);
					}
				}
				/* the package resources it sees (a publish or retire) */
				if (!gone && pkg_res && strcmp(pkg_res, s->pkg_res ? s->pkg_res : "") != 0) {
					free(s->pkg_res);
					s->pkg_res = pkg_res;
					pkg_res = NULL;
					if (s->res_wanted) {
						push(s, s->res_notify, strlen(s->res_notify));
						dlog("stream episode=%s notified: notifications/resources/list_changed (package resources)",
						     s->episode);
					}
				}
			}
			pthread_mutex_unlock(&S.mu);
			free(tools);
			free(prompts);
			free(pkg_res);
		}
		free(sn);
		pthread_mutex_lock(&S.mu);
	}
	pthread_mutex_unlock(&S.mu);
	return NULL;
}

int mcp_streams_start(struct dctx *d, struct world_err *err)
{
	pthread_mutex_lock(&S.mu);
	S.d = d;
	S.stop = 0;
	coord_generations(d->coord, &S.reg_gen, &S.sess_gen);
	int e = pthread_create(&S.th, NULL, stream_main, NULL);
	S.running = e == 0;
	pthread_mutex_unlock(&S.mu);
	if (e != 0) return werr(err, WX_FAIL, "start the notification stream thread: pthread_create: %s", strerror(e));
	return 0;
}

void mcp_streams_stop(void)
{
	pthread_mutex_lock(&S.mu);
	S.stop = 1;
	pthread_cond_broadcast(&S.cv);
	int running = S.running;
	S.running = 0;
	pthread_mutex_unlock(&S.mu);
	if (running) pthread_join(S.th, NULL);
	pthread_mutex_lock(&S.mu);
	for (struct stream *s = S.list; s; s = s->next) end(s, "the daemon is stopping");
	pthread_mutex_unlock(&S.mu);
}

/* One SSE event holding json (NULL stays NULL; malloc'd). */
static char *event_of(const char *json)
{
	if (!json) return NULL;
	size_t n = strlen(json) + 32;
	char *b = malloc(n);
	if (b) snprintf(b, n, "event: message\ndata: %s\n\n", json);
	return b;
}

/* Open a stream for the credential of rq (sess: its session): the caps,
 * then the response, its first bytes (first: a comment, or a listen's
 * acknowledgment) queued. A listen (id non-NULL) gets its own notify and
 * final events. 0 with *out, or -1 with r filled. */
static int open_common(struct dreq *rq, struct dresp *r, struct MHD_Connection *conn, struct MHD_Response **out,
                       struct coord_session *sess, json_t *id, int tools_wanted, int res_wanted, int prompts_wanted,
                       json_t *task_ids)
{
	const char *h = dreq_header(rq, "Authorization");
	const char *cred = h ? h + 7 : "";
	while (*cred == ' ') cred++;
	long long exp = 0;
	int gone = 0;
	char *prompts = NULL, *pkg_res = NULL;
	char *tools = tools_of(rq->d, cred, &exp, &gone, &prompts, &pkg_res);
	if (!tools) {
		dresp_internal(rq, r, "stream tools", NULL);
		return -1;
	}
	struct stream *s = calloc(1, sizeof *s);
	char *first = NULL;
	if (s && id) {
		/* the subscription id is the listen request's id */
		json_t *meta = json_pack("{s:O}", "io.modelcontextprotocol/subscriptionId", id);
		json_t *honoured = json_object();
		if (tools_wanted) json_object_set_new(honoured, "toolsListChanged", json_true());
		if (res_wanted) json_object_set_new(honoured, "resourcesListChanged", json_true());
		if (prompts_wanted) json_object_set_new(honoured, "promptsListChanged", json_true());
		if (task_ids) json_object_set(honoured, "taskIds", task_ids);
		json_t *ack = json_pack("{s:s,s:s,s:{s:O,s:o}}", "jsonrpc", "2.0", "method", "notifications/subscriptions/acknowledged",
		                        "params", "_meta", meta, "notifications", honoured);
		json_t *rev = json_pack("{s:s,s:s,s:{s:O}}", "jsonrpc", "2.0", "method", "notifications/resources/list_changed",
		                        "params", "_meta", meta);
		char *re = rev ? json_dumps(rev, JSON_COMPACT) : NULL;
		s->res_notify = event_of(re);
		free(re);
		json_decref(rev);
		json_t *ev = json_pack("{s:s,s:s,s:{s:O}}", "jsonrpc", "2.0", "method", "notifications/tools/list_changed",
		                       "params", "_meta", meta);
		json_t *pev = json_pack("{s:s,s:s,s:{s:O}}", "jsonrpc", "2.0", "method", "notifications/prompts/list_changed",
		                        "params", "_meta", meta);
		char *pe = pev ? json_dumps(pev, JSON_COMPACT) : NULL;
		s->prompts_notify = event_of(pe);
		free(pe);
		json_decref(pev);
		json_t *fin = json_pack("{s:s,s:O,s:{s:s,s:O}}", "jsonrpc", "2.0", "id", id, "result", "resultType", "complete",
		                        "_meta", meta);
		char *a = ack ? json_dumps(ack, JSON_COMPACT) : NULL, *e = ev ? json_dumps(ev, JSON_COMPACT) : NULL,
		     *f = fin ? json_dumps(fin, JSON_COMPACT) : NULL;
		first = event_of(a);
		s->notify = event_of(e);
		s->final = event_of(f);
		if (!first || !s->notify || !s->final || !s->res_notify || !s->prompts_notify) {
			free(first);
			first = NULL;
			free(s->notify);
			free(s->prompts_notify);
			free(s->res_notify);
			free(s->final);
			free(s);
			s = NULL;
		}
		free(a);
		free(e);
		free(f);
		json_decref(meta);
		json_decref(ack);
		json_decref(ev);
		json_decref(fin);
	}
	if (!s) {
		free(tools);
		free(prompts);
		free(pkg_res);
		free(first);
		dresp_internal(rq, r, "stream", NULL);
		return -1;
	}
	snprintf(s->cred, sizeof s->cred, "%s", cred);
	snprintf(s->id, sizeof s->id, "%s", sess->credential_id);
	snprintf(s->episode, sizeof s->episode, "%s", sess->episode);
	s->q.conn = conn;
	s->q.mu = &S.mu;
	s->tools = tools;
	s->prompts = prompts;
	s->pkg_res = pkg_res;
	s->sub_id = id ? json_incref(id) : NULL;
	s->task_ids = id && task_ids ? json_incref(task_ids) : NULL;
	s->tools_wanted = id ? tools_wanted : 1;
	s->prompts_wanted = id ? prompts_wanted : 1;
	s->res_wanted = id && res_wanted;
	if (s->res_wanted) {
		/* what it is told of is what comes after its opening */
		struct world_err e = { 0, "" };
		struct world_store *st = dreader_get(rq->d, &e);
		if (!st || world_episode_last_entry(st, sess->episode, &s->res_last, &e) < 0) {
			if (st) dreader_put(rq->d, st);
			free(tools);
			free(prompts);
			free(first);
			free(s->notify);
			free(s->prompts_notify);
			free(s->res_notify);
			free(s->final);
			free(s->pkg_res);
			json_decref(s->sub_id);
			json_decref(s->task_ids);
			free(s);
			dresp_internal(rq, r, "stream resources", &e);
			return -1;
		}
		dreader_put(rq->d, st);
	}
	s->expires_at = exp;
	s->last = time(NULL);
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	s->fd = ci ? ci->connect_fd : -1;
	pthread_mutex_lock(&S.mu);
	/* a stream whose client has gone no longer counts: a client that
	 * closes and connects again at once is not refused because the
	 * stream thread has not looked yet */
	for (struct stream *o = S.list; o; o = o->next) gone_end(o);
	unsigned mine = 0;
	for (struct stream *o = S.list; o; o = o->next) mine += !o->q.closing && strcmp(o->id, s->id) == 0;
	const char *full = S.stop || !S.running ? "the daemon is stopping (or has no stream thread)"
	                   : S.n >= STREAMS_MAX ? "every notification stream slot is taken"
	                   : mine >= STREAMS_PER_SESSION ? "this session holds the most notification streams it may" : NULL;
	struct MHD_Response *resp = full ? NULL : MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, reader, s, stream_free);
	if (!resp) {
		pthread_mutex_unlock(&S.mu);
		if (full)
			dresp_error(r, "Capacity", "%s (%u in all, %u per session): close one first", full, STREAMS_MAX,
			            STREAMS_PER_SESSION);
		else dresp_internal(rq, r, "stream response", NULL);
		free(s->tools);
		free(s->prompts);
		free(s->notify);
		free(s->prompts_notify);
		free(s->res_notify);
		free(s->final);
		free(s->pkg_res);
		json_decref(s->sub_id);
		json_decref(s->task_ids);
		free(s);
		free(first);
		return -1;
	}
	s->serial = ++S.serial;
	/* the first bytes at once, so the client has the headers: a comment,
	 * or the listen's acknowledgment (its first message, as it must be) */
	if (first) push(s, first, strlen(first));
	else push(s, ": stream open\n\n", 15);
	free(first);
	s->next = S.list;
	S.list = s;
	S.n++;
	unsigned n = S.n;
	pthread_mutex_unlock(&S.mu);
	MHD_add_response_header(resp, "Content-Type", "text/event-stream");
	MHD_add_response_header(resp, "Cache-Control", "no-cache");
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	dlog("stream episode=%s opened: %s (%u open)", s->episode,
	     id ? "POST /mcp/ subscriptions/listen" : "GET /mcp/ notification stream", n);
	*out = resp;
	return 0;
}

int mcp_stream_open(struct dreq *rq, struct dresp *r, struct MHD_Connection *conn, struct MHD_Response **out)
{
	*out = NULL;
	struct coord_session *sess = NULL;
	if (dauth(rq, r, 0, 0, &sess, NULL) < 0) return -1;
	int rc = -1;
	const char *accept = dreq_header(rq, "Accept");
	const char *ver = dreq_header(rq, "MCP-Protocol-Version");
	if (!accept || !strcasestr(accept, "text/event-stream")) {
		dresp_error(r, "BadRequest", "Accept must list text/event-stream (GET /mcp/ is the notification stream)");
		r->status = 406;
		goto out;
	}
	if (ver && strcmp(ver, "2026-07-28") == 0) {
		/* the stateless revision has no GET stream (subscriptions/listen
		 * replaced it): 405 is how a server says so */
		dresp_error(r, "BadRequest", "no GET notification stream under MCP-Protocol-Version 2026-07-28 (stateless: "
		                             "POST subscriptions/listen): GET /mcp/ serves 2025-11-25, 2025-06-18 and 2025-03-26");
		r->status = 405;
		r->allow = "POST";
		goto out;
	}
	if (ver && strcmp(ver, "2025-11-25") != 0 && strcmp(ver, "2025-06-18") != 0 && strcmp(ver, "2025-03-26") != 0) {
		dresp_error(r, "BadRequest", "unsupported MCP-Protocol-Version \"%.64s\" (the notification stream serves "
		                             "2025-11-25, 2025-06-18, 2025-03-26)", ver);
		goto out;
	}
	rc = open_common(rq, r, conn, out, sess, NULL, 1, 0, 1, NULL);
out:
	coord_session_free(sess);
	return rc;
}

int mcp_listen_open(struct dreq *rq, struct dresp *r, struct MHD_Connection *conn, struct MHD_Response **out)
{
	*out = NULL;
	struct coord_session *sess = NULL;
	json_t *id = NULL;
	int tools = 0, resources = 0, prompts = 0;
	json_t *task_ids = NULL;
	if (mcp_listen_check(rq, r, &sess, &id, &tools, &resources, &prompts, &task_ids) < 0) return -1;
	int rc = open_common(rq, r, conn, out, sess, id, tools, resources, prompts, task_ids);
	json_decref(task_ids);
	if (rc < 0 && r->status == 503 && r->body) {
		/* over a cap: the envelope's text as a JSON-RPC error, same status */
		json_t *v = json_loadb(r->body, r->len, 0, NULL);
		const char *msg = json_string_value(json_object_get(json_object_get(v, "error"), "message"));
		json_t *e = drpc_error(id, -32603, "Capacity: %s", msg ? msg : "no notification stream slot");
		json_decref(v);
		dresp_json(r, 503, e);
	}
	json_decref(id);
	coord_session_free(sess);
	return rc;
}

int mcp_listen_body(const char *body, size_t len)
{
	if (!body || !len || len > 65536 || !memmem(body, len, "subscriptions/listen", 20)) return 0;
	json_t *v = json_loadb(body, len, JSON_REJECT_DUPLICATES, NULL);
	const char *m = json_string_value(json_object_get(v, "method"));
	int yes = m && strcmp(m, "subscriptions/listen") == 0 && json_object_get(v, "id");
	json_decref(v);
	return yes;
}
