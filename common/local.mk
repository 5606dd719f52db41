# common/: the utilities every layer uses and that depend on nothing of
# World -- errors and exit codes, file I/O, refs, canonical JSON, the JSON
# Schema subset, ELF checks, test-only pause points. Below store/ and every
# other room (docs/architecture.md).
libworld_a_SOURCES += common/error.c common/error.h common/file.c common/file.h \
	common/ref.c common/ref.h common/canon.c common/canon.h \
	common/jschema.c common/jschema.h common/elf.c common/elf.h \
	common/pause.c common/pause.h
