/* daemon/a2a_push.c: A2A push notifications (see daemon/a2a_push.h). The
 * webhook client is a plain socket HTTP/1.1 POST: the URL's host is an IP
 * address or localhost (no name is resolved), http:// only (no TLS
 * client), connect within PUSH_CONNECT_MS and the whole exchange within
 * PUSH_TOTAL_MS; a 2xx status line is a delivery, anything else is logged
 * and dropped (one attempt: the spec's "at least once" is attempted, its
 * retries are a MAY). Events go out in the order they were queued. */
#include "daemon/a2a_push.h"
#include "daemon/http.h"
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define PUSH_CONNECT_MS 3000
#define PUSH_TOTAL_MS 10000

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;

static char allow[A2A_PUSH_ALLOW_MAX][1024];
static size_t nallow;

struct entry {
	char episode[129], task[129];
	struct a2a_push_cfg c;
	int used;
};
static struct entry *cfgs; /* A2A_PUSH_MAX slots, made on first use */

struct item {
	struct item *next;
	char url[1024];
	char token[513], scheme[65], cred[1025];
	char *body;
	int v03;
};
static struct item *qhead, *qtail;
static size_t qlen;
static int started;

/* ---- URLs ---- */

struct url {
	int v6;
	char host[64];
	unsigned port;
	const char *path; /* into the URL */
};

/* http://HOST[:PORT][/PATH]: HOST an IPv4 or [IPv6] literal or localhost;
 * PATH printable ASCII without '#'. 0, or -1 and why. */
static int url_parse(const char *u, struct url *p, char *why, size_t wn)
{
	memset(p, 0, sizeof *p);
	if (strncmp(u, "http://", 7) != 0) {
		snprintf(why, wn, "a webhook URL is http://HOST[:PORT]/PATH (this daemon has no TLS client)");
		return -1;
	}
	for (const char *c = u; *c; c++)
		if ((unsigned char)*c <= 0x20 || (unsigned char)*c >= 0x7f || *c == '#') {
			snprintf(why, wn, "a webhook URL holds only printable ASCII, no spaces and no fragment");
			return -1;
		}
	const char *h = u + 7, *e;
	if (*h == '[') {
		e = strchr(h, ']');
		if (!e || (size_t)(e - h - 1) >= sizeof p->host) goto bad;
		memcpy(p->host, h + 1, (size_t)(e - h - 1));
		struct in6_addr a6;
		if (inet_pton(AF_INET6, p->host, &a6) != 1) goto bad;
		p->v6 = 1;
		e++;
	} else {
		e = h + strspn(h, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-");
		if (e == h || (size_t)(e - h) >= sizeof p->host) goto bad;
		memcpy(p->host, h, (size_t)(e - h));
		struct in_addr a4;
		if (strcasecmp(p->host, "localhost") == 0) snprintf(p->host, sizeof p->host, "127.0.0.1");
		else if (inet_pton(AF_INET, p->host, &a4) != 1) {
			snprintf(why, wn, "a webhook URL's host is an IP address or localhost (the daemon resolves no names)");
			return -1;
		}
	}
	p->port = 80;
	if (*e == ':') {
		char *end;
		unsigned long n = strtoul(e + 1, &end, 10);
		if (end == e + 1 || n < 1 || n > 65535) goto bad;
		p->port = (unsigned)n;
		e = end;
	}
	if (*e && *e != '/' && *e != '?') goto bad;
	p->path = e;
	return 0;
bad:
	snprintf(why, wn, "a webhook URL is http://HOST[:PORT]/PATH with HOST an IP address or localhost");
	return -1;
}

int a2a_push_allow(const char *prefix, char *why, size_t wn)
{
	struct url p;
	if (strlen(prefix) >= sizeof allow[0]) { snprintf(why, wn, "too long"); return -1; }
	if (url_parse(prefix, &p, why, wn) < 0) return -1;
	pthread_mutex_lock(&mu);
	int full = nallow == A2A_PUSH_ALLOW_MAX;
	if (!full) snprintf(allow[nallow++], sizeof allow[0], "%s", prefix);
	pthread_mutex_unlock(&mu);
	if (full) { snprintf(why, wn, "given more than %d times", A2A_PUSH_ALLOW_MAX); return -1; }
	return 0;
}

/* The URL begins with a prefix, which ends at a '/' or is followed by
 * one, a '?' or the end (http://127.0.0.1:80 does not allow
 * http://127.0.0.1:8080/). */
static int allowed(const char *u)
{
	int ok = 0;
	pthread_mutex_lock(&mu);
	for (size_t i = 0; i < nallow && !ok; i++) {
		size_t n = strlen(allow[i]);
		if (strncmp(u, allow[i], n) != 0) continue;
		ok = allow[i][n - 1] == '/' || u[n] == 0 || u[n] == '/' || u[n] == '?';
	}
	pthread_mutex_unlock(&mu);
	return ok;
}

/* ---- configs ---- */

/* a value that goes into a header: printable ASCII, no CR/LF */
static int header_safe(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f) return 0;
	return 1;
}

