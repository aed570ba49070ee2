#!/usr/bin/env bash
# `make llm-run`: set up the local model once (scripts/llm_setup.sh), start its server on localhost,
# wait until it answers, run the configs/local-llm.yaml grid, stop the server.
#
#   scripts/llm_run.sh [extra diagqa run arguments, e.g. --run-id local-llm --limit 5]
#
# Environment: LLM_HOME (default <repository>/.cache/llm), LLM_THREADS (2), DIAGQA (the diagqa
# command, may carry arguments; default .venv/bin/diagqa), LLM_CONFIG (configs/local-llm.yaml, whose llm.base_url names
# the port, 8765).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
LLM_HOME="${LLM_HOME:-$ROOT/.cache/llm}"
PORT=8765
THREADS="${LLM_THREADS:-2}"
DIAGQA="${DIAGQA:-$ROOT/.venv/bin/diagqa}"
CONFIG="${LLM_CONFIG:-$ROOT/configs/local-llm.yaml}"
ALIAS="qwen2.5-coder-1.5b-instruct"
MODEL="$LLM_HOME/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
LOG="$LLM_HOME/server.log"

LLM_HOME="$LLM_HOME" bash "$ROOT/scripts/llm_setup.sh"

answers() {  # whether a server answers on the port (the server's own Python: no curl needed)
  "$LLM_HOME/venv/bin/python" -c "import urllib.request, sys; urllib.request.urlopen(sys.argv[1], timeout=2)" \
    "http://127.0.0.1:$PORT/v1/models" > /dev/null 2>&1
}
if answers; then
  echo "llm-run: something already answers on 127.0.0.1:$PORT; stop it first" >&2; exit 1
fi
echo "llm-run: starting the llama.cpp server on 127.0.0.1:$PORT (log: $LOG)" >&2
"$LLM_HOME/venv/bin/python" -m llama_cpp.server --model "$MODEL" --model_alias "$ALIAS" --n_ctx 4096 \
  --n_threads "$THREADS" --host 127.0.0.1 --port "$PORT" > "$LOG" 2>&1 &
SERVER=$!
stop_server() {  # the server may ignore SIGTERM while it holds the model: give it 5 s, then SIGKILL
  kill "$SERVER" 2>/dev/null || return 0
  for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$SERVER" 2>/dev/null || break; sleep 0.5; done
  kill -9 "$SERVER" 2>/dev/null || true
  wait "$SERVER" 2>/dev/null || true
}
trap stop_server EXIT

for _ in $(seq 1 240); do
  if ! kill -0 "$SERVER" 2>/dev/null; then
    echo "llm-run: the server exited; the end of its log:" >&2; tail -20 "$LOG" >&2; exit 1
  fi
  if answers; then break; fi
  sleep 0.5
done
answers || { echo "llm-run: the server did not get ready in 120 s" >&2; exit 1; }
kill -0 "$SERVER" 2>/dev/null || { echo "llm-run: the server exited; see $LOG" >&2; exit 1; }
echo "llm-run: server ready" >&2

$DIAGQA run --config "$CONFIG" --no-progress "$@"   # DIAGQA may carry arguments
