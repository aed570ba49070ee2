"""Finder ``ocr-bm25``: BM25 over the text tesseract reads in each diagram's PNG.

What a system that only has the images can do with words. The OCR text of each PNG is cached by
image hash (:mod:`benchmark.finders.ocr_text`), so fitting twice reads each image once.
"""
from __future__ import annotations

from benchmark.dataset import Dataset
from benchmark.errors import InputError
from benchmark.finders.ocr_text import ocr_texts, tesseract_version
from benchmark.finders.ranking import BM25Index, ranked
from benchmark.questions import Question
from benchmark.stages import FINDERS


@FINDERS.register("ocr-bm25")
class OCRBM25Finder:
    """BM25 over whole-image OCR text (tesseract eng+rus)."""

    name = "ocr-bm25"

    def __init__(self) -> None:
        self.docs: dict[str, list[str]] = {}
        self.index = BM25Index({})
        self.texts: dict[str, str] = {}
        self.problems: list[str] = []

    def fit(self, dataset: Dataset) -> None:
        from retrievers.text import words

        tesseract_version()  # StageUnavailable before any work when tesseract is missing
        self.texts, self.problems = {}, []
        read = ocr_texts([d.png_path for _, d in sorted(dataset.diagrams.items())])
        for did, d in sorted(dataset.diagrams.items()):
            text = read[d.png_path]
            if isinstance(text, InputError):  # one unreadable PNG ranks last; the others are still found
                self.problems.append(str(text))
                text = ""
            self.texts[did] = text
        self.docs = {did: words(text) for did, text in self.texts.items()}
        self.index = BM25Index(self.docs)

    def rank(self, question: Question) -> list[tuple[str, float]]:
        from retrievers.text import words

        return ranked(self.index.scores(words(question.text)))
