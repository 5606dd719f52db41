/* coordinator/confirm.c: what a transition asks its caller before it runs,
 * and the request state between the rounds (coordinator/confirm.h). */
#include "coordinator/confirm.h"
#include "common/canon.h"
#include "common/file.h"
#include "common/jschema.h"
#include "common/ref.h"
#include "store/store.h"
#include <errno.h>
#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *cap_of(const char *method)
{
	if (!method) return NULL;
	if (strcmp(method, "elicitation/create") == 0) return "elicitation";
	if (strcmp(method, "sampling/createMessage") == 0) return "sampling";
	if (strcmp(method, "roots/list") == 0) return "roots";
	return NULL;
}

static int key_ok(const char *k)
{
	size_t n = strlen(k);
	return n >= 1 && n <= 64 && strspn(k, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") == n;
}

int confirm_decl_check(const json_t *d, char *why, size_t n)
{
	if (!json_is_array(d) || json_array_size(d) < 1 || json_array_size(d) > CONFIRM_ROUNDS_MAX) {
		snprintf(why, n, "inputRequests must be an array of 1 to %d rounds", CONFIRM_ROUNDS_MAX);
		return -1;
	}
	struct world_err ce = { 0, "" };
	size_t len = 0;
	char *canon = world_canon_json(d, &len, &ce);
	free(canon);
	if (!canon) { snprintf(why, n, "inputRequests: %s", ce.msg); return -1; }
	if (len > CONFIRM_DECL_MAX) {
		snprintf(why, n, "inputRequests is %zu bytes; at most %d", len, CONFIRM_DECL_MAX);
		return -1;
	}
	size_t r;
	json_t *round;
	json_array_foreach(d, r, round) {
		if (!json_is_object(round) || json_object_size(round) < 1 || json_object_size(round) > CONFIRM_KEYS_MAX) {
			snprintf(why, n, "inputRequests[%zu] must be an object of 1 to %d requests", r, CONFIRM_KEYS_MAX);
			return -1;
		}
		const char *k;
		json_t *q;
		json_object_foreach(round, k, q) {
			if (!key_ok(k)) {
				snprintf(why, n, "inputRequests[%zu]: key \"%.70s\" must be 1-64 characters of [A-Za-z0-9._-]", r, k);
				return -1;
			}
			for (size_t e = 0; e < r; e++)
				if (json_object_get(json_array_get(d, e), k)) {
					snprintf(why, n, "inputRequests[%zu].%s: the key is already asked in round %zu", r, k, e);
					return -1;
				}
			const char *m = json_string_value(json_object_get(q, "method"));
			json_t *p = json_object_get(q, "params"), *opt = json_object_get(q, "optional");
			const char *bad = NULL;
			const char *kk;
			json_t *kv;
			if (!json_is_object(q)) bad = "must be an object {method, params[, optional]}";
			else if (!cap_of(m)) bad = "method must be elicitation/create, sampling/createMessage or roots/list";
			else if (!json_is_object(p)) bad = "params must be an object";
			else if (opt && !json_is_boolean(opt)) bad = "optional must be true or false";
			else if (strcmp(m, "elicitation/create") == 0) {
				json_t *rs = json_object_get(p, "requestedSchema");
				if (!json_is_string(json_object_get(p, "message"))) bad = "params.message must be a string";
				else if (!json_is_object(rs) || !json_is_object(json_object_get(rs, "properties")) ||
				         strcmp(json_string_value(json_object_get(rs, "type")) ? json_string_value(json_object_get(rs, "type")) : "",
				                "object") != 0)
					bad = "params.requestedSchema must be an object schema {\"type\":\"object\",\"properties\":{...}}";
			} else if (strcmp(m, "sampling/createMessage") == 0) {
				json_t *ms = json_object_get(p, "messages"), *mt = json_object_get(p, "maxTokens");
				if (!json_is_array(ms) || json_array_size(ms) == 0) bad = "params.messages must be a non-empty array";
				else if (!json_is_integer(mt) || json_integer_value(mt) < 1) bad = "params.maxTokens must be an integer >= 1";
			}
			if (!bad && json_is_object(q))
				json_object_foreach(q, kk, kv)
					if (strcmp(kk, "method") && strcmp(kk, "params") && strcmp(kk, "optional")) {
						snprintf(why, n, "inputRequests[%zu].%s: unknown member \"%.60s\"", r, k, kk);
						return -1;
					}
			if (bad) {
				snprintf(why, n, "inputRequests[%zu].%s: %s", r, k, bad);
				return -1;
			}
		}
	}
	return 0;
}

/* ---- the key ---- */
static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

static int key_parse(const char *text, size_t len, unsigned char key[CONFIRM_KEY_LEN])
{
	while (len && (text[len - 1] == '\n' || text[len - 1] == ' ')) len--;
	if (len != 2 * CONFIRM_KEY_LEN) return -1;
	for (int i = 0; i < CONFIRM_KEY_LEN; i++) {
		int h = hexval(text[2 * i]), l = hexval(text[2 * i + 1]);
		if (h < 0 || l < 0) return -1;
		key[i] = (unsigned char)(h << 4 | l);
	}
	return 0;
}

static int key_read(const char *path, unsigned char key[CONFIRM_KEY_LEN], struct world_err *err)
{
	struct stat sb;
	if (lstat(path, &sb) < 0) return werr(err, errno == ENOENT ? WX_NOT_FOUND : WX_IO, "input state key %s: %s", path, strerror(errno));
	if (!S_ISREG(sb.st_mode)) return werr(err, WX_IO, "input state key %s: not a regular file", path);
	if (sb.st_mode & 077)
		return werr(err, WX_IO, "input state key %s: mode %03o; it must be readable by its owner only (chmod 600)", path,
		            (unsigned)(sb.st_mode & 0777));
	char *text = NULL;
	size_t len = 0;
	if (world_read_file(path, 256, &text, &len, err) < 0) return werr_prefix(err, "input state key");
	int rc = key_parse(text, len, key);
	OPENSSL_cleanse(text, len);
	free(text);
	if (rc < 0) return werr(err, WX_IO, "input state key %s: not %d hex digits", path, 2 * CONFIRM_KEY_LEN);
	return 0;
}

int confirm_key_load(struct world_store *st, unsigned char key[CONFIRM_KEY_LEN], struct world_err *err)
{
	char path[4400];
	if (world_input_key_path(st, path, sizeof path, 1, err) < 0) return -1;
	if (key_read(path, key, err) == 0) return 0;
	if (err->code != WX_NOT_FOUND) return -1;
	/* none yet: a new one, written whole under a temporary name and linked
	 * into place, so a daemon starting beside this one reads either none
	 * or all of it, and the first link wins */
	unsigned char raw[CONFIRM_KEY_LEN];
	if (RAND_bytes(raw, sizeof raw) != 1) return werr(err, WX_IO, "input state key: no random bytes from libcrypto");
	char hex[2 * CONFIRM_KEY_LEN + 2];
	for (int i = 0; i < CONFIRM_KEY_LEN; i++) snprintf(hex + 2 * i, 3, "%02x", raw[i]);
	hex[2 * CONFIRM_KEY_LEN] = '\n';
	hex[2 * CONFIRM_KEY_LEN + 1] = 0;
	OPENSSL_cleanse(raw, sizeof raw);
	char tmp[4500];
	snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		OPENSSL_cleanse(hex, sizeof hex);
		return werr(err, WX_IO, "input state key: create %s: %s", tmp, strerror(errno));
	}
	size_t want = strlen(hex);
	ssize_t w = write(fd, hex, want);
	int we = errno;
	OPENSSL_cleanse(hex, sizeof hex);
	int ok = w == (ssize_t)want && fsync(fd) == 0;
	if (!ok && w == (ssize_t)want) we = errno;
	if (close(fd) < 0 && ok) { ok = 0; we = errno; }
	if (!ok) {
		unlink(tmp);
		return werr(err, WX_IO, "input state key: write %s: %s", tmp, strerror(we));
	}
	int lr = link(tmp, path);
	int le = errno;
	unlink(tmp);
	if (lr < 0 && le != EEXIST) return werr(err, WX_IO, "input state key: link %s: %s", path, strerror(le));
	return key_read(path, key, err);
}

