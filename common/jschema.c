/* common/jschema.c: see jschema.h. */
#include "common/jschema.h"
#include <math.h> /* isfinite (a macro: no libm) */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- JSON pointers, built while walking ------------------------------- */

/* The pointer of the value being looked at, grown and cut back as the walk
 * descends and returns. An allocation failure is remembered and reported
 * once by the caller instead of being checked at every push. */
struct ptr {
	char *buf;
	size_t len, cap;
	bool oom;
	/* The rest of the walk's state. root: what "$ref" resolves against.
	 * During jschema_check: every object schema seen (a "$ref" may only
	 * point at one of them) and every schema holding a "$ref", with its
	 * pointer (for the cycle check). During jschema_validate: how deeply
	 * validate() is nested (bounded, though the check already refuses a
	 * "$ref" cycle that never moves into the instance). */
	const json_t *root;
	const json_t **seen;
	size_t nseen, capseen;
	struct ref_holder *holders;
	size_t nholders, capholders;
	int nesting;
};
struct ref_holder {
	const json_t *schema;
	char *pointer;
};

static void ptr_put(struct ptr *p, const char *s, size_t n)
{
	if (p->oom) return;
	if (p->len + n + 1 > p->cap) {
		size_t cap = p->cap ? p->cap : 64;
		while (cap < p->len + n + 1) cap *= 2;
		char *b = realloc(p->buf, cap);
		if (!b) {
			p->oom = true;
			return;
		}
		p->buf = b;
		p->cap = cap;
	}
	memcpy(p->buf + p->len, s, n);
	p->len += n;
	p->buf[p->len] = '\0';
}

/* Append "/" and one reference token (RFC 6901: ~ -> ~0, / -> ~1). Control
 * characters become \u00XX so that a message holding the pointer stays one
 * line; that is the only departure from the RFC's text form. */
static size_t ptr_push(struct ptr *p, const char *key, size_t n)
{
	size_t mark = p->len;
	ptr_put(p, "/", 1);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)key[i];
		if (c == '~') ptr_put(p, "~0", 2);
		else if (c == '/') ptr_put(p, "~1", 2);
		else if (c < 0x20 || c == 0x7f) {
			char e[8];
			snprintf(e, sizeof e, "\\u%04x", c);
			ptr_put(p, e, 6);
		} else ptr_put(p, (const char *)&key[i], 1);
	}
	return mark;
}

static size_t ptr_push_str(struct ptr *p, const char *key)
{
	return ptr_push(p, key, strlen(key));
}

static size_t ptr_push_index(struct ptr *p, size_t i)
{
	char b[32];
	int n = snprintf(b, sizeof b, "%zu", i);
	return ptr_push(p, b, (size_t)n);
}

static void ptr_pop(struct ptr *p, size_t mark)
{
	if (p->oom) return;
	p->len = mark;
	if (p->buf) p->buf[mark] = '\0';
}

static const char *ptr_str(const struct ptr *p)
{
	return p->len && !p->oom ? p->buf : "(root)";
}

/* ---- "$ref": local JSON pointers only ---------------------------------- */

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* The value "$ref" names inside root, or NULL with why. Supported: "#" (the
 * root) and "#/..." -- a URI fragment (percent-decoded) holding an RFC 6901
 * pointer (~1 '/', ~0 '~'). Anything else (another document, "$id"-relative
 * URIs, "#anchor") would need base-URI resolution, which is not supported. */
static const json_t *ref_resolve(const json_t *root, const char *ref, size_t len, const char **why)
{
	if (len == 0 || ref[0] != '#') {
		*why = "is unsupported: only local references (\"#\" or \"#/...\") are supported";
		return NULL;
	}
	if (len == 1) return root;
	if (ref[1] != '/') {
		*why = "is unsupported: only local references (\"#\" or \"#/...\") are supported, not anchors";
		return NULL;
	}
	char *dec = malloc(len);
	if (!dec) {
		*why = "out of memory";
		return NULL;
	}
	size_t n = 0;
	for (size_t i = 1; i < len; i++) {
		if (ref[i] == '%') {
			int h = i + 2 < len ? hexval(ref[i + 1]) : -1, l = h >= 0 ? hexval(ref[i + 2]) : -1;
			if (h < 0 || l < 0 || (h == 0 && l == 0)) {
				free(dec);
				*why = "is not a valid percent-encoded fragment";
				return NULL;
			}
			dec[n++] = (char)(h * 16 + l);
			i += 2;
		} else {
			dec[n++] = ref[i];
		}
	}
	const json_t *at = root;
	size_t i = 0; /* dec[0] is the first '/' */
	while (at && i < n) {
		size_t start = ++i, k = 0;
		while (i < n && dec[i] != '/') i++;
		/* unescape the token in place: ~1 -> '/', ~0 -> '~' */
		char *tok = dec + start;
		for (size_t j = start; j < i; j++) {
			if (dec[j] == '~') {
				if (j + 1 >= i || (dec[j + 1] != '0' && dec[j + 1] != '1')) {
					free(dec);
					*why = "is not a valid JSON pointer (~ must be ~0 or ~1)";
					return NULL;
				}
				tok[k++] = dec[j + 1] == '0' ? '~' : '/';
				j++;
			} else {
				tok[k++] = dec[j];
			}
		}
		if (json_is_object(at)) {
			at = json_object_getn(at, tok, k);
		} else if (json_is_array(at)) {
			size_t idx = 0;
			bool okn = k > 0 && k < 10 && !(k > 1 && tok[0] == '0');
			for (size_t j = 0; okn && j < k; j++) {
				okn = tok[j] >= '0' && tok[j] <= '9';
				idx = idx * 10 + (size_t)(tok[j] - '0');
			}
			at = okn ? json_array_get(at, idx) : NULL;
		} else {
			at = NULL;
		}
	}
	free(dec);
	if (!at) *why = "does not resolve within this schema";
	return at;
}

static void seen_add(struct ptr *p, const json_t *s)
{
	if (p->oom) return;
	if (p->nseen == p->capseen) {
		size_t cap = p->capseen ? p->capseen * 2 : 32;
		const json_t **b = realloc(p->seen, cap * sizeof *b);
		if (!b) {
			p->oom = true;
			return;
		}
		p->seen = b;
		p->capseen = cap;
	}
	p->seen[p->nseen++] = s;
}

