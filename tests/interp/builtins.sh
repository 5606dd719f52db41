#!/bin/bash
# ailang-lite builtins [--json]: the list of std functions (what
# Ailang.Discover serves) is compact JSON of the documented shape, and it is
# the evaluator's own table: every listed name imports and resolves from its
# module with the listed arity (a call with one argument more is refused
# with TC_ARITY_001), and every listed name is documented in
# docs/ailang-lite.md. Controls: a name the list does not hold is refused
# on import (LDR002), so the import check can fail.
. "$top_srcdir/tests/tap.sh"
A=$AILANG_LITE_DIRECT
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || bail "cd $work"

run_capture out err rc "$A" builtins --json
is "$rc" 0 "builtins --json exits 0"
is "$err" "" "builtins --json writes nothing on stderr"
printf '%s\n' "$out" > list.json
is "$(wc -l < list.json | tr -d ' ')" 1 "the list is one line"

# shape: compact (re-encoding with separators (',',':') gives the same
# bytes), count = number of entries, each entry exactly the four string
# members in this order, (module, name) unique
shape=$(python3 - list.json <<'PY'
import json, sys
raw = open(sys.argv[1], encoding="utf-8").read().rstrip("\n")
d = json.loads(raw)
errs = []
if list(d) != ["count", "builtins"]:
    errs.append("top-level keys %r" % list(d))
if json.dumps(d, separators=(",", ":"), ensure_ascii=False) != raw:
    errs.append("not compact")
if d["count"] != len(d["builtins"]):
    errs.append("count %d != %d entries" % (d["count"], len(d["builtins"])))
seen = set()
for b in d["builtins"]:
    if list(b) != ["name", "module", "signature", "effect"]:
        errs.append("entry keys %r" % list(b))
    if not all(isinstance(b[k], str) for k in b):
        errs.append("non-string member in %r" % b)
    if (b["module"], b["name"]) in seen:
        errs.append("duplicate %s %s" % (b["module"], b["name"]))
    seen.add((b["module"], b["name"]))
    if b["effect"] != "":
        errs.append("%s has effect %r" % (b["name"], b["effect"]))
    if not b["signature"].startswith("(") or " -> " not in b["signature"]:
        errs.append("odd signature %r" % b["signature"])
print("; ".join(errs) if errs else "ok")
PY
)
is "$shape" ok "the JSON has the documented shape"
count=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["count"])' list.json)
like "$count" '^[0-9]+$' "count is a number"
ok $(( count >= 50 ? 0 : 1 )) "the list holds every std function ($count)"

# plain form: one line per builtin, MODULE NAME SIGNATURE
run_capture plain err rc "$A" builtins
is "$rc" 0 "builtins (plain) exits 0"
is "$(printf '%s\n' "$plain" | wc -l | tr -d ' ')" "$count" "plain form has one line per builtin"
is "$(printf '%s\n' "$plain" | head -n1)" "prelude show (a) -> string" "plain form: MODULE NAME SIGNATURE"

# every listed function resolves from its module with its arity: one program
# per builtin, referencing it and calling it with one argument too many
(python3 - list.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for i, b in enumerate(d["builtins"]):
    sig = b["signature"]
    inner = sig[1:sig.index(") -> ")] if not sig.startswith("() ->") else ""
    # arity = top-level commas + 1 (parameters may be function types)
    depth, n = 0, (1 if inner.strip() else 0)
    for c in inner:
        if c in "([{": depth += 1
        elif c in ")]}": depth -= 1
        elif c == "," and depth == 0: n += 1
    imp = "" if b["module"] == "prelude" else "import %s (%s)\n" % (b["module"], b["name"])
    # one argument too many (a function of no parameters also takes `()`)
    args = ", ".join(["()"] * (n + 1 if n else 2))
    with open("ok%d.ail" % i, "w") as f:
        f.write(imp + "export func main(input: string) -> string {\n  let f = %s;\n  input\n}\n" % b["name"])
    with open("arity%d.ail" % i, "w") as f:
        f.write(imp + "export func main(input: string) -> string {\n  let x = %s(%s);\n  input\n}\n" % (b["name"], args))
    print(b["module"], b["name"], n)
PY
) > gen.txt
ok $? "one program per builtin generated"
bad_ok=0 bad_arity=0 i=0
while read -r mod name n; do
  "$A" check "ok$i.ail" > /dev/null 2>err.txt || { bad_ok=$((bad_ok + 1)); diag "$mod $name: $(cat err.txt)"; }
  "$A" check "arity$i.ail" > /dev/null 2>err.txt
  if ! grep -q 'TC_ARITY_001' err.txt; then bad_arity=$((bad_arity + 1)); diag "$mod $name/$n: $(cat err.txt)"; fi
  i=$((i + 1))
done < gen.txt
is "$i" "$count" "every builtin was checked"
is "$bad_ok" 0 "every listed builtin imports and resolves from its module"
is "$bad_arity" 0 "every listed arity is the one the checker enforces"

# control: a name not in the list is refused on import
printf 'import std/string (noSuchFunction)\nexport func main(input: string) -> string { input }\n' > nope.ail
run_capture out err rc "$A" check nope.ail
is "$rc" 1 "control: an unlisted name is refused"
like "$err" 'LDR002' "control: refused with LDR002"

# every listed name is documented
undoc=$(python3 - list.json "$top_srcdir/docs/ailang-lite.md" <<'PY'
import json, sys
doc = open(sys.argv[2], encoding="utf-8").read()
print(" ".join(b["name"] for b in json.load(open(sys.argv[1]))["builtins"] if "`%s(" % b["name"] not in doc and "`%s`" % b["name"] not in doc and "%s(" % b["name"] not in doc))
PY
)
is "$undoc" "" "every listed builtin is documented in docs/ailang-lite.md"

# flags
run_capture out err rc "$A" builtins --bogus
is "$rc" 2 "unknown flag exits 2"
like "$err" "unknown flag '--bogus'" "the unknown flag is named"
run_capture out err rc "$A" builtins extra
is "$rc" 2 "an extra argument exits 2"
run_capture out err rc "$A" --help
like "$out" 'ailang-lite builtins \[--json\]' "--help documents builtins"
done_testing
