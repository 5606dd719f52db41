/* tlog/note.h: C2SP signed notes (https://c2sp.org/signed-note) with
 * Ed25519 keys, byte-compatible with Go's golang.org/x/mod/sumdb/note.
 *
 * Owns: key generation, the key texts, signing and verifying a note.
 *
 * Key texts (Go's note formats; NAME non-empty, no '+', no white space):
 *   signer key   PRIVATE+KEY+NAME+HASH+BASE64(0x01 ‖ 32-byte Ed25519 seed)
 *   verifier key NAME+HASH+BASE64(0x01 ‖ 32-byte Ed25519 public key)
 * HASH: 8 lower-case hex digits, the first 4 bytes (big-endian) of
 * SHA-256(NAME ‖ "\n" ‖ 0x01 ‖ public key).
 *
 * A note: TEXT (non-empty, ends with "\n", valid UTF-8 without control
 * characters but "\n"), a blank line, and
 * one or more signature lines
 *   "— NAME BASE64(HASH4 ‖ 64-byte Ed25519 signature of TEXT)\n"
 * ("—" is the em dash U+2014). Verification, as Go's note.Open: the note
 * must be well formed; a signature by the given key (same name and hash)
 * must be present and valid; other signatures (keys we do not know) are
 * ignored; a bad signature by our key refuses the note. Base64 in key
 * texts and signature lines is read as Go's StdEncoding reads it (non-zero
 * padding bits accepted: tests/tlog/go_verify.sh's differential test).
 *
 * Returned strings are malloc'd; the caller frees them. Errors: WX_BAD_INPUT
 * for a malformed key or note, WX_INTEGRITY for a missing or bad signature,
 * WX_FAIL for a libcrypto failure. */
#ifndef WORLD_TLOG_NOTE_H
#define WORLD_TLOG_NOTE_H
#include <stddef.h>
#include <stdint.h>
#include "common/error.h"

#define NOTE_NAME_MAX 255

struct note_vkey {
	char name[NOTE_NAME_MAX + 1];
	uint32_t hash;
	unsigned char pub[32];
};

/* A new Ed25519 key named `name`: both texts, without a trailing newline. */
int note_key_generate(const char *name, char **skey, char **vkey, struct world_err *err);
/* Parses a verifier key text (surrounding white space, e.g. a file's final
 * newline, is ignored); checks that HASH matches the name and key. */
int note_vkey_parse(const char *text, struct note_vkey *out, struct world_err *err);
/* The verifier key text of a signer key text. */
int note_skey_vkey(const char *skey_text, char **vkey, struct world_err *err);

/* Signs `text` (non-empty, ending in "\n") with the signer key text:
 * *signed_note = text ‖ "\n" ‖ signature line. */
int note_sign(const char *skey_text, const char *text, char **signed_note, struct world_err *err);

/* A parsed signer key, for signing many notes (the key parsed once); one
 * thread at a time per signer. */
struct note_signer;
struct note_signer *note_signer_new(const char *skey_text, struct world_err *err);
int note_signer_sign(struct note_signer *s, const char *text, size_t len, char **signed_note,
                     struct world_err *err);
const char *note_signer_name(const struct note_signer *s);
void note_signer_free(struct note_signer *s);

/* Verifies `note` (len bytes) against the verifier key text; on success
 * *text (if non-NULL) is the note's text (ending in "\n"). */
int note_verify(const char *vkey_text, const char *note, size_t len, char **text, struct world_err *err);
int note_verify_key(const struct note_vkey *key, const char *note, size_t len, char **text,
                    struct world_err *err);
#endif