static bool seen_has(const struct ptr *p, const json_t *s)
{
	for (size_t i = 0; i < p->nseen; i++)
		if (p->seen[i] == s) return true;
	return false;
}

static void holder_add(struct ptr *p, const json_t *s)
{
	if (p->oom) return;
	if (p->nholders == p->capholders) {
		size_t cap = p->capholders ? p->capholders * 2 : 8;
		struct ref_holder *b = realloc(p->holders, cap * sizeof *b);
		if (!b) {
			p->oom = true;
			return;
		}
		p->holders = b;
		p->capholders = cap;
	}
	char *ptr = strdup(ptr_str(p));
	if (!ptr) {
		p->oom = true;
		return;
	}
	p->holders[p->nholders++] = (struct ref_holder){ s, ptr };
}

static void walk_free(struct ptr *p)
{
	free(p->buf);
	free(p->seen);
	for (size_t i = 0; i < p->nholders; i++) free(p->holders[i].pointer);
	free(p->holders);
}

/* A member name or string value quoted for a message: JSON escapes for " \
 * and control characters, cut (with "...") past a bound so one long key
 * cannot crowd the pointer out of the message. */
static const char *quote(char *out, size_t cap, const char *s, size_t n)
{
	size_t o = 0;
	out[o++] = '"';
	for (size_t i = 0; i < n; i++) {
		if (o + 12 >= cap) {
			memcpy(out + o, "...", 3);
			o += 3;
			break;
		}
		unsigned char c = (unsigned char)s[i];
		if (c == '"' || c == '\\') {
			out[o++] = '\\';
			out[o++] = (char)c;
		} else if (c < 0x20 || c == 0x7f) {
			o += (size_t)snprintf(out + o, cap - o, "\\u%04x", c);
		} else out[o++] = (char)c;
	}
	out[o++] = '"';
	out[o] = '\0';
	return out;
}

/* ---- numbers ----------------------------------------------------------- */

/* trunc() without libm: a double of magnitude 2^52 or more is integral. */
static double dtrunc(double d)
{
	if (!(d > -4503599627370496.0 && d < 4503599627370496.0)) return d;
	return (double)(long long)d;
}

/* Exact comparison of an integer with a real: neither is converted to the
 * other's type (a 64-bit integer does not fit a double, nor a double's range
 * an integer). */
static int cmp_int_real(json_int_t i, double d)
{
	if (d >= 9223372036854775808.0) return -1;
	if (d < -9223372036854775808.0) return 1;
	double t = dtrunc(d);
	json_int_t ti = (json_int_t)t;
	if (i < ti) return -1;
	if (i > ti) return 1;
	double frac = d - t;
	return frac > 0 ? -1 : frac < 0 ? 1 : 0;
}

/* -1, 0, 1 as a < b, a == b, a > b; both must be numbers. */
static int cmp_num(const json_t *a, const json_t *b)
{
	if (json_is_integer(a) && json_is_integer(b)) {
		json_int_t x = json_integer_value(a), y = json_integer_value(b);
		return x < y ? -1 : x > y;
	}
	if (json_is_integer(a)) return cmp_int_real(json_integer_value(a), json_real_value(b));
	if (json_is_integer(b)) return -cmp_int_real(json_integer_value(b), json_real_value(a));
	double x = json_real_value(a), y = json_real_value(b);
	return x < y ? -1 : x > y;
}

static bool is_integral(const json_t *v)
{
	if (json_is_integer(v)) return true;
	if (!json_is_real(v)) return false;
	double d = json_real_value(v);
	return isfinite(d) && d == dtrunc(d);
}

/* A number in its shortest round-tripping decimal form, for messages. */
static const char *num_str(char *out, size_t cap, const json_t *v)
{
	if (json_is_integer(v)) {
		snprintf(out, cap, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		return out;
	}
	double d = json_real_value(v);
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(out, cap, "%.*g", prec, d);
		if (strtod(out, NULL) == d) break;
	}
	return out;
}

/* ---- types --------------------------------------------------------------- */

static const char *const type_names[] = {"null", "boolean", "object", "array",
                                         "number", "string", "integer"};

/* The JSON Schema type of a value: 1.0 is an "integer", like 1. */
static const char *type_of(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: return "object";
	case JSON_ARRAY: return "array";
	case JSON_STRING: return "string";
	case JSON_INTEGER: return "integer";
	case JSON_REAL: return is_integral(v) ? "integer" : "number";
	case JSON_TRUE:
	case JSON_FALSE: return "boolean";
	case JSON_NULL: return "null";
	}
	return "unknown";
}

static bool type_matches(const char *name, const json_t *v)
{
	if (!strcmp(name, "number")) return json_is_number(v);
	if (!strcmp(name, "integer")) return is_integral(v);
	return !strcmp(name, type_of(v));
}

static bool is_type_name(const json_t *s)
{
	if (!json_is_string(s)) return false;
	for (size_t i = 0; i < sizeof type_names / sizeof *type_names; i++)
		if (json_string_length(s) == strlen(type_names[i]) &&
		    !memcmp(json_string_value(s), type_names[i], json_string_length(s)))
			return true;
	return false;
}

/* ---- deep equality (enum, const) ---------------------------------------- */

static bool str_eq(const json_t *a, const json_t *b)
{
	size_t n = json_string_length(a);
	return n == json_string_length(b) && !memcmp(json_string_value(a), json_string_value(b), n);
}

/* JSON Schema equality: numbers by value (1 == 1.0), strings by their code
 * points (their bytes, all being UTF-8), arrays item by item, objects by the
 * same member names with equal values; no other types are equal. The depth
 * is bounded by jschema_check, which refuses enum/const values nested deeper
 * than JSCHEMA_MAX_VALUE_DEPTH: the recursion stops at the shallower side. */
