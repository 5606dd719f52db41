#!/bin/bash
# scripts/quickstart.sh [--keep DIR]: the main job on the bundled defaults.
# Installs what running needs, builds World, then on a temporary store (or
# DIR with --keep, kept afterwards for exploring):
#   1. binds the store to ailang-lite's release (worldd epoch bootstrap);
#   2. publishes packages/quickstart and packages/se-tools (world-publish);
#   3. mints a session for episode `demo` (worldd session mint);
#   4. starts the daemon (worldd serve) on 127.0.0.1 with a worktree root;
#   5. calls tools_decho, ailang-write and ailang-read over MCP (curl);
#   6. prints the provenance of every entry it made (worldd why, worldd
#      replay --all, worldd scan), and stops the daemon.
# Publishing and minting are attended steps: they refuse without a person at
# a terminal. This script types their confirmations itself through a
# pseudo-terminal (tests/publish/pty.py) and says so each time.
set -e
top=$(cd "$(dirname "$0")/.." && pwd)
keep=""
if [ "${1:-}" = "--keep" ]; then
  [ -n "${2:-}" ] || { echo "quickstart: --keep needs a directory" >&2; exit 2; }
  keep=$2
elif [ -n "${1:-}" ]; then
  echo "usage: scripts/quickstart.sh [--keep DIR]" >&2; exit 2
fi
"$top/scripts/install-deps.sh"
"$top/scripts/build.sh" "$top/build/main"
B="$top/build/main"
WORLDD="$B/cli/worldd"; PUBLISH="$B/cli/world-publish"; AILANG_LITE="$B/interp/ailang-lite"
PTY="$top/tests/publish/pty.py"
if [ -n "$keep" ]; then
  mkdir -p "$keep"; DIR=$(cd "$keep" && pwd)
  [ ! -e "$DIR/world.db" ] || { echo "quickstart: $DIR/world.db exists; give an empty directory" >&2; exit 2; }
else
  DIR=$(mktemp -d /tmp/world-quickstart.XXXXXX)
fi
STORE="$DIR/world.db"; WS="$DIR/worktrees"; mkdir -p "$WS"
DPID=""
cleanup() {
  [ -n "$DPID" ] && kill -KILL "$DPID" 2>/dev/null && wait "$DPID" 2>/dev/null
  [ -n "$keep" ] || rm -rf "$DIR"
}
trap cleanup EXIT
step() { echo; echo "== $*"; }
attended() { # ANSWER-AFTER ANSWER CMD...: type ANSWER at the prompt ending in ANSWER-AFTER
  local after=$1 answer=$2; shift 2
  env -u CI -u GITHUB_ACTIONS python3 "$PTY" --after "$after" --answer "$answer" \
    --out "$DIR/.out" --err "$DIR/.err" --tty "$DIR/.tty" -- "$@"
  local rc=$?
  sed 's/^/  terminal| /' "$DIR/.tty"; echo
  [ -s "$DIR/.err" ] && sed 's/^/  stderr| /' "$DIR/.err"
  return $rc
}

echo "== World quick start: store $STORE"
step "1. bind the store to the bundled interpreter's release"
"$WORLDD" epoch bootstrap --store "$STORE" --ailang-bin "$AILANG_LITE" | sed 's/^/  /'

cd "$top" # publish from the repository root: the manifest paths below and the sources each manifest names are relative to it (docs/publishing.md)
for pkg in quickstart se-tools; do
  m="packages/$pkg/transitions.json"
  n=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' "$m")
  step "2. publish $m ($n transition(s)); the typed confirmation is entered by this script through a pseudo-terminal"
  attended '> ' "publish $n transitions to $STORE" "$PUBLISH" transitions --store "$STORE" --manifest "$m" --ailang-bin "$AILANG_LITE"
  sed 's/^/  /' "$DIR/.out"
done

step "3. mint a session for episode demo; the y/N answer is typed by this script through a pseudo-terminal"
attended '[y/N] ' y "$WORLDD" session mint --store "$STORE" --episode demo --ttl 3600 \
  --grant Workspace.Read=worktree:20 --grant Workspace.Write=worktree:20
CRED=$(cat "$DIR/.out")
echo "  credential: ${CRED:0:8}… (64 hex digits; only its sha256 is stored)"
mkdir -p "$WS/demo"

step "4. start the daemon"
"$WORLDD" serve --store "$STORE" --ailang-bin "$AILANG_LITE" --listen 127.0.0.1:0 \
  --workspace-root "$WS" --tool-ailang-bin "$AILANG_LITE" >"$DIR/serve.out" 2>"$DIR/serve.log" &
