# tests/interp/conformance-lib.sh: how one conformance program is invoked,
# shared by conformance.sh and valgrind.sh so both run a program the same
# way (format: tests/interp/conformance/README.md).
# conf_prepare X WORKDIR: sets the arrays `words` (the command and its
# flags), `argv` (the args flag, if any) and `envv` (extra environment) for
# program X.ail; writes X's input, if any, to WORKDIR/args.json.
conf_prepare() {
  local x=$1 work=$2 cmd=run line
  [ -f "$x.cmd" ] && cmd=$(head -n1 "$x.cmd")
  read -r -a words <<< "$cmd"
  argv=()
  if [ -f "$x.args" ]; then
    # the input JSON, passed the way capsules do: one JSON string literal
    # (backslash, quote and tab escaped; lines joined with \n; the final
    # newline of the file dropped)
    { printf '"'; sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/\t/\\t/g' "$x.args" | awk 'NR>1{printf "\\n"} {printf "%s", $0}'; printf '"'; } > "$work/args.json"
    argv=(--args-file "$work/args.json")
  elif [ -f "$x.argsfile" ]; then
    argv=(--args-file "$x.argsfile")
  fi
  envv=()
  if [ -f "$x.env" ]; then
    while IFS= read -r line; do [ -n "$line" ] && envv+=("$line"); done < "$x.env"
  fi
}