static bool value_eq(const json_t *a, const json_t *b)
{
	if (json_is_number(a) && json_is_number(b)) return cmp_num(a, b) == 0;
	if (json_typeof(a) != json_typeof(b)) return false;
	switch (json_typeof(a)) {
	case JSON_STRING: return str_eq(a, b);
	case JSON_ARRAY:
		if (json_array_size(a) != json_array_size(b)) return false;
		for (size_t i = 0; i < json_array_size(a); i++)
			if (!value_eq(json_array_get(a, i), json_array_get(b, i))) return false;
		return true;
	case JSON_OBJECT: {
		if (json_object_size(a) != json_object_size(b)) return false;
		const char *k;
		size_t klen;
		json_t *va;
		json_object_keylen_foreach((json_t *)a, k, klen, va) {
			json_t *vb = json_object_getn(b, k, klen);
			if (!vb || !value_eq(va, vb)) return false;
		}
		return true;
	}
	default: return true; /* null, true, false: same type, same value */
	}
}

static bool value_depth_ok(const json_t *v, int depth)
{
	if (depth > JSCHEMA_MAX_VALUE_DEPTH) return false;
	if (json_is_array(v)) {
		for (size_t i = 0; i < json_array_size(v); i++)
			if (!value_depth_ok(json_array_get(v, i), depth + 1)) return false;
	} else if (json_is_object(v)) {
		const char *k;
		json_t *m;
		json_object_foreach((json_t *)v, k, m)
			if (!value_depth_ok(m, depth + 1)) return false;
	}
	return true;
}

/* ---- object members in bytewise key order ------------------------------ */

struct member {
	const char *key;
	size_t len;
	json_t *value;
};

static int member_cmp(const void *x, const void *y)
{
	const struct member *a = x, *b = y;
	size_t n = a->len < b->len ? a->len : b->len;
	int c = memcmp(a->key, b->key, n);
	return c ? c : a->len < b->len ? -1 : a->len > b->len;
}

/* The members of o sorted by key, so that walks (and so the first error
 * reported) do not depend on the order the text gave them in. */
static struct member *members_sorted(const json_t *o, size_t *count)
{
	size_t n = json_object_size(o), i = 0;
	struct member *m = malloc((n ? n : 1) * sizeof *m);
	if (!m) return NULL;
	const char *k;
	size_t klen;
	json_t *v;
	json_object_keylen_foreach((json_t *)o, k, klen, v) {
		m[i].key = k;
		m[i].len = klen;
		m[i].value = v;
		i++;
	}
	qsort(m, n, sizeof *m, member_cmp);
	*count = n;
	return m;
}

static bool key_is(const struct member *m, const char *name)
{
	return m->len == strlen(name) && !memcmp(m->key, name, m->len);
}

/* ---- jschema_check -------------------------------------------------------- */

#define BAD WX_BAD_INPUT

static int oom(struct world_err *err)
{
	return werr(err, WX_FAIL, "schema check: out of memory");
}

/* A non-negative integer, 2.0 included (JSON Schema counts 2.0 as integer). */
static bool is_count(const json_t *v)
{
	return is_integral(v) && !(json_is_integer(v) ? json_integer_value(v) < 0 : json_real_value(v) < 0);
}

static int check_schema(const json_t *s, struct ptr *p, int depth, struct world_err *err);

static int check_type(const json_t *t, struct ptr *p, struct world_err *err)
{
	if (is_type_name(t)) return 0;
	if (json_is_string(t)) {
		char q[160];
		return werr(err, BAD, "schema %s: \"type\": unknown type %s", ptr_str(p),
		            quote(q, sizeof q, json_string_value(t), json_string_length(t)));
	}
	if (!json_is_array(t) || json_array_size(t) == 0)
		return werr(err, BAD, "schema %s: \"type\" must be a type name or a non-empty array of type names",
		            ptr_str(p));
	for (size_t i = 0; i < json_array_size(t); i++) {
		json_t *e = json_array_get(t, i);
		if (!is_type_name(e)) {
			if (!json_is_string(e))
				return werr(err, BAD, "schema %s: \"type\"[%zu] must be a type name", ptr_str(p), i);
			char q[160];
			return werr(err, BAD, "schema %s: \"type\"[%zu]: unknown type %s", ptr_str(p), i,
			            quote(q, sizeof q, json_string_value(e), json_string_length(e)));
		}
		for (size_t j = 0; j < i; j++)
			if (str_eq(e, json_array_get(t, j)))
				return werr(err, BAD, "schema %s: \"type\": type \"%s\" listed twice", ptr_str(p),
				            json_string_value(e));
	}
	return 0;
}

static int check_required(const json_t *r, struct ptr *p, struct world_err *err)
{
	if (!json_is_array(r))
		return werr(err, BAD, "schema %s: \"required\" must be an array of strings", ptr_str(p));
	for (size_t i = 0; i < json_array_size(r); i++) {
		json_t *e = json_array_get(r, i);
		if (!json_is_string(e))
			return werr(err, BAD, "schema %s: \"required\"[%zu] must be a string", ptr_str(p), i);
		for (size_t j = 0; j < i; j++)
			if (str_eq(e, json_array_get(r, j))) {
				char q[160];
				return werr(err, BAD, "schema %s: \"required\": property %s listed twice", ptr_str(p),
				            quote(q, sizeof q, json_string_value(e), json_string_length(e)));
			}
	}
	return 0;
}

