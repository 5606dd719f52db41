#!/bin/bash
# Go's own golang.org/x/mod/sumdb/note and sumdb/tlog (Debian's
# golang-golang-x-mod-dev with golang-go, GOPATH mode, no network) as the
# independent verifier, both directions (tests/tlog/go/verify.go):
#   - our library -> Go: note.Open and tlog.CheckRecord / tlog.CheckTree
#     accept the checkpoints, inclusion and consistency proofs tlog/ makes
#     (tests/tlog/tlog_tool), and refuse a changed leaf byte, a wrong index,
#     an edited checkpoint and another key (each beside its control);
#   - Go -> world-verify: world-verify accepts what note.Sign, note.GenerateKey,
#     tlog.StoredHashes, tlog.ProveRecord and tlog.ProveTree make, and refuses
#     the same four; and tlog/ computes Go's roots and Go's proofs byte for
#     byte from Go's leaves;
#   - differential: world-verify accepts exactly the variants of a signed
#     checkpoint (bytes changed, dropped, added; signature lines repeated,
#     edited, joined by another key's) that Go's note.Open accepts.
. "$top_srcdir/tests/tap.sh"
GO=${GO:-$(command -v go || true)}
GOPATH_DIR=/usr/share/gocode
if [ -z "$GO" ] || [ ! -x "$GO" ]; then
  skip "go not installed (Debian golang-go)" "Go's sumdb/note and sumdb/tlog verify World's formats"; done_testing; exit 0
fi
if [ ! -d "$GOPATH_DIR/src/golang.org/x/mod/sumdb/note" ]; then
  skip "golang.org/x/mod not installed (Debian golang-golang-x-mod-dev)" "Go's sumdb/note and sumdb/tlog verify World's formats"; done_testing; exit 0
fi
V=$top_builddir/verify/world-verify
TOOL=$top_builddir/tests/tlog/tlog_tool
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# GOPATH mode, offline: the packages from Debian's tree, a private build cache
export GOPATH=$GOPATH_DIR GO111MODULE=off GOFLAGS= GOPROXY=off GOCACHE="$T/gocache"
( cd "$T" && "$GO" build -o "$T/goverify" "$top_srcdir/tests/tlog/go/verify.go" ) > "$T/build.log" 2>&1
ok $? "Go's verifier builds in GOPATH mode, offline (golang.org/x/mod/sumdb/{note,tlog})" || { sed 's/^/# /' "$T/build.log"; done_testing; exit 1; }
G=$T/goverify
SIZES="1 2 3 6 8 11 16 23"

# ---- our library -> Go ----
"$TOOL" keygen example.com/world "$T/sk" "$T/vk" && "$TOOL" keygen example.com/world "$T/sk2" "$T/vk2" || bail "keygen"
for s in $SIZES; do "$TOOL" checkpoint "$T/sk" "$s" > "$T/cp.$s" || bail "checkpoint $s"; done
bad=0
for s in $SIZES; do
  out=$("$G" checkpoint "$T/vk" "$T/cp.$s" 2>&1)
  [ "$out" = "$s $("$TOOL" root "$s")" ] || { bad=$((bad + 1)); diag "$out"; }
done
is "$bad" 0 "Go's note.Open verifies our signed checkpoints (sizes $SIZES) and reads our size and root"
bad=0 n=0
for s in $SIZES; do for i in $(seq 1 "$s"); do
  "$TOOL" leaf "$i" > "$T/leaf"; "$TOOL" inclusion "$i" "$s" > "$T/proof"
  "$G" inclusion "$T/vk" "$T/cp.$s" "$i" "$T/leaf" "$T/proof" > "$T/out" 2>&1 || { bad=$((bad + 1)); diag "$(cat "$T/out")"; }
  n=$((n + 1))
done; done
is "$bad" 0 "Go's tlog.CheckRecord accepts every inclusion proof of ours ($n)"
bad=0 n=0
for a in $SIZES; do for b in $SIZES; do
  [ "$a" -le "$b" ] || continue
  "$TOOL" consistency "$a" "$b" > "$T/proof"
  "$G" consistency "$T/vk" "$T/cp.$a" "$T/cp.$b" "$T/proof" > "$T/out" 2>&1 || { bad=$((bad + 1)); diag "$(cat "$T/out")"; }
  n=$((n + 1))
