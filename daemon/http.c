/* daemon/http.c: see http.h. */
#include "daemon/http.h"
#include "supervisor/supervisor.h"
#include "store/open_opts.h"
#include "store/store.h"
#include <microhttpd.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

/* ---- log ---- */

void dlog(const char *fmt, ...)
{
	char line[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	/* Each line starts with its RFC 3339 time in UTC, to the millisecond, so
	 * a line can be put next to other logs without the journal's help. */
	char ts[64] = "-";
	struct timespec now;
	struct tm tm;
	if (clock_gettime(CLOCK_REALTIME, &now) == 0 && gmtime_r(&now.tv_sec, &tm)) {
		char sec[32];
		if (strftime(sec, sizeof sec, "%Y-%m-%dT%H:%M:%S", &tm) > 0)
			snprintf(ts, sizeof ts, "%.31s.%03dZ", sec, (int)(now.tv_nsec / 1000000L) % 1000);
	}
	/* one write per line so that lines of concurrent requests never interleave */
	size_t n = strlen(line);
	char out[2150];
	int m = snprintf(out, sizeof out, "%s worldd %.*s\n", ts, (int)n, line);
	if (m > 0) {
		ssize_t w = write(STDERR_FILENO, out, (size_t)m < sizeof out ? (size_t)m : sizeof out - 1);
		(void)w; /* nowhere left to report a failed log write */
	}
}

/* A log-safe copy of s: printable ASCII only, at most cap-1 bytes. */
void dlog_safe(char *out, size_t cap, const char *s)
{
	size_t j = 0;
	for (; s && *s && j + 1 < cap; s++) out[j++] = (*s > 32 && *s < 127) ? *s : '?';
	out[j] = 0;
	if (j == 0 && cap > 1) { out[0] = '-'; out[1] = 0; }
}

/* ---- responses and classes ---- */

void dresp_text(struct dresp *r, int status, const char *ctype, const char *text, size_t len)
{
	free(r->body);
	r->status = status;
	r->body = malloc(len + 1);
	if (!r->body) { r->status = 500; r->len = 0; r->ctype = NULL; return; }
	memcpy(r->body, text, len);
	r->body[len] = 0;
	r->len = len;
	r->ctype = ctype;
}

void dresp_json(struct dresp *r, int status, json_t *v)
{
	char *s = v ? json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
	json_decref(v);
	if (!s) {
		static const char oom[] = "{\"error\":{\"class\":\"Internal\",\"message\":\"internal store failure\"}}";
		dlog("error: out of memory serialising a response");
		dresp_text(r, 500, "application/json", oom, sizeof oom - 1);
		return;
	}
	free(r->body);
	r->status = status;
	r->body = s;
	r->len = strlen(s);
	r->ctype = "application/json";
}

int dclass_status(const char *k)
{
	static const struct { const char *k; int st; } t[] = {
		{ "BadRequest", 400 }, { "SessionAbsent", 401 }, { "SessionUnknown", 401 }, { "SessionExpired", 401 },
		{ "NotFound", 404 }, { "HeadConflict", 409 }, { "PayloadTooLarge", 413 }, { "Internal", 500 },
		{ "Timeout", 504 }, { "Capacity", 503 }, { "QuotaExceeded", 429 }, { "Forbidden", 403 },
		{ "StoreUnavailable", 503 },
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
		if (strcmp(t[i].k, k) == 0) return t[i].st;
	return 500;
}

/* A message quotes what a client sent (a header, a method, a task id) and
 * vsnprintf may cut it mid-character: each byte of an ill-formed UTF-8
 * sequence becomes '?', so json_pack never refuses the string (which
 * would turn a bad request into a 500; tests/fuzz/corpus/mcp/regress-*). */
static void utf8_scrub(char *s)
{
	unsigned char *p = (unsigned char *)s;
	while (*p) {
		unsigned c = *p;
		size_t n = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
		int ok = n > 0;
		for (size_t i = 1; ok && i < n; i++) ok = (p[i] & 0xc0) == 0x80;
		if (ok && n > 1) {
			unsigned cp = c & (0xff >> (n + 1));
			for (size_t i = 1; i < n; i++) cp = (cp << 6) | (p[i] & 0x3f);
			static const unsigned min[5] = { 0, 0, 0x80, 0x800, 0x10000 };
			ok = cp >= min[n] && cp <= 0x10ffff && (cp < 0xd800 || cp > 0xdfff);
		}
		if (!ok) { *p++ = '?'; continue; }
		p += n;
	}
}

void dresp_error(struct dresp *r, const char *klass, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	utf8_scrub(msg);
	int st = dclass_status(klass);
	dresp_json(r, st, json_pack("{s:{s:s,s:s}}", "error", "class", klass, "message", msg));
	if (st == 401) r->www_auth = 1;
}

void dresp_internal(struct dreq *rq, struct dresp *r, const char *what, const struct world_err *err)
{
	char p[256];
	dlog_safe(p, sizeof p, rq->path);
	dlog("error route=%s: %s: %s", p, what, err && err->msg[0] ? err->msg : "failed");
	if (err && err->code == WX_UNAVAILABLE) {
		dresp_store_unavailable(r);
		return;
	}
	dresp_error(r, "Internal", "internal store failure");
}

void dresp_store_unavailable(struct dresp *r)
{
	dresp_error(r, "StoreUnavailable", "the store's database server cannot be reached; retry (with the same task id a call runs at most once)");
	r->retry_after_s = DAEMON_RETRY_AFTER_S;
}

const char *dclass_of_store(int code)
{
	switch (code) {
	case WX_BAD_INPUT: case WX_USAGE: return "BadRequest";
	case WX_NOT_FOUND: return "NotFound";
	case WX_CONFLICT: return "HeadConflict";
	default: return NULL;
	}
}

/* ---- request access ---- */

static const char *copied(const struct dreq *rq, int header, const char *name)
{
	for (size_t i = 0; i < rq->nhdrs; i++)
		if (rq->hdrs[i].header == header &&
		    (header ? strcasecmp(rq->hdrs[i].name, name) == 0 : strcmp(rq->hdrs[i].name, name) == 0))
			return rq->hdrs[i].value;
	return NULL;
}

const char *dreq_header(const struct dreq *rq, const char *name)
{
	if (!rq->conn) return copied(rq, 1, name);
	return MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND, name);
}

const char *dreq_arg(const struct dreq *rq, const char *name)
{
	if (!rq->conn) return copied(rq, 0, name);
	return MHD_lookup_connection_value(rq->conn, MHD_GET_ARGUMENT_KIND, name);
}

/* ---- credentials ---- */

/* The credential of an Authorization header: "Bearer" (any case), one or
 * more spaces, exactly 64 lowercase hex; NULL when it is not that. */
const char *dauth_bearer(const char *h)
{
	const char *c = NULL;
	if (h && strncasecmp(h, "Bearer ", 7) == 0) {
		c = h + 7;
		while (*c == ' ') c++;
	}
	if (!c || strlen(c) != DAEMON_TOKEN_HEX || strspn(c, "0123456789abcdef") != DAEMON_TOKEN_HEX) return NULL;
	return c;
}

/* The store's operator token (docs/daemon.md, "The operator token"): its
 * hash is read from the store for every request (one primary-key lookup
 * through a pooled reader), so a `worldd token rotate` is seen by every
 * daemon of the store on its next request. */
int dauth_operator(struct dctx *d, const char *c, struct world_err *why)
{
	struct world_err err = { 0, "" };
	int match = 0, rc = 0;
	/* A pooled reader whose server went away and came back fails its
	 * first statement (the dead socket is seen only then) and reconnects
	 * on the next: one more try, so the first read after the server's
	 * return is answered, not refused. */
	for (int attempt = 0; attempt < 2; attempt++) {
		err = (struct world_err){ 0, "" };
		struct world_store *st = dreader_get(d, &err);
		rc = st && world_operator_token_match(st, c, &match, &err) == 0 ? 0 : -1;
		dreader_put(d, st);
		if (rc == 0 || err.code != WX_UNAVAILABLE) break;
	}
	if (rc < 0) {
		dlog("error: operator token check: %s", err.msg[0] ? err.msg : "failed");
		if (why) *why = err;
		return -1;
	}
	return match;
}

int dauth(struct dreq *rq, struct dresp *r, int allow_operator, int optional, struct coord_session **sess,
          int *present)
{
	*sess = NULL;
	if (present) *present = 0;
	const char *h = dreq_header(rq, "Authorization");
	if (!h || !*h) {
		if (optional) return 0;
		dresp_error(r, "SessionAbsent", "session credential is absent: send Authorization: Bearer <session-credential>");
		dwww_authenticate(rq, r);
		return -1;
	}
	if (present) *present = 1;
	const char *c = dauth_bearer(h);
	if (!c) {
		dresp_error(r, "SessionAbsent", "malformed Authorization header: expected Bearer <64-hex-credential>");
		dwww_authenticate(rq, r);
		return -1;
	}
	struct dctx *d = rq->d;
	struct world_err err = { 0, "" };
	int op = allow_operator ? dauth_operator(d, c, &err) : 0;
	if (op > 0) return 0;
	/* the store unreachable is never "no such credential": 503, not 401 */
	if (op < 0 || coord_session_open(d->coord, c, sess, &err) == 0) {
		if (op == 0) return 0;
		*sess = NULL;
		dresp_internal(rq, r, "operator token check", &err);
		return -1;
	}
	*sess = NULL;
	switch (err.code) {
	case WX_USAGE:
		dresp_error(r, "SessionAbsent", "malformed Authorization header: expected Bearer <64-hex-credential>");
		break;
	case WX_NOT_FOUND: dresp_error(r, "SessionUnknown", "unknown session credential"); break;
	case WX_SESSION: dresp_error(r, "SessionExpired", "session credential has expired"); break;
	default: dresp_internal(rq, r, "session lookup", &err); break;
	}
	dwww_authenticate(rq, r);
	return -1;
}

void dwww_authenticate(const struct dreq *rq, struct dresp *r)
{
	if (r->status != 401 || !r->body) return;
	json_t *v = json_loadb(r->body, r->len, 0, NULL);
	const char *klass = json_string_value(json_object_get(json_object_get(v, "error"), "class"));
	const char *msg = json_string_value(json_object_get(json_object_get(v, "error"), "message"));
	char desc[400] = "", meta[400];
	/* error_description is %x20-21 / %x23-5B / %x5D-7E (RFC 6750 §3) */
	size_t k = 0;
	for (const char *c = msg ? msg : ""; *c && k + 1 < sizeof desc; c++)
		desc[k++] = (*c == '"' || *c == '\\' || (unsigned char)*c < 0x20 || (unsigned char)*c > 0x7e) ? '\'' : *c;
	desc[k] = 0;
	snprintf(meta, sizeof meta, "%s/.well-known/oauth-protected-resource%s", rq->d->base_url,
	         strncmp(rq->path, "/mcp", 4) == 0 ? "/mcp/" : "");
	/* RFC 6750 §3.1: a request without credentials gets no error code;
	 * a malformed header is invalid_request; a refused one invalid_token */
	const char *code = !klass || (msg && strstr(msg, "is absent")) ? NULL
	                   : strcmp(klass, "SessionAbsent") == 0 ? "invalid_request" : "invalid_token";
	int n = code ? snprintf(r->www_auth_hdr, sizeof r->www_auth_hdr,
	                        "Bearer realm=\"worldd\", error=\"%s\", error_description=\"%s (%s)\", "
	                        "resource_metadata=\"%s\"", code, desc, klass, meta)
	             : -1;
	/* a description that does not fit drops the description, never cuts the header mid-quote */
	if (n < 0 || (size_t)n >= sizeof r->www_auth_hdr) {
		n = snprintf(r->www_auth_hdr, sizeof r->www_auth_hdr, "Bearer realm=\"worldd\"%s%s%s, resource_metadata=\"%s\"",
		             code ? ", error=\"" : "", code ? code : "", code ? "\"" : "", meta);
		if (n < 0 || (size_t)n >= sizeof r->www_auth_hdr) snprintf(r->www_auth_hdr, sizeof r->www_auth_hdr, "Bearer realm=\"worldd\"");
	}
	json_decref(v);
}

/* ---- reader pool ---- */

struct dreader {
	struct world_store *st;
	struct dreader *next_free, *next_all;
};

struct world_store *dreader_authorised(struct dreq *rq, struct dresp *r, int need_credential)
{
	if (need_credential) {
		struct coord_session *s = NULL;
		if (dauth(rq, r, 1, 0, &s, NULL) < 0) return NULL;
		coord_session_free(s);
	}
	struct world_err err = { 0, "" };
	struct world_store *st = dreader_get(rq->d, &err);
	if (!st) dresp_internal(rq, r, "reader handle", &err);
	return st;
}

struct world_store *dreader_get(struct dctx *d, struct world_err *err)
{
	pthread_mutex_lock(&d->pool_mu);
	struct dreader *r = d->pool;
	if (r) d->pool = r->next_free;
	pthread_mutex_unlock(&d->pool_mu);
	if (r) return r->st;
	r = calloc(1, sizeof *r);
	if (!r) { werr(err, WX_IO, "reader handle: out of memory"); return NULL; }
	struct world_store_open_opts oo = { .password_file = d->password_file };
	if (world_store_open_opts(d->db_path, WORLD_STORE_READER, &oo, &r->st, err) < 0) { free(r); return NULL; }
	pthread_mutex_lock(&d->pool_mu);
	r->next_all = d->all;
	d->all = r;
	pthread_mutex_unlock(&d->pool_mu);
	return r->st;
}

void dreader_put(struct dctx *d, struct world_store *st)
{
	if (!st) return;
	pthread_mutex_lock(&d->pool_mu);
	for (struct dreader *r = d->all; r; r = r->next_all)
		if (r->st == st) { r->next_free = d->pool; d->pool = r; break; }
	pthread_mutex_unlock(&d->pool_mu);
}

void dreader_pool_close(struct dctx *d)
{
	struct dreader *r = d->all;
	while (r) {
		struct dreader *n = r->next_all;
		world_store_close(r->st);
		free(r);
		r = n;
	}
	d->all = d->pool = NULL;
}

/* ---- the queue of a response that stays open (http.h, struct dsse) ---- */

int dsse_push_locked(struct dsse *q, const char *bytes, size_t n)
{
	if (q->closing) return -1;
	if (q->len + n > q->cap) {
		size_t cap = q->cap ? q->cap : 512;
		while (cap < q->len + n) cap *= 2;
		char *b = realloc(q->buf, cap);
		if (!b) return -1;
		q->buf = b;
		q->cap = cap;
	}
	memcpy(q->buf + q->len, bytes, n);
	q->len += n;
	if (q->suspended) {
		q->suspended = 0;
		MHD_resume_connection(q->conn);
	}
	return 0;
}

void dsse_end_locked(struct dsse *q)
{
	q->closing = 1;
	if (q->suspended) {
		q->suspended = 0;
		MHD_resume_connection(q->conn);
	}
}

ssize_t dsse_read(struct dsse *q, char *buf, size_t max)
{
	pthread_mutex_lock(q->mu);
	if (q->off < q->len) {
		size_t n = q->len - q->off < max ? q->len - q->off : max;
		memcpy(buf, q->buf + q->off, n);
		q->off += n;
		if (q->off == q->len) q->off = q->len = 0;
		pthread_mutex_unlock(q->mu);
		return (ssize_t)n;
	}
	if (q->closing) {
		pthread_mutex_unlock(q->mu);
		return MHD_CONTENT_READER_END_OF_STREAM;
	}
	/* nothing to send: park the connection until a push or the end */
	q->suspended = 1;
	MHD_suspend_connection(q->conn);
	pthread_mutex_unlock(q->mu);
	return 0;
}

/* ---- live responses (dlive_start) ----------------------------
 * The machinery of the notification stream (http.h, struct dsse, above)
 * for one call's response: a callback response of
 * unknown size whose reader hands out what is queued and, with nothing
 * queued, parks the connection until dlive_push or the end resumes it. Two owners: the worker (until the
 * route returned and its final body is queued) and the response (until
 * libmicrohttpd destroys it: the end was sent, or the client left). The
 * dconn is held the same way: on_completed may run while the worker still
 * runs (a client that left), and frees it only when the worker is done. */
struct dlive {
	pthread_mutex_t mu;
	struct dsse q;             /* what is queued (q.mu = &mu), above */
	int gone, refs;
	int fd;                    /* the connection's socket, to see a client that left (-1: unknown) */
	struct sup_cancel *on_gone;
};

void dlive_put(struct dlive *l)
{
	pthread_mutex_lock(&l->mu);
	int last = --l->refs == 0;
	pthread_mutex_unlock(&l->mu);
	if (!last) return;
	pthread_mutex_destroy(&l->mu);
	free(l->q.buf);
	free(l);
}

/* Append and wake the connection. Call with l->mu held. */
static int live_append(struct dlive *l, const char *bytes, size_t n)
{
	if (l->gone) return -1;
	return dsse_push_locked(&l->q, bytes, n);
}

int dlive_push(struct dlive *l, const char *bytes, size_t n)
{
	if (!l) return -1;
	pthread_mutex_lock(&l->mu);
	/* A parked connection is not watched by libmicrohttpd, and one write
	 * to a socket whose peer has gone still succeeds: look for its
	 * hang-up here, at each event (the socket is libmicrohttpd's and
	 * open until the response is freed, which sets gone first). */
	int left = 0;
	if (!l->gone && !l->q.closing && l->fd >= 0) {
		struct pollfd pf = { .fd = l->fd, .events = POLLRDHUP };
		left = poll(&pf, 1, 0) == 1 && (pf.revents & (POLLRDHUP | POLLHUP | POLLERR));
	}
	int cancel = left && l->on_gone;
	if (cancel) sup_cancel_fire(l->on_gone);
	if (left) l->gone = 1; /* nothing more is queued for it */
	int rc = left ? -1 : live_append(l, bytes, n);
	pthread_mutex_unlock(&l->mu);
	if (left) dlog("live response: the client left before its end%s", cancel ? "; its call is cancelled" : "");
	return rc;
}

void dlive_cancel_on_gone(struct dlive *l, struct sup_cancel *c)
{
	if (!l) return;
	pthread_mutex_lock(&l->mu);
	l->on_gone = c;
	if (c && l->gone) sup_cancel_fire(c);
	pthread_mutex_unlock(&l->mu);
}

ssize_t dlive_reader(void *cls, uint64_t pos, char *buf, size_t max)
{
	(void)pos;
	struct dlive *l = cls;
	return dsse_read(&l->q, buf, max);
}

/* libmicrohttpd is done with the response: sent to its end, or the client left. */
void dlive_free(void *cls)
{
	struct dlive *l = cls;
	pthread_mutex_lock(&l->mu);
	int early = !l->q.closing && !l->gone, cancel = early && l->on_gone;
	if (cancel) sup_cancel_fire(l->on_gone);
	l->gone = 1;
	pthread_mutex_unlock(&l->mu);
	if (early) dlog("live response: the client left before its end%s", cancel ? "; its call is cancelled" : "");
	dlive_put(l);
}

struct dlive *dlive_start(struct dreq *rq, const char *ctype)
{
	struct dlive_seat *seat = rq->seat;
	if (!seat) return NULL;
	if (seat->live) return seat->live;
	struct dlive *l = calloc(1, sizeof *l);
	if (!l) return NULL;
	if (pthread_mutex_init(&l->mu, NULL) != 0) {
		free(l);
		return NULL;
	}
	l->q.conn = seat->conn;
	l->q.mu = &l->mu;
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(seat->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	l->fd = ci ? ci->connect_fd : -1;
	l->refs = 2; /* the worker, the response */
	seat->live = l;
	seat->ctype = ctype;
	atomic_store(&seat->refs, 2); /* the connection, the worker */
	atomic_store(&seat->answered, 2);
	MHD_resume_connection(seat->conn); /* on_request queues the response (send_live) */
	return l;
}

/* The response will never be made (it could not be, or the connection
 * ended first): drop its reference; the worker's pushes go nowhere. */
void dlive_abandon(struct dlive *l)
{
	pthread_mutex_lock(&l->mu);
	if (!l->q.closing && l->on_gone) sup_cancel_fire(l->on_gone);
	l->gone = 1;
	pthread_mutex_unlock(&l->mu);
	dlive_put(l);
}

/* The worker's end of a live response (workers.c, live_finish): body (the
 * route's answer, n bytes) is the last of it, the response ends; whether
 * the client had gone. */
int dlive_end(struct dlive *l, const char *body, size_t n)
{
	pthread_mutex_lock(&l->mu);
	l->on_gone = NULL; /* the call has ended: its cancel handle is gone */
	int gone = l->gone;
	if (!gone && body && n) live_append(l, body, n);
	dsse_end_locked(&l->q);
	pthread_mutex_unlock(&l->mu);
	return gone;
}

/* ---- JSON-RPC ---- */

/* Does the pointer ptr (its segments) match pattern, "#" matching any
 * array index, as a prefix of it? */
static int nul_data_at(const char *ptr, const char *pattern)
{
	const char *p = ptr, *q = pattern;
	while (*q) {
		if (*p != '/' || *q != '/') return 0;
		p++;
		q++;
		size_t pl = strcspn(p, "/"), ql = strcspn(q, "/");
		if (!(ql == 1 && *q == '#' && pl > 0 && strspn(p, "0123456789") == pl) && (pl != ql || memcmp(p, q, pl)))
			return 0;
		p += pl;
		q += ql;
	}
	return *p == '\0' || *p == '/';
}

/* cut: the pointer was cut short (over 511 bytes): it names no data place
 * then, so a long key cannot make it read as one. */
static int nul_walk(const json_t *v, char *ptr, size_t len, size_t cap, int cut, const char *const *data,
                    char *where, size_t n)
{
	for (const char *const *d = data; !cut && *d; d++)
		if (nul_data_at(ptr, *d)) return 0;
	if (json_is_string(v)) {
		if (!memchr(json_string_value(v), 0, json_string_length(v))) return 0;
		snprintf(where, n, "%s", len ? ptr : "(root)");
		return 1;
	}
	if (json_is_array(v)) {
		size_t i;
		json_t *x;
		json_array_foreach(v, i, x) {
			int w = snprintf(ptr + len, cap - len, "/%zu", i), c = cut;
			if (w < 0 || (size_t)w >= cap - len) w = (int)(cap - len - 1), c = 1;
			if (nul_walk(x, ptr, len + (size_t)w, cap, c, data, where, n)) return 1;
			ptr[len] = '\0';
		}
		return 0;
	}
	if (json_is_object(v)) {
		const char *k;
		json_t *x;
		json_object_foreach((json_t *)v, k, x) {
			/* a key is a name: jansson refuses U+0000 in keys itself; "~"
			 * and "/" escaped as RFC 6901 says, so no key spells a place */
			size_t w = len;
			int c = cut;
			if (w + 1 < cap) ptr[w++] = '/';
			else c = 1;
			const char *ch = k;
			for (; *ch && w + 2 < cap; ch++) {
				if (*ch == '~' || *ch == '/') {
					ptr[w++] = '~';
					ptr[w++] = *ch == '~' ? '0' : '1';
				} else ptr[w++] = *ch;
			}
			if (*ch) c = 1;
			ptr[w] = '\0';
			if (nul_walk(x, ptr, w, cap, c, data, where, n)) return 1;
			ptr[len] = '\0';
		}
	}
	return 0;
}

int drpc_nul(const json_t *msg, const char *const *data, int batch, char *where, size_t n)
{
	char ptr[512] = "";
	if (batch && json_is_array(msg)) {
		size_t i;
		json_t *x;
		json_array_foreach(msg, i, x) {
			if (nul_walk(x, ptr, 0, sizeof ptr, 0, data, where, n)) {
				char one[400];
				snprintf(one, sizeof one, "%s", where);
				snprintf(where, n, "/%zu%s", i, strcmp(one, "(root)") ? one : "");
				return 1;
			}
		}
		return 0;
	}
	return nul_walk(msg, ptr, 0, sizeof ptr, 0, data, where, n);
}

json_t *drpc_error(json_t *id, int code, const char *fmt, ...)
{
	char msg[1200];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	utf8_scrub(msg);
	return json_pack("{s:s,s:O,s:{s:i,s:s}}", "jsonrpc", "2.0", "id", id ? id : json_null(), "error", "code", code,
	                 "message", msg);
}