static int check_keyword(const struct member *m, struct ptr *p, int depth, struct world_err *err)
{
	const json_t *v = m->value;
	if (key_is(m, "type")) return check_type(v, p, err);
	if (key_is(m, "properties")) {
		if (!json_is_object(v))
			return werr(err, BAD, "schema %s: \"properties\" must be an object", ptr_str(p));
		size_t n, mark = ptr_push_str(p, "properties");
		struct member *props = members_sorted(v, &n);
		if (!props) return oom(err);
		int rc = 0;
		for (size_t i = 0; i < n && rc == 0; i++) {
			size_t mk = ptr_push(p, props[i].key, props[i].len);
			rc = check_schema(props[i].value, p, depth + 1, err);
			ptr_pop(p, mk);
		}
		free(props);
		ptr_pop(p, mark);
		return rc;
	}
	if (key_is(m, "additionalProperties") || key_is(m, "items")) {
		if (key_is(m, "items") && json_is_array(v))
			return werr(err, BAD,
			            "schema %s: unsupported form of \"items\": an array (draft 2019-09 and "
			            "older; 2020-12 spells it \"prefixItems\")",
			            ptr_str(p));
		size_t mark = ptr_push(p, m->key, m->len);
		int rc = check_schema(v, p, depth + 1, err);
		ptr_pop(p, mark);
		return rc;
	}
	if (key_is(m, "required")) return check_required(v, p, err);
	if (key_is(m, "enum") || key_is(m, "const")) {
		if (key_is(m, "enum") && !json_is_array(v))
			return werr(err, BAD, "schema %s: \"enum\" must be an array", ptr_str(p));
		if (!value_depth_ok(v, 0))
			return werr(err, BAD, "schema %s: \"%s\" value nested deeper than %d levels", ptr_str(p),
			            m->key, JSCHEMA_MAX_VALUE_DEPTH);
		return 0;
	}
	if (key_is(m, "minLength") || key_is(m, "maxLength") || key_is(m, "minItems") ||
	    key_is(m, "maxItems")) {
		if (!is_count(v))
			return werr(err, BAD, "schema %s: \"%s\" must be a non-negative integer", ptr_str(p),
			            m->key);
		return 0;
	}
	if (key_is(m, "minimum") || key_is(m, "maximum")) {
		if (!json_is_number(v))
			return werr(err, BAD, "schema %s: \"%s\" must be a number", ptr_str(p), m->key);
		return 0;
	}
	if (key_is(m, "exclusiveMinimum") || key_is(m, "exclusiveMaximum")) {
		if (json_is_boolean(v))
			return werr(err, BAD, "schema %s: unsupported form of \"%s\": a boolean (draft 4; 2020-12 gives the bound as a number)",
			            ptr_str(p), m->key);
		if (!json_is_number(v))
			return werr(err, BAD, "schema %s: \"%s\" must be a number", ptr_str(p), m->key);
		return 0;
	}
	if (key_is(m, "minProperties") || key_is(m, "maxProperties") || key_is(m, "minContains") ||
	    key_is(m, "maxContains")) {
		if (!is_count(v))
			return werr(err, BAD, "schema %s: \"%s\" must be a non-negative integer", ptr_str(p), m->key);
		return 0;
	}
	if (key_is(m, "multipleOf")) {
		if (!json_is_number(v) || json_number_value(v) <= 0)
			return werr(err, BAD, "schema %s: \"multipleOf\" must be a number greater than 0", ptr_str(p));
		return 0;
	}
	if (key_is(m, "uniqueItems")) {
		if (!json_is_boolean(v)) return werr(err, BAD, "schema %s: \"uniqueItems\" must be a boolean", ptr_str(p));
		return 0;
	}
	if (key_is(m, "dependentRequired")) {
		if (!json_is_object(v))
			return werr(err, BAD, "schema %s: \"dependentRequired\" must be an object", ptr_str(p));
		size_t n, mark = ptr_push_str(p, "dependentRequired");
		struct member *deps = members_sorted(v, &n);
		if (!deps) return oom(err);
		int rc = 0;
		for (size_t i = 0; i < n && rc == 0; i++) {
			size_t mk = ptr_push(p, deps[i].key, deps[i].len);
			rc = check_required(deps[i].value, p, err);
			ptr_pop(p, mk);
		}
		free(deps);
		ptr_pop(p, mark);
		return rc;
	}
	if (key_is(m, "not") || key_is(m, "contains") || key_is(m, "if") || key_is(m, "then") ||
	    key_is(m, "else") || key_is(m, "propertyNames")) {
		size_t mark = ptr_push(p, m->key, m->len);
		int rc = check_schema(v, p, depth + 1, err);
		ptr_pop(p, mark);
		return rc;
	}
	if (key_is(m, "allOf") || key_is(m, "anyOf") || key_is(m, "oneOf") || key_is(m, "prefixItems")) {
		if (!json_is_array(v) || json_array_size(v) == 0)
			return werr(err, BAD, "schema %s: \"%s\" must be a non-empty array of schemas", ptr_str(p), m->key);
		size_t mark = ptr_push(p, m->key, m->len);
		int rc = 0;
		for (size_t i = 0; i < json_array_size(v) && rc == 0; i++) {
			size_t mk = ptr_push_index(p, i);
			rc = check_schema(json_array_get(v, i), p, depth + 1, err);
			ptr_pop(p, mk);
		}
		ptr_pop(p, mark);
		return rc;
	}
	if (key_is(m, "$defs") || key_is(m, "dependentSchemas")) {
		/* named subschemas, checked as every other; those of $defs
		 * constrain nothing until a "$ref" points at one */
		if (!json_is_object(v)) return werr(err, BAD, "schema %s: \"%s\" must be an object", ptr_str(p), m->key);
		size_t n, mark = ptr_push(p, m->key, m->len);
		struct member *defs = members_sorted(v, &n);
		if (!defs) return oom(err);
		int rc = 0;
		for (size_t i = 0; i < n && rc == 0; i++) {
			size_t mk = ptr_push(p, defs[i].key, defs[i].len);
			rc = check_schema(defs[i].value, p, depth + 1, err);
			ptr_pop(p, mk);
		}
		free(defs);
		ptr_pop(p, mark);
		return rc;
	}
	if (key_is(m, "$ref")) {
		/* resolved here, so a dangling reference is refused at publish;
		 * what it points at must be a subschema (checked at the end of the
		 * walk, once every subschema has been seen) */
		if (!json_is_string(v)) return werr(err, BAD, "schema %s: \"$ref\" must be a string", ptr_str(p));
		const char *why = NULL;
		char q[160];
		if (!ref_resolve(p->root, json_string_value(v), json_string_length(v), &why))
			return werr(err, why && !strcmp(why, "out of memory") ? WX_FAIL : BAD, "schema %s: \"$ref\" %s %s",
			            ptr_str(p), quote(q, sizeof q, json_string_value(v), json_string_length(v)), why);
		return 0;
	}
	if (key_is(m, "title") || key_is(m, "description") || key_is(m, "$comment")) {
		if (!json_is_string(v))
			return werr(err, BAD, "schema %s: \"%s\" must be a string", ptr_str(p), m->key);
		return 0;
	}
	if (key_is(m, "x-mcp-header")) {
		/* MCP's annotation (2026-07-28, SEP-2243): the property's value is
		 * mirrored in an Mcp-Param-NAME header. No effect on validation.
		 * NAME is an HTTP token; the property is reached from the root
		 * through "properties" alone (the daemon reads it there). */
		const char *t = json_string_value(v);
		size_t tl = t ? json_string_length(v) : 0;
		if (!t || !tl || tl > 64 || strspn(t, "!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz") != tl)
			return werr(err, BAD, "schema %s: \"x-mcp-header\" must be an HTTP token of 1-64 characters", ptr_str(p));
		const char *q = ptr_str(p);
		int reach = depth > 0;
		while (reach && *q) {
			if (strncmp(q, "/properties/", 12) != 0) { reach = 0; break; }
			q += 12;
			size_t seg = strcspn(q, "/");
			if (!seg) { reach = 0; break; }
			q += seg;
		}
		if (!reach)
			return werr(err, BAD, "schema %s: \"x-mcp-header\" only on a property reached from the root through "
			                      "\"properties\" alone", ptr_str(p));
		return 0;
	}
	if (key_is(m, "$schema")) {
		/* Another dialect's URI would promise other semantics for the very
		 * same keywords; inside a subschema it would start an embedded
		 * resource, which needs $id. So: the 2020-12 URI, at the root. */
		if (depth != 0)
			return werr(err, BAD, "schema %s: \"$schema\" is only supported at the root", ptr_str(p));
		if (!json_is_string(v) || strcmp(json_string_value(v), JSCHEMA_DIALECT) ||
		    json_string_length(v) != strlen(JSCHEMA_DIALECT))
			return werr(err, BAD, "schema %s: unsupported \"$schema\": only \"%s\" is supported",
			            ptr_str(p), JSCHEMA_DIALECT);
		return 0;
	}
	char q[160];
	return werr(err, BAD, "schema %s: unsupported keyword %s", ptr_str(p), quote(q, sizeof q, m->key, m->len));
}

