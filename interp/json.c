/* interp/json.c: the JSON codec of ailang-lite's std/json.
 *
 * Owns: decoding JSON text (RFC 8259, nesting bounded by AIL_MAX_JSON_NEST)
 * into Json constructor values (JNull, JBool, JNumber(float), JString,
 * JArray(list), JObject(list of {key, value})), and encoding them with the
 * rules of docs/design.md §11: compact, keys in insertion order, whole numbers as
 * integers, only `"`, `\` and control characters escaped. */
#include "interp/ail.h"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ail_json_names ail_jnames;

static void names(void);

void ail_json_init(void)
{
	ail_jnames.jnull = NULL;
	names();
}

static void names(void)
{
	if (ail_jnames.jnull)
		return;
	ail_jnames.jnull = ail_intern("JNull", 5);
	ail_jnames.jbool = ail_intern("JBool", 5);
	ail_jnames.jnumber = ail_intern("JNumber", 7);
	ail_jnames.jstring = ail_intern("JString", 7);
	ail_jnames.jarray = ail_intern("JArray", 6);
	ail_jnames.jobject = ail_intern("JObject", 7);
	ail_jnames.key = ail_intern("key", 3);
	ail_jnames.value = ail_intern("value", 5);
}

/* ---------------- decode ---------------- */

struct jd {
	const char *s;
	size_t n, i;
	char *why;
	size_t whylen;
	int failed;
};

static value *jfail(struct jd *d, const char *msg)
{
	if (!d->failed) {
		snprintf(d->why, d->whylen, "%s at offset %zu", msg, d->i);
		d->failed = 1;
	}
	return NULL;
}

static void ws(struct jd *d)
{
	while (d->i < d->n && (d->s[d->i] == ' ' || d->s[d->i] == '\t' || d->s[d->i] == '\n' || d->s[d->i] == '\r'))
		d->i++;
}

static int hex4(struct jd *d, unsigned *out)
{
	if (d->i + 4 > d->n)
		return 0;
	unsigned v = 0;
	for (int k = 0; k < 4; k++) {
		char c = d->s[d->i + k];
		v <<= 4;
		if (c >= '0' && c <= '9') v |= (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f') v |= (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F') v |= (unsigned)(c - 'A' + 10);
		else return 0;
	}
	d->i += 4;
	*out = v;
	return 1;
}

static void utf8(struct buf *b, unsigned cp)
{
	char o[4];
	if (cp < 0x80) { o[0] = (char)cp; buf_put(b, o, 1); }
	else if (cp < 0x800) { o[0] = (char)(0xC0 | (cp >> 6)); o[1] = (char)(0x80 | (cp & 0x3F)); buf_put(b, o, 2); }
	else if (cp < 0x10000) { o[0] = (char)(0xE0 | (cp >> 12)); o[1] = (char)(0x80 | ((cp >> 6) & 0x3F)); o[2] = (char)(0x80 | (cp & 0x3F)); buf_put(b, o, 3); }
	else { o[0] = (char)(0xF0 | (cp >> 18)); o[1] = (char)(0x80 | ((cp >> 12) & 0x3F)); o[2] = (char)(0x80 | ((cp >> 6) & 0x3F)); o[3] = (char)(0x80 | (cp & 0x3F)); buf_put(b, o, 4); }
}

/* at the opening quote; returns 0 on error */
static int jstring(struct jd *d, struct buf *b)
{
	d->i++;
	for (;;) {
		/* copy a run of plain bytes at once */
		size_t st = d->i;
		while (d->i < d->n && d->s[d->i] != '"' && d->s[d->i] != '\\' && (unsigned char)d->s[d->i] >= 0x20)
			d->i++;
		if (d->i > st)
			buf_put(b, d->s + st, d->i - st);
		if (d->i >= d->n) {
			jfail(d, "unterminated string");
			return 0;
		}
		char c = d->s[d->i];
		if (c == '"') {
			d->i++;
			if (!b->p)
				buf_put(b, "", 0);
			return 1;
		}
		if ((unsigned char)c < 0x20) {
			jfail(d, "control character in string");
			return 0;
		}
		d->i++; /* backslash */
		if (d->i >= d->n) {
			jfail(d, "unterminated escape");
			return 0;
		}
		char e = d->s[d->i++];
		switch (e) {
		case '"': buf_putc(b, '"'); break;
		case '\\': buf_putc(b, '\\'); break;
		case '/': buf_putc(b, '/'); break;
		case 'b': buf_putc(b, '\b'); break;
		case 'f': buf_putc(b, '\f'); break;
		case 'n': buf_putc(b, '\n'); break;
		case 'r': buf_putc(b, '\r'); break;
		case 't': buf_putc(b, '\t'); break;
		case 'u': {
			unsigned cp;
			if (!hex4(d, &cp)) {
				jfail(d, "invalid \\u escape");
				return 0;
			}
			if (cp >= 0xD800 && cp <= 0xDBFF) {
				unsigned lo;
				size_t save = d->i;
				if (d->i + 1 < d->n && d->s[d->i] == '\\' && d->s[d->i + 1] == 'u') {
					d->i += 2;
					if (hex4(d, &lo) && lo >= 0xDC00 && lo <= 0xDFFF) {
						cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
					} else {
						d->i = save;
						cp = 0xFFFD;
					}
				} else {
					cp = 0xFFFD;
				}
			} else if (cp >= 0xDC00 && cp <= 0xDFFF) {
				cp = 0xFFFD; /* lone surrogate, as Go's decoder does */
			}
			utf8(b, cp);
			break;
		}
		default:
			d->i--;
			jfail(d, "invalid escape");
			return 0;
		}
	}
}

