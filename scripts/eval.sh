#!/usr/bin/env bash
# `make eval [DATA=file]`: retrieval quality on a LoCoMo-format file through the public API, in
# each shape (structured turns, bare turns, facts), side by side with the raw pgvector order and
# BM25 alone, with the ablation table; results in bench/results/eval.{md,json}. Uses a release
# build (results do not depend on the build profile; release loads faster) on a server of its own.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
EVAL_PGDATA=${EVAL_PGDATA:-$MEMORY_EXT_HOME/eval-$EVAL_PORT}
DATA=${DATA:-../shared/data/locomo/locomo-dev.json}
# EVAL_ABLATION=0: memory_query, raw vector and BM25 only (~10 min instead of ~40).
# EVAL_SHAPES="turns facts": those shapes only, results in eval-turns-facts.{md,json} (default:
#   every shape, turns bare facts files, results in eval.{md,json}).
# EVAL_PRECISION=half: halfvec indexes (results in eval-half*.{md,json}).
# EVAL_TOP_K=5: ask memory_query for 5 results instead of 100 (recall@10/@20 are then capped).
# EVAL_REUSE=1: keep the server and its loaded memories between runs (tuning loops; reads the
#   loaded tenants back instead of writing them). Figures for docs come from a fresh run.
ablation=--ablation; [ "${EVAL_ABLATION:-1}" = 0 ] && ablation=
[ -f "$DATA" ] || { echo "no such data file: $DATA (make eval DATA=path/to/locomo.json)" >&2; exit 2; }
psql_e() { "$PGBIN/psql" -X -q -h 127.0.0.1 -p "$EVAL_PORT" -U postgres "$@"; }

scripts/install.sh --release >/dev/null
cargo build -q --release -p memory_ext_bench
reuse=
if [ "${EVAL_REUSE:-0}" = 1 ]; then
  reuse=--reuse
  scripts/cluster.sh stop "$EVAL_PGDATA"   # onto the new build
  trap 'scripts/cluster.sh stop "$EVAL_PGDATA"' EXIT
else
  scripts/cluster.sh destroy "$EVAL_PGDATA"
  trap 'scripts/cluster.sh destroy "$EVAL_PGDATA"' EXIT
fi
scripts/cluster.sh start "$EVAL_PGDATA" "$EVAL_PORT"
psql_e -d postgres -tc "SELECT 1 FROM pg_database WHERE datname = 'memory_eval'" | grep -q 1 ||
  psql_e -d postgres -c "CREATE DATABASE memory_eval"
psql_e -d memory_eval -c "CREATE EXTENSION IF NOT EXISTS memory_ext CASCADE"
# EVAL_PRECISION=half: the model's HNSW indexes over halfvec (docs/operations.md "Half
# precision"); results in eval-half.{md,json} (or eval-half-<shapes>).
if [ "${EVAL_PRECISION:-full}" = half ]; then
  psql_e -d memory_eval -c "ALTER DATABASE memory_eval SET memory_ext.embedding_precision = 'half'"
else
  psql_e -d memory_eval -c "ALTER DATABASE memory_eval RESET memory_ext.embedding_precision"
fi
# EVAL_LANGUAGES=de,ja,zh,es (make eval-languages): retrieval in other languages on LoCoMo turns
# translated by a local model (bench/multilingual/eval.py; the translations are a cache made by
# bench/multilingual/translate.py, never part of the repository); results in
# bench/results/eval-languages.{md,json}.
if [ -n "${EVAL_LANGUAGES:-}" ]; then
  python3 bench/multilingual/eval.py --dsn "host=127.0.0.1 port=$EVAL_PORT user=postgres dbname=memory_eval" \
    --data "$DATA" --cache "${EVAL_TRANSLATIONS:-$MEMORY_EXT_HOME/locomo-ml}" --langs "$EVAL_LANGUAGES" \
    --out bench/results --binary "$CARGO_TARGET_DIR"/release/memory_ext_bench
  exit 0
fi
"$CARGO_TARGET_DIR"/release/memory_ext_bench eval --dsn "host=127.0.0.1 port=$EVAL_PORT user=postgres dbname=memory_eval" \
  --data "$DATA" --out bench/results --shapes "${EVAL_SHAPES:-}" $ablation $reuse
# The no-LLM supersede rule on the same file's observations (docs/retrieval.md "Supersede
# without an LLM"): counts only into bench/results, the pairs never leave stdout.
cargo run -q --release -p memory_core --example supersede_rate -- "$DATA" | tee bench/results/supersede.txt
# Screening's quality (docs/api.md "Screening"): false positives on every text of the same file
# (each hit printed here, only the counts into bench/results: the texts stay where they are),
# and recall by family and false positives on the labelled set tests/data/screen_cases.tsv.
cargo build -q --release -p memory_core --example screen_file
screen_out=$("$CARGO_TARGET_DIR"/release/examples/screen_file "$DATA")
grep '^flagged' <<<"$screen_out" || true
{
  echo "# Screening's quality (memory_core::screen, default policy; $(date -u +%Y-%m-%d))"
  echo
  echo "False positives on $(basename "$DATA") (every turn, caption and observation screened; each hit is printed by \`make eval\`):"
  echo
  echo "- $(tail -1 <<<"$screen_out")"
  echo
  echo "Labelled set (tests/data/screen_cases.tsv):"
  echo
  "$CARGO_TARGET_DIR"/release/examples/screen_file tests/data/screen_cases.tsv | sed 's/^/- /'
} > bench/results/screen-eval.md
cat bench/results/screen-eval.md