static int check_schema(const json_t *s, struct ptr *p, int depth, struct world_err *err)
{
	if (json_is_boolean(s)) return 0;
	if (!json_is_object(s))
		return werr(err, BAD, "schema %s: a schema must be an object or a boolean, got %s", ptr_str(p),
		            s ? type_of(s) : "nothing");
	if (depth > JSCHEMA_MAX_DEPTH)
		return werr(err, BAD, "schema %s: subschemas nested deeper than %d levels", ptr_str(p),
		            JSCHEMA_MAX_DEPTH);
	seen_add(p, s);
	if (json_object_get(s, "$ref")) holder_add(p, s);
	size_t n;
	struct member *m = members_sorted(s, &n);
	if (!m) return oom(err);
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++) rc = check_keyword(&m[i], p, depth, err);
	free(m);
	return rc;
}

/* A growable stack of schemas for the cycle check. */
struct stack {
	const json_t **v;
	size_t n, cap;
	bool oom;
};

static void stack_push(struct stack *st, const json_t *x)
{
	if (st->oom) return;
	if (st->n == st->cap) {
		size_t cap = st->cap ? st->cap * 2 : 32;
		const json_t **b = realloc(st->v, cap * sizeof *b);
		if (!b) {
			st->oom = true;
			return;
		}
		st->v = b;
		st->cap = cap;
	}
	st->v[st->n++] = x;
}

/* Push the schemas validate() applies to the same instance as s: its
 * "$ref" target, the members of allOf/anyOf/oneOf, not, if/then/else and
 * the schemas of dependentSchemas. */
static void push_in_place(const json_t *root, const json_t *s, struct stack *st)
{
	if (!json_is_object(s)) return;
	const json_t *r = json_object_get(s, "$ref"), *k;
	const char *why;
	if (r) {
		const json_t *t = ref_resolve(root, json_string_value(r), json_string_length(r), &why);
		if (t) stack_push(st, t);
	}
	static const char *const lists[] = { "allOf", "anyOf", "oneOf" };
	for (size_t l = 0; l < 3; l++)
		if ((k = json_object_get(s, lists[l])))
			for (size_t i = 0; i < json_array_size(k); i++) stack_push(st, json_array_get(k, i));
	if ((k = json_object_get(s, "not"))) stack_push(st, k);
	static const char *const singles[] = { "if", "then", "else" };
	for (size_t l = 0; l < 3; l++)
		if ((k = json_object_get(s, singles[l]))) stack_push(st, k);
	if ((k = json_object_get(s, "dependentSchemas"))) {
		const char *key;
		json_t *sub;
		json_object_foreach((json_t *)k, key, sub) stack_push(st, sub);
	}
}

/* After the walk: each "$ref" points at a subschema the walk checked (not,
 * say, into an "enum" value), and following "$ref"s and in-place
 * applicators from a "$ref" never comes back to it without moving into the
 * instance -- such a schema would recurse for ever on every instance. */
static int check_refs(struct ptr *p, struct world_err *err)
{
	char q[160];
	for (size_t h = 0; h < p->nholders; h++) {
		const json_t *r = json_object_get(p->holders[h].schema, "$ref");
		const char *why;
		const json_t *t = ref_resolve(p->root, json_string_value(r), json_string_length(r), &why);
		if (!t) return oom(err); /* resolved during the walk: only memory can fail now */
		if (json_is_object(t) && !seen_has(p, t))
			return werr(err, BAD, "schema %s: \"$ref\" %s points at a value that is not a subschema",
			            p->holders[h].pointer, quote(q, sizeof q, json_string_value(r), json_string_length(r)));
		if (!json_is_object(t) && !json_is_boolean(t))
			return werr(err, BAD, "schema %s: \"$ref\" %s points at a %s, not a schema", p->holders[h].pointer,
			            quote(q, sizeof q, json_string_value(r), json_string_length(r)), type_of(t));
	}
	/* depth first over the in-place edges from each holder, each node
	 * expanded once */
	int rc = 0;
	struct stack todo = {0}, done = {0};
	for (size_t h = 0; h < p->nholders && rc == 0; h++) {
		const json_t *start = p->holders[h].schema;
		todo.n = done.n = 0;
		push_in_place(p->root, start, &todo);
		while (todo.n && rc == 0 && !todo.oom && !done.oom) {
			const json_t *x = todo.v[--todo.n];
			if (x == start) {
				rc = werr(err, BAD, "schema %s: \"$ref\" leads back to this schema without applying to a part "
				          "of the instance (it would never end)", p->holders[h].pointer);
				break;
			}
			bool was = false;
			for (size_t i = 0; i < done.n && !was; i++) was = done.v[i] == x;
			if (was) continue;
			stack_push(&done, x);
			push_in_place(p->root, x, &todo);
		}
	}
	bool failed = todo.oom || done.oom;
	free(todo.v);
	free(done.v);
	return failed && rc == 0 ? oom(err) : rc;
}

