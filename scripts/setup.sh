#!/usr/bin/env bash
# One-time set-up on a fresh machine: system packages, virtual environment, Python packages.
# Called by `make setup` (and so by `make run` and `make test`). Safe to run again.
set -euo pipefail
VENV=${1:-.venv}
PYTHON=${PYTHON:-python3}

need_apt=()
# tesseract with the English and Russian models (the bundled dataset has Russian diagrams)
langs=$(tesseract --list-langs 2>/dev/null || true)
if ! grep -qx eng <<<"$langs" || ! grep -qx rus <<<"$langs"; then
  need_apt+=(tesseract-ocr tesseract-ocr-eng tesseract-ocr-rus)
fi
# the drawing tools of the extraction styles (diagqa extract --eval --style graphviz|plantuml|mermaid);
# Chromium (Debian's build) also serves the browser test of report.html: Playwright drives it, nothing is downloaded
command -v dot >/dev/null 2>&1 || need_apt+=(graphviz)
command -v plantuml >/dev/null 2>&1 || need_apt+=(plantuml)
command -v java >/dev/null 2>&1 || need_apt+=(default-jre-headless)
command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then SUDO=""; elif command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else SUDO="none"; fi
  if [ "$SUDO" = none ]; then
    echo "setup: missing system packages (${need_apt[*]}) and no root/sudo to install them; the OCR stages will report themselves unavailable and the browser test of report.html is skipped." >&2
  else
    echo "setup: installing system packages: ${need_apt[*]}"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}" >/dev/null
  fi
fi

# Mermaid's command-line renderer drives the system's Chromium: no browser download. npm comes with the
# machine's Node.js (Debian's npm package conflicts with it), so without npm the mermaid style is unavailable.
if ! command -v mmdc >/dev/null 2>&1 && command -v npm >/dev/null 2>&1; then
  echo "setup: installing @mermaid-js/mermaid-cli (npm, using the system's chromium)"
  if ! PUPPETEER_SKIP_DOWNLOAD=1 npm install -g --no-fund --no-audit @mermaid-js/mermaid-cli >/dev/null 2>&1; then
    echo "setup: could not install @mermaid-js/mermaid-cli; the mermaid extraction style will report itself unavailable." >&2
  fi
fi

if [ ! -x "$VENV/bin/python" ]; then
  echo "setup: creating virtual environment $VENV"
  "$PYTHON" -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install -q --upgrade pip
# torch/torchvision pinned to the releases that open_clip and sentence-transformers are tested with here
"$VENV/bin/python" -m pip install -q "torch==2.14.1" "torchvision==0.29.1"
PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 "$VENV/bin/python" -m pip install -q -e ".[all]"
echo "setup: done ($VENV)"
