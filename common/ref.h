/* common/ref.h: object refs and SHA-256 (docs/design.md §6.1).
 *
 * Owns: the one textual form of a ref, "sha256:" followed by exactly 64
 * lowercase hex digits, its strict parser, and SHA-256 over bytes, files and
 * fds (OpenSSL libcrypto EVP, which uses the CPU's SHA extensions), and
 * the ref of a world (world_world_ref: the one place its formula lives).
 * Uppercase hex, any other length, and any algorithm but sha256 are refused. */
#ifndef WORLD_COMMON_REF_H
#define WORLD_COMMON_REF_H
#include <stddef.h>
#include <stdint.h>
#include "common/error.h"

#define WORLD_REF_LEN 71   /* strlen("sha256:") + 64 */
#define WORLD_REF_SIZE 72  /* buffer size for a ref plus its NUL */
#define WORLD_DIGEST_LEN 32

/* Parse s strictly. digest may be NULL (validate only). On failure err says
 * what is wrong ("ref \"...\": hex digits must be lowercase") with
 * WX_BAD_INPUT. what names the field for the message (e.g. "transitionRef");
 * NULL means "ref". */
int world_ref_parse(const char *s, const char *what, unsigned char digest[WORLD_DIGEST_LEN],
                    struct world_err *err);
/* 1 when s is a valid ref, else 0. */
int world_ref_valid(const char *s);
/* Format a digest as "sha256:<hex>" into out (WORLD_REF_SIZE bytes). */
void world_ref_format(const unsigned char digest[WORLD_DIGEST_LEN], char out[WORLD_REF_SIZE]);

/* SHA-256 of buf[0..len). Returns 0, or -1 (WX_FAIL) if libcrypto fails. */
int world_sha256(const void *buf, size_t len, unsigned char out[WORLD_DIGEST_LEN],
                 struct world_err *err);
/* The ref of buf: "sha256:" + hex of its SHA-256. */
int world_hash_ref(const void *buf, size_t len, char out[WORLD_REF_SIZE], struct world_err *err);
/* SHA-256 of everything readable from fd (from its current offset). *len_out
 * (may be NULL) receives the byte count. what names the fd for errors. */
int world_sha256_fd(int fd, const char *what, unsigned char out[WORLD_DIGEST_LEN],
                    uint64_t *len_out, struct world_err *err);

/* A world (docs/design.md §6.3): revision N of the log, its logHead the
 * entry hash of entry N and its stateRoot that entry's output. Its
 * canonical JSON {"logHead":LOG_HEAD,"revision":N,"stateRoot":STATE_ROOT}
 * goes into json (NULL: not wanted) and the ref of those bytes into ref
 * (NULL: not wanted). log_head and state_root must be refs (WX_BAD_INPUT
 * naming the field otherwise: no JSON is built around other text).
 * Returns the JSON's length, or -1. */
#define WORLD_WORLD_JSON_SIZE 256
int world_world_ref(long long revision, const char *state_root, const char *log_head,
                    char json[WORLD_WORLD_JSON_SIZE], char ref[WORLD_REF_SIZE], struct world_err *err);
#endif
