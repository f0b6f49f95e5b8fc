#!/usr/bin/env bash
# `make run`: the embedded default. A PostgreSQL of our own ($PG, scripts/lib.sh) on 127.0.0.1:$RUN_PORT with
# memory_ext preloaded, a database `memory_demo` with the extension, and a small demo.
# Safe to re-run: the cluster and the data are kept; the server restarts to load a freshly
# installed memory_ext.so; the demo only adds what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

. scripts/lib.sh
DB=memory_demo
psql_run() { psql_at "$RUN_PORT" "$@"; }

scripts/cluster.sh start "$RUN_PGDATA" "$RUN_PORT"
# A demo database made by an earlier release is upgraded in place (ALTER EXTENSION ... UPDATE,
# the path tests/upgrade tests), so its memories survive. One made by another build of the
# same version (a development build whose install script differs from the one installed now)
# is made again rather than left half-working; the database's comment records which install
# script made it.
ext=$("$PG_CONFIG" --sharedir)/extension
version=$(sed -n "s/^default_version = '\(.*\)'$/\1/p" "$ext/memory_ext.control")
build="memory_ext $version build $(md5sum "$ext/memory_ext--$version.sql" | cut -d' ' -f1)"
if [ -n "$(psql_run -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = '$DB'")" ]; then
  have=$(psql_run -d "$DB" -tAc "SELECT extversion FROM pg_extension WHERE extname = 'memory_ext'")
  made=$(psql_run -d postgres -tAc "SELECT coalesce(shobj_description(oid, 'pg_database'), '') FROM pg_database WHERE datname = '$DB'")
  if [ -n "$have" ] && [ "$have" != "$version" ]; then
    echo "The demo database has memory_ext $have: upgrading it to $version."
    psql_run -d "$DB" -c "ALTER EXTENSION memory_ext UPDATE" -c "COMMENT ON DATABASE $DB IS '$build'"
  elif [ "$made" != "$build" ]; then
    echo "The demo database was made by another build of memory_ext $version: making it again."
    psql_run -d postgres -c "DROP DATABASE $DB WITH (FORCE)"
  fi
fi
if [ -z "$(psql_run -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = '$DB'")" ]; then
  psql_run -d postgres -c "CREATE DATABASE $DB" -c "COMMENT ON DATABASE $DB IS '$build'"
fi
psql_run -d "$DB" -c "CREATE EXTENSION IF NOT EXISTS memory_ext CASCADE"
# The background worker serves one database (memory_ext.database): this one. It connects at
# server start, so a first setting of it restarts the server.
if [ "$(psql_run -d "$DB" -tAc "SHOW memory_ext.database")" != "$DB" ]; then
  psql_run -d postgres -c "ALTER SYSTEM SET memory_ext.database = '$DB'"
  scripts/cluster.sh start "$RUN_PGDATA" "$RUN_PORT"
fi
psql_run -d "$DB" -f scripts/demo.sql

# The MCP gateway (crates/memory_gateway): built here, started by the MCP host (stdio) or by hand
# (HTTP). It connects as memory_mcp, an ordinary role: row-level security keeps tenants apart
# only for roles without BYPASSRLS, and the gateway refuses any other.
cargo build -q -p memory_gateway
MCP_BIN=$CARGO_TARGET_DIR/debug/memory-mcp
MCP_DSN="host=127.0.0.1 port=$RUN_PORT user=memory_mcp dbname=$DB"
psql_run -d "$DB" -c "DO \$\$BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'memory_mcp') THEN
        CREATE ROLE memory_mcp LOGIN NOSUPERUSER NOBYPASSRLS;
    END IF;
END\$\$" -c "GRANT CONNECT ON DATABASE $DB TO memory_mcp"
# The HTTP configuration, with tokens made once and kept (the file is the server's secret): the
# agent's for /mcp, a read-write one for the memory inspector (/inspect/, docs/inspector.md) and
# the scraper's for /metrics. A file from before the inspector keeps its agent token.
MCP_CONFIG=$(dirname "$RUN_PGDATA")/mcp-$RUN_PORT.json
new_token() { head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n'; }
if [ ! -f "$MCP_CONFIG" ] || ! grep -q '"inspect"' "$MCP_CONFIG"; then
  token=
  [ -f "$MCP_CONFIG" ] && token=$(sed -n 's/.*"token": "\([0-9a-f]*\)".*/\1/p' "$MCP_CONFIG" | head -1)
  [ -n "$token" ] || token=$(new_token)
  (umask 077; cat > "$MCP_CONFIG" <<JSON
{
  "dsn": "$MCP_DSN",
  "listen": "127.0.0.1:$MCP_PORT",
  "tenants": [
    {"token": "$token", "user_id": "demo-user", "agent_id": "demo-agent", "thread_id": "demo-thread"},
    {"token": "$(new_token)", "user_id": "demo-user", "agent_id": "demo-agent", "name": "demo-inspector", "inspect": "read-write"}
  ],
  "metrics": {"token": "$(new_token)"}
}
JSON
  )
fi
MCP_TOKEN=$(sed -n 's/.*"token": "\([0-9a-f]*\)".*"agent_id": "demo-agent", "thread_id".*/\1/p' "$MCP_CONFIG" | head -1)
INSPECT_TOKEN=$(sed -n 's/.*"token": "\([0-9a-f]*\)".*"inspect".*/\1/p' "$MCP_CONFIG" | head -1)
METRICS_TOKEN=$(sed -n 's/.*"metrics": {"token": "\([0-9a-f]*\)".*/\1/p' "$MCP_CONFIG" | head -1)

cat <<MSG

memory_ext is running: PostgreSQL $PG on 127.0.0.1:$RUN_PORT, data in $RUN_PGDATA,
memory_ext preloaded (shared_preload_libraries), database "$DB".

  connect:  $PGBIN/psql -h 127.0.0.1 -p $RUN_PORT -U postgres $DB
  try:      SET memory_ext.user_id = 'demo-user';
            SELECT compile_core_blocks('demo-agent');
  worker:   SELECT job, last_finished_at, last_counts, worker_pid FROM memory.worker_status;
  stop:     make stop$([ "$PG" = 15 ] || echo " PG=$PG")

MCP (the agent tools for Claude Desktop, Cursor or any MCP host; docs/mcp.md):
  stdio: add to the host's MCP servers (e.g. claude_desktop_config.json):
    {"mcpServers": {"memory": {"command": "$MCP_BIN",
      "args": ["stdio", "--user", "demo-user", "--agent", "demo-agent", "--thread", "demo-thread"],
      "env": {"MEMORY_MCP_DSN": "$MCP_DSN"}}}}
  HTTP:  $MCP_BIN http --config $MCP_CONFIG
         then http://127.0.0.1:$MCP_PORT/mcp with the header "Authorization: Bearer $MCP_TOKEN"
  inspector (the same HTTP server; docs/inspector.md): http://127.0.0.1:$MCP_PORT/inspect/
         log in with the token $INSPECT_TOKEN
  metrics: curl -H "Authorization: Bearer $METRICS_TOKEN" http://127.0.0.1:$MCP_PORT/metrics
MSG
# Wait (briefly) for the worker's first round, so that the status above has something in it.
for _ in $(seq 1 20); do
  pid=$(psql_run -d "$DB" -tAc "SELECT worker_pid FROM memory.worker_status WHERE job = 'ttl_sweep' AND runs > 0")
  [ -n "$pid" ] && { echo "background worker: running (pid $pid) in database \"$DB\""; break; }
  sleep 0.5
done