static value *jvalue(struct jd *d, int depth);

static value *jnumber(struct jd *d)
{
	size_t st = d->i;
	int integral = 1;
	if (d->s[d->i] == '-')
		d->i++;
	if (d->i >= d->n)
		return jfail(d, "invalid number");
	if (d->s[d->i] == '0') {
		d->i++;
	} else if (d->s[d->i] >= '1' && d->s[d->i] <= '9') {
		while (d->i < d->n && d->s[d->i] >= '0' && d->s[d->i] <= '9')
			d->i++;
	} else {
		return jfail(d, "invalid number");
	}
	if (d->i < d->n && d->s[d->i] == '.') {
		integral = 0;
		d->i++;
		if (d->i >= d->n || d->s[d->i] < '0' || d->s[d->i] > '9')
			return jfail(d, "invalid number");
		while (d->i < d->n && d->s[d->i] >= '0' && d->s[d->i] <= '9')
			d->i++;
	}
	if (d->i < d->n && (d->s[d->i] == 'e' || d->s[d->i] == 'E')) {
		integral = 0;
		d->i++;
		if (d->i < d->n && (d->s[d->i] == '+' || d->s[d->i] == '-'))
			d->i++;
		if (d->i >= d->n || d->s[d->i] < '0' || d->s[d->i] > '9')
			return jfail(d, "invalid number");
		while (d->i < d->n && d->s[d->i] >= '0' && d->s[d->i] <= '9')
			d->i++;
	}
	size_t len = d->i - st;
	char tmp[128];
	char *p = len < sizeof tmp ? tmp : ail_alloc(len + 1);
	memcpy(p, d->s + st, len);
	p[len] = 0;
	if (integral && len <= 19) {
		/* integers that fit int64 stay exact */
		errno = 0;
		long long iv = strtoll(p, NULL, 10);
		if (errno == 0)
			return v_ctor1(ail_jnames.jnumber, v_int((int64_t)iv));
	}
	double v = strtod(p, NULL);
	if (isinf(v))
		return jfail(d, "number out of range");
	return v_ctor1(ail_jnames.jnumber, v_float(v));
}

