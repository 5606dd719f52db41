/* tlog/note.c: see note.h. Follows Go's golang.org/x/mod/sumdb/note
 * (note.go: NewVerifier, NewSigner, GenerateKey, Sign, Open) rule by rule;
 * Ed25519 is libcrypto's (EVP_PKEY_ED25519). */
#include "tlog/note.h"
#include "tlog/b64.h"

#include <openssl/evp.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ALG_ED25519 0x01
#define SIG_SIZE 64
#define MAX_SIGS 100 /* Go: a note with more signature lines is malformed */
static const char em_dash_sp[] = "\xe2\x80\x94 "; /* "— " */

/* One code point of s[0..len) (len > 0) in *r; its length, or 0 if the
 * bytes are not UTF-8 as Go's utf8.DecodeRune reads it (overlong forms,
 * surrogates and values above U+10FFFF refused). */
static size_t utf8_rune(const unsigned char *s, size_t len, unsigned *r)
{
	unsigned c = s[0];
	size_t n;
	unsigned min;
	if (c < 0x80) {
		*r = c;
		return 1;
	} else if (c >= 0xc2 && c <= 0xdf) {
		n = 2, min = 0x80, c &= 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3, min = 0x800, c &= 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4, min = 0x10000, c &= 0x07;
	} else {
		return 0;
	}
	if (len < n)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*r = c;
	return n;
}

/* Go's unicode.IsSpace. */
static int is_space(unsigned r)
{
	switch (r) {
	case '\t': case '\n': case '\v': case '\f': case '\r': case ' ': case 0x85: case 0xa0:
	case 0x1680: case 0x2028: case 0x2029: case 0x202f: case 0x205f: case 0x3000:
		return 1;
	}
	return r >= 0x2000 && r <= 0x200a;
}

/* Go's isValidName: non-empty UTF-8, no white space, no '+' (any length:
 * another key's signature line may carry a long name). */
static int valid_name_any(const char *name, size_t len)
{
	if (len == 0)
		return 0;
	for (size_t i = 0; i < len;) {
		unsigned r;
		size_t n = utf8_rune((const unsigned char *)name + i, len - i, &r);
		if (n == 0 || is_space(r) || r == '+')
			return 0;
		i += n;
	}
	return 1;
}

/* ... and a name of ours, which struct note_vkey holds. */
static int valid_name(const char *name, size_t len) { return len <= NOTE_NAME_MAX && valid_name_any(name, len); }

/* Go's rule for a note: UTF-8 with no control character but '\n'. */
static int valid_text(const char *s, size_t len)
{
	for (size_t i = 0; i < len;) {
		unsigned r;
		size_t n = utf8_rune((const unsigned char *)s + i, len - i, &r);
		if (n == 0 || (r < 0x20 && r != '\n'))
			return 0;
		i += n;
	}
	return 1;
}

/* First 4 bytes, big-endian, of SHA-256(name ‖ "\n" ‖ 0x01 ‖ pub). */
static int key_hash(const char *name, const unsigned char pub[32], uint32_t *out, struct world_err *err)
{
	unsigned char d[EVP_MAX_MD_SIZE], alg = ALG_ED25519;
	unsigned int dn = 0;
	EVP_MD_CTX *c = EVP_MD_CTX_new();
	int ok = c && EVP_DigestInit_ex(c, EVP_sha256(), NULL) && EVP_DigestUpdate(c, name, strlen(name)) &&
	         EVP_DigestUpdate(c, "\n", 1) && EVP_DigestUpdate(c, &alg, 1) && EVP_DigestUpdate(c, pub, 32) &&
	         EVP_DigestFinal_ex(c, d, &dn) && dn == 32;
	EVP_MD_CTX_free(c);
	if (!ok)
		return werr(err, WX_FAIL, "note key %s: SHA-256 failed (libcrypto)", name);
	*out = (uint32_t)d[0] << 24 | (uint32_t)d[1] << 16 | (uint32_t)d[2] << 8 | d[3];
	return 0;
}

static char *key_text(const char *prefix, const char *name, uint32_t hash, const unsigned char raw[32])
{
	unsigned char k[33];
	char b[TLOG_B64_LEN(33) + 1];
	k[0] = ALG_ED25519;
	memcpy(k + 1, raw, 32);
	tlog_b64_encode(k, sizeof k, b);
	size_t n = strlen(prefix) + strlen(name) + 1 + 8 + 1 + strlen(b) + 1;
	char *s = malloc(n);
	if (s)
		snprintf(s, n, "%s%s+%08x+%s", prefix, name, (unsigned)hash, b);
	OPENSSL_cleanse(k, sizeof k);
	return s;
}

