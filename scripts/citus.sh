#!/usr/bin/env bash
# A Citus cluster on 127.0.0.1 for the scale-out tests (docs/citus.md): a coordinator on PORT
# and two workers on PORT+1 and PORT+2, each a scripts/cluster.sh data directory under DIR with
# citus and memory_ext preloaded (citus first, as Citus requires).
#
#   scripts/citus.sh start DIR PORT     create when missing, (re)start, register the workers
#   scripts/citus.sh add DIR PORT N     a worker N (3, 4, ...) on PORT+N, registered
#   scripts/citus.sh stop DIR           stop every node
#   scripts/citus.sh destroy DIR        stop and delete
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
cmd=${1:?usage: citus.sh start|stop|destroy DIR [PORT]}
dir=${2:?directory}
nodes=(coordinator worker1 worker2)

psql_n() { "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -U postgres "$@"; }

# Starts node directory $1 on port $2 (created and made a Citus node when missing).
node() {
  local d=$1 p=$2 fresh=0
  [ -f "$d/PG_VERSION" ] || fresh=1
  scripts/cluster.sh start "$d" "$p"
  if [ "$fresh" = 1 ]; then
    psql_n -p "$p" -d postgres \
      -c "ALTER SYSTEM SET shared_preload_libraries = citus, memory_ext" \
      -c "ALTER SYSTEM SET wal_level = 'logical'" \
      -c "ALTER SYSTEM SET max_prepared_transactions = 100" \
      -c "ALTER SYSTEM SET max_connections = 100"
    scripts/cluster.sh start "$d" "$p"
    psql_n -p "$p" -d postgres -c "CREATE EXTENSION IF NOT EXISTS citus"
  fi
}

case "$cmd" in
start)
  port=${3:?port}
  for i in 0 1 2; do node "$dir/${nodes[$i]}" $((port + i)); done
  # Workers added later (scripts/citus.sh add) come back too.
  for d in "$dir"/worker*; do
    n=${d##*worker}
    if [ "$n" -gt 2 ]; then node "$d" $((port + n)); fi
  done
  psql_n -p "$port" -d postgres -c "SELECT citus_set_coordinator_host('127.0.0.1', $port)" >/dev/null
  for i in 1 2; do
    psql_n -p "$port" -d postgres -c "SELECT citus_add_node('127.0.0.1', $((port + i)))" >/dev/null
  done
  ;;
add)
  # One more worker, number N (3, 4, ...), on PORT+N, registered with the coordinator on PORT
  # (Citus creates the extensions on it); rebalancing is the caller's (docs/citus.md).
  port=${3:?coordinator port}; n=${4:?worker number}
  node "$dir/worker$n" $((port + n))
  psql_n -p "$port" -d postgres -c "SELECT citus_add_node('127.0.0.1', $((port + n)))" >/dev/null
  ;;
stop|destroy)
  for d in "$dir"/coordinator "$dir"/worker*; do
    if [ -d "$d" ]; then scripts/cluster.sh "$cmd" "$d"; fi
  done
  if [ "$cmd" = destroy ]; then rm -rf "$dir"; fi
  ;;
*) echo "unknown command: $cmd" >&2; exit 2 ;;
esac
