#!/bin/sh
# Quick-start step 30: the supervisor. Runs DESIGN §2's echo transition
# through the supervisor in a capsule with ailang-lite (admission, the
# frame protocol, deadlines, caps), prints its output and a one-screen
# summary of the profile it ran under, then a source check that refuses a
# world/* import. Env: WORLDD, AILANG_LITE, DEMO_DIR.
set -e
W=$WORLDD
cat > "$DEMO_DIR/echo.ail" <<'AIL'
module echo
export func main(input: string) -> string { "{\"echo\":${input}}" }
AIL
echo "worldd invoke: the echo transition through the supervisor, in a capsule, with ailang-lite"
echo "  input:  {\"message\":\"hello, world\"}"
out=$("$W" invoke --ailang-bin "$AILANG_LITE" --source "$DEMO_DIR/echo.ail" \
  --input '{"message":"hello, world"}' --summary 2>"$DEMO_DIR/summary.txt")
echo "  output: $out"
echo
echo "the profile it ran under:"
sed 's/^/  /' "$DEMO_DIR/summary.txt"

cat > "$DEMO_DIR/bad.ail" <<'AIL'
module bad
import world/secrets (get)
export func main(input: string) -> string { get(input) }
AIL
echo
echo "worldd source check: a transition importing world/secrets, checked in an empty capsule root"
rc=0
"$W" source check --ailang-bin "$AILANG_LITE" --source "$DEMO_DIR/bad.ail" 2>"$DEMO_DIR/check.err" || rc=$?
if [ "$rc" -ne 19 ]; then
  echo "unexpected: source check exit $rc (want 19)"; cat "$DEMO_DIR/check.err"; exit 1
fi
echo "  refused (exit $rc): $(cat "$DEMO_DIR/check.err")"
