"""Turning per-diagram scores into a finder's ranking: best first, ties broken by diagram id."""
from __future__ import annotations

import math
from typing import Mapping


def ranked(scores: Mapping[str, float]) -> list[tuple[str, float]]:
    """``(diagram id, score)`` pairs, highest score first; equal scores in id order.

    A NaN score (a degenerate index) ranks as the lowest possible.

    >>> ranked({"b": 1.0, "a": 1.0, "c": 2.0})
    [('c', 2.0), ('a', 1.0), ('b', 1.0)]
    >>> ranked({"x": float("nan"), "y": -5.0})
    [('y', -5.0), ('x', -inf)]
    """
    clean = {k: (-math.inf if math.isnan(v) else float(v)) for k, v in scores.items()}
    return sorted(clean.items(), key=lambda kv: (-kv[1], kv[0]))


def bm25_scores(docs: Mapping[str, list[str]], query: list[str]) -> dict[str, float]:
    """Okapi BM25 score of every document (diagram id -> tokens) for the ``query`` tokens.

    Documents without tokens score 0; a query without tokens scores every document 0.

    >>> s = bm25_scores({"a": ["cache", "db"], "b": ["auth", "db"], "c": ["queue"], "d": []}, ["cache"])
    >>> max(s, key=s.get), s["d"]
    ('a', 0.0)
    """
    from rank_bm25 import BM25Okapi

    ids = sorted(docs)
    if not query or not any(docs[i] for i in ids):
        return {i: 0.0 for i in ids}
    index = BM25Okapi([docs[i] for i in ids])
    return {i: float(s) for i, s in zip(ids, index.get_scores(query))}