/* ---- the state ---- */
static char *b64url(const unsigned char *p, size_t n)
{
	char *o = malloc(4 * ((n + 2) / 3) + 1);
	if (!o) return NULL;
	int len = EVP_EncodeBlock((unsigned char *)o, p, (int)n);
	while (len > 0 && o[len - 1] == '=') len--;
	o[len] = 0;
	for (char *c = o; *c; c++) *c = *c == '+' ? '-' : *c == '/' ? '_' : *c;
	return o;
}

/* base64url without padding -> bytes (malloc'd, *n); NULL when not that,
 * and when not its one canonical spelling: the last character's unused
 * low bits must be zero, or two spellings of one state would both pass
 * (so that any change of a state's text is refused, not only most) */
static unsigned char *unb64url(const char *s, size_t sl, size_t *n)
{
	if (sl % 4 == 1 || sl > CONFIRM_STATE_MAX) return NULL;
	size_t pl = sl + (4 - sl % 4) % 4;
	char *t = malloc(pl + 1);
	unsigned char *o = malloc(pl / 4 * 3 + 1);
	if (!t || !o) { free(t); free(o); return NULL; }
	for (size_t i = 0; i < sl; i++) {
		char c = s[i];
		if (c == '-') c = '+';
		else if (c == '_') c = '/';
		else if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))) { free(t); free(o); return NULL; }
		t[i] = c;
	}
	for (size_t i = sl; i < pl; i++) t[i] = '=';
	t[pl] = 0;
	int len = EVP_DecodeBlock(o, (unsigned char *)t, (int)pl);
	free(t);
	if (len < 0) { free(o); return NULL; }
	*n = (size_t)len - (pl - sl);
	char *again = b64url(o, *n);
	int canonical = again && strlen(again) == sl && memcmp(again, s, sl) == 0;
	free(again);
	if (!canonical) { free(o); return NULL; }
	return o;
}

