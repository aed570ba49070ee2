"""Finder ``oracle``: the question's own diagram first (the upper bound of finding)."""
from __future__ import annotations

from benchmark.dataset import Dataset
from benchmark.questions import Question
from benchmark.stages import FINDERS


@FINDERS.register("oracle")
class OracleFinder:
    """The question's own diagram first, then the others in id order (score 1 / 0)."""

    name = "oracle"

    def __init__(self) -> None:
        self._ids: list[str] = []

    def fit(self, dataset: Dataset) -> None:
        self._ids = sorted(dataset.diagrams)

    def rank(self, question: Question) -> list[tuple[str, float]]:
        return [(question.diagram, 1.0)] + [(d, 0.0) for d in self._ids if d != question.diagram]
