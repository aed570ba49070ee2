"""Pixel classes of a d2 render: stroke blue, dark and grey text, flat fills.

d2's default theme draws every shape outline and connector in one blue (``#0D32B2``), node
labels in near-black (``#0A0F25``), edge labels in grey (``#676C7E``) and shape interiors in a
small set of flat light colours. Those facts are all this module assumes.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

#: a pixel is stroke when its blue channel exceeds the mean of red and green by this much
BLUENESS_MIN = 40
#: lightest luminance still counted as text ink
TEXT_LUM_MAX = 200


@dataclass(frozen=True)
class Raster:
    """One image and the masks every later step uses."""

    rgb: np.ndarray          # H x W x 3 uint8
    lum: np.ndarray          # H x W uint8 luminance
    stroke: np.ndarray       # H x W bool: outline / connector blue
    ink: np.ndarray          # H x W bool: text (dark or grey, not blue)
    line_width: int          # stroke width in pixels (odd or even, >= 1)

    @property
    def shape(self) -> tuple[int, int]:
        return self.lum.shape  # type: ignore[return-value]


def load_rgb(path: Path | str) -> np.ndarray:
    """Read a PNG as an H x W x 3 uint8 RGB array (transparency composed on white, 16 bits scaled).

    Checked before decoding (:mod:`.image`): an empty, damaged, non-PNG or oversized file raises
    an :class:`~benchmark.errors.InputError` naming it.
    """
    from benchmark.extract.image import read_rgb

    return read_rgb(path)


def stroke_colour(rgb: np.ndarray) -> np.ndarray:
    """Which pixels of an RGB array (any shape H x W x 3) have the stroke's blue: the blue channel
    exceeds the mean of red and green by more than ``BLUENESS_MIN`` (bool)."""
    import cv2

    rgb = np.ascontiguousarray(rgb, dtype=np.uint8)
    # each channel taken alone and the mean and difference written over them: ``cv2.split`` makes
    # its three planes in memory OpenCV maps afresh for each call, which here costs more than the
    # arithmetic (an 80-Mpx image: 0.30 s against 0.13 s, median of 5)
    r, g, b = (cv2.extractChannel(rgb, i) for i in range(3))
    return cv2.subtract(b, cv2.addWeighted(r, 0.5, g, 0.5, 0, dst=r), dst=b) > BLUENESS_MIN


def make_raster(rgb: np.ndarray, measure: bool = True) -> Raster:
    """Masks of one image (``measure=False`` skips measuring the stroke width)."""
    import cv2

    rgb = np.ascontiguousarray(rgb, dtype=np.uint8)
    lum = cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY)
    stroke = stroke_colour(rgb)
    ink = (~stroke) & (lum < TEXT_LUM_MAX)
    return Raster(rgb=rgb, lum=lum, stroke=stroke, ink=ink, line_width=stroke_width(stroke) if measure else 0)


def sampled_stroke_width(rgb: np.ndarray, step: int = 4) -> int:
    """Stroke width of a large image, measured on every ``step``-th column (vertical runs) and
    row (horizontal runs) only."""
    counts = _run_counts(stroke_colour(rgb[:, ::step])) + _row_run_counts(stroke_colour(rgb[::step, :]))
    return max(1, int(np.argmax(counts))) if counts.sum() else 2


def _run_counts(arr: np.ndarray) -> np.ndarray:
    """Histogram (0..31) of the lengths of vertical runs of set pixels.

    Starts and ends are found in the array's own (row) order and paired column by column with a
    stable sort of the few run ends, instead of walking the whole array in column order.

    >>> m = np.zeros((9, 3), bool); m[1:4, 0] = True; m[6:9, 0] = True; m[0:2, 2] = True
    >>> _run_counts(m)[:4].tolist()
    [0, 0, 1, 2]
    """
    from benchmark.extract.components import nonzero

    padded = np.zeros((arr.shape[0] + 2, arr.shape[1]), dtype=np.int8)
    padded[1:-1] = arr
    d = np.diff(padded, axis=0)
    start_rows, start_cols = nonzero(d == 1)
    end_rows, end_cols = nonzero(d == -1)
    runs = end_rows[np.argsort(end_cols, kind="stable")] - start_rows[np.argsort(start_cols, kind="stable")]
    return np.bincount(runs[runs < 32], minlength=32)[:32]


def _row_run_counts(arr: np.ndarray) -> np.ndarray:
    """Histogram (0..31) of the lengths of horizontal runs of set pixels (rows read in memory order).

    >>> m = np.zeros((3, 9), bool); m[0, 1:4] = True; m[0, 6:9] = True; m[2, 0:2] = True
    >>> _row_run_counts(m)[:4].tolist()
    [0, 0, 1, 2]
    """
    rows = np.zeros((arr.shape[0], arr.shape[1] + 1), dtype=np.int8)
    rows[:, :-1] = arr
    d = np.diff(rows.ravel(), prepend=np.int8(0))
    runs = np.flatnonzero(d == -1) - np.flatnonzero(d == 1)
    return np.bincount(runs[runs < 32], minlength=32)[:32]


def stroke_width(stroke: np.ndarray) -> int:
    """Most common thickness of the stroke: the mode of short vertical and horizontal runs.

    >>> m = np.zeros((20, 30), bool); m[5:9, 2:28] = True; m[2:18, 14:18] = True
    >>> stroke_width(m)
    4
    """
    counts = (_run_counts(stroke[:, ::3] if stroke.shape[1] > 300 else stroke)
              + _row_run_counts(stroke[::3] if stroke.shape[0] > 300 else stroke))
    if counts.sum() == 0:
        return 2
    return max(1, int(np.argmax(counts)))


def fill_palette(rgb: np.ndarray, min_area: int = 0) -> list[tuple[int, int, int]]:
    """The flat light colours that fill at least ``min_area`` pixels of the image (white first).

    A pixel counts for its colour where its right and lower neighbours have that colour too
    (on a grid of every other pixel of a large image): fills are flat, while anti-aliased blends
    lie along lines and text and never count, so one shape of a colour of its own (the only queue
    of a large diagram) is kept however small a share of the image it covers.
    """
    step = 2 if rgb.shape[0] * rgb.shape[1] > 400_000 else 1
    sub = rgb[::step, ::step]
    packed = (sub[:, :, 0].astype(np.int32) << 16) | (sub[:, :, 1].astype(np.int32) << 8) | sub[:, :, 2]
    here = packed[:-1, :-1]
    flat = (here == packed[1:, :-1]) & (here == packed[:-1, 1:])
    values, counts = np.unique(here[flat], return_counts=True)
    need = max(FLAT_MIN, min_area // (step * step))
    out = []
    for v, n in zip(values, counts):
        if n < need:
            continue
        col = ((v >> 16) & 255, (v >> 8) & 255, v & 255)
        r, g, b = (int(x) for x in col)
        if min(r, g, b) < 180 or b - (r + g) // 2 > BLUENESS_MIN:
            continue
        out.append((r, g, b))
    out.sort(key=lambda c: (c != (255, 255, 255), -sum(c)))
    return out


#: fewest flat pixels (of the grid looked at) that make a colour a fill
FLAT_MIN = 50


def pack(colour: tuple[int, int, int]) -> int:
    """``(r, g, b)`` as the int32 ``0xRRGGBB`` used by :attr:`Raster.packed`.

    >>> hex(pack((13, 50, 178)))
    '0xd32b2'
    """
    r, g, b = colour
    return (int(r) << 16) | (int(g) << 8) | int(b)


def colour_mask(rgb: np.ndarray, colour: tuple[int, int, int], tol: int = 0) -> np.ndarray:
    """uint8 mask (1 where every channel is within ``tol`` of ``colour``)."""
    import cv2

    lo = np.array([max(0, c - tol) for c in colour], np.uint8)
    hi = np.array([min(255, c + tol) for c in colour], np.uint8)
    return (cv2.inRange(rgb, lo, hi) > 0).view(np.uint8)
