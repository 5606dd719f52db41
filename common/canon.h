/* common/canon.h: canonical JSON and canonical transition source (docs/design.md §6.2).
 *
 * Owns: the one byte form of every JSON value the project writes, and the one
 * text form of a transition source. Canonical JSON: no whitespace; object keys
 * sorted bytewise on their UTF-8 bytes; duplicate keys refused; numbers as
 * plain decimals (no exponent, no leading zeros, no trailing fractional zeros,
 * every zero -- including -0 and 0.000 -- as `0`); strings escape only `"`,
 * `\` and control characters (\b \t \n \f \r, the rest as \u00xx lowercase),
 * everything else raw UTF-8; invalid UTF-8 and escaped lone surrogates
 * refused; trailing data refused (trailing JSON whitespace is allowed in the
 * input); no trailing newline in the output.
 *
 * Limits (refused with WX_BAD_INPUT beyond them, see docs/store.md):
 *   WORLD_CANON_MAX_DIGITS  digits of a number's plain decimal form
 *   WORLD_CANON_MAX_EXP     magnitude of an exponent as written
 *   WORLD_CANON_MAX_DEPTH   nesting of arrays and objects
 *
 * Every error message names the byte offset in the input:
 *   "canonical JSON: byte 12: duplicate key \"a\"". */
#ifndef WORLD_COMMON_CANON_H
#define WORLD_COMMON_CANON_H
#include <jansson.h>
#include <stddef.h>
#include "common/error.h"

#define WORLD_CANON_MAX_DIGITS 100
#define WORLD_CANON_MAX_EXP 100000
#define WORLD_CANON_MAX_DEPTH 256

/* JSON text in[0..len) -> canonical bytes (malloc'd, NUL-terminated for
 * convenience; *out_len excludes the NUL). Any JSON value is accepted at the
 * top level. NULL + err (WX_BAD_INPUT, with byte offset) on bad input. */
char *world_canon_bytes(const char *in, size_t len, size_t *out_len, struct world_err *err);

/* jansson value -> canonical bytes (same form as world_canon_bytes; reals are
 * written with the shortest digits that round-trip, then normalised). */
char *world_canon_json(const json_t *v, size_t *out_len, struct world_err *err);

/* Strictly parse JSON text (all the rules above: duplicates, surrogates,
 * UTF-8, trailing data) into a jansson value. Numbers that jansson cannot
 * hold (integers beyond 64 bits) are refused. NULL + err on failure. */
json_t *world_json_parse(const char *in, size_t len, struct world_err *err);

/* 1 when in[0..len) is already exactly canonical JSON. */
int world_canon_is_canonical(const char *in, size_t len);

/* Transition source text -> canonical source (malloc'd, NUL-terminated):
 * valid UTF-8, no BOM, no NUL byte; CRLF and lone CR become LF; trailing
 * spaces and tabs stripped from each line; trailing blank lines dropped;
 * exactly one final LF. An empty (all-blank) source is refused. */
char *world_canon_source(const char *in, size_t len, size_t *out_len, struct world_err *err);

/* Length of the valid UTF-8 sequence at s (1-4), or 0 if invalid; n = bytes left. */
size_t world_utf8_seq(const unsigned char *s, size_t n);
#endif
