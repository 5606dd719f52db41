/* interp/std.c: the built-in std modules of ailang-lite.
 *
 * Owns: the table of std functions (std/json, std/string, std/list,
 * std/option, std/result, std/bytes and the prelude's `show`), their argument checks
 * and behaviour, and the constructors that exist without a declaration
 * (Option, Result, Json). Strings are UTF-8 byte strings; length and
 * substring count Unicode code points like upstream. List builtins loop
 * over the spine, so they use constant C stack on long lists. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memmem */
#endif
#include "interp/ail.h"
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BI(name) static value *name(value **a, int line, int col)
#define UNUSED (void)line; (void)col

static _Noreturn void want(const char *fn, int i, const char *what, value *got, int line, int col)
{
	ail_fail("RT_TYPE", line, col, "%s: argument %d must be %s, got %s", fn, i + 1, what, v_kind_name(got));
}
static value *S(const char *fn, value **a, int i, int line, int col)
{
	if (a[i]->k != V_STR)
		want(fn, i, "a string", a[i], line, col);
	return a[i];
}
static int64_t I(const char *fn, value **a, int i, int line, int col)
{
	if (a[i]->k != V_INT)
		want(fn, i, "an int", a[i], line, col);
	return a[i]->u.i;
}
static value *L(const char *fn, value **a, int i, int line, int col)
{
	if (a[i]->k != V_NIL && a[i]->k != V_CONS)
		want(fn, i, "a list", a[i], line, col);
	return a[i];
}
static int B(value *v, const char *fn, int line, int col)
{
	if (v->k != V_BOOL)
		ail_fail("RT_TYPE", line, col, "%s: the function must return a bool, got %s", fn, v_kind_name(v));
	return v->u.b;
}

/* list builder */
struct lb { value *head, **tailp; };
static void lb_init(struct lb *l) { l->head = &ail_nil; l->tailp = &l->head; }
static void lb_push(struct lb *l, value *v)
{
	value *c = v_cons(v, &ail_nil);
	*l->tailp = c;
	l->tailp = &c->u.cons.tail;
}


/* ---------------- prelude ---------------- */

BI(b_show)
{
	UNUSED;
	struct buf b = {0};
	v_show(&b, a[0], 0);
	return v_str_own(b.p ? b.p : "", b.len);
}

/* ---------------- std/json ---------------- */

static value *J(const char *fn, value **a, int i, int line, int col)
{
	value *v = a[i];
	if (v->k != V_CTOR || (v->u.agg.cname != ail_jnames.jnull && v->u.agg.cname != ail_jnames.jbool && v->u.agg.cname != ail_jnames.jnumber &&
	                       v->u.agg.cname != ail_jnames.jstring && v->u.agg.cname != ail_jnames.jarray && v->u.agg.cname != ail_jnames.jobject))
		want(fn, i, "a Json value", v, line, col);
	return v;
}

