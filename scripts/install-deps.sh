#!/bin/sh
# scripts/install-deps.sh: install (idempotently) every Debian 12 package the
# build, the tests and the benchmarks need. Runs apt-get only when something
# is missing, so a second run is quick. libpq-dev: the store's PostgreSQL
# driver (configure requires it unless --without-postgresql);
# postgresql-15 and postgresql-client-15: the throwaway clusters the
# PostgreSQL tests start themselves (tests/pg_cluster.sh: initdb and pg_ctl
# from /usr/lib/postgresql/15/bin; no system cluster is used).
set -e
PKGS="build-essential autoconf automake libtool pkg-config autoconf-archive
 libseccomp-dev libcap-dev libjansson-dev libsqlite3-dev libbsd-dev
 libmicrohttpd-dev libssl-dev sqlite3 seccomp bubblewrap golang-go
 clang libclang-rt-14-dev valgrind util-linux procps iproute2 python3 curl help2man
 libpq-dev postgresql-15 postgresql-client-15"
missing=""
for p in $PKGS; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  echo "installing:$missing"
  export DEBIAN_FRONTEND=noninteractive
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
