#!/usr/bin/env bash
# `make eval [DATA=file]`: retrieval quality on a LoCoMo-format file through the public API, with
# the ablation table; results in bench/results/eval.{md,json}. Uses a release build (results do not
# depend on the build profile; release loads faster) on a server of its own.
set -euo pipefail
cd "$(dirname "$0")/.."
PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
PGBIN=$("$PG_CONFIG" --bindir)
EVAL_PORT=${EVAL_PORT:-55435}
EVAL_PGDATA=${EVAL_PGDATA:-/var/tmp/memory_ext/eval-$EVAL_PORT}
DATA=${DATA:-../shared/data/locomo/locomo-dev.json}
# EVAL_ABLATION=0: the full configuration only (~5 min instead of ~25).
# EVAL_TOP_K=5: ask memory_query for 5 results instead of 100 (recall@10/@20 are then capped).
ablation=--ablation; [ "${EVAL_ABLATION:-1}" = 0 ] && ablation=
[ -f "$DATA" ] || { echo "no such data file: $DATA (make eval DATA=path/to/locomo.json)" >&2; exit 2; }

scripts/install.sh --release >/dev/null
cargo build -q --release -p memory_ext_bench
scripts/cluster.sh destroy "$EVAL_PGDATA"
trap 'scripts/cluster.sh destroy "$EVAL_PGDATA"' EXIT
scripts/cluster.sh start "$EVAL_PGDATA" "$EVAL_PORT"
"$PGBIN/psql" -X -q -h 127.0.0.1 -p "$EVAL_PORT" -U postgres -d postgres -c "CREATE DATABASE memory_eval"
"$PGBIN/psql" -X -q -h 127.0.0.1 -p "$EVAL_PORT" -U postgres -d memory_eval -c "CREATE EXTENSION memory_ext CASCADE"
target/release/memory_ext_bench eval --dsn "host=127.0.0.1 port=$EVAL_PORT user=postgres dbname=memory_eval" \
  --data "$DATA" --out bench/results $ablation