BI(b_decode)
{
	value *s = S("decode", a, 0, line, col);
	char why[256];
	value *v = ail_json_decode(s->u.str.s, s->u.str.len, why, sizeof why);
	if (!v)
		return v_err(v_str(why, strlen(why)));
	return v_ok(v);
}
BI(b_encode)
{
	struct buf b = {0};
	ail_json_encode(&b, J("encode", a, 0, line, col), line, col);
	return v_str_own(b.p, b.len);
}
static value *obj_get(value *j, value *k)
{
	if (j->u.agg.cname != ail_jnames.jobject)
		return NULL;
	for (value *p = j->u.agg.items[0]; p->k == V_CONS; p = p->u.cons.tail) {
		value *r = p->u.cons.head;
		value *key = NULL, *val = NULL;
		for (int i = 0; i < r->u.agg.n; i++) {
			if (r->u.agg.names[i] == ail_jnames.key)
				key = r->u.agg.items[i];
			else if (r->u.agg.names[i] == ail_jnames.value)
				val = r->u.agg.items[i];
		}
		if (key && val && key->k == V_STR && key->u.str.len == k->u.str.len &&
		    memcmp(key->u.str.s, k->u.str.s, k->u.str.len) == 0)
			return val;
	}
	return NULL;
}
BI(b_get)
{
	value *j = J("get", a, 0, line, col);
	value *v = obj_get(j, S("get", a, 1, line, col));
	return v ? v_some(v) : v_none();
}
BI(b_has)
{
	value *j = J("has", a, 0, line, col);
	return v_bool(obj_get(j, S("has", a, 1, line, col)) != NULL);
}
static value *as(value *j, const char *ctor)
{
	return j->u.agg.cname == ctor ? v_some(j->u.agg.items[0]) : v_none();
}
BI(b_asString) { return as(J("asString", a, 0, line, col), ail_jnames.jstring); }
BI(b_asObject) { return as(J("asObject", a, 0, line, col), ail_jnames.jobject); }
BI(b_asArray) { return as(J("asArray", a, 0, line, col), ail_jnames.jarray); }
BI(b_asBool) { return as(J("asBool", a, 0, line, col), ail_jnames.jbool); }
BI(b_asNumber)
{
	value *j = J("asNumber", a, 0, line, col);
	if (j->u.agg.cname != ail_jnames.jnumber)
		return v_none();
	value *x = j->u.agg.items[0];
	return v_some(x->k == V_INT ? v_float((double)x->u.i) : x);
}
static value *getas(const char *fn, value **a, const char *ctor, int line, int col)
{
	value *j = J(fn, a, 0, line, col);
	value *v = obj_get(j, S(fn, a, 1, line, col));
	if (!v || v->k != V_CTOR || v->u.agg.cname != ctor)
		return v_none();
	return v_some(v->u.agg.items[0]);
}
BI(b_getString) { return getas("getString", a, ail_jnames.jstring, line, col); }
BI(b_getBool) { return getas("getBool", a, ail_jnames.jbool, line, col); }
BI(b_getArray) { return getas("getArray", a, ail_jnames.jarray, line, col); }
BI(b_getObject)
{
	value *j = J("getObject", a, 0, line, col);
	value *v = obj_get(j, S("getObject", a, 1, line, col));
	return v && v->u.agg.cname == ail_jnames.jobject ? v_some(v) : v_none();
}
BI(b_getNumber)
{
	value *o = getas("getNumber", a, ail_jnames.jnumber, line, col);
	if (o->u.agg.n && o->u.agg.items[0]->k == V_INT)
		return v_some(v_float((double)o->u.agg.items[0]->u.i));
	return o;
}
BI(b_getInt)
{
	/* the number truncated toward zero; None when absent, not a number or
	 * outside the int range */
	value *o = getas("getInt", a, ail_jnames.jnumber, line, col);
	if (!o->u.agg.n)
		return o;
	value *x = o->u.agg.items[0];
	if (x->k == V_INT)
		return o;
	double d = trunc(x->u.f);
	if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0))
		return v_none();
	return v_some(v_int((int64_t)d));
}
BI(b_keys)
{
	value *j = J("keys", a, 0, line, col);
	struct lb l;
	lb_init(&l);
	if (j->u.agg.cname == ail_jnames.jobject)
		for (value *p = j->u.agg.items[0]; p->k == V_CONS; p = p->u.cons.tail) {
			value *r = p->u.cons.head;
			for (int i = 0; i < r->u.agg.n; i++)
				if (r->u.agg.names[i] == ail_jnames.key)
					lb_push(&l, r->u.agg.items[i]);
		}
	return l.head;
}
static void check_members(const char *fn, value *xs, int line, int col)
{
	for (value *p = xs; p->k == V_CONS; p = p->u.cons.tail) {
		value *r = p->u.cons.head;
		int ok = r->k == V_RECORD && r->u.agg.n == 2;
		for (int i = 0; ok && i < 2; i++) {
			if (r->u.agg.names[i] == ail_jnames.key)
				ok = r->u.agg.items[i]->k == V_STR;
			else if (r->u.agg.names[i] != ail_jnames.value)
				ok = 0;
		}
		if (!ok)
			ail_fail("RT_TYPE", line, col, "%s: members must be {key: string, value: Json} (use kv)", fn);
	}
}
BI(b_jo)
{
	value *xs = L("jo", a, 0, line, col);
	check_members("jo", xs, line, col);
	return v_ctor1(ail_jnames.jobject, xs);
}
BI(b_ja)
{
	value *xs = L("ja", a, 0, line, col);
	for (value *p = xs; p->k == V_CONS; p = p->u.cons.tail) {
		value *one[1] = {p->u.cons.head};
		J("ja", one, 0, line, col);
	}
	return v_ctor1(ail_jnames.jarray, xs);
}
BI(b_kv)
{
	S("kv", a, 0, line, col);
	J("kv", a, 1, line, col);
	const char **nm = ail_alloc(2 * sizeof *nm);
	value **it = ail_alloc(2 * sizeof *it);
	nm[0] = ail_jnames.key;
	nm[1] = ail_jnames.value;
	it[0] = a[0];
	it[1] = a[1];
	return v_record(2, nm, it);
}
BI(b_js) { return v_ctor1(ail_jnames.jstring, S("js", a, 0, line, col)); }
BI(b_jb)
{
	if (a[0]->k != V_BOOL)
		want("jb", 0, "a bool", a[0], line, col);
	return v_ctor1(ail_jnames.jbool, a[0]);
}
BI(b_jn) { UNUSED; (void)a; return v_ctor(ail_jnames.jnull, 0, NULL); }
BI(b_jint)
{
	I("jint", a, 0, line, col);
	return v_ctor1(ail_jnames.jnumber, a[0]);
}
BI(b_jnum)
{
	if (a[0]->k == V_INT)
		return v_ctor1(ail_jnames.jnumber, v_float((double)a[0]->u.i));
	if (a[0]->k != V_FLOAT)
		want("jnum", 0, "a float", a[0], line, col);
	return v_ctor1(ail_jnames.jnumber, a[0]);
}

