#!/bin/bash
# tests/supervisor/test_spawner as nobody (setpriv), when the suite runs as
# root: the spawner and its capsules unprivileged (user namespaces of their
# own, no cgroups: those assertions skip with the reason, the process ones
# hold). The binaries are copied to a 0755 directory nobody can reach, laid
# out as a build tree (top_builddir).
. "$top_srcdir/tests/tap.sh"
if [ "$(id -u)" != 0 ]; then
  skip "not root: tests/supervisor/test_spawner itself is the unprivileged run" "test_spawner as nobody"
  done_testing
  exit
fi
if ! command -v setpriv >/dev/null; then
  skip "setpriv missing" "test_spawner as nobody"
  done_testing
  exit
fi
T=$(mktemp -d /tmp/world-spawner-unpriv.XXXXXX)
trap 'rm -rf "$T"' EXIT
chmod 755 "$T"
mkdir -p "$T/tests/supervisor"
cp "$top_builddir/tests/supervisor/test_spawner" "$top_builddir/tests/supervisor/stub-interp" "$T/tests/supervisor/"
chmod 755 "$T/tests" "$T/tests/supervisor"
mkdir "$T/tmp" && chown nobody:nogroup "$T/tmp" # its TMPDIR
# The TAP output is test_spawner's own (sanitizer options travel in the env).
cd "$T" && top_builddir="$T" TMPDIR="$T/tmp" setpriv --reuid=nobody --regid=nogroup --clear-groups \
  "$T/tests/supervisor/test_spawner"
