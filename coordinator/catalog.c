/* coordinator/catalog.c: prompts, package resources and MCP content items
 * (catalog.h). */
#include "coordinator/catalog.h"
#include "coordinator/confirm.h"
#include "broker/grants.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TEXT_MAX (64 * 1024)
#define MIME_MAX 128

static int why_set(char *why, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int why_set(char *why, size_t n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, n, fmt, ap);
	va_end(ap);
	return -1;
}

static int base64_ok(const char *s, size_t len)
{
	if (len == 0 || len % 4) return 0;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];
		int alpha = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '/';
		if (alpha) continue;
		/* '=' only as the last one or two characters */
		if (c == '=' && (i == len - 1 || (i == len - 2 && s[len - 1] == '='))) continue;
		return 0;
	}
	return 1;
}

/* A MIME type: type/subtype of token characters, parameters allowed after ';'. */
static int mime_ok(const char *m)
{
	size_t len = strlen(m);
	if (len < 3 || len > MIME_MAX) return 0;
	const char *slash = strchr(m, '/');
	if (!slash || slash == m || !slash[1]) return 0;
	for (const char *p = m; *p && *p != ';'; p++)
		if (!(((*p | 32) >= 'a' && (*p | 32) <= 'z') || (*p >= '0' && *p <= '9') || strchr("/!#$&^_.+-", *p))) return 0;
	for (const char *p = m; *p; p++)
		if ((unsigned char)*p < 0x20 || (unsigned char)*p > 0x7e) return 0;
	return 1;
}

static int only_keys(const json_t *o, const char *const *keys, const char *where, char *why, size_t n)
{
	const char *k;
	json_t *v;
	json_object_foreach((json_t *)o, k, v) {
		int known = 0;
		for (size_t i = 0; keys[i]; i++) known |= strcmp(k, keys[i]) == 0;
		if (!known) return why_set(why, n, "%s: unknown key \"%.64s\"", where, k);
	}
	return 0;
}

static int str_member(const json_t *o, const char *key, int required, size_t max, const char *where, char *why,
                      size_t n, const char **out)
{
	json_t *v = json_object_get(o, key);
	*out = NULL;
	if (!v) return required ? why_set(why, n, "%s: \"%s\" is required", where, key) : 0;
	if (!json_is_string(v)) return why_set(why, n, "%s: \"%s\" must be a string", where, key);
	if (json_string_length(v) > max) return why_set(why, n, "%s: \"%s\" is over %zu bytes", where, key, max);
	if (memchr(json_string_value(v), 0, json_string_length(v)))
		return why_set(why, n, "%s: \"%s\" holds U+0000", where, key);
	*out = json_string_value(v);
	return 0;
}

static int resource_body_check(const json_t *r, const char *where, int need_mime, char *why, size_t n)
{
	const char *uri, *mime, *text, *blob;
	if (str_member(r, "uri", 1, 2048, where, why, n, &uri) < 0 || str_member(r, "mimeType", need_mime, MIME_MAX, where, why, n, &mime) < 0 ||
	    str_member(r, "text", 0, CATALOG_ENTRY_MAX, where, why, n, &text) < 0 ||
	    str_member(r, "blob", 0, CATALOG_ENTRY_MAX, where, why, n, &blob) < 0)
		return -1;
	if (!*uri) return why_set(why, n, "%s: \"uri\" is empty", where);
	if (mime && !mime_ok(mime)) return why_set(why, n, "%s: \"mimeType\" \"%.64s\" is not a MIME type", where, mime);
	if (!text == !blob) return why_set(why, n, "%s: exactly one of \"text\" and \"blob\" is required", where);
	if (blob && !base64_ok(blob, strlen(blob))) return why_set(why, n, "%s: \"blob\" is not Base64", where);
	return 0;
}