int jschema_check(const json_t *schema, struct world_err *err)
{
	struct ptr p = {0};
	p.root = schema;
	int rc = check_schema(schema, &p, 0, err);
	if (rc == 0 && !p.oom) rc = check_refs(&p, err);
	bool failed_oom = p.oom;
	walk_free(&p);
	if (failed_oom) return oom(err);
	return rc;
}

/* ---- jschema_validate ----------------------------------------------------- */

static int validate(const json_t *s, const json_t *v, struct ptr *p, struct world_err *err);

/* Unicode code points in a (valid UTF-8) string: every byte that is not a
 * continuation byte starts one. */
static size_t code_points(const json_t *s)
{
	const unsigned char *b = (const unsigned char *)json_string_value(s);
	size_t n = json_string_length(s), cp = 0;
	for (size_t i = 0; i < n; i++) cp += (b[i] & 0xC0) != 0x80;
	return cp;
}

/* count compared with a bound that passed is_count (an integer or an
 * integral real, possibly beyond 64 bits). */
static int cmp_count(size_t count, const json_t *bound)
{
	json_int_t c = count > (size_t)INT64_MAX ? INT64_MAX : (json_int_t)count;
	if (json_is_integer(bound)) {
		json_int_t b = json_integer_value(bound);
		return c < b ? -1 : c > b;
	}
	return cmp_int_real(c, json_real_value(bound));
}

static int validate_type(const json_t *t, const json_t *v, struct ptr *p, struct world_err *err)
{
	if (json_is_string(t)) {
		if (type_matches(json_string_value(t), v)) return 0;
		return werr(err, BAD, "%s: expected type %s, got %s", ptr_str(p), json_string_value(t), type_of(v));
	}
	char want[128] = "";
	size_t o = 0;
	for (size_t i = 0; i < json_array_size(t); i++) {
		const char *name = json_string_value(json_array_get(t, i));
		if (type_matches(name, v)) return 0;
		o += (size_t)snprintf(want + o, sizeof want - o, "%s%s", i ? " or " : "", name);
		if (o >= sizeof want) o = sizeof want - 1;
	}
	return werr(err, BAD, "%s: expected type %s, got %s", ptr_str(p), want, type_of(v));
}

/* multipleOf: exact for two integers; otherwise judged in binary floating
 * point, as every JSON number here is a double: the quotient must be
 * finite and within 1e-9 of an integer (so 0.0075 is a multiple of 0.0001,
 * whose quotient is 75.00000000000001). A quotient beyond 2^53 is an
 * integer as a double. */
static bool is_multiple(const json_t *v, const json_t *m)
{
	if (json_is_integer(v) && json_is_integer(m)) /* m >= 1: checked at publish */
		return json_integer_value(v) % json_integer_value(m) == 0;
	double q = json_number_value(v) / json_number_value(m);
	if (!isfinite(q)) return false;
	if (q < 0) q = -q;
	if (q >= 9007199254740992.0) return true; /* 2^53 */
	double d = q - (double)(long long)(q + 0.5);
	return (d < 0 ? -d : d) <= 1e-9;
}

/* Say which keyword applied after a subschema's own failure: append
 * suffix to err's message (cut to fit, as werr cuts). Kept out of
 * validate_here, which recurses once per level of a recursive schema:
 * a buffer in its frame would multiply by JSCHEMA_MAX_NESTING. */
__attribute__((noinline)) static int err_suffix(struct world_err *err, const char *suffix)
{
	size_t n = strlen(err->msg), k = strlen(suffix);
	if (n + k >= sizeof err->msg) k = sizeof err->msg - 1 - n;
	memcpy(err->msg + n, suffix, k);
	err->msg[n + k] = '\0';
	return -1;
}

/* contains, with minContains (default 1) and maxContains: how many items
 * match, every item tried (the count is the point). */
static int validate_contains(const json_t *s, const json_t *c, const json_t *v, struct ptr *p,
                             struct world_err *err)
{
	size_t hits = 0, n = json_array_size(v);
	for (size_t i = 0; i < n; i++) {
		struct world_err e2 = {0, ""};
		size_t mark = ptr_push_index(p, i);
		int rc = validate(c, json_array_get(v, i), p, &e2);
		ptr_pop(p, mark);
		if (rc == 0) hits++;
		else if (e2.code == WX_FAIL) { *err = e2; return -1; }
	}
	const json_t *min = json_object_get(s, "minContains"), *max = json_object_get(s, "maxContains");
	char b[64];
	if (min ? cmp_count(hits, min) < 0 : hits == 0)
		return werr(err, BAD, "%s: %zu item(s) match the schema of \"contains\", fewer than %s", ptr_str(p), hits,
		            min ? num_str(b, sizeof b, min) : "1");
	if (max && cmp_count(hits, max) > 0)
		return werr(err, BAD, "%s: %zu item(s) match the schema of \"contains\", more than maxContains %s",
		            ptr_str(p), hits, num_str(b, sizeof b, max));
	return 0;
}

