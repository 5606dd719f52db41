#!/bin/bash
# docs/operations.md is generated from the programs' own --help texts; it
# must match what the built binaries print, so the page stays true. And the
# docs stand alone: no tracked file cites the design notes kept outside the
# repository; docs/design.md is the page every citation points at.
. "$top_srcdir/tests/tap.sh"
gen=$(mktemp)
trap 'rm -f "$gen"' EXIT
"$top_srcdir/scripts/gen-operations.sh" "$WORLDD" "$top_builddir/interp/ailang-lite" > "$gen"
ok $? "scripts/gen-operations.sh runs"
if cmp -s "$gen" "$top_srcdir/docs/operations.md"; then
  ok 0 "docs/operations.md matches the --help texts"
else
  ok 1 "docs/operations.md matches the --help texts"
  diag "stale: regenerate with scripts/gen-operations.sh BUILD/cli/worldd BUILD/interp/ailang-lite > docs/operations.md"
  diff "$top_srcdir/docs/operations.md" "$gen" | head -20 | sed 's/^/# /'
fi
# Control: a changed page is noticed (the comparison can fail).
printf 'x' >> "$gen"
if cmp -s "$gen" "$top_srcdir/docs/operations.md"; then ok 1 "a stale page would be detected"; else ok 0 "a stale page would be detected"; fi

# The hand-written manual is included at the top, with every section.
for sec in "Install" "First start" "Running as a service" "Upgrading the interpreter" \
    "Backup and restore" "Operator token rotation" "Logs" "Budgets" "Retiring a transition" \
    "Several daemons on one store" "Troubleshooting" "Exit codes"; do
  grep -qx "## $sec" "$top_srcdir/docs/operations.md"
  ok $? "docs/operations.md has the manual section \"$sec\""
done

# No tracked file but docs/design.md cites the outside design document:
# every citation is "docs/design.md §N" (or another page of docs/). The
# pattern is assembled so this file does not match itself.
d=DESIGN
stray_citations() { # FILES... -> the ones citing it, one per line
  grep -lIE -- "$d( §|\.md| [0-9])" "$@" 2>/dev/null
}
if git -C "$top_srcdir" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -d '' tracked < <(git -C "$top_srcdir" ls-files -z)
  files=()
  for f in "${tracked[@]}"; do
    [ "$f" != docs/design.md ] && [ -f "$top_srcdir/$f" ] && files+=("$f")
  done
  stray=$(cd "$top_srcdir" && stray_citations "${files[@]}")
  is "$stray" "" "no tracked file but docs/design.md cites $d §N, $d N or $d.md (${#files[@]} files)"
  if [ -n "$stray" ]; then diag "cite docs/design.md §N instead, in: $(echo $stray)"; fi
  # Control: a file with a stray citation is caught, one without is not.
  c=$(mktemp -d)
  printf 'see %s §5.2 for the plan laws\n' "$d" > "$c/stray.c"
  printf 'see docs/design.md §5.2 for the plan laws\n' > "$c/clean.c"
  is "$(stray_citations "$c/stray.c" "$c/clean.c")" "$c/stray.c" "a stray citation would be detected (and a docs/design.md one is not)"
  rm -rf "$c"
else
  skip "not a git checkout" "no tracked file but docs/design.md cites $d §N, $d N or $d.md"
  skip "not a git checkout" "a stray citation would be detected (and a docs/design.md one is not)"
fi
done_testing
