/* tests/fuzz/fuzz_frame.c: libFuzzer target over the capsule -> supervisor
 * frame decoder (supervisor/frame.c), fed as a hostile interpreter would
 * write: the bytes in pieces of varying sizes (the first byte picks them),
 * under a small cap so oversized prefixes are reached. Every frame it
 * returns is an object with a string "type", and re-encoding it gives a
 * frame that decodes to an equal value. */
#include "supervisor/frame.h"
#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1) return 0;
	unsigned step = data[0] % 17 + 1; /* 1..17 bytes a read */
	size_t max = data[0] & 0x80 ? 4096 : FRAME_MAX;
	data++;
	size--;
	struct frame_reader r;
	frame_reader_init(&r, max);
	size_t at = 0;
	while (at < size) {
		size_t len = size - at < step ? size - at : step;
		size_t used = 0;
		json_t *out = NULL;
		struct world_err err = { 0, "" };
		int rc = frame_reader_feed(&r, (const char *)data + at, len, &used, &out, &err);
		if (used > len) __builtin_trap();
		at += used;
		if (rc < 0) break;
		if (rc == 1) {
			json_t *t = json_object_get(out, "type");
			if (!json_is_object(out) || !json_is_string(t)) __builtin_trap();
			char *buf = NULL;
			size_t blen = 0;
			if (frame_encode(out, FRAME_MAX, &buf, &blen, &err) == 0) {
				json_t *back = frame_parse(buf + 4, blen - 4, &err);
				if (!back || !json_equal(back, out)) __builtin_trap();
				json_decref(back);
				frame_buf_free(buf);
			}
			json_decref(out);
		} else if (used == 0 && len) __builtin_trap(); /* no progress and no frame */
	}
	(void)frame_reader_partial(&r);
	frame_reader_free(&r);
	struct world_err err = { 0, "" };
	json_t *v = frame_parse((const char *)data, size, &err);
	json_decref(v);
	return 0;
}
