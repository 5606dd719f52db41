#!/bin/bash
# make install like a Debian tool (issue 12): with DESTDIR, worldd and
# world-publish in bindir, ailang-lite in pkglibexecdir and on PATH for
# publishers (a relative symlink in bindir, issue 24 item 8), man
# pages generated from the --help texts; the installed worldd, when
# --ailang-bin is omitted, runs the installed ailang-lite (checked in a
# private mount namespace where the staged tree is mounted at the prefix),
# and worldd audit runs the installed probe (pkglibexecdir/world-probe).
. "$top_srcdir/tests/tap.sh"
T=$(mktemp -d /tmp/world-cli-install.XXXXXX)
trap 'rm -rf "$T"' EXIT
mk() { make -s --no-print-directory -C "$top_builddir" "$@"; }
prefix=$(mk -f Makefile -f - print-prefix <<'EOF' 2>"$T/prefix.err"
print-prefix:
	@echo '$(prefix) $(bindir) $(pkglibexecdir) $(man1dir) $(docdir) $(pkgdatadir) $(systemdsystemunitdir)'
EOF
)
# (a make that prints "Entering directory" lines, as under make -w, adds lines around it)
prefix=$(printf '%s\n' "$prefix" | grep -v '^make\[')
read -r PREFIX BINDIR LIBEXEC MAN1 DOCDIR DATADIR UNITDIR <<< "$prefix"
[ -n "$UNITDIR" ] || bail "cannot read the install directories from the Makefile: [$prefix] $(head -c 300 "$T/prefix.err")"
mk install DESTDIR="$T/root" >/dev/null 2>"$T/install.err"
ok $? "make install DESTDIR=... succeeds ($(head -c 300 "$T/install.err"))"
R=$T/root
for f in "$BINDIR/worldd" "$BINDIR/world-publish" "$BINDIR/world-verify" "$LIBEXEC/ailang-lite" "$LIBEXEC/world-probe"; do
  ok "$([ -x "$R$f" ]; echo $?)" "installed: $f"
done
ok "$([ -L "$R$BINDIR/ailang-lite" ] && [ "$(readlink -f "$R$BINDIR/ailang-lite")" = "$(readlink -f "$R$LIBEXEC/ailang-lite")" ]; echo $?)" \
  "ailang-lite on PATH: $BINDIR/ailang-lite links to $LIBEXEC/ailang-lite"
