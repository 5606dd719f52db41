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
if [ ! -f Makefile ] || [ "$top/configure" -nt Makefile ]; then
  "$top/configure" -q CFLAGS="${WORLD_CFLAGS:--O2 -g} -Wall -Wextra -Werror" "$@"
fi
make -s -j"$(nproc)"
