/* tlog/checkpoint.h: C2SP tlog-checkpoint bodies
 * (https://c2sp.org/tlog-checkpoint), the text a signed note carries:
 *
 *   ORIGIN\n
 *   SIZE\n          decimal, no sign, no leading zeros ("0" for none)
 *   BASE64(ROOT)\n  standard base64 of the 32-byte root hash
 *   [EXTENSION\n]*  optional non-empty lines, kept verbatim
 *
 * Owns: formatting and strict parsing of that body, and opening a signed
 * checkpoint (note_verify, then parse). Errors: WX_BAD_INPUT for a
 * malformed body; note_verify's codes for the signature. */
#ifndef WORLD_TLOG_CHECKPOINT_H
#define WORLD_TLOG_CHECKPOINT_H
#include <stddef.h>
#include <stdint.h>
#include "common/error.h"
#include "tlog/tlog.h"

struct tlog_checkpoint {
	char *origin;       /* malloc'd, non-empty, no newline */
	int64_t size;
	struct tlog_hash root;
	char *extensions;   /* malloc'd; "" or lines each ending in "\n" */
};

/* *out = "ORIGIN\nSIZE\nROOT\n" ‖ extensions (NULL or "" for none; else
 * non-empty lines, each ending in "\n"). */
int tlog_checkpoint_format(const char *origin, int64_t size, const struct tlog_hash *root,
                           const char *extensions, char **out, struct world_err *err);
/* Parses a body of len bytes (the note's text, not the signed note). */
int tlog_checkpoint_parse(const char *text, size_t len, struct tlog_checkpoint *cp, struct world_err *err);
/* Verifies the signed note against the verifier key text and parses its
 * text; a checkpoint whose origin is not the key's name is accepted (the
 * caller compares origins if it cares). */
int tlog_checkpoint_open(const char *vkey_text, const char *signed_note, size_t len,
                         struct tlog_checkpoint *cp, struct world_err *err);
void tlog_checkpoint_free(struct tlog_checkpoint *cp);
#endif
