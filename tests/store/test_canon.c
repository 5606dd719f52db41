/* tests/store/test_canon.c: canonical JSON vectors, source canonicalisation
 * and strict ref parsing (docs/design.md §6.1, §6.2). */
#include "common/canon.h"
#include "common/ref.h"
#include "tests/tap.h"
#include <stdlib.h>
#include <string.h>

/* in -> want (want NULL = refused, then err_has must appear in the message) */
static void vec(const char *in, size_t inlen, const char *want, const char *err_has)
{
	struct world_err err = {0};
	size_t n = 0;
	char *c = world_canon_bytes(in, inlen, &n, &err);
	if (want) {
		if (!c) diag("error: %s", err.msg);
		is_str(c ? c : "(refused)", want, "canon %.*s", (int)(inlen > 60 ? 60 : inlen), in);
		ok(c && n == strlen(want), "canon length of %.40s", want);
		/* canonical output is a fixed point */
		if (c) ok(world_canon_is_canonical(c, n), "canon of %.40s is canonical", want);
	} else {
		ok(!c && err.code == WX_BAD_INPUT, "refused: %.*s", (int)(inlen > 60 ? 60 : inlen), in);
		ok(err_has && strstr(err.msg, err_has) != NULL, "message for %.30s names '%s' (%s)", in, err_has, err.msg);
	}
	free(c);
}
#define V(in, want) vec(in, sizeof(in) - 1, want, NULL)
#define R(in, has) vec(in, sizeof(in) - 1, NULL, has)

/* ---- world_canon_is_canonical against its definition ---- */

static unsigned long long rng = 0x9e3779b97f4a7c15ULL;
static unsigned rnd(unsigned n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned)(rng % n);
}

/* a random JSON text, mostly near canonical form */
struct gtext { char b[4096]; size_t n; };
static void gen(struct gtext *t, int depth)
{
	static const char *const atoms[] = {
		"0", "-0", "1", "-1", "10", "100", "01", "1.5", "1.50", "0.5", "-0.5", "0.05", "0.0", "1e2", "1E2",
		"12.25", "-12.025", "0.", ".5", "-", "true", "false", "null", "nul", "\"\"", "\"a\"", "\"b\"",
		"\"ab\"", "\"\\n\"", "\"\\u000a\"", "\"\\u001f\"", "\"\\u001F\"", "\"\\u0041\"", "\"\\/\"",
		"\"/\"", "\"\\\\\"", "\"\\\"\"", "\"\\b\\f\\r\\t\"", "\"\\u0000\"", "\"\xc3\xa9\"",
		"\"\xed\xa0\x80\"", "\"\xff\"", "\"\x7f\"", "\"\\ud83d\\ude00\"", "\"\xf0\x9f\x98\x80\"",
		"12345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901",
		"1234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890",
	};
	static const char *const keys[] = { "\"\"", "\"a\"", "\"b\"", "\"ab\"", "\"\\\"\"", "\"\\\\\"",
		                            "\"\\u0001\"", "\"\\b\"", "\"A\"", "\"\xc3\xa9\"", "\"a\\u0000\"" };
#define PUT(str) do { const char *s_ = (str); size_t l_ = strlen(s_); if (t->n + l_ < sizeof t->b) { memcpy(t->b + t->n, s_, l_); t->n += l_; } } while (0)
	unsigned k = depth > 4 ? 0 : rnd(10);
	if (k < 6) {
		PUT(atoms[rnd(sizeof atoms / sizeof *atoms)]);
	} else if (k < 8) {
		PUT("[");
		unsigned m = rnd(4);
		for (unsigned i = 0; i < m; i++) {
			if (i) PUT(rnd(20) ? "," : " ,");
			gen(t, depth + 1);
		}
		PUT("]");
	} else {
		PUT("{");
		unsigned m = rnd(4);
		for (unsigned i = 0; i < m; i++) {
			if (i) PUT(",");
			PUT(keys[rnd(sizeof keys / sizeof *keys)]);
			PUT(rnd(30) ? ":" : ": ");
			gen(t, depth + 1);
		}
		PUT("}");
	}
#undef PUT
}

