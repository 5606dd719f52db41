/* common/canon.c: see canon.h. A small recursive-descent parser that emits
 * canonical bytes directly; objects collect their members, sort them and
 * detect duplicates before emitting. jansson is used only for the json_t
 * entry points (it cannot keep arbitrary-precision numbers, so the byte path
 * does not go through it). */
#include "common/canon.h"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct buf {
	char *p;
	size_t len, cap;
	int oom;
};

static void buf_reserve(struct buf *b, size_t more)
{
	if (b->oom) return;
	if (b->len + more + 1 <= b->cap) return;
	size_t cap = b->cap ? b->cap : 64;
	while (cap < b->len + more + 1) cap *= 2;
	char *p = realloc(b->p, cap);
	if (!p) { b->oom = 1; return; }
	b->p = p;
	b->cap = cap;
}

static void buf_put(struct buf *b, const void *s, size_t n)
{
	buf_reserve(b, n);
	if (b->oom) return;
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static void buf_putc(struct buf *b, char c) { buf_put(b, &c, 1); }

size_t world_utf8_seq(const unsigned char *s, size_t n)
{
	if (n == 0) return 0;
	unsigned char c = s[0];
	if (c < 0x80) return 1;
	size_t need;
	unsigned char lo = 0x80, hi = 0xBF;
	if (c >= 0xC2 && c <= 0xDF) need = 1;
	else if (c == 0xE0) { need = 2; lo = 0xA0; }
	else if (c >= 0xE1 && c <= 0xEC) need = 2;
	else if (c == 0xED) { need = 2; hi = 0x9F; } /* no UTF-16 surrogates */
	else if (c >= 0xEE && c <= 0xEF) need = 2;
	else if (c == 0xF0) { need = 3; lo = 0x90; }
	else if (c >= 0xF1 && c <= 0xF3) need = 3;
	else if (c == 0xF4) { need = 3; hi = 0x8F; } /* nothing above U+10FFFF */
	else return 0;
	if (n < need + 1) return 0;
	if (s[1] < lo || s[1] > hi) return 0;
	for (size_t i = 2; i <= need; i++)
		if (s[i] < 0x80 || s[i] > 0xBF) return 0;
	return need + 1;
}

struct parser {
	const unsigned char *s;
	size_t n, pos;
	struct world_err *err;
	int failed;
};

static int perr(struct parser *p, size_t at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int perr(struct parser *p, size_t at, const char *fmt, ...)
{
	if (p->failed) return -1;
	p->failed = 1;
	char msg[600];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return werr(p->err, WX_BAD_INPUT, "canonical JSON: byte %zu: %s", at, msg);
}

static void skip_ws(struct parser *p)
{
	while (p->pos < p->n) {
		unsigned char c = p->s[p->pos];
		if (c == ' ' || c == '\t' || c == '\n' || c == '\r') p->pos++;
		else break;
	}
}

static int parse_value(struct parser *p, struct buf *out, int depth);

/* Emit raw string bytes (already valid UTF-8) in canonical escaped form. */
static void emit_string(struct buf *out, const unsigned char *s, size_t n)
{
	buf_putc(out, '"');
	size_t run = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = s[i];
		const char *esc = NULL;
		char u[7];
		switch (c) {
		case '"': esc = "\\\""; break;
		case '\\': esc = "\\\\"; break;
		case '\b': esc = "\\b"; break;
		case '\t': esc = "\\t"; break;
		case '\n': esc = "\\n"; break;
		case '\f': esc = "\\f"; break;
		case '\r': esc = "\\r"; break;
		default:
			if (c < 0x20) {
				snprintf(u, sizeof u, "\\u%04x", c);
				esc = u;
			}
		}
		if (esc) {
			buf_put(out, s + run, i - run);
			buf_put(out, esc, strlen(esc));
			run = i + 1;
		}
	}
	buf_put(out, s + run, n - run);
	buf_putc(out, '"');
}

static int hex4(struct parser *p, size_t at, unsigned *v)
{
	if (p->pos + 4 > p->n) return perr(p, at, "truncated \\u escape");
	unsigned x = 0;
	for (int i = 0; i < 4; i++) {
		unsigned char c = p->s[p->pos + (size_t)i];
		unsigned d;
		if (c >= '0' && c <= '9') d = c - '0';
		else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
		else return perr(p, p->pos + (size_t)i, "bad hex digit in \\u escape");
		x = x * 16 + d;
	}
	p->pos += 4;
	*v = x;
	return 0;
}

static void put_utf8(struct buf *b, unsigned cp)
{
	char u[4];
	size_t n;
	if (cp < 0x80) { u[0] = (char)cp; n = 1; }
	else if (cp < 0x800) { u[0] = (char)(0xC0 | (cp >> 6)); u[1] = (char)(0x80 | (cp & 0x3F)); n = 2; }
	else if (cp < 0x10000) {
		u[0] = (char)(0xE0 | (cp >> 12)); u[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
		u[2] = (char)(0x80 | (cp & 0x3F)); n = 3;
	} else {
		u[0] = (char)(0xF0 | (cp >> 18)); u[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
		u[2] = (char)(0x80 | ((cp >> 6) & 0x3F)); u[3] = (char)(0x80 | (cp & 0x3F)); n = 4;
	}
	buf_put(b, u, n);
}

/* Parse a string at p->pos (which is '"'); decoded bytes go to dec. */
static int parse_string(struct parser *p, struct buf *dec)
{
	size_t start = p->pos;
	p->pos++;
	for (;;) {
		if (p->pos >= p->n) return perr(p, start, "unterminated string");
		unsigned char c = p->s[p->pos];
		if (c == '"') { p->pos++; return 0; }
		if (c < 0x20) return perr(p, p->pos, "raw control character 0x%02x in string", c);
		if (c == '\\') {
			size_t at = p->pos;
			if (p->pos + 1 >= p->n) return perr(p, at, "truncated escape");
			unsigned char e = p->s[p->pos + 1];
			p->pos += 2;
			switch (e) {
			case '"': buf_putc(dec, '"'); break;
			case '\\': buf_putc(dec, '\\'); break;
			case '/': buf_putc(dec, '/'); break;
			case 'b': buf_putc(dec, '\b'); break;
			case 'f': buf_putc(dec, '\f'); break;
			case 'n': buf_putc(dec, '\n'); break;
			case 'r': buf_putc(dec, '\r'); break;
			case 't': buf_putc(dec, '\t'); break;
			case 'u': {
				unsigned cp;
				if (hex4(p, at, &cp) < 0) return -1;
				if (cp >= 0xDC00 && cp <= 0xDFFF)
					return perr(p, at, "escaped lone low surrogate \\u%04x", cp);
				if (cp >= 0xD800 && cp <= 0xDBFF) {
					unsigned lo;
					if (p->pos + 2 > p->n || p->s[p->pos] != '\\' || p->s[p->pos + 1] != 'u')
						return perr(p, at, "escaped lone high surrogate \\u%04x", cp);
					p->pos += 2;
					if (hex4(p, at, &lo) < 0) return -1;
					if (lo < 0xDC00 || lo > 0xDFFF)
						return perr(p, at, "escaped lone high surrogate \\u%04x", cp);
					cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
				}
				put_utf8(dec, cp);
				break;
			}
			default:
				return perr(p, at, "unknown escape \\%c", e >= 0x20 && e < 0x7f ? e : '?');
			}
			continue;
		}
		size_t k = world_utf8_seq(p->s + p->pos, p->n - p->pos);
		if (k == 0) return perr(p, p->pos, "invalid UTF-8 byte 0x%02x", c);
		buf_put(dec, p->s + p->pos, k);
		p->pos += k;
	}
}

/* Numbers: value = digits * 10^exp; normalised to plain decimal. */
static int parse_number(struct parser *p, struct buf *out)
{
	size_t start = p->pos;
	int neg = 0;
	if (p->s[p->pos] == '-') { neg = 1; p->pos++; }
	if (p->pos >= p->n || p->s[p->pos] < '0' || p->s[p->pos] > '9')
		return perr(p, start, "invalid number");
	struct buf dig = {0};
	long long fraclen = 0;
	if (p->s[p->pos] == '0') {
		p->pos++;
		if (p->pos < p->n && p->s[p->pos] >= '0' && p->s[p->pos] <= '9') {
			free(dig.p);
			return perr(p, start, "number with a leading zero");
		}
	} else {
		while (p->pos < p->n && p->s[p->pos] >= '0' && p->s[p->pos] <= '9') {
			/* leading zeros of the digit string are skipped as we go */
			if (!(dig.len == 0 && p->s[p->pos] == '0')) buf_putc(&dig, (char)p->s[p->pos]);
			p->pos++;
		}
	}
	if (p->pos < p->n && p->s[p->pos] == '.') {
		p->pos++;
		if (p->pos >= p->n || p->s[p->pos] < '0' || p->s[p->pos] > '9') {
			free(dig.p);
			return perr(p, start, "number with no digits after the decimal point");
		}
		while (p->pos < p->n && p->s[p->pos] >= '0' && p->s[p->pos] <= '9') {
			if (!(dig.len == 0 && p->s[p->pos] == '0')) buf_putc(&dig, (char)p->s[p->pos]);
			fraclen++;
			p->pos++;
		}
	}
	long long ex = 0;
	if (p->pos < p->n && (p->s[p->pos] == 'e' || p->s[p->pos] == 'E')) {
		p->pos++;
		int eneg = 0;
		if (p->pos < p->n && (p->s[p->pos] == '+' || p->s[p->pos] == '-')) {
			eneg = p->s[p->pos] == '-';
			p->pos++;
		}
		if (p->pos >= p->n || p->s[p->pos] < '0' || p->s[p->pos] > '9') {
			free(dig.p);
			return perr(p, start, "number with no digits in its exponent");
		}
		while (p->pos < p->n && p->s[p->pos] >= '0' && p->s[p->pos] <= '9') {
			ex = ex * 10 + (p->s[p->pos] - '0');
			if (ex > WORLD_CANON_MAX_EXP) {
				free(dig.p);
				return perr(p, start, "number exponent beyond the limit of %d", WORLD_CANON_MAX_EXP);
			}
			p->pos++;
		}
		if (eneg) ex = -ex;
	}
	if (dig.oom) { free(dig.p); return perr(p, start, "out of memory"); }
	/* every zero is written 0 (no sign) */
	if (dig.len == 0) {
		free(dig.p);
		buf_putc(out, '0');
		return 0;
	}
	/* strip trailing zeros of the digit string into the exponent */
	long long e10 = ex - fraclen;
	while (dig.len > 0 && dig.p[dig.len - 1] == '0') { dig.len--; e10++; }
	long long nd = (long long)dig.len;
	long long total = e10 >= 0 ? nd + e10 : (nd > -e10 ? nd : -e10 + 1);
	if (total > WORLD_CANON_MAX_DIGITS) {
		free(dig.p);
		return perr(p, start, "number needs %lld digits as a plain decimal, beyond the limit of %d", total,
		            WORLD_CANON_MAX_DIGITS);
	}
	if (neg) buf_putc(out, '-');
	if (e10 >= 0) {
		buf_put(out, dig.p, dig.len);
		for (long long i = 0; i < e10; i++) buf_putc(out, '0');
	} else if (nd > -e10) {
		buf_put(out, dig.p, (size_t)(nd + e10));
		buf_putc(out, '.');
		buf_put(out, dig.p + (nd + e10), (size_t)(-e10));
	} else {
		buf_put(out, "0.", 2);
		for (long long i = 0; i < -e10 - nd; i++) buf_putc(out, '0');
		buf_put(out, dig.p, dig.len);
	}
	free(dig.p);
	return 0;
}

struct member {
	char *key;      /* decoded bytes */
	size_t klen;
	size_t at;      /* byte offset of the key in the input */
	char *val;      /* canonical value bytes */
	size_t vlen;
};

static int member_cmp(const void *a, const void *b)
{
	const struct member *x = a, *y = b;
	size_t n = x->klen < y->klen ? x->klen : y->klen;
	int c = memcmp(x->key, y->key, n);
	if (c) return c;
	if (x->klen != y->klen) return x->klen < y->klen ? -1 : 1;
	/* equal keys: order by position so the later duplicate is reported */
	return x->at < y->at ? -1 : (x->at > y->at);
}

static void free_members(struct member *m, size_t n)
{
	for (size_t i = 0; i < n; i++) { free(m[i].key); free(m[i].val); }
	free(m);
}

static int parse_object(struct parser *p, struct buf *out, int depth)
{
	size_t start = p->pos;
	p->pos++;
	struct member *m = NULL;
	size_t n = 0, cap = 0;
	skip_ws(p);
	if (p->pos < p->n && p->s[p->pos] == '}') {
		p->pos++;
		buf_put(out, "{}", 2);
		return 0;
	}
	for (;;) {
		skip_ws(p);
		if (p->pos >= p->n) { perr(p, start, "unterminated object"); goto fail; }
		if (p->s[p->pos] != '"') { perr(p, p->pos, "expected a string key"); goto fail; }
		if (n == cap) {
			cap = cap ? cap * 2 : 8;
			struct member *nm = realloc(m, cap * sizeof *m);
			if (!nm) { perr(p, p->pos, "out of memory"); goto fail; }
			m = nm;
		}
		struct buf kb = {0}, vb = {0};
		size_t at = p->pos;
		if (parse_string(p, &kb) < 0) { free(kb.p); goto fail; }
		skip_ws(p);
		if (p->pos >= p->n || p->s[p->pos] != ':') {
			free(kb.p);
			perr(p, p->pos, "expected ':' after object key");
			goto fail;
		}
		p->pos++;
		skip_ws(p);
		if (parse_value(p, &vb, depth + 1) < 0) { free(kb.p); free(vb.p); goto fail; }
		if (kb.oom || vb.oom) { free(kb.p); free(vb.p); perr(p, at, "out of memory"); goto fail; }
		m[n].key = kb.p ? kb.p : strdup("");
		m[n].klen = kb.len;
		m[n].at = at;
		m[n].val = vb.p;
		m[n].vlen = vb.len;
		n++;
		skip_ws(p);
		if (p->pos >= p->n) { perr(p, start, "unterminated object"); goto fail; }
		if (p->s[p->pos] == ',') { p->pos++; continue; }
		if (p->s[p->pos] == '}') { p->pos++; break; }
		perr(p, p->pos, "expected ',' or '}' in object");
		goto fail;
	}
	qsort(m, n, sizeof *m, member_cmp);
	for (size_t i = 1; i < n; i++)
		if (m[i].klen == m[i - 1].klen && memcmp(m[i].key, m[i - 1].key, m[i].klen) == 0) {
			struct buf shown = {0};
			emit_string(&shown, (const unsigned char *)m[i].key, m[i].klen);
			perr(p, m[i].at, "duplicate key %.200s", shown.p ? shown.p : "");
			free(shown.p);
			goto fail;
		}
	buf_putc(out, '{');
	for (size_t i = 0; i < n; i++) {
		if (i) buf_putc(out, ',');
		emit_string(out, (const unsigned char *)m[i].key, m[i].klen);
		buf_putc(out, ':');
		buf_put(out, m[i].val, m[i].vlen);
	}
	buf_putc(out, '}');
	free_members(m, n);
	return 0;
fail:
	free_members(m, n);
	return -1;
}

static int parse_array(struct parser *p, struct buf *out, int depth)
{
	size_t start = p->pos;
	p->pos++;
	buf_putc(out, '[');
	skip_ws(p);
	if (p->pos < p->n && p->s[p->pos] == ']') {
		p->pos++;
		buf_putc(out, ']');
		return 0;
	}
	for (int first = 1;; first = 0) {
		skip_ws(p);
		if (!first) buf_putc(out, ',');
		if (parse_value(p, out, depth + 1) < 0) return -1;
		skip_ws(p);
		if (p->pos >= p->n) return perr(p, start, "unterminated array");
		if (p->s[p->pos] == ',') { p->pos++; continue; }
		if (p->s[p->pos] == ']') { p->pos++; break; }
		return perr(p, p->pos, "expected ',' or ']' in array");
	}
	buf_putc(out, ']');
	return 0;
}

static int parse_literal(struct parser *p, struct buf *out, const char *lit)
{
	size_t n = strlen(lit);
	if (p->n - p->pos < n || memcmp(p->s + p->pos, lit, n) != 0)
		return perr(p, p->pos, "invalid literal");
	p->pos += n;
	buf_put(out, lit, n);
	return 0;
}

static int parse_value(struct parser *p, struct buf *out, int depth)
{
	if (depth > WORLD_CANON_MAX_DEPTH)
		return perr(p, p->pos, "nesting deeper than the limit of %d", WORLD_CANON_MAX_DEPTH);
	skip_ws(p);
	if (p->pos >= p->n) return perr(p, p->pos, "unexpected end of input, expected a value");
	unsigned char c = p->s[p->pos];
	switch (c) {
	case '{': return parse_object(p, out, depth);
	case '[': return parse_array(p, out, depth);
	case '"': {
		struct buf dec = {0};
		if (parse_string(p, &dec) < 0) { free(dec.p); return -1; }
		emit_string(out, (const unsigned char *)(dec.p ? dec.p : ""), dec.len);
		free(dec.p);
		return 0;
	}
	case 't': return parse_literal(p, out, "true");
	case 'f': return parse_literal(p, out, "false");
	case 'n': return parse_literal(p, out, "null");
	default:
		if (c == '-' || (c >= '0' && c <= '9')) return parse_number(p, out);
		if (c == 0xEF && p->pos + 2 < p->n && p->s[p->pos + 1] == 0xBB && p->s[p->pos + 2] == 0xBF)
			return perr(p, p->pos, "byte order mark refused");
		if (c >= 0x20 && c < 0x7f) return perr(p, p->pos, "unexpected character '%c'", c);
		return perr(p, p->pos, "unexpected byte 0x%02x", c);
	}
}

char *world_canon_bytes(const char *in, size_t len, size_t *out_len, struct world_err *err)
{
	struct parser p = { (const unsigned char *)in, len, 0, err, 0 };
	struct buf out = {0};
	if (parse_value(&p, &out, 0) < 0) { free(out.p); return NULL; }
	skip_ws(&p);
	if (p.pos != p.n) {
		perr(&p, p.pos, "trailing data after the JSON value");
		free(out.p);
		return NULL;
	}
	if (out.oom) {
		free(out.p);
		werr(err, WX_FAIL, "canonical JSON: out of memory");
		return NULL;
	}
	if (out_len) *out_len = out.len;
	return out.p;
}

/* ---- world_canon_is_canonical: the bytes checked in place ----
 *
 * Canonical bytes are exactly what world_canon_bytes writes, so instead of
 * parsing, writing and comparing (an allocation per string and member), the
 * check reads the input once against the form it writes: no whitespace;
 * strings with only emit_string's escapes (\" \\ \b \t \n \f \r, and
 * \u00xx lowercase for the other control characters) around valid raw
 * UTF-8; object keys strictly increasing by their decoded bytes (member_cmp:
 * equal keys are a duplicate, refused); numbers in parse_number's plain
 * forms (0, -?[1-9][0-9]*, -?[1-9][0-9]*.[0-9]*[1-9], -?0.[0-9]*[1-9]) of
 * at most WORLD_CANON_MAX_DIGITS digits; the depth limit as parse_value
 * counts it; nothing after the value. tests/store/test_canon compares it
 * with the write-and-compare definition on every input it has. */
struct cchk {
	const unsigned char *s;
	size_t n, pos;
};

static int cc_value(struct cchk *c, int depth);

static int cc_hex(unsigned char h)
{
	return h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10 : -1;
}

/* a canonical string at c->pos (its '"'); 0, or -1 when not canonical */
static int cc_string(struct cchk *c)
{
	c->pos++;
	for (;;) {
		if (c->pos >= c->n) return -1;
		unsigned char ch = c->s[c->pos];
		if (ch == '"') {
			c->pos++;
			return 0;
		}
		if (ch < 0x20) return -1;
		if (ch == '\\') {
			if (c->pos + 1 >= c->n) return -1;
			switch (c->s[c->pos + 1]) {
			case '"': case '\\': case 'b': case 't': case 'n': case 'f': case 'r':
				c->pos += 2;
				continue;
			case 'u': {
				if (c->n - c->pos < 6) return -1;
				const unsigned char *u = c->s + c->pos + 2;
				int lo = cc_hex(u[3]);
				if (u[0] != '0' || u[1] != '0' || (u[2] != '0' && u[2] != '1') || lo < 0) return -1;
				int v = (u[2] - '0') * 16 + lo;
				if (v == '\b' || v == '\t' || v == '\n' || v == '\f' || v == '\r') return -1;
				c->pos += 6;
				continue;
			}
			default:
				return -1;
			}
		}
		if (ch < 0x80) {
			c->pos++;
			continue;
		}
		size_t k = world_utf8_seq(c->s + c->pos, c->n - c->pos);
		if (!k) return -1;
		c->pos += k;
	}
}

/* the next decoded byte of a canonical string's contents s[*i..end), -1 at its end */
static int cc_byte(const unsigned char *s, size_t *i, size_t end)
{
	if (*i >= end) return -1;
	unsigned char ch = s[(*i)++];
	if (ch != '\\') return ch;
	unsigned char e = s[(*i)++];
	switch (e) {
	case 'b': return '\b';
	case 't': return '\t';
	case 'n': return '\n';
	case 'f': return '\f';
	case 'r': return '\r';
	case 'u': {
		int v = (s[*i + 2] - '0') * 16 + cc_hex(s[*i + 3]);
		*i += 4;
		return v;
	}
	default: return e; /* \" and \\ */
	}
}

/* member_cmp on two keys' contents, decoded: <0, 0 (the same key) or >0 */
static int cc_key_cmp(const unsigned char *s, size_t a, size_t ae, size_t b, size_t be)
{
	for (;;) {
		int x = cc_byte(s, &a, ae), y = cc_byte(s, &b, be);
		if (x != y) return x < y ? -1 : 1; /* the shorter (-1) first */
		if (x < 0) return 0;
	}
}

static int cc_number(struct cchk *c)
{
	const unsigned char *s = c->s;
	size_t n = c->n, digits = 0;
	int neg = s[c->pos] == '-';
	if (neg) c->pos++;
	if (c->pos >= n || s[c->pos] < '0' || s[c->pos] > '9') return -1;
	int zero = s[c->pos] == '0';
	while (c->pos < n && s[c->pos] >= '0' && s[c->pos] <= '9') {
		c->pos++;
		digits++;
	}
	if (zero && digits > 1) return -1; /* a leading zero */
	if (c->pos < n && s[c->pos] == '.') {
		c->pos++;
		size_t f0 = c->pos;
		while (c->pos < n && s[c->pos] >= '0' && s[c->pos] <= '9') c->pos++;
		if (c->pos == f0 || s[c->pos - 1] == '0') return -1; /* no digits, or a trailing zero */
		digits += c->pos - f0;
	} else if (zero && neg) {
		return -1; /* -0 is written 0 */
	}
	if (c->pos < n && (s[c->pos] == 'e' || s[c->pos] == 'E')) return -1;
	return digits <= WORLD_CANON_MAX_DIGITS ? 0 : -1;
}

static int cc_literal(struct cchk *c, const char *lit, size_t len)
{
	if (c->n - c->pos < len || memcmp(c->s + c->pos, lit, len) != 0) return -1;
	c->pos += len;
	return 0;
}

static int cc_value(struct cchk *c, int depth)
{
	if (depth > WORLD_CANON_MAX_DEPTH || c->pos >= c->n) return -1;
	switch (c->s[c->pos]) {
	case '{': {
		c->pos++;
		if (c->pos < c->n && c->s[c->pos] == '}') {
			c->pos++;
			return 0;
		}
		size_t pk = 0, pke = 0;
		for (int first = 1;; first = 0) {
			if (c->pos >= c->n || c->s[c->pos] != '"') return -1;
			size_t k = c->pos + 1;
			if (cc_string(c) < 0) return -1;
			size_t ke = c->pos - 1;
			if (!first && cc_key_cmp(c->s, pk, pke, k, ke) >= 0) return -1;
			pk = k;
			pke = ke;
			if (c->pos >= c->n || c->s[c->pos] != ':') return -1;
			c->pos++;
			if (cc_value(c, depth + 1) < 0 || c->pos >= c->n) return -1;
			if (c->s[c->pos] == '}') {
				c->pos++;
				return 0;
			}
			if (c->s[c->pos++] != ',') return -1;
		}
	}
	case '[':
		c->pos++;
		if (c->pos < c->n && c->s[c->pos] == ']') {
			c->pos++;
			return 0;
		}
		for (;;) {
			if (cc_value(c, depth + 1) < 0 || c->pos >= c->n) return -1;
			if (c->s[c->pos] == ']') {
				c->pos++;
				return 0;
			}
			if (c->s[c->pos++] != ',') return -1;
		}
	case '"': return cc_string(c);
	case 't': return cc_literal(c, "true", 4);
	case 'f': return cc_literal(c, "false", 5);
	case 'n': return cc_literal(c, "null", 4);
	default: return cc_number(c);
	}
}

int world_canon_is_canonical(const char *in, size_t len)
{
	struct cchk c = { (const unsigned char *)in, len, 0 };
	return in && cc_value(&c, 0) == 0 && c.pos == len;
}

/* Write v as (not yet canonical) JSON text; keys keep jansson's order. */
static int emit_json(const json_t *v, struct buf *out, int depth, struct world_err *err)
{
	if (depth > WORLD_CANON_MAX_DEPTH)
		return werr(err, WX_BAD_INPUT, "canonical JSON: nesting deeper than the limit of %d", WORLD_CANON_MAX_DEPTH);
	switch (json_typeof(v)) {
	case JSON_OBJECT: {
		buf_putc(out, '{');
		int first = 1;
		for (void *it = json_object_iter((json_t *)v); it; it = json_object_iter_next((json_t *)v, it)) {
			if (!first) buf_putc(out, ',');
			first = 0;
			emit_string(out, (const unsigned char *)json_object_iter_key(it), json_object_iter_key_len(it));
			buf_putc(out, ':');
			if (emit_json(json_object_iter_value(it), out, depth + 1, err) < 0) return -1;
		}
		buf_putc(out, '}');
		return 0;
	}
	case JSON_ARRAY:
		buf_putc(out, '[');
		for (size_t i = 0; i < json_array_size(v); i++) {
			if (i) buf_putc(out, ',');
			if (emit_json(json_array_get(v, i), out, depth + 1, err) < 0) return -1;
		}
		buf_putc(out, ']');
		return 0;
	case JSON_STRING: {
		const unsigned char *s = (const unsigned char *)json_string_value(v);
		size_t n = json_string_length(v);
		for (size_t i = 0; i < n;) {
			size_t k = world_utf8_seq(s + i, n - i);
			if (!k) return werr(err, WX_BAD_INPUT, "canonical JSON: string holds invalid UTF-8");
			i += k;
		}
		emit_string(out, s, n);
		return 0;
	}
	case JSON_INTEGER: {
		char t[32];
		snprintf(t, sizeof t, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		buf_put(out, t, strlen(t));
		return 0;
	}
	case JSON_REAL: {
		double d = json_real_value(v);
		if (!isfinite(d)) return werr(err, WX_BAD_INPUT, "canonical JSON: number is not finite");
		char t[40];
		/* shortest digits that read back as the same double */
		for (int prec = 1; prec <= 17; prec++) {
			snprintf(t, sizeof t, "%.*e", prec - 1, d);
			if (strtod(t, NULL) == d) break;
		}
		buf_put(out, t, strlen(t));
		return 0;
	}
	case JSON_TRUE: buf_put(out, "true", 4); return 0;
	case JSON_FALSE: buf_put(out, "false", 5); return 0;
	case JSON_NULL: buf_put(out, "null", 4); return 0;
	}
	return werr(err, WX_BAD_INPUT, "canonical JSON: unknown jansson type");
}

char *world_canon_json(const json_t *v, size_t *out_len, struct world_err *err)
{
	if (!v) { werr(err, WX_BAD_INPUT, "canonical JSON: no value"); return NULL; }
	struct buf text = {0};
	if (emit_json(v, &text, 0, err) < 0) { free(text.p); return NULL; }
	if (text.oom) { free(text.p); werr(err, WX_FAIL, "canonical JSON: out of memory"); return NULL; }
	char *c = world_canon_bytes(text.p ? text.p : "", text.len, out_len, err);
	free(text.p);
	return c;
}

json_t *world_json_parse(const char *in, size_t len, struct world_err *err)
{
	size_t n;
	char *c = world_canon_bytes(in, len, &n, err);
	if (!c) return NULL;
	json_error_t je;
	json_t *v = json_loadb(c, n, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &je);
	free(c);
	if (!v) werr(err, WX_BAD_INPUT, "JSON: %s", je.text);
	return v;
}

char *world_canon_source(const char *in, size_t len, size_t *out_len, struct world_err *err)
{
	const unsigned char *s = (const unsigned char *)in;
	if (len >= 3 && s[0] == 0xEF && s[1] == 0xBB && s[2] == 0xBF) {
		werr(err, WX_BAD_INPUT, "transition source: byte 0: byte order mark refused");
		return NULL;
	}
	for (size_t i = 0; i < len;) {
		if (s[i] == 0) {
			werr(err, WX_BAD_INPUT, "transition source: byte %zu: NUL byte refused", i);
			return NULL;
		}
		size_t k = world_utf8_seq(s + i, len - i);
		if (!k) {
			werr(err, WX_BAD_INPUT, "transition source: byte %zu: invalid UTF-8", i);
			return NULL;
		}
		i += k;
	}
	struct buf out = {0};
	size_t keep = 0; /* length of out up to the last non-blank line's LF */
	size_t i = 0;
	while (i < len) {
		size_t j = i;
		while (j < len && s[j] != '\n' && s[j] != '\r') j++;
		size_t e = j;
		while (e > i && (s[e - 1] == ' ' || s[e - 1] == '\t')) e--;
		buf_put(&out, s + i, e - i);
		buf_putc(&out, '\n');
		if (e > i) keep = out.len;
		if (j < len && s[j] == '\r' && j + 1 < len && s[j + 1] == '\n') j++;
		i = j + 1;
	}
	if (out.oom) { free(out.p); werr(err, WX_FAIL, "transition source: out of memory"); return NULL; }
	if (keep == 0) {
		free(out.p);
		werr(err, WX_BAD_INPUT, "transition source: empty (only blank lines)");
		return NULL;
	}
	out.len = keep;
	out.p[keep] = '\0';
	if (out_len) *out_len = out.len;
	return out.p;
}
