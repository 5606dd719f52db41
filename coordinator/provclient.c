/* coordinator/provclient.c: see provclient.h. */
#include "coordinator/provclient.h"
#include "common/canon.h"
#include <errno.h>
#include <netdb.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

struct prov_client {
	char url[512];
	char host[256], port[16];
	char bearer[80];
};

struct prov_client *prov_client_new(const char *url, const char *bearer, struct world_err *err)
{
	if (!url || strncmp(url, "http://", 7) != 0) {
		werr(err, WX_USAGE, "--addr '%s': expected http://HOST:PORT", url ? url : "");
		return NULL;
	}
	struct prov_client *c = calloc(1, sizeof *c);
	if (!c) { werr(err, WX_FAIL, "out of memory"); return NULL; }
	snprintf(c->url, sizeof c->url, "%s", url);
	size_t n = strlen(c->url);
	while (n > 7 && c->url[n - 1] == '/') c->url[--n] = 0;
	const char *h = c->url + 7, *colon;
	size_t hl;
	if (*h == '[') {
		const char *e = strchr(h, ']');
		if (!e || e[1] != ':') goto bad;
		hl = (size_t)(e - h - 1);
		if (hl == 0 || hl >= sizeof c->host) goto bad;
		memcpy(c->host, h + 1, hl);
		colon = e + 1;
	} else {
		colon = strrchr(h, ':');
		if (!colon) goto bad;
		hl = (size_t)(colon - h);
		if (hl == 0 || hl >= sizeof c->host) goto bad;
		memcpy(c->host, h, hl);
	}
	const char *p = colon + 1;
	if (!*p || strlen(p) >= sizeof c->port || strspn(p, "0123456789") != strlen(p)) goto bad;
	snprintf(c->port, sizeof c->port, "%s", p);
	if (bearer) {
		if (strlen(bearer) != 64 || strspn(bearer, "0123456789abcdef") != 64) {
			werr(err, WX_USAGE, "bearer credential: want 64 lowercase hex");
			free(c);
			return NULL;
		}
		snprintf(c->bearer, sizeof c->bearer, "%s", bearer);
	}
	return c;
bad:
	werr(err, WX_USAGE, "--addr '%s': expected http://HOST:PORT", url);
	free(c);
	return NULL;
}

void prov_client_free(struct prov_client *c) { free(c); }

static int send_all(int fd, const char *b, size_t n)
{
	while (n) {
		ssize_t w = send(fd, b, n, MSG_NOSIGNAL);
		if (w < 0) {
			if (errno == EINTR) continue;
			return -1;
		}
		b += w;
		n -= (size_t)w;
	}
	return 0;
}

/* GET path: *status and the parsed JSON body (NULL when not JSON). */
static int http_get(struct prov_client *c, const char *path, int *status, json_t **body, struct world_err *err)
{
	*body = NULL;
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai = NULL;
	int g = getaddrinfo(c->host, c->port, &hints, &ai);
	if (g != 0) return werr(err, WX_IO, "daemon %s: resolve %s: %s", c->url, c->host, gai_strerror(g));
	int fd = -1;
	for (struct addrinfo *a = ai; a; a = a->ai_next) {
		fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
		if (fd < 0) continue;
		struct timeval tv = { .tv_sec = PROV_CLIENT_TIMEOUT_S };
		if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) < 0 ||
		    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) < 0 || connect(fd, a->ai_addr, a->ai_addrlen) < 0) {
			close(fd);
			fd = -1;
			continue;
		}
		break;
	}
	int cerr = errno;
	freeaddrinfo(ai);
	if (fd < 0) return werr(err, WX_IO, "daemon %s: connect: %s", c->url, strerror(cerr));
	char req[1024];
	int rl = snprintf(req, sizeof req, "GET %s HTTP/1.0\r\nHost: %s:%s\r\n%s%s%sAccept: application/json\r\n"
	                  "Connection: close\r\n\r\n", path, c->host, c->port, c->bearer[0] ? "Authorization: Bearer " : "",
	                  c->bearer, c->bearer[0] ? "\r\n" : "");
	if (rl < 0 || (size_t)rl >= sizeof req) {
		close(fd);
		return werr(err, WX_USAGE, "daemon %s: request path too long", c->url);
	}
	if (send_all(fd, req, (size_t)rl) < 0) {
		int e = errno;
		close(fd);
		return werr(err, WX_IO, "daemon %s: GET %s: send: %s", c->url, path, strerror(e));
	}
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap + 1);
	if (!buf) { close(fd); return werr(err, WX_FAIL, "out of memory"); }
	for (;;) {
		if (n == cap) {
			if (cap >= PROV_CLIENT_REPLY_MAX) {
				free(buf);
				close(fd);
				return werr(err, WX_IO, "daemon %s: GET %s: reply over %zu bytes", c->url, path, PROV_CLIENT_REPLY_MAX);
			}
			cap *= 2;
			char *nb = realloc(buf, cap + 1);
			if (!nb) { free(buf); close(fd); return werr(err, WX_FAIL, "out of memory"); }
			buf = nb;
		}
		ssize_t r = recv(fd, buf + n, cap - n, 0);
		if (r < 0) {
			if (errno == EINTR) continue;
			int e = errno;
			free(buf);
			close(fd);
			return werr(err, WX_IO, "daemon %s: GET %s: %s", c->url, path,
			            e == EAGAIN || e == EWOULDBLOCK ? "no reply within the timeout" : strerror(e));
		}
		if (r == 0) break;
		n += (size_t)r;
	}
	close(fd);
	buf[n] = 0;
	char *sep = strstr(buf, "\r\n\r\n");
	if (strncmp(buf, "HTTP/1.", 7) != 0 || !sep || n < 12) {
		free(buf);
		return werr(err, WX_IO, "daemon %s: GET %s: not an HTTP reply", c->url, path);
	}
	*status = atoi(buf + 9);
	sep += 4;
	*body = json_loadb(sep, n - (size_t)(sep - buf), 0, NULL);
	free(buf);
	return 0;
}

