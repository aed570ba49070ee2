"""What a vision model is shown of a diagram: the PNG cut into legible tiles.

Vision models do not read a PNG at its own size: they scale it down to a fixed budget first.
The budget stated here, and used by default, is the one Anthropic documents for its models and
the one the dataset is checked against: at most **1568 px on the long side and about 1.15
megapixels per image** (:data:`LONG_SIDE`, :data:`MAX_PIXELS`); other endpoints have budgets of
the same order (OpenAI's high detail fits 2048 px, then 768 px on the short side). A diagram of
10 000 x 20 000 px (d2 renders at twice its layout size, so a 16 px label is 32 px tall in the
PNG) scaled to that budget keeps labels of 2-3 px: nothing can be read, and a wide diagram (4:1
and more) loses most of its height to the same scaling.

So the diagram is sent as tiles (:func:`plan_tiles`): the image is scaled so that its smallest
label is at least :data:`MIN_LABEL_PX` tall (never enlarged beyond its own size), then cut into
overlapping tiles that each fit the budget and are no more elongated than :data:`MAX_ASPECT`
(an image that fits the budget at that scale is one tile, whatever its shape: the model will not
scale it), at most :data:`MAX_TILES` of them (a bigger diagram is scaled down further to stay within that
number, and the plan says which label height is then reached). A diagram that fits the budget
with legible labels is one tile. "Label height" is the font size of the diagram's smallest label
text (its em height; capital letters are about 0.7 of it), measured from d2's own SVG of the same
file (:func:`label_height_px`), not guessed.

Deterministic: the same PNG and settings give the same tiles, byte for byte.
"""
from __future__ import annotations

import io
import math
import re
import subprocess
import tempfile
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

#: the long side a vision model's input is scaled to (px)
LONG_SIDE = 1568
#: pixels per image a vision model's input is scaled to (about 1.15 megapixels)
MAX_PIXELS = 1_150_000
#: the most elongated tile sent (long side / short side)
MAX_ASPECT = 2.0
#: the label height (font size, px) tiling aims for at the model's input size
MIN_LABEL_PX = 12.0
#: the most tiles sent for one diagram
MAX_TILES = 16
#: overlap between neighbouring tiles, in input pixels (a label cut by one edge is whole in the next tile)
OVERLAP_PX = 48


@dataclass(frozen=True)
class TilePlan:
    """How one image is sent: ``boxes`` are (left, top, right, bottom) in source pixels, each
    scaled by ``scale`` to at most the budget. ``label_px`` is the smallest label's height in the
    source PNG (``None``: not measured), ``label_px_input`` that height as the model receives it."""

    width: int
    height: int
    scale: float
    boxes: tuple[tuple[int, int, int, int], ...]
    label_px: float | None = None
    grid: tuple[int, int] = (1, 1)   # (rows, columns)
    notes: tuple[str, ...] = field(default=())

    @property
    def tiles(self) -> int:
        return len(self.boxes)

    @property
    def label_px_input(self) -> float | None:
        return None if self.label_px is None else self.label_px * self.scale

    def tile_sizes(self) -> list[tuple[int, int]]:
        """The size of each tile as sent (input pixels)."""
        return [(_scaled(r - l, self.scale), _scaled(b - t, self.scale)) for l, t, r, b in self.boxes]


def _scaled(n: int, scale: float) -> int:
    # rounded down (with a tolerance for float error), so that a tile within the budget stays in it
    return max(1, math.floor(n * scale + 1e-9))


def fit_scale(width: int, height: int, long_side: int = LONG_SIDE, max_pixels: int = MAX_PIXELS) -> float:
    """The scale (at most 1) at which the whole image fits the budget: what a model does to it.

    >>> round(fit_scale(9896, 19554), 4)
    0.0771
    >>> fit_scale(800, 600)
    1.0
    """
    return min(1.0, long_side / max(width, height), math.sqrt(max_pixels / (width * height)))


def _tile_side(scaled_w: float, scaled_h: float, long_side: int, max_pixels: int, max_aspect: float) -> tuple[float, float]:
    """The largest tile (input px) that fits the budget, is no more elongated than ``max_aspect``
    and is no larger than the scaled image."""
    side = min(long_side, math.sqrt(max_pixels))
    tw, th = min(scaled_w, side), min(scaled_h, side)
    # a thin image: a longer tile along its long axis, within the budget and the aspect cap
    if scaled_w > tw and th < side:
        tw = min(scaled_w, long_side, max_pixels / th, max_aspect * th)
    if scaled_h > th and tw < side:
        th = min(scaled_h, long_side, max_pixels / tw, max_aspect * tw)
    return tw, th