int catalog_content_check(const json_t *item, char *why, size_t n)
{
	if (!json_is_object(item)) return why_set(why, n, "a content item must be an object");
	const char *type;
	if (str_member(item, "type", 1, 32, "content item", why, n, &type) < 0) return -1;
	json_t *ann = json_object_get(item, "annotations"), *meta = json_object_get(item, "_meta");
	if (ann && !json_is_object(ann)) return why_set(why, n, "%s item: \"annotations\" must be an object", type);
	if (meta && !json_is_object(meta)) return why_set(why, n, "%s item: \"_meta\" must be an object", type);
	const char *s, *m;
	if (strcmp(type, "text") == 0) {
		static const char *const keys[] = { "type", "text", "annotations", "_meta", NULL };
		return only_keys(item, keys, "text item", why, n) < 0 ? -1
		       : str_member(item, "text", 1, CATALOG_ENTRY_MAX, "text item", why, n, &s);
	}
	if (strcmp(type, "image") == 0 || strcmp(type, "audio") == 0) {
		static const char *const keys[] = { "type", "data", "mimeType", "annotations", "_meta", NULL };
		char where[32];
		snprintf(where, sizeof where, "%s item", type);
		if (only_keys(item, keys, where, why, n) < 0 || str_member(item, "data", 1, CATALOG_ENTRY_MAX, where, why, n, &s) < 0 ||
		    str_member(item, "mimeType", 1, MIME_MAX, where, why, n, &m) < 0)
			return -1;
		if (!base64_ok(s, strlen(s))) return why_set(why, n, "%s: \"data\" is not Base64", where);
		if (!mime_ok(m) || strncmp(m, type, strlen(type)) != 0 || m[strlen(type)] != '/')
			return why_set(why, n, "%s: \"mimeType\" \"%.64s\" is not an %s/ type", where, m, type);
		return 0;
	}
	if (strcmp(type, "resource") == 0) {
		static const char *const keys[] = { "type", "resource", "annotations", "_meta", NULL };
		static const char *const rkeys[] = { "uri", "mimeType", "text", "blob", "_meta", NULL };
		json_t *r = json_object_get(item, "resource");
		if (only_keys(item, keys, "resource item", why, n) < 0) return -1;
		if (!json_is_object(r)) return why_set(why, n, "resource item: \"resource\" must be an object");
		if (only_keys(r, rkeys, "resource item's resource", why, n) < 0) return -1;
		return resource_body_check(r, "resource item's resource", 0, why, n);
	}
	if (strcmp(type, "resource_link") == 0) {
		static const char *const keys[] = { "type", "uri", "name", "title", "description", "mimeType", "size",
			                            "annotations", "_meta", NULL };
		const char *u, *nm, *t;
		if (only_keys(item, keys, "resource_link item", why, n) < 0 ||
		    str_member(item, "uri", 1, 2048, "resource_link item", why, n, &u) < 0 ||
		    str_member(item, "name", 1, 1024, "resource_link item", why, n, &nm) < 0 ||
		    str_member(item, "title", 0, 1024, "resource_link item", why, n, &t) < 0 ||
		    str_member(item, "description", 0, TEXT_MAX, "resource_link item", why, n, &t) < 0 ||
		    str_member(item, "mimeType", 0, MIME_MAX, "resource_link item", why, n, &m) < 0)
			return -1;
		if (m && !mime_ok(m)) return why_set(why, n, "resource_link item: \"mimeType\" is not a MIME type");
		json_t *size = json_object_get(item, "size");
		if (size && (!json_is_integer(size) || json_integer_value(size) < 0))
			return why_set(why, n, "resource_link item: \"size\" must be a non-negative integer");
		return 0;
	}
	return why_set(why, n, "content item: unknown type \"%.32s\" (text, image, audio, resource, resource_link)", type);
}

static int name_ok(const char *s, size_t max, const char *extra)
{
	size_t len = strlen(s);
	if (len == 0 || len > max) return 0;
	for (const char *p = s; *p; p++)
		if (!(((*p | 32) >= 'a' && (*p | 32) <= 'z') || (*p >= '0' && *p <= '9') || *p == '_' || strchr(extra, *p)))
			return 0;
	return 1;
}

