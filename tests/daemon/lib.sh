# tests/daemon/lib.sh: helpers for the daemon tests (source after tap.sh).
#   daemon_setup            a store in $T with tools.echo (open to every
#                           session), tests.secret (needs Secret.Read=vault),
#                           tests.notobject, and sessions $CRED (no grants),
#                           $CRED_GRANT (Secret.Read=vault:5), $CRED_EXPIRED
#   daemon_start [flags]    starts worldd serve on 127.0.0.1:0; sets $DPID, $URL
#   daemon_stop             SIGTERM, bounded wait; sets $DRC (exit status)
#   http METHOD PATH [curl args]  sets $STATUS, $CTYPE, $BODY
FIXTURE="$top_builddir/tests/daemon/fixture"
CRED=$(printf '1%.0s' $(seq 64))
CRED_GRANT=$(printf '2%.0s' $(seq 64))
CRED_EXPIRED=$(printf '3%.0s' $(seq 64))
CRED_UNKNOWN=$(printf '4%.0s' $(seq 64))

daemon_setup() {
  T=$(mktemp -d "${TMPDIR:-/tmp}/world-daemon.XXXXXX")
  trap 'daemon_kill; rm -rf "$T"' EXIT
  DB="$T/db"
  "$FIXTURE" publish "$DB" "$AILANG_LITE" tools.echo "$top_srcdir/tests/interp/conformance/echo.ail" || bail "fixture publish"
  "$FIXTURE" publish "$DB" "$AILANG_LITE" tests.secret "$top_srcdir/tests/interp/conformance/echo.ail" \
    '{"cost":1,"effect":"Secret.Read","scope":"vault"}' || bail "fixture publish secret"
  "$FIXTURE" publish "$DB" "$AILANG_LITE" tests.notobject "$top_srcdir/tests/daemon/notobject.ail" || bail "fixture publish notobject"
  "$FIXTURE" session "$DB" "$CRED" ep-a '[]' +3600 || bail "fixture session"
  "$FIXTURE" session "$DB" "$CRED_GRANT" ep-b '[{"budget":5,"effect":"Secret.Read","scope":"vault"}]' +3600 || bail "fixture session"
  "$FIXTURE" session "$DB" "$CRED_EXPIRED" ep-c '[]' -1 || bail "fixture session"
}

daemon_start() {
  : > "$T/out"; : > "$T/err"
  local listen=(--listen 127.0.0.1:0) a
  for a in "$@"; do [ "$a" = --listen ] && listen=(); done
  "$WORLDD" serve --store "$DB" --ailang-bin "$AILANG_LITE" "${listen[@]}" "$@" >"$T/out" 2>"$T/err" &
  DPID=$!
  URL=""
  for _ in $(seq 1 300); do # at most 30 s
    URL=$(sed -n 's/^worldd listening on //p' "$T/out")
    [ -n "$URL" ] && return 0
    kill -0 "$DPID" 2>/dev/null || break
    sleep 0.1
  done
  diag "daemon did not start: $(cat "$T/err")"
  return 1
}

daemon_stop() {
  kill -TERM "$DPID" 2>/dev/null
  for _ in $(seq 1 400); do # at most 40 s
    kill -0 "$DPID" 2>/dev/null || break
    sleep 0.1
  done
  wait "$DPID"; DRC=$?
  DPID=""
}

daemon_kill() {
  [ -n "${DPID:-}" ] && kill -KILL "$DPID" 2>/dev/null && wait "$DPID" 2>/dev/null
  DPID=""
}

http() {
  local method=$1 path=$2; shift 2
  local out
  out=$(curl -sS -m 30 -X "$method" -o "$T/body" -w '%{http_code} %{content_type}' "$@" "$URL$path" 2>"$T/curlerr")
  STATUS=${out%% *}; CTYPE=${out#* }
  BODY=$(cat "$T/body")
}

auth() { printf 'Authorization: Bearer %s' "$1"; }
MCP_HDRS=(-H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream')
mcp() { # CRED JSON [extra curl args]: POST /mcp/
  local c=$1 j=$2; shift 2
  http POST /mcp/ -H "$(auth "$c")" "${MCP_HDRS[@]}" --data-binary "$j" "$@"
}
# The JSON of an SSE answer (the data: line), or the body itself.
sse_json() { if printf '%s' "$BODY" | grep -q '^data: '; then printf '%s' "$BODY" | sed -n 's/^data: //p'; else printf '%s' "$BODY"; fi; }
jget() { python3 -c 'import json,sys; v=json.load(sys.stdin)
for k in sys.argv[1].split("."):
    v = v[int(k)] if isinstance(v, list) else v.get(k) if isinstance(v, dict) else None
    if v is None: break
print(json.dumps(v) if not isinstance(v, str) else v)' "$1"; }
