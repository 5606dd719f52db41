# tests/tap.sh: TAP helpers for shell tests. Source it, call the helpers,
# end with `done_testing`. Every helper is one counted assertion.
#   ok COND_STATUS "name"         e.g.  cmd; ok $? "cmd works"
#   is "$got" "$want" "name"
#   like "$got" "regex" "name"     (grep -E)
#   skip "why" "name"
#   run_capture VAR_OUT VAR_ERR VAR_RC cmd...   runs cmd, captures all three
#   tap_relay FILE                 each "ok/not ok N - name" line of another
#                                  TAP producer (a node client script) as an
#                                  assertion here; other lines passed through
TAP_N=0
TAP_FAILED=0
ok() {
  TAP_N=$((TAP_N + 1))
  if [ "$1" -eq 0 ]; then echo "ok $TAP_N - $2"; else echo "not ok $TAP_N - $2"; TAP_FAILED=$((TAP_FAILED + 1)); fi
}
nok() { # assertion that a status is non-zero
  if [ "$1" -ne 0 ]; then ok 0 "$2"; else ok 1 "$2"; fi
}
is() {
  if [ "$1" = "$2" ]; then ok 0 "$3"; else ok 1 "$3"; printf '#   got:  %s\n#   want: %s\n' "$1" "$2"; fi
}
like() {
  if printf '%s' "$1" | grep -Eq -- "$2"; then ok 0 "$3"; else ok 1 "$3"; printf '#   got:  %s\n#   want match: %s\n' "$1" "$2"; fi
}
unlike() {
  if printf '%s' "$1" | grep -Eq -- "$2"; then ok 1 "$3"; printf '#   got:  %s\n#   must not match: %s\n' "$1" "$2"; else ok 0 "$3"; fi
}
skip() { TAP_N=$((TAP_N + 1)); echo "ok $TAP_N - $2 # SKIP $1"; }
diag() { echo "# $*"; }
bail() { echo "Bail out! $*"; exit 1; }
run_capture() {
  local __o=$1 __e=$2 __r=$3; shift 3
  local __tmpo __tmpe __rc
  __tmpo=$(mktemp) __tmpe=$(mktemp)
  "$@" >"$__tmpo" 2>"$__tmpe"; __rc=$?
  printf -v "$__o" '%s' "$(cat "$__tmpo")"
  printf -v "$__e" '%s' "$(cat "$__tmpe")"
  printf -v "$__r" '%s' "$__rc"
  rm -f "$__tmpo" "$__tmpe"
}
tap_relay() {
  local line
  while IFS= read -r line; do
    case "$line" in
      "ok "*) ok 0 "${line#ok * - }" ;;
      "not ok "*) ok 1 "${line#not ok * - }" ;;
      *) echo "$line" ;;
    esac
  done < "$1"
}
done_testing() {
  echo "1..$TAP_N"
  [ "$TAP_FAILED" -eq 0 ]
}
