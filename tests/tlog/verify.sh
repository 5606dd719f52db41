#!/bin/bash
# world-verify (verify/world-verify.c) on checkpoints and proofs made by the
# library (tests/tlog/tlog_tool): every entry of several trees and every
# pair of sizes verified; then each refusal with its exit code beside its
# control: a changed leaf byte, a wrong index, an edited checkpoint, another
# key, another origin, a rewritten history (an entry changed, the tree
# recomputed: its consistency proof against a checkpoint taken before is
# refused), a leaf saved with a newline, malformed and absent files, usage.
. "$top_srcdir/tests/tap.sh"
V=$top_builddir/verify/world-verify
TOOL=$top_builddir/tests/tlog/tlog_tool
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
"$TOOL" keygen example.com/world "$T/sk" "$T/vk" || bail "tlog_tool keygen failed"
"$TOOL" keygen example.com/world "$T/sk2" "$T/vk2" || bail "tlog_tool keygen failed"
SIZES="1 2 3 5 8 9 16 17 33"

# usage and help
run_capture out err rc "$V" --help
is "$rc" 0 "world-verify --help exits 0"
like "$out" "exit codes" "--help lists the exit codes"
run_capture out err rc "$V" --version
like "$out" '^world-verify \(World\) ' "--version names the program"
run_capture out err rc "$V"
is "$rc" 2 "no verb: usage (2)"
run_capture out err rc "$V" frobnicate
is "$rc:$err" "2:world-verify: unknown verb 'frobnicate' (see world-verify --help)" "an unknown verb is one line, exit 2"
run_capture out err rc "$V" checkpoint --key "$T/vk" --key "$T/vk" x
is "$rc:$err" "2:world-verify checkpoint: flag --key given twice" "a flag given twice is refused"
run_capture out err rc "$V" inclusion --key "$T/vk" --checkpoint x --index 1 --leaf y
is "$rc:$err" "2:world-verify inclusion: flag --proof is required (see world-verify --help)" "a missing flag is named"

