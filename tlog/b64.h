/* tlog/b64.h: standard base64 (RFC 4648 §4, padded), strict, for the
 * library's texts (hashes, keys, signatures). Internal to tlog/.
 *
 * Decoding refuses what Go's base64.StdEncoding refuses but line breaks
 * (which it skips); strict decoding, one encoding per value, also refuses
 * non-zero padding bits (which Go's StdEncoding, not being Strict, accepts). */
#ifndef WORLD_TLOG_B64_H
#define WORLD_TLOG_B64_H
#include <stddef.h>

/* The encoded length of n bytes (without the NUL). */
#define TLOG_B64_LEN(n) ((((n) + 2) / 3) * 4)

/* Writes TLOG_B64_LEN(n) characters and a NUL to out. */
void tlog_b64_encode(const unsigned char *in, size_t n, char *out);
/* Decodes len characters into out (room for cap bytes); returns the byte
 * count, or -1 if malformed or longer than cap. */
long tlog_b64_decode(const char *in, size_t len, unsigned char *out, size_t cap);
/* The same, accepting non-zero padding bits as Go's StdEncoding does (the
 * signed-note texts: keys and signature lines, where Go is the reference). */
long tlog_b64_decode_lax(const char *in, size_t len, unsigned char *out, size_t cap);
#endif
