"""Words and their boxes from tesseract, read from a text-only copy of the render.

Shape outlines, connectors and fills are blanked out first (they are blue or light), so tesseract
sees dark glyphs on white only; one ``image_to_data`` call in sparse-text mode reads the whole
image. Each word keeps how dark its ink is: d2 writes node labels in near-black and edge labels
in grey, which later tells the two apart.

:func:`image_words` is the one OCR pass of an image that everything else reads: the extractor
(:mod:`.cache`) and the OCR finders (:mod:`benchmark.finders.ocr_text`, whose text is these words
put in lines). Its words are stored under ``<cache>/ocr_words/`` keyed by the SHA-256 of the image
bytes, the languages, the tesseract version, :data:`WORDS_VERSION` and the extractor version, so
an image is read by tesseract once, whichever stage asks first.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
from dataclasses import astuple, dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from benchmark.errors import InputError, StageUnavailable
from benchmark.extract.raster import Raster, make_raster

#: default tesseract languages: the dataset has English and Russian diagrams
LANG = "eng+rus"
#: luminance (0-255) above which a word's ink counts as grey (an edge label)
GREY_INK_MIN = 60
#: words below this tesseract confidence are dropped unless they hold a letter or digit
MIN_CONF = 20
#: one-character words without a letter or digit that are kept (others are specks: arrowheads,
#: corners); comparisons and operators stand alone between spaces in labels like ``attempts < 3?``
LONE_SYMBOLS = "?!&+-/<>=≤≥≠%#*:~|→←"
#: bump when :func:`read_words` may read other words from the same image (invalidates stored words)
WORDS_VERSION = "4"

#: letters tesseract reads for a digit standing alone, which no word of either language is
_LONE_DIGITS = {"l": "1", "з": "3"}
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

    def scaled(self, f: float) -> "Word":
        """The same word in an image scaled by ``f``."""
        if f == 1:
            return self
        return Word(self.text, int(round(self.x * f)), int(round(self.y * f)), max(1, int(round(self.w * f))),
                    max(1, int(round(self.h * f))), self.conf, self.ink)

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


def fix_script(word: str) -> str:
    """Make a word that mixes Latin and Cyrillic look-alike letters use one script (the majority).

    >>> fix_script("Stаrt")   # the 'а' is Cyrillic
    'Start'
    >>> fix_script("Зaкaз")   # Latin 'a' inside a Russian word
    'Заказ'
    >>> fix_script("API")
    'API'
    >>> fix_script("Docker-oбраз")   # a Latin "o" in the Russian part
    'Docker-образ'

    A lone ``l`` is a one (``sev 1``), a lone ``з`` a three (``за 3 дня``): no word of either
    language is that letter alone.

    >>> fix_script("l"), fix_script("з")
    ('1', '3')
    """
    if word in _LONE_DIGITS:
        return _LONE_DIGITS[word]
    if "-" in word:
        return "-".join(fix_script(p) for p in word.split("-"))
    lat = sum(1 for c in word if c.isalpha() and c.isascii())
    cyr = sum(1 for c in word if "\u0400" <= c <= "\u04ff")
    if lat and cyr:
        return word.translate(_CYR_TO_LAT) if lat >= cyr else word.translate(_LAT_TO_CYR)
    return word


@dataclass(frozen=True)
class Slot:
    """Where one text patch of the image sits in the mosaic handed to tesseract."""

    x: int          # patch origin in the image
    y: int
    w: int
    h: int
    mx: int         # patch origin in the mosaic
    my: int
    piece: int      # index of the piece of text ink it holds (:func:`text_pieces`)


def text_patches(r: Raster) -> tuple[list[tuple[int, int, int, int, int]], Any]:
    """Boxes (x, y, w, h, cluster label) around the clusters of text ink, padded, and the
    clusters' labels, read by box (:func:`.components.component_labels`; a patch copies only its
    own cluster's ink, so padded boxes that overlap never show a word twice)."""
    import cv2

    from benchmark.extract.components import component_labels

    ink = r.ink.view(np.uint8)
    lw = r.line_width
    kernel = cv2.getStructuringElement(cv2.MORPH_RECT, (6 * lw + 1, 2 * lw + 1))
    grown = cv2.dilate(ink, kernel)
    n, stats, labels = component_labels(grown)
    pad = 2 * lw
    h_img, w_img = r.shape
    boxes = []
    for i in range(1, n):
        x, y, w, h, a = (int(v) for v in stats[i])
        if w < 3 or h < 3:
            continue
        x0, y0 = max(0, x - pad), max(0, y - pad)
        boxes.append((x0, y0, min(w_img, x + w + pad) - x0, min(h_img, y + h + pad) - y0, i))
    return boxes, labels