static int parse_hex8(const char *s, size_t len, uint32_t *out)
{
	if (len != 8)
		return -1;
	uint32_t v = 0;
	for (size_t i = 0; i < 8; i++) {
		char c = s[i];
		int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 :
		        c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
		if (d < 0)
			return -1;
		v = v << 4 | (uint32_t)d;
	}
	*out = v;
	return 0;
}

/* Splits "NAME+HASH+BASE64" (s[0..len)) into its fields: name copied,
 * hash parsed, the key's 32 raw bytes after the algorithm byte 0x01. */
static int parse_key_fields(const char *what, const char *s, size_t len, char name[NOTE_NAME_MAX + 1],
                            uint32_t *hash, unsigned char raw[32], struct world_err *err)
{
	const char *p1 = memchr(s, '+', len);
	const char *p2 = p1 ? memchr(p1 + 1, '+', len - (size_t)(p1 + 1 - s)) : NULL;
	if (!p2)
		return werr(err, WX_BAD_INPUT, "%s: not NAME+HASH+KEY", what);
	size_t nl = (size_t)(p1 - s);
	if (!valid_name(s, nl))
		return werr(err, WX_BAD_INPUT, "%s: the name is empty, too long, not UTF-8 or has white space", what);
	memcpy(name, s, nl);
	name[nl] = '\0';
	if (parse_hex8(p1 + 1, (size_t)(p2 - p1 - 1), hash) < 0)
		return werr(err, WX_BAD_INPUT, "%s %s: the key hash is not 8 hex digits", what, name);
	unsigned char k[33 + 3];
	const char *k64 = p2 + 1;
	long kn = tlog_b64_decode_lax(k64, len - (size_t)(k64 - s), k, sizeof k);
	if (kn < 1)
		return werr(err, WX_BAD_INPUT, "%s %s: the key is not base64", what, name);
	if (k[0] != ALG_ED25519)
		return werr(err, WX_BAD_INPUT, "%s %s: unknown algorithm %u (only 1, Ed25519)", what, name, k[0]);
	if (kn != 33)
		return werr(err, WX_BAD_INPUT, "%s %s: an Ed25519 key of %ld bytes, not 32", what, name, kn - 1);
	memcpy(raw, k + 1, 32);
	OPENSSL_cleanse(k, sizeof k);
	return 0;
}

/* s without surrounding ASCII white space: *len set, start returned. */
static const char *trim(const char *s, size_t *len)
{
	size_t n = strlen(s);
	while (n && strchr(" \t\r\n", s[0]))
		s++, n--;
	while (n && strchr(" \t\r\n", s[n - 1]))
		n--;
	*len = n;
	return s;
}

int note_vkey_parse(const char *text, struct note_vkey *out, struct world_err *err)
{
	size_t len;
	const char *s = trim(text, &len);
	struct note_vkey k;
	if (parse_key_fields("verifier key", s, len, k.name, &k.hash, k.pub, err) < 0)
		return -1;
	uint32_t h;
	if (key_hash(k.name, k.pub, &h, err) < 0)
		return -1;
	if (h != k.hash)
		return werr(err, WX_BAD_INPUT, "verifier key %s: hash %08x does not match the key (%08x)", k.name,
		            (unsigned)k.hash, (unsigned)h);
	*out = k;
	return 0;
}

struct note_signer {
	char name[NOTE_NAME_MAX + 1];
	uint32_t hash;
	unsigned char pub[32];
	EVP_PKEY *pkey;
};

static EVP_PKEY *pkey_from_seed(const unsigned char seed[32], unsigned char pub[32], struct world_err *err)
{
	EVP_PKEY *k = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, seed, 32);
	size_t pn = 32;
	if (!k || !EVP_PKEY_get_raw_public_key(k, pub, &pn) || pn != 32) {
		EVP_PKEY_free(k);
		werr(err, WX_FAIL, "Ed25519 key: libcrypto refused the seed");
		return NULL;
	}
	return k;
}

