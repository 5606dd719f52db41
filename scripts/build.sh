#!/bin/sh
# scripts/build.sh DIR [configure flags...]: configure (once) and build World
# out of tree in DIR with -Wall -Wextra -Werror.
set -e
top=$(cd "$(dirname "$0")/.." && pwd)
dir=$1; shift
cd "$top"
if [ ! -x configure ] || [ configure.ac -nt configure ] || [ ! -f build-aux/tap-driver.sh ]; then
  autoreconf -fi >/dev/null 2>&1 || autoreconf -fi
fi
mkdir -p "$dir"
cd "$dir"
# Reconfigure when configure changed or when this build asks for other flags
# than the last one did (a build dir configured without --enable-test-hooks
# would otherwise silently skip the race tests).
flags="CFLAGS=${WORLD_CFLAGS:--O2 -g} -Wall -Wextra -Werror $*"
if [ ! -f Makefile ] || [ "$top/configure" -nt Makefile ] || [ "$(cat .world-configure-flags 2>/dev/null)" != "$flags" ]; then
  old=$(cat .world-configure-flags 2>/dev/null || true)
  "$top/configure" -q CFLAGS="${WORLD_CFLAGS:--O2 -g} -Wall -Wextra -Werror" "$@"
  # make does not rebuild objects when only the flags changed
  if [ -n "$old" ] && [ "$old" != "$flags" ]; then make -s clean >/dev/null; fi
  printf '%s\n' "$flags" > .world-configure-flags
fi
make -s -j"$(nproc)"