/* access: null (absent) or {effect, scope, cost} as a descriptor's. */
static int access_of(const json_t *entry, const char *where, json_t **out, char *why, size_t n)
{
	json_t *a = json_object_get(entry, "access");
	*out = NULL;
	if (!a || json_is_null(a)) { *out = json_null(); return 0; }
	static const char *const keys[] = { "effect", "scope", "cost", NULL };
	const char *ef, *sc;
	char w[200];
	snprintf(w, sizeof w, "%s: access", where);
	if (!json_is_object(a)) return why_set(why, n, "%s must be an object or null", w);
	if (only_keys(a, keys, w, why, n) < 0 || str_member(a, "effect", 1, 128, w, why, n, &ef) < 0 ||
	    str_member(a, "scope", 1, 256, w, why, n, &sc) < 0)
		return -1;
	json_t *c = json_object_get(a, "cost");
	const char *bad = broker_requirement_why(ef, sc);
	if (bad) return why_set(why, n, "%s: %s, not \"%.64s\"", w, bad, strncmp(bad, "effect", 6) == 0 ? ef : sc);
	if (!json_is_integer(c) || json_integer_value(c) < 0 || json_integer_value(c) > (1LL << 53))
		return why_set(why, n, "%s: cost must be an integer 0..2^53", w);
	*out = json_pack("{s:I,s:s,s:s}", "cost", json_integer_value(c), "effect", ef, "scope", sc);
	return *out ? 0 : why_set(why, n, "%s: out of memory", w);
}

/* Each `{{X}}` in s names a declared argument (args: the stored ARG list). */
static int placeholders_ok(const char *s, const json_t *args, const char *where, char *why, size_t n)
{
	for (const char *p = strstr(s, "{{"); p; p = strstr(p + 2, "{{")) {
		const char *e = strstr(p + 2, "}}");
		if (!e) return 0; /* no closing: plain text */
		size_t len = (size_t)(e - p - 2);
		int found = 0;
		size_t i;
		json_t *a;
		json_array_foreach(args, i, a) {
			const char *an = json_string_value(json_object_get(a, "name"));
			if (an && strlen(an) == len && memcmp(an, p + 2, len) == 0) found = 1;
		}
		if (!found)
			return why_set(why, n, "%s: placeholder {{%.*s}} names no argument of the prompt", where,
			               (int)(len > 64 ? 64 : len), p + 2);
	}
	return 0;
}

static int strings_ok(const json_t *v, const json_t *args, const char *where, char *why, size_t n)
{
	if (json_is_string(v)) return placeholders_ok(json_string_value(v), args, where, why, n);
	size_t i;
	const char *k;
	json_t *c;
	if (json_is_array(v)) json_array_foreach(v, i, c) if (strings_ok(c, args, where, why, n) < 0) return -1;
	if (json_is_object(v)) json_object_foreach((json_t *)v, k, c) if (strings_ok(c, args, where, why, n) < 0) return -1;
	return 0;
}

