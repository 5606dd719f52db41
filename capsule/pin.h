/* capsule/pin.h: pinning the interpreter (docs/design.md §4).
 *
 * Owns: reading an interpreter binary, checking it is a static ELF, hashing
 * it (sha256, OpenSSL's low-level assembly) and copying it into a memfd in
 * the same pass, so that the bytes hashed are the bytes that run; sealing
 * that memfd (F_SEAL_WRITE|GROW|SHRINK|SEAL) once, and only once, the hash
 * is known to match.
 *
 * The pin is done on every run (the re-hash is the point: a file swapped on
 * disk is caught at the next run), so its ~1.3 ms are hidden rather than
 * skipped: capsule_pin_begin() opens the file and makes the memfd at once,
 * then copies and hashes on a thread while the caller prepares a capsule
 * (which may inherit the still-unsealed memfd: its setup runs our code,
 * never the interpreter). capsule_pin_wait() joins. The rule that keeps
 * this safe: a memfd is sealed only after its bytes matched, and nothing is
 * exec'd from a memfd that is not sealed (capsule_interp_sealed, checked in
 * every exec path inside a capsule). */
#ifndef WORLD_CAPSULE_PIN_H
#define WORLD_CAPSULE_PIN_H
#include "common/error.h"
#include <stdbool.h>

struct capsule_pin;

/* Start pinning `path`. expected_ref ("sha256:<64 hex>") may be NULL.
 * Errors found before any byte is read return here: WX_BAD_INPUT for a
 * malformed ref or a path that is not a regular file, WX_NOT_FOUND / WX_IO
 * on open, WX_IO on memfd_create. Everything else (read errors, not a
 * static ELF, an empty file, WX_HASH_MISMATCH "interpreter hash mismatch:
 * expected sha256:... got sha256:... (PATH)") is the outcome of
 * capsule_pin_wait. When no thread can be made the pin is done here,
 * synchronously. */
struct capsule_pin *capsule_pin_begin(const char *path, const char *expected_ref, struct world_err *err);

/* The memfd (owned by the pin until capsule_pin_take). */
int capsule_pin_fd(const struct capsule_pin *p);

/* Wait for the pin to finish. 0: the memfd is sealed and matched; ref_out
 * (>= 72 bytes, may be NULL) gets "sha256:<hex>". -1: the pin's error
 * (the same one on every call). */
int capsule_pin_wait(struct capsule_pin *p, char *ref_out, struct world_err *err);

/* Wait, then free the pin; returns its memfd (the caller owns it) when the
 * pin succeeded, else closes it and returns -1. */
int capsule_pin_take(struct capsule_pin *p);

/* Wait, close the memfd and free the pin (NULL is fine). */
void capsule_pin_free(struct capsule_pin *p);

/* The whole pin in one call: begin, wait, take. *memfd_out gets the sealed
 * memfd (-1 on failure); errors as above. */
int capsule_pin_interpreter(const char *path, const char *expected_ref, int *memfd_out,
                            char *ref_out, struct world_err *err);

/* True when fd carries every seal the pin sets: what exec paths check
 * before executing it (a pin that failed or has not finished leaves it
 * unsealed). */
bool capsule_interp_sealed(int fd);
#endif
