#!/bin/sh
# scripts/quickstart.sh: the main job on the bundled defaults. Installs what
# it needs, builds World, creates a temporary store and runs each component's
# demo step (scripts/demo.d/*.sh, in order), printing what happened.
set -e
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/scripts/install-deps.sh"
"$top/scripts/build.sh" "$top/build/main"
WORLDD="$top/build/main/cli/worldd"
AILANG_LITE="$top/build/main/interp/ailang-lite"
DEMO_DIR=$(mktemp -d /tmp/world-demo.XXXXXX)
trap 'rm -rf "$DEMO_DIR"' EXIT
export WORLDD AILANG_LITE DEMO_DIR top
STORE="$DEMO_DIR/world.db"; export STORE
echo "== World quick start (temporary store $STORE)"
for step in "$top"/scripts/demo.d/*.sh; do
  [ -f "$step" ] || continue
  echo
  echo "== $(basename "$step" .sh)"
  sh "$step"
done
echo
echo "== quick start finished"
