#!/usr/bin/env bash
# `make bench`: a release build of memory_ext on a server of its own (127.0.0.1:$BENCH_PORT),
# the HTTP stand-in, and the benchmark suites; figures go to bench/results/ (pgNN/ for PG=NN).
#
# Usage: scripts/bench.sh [suite ...]      suites: embed, query, lifecycle, checkpoint, detail, tools, mcp, formation,
#                                          agents, screen, adapters, inspect, migrate, changes, spaces, precision,
#                                          citus, citus-spaces
#                                          (default: all but citus and citus-spaces)
#   BENCH_ITEMS="100000 1000000"  sizes for the query suite, each loaded on top of the last
#   BENCH_CITUS_ITEMS=1000000     size for the citus suite (the query suite through a Citus
#                                 coordinator and two workers, and on one node at that size)
#   BENCH_CITUS_API_LOAD=50000    of which loaded through memory_write_batch (the rest by SQL)
#   BENCH_CITUS_ONE_NODE=0        the cluster half only (a rerun)
#   BENCH_FRESH=1                 start from an empty server (otherwise loaded data is reused:
#                                 a million memories take a while to load)
# The server keeps its data in $BENCH_PGDATA between runs and is stopped on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
BENCH_PGDATA=${BENCH_PGDATA:-$MEMORY_EXT_HOME/bench-$BENCH_PORT}
STANDIN_PORT=$BENCH_STANDIN_PORT
BENCH_ITEMS=${BENCH_ITEMS:-100000 1000000}
BENCH_CITUS_ITEMS=${BENCH_CITUS_ITEMS:-1000000}
BENCH_CITUS_API_LOAD=${BENCH_CITUS_API_LOAD:-50000}   # at least 50,000: the load gives all 100 tenants memories
BENCH_CITUS_DIR=$MEMORY_EXT_HOME/bench-citus-$BENCH_CITUS_PORT
suites=${*:-embed query precision lifecycle checkpoint detail tools mcp formation agents screen adapters inspect migrate changes spaces}
# PostgreSQL 15's figures are bench/results/'s; another version's go beside them, in pgNN/.
RESULTS=bench/results; [ "$PG" = 15 ] || RESULTS=bench/results/pg$PG
mkdir -p "$RESULTS"
psql_b() { psql_at "$BENCH_PORT" "$@"; }

echo "==> release build + install (benchmarks measure optimised code)"
scripts/cluster.sh stop "$BENCH_PGDATA"   # its own server restarts onto the new build (the install is by rename)
scripts/install.sh --release >/dev/null
cargo build -q --release -p memory_ext_bench -p memory_ext_standin -p memory_gateway
[ "${BENCH_FRESH:-0}" = 1 ] && scripts/cluster.sh destroy "$BENCH_PGDATA"
"$CARGO_TARGET_DIR"/release/memory_ext_standin "$STANDIN_PORT" > /dev/null 2>&1 &
standin=$!
trap 'kill $standin 2>/dev/null; scripts/cluster.sh stop "$BENCH_PGDATA"' EXIT
fresh=0; [ -f "$BENCH_PGDATA/PG_VERSION" ] || fresh=1
scripts/cluster.sh start "$BENCH_PGDATA" "$BENCH_PORT"
if [ "$fresh" = 1 ]; then
  # Room for a million 384-d vectors and their HNSW index in memory (1.5 GB + ~2 GB) on this
  # 24 GB machine; everything else stays at the defaults cluster.sh writes.
  psql_b -d postgres -c "ALTER SYSTEM SET shared_buffers = '6GB'" \
    -c "ALTER SYSTEM SET maintenance_work_mem = '1GB'" -c "ALTER SYSTEM SET effective_cache_size = '12GB'" \
    -c "ALTER SYSTEM SET max_wal_size = '8GB'" -c "ALTER SYSTEM SET checkpoint_timeout = '30min'"
  scripts/cluster.sh start "$BENCH_PGDATA" "$BENCH_PORT"   # restart: shared_buffers
fi
# The worker serves memory_bench, as it serves an application's database in a deployment, so
# that reads queue their access for it to count (src/ops/access.rs); it schedules no job there
# (worker_jobs ''), so that no TTL sweep or consolidation shares the cores with a timed run.
# BENCH_WORKER_DB=postgres measures reads that write their access themselves.
psql_b -d postgres -c "ALTER SYSTEM SET memory_ext.database = '${BENCH_WORKER_DB:-memory_bench}'" \
  -c "ALTER SYSTEM SET memory_ext.worker_jobs = ''" -c "SELECT pg_reload_conf()" >/dev/null
