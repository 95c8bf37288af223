#!/usr/bin/env bash
# A throwaway PostgreSQL cluster on loopback for the tests (no Docker here).
#
#   .ci/pgtest.sh start [PORT]   initdb + start; prints the database URL
#   .ci/pgtest.sh stop  [PORT]   stop and delete the cluster
#
# The cluster lives in /tmp/mailgate-pg-PORT, trusts loopback (it holds
# nothing but test data and dies with the run) and keeps PostgreSQL's
# durable defaults (fsync, synchronous_commit), so what the benchmarks
# measure on it is what a real server would pay per commit.
set -euo pipefail

cmd=${1:?usage: pgtest.sh start|stop [PORT]}
port=${2:-55432}
dir=/tmp/mailgate-pg-$port

bindir=""
if command -v initdb >/dev/null 2>&1; then
  bindir=$(dirname "$(readlink -f "$(command -v initdb)")")
else
  bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
fi
if [ -z "$bindir" ] || [ ! -x "$bindir/initdb" ]; then
  echo "pgtest.sh: PostgreSQL server binaries not found; install them (Debian: apt-get install postgresql)" >&2
  exit 1
fi

# PostgreSQL refuses to run as root: run it as the postgres user when we are root.
as_pg() {
  if [ "$(id -u)" = 0 ]; then
    id postgres >/dev/null 2>&1 || useradd --system --home-dir "$dir" postgres
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

case $cmd in
start)
  if [ -f "$dir/data/postmaster.pid" ] && as_pg "$bindir/pg_ctl" -D "$dir/data" status >/dev/null 2>&1; then
    echo "postgres://postgres@127.0.0.1:$port/mailgate?sslmode=disable"
    exit 0
  fi
  rm -rf "$dir"
  mkdir -p "$dir"
  [ "$(id -u)" = 0 ] && { id postgres >/dev/null 2>&1 || useradd --system --home-dir "$dir" postgres; chown postgres "$dir"; }
  as_pg "$bindir/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 \
    || { cat "$dir/initdb.log" >&2; exit 1; }
  as_pg "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start \
    -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c max_connections=400 -c shared_buffers=256MB" >/dev/null \
    || { cat "$dir/server.log" >&2; exit 1; }
  as_pg "$bindir/createdb" -h 127.0.0.1 -p "$port" -U postgres mailgate
  echo "postgres://postgres@127.0.0.1:$port/mailgate?sslmode=disable"
  ;;
stop)
  if [ -d "$dir/data" ]; then
    as_pg "$bindir/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
  fi
  rm -rf "$dir"
  ;;
*)
  echo "usage: pgtest.sh start|stop [PORT]" >&2
  exit 2
  ;;
esac