/* propertyNames: every member name, as a string, against the schema. */
static int validate_property_names(const json_t *k, const json_t *v, struct ptr *p, struct world_err *err)
{
	size_t n;
	struct member *m = members_sorted(v, &n);
	if (!m) return werr(err, WX_FAIL, "schema validation: out of memory");
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		json_t *name = json_stringn(m[i].key, m[i].len);
		if (!name) {
			rc = werr(err, WX_FAIL, "schema validation: out of memory");
			break;
		}
		size_t mark = ptr_push(p, m[i].key, m[i].len);
		rc = validate(k, name, p, err);
		ptr_pop(p, mark);
		json_decref(name);
		if (rc) rc = err_suffix(err, " (the member name, under \"propertyNames\")");
	}
	free(m);
	return rc;
}

static int validate_object(const json_t *s, const json_t *v, struct ptr *p, struct world_err *err)
{
	const json_t *req = json_object_get(s, "required");
	for (size_t i = 0; req && i < json_array_size(req); i++) {
		const json_t *name = json_array_get(req, i);
		if (!json_object_getn(v, json_string_value(name), json_string_length(name))) {
			char q[160];
			return werr(err, BAD, "%s: missing required property %s", ptr_str(p),
			            quote(q, sizeof q, json_string_value(name), json_string_length(name)));
		}
	}
	const json_t *props = json_object_get(s, "properties");
	const json_t *addl = json_object_get(s, "additionalProperties");
	if (!props && !addl) return 0;
	size_t n;
	struct member *m = members_sorted(v, &n);
	if (!m) return werr(err, WX_FAIL, "schema validation: out of memory");
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		const json_t *sub = props ? json_object_getn(props, m[i].key, m[i].len) : NULL;
		size_t mark = ptr_push(p, m[i].key, m[i].len);
		if (sub) rc = validate(sub, m[i].value, p, err);
		else if (json_is_false(addl))
			rc = werr(err, BAD, "%s: additional property not allowed", ptr_str(p));
		else if (addl) rc = validate(addl, m[i].value, p, err);
		ptr_pop(p, mark);
	}
	free(m);
	return rc;
}

static int validate_here(const json_t *s, const json_t *v, struct ptr *p, struct world_err *err);

/* validate_here, nested at most JSCHEMA_MAX_NESTING deep: without "$ref"
 * the schema's depth bounds it; with one, a recursive schema follows the
 * instance's depth, which this bounds too. */
static int validate(const json_t *s, const json_t *v, struct ptr *p, struct world_err *err)
{
	if (p->nesting >= JSCHEMA_MAX_NESTING)
		/* the pointer is that deep too: cut it so the reason still shows */
		return werr(err, BAD, "%.120s%s: schema applied more than %d levels deep", ptr_str(p),
		            strlen(ptr_str(p)) > 120 ? "..." : "", JSCHEMA_MAX_NESTING);
	p->nesting++;
	int rc = validate_here(s, v, p, err);
	p->nesting--;
	return rc;
}