/* GET path expecting 200 and a JSON object; other statuses become errors
 * carrying the daemon's envelope message. */
static json_t *get_json(struct prov_client *c, const char *path, struct world_err *err)
{
	int status = 0;
	json_t *b;
	if (http_get(c, path, &status, &b, err) < 0) return NULL;
	if (status == 200 && json_is_object(b)) return b;
	const char *msg = json_string_value(json_object_get(json_object_get(b, "error"), "message"));
	const char *klass = json_string_value(json_object_get(json_object_get(b, "error"), "class"));
	int code = status == 404 ? WX_NOT_FOUND : status == 401 ? WX_SESSION : status == 400 ? WX_BAD_INPUT : WX_IO;
	werr(err, code, "daemon %s: GET %s: %d %s: %s", c->url, path, status, klass ? klass : "", msg ? msg : "(no message)");
	json_decref(b);
	return NULL;
}

static const char *jstr(const json_t *o, const char *k) { return json_string_value(json_object_get(o, k)); }

static int cl_object(void *ctx, const char *ref, struct world_object *o, struct world_err *err)
{
	struct prov_client *c = ctx;
	memset(o, 0, sizeof *o);
	if (world_ref_parse(ref, "object ref", NULL, err) < 0) return -1;
	char path[200];
	snprintf(path, sizeof path, "/v1/objects/%s?payload=true", ref);
	json_t *b = get_json(c, path, err);
	if (!b) return -1;
	const char *sem = jstr(b, "semanticId"), *prov = jstr(b, "provenance"), *p64 = jstr(b, "payload");
	if (!sem || !p64) {
		json_decref(b);
		return werr(err, WX_IO, "daemon %s: object %s: reply lacks semanticId or payload", c->url, ref);
	}
	size_t l64 = strlen(p64);
	unsigned char *raw = malloc(l64 / 4 * 3 + 4);
	int dn = raw ? EVP_DecodeBlock(raw, (const unsigned char *)p64, (int)l64) : -1;
	if (dn < 0 || l64 % 4) {
		free(raw);
		json_decref(b);
		return werr(err, WX_IO, "daemon %s: object %s: payload is not base64", c->url, ref);
	}
	size_t len = (size_t)dn;
	if (l64 >= 1 && p64[l64 - 1] == '=') len--;
	if (l64 >= 2 && p64[l64 - 2] == '=') len--;
	raw[len] = 0;
	char got[WORLD_REF_SIZE];
	if (world_hash_ref(raw, len, got, err) < 0 || strcmp(got, ref) != 0) {
		free(raw);
		json_decref(b);
		return werr(err, WX_INTEGRITY, "object %s: the daemon's payload hashes to %s", ref, got);
	}
	snprintf(o->ref, sizeof o->ref, "%s", ref);
	o->semantic_id = strdup(sem);
	o->provenance = strdup(prov ? prov : "");
	o->payload = raw;
	o->len = len;
	json_decref(b);
	if (!o->semantic_id || !o->provenance) {
		world_object_free(o);
		return werr(err, WX_FAIL, "out of memory");
	}
	return 0;
}

