"""Connectors drawn in other colours than d2's blue, and dashed strokes bridged into lines.

A D2 file can set a connector's colour (``style.stroke``) and dash it (``style.stroke-dash``):
a data-flow class drawn dashed in grey is common. Grey is also the colour of d2's edge labels,
so colour alone cannot tell such a connector from text. What does: text is where OCR read
words (less the runs of dashes tesseract reads as words); a line is a long piece of the
non-blue ink that is thin (its area about a line's width times its length), a letter is short.

Dashes, of any colour, are joined along their own direction: each short piece of stroke a
line's width across and longer than wide is followed from both ends, straight on, until it
meets stroke again (another dash, a longer line, a solid blob such as an arrowhead; not a
letter) within a gap a little longer than d2's longest dash gap; the gap is then drawn in.
An edge label's box stops the walk (d2 leaves a gap in the line there, and the joins across
labels pair the pieces on either side).
"""
from __future__ import annotations

import cv2
import numpy as np

from benchmark.extract.components import PixelLabels, component_labels, component_pixels, nonzero
from benchmark.extract.connectors import head_opening
from benchmark.extract.raster import Raster

#: lightest luminance of a pixel taken for a line of another colour (the light greys d2 files
#: use for secondary connectors, ``#9ca3af``, are about 160)
LINE_LUM_MAX = 200
#: a saturated colour (channel spread) counts as a line however light it is
LINE_SPREAD_MIN = 100
#: the longest gap between dashes that is bridged, in line widths (d2 draws a ``stroke-dash: N``
#: gap about N line widths long; the bundled diagrams use N <= 6)
DASH_GAP_MAX = 8
#: longest piece taken for a dash, in line widths
DASH_LEN_MAX = 16
#: a piece of non-blue ink is a line when its area is at most this many times its bounding
#: box's half perimeter times the line width (a line: about 1; a word: several)
THINNESS_MAX = 1.6
#: and when it reaches this far, in line widths (shorter pieces are text OCR did not read)
LINE_SPAN_MIN = 10
#: a word is a run of dashes when this share of its ink lies on lines
LINE_WORD_SHARE = 0.8


