/* tlog/b64.c: see b64.h. */
#include "tlog/b64.h"

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

void tlog_b64_encode(const unsigned char *in, size_t n, char *out)
{
	size_t i = 0, o = 0;
	for (; i + 3 <= n; i += 3) {
		unsigned v = (unsigned)in[i] << 16 | (unsigned)in[i + 1] << 8 | in[i + 2];
		out[o++] = alphabet[v >> 18 & 63];
		out[o++] = alphabet[v >> 12 & 63];
		out[o++] = alphabet[v >> 6 & 63];
		out[o++] = alphabet[v & 63];
	}
	if (n - i == 1) {
		unsigned v = (unsigned)in[i] << 16;
		out[o++] = alphabet[v >> 18 & 63];
		out[o++] = alphabet[v >> 12 & 63];
		out[o++] = '=';
		out[o++] = '=';
	} else if (n - i == 2) {
		unsigned v = (unsigned)in[i] << 16 | (unsigned)in[i + 1] << 8;
		out[o++] = alphabet[v >> 18 & 63];
		out[o++] = alphabet[v >> 12 & 63];
		out[o++] = alphabet[v >> 6 & 63];
		out[o++] = '=';
	}
	out[o] = '\0';
}

static int digit(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

static long decode(const char *in, size_t len, unsigned char *out, size_t cap, int strict)
{
	if (len % 4 != 0)
		return -1;
	size_t o = 0;
	for (size_t i = 0; i < len; i += 4) {
		int d[4], pad = 0;
		for (int j = 0; j < 4; j++) {
			char c = in[i + j];
			if (c == '=' && i + 4 == len && j >= 2) {
				d[j] = 0;
				pad++;
				continue;
			}
			if (pad) /* a digit after '=' */
				return -1;
			if ((d[j] = digit(c)) < 0)
				return -1;
		}
		unsigned v = (unsigned)d[0] << 18 | (unsigned)d[1] << 12 | (unsigned)d[2] << 6 | (unsigned)d[3];
		size_t k = 3 - (size_t)pad;
		if (strict && ((pad == 1 && (v & 0xff)) || (pad == 2 && (v & 0xffff))))
			return -1; /* non-zero padding bits */
		if (o + k > cap)
			return -1;
		out[o++] = (unsigned char)(v >> 16);
		if (k > 1)
			out[o++] = (unsigned char)(v >> 8);
		if (k > 2)
			out[o++] = (unsigned char)v;
	}
	return (long)o;
}

long tlog_b64_decode(const char *in, size_t len, unsigned char *out, size_t cap)
{
	return decode(in, len, out, cap, 1);
}

long tlog_b64_decode_lax(const char *in, size_t len, unsigned char *out, size_t cap)
{
	return decode(in, len, out, cap, 0);
}