int catalog_prompt_from_manifest(const json_t *entry, json_t **out, char *why, size_t n)
{
	static const char *const keys[] = { "kind", "name", "title", "description", "arguments", "messages", "access",
		                            "inputRequests", NULL };
	static const char *const akeys[] = { "name", "description", "required", "values", NULL };
	static const char *const mkeys[] = { "role", "content", NULL };
	*out = NULL;
	const char *name, *title, *desc;
	if (only_keys(entry, keys, "prompt", why, n) < 0 || str_member(entry, "name", 1, CATALOG_NAME_MAX, "prompt", why, n, &name) < 0)
		return -1;
	if (!name_ok(name, CATALOG_NAME_MAX, ".-"))
		return why_set(why, n, "prompt \"%.64s\": the name must be 1-128 bytes of [A-Za-z0-9_.-]", name);
	char where[200];
	snprintf(where, sizeof where, "prompt \"%s\"", name);
	if (str_member(entry, "title", 0, 1024, where, why, n, &title) < 0 ||
	    str_member(entry, "description", 0, TEXT_MAX, where, why, n, &desc) < 0)
		return -1;
	json_t *access = NULL, *args = json_array(), *msgs = json_array();
	json_t *ja = json_object_get(entry, "arguments"), *jm = json_object_get(entry, "messages");
	size_t i;
	json_t *v;
	if (ja && (!json_is_array(ja) || json_array_size(ja) > CATALOG_ARGS_MAX)) {
		why_set(why, n, "%s: \"arguments\" must be an array of at most %d arguments", where, CATALOG_ARGS_MAX);
		goto fail;
	}
	json_array_foreach(ja, i, v) {
		char aw[300];
		snprintf(aw, sizeof aw, "%s: arguments[%zu]", where, i);
		const char *an, *ad;
		if (!json_is_object(v)) { why_set(why, n, "%s must be an object", aw); goto fail; }
		if (only_keys(v, akeys, aw, why, n) < 0 || str_member(v, "name", 1, 64, aw, why, n, &an) < 0 ||
		    str_member(v, "description", 0, TEXT_MAX, aw, why, n, &ad) < 0)
			goto fail;
		if (!name_ok(an, 64, "-")) { why_set(why, n, "%s: name must be 1-64 bytes of [A-Za-z0-9_-]", aw); goto fail; }
		json_t *req = json_object_get(v, "required"), *vals = json_object_get(v, "values");
		if (req && !json_is_boolean(req)) { why_set(why, n, "%s: \"required\" must be a boolean", aw); goto fail; }
		for (size_t j = 0; j < i; j++)
			if (strcmp(an, json_string_value(json_object_get(json_array_get(args, j), "name"))) == 0) {
				why_set(why, n, "%s: argument \"%s\" declared twice", aw, an);
				goto fail;
			}
		json_t *a = json_pack("{s:s,s:s,s:b}", "description", ad ? ad : "", "name", an, "required", json_is_true(req));
		if (vals) {
			size_t k;
			json_t *x;
			if (!json_is_array(vals) || json_array_size(vals) > CATALOG_VALUES_MAX) {
				json_decref(a);
				why_set(why, n, "%s: \"values\" must be an array of at most %d strings", aw, CATALOG_VALUES_MAX);
				goto fail;
			}
			json_array_foreach(vals, k, x) if (!json_is_string(x) || json_string_length(x) > 1024) {
				json_decref(a);
				why_set(why, n, "%s: values[%zu] must be a string of at most 1024 bytes", aw, k);
				goto fail;
			}
			json_object_set(a, "values", vals);
		}
		json_array_append_new(args, a);
	}
	if (!json_is_array(jm) || json_array_size(jm) == 0 || json_array_size(jm) > CATALOG_MESSAGES_MAX) {
		why_set(why, n, "%s: \"messages\" must be an array of 1-%d messages", where, CATALOG_MESSAGES_MAX);
		goto fail;
	}
	json_array_foreach(jm, i, v) {
		char mw[300];
		snprintf(mw, sizeof mw, "%s: messages[%zu]", where, i);
		const char *role;
		if (!json_is_object(v)) { why_set(why, n, "%s must be an object", mw); goto fail; }
		if (only_keys(v, mkeys, mw, why, n) < 0 || str_member(v, "role", 1, 16, mw, why, n, &role) < 0) goto fail;
		if (strcmp(role, "user") && strcmp(role, "assistant")) {
			why_set(why, n, "%s: role must be \"user\" or \"assistant\"", mw);
			goto fail;
		}
		char cw[600];
		json_t *c = json_object_get(v, "content");
		if (catalog_content_check(c, cw, sizeof cw) < 0) { why_set(why, n, "%s: content: %s", mw, cw); goto fail; }
		if (strings_ok(c, args, mw, why, n) < 0) goto fail;
		json_array_append_new(msgs, json_pack("{s:O,s:s}", "content", c, "role", role));
	}
	if (access_of(entry, where, &access, why, n) < 0) goto fail;
	/* what a prompts/get asks its caller first (coordinator/confirm.h) */
	json_t *asks = json_object_get(entry, "inputRequests");
	char aw[400];
	if (asks && confirm_decl_check(asks, aw, sizeof aw) < 0) {
		why_set(why, n, "%s: %s", where, aw);
		goto fail;
	}
	*out = json_pack("{s:o,s:o,s:s,s:o,s:s,s:s}", "access", access, "arguments", args, "description", desc ? desc : "",
	                 "messages", msgs, "name", name, "title", title ? title : "");
	if (*out && asks) json_object_set(*out, "inputRequests", asks);
	return *out ? 0 : why_set(why, n, "%s: out of memory", where);
fail:
	json_decref(args);
	json_decref(msgs);
	json_decref(access);
	return -1;
}

