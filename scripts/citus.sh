#!/usr/bin/env bash
# A Citus cluster on 127.0.0.1 for the scale-out tests (docs/citus.md): a coordinator on PORT
# and two workers on PORT+1 and PORT+2, each a scripts/cluster.sh data directory under DIR with
# citus and memory_ext preloaded (citus first, as Citus requires).
#
#   scripts/citus.sh start DIR PORT     create when missing, (re)start, register the workers
#   scripts/citus.sh stop DIR           stop every node
#   scripts/citus.sh destroy DIR        stop and delete
set -euo pipefail
cd "$(dirname "$0")/.."
PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
PGBIN=$("$PG_CONFIG" --bindir)
cmd=${1:?usage: citus.sh start|stop|destroy DIR [PORT]}
dir=${2:?directory}
nodes=(coordinator worker1 worker2)

psql_n() { "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -U postgres "$@"; }

case "$cmd" in
start)
  port=${3:?port}
  for i in 0 1 2; do
    d="$dir/${nodes[$i]}"; p=$((port + i))
    fresh=0; [ -f "$d/PG_VERSION" ] || fresh=1
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
  done
  psql_n -p "$port" -d postgres -c "SELECT citus_set_coordinator_host('127.0.0.1', $port)" >/dev/null
  for i in 1 2; do
    psql_n -p "$port" -d postgres -c "SELECT citus_add_node('127.0.0.1', $((port + i)))" >/dev/null
  done
  ;;
stop|destroy)
  for n in "${nodes[@]}"; do scripts/cluster.sh "$cmd" "$dir/$n"; done
  [ "$cmd" = destroy ] && rm -rf "$dir"
  ;;
*) echo "unknown command: $cmd" >&2; exit 2 ;;
esac