static value *jvalue(struct jd *d, int depth)
{
	ws(d);
	if (d->i >= d->n)
		return jfail(d, "unexpected end of input");
	if (depth > AIL_MAX_JSON_NEST)
		return jfail(d, "nesting too deep");
	ail_stack_check(0, 0);
	char c = d->s[d->i];
	switch (c) {
	case '{': {
		d->i++;
		value *head = &ail_nil, **tailp = &head;
		ws(d);
		if (d->i < d->n && d->s[d->i] == '}') {
			d->i++;
			return v_ctor1(ail_jnames.jobject, head);
		}
		for (;;) {
			ws(d);
			if (d->i >= d->n || d->s[d->i] != '"')
				return jfail(d, "expected a string key");
			struct buf k = {0};
			if (!jstring(d, &k))
				return NULL;
			ws(d);
			if (d->i >= d->n || d->s[d->i] != ':')
				return jfail(d, "expected ':'");
			d->i++;
			value *v = jvalue(d, depth + 1);
			if (!v)
				return NULL;
			const char **nm = ail_alloc(2 * sizeof *nm);
			value **it = ail_alloc(2 * sizeof *it);
			nm[0] = ail_jnames.key;
			nm[1] = ail_jnames.value;
			it[0] = v_str_own(k.p, k.len);
			it[1] = v;
			value *cell = v_cons(v_record(2, nm, it), &ail_nil);
			*tailp = cell;
			tailp = &cell->u.cons.tail;
			ws(d);
			if (d->i < d->n && d->s[d->i] == ',') {
				d->i++;
				continue;
			}
			if (d->i < d->n && d->s[d->i] == '}') {
				d->i++;
				return v_ctor1(ail_jnames.jobject, head);
			}
			return jfail(d, "expected ',' or '}'");
		}
	}
	case '[': {
		d->i++;
		value *head = &ail_nil, **tailp = &head;
		ws(d);
		if (d->i < d->n && d->s[d->i] == ']') {
			d->i++;
			return v_ctor1(ail_jnames.jarray, head);
		}
		for (;;) {
			value *v = jvalue(d, depth + 1);
			if (!v)
				return NULL;
			value *cell = v_cons(v, &ail_nil);
			*tailp = cell;
			tailp = &cell->u.cons.tail;
			ws(d);
			if (d->i < d->n && d->s[d->i] == ',') {
				d->i++;
				continue;
			}
			if (d->i < d->n && d->s[d->i] == ']') {
				d->i++;
				return v_ctor1(ail_jnames.jarray, head);
			}
			return jfail(d, "expected ',' or ']'");
		}
	}
	case '"': {
		struct buf b = {0};
		if (!jstring(d, &b))
			return NULL;
		return v_ctor1(ail_jnames.jstring, v_str_own(b.p, b.len));
	}
	case 't':
		if (d->n - d->i >= 4 && memcmp(d->s + d->i, "true", 4) == 0) {
			d->i += 4;
			return v_ctor1(ail_jnames.jbool, &ail_true);
		}
		return jfail(d, "invalid literal");
	case 'f':
		if (d->n - d->i >= 5 && memcmp(d->s + d->i, "false", 5) == 0) {
			d->i += 5;
			return v_ctor1(ail_jnames.jbool, &ail_false);
		}
		return jfail(d, "invalid literal");
	case 'n':
		if (d->n - d->i >= 4 && memcmp(d->s + d->i, "null", 4) == 0) {
			d->i += 4;
			return v_ctor(ail_jnames.jnull, 0, NULL);
		}
		return jfail(d, "invalid literal");
	default:
		if (c == '-' || (c >= '0' && c <= '9'))
			return jnumber(d);
		return jfail(d, "unexpected character");
	}
}

value *ail_json_decode(const char *s, size_t n, char *why, size_t whylen)
{
	names();
	struct jd d = {.s = s, .n = n, .why = why, .whylen = whylen};
	value *v = jvalue(&d, 1);
	if (!v)
		return NULL;
	ws(&d);
	if (d.i != d.n)
		return jfail(&d, "trailing data after the JSON value");
	return v;
}

int ail_json_string_literal(const char *s, size_t n, char **out, size_t *outlen, char *why, size_t whylen)
{
	struct jd d = {.s = s, .n = n, .why = why, .whylen = whylen};
	ws(&d);
	if (d.i >= d.n || d.s[d.i] != '"') {
		snprintf(why, whylen, "expected one JSON string literal (the input JSON as a string), found %s",
		         d.i >= d.n ? "nothing" : "another JSON value");
		return -1;
	}
	struct buf b = {0};
	if (!jstring(&d, &b))
		return -1;
	ws(&d);
	if (d.i != d.n) {
		snprintf(why, whylen, "trailing data after the JSON string literal at offset %zu", d.i);
		return -1;
	}
	*out = b.p ? b.p : "";
	*outlen = b.len;
	return 0;
}

/* ---------------- encode ---------------- */

void ail_json_quote(struct buf *b, const char *s, size_t n)
{
	static const char hexd[] = "0123456789abcdef";
	buf_putc(b, '"');
	size_t st = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c >= 0x20 && c != '"' && c != '\\')
			continue;
		if (i > st)
			buf_put(b, s + st, i - st);
		st = i + 1;
		switch (c) {
		case '"': buf_put(b, "\\\"", 2); break;
		case '\\': buf_put(b, "\\\\", 2); break;
		case '\n': buf_put(b, "\\n", 2); break;
		case '\r': buf_put(b, "\\r", 2); break;
		case '\t': buf_put(b, "\\t", 2); break;
		case '\b': buf_put(b, "\\b", 2); break;
		case '\f': buf_put(b, "\\f", 2); break;
		default: {
			char u[6] = {'\\', 'u', '0', '0', hexd[c >> 4], hexd[c & 15]};
			buf_put(b, u, 6);
		}
		}
	}
	if (n > st)
		buf_put(b, s + st, n - st);
	buf_putc(b, '"');
}

