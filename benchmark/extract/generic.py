"""Reading a diagram drawn by any tool: shapes, text and connectors found without knowing colours.

d2's renders are read by their colours (:mod:`.shapes`, :mod:`.raster`). Other tools (Graphviz,
PlantUML, Mermaid, d2's dark theme) draw in other colours, so this path looks at structure only:

1. The page: a dark background is inverted, so ink is always darker than the paper. Ink is every
   pixel clearly darker than the paper or fill around it, whatever its colour (outlines,
   connectors, text); fills of any shade count as paper.
2. Text: the ink's connected pieces the size of letters (measured on the image: the common height
   of small pieces) form the text layer, read by tesseract through the same text mosaic as d2's
   renders (:func:`.ocr.read_words`). Where text and lines differ in colour, the letters a line
   runs through and the dashes of a dashed line are sorted by it (:mod:`.inkcolours`).
3. Shapes: regions of paper closed off by ink (closed a little first, so that dashed and dotted
   outlines close too) that do not reach the page border. A region that holds text, or other
   regions, is a shape; thin rings (double outlines) and empty pockets (a cylinder's cap, the
   lens between two connectors) are not. The pieces of a shape that a straight line is drawn
   across are one region (:func:`merge_cut_regions`). Boxes are also found by their outlines
   (:func:`find_boxes`): the connectors leaving a container cut its paper apart, not its outline.
   Kinds come from :func:`.shapes.classify`.
4. Text blocks inside a shape (or, one block, at a container's top or above it) label it; the other
   blocks are edge labels.
5. Connectors: the ink that is neither text nor a leaf shape's outline, traced and joined by
   :mod:`.connectors` (filled arrowheads of any shape are what an opening wider than a line keeps);
   containers' outlines stay in the line layer, so the connectors crossing them are traced through.
"""
from __future__ import annotations

import dataclasses
from typing import Any

import cv2
import numpy as np

from benchmark.extract.components import component_stats, components, nonzero
from benchmark.extract.connectors import find_edges
from benchmark.extract.inkcolours import sort_by_colour
from benchmark.extract.labels import Block, assign_node_labels, group_blocks, group_lines
from benchmark.extract.ocr import LANG, Word, read_words
from benchmark.extract.raster import Raster, stroke_width
from benchmark.extract.shapes import CONTAINER_SOLIDITY_MIN, Shape, classify, innermost, nest_closed, solidity

#: ink is at least this much darker than the paper or fill around it
INK_CONTRAST = 45
#: wider than any line or letter stroke (pixels): the span the local background is taken over
INK_SPAN = 15
#: a page whose median luminance is below this has a dark background and is inverted
DARK_PAGE_LUM = 110
#: a region whose own pixels fill less than this share of its outline is a ring, not a shape
RING_SHARE_MAX = 0.2
#: a leaf shape is at least this convex (a region fenced in by connectors seldom is)
LEAF_SOLIDITY_MIN = 0.85
#: a leaf's label is centred: its centre at most this share of the shape's size off the shape's
CENTRE_OFFSET_MAX = 0.2
#: containers are boxes: at least CONTAINER_SOLIDITY_MIN convex, and filling at least this share of
#: their bounding box
CONTAINER_EXTENT_MIN = 0.8
#: and at most this many times the area of the text it holds
LEAF_AREA_PER_TEXT = 25
#: a region with this many corners where lines cross (or more) is a pocket fenced in by connectors crossing
#: each other, not a shape (:func:`crossed_corners`)
CROSSED_CORNERS_MIN = 1


def normalise(rgb: np.ndarray) -> tuple[np.ndarray, np.ndarray, bool]:
    """(rgb, luminance, inverted): a dark-background image inverted so that ink is dark.

    >>> dark = np.full((10, 10, 3), 30, np.uint8); dark[5, :] = 220
    >>> _, lum, inv = normalise(dark)
    >>> inv, int(lum[0, 0]), int(lum[5, 0])
    (True, 225, 35)
    """
    lum = cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY)
    if float(np.median(lum)) < DARK_PAGE_LUM:
        rgb = 255 - rgb
        return rgb, 255 - lum, True
    return rgb, lum, False


STUB_CHARS = "Il|1!["


def strip_line_stubs(words: list[Word], lines: np.ndarray) -> list[Word]:
    """Words without the stroke of a line they were read with: a line running past a word's
    first or last letter is read as ``l``, ``I`` or ``|`` glued to it (``llookup``, ``Ino``).
    Such a character goes when the line layer covers the strip of the word box it stands in.

    >>> lines = np.zeros((30, 100), bool); lines[:, 10:12] = True
    >>> [w.text for w in strip_line_stubs([Word("llookup", 8, 5, 70, 20, 90, 0), Word("lab", 40, 5, 30, 20, 90, 0)], lines)]
    ['lookup', 'lab']
    """
    out = []
    for w in words:
        text, x0, x1 = w.text, w.x, w.x + w.w
        per = w.w / max(1, len(text))
        strip = lines[w.y:w.y + w.h]
        if len(text) > 1 and text[0] in STUB_CHARS and strip[:, x0:x0 + max(1, int(per))].any(axis=1).mean() > 0.8:
            text, x0 = text[1:], x0 + int(per)
        if len(text) > 1 and text[-1] in STUB_CHARS and strip[:, max(x0, x1 - int(per)):x1].any(axis=1).mean() > 0.8:
            text, x1 = text[:-1], x1 - int(per)
        out.append(w if text == w.text else Word(text, x0, w.y, max(1, x1 - x0), w.h, w.conf, w.ink))
    return out


def ink_mask(lum: np.ndarray) -> np.ndarray:
    """Ink: pixels clearly darker than the paper or fill around them (:data:`INK_CONTRAST` below
    the local background, which a grey closing wider than any line or letter stroke gives).
    Fills of any shade are background, so a dark theme's grey boxes are not ink.

    >>> lum = np.full((40, 40), 170, np.uint8); lum[:, :20] = 250; lum[10, :] = 60
    >>> m = ink_mask(lum); bool(m[10, 5]), bool(m[10, 30]), bool(m[20, 30]), bool(m[20, 5])
    (True, True, False, False)
    """
    background = cv2.morphologyEx(lum, cv2.MORPH_CLOSE, cv2.getStructuringElement(cv2.MORPH_RECT, (INK_SPAN, INK_SPAN)))
    return (background.astype(np.int16) - lum) > INK_CONTRAST


#: a straight run of ink at least this many letter heights long is a line, not part of a letter
#: (:func:`letters_on_lines`)
STRAIGHT_RUN = 2.5
#: directions a straight run is looked for in (over half a turn)
STRAIGHT_ANGLES = 16
#: a piece glued to a line is a letter when at least this many letter heights tall (what is left of
#: a line's end beside a word is a speck, read as ``‘`` or ``_``)
GLUED_MIN = 0.4
#: text whose ground is this much lighter or darker than the page's is set on a fill of its own
FILL_CONTRAST = 10


def line_kernels(length: int) -> list[np.ndarray]:
    """Segments ``length`` pixels long through the middle of a square, in :data:`STRAIGHT_ANGLES`
    directions (structuring elements for :func:`straight_runs`)."""
    c = length // 2
    out = []
    for i in range(STRAIGHT_ANGLES):
        a = np.pi * i / STRAIGHT_ANGLES
        dx, dy = np.cos(a) * (length - 1) / 2, np.sin(a) * (length - 1) / 2
        k = np.zeros((length, length), np.uint8)
        cv2.line(k, (int(round(c - dx)), int(round(c - dy))), (int(round(c + dx)), int(round(c + dy))), 1, 1)
        out.append(k)
    return out


def straight_runs(lines: np.ndarray, length: int) -> np.ndarray:
    """The pixels of ``lines`` on a straight run at least ``length`` long, in any direction (an
    opening by each of :func:`line_kernels` of the lines thickened by a pixel, so that a one-pixel
    line at a slant between two directions is kept whole, thinned back by that pixel after).

    >>> m = np.zeros((40, 60), bool); m[20, 2:58] = True; m[5:15, 30:33] = True
    >>> s = straight_runs(m, 21); bool(s[20, 5:55].all()), bool(s[5:15, 30:33].any())
    (True, False)
    """
    square = np.ones((3, 3), np.uint8)
    thick = cv2.dilate(lines.view(np.uint8), square)
    out = np.zeros(lines.shape, np.uint8)
    for k in line_kernels(length):
        out |= cv2.morphologyEx(thick, cv2.MORPH_OPEN, k)
    # thinned back by the pixel it was thickened by: a letter touching the line keeps its edge
    return (cv2.erode(out, square) > 0) & lines