def drawn_strokes(r: Raster, words: list) -> tuple[np.ndarray, set[int], np.ndarray]:
    """The image's stroke mask with lines of any colour added and their dashes bridged (bool),
    the indices of the ``words`` that are pieces of those lines, not text (tesseract reads a
    run of dashes as ``---``, ``eee`` or ``1``, and a grey arrowhead as ``v``: :func:`_head_words`),
    and the mask of the bridged gaps (uint8).

    ``words`` are the OCR words (image coordinates of ``r``).

    Non-blue ink is bridged along its dashes and split into pieces: a piece that reaches
    :data:`LINE_SPAN_MIN` line widths and is thin is a line. A word is a run of dashes when
    most of its ink lies on lines and in dashes or pieces reaching out of its box (a letter
    lies within its word's box); the other words are text. The dashes are then bridged again,
    now stopping at the boxes of grey text (edge labels) and leaving the letters in text alone,
    and the pieces kept are the lines, less what lies in an edge label's box and less lines
    lying within text (letters that bridging joined up), and the shorter pieces outside text
    (an arrowhead, the stub of a line beside a label).
    """
    lw = max(1, r.line_width)
    h, w = r.shape
    other = _other_ink(r)
    boxes = [(max(0, wd.x - lw), max(0, wd.y - lw), min(w, wd.x + wd.w + lw), min(h, wd.y + wd.h + lw))
             for wd in words]
    walks = dash_walks(other | r.stroke.view(np.uint8), lw)   # dashes of any colour, blue too
    # pass 1: which words are runs of dashes: their ink lies on lines, in dashes or in pieces
    # reaching out of the word's box (a letter lies within its word's box)
    pieces, pstats = walks.labels, walks.stats
    px0, py0 = pstats[:, cv2.CC_STAT_LEFT], pstats[:, cv2.CC_STAT_TOP]
    px1, py1 = px0 + pstats[:, cv2.CC_STAT_WIDTH], py0 + pstats[:, cv2.CC_STAT_HEIGHT]
    cands = []
    for i, (x0, y0, x1, y1) in enumerate(boxes):
        on = other[y0:y1, x0:x1] > 0
        sy, sx = nonzero(on)
        piece = pieces.at(sy + y0, sx + x0)
        out_of_box = (px0 < x0) | (py0 < y0) | (px1 > x1) | (py1 > y1)
        if piece.size and (walks.dash[piece] | out_of_box[piece]).mean() >= LINE_WORD_SHARE:
            cands.append(i)
    line_words = set()
    if cands:
        n, stats, labels = component_labels(other | walks.bridges())
        line = _lines(stats, lw)
        for i in cands:
            x0, y0, x1, y1 = boxes[i]
            sy, sx = nonzero(other[y0:y1, x0:x1])
            ink = labels.at(sy + y0, sx + x0)
            if line[ink].mean() >= LINE_WORD_SHARE:
                line_words.add(i)
    line_words |= _head_words(words, boxes, other, lw)
    # pass 2: bridged again, stopping at edge labels
    text = np.zeros((h, w), np.uint8)
    grey = np.zeros((h, w), np.uint8)
    for i, (x0, y0, x1, y1) in enumerate(boxes):
        if i not in line_words:
            text[y0:y1, x0:x1] = 1
            if getattr(words[i], "grey", False):
                grey[y0:y1, x0:x1] = 1
    bridges = walks.bridges(stop=grey, text=text)
    other |= bridges
    n, stats, ys, xs, lab = component_pixels(other)
    line = _lines(stats, lw)
    in_text = text[ys, xs] > 0
    text_share = np.bincount(lab, in_text, minlength=n) / np.maximum(stats[:, cv2.CC_STAT_AREA], 1)
    line &= text_share < 0.9
    span = np.maximum(stats[:, cv2.CC_STAT_WIDTH], stats[:, cv2.CC_STAT_HEIGHT])
    short = (span < LINE_SPAN_MIN * lw) & (text_share < 0.5)
    # a line bridged across a label (a dashed connector over a container's title) joins the letters it
    # touches: they are not kept with it (its own pixels, drawn over them in its lighter colour, are)
    letter = in_text & (r.lum[ys, xs] <= LETTER_LUM_MAX)
    keep = (line[lab] & (grey[ys, xs] == 0) & ~letter) | (short[lab] & ~in_text)
    out = r.stroke.copy()
    out[ys[keep], xs[keep]] = True
    return out, line_words, bridges


#: darkest ink of a line of another colour (d2's grey connectors): labels are darker (near-black)
LETTER_LUM_MAX = 80
#: longest word that may be an arrowhead tesseract read as a letter
HEAD_WORD_LEN = 2
#: share of its ink a head keeps under the opening that keeps heads; letters are strokes a line
#: wide and keep less than half
SOLID_SHARE = 0.5


def _head_words(words: list, boxes: list[tuple[int, int, int, int]], other: np.ndarray, lw: int) -> set[int]:
    """The words that are arrowheads of connectors in another colour (a grey dashed data flow's
    head read as ``v``, ``у`` or ``^^``): one or two characters of grey ink, most of which is solid
    (kept by the opening that finds heads, :func:`.connectors.arrowheads`)."""
    k = head_opening(lw)
    element = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k))
    out = set()
    for i, wd in enumerate(words):
        if len(wd.text) > HEAD_WORD_LEN or getattr(wd, "ink", 0.0) <= LETTER_LUM_MAX:
            continue
        x0, y0, x1, y1 = boxes[i]
        ink = other[y0:y1, x0:x1]
        n = cv2.countNonZero(ink)
        if n and cv2.countNonZero(cv2.morphologyEx(ink, cv2.MORPH_OPEN, element)) >= SOLID_SHARE * n:
            out.add(i)
    return out


def _lines(stats: np.ndarray, lw: int) -> np.ndarray:
    """Which components (``connectedComponentsWithStats`` rows) are lines: long and thin."""
    cw, ch, ca = stats[:, cv2.CC_STAT_WIDTH], stats[:, cv2.CC_STAT_HEIGHT], stats[:, cv2.CC_STAT_AREA]
    line = (np.maximum(cw, ch) >= LINE_SPAN_MIN * lw) & (ca <= THINNESS_MAX * lw * (cw + ch))
    line[0] = False
    return line


