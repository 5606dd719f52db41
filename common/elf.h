/* common/elf.h: is this an interpreter a capsule can run?
 *
 * Owns: the one check that the first bytes of a file are a static x86_64
 * ELF64 (no PT_INTERP), the only kind of interpreter a capsule root (no
 * loader, no libc) can exec. The archive applies it before archiving a file
 * and the pin (capsule/pin.c) before running one; each words its own
 * refusal. */
#ifndef WORLD_COMMON_ELF_H
#define WORLD_COMMON_ELF_H
#include <stddef.h>

enum world_elf_verdict {
	WORLD_ELF_STATIC = 0, /* a static x86_64 ELF64 */
	WORLD_ELF_NOT_ELF,    /* no ELF magic, or shorter than an ELF header */
	WORLD_ELF_WRONG_ARCH, /* not ELF64, or not x86_64 */
	WORLD_ELF_BAD_PHDRS,  /* the program headers are not inside b[0..n) */
	WORLD_ELF_DYNAMIC,    /* it names a program interpreter (a dynamic loader) */
};

/* b[0..n): the start of the file (its program headers must be inside). */
enum world_elf_verdict world_elf_check_static(const unsigned char *b, size_t n);
#endif