DPID=$!
URL=""
for _ in $(seq 1 300); do
  URL=$(sed -n 's/^worldd listening on //p' "$DIR/serve.out")
  [ -n "$URL" ] && break
  kill -0 "$DPID" 2>/dev/null || { cat "$DIR/serve.log" >&2; exit 1; }
  sleep 0.1
done
[ -n "$URL" ] || { echo "quickstart: the daemon did not start" >&2; cat "$DIR/serve.log" >&2; exit 1; }
sed 's/^/  /' "$DIR/serve.out"

mcp() { # JSON-RPC body -> the JSON answer (plain JSON asked for)
  curl -sS -m 30 -X POST "$URL/mcp/" -H "Authorization: Bearer $CRED" -H 'Content-Type: application/json' \
    -H 'Accept: application/json, text/event-stream' -H 'MCP-Protocol-Version: 2025-06-18' --data-binary "$1" |
    sed -n -e 's/^data: //p' -e 't' -e '/^{/p'
}
tool() { # NAME ARGS: prints the structured result
  local body
  body=$(python3 -c 'import json,sys; print(json.dumps({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":sys.argv[1],"arguments":json.loads(sys.argv[2])}}))' "$1" "$2")
  echo "  → tools/call $1 $2"
  mcp "$body" | python3 -c 'import json,sys
r = json.load(sys.stdin)
if "error" in r: print("  ← error", json.dumps(r["error"])); sys.exit(1)
res = r["result"]
print("  ←%s %s" % (" (isError)" if res.get("isError") else "", json.dumps(res.get("structuredContent", res.get("content")), sort_keys=True)))'
}
step "5. an agent's calls over MCP ($URL/mcp/)"
mcp '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"quickstart","version":"1"}}}' >/dev/null
echo "  tools/list: $(mcp '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' | python3 -c 'import json,sys; print(" ".join(t["name"] for t in json.load(sys.stdin)["result"]["tools"]))')"
tool tools_decho '{"message":"hello, world"}'
tool ailang-write '{"path":"hello.ail","content":"module hello\nexport func main(input: string) -> string { input }\n"}'
tool ailang-read '{"path":"hello.ail"}'

step "6. provenance of the entries these calls made"
n=$("$WORLDD" world head --store "$STORE" | sed -n 's/.*revision \([0-9]*\).*/\1/p;s/.*"revision":\([0-9]*\).*/\1/p' | head -n1)
for i in $(seq 1 "${n:-0}"); do
  "$WORLDD" log get --store "$STORE" "$i" | python3 -c 'import json,subprocess,sys
e = json.load(sys.stdin)
rec = json.loads(subprocess.run([sys.argv[1], "object", "get", "--store", sys.argv[2], "--payload", e["transitionRef"]], capture_output=True, check=True).stdout)
print("  entry %s  %s  %s  record %s…  source %s…  interpreter %s…  effects %d" % (e["entryIndex"], rec["invocationId"], rec["skillId"], e["transitionRef"][7:19], rec["transitionFn"][7:19], rec["interpreter"][7:19], len(rec.get("effects", []))))' "$WORLDD" "$STORE"
done
echo "  worldd why 3 (every link from the last result back to its source and interpreter bytes):"
"$WORLDD" why 3 --store "$STORE" | sed 's/^/    /'
echo "  worldd replay --all (each entry re-run from the store; effects answered from their records):"
"$WORLDD" replay --all --store "$STORE" | sed 's/^/    /'
"$WORLDD" scan --store "$STORE" && echo "  worldd scan: clean"

step "7. stop the daemon (SIGTERM)"
kill -TERM "$DPID"; rc=0; wait "$DPID" || rc=$?; DPID=""
echo "  worldd serve exited $rc"
echo "  its request log:"; sed 's/^/    /' "$DIR/serve.log" | tail -n 8
echo
if [ -n "$keep" ]; then
  # quoted (printf %q) so that each line works when copied into a shell
  q() { printf '%q' "$1"; }
  echo "== kept in $DIR; try:"
  echo "  $(q "$WORLDD") log get --store $(q "$STORE") 1"
  echo "  $(q "$WORLDD") why 2 --store $(q "$STORE")"
  echo "  $(q "$WORLDD") replay 2 --store $(q "$STORE")"
  echo "  $(q "$WORLDD") session list --store $(q "$STORE")"
  echo "  $(q "$WORLDD") scan --store $(q "$STORE")"
  echo "  cat $(q "$WS/demo/hello.ail")"
fi
echo "== quick start finished"
