#!/usr/bin/env bash
# A PostgreSQL cluster of our own (the version of PG / PG_CONFIG: scripts/lib.sh), on 127.0.0.1 only, with memory_ext preloaded (its worker
# registers at server start). Used by `make run` (the demo server) and `make test` (a
# throwaway server for regress and client tests).
#
#   scripts/cluster.sh start DIR PORT     initdb when DIR is empty, (re)start, wait until ready
#   scripts/cluster.sh stop DIR           fast shutdown, when running
#   scripts/cluster.sh destroy DIR        stop and delete DIR
#
# initdb refuses to run as root, so as root everything runs as the `postgres` user.
set -euo pipefail

. "$(dirname "$0")/lib.sh"
cmd=${1:?usage: cluster.sh start|stop|destroy DIR [PORT]}
dir=${2:?data directory}

# The server's environment: the caller's less its Rust backtrace settings, plus CLUSTER_ENV
# (space-separated NAME=value; the tests start their server with RUST_BACKTRACE=1 to check that
# no backtrace reaches a client even then).
read -r -a extra_env <<< "${CLUSTER_ENV:-}"
server() { as_pg env -u RUST_BACKTRACE -u RUST_LIB_BACKTRACE "${extra_env[@]}" "$@"; }
running() { [ -f "$dir/postmaster.pid" ] && server "$PGBIN/pg_ctl" -D "$dir" status >/dev/null 2>&1; }

case "$cmd" in
start)
  port=${3:?port}
  if [ ! -f "$dir/PG_VERSION" ]; then
    mkdir -p "$dir"
    if [ "$(id -u)" = 0 ]; then chmod 755 "$(dirname "$dir")"; chown postgres:postgres "$dir"; fi
    chmod 700 "$dir"
    # trust on 127.0.0.1 only: a local development/test server, never exposed.
    server "$PGBIN/initdb" -D "$dir" -U postgres -A trust --no-instructions -E UTF8 --locale=C.UTF-8 >/dev/null
    cat >> "$dir/postgresql.conf" <<CONF

# memory_ext local server (scripts/cluster.sh)
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = ''
shared_preload_libraries = 'memory_ext'
max_connections = 50
fsync = off
log_line_prefix = '%m [%p] %q%u@%d '
CONF
  fi
  # Restart a running server so that a freshly installed memory_ext.so is the one loaded. A
  # server that will not start shows why here: the callers' traps delete DIR and its log.
  if running; then how=(-m fast restart); else how=(start); fi
  if ! server "$PGBIN/pg_ctl" -D "$dir" -l "$dir/server.log" -w "${how[@]}" >/dev/null &&
     # A port can still be busy for a moment: the server a previous step stopped, a client's
     # connection in TIME_WAIT on `make run`'s ports (which lie in the ephemeral range; the
     # tests' own do not, scripts/lib.sh). Once more, after it has had time to close, and say
     # who holds it if that fails too.
     ! { grep -q "could not bind" "$dir/server.log" 2>/dev/null &&
         echo "cluster.sh: port $port busy, starting $dir once more" >&2 && sleep 3 &&
         { server "$PGBIN/pg_ctl" -D "$dir" -l "$dir/server.log" -w start >/dev/null ||
           { ss -Htanp "( sport = :$port )" >&2 2>/dev/null; false; }; }; }; then
    echo "cluster.sh: the server in $dir did not start; the end of its log:" >&2
    tail -n 30 "$dir/server.log" >&2 || true
    exit 1
  fi
  ;;
stop)
  if running; then server "$PGBIN/pg_ctl" -D "$dir" -w -m fast stop >/dev/null; fi
  ;;
destroy)
  if running; then server "$PGBIN/pg_ctl" -D "$dir" -w -m immediate stop >/dev/null; fi
  rm -rf "$dir"
  ;;
*) echo "unknown command: $cmd" >&2; exit 2 ;;
esac
