#!/bin/sh
# scripts/man-verbatim.sh PROG MAN: rewrite the DESCRIPTION section help2man
# made in MAN (in place) as PROG --help verbatim, in a .nf block. Why: the
# --help texts are laid out for an 80-column terminal already, and help2man's
# paragraph guesses turn their indented lines into tagged lists (the exit-code
# table), join the usage lines into one (the synopses) and, under a C locale,
# print ??? for every non-ASCII character. Here every non-ASCII character
# becomes a groff \[uXXXX] glyph, '-' the ASCII minus \-, and a leading . or '
# is escaped (tests/cli_man.sh renders each page). A page is read where it
# is installed, with no source tree beside it: with WORLD_DOCDIR set (the
# Makefile passes $(docdir)), every docs/NAME.md the texts cite becomes
# WORLD_DOCDIR/NAME.md, where make install puts it. Also used by
# scripts/man-verbs.sh's VERBS section (via ESCAPE).
set -e
escape() {
  if [ -n "${WORLD_DOCDIR:-}" ]; then
    sed -E "s#(^|[^A-Za-z0-9_./-])docs/([A-Za-z0-9_-]*\.md)#\1$WORLD_DOCDIR/\2#g"
  else
    cat
  fi |
  sed -e 's/\\/\\e/g' -e 's/-/\\-/g' -e 's/^\./\\\&./' -e "s/^'/\\\\\\&'/" |
    perl -CS -pe 's/([^\x00-\x7f])/sprintf("\\[u%04X]", ord($1))/ge'
}
if [ "$1" = ESCAPE ]; then escape; exit; fi
prog=$1 man=$2
"$prog" --help > "$man.help" 2>&1
escape < "$man.help" > "$man.help.esc"
awk -v help="$man.help.esc" '
  /^\.SH / && skip { skip = 0 }
  skip { next }
  { print }
  /^\.SH DESCRIPTION/ {
    print ".nf"
    while ((getline l < help) > 0) print l
    print ".fi"
    skip = 1
  }' "$man" > "$man.tmp"
grep -q '^\.SH DESCRIPTION' "$man.tmp" || { echo "man-verbatim.sh: $man has no DESCRIPTION section" >&2; exit 1; }
mv "$man.tmp" "$man"
rm -f "$man.help" "$man.help.esc"
