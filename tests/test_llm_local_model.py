"""Opt-in: the real local model (Qwen2.5-Coder-1.5B-Instruct via llama.cpp) answers 5 questions through
the whole harness. Needs `make llm-run`'s set-up (.cache/llm/, or $DIAGQA_LLM_HOME) and
DIAGQA_LLM_TEST=1; otherwise skipped with the reason. Takes a minute or more on two cores."""
import os
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from benchmark.dataset import DEFAULT_ROOT

HOME = Path(os.environ.get("DIAGQA_LLM_HOME") or DEFAULT_ROOT / ".cache" / "llm")
PYTHON = HOME / "venv" / "bin" / "python"
MODEL = HOME / "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"

if not (PYTHON.exists() and MODEL.exists()):
    pytestmark = pytest.mark.skip(reason=f"the local model is not installed in {HOME} (run `make llm-run` once)")
elif (MODEL.parent / (MODEL.name + ".sha256")).read_text().strip() != SHA256:
    pytestmark = pytest.mark.skip(reason=f"{MODEL} was not verified by scripts/llm_setup.sh")
elif os.environ.get("DIAGQA_LLM_TEST") != "1":
    pytestmark = pytest.mark.skip(reason="opt-in: set DIAGQA_LLM_TEST=1 to run the real local model (slow)")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log = (tmp_path_factory.mktemp("llm") / "server.log").open("w")
    proc = subprocess.Popen([str(PYTHON), "-m", "llama_cpp.server", "--model", str(MODEL), "--model_alias", "qwen",
                             "--n_ctx", "4096", "--n_threads", os.environ.get("LLM_THREADS", "2"),
                             "--host", "127.0.0.1", "--port", str(port)], stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        for _ in range(240):
            assert proc.poll() is None, "the llama.cpp server exited"
            try:
                urllib.request.urlopen(url + "/models", timeout=2)
                break
            except OSError:
                time.sleep(0.5)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def test_the_real_model_answers_five_questions(server, tmp_path, monkeypatch):
    from benchmark.runner import run
    from benchmark.spec import RunSpec

    monkeypatch.setenv("DIAGQA_CACHE", str(tmp_path / "cache"))
    spec = RunSpec(variants=("oracle+d2+oracle",), answerers=("llm",), out_dir=tmp_path / "results", workers=1,
                   sample=5, run_id="real", options={"llm": {
                       "base_url": server, "model": "qwen", "max_tokens": 128, "explanation_chars": 0,
                       "response_format": "json_object_schema", "deadline_s": 600, "timeout_s": 300}})
    result = run(spec, progress=False, quiet=True)
    recs = result.records
    assert len(recs) == 5 and all(r.error is None for r in recs)
    answers = [r.answer for r in recs]
    # grammar-constrained decoding: every reply is a JSON object of the schema
    assert all(a["error"] is None and a["raw"] is not None for a in answers), [a["error"] for a in answers]
    assert all(a["usage"]["calls"] == 1 and a["usage"]["completion_tokens"] > 0 for a in answers)
    assert all(r.metrics["correct"] in (True, False) for r in recs)
    assert (result.run_dir / "summary.csv").read_text().count("\n") == 2
