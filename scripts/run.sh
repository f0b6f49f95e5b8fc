#!/usr/bin/env bash
# `make run`: the embedded default. A Postgres 15 of our own on 127.0.0.1:$RUN_PORT with
# memory_ext preloaded, a database `memory_demo` with the extension, and a small demo.
# Safe to re-run: the cluster and the data are kept; the server restarts to load a freshly
# installed memory_ext.so; the demo only adds what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
PGBIN=$("$PG_CONFIG" --bindir)
RUN_PGDATA=${RUN_PGDATA:-/var/tmp/memory_ext/run-${RUN_PORT:-55432}}
RUN_PORT=${RUN_PORT:-55432}
DB=memory_demo
psql_run() { "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$RUN_PORT" -U postgres "$@"; }

scripts/cluster.sh start "$RUN_PGDATA" "$RUN_PORT"
if [ -z "$(psql_run -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = '$DB'")" ]; then
  psql_run -d postgres -c "CREATE DATABASE $DB"
fi
psql_run -d "$DB" -c "CREATE EXTENSION IF NOT EXISTS memory_ext CASCADE"
psql_run -d "$DB" -f scripts/demo.sql

cat <<MSG

memory_ext is running: Postgres 15 on 127.0.0.1:$RUN_PORT, data in $RUN_PGDATA,
memory_ext preloaded (shared_preload_libraries), database "$DB".

  connect:  psql -h 127.0.0.1 -p $RUN_PORT -U postgres $DB
  try:      SET memory_ext.user_id = 'demo-user';
            SELECT compile_core_blocks('demo-agent');
  stop:     make stop
MSG