/* ---------------- std/string ---------------- */

/* code points of a UTF-8 string; invalid bytes count as one each */
static size_t cp_next(const char *s, size_t n, size_t i)
{
	unsigned char c = (unsigned char)s[i];
	size_t w = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 1;
	if (i + w > n)
		w = 1;
	for (size_t k = 1; k < w; k++)
		if (((unsigned char)s[i + k] >> 6) != 2)
			return i + 1;
	return i + w;
}
static int64_t cp_len(const char *s, size_t n)
{
	int64_t c = 0;
	for (size_t i = 0; i < n; i = cp_next(s, n, i))
		c++;
	return c;
}
/* byte offset of code point index k (clamped to n) */
static size_t cp_off(const char *s, size_t n, int64_t k)
{
	size_t i = 0;
	while (k > 0 && i < n) {
		i = cp_next(s, n, i);
		k--;
	}
	return i;
}

BI(b_length)
{
	/* std/string length and std/list length share the name: dispatch on the
	 * argument, since types are checked dynamically */
	if (a[0]->k == V_STR)
		return v_int(cp_len(a[0]->u.str.s, a[0]->u.str.len));
	if (a[0]->k == V_NIL || a[0]->k == V_CONS)
		return v_int(v_list_length(a[0]));
	want("length", 0, "a string or a list", a[0], line, col);
}
static const char *memfind(const char *h, size_t hn, const char *nd, size_t nn)
{
	if (nn == 0)
		return h;
	if (nn > hn)
		return NULL;
	return memmem(h, hn, nd, nn);
}
BI(b_startsWith)
{
	value *s = S("startsWith", a, 0, line, col), *p = S("startsWith", a, 1, line, col);
	return v_bool(p->u.str.len <= s->u.str.len && memcmp(s->u.str.s, p->u.str.s, p->u.str.len) == 0);
}
BI(b_endsWith)
{
	value *s = S("endsWith", a, 0, line, col), *p = S("endsWith", a, 1, line, col);
	return v_bool(p->u.str.len <= s->u.str.len &&
	              memcmp(s->u.str.s + s->u.str.len - p->u.str.len, p->u.str.s, p->u.str.len) == 0);
}
BI(b_contains)
{
	/* std/string contains(s, sub); std/list contains(xs, x) */
	if (a[0]->k == V_NIL || a[0]->k == V_CONS) {
		for (value *p = a[0]; p->k == V_CONS; p = p->u.cons.tail)
			if (v_equal(p->u.cons.head, a[1], line, col))
				return &ail_true;
		return &ail_false;
	}
	value *s = S("contains", a, 0, line, col), *p = S("contains", a, 1, line, col);
	return v_bool(memfind(s->u.str.s, s->u.str.len, p->u.str.s, p->u.str.len) != NULL);
}
static value *mapcase(value *s, int up)
{
	char *o = ail_alloc(s->u.str.len + 1);
	for (size_t i = 0; i < s->u.str.len; i++) {
		char c = s->u.str.s[i];
		if (up && c >= 'a' && c <= 'z')
			c = (char)(c - 32);
		else if (!up && c >= 'A' && c <= 'Z')
			c = (char)(c + 32);
		o[i] = c;
	}
	return v_str_own(o, s->u.str.len);
}
BI(b_toLower) { return mapcase(S("toLower", a, 0, line, col), 0); }
BI(b_toUpper) { return mapcase(S("toUpper", a, 0, line, col), 1); }
static int isws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
BI(b_trim)
{
	value *s = S("trim", a, 0, line, col);
	size_t st = 0, en = s->u.str.len;
	while (st < en && isws(s->u.str.s[st]))
		st++;
	while (en > st && isws(s->u.str.s[en - 1]))
		en--;
	return v_str_own(s->u.str.s + st, en - st);
}
BI(b_split)
{
	/* Go strings.Split semantics */
	value *s = S("split", a, 0, line, col), *d = S("split", a, 1, line, col);
	struct lb l;
	lb_init(&l);
	const char *p = s->u.str.s;
	size_t n = s->u.str.len;
	if (d->u.str.len == 0) {
		for (size_t i = 0; i < n;) {
			size_t j = cp_next(p, n, i);
			lb_push(&l, v_str_own(p + i, j - i));
			i = j;
		}
		return l.head;
	}
	size_t i = 0;
	for (;;) {
		const char *f = memfind(p + i, n - i, d->u.str.s, d->u.str.len);
		if (!f) {
			lb_push(&l, v_str_own(p + i, n - i));
			return l.head;
		}
		size_t at = (size_t)(f - p);
		lb_push(&l, v_str_own(p + i, at - i));
		i = at + d->u.str.len;
	}
}
BI(b_join)
{
	/* upstream: join(sep, xs); join(xs, sep) is accepted too */
	value *sep, *xs;
	if (a[0]->k == V_STR) {
		sep = a[0];
		xs = L("join", a, 1, line, col);
	} else {
		xs = L("join", a, 0, line, col);
		sep = S("join", a, 1, line, col);
	}
	struct buf b = {0};
	for (value *p = xs; p->k == V_CONS; p = p->u.cons.tail) {
		if (p->u.cons.head->k != V_STR)
			ail_fail("RT_TYPE", line, col, "join: list items must be strings, got %s", v_kind_name(p->u.cons.head));
		if (p != xs)
			buf_put(&b, sep->u.str.s, sep->u.str.len);
		buf_put(&b, p->u.cons.head->u.str.s, p->u.cons.head->u.str.len);
	}
	return v_str_own(b.p ? b.p : "", b.len);
}
BI(b_substring)
{
	/* code points [start, end), clamped to the string */
	value *s = S("substring", a, 0, line, col);
	int64_t st = I("substring", a, 1, line, col), en = I("substring", a, 2, line, col);
	if (st < 0)
		st = 0;
	if (en < st)
		en = st;
	size_t bs = cp_off(s->u.str.s, s->u.str.len, st);
	size_t be = cp_off(s->u.str.s, s->u.str.len, en);
	return v_str_own(s->u.str.s + bs, be - bs);
}
BI(b_find)
{
	value *s = S("find", a, 0, line, col), *p = S("find", a, 1, line, col);
	const char *f = memfind(s->u.str.s, s->u.str.len, p->u.str.s, p->u.str.len);
	return v_int(f ? cp_len(s->u.str.s, (size_t)(f - s->u.str.s)) : -1);
}
BI(b_replace)
{
	value *s = S("replace", a, 0, line, col), *o = S("replace", a, 1, line, col), *r = S("replace", a, 2, line, col);
	if (o->u.str.len == 0)
		return s;
	struct buf b = {0};
	size_t i = 0;
	for (;;) {
		const char *f = memfind(s->u.str.s + i, s->u.str.len - i, o->u.str.s, o->u.str.len);
		if (!f)
			break;
		size_t at = (size_t)(f - s->u.str.s);
		buf_put(&b, s->u.str.s + i, at - i);
		buf_put(&b, r->u.str.s, r->u.str.len);
		i = at + o->u.str.len;
	}
	buf_put(&b, s->u.str.s + i, s->u.str.len - i);
	return v_str_own(b.p, b.len);
}
BI(b_stringToInt)
{
	value *s = S("stringToInt", a, 0, line, col);
	const char *p = s->u.str.s;
	size_t n = s->u.str.len, i = 0;
	int neg = 0;
	if (i < n && (p[i] == '-' || p[i] == '+'))
		neg = p[i++] == '-';
	if (i >= n)
		return v_none();
	uint64_t v = 0;
	for (; i < n; i++) {
		if (p[i] < '0' || p[i] > '9')
			return v_none();
		if (v > (UINT64_MAX - 9) / 10)
			return v_none();
		v = v * 10 + (uint64_t)(p[i] - '0');
	}
	if (neg ? v > (uint64_t)INT64_MAX + 1 : v > (uint64_t)INT64_MAX)
		return v_none();
	return v_some(v_int(neg ? (int64_t)(0 - v) : (int64_t)v));
}