def letters_on_lines(text: np.ndarray, lines: np.ndarray, th: int,
                     lum: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The letters glued to a line, and the straight runs of the lines beside the text (both masks).

    Graphviz sets an edge label against its line: the ``y`` of ``yes`` touching it made one piece of
    ink with the line, left out of the text (read ``es``), and the stub of line beside a word was
    read as a letter of it (``‘yes``, ``tresult``). Where a piece of the line layer reaches within a
    letter's height of the text, its straight runs (:func:`straight_runs`, :data:`STRAIGHT_RUN`
    letter heights long) are line; what is left of it, no larger than a letter and that near the
    text, is letters.

    Text set on a fill of its own (Mermaid draws an edge label on a grey box that hides its line) is
    left as it is, and marked in the third mask: no line reaches its letters there, and what is
    left of a line's end beside the box was read as ``‘`` or ``_``.
    """
    glued, straight, on_fill = (np.zeros(lines.shape, bool) for _ in range(3))
    if th <= 0 or not text.any():
        return glued, straight, on_fill
    paper = float(np.median(lum[::7, ::7]))
    rect = cv2.getStructuringElement(cv2.MORPH_RECT, (2 * th + 1, th + 1))
    disc = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (th | 1,) * 2)
    tight = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (max(3, th // 3) | 1,) * 2)
    length = max(7, int(round(STRAIGHT_RUN * th))) | 1
    around = cv2.dilate(text, rect)
    h_img, w_img = lines.shape
    # each stretch of text on its own, with a run's length of the image around it
    n, boxes = component_stats(around)
    for x, y, w, h in boxes[1:n, :4].tolist():
        x0, y0 = max(0, x - length), max(0, y - length)
        x1, y1 = min(w_img, x + w + length), min(h_img, y + h + length)
        ln = np.ascontiguousarray(lines[y0:y1, x0:x1])
        by_text = around[y0:y1, x0:x1] > 0
        # the ground right around the letters (a label's box is a little larger than its text)
        close = cv2.dilate(text[y0:y1, x0:x1], tight) > 0
        ground = lum[y0:y1, x0:x1][close & ~ln & (text[y0:y1, x0:x1] == 0)]
        if ground.size and abs(float(np.median(ground)) - paper) > FILL_CONTRAST:
            on_fill[y0:y1, x0:x1] |= by_text
            continue
        near = cv2.dilate(text[y0:y1, x0:x1], disc) > 0
        beside = ln & by_text
        m, labels, stats, _ = cv2.connectedComponentsWithStats(beside.view(np.uint8), 8)
        touches = np.bincount(labels[near & beside], minlength=m) > 0
        touches[0] = False
        if not touches.any():
            continue
        on_line = np.zeros(ln.shape, bool)
        hh, ww = ln.shape
        for px, py, pw, ph in stats[touches, :4].tolist():
            # a line through the piece is seen a run's length on each side of it
            a0, b0 = max(0, px - length), max(0, py - length)
            a1, b1 = min(ww, px + pw + length), min(hh, py + ph + length)
            on_line[b0:b1, a0:a1] |= straight_runs(np.ascontiguousarray(ln[b0:b1, a0:a1]), length)
        rest = beside & touches[labels] & ~on_line
        m, labels, stats, _ = cv2.connectedComponentsWithStats(rest.view(np.uint8), 8)
        keep = np.bincount(labels[near & rest], minlength=m) > 0
        keep &= ((stats[:, cv2.CC_STAT_HEIGHT] <= 1.6 * th) & (stats[:, cv2.CC_STAT_WIDTH] <= 1.6 * th)
                 & (stats[:, cv2.CC_STAT_HEIGHT] >= GLUED_MIN * th))
        keep[0] = False
        glued[y0:y1, x0:x1] |= keep[labels]
        straight[y0:y1, x0:x1] |= on_line
    return glued, straight & ~on_fill, on_fill


def text_layer(ink: np.ndarray) -> tuple[np.ndarray, int]:
    """The ink pieces the size of letters (uint8 mask) and the letter height measured.

    The letter height is the most common height among small pieces; pieces up to 2.5 letters
    tall and 4 wide are text (a wider piece is a line or an outline, unless it is a word whose
    letters touch, which is no taller than a letter and no longer than a word).
    """
    n, labels, stats, _ = components(ink.view(np.uint8))
    if n <= 1:
        return np.zeros_like(ink, dtype=np.uint8), 0
    w, h, area = stats[1:, cv2.CC_STAT_WIDTH], stats[1:, cv2.CC_STAT_HEIGHT], stats[1:, cv2.CC_STAT_AREA]
    small = (h >= 6) & (h <= 80) & (w <= 80)
    if not small.any():
        return np.zeros_like(ink, dtype=np.uint8), 0
    hist = np.bincount(h[small], minlength=81)
    # letters with ascenders are the tallest common height; smooth the histogram over +-1
    smooth = np.convolve(hist, np.ones(3), mode="same")
    th = int(np.argmax(smooth[6:])) + 6
    fill = area / np.maximum(w * h, 1)
    letter = (h <= 2.5 * th) & (w <= 4 * th) & ((h >= 0.3 * th) | (w <= 1.5 * th))
    word = (h <= 1.4 * th) & (w <= 25 * th) & (fill > 0.15) & (h >= 0.5 * th)
    keep = np.zeros(n, np.uint8)
    keep[1:] = (letter | word) & (area >= 4)
    return keep[labels], th


def closing_size(lw: int) -> int:
    """The side of the square that closes the line layer before regions are read (:func:`find_regions`):
    it bridges a line's antialiased gaps, and cuts a sharp corner's tip off the region inside."""
    return 2 * lw + 3


def find_regions(ink: np.ndarray, lw: int, min_side: int, small: list | None = None,
                 lum: np.ndarray | None = None, text: np.ndarray | None = None,
                 boxes: list[tuple[int, int, int, int]] = (),
                 ) -> list[tuple[np.ndarray, tuple[int, int, int, int], float, np.ndarray]]:
    """Closed regions of paper: (contour, box, area, filled mask in the box) of every region not
    touching the border, at least ``min_side`` wide and tall, that is not a thin ring. With
    ``small`` given, regions down to half that size are added to it (not merged with others):
    a stick figure's head is smaller than any node. With the luminance ``lum`` given, the pieces
    of a shape a line is drawn across are one region (:func:`merge_cut_regions`, which reads
    the letter mask ``text`` and the drawn ``boxes``)."""
    k = closing_size(lw)
    closed = cv2.morphologyEx(ink.view(np.uint8), cv2.MORPH_CLOSE, cv2.getStructuringElement(cv2.MORPH_RECT, (k, k)))
    paper = (1 - closed).astype(np.uint8)
    n, labels, stats, _ = cv2.connectedComponentsWithStats(paper, connectivity=4)
    h_img, w_img = ink.shape
    out = []
    for i in range(1, n):
        x, y, w, h, a = (int(v) for v in stats[i])
        if x == 0 or y == 0 or x + w >= w_img or y + h >= h_img:
            continue
        little = w < min_side or h < max(3 * lw, min_side // 3)   # (flat regions stay: a cylinder's cap is one)
        if little and (small is None or min(w, h) < min_side // 2):
            continue
        sub = (labels[y:y + h, x:x + w] == i).astype(np.uint8)
        contours, _ = cv2.findContours(sub, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
        cnt = max(contours, key=cv2.contourArea)
        filled = np.zeros_like(sub)
        cv2.drawContours(filled, [cnt], -1, 1, thickness=cv2.FILLED)
        total = int(filled.sum())
        if total == 0 or a / total < RING_SHARE_MAX:
            continue
        (small if little else out).append((cnt + np.array([[x, y]], dtype=np.int32), (x, y, w, h), float(total), filled))
    if lum is not None:
        out = merge_cut_regions(out, ink, lum, text, lw, k, boxes)
    return merge_split_regions(out, k)


def _close(m: np.ndarray, k: int) -> np.ndarray:
    """``m`` closed by a k x k square, with the paper beyond its frame taken as empty (OpenCV's default
    border lets a closing grow what reaches the frame out to it).

    >>> m = np.zeros((9, 9), np.uint8); m[4, 2:5] = 1; m[4, 6] = 1
    >>> _close(m, 3)[4].tolist(), int(_close(m, 3).sum())
    ([0, 0, 1, 1, 1, 1, 1, 0, 0], 5)
    """
    return cv2.morphologyEx(m, cv2.MORPH_CLOSE, cv2.getStructuringElement(cv2.MORPH_RECT, (k, k)),
                            borderType=cv2.BORDER_CONSTANT, borderValue=0)


#: two pieces of one shape cut by a line have fills this close (median luminance, 0-255)
CUT_FILL_DIFF_MAX = 12
#: and the two pieces together are at least this convex
CUT_SOLIDITY_MIN = 0.9


def merge_cut_regions(regions: list, lines: np.ndarray, lum: np.ndarray, text: np.ndarray | None,
                      lw: int, k: int, boxes: list[tuple[int, int, int, int]] = ()) -> list:
    """Regions a straight line cuts apart put back together: d2 draws a long connector straight over
    the shapes in its way, and the line splits a shape's paper in two. Two regions are one shape
    cut by a line when they are filled alike (:data:`CUT_FILL_DIFF_MAX`); the ink between them is
    one straight line no wider than a line and the closing's margin, running across their union
    from side to side and on beyond it, away from it, at one end at least (a connector crossing the
    shape, where an outline between a shape and the paper beside it turns at a corner or runs on
    along the shape); and the union is convex (:data:`CUT_SOLIDITY_MIN`). Two boxes of a grid side
    by side meet along a line too: where each holds a label of its own, clear of the line between them, they
    stay apart (``text``, the letter mask); a label the line runs through has letters on both
    sides of it. A side of a drawn box (``boxes``, :func:`find_boxes`) is no such line: the paper
    on both sides of a container's outline, between two connectors crossing it, is two pockets.

    >>> lum = np.full((90, 80), 230, np.uint8); ink = np.zeros((90, 80), np.uint8)
    >>> _ = cv2.rectangle(ink, (10, 25), (70, 65), 1, 1); ink[:, 38] = 1   # a box a line crosses
    >>> len(find_regions(ink.astype(bool), 1, 10)), len(find_regions(ink.astype(bool), 1, 10, lum=lum))
    (2, 1)
    >>> unlike = lum.copy(); unlike[:, :38] = 150   # filled unlike: two shapes side by side
    >>> len(find_regions(ink.astype(bool), 1, 10, lum=unlike))
    2
    >>> side = np.zeros_like(ink); _ = cv2.rectangle(side, (40, 25), (78, 65), 1, 1)
    >>> _ = cv2.line(side, (40, 25), (10, 65), 1); side[65, 10:40] = 1   # paper fenced in beside the box
    >>> len(find_regions(side.astype(bool), 1, 10)), len(find_regions(side.astype(bool), 1, 10, lum=lum))
    (2, 2)
    >>> text = np.zeros_like(ink); text[43:47, 20:26] = 1; text[43:47, 50:56] = 1   # two labels: two cells
    >>> len(find_regions(ink.astype(bool), 1, 10, lum=lum, text=text))
    2
    >>> text[43:47, 34:43] = 1   # a label the line runs through
    >>> len(find_regions(ink.astype(bool), 1, 10, lum=lum, text=text))
    1
    >>> len(find_regions(ink.astype(bool), 1, 10, lum=lum, boxes=[(38, 0, 79, 89)]))   # a box's side
    2
    """
    if len(regions) < 2:
        return regions
    rects = np.array([r[1] for r in regions], np.int64)
    x0, y0 = rects[:, 0], rects[:, 1]
    x1, y1 = x0 + rects[:, 2], y0 + rects[:, 3]
    fills = [_grey(lum, box, filled)[0] for _, box, _, filled in regions]
    parent = list(range(len(regions)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    gap = lw + k + 2
    near = ((x0[:, None] <= x1[None, :] + gap) & (x0[None, :] <= x1[:, None] + gap)
            & (y0[:, None] <= y1[None, :] + gap) & (y0[None, :] <= y1[:, None] + gap))
    for a, b in zip(*np.nonzero(np.triu(near, 1))):
        if abs(fills[a] - fills[b]) <= CUT_FILL_DIFF_MAX and _cut_by_a_line(regions[a], regions[b], lines, text, lw, k, boxes):
            parent[root(int(a))] = root(int(b))
    groups: dict[int, list[int]] = {}
    for i in range(len(regions)):
        groups.setdefault(root(i), []).append(i)
    return [regions[m[0]] if len(m) == 1 else _union([regions[i] for i in m], gap) for m in groups.values()]


def _cut_by_a_line(ra: tuple, rb: tuple, lines: np.ndarray, text: np.ndarray | None, lw: int, k: int,
                   boxes: list[tuple[int, int, int, int]] = ()) -> bool:
    """Are two regions one shape that a straight line crosses (:func:`merge_cut_regions`)?"""
    gap = lw + k + 2
    (ax, ay, aw, ah), (bx, by, bw, bh) = ra[1], rb[1]
    x0, y0 = min(ax, bx) - gap, min(ay, by) - gap
    x1, y1 = max(ax + aw, bx + bw) + gap, max(ay + ah, by + bh) + gap
    ma = np.zeros((y1 - y0, x1 - x0), np.uint8)
    mb = np.zeros_like(ma)
    ma[ay - y0:ay - y0 + ah, ax - x0:ax - x0 + aw] = ra[3]
    mb[by - y0:by - y0 + bh, bx - x0:bx - x0 + bw] = rb[3]
    union = _close(ma | mb, 2 * gap + 1)
    disc = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * gap + 1,) * 2)
    # the ink between the two: what the closing fills next to both (not a hollow along one alone)
    strip = union & (1 - ma) & (1 - mb) & cv2.dilate(ma, disc) & cv2.dilate(mb, disc)
    ys, xs = nonzero(strip)
    if len(ys) < 4 * gap:
        return False
    pts = np.column_stack([xs, ys]).astype(np.float64)
    centre = pts.mean(0)
    _, vecs = np.linalg.eigh(np.cov((pts - centre).T))
    along, across = vecs[:, 1], vecs[:, 0]
    if np.percentile(np.abs((pts - centre) @ across), 95) > (lw + k) / 2 + 1:
        return False        # not one straight line: an outline around a shape, a bend, a wide gap
    if _on_a_box_side(centre + np.array([x0, y0]), along, boxes, gap):
        return False
    cnts, _ = cv2.findContours(union, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    if len(cnts) != 1 or solidity(cnts[0]) < CUT_SOLIDITY_MIN:
        return False
    span = (pts - centre) @ along
    near_union = cv2.dilate(union, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * lw + 3,) * 2))
    t = np.arange(gap + 2 * lw, gap + 8 * lw + 1, dtype=np.float64)
    runs_on = False
    for end, out in ((centre + along * span.min(), -along), (centre + along * span.max(), along)):
        if cv2.pointPolygonTest(cnts[0], (float(end[0]), float(end[1])), True) > gap:
            return False    # the line stops inside: a notch, not a cut
        qx = np.round(end[0] + out[0] * t).astype(int)
        qy = np.round(end[1] + out[1] * t).astype(int)
        inside = (qx >= 0) & (qx < x1 - x0) & (qy >= 0) & (qy < y1 - y0)
        if near_union[qy[inside], qx[inside]].any():
            continue        # along the union's edge
        runs_on = runs_on or _inked(lines, qx + x0, qy + y0, lw) >= 0.7
    if not runs_on:
        return False        # an outline between a shape and the paper beside it, not a line crossing
    if text is None:
        return True
    box = text[y0:y1, x0:x1]
    if box.shape != ma.shape:
        return False
    ta, tb = box & ma, box & mb
    if not (ta.any() and tb.any()):
        return True
    by_line = cv2.dilate(strip, disc)
    return bool((ta & by_line).any() and (tb & by_line).any())


def _on_a_box_side(point: np.ndarray, along: np.ndarray, boxes: list[tuple[int, int, int, int]], gap: int) -> bool:
    """Does a line through ``point`` along ``along`` lie on a side of one of ``boxes`` (x0, y0, x1, y1)?"""
    x, y = float(point[0]), float(point[1])
    for bx0, by0, bx1, by1 in boxes:
        if abs(along[1]) < 0.05 and bx0 - gap <= x <= bx1 + gap and min(abs(y - by0), abs(y - by1)) <= gap:
            return True
        if abs(along[0]) < 0.05 and by0 - gap <= y <= by1 + gap and min(abs(x - bx0), abs(x - bx1)) <= gap:
            return True
    return False


def _inked(lines: np.ndarray, xs: np.ndarray, ys: np.ndarray, lw: int) -> float:
    """The share of the points with ink within half a line width (none off the page)."""
    h, w = lines.shape
    r = max(1, lw // 2)
    hit = [bool(lines[max(0, y - r):y + r + 1, max(0, x - r):x + r + 1].any()) if 0 <= x < w and 0 <= y < h else False
           for x, y in zip(xs.tolist(), ys.tolist())]
    return float(np.mean(hit)) if hit else 0.0


def merge_split_regions(regions: list, gap0: int) -> list:
    """Regions that connectors cut apart put back together: a container's inside is split by the
    connectors that run through it to its children. Two regions (neither convex) that lie at most
    twice ``gap0`` apart and together are clearly more convex are merged, until no pair is."""
    solid_min = 0.93
    pieces = [list(r) for r in regions]
    changed = True
    while changed:
        changed = False
        loose = [i for i, r in enumerate(pieces) if solidity(r[0]) < solid_min]
        for ai in range(len(loose)):
            for bi in range(ai + 1, len(loose)):
                a, b = pieces[loose[ai]], pieces[loose[bi]]
                (ax, ay, aw, ah), (bx, by, bw, bh) = a[1], b[1]
                gap = 2 * gap0
                if ax > bx + bw + gap or bx > ax + aw + gap or ay > by + bh + gap or by > ay + ah + gap:
                    continue
                x0, y0 = min(ax, bx) - gap, min(ay, by) - gap
                x1, y1 = max(ax + aw, bx + bw) + gap, max(ay + ah, by + bh) + gap
                m = np.zeros((y1 - y0, x1 - x0), np.uint8)
                m[ay - y0:ay - y0 + ah, ax - x0:ax - x0 + aw] |= a[3]
                m[by - y0:by - y0 + bh, bx - x0:bx - x0 + bw] |= b[3]
                m = _close(m, 2 * gap + 1)
                n, lab = cv2.connectedComponents(m, connectivity=8)
                if n != 2:
                    continue
                contours, _ = cv2.findContours(m, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
                cnt = max(contours, key=cv2.contourArea)
                if solidity(cnt) < max(solidity(a[0]), solidity(b[0])) + 0.05:
                    continue
                mx, my, mw, mh = cv2.boundingRect(cnt)
                filled = np.zeros((mh, mw), np.uint8)
                cv2.drawContours(filled, [cnt - np.array([[mx, my]])], -1, 1, thickness=cv2.FILLED)
                merged = [cnt + np.array([[x0, y0]], dtype=np.int32), (mx + x0, my + y0, mw, mh),
                          float(filled.sum()), filled]
                pieces = [r for i, r in enumerate(pieces) if i not in (loose[ai], loose[bi])] + [merged]
                changed = True
                break
            if changed:
                break
    return [tuple(r) for r in pieces]


def extract_any(rgb: np.ndarray, lang: str = LANG, timings: dict[str, float] | None = None) -> dict[str, Any]:
    """The graph drawn in an RGB image by any tool, in the parser's JSON form with coverage and
    warnings (:func:`.pipeline.with_coverage`)."""
    from benchmark.extract.pipeline import _Clock, count_words, to_parse_json, with_coverage

    clock = _Clock(timings)
    rgb, lum, dark_page = normalise(np.ascontiguousarray(rgb, dtype=np.uint8))
    ink = ink_mask(lum)
    text, th = text_layer(ink)
    lines = ink & (text == 0)
    lw = max(1, stroke_width(lines))
    text, lines, by_colour = sort_by_colour(rgb, text, lines, th, lw)
    # the text mosaic shows the ink next to the letter-sized pieces, with the letters glued to a line
    # and without the line's straight runs (where colour does not tell text from lines; those a
    # glyph's ink lies on both sides of are drawn back in, :func:`.ocr.strokes_through_glyphs`)
    near = cv2.dilate(text, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (max(3, th // 2) | 1,) * 2))
    if by_colour:
        glued, straight = np.zeros_like(lines), np.zeros_like(lines)
        text_ink = ink & (near > 0)
    else:
        glued, straight, on_fill = letters_on_lines(text, lines, th, lum)
        text_ink = (ink & (near > 0) & ~(lines & ~on_fill)) | glued
    r_text = Raster(rgb=rgb, lum=lum, stroke=straight, ink=text_ink, line_width=lw)
    factor = 1
    full_lines = lines
    if min(lines.shape) >= 200 and lw >= 4:
        # thick lines (d2 draws at twice the size): shapes and connectors on a half-size copy
        factor, lw = 2, lw // 2
        h, w = lines.shape
        half = (w // 2, h // 2)
        lines = cv2.resize(lines.view(np.uint8) * 255, half, interpolation=cv2.INTER_AREA) >= 96
        text = (cv2.resize(text * 255, half, interpolation=cv2.INTER_AREA) >= 96).view(np.uint8)
        rgb = cv2.resize(rgb, half, interpolation=cv2.INTER_AREA)
        lum = cv2.resize(lum, half, interpolation=cv2.INTER_AREA)
        th = max(1, th // 2)
    small: list = []
    boxes = find_boxes(lines, lw, th)
    regions, drawn = with_boxes(find_regions(lines, lw, max(2 * th, 6 * lw), small, lum, text, boxes), boxes, lw)
    clock.lap("shapes")
    words = [Word(w.text, w.x, w.y, w.w, w.h, w.conf, 0.0).scaled(1 / factor)
             for w in strip_line_stubs(read_words(r_text, lang=lang, tones=False), full_lines & ~glued)]
    clock.lap("ocr")
    blocks = group_blocks(group_lines(words))
    # (not on a dark page: d2's dark theme draws long straight connectors over shapes, across their corners)
    shapes, figures = _shapes_with_text(regions, blocks, lw, small, lines, drawn, crossings=not dark_page,
                                        lum=lum)
    outside: dict[int, list[tuple[int, int, int, int]]] = {}
    used: set[int] = set()
    # a figure's label is its own, whatever shape lies next to it
    labels = assign_node_labels([Block(b.lines, grey=True) if bi in figures.values() else b
                                 for bi, b in enumerate(blocks)], shapes, outside, used)
    for si, bi in figures.items():
        labels[si] = blocks[bi].text
        outside.setdefault(si, []).append(blocks[bi].box)
        used.add(bi)
    edge_blocks = []
    for bi, b in enumerate(blocks):
        if bi not in used:
            edge_blocks.append(Block(b.lines, grey=True))
    r_lines = Raster(rgb=rgb, lum=lum, stroke=lines, ink=text.astype(bool), line_width=lw)
    edges = [e for e in _leaf_edges(r_lines, shapes, edge_blocks, outside) if not _hugs_its_shape(e, shapes)]
    clock.lap("connectors")
    return with_coverage(to_parse_json(shapes, labels, edges), count_words(words))


def _leaf_edges(r: Raster, shapes: list[Shape], blocks: list[Block],
                outside: dict[int, list[tuple[int, int, int, int]]]) -> list:
    """The connectors between the shapes that hold no other (:func:`.connectors.find_edges` on those
    alone), with the indices of ``shapes``. A container's outline stays in the line layer, where the
    connectors that cross it are traced through it; cut out as a shape's outline, it would cut each of
    them in two. A grid layout's straight connectors are sought between all shapes, containers too
    (d2 draws one from a container's centre as from any shape's)."""
    leaves = [s for s in shapes if not s.is_container]
    if len(leaves) == len(shapes):
        return find_edges(r, shapes, blocks, outside)
    own = [dataclasses.replace(s, index=i, parent=None, children=[]) for i, s in enumerate(leaves)]
    return find_edges(r, own, blocks, {i: outside[s.index] for i, s in enumerate(leaves) if s.index in outside},
                      grid=(shapes, [s.index for s in leaves]))


def _pockets(leaves: list[Shape], masks: list[np.ndarray], gap: int) -> set[int]:
    """Leaf candidates that are pockets between shapes and connectors, not shapes: two real
    shapes never share an outline, so where two candidates lie right across one line from each
    other along a stretch of their border, one of them is a pocket holding an edge label. The
    one whose height is further from the common height of the candidates goes (a tool draws its
    nodes at one height, pockets come in any)."""
    if len(leaves) < 2:
        return set()
    heights = np.array([s.box[3] for s in leaves], float)
    common = float(np.median(heights))
    off = {s.index: abs(np.log(max(s.box[3], 1) / common)) for s in leaves}
    drop: set[int] = set()
    for i, a in enumerate(leaves):
        ax, ay, aw, ah = a.box
        for b in leaves[i + 1:]:
            if a.index in drop or b.index in drop:
                continue
            bx, by, bw, bh = b.box
            g = gap
            if ax > bx + bw + g or bx > ax + aw + g or ay > by + bh + g or by > ay + ah + g:
                continue
            x0, y0 = min(ax, bx) - g, min(ay, by) - g
            x1, y1 = max(ax + aw, bx + bw) + g, max(ay + ah, by + bh) + g
            ma = np.zeros((y1 - y0, x1 - x0), np.uint8)
            mb = np.zeros_like(ma)
            ma[ay - y0:ay - y0 + ah, ax - x0:ax - x0 + aw] = masks[a.index]
            mb[by - y0:by - y0 + bh, bx - x0:bx - x0 + bw] = masks[b.index]
            grown = cv2.dilate(ma, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * g + 1,) * 2))
            border_b = mb - cv2.erode(mb, np.ones((3, 3), np.uint8))
            shared = int((grown & border_b).sum())
            if shared >= 0.12 * min(2 * (aw + ah), 2 * (bw + bh)):
                drop.add(a.index if off[a.index] > off[b.index] else b.index)
    return drop


def _hugs_its_shape(e: Any, shapes: list[Shape]) -> bool:
    """A "loop" from a shape to itself that never leaves the shape's close surroundings is part
    of its drawing (a cylinder's cap, a note's fold), not a connector."""
    if e.a != e.b:
        return False
    x, y, w, h = shapes[e.a].box
    m = 0.35 * min(w, h)
    pts = e.points
    return bool(((pts[:, 0] >= x - m) & (pts[:, 0] <= x + w + m) & (pts[:, 1] >= y - m)
                 & (pts[:, 1] <= y + h + m)).all())


def _titled(s: Shape, blocks: list[Block | None], own: list[int]) -> bool:
    """Does a text block sit at the top of the region (inside, in its top fifth) or just above it?
    (``None`` in ``blocks``: a block that cannot be a title.)"""
    sx, sy, sw, sh = s.box
    for bi, b in enumerate(blocks):
        if b is None:
            continue
        x, y, w, h = b.box
        if not (sx <= x + w / 2 <= sx + sw):
            continue
        if bi in own and y + h / 2 <= sy + max(0.2 * sh, 2 * b.line_height):
            return True
        if bi not in own and 0 <= sy - (y + h) <= 1.5 * b.line_height:
            return True
    return False


def _centred(s: Shape, blocks: list[Block]) -> bool:
    """Is the text roughly centred in the shape (every tool centres a node's label; an edge
    label in a pocket fenced in by connectors seldom is)?"""
    x0 = min(b.box[0] for b in blocks)
    y0 = min(b.box[1] for b in blocks)
    x1 = max(b.box[0] + b.box[2] for b in blocks)
    y1 = max(b.box[1] + b.box[3] for b in blocks)
    sx, sy, sw, sh = s.box
    return (abs((x0 + x1) / 2 - (sx + sw / 2)) <= CENTRE_OFFSET_MAX * sw
            and abs((y0 + y1) / 2 - (sy + sh / 2)) <= CENTRE_OFFSET_MAX * sh)


def _shapes_with_text(regions: list, blocks: list[Block], lw: int, small: list | None = None,
                      lines: np.ndarray | None = None,
                      drawn: set[tuple[int, int, int, int]] | None = None,
                      crossings: bool = True, lum: np.ndarray | None = None) -> tuple[list[Shape], dict[int, int]]:
    """Shapes from regions: nested, and kept when they hold a text block or another kept shape;
    and figures (:func:`_figures`) among the empty regions and ``small`` ones, with the index of
    the block under each (by the returned shapes' indices). A region whose box is in ``drawn`` (the
    inside of a drawn rectangle, :func:`with_boxes`) holding centred text is a shape however little
    of it the text fills (a grid layout stretches its boxes). With ``crossings`` (and ``lines``), a
    region with lines crossing at a corner (:func:`crossed_corners`) is a pocket between connectors:
    true of tools that route connectors around shapes, not of those that draw them over shapes.
    With ``lum``, each shape's fill is its region's median luminance (grey), which the parts of
    one shape share (:func:`_cap_owner`)."""
    drawn = drawn or set()
    n_big = len(regions)
    regions = sorted(regions, key=lambda f: (f[1][1], f[1][0], -f[2])) + sorted(
        small or [], key=lambda f: (f[1][1], f[1][0], -f[2]))
    shapes = [Shape(i, "rectangle", c, box, area, _grey(lum, box, filled)) for i, (c, box, area, filled) in enumerate(regions)]
    nest_closed(shapes)
    centres = [b.centre for b in blocks]
    widened = cv2.dilate(lines.view(np.uint8), np.ones((3, 3), np.uint8)) > 0 \
        if lines is not None and crossings else None
    keep: set[int] = set()
    held = [False] * len(blocks)   # whether a kept shape holds the block
    for s in sorted(shapes[:n_big], key=lambda s: s.area):
        inside = [bi for bi, x in enumerate(centres) if s.contains(*x)]
        own = [bi for bi in inside if not any(shapes[c].contains(*centres[bi]) for c in s.children if c in keep)]
        if any(c in keep for c in s.children):
            # a container: a box with its label at its top or just above it (a region fenced in by
            # connectors around shapes is seldom convex and never labelled so)
            extent = s.area / max(1.0, float(s.box[2] * s.box[3]))
            # (a kept shape's own label is no title, though it lie right above the region)
            mine = set(own)
            free = [b if bi in mine or not held[bi] else None for bi, b in enumerate(blocks)]
            if not (solidity(s.contour) >= CONTAINER_SOLIDITY_MIN and extent >= CONTAINER_EXTENT_MIN
                    and _titled(s, free, own)):
                continue
        elif not own or solidity(s.contour) < LEAF_SOLIDITY_MIN:
            continue               # an empty pocket, or a region fenced in by connectors
        elif widened is not None and s.box not in drawn and \
                crossed_corners(s.contour, widened, lw) >= CROSSED_CORNERS_MIN:
            continue               # a pocket between connectors that cross each other
        elif not ((s.area <= LEAF_AREA_PER_TEXT * sum(blocks[bi].box[2] * blocks[bi].box[3] for bi in own)
                   or s.box in drawn) and _centred(s, [blocks[bi] for bi in own])):
            continue
        keep.add(s.index)
        for bi in inside:
            held[bi] = True
    keep -= _pockets([s for s in shapes if s.index in keep and not any(c in keep for c in s.children)],
                     [r[3] for r in regions], 3 * lw + 4)
    figure_of = _figures(shapes, keep, blocks, centres, lines, lw)
    keep |= set(figure_of)
    kept = [s for s in shapes if s.index in keep]
    leaves = [s for s in kept if not any(c in keep for c in s.children) and s.index not in figure_of]
    parts = {s.index: [s.index] for s in kept}
    for s in shapes[:n_big]:
        if s.index in keep or s.children:
            continue
        owner = _cap_owner(s, leaves, 3 * lw + 4)
        if owner is not None:
            parts[owner.index].append(s.index)   # a cylinder's cap, a queue's end: part of the shape
    out = []
    masks = []
    for i, s in enumerate(kept):
        cnt, box, area, filled = _union([regions[j] for j in parts[s.index]], 3 * lw + 4)
        out.append(Shape(i, "rectangle", cnt, box, area, s.fill))
        masks.append(filled)
    nest_closed(out)
    for s, filled in zip(out, masks):
        s.kind = "rectangle" if s.is_container else classify(filled)
    figures = {i: figure_of[s.index] for i, s in enumerate(kept) if s.index in figure_of}
    return out, figures


def crossed_corners(contour: np.ndarray, lines: np.ndarray, lw: int) -> int:
    """How many of a region's corners are crossings: both lines meeting there run on past the corner
    as two strokes. A shape's outline turns at its corners and stops (a connector may start there,
    but as one stroke, not as both sides running on); a pocket fenced in by connectors (Graphviz
    sets an edge label between the curves around it) has its corners where they cross. ``lines`` is
    the line layer, best widened by a pixel (a thin diagonal line is not missed between samples).

    >>> lines = np.zeros((120, 120), bool)
    >>> for i in range(120):
    ...     lines[i, i] = lines[i, 119 - i] = True             # two lines crossing: an X
    >>> lines[74, :] = True                                    # and a third across both
    >>> pocket = np.array([[[60, 62]], [[71, 73]], [[48, 73]]], np.int32)   # the region under the X
    >>> box = np.zeros((60, 60), bool); box[10, 10:50] = box[50, 10:50] = box[10:51, 10] = box[10:51, 49] = True
    >>> inside = np.array([[[12, 12]], [[47, 12]], [[47, 48]], [[12, 48]]], np.int32)
    >>> crossed_corners(pocket, lines, 2), crossed_corners(inside, box, 2)
    (3, 0)
    >>> for i in range(10):
    ...     box[i, i] = box[i, 59 - i] = True                  # connectors leaving two of its corners
    >>> box[2, :] = True                                       # and a line passing above it
    >>> crossed_corners(inside, box, 2)
    0
    """
    pts = _corners(contour, lw)
    count = 0
    for i, (p, apex) in enumerate(pts):
        u, v = pts[i - 1][0] - p, pts[(i + 1) % len(pts)][0] - p
        nu, nv = float(np.hypot(*u)), float(np.hypot(*v))
        if min(nu, nv) < 1:
            continue
        u, v = u / nu, v / nv
        if float(np.dot(u, v)) >= CORNER_COS_MIN:   # (below it the outline turns a little there: no corner)
            count += _crossing_at(p, u, v, apex, lines, lw)
    return count


def _corners(contour: np.ndarray, lw: int) -> list[tuple[np.ndarray, bool]]:
    """The vertices of a region's outline, each with whether it was found as the point where two sides
    meet: the closing that found the region (:func:`find_regions`) cuts a sharp corner's tip off, and
    the short side left there is one corner, where the sides on either side of it meet."""
    k = closing_size(lw)
    pts = [p for p in cv2.approxPolyDP(contour, max(2.0, 1.5 * lw), True).reshape(-1, 2).astype(float)]
    apex = [False] * len(pts)
    merged = True
    while merged and len(pts) > 3:
        merged = False
        for i in range(len(pts)):
            j = (i + 1) % len(pts)
            if float(np.hypot(*(pts[i] - pts[j]))) < k + lw:
                meet = _meeting(pts[i - 1], pts[i], pts[(j + 1) % len(pts)], pts[j])
                pts[i] = meet if meet is not None else (pts[i] + pts[j]) / 2
                apex[i] = meet is not None
                del pts[j], apex[j]
                merged = True
                break
    return list(zip(pts, apex))


def _crossing_at(p: np.ndarray, u: np.ndarray, v: np.ndarray, apex: bool, lines: np.ndarray, lw: int) -> bool:
    """Do both sides of the corner at ``p`` (unit directions ``u`` and ``v`` along them) run on past it,
    as two strokes, and still along their lines further out? (See :func:`crossed_corners`.)"""
    k = closing_size(lw)
    # read round the corner on a circle wide enough to reach past where the lines' middles meet
    # (a sharp corner's tip lies far off the region's: the closing filled the paper there)
    half = 0.5 * float(np.arccos(min(1.0, float(np.dot(u, v)))))
    tip = (lw + 1) / max(np.sin(half), 0.05) if apex else (k + lw) / (2 * max(np.tan(half), 0.05))
    rho = max(6 * lw + 4, tip + 4 * lw + 2)
    n = max(64, int(4 * np.pi * rho))
    t = np.linspace(0.0, 2 * np.pi, n, endpoint=False)
    xy = np.rint(p + np.stack([np.cos(t), np.sin(t)], axis=1) * rho).astype(int)
    h, w = lines.shape
    inside = (xy[:, 0] >= 0) & (xy[:, 0] < w) & (xy[:, 1] >= 0) & (xy[:, 1] < h)
    ink = np.zeros(n, bool)
    ink[inside] = lines[xy[inside, 1], xy[inside, 0]]
    if ink.all():
        return False
    # number the runs of ink round the circle, a run across the circle's start counted once
    first = int(np.argmin(ink))
    ink = np.roll(ink, -first)
    run = np.cumsum(ink & ~np.roll(ink, 1)) * ink
    span = int(np.ceil((lw + 1) / rho * n / (2 * np.pi)))   # a line's width either side, in samples
    hits = []
    for d in (-u, -v):                      # each side run on past the corner
        at = int(round(float(np.arctan2(d[1], d[0])) % (2 * np.pi) / (2 * np.pi) * n)) - first
        near = run[np.arange(at - span, at + span + 1) % n]
        hits.append(set(near[near > 0].tolist()))
    if not (hits[0] and hits[1]) or hits[0] & hits[1]:
        return False
    # and each runs on straight: a connector arriving near a shape's corner, or a cylinder's cap
    # meeting its side, is ink there too, but not along the side's line further out
    r = lw + 1
    return all(lines[max(0, y - r):max(0, y + r + 1), max(0, x - r):max(0, x + r + 1)].any()
               for x, y in (np.rint(p + d * RUN_ON * rho).astype(int) for d in (-u, -v)))


def _meeting(a0: np.ndarray, a1: np.ndarray, b0: np.ndarray, b1: np.ndarray) -> np.ndarray | None:
    """Where the line from ``a0`` through ``a1`` meets the line from ``b0`` through ``b1``, ahead of
    both ``a1`` and ``b1`` (None when they are parallel or meet behind).

    >>> _meeting(np.array([0., 0.]), np.array([4., 1.]), np.array([0., 4.]), np.array([4., 3.])).tolist()
    [8.0, 2.0]
    """
    da, db = a1 - a0, b1 - b0
    den = float(da[0] * db[1] - da[1] * db[0])
    if abs(den) < 1e-9:
        return None
    diff = b0 - a0
    ta = float(diff[0] * db[1] - diff[1] * db[0]) / den
    tb = float(diff[0] * da[1] - diff[1] * da[0]) / den
    return a0 + ta * da if ta >= 1 and tb >= 1 else None


#: a side crossing another at a corner is also ink this many times further out along its line
RUN_ON = 1.6
#: a region's corner turns at least this much: the cosine of the angle between its sides is at
#: least this (135 degrees or sharper); an outline traced round a curve turns less at each vertex
CORNER_COS_MIN = -0.71


def _floor_runs_on(lines: np.ndarray, box: tuple[int, int, int, int], lw: int) -> bool:
    """Does the line under a region run on well past both its sides? (A figure's own outline
    ends with it; a container's edge that a pocket sits on does not.)

    >>> m = np.zeros((40, 100), bool); m[20:22, 5:95] = True
    >>> _floor_runs_on(m, (40, 10, 20, 10), 2), _floor_runs_on(m, (5, 10, 90, 10), 2)
    (True, False)
    """
    sx, sy, sw, sh = box
    band = lines[sy + sh:sy + sh + 2 * lw + 2, :].any(axis=0)
    cx = sx + sw // 2
    if not band[cx]:
        return False
    left, right = cx, cx
    while left > 0 and band[left - 1]:
        left -= 1
    while right < len(band) - 1 and band[right + 1]:
        right += 1
    return left < sx - 3 * lw and right > sx + sw + 3 * lw


def _figures(shapes: list[Shape], keep: set[int], blocks: list[Block],
             centres: list[tuple[float, float]], lines: np.ndarray | None = None, lw: int = 1) -> dict[int, int]:
    """Empty regions that are figures labelled underneath (a person, a stick figure's head):
    convex, holding no text and no shape, touching no shape (a cylinder's cap is part of one), with a block no shape holds centred right under them
    (within two lines and a half, or, under a head no taller than that, four heads and a half:
    a stick figure's body and legs).
    Returns region index -> block index; each block goes to the nearest figure above it.

    >>> sq = np.array([[[0, 0]], [[20, 0]], [[20, 20]], [[0, 20]]], np.int32)
    >>> head = Shape(0, "rectangle", sq + 100, (100, 100, 20, 20), 400.0, (255, 255, 255))
    >>> from benchmark.extract.ocr import Word
    >>> b = group_blocks(group_lines([Word("Customer", 80, 175, 60, 12, 90, 0)]))
    >>> _figures([head], set(), b, [x.centre for x in b]), _figures([head], set(), b[:0], [])
    ({0: 0}, {})
    """
    kept_leaves = [s for s in shapes if s.index in keep and not any(c in keep for c in s.children)]
    boxes = [s for s in shapes if any(c in keep for c in s.children)]
    # a block on open paper (no region but a box of shapes holds it: a cylinder's label lies in
    # its body under its cap), and no title of a box (a pocket that connectors fence in above a
    # container is no figure, and the container's title no figure's label)
    regions = [s for s in shapes if not any(c in keep for c in s.children)]
    free = [bi for bi, c in enumerate(centres) if not any(s.contains(*c) for s in regions)
            and not any(_titled(s, [blocks[bi]], [0] if s.contains(*c) else []) for s in boxes)]
    cands = []
    for s in shapes:
        if s.index in keep or s.children or any(s.contains(*c) for c in centres):
            continue
        if solidity(s.contour) < LEAF_SOLIDITY_MIN or any(o.contains(*s.centre) for o in kept_leaves):
            continue
        g = 3 * lw + 4
        if any(s.box[0] - g < o.box[0] + o.box[2] and o.box[0] < s.box[0] + s.box[2] + g
               and s.box[1] - g < o.box[1] + o.box[3] and o.box[1] < s.box[1] + s.box[3] + g for o in kept_leaves):
            continue  # part of a shape next to it (a cylinder's cap over its labelled body)
        sx, sy, sw, sh = s.box
        if lines is not None and _floor_runs_on(lines, s.box, lw):
            continue  # the line under it runs on past it: a pocket on a container's outline
        home = innermost(boxes, s.centre)
        for bi in free:
            if innermost(boxes, centres[bi]) != home:
                continue  # a figure and its label lie in the same box
            x, y, w, h = blocks[bi].box
            lh = blocks[bi].line_height
            gap = y - (sy + sh)
            if abs(x + w / 2 - (sx + sw / 2)) > max(0.5 * sw, lh):
                continue
            reach = 4.5 * sh if sh <= 2.5 * lh else 2.5 * lh   # a stick figure is four heads tall
            if not -0.5 * lh <= gap <= reach or s.area > LEAF_AREA_PER_TEXT * w * h:
                continue
            cands.append((gap, s.index, bi))
    out: dict[int, int] = {}
    for _, si, bi in sorted(cands):
        if si not in out and bi not in out.values():
            out[si] = bi
    return out


#: a queue's end is about as tall as its body (this share of the body's height at least) and no
#: wider than tall (its width this share of its own height at most): a pocket between connectors
#: beside a shape is seldom either
END_HEIGHT = 0.8
END_WIDTH = 1.0


def _grey(lum: np.ndarray | None, box: tuple[int, int, int, int], filled: np.ndarray) -> tuple[int, int, int]:
    """A region's fill as a grey: the median luminance of its pixels (white without ``lum``)."""
    if lum is None:
        return 255, 255, 255
    x, y, w, h = box
    v = int(np.median(lum[y:y + h, x:x + w][filled > 0]))
    return v, v, v


def _cap_owner(s: Shape, leaves: list[Shape], gap: int) -> Shape | None:
    """The leaf an empty region is a part of: filled alike (:data:`CUT_FILL_DIFF_MAX`), right above
    or below it and no wider (a cylinder's top drawn as its own closed ellipse), or right beside it
    and no taller (a queue's end), and together still convex. The boxes may overlap by up to half
    the part's height (width): the line between a cap and its body is an arc, so the body's box
    begins before the cap's far edge.

    >>> ring = lambda x, y, w, h: cv2.ellipse2Poly((x + w // 2, y + h // 2), (w // 2, h // 2), 0, 0, 360, 10)
    >>> def shape(i, x, y, w, h, cnt=None, grey=200):
    ...     c = (cnt if cnt is not None else np.array([[x, y], [x + w, y], [x + w, y + h], [x, y + h]])).reshape(-1, 1, 2)
    ...     return Shape(i, "rectangle", c.astype(np.int32), (x, y, w, h), float(cv2.contourArea(c.astype(np.int32))), (grey,) * 3)
    >>> body = shape(0, 100, 100, 200, 60)
    >>> end = shape(1, 285, 100, 40, 60, ring(285, 100, 40, 60))      # a queue's right end
    >>> top = shape(2, 100, 80, 200, 30, ring(100, 80, 200, 30))      # a cylinder's cap
    >>> far = shape(3, 330, 100, 40, 60, ring(330, 100, 40, 60))      # a region further off
    >>> low = shape(4, 295, 120, 24, 24, ring(295, 120, 24, 24))      # a small pocket beside it
    >>> wide = shape(5, 295, 100, 70, 60)                             # a box beside it
    >>> tall = shape(6, 70, 98, 40, 64, ring(70, 98, 40, 64))         # taller than the body
    >>> pocket = shape(7, 100, 80, 200, 30, ring(100, 80, 200, 30), grey=160)   # filled as the page is
    >>> [(_cap_owner(p, [body], 10) or p).index for p in (end, top, far, low, wide, tall, pocket)]
    [0, 0, 3, 4, 5, 6, 7]
    """
    sx, sy, sw, sh = s.box
    for o in leaves:
        if abs(s.fill[0] - o.fill[0]) > CUT_FILL_DIFF_MAX:
            continue
        ox, oy, ow, oh = o.box
        stacked = not (sx < ox - gap or sx + sw > ox + ow + gap or sh > oh) and (
            sy + sh / 2 < oy and sy + sh >= oy - gap or sy + sh / 2 > oy + oh and sy <= oy + oh + gap)
        beside = not (sy < oy - gap or sy + sh > oy + oh + gap or sh > oh or sh < END_HEIGHT * oh
                      or sw > END_WIDTH * sh) and (
            sx + sw / 2 < ox and sx + sw >= ox - gap or sx + sw / 2 > ox + ow and sx <= ox + ow + gap)
        if stacked or beside:
            hull = cv2.convexHull(np.concatenate([s.contour, o.contour]))
            if cv2.contourArea(hull) <= 1.25 * (s.area + o.area):
                return o
    return None


def _union(regions: list, gap: int) -> tuple[np.ndarray, tuple[int, int, int, int], float, np.ndarray]:
    """One region made of several (closed across the lines between them)."""
    if len(regions) == 1:
        return regions[0]
    x0 = min(r[1][0] for r in regions) - gap
    y0 = min(r[1][1] for r in regions) - gap
    x1 = max(r[1][0] + r[1][2] for r in regions) + gap
    y1 = max(r[1][1] + r[1][3] for r in regions) + gap
    m = np.zeros((y1 - y0, x1 - x0), np.uint8)
    for _, (x, y, w, h), _, filled in regions:
        m[y - y0:y - y0 + h, x - x0:x - x0 + w] |= filled
    m = _close(m, 2 * gap + 1)
    contours, _ = cv2.findContours(m, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    cnt = max(contours, key=cv2.contourArea)
    bx, by, bw, bh = cv2.boundingRect(cnt)
    filled = np.zeros((bh, bw), np.uint8)
    cv2.drawContours(filled, [cnt - np.array([[bx, by]])], -1, 1, thickness=cv2.FILLED)
    return cnt + np.array([[x0, y0]], dtype=np.int32), (bx + x0, by + y0, bw, bh), float(filled.sum()), filled


#: a box's sides are straight lines at least this many letter heights long
BOX_SIDE_MIN = 3


def find_boxes(lines: np.ndarray, lw: int, th: int) -> list[tuple[int, int, int, int]]:
    """Axis-aligned rectangles drawn in the line layer, as (x0, y0, x1, y1) of their outline:
    every tool draws a container (a Graphviz cluster, a PlantUML package, a Mermaid subgraph)
    so. Found from straight runs of ink: two vertical runs that start on one horizontal run (the
    top; a connector running on along it may make it longer), and a horizontal run along the
    lower end of the shorter one (a connector may run on from the other). Unlike the
    paper inside a box, its outline is not cut by the connectors that run through it.

    >>> m = np.zeros((120, 200), bool); m[10:12, 20:181] = m[100:102, 20:181] = True
    >>> m[10:102, 20:22] = m[10:102, 179:181] = True; m[50:52, 0:200] = True   # a box, a line across
    >>> find_boxes(m, 2, 12)
    [(20, 10, 180, 101)]
    >>> m[0:10, 20:22] = True   # a connector running on up from its left side
    >>> find_boxes(m, 2, 12)
    [(20, 10, 180, 101)]
    >>> m[0:102, 60:62] = True  # a connector crossing the top and the bottom
    >>> find_boxes(m, 2, 12)
    [(20, 10, 180, 101)]
    """
    if th <= 0:
        return []
    side = max(BOX_SIDE_MIN * th, 8 * lw) | 1    # odd: an opening by an even kernel shifts the runs
    u8 = lines.view(np.uint8) if lines.dtype == np.bool_ else (lines > 0).astype(np.uint8)
    gap = 2 * lw + 3          # (odd) dashed outlines: close the gaps between dashes along the line first

    def along(horizontal: bool) -> np.ndarray:
        """The straight runs of ink at least ``side`` long in one direction."""
        shape = (lambda n: (n, 1)) if horizontal else (lambda n: (1, n))
        closed = cv2.morphologyEx(u8, cv2.MORPH_CLOSE, cv2.getStructuringElement(cv2.MORPH_RECT, shape(gap)))
        return cv2.morphologyEx(closed, cv2.MORPH_OPEN, cv2.getStructuringElement(cv2.MORPH_RECT, shape(side)))

    hrun, vrun = along(True), along(False)
    thin = 3 * lw + 2

    def runs(mask: np.ndarray, horizontal: bool) -> np.ndarray:
        n, _, stats, _ = components(mask)
        x, y, w, h = (stats[1:, i] for i in range(4))
        ok = (h <= thin) if horizontal else (w <= thin)
        return np.stack([x, y, x + w - 1, y + h - 1], axis=1)[ok] if n > 1 else np.zeros((0, 4), int)

    hs, vs = runs(hrun, True), runs(vrun, False)
    if not len(hs) or not len(vs):
        return []
    tol = 2 * lw + 3
    out = []
    for hx0, hy0, hx1, hy1 in hs:
        # vertical runs starting on this run (at a corner, or a letter height lower and further
        # out for a rounded one), or, for one of the two, running on a little above it where the
        # top ends (a connector crossing the corner steeply; not one crossing the top): the sides
        # of boxes whose top it is
        dy = vs[:, 1] - hy0
        on = (dy <= tol + th) & (vs[:, 3] >= hy0 + side) & (vs[:, 0] >= hx0 - tol - th) & (vs[:, 2] <= hx1 + tol + th)
        sides = vs[on][np.argsort(vs[on][:, 0], kind="stable")]
        for i, (lx0, ly0, lx1, ly1) in enumerate(sides):
            for rx0, ry0, rx1, ry1 in sides[i + 1:]:
                if rx1 - lx0 < side or max(ly0, ry0) < hy0 - tol:
                    continue
                if ly0 < hy0 - tol and (hx0 < lx0 - tol or ly0 < hy0 - 2 * th) or \
                        ry0 < hy0 - tol and (hx1 > rx1 + tol or ry0 < hy0 - 2 * th):
                    continue    # a line running on above the top is a side only where the top ends at it
                x0, y0, x1 = int(lx0), int(hy0), int(rx1)
                # the bottom at the end of the shorter side (a line may run on from the other), as far
                # below it as that side starts below the top (a rounded corner)
                top, end = (ly0, ly1) if ly1 <= ry1 else (ry0, ry1)
                y1 = int(end + max(0, top - hy0))
                if y1 - y0 < side:
                    continue
                bottom = hrun[max(0, y1 - tol):y1 + tol + 1, x0 + th:x1 - th + 1].any(axis=0)
                if bottom.size and bottom.mean() >= 0.9:
                    out.append((x0, y0, x1, y1))
                    break   # the nearest right side that closes the box
    return sorted(set(out))


def with_boxes(regions: list, boxes: list[tuple[int, int, int, int]],
               lw: int) -> tuple[list, set[tuple[int, int, int, int]]]:
    """``regions`` (:func:`find_regions`) with the inside of every box of ``boxes`` (:func:`find_boxes`)
    as one region, in place of the pieces the connectors running through it cut it into. A box whose
    inside is a region already (in one piece, a box itself) adds nothing; a piece is a region within the box that
    reaches its outline (a shape inside has an outline of its own between it and the box's).
    Returns the regions and the boxes (x, y, w, h) of those that are the inside of a drawn box.

    >>> sq = lambda x, y, w, h: (np.array([[[x, y]], [[x + w - 1, y]], [[x + w - 1, y + h - 1]], [[x, y + h - 1]]],
    ...                                  np.int32), (x, y, w, h), float(w * h), np.ones((h, w), np.uint8))
    >>> cut = [sq(22, 12, 80, 88), sq(104, 12, 75, 88), sq(40, 40, 30, 20)]   # two halves, a shape inside
    >>> regions, drawn = with_boxes(cut, [(20, 10, 180, 101)], 2)
    >>> [r[1] for r in regions], drawn
    ([(40, 40, 30, 20), (22, 12, 157, 88)], {(22, 12, 157, 88)})
    """
    tol = 2 * lw + 3
    out = list(regions)
    drawn: set[tuple[int, int, int, int]] = set()
    for x0, y0, x1, y1 in boxes:
        ix0, iy0, ix1, iy1 = x0 + lw, y0 + lw, x1 - lw, y1 - lw
        if ix1 - ix0 < 2 * tol or iy1 - iy0 < 2 * tol:
            continue
        same = next((r[1] for r in out if abs(r[1][0] - ix0) <= tol and abs(r[1][1] - iy0) <= tol
                     and abs(r[1][0] + r[1][2] - 1 - ix1) <= tol and abs(r[1][1] + r[1][3] - 1 - iy1) <= tol
                     and solidity(r[0]) >= CONTAINER_SOLIDITY_MIN), None)
        if same is not None:
            drawn.add(same)
            continue

        def piece(box: tuple[int, int, int, int]) -> bool:
            bx, by, bw, bh = box
            if bx < ix0 - tol or by < iy0 - tol or bx + bw - 1 > ix1 + tol or by + bh - 1 > iy1 + tol:
                return False
            edge = lw + 2
            return bx <= ix0 + edge or by <= iy0 + edge or bx + bw - 1 >= ix1 - edge or by + bh - 1 >= iy1 - edge

        out = [r for r in out if not piece(r[1])]
        w, h = ix1 - ix0 + 1, iy1 - iy0 + 1
        cnt = np.array([[[ix0, iy0]], [[ix1, iy0]], [[ix1, iy1]], [[ix0, iy1]]], np.int32)
        out.append((cnt, (ix0, iy0, w, h), float(w * h), np.ones((h, w), np.uint8)))
        drawn.add((ix0, iy0, w, h))
    return out, drawn