def stroke_fringe(rgb: np.ndarray, stroke: np.ndarray) -> np.ndarray:
    """Pixels beside a stroke still tinted by it (its anti-aliased edge: too little blue for the
    stroke mask, dark enough for ink)."""
    import cv2

    r, g, b = (rgb[..., i].astype(np.int16) for i in range(3))
    near = cv2.dilate(stroke.astype(np.uint8), np.ones((3, 3), np.uint8)) > 0
    return near & ~stroke & (b - (r + g) // 2 > 8)


def strokes_through_glyphs(ink: np.ndarray, stroke: np.ndarray, lw: int) -> np.ndarray:
    """The stroke pixels of a connector drawn over text that lie inside a glyph: text ink on both
    sides of the stroke, right beside its edges, looking across it (along the stroke mask's
    gradient). Blanked, they would cut the letters a connector crosses in two
    (grid layouts draw connectors straight over the shapes in their way, labels and all); the
    blank inside a letter (the counter of an ``m`` a line runs through) stays blank.

    >>> ink = np.zeros((12, 16), bool); ink[3:9, 3:13] = True
    >>> stroke = np.zeros_like(ink); stroke[:, 7:9] = True; ink[:, 7:9] = False
    >>> under = strokes_through_glyphs(ink, stroke, 2)
    >>> bool(under[3:9, 7:9].all()), bool(under[:2].any() or under[10:].any())
    (True, False)
    """
    import cv2

    from benchmark.extract.components import nonzero

    out = np.zeros_like(ink)
    if not (ink.any() and stroke.any()):
        return out
    s = cv2.GaussianBlur(stroke.astype(np.float32), (0, 0), max(1.0, lw / 2))
    gx = cv2.Sobel(s, cv2.CV_32F, 1, 0, ksize=3)
    gy = cv2.Sobel(s, cv2.CV_32F, 0, 1, ksize=3)
    ys, xs = nonzero(stroke)
    nx, ny = gx[ys, xs], gy[ys, xs]
    norm = np.hypot(nx, ny)
    ok = norm > 1e-6
    ys, xs, nx, ny = ys[ok], xs[ok], nx[ok] / norm[ok], ny[ok] / norm[ok]
    h, w = ink.shape
    sides = []
    for sign in (1, -1):
        out_at = np.zeros(len(ys), np.int64)        # first step off the stroke, 0 while on it
        for t in range(1, 2 * max(1, lw) + 2):
            px = np.clip(np.round(xs + sign * t * nx).astype(int), 0, w - 1)
            py = np.clip(np.round(ys + sign * t * ny).astype(int), 0, h - 1)
            out_at[(out_at == 0) & ~stroke[py, px]] = t
        hit = np.zeros(len(ys), bool)
        for extra in (0, 1):                        # right beside the stroke's edge
            t = out_at + extra
            px = np.clip(np.round(xs + sign * t * nx).astype(int), 0, w - 1)
            py = np.clip(np.round(ys + sign * t * ny).astype(int), 0, h - 1)
            hit |= (out_at > 0) & ink[py, px]
        sides.append(hit)
    both = sides[0] & sides[1]
    out[ys[both], xs[both]] = True
    return out


#: a glyph fewer than this share of whose pixels are at most :data:`GREY_INK_MIN` light is grey text
#: (d2's edge labels), one with more dark text (its node labels); a dark glyph holds grey text too
#: (a grey letter touching a dark one) when this share of it is grey ink off its dark core
DARK_GLYPH_SHARE = 0.2
#: how far anti-aliasing greys a dark glyph's edge, in pixels
DARK_RIM = 2
#: a patch with less grey ink off its dark text's core than this share of its ink holds dark text only
OFF_CORE_MIN = 0.05


def split_tones(ink: np.ndarray, lum: np.ndarray) -> list[np.ndarray]:
    """The ink of one text patch as its dark text and its grey text when it holds both, else as it is.

    A connected piece of ink fewer than :data:`DARK_GLYPH_SHARE` of whose pixels are dark is grey;
    in a dark piece, the grey ink off its dark core (more than :data:`DARK_RIM` pixels from it) is
    grey when there is that share of it (a grey letter touching a dark one).

    >>> lum = np.full((12, 40), 255, np.uint8); lum[2:8, 2:6] = 10; lum[2:8, 8:12] = 110
    >>> lum[2:8, 16:20] = 10; lum[2:8, 20:26] = 110   # a grey letter touching a dark one
    >>> lum[2, 8] = 30                                  # a dark speck on a grey glyph
    >>> dark, grey = split_tones(lum < 200, lum)
    >>> bool(grey[2:8, 8:12].all()), bool(grey[:, :7].any()), bool(grey[2:8, 16:22].any()), bool(grey[2:8, 23:26].all())
    (True, False, False, True)
    >>> len(split_tones(lum[:, :7] < 200, lum[:, :7])), len(split_tones(lum[:, 7:14] < 200, lum[:, 7:14]))
    (1, 1)
    """
    import cv2

    dark_px = ink & (lum <= GREY_INK_MIN)
    if not dark_px.any():
        return [ink]
    size = 2 * DARK_RIM + 1
    off_core = ink & (cv2.dilate(dark_px.view(np.uint8), np.ones((size, size), np.uint8)) == 0)
    if np.count_nonzero(off_core) < OFF_CORE_MIN * np.count_nonzero(ink):
        return [ink]
    n, lab = cv2.connectedComponents(ink.view(np.uint8), connectivity=8)
    count = np.bincount(lab.ravel(), minlength=n)
    grey_piece = np.bincount(lab.ravel(), weights=dark_px.ravel(), minlength=n) < DARK_GLYPH_SHARE * count
    mixed = ~grey_piece & (np.bincount(lab.ravel(), weights=off_core.ravel(), minlength=n) >= DARK_GLYPH_SHARE * count)
    grey_piece[0] = mixed[0] = False
    grey = grey_piece[lab] | (mixed[lab] & off_core)
    dark = ink & ~grey
    if not (grey.any() and dark.any()):
        return [ink]
    return [dark, grey]


def text_pieces(r: Raster, tones: bool = True) -> list[tuple[int, int, int, int, np.ndarray]]:
    """The text patches (:func:`text_patches`) as boxes (x, y, w, h) with the ink each shows.

    A patch holding dark and grey text (:func:`split_tones`: d2 writes node labels in near-black
    and edge labels in a lighter grey italic) becomes two, each boxed around its own ink: an edge
    label set beside a node's name is read on its own, not as one line with it (tesseract read
    ``Test Rack``'s ``syslog`` as ``5559``). Not with ``tones`` False: the structure reader's text
    (:mod:`.generic`) has no such two tones, and light italic letters on d2's dark theme, inverted,
    are dark in part, which split their words.
    """
    found, labels = text_patches(r)
    pad = 2 * r.line_width
    out = []
    for bx, by, bw, bh, lab in found:
        ink = r.ink[by:by + bh, bx:bx + bw] & (labels.box(bx, by, bx + bw, by + bh) == lab)
        parts = split_tones(ink, r.lum[by:by + bh, bx:bx + bw]) if tones else [ink]
        if len(parts) == 1:
            out.append((bx, by, bw, bh, ink))
            continue
        for part in parts:
            ys, xs = np.nonzero(part)
            x0, y0 = max(0, int(xs.min()) - pad), max(0, int(ys.min()) - pad)
            x1, y1 = min(bw, int(xs.max()) + 1 + pad), min(bh, int(ys.max()) + 1 + pad)
            out.append((bx + x0, by + y0, x1 - x0, y1 - y0, part[y0:y1, x0:x1]))
    return out


def text_image(r: Raster, tones: bool = True) -> tuple[np.ndarray, list[Slot]]:
    """A compact greyscale mosaic of the text patches (dark ink on white) and where each came from.

    Diagrams are mostly empty space; tesseract's time grows with the area it is given, so the
    patches (:func:`text_pieces`) are packed into rows of a small canvas, with white gaps wider
    than a word space.
    """
    pieces = sorted(text_pieces(r, tones), key=lambda b: (-b[3], b[1], b[0]))
    if not pieces:
        return np.full((8, 8), 255, np.uint8), []
    gap = 12 * r.line_width
    width = max(max(b[2] for b in pieces) + 2 * gap, 1600)
    slots: list[Slot] = []
    x = y = gap
    row_h = 0
    for i, (bx, by, bw, bh, _) in enumerate(pieces):
        if x + bw + gap > width:
            x, y, row_h = gap, y + row_h + gap, 0
        slots.append(Slot(bx, by, bw, bh, x, y, i))
        x += bw + gap
        row_h = max(row_h, bh)
    canvas = np.full((y + row_h + gap, width), 255, np.uint8)
    for s, (_, _, _, _, patch_ink) in zip(slots, pieces):
        lum = r.lum[s.y:s.y + s.h, s.x:s.x + s.w]
        stroke = r.stroke[s.y:s.y + s.h, s.x:s.x + s.w]
        patch = np.where(patch_ink, lum, 255).astype(np.uint8)
        if stroke.any() and patch_ink.any():
            glyphs = patch_ink & ~stroke_fringe(r.rgb[s.y:s.y + s.h, s.x:s.x + s.w], stroke)
            under = strokes_through_glyphs(glyphs, stroke, r.line_width)
            if under.any():
                patch[under] = int(np.median(lum[glyphs])) if glyphs.any() else 0
        canvas[s.my:s.my + s.h, s.mx:s.mx + s.w] = patch
    return canvas, slots


def _slot_of(slots: list[Slot], x: float, y: float) -> Slot | None:
    for s in slots:
        if s.mx <= x < s.mx + s.w and s.my <= y < s.my + s.h:
            return s
    return None


#: tesseract refuses an image with a side longer than this many pixels
TESSERACT_MAX_SIDE = 32767


def mosaic_bands(slots: list[Slot], height: int) -> list[tuple[int, int]]:
    """The mosaic's rows of patches in bands (first row, end row) each at most
    :data:`TESSERACT_MAX_SIDE` tall, cut in the gaps between rows (one tesseract call each): a
    drawing read in d2's colours whose connectors are dark, not blue (a Mermaid render), can make
    patches as large as the drawing.

    >>> slots = [Slot(0, 0, 10, 10, 5, y, i) for i, y in enumerate((5, 20000, 40000))]
    >>> mosaic_bands(slots, 40015), mosaic_bands(slots[:2], 20015)
    ([(0, 30005), (30005, 40015)], [(0, 20015)])
    """
    rows: dict[int, int] = {}
    for s in slots:
        rows[s.my] = max(rows.get(s.my, 0), s.my + s.h)
    bands, start, end = [], 0, 0
    for top in sorted(rows):
        cut = (end + top) // 2 if end else 0
        if top > start and rows[top] - start > TESSERACT_MAX_SIDE:
            bands.append((start, cut))
            start = cut
        end = rows[top]
    bands.append((start, height))
    # a row taller than tesseract takes is read in its first part
    return [(a, min(b, a + TESSERACT_MAX_SIDE)) for a, b in bands]


def box_ink(r: Raster, x: int, y: int, w: int, h: int) -> float:
    """How dark a word boxed (x, y, w, h) in ``r`` is: the 20th percentile of its inked pixels'
    luminance (255 when the box holds no ink)."""
    x, y = max(0, x), max(0, y)
    vals = r.lum[y:y + h, x:x + w][r.ink[y:y + h, x:x + w]]
    return float(np.percentile(vals, 20)) if vals.size else 255.0


def read_words(image: Raster | np.ndarray, lang: str = LANG, tones: bool = True) -> list[Word]:
    """Every word tesseract finds in an RGB image (or raster), in reading order. ``tones``: patches
    holding dark and grey text are read as two (:func:`text_pieces`; d2's light renders)."""
    require_tesseract()
    import pytesseract

    r = image if isinstance(image, Raster) else make_raster(image)

    img, slots = text_image(r, tones)
    if not slots:
        return []
    found: dict[str, list] = {k: [] for k in ("text", "left", "top", "width", "height", "conf")}
    for a, b in mosaic_bands(slots, img.shape[0]):
        data = pytesseract.image_to_data(img[a:b, :TESSERACT_MAX_SIDE], lang=lang, config="--psm 11",
                                         output_type=pytesseract.Output.DICT)
        for k, v in found.items():
            v.extend(data[k] if k != "top" else [t + a for t in data[k]])
    words = []
    for text, left, top, w, h, conf in zip(found["text"], found["left"], found["top"], found["width"],
                                           found["height"], found["conf"]):
        text = (text or "").strip()
        conf = float(conf)
        if not text or conf < 0:
            continue
        if conf < MIN_CONF and not any(c.isalnum() for c in text):
            continue
        if not any(c.isalnum() for c in text) and len(text) == 1 and text not in LONE_SYMBOLS:
            continue
        slot = _slot_of(slots, left + w / 2, top + h / 2)
        if slot is None:
            continue
        x, y = left - slot.mx + slot.x, top - slot.my + slot.y
        words.append(Word(fix_script(text), int(x), int(y), int(w), int(h), conf, box_ink(r, x, y, w, h)))
    words = trim_spanning_boxes(words)
    words.sort(key=lambda w: (w.y, w.x))
    return words


#: a word's box spans the words after it on its line when theirs start this many of its heights
#: inside it and the last ends within this many of its heights of its end (:func:`trim_spanning_boxes`)
SPAN_INSIDE, SPAN_END = 0.3, 0.5
#: ... their tops and bottoms within these many of its heights of its own
SPAN_TOP, SPAN_BOTTOM = 0.25, 0.5
#: the space left between a trimmed word and the next, in its heights
SPAN_SPACE = 0.25


def trim_spanning_boxes(words: list[Word]) -> list[Word]:
    """``words`` with the box of a line's first word that tesseract drew to the line's end cut back
    before the next word: it sometimes boxes the first word of a grey edge label over the whole label
    (``checkout`` over ``checkout API``, ``задание`` over ``задание на сборку``) while it reads the
    other words with their own boxes, and the words then overlap too much to be read as one line.
    A box spans the words after it when they are grey too, on its baseline, start well inside it, and
    the last of them ends where it ends. (Dark text is left as read: trimming the ``Floor`` that
    tesseract boxed over the ``3`` of a container's ``Floor 3 Finance`` lost the container's match on
    d2's elk drawing of ``net_office``.)

    >>> ws = [Word("checkout", 100, 10, 230, 31, 96, 109), Word("API", 276, 6, 54, 45, 95, 109)]
    >>> [(w.text, w.x, w.w) for w in trim_spanning_boxes(ws)]
    [('checkout', 100, 168), ('API', 276, 54)]
    >>> dark = [Word("Floor", 100, 10, 154, 41, 96, 16), Word("3", 235, 6, 23, 54, 95, 16)]
    >>> trim_spanning_boxes(dark) == dark
    True
    """
    out = list(words)
    for i, a in enumerate(words):
        if not a.grey:
            continue
        end = a.x + a.w
        inside = [b for b in words if b is not a and b.grey
                  and b.x >= a.x + SPAN_INSIDE * a.h and b.x + b.w <= end + SPAN_END * a.h
                  and abs(b.y - a.y) <= SPAN_TOP * a.h
                  and abs(b.y + b.h - a.y - a.h) <= SPAN_BOTTOM * a.h]
        if not inside or max(b.x + b.w for b in inside) < end - SPAN_END * a.h:
            continue
        w = min(b.x for b in inside) - a.x - int(round(SPAN_SPACE * a.h))
        if w > 0:
            out[i] = Word(a.text, a.x, a.y, w, a.h, a.conf, a.ink)
    return out


#: the languages of :data:`LANG` by the script they write
SCRIPT_LANGS = {"latin": "eng", "cyrillic": "rus"}
#: share of an image's letters one script must hold to be the image's own script
DOMINANT_SHARE = 0.75
#: a label read again in the image's own script keeps the new reading when tesseract is at least
#: this sure of it (and not much less sure than of the first reading)
REREAD_MIN_CONF = 80


def letter_scripts(text: str) -> tuple[int, int]:
    """Latin and Cyrillic letters in ``text``.

    >>> letter_scripts("no, по 4a")
    (3, 2)
    """
    lat = sum(1 for c in text if c.isalpha() and c.isascii())
    cyr = sum(1 for c in text if "\u0400" <= c <= "\u04ff")
    return lat, cyr


def dominant_script(texts: list[str]) -> str | None:
    """``latin`` or ``cyrillic`` when that script holds at least :data:`DOMINANT_SHARE` of the
    letters, else None.

    >>> dominant_script(["Payment", "cleared?", "по"]), dominant_script(["Оплата", "KT"]), dominant_script(["ab", "вг"])
    ('latin', 'cyrillic', None)
    """
    lat = cyr = 0
    for t in texts:
        a, b = letter_scripts(t)
        lat, cyr = lat + a, cyr + b
    if lat + cyr == 0:
        return None
    if lat >= DOMINANT_SHARE * (lat + cyr):
        return "latin"
    if cyr >= DOMINANT_SHARE * (lat + cyr):
        return "cyrillic"
    return None


def reread_in_script(rgb: np.ndarray, boxes: list[tuple[int, int, int, int]], script: str,
                     lang: str = LANG) -> list[list[tuple[str, float]]]:
    """Each box of ``rgb`` (x, y, w, h: one line of text) read again by tesseract in the language
    of ``script`` alone: its words and their confidences (none when ``lang`` lacks that language).

    With both languages loaded, tesseract sometimes reads a short word in the wrong one (italic
    ``no`` as Cyrillic ``по``, ``да`` as ``4a``); read in the image's own language it reads it right.
    """
    one = SCRIPT_LANGS[script]
    if one not in lang.split("+"):
        return [[] for _ in boxes]
    return read_lines(rgb, boxes, one)


def read_lines(rgb: np.ndarray, boxes: list[tuple[int, int, int, int]], lang: str = LANG) -> list[list[tuple[str, float]]]:
    """Each box of ``rgb`` (x, y, w, h: one line of text) read by tesseract in ``lang``: its words, in
    order, and their confidences. The lines go to tesseract in one call, stacked under each other."""
    return [[(w.text, w.conf) for w in sorted(words, key=lambda w: w.x)] for words in read_crops(rgb, boxes, lang)]


def read_crops(rgb: np.ndarray, boxes: list[tuple[int, int, int, int]], lang: str = LANG,
               psm: int = 6, pad: int | None = None) -> list[list[Word]]:
    """Each box of ``rgb`` (x, y, w, h) read by tesseract in ``lang`` with page segmentation mode
    ``psm``: its words, boxed in ``rgb``'s pixels (texts as tesseract wrote them). The boxes, each
    kept to its ink and padded by ``pad`` pixels (by default half its height), go to tesseract in
    one call, stacked under each other well apart; a word belongs to the box whose rows its middle
    lies in."""
    import pytesseract

    if not boxes:
        return []
    h_img, w_img = rgb.shape[:2]
    pieces, origins = [], []
    for x, y, w, h in boxes:
        p = max(4, h // 2) if pad is None else pad
        x0, y0 = max(0, x - p), max(0, y - p)
        crop = rgb[y0:min(h_img, y + h + p), x0:min(w_img, x + w + p)]
        r = make_raster(crop, measure=False)
        pieces.append((np.where(r.ink, r.lum, 255).astype(np.uint8), r))
        origins.append((x0, y0))
    gap = 20 + max(p.shape[0] for p, _ in pieces)
    width = max(p.shape[1] for p, _ in pieces) + 40
    canvas = np.full((gap * len(pieces) + gap, width), 255, np.uint8)
    tops = []
    for i, (p, _) in enumerate(pieces):
        top = gap // 2 + i * gap
        canvas[top:top + p.shape[0], 20:20 + p.shape[1]] = p
        tops.append((top, top + p.shape[0]))
    data = pytesseract.image_to_data(canvas, lang=lang, config=f"--psm {psm}", output_type=pytesseract.Output.DICT)
    out: list[list[Word]] = [[] for _ in boxes]
    for t, c, left, top, ww, hh in zip(data["text"], data["conf"], data["left"], data["top"], data["width"],
                                       data["height"]):
        if not (t or "").strip() or float(c) < 0:
            continue
        cy = top + hh / 2
        for i, (a, b) in enumerate(tops):
            if a - 4 <= cy <= b + 4:
                x, y = int(left) - 20, int(top) - a   # in the padded crop
                x0, y0 = origins[i]
                out[i].append(Word(t.strip(), x + x0, y + y0, int(ww), int(hh), float(c),
                                   box_ink(pieces[i][1], x, y, ww, hh)))
                break
    return out


def words_cache_dir() -> Path:
    """``$DIAGQA_CACHE/ocr_words`` when set, else ``.cache/ocr_words`` at the project root."""
    from benchmark.dataset import DEFAULT_ROOT

    base = os.environ.get("DIAGQA_CACHE")
    return (Path(base) if base else DEFAULT_ROOT / ".cache") / "ocr_words"


def words_entry(data: bytes, lang: str = LANG, cache_dir: Path | None = None) -> Path:
    """Where the words of the image bytes ``data`` are stored (image, languages, tesseract, reader)."""
    from benchmark.extract.pipeline import EXTRACTOR_VERSION

    image = hashlib.sha256(data).hexdigest()
    key = hashlib.sha256(f"{image}|{lang}|{tesseract_version()}|{WORDS_VERSION}|{EXTRACTOR_VERSION}".encode())
    return Path(cache_dir or words_cache_dir()) / f"{key.hexdigest()}.json"


def stored_words(data: bytes, lang: str = LANG, cache_dir: Path | None = None) -> list[Word] | None:
    """The words stored for the image bytes ``data`` (at :func:`words_entry`), or None when there are none
    (or the entry cannot be read)."""
    entry = words_entry(data, lang, cache_dir)
    return _load_words(entry) if entry.exists() else None


def _load_words(entry: Path) -> list[Word] | None:
    try:
        rows = json.loads(entry.read_text(encoding="utf-8"))
        return [Word(str(t), int(x), int(y), int(w), int(h), float(c), float(i)) for t, x, y, w, h, c, i in rows]
    except (OSError, ValueError, TypeError):
        return None  # missing or damaged: read the image again


def _store_words(entry: Path, words: list[Word]) -> None:
    entry.parent.mkdir(parents=True, exist_ok=True)
    tmp = entry.with_name(f".{entry.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps([astuple(w) for w in words], ensure_ascii=False), encoding="utf-8")
    os.replace(tmp, entry)


def image_words(path: Path | str, lang: str = LANG, cache_dir: Path | None = None,
                rgb: np.ndarray | None = None) -> list[Word]:
    """:func:`read_words` of the PNG at ``path``, stored by the image's content hash: tesseract reads
    an image once, for the extractor and the OCR finders alike. ``rgb`` is the already decoded image
    (saves decoding it again on a miss); an unreadable image raises :class:`InputError` naming it.
    """
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read image: {exc.strerror or exc}", file=str(path)) from exc
    entry = words_entry(data, lang, cache_dir)
    words = _load_words(entry) if entry.exists() else None
    if words is None:
        if rgb is None:
            from benchmark.extract.image import decode_rgb

            rgb = decode_rgb(data, str(path))
        words = read_words(rgb, lang=lang)
        _store_words(entry, words)
    return words
