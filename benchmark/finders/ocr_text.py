"""Whole-image OCR text of a rendered diagram (tesseract, English + Russian), cached by image hash.

The text is the words of the image's one OCR pass (:func:`benchmark.extract.ocr.image_words`:
text patches packed into a mosaic without box edges or arrows, read in sparse-text mode), the
same pass the extractor reads, put in lines top to bottom. The words are stored under
``<cache>/ocr_words/`` keyed by the SHA-256 of the PNG bytes, the languages, the tesseract
version and the reader's version, so an image is read by tesseract once per cache, whether a
finder or the ``ocr`` source asks first.
"""
from __future__ import annotations

from pathlib import Path

from benchmark.errors import InputError
from benchmark.extract.ocr import LANG, Word, image_words, stored_words, tesseract_version, words_cache_dir

#: tesseract languages used for every diagram (the dataset is English and Russian)
LANGUAGES = LANG

__all__ = ["LANGUAGES", "dataset_texts", "ocr_text", "ocr_texts", "tesseract_version", "words_text"]


def words_text(words: list[Word]) -> str:
    """Words as text: one line per baseline (:func:`benchmark.extract.labels.group_lines`), top to
    bottom, words left to right.

    >>> words_text([Word("DB", 78, 11, 20, 19, 90, 10), Word("Orders", 10, 10, 60, 20, 90, 10),
    ...             Word("Cache", 10, 80, 50, 20, 90, 10)])
    'Orders DB\nCache'
    """
    from benchmark.extract.labels import group_lines

    return "\n".join(" ".join(w.text for w in sorted(line, key=lambda w: (w.x, w.y)))
                     for line in group_lines(words))


def ocr_text(png_path: Path | str, *, languages: str = LANGUAGES, cache_dir: Path | None = None) -> str:
    """The OCR text of the image at ``png_path``; tesseract runs only when this exact image was
    never read (``cache_dir``: where the words are stored, ``<cache>/ocr_words`` by default)."""
    return words_text(image_words(png_path, lang=languages, cache_dir=cache_dir))


def _ocr_one(args: tuple[str, str]) -> tuple[str, str | None, str | None]:
    path, languages = args
    try:
        return path, ocr_text(path, languages=languages), None
    except InputError as exc:
        return path, None, str(exc)
    except Exception as exc:  # one image tesseract cannot read never loses the others
        return path, None, str(InputError(f"OCR failed: {type(exc).__name__}: {exc}", file=path))


def ocr_texts(png_paths: list[Path], *, languages: str = LANGUAGES, workers: int | None = None,
              progress: bool = True) -> dict[Path, str | InputError]:
    """:func:`ocr_text` of many images: read in parallel (one process per core) when some are not
    cached yet, with a progress bar on stderr; an unreadable image maps to its :class:`InputError`."""
    import os
    import sys

    tesseract_version()
    paths = [Path(p) for p in png_paths]
    out: dict[Path, str | InputError] = {}
    todo = []
    for p in paths:
        try:
            data = p.read_bytes()
        except OSError as exc:
            out[p] = InputError(f"cannot read image: {exc.strerror or exc}", file=str(p))
            continue
        words = stored_words(data, languages, words_cache_dir())
        if words is not None:   # (the image is not read and hashed again to read them)
            out[p] = words_text(words)
            continue
        todo.append(p)
    if todo:
        from concurrent.futures import ProcessPoolExecutor

        from tqdm import tqdm

        n = max(1, min(workers or os.cpu_count() or 1, len(todo)))
        jobs = [(str(p), languages) for p in todo]
        with tqdm(total=len(todo), desc="OCR of diagram images (cached after)", unit="image", file=sys.stderr,
                  disable=not progress) as bar:
            if n == 1:
                results = (_ocr_one(j) for j in jobs)
                for path, text, err in results:
                    out[Path(path)] = text if err is None else InputError(err)
                    bar.update(1)
            else:
                with ProcessPoolExecutor(n) as pool:
                    for path, text, err in pool.map(_ocr_one, jobs):
                        out[Path(path)] = text if err is None else InputError(err)
                        bar.update(1)
    return out


def dataset_texts(diagrams: dict) -> tuple[dict[str, str], list[str]]:
    """OCR text of every diagram (id -> text) and the problems of those that could not be read
    (they are left out of the mapping: a finder ranks them last)."""
    read = ocr_texts([d.png_path for _, d in sorted(diagrams.items())])
    texts, problems = {}, []
    for did, d in sorted(diagrams.items()):
        text = read[d.png_path]
        if isinstance(text, InputError):
            problems.append(str(text))
        else:
            texts[did] = text
    return texts, problems