# checkpoints
for s in $SIZES; do "$TOOL" checkpoint "$T/sk" "$s" > "$T/cp.$s" || bail "checkpoint $s"; done
run_capture out err rc "$V" checkpoint --key "$T/vk" "$T/cp.9"
is "$rc" 0 "a checkpoint signed by the key verifies"
is "$out" "origin example.com/world
size 9
root $("$TOOL" root 9)" "it prints origin, size and root (the library's root of 9 entries)"
run_capture out err rc "$V" checkpoint --key="$T/vk" --origin=example.com/world - < "$T/cp.9"
is "$rc" 0 "--flag=VALUE, --origin equal to the origin, the checkpoint on stdin"

# every entry of every size; every pair of sizes
bad=0 n=0
for s in $SIZES; do
  for i in $(seq 1 "$s"); do
    "$TOOL" leaf "$i" > "$T/leaf"; "$TOOL" inclusion "$i" "$s" > "$T/proof"
    "$V" inclusion --key "$T/vk" --checkpoint "$T/cp.$s" --index "$i" --leaf "$T/leaf" --proof "$T/proof" > "$T/out" 2>&1 || { bad=$((bad + 1)); cat "$T/out"; }
    n=$((n + 1))
  done
done
is "$bad" 0 "world-verify inclusion accepts every entry of trees of size $SIZES ($n proofs)"
bad=0 n=0
for a in $SIZES; do for b in $SIZES; do
  [ "$a" -le "$b" ] || continue
  "$TOOL" consistency "$a" "$b" > "$T/proof"
  "$V" consistency --key "$T/vk" --old "$T/cp.$a" --new "$T/cp.$b" --proof "$T/proof" > "$T/out" 2>&1 || { bad=$((bad + 1)); cat "$T/out"; }
  n=$((n + 1))
done; done
is "$bad" 0 "world-verify consistency accepts every pair of sizes ($n proofs)"
run_capture out err rc "$V" consistency --key "$T/vk" --old "$T/cp.8" --new "$T/cp.17" --proof "$T/proof"
is "$rc" 7 "control: the proof of 33 to 33 given for 8 to 17 is refused"

# inclusion refusals, each beside its control
"$TOOL" leaf 6 > "$T/leaf6"; "$TOOL" inclusion 6 17 > "$T/p6"
incl() { run_capture out err rc "$V" inclusion --key "$1" --checkpoint "$2" --index "$3" --leaf "$4" --proof "$5"; }
incl "$T/vk" "$T/cp.17" 6 "$T/leaf6" "$T/p6"
is "$rc" 0 "control: entry 6 in the tree of 17 verifies"
like "$out" "^verified: entry 6 \(leaf 5\) is in the tree of size 17 of example.com/world, leaf hash [A-Za-z0-9+/]{43}=, root $("$TOOL" root 17 | sed 's/[+]/[+]/g')\$" "it says what it verified, on one line"
printf '%s' "$(sed 's/leaf 6/leaf 7/' "$T/leaf6")" > "$T/leaf6x"
incl "$T/vk" "$T/cp.17" 6 "$T/leaf6x" "$T/p6"
is "$rc:$err" "7:world-verify inclusion: entry 6: inclusion proof: leaf 5 does not lead to the root of the tree of size 17" "a changed leaf byte is refused (7), one line"
incl "$T/vk" "$T/cp.17" 7 "$T/leaf6" "$T/p6"
is "$rc" 7 "a wrong index is refused (7)"
{ cat "$T/leaf6"; echo; } > "$T/leaf6nl"
incl "$T/vk" "$T/cp.17" 6 "$T/leaf6nl" "$T/p6"
like "$rc:$err" "^7:.*the leaf file ends with a newline" "a leaf saved with a newline is refused, and the refusal says why"
sed '2s/^17$/18/' "$T/cp.17" > "$T/cp.17e"
incl "$T/vk" "$T/cp.17e" 6 "$T/leaf6" "$T/p6"
like "$rc:$err" "^7:world-verify inclusion: checkpoint $T/cp.17e: note: the signature by example.com/world\+[0-9a-f]{8} does not verify\$" "an edited checkpoint (its size) is refused (7)"
incl "$T/vk2" "$T/cp.17" 6 "$T/leaf6" "$T/p6"
like "$rc:$err" "^7:.*no signature by example.com/world\+" "another key of the same name refuses the checkpoint (7)"
run_capture out err rc "$V" inclusion --key "$T/vk" --origin example.org/other --checkpoint "$T/cp.17" --index 6 --leaf "$T/leaf6" --proof "$T/p6"
like "$rc:$err" '^7:.*origin "example.com/world" is not the --origin "example.org/other"' "another origin is refused (7)"
incl "$T/vk" "$T/cp.5" 6 "$T/leaf6" "$T/p6"
like "$rc:$err" "^4:.*entry 6 is not in the checkpoint's tree of size 5" "an entry beyond the checkpoint's tree: 4"
run_capture out err rc "$V" inclusion --key "$T/vk" --checkpoint "$T/cp.17" --index 0 --leaf "$T/leaf6" --proof "$T/p6"
is "$rc" 3 "index 0 is malformed (3): entries count from 1"
head -n 2 "$T/p6" > "$T/p6short"
incl "$T/vk" "$T/cp.17" 6 "$T/leaf6" "$T/p6short"
is "$rc" 7 "a proof cut short is refused (7)"
{ head -n 1 "$T/p6"; echo 'not base64'; } > "$T/p6bad"
incl "$T/vk" "$T/cp.17" 6 "$T/leaf6" "$T/p6bad"
is "$rc:$err" "3:world-verify inclusion: proof $T/p6bad: line 2: hash of 10 characters: not the base64 of 32 bytes (44 characters)" "a malformed proof line is named (3)"
incl "$T/vk" "$T/cp.17" 6 "$T/leaf6" "$T/absent"
like "$rc:$err" "^4:world-verify inclusion: proof $T/absent: No such file" "an absent file: 4"
sed 's/+[0-9a-f]\{8\}+/+00000000+/' "$T/vk" > "$T/vkbad"
incl "$T/vkbad" "$T/cp.17" 6 "$T/leaf6" "$T/p6"
like "$rc:$err" "^3:.*key $T/vkbad: verifier key example.com/world: hash 00000000 does not match" "a key whose hash does not match is malformed (3)"
sed 's/\r*$/\r/' "$T/p6" > "$T/p6crlf"
incl "$T/vk" "$T/cp.17" 6 "$T/leaf6" "$T/p6crlf"
is "$rc" 0 "a proof file with CR LF lines is read"

# a rewritten history: entry 3 changed in a copy, the tree recomputed and
# signed with the same key; a consistency proof from the copy against a
# checkpoint taken before is refused
mkdir "$T/orig" "$T/rewr"
for i in $(seq 1 12); do "$TOOL" leaf "$i" > "$T/orig/leaf.$i"; cp "$T/orig/leaf.$i" "$T/rewr/leaf.$i"; done
printf '{"entry":3,"payload":"rewritten"}' > "$T/rewr/leaf.3"
"$TOOL" leaves "$T/orig" 12 checkpoint "$T/sk" 5 > "$T/before.5"
"$TOOL" leaves "$T/orig" 12 checkpoint "$T/sk" 12 > "$T/orig.12"
"$TOOL" leaves "$T/rewr" 12 checkpoint "$T/sk" 12 > "$T/rewr.12"
"$TOOL" leaves "$T/orig" 12 consistency 5 12 > "$T/orig.proof"
"$TOOL" leaves "$T/rewr" 12 consistency 5 12 > "$T/rewr.proof"
run_capture out err rc "$V" consistency --key "$T/vk" --old "$T/before.5" --new "$T/orig.12" --proof "$T/orig.proof"
is "$rc" 0 "control: the log as it was, grown to 12, is consistent with the checkpoint of 5 taken before"
run_capture out err rc "$V" consistency --key "$T/vk" --old "$T/before.5" --new "$T/rewr.12" --proof "$T/rewr.proof"
is "$rc:$err" "7:world-verify consistency: consistency proof: does not lead to the old root (size 5)" "a rewritten history (entry 3 changed, tree recomputed, signed) is refused against the earlier checkpoint"
run_capture out err rc "$V" consistency --key "$T/vk" --old "$T/before.5" --new "$T/rewr.12" --proof "$T/orig.proof"
is "$rc" 7 "and so is the rewritten checkpoint with the honest proof"
run_capture out err rc "$V" consistency --key "$T/vk" --old "$T/cp.9" --new "$T/cp.5" --proof "$T/orig.proof"
is "$rc" 7 "an old checkpoint larger than the new is refused (7)"

# the empty tree: its root is SHA-256 of nothing, a prefix of every tree (no proof)
"$TOOL" checkpoint "$T/sk" 0 > "$T/cp.0"; : > "$T/none"
run_capture out err rc "$V" consistency --key "$T/vk" --old "$T/cp.0" --new "$T/cp.9" --proof "$T/none"
like "$rc:$out" "^0:verified: the tree of size 0 is a prefix of the tree of size 9 of example.com/world, old root 47DEQpj8HBSa[+]/TImW[+]5JCeuQeRkm5NMpJWZG3hSuFU=" "the empty tree (root SHA-256 of nothing) is a prefix of the tree of 9, with an empty proof"
printf 'example.com/world\n0\n%s\n' "$("$TOOL" root 1)" | "$TOOL" sign "$T/sk" > "$T/cp.0x"
run_capture out err rc "$V" checkpoint --key "$T/vk" "$T/cp.0x"
is "$rc:$err" "7:world-verify checkpoint: checkpoint $T/cp.0x: size 0 with a root that is not SHA-256 of nothing (RFC 6962)" "a signed size-0 checkpoint with another root is refused"

# another signature beside the log's (a witness's cosignature) is ignored
"$TOOL" keygen witness.example "$T/wsk" "$T/wvk"
{ cat "$T/cp.17"; tail -n 1 "$("$TOOL" checkpoint "$T/wsk" 17 > "$T/w17"; echo "$T/w17")"; } > "$T/cp.17w"
run_capture out err rc "$V" checkpoint --key "$T/vk" "$T/cp.17w"
is "$rc" 0 "a checkpoint with a witness's signature line beside the log's verifies"
grep -v "^— example.com/world " "$T/cp.17w" > "$T/cp.17wonly"
run_capture out err rc "$V" checkpoint --key "$T/vk" "$T/cp.17wonly"
is "$rc" 7 "control: with only the witness's signature it is refused"

# tlog/ is a pure library: it includes nothing of World but common/error.h
# (and itself), and world-verify links it alone (no libworld.a: no jansson,
# SQLite or libseccomp in the program); each with a control
forbidden() { # FILES...: the #include "..." lines naming anything but tlog/ and common/error.h
  grep -H '^#include "' "$@" | grep -Ev '#include "(tlog/[a-z0-9_]+\.h|common/error\.h)"'
}
is "$(forbidden "$top_srcdir"/tlog/*.[ch])" "" "tlog/ includes nothing of World but common/error.h"
printf '#include "store/store.h"\n' > "$T/bad.c"
like "$(forbidden "$T/bad.c")" 'store/store.h' "control: an include of store/store.h would be found"
if command -v nm >/dev/null; then
  syms=$(nm -u "$V" 2>/dev/null)
  unlike "$syms" '\b(json_|sqlite3_|seccomp_|world_store_)' "world-verify calls no jansson, SQLite, seccomp or store function"
  like "$syms" 'EVP_DigestVerify' "control: the symbol list is read (libcrypto's EVP_DigestVerify is there)"
fi
done_testing
