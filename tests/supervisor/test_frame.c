/* tests/supervisor/test_frame.c: the frame codec on good, cut, malformed
 * and oversized input. */
#include "supervisor/frame.h"
#include "tests/tap.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int feed_all(struct frame_reader *r, const char *data, size_t len, json_t **out, struct world_err *err)
{
	size_t off = 0;
	while (off < len) {
		size_t used;
		int rc = frame_reader_feed(r, data + off, len - off, &used, out, err);
		off += used;
		if (rc != 0) return rc;
	}
	return 0;
}

static int feed_str(const char *hdr_and_body, size_t len, struct world_err *err)
{
	struct frame_reader r;
	frame_reader_init(&r, FRAME_MAX);
	json_t *out = NULL;
	int rc = feed_all(&r, hdr_and_body, len, &out, err);
	json_decref(out);
	frame_reader_free(&r);
	return rc;
}

static size_t mkframe(char *buf, const char *body)
{
	size_t n = strlen(body);
	buf[0] = (char)(n >> 24); buf[1] = (char)(n >> 16); buf[2] = (char)(n >> 8); buf[3] = (char)n;
	memcpy(buf + 4, body, n);
	return n + 4;
}

int main(void)
{
	struct world_err err;
	char *buf;
	size_t len;
	json_t *obj = json_pack("{s:s, s:s}", "type", "output", "output", "{\"a\":\"\\\"q\\\"\"}");
	ok(frame_encode(obj, FRAME_MAX, &buf, &len, &err) == 0, "encode a frame");
	is_int((unsigned char)buf[0] << 24 | (unsigned char)buf[1] << 16 | (unsigned char)buf[2] << 8 | (unsigned char)buf[3],
	       len - 4, "prefix is the big-endian body length");

	/* Byte by byte: the reader must assemble it. */
	struct frame_reader r;
	frame_reader_init(&r, FRAME_MAX);
	json_t *got = NULL;
	int rc = 0;
	for (size_t i = 0; i < len && rc == 0; i++) {
		size_t used;
		rc = frame_reader_feed(&r, buf + i, 1, &used, &got, &err);
	}
	is_int(rc, 1, "byte-by-byte feed yields one frame");
	ok(got && json_equal(got, obj), "decoded frame equals the encoded object");
	json_decref(got);
	frame_reader_free(&r);

	/* Two frames in one chunk: the first is returned, the rest left. */
	char two[4096];
	memcpy(two, buf, len);
	memcpy(two + len, buf, len);
	frame_reader_init(&r, FRAME_MAX);
	size_t used;
	rc = frame_reader_feed(&r, two, 2 * len, &used, &got, &err);
	ok(rc == 1 && used == len, "a chunk holding two frames is consumed one frame at a time");
	json_decref(got);
	frame_reader_free(&r);

	/* Blocking helpers over a pipe. */
	int p[2];
	if (pipe(p) < 0) bail("pipe");
	ok(frame_write(p[1], obj, FRAME_MAX, &err) == 0, "frame_write");
	close(p[1]);
	got = NULL;
	ok(frame_read(p[0], FRAME_MAX, &got, &err) == 0 && got && json_equal(got, obj), "frame_read reads it back");
	json_decref(got);
	got = (json_t *)1;
	ok(frame_read(p[0], FRAME_MAX, &got, &err) == 0 && got == NULL, "frame_read: clean end of stream gives NULL");
	close(p[0]);
	free(buf);

	/* Oversized: refused on the prefix alone, nothing allocated. */
	const char huge[] = { (char)0x80, 0, 0, 0, '{' };
	is_int(feed_str(huge, sizeof huge, &err), -1, "2 GiB length prefix refused");
	is_int(err.code, WX_PROTOCOL, "... as a protocol error");
	ok(strstr(err.msg, "length prefix 2147483648") != NULL, "... naming the length: %s", err.msg);
	const char maxp1[] = { 0, 0x21, 0x00, 0x01 }; /* FRAME_MAX + 1 */
	ok(0x210001 == FRAME_MAX + 1, "test constant is the frame cap + 1");
	is_int(feed_str(maxp1, sizeof maxp1, &err), -1, "cap + 1 refused");
	const char zero[] = { 0, 0, 0, 0 };
	is_int(feed_str(zero, sizeof zero, &err), -1, "zero length refused");

	char f[256];
	const char *bad[] = {
		"not json", "[1,2]", "{\"x\":1}", "{\"type\":1}", "{\"type\":\"a\",\"type\":\"b\"}",
		"{\"type\":\"a\"} trailing", "{\"type\":\"a\\u0000\"}", "{\"type\":\"\xff\"}",
	};
	const char *why[] = {
		"garbage", "an array", "no type", "type not a string", "duplicate keys",
		"trailing bytes", "NUL in a string", "invalid UTF-8",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		size_t n = mkframe(f, bad[i]);
		is_int(feed_str(f, n, &err), -1, "malformed body refused: %s", why[i]);
	}
	/* Deep nesting must not exhaust the stack. */
	size_t depth = 200000;
	char *deep = malloc(depth + 4);
	memset(deep + 4, '[', depth);
	deep[0] = (char)(depth >> 24); deep[1] = (char)(depth >> 16); deep[2] = (char)(depth >> 8); deep[3] = (char)depth;
	is_int(feed_str(deep, depth + 4, &err), -1, "200,000-deep nesting refused without crashing");
	free(deep);

	/* A cut frame at end of stream. */
	if (pipe(p) < 0) bail("pipe");
	size_t n = mkframe(f, "{\"type\":\"output\"}");
	if (write(p[1], f, n - 3) < 0) bail("write");
	close(p[1]);
	ok(frame_read(p[0], FRAME_MAX, &got, &err) < 0 && strstr(err.msg, "inside a frame"), "cut frame: %s", err.msg);
	close(p[0]);

	/* Encoding over the cap is refused. */
	char *big = malloc(FRAME_MAX + 1);
	memset(big, 'a', FRAME_MAX);
	big[FRAME_MAX] = '\0';
	json_t *bo = json_pack("{s:s, s:s}", "type", "output", "output", big);
	ok(frame_encode(bo, FRAME_MAX, &buf, &len, &err) < 0 && err.code == WX_PROTOCOL, "encoding over the cap refused");
	json_decref(bo);
	free(big);
	json_decref(obj);
	return done_testing();
}
