"""How far the LLM judge agrees with the structural faithfulness check, on the same claims.

The structural check (:mod:`benchmark.metrics.faithfulness`) is exact: it looks the claim's nodes up
in the context subgraph. The judge reads the same context as text. On every *listed* claim (one the
structural check found, that the judge labelled by its number) the two labels are compared:

* **confusion table**: judge label (supported / contradicted / not_in_context) × structural verdict
  (supported / unsupported / fabricated), in claims;
* **Cohen's kappa** on the binary question "does the context support this claim?" -- judge
  ``supported`` against structural ``supported``; ``contradicted`` and ``not_in_context`` on the
  judge's side, ``unsupported`` and ``fabricated`` on the structural side, are "no" -- with a seeded
  95 % bootstrap interval over claims (:func:`benchmark.review.agreement.agreement`); observed
  agreement beside it. Kappa is undefined (None) when both give every claim one and the same label.
* claims the judge **added** (found in the explanation, not listed) have no structural verdict and are
  counted apart, by label; judge **errors** and samples **not judged** are counted, never scored.

>>> rows = [{"answerer": "llm", "status": "judged", "claims": [
...     {"label": "supported", "structural": "supported", "kind": "edge"},
...     {"label": "not_in_context", "structural": "fabricated", "kind": "edge"},
...     {"label": "supported", "structural": "unsupported", "kind": "relation"},
...     {"label": "contradicted", "structural": None, "kind": "added"}]},
...     {"answerer": "llm", "status": "error", "error_kind": "unparsable"}]
>>> s = summarise(rows)["answerers"]["llm"]
>>> s["claims"], s["observed"], s["kappa"], s["added"], s["errors"]
(3, 0.6667, 0.4, {'contradicted': 1}, {'unparsable': 1})
>>> s["confusion"]["supported"]["unsupported"]
1
"""
from __future__ import annotations

from collections import Counter
from typing import Any, Iterable, Sequence

from benchmark.judge.prompt import LABELS
from benchmark.metrics.faithfulness import VERDICTS
from benchmark.review.agreement import agreement


def claim_pairs(rows: Iterable[dict[str, Any]]) -> list[tuple[str, str]]:
    """(judge label, structural verdict) of every listed claim of the judged rows."""
    return [(c["label"], c["structural"]) for r in rows if r.get("status") == "judged"
            for c in r.get("claims") or () if c.get("structural") is not None]


def confusion(pairs: Sequence[tuple[str, str]]) -> dict[str, dict[str, int]]:
    """judge label -> structural verdict -> claims (every cell present, zeros included).

    >>> confusion([("supported", "supported"), ("contradicted", "fabricated")])["contradicted"]
    {'supported': 0, 'unsupported': 0, 'fabricated': 1}
    """
    counts = Counter(pairs)
    return {j: {s: counts[(j, s)] for s in VERDICTS} for j in LABELS}


def _r(x: float | None) -> float | None:
    return None if x is None else round(x, 4)


def agreement_numbers(pairs: Sequence[tuple[str, str]], seed: int = 0, resamples: int = 1000) -> dict[str, Any]:
    """Claims compared, observed agreement, kappa with its interval, and the confusion table.

    >>> pairs = [("supported", "supported")] * 4 + [("not_in_context", "unsupported")] * 3 + \\
    ...         [("supported", "fabricated")] * 2 + [("contradicted", "supported")]
    >>> n = agreement_numbers(pairs)
    >>> n["claims"], n["observed"], n["kappa"]
    (10, 0.7, 0.4)
    """
    a = agreement([j == "supported" for j, _ in pairs], [s == "supported" for _, s in pairs],
                  seed=seed, resamples=resamples)
    return {"claims": a.n, "observed": _r(a.observed), "kappa": _r(a.kappa), "kappa_low": _r(a.low),
            "kappa_high": _r(a.high), "undefined_resamples": a.undefined, "confusion": confusion(pairs)}


def summarise(rows: Sequence[dict[str, Any]], seed: int = 0, resamples: int = 1000) -> dict[str, Any]:
    """Agreement over all judged rows and per answerer, with what was added, failed and left out."""
    def block(rs: Sequence[dict[str, Any]]) -> dict[str, Any]:
        out = agreement_numbers(claim_pairs(rs), seed, resamples)
        out["samples"] = len(rs)
        out["judged"] = sum(r.get("status") == "judged" for r in rs)
        out["errors"] = dict(sorted(Counter(str(r.get("error_kind") or "error") for r in rs
                                            if r.get("status") == "error").items()))
        out["not_judged"] = dict(sorted(Counter(str(r.get("reason")) for r in rs
                                                if r.get("status") == "not_judged").items()))
        out["added"] = dict(sorted(Counter(c["label"] for r in rs if r.get("status") == "judged"
                                           for c in r.get("claims") or () if c.get("structural") is None).items()))
        return out

    by: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        by.setdefault(str(r.get("answerer")), []).append(r)
    return {"all": block(rows), "answerers": {a: block(rs) for a, rs in sorted(by.items())}}
