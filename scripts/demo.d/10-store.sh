#!/bin/sh
# Quick-start step 10: the content-addressed store. Archives the interpreter,
# stores a transition source and one invocation's objects, appends log
# entries (the store checks the chain), reads them back and runs the
# integrity scan. Env: WORLDD, AILANG_LITE, STORE, DEMO_DIR.
set -e
W=$WORLDD
echo "store: $STORE"

set -- $("$W" archive --store "$STORE" --ailang-bin "$AILANG_LITE")
interp=$1; shift
echo "archived interpreter $interp (release \"$*\")"
echo "  -> $STORE.artifacts/interpreters/sha256/${interp#sha256:}/"

src=$(printf 'module demo/echo\r\n\r\nexport func main(input: string) -> string {   \r\n  input\r\n}\r\n\r\n' |
  "$W" object put --store "$STORE" --semantic-id world/transition-source/v1 --provenance quickstart)
echo "stored transition source $src (CRLF, trailing blanks and blank lines canonicalised away)"

echo "canonical JSON: '{ \"b\": 1.50, \"a\": [1e2, -0] }' -> '$(printf '{ "b": 1.50, "a": [1e2, -0] }' | "$W" json canon)'"
if printf '{"a":1,"a":2}' | "$W" json canon 2>"$DEMO_DIR/canon.err"; then
  echo "unexpected: duplicate keys accepted"; exit 1
fi
echo "refused as expected: $(cat "$DEMO_DIR/canon.err")"

i=1
while [ $i -le 3 ]; do
  input=$(printf '{"message":"hello %d"}' $i | "$W" object put --store "$STORE" --semantic-id world/invocation-input/v1 --provenance quickstart)
  output=$(printf '{"message":"hello %d"}' $i | "$W" object put --store "$STORE" --semantic-id world/invocation-output/v1 --provenance quickstart)
  record=$(printf '{"episodeId":"demo","input":"%s","interpreter":"%s","invocationId":"mcp:demo:task-%d","output":"%s","semanticsEpoch":1,"skillId":"demo.echo","transitionFn":"%s"}' \
    "$input" "$interp" $i "$output" "$src" |
    "$W" object put --store "$STORE" --semantic-id world/invocation-record/v1 --provenance quickstart)
  line=$("$W" log append --store "$STORE" --transition-ref "$record" --state-root "$output" \
    --transition-fn "$src" --interpreter "$interp" --epoch 1 --written-by quickstart)
  echo "invocation $i: input $input"
  echo "              $line"
  i=$((i + 1))
done

echo "object read back: $("$W" object get --store "$STORE" "$input")"
echo "payload:          $("$W" object get --store "$STORE" "$input" --payload)"
echo "log entry 2:      $("$W" log get --store "$STORE" 2)"
echo "selected world:   $("$W" world head --store "$STORE")"

if "$W" log append --store "$STORE" --transition-ref "$record" --state-root "$output" \
    --transition-fn "$src" --interpreter "$interp" --index 7 2>"$DEMO_DIR/append.err"; then
  echo "unexpected: a gap in the log was accepted"; exit 1
fi
echo "the store refuses a broken chain: $(cat "$DEMO_DIR/append.err")"

out=$("$W" scan --store "$STORE")
if [ -n "$out" ]; then echo "$out"; echo "integrity scan found problems"; exit 1; fi
echo "integrity scan: clean and complete (it prints nothing when clean)"
echo "integrity scan with a 2-row budget prints its resume cursors:"
"$W" scan --store "$STORE" --rows 2 | sed 's/^/  /'