done; done
is "$bad" 0 "Go's tlog.CheckTree accepts every consistency proof of ours ($n)"
# the controls, Go refusing
"$TOOL" leaf 5 > "$T/leaf5"; "$TOOL" inclusion 5 11 > "$T/p5"
"$G" inclusion "$T/vk" "$T/cp.11" 5 "$T/leaf5" "$T/p5" > /dev/null 2>&1
ok $? "control: Go accepts entry 5 in our tree of 11"
printf '%s' "$(sed 's/leaf 5/leaf 6/' "$T/leaf5")" > "$T/leaf5x"
run_capture out err rc "$G" inclusion "$T/vk" "$T/cp.11" 5 "$T/leaf5x" "$T/p5"
like "$rc:$err" "^1:.*invalid transparency proof" "Go refuses our proof with a changed leaf byte"
run_capture out err rc "$G" inclusion "$T/vk" "$T/cp.11" 4 "$T/leaf5" "$T/p5"
like "$rc:$err" "^1:.*invalid transparency proof" "Go refuses our proof for a wrong index"
sed '3s/^./'"$(head -c1 <(sed -n 3p "$T/cp.11") | tr 'A-Za-z0-9+/' 'B-Za-z0-9+/A')"'/' "$T/cp.11" > "$T/cp.11e"
run_capture out err rc "$G" checkpoint "$T/vk" "$T/cp.11e"
like "$rc:$err" "^1:.*invalid signature for key example.com/world" "Go refuses our checkpoint with its root edited"
run_capture out err rc "$G" checkpoint "$T/vk2" "$T/cp.11"
like "$rc:$err" "^1:.*no verifiable signatures" "Go refuses our checkpoint under another key of the same name"