struct note_signer *note_signer_new(const char *skey_text, struct world_err *err)
{
	size_t len;
	const char *s = trim(skey_text, &len);
	static const char pfx[] = "PRIVATE+KEY+";
	if (len < sizeof pfx - 1 || memcmp(s, pfx, sizeof pfx - 1) != 0) {
		werr(err, WX_BAD_INPUT, "signer key: does not start with PRIVATE+KEY+");
		return NULL;
	}
	struct note_signer *sg = calloc(1, sizeof *sg);
	unsigned char seed[32];
	if (!sg) {
		werr(err, WX_FAIL, "signer key: out of memory");
		return NULL;
	}
	uint32_t h = 0;
	if (parse_key_fields("signer key", s + sizeof pfx - 1, len - (sizeof pfx - 1), sg->name, &sg->hash, seed,
	                     err) < 0 ||
	    !(sg->pkey = pkey_from_seed(seed, sg->pub, err)) || key_hash(sg->name, sg->pub, &h, err) < 0)
		goto fail;
	if (h != sg->hash) {
		werr(err, WX_BAD_INPUT, "signer key %s: hash %08x does not match the key (%08x)", sg->name,
		     (unsigned)sg->hash, (unsigned)h);
		goto fail;
	}
	OPENSSL_cleanse(seed, sizeof seed);
	return sg;
fail:
	OPENSSL_cleanse(seed, sizeof seed);
	note_signer_free(sg);
	return NULL;
}

void note_signer_free(struct note_signer *s)
{
	if (!s)
		return;
	EVP_PKEY_free(s->pkey);
	free(s);
}

const char *note_signer_name(const struct note_signer *s) { return s->name; }

int note_signer_sign(struct note_signer *s, const char *text, size_t len, char **signed_note,
                     struct world_err *err)
{
	if (len == 0 || text[len - 1] != '\n')
		return werr(err, WX_BAD_INPUT, "note sign (%s): the text does not end with a newline", s->name);
	if (!valid_text(text, len))
		return werr(err, WX_BAD_INPUT, "note sign (%s): the text is not UTF-8 or has a control character",
		            s->name);
	unsigned char sig[4 + SIG_SIZE];
	size_t sn = SIG_SIZE;
	sig[0] = (unsigned char)(s->hash >> 24), sig[1] = (unsigned char)(s->hash >> 16);
	sig[2] = (unsigned char)(s->hash >> 8), sig[3] = (unsigned char)s->hash;
	EVP_MD_CTX *c = EVP_MD_CTX_new();
	int ok = c && EVP_DigestSignInit(c, NULL, NULL, NULL, s->pkey) &&
	         EVP_DigestSign(c, sig + 4, &sn, (const unsigned char *)text, len) && sn == SIG_SIZE;
	EVP_MD_CTX_free(c);
	if (!ok)
		return werr(err, WX_FAIL, "note sign (%s): Ed25519 signing failed (libcrypto)", s->name);
	char b[TLOG_B64_LEN(sizeof sig) + 1];
	tlog_b64_encode(sig, sizeof sig, b);
	size_t nl = strlen(s->name), bl = strlen(b);
	size_t total = len + 1 + (sizeof em_dash_sp - 1) + nl + 1 + bl + 1;
	char *out = malloc(total + 1), *p = out;
	if (!out)
		return werr(err, WX_FAIL, "note sign (%s): out of memory", s->name);
	memcpy(p, text, len), p += len;
	*p++ = '\n';
	memcpy(p, em_dash_sp, sizeof em_dash_sp - 1), p += sizeof em_dash_sp - 1;
	memcpy(p, s->name, nl), p += nl;
	*p++ = ' ';
	memcpy(p, b, bl), p += bl;
	*p++ = '\n';
	*p = '\0';
	*signed_note = out;
	return 0;
}

int note_sign(const char *skey_text, const char *text, char **signed_note, struct world_err *err)
{
	struct note_signer *s = note_signer_new(skey_text, err);
	if (!s)
		return -1;
	int rc = note_signer_sign(s, text, strlen(text), signed_note, err);
	note_signer_free(s);
	return rc;
}

int note_skey_vkey(const char *skey_text, char **vkey, struct world_err *err)
{
	struct note_signer *s = note_signer_new(skey_text, err);
	if (!s)
		return -1;
	*vkey = key_text("", s->name, s->hash, s->pub);
	note_signer_free(s);
	if (!*vkey)
		return werr(err, WX_FAIL, "verifier key: out of memory");
	return 0;
}

int note_key_generate(const char *name, char **skey, char **vkey, struct world_err *err)
{
	if (!valid_name(name, strlen(name)))
		return werr(err, WX_BAD_INPUT, "note key \"%.64s\": the name is empty, too long, has '+' or white space",
		            name);
	unsigned char seed[32], pub[32];
	uint32_t h;
	if (RAND_priv_bytes(seed, sizeof seed) != 1)
		return werr(err, WX_FAIL, "note key %s: no random bytes (libcrypto)", name);
	EVP_PKEY *k = pkey_from_seed(seed, pub, err);
	EVP_PKEY_free(k);
	if (!k || key_hash(name, pub, &h, err) < 0) {
		OPENSSL_cleanse(seed, sizeof seed);
		return -1;
	}
	*skey = key_text("PRIVATE+KEY+", name, h, seed);
	*vkey = key_text("", name, h, pub);
	OPENSSL_cleanse(seed, sizeof seed);
	if (!*skey || !*vkey) {
		free(*skey), free(*vkey);
		*skey = *vkey = NULL;
		return werr(err, WX_FAIL, "note key %s: out of memory", name);
	}
	return 0;
}

