"""Finder ``d2-bm25``: BM25 over each diagram's D2 source (labels and identifiers).

Reads the text a diagram was written in, so it is the upper bound of text finding: no OCR errors.
Words are folded, stemmed (English and Russian) and stripped of function words by
:func:`retrievers.text.words`; identifiers are split by :func:`benchmark.finders.d2_text.d2_words`.
"""
from __future__ import annotations

from benchmark.dataset import Dataset
from benchmark.finders.d2_text import d2_words
from benchmark.finders.ranking import BM25Index, ranked
from benchmark.questions import Question
from benchmark.stages import FINDERS


@FINDERS.register("d2-bm25")
class D2BM25Finder:
    """BM25 over the D2 source's labels and identifiers."""

    name = "d2-bm25"

    def __init__(self) -> None:
        self.docs: dict[str, list[str]] = {}
        self.index = BM25Index({})

    def fit(self, dataset: Dataset) -> None:
        from retrievers.text import words

        self.docs = {did: words(d2_words(d.source)) for did, d in sorted(dataset.diagrams.items())}
        self.index = BM25Index(self.docs)

    def rank(self, question: Question) -> list[tuple[str, float]]:
        from retrievers.text import words

        return ranked(self.index.scores(words(question.text)))