static char *seal(const unsigned char *key, const json_t *payload, struct world_err *err)
{
	size_t len;
	char *bytes = world_canon_json(payload, &len, err);
	if (!bytes) return NULL;
	unsigned char mac[EVP_MAX_MD_SIZE];
	unsigned ml = 0;
	if (!HMAC(EVP_sha256(), key, CONFIRM_KEY_LEN, (const unsigned char *)bytes, len, mac, &ml)) {
		free(bytes);
		werr(err, WX_FAIL, "request state: HMAC failed");
		return NULL;
	}
	char *a = b64url((const unsigned char *)bytes, len), *b = b64url(mac, ml);
	free(bytes);
	char *out = NULL;
	if (a && b && (out = malloc(strlen(a) + strlen(b) + 5))) sprintf(out, "v1.%s.%s", a, b);
	free(a);
	free(b);
	if (!out) werr(err, WX_FAIL, "request state: out of memory");
	else if (strlen(out) > CONFIRM_STATE_MAX) {
		free(out);
		out = NULL;
		werr(err, WX_BAD_INPUT, "request state: the answers so far are over %d bytes", CONFIRM_STATE_MAX);
	}
	return out;
}

#define TAMPERED "requestState does not verify (altered, or not issued by this server's key); call again without it"

/* The payload of a state that verifies under key, or NULL (err WX_BAD_INPUT). */
static json_t *unseal(const unsigned char *key, const char *s, struct world_err *err)
{
	size_t sl = strlen(s);
	if (sl > CONFIRM_STATE_MAX || strncmp(s, "v1.", 3) != 0) { werr(err, WX_BAD_INPUT, TAMPERED); return NULL; }
	const char *a = s + 3, *dot = strchr(a, '.');
	if (!dot || strchr(dot + 1, '.')) { werr(err, WX_BAD_INPUT, TAMPERED); return NULL; }
	size_t pn = 0, mn = 0;
	unsigned char *p = unb64url(a, (size_t)(dot - a), &pn), *m = unb64url(dot + 1, strlen(dot + 1), &mn);
	unsigned char mac[EVP_MAX_MD_SIZE];
	unsigned ml = 0;
	int ok = p && m && HMAC(EVP_sha256(), key, CONFIRM_KEY_LEN, p, pn, mac, &ml) && ml == mn &&
	         CRYPTO_memcmp(mac, m, ml) == 0;
	json_t *j = NULL;
	if (ok) {
		json_error_t je;
		j = json_loadb((const char *)p, pn, JSON_REJECT_DUPLICATES, &je);
	}
	free(p);
	free(m);
	if (!json_is_object(j)) {
		json_decref(j);
		werr(err, WX_BAD_INPUT, TAMPERED);
		return NULL;
	}
	return j;
}

