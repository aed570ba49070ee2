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


class BM25Index:
    """Okapi BM25 over documents (diagram id -> tokens), built once and queried many times.

    Documents without tokens score 0; a query without tokens scores every document 0.

    >>> index = BM25Index({"a": ["cache", "db"], "b": ["auth", "db"], "c": ["queue"], "d": []})
    >>> s = index.scores(["cache"])
    >>> max(s, key=s.get), s["d"], index.scores([]) == dict.fromkeys("abcd", 0.0)
    ('a', 0.0, True)
    """

    def __init__(self, docs: Mapping[str, list[str]]) -> None:
        from rank_bm25 import BM25Okapi

        self.ids = sorted(docs)
        self._index = BM25Okapi([docs[i] for i in self.ids]) if any(docs[i] for i in self.ids) else None

    def scores(self, query: list[str]) -> dict[str, float]:
        if not query or self._index is None:
            return {i: 0.0 for i in self.ids}
        return {i: float(s) for i, s in zip(self.ids, self._index.get_scores(query))}
