#!/usr/bin/env bash
# `make bench`: a release build of memory_ext on a server of its own (127.0.0.1:$BENCH_PORT),
# the HTTP stand-in, and the benchmark suites; figures go to bench/results/.
# Usage: scripts/bench.sh [suite ...]   (default: embed)
set -euo pipefail
cd "$(dirname "$0")/.."
PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
PGBIN=$("$PG_CONFIG" --bindir)
BENCH_PORT=${BENCH_PORT:-55434}
BENCH_PGDATA=${BENCH_PGDATA:-/var/tmp/memory_ext/bench-$BENCH_PORT}
STANDIN_PORT=${STANDIN_PORT:-55481}
suites=${*:-embed}

sudo=(); [ "$(id -u)" = 0 ] || sudo=(--sudo)
echo "==> release build + install (benchmarks measure optimised code)"
cargo pgrx install --release --pg-config "$PG_CONFIG" "${sudo[@]}" >/dev/null
cargo build -q --release -p memory_ext_bench -p memory_ext_standin
scripts/cluster.sh destroy "$BENCH_PGDATA"
target/release/memory_ext_standin "$STANDIN_PORT" > /dev/null 2>&1 &
standin=$!
trap 'kill $standin 2>/dev/null; scripts/cluster.sh destroy "$BENCH_PGDATA"' EXIT
scripts/cluster.sh start "$BENCH_PGDATA" "$BENCH_PORT"
"$PGBIN/psql" -X -q -h 127.0.0.1 -p "$BENCH_PORT" -U postgres -d postgres -c "CREATE DATABASE memory_bench"
"$PGBIN/psql" -X -q -h 127.0.0.1 -p "$BENCH_PORT" -U postgres -d memory_bench -c "CREATE EXTENSION memory_ext CASCADE"
for s in $suites; do
  echo "==> bench: $s"
  target/release/memory_ext_bench "$s" --dsn "host=127.0.0.1 port=$BENCH_PORT user=postgres dbname=memory_bench" \
    --standin "http://127.0.0.1:$STANDIN_PORT" --out bench/results
done
echo "==> results in bench/results/ ($(hostname), $(nproc) cores, $(date -u +%Y-%m-%dT%H:%MZ))"
