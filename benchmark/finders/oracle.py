"""Finder ``oracle``: the question's own diagram first (the upper bound of finding)."""
from __future__ import annotations

from benchmark.dataset import Dataset
from benchmark.questions import Question
from benchmark.stages import FINDERS


@FINDERS.register("oracle")
class OracleFinder:
    """The question's own diagram alone (score 1): every other diagram ranks below it, so it lists none of
    them. (Listing the rest, all at score 0, would make ranking every question cost the dataset's size:
    a run's setup quadratic in it.)

    >>> from types import SimpleNamespace
    >>> OracleFinder().rank(SimpleNamespace(id="q", diagram="arch_payment", text="Is there a retry?"))
    [('arch_payment', 1.0)]
    """

    name = "oracle"

    def fit(self, dataset: Dataset) -> None:
        pass

    def rank(self, question: Question) -> list[tuple[str, float]]:
        return [(question.diagram, 1.0)]
