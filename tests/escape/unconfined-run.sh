#!/bin/bash
# tests/escape/unconfined-run.sh: a stand-in for `worldd run` that honours
# the interpreter contract (docs/design.md §2: staged source, args.json, cwd, the
# three environment variables) but confines nothing. confined.sh points the
# judge at it to prove that its assertions fail when there is no capsule.
# Usage: unconfined-run.sh run --ailang-bin BIN --source FILE --input JSON --timeout-ms N
[ "$1" = run ] || { echo "unconfined-run: only 'run'" >&2; exit 2; }
shift
bin="" src="" input="" ms=4000
while [ $# -gt 0 ]; do
  case "$1" in
    --ailang-bin) bin=$2; shift 2 ;;
    --source) src=$2; shift 2 ;;
    --input) input=$2; shift 2 ;;
    --timeout-ms) ms=$2; shift 2 ;;
    *) echo "unconfined-run: unknown flag $1" >&2; exit 2 ;;
  esac
done
root=$(mktemp -d) || exit 9
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/host/capsule" "$root/.capsule-cache"
cp "$src" "$root/host/capsule/main.ail" || exit 3
python3 -c 'import json,sys; sys.stdout.write(json.dumps(sys.argv[1]))' "$input" >"$root/args.json" || exit 3
cd "$root" || exit 9
out=$(timeout "$((ms / 1000 + 1))" env -i AILANG_FS_SANDBOX="$root" AILANG_RELAX_MODULES=1 \
  AILANG_CACHE_DIR="$root/.capsule-cache" "$bin" run --quiet --caps "" --entry main --args-file args.json \
  host/capsule/main.ail)
rc=$?
[ $rc -eq 124 ] && { echo "unconfined-run: deadline" >&2; exit 11; }
[ $rc -ne 0 ] && { echo "unconfined-run: interpreter failed" >&2; exit 14; }
printf '%s\n' "$out"