# ---- Go -> world-verify ----
mkdir "$T/go"
"$G" make "$T/go" example.com/go-log 23 $SIZES || bail "Go's make failed"
like "$(cat "$T/go/go.vkey")" '^example.com/go-log\+[0-9a-f]{8}\+[A-Za-z0-9+/]{44}$' "Go's note.GenerateKey made a verifier key"
bad=0
for s in $SIZES; do
  out=$("$V" checkpoint --key "$T/go/go.vkey" "$T/go/cp.$s" 2>&1)
  [ "$out" = "origin example.com/go-log
size $s
root $("$TOOL" leaves "$T/go" 23 root "$s")" ] || { bad=$((bad + 1)); diag "$out"; }
done
is "$bad" 0 "world-verify verifies Go's note.Sign checkpoints, and their roots are tlog/'s roots of Go's leaves"
bad=0 same=0 n=0
for s in $SIZES; do for i in $(seq 1 "$s"); do
  "$V" inclusion --key "$T/go/go.vkey" --checkpoint "$T/go/cp.$s" --index "$i" --leaf "$T/go/leaf.$i" \
    --proof "$T/go/incl.$i.$s" > "$T/out" 2>&1 || { bad=$((bad + 1)); diag "$(cat "$T/out")"; }
  "$TOOL" leaves "$T/go" 23 inclusion "$i" "$s" | cmp -s - "$T/go/incl.$i.$s" || same=$((same + 1))
  n=$((n + 1))
done; done
is "$bad" 0 "world-verify accepts every tlog.ProveRecord proof of Go's ($n)"
is "$same" 0 "tlog/'s inclusion proofs of Go's leaves are Go's, byte for byte ($n)"
bad=0 same=0 n=0
for a in $SIZES; do for b in $SIZES; do
  [ "$a" -lt "$b" ] || continue
  "$V" consistency --key "$T/go/go.vkey" --old "$T/go/cp.$a" --new "$T/go/cp.$b" --proof "$T/go/cons.$a.$b" \
    > "$T/out" 2>&1 || { bad=$((bad + 1)); diag "$(cat "$T/out")"; }
  "$TOOL" leaves "$T/go" 23 consistency "$a" "$b" | cmp -s - "$T/go/cons.$a.$b" || same=$((same + 1))
  n=$((n + 1))
done; done
is "$bad" 0 "world-verify accepts every tlog.ProveTree proof of Go's ($n)"
is "$same" 0 "tlog/'s consistency proofs of Go's leaves are Go's, byte for byte ($n)"
# the controls, world-verify refusing Go's
wv() { run_capture out err rc "$V" inclusion --key "$1" --checkpoint "$2" --index "$3" --leaf "$4" --proof "$5"; }
wv "$T/go/go.vkey" "$T/go/cp.16" 9 "$T/go/leaf.9" "$T/go/incl.9.16"
is "$rc" 0 "control: world-verify accepts Go's entry 9 in the tree of 16"
sed 's/"go":9/"go":8/' "$T/go/leaf.9" > "$T/leaf9x"; printf '%s' "$(cat "$T/leaf9x")" > "$T/leaf9x"
wv "$T/go/go.vkey" "$T/go/cp.16" 9 "$T/leaf9x" "$T/go/incl.9.16"
is "$rc" 7 "world-verify refuses Go's proof with a changed leaf byte (7)"
wv "$T/go/go.vkey" "$T/go/cp.16" 10 "$T/go/leaf.9" "$T/go/incl.9.16"
is "$rc" 7 "world-verify refuses Go's proof for a wrong index (7)"
sed '2s/^16$/17/' "$T/go/cp.16" > "$T/cp.16e"
wv "$T/go/go.vkey" "$T/cp.16e" 9 "$T/go/leaf.9" "$T/go/incl.9.16"
like "$rc:$err" "^7:.*does not verify" "world-verify refuses Go's checkpoint with its size edited (7)"
wv "$T/vk" "$T/go/cp.16" 9 "$T/go/leaf.9" "$T/go/incl.9.16"
like "$rc:$err" "^7:.*no signature by example.com/world\+" "world-verify refuses Go's checkpoint under another key (7)"
# one checkpoint, two signature lines (Go's key, then ours, as a witness
# cosigns): each verifier takes the line of the key it is given and ignores
# the other's
sed '/^$/,$d' "$T/go/cp.16" | "$TOOL" sign "$T/sk" | tail -n 1 > "$T/oursig"
cat "$T/go/cp.16" "$T/oursig" > "$T/cosigned"
run_capture out err rc "$V" checkpoint --key "$T/go/go.vkey" "$T/cosigned"
is "$rc" 0 "world-verify: a checkpoint signed by Go's key and by ours verifies under Go's key"
run_capture out err rc "$V" checkpoint --key "$T/vk" --origin example.com/go-log "$T/cosigned"
is "$rc" 0 "... and under ours (with --origin: the origin is Go's log's)"
run_capture out err rc "$G" checkpoint "$T/go/go.vkey" "$T/cosigned"
is "$rc" 0 "Go's note.Open verifies it under Go's key, our line beside (an unknown key's, ignored)"
run_capture out err rc "$V" checkpoint --key "$T/vk" --origin example.com/go-log "$T/go/cp.16"
is "$rc" 7 "control: without our line, our key refuses it"

# differential: 400 seeded variants of a signed checkpoint (a byte changed,
# dropped or added, the signature line repeated or edited -- some edits
# touch only base64 padding bits --, another key's line beside it, a blank
# line inserted): world-verify accepts exactly those Go's note.Open does
mkdir "$T/mut"
"$G" mutate "$T/cp.11" "$T/mut" 400 || bail "Go's mutate failed"
"$G" open "$T/vk" "$T/mut"/m.* | sort > "$T/go.verdicts"
for f in "$T/mut"/m.*; do
  if "$V" checkpoint --key "$T/vk" "$f" > /dev/null 2>&1; then echo "$f ok"; else echo "$f refused"; fi
done | sort > "$T/wv.verdicts"
is "$(diff "$T/go.verdicts" "$T/wv.verdicts" | grep -c '^>')" 0 "world-verify and Go's note.Open agree on 400 variants of a checkpoint"
diff "$T/go.verdicts" "$T/wv.verdicts" | head -5 | sed 's/^/# /'
accepted=$(grep -c ' ok$' "$T/go.verdicts")
ok "$([ "$accepted" -gt 10 ] && [ "$accepted" -lt 390 ]; echo $?)" "control: both outcomes occur among them (Go accepts $accepted of 400)"
done_testing
