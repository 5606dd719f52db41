# interp/: ailang-lite, the bundled AILANG-subset interpreter (DESIGN §11).
# It is linked -static (capsule roots hold no libc). Under --enable-sanitizers
# the static copy stays unsanitized for capsules, and a sanitized dynamic copy
# (ailang-lite-san) is what the interpreter's own tests run directly.
AILANG_LITE_SOURCES = interp/main.c
bin_PROGRAMS += interp/ailang-lite
interp_ailang_lite_SOURCES = $(AILANG_LITE_SOURCES)
interp_ailang_lite_CFLAGS = -std=gnu11 -Wall -Wextra
interp_ailang_lite_LDFLAGS = -static
if SANITIZERS
noinst_PROGRAMS += interp/ailang-lite-san
interp_ailang_lite_san_SOURCES = $(AILANG_LITE_SOURCES)
interp_ailang_lite_san_CFLAGS = $(AM_CFLAGS)
AILANG_LITE_DIRECT_NAME = ailang-lite-san
else
AILANG_LITE_DIRECT_NAME = ailang-lite
endif
