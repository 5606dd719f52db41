#!/bin/sh
# Quick-start step 20: run the echo transition in a capsule with
# `worldd run` (pinned ailang-lite, empty tmpfs root, namespaces, seccomp,
# landlock, rlimits, cgroups), then show what the capsule is made of.
set -e
src="$top/packages/quickstart/echo.ail"
if [ ! -f "$src" ]; then
  src="$DEMO_DIR/echo.ail"
  cat > "$src" <<'AIL'
module quickstart/echo
export func main(input: string) -> string { "{\"echo\":${input}}" }
AIL
fi
echo "worldd run --ailang-bin ailang-lite --source $(basename "$src") --input '{\"hello\":\"capsule\"}' --summary"
"$WORLDD" run --ailang-bin "$AILANG_LITE" --source "$src" --input '{"hello":"capsule"}' --summary 2>&1
echo
echo "the bounded source check, and the profiles:"
"$WORLDD" check --ailang-bin "$AILANG_LITE" --source "$src"
"$WORLDD" profile list
echo
echo "worldd profile show transition (first lines; --format json|pfc|bpf for the rest):"
"$WORLDD" profile show transition | sed -n '1,/^\[rlimits\]/p'
