/* supervisor/frame.h: the frame codec of the capsule <-> broker protocol
 * (docs/protocol.md).
 *
 * Owns: turning one JSON object into one frame (4-byte big-endian length,
 * then the object's bytes) and back, with a hard cap on the frame size.
 * The decoder is incremental (fed whatever bytes a non-blocking read
 * returned) and treats its input as untrusted: a length over the cap is
 * refused from the 4-byte prefix alone, before anything is allocated, and
 * the body must be exactly one JSON object with no duplicate keys and a
 * string "type" member. Nothing is canonicalised here. */
#ifndef WORLD_SUPERVISOR_FRAME_H
#define WORLD_SUPERVISOR_FRAME_H
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include "common/error.h"

/* Payloads (args, plan, output) are at most 1 MiB; carried as JSON strings
 * they can at most double (every byte of a valid JSON text that needs an
 * escape is one of `"` `\` or a whitespace control character), so a frame
 * holds 2 MiB plus room for the envelope. */
#define FRAME_PAYLOAD_MAX ((size_t)1 << 20)
#define FRAME_MAX (2 * FRAME_PAYLOAD_MAX + 64 * 1024)

/* Buffers are allocated with jansson's allocator (json_get_alloc_funcs).
 * Encode obj (compact, insertion order) as one frame in a new buffer.
 * Fails with WX_PROTOCOL when the frame would exceed max. */
int frame_encode(const json_t *obj, size_t max, char **buf, size_t *len, struct world_err *err);
/* Free a buffer frame_encode returned. */
void frame_buf_free(void *p);

/* Parse a frame body: exactly one JSON object with a string "type".
 * Returns a new reference or NULL with WX_PROTOCOL. */
json_t *frame_parse(const char *body, size_t len, struct world_err *err);

/* Incremental decoder. */
struct frame_reader {
	size_t max;          /* hard cap on a frame body */
	unsigned char hdr[4];
	size_t hdr_have;
	char *body;          /* allocated once the length is known and accepted */
	size_t body_len, body_have;
};
void frame_reader_init(struct frame_reader *r, size_t max);
void frame_reader_free(struct frame_reader *r);
/* True when the reader holds part of a frame (an EOF now is a cut frame). */
int frame_reader_partial(const struct frame_reader *r);
/* Consume up to len bytes from data; *used says how many were taken.
 * Returns 1 with *out set when a whole frame was parsed (the rest of data is
 * left for the next call), 0 when more bytes are needed, -1 on a malformed
 * or oversized frame (WX_PROTOCOL). */
int frame_reader_feed(struct frame_reader *r, const char *data, size_t len, size_t *used,
                      json_t **out, struct world_err *err);

/* Blocking helpers for the capsule side (and tests): write all of a frame,
 * read exactly one frame. frame_read returns 0 with *out NULL on a clean EOF
 * before any byte of a frame. */
int frame_write(int fd, const json_t *obj, size_t max, struct world_err *err);
int frame_read(int fd, size_t max, json_t **out, struct world_err *err);
#endif