/* The {VAR} expressions of a template: well formed, each at most once. */
static int template_ok(const char *t, char *why, size_t n)
{
	char seen[8][40];
	int ns = 0;
	for (const char *p = t; *p; p++) {
		if (*p == '}') return why_set(why, n, "uriTemplate: a '}' without '{'");
		if (*p != '{') continue;
		const char *e = strchr(p, '}');
		if (!e) return why_set(why, n, "uriTemplate: a '{' without '}'");
		size_t len = (size_t)(e - p - 1);
		if (len == 0 || len > 32) return why_set(why, n, "uriTemplate: a variable is 1-32 bytes of [A-Za-z0-9_]");
		for (const char *q = p + 1; q < e; q++)
			if (!(((*q | 32) >= 'a' && (*q | 32) <= 'z') || (*q >= '0' && *q <= '9') || *q == '_'))
				return why_set(why, n, "uriTemplate: a variable is 1-32 bytes of [A-Za-z0-9_] (RFC 6570 operators are not supported)");
		if (e[1] == '{') return why_set(why, n, "uriTemplate: two variables side by side cannot be told apart");
		for (int i = 0; i < ns; i++)
			if (strlen(seen[i]) == len && memcmp(seen[i], p + 1, len) == 0)
				return why_set(why, n, "uriTemplate: variable {%.*s} appears twice", (int)len, p + 1);
		if (ns == 8) return why_set(why, n, "uriTemplate: at most 8 variables");
		memcpy(seen[ns], p + 1, len);
		seen[ns++][len] = 0;
		p = e;
	}
	return ns ? 0 : why_set(why, n, "uriTemplate: no {variable} (a fixed URI is a \"uri\")");
}

int catalog_resource_from_manifest(const json_t *entry, json_t **out, char *why, size_t n)
{
	static const char *const keys[] = { "kind", "uri", "uriTemplate", "name", "description", "mimeType", "text", "blob",
		                            "access", NULL };
	*out = NULL;
	const char *uri, *tmpl, *name, *desc, *mime, *text, *blob;
	if (only_keys(entry, keys, "resource", why, n) < 0 || str_member(entry, "uri", 0, 1024, "resource", why, n, &uri) < 0 ||
	    str_member(entry, "uriTemplate", 0, 1024, "resource", why, n, &tmpl) < 0)
		return -1;
	if (!uri == !tmpl) return why_set(why, n, "resource: exactly one of \"uri\" and \"uriTemplate\" is required");
	const char *key = uri ? uri : tmpl;
	char where[1200];
	snprintf(where, sizeof where, "resource \"%.1024s\"", key);
	const char *colon = strstr(key, "://");
	if (!colon || colon == key) return why_set(why, n, "%s: not a SCHEME://... URI", where);
	for (const char *p = key; p < colon; p++)
		if (!(((*p | 32) >= 'a' && (*p | 32) <= 'z') || (*p >= '0' && *p <= '9') || strchr("+.-", *p)))
			return why_set(why, n, "%s: the scheme is not [A-Za-z0-9+.-]", where);
	if (strncmp(key, "world://", 8) == 0) return why_set(why, n, "%s: world:// is the daemon's own (the provenance)", where);
	for (const char *p = key; *p; p++)
		if ((unsigned char)*p <= 0x20 || (unsigned char)*p > 0x7e) return why_set(why, n, "%s: a URI is printable ASCII without spaces", where);
	if (uri && strpbrk(uri, "{}")) return why_set(why, n, "%s: a \"uri\" holds no '{' or '}' (a template is a \"uriTemplate\")", where);
	char tw[300];
	if (tmpl && template_ok(tmpl, tw, sizeof tw) < 0) return why_set(why, n, "%s: %s", where, tw);
	if (str_member(entry, "name", 1, 1024, where, why, n, &name) < 0 ||
	    str_member(entry, "description", 0, TEXT_MAX, where, why, n, &desc) < 0 ||
	    str_member(entry, "mimeType", 1, MIME_MAX, where, why, n, &mime) < 0 ||
	    str_member(entry, "text", 0, CATALOG_ENTRY_MAX, where, why, n, &text) < 0 ||
	    str_member(entry, "blob", 0, CATALOG_ENTRY_MAX, where, why, n, &blob) < 0)
		return -1;
	if (!*name) return why_set(why, n, "%s: \"name\" is empty", where);
	if (!mime_ok(mime)) return why_set(why, n, "%s: \"mimeType\" \"%.64s\" is not a MIME type", where, mime);
	if (!text == !blob) return why_set(why, n, "%s: exactly one of \"text\" and \"blob\" is required", where);
	if (blob && !base64_ok(blob, strlen(blob))) return why_set(why, n, "%s: \"blob\" is not Base64", where);
	json_t *access;
	if (access_of(entry, where, &access, why, n) < 0) return -1;
	*out = json_pack("{s:o,s:s,s:s,s:s,s:s,s:s}", "access", access, "description", desc ? desc : "", "mimeType", mime,
	                 "name", name, text ? "text" : "blob", text ? text : blob, uri ? "uri" : "uriTemplate", key);
	return *out ? 0 : why_set(why, n, "%s: out of memory", where);
}

