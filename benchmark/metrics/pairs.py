"""Counterfactual pair consistency: does an answerer change its answer when the diagram changes it?

A *counterfactual pair* is a question asked on a diagram and on a minimally edited copy on which
the gold answer differs (``diagqa perturb``). An answerer that gives the same answer on both sides
did not read the diagram, whatever its accuracy: the answers are taken in their canonical form
(after normalisation), so "Yes." and "yes" are the same answer.

Each pair outcome is ``(answer on the original, answer on the counterfactual, correct on the
original, correct on the counterfactual)``; an answer of ``None`` (unreadable, or the answerer
failed) makes the pair unmeasured, counted apart.

>>> stats = pair_consistency([(True, True, True, False), (True, False, True, True), (None, False, None, True)])
>>> stats["pairs"], stats["measured"], stats["same_answer"], stats["same_answer_rate"], stats["both_correct_rate"]
(3, 2, 1, 0.5, 0.5)
>>> pair_consistency([])["same_answer_rate"] is None
True
"""
from __future__ import annotations

import json
from typing import Any, Iterable, Mapping


def _same(a: Any, b: Any) -> bool:
    """Equality of two canonical answers in JSON form (lists of a set compared as sets).

    >>> _same(["a", "b"], ["b", "a"]), _same(["a", "b"], ["a"]), _same(2, 2)
    (True, False, True)
    """
    if isinstance(a, list) and isinstance(b, list):
        return sorted(map(json.dumps, a)) == sorted(map(json.dumps, b))
    return a == b


def pair_consistency(outcomes: Iterable[tuple[Any, Any, bool | None, bool | None]],
                     ordered: bool = False) -> dict[str, Any]:
    """Counts and rates over pair outcomes (see the module docstring).

    ``same_answer_rate`` is the share of measured pairs answered alike on both sides (did not read);
    ``both_correct_rate`` the share right on both sides (read the structure the question turns on).
    Rates are None when no pair is measured. With ``ordered`` a list answer (a path) is compared
    in order; otherwise lists compare as sets.
    """
    pairs = measured = same = both = 0
    for a, b, ca, cb in outcomes:
        pairs += 1
        if a is None or b is None or ca is None or cb is None:
            continue
        measured += 1
        same += (a == b) if ordered else _same(a, b)
        both += bool(ca and cb)
    return {"pairs": pairs, "measured": measured, "unmeasured": pairs - measured,
            "same_answer": same, "same_answer_rate": same / measured if measured else None,
            "both_correct": both, "both_correct_rate": both / measured if measured else None}


def _get(rec: Any, key: str) -> Any:
    return rec.get(key) if isinstance(rec, Mapping) else getattr(rec, key, None)


def pair_outcomes(records: Iterable[Any], pairs: Mapping[str, str]) -> dict[tuple[str, str], list[tuple]]:
    """Pair outcomes per ``(variant, answerer)`` from a run's sample records (objects or dicts of
    ``samples.jsonl``) and ``pairs`` (original question id -> counterfactual question id). A pair
    counts only where both questions were run by the same variant and answerer; a sample that
    failed (stage error, no metrics, ``correct`` None) gives an unmeasured side.

    >>> recs = [{"variant": "v", "answerer": "a", "question_id": q, "metrics": {"answer_value": None, "correct": False},
    ...          "answer": {"raw": "Billing"}} for q in ("q1", "q1cf")]
    >>> pair_outcomes(recs, {"q1": "q1cf"})[("v", "a")][0][0]
    ('raw', '"Billing"')
    """
    cells: dict[tuple[str, str, str], Any] = {}
    for rec in records:
        cells[(_get(rec, "variant"), _get(rec, "answerer"), _get(rec, "question_id"))] = rec
    out: dict[tuple[str, str], list[tuple]] = {}
    for (variant, answerer, qid), rec in sorted(cells.items()):
        cf = pairs.get(qid)
        other = cells.get((variant, answerer, cf)) if cf else None
        if other is None:
            continue
        (va, ca), (vb, cb) = _side(rec), _side(other)
        out.setdefault((variant, answerer), []).append((va, vb, ca, cb))
    return out


def _side(rec: Any) -> tuple[Any, bool | None]:
    """(the answer for comparing, correct) of one sample. The answer is its canonical value; one
    that names nothing readable is compared as given (the same text on both sides is the same
    answer); a failed sample (no metrics, or ``correct`` None) has no answer."""
    m = _get(rec, "metrics") or {}
    if m.get("correct") is None:
        return None, None
    value = m.get("answer_value")
    if value is None:
        raw = (_get(rec, "answer") or {}).get("raw")
        value = ("raw", json.dumps(raw, ensure_ascii=False, sort_keys=True, default=str))
    return value, m["correct"]


def pair_table(records: Iterable[Any], pairs: Mapping[str, str]) -> list[dict[str, Any]]:
    """:func:`pair_consistency` per ``(variant, answerer)``, sorted, each row with its two names."""
    return [{"variant": v, "answerer": a, **pair_consistency(outs)}
            for (v, a), outs in sorted(pair_outcomes(records, pairs).items())]