def _other_ink(r: Raster) -> np.ndarray:
    """uint8 mask of ink that is not d2's blue: dark or grey, or a saturated colour."""
    rgb = np.ascontiguousarray(r.rgb)
    # the channels taken alone and the rest written over them (see :func:`.raster.stroke_colour`)
    c0, c1, c2 = (cv2.extractChannel(rgb, i) for i in range(3))
    high = cv2.max(c0, c1)
    high = cv2.max(high, c2, dst=high)
    low = cv2.min(cv2.min(c0, c1, dst=c0), c2, dst=c0)
    spread = cv2.subtract(high, low, dst=high)
    ink = (r.lum < LINE_LUM_MAX) | (spread >= LINE_SPREAD_MIN)
    ink &= ~r.stroke
    return ink.view(np.uint8)


class DashWalks:
    """Walks straight on from both ends of every dash to the next stroke (see :func:`dash_walks`)."""

    def __init__(self, shape: tuple[int, int], lw: int, starts: np.ndarray, ix: np.ndarray, iy: np.ndarray,
                 first: np.ndarray, in_line: np.ndarray, labels: PixelLabels | None = None,
                 stats: np.ndarray | None = None, dash: np.ndarray | None = None) -> None:
        self.shape, self.lw, self.starts, self.ix, self.iy = shape, lw, starts, ix, iy
        self.first, self.in_line = first, in_line
        self.labels, self.stats, self.dash = labels, stats, dash   # the pieces before bridging

    def bridges(self, stop: np.ndarray | None = None, text: np.ndarray | None = None) -> np.ndarray:
        """uint8 mask of the bridged gaps. A walk that steps in ``stop`` bridges nothing; one that
        starts in ``text`` only the gap to the next dash in line with its own (a line drawn
        across a title; a letter's stem, walking on, meets an outline or nothing)."""
        out = np.zeros(self.shape, np.uint8)
        for k in np.nonzero(self.first > 0)[0]:
            t = int(self.first[k])
            if stop is not None and stop[self.iy[k, :t + 1], self.ix[k, :t + 1]].any():
                continue
            if text is not None and not self.in_line[k] and text[self.iy[k, 0], self.ix[k, 0]]:
                continue
            b = (int(self.ix[k, t]), int(self.iy[k, t]))
            cv2.line(out, (int(self.starts[k, 0]), int(self.starts[k, 1])), b, 1, thickness=self.lw)
        return out


