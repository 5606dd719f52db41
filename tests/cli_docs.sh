#!/bin/bash
# docs/operations.md is generated from the programs' own --help texts; it
# must match what the built binaries print, so the page stays true.
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
done_testing
