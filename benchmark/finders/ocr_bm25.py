"""Finder ``ocr-bm25``: BM25 over the text tesseract reads in each diagram's PNG.

What a system that only has the images can do with words. The OCR text of each PNG is cached by
image hash (:mod:`benchmark.finders.ocr_text`), so fitting twice reads each image once.
"""
from __future__ import annotations

from benchmark.dataset import Dataset
from benchmark.finders.ocr_text import dataset_texts, tesseract_version
from benchmark.finders.ranking import BM25Index, ranked
from benchmark.questions import Question
from benchmark.stages import FINDERS


@FINDERS.register("ocr-bm25")
class OCRBM25Finder:
    """BM25 over whole-image OCR text (tesseract eng+rus)."""

    name = "ocr-bm25"
    #: it reads every diagram image's OCR words (the run reads them for it first, all cores at once)
    reads_image_text = True

    def __init__(self) -> None:
        self.docs: dict[str, list[str]] = {}
        self.index = BM25Index({})
        self.texts: dict[str, str] = {}
        self.problems: list[str] = []

    def fit(self, dataset: Dataset) -> None:
        from retrievers.text import words

        tesseract_version()  # StageUnavailable before any work when tesseract is missing
        texts, self.problems = dataset_texts(dataset.diagrams)
        # one unreadable PNG ranks last (empty text); the others are still found
        self.texts = {did: texts.get(did, "") for did in sorted(dataset.diagrams)}
        self.docs = {did: words(text) for did, text in self.texts.items()}
        self.index = BM25Index(self.docs)

    def rank(self, question: Question) -> list[tuple[str, float]]:
        from retrievers.text import words

        return ranked(self.index.scores(words(question.text)))