const char *catalog_key(const json_t *stored)
{
	const char *k = json_string_value(json_object_get(stored, "name"));
	if (json_object_get(stored, "messages")) return k;
	k = json_string_value(json_object_get(stored, "uri"));
	return k ? k : json_string_value(json_object_get(stored, "uriTemplate"));
}

int catalog_entry_visible(struct world_store *st, const struct coord_session *s, const json_t *d, long long now,
                          int *vis, struct world_err *err)
{
	json_t *a = json_object_get(d, "access");
	*vis = 1;
	if (!json_is_object(a)) return 0;
	const char *ef = json_string_value(json_object_get(a, "effect"));
	const char *sc = json_string_value(json_object_get(a, "scope"));
	*vis = 0;
	if (!ef || !sc) return 0;
	return broker_visible(st, s->episode, s->grants, s->ngrants, s->expires_at, now, ef, sc,
	                      json_integer_value(json_object_get(a, "cost")), vis, err);
}

int catalog_visible(struct world_store *st, const struct coord_session *s, const json_t *reg, const char *member,
                    json_t **out, struct world_err *err)
{
	*out = json_array();
	if (!*out) return werr(err, WX_FAIL, "catalog: out of memory");
	long long now = (long long)time(NULL);
	size_t i;
	json_t *d;
	json_array_foreach(reg ? json_object_get(reg, member) : NULL, i, d) {
		int vis = 0;
		if (catalog_entry_visible(st, s, d, now, &vis, err) < 0) {
			json_decref(*out);
			*out = NULL;
			return -1;
		}
		if (vis) json_array_append(*out, d);
	}
	return 0;
}

/* s with every {{NAME}} of args put in (a new string). */
static json_t *fill(const char *s, const json_t *args)
{
	size_t cap = strlen(s) + 1, len = 0;
	char *b = malloc(cap);
	if (!b) return NULL;
	while (*s) {
		const char *e = strncmp(s, "{{", 2) == 0 ? strstr(s + 2, "}}") : NULL;
		const char *val = NULL;
		if (e) {
			const char *k;
			json_t *v;
			json_object_foreach((json_t *)args, k, v)
				if (strlen(k) == (size_t)(e - s - 2) && memcmp(k, s + 2, strlen(k)) == 0) val = json_string_value(v);
		}
		size_t add = val ? strlen(val) : 1;
		if (len + add + 1 > cap) {
			cap = (len + add + 1) * 2;
			char *nb = realloc(b, cap);
			if (!nb) { free(b); return NULL; }
			b = nb;
		}
		if (val) {
			memcpy(b + len, val, add);
			len += add;
			s = e + 2;
		} else b[len++] = *s++;
	}
	b[len] = 0;
	json_t *out = json_stringn(b, len);
	free(b);
	return out;
}

static json_t *render(const json_t *v, const json_t *args)
{
	if (json_is_string(v)) return fill(json_string_value(v), args);
	size_t i;
	const char *k;
	json_t *c;
	if (json_is_array(v)) {
		json_t *o = json_array();
		json_array_foreach(v, i, c) json_array_append_new(o, render(c, args));
		return o;
	}
	if (json_is_object(v)) {
		json_t *o = json_object();
		json_object_foreach((json_t *)v, k, c) json_object_set_new(o, k, render(c, args));
		return o;
	}
	return json_incref((json_t *)v);
}

