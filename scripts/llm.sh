#!/usr/bin/env bash
# A local language model for the layers that exercise LLM paths (docs/testing.md "The local
# model"): llama.cpp's OpenAI-compatible server (scripts/llm.py) on 127.0.0.1:PORT, its pid and
# log under DIR, like scripts/citus.sh does for a cluster.
#
#   scripts/llm.sh start DIR PORT [MODEL]  start when not running (MODEL: smollm2, the default;
#                                          qwen1.5b and qwen0.5b are for measurements only)
#   scripts/llm.sh kill DIR                SIGKILL, as a crash would (tests of a model that dies)
#   scripts/llm.sh stop DIR                stop (SIGTERM, then SIGKILL after 10 s)
# The endpoint for memory_ext.llm_url is http://127.0.0.1:PORT/v1.
set -euo pipefail
cd "$(dirname "$0")/.."
cmd=${1:?usage: llm.sh start|stop|kill DIR [PORT] [MODEL]}
dir=${2:?directory}
running() { [ -f "$dir/pid" ] && kill -0 "$(cat "$dir/pid")" 2>/dev/null; }

case "$cmd" in
start)
  port=${3:?port}; model=${4:-smollm2}
  mkdir -p "$dir"
  if running; then exit 0; fi
  setsid python3 scripts/llm.py serve --model "$model" --port "$port" >"$dir/log" 2>&1 < /dev/null &
  echo $! > "$dir/pid"
  for _ in $(seq 1 300); do
    if curl -sf "http://127.0.0.1:$port/health" >/dev/null 2>&1; then
      echo "==> model $model on http://127.0.0.1:$port/v1 (log: $dir/log)"
      exit 0
    fi
    running || { tail -20 "$dir/log" >&2; echo "the model server exited" >&2; exit 1; }
    sleep 1
  done
  echo "the model server did not answer /health in 300 s" >&2; exit 1
  ;;
kill|stop)
  running || exit 0
  pid=$(cat "$dir/pid")
  if [ "$cmd" = kill ]; then kill -9 "$pid"; else kill "$pid"; fi
  for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null || true
  rm -f "$dir/pid"
  ;;
*) echo "usage: llm.sh start|stop|kill DIR [PORT] [MODEL]" >&2; exit 2 ;;
esac
