"""The report section on decisions: mix per answerer, the layer's errors, its precision and recall,
and where signals disagree.

* **decision mix**: share of ACCEPT / REVIEW / REJECT among an answerer's samples.
* **wrong ACCEPTed**: samples ACCEPTed whose answer is wrong (``correct`` False);
  **right REJECTed**: samples REJECTed whose answer is right.
* **precision / recall against correctness**: ACCEPT read as "this answer is right";
  precision = right among ACCEPTed, recall = ACCEPTed among right. Samples whose correctness is
  unmeasured (answerer errors) are left out. The same **against groundedness** with
  ``guess_class == "grounded"`` as the truth.
* **signal disagreements**: high SRR (= 1) but unfaithful (faithfulness < 1); sufficient context
  but a wrong answer; right on an insufficient context (lucky guess); graph and text verdicts differing.
"""
from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any, Iterable, Sequence

from benchmark.decision.rules import ACCEPT, REJECT, REVIEW


def precision_recall(pairs: Iterable[tuple[bool, bool]]) -> tuple[float | None, float | None, int]:
    """Precision and recall of predictions against truths: ``(predicted, true)`` pairs; None when undefined.

    >>> precision_recall([(True, True), (True, False), (False, True), (False, False)])
    (0.5, 0.5, 4)
    >>> precision_recall([(False, True)])
    (None, 0.0, 1)
    """
    tp = fp = fn = n = 0
    for pred, true in pairs:
        n += 1
        tp += pred and true
        fp += pred and not true
        fn += (not pred) and true
    precision = tp / (tp + fp) if tp + fp else None
    recall = tp / (tp + fn) if tp + fn else None
    return precision, recall, n


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.1f} %"


def answerer_stats(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The numbers of one answerer's decision rows (see the module docstring).

    >>> rows = [{"verdict": "ACCEPT", "correct": True, "guess_class": "grounded"},
    ...         {"verdict": "ACCEPT", "correct": False, "guess_class": "misread"},
    ...         {"verdict": "REJECT", "correct": True, "guess_class": "lucky_guess"},
    ...         {"verdict": "REVIEW", "correct": None, "guess_class": "error"}]
    >>> s = answerer_stats(rows)
    >>> s["mix"][ACCEPT], s["wrong_accepted"], s["right_rejected"], s["precision_correct"], s["recall_correct"]
    (0.5, 1, 1, 0.5, 0.5)
    >>> s["precision_grounded"], s["recall_grounded"]
    (0.5, 1.0)
    """
    n = len(rows)
    counts = Counter(r["verdict"] for r in rows)
    measured = [r for r in rows if r.get("correct") is not None]
    pc, rc, _ = precision_recall((r["verdict"] == ACCEPT, bool(r["correct"])) for r in measured)
    pg, rg, _ = precision_recall((r["verdict"] == ACCEPT, r.get("guess_class") == "grounded") for r in measured)
    return {
        "n": n, "measured": len(measured),
        "mix": {v: (counts[v] / n if n else 0.0) for v in (ACCEPT, REVIEW, REJECT)},
        "counts": {v: counts[v] for v in (ACCEPT, REVIEW, REJECT)},
        "wrong_accepted": sum(1 for r in measured if r["verdict"] == ACCEPT and r["correct"] is False),
        "right_rejected": sum(1 for r in measured if r["verdict"] == REJECT and r["correct"] is True),
        "precision_correct": pc, "recall_correct": rc, "precision_grounded": pg, "recall_grounded": rg,
    }


def disagreements(rows: Sequence[dict[str, Any]]) -> dict[str, int]:
    """Counts of samples whose signals point different ways.

    >>> disagreements([{"graph": {"srr": 1.0, "faithfulness": 0.5, "sufficient": True}, "correct": False,
    ...                 "verdict": "REJECT", "text_verdict": "ACCEPT"}])
    {'high SRR but unfaithful': 1, 'sufficient context but wrong': 1, 'right on an insufficient context': 0, 'graph and text verdicts differ': 1}
    """
    out = {"high SRR but unfaithful": 0, "sufficient context but wrong": 0, "right on an insufficient context": 0,
           "graph and text verdicts differ": 0}
    for r in rows:
        g = r.get("graph") or {}
        if g.get("srr") is not None and g["srr"] >= 1.0 and g.get("faithfulness") is not None and g["faithfulness"] < 1.0:
            out["high SRR but unfaithful"] += 1
        if g.get("sufficient") is True and r.get("correct") is False:
            out["sufficient context but wrong"] += 1
        if g.get("sufficient") is False and r.get("correct") is True:
            out["right on an insufficient context"] += 1
        if r.get("text_verdict") and r["text_verdict"] != r["verdict"]:
            out["graph and text verdicts differ"] += 1
    return out


def decision_section(rows: Sequence[dict[str, Any]], *, seconds: float | None = None) -> str:
    """The markdown section: one table per topic, one line per answerer."""
    by: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        by[str(r.get("answerer"))].append(r)
    lines = ["## Decisions per answer", ""]
    lines.append("Each sample gets ACCEPT, REVIEW or REJECT from the decision layer (graph rules G1–G6 first, then "
                 "text rules T1–T9; thresholds in `configs/decision.yaml`).")
    if seconds is not None and rows:
        lines.append(f"{len(rows)} samples decided in {seconds:.2f} s ({1000 * seconds / len(rows):.2f} ms per sample).")
    lines += ["", "| answerer | n | ACCEPT | REVIEW | REJECT | wrong ACCEPTed | right REJECTed | "
              "precision (correct) | recall (correct) | precision (grounded) | recall (grounded) |",
              "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for a in sorted(by):
        s = answerer_stats(by[a])
        lines.append(f"| {a} | {s['n']} | {_pct(s['mix'][ACCEPT])} | {_pct(s['mix'][REVIEW])} | {_pct(s['mix'][REJECT])} "
                     f"| {s['wrong_accepted']} | {s['right_rejected']} | {_pct(s['precision_correct'])} "
                     f"| {_pct(s['recall_correct'])} | {_pct(s['precision_grounded'])} | {_pct(s['recall_grounded'])} |")
    lines += ["", "Rules that fired:", "", "| answerer | " + " | ".join(_rule_names(rows)) + " |",
              "|---|" + "---:|" * len(_rule_names(rows))]
    for a in sorted(by):
        c = Counter(r["rule"] for r in by[a])
        lines.append(f"| {a} | " + " | ".join(str(c[k]) for k in _rule_names(rows)) + " |")
    dis = {a: disagreements(by[a]) for a in sorted(by)}
    names = list(next(iter(dis.values())).keys()) if dis else []
    lines += ["", "Signal disagreements (samples):", "", "| answerer | " + " | ".join(names) + " |",
              "|---|" + "---:|" * len(names)]
    for a, d in dis.items():
        lines.append(f"| {a} | " + " | ".join(str(d[k]) for k in names) + " |")
    return "\n".join(lines) + "\n"


def _rule_names(rows: Sequence[dict[str, Any]]) -> list[str]:
    order = ["G1", "G2", "G3", "G4", "G5", "G6", "T1", "T2", "T3", "T4", "T5", "T6", "T7", "T8", "T9", "accept"]
    seen = {r["rule"] for r in rows}
    return [k for k in order if k in seen]
