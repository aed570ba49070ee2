"""Reviewers' labels against the automatic ones (and against each other): the agreement section.

Automatic labels of a sample (from its metrics):

* ``correct``  = ``metrics.correct`` (None for an answerer error: not compared);
* ``grounded`` = ``guess_class == "grounded"`` (None when correctness is unmeasured);
* ``faithful`` = ``faithfulness == 1`` (None when the answer states no claims).

For each label: the number of samples both judged, observed agreement, Cohen's kappa with its
95 % bootstrap interval (:mod:`benchmark.review.agreement`), and every sample where they disagree.
With two sheets, the same between the two reviewers (inter-annotator agreement).
"""
from __future__ import annotations

from typing import Any, Sequence

from benchmark.review.agreement import Agreement, agreement
from benchmark.review.sheet import LABELS


def auto_labels(rec: dict[str, Any]) -> dict[str, bool | None]:
    """The automatic labels of a record (see the module docstring).

    >>> auto_labels({"metrics": {"correct": True, "guess_class": "grounded", "faithfulness": 0.5}})
    {'correct': True, 'grounded': True, 'faithful': False}
    >>> auto_labels({"metrics": {"correct": None, "guess_class": "error", "faithfulness": None}})
    {'correct': None, 'grounded': None, 'faithful': None}
    """
    m = rec.get("metrics") or {}
    correct = m.get("correct")
    faith = m.get("faithfulness")
    return {"correct": correct,
            "grounded": None if correct is None else m.get("guess_class") == "grounded",
            "faithful": None if faith is None else faith >= 1.0}


def _fmt(x: float | None, digits: int = 2) -> str:
    return "–" if x is None else f"{x:.{digits}f}"


def _table(title: str, results: dict[str, Agreement]) -> list[str]:
    lines = [f"### {title}", "", "| label | n | agreement | kappa | 95 % interval | yes/yes | yes/no | no/yes | no/no |",
             "|---|---:|---:|---:|---|---:|---:|---:|---:|"]
    for k, r in results.items():
        c = r.confusion
        interval = "–" if r.low is None else f"[{r.low:.2f}, {r.high:.2f}]"
        lines.append(f"| {k} | {r.n} | {_fmt(r.observed)} | {_fmt(r.kappa)} | {interval} | {c.get((True, True), 0)} "
                     f"| {c.get((True, False), 0)} | {c.get((False, True), 0)} | {c.get((False, False), 0)} |")
    return lines + [""]


def compare(first: dict[str, dict[str, bool | None]], second: dict[str, dict[str, bool | None]],
            seed: int = 0) -> tuple[dict[str, Agreement], list[tuple[str, str, Any, Any]]]:
    """Agreement per label of two labellings keyed by sample id (only shared ids), and the disagreements
    as ``(sample_id, label, first, second)``."""
    ids = sorted(set(first) & set(second))
    results = {}
    disagree = []
    for k in LABELS:
        a = [first[i].get(k) for i in ids]
        b = [second[i].get(k) for i in ids]
        results[k] = agreement(a, b, seed=seed)
        disagree += [(i, k, x, y) for i, x, y in zip(ids, a, b) if x is not None and y is not None and x != y]
    return results, disagree


def review_section(records: dict[str, dict[str, Any]], sheets: Sequence[tuple[str, dict[str, dict[str, bool | None]]]],
                   seed: int = 0) -> str:
    """The markdown section: each sheet against the automatic labels, and the two sheets against each other."""
    lines = ["## Human review", ""]
    auto = {sid: auto_labels(r) for sid, r in records.items()}
    for name, labels in sheets:
        unknown = sorted(set(labels) - set(records))
        lines.append(f"Sheet `{name}`: {len(labels)} samples, "
                     f"{sum(1 for v in labels.values() if any(x is not None for x in v.values()))} labelled"
                     + (f"; {len(unknown)} sample id(s) not in the run, left out: {', '.join(unknown[:5])}" if unknown else ""))
    lines.append("")
    for name, labels in sheets:
        results, disagree = compare(labels, auto, seed)
        lines += _table(f"`{name}` against the automatic labels", results)
        if disagree:
            lines += ["Disagreements (reviewer / automatic):", "", "| sample | label | reviewer | automatic | question | answer |",
                      "|---|---|---|---|---|---|"]
            for sid, k, x, y in disagree:
                r = records[sid]
                q = str((r.get("question") or {}).get("text") or "").replace("|", "\\|")
                a = str((r.get("answer") or {}).get("raw") or "").replace("|", "\\|")
                lines.append(f"| {sid} | {k} | {'yes' if x else 'no'} | {'yes' if y else 'no'} | {q} | {a} |")
            lines.append("")
    if len(sheets) == 2:
        (n1, s1), (n2, s2) = sheets
        results, disagree = compare(s1, s2, seed)
        lines += _table(f"Inter-annotator agreement: `{n1}` against `{n2}`", results)
        if disagree:
            lines += [f"{len(disagree)} disagreement(s): " + ", ".join(f"{sid} ({k})" for sid, k, _, _ in disagree), ""]
    return "\n".join(lines)