lnk=$(readlink "$R$BINDIR/ailang-lite")
ok "$([ -n "$lnk" ] && [ "${lnk#/}" = "$lnk" ]; echo $?)" "... by a relative link (works under DESTDIR and when relocated)"
like "$("$R$BINDIR/ailang-lite" --version 2>&1)" '^AILANG-lite v' "... and runs: $BINDIR/ailang-lite --version"
for m in worldd world-publish world-verify ailang-lite; do
  ok "$([ -s "$R$MAN1/$m.1" ]; echo $?)" "man page $MAN1/$m.1"
done
like "$(cat "$R$MAN1/worldd.1")" '^\.TH WORLDD "1"' "worldd.1 is a man page (help2man)"
like "$(cat "$R$MAN1/worldd.1")" "exit codes" "... made from worldd --help"
like "$(cat "$R$MAN1/ailang-lite.1")" "CHK_NO_MAIN" "ailang-lite.1 made from ailang-lite --help"
# the pages cite the docs where they are installed (issue 39): each cited
# $DOCDIR/NAME.md is there, and no page cites a source tree's docs/NAME.md
cited=$(cat "$R$MAN1"/worldd.1 "$R$MAN1"/world-publish.1 "$R$MAN1"/world-verify.1 "$R$MAN1"/ailang-lite.1 | sed 's/\\-/-/g' |
  grep -oE "$DOCDIR/[A-Za-z0-9_-]+\.md" | sort -u)
ok "$([ "$(printf '%s\n' "$cited" | grep -c .)" -ge 3 ]; echo $?)" "the man pages cite installed docs ($(printf '%s' "$cited" | head -n3 | tr '\n' ' '))"
is "$(for c in $cited; do [ -s "$R$c" ] || echo "$c"; done)" "" "... and every one they cite is installed"
is "$(cat "$R$MAN1"/*.1 | sed 's/\\-/-/g' | grep -oE '(^|[^A-Za-z0-9_./-])docs/[A-Za-z0-9_-]+\.md' | head -3)" "" \
  "... none cites a bare docs/NAME.md"
# the docs, the packages and the systemd unit (issue 24, item 1)
for d in README.md design.md daemon.md security.md operations.md; do
  ok "$([ -s "$R$DOCDIR/$d" ]; echo $?)" "doc installed: $DOCDIR/$d"
done
is "$(ls "$R$DOCDIR" | grep -c '\.md$')" "$(( $(ls "$top_srcdir/docs" | grep -c '\.md$') + 1 ))" "every docs/*.md and the README are in $DOCDIR"
# the installed README and manual say how to build from a checkout (issue 39)
like "$(cat "$R$DOCDIR/README.md")" 'autoreconf -fi && \./configure && make && make install' "the installed README: a checkout needs autoreconf -fi first"
like "$(cat "$R$DOCDIR/README.md")" 'make install` does not install them' "... and says its scripts are the source tree's, not installed"
like "$(cat "$R$DOCDIR/operations.md")" 'autoreconf -fi &&' "the installed operations.md's Install section names autoreconf -fi"
for f in packages/quickstart/transitions.json packages/quickstart/echo.ail packages/se-tools/transitions.json \
         packages/se-tools/ailang-edit.ail packages/se-tools/examples/hello-main.ail; do
  cmp -s "$top_srcdir/$f" "$R$DATADIR/$f"
  ok $? "package file installed unchanged: $DATADIR/$f"
done
# every source a manifest names is installed where it names it (relative to
# the share directory, the root world-publish is run from)
missing=$(cd "$R$DATADIR" && python3 -c 'import json,os,sys
for m in sys.argv[1:]:
    for d in json.load(open(m)):
        if not os.path.isfile(d["transitionFnFile"]): print(d["transitionFnFile"])' \
  packages/quickstart/transitions.json packages/se-tools/transitions.json 2>&1)
is "$missing" "" "every transitionFnFile of the installed manifests is installed, relative to $DATADIR"
U=$R$UNITDIR/worldd.service
ok "$([ -s "$U" ]; echo $?)" "systemd unit installed: $UNITDIR/worldd.service"
is "$(grep -c '@[a-z]*@' "$U")" 0 "the unit's placeholders are all substituted"
# ExecStart with its continuation lines, as one line
exec_line=$(awk '/^ExecStart=/ { on = 1 } on { l = $0; c = sub(/\\$/, "", l); printf "%s ", l; if (!c) exit }' "$U")
prog=$(printf '%s' "$exec_line" | sed 's/^ExecStart=//' | awk '{print $1}')
interp=$(printf '%s' "$exec_line" | sed -n 's/.*--ailang-bin \([^ ]*\).*/\1/p')
is "$prog" "$BINDIR/worldd" "the unit runs the installed worldd"
is "$interp" "$LIBEXEC/ailang-lite" "the unit's --ailang-bin is the installed interpreter"
ok "$([ -x "$R$prog" ] && [ -x "$R$interp" ]; echo $?)" "both exist in the installed tree"
doc=$(sed -n 's|^Documentation=file://||p' "$U")
ok "$([ -s "$R$doc" ]; echo $?)" "the unit's Documentation= ($doc) is installed"
like "$exec_line" "--require-cgroups" "the unit refuses to serve without memory and pids groups"
# the unit's flags are ones worldd serve knows (the daemon itself is not started here)
serve_help=$("$R$BINDIR/worldd" serve --help 2>&1)
for fl in $(printf '%s' "$exec_line" | grep -o -- '--[a-z-]*' | sort -u); do
  like "$serve_help" "[[:space:]]$fl" "worldd serve --help knows the unit's $fl"
done
like "$serve_help" "--ailang-bin BIN .*default the" "worldd serve --help says --ailang-bin has a default"
like "$serve_help" "usage: worldd serve --store DB \\[--ailang-bin BIN\\]" "... and its usage line shows it optional"
like "$("$R$BINDIR/worldd" --help)" "installed interpreter $LIBEXEC/ailang-lite" "worldd --help names the installed interpreter"
like "$("$R$BINDIR/worldd" --version)" "^worldd \(World\) " "installed worldd --version"
# the installed worldd finds the installed ailang-lite by itself
printf 'module echo\nexport func main(input: string) -> string { input }\n' > "$T/echo.ail"
if [ "$(id -u)" = 0 ] && [ -d "$PREFIX" ] && command -v unshare >/dev/null; then
  run_capture out err rc unshare -m sh -c "mount --make-rprivate / && mount --bind '$R$PREFIX' '$PREFIX' && '$BINDIR/worldd' run --source '$T/echo.ail' --input '{\"i\":1}'"
  is "$rc $out" '0 {"i":1}' "installed worldd without --ailang-bin runs the installed ailang-lite ($err)"
  # control: without the installed tree at the prefix there is no interpreter to run
  run_capture out err rc unshare -m sh -c "mount --make-rprivate / && mount -t tmpfs none '$PREFIX'; '$R$BINDIR/worldd' run --source '$T/echo.ail' --input '{}'"
  nok "$rc" "control: with no ailang-lite at $LIBEXEC the same call fails ($err)"
  # worldd serve without --ailang-bin: the installed interpreter too (archived, listening)
  run_capture out err rc unshare -m sh -c "mount --make-rprivate / && mount --bind '$R$PREFIX' '$PREFIX' &&
    '$BINDIR/worldd' epoch bootstrap --store '$T/s.db' >/dev/null &&
    { '$BINDIR/worldd' serve --store '$T/s.db' --listen 127.0.0.1:0 >'$T/serve.out' 2>'$T/serve.err' & p=\$!;
      i=0; while [ \$i -lt 300 ] && ! grep -q '^worldd listening' '$T/serve.out'; do i=\$((i+1)); sleep 0.1; done;
      kill -TERM \$p; wait \$p; }"
  is "$rc:$(grep -c '^worldd listening on ' "$T/serve.out")" "0:1" "installed worldd epoch bootstrap and serve, neither given --ailang-bin, bootstrap the store and start ($err $(tail -n2 "$T/serve.err"))"
  # epoch bootstrap without --ailang-bin archives the installed interpreter (issue 39)
  run_capture out err rc unshare -m sh -c "mount --make-rprivate / && mount --bind '$R$PREFIX' '$PREFIX' &&
    '$BINDIR/worldd' epoch bootstrap --store '$T/b.db' && '$BINDIR/worldd' epoch show --store '$T/b.db' --json"
  want=$(sha256sum "$R$LIBEXEC/ailang-lite" | cut -d' ' -f1)
  like "$rc:$out" "^0:.*sha256:$want" "installed worldd epoch bootstrap without --ailang-bin: the installed ailang-lite is epoch 1 ($err)"
  # control: with nothing installed at the prefix it names where it looked
  run_capture out err rc unshare -m sh -c "mount --make-rprivate / && mount -t tmpfs none '$PREFIX'; '$R$BINDIR/worldd' epoch bootstrap --store '$T/c.db'"
  like "$rc:$err" "^4:.*$LIBEXEC/ailang-lite" "control: with no ailang-lite at $LIBEXEC epoch bootstrap exits 4 naming it"
  # world-publish too: its check runs the installed interpreter by itself,
  # from the share directory (the root the manifests' sources are relative to)
  run_capture out err rc unshare -m sh -c "mount --make-rprivate / && mount --bind '$R$PREFIX' '$PREFIX' &&
    cd '$DATADIR' && '$BINDIR/world-publish' check --manifest packages/quickstart/transitions.json"
  is "$rc:$(printf '%s' "$out" | grep -c '^ok entry')" "0:1" "installed world-publish check without --ailang-bin runs the installed ailang-lite, from $DATADIR ($err)"
  # worldd audit finds the installed probe by itself ($LIBEXEC/world-probe)
  run_capture out err rc unshare -m sh -c "mount --make-rprivate / && mount --bind '$R$PREFIX' '$PREFIX' &&
    cd / && '$BINDIR/worldd' audit transition --parts attempts --attempts keyctl,host_etc_passwd --json --quiet"
  is "$rc:$(printf '%s' "$out" | python3 -c 'import json,sys; r=json.load(sys.stdin); print(r["probe"], r["summary"]["ok"], r["summary"]["pass"] > 0)' 2>&1)" \
    "0:$LIBEXEC/world-probe True True" "installed worldd audit runs the installed probe $LIBEXEC/world-probe ($err)"
  # control: with nothing installed at the prefix there is no probe to run
  run_capture out err rc unshare -m sh -c "mount --make-rprivate / && mount -t tmpfs none '$PREFIX'; '$R$BINDIR/worldd' audit --quiet"
  is "$rc" 4 "control: with no world-probe at $LIBEXEC worldd audit exits 4"
  like "$err" "^worldd audit: probe $LIBEXEC/world-probe: No such file or directory" "... naming where it looked ($err)"
else
  skip "not root, no unshare or no $PREFIX" "installed worldd audit runs the installed probe"
  skip "not root, no unshare or no $PREFIX" "control: with no world-probe installed worldd audit exits 4"
  skip "not root, no unshare or no $PREFIX" "... naming where it looked"
  skip "not root, no unshare or no $PREFIX" "installed worldd without --ailang-bin runs the installed ailang-lite"
  skip "not root, no unshare or no $PREFIX" "control: with no ailang-lite installed the same call fails"
  skip "not root, no unshare or no $PREFIX" "installed worldd serve without --ailang-bin starts"
  skip "not root, no unshare or no $PREFIX" "installed worldd epoch bootstrap without --ailang-bin"
  skip "not root, no unshare or no $PREFIX" "control: epoch bootstrap with no ailang-lite installed"
  skip "not root, no unshare or no $PREFIX" "installed world-publish check without --ailang-bin"
fi
mk uninstall DESTDIR="$T/root" >/dev/null 2>&1
ok "$([ -z "$(find "$R" -type f)" ]; echo $?)" "make uninstall removes every installed file"
ok "$([ ! -e "$R$BINDIR/ailang-lite" ] && [ ! -L "$R$BINDIR/ailang-lite" ]; echo $?)" "... and the ailang-lite link in bindir"
done_testing