static int ed25519_verify(const unsigned char pub[32], const char *msg, size_t len, const unsigned char *sig,
                          size_t sn)
{
	if (sn != SIG_SIZE)
		return 0;
	EVP_PKEY *k = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, pub, 32);
	EVP_MD_CTX *c = EVP_MD_CTX_new();
	int ok = k && c && EVP_DigestVerifyInit(c, NULL, NULL, NULL, k) == 1 &&
	         EVP_DigestVerify(c, sig, sn, (const unsigned char *)msg, len) == 1;
	EVP_MD_CTX_free(c);
	EVP_PKEY_free(k);
	return ok;
}

int note_verify_key(const struct note_vkey *key, const char *note, size_t len, char **text,
                    struct world_err *err)
{
	if (!valid_text(note, len))
		return werr(err, WX_BAD_INPUT, "note: not UTF-8, or a control character other than newline");
	/* the signatures follow the last blank line */
	size_t split = len;
	for (size_t i = len; i-- > 1;)
		if (note[i] == '\n' && note[i - 1] == '\n') {
			split = i - 1;
			break;
		}
	if (split == len)
		return werr(err, WX_BAD_INPUT, "note: no blank line before the signatures");
	size_t tlen = split + 1; /* the text ends with its newline */
	const char *sigs = note + split + 2, *end = note + len;
	if (sigs == end || end[-1] != '\n')
		return werr(err, WX_BAD_INPUT, "note: no signature lines, or the last does not end with a newline");
	int found = 0, count = 0;
	for (int line = 1; sigs < end; line++) {
		const char *nl = memchr(sigs, '\n', (size_t)(end - sigs));
		const char *l = sigs;
		size_t ll = (size_t)(nl - sigs);
		sigs = nl + 1;
		if (++count > MAX_SIGS)
			return werr(err, WX_BAD_INPUT, "note: more than %d signature lines", MAX_SIGS);
		if (ll < sizeof em_dash_sp - 1 || memcmp(l, em_dash_sp, sizeof em_dash_sp - 1) != 0)
			return werr(err, WX_BAD_INPUT, "note: signature line %d does not start with \"\u2014 \"", line);
		l += sizeof em_dash_sp - 1, ll -= sizeof em_dash_sp - 1;
		const char *sp = memchr(l, ' ', ll);
		size_t nlen = sp ? (size_t)(sp - l) : ll;
		const char *b = sp ? sp + 1 : l + ll;
		size_t blen = (size_t)(l + ll - b);
		unsigned char *raw = malloc(blen / 4 * 3 + 1);
		if (!raw)
			return werr(err, WX_FAIL, "note: out of memory");
		long rn = tlog_b64_decode_lax(b, blen, raw, blen / 4 * 3 + 1);
		if (!valid_name_any(l, nlen) || blen == 0 || rn < 5) {
			free(raw);
			return werr(err, WX_BAD_INPUT, "note: signature line %d is not \"\u2014 NAME BASE64\"", line);
		}
		uint32_t h = (uint32_t)raw[0] << 24 | (uint32_t)raw[1] << 16 | (uint32_t)raw[2] << 8 | raw[3];
		if (h != key->hash || nlen != strlen(key->name) || memcmp(l, key->name, nlen) != 0 || found) {
			free(raw); /* another key's (ignored, as Go does), or ours again */
			continue;
		}
		int ok = ed25519_verify(key->pub, note, tlen, raw + 4, (size_t)rn - 4);
		free(raw);
		if (!ok)
			return werr(err, WX_INTEGRITY, "note: the signature by %s+%08x does not verify", key->name,
			            (unsigned)key->hash);
		found = 1;
	}
	if (!found)
		return werr(err, WX_INTEGRITY, "note: no signature by %s+%08x", key->name, (unsigned)key->hash);
	if (text) {
		if (!(*text = malloc(tlen + 1)))
			return werr(err, WX_FAIL, "note: out of memory");
		memcpy(*text, note, tlen);
		(*text)[tlen] = '\0';
	}
	return 0;
}

int note_verify(const char *vkey_text, const char *note, size_t len, char **text, struct world_err *err)
{
	struct note_vkey k;
	if (note_vkey_parse(vkey_text, &k, err) < 0)
		return -1;
	return note_verify_key(&k, note, len, text, err);
}