static int copy_str(const json_t *v, char *out, size_t n, const char *what, char *why, size_t wn)
{
	if (!v || json_is_null(v)) { out[0] = 0; return 0; }
	if (!json_is_string(v) || json_string_length(v) >= n || !header_safe(json_string_value(v))) {
		snprintf(why, wn, "%s must be a string of at most %zu printable ASCII characters", what, n - 1);
		return -1;
	}
	snprintf(out, n, "%s", json_string_value(v));
	return 0;
}

int a2a_push_parse(const json_t *o, int v03, struct a2a_push_cfg *c, char *why, size_t wn)
{
	memset(c, 0, sizeof *c);
	if (!json_is_object(o)) { snprintf(why, wn, "the push notification config must be an object"); return -1; }
	if (copy_str(json_object_get(o, "id"), c->id, sizeof c->id, "the config's id", why, wn) < 0 ||
	    copy_str(json_object_get(o, "url"), c->url, sizeof c->url, "url", why, wn) < 0 ||
	    copy_str(json_object_get(o, "token"), c->token, sizeof c->token, "token", why, wn) < 0)
		return -1;
	if (c->id[0] && strspn(c->id, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") != strlen(c->id)) {
		snprintf(why, wn, "the config's id must be 1-128 characters of [A-Za-z0-9._-]");
		return -1;
	}
	if (!c->url[0]) { snprintf(why, wn, "the push notification config needs a url (the webhook)"); return -1; }
	const json_t *a = json_object_get(o, "authentication");
	if (a && !json_is_null(a)) {
		const json_t *sc = json_object_get(a, "scheme");
		if (v03 || !sc) {
			const json_t *ss = json_object_get(a, "schemes");
			sc = json_array_get(ss, 0);
		}
		if (!json_is_object(a) || copy_str(sc, c->scheme, sizeof c->scheme, "authentication.scheme", why, wn) < 0 ||
		    copy_str(json_object_get(a, "credentials"), c->cred, sizeof c->cred, "authentication.credentials", why, wn) < 0)
			return -1;
		if (!c->scheme[0] ||
		    strspn(c->scheme, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789!#$%&'*+.^_`|~-") != strlen(c->scheme)) {
			snprintf(why, wn, "authentication.scheme must be an HTTP authentication scheme name (e.g. Bearer)");
			return -1;
		}
	}
	struct url p;
	if (url_parse(c->url, &p, why, wn) < 0) return -1;
	if (!allowed(c->url)) {
		snprintf(why, wn, "webhook URL %.300s is not allowed: the operator allows webhooks only under the prefixes given "
		         "with worldd serve --a2a-webhook-allow (%s)", c->url, nallow ? "this URL is under none" : "none given: every webhook is refused");
		return -1;
	}
	return 0;
}

static int same(const struct entry *e, const char *episode, const char *task)
{
	return e->used && strcmp(e->episode, episode) == 0 && strcmp(e->task, task) == 0;
}

int a2a_push_put(const char *episode, const char *task, struct a2a_push_cfg *c, int (*still)(void *), void *ctx,
                 char *why, size_t wn)
{
	if (strlen(episode) >= sizeof cfgs[0].episode || strlen(task) >= sizeof cfgs[0].task) {
		snprintf(why, wn, "task id too long");
		return -1;
	}
	if (!c->id[0]) {
		unsigned char rb[8];
		if (getrandom(rb, sizeof rb, 0) != (ssize_t)sizeof rb) { snprintf(why, wn, "getrandom: %s", strerror(errno)); return -1; }
		for (int i = 0; i < 8; i++) snprintf(c->id + 2 * i, 3, "%02x", rb[i]);
	}
	int rc = 0;
	pthread_mutex_lock(&mu);
	if (!cfgs) cfgs = calloc(A2A_PUSH_MAX, sizeof *cfgs);
	if (!cfgs) { rc = -1; snprintf(why, wn, "out of memory"); goto out; }
	if (still && !still(ctx)) { rc = 1; goto out; }
	int n = 0;
	struct entry *slot = NULL, *free_slot = NULL;
	for (size_t i = 0; i < A2A_PUSH_MAX; i++) {
		if (!cfgs[i].used) { if (!free_slot) free_slot = &cfgs[i]; continue; }
		if (!same(&cfgs[i], episode, task)) continue;
		n++;
		if (strcmp(cfgs[i].c.id, c->id) == 0) slot = &cfgs[i];
	}
	if (!slot && n >= A2A_PUSH_PER_TASK) {
		rc = -1;
		snprintf(why, wn, "this task has %d push notification configs already (the most a task may have)", A2A_PUSH_PER_TASK);
		goto out;
	}
	if (!slot) slot = free_slot;
	if (!slot) {
		rc = -1;
		snprintf(why, wn, "this daemon holds %d push notification configs already (delete some)", A2A_PUSH_MAX);
		goto out;
	}
	snprintf(slot->episode, sizeof slot->episode, "%s", episode);
	snprintf(slot->task, sizeof slot->task, "%s", task);
	slot->c = *c;
	slot->used = 1;
out:
	pthread_mutex_unlock(&mu);
	return rc;
}

int a2a_push_get(const char *episode, const char *task, const char *id, struct a2a_push_cfg *out)
{
	int rc = -1;
	pthread_mutex_lock(&mu);
	for (size_t i = 0; cfgs && i < A2A_PUSH_MAX && rc < 0; i++)
		if (same(&cfgs[i], episode, task) && (!id || !*id || strcmp(cfgs[i].c.id, id) == 0)) {
			*out = cfgs[i].c;
			rc = 0;
		}
	pthread_mutex_unlock(&mu);
	return rc;
}

int a2a_push_count(const char *episode, const char *task)
{
	int n = 0;
	pthread_mutex_lock(&mu);
	for (size_t i = 0; cfgs && i < A2A_PUSH_MAX; i++) n += same(&cfgs[i], episode, task);
	pthread_mutex_unlock(&mu);
	return n;
}

int a2a_push_del(const char *episode, const char *task, const char *id)
{
	int n = 0;
	pthread_mutex_lock(&mu);
	for (size_t i = 0; cfgs && i < A2A_PUSH_MAX; i++)
		if (same(&cfgs[i], episode, task) && strcmp(cfgs[i].c.id, id) == 0) {
			memset(&cfgs[i], 0, sizeof cfgs[i]);
			n = 1;
		}
	pthread_mutex_unlock(&mu);
	return n;
}

json_t *a2a_push_json(const char *task, const struct a2a_push_cfg *c, int v03)
{
	json_t *o = json_pack("{s:s,s:s}", "id", c->id, "url", c->url);
	if (!o) return NULL;
	if (c->token[0]) json_object_set_new(o, "token", json_string(c->token));
	if (c->scheme[0]) {
		json_t *a = v03 ? json_pack("{s:[s]}", "schemes", c->scheme) : json_pack("{s:s}", "scheme", c->scheme);
		if (a && c->cred[0]) json_object_set_new(a, "credentials", json_string(c->cred));
		json_object_set_new(o, "authentication", a);
	}
	if (v03) return json_pack("{s:s,s:o}", "taskId", task, "pushNotificationConfig", o);
	json_object_set_new(o, "taskId", json_string(task));
	return o;
}

json_t *a2a_push_list(const char *episode, const char *task, int v03)
{
	json_t *a = json_array();
	pthread_mutex_lock(&mu);
	for (size_t i = 0; a && cfgs && i < A2A_PUSH_MAX; i++)
		if (same(&cfgs[i], episode, task)) json_array_append_new(a, a2a_push_json(task, &cfgs[i].c, v03));
	pthread_mutex_unlock(&mu);
	return a;
}

/* ---- delivery ---- */

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Waits for ev on fd until the deadline: 1 ready, 0 time out, -1 error. */
static int wait_fd(int fd, short ev, long long deadline)
{
	for (;;) {
		long long left = deadline - now_ms();
		if (left <= 0) return 0;
		struct pollfd p = { .fd = fd, .events = ev };
		int r = poll(&p, 1, (int)left);
		if (r < 0 && errno == EINTR) continue;
		return r < 0 ? -1 : r;
	}
}

/* POSTs one item: the HTTP status, or -1 with why. */
static int post(const struct item *it, char *why, size_t wn)
{
	struct url u;
	if (url_parse(it->url, &u, why, wn) < 0) return -1;
	union {
		struct sockaddr_in v4;
		struct sockaddr_in6 v6;
	} sa;
	memset(&sa, 0, sizeof sa);
	socklen_t sl;
	if (u.v6) {
		sa.v6.sin6_family = AF_INET6;
		sa.v6.sin6_port = htons((unsigned short)u.port);
		inet_pton(AF_INET6, u.host, &sa.v6.sin6_addr);
		sl = sizeof sa.v6;
	} else {
		sa.v4.sin_family = AF_INET;
		sa.v4.sin_port = htons((unsigned short)u.port);
		inet_pton(AF_INET, u.host, &sa.v4.sin_addr);
		sl = sizeof sa.v4;
	}
	int fd = socket(u.v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) { snprintf(why, wn, "socket: %s", strerror(errno)); return -1; }
	long long start = now_ms(), deadline = start + PUSH_TOTAL_MS;
	int rc = -1;
	char *req = NULL;
	if (connect(fd, (struct sockaddr *)&sa, sl) < 0) {
		if (errno != EINPROGRESS) { snprintf(why, wn, "connect: %s", strerror(errno)); goto out; }
		int w = wait_fd(fd, POLLOUT, start + PUSH_CONNECT_MS);
		int soe = 0;
		socklen_t el = sizeof soe;
		if (w <= 0) { snprintf(why, wn, "connect: no connection within %d ms", PUSH_CONNECT_MS); goto out; }
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soe, &el) < 0 || soe) {
			snprintf(why, wn, "connect: %s", strerror(soe ? soe : errno));
			goto out;
		}
	}
	size_t blen = strlen(it->body);
	size_t cap = blen + strlen(it->url) + sizeof it->token + sizeof it->scheme + sizeof it->cred + 512;
	req = malloc(cap);
	if (!req) { snprintf(why, wn, "out of memory"); goto out; }
	char hostport[80];
	if (u.v6) snprintf(hostport, sizeof hostport, "[%s]:%u", u.host, u.port);
	else snprintf(hostport, sizeof hostport, "%s:%u", u.host, u.port);
	int n = snprintf(req, cap,
	                 "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\nConnection: close\r\n"
	                 "User-Agent: worldd/" DAEMON_VERSION "\r\n",
	                 *u.path == '/' ? u.path : "/", hostport, it->v03 ? "application/json" : "application/a2a+json", blen);
	if (*u.path == '?') { /* http://h:p?q: the path is / then the query */
		n = snprintf(req, cap,
		             "POST /%s HTTP/1.1\r\nHost: %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\nConnection: close\r\n"
		             "User-Agent: worldd/" DAEMON_VERSION "\r\n",
		             u.path, hostport, it->v03 ? "application/json" : "application/a2a+json", blen);
	}
	if (it->token[0]) n += snprintf(req + n, cap - (size_t)n, "X-A2A-Notification-Token: %s\r\n", it->token);
	if (it->scheme[0]) n += snprintf(req + n, cap - (size_t)n, "Authorization: %s%s%s\r\n", it->scheme, it->cred[0] ? " " : "", it->cred);
	n += snprintf(req + n, cap - (size_t)n, "\r\n");
	memcpy(req + n, it->body, blen);
	size_t total = (size_t)n + blen, off = 0;
	while (off < total) {
		ssize_t w = send(fd, req + off, total - off, MSG_NOSIGNAL);
		if (w > 0) { off += (size_t)w; continue; }
		if (w < 0 && errno == EINTR) continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && wait_fd(fd, POLLOUT, deadline) > 0) continue;
		snprintf(why, wn, "send: %s", w < 0 ? strerror(errno) : "the webhook did not take the request in time");
		goto out;
	}
	char buf[512];
	size_t got = 0;
	while (got < sizeof buf - 1 && !memchr(buf, '\n', got)) {
		ssize_t r = recv(fd, buf + got, sizeof buf - 1 - got, 0);
		if (r > 0) { got += (size_t)r; continue; }
		if (r == 0) break;
		if (errno == EINTR) continue;
		if ((errno == EAGAIN || errno == EWOULDBLOCK) && wait_fd(fd, POLLIN, deadline) > 0) continue;
		snprintf(why, wn, "no answer within %d ms", PUSH_TOTAL_MS);
		goto out;
	}
	buf[got] = 0;
	int status = 0;
	if (sscanf(buf, "HTTP/1.%*1[01] %3d", &status) != 1 || status < 100 || status > 599) {
		snprintf(why, wn, "the answer is not an HTTP/1 status line");
		goto out;
	}
	rc = status;
