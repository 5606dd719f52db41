/* common/elf.c: see elf.h. */
#include "common/elf.h"
#include <elf.h>
#include <string.h>

enum world_elf_verdict world_elf_check_static(const unsigned char *b, size_t n)
{
	if (n < sizeof(Elf64_Ehdr) || memcmp(b, ELFMAG, SELFMAG) != 0) return WORLD_ELF_NOT_ELF;
	Elf64_Ehdr eh;
	memcpy(&eh, b, sizeof eh); /* b need not be aligned */
	if (b[EI_CLASS] != ELFCLASS64 || eh.e_machine != EM_X86_64) return WORLD_ELF_WRONG_ARCH;
	if (eh.e_phoff > n || eh.e_phentsize != sizeof(Elf64_Phdr) ||
	    (size_t)eh.e_phnum * sizeof(Elf64_Phdr) > n - eh.e_phoff)
		return WORLD_ELF_BAD_PHDRS;
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;
		memcpy(&ph, b + eh.e_phoff + (size_t)i * sizeof ph, sizeof ph);
		if (ph.p_type == PT_INTERP) return WORLD_ELF_DYNAMIC;
	}
	return WORLD_ELF_STATIC;
}