/* ---------------- std/bytes ----------------
 * A `bytes` value (V_BYTES) is an immutable run of raw bytes. fromString
 * shares the string's bytes: a string's first len bytes never change (an
 * in-place `++` only appends past them), so no copy is needed. */

static value *Y(const char *fn, value **a, int i, int line, int col)
{
	if (a[i]->k != V_BYTES)
		want(fn, i, "bytes", a[i], line, col);
	return a[i];
}
BI(b_bytes_fromString)
{
	value *s = S("fromString", a, 0, line, col);
	return v_bytes(s->u.str.s, s->u.str.len);
}
BI(b_bytes_toInts)
{
	value *y = Y("toInts", a, 0, line, col);
	struct lb l;
	lb_init(&l);
	for (size_t i = 0; i < y->u.str.len; i++)
		lb_push(&l, v_int((unsigned char)y->u.str.s[i]));
	return l.head;
}
BI(b_bytes_length) { return v_int((int64_t)Y("length", a, 0, line, col)->u.str.len); }

/* ---------------- std/list ---------------- */

BI(b_map)
{
	value *f = a[0], *xs = L("map", a, 1, line, col);
	struct lb l;
	lb_init(&l);
	for (value *p = xs; p->k == V_CONS; p = p->u.cons.tail)
		lb_push(&l, ail_call(f, 1, &p->u.cons.head, line, col));
	return l.head;
}
BI(b_filter)
{
	value *f = a[0], *xs = L("filter", a, 1, line, col);
	struct lb l;
	lb_init(&l);
	for (value *p = xs; p->k == V_CONS; p = p->u.cons.tail)
		if (B(ail_call(f, 1, &p->u.cons.head, line, col), "filter", line, col))
			lb_push(&l, p->u.cons.head);
	return l.head;
}
BI(b_any)
{
	value *f = a[0], *xs = L("any", a, 1, line, col);
	for (value *p = xs; p->k == V_CONS; p = p->u.cons.tail)
		if (B(ail_call(f, 1, &p->u.cons.head, line, col), "any", line, col))
			return &ail_true;
	return &ail_false;
}
BI(b_all)
{
	value *f = a[0], *xs = L("all", a, 1, line, col);
	for (value *p = xs; p->k == V_CONS; p = p->u.cons.tail)
		if (!B(ail_call(f, 1, &p->u.cons.head, line, col), "all", line, col))
			return &ail_false;
	return &ail_true;
}
BI(b_foldl)
{
	value *f = a[0], *acc = a[1], *xs = L("foldl", a, 2, line, col);
	for (value *p = xs; p->k == V_CONS; p = p->u.cons.tail) {
		value *args[2] = {acc, p->u.cons.head};
		acc = ail_call(f, 2, args, line, col);
	}
	return acc;
}
BI(b_foldr)
{
	value *f = a[0], *acc = a[1], *xs = L("foldr", a, 2, line, col);
	long n = v_list_length(xs);
	value **items = ail_alloc((size_t)(n ? n : 1) * sizeof *items);
	long i = 0;
	for (value *p = xs; p->k == V_CONS; p = p->u.cons.tail)
		items[i++] = p->u.cons.head;
	while (i-- > 0) {
		value *args[2] = {items[i], acc};
		acc = ail_call(f, 2, args, line, col);
	}
	return acc;
}
BI(b_reverse)
{
	value *r = &ail_nil;
	for (value *p = L("reverse", a, 0, line, col); p->k == V_CONS; p = p->u.cons.tail)
		r = v_cons(p->u.cons.head, r);
	return r;
}
BI(b_take)
{
	int64_t n = I("take", a, 0, line, col);
	struct lb l;
	lb_init(&l);
	for (value *p = L("take", a, 1, line, col); p->k == V_CONS && n > 0; p = p->u.cons.tail, n--)
		lb_push(&l, p->u.cons.head);
	return l.head;
}
BI(b_drop)
{
	int64_t n = I("drop", a, 0, line, col);
	value *p = L("drop", a, 1, line, col);
	for (; p->k == V_CONS && n > 0; p = p->u.cons.tail, n--)
		;
	return p;
}
BI(b_head)
{
	value *xs = L("head", a, 0, line, col);
	return xs->k == V_CONS ? v_some(xs->u.cons.head) : v_none();
}
BI(b_tail)
{
	value *xs = L("tail", a, 0, line, col);
	return xs->k == V_CONS ? xs->u.cons.tail : &ail_nil;
}
BI(b_nth)
{
	value *p = L("nth", a, 0, line, col);
	int64_t i = I("nth", a, 1, line, col);
	if (i < 0)
		return v_none();
	for (; p->k == V_CONS; p = p->u.cons.tail, i--)
		if (i == 0)
			return v_some(p->u.cons.head);
	return v_none();
}
BI(b_concat)
{
	value *xs = L("concat", a, 0, line, col), *ys = L("concat", a, 1, line, col);
	struct lb l;
	lb_init(&l);
	for (value *p = xs; p->k == V_CONS; p = p->u.cons.tail)
		lb_push(&l, p->u.cons.head);
	*l.tailp = ys;
	return l.head;
}
BI(b_flatMap)
{
	value *f = a[0], *xs = L("flatMap", a, 1, line, col);
	struct lb l;
	lb_init(&l);
	for (value *p = xs; p->k == V_CONS; p = p->u.cons.tail) {
		value *r = ail_call(f, 1, &p->u.cons.head, line, col);
		if (r->k != V_NIL && r->k != V_CONS)
			ail_fail("RT_TYPE", line, col, "flatMap: the function must return a list, got %s", v_kind_name(r));
		for (value *q = r; q->k == V_CONS; q = q->u.cons.tail)
			lb_push(&l, q->u.cons.head);
	}
	return l.head;
}
BI(b_zip)
{
	value *xs = L("zip", a, 0, line, col), *ys = L("zip", a, 1, line, col);
	struct lb l;
	lb_init(&l);
	for (; xs->k == V_CONS && ys->k == V_CONS; xs = xs->u.cons.tail, ys = ys->u.cons.tail) {
		value **it = ail_alloc(2 * sizeof *it);
		it[0] = xs->u.cons.head;
		it[1] = ys->u.cons.head;
		lb_push(&l, v_tuple(2, it));
	}
	return l.head;
}