/* ---- the answers ---- */
/* An answer of the shape its method's result has: 0, else -1 with why. */
static int answer_check(const json_t *q, const json_t *a, char *why, size_t n)
{
	const char *m = json_string_value(json_object_get(q, "method"));
	if (!json_is_object(a)) { snprintf(why, n, "must be an object (the client's result for %s)", m); return -1; }
	if (strcmp(m, "elicitation/create") == 0) {
		const char *act = json_string_value(json_object_get(a, "action"));
		if (!act || (strcmp(act, "accept") && strcmp(act, "decline") && strcmp(act, "cancel"))) {
			snprintf(why, n, "action must be accept, decline or cancel");
			return -1;
		}
		json_t *c = json_object_get(a, "content");
		if (strcmp(act, "accept") == 0) {
			if (!json_is_object(c)) { snprintf(why, n, "an accepted elicitation carries content (an object)"); return -1; }
			struct world_err se = { 0, "" };
			if (jschema_validate(json_object_get(json_object_get(q, "params"), "requestedSchema"), c, &se) < 0) {
				snprintf(why, n, "content does not match the requestedSchema: %.200s", se.msg);
				return -1;
			}
		}
		return 0;
	}
	if (strcmp(m, "sampling/createMessage") == 0) {
		json_t *c = json_object_get(a, "content");
		if (!json_is_string(json_object_get(a, "role")) || !(json_is_object(c) || json_is_array(c))) {
			snprintf(why, n, "a sampling result carries role and content");
			return -1;
		}
		return 0;
	}
	json_t *roots = json_object_get(a, "roots");
	size_t i;
	json_t *r;
	if (!json_is_array(roots)) { snprintf(why, n, "a roots/list result carries roots (an array)"); return -1; }
	json_array_foreach(roots, i, r) if (!json_is_string(json_object_get(r, "uri"))) {
		snprintf(why, n, "roots[%zu] has no uri", i);
		return -1;
	}
	return 0;
}

/* The requests of round r the client can be asked (the optional ones its
 * capabilities lack are left out, "optional" dropped): a new object, or
 * NULL with *missing the capability a required one lacks. */
static json_t *round_asked(const json_t *d, size_t r, const json_t *caps, char *missing, size_t mn)
{
	json_t *out = json_object();
	const char *k;
	json_t *q;
	json_object_foreach(json_array_get(d, r), k, q) {
		const char *cap = cap_of(json_string_value(json_object_get(q, "method")));
		if (!json_is_object(json_object_get(caps, cap))) {
			if (json_is_true(json_object_get(q, "optional"))) continue;
			snprintf(missing, mn, "%s", cap);
			json_decref(out);
			return NULL;
		}
		json_object_set_new(out, k, json_pack("{s:O,s:O}", "method", json_object_get(q, "method"), "params",
		                                      json_object_get(q, "params")));
	}
	return out;
}

static int draw_task(char task[129], struct world_err *err)
{
	unsigned char r[8];
	if (RAND_bytes(r, sizeof r) != 1) return werr(err, WX_IO, "task id: no random bytes from libcrypto");
	snprintf(task, 129, "in-");
	for (int i = 0; i < 8; i++) snprintf(task + 3 + 2 * i, 3, "%02x", r[i]);
	return 0;
}

