#!/bin/bash
# bench/daemon_bench.sh: MCP tools/call throughput and p50/p99 of tools_decho
# and ailang-read at 1, 8 and 16 clients against worldd serve on a temporary
# store (published with world-publish, session minted with worldd session
# mint, both confirmed through a pty), beside the bare supervisor rate; then
# the share of the daemon's time in HTTP, capsule and store from its request
# log. Figures only. Env: top_builddir, top_srcdir; DAEMON_BENCH_CALLS (400).
set -e
B=$top_builddir; S=$top_srcdir
WORLDD=$B/cli/worldd; AIL=$B/interp/ailang-lite; PTY=$S/tests/publish/pty.py
T=$(mktemp -d /tmp/world-dbench.XXXXXX); DPID=""
trap '[ -n "$DPID" ] && kill -KILL $DPID 2>/dev/null; rm -rf "$T"' EXIT
DB=$T/world.db; mkdir -p "$T/ws/bench"; printf 'hello, world\n' > "$T/ws/bench/hello.txt"
"$WORLDD" epoch bootstrap --store "$DB" --ailang-bin "$AIL" >/dev/null
for m in packages/quickstart/transitions.json packages/se-tools/transitions.json; do
  n=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' "$S/$m")
  (cd "$S" && env -u CI -u GITHUB_ACTIONS python3 "$PTY" --after '> ' --answer "publish $n transitions to $DB" \
    --out "$T/o" --err "$T/e" --tty "$T/t" -- "$B/cli/world-publish" transitions --store "$DB" --manifest "$m" --ailang-bin "$AIL")
done
env -u CI -u GITHUB_ACTIONS python3 "$PTY" --after '[y/N] ' --answer y --out "$T/cred" --err "$T/e" --tty "$T/t" -- \
  "$WORLDD" session mint --store "$DB" --episode bench --grant Workspace.Read=worktree:9007199254740992
CRED=$(cat "$T/cred")
# One session does all the calls: its episode gets every worker
# (--session-share 8), so the figures compare with the ones before shares.
"$WORLDD" serve --store "$DB" --ailang-bin "$AIL" --listen 127.0.0.1:0 --workspace-root "$T/ws" --tool-ailang-bin "$AIL" \
  --capacity 8 --session-share 8 >"$T/serve.out" 2>"$T/serve.log" &
DPID=$!
for _ in $(seq 1 300); do grep -q '^worldd listening on' "$T/serve.out" && break; sleep 0.1; done
PORT=$(sed -n 's/^worldd listening on http:\/\/127.0.0.1://p' "$T/serve.out")
"$B/bench/daemon_bench" "$PORT" "$CRED" "$AIL" "${DAEMON_BENCH_CALLS:-400}" \
  tools_decho '{"message":"hello, world"}' ailang-read '{"path":"hello.txt"}'
kill -TERM $DPID; wait $DPID || true; DPID=""
python3 - "$T/serve.log" <<'PY'
import re, sys
tot = {}
for line in open(sys.argv[1]):
    if "rpc=tools/call" not in line: continue
    f = dict(re.findall(r"(\w+)=(\S+)", line))
    for k in ("ms", "capsule_ms", "broker_ms", "commit_ms"):
        if k in f: tot[k] = tot.get(k, 0) + float(f[k])
if tot.get("ms") and "capsule_ms" in tot:
    ms = tot["ms"]
    other = ms - tot["capsule_ms"] - tot.get("broker_ms", 0) - tot.get("commit_ms", 0)
    print("\nshare of the daemon's request time (tools/call): capsule %.1f%%, broker/handler %.1f%%, store commit %.1f%%, HTTP+JSON-RPC+queueing %.1f%%"
          % (100 * tot["capsule_ms"] / ms, 100 * tot.get("broker_ms", 0) / ms, 100 * tot.get("commit_ms", 0) / ms, 100 * other / ms))
else:
    print("\n(the daemon's request log carries no capsule_ms/commit_ms fields: no time shares)")
PY