psql_b -d postgres -tc "SELECT 1 FROM pg_database WHERE datname = 'memory_bench'" | grep -q 1 ||
  psql_b -d postgres -c "CREATE DATABASE memory_bench"
# Reused data keeps the extension objects it was loaded with: after changing sql/, BENCH_FRESH=1.
psql_b -d memory_bench -c "CREATE EXTENSION IF NOT EXISTS memory_ext CASCADE"
dsn="host=127.0.0.1 port=$BENCH_PORT user=postgres dbname=memory_bench"
# A restarted server starts with empty buffers: read the kept data back in (indexes into shared
# buffers, tables into the OS cache). A cold rerun at 1M measured raw pgvector at p50 16 ms; with
# this, 4.5 ms — still not the 3.0 ms of a run right after loading, so compare figures only
# within one kind of run (BENCH_FRESH=1 for the figures in docs/performance.md).
psql_b -d memory_bench -c "CREATE EXTENSION IF NOT EXISTS pg_prewarm" \
  -c "SELECT count(pg_prewarm(c.oid, CASE WHEN c.relkind = 'i' THEN 'buffer' ELSE 'read' END))
      FROM pg_class c WHERE c.relnamespace = 'memory'::regnamespace AND c.relkind IN ('r', 'i')" >/dev/null
# The Python suites' virtualenv (adapters, migrate): the clients layer's packages with
# langgraph-checkpoint-postgres, built once, the checkout's package reinstalled each time.
bench_venv() {
  venv=$MEMORY_EXT_HOME/clients/bench-venv
  if [ ! -f "$venv/.complete" ]; then
    rm -rf "$venv" && python3 -m venv "$venv"
    "$venv/bin/pip" install -q langgraph-checkpoint==4.3.2 langgraph-checkpoint-postgres==3.1.1 \
      openai-agents==0.24.0 "psycopg[binary]==3.3.9" psycopg-pool==3.3.3
    touch "$venv/.complete"
  fi
  "$venv/bin/pip" install -q --no-deps --force-reinstall ./clients/python >/dev/null
}