/* ---------------- std/option, std/result ---------------- */

static const char *I_Some, *I_None, *I_Ok, *I_Err;
static void onames(void)
{
	if (!I_Some) {
		I_Some = ail_intern("Some", 4);
		I_None = ail_intern("None", 4);
		I_Ok = ail_intern("Ok", 2);
		I_Err = ail_intern("Err", 3);
	}
}
static value *O(const char *fn, value **a, int i, int line, int col)
{
	onames();
	if (a[i]->k != V_CTOR || (a[i]->u.agg.cname != I_Some && a[i]->u.agg.cname != I_None))
		want(fn, i, "an Option", a[i], line, col);
	return a[i];
}
static value *R(const char *fn, value **a, int i, int line, int col)
{
	onames();
	if (a[i]->k != V_CTOR || (a[i]->u.agg.cname != I_Ok && a[i]->u.agg.cname != I_Err))
		want(fn, i, "a Result", a[i], line, col);
	return a[i];
}
BI(b_getOrElse)
{
	value *o = O("getOrElse", a, 0, line, col);
	return o->u.agg.cname == I_Some ? o->u.agg.items[0] : a[1];
}
BI(b_isSome) { return v_bool(O("isSome", a, 0, line, col)->u.agg.cname == I_Some); }
BI(b_isNone) { return v_bool(O("isNone", a, 0, line, col)->u.agg.cname == I_None); }
BI(b_isOk) { return v_bool(R("isOk", a, 0, line, col)->u.agg.cname == I_Ok); }
BI(b_isErr) { return v_bool(R("isErr", a, 0, line, col)->u.agg.cname == I_Err); }