void ail_num_format(struct buf *b, double d)
{
	char tmp[64];
	if (isnan(d)) {
		buf_puts(b, "NaN");
		return;
	}
	if (isinf(d)) {
		buf_puts(b, d < 0 ? "-Inf" : "+Inf");
		return;
	}
	if (d == 0) {
		buf_puts(b, "0");
		return;
	}
	if (d == floor(d) && fabs(d) < 1e21) {
		snprintf(tmp, sizeof tmp, "%.0f", d);
		buf_puts(b, tmp);
		return;
	}
	/* shortest form that reads back as the same double */
	int prec;
	for (prec = 1; prec <= 17; prec++) {
		snprintf(tmp, sizeof tmp, "%.*g", prec, d);
		if (strtod(tmp, NULL) == d)
			break;
	}
	char *e = strchr(tmp, 'e');
	double a = fabs(d);
	if (e && a >= 1e-6 && a < 1e21) {
		/* plain decimal in the range where JavaScript and Go print one */
		int exp = atoi(e + 1);
		int decimals = prec - 1 - exp;
		if (decimals < 0)
			decimals = 0;
		snprintf(tmp, sizeof tmp, "%.*f", decimals, d);
	}
	buf_puts(b, tmp);
}

void ail_json_encode(struct buf *b, value *v, int line, int col)
{
	names();
	ail_stack_check(line, col);
	if (v->k != V_CTOR)
		ail_fail("RT_TYPE", line, col, "encode expects a Json value, got %s", v_kind_name(v));
	const char *c = v->u.agg.cname;
	if (c == ail_jnames.jnull && v->u.agg.n == 0) {
		buf_put(b, "null", 4);
		return;
	}
	if (v->u.agg.n != 1)
		ail_fail("RT_TYPE", line, col, "encode expects a Json value, got %s", v->u.agg.cname);
	value *x = v->u.agg.items[0];
	if (c == ail_jnames.jbool && x->k == V_BOOL) {
		buf_puts(b, x->u.b ? "true" : "false");
	} else if (c == ail_jnames.jnumber && (x->k == V_FLOAT || x->k == V_INT)) {
		if (x->k == V_INT) {
			/* digits by hand: snprintf is the slowest part of encoding */
			char tmp[24];
			int p = (int)sizeof tmp;
			uint64_t u = x->u.i < 0 ? 0 - (uint64_t)x->u.i : (uint64_t)x->u.i;
			do {
				tmp[--p] = (char)('0' + u % 10);
				u /= 10;
			} while (u);
			if (x->u.i < 0)
				tmp[--p] = '-';
			buf_put(b, tmp + p, sizeof tmp - (size_t)p);
		} else {
			if (isnan(x->u.f) || isinf(x->u.f))
				ail_fail("RT_JSON", line, col, "cannot encode a non-finite number as JSON");
			ail_num_format(b, x->u.f);
		}
	} else if (c == ail_jnames.jstring && x->k == V_STR) {
		ail_json_quote(b, x->u.str.s, x->u.str.len);
	} else if (c == ail_jnames.jarray && (x->k == V_NIL || x->k == V_CONS)) {
		buf_putc(b, '[');
		for (value *p = x; p->k == V_CONS; p = p->u.cons.tail) {
			if (p != x)
				buf_putc(b, ',');
			ail_json_encode(b, p->u.cons.head, line, col);
		}
		buf_putc(b, ']');
	} else if (c == ail_jnames.jobject && (x->k == V_NIL || x->k == V_CONS)) {
		buf_putc(b, '{');
		for (value *p = x; p->k == V_CONS; p = p->u.cons.tail) {
			value *r = p->u.cons.head;
			value *k = NULL, *val = NULL;
			if (r->k == V_RECORD)
				for (int i = 0; i < r->u.agg.n; i++) {
					if (r->u.agg.names[i] == ail_jnames.key)
						k = r->u.agg.items[i];
					else if (r->u.agg.names[i] == ail_jnames.value)
						val = r->u.agg.items[i];
				}
			if (!k || !val || k->k != V_STR)
				ail_fail("RT_TYPE", line, col, "JObject members must be {key: string, value: Json}");
			if (p != x)
				buf_putc(b, ',');
			ail_json_quote(b, k->u.str.s, k->u.str.len);
			buf_putc(b, ':');
			ail_json_encode(b, val, line, col);
		}
		buf_putc(b, '}');
	} else {
		ail_fail("RT_TYPE", line, col, "encode expects a Json value, got %s(%s)", v->u.agg.cname, v_kind_name(x));
	}
}