def _count(scaled: float, tile: float, overlap: float) -> int:
    if scaled <= tile + 1e-9:
        return 1
    return math.ceil((scaled - overlap) / max(1.0, tile - overlap) - 1e-9)


def _grid(width: int, height: int, scale: float, long_side: int, max_pixels: int, max_aspect: float,
          overlap: float) -> tuple[int, int, float, float]:
    sw, sh = width * scale, height * scale
    if max(sw, sh) <= long_side and sw * sh <= max_pixels:   # fits as one image: the model will not scale it
        return 1, 1, sw, sh
    tw, th = _tile_side(sw, sh, long_side, max_pixels, max_aspect)
    return _count(sh, th, overlap), _count(sw, tw, overlap), tw, th


def _starts(total: int, tile: int, n: int) -> list[int]:
    """``n`` tile starts spread evenly from 0 to ``total - tile`` (the last tile ends at the edge)."""
    if n <= 1:
        return [0]
    return [round(i * (total - tile) / (n - 1)) for i in range(n)]


def plan_tiles(width: int, height: int, label_px: float | None = None, long_side: int = LONG_SIDE,
               max_pixels: int = MAX_PIXELS, max_aspect: float = MAX_ASPECT, min_label_px: float = MIN_LABEL_PX,
               max_tiles: int = MAX_TILES, overlap_px: int = OVERLAP_PX) -> TilePlan:
    """The tiles to send for a ``width`` x ``height`` PNG whose smallest label is ``label_px`` tall.

    A small diagram is one tile, sent as it is:

    >>> p = plan_tiles(1000, 800, label_px=32)
    >>> p.tiles, p.scale, p.label_px_input
    (1, 1.0, 32.0)

    A wide one (6:1) is cut along its width into tiles no longer than 2:1, at a scale that keeps
    its labels at least 12 px:

    >>> p = plan_tiles(6000, 1000, label_px=32)
    >>> p.grid, round(p.label_px_input, 1), max(w / h for w, h in p.tile_sizes()) <= 2.0
    ((1, 4), 12.0, True)

    A very large one is scaled down further so that it stays within ``max_tiles``; the plan says
    which label height that leaves:

    >>> p = plan_tiles(9896, 19554, label_px=32)
    >>> p.tiles <= 16, round(p.label_px_input, 1)
    (True, 8.5)
    """
    if width <= 0 or height <= 0:
        raise ValueError(f"image size must be positive, not {width}x{height}")
    notes: list[str] = []
    whole = fit_scale(width, height, long_side, max_pixels)
    scale = whole
    if label_px is not None and label_px * whole < min_label_px:
        scale = min(1.0, min_label_px / label_px)
    rows, cols, _, _ = _grid(width, height, scale, long_side, max_pixels, max_aspect, overlap_px)
    if rows * cols > max_tiles:
        r, c, _, _ = _grid(width, height, whole, long_side, max_pixels, max_aspect, overlap_px)
        if r * c > max_tiles:
            # so elongated that the aspect cap alone needs more tiles, at any scale: keep the labels legible
            notes.append(f"{rows * cols} tiles needed for the aspect cap (more than {max_tiles})")
        else:
            # the largest scale (between the whole-image fit and the aimed one) that needs at most max_tiles
            lo, hi = whole, scale
            for _ in range(40):
                mid = (lo + hi) / 2
                r, c, _, _ = _grid(width, height, mid, long_side, max_pixels, max_aspect, overlap_px)
                lo, hi = (mid, hi) if r * c <= max_tiles else (lo, mid)
            scale = lo
            notes.append(f"scaled down to stay within {max_tiles} tiles")
    rows, cols, tw, th = _grid(width, height, scale, long_side, max_pixels, max_aspect, overlap_px)
    # tile size in source pixels; rounded down when scaled, so it stays within the budget
    src_w = width if cols == 1 else min(width, math.floor(tw / scale))
    src_h = height if rows == 1 else min(height, math.floor(th / scale))
    boxes = tuple((x, y, x + src_w, y + src_h) for y in _starts(height, src_h, rows) for x in _starts(width, src_w, cols))
    return TilePlan(width=width, height=height, scale=scale, boxes=boxes, label_px=label_px, grid=(rows, cols),
                    notes=tuple(notes))


