"""Opt-in: the real local model (Qwen2.5-Coder-1.5B-Instruct via llama.cpp) as answerer and as judge, with a
self-check, on 4 questions. Needs `make llm-run`'s set-up (.cache/llm/, or $DIAGQA_LLM_HOME) and
DIAGQA_LLM_TEST=1; otherwise skipped with the reason (the server fixture and the skip rules are those of
test_llm_local_model.py). Takes a few minutes on two cores."""
import json
import math

import test_llm_local_model as local

pytestmark = getattr(local, "pytestmark", [])
server = local.server   # the same llama.cpp server fixture


def test_the_real_model_judges_and_self_checks_a_small_run(server, tmp_path, monkeypatch):
    from benchmark.judge.apply import judge_run
    from benchmark.runner import run
    from benchmark.spec import RunSpec

    monkeypatch.setenv("DIAGQA_CACHE", str(tmp_path / "cache"))
    endpoint = {"base_url": server, "model": "qwen", "response_format": "json_object_schema", "deadline_s": 600,
                "timeout_s": 300}
    spec = RunSpec(variants=("oracle+d2+oracle",), answerers=("llm", "solver"), out_dir=tmp_path / "results", workers=1,
                   sample=4, run_id="real", options={"llm": dict(endpoint, max_tokens=160, explanation_chars=120)})
    result = run(spec, progress=False, quiet=True)
    summary = judge_run(result.run_dir, judge=dict(endpoint, max_tokens=512),
                        selfcheck={"k": 2, "temperature": 0.8, "answerers": ["llm"]}, seed=0)
    rows = [json.loads(line) for line in (result.run_dir / "judge.jsonl").open()]
    assert len(rows) == 8 and {r["status"] for r in rows} <= {"judged", "error", "not_judged"}
    for r in rows:
        if r["status"] == "judged":   # grammar-constrained: labels from the three, every listed claim labelled
            assert all(c["label"] in ("supported", "contradicted", "not_in_context") for c in r["claims"])
        else:                        # a failure or a skip is never a score
            assert "claims" not in r
    judged = [r for r in rows if r["status"] == "judged"]
    assert judged, [r.get("error") for r in rows]
    a = summary["judge"]["all"]
    assert a["kappa"] is None or (-1.0 <= a["kappa"] <= 1.0 and not math.isnan(a["kappa"]))
    checks = [json.loads(line) for line in (result.run_dir / "selfcheck.jsonl").open()]
    assert len(checks) == sum(r.answerer == "llm" and not r.answer.get("error") for r in result.records)
    assert all(len(c["repeats"]) == 2 and [x["seed"] for x in c["repeats"]] == [1, 2] for c in checks)
    s = summary["selfcheck"]["answerers"]["llm"]
    assert s["consistency"] is None or 0.0 <= s["consistency"] <= 1.0
