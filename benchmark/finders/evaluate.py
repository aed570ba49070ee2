"""Running finders over a dataset's questions and tabulating recall@1, recall@5, MRR and twin confusions.

:func:`finder_table` is what reports call: one row per finder, with the finders that cannot run
here (missing weights, missing tesseract) kept as rows whose status says why.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Sequence

from benchmark.dataset import Dataset
from benchmark.errors import StageUnavailable
from benchmark.finders.metrics import FinderScores, TwinOutcome, finder_scores, rank_of, twin_outcome
from benchmark.finders.ranking import rank_each
from benchmark.questions import Question
from benchmark.stages import FINDERS, Finder


@dataclass(frozen=True)
class FinderEval:
    """One finder over one question set: per-question ranks and the aggregate scores."""

    finder: str
    ranks: dict[str, int | None]            # question id -> rank of its diagram (None: not returned)
    scores: FinderScores
    fit_s: float
    problems: tuple[str, ...] = field(default=())


def evaluate_finder(finder: Finder, dataset: Dataset, questions: Sequence[Question] | None = None) -> FinderEval:
    """Fit ``finder`` on ``dataset`` and rank every question (default: all the dataset's questions).

    A question whose ranking fails counts as a miss and its error is kept in ``problems``;
    :class:`StageUnavailable` from ``fit`` propagates (the finder cannot run at all).
    """
    questions = list(dataset.questions if questions is None else questions)
    start = time.perf_counter()
    finder.fit(dataset)
    fit_s = time.perf_counter() - start
    ranks: dict[str, int | None] = {}
    twins: list[TwinOutcome] = []
    problems: list[str] = list(getattr(finder, "problems", ()))
    for q, (ranking, _) in zip(questions, rank_each(finder, questions)):
        if isinstance(ranking, StageUnavailable):
            raise ranking
        if isinstance(ranking, Exception):  # one failing question never loses the others
            problems.append(f"{q.file or ''}:{q.line or ''} [{q.id}]: {type(ranking).__name__}: {ranking}")
            ranks[q.id] = None
            continue
        ranks[q.id] = rank_of(ranking, q.diagram)
        twin = dataset.diagrams[q.diagram].twin if q.diagram in dataset.diagrams else None
        if twin and twin in dataset.diagrams:
            twins.append(twin_outcome(ranking, q.diagram, twin))
    return FinderEval(finder.name, ranks, finder_scores(list(ranks.values()), twins), fit_s, tuple(problems))


def _round(x: float | None, digits: int = 3) -> float | None:
    return None if x is None else round(x, digits)


def finder_row(name: str, result: FinderEval | None = None, reason: str = "") -> dict[str, Any]:
    """One table row; without ``result`` the finder is reported as unavailable with ``reason``."""
    if result is None:
        return {"finder": name, "status": "unavailable", "reason": reason, "questions": None, "recall@1": None,
                "recall@5": None, "MRR": None, "recall@1_pair": None, "twin_questions": None,
                "twin_confusions": None, "twin_at_1": None, "twin_ties": None, "fit_s": None}
    s = result.scores
    return {"finder": name, "status": "ok", "reason": "; ".join(result.problems), "questions": s.n_questions,
            "recall@1": _round(s.recall_at_1), "recall@5": _round(s.recall_at_5), "MRR": _round(s.mrr),
            "recall@1_pair": _round(s.pair_recall_at_1), "twin_questions": s.n_twin_questions,
            "twin_confusions": s.twin_above, "twin_at_1": s.twin_at_first,
            "twin_ties": s.twin_tied, "fit_s": round(result.fit_s, 2)}


def finder_table(dataset: Dataset, finder_names: Sequence[str], questions: Sequence[Question] | None = None,
                 **options: dict[str, Any]) -> list[dict[str, Any]]:
    """Rows ``finder, status, reason, questions, recall@1, recall@5, MRR, recall@1_pair (right diagram
    or its twin first), twin_questions, twin_confusions (twin ranked above the right diagram),
    twin_at_1, twin_ties, fit_s``.

    ``options`` maps a finder name to constructor keyword arguments (``{"clip": {"pretrained": ...}}``).
    A finder that raises :class:`StageUnavailable` gets a row with status ``unavailable`` and the reason.
    """
    from benchmark.plugins import load_all

    load_all()
    rows = []
    for name in finder_names:
        try:
            finder = FINDERS.create(name, **options.get(name, {}))
            rows.append(finder_row(name, evaluate_finder(finder, dataset, questions)))
        except StageUnavailable as exc:
            rows.append(finder_row(name, reason=str(exc)))
    return rows