/* The entry from its route's JSON; json = canonical entry with entryHash. */
static int entry_from(struct prov_client *c, const json_t *it, struct world_log_entry *e, struct world_err *err)
{
	memset(e, 0, sizeof *e);
	const json_t *h = json_object_get(it, "header");
	const char *fn = jstr(h, "transitionFn"), *in = jstr(h, "interpreter"), *wb = jstr(h, "writtenBy");
	const char *eh = jstr(it, "entryHash"), *tr = jstr(it, "transitionRef");
	json_t *prev = json_object_get(h, "prevEntryHash");
	if (!fn || !in || !wb || !eh || !tr || !json_is_integer(json_object_get(h, "entryIndex")) ||
	    !(json_is_null(prev) || json_is_string(prev)))
		return werr(err, WX_IO, "daemon %s: a log entry reply lacks fields", c->url);
	e->entry_index = json_integer_value(json_object_get(h, "entryIndex"));
	e->semantics_epoch = json_integer_value(json_object_get(h, "semanticsEpoch"));
	snprintf(e->transition_fn, sizeof e->transition_fn, "%s", fn);
	snprintf(e->interpreter, sizeof e->interpreter, "%s", in);
	snprintf(e->prev_entry_hash, sizeof e->prev_entry_hash, "%s", json_is_string(prev) ? json_string_value(prev) : "");
	snprintf(e->transition_ref, sizeof e->transition_ref, "%s", tr);
	snprintf(e->entry_hash, sizeof e->entry_hash, "%s", eh);
	json_t *j = json_pack("{s:I,s:I,s:s,s:s,s:O,s:s,s:s,s:s}", "entryIndex", (json_int_t)e->entry_index,
	                      "semanticsEpoch", (json_int_t)e->semantics_epoch, "transitionFn", fn, "interpreter", in,
	                      "prevEntryHash", prev, "writtenBy", wb, "transitionRef", tr, "entryHash", eh);
	e->json = j ? world_canon_json(j, &e->json_len, err) : NULL;
	json_decref(j);
	e->written_by = strdup(wb);
	if (!e->json || !e->written_by) {
		world_log_entry_free(e);
		return werr(err, WX_FAIL, "out of memory");
	}
	return 0;
}

static int cl_entry(void *ctx, long long index, struct world_log_entry *e, struct world_err *err)
{
	struct prov_client *c = ctx;
	char path[64];
	snprintf(path, sizeof path, "/v1/log/%lld", index);
	json_t *b = get_json(c, path, err);
	if (!b) return -1;
	int rc = entry_from(c, b, e, err);
	json_decref(b);
	return rc;
}

static int cl_last(void *ctx, long long *index, struct world_err *err)
{
	struct world_err e = { 0 };
	json_t *b = get_json(ctx, "/v1/head", &e);
	if (!b) {
		if (e.code == WX_NOT_FOUND) { *index = 0; return 0; }
		if (err) *err = e;
		return -1;
	}
	*index = json_integer_value(json_object_get(b, "revision"));
	json_decref(b);
	return 0;
}

static int cl_world(void *ctx, const char *ref, struct world_world *w, struct world_err *err)
{
	struct prov_client *c = ctx;
	memset(w, 0, sizeof *w);
	if (world_ref_parse(ref, "world ref", NULL, err) < 0) return -1;
	char path[120];
	snprintf(path, sizeof path, "/v1/worlds/%s", ref);
	json_t *b = get_json(c, path, err);
	if (!b) return -1;
	const char *r = jstr(b, "ref"), *sr = jstr(b, "stateRoot"), *lh = jstr(b, "logHead");
	if (!r || !sr || !lh) {
		json_decref(b);
		return werr(err, WX_IO, "daemon %s: world %s: reply lacks fields", c->url, ref);
	}
	snprintf(w->ref, sizeof w->ref, "%s", r);
	w->revision = json_integer_value(json_object_get(b, "revision"));
	snprintf(w->state_root, sizeof w->state_root, "%s", sr);
	snprintf(w->log_head, sizeof w->log_head, "%s", lh);
	json_decref(b);
	/* the ref is recomputed here: the daemon's word is not taken for it */
	char h[WORLD_REF_SIZE] = "";
	if (world_world_ref(w->revision, w->state_root, w->log_head, w->json, h, err) < 0)
		return werr_prefix(err, "world %s from daemon %s", ref, c->url);
	if (strcmp(h, ref) != 0) return werr(err, WX_INTEGRITY, "world %s: the daemon's world hashes to %s", ref, h);
	return 0;
}

void prov_src_client(struct prov_src *s, struct prov_client *c)
{
	memset(s, 0, sizeof *s);
	s->ctx = c;
	snprintf(s->where, sizeof s->where, "daemon %s", c->url);
	s->object = cl_object;
	s->entry = cl_entry;
	s->last = cl_last;
	s->world = cl_world;
	/* no route serves the journal or the interpreter archive */
}

/* ---- resolving through the log, newest first ---- */

