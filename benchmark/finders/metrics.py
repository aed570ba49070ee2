"""How well a finder finds the right diagram: recall@k, MRR and twin confusions (pure functions).

A *ranking* is a finder's output, ``[(diagram id, score), ...]`` best first. The *rank* of the right
diagram is its 1-based position, ``None`` when the finder did not return it at all (it then counts
as a miss for recall and adds 0 to MRR -- never skipped).

Twin pairs (DESIGN.md §4) are two diagrams that differ only in the structure one question turns
on; their words are nearly the same, so a text or image finder easily returns the twin.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

Ranking = Sequence[tuple[str, float]]


def rank_of(ranking: Ranking, diagram_id: str) -> int | None:
    """1-based position of ``diagram_id`` in ``ranking``; None when absent.

    >>> rank_of([("a", 0.9), ("b", 0.5)], "b"), rank_of([("a", 0.9)], "z")
    (2, None)
    """
    for i, (did, _) in enumerate(ranking, start=1):
        if did == diagram_id:
            return i
    return None


def recall_at_k(ranks: Iterable[int | None], k: int) -> float | None:
    """Share of questions whose right diagram is in the top ``k``; None when there are no questions.

    >>> recall_at_k([1, 2, 6, None], 1), recall_at_k([1, 2, 6, None], 5), recall_at_k([], 5) is None
    (0.25, 0.5, True)
    """
    ranks = list(ranks)
    if not ranks:
        return None
    return sum(1 for r in ranks if r is not None and r <= k) / len(ranks)


def mean_reciprocal_rank(ranks: Iterable[int | None]) -> float | None:
    """Mean of 1/rank (0 for a missing diagram); None when there are no questions.

    >>> mean_reciprocal_rank([1, 2, 4, None])
    0.4375
    >>> mean_reciprocal_rank([]) is None
    True
    """
    ranks = list(ranks)
    if not ranks:
        return None
    return sum(1.0 / r for r in ranks if r is not None) / len(ranks)


@dataclass(frozen=True)
class TwinOutcome:
    """Where the twin of the right diagram landed for one question."""

    above: bool      # the twin ranked above the right diagram
    at_first: bool   # the twin is the finder's first answer
    tied: bool       # the twin got exactly the right diagram's score (the order is then the id order)


def twin_outcome(ranking: Ranking, right: str, twin: str) -> TwinOutcome:
    """Compare the positions of the right diagram and its twin in ``ranking``.

    A twin the finder did not return is never above; a right diagram it did not return is below any
    returned twin.

    >>> twin_outcome([("t", 0.8), ("r", 0.8), ("x", 0.1)], "r", "t")
    TwinOutcome(above=True, at_first=True, tied=True)
    >>> twin_outcome([("r", 0.9), ("x", 0.5), ("t", 0.1)], "r", "t")
    TwinOutcome(above=False, at_first=False, tied=False)
    """
    r, t = rank_of(ranking, right), rank_of(ranking, twin)
    above = t is not None and (r is None or t < r)
    scores = dict(ranking)
    tied = r is not None and t is not None and scores[right] == scores[twin]
    return TwinOutcome(above=above, at_first=t == 1, tied=tied)


@dataclass(frozen=True)
class FinderScores:
    """Aggregate finding metrics over a question set."""

    n_questions: int
    recall_at_1: float | None
    recall_at_5: float | None
    mrr: float | None
    n_twin_questions: int        # questions whose diagram has a twin in the dataset
    twin_above: int              # ... of which the twin ranked above the right diagram
    twin_at_first: int           # ... of which the twin was ranked first
    twin_tied: int               # ... of which the twin scored exactly the same as the right diagram

    @property
    def pair_recall_at_1(self) -> float | None:
        """Share of questions whose first diagram is the right one or its twin: recall@1 when twins,
        which no reading of the question alone can tell apart, count as found."""
        if self.recall_at_1 is None:
            return None
        return self.recall_at_1 + self.twin_at_first / self.n_questions

    @property
    def twin_confusion_rate(self) -> float | None:
        """Share of twin questions where the twin ranked above the right diagram (None without any)."""
        return self.twin_above / self.n_twin_questions if self.n_twin_questions else None


def finder_scores(ranks: Sequence[int | None], twins: Sequence[TwinOutcome]) -> FinderScores:
    """Aggregate per-question ranks and twin outcomes.

    >>> s = finder_scores([1, 3, None], [TwinOutcome(True, False, False)])
    >>> (s.recall_at_1, round(s.mrr, 3), s.twin_above, s.twin_confusion_rate)
    (0.3333333333333333, 0.444, 1, 1.0)
    >>> finder_scores([2, 1], [TwinOutcome(True, True, False)]).pair_recall_at_1
    1.0
    """
    return FinderScores(
        n_questions=len(ranks), recall_at_1=recall_at_k(ranks, 1), recall_at_5=recall_at_k(ranks, 5),
        mrr=mean_reciprocal_rank(ranks), n_twin_questions=len(twins),
        twin_above=sum(t.above for t in twins), twin_at_first=sum(t.at_first for t in twins),
        twin_tied=sum(t.tied for t in twins))