json_t *catalog_prompt_render(const json_t *prompt, const json_t *args, char *why, size_t n)
{
	json_t *decl = json_object_get(prompt, "arguments");
	json_t *vals = json_object();
	size_t i;
	json_t *a;
	const char *k;
	json_t *v;
	if (args && !json_is_object(args)) {
		json_decref(vals);
		why_set(why, n, "prompts/get: params.arguments must be an object of strings");
		return NULL;
	}
	json_object_foreach((json_t *)args, k, v) {
		int known = 0;
		json_array_foreach(decl, i, a) known |= strcmp(k, json_string_value(json_object_get(a, "name"))) == 0;
		if (!known || !json_is_string(v) || memchr(json_string_value(v), 0, json_string_length(v))) {
			json_decref(vals);
			why_set(why, n, !known ? "prompts/get: argument \"%.64s\" is not an argument of this prompt"
			                : json_is_string(v) ? "prompts/get: argument \"%.64s\" holds U+0000"
			                                    : "prompts/get: argument \"%.64s\" must be a string", k);
			return NULL;
		}
	}
	json_array_foreach(decl, i, a) {
		const char *an = json_string_value(json_object_get(a, "name"));
		json_t *given = json_object_get(args, an);
		if (!given && json_is_true(json_object_get(a, "required"))) {
			json_decref(vals);
			why_set(why, n, "prompts/get: argument \"%.64s\" is required", an);
			return NULL;
		}
		json_object_set_new(vals, an, given ? json_incref(given) : json_string(""));
	}
	json_t *out = render(json_object_get(prompt, "messages"), vals);
	json_decref(vals);
	/* what the arguments made must still be content (a uri left empty) */
	json_array_foreach(out, i, a) {
		char cw[600];
		if (catalog_content_check(json_object_get(a, "content"), cw, sizeof cw) < 0) {
			json_decref(out);
			why_set(why, n, "prompts/get: with these arguments messages[%zu] is not content: %s", i, cw);
			return NULL;
		}
	}
	return out;
}

static int value_char(char c)
{
	return ((c | 32) >= 'a' && (c | 32) <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '~' || c == '-';
}

int catalog_template_match(const char *tmpl, const char *uri, json_t **vars)
{
	*vars = json_object();
	const char *t = tmpl, *u = uri;
	while (*t) {
		if (*t != '{') {
			if (*t++ != *u++) goto no;
			continue;
		}
		const char *e = strchr(t, '}');
		char name[40];
		size_t nl = (size_t)(e - t - 1);
		memcpy(name, t + 1, nl);
		name[nl] = 0;
		t = e + 1;
		/* the value runs over unreserved characters up to the template's next literal */
		const char *start = u;
		while (*u && value_char(*u) && (!*t || *u != *t)) u++;
		if (u == start || u - start > 128) goto no;
		json_object_set_new(*vars, name, json_stringn(start, (size_t)(u - start)));
	}
	if (*u) goto no;
	return 1;
no:
	json_decref(*vars);
	*vars = NULL;
	return 0;
}

json_t *catalog_resource_contents(const json_t *res, const char *uri, const json_t *vars)
{
	const char *mime = json_string_value(json_object_get(res, "mimeType"));
	json_t *blob = json_object_get(res, "blob");
	if (blob) return json_pack("{s:s,s:s,s:O}", "uri", uri, "mimeType", mime, "blob", blob);
	const char *text = json_string_value(json_object_get(res, "text"));
	json_t *t;
	if (vars) {
		/* {VAR} -> value: the same filler as a prompt's, on single braces */
		size_t cap = strlen(text) + 1, len = 0;
		char *b = malloc(cap);
		if (!b) return NULL;
		for (const char *s = text; *s;) {
			const char *val = NULL, *e = *s == '{' ? strchr(s, '}') : NULL;
			if (e) {
				const char *k;
				json_t *v;
				json_object_foreach((json_t *)vars, k, v)
					if (strlen(k) == (size_t)(e - s - 1) && memcmp(k, s + 1, strlen(k)) == 0) val = json_string_value(v);
			}
			size_t add = val ? strlen(val) : 1;
			if (len + add + 1 > cap) {
				cap = (len + add + 1) * 2;
				char *nb = realloc(b, cap);
				if (!nb) { free(b); return NULL; }
				b = nb;
			}
			if (val) { memcpy(b + len, val, add); len += add; s = e + 1; }
			else b[len++] = *s++;
		}
		b[len] = 0;
		t = json_stringn(b, len);
		free(b);
	} else t = json_string(text);
	return json_pack("{s:s,s:s,s:o}", "uri", uri, "mimeType", mime, "text", t);
}
