#!/bin/bash
# bench/exec_bench.sh: an exec call of `true` (issue 40, item 7), four arms in
# one run, interleaved (bench/exec_bench.c): a plain fork+exec, bwrap with
# comparable binds, sup_run_exec (the exec capsule alone) and an MCP
# tools/call of workspace-exec end to end through `worldd serve` -- a
# temporary store with se-tools published (world-publish) and a session
# holding a Workspace.Exec grant (worldd session mint), both confirmed
# through a pty, and an exec profile whose command `true` runs
# /usr/bin/true. Then where the MCP call's time goes, from the daemon's
# request log (capsule_ms: the plan capsule; broker_ms: the broker and the
# exec handler; commit_ms) and its WORLD_EXEC_TIMING lines (the exec
# capsule's own start, exit, drain and finish). Figures only.
# Env: top_builddir, top_srcdir; EXEC_BENCH_N (50) calls per arm; BWRAP.
set -e
B=${top_builddir:-.}; S=${top_srcdir:-.}
N=${EXEC_BENCH_N:-50}
export BWRAP=${BWRAP:-$(command -v bwrap || true)}
WORLDD=$B/cli/worldd; AIL=$B/interp/ailang-lite; PTY=$S/tests/publish/pty.py
if [ ! -x "$WORLDD" ] || ! command -v python3 >/dev/null; then
  echo "exec_bench.sh: no $WORLDD or no python3: the MCP arm is left out"
  exec "$B/bench/exec_bench" "$N"
fi
T=$(mktemp -d /tmp/world-xbench.XXXXXX)     # the store's folder: world.db, ws/
E=$(mktemp -d /tmp/world-xbench-etc.XXXXXX) # the profile: outside the store's folder
DPID=""
trap '[ -n "$DPID" ] && kill -KILL $DPID 2>/dev/null; rm -rf "$T" "$E"' EXIT
DB=$T/world.db; mkdir -p "$T/ws/bench"
"$WORLDD" epoch bootstrap --store "$DB" --ailang-bin "$AIL" >/dev/null
m=packages/se-tools/transitions.json
n=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' "$S/$m")
(cd "$S" && env -u CI -u GITHUB_ACTIONS python3 "$PTY" --after '> ' --answer "publish $n transitions to $DB" \
  --out "$T/o" --err "$T/e" --tty "$T/t" -- "$B/cli/world-publish" transitions --store "$DB" --manifest "$m" --ailang-bin "$AIL")
env -u CI -u GITHUB_ACTIONS python3 "$PTY" --after '[y/N] ' --answer y --out "$T/cred" --err "$T/e" --tty "$T/t" -- \
  "$WORLDD" session mint --store "$DB" --episode bench --grant Workspace.Exec=worktree:9007199254740992
CRED=$(cat "$T/cred")
TRUE=/usr/bin/true; [ -x "$TRUE" ] || TRUE=/bin/true
cat > "$E/bench.json" <<JSON
{"profile":"world/exec-profile/v1","project":"bench","path":["${TRUE%/true}"],"timeout_ms":10000,
 "commands":{"true":{"argv":["true"],"max_args":0}}}
JSON
WORLD_EXEC_TIMING=1 "$WORLDD" serve --store "$DB" --ailang-bin "$AIL" --listen 127.0.0.1:0 --workspace-root "$T/ws" \
  --tool-ailang-bin "$AIL" --exec-profile "$E/bench.json" >"$T/serve.out" 2>"$T/serve.log" &
DPID=$!
for _ in $(seq 1 600); do grep -q '^worldd listening on' "$T/serve.out" && break; kill -0 $DPID 2>/dev/null || break; sleep 0.1; done
PORT=$(sed -n 's/^worldd listening on http:\/\/127.0.0.1://p' "$T/serve.out")
if [ -z "$PORT" ]; then
  echo "exec_bench.sh: the daemon did not start:"; tail -5 "$T/serve.log"
  exit 1
fi
if ! grep -q 'exec profile .*: offered;' "$T/serve.log"; then
  # the host cannot confine an exec run (the probe says which arm): the
  # other arms still run, and say whether the capsule can be made at all
  echo "exec_bench.sh: no MCP arm: $(grep 'exec profile' "$T/serve.log" | head -1)"
  kill -TERM $DPID; wait $DPID || true; DPID=""
  "$B/bench/exec_bench" "$N"
  exit $?
fi
: > "$T/mark"; L0=$(wc -l < "$T/serve.log")   # what the probe printed is before this line
"$B/bench/exec_bench" "$N" "$PORT" "$CRED"
kill -TERM $DPID; wait $DPID || true; DPID=""
[ -n "$EXEC_BENCH_KEEP_LOG" ] && cp "$T/serve.log" "$EXEC_BENCH_KEEP_LOG"
tail -n +"$((L0 + 1))" "$T/serve.log" | python3 -c '
import re, sys, statistics as st
req, ph, tm, hd = [], {}, {}, {}
for line in sys.stdin:
    if "rpc=tools/call" in line and "capsule_ms=" in line:
        req.append({k: float(v) for k, v in re.findall(r"\b(\w*ms)=([0-9.]+)", line)})
    elif line.startswith("start "):
        for k, v in re.findall(r"(\w+) (-?\d+)", line): tm.setdefault(k, []).append(float(v))
    elif line.startswith("exec handler ms:") or line.startswith("exec before capsule_start ms:"):
        for k, v in re.findall(r"(\S+)=([0-9.]+)", line): hd.setdefault(k, []).append(float(v))
    elif "clone3" in line:
        for k, v in re.findall(r"\s*(.+?)=([0-9.]+)", line): ph.setdefault(k, []).append(float(v))
if not req:
    print("\n(the daemon logged no tools/call timings)"); sys.exit(0)
med = lambda k: st.median([r.get(k, 0) for r in req])
ms, cap, brk, com = med("ms"), med("capsule_ms"), med("broker_ms"), med("commit_ms")
print("\nwhere an MCP exec call goes (medians of the daemon request log, %d calls, whole ms): request %.0f;"
      " plan capsule %.0f; broker + exec handler %.0f; store commit %.0f" % (len(req), ms, cap, brk, com))
if hd:
    print("the exec handler and sup_run_exec before its capsule (medians, ms): " +
          ", ".join("%s %.2f" % (k, st.median(v)) for k, v in hd.items()))
if tm:
    print("its sup_run_exec (medians, ms from its start): capsule started %.0f, command exited %.0f, streams drained %.0f,"
          " finished %.0f" % tuple(st.median(tm.get(k, [0])) for k in ("start", "exited", "drained", "finished")))
if ph:
    print("  the capsule setup phases inside the daemon (medians, ms): " +
          ", ".join("%s %.2f" % (k, st.median(v)) for k, v in ph.items()))
'
