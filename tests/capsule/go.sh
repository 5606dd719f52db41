#!/bin/bash
# The allowlist admits the Go runtime (the upstream interpreter is a static
# Go binary): build a small static Go program (CGO_ENABLED=0, offline, temp
# GOCACHE/HOME) and run it as the interpreter in a capsule.
. "$top_srcdir/tests/tap.sh"
GO=${GO:-$(command -v go)}
if [ -z "$GO" ] || [ ! -x "$GO" ]; then skip "go not installed" "static Go program in a capsule"; done_testing; exit 0; fi
T=$(mktemp -d /tmp/world-capsule-go.XXXXXX)
trap 'rm -rf "$T"' EXIT
cp "$top_srcdir/tests/capsule/go/main.go" "$T/"
( cd "$T" && HOME="$T" GOCACHE="$T/cache" GOPATH="$T/gopath" GOFLAGS=-mod=mod GOPROXY=off GO111MODULE=off \
  CGO_ENABLED=0 "$GO" build -o gofix main.go ) > "$T/build.log" 2>&1
ok $? "static Go program builds" || { sed 's/^/# /' "$T/build.log"; done_testing; exit; }
if command -v file >/dev/null; then file -b "$T/gofix" | grep -q "statically linked"; ok $? "the Go binary is static"; else skip "no file(1)" "the Go binary is static"; fi
printf 'module go_test\n' > "$T/main.ail"
run_capture out err rc "$WORLDD" run --ailang-bin "$T/gofix" --source "$T/main.ail" --input '{"x":[1,2,3]}'
is "$rc" 0 "Go program runs in the transition capsule (stderr: $err)"
like "$out" '"input":"\{\\"x\\":\[1,2,3\]\}"' "Go program read its args file"
like "$out" '"cache_write_ok":true' "Go program wrote into the capsule cache"
like "$out" '"goroutines_done":8' "goroutines on several threads ran"
like "$out" '"env":3' "Go sees exactly the three environment variables"
like "$out" '"source_bytes":15' "Go read the staged source"
# and the same under the unprivileged path
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
  chmod 755 "$T"; chmod 644 "$T/main.ail"; cp "$WORLDD" "$T/worldd"
  run_capture out err rc setpriv --reuid=nobody --regid=nogroup --clear-groups "$T/worldd" run --ailang-bin "$T/gofix" --source "$T/main.ail" --input '{}'
  is "$rc" 0 "Go program runs unprivileged too (stderr: $err)"
else
  skip "not root or no setpriv" "Go program runs unprivileged too"
fi
chmod -R u+w "$T" 2>/dev/null
done_testing
