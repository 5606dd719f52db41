#!/bin/bash
# make install like a Debian tool (issue 12): with DESTDIR, worldd and
# world-publish in bindir, ailang-lite in pkglibexecdir (not on PATH), man
# pages generated from the --help texts; the installed worldd, when
# --ailang-bin is omitted, runs the installed ailang-lite (checked in a
# private mount namespace where the staged tree is mounted at the prefix).
. "$top_srcdir/tests/tap.sh"
T=$(mktemp -d /tmp/world-cli-install.XXXXXX)
trap 'rm -rf "$T"' EXIT
mk() { make -s --no-print-directory -C "$top_builddir" "$@"; }
prefix=$(mk -f Makefile -f - print-prefix <<'EOF' 2>/dev/null
print-prefix:
	@echo '$(prefix) $(bindir) $(pkglibexecdir) $(man1dir)'
EOF
)
read -r PREFIX BINDIR LIBEXEC MAN1 <<< "$prefix"
[ -n "$MAN1" ] || bail "cannot read the install directories from the Makefile"
mk install DESTDIR="$T/root" >/dev/null 2>"$T/install.err"
ok $? "make install DESTDIR=... succeeds ($(head -c 300 "$T/install.err"))"
R=$T/root
for f in "$BINDIR/worldd" "$BINDIR/world-publish" "$LIBEXEC/ailang-lite"; do
  ok "$([ -x "$R$f" ]; echo $?)" "installed: $f"
done
ok "$([ ! -e "$R$BINDIR/ailang-lite" ]; echo $?)" "ailang-lite is not in bindir (worldd runs it; users do not)"
for m in worldd world-publish ailang-lite; do
  ok "$([ -s "$R$MAN1/$m.1" ]; echo $?)" "man page $MAN1/$m.1"
done
like "$(cat "$R$MAN1/worldd.1")" '^\.TH WORLDD "1"' "worldd.1 is a man page (help2man)"
like "$(cat "$R$MAN1/worldd.1")" "exit codes" "... made from worldd --help"
like "$(cat "$R$MAN1/ailang-lite.1")" "CHK_NO_MAIN" "ailang-lite.1 made from ailang-lite --help"
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
else
  skip "not root, no unshare or no $PREFIX" "installed worldd without --ailang-bin runs the installed ailang-lite"
  skip "not root, no unshare or no $PREFIX" "control: with no ailang-lite installed the same call fails"
fi
mk uninstall DESTDIR="$T/root" >/dev/null 2>&1
ok "$([ -z "$(find "$R" -type f)" ]; echo $?)" "make uninstall removes every installed file"
done_testing
