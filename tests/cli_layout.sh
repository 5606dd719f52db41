#!/bin/bash
# The layering of the project's LAYOUT notes (docs/architecture.md, "Which
# folder may use which"), for the three places that once broke it:
#   - common/ (the shared utilities) includes nothing but common/;
#   - store/ has one seam per engine: only the SQLite driver's files
#     (store/db_sqlite*.c) call sqlite3_*, only store/db_pg.c calls libpq
#     (PQ*), and no core file branches on the engine kind (copy.c, which
#     moves a store between the two, and open_opts.c, the postgresql://
#     password file, name both);
#   - store/ includes nothing of supervisor/, capsule/, broker/,
#     coordinator/ or daemon/, and cli/ no supervisor/frame.h: write_all,
#     the general "write all of these bytes" loop, is common/file.c's, and
#     supervisor/frame.c has no copy of its own;
#   - daemon/ reaches capsules through the supervisor: it includes no
#     capsule/ header and calls no capsule_* function;
#   - no route module (daemon/a2a.c, calls.c, mcp.c, reads.c,
#     replay_route.c, stream.c) nor daemon/http.c, the helpers they and the
#     server share, calls a function the server's files (daemon/server.c,
#     workers.c, edge.c) define: the server calls the routes, never the
#     other way round.
# Each check runs on the sources (grep, comments left out), and on a copy
# with one forbidden line added, which it must refuse (the control).
. "$top_srcdir/tests/tap.sh"

ROUTES="a2a.c calls.c mcp.c reads.c replay_route.c stream.c http.c"
SERVER="server.c workers.c edge.c"

# C text without its comments (one-line /* */, and the lines of a block
# comment that start with * or /*), enough for these checks.
code_of() {
  sed -e 's|/\*.*\*/||g' -e '/^[[:space:]]*\/\*/d' -e '/^[[:space:]]*\*/d' "$@"
}

# The functions a file defines with external linkage: a definition starts
# at column 0, is not static and does not end with ';'.
defined_in() {
  grep -E '^[a-z][a-z0-9_ ]*[ *]+[a-z_][a-z0-9_]*\(' "$1" | grep -Ev '^(static|typedef|extern) |;[[:space:]]*$' |
    sed -E 's/^[a-z][a-z0-9_ ]*[ *]+([a-z_][a-z0-9_]*)\(.*/\1/' | sort -u
}

