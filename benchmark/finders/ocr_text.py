"""Whole-image OCR text of a rendered diagram (tesseract, English + Russian), cached by image hash.

Box outlines and arrows make tesseract skip the labels inside boxes, so the image is binarised
(Otsu) and long horizontal and vertical strokes are erased before recognition. The text is cached
under ``<cache>/ocr_text/`` keyed by the SHA-256 of the PNG bytes, the languages, the tesseract
version and :data:`PREPROCESS_VERSION`; the same PNG is read once.
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from benchmark.errors import InputError, StageUnavailable
from benchmark.finders.cache import cache_root, sha256_bytes, write_atomic

#: tesseract languages used for every diagram (the dataset is English and Russian)
LANGUAGES = "eng+rus"
#: bump when :func:`prepare_image` changes, so cached text is recomputed
PREPROCESS_VERSION = "lines40-otsu-1"
#: strokes at least this long (pixels) are box edges or arrows, not letters
LINE_LENGTH = 40


@lru_cache(maxsize=1)
def tesseract_version() -> str:
    """Installed tesseract version; :class:`StageUnavailable` when tesseract or pytesseract is missing."""
    try:
        import pytesseract
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise StageUnavailable("OCR needs pytesseract (pip install 'diagqa[image]')") from exc
    try:
        return str(pytesseract.get_tesseract_version())
    except (pytesseract.TesseractNotFoundError, OSError) as exc:
        raise StageUnavailable("OCR needs the tesseract binary (apt-get install tesseract-ocr tesseract-ocr-rus)") from exc


def prepare_image(gray):
    """Black text on white with long straight strokes (box edges, arrows) removed.

    ``gray`` is a 2-D uint8 array; returns one of the same shape.
    """
    import cv2

    ink = cv2.threshold(gray, 0, 255, cv2.THRESH_BINARY_INV | cv2.THRESH_OTSU)[1]
    horizontal = cv2.morphologyEx(ink, cv2.MORPH_OPEN, cv2.getStructuringElement(cv2.MORPH_RECT, (LINE_LENGTH, 1)))
    vertical = cv2.morphologyEx(ink, cv2.MORPH_OPEN, cv2.getStructuringElement(cv2.MORPH_RECT, (1, LINE_LENGTH)))
    return 255 - (ink & ~(horizontal | vertical))


def read_image_text(png: bytes, *, languages: str = LANGUAGES, source: str = "<image>") -> str:
    """OCR ``png`` (encoded image bytes) without any cache; ``source`` names it in errors."""
    import pytesseract

    from benchmark.extract.image import decode_grey

    tesseract_version()
    gray = decode_grey(png, source)  # InputError for empty, damaged or oversized images
    text = pytesseract.image_to_string(prepare_image(gray), lang=languages, config="--psm 3")
    return "\n".join(line.strip() for line in text.splitlines() if line.strip())


def _cache_entry(data: bytes, languages: str, cache_dir: Path | None = None) -> Path:
    """Where the text of the image ``data`` is cached (image, languages, tesseract and preprocessing)."""
    key = sha256_bytes(f"{sha256_bytes(data)}|{languages}|{tesseract_version()}|{PREPROCESS_VERSION}".encode())
    return (cache_dir or cache_root() / "ocr_text") / f"{key}.txt"


def ocr_text(png_path: Path | str, *, languages: str = LANGUAGES, cache_dir: Path | None = None) -> str:
    """The OCR text of the image at ``png_path``, from the cache when this exact image was read before."""
    path = Path(png_path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read image: {exc.strerror or exc}", file=str(path)) from exc
    entry = _cache_entry(data, languages, cache_dir)
    if entry.exists():
        return entry.read_text(encoding="utf-8")
    text = read_image_text(data, languages=languages, source=str(path))
    write_atomic(entry, text.encode("utf-8"))
    return text


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
        entry = _cache_entry(data, languages)
        if entry.exists():
            out[p] = entry.read_text(encoding="utf-8")
        else:
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