void ail_std_init(void)
{
	/* (re)intern every cached name: ail_reset forgets the intern table */
	I_Some = NULL;
	onames();
	ail_json_init();
}

/* ---------------- table ---------------- */

static const struct builtin table[] = {
	{"prelude", "show", 1, b_show, "(a) -> string", ""},
	{"std/json", "decode", 1, b_decode, "(string) -> Result[Json, string]", ""},
	{"std/json", "encode", 1, b_encode, "(Json) -> string", ""},
	{"std/json", "get", 2, b_get, "(Json, string) -> Option[Json]", ""},
	{"std/json", "has", 2, b_has, "(Json, string) -> bool", ""},
	{"std/json", "asString", 1, b_asString, "(Json) -> Option[string]", ""},
	{"std/json", "asObject", 1, b_asObject, "(Json) -> Option[[{key: string, value: Json}]]", ""},
	{"std/json", "asArray", 1, b_asArray, "(Json) -> Option[[Json]]", ""},
	{"std/json", "asBool", 1, b_asBool, "(Json) -> Option[bool]", ""},
	{"std/json", "asNumber", 1, b_asNumber, "(Json) -> Option[float]", ""},
	{"std/json", "getString", 2, b_getString, "(Json, string) -> Option[string]", ""},
	{"std/json", "getBool", 2, b_getBool, "(Json, string) -> Option[bool]", ""},
	{"std/json", "getInt", 2, b_getInt, "(Json, string) -> Option[int]", ""},
	{"std/json", "getNumber", 2, b_getNumber, "(Json, string) -> Option[float]", ""},
	{"std/json", "getArray", 2, b_getArray, "(Json, string) -> Option[[Json]]", ""},
	{"std/json", "getObject", 2, b_getObject, "(Json, string) -> Option[Json]", ""},
	{"std/json", "keys", 1, b_keys, "(Json) -> [string]", ""},
	{"std/json", "jo", 1, b_jo, "([{key: string, value: Json}]) -> Json", ""},
	{"std/json", "ja", 1, b_ja, "([Json]) -> Json", ""},
	{"std/json", "kv", 2, b_kv, "(string, Json) -> {key: string, value: Json}", ""},
	{"std/json", "js", 1, b_js, "(string) -> Json", ""},
	{"std/json", "jb", 1, b_jb, "(bool) -> Json", ""},
	{"std/json", "jn", 0, b_jn, "() -> Json", ""},
	{"std/json", "jint", 1, b_jint, "(int) -> Json", ""},
	{"std/json", "jnum", 1, b_jnum, "(float) -> Json", ""},
	{"std/string", "length", 1, b_length, "(string) -> int", ""},
	{"std/string", "startsWith", 2, b_startsWith, "(string, string) -> bool", ""},
	{"std/string", "endsWith", 2, b_endsWith, "(string, string) -> bool", ""},
	{"std/string", "contains", 2, b_contains, "(string, string) -> bool", ""},
	{"std/string", "toLower", 1, b_toLower, "(string) -> string", ""},
	{"std/string", "toUpper", 1, b_toUpper, "(string) -> string", ""},
	{"std/string", "trim", 1, b_trim, "(string) -> string", ""},
	{"std/string", "split", 2, b_split, "(string, string) -> [string]", ""},
	{"std/string", "join", 2, b_join, "(string, [string]) -> string", ""},
	{"std/string", "substring", 3, b_substring, "(string, int, int) -> string", ""},
	{"std/string", "find", 2, b_find, "(string, string) -> int", ""},
	{"std/string", "replace", 3, b_replace, "(string, string, string) -> string", ""},
	{"std/string", "stringToInt", 1, b_stringToInt, "(string) -> Option[int]", ""},
	{"std/list", "map", 2, b_map, "(a -> b, [a]) -> [b]", ""},
	{"std/list", "filter", 2, b_filter, "(a -> bool, [a]) -> [a]", ""},
	{"std/list", "take", 2, b_take, "(int, [a]) -> [a]", ""},
	{"std/list", "drop", 2, b_drop, "(int, [a]) -> [a]", ""},
	{"std/list", "length", 1, b_length, "([a]) -> int", ""},
	{"std/list", "any", 2, b_any, "(a -> bool, [a]) -> bool", ""},
	{"std/list", "all", 2, b_all, "(a -> bool, [a]) -> bool", ""},
	{"std/list", "foldl", 3, b_foldl, "((b, a) -> b, b, [a]) -> b", ""},
	{"std/list", "foldr", 3, b_foldr, "((a, b) -> b, b, [a]) -> b", ""},
	{"std/list", "reverse", 1, b_reverse, "([a]) -> [a]", ""},
	{"std/list", "head", 1, b_head, "([a]) -> Option[a]", ""},
	{"std/list", "tail", 1, b_tail, "([a]) -> [a]", ""},
	{"std/list", "nth", 2, b_nth, "([a], int) -> Option[a]", ""},
	{"std/list", "concat", 2, b_concat, "([a], [a]) -> [a]", ""},
	{"std/list", "flatMap", 2, b_flatMap, "(a -> [b], [a]) -> [b]", ""},
	{"std/list", "zip", 2, b_zip, "([a], [b]) -> [(a, b)]", ""},
	{"std/list", "contains", 2, b_contains, "([a], a) -> bool", ""},
	{"std/option", "getOrElse", 2, b_getOrElse, "(Option[a], a) -> a", ""},
	{"std/option", "isSome", 1, b_isSome, "(Option[a]) -> bool", ""},
	{"std/option", "isNone", 1, b_isNone, "(Option[a]) -> bool", ""},
	{"std/result", "isOk", 1, b_isOk, "(Result[a, e]) -> bool", ""},
	{"std/result", "isErr", 1, b_isErr, "(Result[a, e]) -> bool", ""},
	{"std/bytes", "fromString", 1, b_bytes_fromString, "(string) -> bytes", ""},
	{"std/bytes", "toInts", 1, b_bytes_toInts, "(bytes) -> [int]", ""},
	{"std/bytes", "length", 1, b_bytes_length, "(bytes) -> int", ""},
	{NULL, NULL, 0, NULL, NULL, NULL},
};