static int canonical_by_definition(const char *in, size_t n)
{
	size_t cn = 0;
	char *c = world_canon_bytes(in, n, &cn, NULL);
	int same = c && cn == n && memcmp(c, in, n) == 0;
	free(c);
	return same;
}

static void canonical_check_agrees(void)
{
	long long yes = 0, no = 0, differ = 0;
	struct gtext t;
	for (int round = 0; round < 200000; round++) {
		t.n = 0;
		gen(&t, 0);
		/* a third: the canonical form of what was generated, or a mutation of it */
		if (round % 3) {
			size_t cn;
			char *c = world_canon_bytes(t.b, t.n, &cn, NULL);
			if (c && cn < sizeof t.b) {
				memcpy(t.b, c, cn);
				t.n = cn;
				if (round % 3 == 2 && t.n) {
					size_t at = rnd((unsigned)t.n);
					static const char bytes[] = "{}[]\",:0123456789.-eE\\u \x01\x80\xc3";
					switch (rnd(3)) {
					case 0: t.b[at] = bytes[rnd(sizeof bytes - 1)]; break;
					case 1: memmove(t.b + at, t.b + at + 1, t.n - at - 1); t.n--; break;
					default:
						if (t.n + 1 < sizeof t.b) {
							memmove(t.b + at + 1, t.b + at, t.n - at);
							t.b[at] = bytes[rnd(sizeof bytes - 1)];
							t.n++;
						}
					}
				}
			}
			free(c);
		}
		int def = canonical_by_definition(t.b, t.n), got = world_canon_is_canonical(t.b, t.n);
		if (def != got && differ++ < 5) diag("is_canonical %d, by definition %d: %.*s", got, def, (int)t.n, t.b);
		if (def) yes++;
		else no++;
	}
	/* nesting at the depth limit and one beyond */
	for (int d = WORLD_CANON_MAX_DEPTH - 1; d <= WORLD_CANON_MAX_DEPTH + 2; d++) {
		char deep[1024];
		size_t n = 0;
		for (int i = 0; i <= d; i++) deep[n++] = '[';
		for (int i = 0; i <= d; i++) deep[n++] = ']';
		int def = canonical_by_definition(deep, n), got = world_canon_is_canonical(deep, n);
		if (def != got && differ++ < 5) diag("is_canonical %d, by definition %d: %d nested arrays", got, def, d + 1);
		if (def) yes++;
		else no++;
	}
	is_int(differ, 0, "world_canon_is_canonical agrees with canonicalise-and-compare (%lld canonical, %lld not)", yes,
	       no);
	/* control: both kinds were tried in numbers */
	ok(yes > 20000 && no > 20000, "both canonical and non-canonical inputs were checked");
}