def dash_walks(mask: np.ndarray, lw: int, more: np.ndarray | None = None) -> DashWalks:
    """From both ends of every dash (a short, elongated piece of ``mask``), the walk straight on
    to the next stroke (of ``mask`` or ``more``) within :data:`DASH_GAP_MAX` line widths.

    >>> m = np.zeros((20, 80), np.uint8)
    >>> for x0 in range(4, 70, 12): m[9:11, x0:x0 + 6] = 1
    >>> bool((m | dash_walks(m, 2).bridges())[9:11, 4:70].all())
    True
    """
    h, w = mask.shape
    none = DashWalks((h, w), lw, np.zeros((0, 2)), np.zeros((0, 1), np.int32), np.zeros((0, 1), np.int32),
                     np.zeros(0, np.int64), np.zeros(0, bool))
    n, stats, ys, xs, lab = component_pixels(mask)
    labels = PixelLabels(mask.shape, ys, xs, lab)
    none.labels, none.stats, none.dash = labels, stats, np.zeros(n, bool)
    if n <= 2:
        return none
    size = np.maximum(stats[:, cv2.CC_STAT_WIDTH], stats[:, cv2.CC_STAT_HEIGHT])
    small = (size <= DASH_LEN_MAX * lw) & (stats[:, cv2.CC_STAT_AREA] <= 2 * DASH_LEN_MAX * lw * lw)
    small[0] = False
    if not small.any():
        return none
    keep = small[lab]
    ys, xs, lab = ys[keep], xs[keep], lab[keep]   # the pixels of the small pieces
    xs, ys = xs.astype(np.float64), ys.astype(np.float64)
    cnt = np.bincount(lab, minlength=n).astype(np.float64)
    cnt[cnt == 0] = 1
    mx, my = np.bincount(lab, xs, n) / cnt, np.bincount(lab, ys, n) / cnt
    dx, dy = xs - mx[lab], ys - my[lab]
    cxx, cyy, cxy = (np.bincount(lab, dx * dx, n) / cnt, np.bincount(lab, dy * dy, n) / cnt,
                     np.bincount(lab, dx * dy, n) / cnt)
    tr, det = cxx + cyy, cxx * cyy - cxy * cxy
    disc = np.sqrt(np.maximum(0.0, tr * tr / 4 - det))
    l1, l2 = tr / 2 + disc, np.maximum(0.0, tr / 2 - disc)
    theta = 0.5 * np.arctan2(2 * cxy, cxx - cyy)
    half = np.sqrt(3 * l1)
    # elongated and a line's width across (a dash of two line widths' length is twice as long
    # as wide; a letter is wider)
    dash = small & (l1 >= 2.5 * l2 + 0.05) & (2 * half >= 1.5 * lw) & (np.sqrt(12 * l2) <= 1.5 * lw + 1)
    idx = np.nonzero(dash)[0]
    none.dash = dash
    if len(idx) == 0:
        return none
    ux, uy = np.cos(theta[idx]), np.sin(theta[idx])
    sx = np.concatenate([mx[idx] + half[idx] * ux, mx[idx] - half[idx] * ux])
    sy = np.concatenate([my[idx] + half[idx] * uy, my[idx] - half[idx] * uy])
    vx, vy = np.concatenate([ux, -ux]), np.concatenate([uy, -uy])
    own = np.concatenate([idx, idx])[:, None]
    gap = DASH_GAP_MAX * lw
    steps = np.arange(0, gap + 2 * lw + 1, dtype=np.float64)
    px = sx[:, None] + vx[:, None] * steps[None, :]
    py = sy[:, None] + vy[:, None] * steps[None, :]
    inside = (px >= 0) & (px <= w - 1) & (py >= 0) & (py <= h - 1)
    ix = np.clip(np.round(px).astype(np.int32), 0, w - 1)
    iy = np.clip(np.round(py).astype(np.int32), 0, h - 1)
    # what a walk may end on: another dash, a longer line, a solid blob (an arrowhead), but
    # not a letter (thin and compact)
    solid = cv2.erode(mask, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (lw + 2, lw + 2)))
    target = np.zeros(n, bool)
    target[np.unique(labels.at(*nonzero(solid)))] = True
    target[idx] = True
    target |= size > DASH_LEN_MAX * lw
    target[0] = False
    hit = np.zeros(ix.shape, bool)
    hit_lab = np.zeros(ix.shape, np.int32)
    for off in (-1.0, 0.0, 1.0):   # stroke straight ahead or one pixel to either side
        ox = np.clip(np.round(px - vy[:, None] * off).astype(np.int32), 0, w - 1)
        oy = np.clip(np.round(py + vx[:, None] * off).astype(np.int32), 0, h - 1)
        lab_at = labels.at(oy, ox)
        on = target[lab_at] & (lab_at != own)
        hit_lab = np.where(on & (hit_lab == 0), lab_at, hit_lab)
        hit |= on
        if more is not None:
            hit |= more[oy, ox] > 0
    hit &= inside
    counted = np.cumsum((labels.at(iy, ix) != own) & ~hit, axis=1)   # steps off the dash itself
    ok = hit & (counted <= gap)
    first = np.where(ok.any(axis=1), ok.argmax(axis=1), -1)
    starts = np.stack([np.round(sx), np.round(sy)], axis=1)
    # does the walk end on a dash lying in line with its own (the next dash of the same line)?
    end_lab = hit_lab[np.arange(len(first)), np.maximum(first, 0)]
    dash_dir = np.zeros((n, 2))
    dash_dir[idx] = np.stack([ux, uy], axis=1)
    in_line = np.abs((dash_dir[end_lab] * np.stack([vx, vy], axis=1)).sum(axis=1)) >= 0.9
    return DashWalks((h, w), lw, starts, ix, iy, first, in_line & (end_lab > 0), labels, stats, dash)