const struct builtin *ail_builtin_find(const char *module, const char *name)
{
	for (int i = 0; table[i].name; i++)
		if (strcmp(table[i].module, module) == 0 && strcmp(table[i].name, name) == 0)
			return &table[i];
	return NULL;
}

const struct builtin *ail_builtin_get(int id)
{
	if (id < 0 || id >= (int)(sizeof table / sizeof table[0]) - 1)
		return NULL;
	return &table[id];
}

int ail_builtin_id(const struct builtin *b) { return (int)(b - table); }

int ail_std_module_known(const char *path)
{
	return strcmp(path, "std/json") == 0 || strcmp(path, "std/string") == 0 ||
	       strcmp(path, "std/list") == 0 || strcmp(path, "std/option") == 0 ||
	       strcmp(path, "std/result") == 0 || strcmp(path, "std/bytes") == 0;
}

int ail_builtin_ctor_arity(const char *name)
{
	static const struct { const char *n; int a; } cs[] = {
		{"Some", 1}, {"None", 0}, {"Ok", 1}, {"Err", 1}, {"JNull", 0}, {"JBool", 1},
		{"JNumber", 1}, {"JString", 1}, {"JArray", 1}, {"JObject", 1},
	};
	for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++)
		if (strcmp(cs[i].n, name) == 0)
			return cs[i].a;
	return -1;
}
