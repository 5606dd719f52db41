#!/bin/bash
# A2A push notifications and the extended card (docs/daemon.md, "A2A"): the
# official @a2a-js/sdk client (tests/daemon/a2a-push.mjs) against worldd
# serve --a2a-webhook-allow, with two loopback receivers (a2a-hook.mjs): one
# under the allowlist, one outside it (never called: the control). With
# test hooks the daemon holds the first call before its commit, so a config
# is made, read, listed and deleted for a working task, and the second
# call is held in its capsule to be cancelled.
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/daemon/lib.sh"
NPM="$top_srcdir/build/npm/node_modules"
if ! command -v node >/dev/null || [ ! -d "$NPM/@a2a-js/sdk" ]; then
  skip "node or the npm @a2a-js/sdk package is missing (scripts/install-test-deps.sh)" "A2A push notifications"
  done_testing; exit
fi
daemon_setup
mkdir -p "$T/node" && ln -s "$NPM" "$T/node/node_modules" &&
  cp "$top_srcdir/tests/daemon/a2a-push.mjs" "$top_srcdir/tests/daemon/a2a-hook.mjs" "$T/node/"
HPIDS=()
trap 'daemon_kill; for p in "${HPIDS[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$T"' EXIT
for h in 1 2; do
  node "$T/node/a2a-hook.mjs" "$T/h$h.port" "$T/h$h.log" & HPIDS+=($!)
done
for _ in $(seq 1 200); do [ -s "$T/h1.port" ] && [ -s "$T/h2.port" ] && break; sleep 0.05; done
[ -s "$T/h1.port" ] && [ -s "$T/h2.port" ] || bail "the webhook receivers did not start"
H1="http://127.0.0.1:$(cat "$T/h1.port")/hook" H2="http://127.0.0.1:$(cat "$T/h2.port")/hook"

# flags: a prefix that is not an http:// URL with an IP host is a usage error
"$WORLDD" serve --store "$DB" --ailang-bin "$AILANG_LITE" --listen 127.0.0.1:0 --a2a-webhook-allow https://example.org/ >"$T/o" 2>"$T/e"
is "$?" 2 "--a2a-webhook-allow https://...: usage (exit 2)"
like "$(cat "$T/e")" "no TLS client" "... naming why"
"$WORLDD" serve --store "$DB" --ailang-bin "$AILANG_LITE" --listen 127.0.0.1:0 --a2a-webhook-allow http://hooks.example.org/ >"$T/o" 2>"$T/e"
is "$?" 2 "--a2a-webhook-allow with a host name: usage (exit 2; the daemon resolves no names)"

PD=-
if grep -q -- '-DWORLD_TEST_HOOKS=1' "$top_builddir/Makefile"; then
  PD=$T/pause; mkdir -p "$PD"
  export WORLD_TEST_PAUSE=coord.before_commit@1,sup.running@2 WORLD_TEST_PAUSE_DIR=$PD
else
  skip "built without --enable-test-hooks (no pause points)" "a config made for a working task"
fi
daemon_start --a2a-webhook-allow "$H1" || bail "daemon did not start"
unset WORLD_TEST_PAUSE WORLD_TEST_PAUSE_DIR
timeout 120 node "$T/node/a2a-push.mjs" "$URL" "$CRED" "$CRED_GRANT" "$H1" "$T/h1.log" "$H2" "$T/h2.log" "$PD" "$T/err" >"$T/push.tap" 2>&1
rc=$?
tap_relay "$T/push.tap"
is "$rc" 0 "the SDK client script exits 0"
like "$(cat "$T/err")" "push url=http://127.0.0.1:[0-9]+/hook/s: delivered \(HTTP 200\)" "the daemon logs each delivery"
like "$(cat "$T/err")" "error push url=http://127.0.0.1:[0-9]+/hook/fail: the webhook answered HTTP 500; dropped" "... and a webhook's refusal"
daemon_stop
is "$DRC" 0 "daemon stops cleanly"
done_testing