int confirm_decide(const json_t *d, const struct confirm_req *rq, struct confirm_out *out, struct world_err *err)
{
	memset(out, 0, sizeof *out);
	char why[400];
	if (confirm_decl_check(d, why, sizeof why) < 0) return werr(err, WX_INTEGRITY, "descriptor of %s: %s", rq->name, why);
	if (rq->responses && !json_is_object(rq->responses))
		return werr(err, WX_BAD_INPUT, "params.inputResponses must be an object (KEY: the client's result)");
	size_t nrounds = json_array_size(d), round = 0;
	json_t *given = json_object(); /* the answers of the rounds before, from the state */
	json_t *st = NULL;
	int rc = -1;
	/* the declaration the state answers: a republished one asks anew */
	char decl_ref[WORLD_REF_SIZE];
	size_t dl;
	char *db = world_canon_json(d, &dl, err);
	if (!db || world_hash_ref(db, dl, decl_ref, err) < 0) {
		free(db);
		goto done;
	}
	free(db);
	if (rq->state) {
		st = unseal(rq->key, rq->state, err);
		if (!st) goto done;
		const char *pr = json_string_value(json_object_get(st, "principal"));
		const char *me = json_string_value(json_object_get(st, "method")), *na = json_string_value(json_object_get(st, "name"));
		const char *ar = json_string_value(json_object_get(st, "args")), *tk = json_string_value(json_object_get(st, "task"));
		const char *dc = json_string_value(json_object_get(st, "decl"));
		json_t *ex = json_object_get(st, "exp"), *ro = json_object_get(st, "round"), *rs = json_object_get(st, "responses");
		if (!pr || !me || !na || !ar || !tk || !dc || !json_is_integer(ex) || !json_is_integer(ro) || !json_is_object(rs) ||
		    json_integer_value(ro) < 0 || (size_t)json_integer_value(ro) >= nrounds) {
			werr(err, WX_BAD_INPUT, TAMPERED);
			goto done;
		}
		if (strcmp(pr, rq->principal) != 0) {
			werr(err, WX_BAD_INPUT, "requestState was issued to another session; it is good only for the session it was issued to");
			goto done;
		}
		if (json_integer_value(ex) <= rq->now) {
			werr(err, WX_BAD_INPUT, "requestState expired %lld s ago (it lives %lld s); call again without it",
			     rq->now - json_integer_value(ex), rq->ttl_s > 0 ? rq->ttl_s : (long long)CONFIRM_TTL_S);
			goto done;
		}
		if (strcmp(me, rq->method) || strcmp(na, rq->name) || strcmp(ar, rq->args_ref)) {
			werr(err, WX_BAD_INPUT, "requestState belongs to another request (%.40s %.128s%s); it is good only for the "
			     "request it answered, with the same arguments", me, na, strcmp(ar, rq->args_ref) ? ", other arguments" : "");
			goto done;
		}
		if (strcmp(dc, decl_ref) != 0) {
			werr(err, WX_BAD_INPUT, "requestState answers what %.128s asked before it was republished; call again "
			     "without it", na);
			goto done;
		}
		if (rq->task && strcmp(rq->task, tk) != 0) {
			werr(err, WX_BAD_INPUT, "requestState is bound to task id %.128s, not %.128s", tk, rq->task);
			goto done;
		}
		snprintf(out->task, sizeof out->task, "%s", tk);
		round = (size_t)json_integer_value(ro);
		json_decref(given);
		given = json_incref(rs);
		out->from_state = 1;
	} else if (rq->task) {
		snprintf(out->task, sizeof out->task, "%s", rq->task);
	} else if (draw_task(out->task, err) < 0) goto done;

	json_t *asked_all = json_object();
	/* what the rounds before the state's asked, and were answered */
	for (size_t r = 0; r < round; r++) {
		const char *k;
		json_t *q;
		json_object_foreach(json_array_get(d, r), k, q)
			if (json_object_get(given, k))
				json_object_set_new(asked_all, k, json_pack("{s:O,s:O}", "method", json_object_get(q, "method"), "params",
				                                            json_object_get(q, "params")));
	}
	for (;; round++) {
		json_t *asked = round_asked(d, round, rq->caps, out->capability, sizeof out->capability);
		if (!asked) {
			json_decref(asked_all);
			out->v = CONFIRM_MISSING;
			rc = 0;
			goto done;
		}
		json_object_update(asked_all, asked);
		json_t *missing = json_object();
		const char *k;
		json_t *q;
		json_object_foreach(asked, k, q) {
			json_t *a = json_object_get(given, k);
			if (!a) a = rq->responses ? json_object_get(rq->responses, k) : NULL;
			if (!a) { json_object_set(missing, k, q); continue; }
			if (answer_check(q, a, why, sizeof why) < 0) {
				werr(err, WX_BAD_INPUT, "params.inputResponses[\"%s\"]: %s", k, why);
				json_decref(missing);
				json_decref(asked);
				json_decref(asked_all);
				goto done;
			}
			json_object_set(given, k, a);
		}
		out->round = (int)round + 1;
		if (json_object_size(missing) > 0) {
			/* (a round not wholly answered is asked again, for what it lacks) */
			json_t *pl = json_pack("{s:s,s:s,s:I,s:s,s:s,s:s,s:O,s:I,s:s}", "args", rq->args_ref, "decl", decl_ref, "exp",
			                       (json_int_t)(rq->now + (rq->ttl_s > 0 ? rq->ttl_s : CONFIRM_TTL_S)), "method",
			                       rq->method, "name", rq->name, "principal", rq->principal, "responses", given, "round",
			                       (json_int_t)round, "task", out->task);
			out->state = pl ? seal(rq->key, pl, err) : NULL;
			json_decref(pl);
			json_decref(asked);
			json_decref(asked_all);
			if (!out->state) { json_decref(missing); goto done; }
			out->ask = missing;
			out->v = CONFIRM_ASK;
			rc = 0;
			goto done;
		}
		json_decref(missing);
		/* the round is answered: a declined or cancelled elicitation ends the call */
		json_object_foreach(asked, k, q) {
			const char *act = json_string_value(json_object_get(json_object_get(given, k), "action"));
			if (act && strcmp(act, "accept") != 0 && !out->why[0])
				snprintf(out->why, sizeof out->why, "the caller answered %s to %s (%.200s)", act, k,
				         json_string_value(json_object_get(json_object_get(q, "params"), "message")));
		}
		json_decref(asked);
		if (out->why[0] || round + 1 >= nrounds) {
			/* only the answers to what was asked are kept */
			json_t *kept = json_object();
			json_object_foreach(asked_all, k, q) {
				json_t *a = json_object_get(given, k);
				if (a) json_object_set(kept, k, a);
			}
			out->inputs = json_pack("{s:o,s:o}", "requests", asked_all, "responses", kept);
			out->v = out->why[0] ? CONFIRM_DECLINED : CONFIRM_RUN;
			rc = out->inputs ? 0 : werr(err, WX_FAIL, "inputs: out of memory");
			goto done;
		}
	}
done:
	json_decref(given);
	json_decref(st);
	if (rc < 0) confirm_out_free(out);
	return rc;
}

void confirm_out_free(struct confirm_out *o)
{
	json_decref(o->ask);
	json_decref(o->inputs);
	free(o->state);
	o->ask = o->inputs = NULL;
	o->state = NULL;
}

char *confirm_input(const json_t *args, const char *inputs, size_t *len, struct world_err *err)
{
	if (json_object_get(args, "world")) {
		werr(err, WX_BAD_INPUT, "arguments must not hold a member \"world\": a skill that asks its caller gets its "
		     "answers there");
		return NULL;
	}
	json_t *in = world_json_parse(inputs, strlen(inputs), err);
	if (!in) return NULL;
	json_t *all = json_copy((json_t *)args);
	char *out = NULL;
	if (all && json_object_set_new(all, "world", json_pack("{s:o}", "input", in)) == 0) out = world_canon_json(all, len, err);
	else {
		if (!all) json_decref(in);
		werr(err, WX_FAIL, "input: out of memory");
	}
	json_decref(all);
	return out;
}