int main(void)
{
	canonical_check_agrees();
	/* numbers */
	V("1.0", "1");
	V("1e2", "100");
	V("-0", "0");
	V("-0.0e5", "0");
	V("0.000", "0");
	V("1.50", "1.5");
	V("1E-2", "0.01");
	V("1E+2", "100");
	V("-12.3400e1", "-123.4");
	V("123456789012345678901234567890", "123456789012345678901234567890");
	V("0.5e-3", "0.0005");
	V("25e-1", "2.5");
	V("100e-2", "1");
	V("-1", "-1");
	R("1e100000000", "exponent beyond the limit");
	R("1e200", "beyond the limit of 100");
	R("1e-200", "beyond the limit of 100");
	R("01", "leading zero");
	R("1.", "no digits after the decimal point");
	R(".5", "unexpected character");
	R("+1", "unexpected character");
	R("1e", "no digits in its exponent");
	R("NaN", "unexpected character");
	R("Infinity", "unexpected character");
	/* escapes */
	V("\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"", "\"\\\"\\\\/\\b\\f\\n\\r\\t\"");
	V("\"\\u0000\\u001F\\u007f\\u00E9\"", "\"\\u0000\\u001f\x7f\xc3\xa9\"");
	V("\"\\ud83d\\ude00\"", "\"\xf0\x9f\x98\x80\"");
	V("\"\xe2\x82\xac\"", "\"\xe2\x82\xac\"");
	V("\"\\u2028\"", "\"\xe2\x80\xa8\"");
	R("\"\\ud83d\"", "lone high surrogate");
	R("\"\\ud83dx\"", "lone high surrogate");
	R("\"\\ude00\"", "lone low surrogate");
	R("\"\\ud83d\\u0041\"", "lone high surrogate");
	R("\"\\x\"", "unknown escape");
	R("\"\\u12g4\"", "bad hex digit");
	R("\"a\tb\"", "raw control character");
	R("\"abc", "unterminated string");
	/* invalid UTF-8 */
	R("\"\xff\"", "invalid UTF-8");
	R("\"\xc0\xaf\"", "invalid UTF-8");         /* overlong */
	R("\"\xed\xa0\x80\"", "invalid UTF-8");     /* encoded surrogate */
	R("\"\xf4\x90\x80\x80\"", "invalid UTF-8"); /* above U+10FFFF */
	R("\"\xe2\x82\"", "invalid UTF-8");         /* truncated */
	R("{\"\xff\":1}", "invalid UTF-8");
	/* key order: bytewise on UTF-8, with non-ASCII keys */
	V("{\"b\":1,\"a\":2,\"\xc3\xa9\":3,\"Z\":4,\"\xe2\x82\xac\":5,\"aa\":6,\"\":7}",
	  "{\"\":7,\"Z\":4,\"a\":2,\"aa\":6,\"b\":1,\"\xc3\xa9\":3,\"\xe2\x82\xac\":5}");
	V("{\"\\u00e9\":1,\"e\":2}", "{\"e\":2,\"\xc3\xa9\":1}");
	V("{\"a\\u0000b\":1,\"a\":2}", "{\"a\":2,\"a\\u0000b\":1}");
	V(" { \"x\" : [ 1 , { \"b\" : null , \"a\" : true } ] , \"w\" : false } \n", "{\"w\":false,\"x\":[1,{\"a\":true,\"b\":null}]}");
	V("[]", "[]");
	V("{}", "{}");
	/* duplicates, including ones that only collide after unescaping */
	R("{\"a\":1,\"a\":2}", "byte 7: duplicate key \"a\"");
	R("{\"a\":1,\"\\u0061\":2}", "duplicate key \"a\"");
	R("{\"x\":{\"k\":1,\"k\":1}}", "duplicate key \"k\"");
	/* trailing data, structure */
	R("{} x", "byte 3: trailing data");
	R("{}{}", "byte 2: trailing data");
	R("1 2", "trailing data");
	R("", "unexpected end of input");
	R("[1,]", "unexpected character ']'");
	R("{\"a\" 1}", "expected ':'");
	R("{\"a\":1,}", "expected a string key");
	R("[1 2]", "expected ',' or ']'");
	R("tru", "invalid literal");
	R("\xef\xbb\xbf{}", "byte order mark");
	{
		char deep[1200];
		memset(deep, '[', 600);
		memset(deep + 600, ']', 600);
		vec(deep, 1200, NULL, "nesting deeper than the limit");
	}

	/* jansson values */
	{
		json_t *o = json_pack("{sfsfsIss}", "r", 0.1, "w", 2.0, "i", (json_int_t)-5, "s", "\x01\"");
		struct world_err err = {0};
		size_t n;
		char *c = world_canon_json(o, &n, &err);
		is_str(c ? c : err.msg, "{\"i\":-5,\"r\":0.1,\"s\":\"\\u0001\\\"\",\"w\":2}", "json_t -> canonical");
		free(c);
		json_decref(o);
		json_t *p = world_json_parse("{\"b\":[1,2.5],\"a\":\"x\"}", 21, &err);
		ok(p && json_integer_value(json_array_get(json_object_get(p, "b"), 0)) == 1, "world_json_parse parses");
		json_decref(p);
		p = world_json_parse("{\"a\":1,\"a\":1}", 13, &err);
		ok(!p && strstr(err.msg, "duplicate"), "world_json_parse refuses duplicates");
	}

	/* transition source */
	{
		struct world_err err = {0};
		size_t n;
		const char src[] = "module x  \r\n\r\nexport func main(s: string) -> string {\t\r  s\n}\r\n \n\t\n\n";
		char *c = world_canon_source(src, sizeof src - 1, &n, &err);
		is_str(c ? c : err.msg, "module x\n\nexport func main(s: string) -> string {\n  s\n}\n", "source canonicalised");
		char *c2 = c ? world_canon_source(c, n, &n, &err) : NULL;
		is_str(c2 ? c2 : "", c ? c : "x", "source canonicalisation is a fixed point");
		free(c);
		free(c2);
		c = world_canon_source("a", 1, &n, &err);
		is_str(c ? c : "", "a\n", "one final LF added");
		free(c);
		c = world_canon_source("\xef\xbb\xbf" "a\n", 5, &n, &err);
		ok(!c && strstr(err.msg, "byte order mark"), "BOM refused (%s)", err.msg);
		c = world_canon_source("a\0b\n", 4, &n, &err);
		ok(!c && strstr(err.msg, "byte 1: NUL"), "NUL refused (%s)", err.msg);
		c = world_canon_source("a\xff\n", 3, &n, &err);
		ok(!c && strstr(err.msg, "byte 1: invalid UTF-8"), "invalid UTF-8 refused (%s)", err.msg);
		c = world_canon_source(" \n\t\r\n", 5, &n, &err);
		ok(!c && strstr(err.msg, "empty"), "blank source refused (%s)", err.msg);
	}

	/* refs */
	{
		struct world_err err = {0};
		unsigned char d[32];
		char r[WORLD_REF_SIZE];
		ok(world_hash_ref("hello", 5, r, &err) == 0, "hash ref");
		is_str(r, "sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824", "sha256 of hello");
		ok(world_ref_parse(r, NULL, d, &err) == 0 && d[0] == 0x2c && d[31] == 0x24, "parse valid ref");
		char up[WORLD_REF_SIZE];
		strcpy(up, r);
		up[10] = 'D';
		ok(world_ref_parse(up, NULL, NULL, &err) < 0 && err.code == WX_BAD_INPUT && strstr(err.msg, "lowercase"),
		   "uppercase hex refused (%s)", err.msg);
		ok(world_ref_parse("sha256:abc", NULL, NULL, &err) < 0 && strstr(err.msg, "3 hex digits"),
		   "short ref refused (%s)", err.msg);
		char longer[100];
		snprintf(longer, sizeof longer, "%s0", r);
		ok(world_ref_parse(longer, NULL, NULL, &err) < 0 && strstr(err.msg, "65 hex digits"),
		   "long ref refused (%s)", err.msg);
		ok(world_ref_parse("sha512:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824", NULL, NULL,
		                   &err) < 0 && strstr(err.msg, "unknown algorithm \"sha512\""),
		   "unknown algorithm refused (%s)", err.msg);
		ok(world_ref_parse("SHA256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824", NULL, NULL,
		                   &err) < 0, "uppercase algorithm refused");
		ok(world_ref_parse("2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824", NULL, NULL, &err) < 0,
		   "bare hex refused");
		ok(world_ref_parse("sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b982g", NULL, NULL,
		                   &err) < 0 && strstr(err.msg, "not a hex digit"), "non-hex refused (%s)", err.msg);
		ok(world_ref_parse(" sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824", NULL, NULL,
		                   &err) < 0, "leading space refused");
		ok(!world_ref_valid(""), "empty ref refused");
	}
	return done_testing();
}