for s in $suites; do
  if [ "$s" = screen ]; then
    # Screening's own cost per text, the work it adds to every write (src/ops/screen.rs),
    # and what it flags: on the LoCoMo dev split (read in place) and the labelled set.
    echo "==> bench: screen"
    cargo build -q --release -p memory_core --example screen_file
    locomo=${LOCOMO:-../shared/data/locomo/locomo-dev.json}
    cut -f2 tests/data/screen_cases.tsv | grep -v '^#' > "$RESULTS/.screen_cases.tmp"
    {
      echo "# Screening per text (memory_core::screen, default policy; release build, $(date -u +%Y-%m-%d))"
      echo
      echo "- LoCoMo dev split ($locomo): $("$CARGO_TARGET_DIR"/release/examples/screen_file "$locomo" | tail -1)"
      echo "- labelled set (tests/data/screen_cases.tsv, every line): $("$CARGO_TARGET_DIR"/release/examples/screen_file "$RESULTS/.screen_cases.tmp" | tail -1)"
    } > "$RESULTS/screen.md"
    rm -f "$RESULTS/.screen_cases.tmp"
    cat "$RESULTS/screen.md"
  elif [ "$s" = query ]; then
    for n in $BENCH_ITEMS; do
      echo "==> bench: query at $n memories"
      "$CARGO_TARGET_DIR"/release/memory_ext_bench query --items "$n" --dsn "$dsn" --out "$RESULTS"
    done
  elif [ "$s" = precision ]; then
    # Half precision on the query suite's memories (bench/src/precision.rs): full, moved online
    # to half, measured, moved back.
    echo "==> bench: precision"
    "$CARGO_TARGET_DIR"/release/memory_ext_bench precision --dsn "$dsn" --out "$RESULTS"
  elif [ "$s" = lifecycle ]; then
    # Consolidation in a database of its own, made afresh (its tenants are merged by the run);
    # the TTL sweep over the query suite's memories in memory_bench.
    echo "==> bench: lifecycle"
    psql_b -d postgres -c "DROP DATABASE IF EXISTS memory_bench_lc" -c "CREATE DATABASE memory_bench_lc"
    psql_b -d memory_bench_lc -c "CREATE EXTENSION memory_ext CASCADE"
    "$CARGO_TARGET_DIR"/release/memory_ext_bench lifecycle --dsn "$dsn" --lc-dsn "${dsn/memory_bench/memory_bench_lc}" \
      --standin "http://127.0.0.1:$STANDIN_PORT" --out "$RESULTS"
  elif [ "$s" = checkpoint ]; then
    # A database of its own, made afresh: the figures do not depend on the query suite's data.
    echo "==> bench: checkpoint"
    psql_b -d postgres -c "DROP DATABASE IF EXISTS memory_bench_cp" -c "CREATE DATABASE memory_bench_cp"
    psql_b -d memory_bench_cp -c "CREATE EXTENSION memory_ext CASCADE"
    "$CARGO_TARGET_DIR"/release/memory_ext_bench checkpoint --dsn "${dsn/memory_bench/memory_bench_cp}" --out "$RESULTS"
  elif [ "$s" = tools ]; then
    # The agent tools against the functions they stand for, in a database of its own made afresh.
    echo "==> bench: tools"
    psql_b -d postgres -c "DROP DATABASE IF EXISTS memory_bench_tl" -c "CREATE DATABASE memory_bench_tl"
    psql_b -d memory_bench_tl -c "CREATE EXTENSION memory_ext CASCADE"
    "$CARGO_TARGET_DIR"/release/memory_ext_bench tools --dsn "${dsn/memory_bench/memory_bench_tl}" --out "$RESULTS"
  elif [ "$s" = spaces ]; then
    # A database of its own: 100,000 memories of which ten owners are spaces (bench/src/spaces.rs).
    echo "==> bench: spaces"
    psql_b -d postgres -c "DROP DATABASE IF EXISTS memory_bench_sp" -c "CREATE DATABASE memory_bench_sp"
    psql_b -d memory_bench_sp -c "CREATE EXTENSION memory_ext CASCADE"
    "$CARGO_TARGET_DIR"/release/memory_ext_bench spaces --items 100000 --dsn "${dsn/memory_bench/memory_bench_sp}" --out "$RESULTS"
  elif [ "$s" = changes ]; then
    # The change feed: notification latency, what it costs a write, a read; a database of its own.
    echo "==> bench: changes"
    psql_b -d postgres -c "DROP DATABASE IF EXISTS memory_bench_ch" -c "CREATE DATABASE memory_bench_ch"
    psql_b -d memory_bench_ch -c "CREATE EXTENSION memory_ext CASCADE"
    MEMORY_MCP_BIN=$CARGO_TARGET_DIR/release/memory-mcp \
      "$CARGO_TARGET_DIR"/release/memory_ext_bench changes --dsn "${dsn/memory_bench/memory_bench_ch}" --out "$RESULTS"
  elif [ "$s" = mcp ]; then
    # The MCP gateway against the statements it runs, in a database of its own made afresh.
    echo "==> bench: mcp"
    psql_b -d postgres -c "DROP DATABASE IF EXISTS memory_bench_mcp" -c "CREATE DATABASE memory_bench_mcp"
    psql_b -d memory_bench_mcp -c "CREATE EXTENSION memory_ext CASCADE"
    MEMORY_MCP_BIN=$CARGO_TARGET_DIR/release/memory-mcp \
      "$CARGO_TARGET_DIR"/release/memory_ext_bench mcp --dsn "${dsn/memory_bench/memory_bench_mcp}" --out "$RESULTS"
  elif [ "$s" = inspect ]; then
    # The inspector's pages for a tenant with 100,000 memories (docs/inspector.md), in a
    # database of its own (kept between runs: the load takes minutes).
    echo "==> bench: inspect"
    # A load that did not finish (no mark from bench/inspect_pages.py) is started again.
    psql_b -d postgres -tc "SELECT shobj_description(oid, 'pg_database') FROM pg_database
                            WHERE datname = 'memory_bench_inspect'" | grep -q "loaded" ||
      psql_b -d postgres -c "DROP DATABASE IF EXISTS memory_bench_inspect" -c "CREATE DATABASE memory_bench_inspect"
    psql_b -d memory_bench_inspect -c "CREATE EXTENSION IF NOT EXISTS memory_ext CASCADE"
    python3 bench/inspect_pages.py --dsn "${dsn/memory_bench/memory_bench_inspect}" \
      --bin "$CARGO_TARGET_DIR/release/memory-mcp" --out "$RESULTS"
  elif [ "$s" = citus ]; then
    # The query suite through a Citus coordinator with two workers on this machine (docs/citus.md),
    # then on one node at the same size: the cost of the extra hop, side by side. The one-node run
    # uses this server (shared_buffers 6GB); the workers get half of that each.
    echo "==> bench: citus ($BENCH_CITUS_ITEMS memories, coordinator on 127.0.0.1:$BENCH_CITUS_PORT)"
    scripts/deps.sh citus
    scripts/citus.sh destroy "$BENCH_CITUS_DIR"
    trap 'kill $standin 2>/dev/null; scripts/cluster.sh stop "$BENCH_PGDATA"; scripts/citus.sh destroy "$BENCH_CITUS_DIR"' EXIT
    scripts/citus.sh start "$BENCH_CITUS_DIR" "$BENCH_CITUS_PORT"
    # Each worker gets half of what the one-node server has for data (shared_buffers 6GB there):
    # its half of the memories and their HNSW graphs stay in memory, as on one node.
    for w in 0 1 2; do
      sb=3GB; [ "$w" = 0 ] && sb=1GB
      "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p $((BENCH_CITUS_PORT + w)) -U postgres -d postgres \
        -c "ALTER SYSTEM SET shared_buffers = '$sb'" -c "ALTER SYSTEM SET maintenance_work_mem = '1GB'" \
        -c "ALTER SYSTEM SET max_wal_size = '8GB'" -c "ALTER SYSTEM SET checkpoint_timeout = '30min'" >/dev/null
    done
    scripts/citus.sh stop "$BENCH_CITUS_DIR"
    scripts/citus.sh start "$BENCH_CITUS_DIR" "$BENCH_CITUS_PORT"
    cdsn="host=127.0.0.1 port=$BENCH_CITUS_PORT user=postgres dbname=postgres"
    "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 "$cdsn" -c "CREATE EXTENSION memory_ext CASCADE" \
      -c "CREATE EXTENSION pg_prewarm" -c "SELECT memory_citus_distribute()" >/dev/null
    "$CARGO_TARGET_DIR"/release/memory_ext_bench query --items "$BENCH_CITUS_ITEMS" --api-load "$BENCH_CITUS_API_LOAD" \
      --load-only --dsn "$cdsn"
    # The raw statements the suite times (pgvector alone, and the partitions comparison) run as
    # plain statements: the planner settings memory_ext's own statements take on the workers
    # (sql/citus.sql), and the raw baseline on one node by a session SET, must be the workers'
    # own settings here. Without enable_seqscan = off, a worker with the tenant alone in a shard
    # partition sorts all of its rows instead of using the HNSW index. Set after the load, which
    # runs with the defaults.
    for w in 1 2; do
      "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p $((BENCH_CITUS_PORT + w)) -U postgres -d postgres \
        -c "LOAD 'vector'" -c "ALTER SYSTEM SET hnsw.iterative_scan = 'relaxed_order'" \
        -c "ALTER SYSTEM SET enable_seqscan = off" -c "SELECT pg_reload_conf()" >/dev/null
    done
    "$CARGO_TARGET_DIR"/release/memory_ext_bench query --items "$BENCH_CITUS_ITEMS" --api-load "$BENCH_CITUS_API_LOAD" \
      --partitions --dsn "$cdsn" --out "$RESULTS/citus"
    # The *_for forms against their originals (docs/citus.md "One round trip"); on one node
    # below too: the difference is what the coordinator adds to a call.
    "$CARGO_TARGET_DIR"/release/memory_ext_bench routed --dsn "$cdsn" --out "$RESULTS/citus"
    scripts/citus.sh destroy "$BENCH_CITUS_DIR"
    # BENCH_CITUS_ONE_NODE=0: the cluster only (a rerun; compare with the one-node figures of an
    # earlier run, bench/results/citus/one-node).
    if [ "${BENCH_CITUS_ONE_NODE:-1}" = 1 ]; then
      psql_b -d postgres -c "DROP DATABASE IF EXISTS memory_bench_ct" -c "CREATE DATABASE memory_bench_ct"
      psql_b -d memory_bench_ct -c "CREATE EXTENSION memory_ext CASCADE"
      "$CARGO_TARGET_DIR"/release/memory_ext_bench query --items "$BENCH_CITUS_ITEMS" --api-load "$BENCH_CITUS_API_LOAD" \
        --dsn "${dsn/memory_bench/memory_bench_ct}" --out "$RESULTS/citus"/one-node
      "$CARGO_TARGET_DIR"/release/memory_ext_bench routed \
        --dsn "${dsn/memory_bench/memory_bench_ct}" --out "$RESULTS/citus"/one-node
    fi
  elif [ "$s" = citus-spaces ]; then
    # What a space costs on Citus (docs/citus.md "Spaces"): the spaces suite through a
    # coordinator and two workers, on a cluster of its own made afresh.
    echo "==> bench: spaces on Citus"
    scripts/deps.sh citus
    scripts/citus.sh destroy "$BENCH_CITUS_DIR"
    trap 'kill $standin 2>/dev/null; scripts/cluster.sh stop "$BENCH_PGDATA"; scripts/citus.sh destroy "$BENCH_CITUS_DIR"' EXIT
    scripts/citus.sh start "$BENCH_CITUS_DIR" "$BENCH_CITUS_PORT"
    cdsn="host=127.0.0.1 port=$BENCH_CITUS_PORT user=postgres dbname=postgres"
    "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 "$cdsn" -c "CREATE EXTENSION memory_ext CASCADE" \
      -c "SELECT memory_citus_distribute()" >/dev/null
    "$CARGO_TARGET_DIR"/release/memory_ext_bench spaces --items 100000 --dsn "$cdsn" --out "$RESULTS/citus"
    scripts/citus.sh destroy "$BENCH_CITUS_DIR"
  elif [ "$s" = agents ]; then
    # Gateway fairness under one tenant's flood, worker fairness under one tenant's run ends, and
    # a new backend's first call and memory (bench/agents.py), in a database of its own made afresh.
    echo "==> bench: agents"
    psql_b -d postgres -c "DROP DATABASE IF EXISTS memory_bench_ag" -c "CREATE DATABASE memory_bench_ag"
    psql_b -d memory_bench_ag -c "CREATE EXTENSION memory_ext CASCADE"
    MEMORY_MCP_BIN=$CARGO_TARGET_DIR/release/memory-mcp \
      python3 bench/agents.py --dsn "${dsn/memory_bench/memory_bench_ag}" --out "$RESULTS"
  elif [ "$s" = adapters ]; then
    # The Python adapters against the frameworks' reference implementations on this server
    # (bench/adapters.py): the clients layer's virtualenv with langgraph-checkpoint-postgres added.
    echo "==> bench: adapters"
    bench_venv
    "$venv/bin/python" bench/adapters.py --dsn "host=127.0.0.1 port=$BENCH_PORT user=postgres" --out "$RESULTS"
  elif [ "$s" = migrate ]; then
    # Import speed from mem0 and LangGraph's Postgres tables (bench/migrate.py), in databases of
    # its own made afresh; the adapters suite's virtualenv.
    echo "==> bench: migrate"
    bench_venv
    "$venv/bin/python" bench/migrate.py --dsn "host=127.0.0.1 port=$BENCH_PORT user=postgres" --out "$RESULTS"
  elif [ "$s" = formation ]; then
    # The application's calls while the worker (pointed at this database) extracts with a slow
    # LLM, in a database of its own made afresh.
    echo "==> bench: formation"
    psql_b -d postgres -c "DROP DATABASE IF EXISTS memory_bench_fm" -c "CREATE DATABASE memory_bench_fm"
    psql_b -d memory_bench_fm -c "CREATE EXTENSION memory_ext CASCADE"
    "$CARGO_TARGET_DIR"/release/memory_ext_bench formation --dsn "${dsn/memory_bench/memory_bench_fm}" \
      --standin "http://127.0.0.1:$STANDIN_PORT" --out "$RESULTS"
  elif [ "$s" = detail ]; then
    # Detail memory and memory files, in a database of its own made afresh.
    echo "==> bench: detail"
    psql_b -d postgres -c "DROP DATABASE IF EXISTS memory_bench_dt" -c "CREATE DATABASE memory_bench_dt"
    psql_b -d memory_bench_dt -c "CREATE EXTENSION memory_ext CASCADE"
    "$CARGO_TARGET_DIR"/release/memory_ext_bench detail --dsn "${dsn/memory_bench/memory_bench_dt}" \
      --standin "http://127.0.0.1:$STANDIN_PORT" --out "$RESULTS"
  else
    echo "==> bench: $s"
    "$CARGO_TARGET_DIR"/release/memory_ext_bench "$s" --dsn "$dsn" --standin "http://127.0.0.1:$STANDIN_PORT" --out "$RESULTS"
  fi
done
echo "==> results in $RESULTS/ ($(hostname), $(nproc) cores, $(date -u +%Y-%m-%dT%H:%MZ))"