out:
	free(req);
	close(fd);
	return rc;
}

static void *deliver(void *arg)
{
	(void)arg;
	for (;;) {
		pthread_mutex_lock(&mu);
		while (!qhead) pthread_cond_wait(&cv, &mu);
		struct item *it = qhead;
		qhead = it->next;
		if (!qhead) qtail = NULL;
		qlen--;
		pthread_mutex_unlock(&mu);
		char why[200] = "", safe[300];
		int st = post(it, why, sizeof why);
		dlog_safe(safe, sizeof safe, it->url);
		if (st >= 200 && st < 300) dlog("push url=%s: delivered (HTTP %d)", safe, st);
		else if (st > 0) dlog("error push url=%s: the webhook answered HTTP %d; dropped", safe, st);
		else dlog("error push url=%s: %s; dropped", safe, why);
		free(it->body);
		free(it);
	}
	return NULL;
}

void a2a_push_event(const char *episode, const char *task, int v03, json_t *event)
{
	char *body = event ? json_dumps(event, JSON_COMPACT) : NULL;
	json_decref(event);
	if (!body) return;
	pthread_mutex_lock(&mu);
	for (size_t i = 0; cfgs && i < A2A_PUSH_MAX; i++) {
		if (!same(&cfgs[i], episode, task)) continue;
		if (qlen >= A2A_PUSH_QUEUE) {
			dlog("error push episode=%s task=%.128s config=%s: %d notifications wait already; dropped", episode, task,
			     cfgs[i].c.id, A2A_PUSH_QUEUE);
			continue;
		}
		struct item *it = calloc(1, sizeof *it);
		char *b = it ? strdup(body) : NULL;
		if (!b) { free(it); continue; }
		if (!started) {
			pthread_t th;
			pthread_attr_t at;
			pthread_attr_init(&at);
			pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
			started = pthread_create(&th, &at, deliver, NULL) == 0;
			pthread_attr_destroy(&at);
			if (!started) { free(b); free(it); dlog("error push: no delivery thread"); continue; }
		}
		snprintf(it->url, sizeof it->url, "%s", cfgs[i].c.url);
		snprintf(it->token, sizeof it->token, "%s", cfgs[i].c.token);
		snprintf(it->scheme, sizeof it->scheme, "%s", cfgs[i].c.scheme);
		snprintf(it->cred, sizeof it->cred, "%s", cfgs[i].c.cred);
		it->body = b;
		it->v03 = v03;
		if (qtail) qtail->next = it;
		else qhead = it;
		qtail = it;
		qlen++;
	}
	pthread_cond_signal(&cv);
	pthread_mutex_unlock(&mu);
	free(body);
}