def tile_pngs(png: Path | str | bytes, plan: TilePlan) -> list[bytes]:
    """The tiles of ``png`` as PNG bytes, cut and scaled by ``plan`` (LANCZOS); a one-tile plan at
    scale 1 returns the file's own bytes."""
    from PIL import Image

    data = png if isinstance(png, bytes) else Path(png).read_bytes()
    if plan.tiles == 1 and plan.scale == 1.0 and plan.boxes[0] == (0, 0, plan.width, plan.height):
        return [data]
    with Image.open(io.BytesIO(data)) as im:
        im = im.convert("RGB")
        if im.size != (plan.width, plan.height):
            raise ValueError(f"the plan is for a {plan.width}x{plan.height} image, this one is {im.size[0]}x{im.size[1]}")
        out = []
        for box in plan.boxes:
            tile = im.crop(box)
            size = (_scaled(box[2] - box[0], plan.scale), _scaled(box[3] - box[1], plan.scale))
            if size != tile.size:
                tile = tile.resize(size, Image.Resampling.LANCZOS)
            buf = io.BytesIO()
            tile.save(buf, format="PNG", optimize=False)
            out.append(buf.getvalue())
    return out


def png_size(png: Path | str | bytes) -> tuple[int, int]:
    """(width, height) from the PNG header, without decoding the image."""
    data = png if isinstance(png, bytes) else Path(png).read_bytes()[:32]
    if data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR":
        raise ValueError("not a PNG file")
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


_FONT = re.compile(r"font-size:\s*([0-9.]+)px")
_VIEWBOX = re.compile(r'viewBox="[-0-9.]+ [-0-9.]+ ([0-9.]+) ([0-9.]+)"')


def svg_label_sizes(svg: str) -> tuple[float, float, list[float]]:
    """(width, height, font sizes of every text) of a d2 SVG.

    >>> svg_label_sizes('<svg viewBox="0 0 200 100"><text style="font-size:16px">a</text>'
    ...                 '<text style="font-size:28px">b</text></svg>')
    (200.0, 100.0, [16.0, 28.0])
    """
    m = _VIEWBOX.search(svg)
    if not m:
        raise ValueError("no viewBox in the SVG")
    return float(m.group(1)), float(m.group(2)), [float(x) for x in _FONT.findall(svg)]


@lru_cache(maxsize=256)
def _label_height(d2_path: str, d2_sha: str, png_width: int) -> float | None:
    from benchmark.render import render_file

    with tempfile.TemporaryDirectory() as tmp:
        svg_path = Path(tmp) / "label.svg"
        render_file(Path(d2_path), svg_path)
        width, _, fonts = svg_label_sizes(svg_path.read_text(encoding="utf-8"))
    if not fonts:
        return None
    return min(fonts) * png_width / width


def label_height_px(d2_path: Path | str, png: Path | str) -> float | None:
    """The smallest label's font size in pixels of ``png``, the render of ``d2_path``: d2 renders
    the same file to SVG with the dataset's options, the smallest ``font-size`` of its texts is
    scaled by PNG width / SVG width. ``None`` when the diagram has no text.
    Raises :class:`~benchmark.errors.StageUnavailable` without d2 and
    :class:`~benchmark.errors.InputError` when d2 cannot render the file."""
    import hashlib

    d2_path = Path(d2_path)
    sha = hashlib.sha256(d2_path.read_bytes()).hexdigest()
    return _label_height(str(d2_path.resolve()), sha, png_size(png)[0])


def plan_for(png: Path | str, d2_path: Path | str | None = None, **settings: float) -> TilePlan:
    """The tile plan for ``png``, with its label height measured from ``d2_path`` when given (and
    d2 can render it); without it only the budget and the aspect cap apply."""
    from benchmark.errors import DiagQAError

    width, height = png_size(png)
    label = None
    notes: tuple[str, ...] = ()
    if d2_path is not None and Path(d2_path).exists():
        try:
            label = label_height_px(d2_path, png)
        except (DiagQAError, OSError, ValueError, subprocess.SubprocessError) as exc:
            notes = (f"label height not measured: {exc}",)
    plan = plan_tiles(width, height, label_px=label, **settings)
    return plan if not notes else TilePlan(**{**plan.__dict__, "notes": plan.notes + notes})
