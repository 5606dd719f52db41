#!/bin/bash
# The man pages render as the --help texts read (issue 24 item 8): each
# page of the build (worldd.1, world-publish.1, world-verify.1, ailang-lite.1) rendered with
# groff -man -Tutf8 shows no ??? (the ✓/✗ of worldd why come out as
# themselves), the exit-code table one row per line, every usage line of a
# synopsis on its own line, and flags with ASCII hyphens (copy-pasteable).
. "$top_srcdir/tests/tap.sh"
command -v groff >/dev/null || { skip "groff not installed" "man pages render"; done_testing; exit; }
render() { LC_ALL=C.UTF-8 groff -man -Tutf8 "$top_builddir/$1" 2>/dev/null | sed 's/.\x08//g'; }
# The pages cite the docs where make install puts them, $(docdir)/NAME.md,
# never docs/NAME.md of a source tree a reader of an installed page lacks.
docdir=$(make -s --no-print-directory -C "$top_builddir" -f Makefile -f - print-docdir <<'EOF2' 2>/dev/null | grep -v '^make\['
print-docdir:
	@echo '$(docdir)'
EOF2
)
[ -n "$docdir" ] || bail "cannot read docdir from the Makefile"
# a --help line as its page shows it: docs/NAME.md cited as $(docdir)/NAME.md
as_installed() { sed -E "s#(^|[^A-Za-z0-9_./-])docs/([A-Za-z0-9_-]*\.md)#\1$docdir/\2#g"; }
has_line() { # TEXT PATTERN: a rendered line that, stripped of leading blanks, starts with PATTERN
  printf '%s\n' "$1" | sed 's/^ *//' | grep -qF -- "$2"
}
for m in cli/worldd.1 cli/world-publish.1 verify/world-verify.1 interp/ailang-lite.1; do
  r=$(render "$m")
  ok "$([ -n "$r" ]; echo $?)" "$m renders"
  ok "$(printf '%s' "$r" | grep -q '???'; [ $? = 1 ]; echo $?)" "$m: no ??? in the rendered page"
  ok "$(printf '%s' "$r" | grep -q $'\u2010'; [ $? = 1 ]; echo $?)" "$m: no Unicode hyphens (flags read as typed)"
done
starts() { # PAGE LINE...: each LINE is a rendered line of PAGE, from its first word on
  local page=$1 r; shift
  r=$(render "$page" | sed 's/^ *//; s/ *$//')
  for l in "$@"; do
    l=$(printf '%s\n' "$l" | as_installed)
    printf '%s\n' "$r" | grep -qxF -- "$l"
    ok $? "$page: a line of its own: $l"
  done
}
W=$top_builddir/cli/worldd
# the exit-code table, row by row, as worldd --help prints it
mapfile -t rows < <("$W" --help | awk '/^exit codes/{on=1; next} on && /^ *[0-9]/' | sed 's/^ *//; s/ *$//')
ok "$([ "${#rows[@]}" -ge 6 ]; echo $?)" "worldd --help has an exit-code table (${#rows[@]} rows)"
starts cli/worldd.1 "${rows[@]}"
like "$(render cli/worldd.1)" '"✓" or "✗"' "worldd.1: worldd why's ✓ and ✗ render as themselves"
# every synopsis line of the usage blocks
mapfile -t wp < <("$top_builddir/cli/world-publish" --help | awk '/^(usage:|       world-publish )/' | sed 's/^ *//; s/ *$//')
starts cli/world-publish.1 "${wp[@]}"
mapfile -t wv < <("$top_builddir/verify/world-verify" --help | awk '/^(usage:|       world-verify |                    --)/' | sed 's/^ *//; s/ *$//')
ok "$([ "${#wv[@]}" -ge 6 ]; echo $?)" "world-verify --help has a usage block (${#wv[@]} lines)"
starts verify/world-verify.1 "${wv[@]}"
mapfile -t al < <("$top_builddir/interp/ailang-lite" --help 2>&1 | awk '/^(usage:| +ailang-lite )/' | sed 's/^ *//; s/ *$//')
ok "$([ "${#al[@]}" -ge 4 ]; echo $?)" "ailang-lite --help has a usage block (${#al[@]} lines)"
starts interp/ailang-lite.1 "${al[@]}"
starts interp/ailang-lite.1 "$("$top_builddir/interp/ailang-lite" --help 2>&1 | grep '^exit codes' | sed 's/ *$//')"
# The footer (issue 39): "World VERSION  DATE  PAGE(1)" on every page, its
# three fields apart -- ailang-lite's long version line used to overrun the
# date -- and the NAME line names the program as it is typed.
ver=$(sed -n 's/^PACKAGE_VERSION = //p' "$top_builddir/Makefile")
for m in cli/worldd.1 cli/world-publish.1 verify/world-verify.1 interp/ailang-lite.1; do
  p=$(basename "$m" .1 | tr 'a-z' 'A-Z')
  foot=$(render "$m" | sed 's/ *$//' | grep -v '^$' | tail -n1)
  like "$foot" "^World $ver +[A-Z][a-z]+ [0-9]{4} +$p\(1\)\$" "$m: the footer reads World $ver, the date, $p(1) ($foot)"
done
like "$(render interp/ailang-lite.1 | grep -A1 '^NAME' | tail -n1)" '^ +ailang-lite - the bundled' "ailang-lite.1: NAME says ailang-lite"
for m in cli/worldd.1 cli/world-publish.1 verify/world-verify.1 interp/ailang-lite.1; do
  r=$(render "$m")
  bare=$(printf '%s\n' "$r" | grep -oE '(^|[^A-Za-z0-9_./-])docs/[A-Za-z0-9_-]+\.md' | head -3 | tr '\n' ' ')
  is "$bare" "" "$m: no bare docs/NAME.md citation"
  cites=$(printf '%s\n' "$r" | grep -oE "$docdir/[A-Za-z0-9_-]+\.md" | sort -u)
  ok "$([ -n "$cites" ]; echo $?)" "$m: cites the installed docs ($(printf '%s' "$cites" | head -n2 | tr '\n' ' '))"
  missing=$(for c in $cites; do [ -f "$top_srcdir/docs/${c##*/}" ] || echo "$c"; done)
  is "$missing" "" "$m: every page it cites is one make install puts in $docdir"
done
done_testing
