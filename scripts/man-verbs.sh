#!/bin/sh
# scripts/man-verbs.sh WORLDD: the help2man include file for worldd(1): a
# VERBS section holding every verb's own --help text, verbatim (the same
# texts docs/operations.md is generated from), escaped as
# scripts/man-verbatim.sh escapes (non-ASCII as groff glyphs).
set -e
WORLDD=$1
echo '[VERBS]'
"$WORLDD" --help | awk '/^verbs:/{on=1; next} on && /^$/{exit} on{sub(/^  /,""); split($0, a, /  +/); print a[1]}' |
while IFS= read -r verb; do
  echo ".SS worldd $verb"
  echo ".nf"
  # shellcheck disable=SC2086
  "$WORLDD" $verb --help | "$(dirname "$0")/man-verbatim.sh" ESCAPE
  echo ".fi"
done
