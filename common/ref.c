/* common/ref.c: see ref.h. */
#include "common/ref.h"
#include <errno.h>
/* The low-level SHA256 API: OpenSSL's assembly without the provider
 * machinery (its first use in a process costs ~1 ms; bench/pin_bench). */
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/sha.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char hexdig[] = "0123456789abcdef";

/* hex digit value + 1 of each lowercase hex byte, 0 for every other byte */
static const unsigned char hexval[256] = {
	['0'] = 1, ['1'] = 2, ['2'] = 3, ['3'] = 4, ['4'] = 5, ['5'] = 6, ['6'] = 7, ['7'] = 8, ['8'] = 9, ['9'] = 10,
	['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16,
};

int world_ref_parse(const char *s, const char *what, unsigned char digest[WORLD_DIGEST_LEN],
                    struct world_err *err)
{
	/* the common case, a well-formed ref, in one pass without strlen (the
	 * integrity scan parses a dozen refs a row); anything else takes the
	 * checks below, which name the problem */
	if (s && strncmp(s, "sha256:", 7) == 0) {
		const unsigned char *h = (const unsigned char *)s + 7;
		unsigned char d[WORLD_DIGEST_LEN];
		size_t i = 0;
		for (; i < 64; i += 2) {
			unsigned hi = hexval[h[i]], lo = hi ? hexval[h[i + 1]] : 0;
			if (!lo) break;
			d[i / 2] = (unsigned char)((hi - 1) << 4 | (lo - 1));
		}
		if (i == 64 && h[64] == '\0') {
			if (digest) memcpy(digest, d, sizeof d);
			return 0;
		}
	}
	if (!what) what = "ref";
	if (!s) return werr(err, WX_BAD_INPUT, "%s: missing", what);
	const char *colon = strchr(s, ':');
	if (!colon)
		return werr(err, WX_BAD_INPUT, "%s \"%.80s\": not of the form sha256:<64 lowercase hex>", what, s);
	if ((size_t)(colon - s) != 6 || strncmp(s, "sha256", 6) != 0)
		return werr(err, WX_BAD_INPUT, "%s \"%.80s\": unknown algorithm \"%.*s\" (only sha256)", what, s,
		            (int)((colon - s) > 32 ? 32 : (colon - s)), s);
	const char *hex = colon + 1;
	size_t n = strlen(hex);
	if (n != 64)
		return werr(err, WX_BAD_INPUT, "%s \"%.80s\": %zu hex digits, want exactly 64", what, s, n);
	for (size_t i = 0; i < 64; i++) {
		char c = hex[i];
		int v;
		if (c >= '0' && c <= '9') v = c - '0';
		else if (c >= 'a' && c <= 'f') v = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			return werr(err, WX_BAD_INPUT, "%s \"%.80s\": hex digits must be lowercase", what, s);
		else
			return werr(err, WX_BAD_INPUT, "%s \"%.80s\": byte %zu is not a hex digit", what, s, 7 + i);
		if (digest) {
			if (i % 2 == 0) digest[i / 2] = (unsigned char)(v << 4);
			else digest[i / 2] |= (unsigned char)v;
		}
	}
	return 0;
}

int world_ref_valid(const char *s)
{
	return world_ref_parse(s, NULL, NULL, NULL) == 0;
}

void world_ref_format(const unsigned char digest[WORLD_DIGEST_LEN], char out[WORLD_REF_SIZE])
{
	memcpy(out, "sha256:", 7);
	for (int i = 0; i < WORLD_DIGEST_LEN; i++) {
		out[7 + 2 * i] = hexdig[digest[i] >> 4];
		out[8 + 2 * i] = hexdig[digest[i] & 15];
	}
	out[WORLD_REF_LEN] = '\0';
}

int world_sha256(const void *buf, size_t len, unsigned char out[WORLD_DIGEST_LEN], struct world_err *err)
{
	SHA256_CTX c;
	if (SHA256_Init(&c) != 1 || SHA256_Update(&c, buf, len) != 1 || SHA256_Final(out, &c) != 1)
		return werr(err, WX_FAIL, "sha256: libcrypto SHA256 failed");
	return 0;
}

int world_hash_ref(const void *buf, size_t len, char out[WORLD_REF_SIZE], struct world_err *err)
{
	unsigned char d[WORLD_DIGEST_LEN];
	if (world_sha256(buf, len, d, err) < 0) return -1;
	world_ref_format(d, out);
	return 0;
}

int world_sha256_fd(int fd, const char *what, unsigned char out[WORLD_DIGEST_LEN], uint64_t *len_out,
                    struct world_err *err)
{
	SHA256_CTX ctx;
	if (SHA256_Init(&ctx) != 1) return werr(err, WX_FAIL, "sha256 %s: SHA256_Init failed", what);
	static __thread unsigned char buf[1 << 16];
	uint64_t total = 0;
	for (;;) {
		ssize_t r = read(fd, buf, sizeof buf);
		if (r < 0) {
			if (errno == EINTR) continue;
			return werr(err, WX_IO, "sha256 %s: read: %s", what, strerror(errno));
		}
		if (r == 0) break;
		if (SHA256_Update(&ctx, buf, (size_t)r) != 1)
			return werr(err, WX_FAIL, "sha256 %s: SHA256_Update failed", what);
		total += (uint64_t)r;
	}
	if (SHA256_Final(out, &ctx) != 1) return werr(err, WX_FAIL, "sha256 %s: SHA256_Final failed", what);
	if (len_out) *len_out = total;
	return 0;
}

int world_world_ref(long long revision, const char *state_root, const char *log_head,
                    char json[WORLD_WORLD_JSON_SIZE], char ref[WORLD_REF_SIZE], struct world_err *err)
{
	if (world_ref_parse(log_head, "world logHead", NULL, err) < 0 ||
	    world_ref_parse(state_root, "world stateRoot", NULL, err) < 0)
		return -1;
	char buf[WORLD_WORLD_JSON_SIZE];
	/* canonical as it stands: keys in bytewise order (logHead < revision
	 * < stateRoot), refs need no escape, an integer prints as itself */
	int n = snprintf(buf, sizeof buf, "{\"logHead\":\"%s\",\"revision\":%lld,\"stateRoot\":\"%s\"}", log_head,
	                 revision, state_root);
	if (n < 0 || (size_t)n >= sizeof buf) return werr(err, WX_FAIL, "world of revision %lld: JSON too long", revision);
	if (ref && world_hash_ref(buf, (size_t)n, ref, err) < 0) return -1;
	if (json) memcpy(json, buf, (size_t)n + 1);
	return n;
}
