"""The decision layer over a finished run: one decision per sample of ``samples.jsonl``.

:func:`decide_records` computes every sample's text signals in one batched pass (each distinct
question, context and answer text embedded once), reads its graph signals from its metrics, and
applies :func:`benchmark.decision.rules.decide`. :func:`write_decisions` writes
``decisions.jsonl`` (one line per sample, in the run's order) and ``decisions.md`` (the report
section of :mod:`benchmark.decision.section`) into the run directory.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from benchmark.decision.config import DecisionConfig
from benchmark.decision.rules import GraphSignals, decide, text_decision
from benchmark.decision.signals import Encoder, TextItem, text_signals_many

DECISIONS = "decisions.jsonl"
#: records -> one judge row (or None) per record (see :mod:`benchmark.decision.judge`)
Judge = Callable[[Sequence[dict[str, Any]]], Sequence[dict[str, Any] | None]]
SECTION = "decisions.md"


def answer_text(answer: dict[str, Any] | None) -> str:
    """The text of an answer that the text signals read: the reply, the explanation and the cited edges.

    >>> answer_text({"raw": "yes", "explanation": "A reads B.", "evidence": [["A", "B"]]})
    'yes\\nA reads B.\\nA -> B'
    >>> answer_text(None)
    ''
    """
    if not answer:
        return ""
    parts = [str(answer.get("raw") or "").strip(), str(answer.get("explanation") or "").strip()]
    for ev in answer.get("evidence") or []:
        if isinstance(ev, (list, tuple)) and len(ev) >= 2:
            parts.append(f"{ev[0]} -> {ev[1]}")
    return "\n".join(p for p in parts if p)


def text_item(rec: dict[str, Any]) -> TextItem:
    """Question, context (as the answerer saw it) and answer texts of a sample record."""
    q = rec.get("question") or {}
    ctx = rec.get("context") or {}
    return TextItem(question=str(q.get("text") or ""), context=str(ctx.get("text") or ""),
                    answer=answer_text(rec.get("answer")))


@dataclass
class DecidedRun:
    """Decisions of a run, with the time the layer took."""

    rows: list[dict[str, Any]]
    seconds: float
    problems: list[str] = field(default_factory=list)
    judge_seconds: float = 0.0   # time spent asking the judge (not counted in ``seconds``)


def decide_records(records: Sequence[dict[str, Any]], cfg: DecisionConfig | None = None,
                   encode: Encoder | None = None, judge: Judge | None = None) -> DecidedRun:
    """One decision row per record (see :func:`write_decisions` for its keys).

    ``judge`` (optional) is asked once, with the records whose decision needs it
    (:func:`benchmark.decision.judge.needs_judge`), for one judge row (or None) each; those rows carry
    ``judge`` (:func:`benchmark.decision.judge.judge_note`)."""
    cfg = cfg or DecisionConfig()
    t0 = time.perf_counter()
    items = [text_item(r) for r in records]
    signals = text_signals_many(items, encode)
    graphs = [GraphSignals.from_record(rec) for rec in records]
    decisions = [decide(sig, graph, cfg) for sig, graph in zip(signals, graphs)]
    notes: dict[int, dict[str, Any]] = {}
    t_judge = time.perf_counter()
    if judge is not None:
        from benchmark.decision.judge import consult, judge_note, needs_judge

        asked = [i for i, d in enumerate(decisions) if needs_judge(d, cfg)]
        for i, jrow in zip(asked, judge([records[i] for i in asked]) if asked else []):
            notes[i] = judge_note(jrow, decisions[i])
            decisions[i] = consult(decisions[i], jrow, cfg)
    judge_s = time.perf_counter() - t_judge   # the judge's own time (requests) is not the layer's
    rows = []
    for i, (rec, sig, graph, d) in enumerate(zip(records, signals, graphs, decisions)):
        m = rec.get("metrics") or {}
        rows.append({
            "sample_id": rec.get("sample_id"), "answerer": rec.get("answerer"), "variant": rec.get("variant"),
            "question_id": rec.get("question_id"), **d.to_json(), **({"judge": notes[i]} if i in notes else {}),
            "text_verdict": text_decision(sig, cfg).verdict,
            "signals": sig.to_json(),
            "graph": {"error": graph.error, "abstained": graph.abstained, "sufficient": graph.sufficient,
                      "srr": graph.srr, "faithfulness": graph.faithfulness, "n_claims": graph.n_claims,
                      "unsupported": graph.unsupported, "fabricated": graph.fabricated},
            "correct": m.get("correct"), "guess_class": m.get("guess_class"),
        })
    return DecidedRun(rows, time.perf_counter() - t0 - judge_s, judge_seconds=judge_s)


def write_decisions(run_dir: Path, decided: DecidedRun, section: str) -> tuple[Path, Path]:
    """``decisions.jsonl`` and ``decisions.md`` in ``run_dir``; returns their paths."""
    jpath, mpath = run_dir / DECISIONS, run_dir / SECTION
    with open(jpath, "w", encoding="utf-8") as fh:
        for row in decided.rows:
            fh.write(json.dumps(row, sort_keys=True, ensure_ascii=False, separators=(",", ":")) + "\n")
    mpath.write_text(section, encoding="utf-8")
    return jpath, mpath