static int validate_here(const json_t *s, const json_t *v, struct ptr *p, struct world_err *err)
{
	if (json_is_true(s)) return 0;
	if (json_is_false(s)) return werr(err, BAD, "%s: no value allowed here (schema false)", ptr_str(p));
	char a[64], b[64];
	const json_t *k;
	if ((k = json_object_get(s, "type")) && validate_type(k, v, p, err)) return -1;
	if ((k = json_object_get(s, "const")) && !value_eq(v, k))
		return werr(err, BAD, "%s: value does not equal the schema's \"const\"", ptr_str(p));
	if ((k = json_object_get(s, "enum"))) {
		size_t i;
		for (i = 0; i < json_array_size(k); i++)
			if (value_eq(v, json_array_get(k, i))) break;
		if (i == json_array_size(k))
			return werr(err, BAD, "%s: value is not one of the schema's \"enum\" values", ptr_str(p));
	}
	if (json_is_number(v)) {
		if ((k = json_object_get(s, "minimum")) && cmp_num(v, k) < 0)
			return werr(err, BAD, "%s: %s is less than minimum %s", ptr_str(p), num_str(a, sizeof a, v),
			            num_str(b, sizeof b, k));
		if ((k = json_object_get(s, "maximum")) && cmp_num(v, k) > 0)
			return werr(err, BAD, "%s: %s is greater than maximum %s", ptr_str(p),
			            num_str(a, sizeof a, v), num_str(b, sizeof b, k));
		if ((k = json_object_get(s, "exclusiveMinimum")) && cmp_num(v, k) <= 0)
			return werr(err, BAD, "%s: %s is not greater than exclusiveMinimum %s", ptr_str(p),
			            num_str(a, sizeof a, v), num_str(b, sizeof b, k));
		if ((k = json_object_get(s, "exclusiveMaximum")) && cmp_num(v, k) >= 0)
			return werr(err, BAD, "%s: %s is not less than exclusiveMaximum %s", ptr_str(p),
			            num_str(a, sizeof a, v), num_str(b, sizeof b, k));
		if ((k = json_object_get(s, "multipleOf")) && !is_multiple(v, k))
			return werr(err, BAD, "%s: %s is not a multiple of %s", ptr_str(p), num_str(a, sizeof a, v),
			            num_str(b, sizeof b, k));
	}
	if (json_is_string(v)) {
		size_t cp = code_points(v);
		if ((k = json_object_get(s, "minLength")) && cmp_count(cp, k) < 0)
			return werr(err, BAD, "%s: string of %zu code point(s) is shorter than minLength %s",
			            ptr_str(p), cp, num_str(b, sizeof b, k));
		if ((k = json_object_get(s, "maxLength")) && cmp_count(cp, k) > 0)
			return werr(err, BAD, "%s: string of %zu code point(s) is longer than maxLength %s",
			            ptr_str(p), cp, num_str(b, sizeof b, k));
	}
	if (json_is_array(v)) {
		size_t n = json_array_size(v);
		if ((k = json_object_get(s, "minItems")) && cmp_count(n, k) < 0)
			return werr(err, BAD, "%s: array of %zu item(s) has fewer than minItems %s", ptr_str(p), n,
			            num_str(b, sizeof b, k));
		if ((k = json_object_get(s, "maxItems")) && cmp_count(n, k) > 0)
			return werr(err, BAD, "%s: array of %zu item(s) has more than maxItems %s", ptr_str(p), n,
			            num_str(b, sizeof b, k));
		const json_t *pre = json_object_get(s, "prefixItems");
		size_t np = json_array_size(pre);
		for (size_t i = 0; i < np && i < n; i++) {
			size_t mark = ptr_push_index(p, i);
			int rc = validate(json_array_get(pre, i), json_array_get(v, i), p, err);
			ptr_pop(p, mark);
			if (rc) return rc;
		}
		if (json_is_true(json_object_get(s, "uniqueItems")))
			for (size_t i = 0; i < n; i++)
				for (size_t j = i + 1; j < n; j++)
					if (value_eq(json_array_get(v, i), json_array_get(v, j)))
						return werr(err, BAD, "%s: items %zu and %zu are equal (uniqueItems)", ptr_str(p), i, j);
		if ((k = json_object_get(s, "items"))) {
			/* 2020-12: items applies to the items after prefixItems */
			for (size_t i = np; i < n; i++) {
				size_t mark = ptr_push_index(p, i);
				int rc = validate(k, json_array_get(v, i), p, err);
				ptr_pop(p, mark);
				if (rc) return rc;
			}
		}
		if ((k = json_object_get(s, "contains")) && validate_contains(s, k, v, p, err)) return -1;
	}
	if ((k = json_object_get(s, "$ref"))) {
		const char *why;
		const json_t *t = ref_resolve(p->root, json_string_value(k), json_string_length(k), &why);
		if (!t) return werr(err, WX_FAIL, "schema validation: out of memory");
		if (validate(t, v, p, err)) return -1;
	}
	if ((k = json_object_get(s, "allOf")))
		for (size_t i = 0; i < json_array_size(k); i++)
			if (validate(json_array_get(k, i), v, p, err)) return -1;
	if ((k = json_object_get(s, "anyOf"))) {
		size_t i;
		for (i = 0; i < json_array_size(k); i++) {
			struct world_err e2 = {0, ""};
			int rc = validate(json_array_get(k, i), v, p, &e2);
			if (rc == 0) break;
			if (e2.code == WX_FAIL) { *err = e2; return -1; }
		}
		if (i == json_array_size(k)) return werr(err, BAD, "%s: value matches none of the \"anyOf\" schemas", ptr_str(p));
	}
	if ((k = json_object_get(s, "oneOf"))) {
		size_t hits = 0;
		for (size_t i = 0; i < json_array_size(k); i++) {
			struct world_err e2 = {0, ""};
			if (validate(json_array_get(k, i), v, p, &e2) == 0) hits++;
			else if (e2.code == WX_FAIL) { *err = e2; return -1; }
		}
		if (hits != 1)
			return werr(err, BAD, "%s: value matches %zu of the \"oneOf\" schemas (exactly one wanted)", ptr_str(p), hits);
	}
	if ((k = json_object_get(s, "not"))) {
		struct world_err e2 = {0, ""};
		int rc = validate(k, v, p, &e2);
		if (rc && e2.code == WX_FAIL) { *err = e2; return -1; }
		if (rc == 0) return werr(err, BAD, "%s: value matches the schema of \"not\"", ptr_str(p));
	}
	if ((k = json_object_get(s, "if"))) {
		struct world_err e2 = {0, ""};
		int rc = validate(k, v, p, &e2);
		if (rc && e2.code == WX_FAIL) { *err = e2; return -1; }
		const json_t *b2 = json_object_get(s, rc == 0 ? "then" : "else");
		if (b2 && validate(b2, v, p, err))
			return err_suffix(err, rc == 0 ? " (\"then\", as the value matches \"if\")"
			                               : " (\"else\", as the value does not match \"if\")");
	}
	if (json_is_object(v)) {
		size_t n = json_object_size(v);
		if ((k = json_object_get(s, "minProperties")) && cmp_count(n, k) < 0)
			return werr(err, BAD, "%s: object of %zu member(s) has fewer than minProperties %s", ptr_str(p), n,
			            num_str(b, sizeof b, k));
		if ((k = json_object_get(s, "maxProperties")) && cmp_count(n, k) > 0)
			return werr(err, BAD, "%s: object of %zu member(s) has more than maxProperties %s", ptr_str(p), n,
			            num_str(b, sizeof b, k));
		if ((k = json_object_get(s, "dependentRequired"))) {
			size_t nd;
			struct member *deps = members_sorted(k, &nd);
			if (!deps) return werr(err, WX_FAIL, "schema validation: out of memory");
			for (size_t i = 0; i < nd; i++) {
				if (!json_object_getn(v, deps[i].key, deps[i].len)) continue;
				for (size_t j = 0; j < json_array_size(deps[i].value); j++) {
					const json_t *name = json_array_get(deps[i].value, j);
					if (!json_object_getn(v, json_string_value(name), json_string_length(name))) {
						char q1[160], q2[160];
						int rc = werr(err, BAD, "%s: property %s requires property %s (dependentRequired)", ptr_str(p),
						              quote(q1, sizeof q1, deps[i].key, deps[i].len),
						              quote(q2, sizeof q2, json_string_value(name), json_string_length(name)));
						free(deps);
						return rc;
					}
				}
			}
			free(deps);
		}
		if ((k = json_object_get(s, "dependentSchemas"))) {
			size_t nd;
			struct member *deps = members_sorted(k, &nd);
			if (!deps) return werr(err, WX_FAIL, "schema validation: out of memory");
			int rc = 0;
			for (size_t i = 0; i < nd && rc == 0; i++)
				if (json_object_getn(v, deps[i].key, deps[i].len)) rc = validate(deps[i].value, v, p, err);
			free(deps);
			if (rc) return rc;
		}
		if ((k = json_object_get(s, "propertyNames")) && validate_property_names(k, v, p, err)) return -1;
		return validate_object(s, v, p, err);
	}
	return 0;
}

int jschema_validate(const json_t *schema, const json_t *instance, struct world_err *err)
{
	if (jschema_check(schema, err)) return -1;
	if (!instance) return werr(err, BAD, "(root): no instance to validate");
	struct ptr p = {0};
	p.root = schema;
	int rc = validate(schema, instance, &p, err);
	bool failed_oom = p.oom;
	walk_free(&p);
	if (failed_oom) return werr(err, WX_FAIL, "schema validation: out of memory");
	return rc;
}
