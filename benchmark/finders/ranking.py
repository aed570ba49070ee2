"""Turning per-diagram scores into a finder's ranking: best first, ties broken by diagram id."""
from __future__ import annotations

import math
import time
from typing import Any, Iterator, Mapping, Sequence


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


#: questions a ``rank_many`` finder ranks at once: one embedding batch each. A ``rank_many`` that gives a
#: list holds a ranking of every diagram for each of them (256 x 5 000 pairs at 5 000 diagrams); the
#: ``dense`` finder's gives a sequence that makes each ranking when it is read, so one is held at a time
RANK_CHUNK = 256


def rank_each(finder: Any, questions: Sequence[Any],
              chunk: int = RANK_CHUNK) -> Iterator[tuple[list[tuple[str, float]] | Exception, float]]:
    """``(finder.rank(q), seconds)`` for every question in order, or ``(the exception, seconds)`` where it
    raised; yielded one at a time, so that the caller keeps what it needs of each ranking only.

    A finder with ``rank_many`` ranks ``chunk`` questions per call (the ``dense`` finder embeds them in
    one batch); each question is then given an equal share of the call's time, plus the time its ranking
    took to read where ``rank_many`` gave a sequence that makes each when read. When ``rank_many``
    raises (or gives another number of rankings than it was given questions), the questions of that
    call are ranked again one by one, so that one bad question costs only itself. Nothing a finder raises escapes: the caller decides what an error means (a missing
    model is no bad question).

    >>> class Plain:
    ...     def rank(self, q):
    ...         if q == "bad": raise ValueError("no words")
    ...         return [(q, 1.0)]
    >>> [r if isinstance(r, list) else type(r).__name__ for r, _ in rank_each(Plain(), ["a", "bad"])]
    [[('a', 1.0)], 'ValueError']
    """
    many = getattr(finder, "rank_many", None)
    if many is None:
        for q in questions:
            yield _rank_one(finder, q)
        return
    chunk = max(1, chunk)
    for at in range(0, len(questions), chunk):
        part = list(questions[at:at + chunk])
        start = time.perf_counter()
        try:
            rankings = many(part)
            if not isinstance(rankings, Sequence):   # (a sequence may make each ranking when it is read)
                rankings = list(rankings)
        except Exception:  # noqa: BLE001 - ranked one by one below, each question's error its own
            rankings = None
        if rankings is None or len(rankings) != len(part):  # (a wrong count: which is whose is unknown)
            for q in part:
                yield _rank_one(finder, q)
            continue
        share = (time.perf_counter() - start) / len(part)
        for i, q in enumerate(part):
            made = time.perf_counter()
            try:
                r = rankings[i]
            except Exception:  # noqa: BLE001 - a ranking made when read fails on its own: this question ranked alone
                yield _rank_one(finder, q)
                continue
            yield r, share + time.perf_counter() - made


def _rank_one(finder: Any, question: Any) -> tuple[list[tuple[str, float]] | Exception, float]:
    start = time.perf_counter()
    try:
        ranking: list[tuple[str, float]] | Exception = finder.rank(question)
    except Exception as exc:  # noqa: BLE001 - one failing question never loses the others
        ranking = exc
    return ranking, time.perf_counter() - start


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
