/* supervisor/frame.c: see frame.h. */
#include "supervisor/frame.h"
#include "common/file.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Buffers come from jansson's allocator: malloc in the supervisor, the
 * agent's mmap arena inside a capsule (agent.h says why). */
static void ffree(void *p);

static void *fmalloc(size_t n)
{
	json_malloc_t m;
	json_free_t f;
	json_get_alloc_funcs(&m, &f);
	return m(n);
}

void frame_buf_free(void *p) { ffree(p); }

static void ffree(void *p)
{
	json_malloc_t m;
	json_free_t f;
	json_get_alloc_funcs(&m, &f);
	if (p) f(p);
}

int frame_encode(const json_t *obj, size_t max, char **buf, size_t *len, struct world_err *err)
{
	*buf = NULL;
	*len = 0;
	if (!json_is_object(obj)) return werr(err, WX_PROTOCOL, "frame: not a JSON object");
	/* JSON_COMPACT keeps it small; jansson keeps insertion order. */
	size_t n = json_dumpb(obj, NULL, 0, JSON_COMPACT);
	if (n == 0) return werr(err, WX_PROTOCOL, "frame: cannot encode the JSON object");
	if (n > max) return werr(err, WX_PROTOCOL, "frame: %zu bytes, over the %zu-byte frame cap", n, max);
	char *b = fmalloc(4 + n);
	if (!b) return werr(err, WX_FAIL, "frame: out of memory for %zu bytes", n);
	if (json_dumpb(obj, b + 4, n, JSON_COMPACT) != n) {
		ffree(b);
		return werr(err, WX_PROTOCOL, "frame: encoding changed size");
	}
	b[0] = (char)((n >> 24) & 0xff);
	b[1] = (char)((n >> 16) & 0xff);
	b[2] = (char)((n >> 8) & 0xff);
	b[3] = (char)(n & 0xff);
	*buf = b;
	*len = 4 + n;
	return 0;
}

json_t *frame_parse(const char *body, size_t len, struct world_err *err)
{
	json_error_t jerr;
	/* REJECT_DUPLICATES: an object with two "type" members is ambiguous.
	 * jansson caps nesting depth, so deep garbage cannot exhaust the stack;
	 * it refuses NUL bytes in strings and invalid UTF-8. */
	json_t *v = json_loadb(body, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!v) {
		werr(err, WX_PROTOCOL, "frame: malformed JSON at byte %d: %s", jerr.position, jerr.text);
		return NULL;
	}
	if (!json_is_object(v)) {
		json_decref(v);
		werr(err, WX_PROTOCOL, "frame: body is not a JSON object");
		return NULL;
	}
	if (!json_is_string(json_object_get(v, "type"))) {
		json_decref(v);
		werr(err, WX_PROTOCOL, "frame: no string member \"type\"");
		return NULL;
	}
	return v;
}

void frame_reader_init(struct frame_reader *r, size_t max)
{
	memset(r, 0, sizeof *r);
	r->max = max;
}

void frame_reader_free(struct frame_reader *r)
{
	ffree(r->body);
	r->body = NULL;
	r->hdr_have = r->body_len = r->body_have = 0;
}

int frame_reader_partial(const struct frame_reader *r)
{
	return r->hdr_have > 0;
}

int frame_reader_feed(struct frame_reader *r, const char *data, size_t len, size_t *used,
                      json_t **out, struct world_err *err)
{
	size_t i = 0;
	*out = NULL;
	while (r->hdr_have < 4 && i < len) r->hdr[r->hdr_have++] = (unsigned char)data[i++];
	if (r->hdr_have < 4) {
		*used = i;
		return 0;
	}
	if (!r->body) {
		uint32_t n = ((uint32_t)r->hdr[0] << 24) | ((uint32_t)r->hdr[1] << 16) |
		             ((uint32_t)r->hdr[2] << 8) | (uint32_t)r->hdr[3];
		*used = i;
		/* Refuse from the prefix alone: a 2 GiB length never allocates. */
		if (n == 0) return werr(err, WX_PROTOCOL, "frame: zero length prefix");
		if ((size_t)n > r->max)
			return werr(err, WX_PROTOCOL, "frame: length prefix %u over the %zu-byte frame cap", n, r->max);
		r->body = fmalloc(n);
		if (!r->body) return werr(err, WX_FAIL, "frame: out of memory for %u bytes", n);
		r->body_len = n;
		r->body_have = 0;
	}
	size_t take = r->body_len - r->body_have;
	if (take > len - i) take = len - i;
	memcpy(r->body + r->body_have, data + i, take);
	r->body_have += take;
	i += take;
	*used = i;
	if (r->body_have < r->body_len) return 0;
	json_t *v = frame_parse(r->body, r->body_len, err);
	frame_reader_free(r);
	if (!v) return -1;
	*out = v;
	return 1;
}

int frame_write(int fd, const json_t *obj, size_t max, struct world_err *err)
{
	char *buf;
	size_t len;
	if (frame_encode(obj, max, &buf, &len, err) < 0) return -1;
	int rc = write_all(fd, buf, len);
	int saved = errno;
	ffree(buf);
	if (rc < 0) return werr(err, WX_PROTOCOL, "frame: write: %s", strerror(saved));
	return 0;
}

int frame_read(int fd, size_t max, json_t **out, struct world_err *err)
{
	struct frame_reader r;
	frame_reader_init(&r, max);
	*out = NULL;
	/* Read the prefix byte-exactly, then the body in one go: never read past
	 * this frame, so the next frame stays in the pipe for the next call. */
	char buf[65536];
	for (;;) {
		size_t want = r.hdr_have < 4 ? 4 - r.hdr_have : r.body_len - r.body_have;
		if (want > sizeof buf) want = sizeof buf;
		ssize_t n = read(fd, buf, want);
		if (n < 0) {
			if (errno == EINTR) continue;
			int saved = errno;
			frame_reader_free(&r);
			return werr(err, WX_PROTOCOL, "frame: read: %s", strerror(saved));
		}
		if (n == 0) {
			int partial = frame_reader_partial(&r);
			frame_reader_free(&r);
			if (!partial) return 0;
			return werr(err, WX_PROTOCOL, "frame: end of stream inside a frame");
		}
		size_t used;
		int rc = frame_reader_feed(&r, buf, (size_t)n, &used, out, err);
		if (rc != 0) {
			frame_reader_free(&r);
			return rc < 0 ? -1 : 0;
		}
	}
}