enum want { W_REF, W_OUTPUT, W_INVOCATION };

/* The newest entry matching key: its entryHash or transitionRef (W_REF), its
 * record's output (W_OUTPUT) or invocationId (W_INVOCATION). */
static int scan_log(struct prov_client *c, enum want want, const char *key, long long *index, struct world_err *err)
{
	long long last;
	if (cl_last(c, &last, err) < 0) return -1;
	long long seen = 0;
	for (long long hi = last; hi >= 1 && seen < PROV_CLIENT_SCAN_MAX;) {
		long long lo = hi - 499 > 1 ? hi - 499 : 1;
		char path[96];
		snprintf(path, sizeof path, "/v1/log?from=%lld&limit=%lld", lo, hi - lo + 1);
		json_t *b = get_json(c, path, err);
		if (!b) return -1;
		json_t *items = json_object_get(b, "items");
		for (size_t i = json_array_size(items); i-- > 0 && seen < PROV_CLIENT_SCAN_MAX;) {
			json_t *it = json_array_get(items, i);
			long long idx = json_integer_value(json_object_get(json_object_get(it, "header"), "entryIndex"));
			const char *eh = jstr(it, "entryHash"), *tr = jstr(it, "transitionRef");
			seen++;
			int hit = 0;
			if (want == W_REF) hit = (eh && strcmp(eh, key) == 0) || (tr && strcmp(tr, key) == 0);
			else if (tr) {
				struct world_object o;
				struct world_err e = { 0 };
				if (cl_object(c, tr, &o, &e) == 0) {
					json_t *r = world_json_parse((const char *)o.payload, o.len, &e);
					const char *v = jstr(r, want == W_OUTPUT ? "output" : "invocationId");
					hit = v && strcmp(v, key) == 0;
					json_decref(r);
					world_object_free(&o);
				}
			}
			if (hit) {
				*index = idx;
				json_decref(b);
				return 0;
			}
		}
		json_decref(b);
		hi = lo - 1;
	}
	return werr(err, WX_NOT_FOUND, "%s: no entry of the newest %lld through the daemon names it", key, seen);
}

int prov_client_resolve(struct prov_client *c, const char *target, long long *index, struct world_err *err)
{
	if (!target || !*target) return werr(err, WX_USAGE, "no entry given");
	if (strcmp(target, "head") == 0) {
		if (cl_last(c, index, err) < 0) return -1;
		return *index ? 0 : werr(err, WX_NOT_FOUND, "the log is empty");
	}
	if (target[0] >= '0' && target[0] <= '9') {
		char *end;
		long long v = strtoll(target, &end, 10);
		if (*end || v < 1) return werr(err, WX_USAGE, "entry index \"%s\": want a positive integer", target);
		*index = v;
		return 0;
	}
	if (strncmp(target, "sha256:", 7) == 0) {
		if (world_ref_parse(target, "ref", NULL, err) < 0) return -1;
		struct world_world w;
		struct world_err e = { 0 };
		if (cl_world(c, target, &w, &e) == 0) { *index = w.revision; return 0; }
		if (e.code != WX_NOT_FOUND) { if (err) *err = e; return -1; }
		if (scan_log(c, W_REF, target, index, &e) == 0) return 0;
		if (e.code != WX_NOT_FOUND) { if (err) *err = e; return -1; }
		return scan_log(c, W_OUTPUT, target, index, err);
	}
	if (strncmp(target, "mcp:", 4) == 0 || strncmp(target, "a2a:", 4) == 0 || strncmp(target, "cli:", 4) == 0)
		return scan_log(c, W_INVOCATION, target, index, err);
	return werr(err, WX_USAGE, "\"%.200s\": want an index, head, a sha256: ref or an invocation id", target);
}

int prov_client_resolve_result(struct prov_client *c, const char *bytes, size_t len, long long *index,
                               struct world_err *err)
{
	char ref[WORLD_REF_SIZE];
	json_t *v = prov_result_parse(bytes, len, ref, err);
	if (!v) return -1;
	struct world_err e = { 0 };
	int rc = scan_log(c, W_OUTPUT, ref, index, &e);
	/* a result altered since: the invocation its plan was written for */
	const char *plan = jstr(json_object_get(v, "world"), "plan");
	if (rc < 0 && plan && world_ref_valid(plan)) {
		struct world_object o;
		if (cl_object(c, plan, &o, &e) == 0) {
			rc = scan_log(c, W_INVOCATION, o.provenance, index, &e);
			world_object_free(&o);
		}
	}
	if (rc < 0) werr(err, e.code == WX_NOT_FOUND || !e.code ? WX_NOT_FOUND : e.code, "result %s: %s", ref, e.msg);
	json_decref(v);
	return rc;
}
