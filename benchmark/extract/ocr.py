"""Words and their boxes from tesseract, read from a text-only copy of the render.

Shape outlines, connectors and fills are blanked out first (they are blue or light), so tesseract
sees dark glyphs on white only; one ``image_to_data`` call in sparse-text mode reads the whole
image. Each word keeps how dark its ink is: d2 writes node labels in near-black and edge labels
in grey, which later tells the two apart.
"""
from __future__ import annotations

import shutil
from dataclasses import dataclass

import numpy as np

from benchmark.errors import StageUnavailable
from benchmark.extract.raster import Raster

#: default tesseract languages: the dataset has English and Russian diagrams
LANG = "eng+rus"
#: luminance (0-255) above which a word's ink counts as grey (an edge label)
GREY_INK_MIN = 60
#: words below this tesseract confidence are dropped unless they hold a letter or digit
MIN_CONF = 20

_CYR_TO_LAT = str.maketrans("аеорсухкмнтвАЕОРСУХКМНТВ", "aeopcyxkmhtbAEOPCYXKMHTB")
_LAT_TO_CYR = str.maketrans("aeopcyxkAEOPCYXKMHTB", "аеорсухкАЕОРСУХКМНТВ")


@dataclass(frozen=True)
class Word:
    """One word: its text, box (x, y, w, h in image pixels), confidence and ink darkness."""

    text: str
    x: int
    y: int
    w: int
    h: int
    conf: float
    ink: float

    @property
    def grey(self) -> bool:
        return self.ink > GREY_INK_MIN

    @property
    def cx(self) -> float:
        return self.x + self.w / 2

    @property
    def cy(self) -> float:
        return self.y + self.h / 2


def tesseract_available() -> bool:
    """Is the tesseract binary on PATH and pytesseract importable?"""
    try:
        import pytesseract  # noqa: F401
    except ImportError:
        return False
    return shutil.which("tesseract") is not None


def require_tesseract() -> None:
    if not tesseract_available():
        raise StageUnavailable("tesseract is not installed (apt-get install tesseract-ocr tesseract-ocr-rus; "
                               "pip install pytesseract)")


def fix_script(word: str) -> str:
    """Make a word that mixes Latin and Cyrillic look-alike letters use one script (the majority).

    >>> fix_script("Stаrt")   # the 'а' is Cyrillic
    'Start'
    >>> fix_script("Зaкaз")   # Latin 'a' inside a Russian word
    'Заказ'
    >>> fix_script("API")
    'API'
    """
    lat = sum(1 for c in word if c.isalpha() and c.isascii())
    cyr = sum(1 for c in word if "\u0400" <= c <= "\u04ff")
    if lat and cyr:
        return word.translate(_CYR_TO_LAT) if lat >= cyr else word.translate(_LAT_TO_CYR)
    return word


def text_image(r: Raster) -> tuple[np.ndarray, int, int]:
    """Greyscale copy holding only text ink, cropped to the ink; returns (image, x0, y0)."""
    ys, xs = np.nonzero(r.ink)
    if len(ys) == 0:
        return np.full((8, 8), 255, np.uint8), 0, 0
    pad = 10
    y0, y1 = max(0, ys.min() - pad), min(r.shape[0], ys.max() + pad + 1)
    x0, x1 = max(0, xs.min() - pad), min(r.shape[1], xs.max() + pad + 1)
    crop_ink = r.ink[y0:y1, x0:x1]
    img = np.where(crop_ink, r.lum[y0:y1, x0:x1], 255).astype(np.uint8)
    return img, int(x0), int(y0)


def read_words(r: Raster, lang: str = LANG) -> list[Word]:
    """Every word tesseract finds, in reading order (top to bottom, left to right)."""
    require_tesseract()
    import pytesseract

    img, x0, y0 = text_image(r)
    data = pytesseract.image_to_data(img, lang=lang, config="--psm 11",
                                     output_type=pytesseract.Output.DICT)
    words = []
    for text, left, top, w, h, conf in zip(data["text"], data["left"], data["top"], data["width"],
                                           data["height"], data["conf"]):
        text = (text or "").strip()
        conf = float(conf)
        if not text or conf < 0:
            continue
        if conf < MIN_CONF and not any(c.isalnum() for c in text):
            continue
        if not any(c.isalnum() for c in text) and len(text) == 1 and text not in "?!&+-/":
            continue
        x, y = left + x0, top + y0
        box_ink = r.ink[y:y + h, x:x + w]
        vals = r.lum[y:y + h, x:x + w][box_ink]
        ink = float(np.percentile(vals, 20)) if vals.size else 255.0
        words.append(Word(fix_script(text), int(x), int(y), int(w), int(h), conf, ink))
    words.sort(key=lambda w: (w.y, w.x))
    return words
