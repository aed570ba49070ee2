"""Evidence attribution, the usage roll-up and the stratified sample: their doctests, and what a run
with the llm answerer (real openai client, local HTTP server) writes into summary.csv, the report
and run.json."""
import csv
import doctest
import importlib
import json

import pytest

from benchmark.graph import Edge, Subgraph, build_graph
from benchmark.metrics.evidence import cite_edges, evidence_scores
from llm_server import LLMServer


@pytest.mark.parametrize("name", ["benchmark.metrics.evidence", "benchmark.report.usage", "benchmark.sampling",
                                  "benchmark.answerers.llm", "benchmark.answerers.llm_http",
                                  "benchmark.answerers.cache"])
def test_doctests(name):
    result = doctest.testmod(importlib.import_module(name))
    assert result.attempted > 0 and result.failed == 0


def test_evidence_maps_labels_to_edges_in_their_direction():
    g = build_graph({"nodes": [{"id": "a", "label": "Alpha"}, {"id": "b", "label": "Beta"}, {"id": "c", "label": "Gamma"}],
                     "edges": [{"src": "a", "dst": "b"}, {"src": "b", "dst": "c", "arrow": "--"}]})
    cited = cite_edges([("alpha", "beta"), ("Beta", "Alpha"), ("Gamma", "Beta"), ("Alpha", "Beta")], g)
    assert cited.mapped == (("a", "b"), ("b", "c")) and cited.unmapped == 1   # b->a is not an edge; b--c is
    gold = Subgraph.from_edges([Edge("a", "b"), Edge("b", "c", directed=False), Edge("a", "c")])
    s = evidence_scores(cited, gold)
    assert s["evidence_recall"] == pytest.approx(2 / 3) and s["evidence_precision"] == pytest.approx(2 / 3)
    assert evidence_scores(cite_edges([], g), gold)["evidence_precision"] is None


def test_a_run_rolls_up_usage_and_evidence(tmp_path, monkeypatch):
    from benchmark.runner import run
    from benchmark.spec import RunSpec

    def model(request):  # cites the first arrow of the context; every fourth reply is prose
        n = len(server.requests)
        if n % 4 == 0:
            return "I believe so."
        system = request["messages"][0]["content"]
        line = system.split("Context:\n", 1)[1].splitlines()[0]
        src, _, rest = line.partition(" -> ")
        return json.dumps({"answer": "yes", "evidence": [[src, rest.split(" [")[0]]] if rest else []})

    monkeypatch.setenv("DIAGQA_CACHE", str(tmp_path / "cache"))
    with LLMServer(responder=model) as server:
        spec = RunSpec(variants=("oracle+d2+oracle", "oracle+d2+none"), answerers=("llm", "solver"),
                       out_dir=tmp_path / "results", workers=1, limit=8, run_id="u",
                       options={"llm": {"base_url": server.base_url, "model": "m", "price_per_1k_prompt": 0.5,
                                        "price_per_1k_completion": 1.5}})
        result = run(spec, progress=False, quiet=True)
        calls = server.calls
    run_dir = tmp_path / "results" / "u"
    rows = {(r["variant"], r["answerer"]): r for r in csv.DictReader((run_dir / "summary.csv").open())}
    llm = rows[("oracle+d2+oracle", "llm")]
    recs = [r for r in result.records if r.answerer == "llm" and r.variant == "oracle+d2+oracle"]
    assert int(llm["calls"]) == sum(r.answer["usage"]["calls"] for r in recs)
    assert int(llm["tokens_in"]) == 11 * int(llm["calls"]) and int(llm["tokens_out"]) == 7 * int(llm["calls"])
    assert float(llm["cost"]) == pytest.approx(int(llm["calls"]) * (11 * 0.5 + 7 * 1.5) / 1000)
    failed = sum(1 for r in recs if r.answer.get("error_kind") == "unparsable")
    assert failed and int(llm["unparsable"]) == failed and float(llm["unparsable_share"]) == failed / len(recs)
    assert float(llm["latency_p95"]) >= float(llm["latency_p50"]) > 0
    assert 0 < float(llm["evidence_precision"]) <= 1 and llm["evidence_recall"] != ""
    assert rows[("oracle+d2+oracle", "solver")]["tokens_in"] == ""   # no usage: unmeasured, not 0
    assert sum(int(r["calls"]) for k, r in rows.items() if k[1] == "llm") == calls
    card = json.loads((run_dir / "run.json").read_text())
    assert {(u["variant"], u["answerer"]) for u in card["usage"]} == set(rows)
    report = (run_dir / "report.md").read_text()
    assert "Usage, failed answers and evidence attribution" in report and "unparsable:" in report
    all_failed = sum(1 for r in result.records if r.answerer == "llm" and r.answer.get("error"))
    assert all_failed > failed and f"Failed answers ({all_failed}; unmeasured, not wrong)" in report