# Prints one line per violation under ROOT (a source tree); returns 0 when none.
check_tree() {
  local root=$1 bad=0 f n sym
  for f in "$root"/common/*.c "$root"/common/*.h; do
    if grep -Eq '^#include "[a-z]+/' "$f" && grep -Ev '^#include "common/' "$f" | grep -Eq '^#include "[a-z]+/'; then
      echo "common: ${f#"$root"/} includes $(grep -E '^#include "[a-z]+/' "$f" | grep -Ev '^#include "common/' | head -n1 | sed 's/^#include //')"
      bad=1
    fi
  done
  for f in "$root"/store/*.c "$root"/store/*.h; do
    if grep -Eq '^#include "(supervisor|capsule|broker|coordinator|daemon)/' "$f"; then
      echo "store: ${f#"$root"/} includes $(grep -Eo '^#include "(supervisor|capsule|broker|coordinator|daemon)/[^"]*"' "$f" | head -n1 | sed 's/^#include //')"
      bad=1
    fi
  done
  for f in "$root"/store/*.c "$root"/store/*.h; do
    case ${f##*/} in db_sqlite*) ;; *) n=$(code_of "$f" | grep -Eo '\bsqlite3_[a-z0-9_]+\(' | sort -u | tr -d '(' | tr '\n' ' ')
      if [ -n "$n" ]; then echo "store: ${f#"$root"/} calls $n"; bad=1; fi ;; esac
    case ${f##*/} in db_pg.c) ;; *) n=$(code_of "$f" | grep -Eo '\bPQ[a-zA-Z]+\(' | sort -u | tr -d '(' | tr '\n' ' ')
      if [ -n "$n" ]; then echo "store: ${f#"$root"/} calls $n"; bad=1; fi ;; esac
    case ${f##*/} in db*|copy.c|open_opts.c) ;; *)
      if code_of "$f" | grep -Eq '\bWDB_(SQLITE|PG)\b|\bwdb_kind(_of)?[[:space:]]*\(|\bst->kind\b'; then
        echo "store: ${f#"$root"/} branches on the engine kind"; bad=1
      fi ;; esac
  done
  for f in "$root"/cli/*.c "$root"/cli/*.h; do
    if grep -q '^#include "supervisor/frame.h"' "$f"; then
      echo "cli: ${f#"$root"/} includes supervisor/frame.h"
      bad=1
    fi
  done
  if ! defined_in "$root/common/file.c" | grep -qx write_all; then echo "write_all: not defined in common/file.c"; bad=1; fi
  for f in "$root"/supervisor/*.c; do
    if defined_in "$f" | grep -qx write_all; then echo "write_all: defined in ${f#"$root"/}"; bad=1; fi
  done
  for f in "$root"/daemon/*.c "$root"/daemon/*.h; do
    if grep -q '^#include "capsule/' "$f"; then echo "daemon: ${f#"$root"/} includes a capsule/ header"; bad=1; fi
    n=$(code_of "$f" | grep -Eo '\bcapsule_[a-z0-9_]+\(' | sort -u | tr -d '(' | tr '\n' ' ')
    if [ -n "$n" ]; then echo "daemon: ${f#"$root"/} calls $n"; bad=1; fi
  done
  local s server_syms
  for s in $SERVER; do
    server_syms=$(defined_in "$root/daemon/$s")
    [ -n "$server_syms" ] || { echo "daemon/$s: no function found (the check reads nothing)"; bad=1; }
    for f in $ROUTES; do
      [ -f "$root/daemon/$f" ] || { echo "daemon/$f: missing"; bad=1; continue; }
      for sym in $server_syms; do
        if code_of "$root/daemon/$f" | grep -Eq "\\b$sym[[:space:]]*\\("; then
          echo "daemon/$f calls $sym, defined in daemon/$s"
          bad=1
        fi
      done
    done
  done
  return $bad
}

out=$(check_tree "$top_srcdir")
ok $? "the sources keep the layering (common/, store/, cli/, daemon/)"
[ -z "$out" ] || printf '%s\n' "$out" | sed 's/^/# /'

# What the checks read is there: the server defines daemon_serve, the
# routes' helpers are daemon/http.c's.
like "$(defined_in "$top_srcdir/daemon/server.c" | tr '\n' ' ')" '(^| )daemon_serve ' "daemon/server.c's functions are found (daemon_serve)"
like "$(defined_in "$top_srcdir/daemon/http.c" | tr '\n' ' ')" '(^| )dresp_error .*(^| )dauth |(^| )dauth .*(^| )dresp_error ' "daemon/http.c defines dresp_error and dauth"

# Controls: a copy of the sources with one forbidden line added is refused.
work=$(mktemp -d "${TMPDIR:-/tmp}/world-layout.XXXXXX")
trap 'rm -rf "$work"' EXIT
fresh() {
  rm -rf "$work/t"
  mkdir -p "$work/t"
  for d in common store cli daemon supervisor; do
    mkdir -p "$work/t/$d"
    cp "$top_srcdir/$d"/*.c "$top_srcdir/$d"/*.h "$work/t/$d/" 2>/dev/null
  done
}
fresh
check_tree "$work/t" > /dev/null
ok $? "control: the unchanged copy passes"

fresh
printf '\nstatic void layout_probe(void) { char h[64]; unsigned p; daemon_parse_listen("x", h, &p, 0); }\n' >> "$work/t/daemon/reads.c"
out=$(check_tree "$work/t")
nok $? "control: a route module calling a function of daemon/server.c is refused"
like "$out" 'daemon/reads.c calls daemon_parse_listen, defined in daemon/server.c' "control: the refusal names the call"

fresh
printf '\nstatic void layout_probe(void) { workers_stop(); }\n' >> "$work/t/daemon/stream.c"
out=$(check_tree "$work/t")
nok $? "control: a route module calling a function of daemon/workers.c is refused"
like "$out" 'daemon/stream.c calls workers_stop, defined in daemon/workers.c' "control: the refusal names the call and its file"

fresh
printf '\nint dresp_probe(void) { return 0; }\n' >> "$work/t/daemon/server.c"
printf '\nstatic int layout_probe(void) { return dresp_probe(); }\n' >> "$work/t/daemon/http.c"
out=$(check_tree "$work/t")
nok $? "control: daemon/http.c calling a helper defined back in daemon/server.c is refused"
like "$out" 'daemon/http.c calls dresp_probe' "control: the refusal names it"

fresh
sed -i 's|^#include "common/canon.h"|#include "common/canon.h"\n#include "store/store.h"|' "$work/t/common/canon.c"
out=$(check_tree "$work/t")
nok $? "control: common/canon.c including store/store.h is refused"
like "$out" 'common/canon.c includes "store/store.h"' "control: the refusal names the include"

fresh
sed -i 's|^#include "common/file.h"|#include "common/file.h"\n#include "supervisor/frame.h"|' "$work/t/store/archive.c"
out=$(check_tree "$work/t")
nok $? "control: store/archive.c including supervisor/frame.h is refused"
like "$out" 'store/archive.c includes "supervisor/frame.h"' "control: the refusal names the include"

fresh
printf '\nstatic int layout_probe(struct world_store *st) { return sqlite3_exec(NULL, "", NULL, NULL, NULL) + (st->kind == WDB_PG); }\n' >> "$work/t/store/scan.c"
printf '\nstatic void layout_probe(void) { PQfinish(NULL); }\n' >> "$work/t/store/db_pg_store.c"
out=$(check_tree "$work/t")
nok $? "control: store/scan.c calling sqlite3_exec and branching on the kind, db_pg_store.c calling PQfinish, are refused"
like "$out" 'store/scan.c calls sqlite3_exec' "control: the refusal names the sqlite3_* call"
like "$out" 'store/db_pg_store.c calls PQfinish' "control: ... and the libpq call"
like "$out" 'store/scan.c branches on the engine kind' "control: ... and the branch on the kind"

fresh
sed -i 's|^#include "common/file.h"|#include "supervisor/frame.h"|' "$work/t/cli/attended.c"
out=$(check_tree "$work/t")
nok $? "control: cli/attended.c including supervisor/frame.h is refused"
like "$out" 'cli/attended.c includes supervisor/frame.h' "control: the refusal names it"

fresh
printf '\nint write_all(int fd, const void *buf, size_t len)\n{\n\treturn 0;\n}\n' >> "$work/t/supervisor/frame.c"
out=$(check_tree "$work/t")
nok $? "control: a write_all of supervisor/frame.c's own is refused"

fresh
sed -i 's|sup_cgroups_sweep(&removed, &e)|capsule_cgroups_sweep(\&removed, \&e)|' "$work/t/daemon/server.c"
out=$(check_tree "$work/t")
nok $? "control: daemon/server.c calling capsule_cgroups_sweep directly is refused"
like "$out" 'daemon/server.c calls capsule_cgroups_sweep' "control: the refusal names the call"

done_testing
