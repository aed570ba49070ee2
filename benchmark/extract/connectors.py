"""Connectors between shapes: stroke pixels outside the shapes, traced, joined and attached.

1. The connector mask is the stroke colour minus every leaf shape (dilated past its outline) and
   minus the outline ring of every container (connectors do run inside containers).
2. Arrowheads are the filled blobs that survive an opening wider than the line; they are
   cut out and remembered.
3. The rest is thinned and traced into chains (:mod:`.skeleton`).
4. Chain ends are attached to the shape whose outline they touch (an arrowed end by its tip).
   Ends that are not at a leaf shape are joined to a collinear partner when one is close:
   across an edge label's box (d2 breaks the line there), across a container's outline, or
   across text drawn over the line; ends at a container's outline are measured along their
   piece behind the hook the outline's cut leaves in a line crossing it at a shallow angle, and
   the cut's long gap is bridged. Two arrowless ends facing each other across a shape, with
   the stroke running on over it between them, are one connector drawn through that shape (grid
   layouts draw straight connectors over the shapes in their way). An end still loose where connectors fanned out of one
   side of a shape is followed along the stroke to that shape. Chains whose two ends reach
   shapes become edges. Unlabelled repeats of an edge between the same two shapes are dropped.
   Labels go to the edges whose middle lies nearest them, among those passing through or beside
   their box (d2 centres a label on its connector and blanks its box out of every connector).
5. A grid layout (:mod:`.straight`) draws straight lines from shape centre to shape centre over the
   shapes between: when the drawing is one, those lines replace the traced edges between its
   cells, and traced edges within a container's cell that lie along them are dropped.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Iterator

import cv2
import numpy as np

from benchmark.extract.components import (component_labels, component_pixels, component_stats, components,
                                          enclosed_regions, nonzero)
from benchmark.extract.labels import Block
from benchmark.extract.raster import Raster, stroke_colour
from benchmark.extract.shapes import Shape
from benchmark.extract.skeleton import Chain, path_tips, split_at_reversal, thin, trace
from benchmark.extract.straight import ancestors, cells_of, is_grid, straight_lines


@dataclass
class RawEdge:
    """An edge between two shape indices; ``head_*`` says where arrowheads are."""

    a: int
    b: int
    head_a: bool
    head_b: bool
    points: np.ndarray
    label: str = ""
    label_block: int | None = None
    route: np.ndarray | None = None        # the connector's path from end a to end b, in order
    crossed: list[int] = field(default_factory=list)   # label blocks whose gap it was joined across
    under_label: tuple[bool, bool] = (False, False)    # whether end a, end b lies under an edge label


@dataclass
class _End:
    chain: int
    which: int
    point: np.ndarray              # where the stroke ends (or the arrow tip)
    direction: np.ndarray          # unit vector pointing out of the chain
    arrow: bool = False
    shape: int | None = None       # attached shape index
    at_container: bool = False
    joined: bool = False
    label_boxes: list[int] = field(default_factory=list)
    through: int | None = None     # index of the end across a shape the line runs through
    line: tuple[np.ndarray, np.ndarray] | None = None   # (point, direction) behind a hook at an outline
    head_size: int = 0             # pixels of the arrowhead blob it was given (0: none, or not by blob)
    head_tip: np.ndarray | None = None   # the tip of that blob (where its point was set)
    behind: np.ndarray | None = None     # the line's direction behind a stub turned off it (:func:`behind_direction`)


#: smallest arrowhead core (after the opening), in opening areas, for heads drawn at d2's default
#: scale (about 2 areas) and at the reduced scale of large diagrams (``render.png_scale``: about
#: 0.9 to 1.3); two lines crossing at a shallow angle, or meeting an outline, leave about 0.7
HEAD_CORE_MIN, HEAD_CORE_MAX = 0.8, 1.2
#: a traced piece is read as straight (:func:`straight_line`) when it is at least this many line
#: widths long
STRAIGHT_MIN = 8
#: two straight pieces lie along one line when their directions, and the gap between their
#: ends, agree to this cosine (about 2.5 degrees)
IN_LINE_COS = 0.999


def connector_mask(r: Raster, shapes: list[Shape]) -> np.ndarray:
    """Stroke pixels that are not part of a shape outline (uint8 0/1)."""
    lw = r.line_width
    h_img, w_img = r.shape
    zone = np.zeros((h_img, w_img), np.uint8)
    grow = lw + 3
    kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * grow + 1, 2 * grow + 1))
    for s in shapes:
        x, y, w, h = s.box
        pad = grow + 2
        x0, y0 = max(0, x - pad), max(0, y - pad)
        x1, y1 = min(w_img, x + w + pad), min(h_img, y + h + pad)
        filled = np.zeros((y1 - y0, x1 - x0), np.uint8)
        cv2.drawContours(filled, [s.contour - np.array([[x0, y0]])], -1, 1, thickness=cv2.FILLED)
        grown = cv2.dilate(filled, kernel)
        if s.is_container:
            inner = cv2.erode(filled, cv2.getStructuringElement(cv2.MORPH_RECT, (3, 3)))
            grown = grown & (1 - inner)
        zone[y0:y1, x0:x1] |= grown
    mask = r.stroke.astype(np.uint8) & (1 - zone)
    n, stats, ys, xs, lab = component_pixels(mask)
    small = np.nonzero(stats[:, cv2.CC_STAT_AREA] < 3 * lw * lw)[0]
    if len(small) > 1:
        gone = np.zeros(n, bool)
        gone[small[small > 0]] = True
        keep = gone[lab]
        mask[ys[keep], xs[keep]] = 0
    return mask


def fill_small_holes(mask: np.ndarray, max_area: int) -> np.ndarray:
    """The mask with enclosed holes smaller than ``max_area`` filled (the sketch style draws
    arrowheads as outlined triangles): every 4-connected component of its zeros of at most
    ``max_area`` pixels, one that touches the image's edge too, is set to 1.

    The holes are the regions the zeros of the mask framed with ink enclose
    (:func:`.components.enclosed_regions`): the frame encloses the zeros the image's edge touches as
    ink does, and only the borders of holes that small are labelled.

    >>> m = np.zeros((9, 9), np.uint8); m[2:7, 2:7] = 1; m[4, 4] = 0
    >>> int(fill_small_holes(m, 4)[4, 4])
    1
    """
    framed = cv2.copyMakeBorder(mask, 1, 1, 1, 1, cv2.BORDER_CONSTANT, value=1)
    out = None
    for x, y, _, _, _, hole in enclosed_regions((framed == 0).view(np.uint8), max_area=max_area):
        if out is None:
            out = mask.copy()
        ys, xs = nonzero(hole)
        out[ys + (y - 1), xs + (x - 1)] = 1
    return mask if out is None else out


def outline_band(shapes: list[Shape], shape_hw: tuple[int, int], lw: int) -> np.ndarray:
    """uint8 mask of the shapes' outlines drawn as lines a little wider than the stroke."""
    band = np.zeros(shape_hw, np.uint8)
    cv2.drawContours(band, [s.contour for s in shapes], -1, 1, thickness=2 * lw + 1)
    return band


def head_opening(lw: int) -> int:
    """The size of the opening that keeps arrowheads' cores: wider than a line (lines are ``lw``
    wide, the sketch style's a little more)."""
    return max(5, 2 * lw - 1)


def arrowheads(mask: np.ndarray, lw: int, outline: np.ndarray | None = None,
               outline_distance: OutlineDistance | None = None,
               dashed: np.ndarray | None = None,
               container_distance: OutlineDistance | None = None,
               measure: np.ndarray | None = None,
               lone: bool = False) -> tuple[list[np.ndarray], np.ndarray]:
    """Arrowhead blobs (their stroke pixels, x y) and the mask with them cut out.

    The opening keeps only what is wider than a line: the cores of the filled triangles. Every
    stroke pixel near a core (its thin corners, the line's last stretch) belongs to the head.
    A head that ends in a notch of a shape (a person's neck) merges with the outline's corner
    into one elongated core; with ``outline`` (:func:`outline_band`) given, such a core is opened
    again without the outline, and the compact piece left is the head. So is a core lying near an
    outline all over (a wedge, see :func:`_on_outline`) but more than ``HEAD_CORE_ONE`` opening
    areas large: a head arriving along the side of a notch (a person's shoulder) into its end. With
    ``outline_distance`` (:class:`OutlineDistance` of every shape), a core lying wholly on a shape's
    outline is where a line meets or crosses a thick outline (the sketch style's rough strokes), not
    a head: a head only touches the outline with its tip and reaches a head's length away from it.
    With ``dashed`` (the gaps bridged between dashes), an elongated core on a bridged gap is a
    dashed line the bridging drew wider than the opening, running into its head: the head is
    what is left when it is opened a little wider (:func:`_wide_part`). With
    ``container_distance`` (:class:`OutlineDistance` of the containers alone), a compact,
    head-sized core away from every container's outline needs less reach off an outline
    (:func:`_on_outline`).

    Outlines thicker than the lines (:func:`thick_outlines`: the sketch style's strokes drawn twice)
    survive the opening, and a head arriving along one joins its stretch of outline into one core
    larger than any head: with ``outline_distance`` given, the head is found in such a core as in
    an elongated one, the outline taken out, when what is left is ``OFF_THICK_OUTLINE`` least cores
    large. A head ending in a notch of such an outline (a person's neck) loses its core with the
    outline's band: the head is then what is left opened a little wider, as on a dashed line.

    With ``outline_distance`` given, a core too large for a head that is not an outline's may be
    a bundle: connectors drawn into one point of a shape, run together into one stroke as wide
    as the opening, up to a head they share (:func:`_bundle_head`).

    With ``lone``, a core smaller than the image's heads is a head when it stands alone
    (:func:`_lone_core`: one stroke or none leaves it, outlines aside): a grey dashed connector's
    head, drawn smaller than d2's blue ones, has only its line's last dash behind it, where lines
    crossing leave three or four arms.
    """
    k = head_opening(lw)
    element = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k))
    opened = cv2.morphologyEx(mask, cv2.MORPH_OPEN, element)
    n, stats, labels = component_labels(opened)
    # the image's head size and whether its outlines are thick are measured on ``measure`` when given
    m_opened, m_stats = opened, stats
    if measure is not None:
        m_opened = cv2.morphologyEx(measure, cv2.MORPH_OPEN, element)
        m_stats = component_stats(m_opened)[1]
    least = head_core_min(m_stats[1:], k, lw)
    thick = outline_distance is not None and outline is not None and thick_outlines(m_opened, outline)
    blobs = []
    cut = mask.copy()
    reach = 2 * lw + 2
    grow = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * reach + 1, 2 * reach + 1))
    exact = max(OFF_OUTLINE * k, 2 * lw)   # the farthest from an outline either distance is read
    h_img, w_img = mask.shape
    for i in range(1, n):
        x, y, w, h, a = (int(v) for v in stats[i])
        # smaller cores are where lines cross or meet an outline, but for a small head standing alone
        # (a grey dashed connector's, drawn a little smaller than the blue ones)
        if a < least and not (lone and a >= LONE_HEAD_MIN * k * k
                              and _lone_core(mask, outline, stats[i], k)):
            continue
        # a small core with lines leaving it on opposite sides, away from every outline, is where lines
        # run together on their way (two connectors merging into one stroke), not a head at a line's end
        if lone and outline_distance is not None and a < THROUGH_CORE * least and \
                _runs_through(mask, outline_distance, stats[i], k, lw):
            continue
        # a larger core is lines run together, or (a rough outline thicker than the opening) an
        # outline with a head arriving along it: the head is what is left without the outline
        big = max(w, h) > 12 * lw
        # on d2's drawings such a core may be two connectors drawn into one point, run together up
        # to one head: the head is sought at its end (:func:`_bundle_head`)
        bundle = big and not thick
        if bundle and outline_distance is None:
            continue
        x0, y0 = max(0, x - reach), max(0, y - reach)
        x1, y1 = min(w_img, x + w + reach), min(h_img, y + h + reach)
        core = (labels.box(x0, y0, x1, y1) == i).astype(np.uint8)
        # a compact head-sized core away from the containers' outlines (where lines cross them),
        # where the opening is wider than the line calls for, may lie close along a shape's
        # outline: a head arriving at a shallow angle. Its area is weighed against the image's
        # head size (an image of larger heads raises the least core taken for one)
        sure = a / max(1.0, least / (HEAD_CORE_MIN * k * k)) if container_distance is not None and \
            k > 2 * lw - 1 and float(container_distance.window(y0, y1, x0, x1, exact)[core > 0].min()) > 2 * lw \
            and _compact(core, COMPACT_MAX_THICK if thick else COMPACT_MAX) else 0.0
        near = outline_distance.window(y0, y1, x0, x1, exact) if outline_distance is not None else None
        if near is not None and _on_outline(core, near, k, sure):
            # a head arriving along a side of a shape's notch (a person's neck) at a shallow angle
            # lies near the outline all over, and is larger than a wedge: what is left of it without
            # the outline's band is still a head's core
            off = None if outline is None or thick or big or a < HEAD_CORE_ONE * k * k else \
                _core_off_outline(mask[y0:y1, x0:x1], outline[y0:y1, x0:x1], core, k, least)
            if off is None:
                continue
            core = off
        if bundle:
            head = _bundle_head(core, near, k, lw, least, exact)
            if head is None and outline is not None:
                head = _stacked_heads(core, outline[y0:y1, x0:x1], k, lw, least)
            if head is None:
                continue
            core = head
        elif big or _elongated(core):
            if outline is None:
                continue  # an elongated core is where several connectors run together, not a head
            # a head along a thick outline keeps a head's core: smaller pieces are its rough strokes
            off = _core_off_outline(mask[y0:y1, x0:x1], outline[y0:y1, x0:x1], core, k,
                                    OFF_THICK_OUTLINE * least if big else 0.0)
            if off is None and (thick or (dashed is not None and (dashed[y0:y1, x0:x1] & core).any())):
                # a head ending in a notch of a thick outline (a person's neck, the sketch style)
                # loses its core with the outline's band taken out, and a dashed line's bridged
                # gaps widen it: opened a little wider, the head is left alone
                wide = _wide_part(core, k, 2 * least)
                if wide is not None and not (near is not None and _on_outline(wide, near, k)):
                    off = wide
            if off is None:
                continue
            core = off
        region = cv2.dilate(core, grow) & mask[y0:y1, x0:x1]
        ry, rx = nonzero(region)
        cut[ry + y0, rx + x0] = 0
        blobs.append(np.stack([rx + x0, ry + y0], axis=1).astype(float))
    return blobs, cut


#: share of the outlines' zone the opening keeps above which an image's outlines are thicker
#: than its lines (the sketch style's rough strokes, drawn twice): d2's plain outlines keep under
#: 1 % (where lines meet them), sketch renders 13-19 %
THICK_OUTLINES = 0.05


#: smallest core of a head standing alone (see :func:`_lone_core`), in opening areas
LONE_HEAD_MIN = 0.6


def _ring(stat: np.ndarray, k: int, shape: tuple[int, int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The angles and pixels (x, y, within an image of ``shape``) of a ring around a core (its stats
    x, y, w, h), ``k`` pixels out from its box's half size, about one pixel apart."""
    x, y, w, h = (int(v) for v in stat[:4])
    cx, cy = x + w / 2, y + h / 2
    radius = max(w, h) / 2 + k
    n = max(16, int(2 * np.pi * radius))
    t = np.arange(n) * (2 * np.pi / n)
    px = np.clip(np.round(cx + radius * np.cos(t)).astype(int), 0, shape[1] - 1)
    py = np.clip(np.round(cy + radius * np.sin(t)).astype(int), 0, shape[0] - 1)
    return t, px, py


def _lone_core(mask: np.ndarray, outline: np.ndarray | None, stat: np.ndarray, k: int) -> bool:
    """Does at most one stroke leave the core (the shapes' ``outline`` band aside)? Where lines
    cross or meet, three or four do; a head has its own line behind it, or none (a dashed line's
    last gap).

    >>> m = np.zeros((40, 40), np.uint8); m[17:23, 17:23] = 1; stat = np.array([18, 18, 4, 4])
    >>> _lone_core(m, None, stat, 5)
    True
    >>> m[19:21, :20] = 1; _lone_core(m, None, stat, 5)      # its line behind it
    True
    >>> m[19:21, :] = 1; m[:, 19:21] = 1; _lone_core(m, None, stat, 5)   # two lines crossing
    False
    """
    t, px, py = _ring(stat, k, mask.shape)
    on = mask[py, px] > 0
    if outline is not None:
        on &= outline[py, px] == 0
    if not on.any():
        return True
    arms = int(np.count_nonzero(on & ~np.roll(on, 1)))
    return arms <= 1


#: a core smaller than this many of the image's least head cores (:func:`head_core_min`) may be where
#: lines run together on their way (:func:`_runs_through`)
THROUGH_CORE = 1.5
#: ... when two of the strokes leaving it are this far apart around it at least (the cosine of about
#: 150 degrees)
THROUGH_ARMS_COS = -0.87


def _runs_through(mask: np.ndarray, distance: OutlineDistance, stat: np.ndarray, k: int, lw: int) -> bool:
    """Do strokes leave the core on opposite sides (``THROUGH_ARMS_COS``), away from every shape's
    outline (``distance``, :class:`OutlineDistance`: more than two line widths off)? A head ends its
    line, and its tip touches a shape: the one stroke leaving it is its line. Two connectors run
    together into one stroke, two lines wide, leave a small core on the way that the opening keeps,
    with the merging lines on one side and the stroke on the other.

    >>> m = np.zeros((60, 60), np.uint8); m[28:33, 10:50] = 1; stat = np.array([26, 27, 8, 7])
    >>> far = OutlineDistance([], (60, 60))
    >>> _runs_through(m, far, stat, 5, 2)
    True
    >>> m[:, 35:] = 0; _runs_through(m, far, stat, 5, 2)      # the core ends its line
    False
    """
    t, px, py = _ring(stat, k, mask.shape)
    n = len(t)
    x0, y0 = int(px.min()), int(py.min())
    near = distance.window(y0, int(py.max()) + 1, x0, int(px.max()) + 1, 2.0 * lw + 1)
    on = (mask[py, px] > 0) & (near[py - y0, px - x0] > 2 * lw)
    if not on.any() or on.all():
        return False
    # the middle of each run of stroke around the ring
    start = int(np.flatnonzero(~on)[0])
    arms, run = [], []
    for j in range(start, start + n):
        if on[j % n]:
            run.append(t[j % n] if j < n else t[j % n] + 2 * np.pi)
        elif run:
            arms.append(float(np.mean(run)))
            run = []
    if run:
        arms.append(float(np.mean(run)))
    return any(np.cos(a1 - a2) <= THROUGH_ARMS_COS for i, a1 in enumerate(arms) for a2 in arms[i + 1:])


def thick_outlines(opened: np.ndarray, outline: np.ndarray) -> bool:
    """Are the outlines thicker than the lines: does the opening that keeps heads keep
    more than ``THICK_OUTLINES`` of the outlines' zone (:func:`outline_band`)?

    >>> band = np.zeros((20, 40), np.uint8); band[8:13, :] = 1
    >>> thin, thick = np.zeros_like(band), np.zeros_like(band); thin[9:11, :] = 1; thick[8:13, :] = 1
    >>> op = lambda m: cv2.morphologyEx(m, cv2.MORPH_OPEN, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (5, 5)))
    >>> thick_outlines(op(thin), band), thick_outlines(op(thick), band)
    (False, True)
    """
    zone = cv2.countNonZero(outline)
    return zone > 0 and cv2.countNonZero(opened & outline) > THICK_OUTLINES * zone


#: a head found on a thick outline's stretch (the outline taken out) keeps this many of the image's
#: least head cores (:func:`head_core_min`) at least: what is left of the rough strokes where a
#: diamond's sides cross at its tips is about one and a half
OFF_THICK_OUTLINE = 2.0


#: longest side of a head's core against its shortest (its smallest enclosing rectangle's) for a
#: core lying close along an outline to be taken for a head: a wedge where a line meets a rough
#: outline (the sketch style) lies drawn out along it; a d2 head arriving along a diamond's side
#: at a shallow angle measures between 1.25 and 1.4 (``med_triage_ru``), and 1.58 arriving almost
#: along it on a diagram drawn with thin lines (``инсульт``)
COMPACT_MAX = 1.6
#: the same where outlines are thicker than lines (:func:`thick_outlines`): up to 1.6 there, the
#: wedges of lines meeting the sketch style's rough outlines were taken for heads (six edges lost)
COMPACT_MAX_THICK = 1.4


def _compact(core: np.ndarray, most: float = COMPACT_MAX) -> bool:
    cy, cx = nonzero(core)
    (_, _), (rw, rh), _ = cv2.minAreaRect(np.stack([cx, cy], axis=1).astype(np.float32))
    return max(rw, rh) <= most * max(1.0, min(rw, rh))


def head_core_min(stats: np.ndarray, k: int, lw: int) -> float:
    """The smallest core area taken for a head in this image. All of an image's heads have one
    size, and they are most of its compact cores: the threshold is set below the upper quartile of
    the cores that could be heads (three fifths of it), between ``HEAD_CORE_MIN`` and
    ``HEAD_CORE_MAX`` opening areas, so a large diagram drawn at a reduced scale keeps its smaller
    heads and a full-size one does not take line crossings for heads.

    >>> st = lambda areas: np.array([[0, 0, 6, 6, a] for a in areas])
    >>> head_core_min(st([17, 22, 26, 28, 30, 32]), 5, 2), head_core_min(st([17, 26, 48, 52, 55]), 5, 2)
    (20.0, 30.0)
    """
    lo, hi = HEAD_CORE_MIN * k * k, HEAD_CORE_MAX * k * k
    if len(stats) == 0:
        return hi
    areas = stats[:, cv2.CC_STAT_AREA].astype(float)
    size = np.maximum(stats[:, cv2.CC_STAT_WIDTH], stats[:, cv2.CC_STAT_HEIGHT])
    cand = areas[(areas >= lo) & (size <= 12 * lw)]
    if len(cand) == 0:
        return hi
    return float(min(hi, max(lo, 0.6 * np.percentile(cand, 75))))


#: the least cost of one step of OpenCV's 3 x 3 L2 distance (``DIST_L2``, mask 3; a diagonal step
#: costs 1.3693): a distance up to ``d`` is reached within ``d / STEP_MIN`` pixels
STEP_MIN = 0.955


class OutlineDistance:
    """Each pixel's distance to the nearest outline of ``shapes`` (OpenCV's 3 x 3 L2 distance), computed
    for the windows asked for instead of for the whole image at once.

    A caller that uses only distances up to ``exact`` (heads are weighed within a few line widths of
    an outline, :func:`arrowheads`) gets a window measured on the outlines within ``exact / STEP_MIN``
    pixels of it: every distance up to ``exact`` is the whole image's shortest path, and a longer one
    is more than ``exact`` both ways (fewer outlines can only lengthen it). OpenCV may round the last
    bit of a path's float sum differently, far below what could move it across a threshold: no
    distance of this metric up to 16 pixels (the thresholds of lines up to 5 pixels wide) lies within
    0.004 of a whole or half pixel. An image has a few hundred head candidates at most; the whole
    image's map was a float per pixel, twice per image.

    >>> box = type("S", (), {"contour": np.array([[[10, 10]], [[40, 10]], [[40, 30]], [[10, 30]]], np.int32)})
    >>> d = OutlineDistance([box], (50, 60))
    >>> whole = cv2.distanceTransform(d.lines, cv2.DIST_L2, 3)[0:20, 30:60]
    >>> win = d.window(0, 20, 30, 60, exact=6.0)
    >>> near = whole <= 6
    >>> bool(np.allclose(win[near], whole[near], rtol=1e-6)), bool((win[~near] > 6).all())
    (True, True)
    """

    def __init__(self, shapes: list[Shape], shape_hw: tuple[int, int]) -> None:
        self.lines = np.ones(shape_hw, np.uint8)
        cv2.drawContours(self.lines, [s.contour for s in shapes], -1, 0, thickness=1)

    def window(self, y0: int, y1: int, x0: int, x1: int, exact: float) -> np.ndarray:
        """Distances of the pixels in rows ``y0:y1`` and columns ``x0:x1``, the whole image's up to ``exact``."""
        h, w = self.lines.shape
        m = int(np.ceil(exact / STEP_MIN)) + 1
        top, left = max(0, y0 - m), max(0, x0 - m)
        d = cv2.distanceTransform(self.lines[top:min(h, y1 + m), left:min(w, x1 + m)], cv2.DIST_L2, 3)
        return d[y0 - top:y1 - top, x0 - left:x1 - left]


#: a core this many opening areas large or more is a head's, unless it lies within one opening
#: width of an outline: a wedge where a line meets an outline is smaller (about 0.7 areas); a d2
#: head arriving along a diamond's side at a shallow angle keeps 0.99 (``med_triage_ru``)
HEAD_CORE_SURE = 0.95
#: and no more than this many (a larger core is two heads or lines run together)
HEAD_CORE_ONE = 2.0
#: any other core is a head only when it reaches this many opening widths off the outline
OFF_OUTLINE = 1.5


def _on_outline(core: np.ndarray, distance: np.ndarray, k: int, area: float = 0.0) -> bool:
    """Does the whole core lie within a thick outline's reach (no part a head's length off it)?
    ``k`` is the opening's size: a wedge where a line meets or crosses an outline reaches about
    one core width and a half off the outline (the line's width beside the outline's); even a
    small head reaches further, unless it arrives at a shallow angle (along a diamond's side, into
    a box's corner) where the opening is wider than the line calls for (its least size, on the
    thin lines of a large diagram): a compact core of ``area`` (see :func:`arrowheads`) between
    ``HEAD_CORE_SURE`` and ``HEAD_CORE_ONE`` opening areas, larger than a wedge's, need only
    reach one opening width off the outline.

    >>> d = np.abs(np.arange(20, dtype=np.float32) - 5)[:, None].repeat(20, axis=1)  # outline at row 5
    >>> wedge = np.zeros((20, 20), np.uint8); wedge[3:12, 6:12] = 1
    >>> head = np.zeros((20, 20), np.uint8); head[6:15, 6:12] = 1
    >>> _on_outline(wedge, d, 5), _on_outline(head, d, 5)
    (True, False)
    >>> shallow = np.zeros((20, 20), np.uint8); shallow[4:11, 2:8] = 1   # 6 pixels off the outline
    >>> _on_outline(shallow, d, 5), _on_outline(shallow, d, 5, 36), _on_outline(shallow, d, 5, 20)
    (True, False, True)
    """
    reach = k if HEAD_CORE_SURE * k * k <= area <= HEAD_CORE_ONE * k * k else OFF_OUTLINE * k
    return float(distance[core > 0].max()) < reach


def _elongated(core: np.ndarray) -> bool:
    cy, cx = nonzero(core)
    (_, _), (rw, rh), _ = cv2.minAreaRect(np.stack([cx, cy], axis=1).astype(np.float32))
    return max(rw, rh) > 1.8 * max(1.0, min(rw, rh))


def _wide_part(core: np.ndarray, k: int, least: float = 0.0, k2: int | None = None) -> np.ndarray | None:
    """The head at the end of a line drawn wider than the opening (a dashed line whose bridged
    gaps widen it): opened again a little wider (``k2``, by default ``k + 2``), the line is gone
    and one compact core of at least ``least`` pixels is left (a thick line's own stretches leave
    thinner slivers).

    >>> core = np.zeros((40, 20), np.uint8); core[2:26, 8:13] = 1        # a line 5 pixels wide
    >>> for i in range(10): core[26 + i, 2 + i // 2:18 - i // 2] = 1      # its head
    >>> piece = _wide_part(core, 5); piece is not None and bool(piece[:24].sum() == 0)
    True
    >>> line = np.zeros((40, 20), np.uint8); line[2:38, 8:13] = 1
    >>> _wide_part(line, 5) is None
    True
    >>> line[16:26, 4:17] = 1                                              # a blob on its way
    >>> _wide_part(line, 5) is None
    True
    """
    k2 = k + 2 if k2 is None else k2
    opened = cv2.morphologyEx(core, cv2.MORPH_OPEN, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k2, k2)))
    n, labels, stats, _ = components(opened)
    pieces = [j for j in range(1, n) if stats[j, cv2.CC_STAT_AREA] >= max(least, 0.5 * k2 * k2)]
    if len(pieces) != 1:
        return None
    piece = (labels == pieces[0]).astype(np.uint8)
    if _elongated(piece):
        return None
    # the head ends the line: the piece lies at one end of the core, not where the line crosses
    # something on its way
    cy, cx = nonzero(core)
    pts = np.stack([cx, cy], axis=1).astype(float)
    c = pts.mean(axis=0)
    _, _, vt = np.linalg.svd(pts - c, full_matrices=False)
    t = (pts - c) @ vt[0]
    on_piece = piece[cy, cx] > 0
    lo, hi = float(t[on_piece].min()), float(t[on_piece].max())
    return piece if min(float(t.max()) - hi, lo - float(t.min())) <= k2 else None


#: the opening that leaves a bundle's head alone (:func:`_bundle_head`), in line widths: two
#: connectors run together make a stroke about two line widths wide, a head's base is five or more
BUNDLE_OPENING = 3
#: a bundle's head is at most this many line widths long or wide (d2 draws its heads about five
#: and a half line widths long); a larger piece is several heads or lines piled up at a shape
BUNDLE_HEAD_MAX = 8


def _bundle_head(core: np.ndarray, distance: np.ndarray, k: int, lw: int, least: float,
                 exact: float) -> np.ndarray | None:
    """The head at the end of a bundle core, or None: dagre draws connectors arriving at one point
    of a shape along one path for their last stretch, so two lines run together into one stroke
    about two line widths wide, which the opening keeps, up to the head they share. Opened
    ``BUNDLE_OPENING`` line widths wide the stroke is gone, and the head is the one compact piece
    left at an end of the core (:func:`_wide_part`), no larger than ``BUNDLE_HEAD_MAX`` line widths,
    near a shape's outline but off it (``distance``, :class:`OutlineDistance`: its nearest pixel more
    than a line width and at most ``exact`` away). A head only touches the outline with its tip, so
    its wide part lies off it; where lines cross an outline or each other at a shallow angle the
    outline runs through what is left.

    >>> off = np.abs(np.arange(80, dtype=np.float32) - 2)[None, :].repeat(30, axis=0)  # outline at x = 2
    >>> core = np.zeros((30, 80), np.uint8); core[12:19, 17:78] = 1     # two lines run together, 7 wide
    >>> _ = cv2.fillPoly(core, [np.array([[3, 15], [17, 5], [17, 25]], np.int32)], 1)   # their head
    >>> head = _bundle_head(core, off, 5, 3, 30.0, 10.0)
    >>> head is not None and bool(head[:, 25:].sum() == 0) and bool(head[:, 9:17].any())
    True
    >>> across = np.abs(np.arange(80, dtype=np.float32) - 12)[None, :].repeat(30, axis=0)  # through it
    >>> _bundle_head(core, across, 5, 3, 30.0, 10.0) is None
    True
    """
    head = _wide_part(core, k, least, k2=max(k + 2, BUNDLE_OPENING * lw))
    if head is None:
        return None
    cy, cx = nonzero(head)
    if max(int(cx.max() - cx.min()), int(cy.max() - cy.min())) + 1 > BUNDLE_HEAD_MAX * lw:
        return None
    off = float(distance[head > 0].min())
    return head if lw < off <= exact else None


#: heads drawn one over another at a shape (:func:`_stacked_heads`) lie within this many line widths
#: of its outline's band (d2 draws its heads about five and a half line widths long, their tips on
#: the outline, which the band covers a line width deep)
STACK_REACH = 5
#: ... and they are at least this many of the image's least head cores (:func:`head_core_min`) large
STACK_MIN = 3.0
#: ... and their lines come in at more than 30 degrees to the outline (the cosine)
STACK_ALONG = 0.87


def _stacked_heads(core: np.ndarray, outline: np.ndarray, k: int, lw: int, least: float) -> np.ndarray | None:
    """The heads piled up where several connectors arrive at one point of a shape, drawn one over
    another (a large diagram drawn at a reduced scale, whose lines converge on the point): their lines
    run together on the way in, so the core is too large for a head and is no single head at a
    bundle's end (:func:`_bundle_head`). What lies within a head's length of the shape's outline band
    (``outline``, :func:`outline_band`; ``STACK_REACH``), opened again as wide as a bundle's
    (``BUNDLE_OPENING``: lines run together along an outline are gone), is the heads: one piece of at
    least ``STACK_MIN`` least cores, reaching the band but for what the opening rounds off the tips
    (half its width), the core's lines beyond it coming in across the band (``STACK_ALONG``). None
    without one.

    >>> band = np.zeros((60, 60), np.uint8); band[:, 50:53] = 1          # a shape's side at x = 51
    >>> core = np.zeros((60, 60), np.uint8)
    >>> for y0, y in ((5, 20), (30, 26), (55, 32)):                        # three heads and their lines
    ...     _ = cv2.fillPoly(core, [np.array([[50, y], [34, y - 8], [34, y + 8]], np.int32)], 1)
    ...     _ = cv2.line(core, (2, y0), (34, y), 1, 3)
    >>> heads = _stacked_heads(core, band, 5, 3, 30.0)
    >>> heads is not None and bool(heads[:, :30].sum() == 0) and bool(heads[:, 40:50].any())
    True
    >>> _stacked_heads(core * (np.arange(60) < 36)[None, :].astype(np.uint8), band, 5, 3, 30.0) is None
    True
    >>> side = np.zeros((60, 60), np.uint8); side[40:43, :] = 1          # a shape's top at y = 41
    >>> pile = np.zeros((60, 60), np.uint8); pile[28:40, 38:58] = 1
    >>> across, along = pile.copy(), pile.copy()
    >>> _ = cv2.line(across, (46, 0), (46, 30), 1, 5); _ = cv2.line(along, (0, 18), (45, 30), 1, 5)
    >>> _stacked_heads(across, side, 5, 3, 30.0) is None, _stacked_heads(along, side, 5, 3, 30.0) is None
    (False, True)
    """
    if not outline.any():
        return None
    off = cv2.distanceTransform((outline == 0).astype(np.uint8), cv2.DIST_L2, 3)
    near = core & (off <= STACK_REACH * lw).astype(np.uint8)
    k2 = max(k + 2, BUNDLE_OPENING * lw)
    opened = cv2.morphologyEx(near, cv2.MORPH_OPEN, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k2, k2)))
    n, labels, stats, _ = components(opened)
    if n < 2:
        return None
    j = 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))
    piece = (labels == j).astype(np.uint8)
    if stats[j, cv2.CC_STAT_AREA] < STACK_MIN * least or float(off[piece > 0].min()) > k2 / 2:
        return None
    # the lines come in across the outline; lines run together along it (at a shallow angle, over a
    # shape's side) leave such a piece too
    band = outline & cv2.dilate(piece, np.ones((2 * k2 + 1, 2 * k2 + 1), np.uint8))
    lines = core & (off > STACK_REACH * lw).astype(np.uint8)
    if cv2.countNonZero(band) < k2 or cv2.countNonZero(lines) < k2:
        return None
    ys, xs = nonzero(band)
    pts = np.stack([xs, ys], axis=1).astype(float)
    along = np.linalg.svd(pts - pts.mean(axis=0), full_matrices=False)[2][0]
    way = _centre(piece) - _centre(lines)   # from the lines into the piece
    if abs(float(np.dot(along, way))) > STACK_ALONG * float(np.hypot(*way)):
        return None
    return piece


def _centre(mask: np.ndarray) -> np.ndarray:
    """The mean (x, y) of a mask's pixels."""
    ys, xs = nonzero(mask)
    return np.array([xs.mean(), ys.mean()])


def _core_off_outline(mask: np.ndarray, outline: np.ndarray, core: np.ndarray, k: int,
                      least: float = 0.0) -> np.ndarray | None:
    """The compact head core left when the outline band is taken out of an elongated core's
    stroke, of ``least`` pixels or more (None when nothing head-like is left)."""
    if not (outline & core).any():
        return None
    rest = mask & (1 - outline) & cv2.dilate(core, np.ones((3, 3), np.uint8))
    opened = cv2.morphologyEx(rest, cv2.MORPH_OPEN, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k)))
    n, labels, stats, _ = components(opened)
    best = None
    for j in range(1, n):
        # what is left of a head has lost the part lying on the outline (a head along a
        # person's shoulder keeps about two thirds of a free head's smallest core)
        if stats[j, cv2.CC_STAT_AREA] < max(least, 0.8 * k * k):
            continue
        piece = (labels == j).astype(np.uint8)
        if not _elongated(piece) and (best is None or stats[j, cv2.CC_STAT_AREA] > best[0]):
            best = (int(stats[j, cv2.CC_STAT_AREA]), piece)
    return best[1] if best else None


def find_edges(r: Raster, shapes: list[Shape], edge_blocks: list[Block],
               label_boxes: dict[int, list[tuple[int, int, int, int]]] | None = None,
               d2_heads: bool = False, dashed: np.ndarray | None = None,
               grid: tuple[list[Shape], list[int]] | None = None) -> list[RawEdge]:
    """Edges between shapes, with arrowheads and (grey) labels.

    ``label_boxes`` are node labels drawn outside their shape; a connector may end at one. With
    ``d2_heads`` (d2's renders, whose heads are of a known size), a blob lying wholly on an
    outline is no head (:func:`arrowheads`); other tools draw heads small enough to lie there.
    It also lets an end left loose on a bundle of connectors run on along the bundle to its shape
    (:func:`_along_trunks`): on other tools' drawings such ends are mostly where lines cross.
    ``dashed`` marks the gaps bridged between dashes (:func:`.strokes.drawn_strokes`): a dashed
    line can pass under a shape, hidden by its fill (:func:`_through_shapes`).

    A grid layout's straight connectors (:mod:`.straight`) replace the traced edges between its
    cells (:func:`.straight.cells_of`) when the drawing is one. With ``grid`` (all the drawing's
    shapes, and the index among them of each shape in ``shapes``), the edges returned are between
    those: a grid's straight connectors are sought between all of them, containers too, while the
    connectors are traced between ``shapes`` alone.
    """
    label_boxes = label_boxes or {}
    lw = r.line_width
    mask = connector_mask(r, shapes)
    # heads are found on the whole stroke: one that lies along a shape's outline would lose its
    # core if the outline zone were cut away first
    stroke = fill_small_holes(r.stroke.view(np.uint8), 12 * lw * lw)
    drawn, measure = stroke, None
    ink_only, bridged = None, 0
    if dashed is not None:
        ink_only, bridged = without_bridges(r, dashed)
        if bridged:
            # heads are sought where the image has ink: the bridges drawn between dashes, a little
            # off their middle, widen a dashed line enough for the opening to keep pieces of it (the
            # sketch style's rough dashes, hundreds on a large diagram). The image's head size and
            # whether its outlines are thick are still measured on the stroke as bridged
            drawn, measure = fill_small_holes(ink_only, 12 * lw * lw), stroke
    blobs, _ = arrowheads(drawn, lw,
                          outline_band([s for s in shapes if not s.is_container], r.shape, lw),
                          OutlineDistance(shapes, r.shape) if d2_heads else None, dashed,
                          OutlineDistance([s for s in shapes if s.is_container], r.shape) if d2_heads else None,
                          measure, lone=d2_heads)
    cut = mask.copy()
    # each head blob's number, from 1 (an image has a few hundred heads at most)
    blob_ids = np.zeros(mask.shape, np.uint16 if len(blobs) < 65535 else np.int32)
    for i, blob in enumerate(blobs):
        cut[blob[:, 1].astype(int), blob[:, 0].astype(int)] = 0
        blob_ids[blob[:, 1].astype(int), blob[:, 0].astype(int)] = i + 1
    typical = typical_blob(blobs)
    skel = thin(cut > 0)
    chains = [c for c in trace(skel, spur=3 * lw, reach=4 * lw) if c.length() >= 4 * lw]
    # the pixels within one of ink where dashes are not bridged: where a line runs over a dash's gap
    inked = cv2.dilate(ink_only, np.ones((3, 3), np.uint8)) if bridged else None
    if inked is not None:
        chains = _split_unlike_arms(chains, inked, lw, 4 * lw)
    unclaimed: list[np.ndarray] = []
    ends = _make_ends(chains, blobs, lw, unclaimed, THROUGH_REACH if d2_heads else THROUGH_REACH_OTHER, d2_heads)
    _attach(ends, shapes, lw, label_boxes)
    _refit_outline_ends(ends, chains, lw)
    gaps = label_gaps(edge_blocks, r.shape, lw)
    _through_shapes(ends, shapes, r.stroke, lw, _dashed_chains(chains, dashed, lw), chains, gaps)
    _mark_label_boxes(ends, edge_blocks, lw)
    if d2_heads:
        _attach_across_labels(ends, shapes, edge_blocks, lw)
    _heads_across_labels(unclaimed, ends, edge_blocks, lw)
    groups = _join(ends, chains, lw, edge_blocks, _gap_shares(chains, inked))
    edges = []
    outlines = _Outlines(shapes, label_boxes)
    met: list[tuple[_End, int, bool]] = []
    for members, entries, (e1, e2), crossed in groups:
        for e, other in ((e1, e2), (e2, e1)):
            if e.shape is None:
                _attach_one(e, shapes, lw, 6 * lw, label_boxes, outlines)
            if e.shape is None:
                head = _follow(e, r.stroke, blob_ids, shapes, lw, label_boxes, outlines)
                if e.shape is None:
                    _follow_behind(e, r.stroke, blob_ids, shapes, lw, label_boxes, outlines)
                if head:
                    met.append((e, head, other.arrow))
            elif e.at_container:
                _through_outline(e, shapes, lw)
    # the head blob each end took before any walk, by the end
    taken = {id(e): int(blob_ids[int(e.head_tip[1]), int(e.head_tip[0])]) for e in ends if e.head_tip is not None}
    for e in _walked_heads(met, set(taken.values())):
        e.arrow = True
    _drop_fan_out_heads(groups, met, taken)
    if d2_heads:   # d2's own drawings (dagre's bundles); elsewhere such ends are mostly crossings
        _along_trunks(groups, chains, lw, shapes)
        _shared_heads(groups, blobs, set(taken.values()), typical, lw, shapes, label_boxes, outlines)
    for members, entries, (e1, e2), crossed in groups:
        if e1.shape is None or e2.shape is None:
            continue
        if e1.shape == e2.shape and not (e1.arrow or e2.arrow):
            continue
        pts = np.concatenate([chains[i].points for i in members], axis=0)
        if e1.shape == e2.shape and _along_outline(pts, shapes[e1.shape], lw):
            continue  # a stretch of a rough outline, not a loop leaving the shape and coming back
        _drop_lesser_head(e1, e2, typical if d2_heads else 0.0)
        route = _route([chains[i] for i in members], entries, e1.point, e2.point, lw)
        edges.append(RawEdge(e1.shape, e2.shape, e1.arrow, e2.arrow, pts, route=route, crossed=crossed,
                             under_label=(bool(e1.label_boxes), bool(e2.label_boxes))))
    edges = join_along_outlines(edges, shapes, r.stroke, lw)
    if grid is not None:
        shapes, index_of = grid
        for e in edges:
            e.a, e.b = index_of[e.a], index_of[e.b]
    edges = _grid_edges(edges, r.stroke, shapes, blobs, gaps, lw)
    if d2_heads:
        _heads_under_labels(edges)
    edge_blocks = split_shared_labels(edges, edge_blocks, lw)
    _label_edges(edges, edge_blocks, lw)
    kept = drop_repeats(edges)
    if len(kept) < len(edges):      # the labels the repeats held go to the edges left
        for e in kept:
            e.label, e.label_block = "", None
        _label_edges(kept, edge_blocks, lw)
    return kept


def split_shared_labels(edges: list[RawEdge], blocks: list[Block], lw: int) -> list[Block]:
    """``blocks`` with each one-line block that connectors share split between them: labels set side
    by side on connectors running close together were read as one line (``med_medication_order``'s
    ``no`` and ``approved``, ``cicd_ru_deploy``'s ``чтение секретов`` and ``стенд готов``,
    ``arch_event_driven``'s ``checkout``, ``checkout API`` and ``checkout API``). A block is shared by
    the connectors joined across it and, where one is, the connectors whose path runs through it with
    their middle beside it, when they are two or more; a block of three words or more no connector was
    joined across, by the connectors running through it with their middles in it. d2 sets a label at
    its connector's middle and cuts all the lines under all the labels: each word goes to the
    connector whose middle is nearest it, and the block is split when that gives each connector one
    run of the words, in turn. The later parts are added at the end, and the connectors they go to
    were joined across it.
    """
    paths = [_edge_path(e, lw) for e in edges]
    middles = [_edge_middle(e, p) for e, p in zip(edges, paths)]

    def nearer_label(ei: int, bi: int) -> bool:
        # another label lies nearer the connector's middle: its own, set just beside this block
        d = _points_box_distance(middles[ei][None, :], blocks[bi].box)
        return any(_points_box_distance(middles[ei][None, :], o.box) < d for oi, o in enumerate(blocks) if oi != bi)

    sharing: dict[int, list[int]] = {}
    for ei, e in enumerate(edges):
        for bi in sorted(set(e.crossed)):
            if len(blocks[bi].lines) == 1 and len(blocks[bi].lines[0]) >= 2 and not nearer_label(ei, bi):
                sharing.setdefault(bi, []).append(ei)
    out = list(blocks)
    multi = {bi for bi, b in enumerate(blocks) if bi not in sharing and len(b.lines) == 1 and len(b.lines[0]) >= 3}
    if not sharing and not multi:
        return out
    for bi in sorted(multi):
        # a block no connector was joined across is shared by the connectors running through it whose
        # middles lie in it, when they are two or more
        x, y, w, h = blocks[bi].box
        owners = [ei for ei in range(len(edges)) if x <= middles[ei][0] <= x + w
                  and y - h <= middles[ei][1] <= y + 2 * h and _points_box_distance(paths[ei], blocks[bi].box) == 0
                  and not nearer_label(ei, bi)]
        if len(owners) >= 2:
            sharing[bi] = owners
    for bi, owners in sorted(sharing.items()):
        b = blocks[bi]
        # and a connector whose path runs through the block, its middle beside it
        _, _, w, h = b.box
        cx, cy = b.centre
        if bi not in multi:
            owners += [ei for ei in range(len(edges)) if ei not in owners
                       and _points_box_distance(paths[ei], b.box) == 0
                       and np.hypot(middles[ei][0] - cx, middles[ei][1] - cy) <= w / 2 + 3 * h
                       and not nearer_label(ei, bi)]
        if len(owners) < 2:
            continue
        words = sorted(b.lines[0], key=lambda w: w.x)
        nearest = [int(np.argmin([np.hypot(middles[ei][0] - w.cx, middles[ei][1] - w.cy) for ei in owners]))
                   for w in words]
        cuts = [i for i in range(1, len(words)) if nearest[i] != nearest[i - 1]]
        if len(cuts) != len(owners) - 1:
            continue   # each connector takes one run of the words, or the block stays whole
        runs = list(zip([0] + cuts, cuts + [len(words)]))
        out[bi] = Block([words[:cuts[0]]], b.grey)
        for a, z in runs[1:]:
            out.append(Block([words[a:z]], b.grey))
            owner = edges[owners[nearest[a]]]
            owner.crossed = [len(out) - 1 if c == bi else c for c in owner.crossed]
    return out


def _edge_path(e: RawEdge, lw: int) -> np.ndarray:
    """The traced pixels of an edge and the path between them (its gaps bridged)."""
    return e.points if e.route is None else np.concatenate([e.points, dense_path(e.route, lw)], axis=0)


def _edge_middle(e: RawEdge, path: np.ndarray) -> np.ndarray:
    """The point halfway along an edge's route (the mean of ``path``, its :func:`_edge_path`, without one)."""
    return path_middle(e.route) if e.route is not None and len(e.route) > 1 else path.mean(axis=0)


#: a container's outline is drawn over by a connector running along it where its stroke is at least
#: this many pixels thicker than along the rest of the outline (the middle of the stretch): the line
#: lies beside the outline or a pixel off it, never exactly over it all the way
ALONG_OUTLINE_THICKER = 1.0


def join_along_outlines(edges: list[RawEdge], shapes: list[Shape], stroke: np.ndarray, lw: int) -> list[RawEdge]:
    """Connectors that run along a container's outline for a stretch, made whole again.

    d2 routes some connectors from a shape inside a container to one outside along the container's
    outline before they leave it. The outline's zone is cut out of the connector mask, so such a
    connector is traced as two pieces: one from the inner shape to the outline, one from the outline
    to the outer shape, neither with a head at the outline (and no connector joins a shape to its own
    container in the bundled diagrams). Two such pieces are one connector when, between where they
    meet the outline, the outline's stroke is thicker than along the rest of it (the line drawn
    beside it, ``ALONG_OUTLINE_THICKER``) and the connector has a head at one of its ends. A line
    drawn exactly over the outline cannot be told from it and stays two pieces.
    Pieces are paired nearest first along the outline.
    """
    holders = [set(ancestors(shapes, s.index)) for s in shapes]

    def at(e: RawEdge, c: int) -> tuple[np.ndarray, int, bool] | None:
        """Where the headless end of ``e`` at shape ``c`` is, the other end's shape and head."""
        route = e.route if e.route is not None else e.points
        if e.a == c and not e.head_a and e.b != c:
            return route[0], e.b, e.head_b
        if e.b == c and not e.head_b and e.a != c:
            return route[-1], e.a, e.head_a
        return None

    used: set[int] = set()
    joined: list[RawEdge] = []
    for c in (s for s in shapes if s.is_container):
        ends = [(i, at(e, c.index)) for i, e in enumerate(edges)]
        inner = [(i, t) for i, t in ends if t is not None and c.index in holders[t[1]]]
        outer = [(i, t) for i, t in ends if t is not None and c.index not in holders[t[1]]
                 and t[1] not in holders[c.index]]
        if not inner or not outer:
            continue
        ring = _dense_ring(c.contour.reshape(-1, 2).astype(float), lw)
        widths = _outline_widths(ring, stroke, lw)
        pairs = []
        for i, (p, x, hx) in inner:
            for j, (q, y, hy) in outer:
                if not (hx or hy):
                    continue
                ip, iq = (int(np.argmin(np.hypot(*(ring - v).T))) for v in (p, q))
                arc = _arc(ip, iq, len(ring))
                pairs.append((len(arc), i, j, arc))
        for _, i, j, arc in sorted(pairs, key=lambda t: t[:3]):
            if i in used or j in used:
                continue
            middle = arc[len(arc) // 4: len(arc) - len(arc) // 4]
            if len(middle) < 2 or np.median(widths[middle]) < np.median(widths) + ALONG_OUTLINE_THICKER:
                continue
            used |= {i, j}
            e1, e2 = edges[i], edges[j]
            r1 = e1.route if e1.route is not None else e1.points
            r2 = e2.route if e2.route is not None else e2.points
            if e1.a == c.index:                     # e1 from the inner shape to the outline
                r1 = r1[::-1]
            x, hx = (e1.b, e1.head_b) if e1.a == c.index else (e1.a, e1.head_a)
            if e2.b == c.index:                     # e2 from the outline to the outer shape
                r2 = r2[::-1]
            y, hy = (e2.a, e2.head_a) if e2.b == c.index else (e2.b, e2.head_b)
            joined.append(RawEdge(x, y, hx, hy, np.concatenate([e1.points, e2.points]),
                                  route=np.concatenate([r1, r2]), crossed=e1.crossed + e2.crossed))
    return [e for i, e in enumerate(edges) if i not in used] + joined


def _dense_ring(ring: np.ndarray, step: float) -> np.ndarray:
    """The closed polygon's outline as points about ``step`` pixels apart.

    >>> _dense_ring(np.array([[0., 0.], [4., 0.], [4., 2.], [0., 2.]]), 2).tolist()
    [[0.0, 0.0], [2.0, 0.0], [4.0, 0.0], [4.0, 2.0], [2.0, 2.0], [0.0, 2.0]]
    """
    return dense_path(np.concatenate([ring, ring[:1]]), step)[:-1]


def dense_path(path: np.ndarray, step: float) -> np.ndarray:
    """The open polyline as points about ``step`` pixels apart (its vertices among them).

    >>> dense_path(np.array([[0., 0.], [4., 0.], [4., 3.]]), 2).tolist()
    [[0.0, 0.0], [2.0, 0.0], [4.0, 0.0], [4.0, 1.5], [4.0, 3.0]]
    """
    if len(path) < 2:
        return np.asarray(path, float).reshape(-1, 2)
    # every segment at once: segment i gives n_i points, p_i + (q_i - p_i) * k / n_i for k < n_i
    seg = path[1:] - path[:-1]
    n = np.maximum(1, np.ceil(np.hypot(seg[:, 0], seg[:, 1]) / step).astype(np.int64))
    which = np.repeat(np.arange(len(seg)), n)
    k = np.arange(len(which)) - np.repeat(np.cumsum(n) - n, n)
    out = path[:-1][which] + seg[which] * (k / n[which])[:, None]
    return np.concatenate([out, path[-1:].astype(float)])


def _arc(i: int, j: int, n: int) -> np.ndarray:
    """Positions of the shorter way round a ring of ``n`` points from ``i`` to ``j``."""
    fwd = (j - i) % n
    if fwd <= n - fwd:
        return (i + np.arange(fwd + 1)) % n
    return (i - np.arange(n - fwd + 1)) % n


def _outline_widths(ring: np.ndarray, stroke: np.ndarray, lw: int) -> np.ndarray:
    """How thick the stroke is at each point of an outline: its pixels in a square around the
    point (cut at the image's border), over the square's side."""
    h, w = stroke.shape
    r = 3 * lw
    side = 2 * r + 1
    xs = np.clip(np.round(ring[:, 0]).astype(int), 0, w - 1)
    ys = np.clip(np.round(ring[:, 1]).astype(int), 0, h - 1)
    out = np.empty(len(ring))
    whole = (xs >= r) & (xs < w - r) & (ys >= r) & (ys < h - r)
    if whole.any():          # the squares as views of the image: only their pixels are read
        squares = np.lib.stride_tricks.sliding_window_view(stroke, (side, side))
        out[whole] = squares[ys[whole] - r, xs[whole] - r].sum(axis=(1, 2), dtype=np.int64)
    for k in np.flatnonzero(~whole):
        out[k] = np.count_nonzero(stroke[max(0, ys[k] - r):ys[k] + r + 1, max(0, xs[k] - r):xs[k] + r + 1])
    return out / float(side)


def without_bridges(r: Raster, bridges: np.ndarray) -> tuple[np.ndarray, int]:
    """The stroke (uint8 0/1) less the pixels that only the bridging between dashes drew
    (:func:`.strokes.drawn_strokes`: where ``bridges`` is set and the image has neither a
    stroke's colour nor ink), and how many pixels that took out.

    >>> rgb = np.full((3, 8, 3), 255, np.uint8); rgb[1, :3] = rgb[1, 5:] = (13, 50, 178)   # two dashes
    >>> bridge = np.zeros((3, 8), np.uint8); bridge[1, 3:5] = 1
    >>> r = Raster(rgb, rgb[..., 0], rgb[..., 2] < 200, np.zeros((3, 8), bool), 1)
    >>> r = Raster(rgb, rgb[..., 0], r.stroke | (bridge > 0), r.ink, 1)    # the stroke as bridged
    >>> out, n = without_bridges(r, bridge); out[1].tolist(), n
    ([1, 1, 1, 0, 0, 1, 1, 1], 2)
    """
    ys, xs = nonzero(bridges)
    out = r.stroke.astype(np.uint8)
    if len(ys) == 0:
        return out, 0
    drawn = stroke_colour(r.rgb[ys, xs][:, None]).reshape(-1) | r.ink[ys, xs]
    gone = ~drawn & r.stroke[ys, xs]
    out[ys[gone], xs[gone]] = 0
    return out, int(gone.sum())


#: a loop from a shape back to it reaches this many line widths off its outline at least
LOOP_OFF = 4


def _along_outline(points: np.ndarray, shape: Shape, lw: int) -> bool:
    """Do all ``points`` lie within ``LOOP_OFF`` line widths of the shape's outline?

    >>> box = Shape(0, "rectangle", np.array([[[10, 10]], [[60, 10]], [[60, 40]], [[10, 40]]], np.int32),
    ...             (10, 10, 50, 30), 1500.0, 0)
    >>> side = np.array([[x, 9.0] for x in range(15, 50)])
    >>> loop = np.array([[x, 10.0 - 30 * np.sin(np.pi * (x - 15) / 35)] for x in range(15, 51)])
    >>> _along_outline(side, box, 2), _along_outline(loop, box, 2)
    (True, False)
    """
    step = max(1, len(points) // 64)
    return all(shape.border_distance(x, y) < LOOP_OFF * lw for x, y in points[::step])


def _grid_edges(edges: list[RawEdge], stroke: np.ndarray, shapes: list[Shape], blobs: list[np.ndarray],
                gaps: np.ndarray, lw: int, cells: list[int | None] | None = None) -> list[RawEdge]:
    """``edges`` with a grid layout's straight connectors (:func:`.straight.straight_lines`) in place
    of the traced edges between its cells, when the drawing is a grid (:func:`.straight.is_grid`).
    Traced edges within one container's cell stay (the container's own layout routed them), but
    for those that run along a straight line (``ALONG_LINE_MIN`` of their points within a line's
    width of it): the pieces of a connector crossing the cell. An ambiguous line (through other
    shapes' centres, read as no edge) counts but for the traced edges between two of the shapes it
    stops at or passes: connectors drawn end to end along it. A straight connector's end in an
    edge label's gap (``gaps``) is marked ``under_label``."""
    cells = cells if cells is not None else cells_of(shapes)
    lines = straight_lines(stroke, shapes, blobs, gaps, lw, cells)
    if not is_grid(lines):
        return edges
    along = np.zeros(stroke.shape, np.uint8)
    for ln in lines:
        if not ln.ambiguous:
            p, q = ln.points[0].astype(int), ln.points[-1].astype(int)
            cv2.line(along, (int(p[0]), int(p[1])), (int(q[0]), int(q[1])), 1, 2 * lw + 1)
    unread = [ln for ln in lines if ln.ambiguous]

    def off_the_lines(e: RawEdge) -> bool:
        pts = e.points.astype(int)
        on = along[pts[:, 1], pts[:, 0]] > 0
        for ln in unread:
            # a line through shapes' centres, read as no edge: a traced edge between two of the shapes
            # it stops at or passes is a connector of its own, drawn end to end with others along it
            if {e.a, e.b} <= {ln.a, ln.b} | ln.centres:
                continue
            on |= _near_segment(e.points, ln.points[0], ln.points[-1], lw + 0.5)
        return float(on.mean()) < ALONG_LINE_MIN

    def under(p: np.ndarray) -> bool:
        x, y = int(round(p[0])), int(round(p[1]))
        return 0 <= y < gaps.shape[0] and 0 <= x < gaps.shape[1] and bool(gaps[y, x])

    inside = [e for e in edges if cells[e.a] is not None and cells[e.a] == cells[e.b] and off_the_lines(e)]
    return inside + [RawEdge(ln.a, ln.b, ln.head_a, ln.head_b, ln.points, route=ln.points,
                             under_label=(under(ln.points[0]), under(ln.points[-1])))
                     for ln in lines if not ln.ambiguous]


def _near_segment(points: np.ndarray, p: np.ndarray, q: np.ndarray, reach: float) -> np.ndarray:
    """Which points lie within ``reach`` of the segment p-q.

    >>> _near_segment(np.array([[5., 1.], [5., 4.], [13., 0.]]), np.array([0., 0.]), np.array([10., 0.]), 2).tolist()
    [True, False, False]
    """
    v = q - p
    t = np.clip(((points - p) @ v) / max(float(v @ v), 1e-9), 0.0, 1.0)
    d = points - (p[None, :] + t[:, None] * v[None, :])
    return np.hypot(d[:, 0], d[:, 1]) <= reach


#: share of a traced edge's points lying along a grid's straight lines that makes it a piece of one
ALONG_LINE_MIN = 0.8


def _flow_key(e: RawEdge) -> tuple:
    if e.head_a and e.head_b:
        return ("<->", frozenset((e.a, e.b)))
    if e.head_a:
        return ("->", e.b, e.a)
    if e.head_b:
        return ("->", e.a, e.b)
    return ("--", frozenset((e.a, e.b)))


def drop_repeats(edges: list[RawEdge]) -> list[RawEdge]:
    """The edges without repeats: an unlabelled edge is dropped when another edge joins the same
    two shapes the same way, and an edge without arrowheads when a directed edge joins the same
    two shapes. Long straight connectors drawn over a pair of shapes (grid layouts) leave pieces
    between them that read as such repeats of the edge really drawn there, which is the
    labelled one when any is (a piece without heads may have taken a label nearby).

    >>> pts = np.zeros((2, 2))
    >>> es = [RawEdge(0, 1, False, True, pts), RawEdge(0, 1, False, True, pts, "code ok"),
    ...       RawEdge(1, 0, False, False, pts), RawEdge(1, 2, False, False, pts)]
    >>> [(e.a, e.b, e.label) for e in drop_repeats(es)]
    [(0, 1, 'code ok'), (1, 2, '')]
    """
    labelled = {_flow_key(e) for e in edges if e.label}
    directed = {frozenset((e.a, e.b)) for e in edges if e.head_a or e.head_b}
    out, seen = [], set()
    for e in edges:
        key = _flow_key(e)
        if not (e.head_a or e.head_b) and frozenset((e.a, e.b)) in directed:
            continue
        if not e.label and (key in seen or key in labelled):
            continue
        seen.add(key)
        out.append(e)
    return out


def typical_blob(blobs: list[np.ndarray]) -> float:
    """The image's typical head blob size in pixels: the median (most blobs are heads; 0 without any)."""
    return float(np.median([len(b) for b in blobs])) if blobs else 0.0


def _make_ends(chains: list[Chain], blobs: list[np.ndarray], lw: int,
               unclaimed: list[np.ndarray] | None = None, through: float = 4, doubles: bool = False) -> list[_End]:
    """The two ends of every chain, with arrowheads given to the ends they belong to (heads no
    end takes are added to ``unclaimed`` when given). A blob a line runs through (ends within
    ``through`` line widths of it, :func:`_passed_through`) is no head. With ``doubles`` (d2's
    drawings, whose heads are all one size), a blob as large as two heads (``DOUBLE_HEAD``) may go to
    two ends."""
    ends = []
    for ci, c in enumerate(chains):
        for which in (0, 1):
            p = np.array(c.end(which))
            d = c.direction(which)
            ends.append(_End(ci, which, p, d, behind=behind_direction(c.points, p, d, lw)))
    # each arrowhead goes to the nearest chain end that points at it (thinning shortens line
    # ends a little, so the gap between a line's end and its head can be a few widths)
    left = []
    typical = typical_blob(blobs)
    for blob in blobs:
        if _passed_through(blob, ends, through * lw, lw):
            continue
        best = _pointing_end(blob, ends, 4 * lw, 0.5, lw)
        if best is None:
            left.append(blob)
            continue
        _give_head(best, blob)
        if doubles and len(blob) >= DOUBLE_HEAD * typical:
            # two heads drawn side by side, run together: the other line aimed at it has one too, when
            # no third line comes to it (a connector leaving the shape where two arrive)
            others = [e for e, _ in _ends_aimed_at(blob, ends, 4 * lw, 0.5, lw) if e.chain != best.chain]
            second = _pointing_end(blob, others, 4 * lw, 0.5, lw) if len(others) == 1 else None
            if second is not None and not second.arrow:
                _give_head(second, blob)
    # a head in a shape's notch (a person's neck) is cut off from its line by the zone around
    # the outline: a free end aimed straight at it from further away takes it
    for blob in left:
        best = _pointing_end(blob, [e for e in ends if not e.arrow], 12 * lw, 0.85, lw)
        if best is not None:
            _give_head(best, blob)
        elif unclaimed is not None:
            unclaimed.append(blob)
    return ends


#: a head blob at least this many times the image's typical blob (the median: most blobs are heads) may
#: be two heads drawn side by side, where two connectors arrive at one point of a shape. On d2's own
#: drawings only: on the others (read by structure), heads differ in size, and a blob that large where
#: one connector arrives and another leaves was given to both (d2's dark theme: one edge more missed)
DOUBLE_HEAD = 1.7


def _heads_across_labels(blobs: list[np.ndarray], ends: list[_End], blocks: list[Block], lw: int) -> None:
    """A head whose line is hidden under an edge label (d2 blanks the label's box, and the stub
    between box and head is too short to trace) goes to the free end in that label's box aimed
    straight at it."""
    for blob in blobs:
        cands = []
        for e in ends:
            if e.arrow or e.shape is not None or not e.label_boxes:
                continue
            x, y, w, h = blocks[e.label_boxes[0]].box
            reach = float(np.hypot(w, h)) + 8 * lw
            diff = blob - e.point
            dist = np.hypot(*diff.T)
            k = int(np.argmin(dist))
            if dist[k] > reach or dist[k] < 1:
                continue
            aim = float(np.dot(diff[k] / dist[k], e.direction))
            if aim >= 0.9:
                cands.append((float(dist[k]) * (2 - aim), id(e), e))
        if cands:
            _give_head(min(cands)[2], blob)


def _pointing_end(blob: np.ndarray, ends: list[_End], reach: float, aim: float, lw: int) -> _End | None:
    """The end within ``reach`` of the blob that points at it (cosine >= ``aim``) and best feeds
    it: nearest, weighed by how straight the end aims at the blob's middle. A line enters a head
    at the middle of its base; one that merely passes its side (a connector leaving a shape's
    corner right beside a head arriving there) aims past the middle even when it is nearer."""
    best = None
    centre = blob.mean(axis=0)
    lone = None
    for e, d in _ends_aimed_at(blob, ends, reach, aim, lw):
        to_mid = centre - e.point
        n = float(np.hypot(*to_mid))
        straight = 1.0 if n <= lw else float(np.dot(to_mid / n, e.direction))
        if straight < 0.3 and e.behind is not None:
            # the end's last pixels turn off its line (:func:`behind_direction`), and behind them the
            # line runs into the blob: its head, when no other line ends near it (``LONE_REACH``; lines
            # leaving one point together make a wedge there as large as a head)
            if lone is None:
                lone = not any(o.chain != e.chain for o, _ in _ends_aimed_at(blob, ends, LONE_REACH * lw, -1.0, lw))
            if lone:
                straight = float(np.dot(to_mid / n, e.behind))
        if straight < 0.3:
            continue  # the blob lies beside the end, not ahead of it: lines merging, not its head
        score = (d + lw) * (2.0 - straight)
        if best is None or score < best[0]:
            best = (score, e)
    return best[1] if best else None


#: a blob is given to an end by the direction its line runs in behind a stub (:func:`_pointing_end`)
#: only when no other line ends within this many line widths of it: ``read flags``, ``/search`` and
#: ``/reviews`` leave one point of ``arch_api_gateway``'s gateway together, and the others' pieces end
#: 12 and 14 widths from the wedge they make there
LONE_REACH = 16


#: two line ends aimed at one blob from either side and facing each other to this cosine (about 14
#: degrees) are one line running through it
THROUGH_COS = 0.97
#: ... when they end within this many line widths of it, on d2's drawings: where two lines cross at a
#: shallow angle, their overlap is a blob the head opening keeps, and thinning the X's narrow forks beside
#: it shortens the pieces entering it by up to about 4.5 widths (a head's own line ends within 4). On
#: other tools' drawings, whose lines are thinner and whose labels are set against them, ends that far
#: off are mostly other lines near a head (tried on the bundled diagrams drawn by Graphviz: 1 more edge
#: missed, 2 more read wrong): :data:`THROUGH_REACH_OTHER`
THROUGH_REACH, THROUGH_REACH_OTHER = 5, 4


def _passed_through(blob: np.ndarray, ends: list[_End], reach: float, lw: int) -> bool:
    """Does a line run straight through the blob: two ends of different pieces within ``reach``,
    each aimed at it, facing each other across it? A head ends its line (its tip is at a shape);
    a blob with the line going on beyond it is a letter touching the line (Graphviz sets an edge's
    label against its line) or a crossing, not a head.

    >>> blob = np.array([[x, y] for x in range(8, 14) for y in range(20, 27)], float)
    >>> up, down = np.array([0.0, -1.0]), np.array([0.0, 1.0])
    >>> above, below = _End(0, 1, np.array([10.0, 17.0]), down), _End(1, 0, np.array([10.0, 30.0]), up)
    >>> _passed_through(blob, [above, below], 12, 3), _passed_through(blob, [above], 12, 3)
    (True, False)
    >>> aside = _End(1, 0, np.array([25.0, 23.0]), np.array([-1.0, 0.0]))
    >>> _passed_through(blob, [above, aside], 12, 3)
    False
    """
    aimed = [e for e, _ in _ends_aimed_at(blob, ends, reach, 0.5, lw)]
    return any(e1.chain != e2.chain and _facing(e1, e2, lw) >= THROUGH_COS
               for i, e1 in enumerate(aimed) for e2 in aimed[i + 1:])


def _ends_aimed_at(blob: np.ndarray, ends: list[_End], reach: float, aim: float,
                   lw: int) -> Iterator[tuple[_End, float]]:
    """The ends within ``reach`` of the blob that point at its nearest pixel (cosine >= ``aim``; any
    end within a line width of it does), each with that pixel's distance."""
    # no pixel of the blob is nearer to an end than the blob's bounding box is
    near = _within(np.array([e.point for e in ends], float).reshape(-1, 2),
                   np.concatenate([blob.min(axis=0), blob.max(axis=0)]), reach)
    for i in np.flatnonzero(near):
        e = ends[i]
        diff = blob - e.point
        dist = np.hypot(*diff.T)
        k = int(np.argmin(dist))
        d = float(dist[k])
        if d <= reach and (d <= lw or float(np.dot(diff[k] / d, e.direction)) >= aim):
            yield e, d


def _give_head(e: _End, blob: np.ndarray) -> None:
    e.point = blob[np.argmax(np.hypot(*(blob - e.point).T))]
    e.head_tip = e.point
    e.arrow = True
    e.head_size = len(blob)


#: a head blob within this share of the image's typical (median) blob is of the image's head size;
#: one at least ``WEDGE_HEAD`` times as large, at the other end of its connector, is no head
#: (:func:`_drop_lesser_head`). The sketch style's heads differ more (0.8 to 1.45 times the median
#: on one drawing): there the smaller of two unlike heads is still the one dropped
TYPICAL_HEAD, WEDGE_HEAD = 0.1, 1.3
#: the two heads of one connector are drawn alike: one whose blob is smaller than this share of
#: the other's is no head. Two-headed connectors read on the bundled diagrams' sketch drawings: 0.87
#: to 0.98 where d2 drew both heads, 0.46 to 0.80 where one "head" was the thick join of the line's
#: other end with a rough outline (a diamond's tip, a person's neck)
HEADS_ALIKE = 0.8


def _drop_lesser_head(e1: _End, e2: _End, typical: float = 0.0) -> None:
    """Of a connector's two heads, drop the one much smaller than the other (``HEADS_ALIKE``):
    every tool draws a two-headed connector's heads the same, so a head blob far smaller than
    the one at the other end is where the line leaves its shape through a thick outline. With the
    image's ``typical`` head blob (:func:`typical_blob`; given on d2's drawings, whose heads are one
    size), when the smaller is of that size (``TYPICAL_HEAD``) and the larger far beyond it
    (``WEDGE_HEAD``), the larger is dropped instead: a wedge where lines cross an outline together
    (a line drawn over a diamond, crossing its side where another leaves it).

    >>> a, b = _End(0, 0, np.zeros(2), np.zeros(2), True), _End(0, 1, np.zeros(2), np.zeros(2), True)
    >>> a.head_size, b.head_size = 98, 164
    >>> _drop_lesser_head(a, b); a.arrow, b.arrow
    (False, True)
    >>> a.arrow, a.head_size = True, 140
    >>> _drop_lesser_head(a, b); a.arrow, b.arrow
    (True, True)
    >>> a.head_size, b.head_size = 113, 169        # the larger is the odd one out here
    >>> _drop_lesser_head(a, b, typical=115.0); a.arrow, b.arrow
    (True, False)
    """
    if not (e1.arrow and e2.arrow and e1.head_size and e2.head_size):
        return
    small, large = (e1, e2) if e1.head_size < e2.head_size else (e2, e1)
    if small.head_size >= HEADS_ALIKE * large.head_size:
        return
    if typical > 0 and abs(small.head_size / typical - 1) <= TYPICAL_HEAD and large.head_size >= WEDGE_HEAD * typical:
        large.arrow = False
    else:
        small.arrow = False


def _box_distance(x: float, y: float, box: tuple[int, int, int, int]) -> float:
    bx, by, bw, bh = box
    dx = max(bx - x, 0.0, x - (bx + bw))
    dy = max(by - y, 0.0, y - (by + bh))
    return float(np.hypot(dx, dy))


def _within(points: np.ndarray, rects: np.ndarray, reach: float) -> np.ndarray:
    """Which points (N x 2) lie within ``reach`` of a rectangle (``x0, y0, x1, y1``; one for all
    points, or one per point), with a pixel to spare for rounding: a cheap test that passes every
    point whose exact distance to something inside the rectangle is at most ``reach``.

    >>> _within(np.array([[0., 0.], [13., 10.], [20., 20.]]), np.array([10, 10, 12, 12]), 1.5).tolist()
    [False, True, False]
    """
    rects = np.asarray(rects, float)
    dx = np.maximum(np.maximum(rects[..., 0] - points[:, 0], points[:, 0] - rects[..., 2]), 0.0)
    dy = np.maximum(np.maximum(rects[..., 1] - points[:, 1], points[:, 1] - rects[..., 3]), 0.0)
    return dx * dx + dy * dy <= (reach + 1.0) ** 2


class _Outlines:
    """The shapes an end may attach to, with their outlines' bounding rectangles: only the shapes
    whose rectangle (or a label drawn outside them) is near an end are measured exactly."""

    def __init__(self, shapes: list[Shape], label_boxes: dict[int, list[tuple[int, int, int, int]]]) -> None:
        rects = np.array([cv2.boundingRect(s.contour) for s in shapes], float).reshape(-1, 4)
        rects[:, 2:] += rects[:, :2]
        self.rects = rects
        self.labelled = np.array([s.index in label_boxes for s in shapes], bool)

    def near(self, x: float, y: float, reach: float) -> list[int]:
        """Positions (in order) of the shapes that may lie within ``reach`` of the point."""
        return np.flatnonzero(_within(np.array([[x, y]]), self.rects, reach) | self.labelled).tolist()


def _attach_one(e: _End, shapes: list[Shape], lw: int, tol: float,
                label_boxes: dict[int, list[tuple[int, int, int, int]]], outlines: _Outlines) -> None:
    """Attach the end to the nearest shape within ``tol`` of it (its outline, its inside, or
    one of its labels drawn outside it). ``outlines`` (of these shapes and label boxes) only
    spare measuring the outlines too far away anyway."""
    best = None
    x, y = float(e.point[0]), float(e.point[1])
    for i in outlines.near(x, y, tol):
        s = shapes[i]
        d = s.border_distance(x, y)
        if not s.is_container and s.contains(x, y):
            d = 0.0
        for box in label_boxes.get(s.index, ()):
            d = min(d, _box_distance(x, y, box) + lw)
        if d <= tol and (best is None or d < best[0] or (d == best[0] and s.area < best[1].area)):
            best = (d, s)
    if best is not None:
        e.shape = best[1].index
        e.at_container = best[1].is_container


#: the turns (radians) a walk along a loose end's line tries at each step, least first, when the
#: stroke does not run straight on (:func:`_follow`) ...
FOLLOW_TURNS = (0.0, 0.2, -0.2, 0.4, -0.4)
#: ... keeping within this cosine of the end's own direction (about 45 degrees)
FOLLOW_COS = 0.7


def _turned(d: np.ndarray, angle: float) -> np.ndarray:
    """``d`` turned by ``angle`` radians."""
    c, s = np.cos(angle), np.sin(angle)
    return np.array([d[0] * c - d[1] * s, d[0] * s + d[1] * c])


def _follow(e: _End, stroke: np.ndarray, blob_ids: np.ndarray, shapes: list[Shape], lw: int,
            label_boxes: dict[int, list[tuple[int, int, int, int]]], outlines: _Outlines) -> int:
    """A loose end where several connectors merged (a fan out of one side of a shape): walk on
    along its direction while there is stroke, and attach where the walk reaches a shape. A walk
    straight on that reaches none is tried again bending with a curving line (an end measured where
    its line still curves points off the line ahead): where the stroke does not run straight on, it
    takes the least turn (``FOLLOW_TURNS``) that stays on it, within about 45 degrees of the end's
    direction (``FOLLOW_COS``). Returns the number (in ``blob_ids``) of the first head blob met on
    the way when it reaches one, else 0."""
    if not e.direction.any():
        return 0
    for turns in ((0.0,), FOLLOW_TURNS):
        got = _walk(e, turns, stroke, blob_ids, shapes, lw, label_boxes, outlines)
        if got is not None:
            e.point, e.shape, e.at_container = got[0], got[1].shape, got[1].at_container
            return got[2]
    return 0


def _walk(e: _End, turns: tuple[float, ...], stroke: np.ndarray, blob_ids: np.ndarray, shapes: list[Shape],
          lw: int, label_boxes: dict[int, list[tuple[int, int, int, int]]],
          outlines: _Outlines) -> tuple[np.ndarray, _End, int] | None:
    """The walk of :func:`_follow` from ``e``, trying ``turns`` at each step: where it stops, the
    probe attached there, and the first head blob met; None when it reaches no shape."""
    h, w = stroke.shape
    p = e.point.astype(float).copy()
    d = e.direction
    gap = 0
    met_head = 0
    for step in range(1, 60 * lw):
        # straight on where the stroke runs on, else the least turn that stays on it
        for turn in turns:
            t = _turned(d, turn) if turn else d
            xx, yy = int(round(p[0] + t[0])), int(round(p[1] + t[1]))
            if float(np.dot(t, e.direction)) >= FOLLOW_COS and 0 <= xx < w and 0 <= yy < h and stroke[yy, xx]:
                d = t
                break
        p = p + d
        x, y = int(round(p[0])), int(round(p[1]))
        if not (0 <= x < w and 0 <= y < h):
            return None
        win = stroke[max(0, y - 1):y + 2, max(0, x - 1):x + 2]
        gap = 0 if win.any() else gap + 1
        if gap > 2 * lw:
            return None
        if not met_head:
            met_head = int(blob_ids[max(0, y - lw):y + lw + 1, max(0, x - lw):x + lw + 1].max())
        if step % lw == 0:
            probe = _End(e.chain, e.which, p.copy(), d)
            _attach_one(probe, shapes, lw, 2 * lw + 2, label_boxes, outlines)
            if probe.shape is not None:
                return p, probe, met_head
    return None


#: a piece's end is measured again behind its last few pixels, from this many line widths back to
#: ``BEHIND_TO`` (:func:`behind_direction`)
BEHIND_FROM, BEHIND_TO = 3, 12
#: ... and that direction is kept beside the end's own when the two differ by more than this cosine
#: (about 18 degrees)
BEHIND_COS = 0.95


def behind_direction(points: np.ndarray, tip: np.ndarray, direction: np.ndarray, lw: int) -> np.ndarray | None:
    """The direction a piece runs in towards its end ``tip``, measured on its points ``BEHIND_FROM`` to
    ``BEHIND_TO`` line widths back, when it differs from ``direction`` (the one measured at the end,
    over its last few pixels) by more than ``BEHIND_COS``; else None.

    Thinning leaves a stub a few pixels long turned off the line at some ends: where connectors leaving
    one point of a shape run together (the junction their merged stroke leaves a few widths off the
    outline), and where a thick line meets its head. Measured there, the end points sideways: past its
    head (:func:`_pointing_end`), and off the stroke a walk on along it follows (:func:`_follow`).

    >>> pts = np.array([[10.0, y] for y in range(0, 40)] + [[11.0, 40.0], [12.0, 40.0], [13.0, 40.0]])
    >>> behind_direction(pts, np.array([13.0, 40.0]), np.array([1.0, 0.0]), 2).round(2).tolist()
    [0.2, 0.98]
    >>> behind_direction(pts, np.array([13.0, 40.0]), np.array([0.0, 1.0]), 2) is None
    True
    """
    d = np.hypot(*(points - tip).T)
    near = points[(d >= BEHIND_FROM * lw) & (d <= BEHIND_TO * lw)]
    if len(near) < 2 * lw:
        return None
    v = tip - near.mean(axis=0)
    n = float(np.hypot(*v))
    if n < lw or float(np.dot(v / n, direction)) > BEHIND_COS:
        return None
    return v / n


def _follow_behind(e: _End, stroke: np.ndarray, blob_ids: np.ndarray, shapes: list[Shape], lw: int,
                   label_boxes: dict[int, list[tuple[int, int, int, int]]], outlines: _Outlines) -> None:
    """:func:`_follow` along the end's ``behind`` direction (when it has one): the end is attached
    where the walk reaches a shape, and left as it was when it reaches none. A head the walk passes is
    not taken: such a stub is where lines run together, at the point of a shape where others arrive
    with their heads. An end with a head is not walked: a head's tip is at its shape."""
    if e.behind is None or e.arrow:
        return
    probe = _End(e.chain, e.which, e.point.copy(), e.behind)
    _follow(probe, stroke, blob_ids, shapes, lw, label_boxes, outlines)
    if probe.shape is not None:
        e.point, e.shape, e.at_container = probe.point, probe.shape, probe.at_container


#: a loose end lies on a trunk when the trunk's stroke passes within this many line widths of it
TRUNK_REACH = 2.5
#: ... or runs into it within this many line widths ahead of the end
TRUNK_AHEAD = 8
#: ... and the trunk runs there along the end's direction to this cosine (about 18 degrees)
TRUNK_COS = 0.95
#: ... and the trunk's attached end lies ahead of it, seen from it, to this cosine (about 26 degrees)
TRUNK_AHEAD_COS = 0.9


def _along_trunks(groups: list[tuple[list[int], list[int], tuple[_End, _End], list[int]]],
                  chains: list[Chain], lw: int, shapes: list[Shape]) -> None:
    """Loose ends where a connector merged into a bundle of connectors sharing one stroke up to
    their shape (dagre draws many edges into one point of a busy shape, and they part only slowly,
    some hundreds of pixels out): the tracing keeps the shared stretch in one connector, and the
    others stop where they part from it. Such an end, lying on another connector's stroke that runs
    on along the end's direction to a shape ahead, is attached to that shape. It takes the
    arrowhead at that shape when its own connector has none at its other end (the bundle drawn
    into the shape). The stroke an end lies on may be a connector attached so itself: the head is
    still the one at the bundle's shape, whether or not that connector kept it.

    So is an end stopped at a container's outline, of a connector with no head at either end, when
    the stroke it lies on runs on to a shape inside that container: two connectors merged just where
    they cross the outline, and share the head at that shape.

    >>> from benchmark.extract.skeleton import Chain
    >>> def piece(x0, x1, y):
    ...     return Chain(np.array([[x, y] for x in range(x0, x1 + 1)], float), [])
    >>> chains = [piece(56, 100, 50), piece(10, 58, 51), piece(10, 57, 52)]
    >>> right, left = np.array([1.0, 0.0]), np.array([-1.0, 0.0])
    >>> trunk = (_End(0, 0, np.array([56.0, 50.0]), left, shape=9), _End(0, 1, np.array([100.0, 50.0]), right, True, shape=1))
    >>> headed = (_End(1, 0, np.array([10.0, 51.0]), left, True, shape=3), _End(1, 1, np.array([58.0, 51.0]), right))
    >>> plain = (_End(2, 0, np.array([10.0, 52.0]), left, shape=4), _End(2, 1, np.array([57.0, 52.0]), right))
    >>> _along_trunks([([i], [], g, []) for i, g in enumerate([trunk, headed, plain])], chains, 1, [])
    >>> [(e.shape, e.arrow) for e in (headed[1], plain[1])]
    [(1, False), (1, True)]
    """
    loose = [(k, e, o) for k, (_, _, (e1, e2), _) in enumerate(groups)
             for e, o in ((e1, e2), (e2, e1))
             if (e.shape is None or (e.at_container and not (e.arrow or o.arrow)))
             and o.shape is not None and e.direction.any()]
    if not loose:
        return
    pts = [np.concatenate([chains[i].points for i in g[0]], axis=0) for g in groups]
    owner = np.concatenate([np.full(len(p), k) for k, p in enumerate(pts)])
    allpts = np.concatenate(pts, axis=0)
    reach = TRUNK_REACH * lw + 1
    root: dict[int, _End] = {}
    for k, e, other in loose:
        rel = allpts - e.point
        d2 = (rel ** 2).sum(axis=1)
        # the end lies on the trunk's stroke, or runs into it a little further on: where two lines
        # merge, the thinning leaves no skeleton for some widths on either piece
        ahead = rel @ e.direction
        across = np.abs(rel @ np.array([-e.direction[1], e.direction[0]]))
        onto = (ahead >= 0) & (ahead <= TRUNK_AHEAD * lw) & (across <= reach)
        near = ((d2 <= reach * reach) | onto) & (owner != k)
        best = None
        for h in np.unique(owner[near]).tolist():
            _, _, (h1, h2), _ = groups[h]
            mine = owner == h
            # the trunk's direction where the end meets it
            mine_near = np.flatnonzero(mine & near)
            meet = allpts[mine_near[np.argmin(d2[mine_near])]]
            local = allpts[mine & (((allpts - meet) ** 2).sum(axis=1) <= (4 * lw + 2) ** 2)]
            if len(local) < 3:
                continue
            axis = np.linalg.svd(local - local.mean(axis=0), full_matrices=False)[2][0]
            if abs(float(np.dot(axis, e.direction))) < TRUNK_COS:
                continue
            gap = float(np.sqrt(d2[mine].min()))
            for t in (h1, h2):
                if t.shape is None or t.at_container or t.shape == other.shape:
                    continue
                if e.shape is not None and e.shape not in ancestors(shapes, t.shape):
                    continue
                v = t.point - e.point
                dist = float(np.hypot(*v))
                if dist >= 1 and float(np.dot(v / dist, e.direction)) >= TRUNK_AHEAD_COS and \
                        (best is None or gap < best[0]):
                    best = (gap, t)
        if best is not None:
            # an end attached here may be another's trunk end: the head is the one at the bundle's
            # shape, whether or not that end kept it (one whose connector has a head at its other
            # end leaves the shape there)
            t = best[1]
            root[id(e)] = r = root.get(id(t), t)
            e.point, e.shape, e.at_container = t.point.copy(), t.shape, t.at_container
            e.arrow = r.arrow and not other.arrow


def _walked_heads(met: list[tuple[_End, int, bool]], claimed: set[int] = frozenset()) -> list[_End]:
    """The walked ends (:func:`_follow`) that take the head blob met on their way, from (end, blob
    number, whether the connector's other end has a head). A blob that several walks pass is either
    their heads drawn one over another where they arrive together (a fan in) or where they run
    together leaving their shape (a fan out, wide as a head at the outline): it is no head of a
    connector whose other end has one. A blob one walk alone passes is its head, unless it is in
    ``claimed``, the blobs that ends took before any walk: a connector leaving a shape from the
    point where another one arrives runs into that one's head, and it is no head of a connector
    whose other end has one.

    >>> a, b, c = (_End(i, 0, np.zeros(2), np.zeros(2)) for i in range(3))
    >>> [e.chain for e in _walked_heads([(a, 1, True), (b, 2, False), (c, 2, False)])]
    [0, 1, 2]
    >>> [e.chain for e in _walked_heads([(a, 1, True), (b, 1, True), (c, 1, False)])]
    [2]
    >>> [e.chain for e in _walked_heads([(a, 1, True), (b, 2, False)], claimed={1, 2})]
    [1]
    """
    walks = Counter(head for _, head, _ in met)
    return [e for e, head, headed in met if (walks[head] == 1 and head not in claimed) or not headed]


def _drop_fan_out_heads(groups: list[tuple[list[int], list[int], tuple[_End, _End], list[int]]],
                        met: list[tuple[_End, int, bool]], taken: dict[int, int]) -> None:
    """Heads taken before any walk where two connectors leave a shape from one point: their lines
    run together for a stretch into a wedge as wide as a head at the outline, one end took it, and the
    other connector, cut where the lines part, walked on through it (:func:`_follow`). When both
    connectors have a head at their other end, both leave there: the end that took the wedge drops
    it. (One without a head at its other end keeps it: it arrives where the other leaves.) ``taken``
    is the blob number each end took before any walk, by the end's ``id``.

    >>> taker, far = _End(0, 0, np.zeros(2), np.zeros(2), True), _End(0, 1, np.zeros(2), np.zeros(2), True)
    >>> walker = _End(1, 0, np.zeros(2), np.zeros(2))
    >>> _drop_fan_out_heads([([0], [], (taker, far), [])], [(walker, 3, True)], {id(taker): 3}); taker.arrow
    False
    >>> taker.arrow, far.arrow = True, False
    >>> _drop_fan_out_heads([([0], [], (taker, far), [])], [(walker, 3, True)], {id(taker): 3}); taker.arrow
    True
    """
    claimed = set(taken.values())
    leaving = {head for _, head, headed in met if headed and head in claimed}
    if not leaving:
        return
    for _, _, (e1, e2), _ in groups:
        for e, other in ((e1, e2), (e2, e1)):
            if e.arrow and other.arrow and taken.get(id(e)) in leaving:
                e.arrow = False


#: a connector leaving a shape where heads are piled up, its line stopped at the outline of a container
#: around the shape, runs on to the pile at most this many line widths (:func:`_shared_heads`)
SHARED_REACH = 10


def _shared_heads(groups: list[tuple[list[int], list[int], tuple[_End, _End], list[int]]],
                  blobs: list[np.ndarray], claimed: set[int], typical: float, lw: int, shapes: list[Shape],
                  label_boxes: dict[int, list[tuple[int, int, int, int]]], outlines: _Outlines) -> None:
    """Heads drawn one over another where three or more connectors arrive at one point of a shape
    (d2's drawings): their blob, at least ``DOUBLE_HEAD`` heads large, went to one end or two
    (:func:`_make_ends`), and the other connectors aimed at it were left with no head at either
    end. Such a connector's end at a shape aimed at a blob that large, which another end took
    (``claimed``: the blob numbers, from 1), takes it too. One with a head at its other end keeps
    none there: it leaves the shape where the others arrive. The end is attached again at the head's
    tip: its line may have stopped short of the pile, at the outline of a container around the shape
    (so is the end of a connector leaving the shape there that stopped at a container's outline)."""
    shared = [(i + 1, b) for i, b in enumerate(blobs) if i + 1 in claimed and len(b) >= DOUBLE_HEAD * typical]
    if not shared:
        return
    for _, _, (e1, e2), _ in groups:
        headless = not (e1.arrow or e2.arrow)
        for e in (e1, e2):
            if e.shape is None or e.arrow or not (headless or e.at_container):
                continue
            # a line stopped at a container's outline runs on straight across its margin to the pile
            reach, aim = (4 * lw, 0.5) if headless else (SHARED_REACH * lw, 0.9)
            near = [(d, n, b) for n, b in shared for _, d in _ends_aimed_at(b, [e], reach, aim, lw)]
            if not near:
                continue
            blob = min(near, key=lambda t: t[:2])[2]
            if headless:
                _give_head(e, blob)
                headless = False
            else:   # a connector leaving the shape there, its line stopped at a container's outline
                e.point = blob[np.argmax(np.hypot(*(blob - e.point).T))]
            was = e.shape, e.at_container
            e.shape = None
            _attach_one(e, shapes, lw, 4 * lw + 4, label_boxes, outlines)
            if e.shape is None:
                e.shape, e.at_container = was


def _through_outline(e: _End, shapes: list[Shape], lw: int) -> None:
    """An end stopping at a container's outline with one of its shapes right behind it: the
    connector went through the outline to that shape (the piece inside was too short to trace)."""
    container = shapes[e.shape]
    x, y = float(e.point[0]), float(e.point[1])
    inner = [shapes[c] for c in container.children]
    near = [(s.border_distance(x, y), s.index) for s in inner if s.border_distance(x, y) <= 3 * lw + 4]
    if near:
        e.shape = min(near)[1]
        e.at_container = shapes[e.shape].is_container


def _attach(ends: list[_End], shapes: list[Shape], lw: int,
            label_boxes: dict[int, list[tuple[int, int, int, int]]]) -> None:
    outlines = _Outlines(shapes, label_boxes)
    for e in ends:
        _attach_one(e, shapes, lw, 4 * lw + 4, label_boxes, outlines)


def _refit_outline_ends(ends: list[_End], chains: list[Chain], lw: int) -> None:
    """Ends stopping at a container's outline, taken along the line their piece runs on.

    The outline's zone is cut out of the connector mask along the outline; a line crossing it at
    a shallow angle is cut on a long slant, and thinning leaves a hook along the cut at the end
    of the piece, which turns the end's measured direction towards the outline. The direction of
    a straight piece is measured instead behind the hook (``STRAIGHT_MIN`` line widths of the
    piece from 4 line widths on), and the end taken on that line is kept as ``line``, beside the
    end's own (a connector may also really bend at the outline, where a container's corner is).
    """
    for e in ends:
        if e.arrow or not e.at_container:
            continue
        pts = chains[e.chain].points
        d = np.hypot(*(pts - e.point).T)
        near = pts[(d >= 4 * lw) & (d <= (4 + STRAIGHT_MIN) * lw)]
        if len(near) < STRAIGHT_MIN * lw // 2:
            continue
        c = near.mean(axis=0)
        _, _, vt = np.linalg.svd(near - c, full_matrices=False)
        u = vt[0]
        if float(np.abs((near - c) @ np.array([u[1], -u[0]])).max()) > 0.75 * lw:
            continue            # not straight there: a curve's end keeps its own direction
        if float(np.dot(e.point - c, u)) < 0:
            u = -u
        e.line = (c + float(np.dot(e.point - c, u)) * u, u)


def _dashed_chains(chains: list[Chain], dashed: np.ndarray | None, lw: int) -> set[int]:
    """Indices of the chains drawn dashed: a fifth of their points or more near a bridged gap."""
    if dashed is None or not dashed.any():
        return set()
    near = cv2.dilate(dashed, np.ones((2 * lw + 1, 2 * lw + 1), np.uint8))
    out = set()
    for i, c in enumerate(chains):
        pts = c.points.astype(int)
        if near[pts[:, 1], pts[:, 0]].mean() >= 0.2:
            out.add(i)
    return out


def _over_gaps(inked: np.ndarray, points: np.ndarray) -> np.ndarray:
    """Which points have no ink within a pixel: ``inked`` is the stroke without the bridges drawn
    between dashes (:func:`without_bridges`), widened by a pixel."""
    return inked[points[:, 1].astype(int), points[:, 0].astype(int)] == 0


def _gap_shares(chains: list[Chain], inked: np.ndarray | None) -> np.ndarray | None:
    """Each chain's share of points over the gaps between dashes (:func:`_over_gaps`). A solid
    line's is about 0 even where it runs close beside a dashed one; a dashed line's pieces are 0.1
    to 0.3 (the pixel of reach shortens each gap). None without ``inked``."""
    if inked is None:
        return None
    return np.array([float(_over_gaps(inked, c.points).mean()) for c in chains])


#: a piece turning by more than this cosine (about 70 degrees) may be two connectors in different
#: styles meeting at a corner (:func:`_split_unlike_arms`)
UNLIKE_ARMS_COS = 0.35


def _split_unlike_arms(chains: list[Chain], inked: np.ndarray, lw: int, reach: float) -> list[Chain]:
    """Pieces that are a solid connector and a dashed one meeting at a corner, split there. Where a
    dashed line crosses a solid one right beside an edge label, the label's box blanks one arm of
    the crossing, and the thinning joins the two lines' other arms round the corner into one piece
    (``biz_order_fulfillment``'s solid ``fail`` and dashed ``stock levels`` at ``fail``). A
    piece is split at its sharpest turn (:func:`.skeleton.split_at_reversal`, from about 70 degrees)
    when one arm is surely solid and the other surely dashed (by their share of points over gaps,
    :func:`_gap_shares`), both long enough to tell (``DASH_KNOWN``). ``inked``: see :func:`_over_gaps`."""
    out = []
    for c in chains:
        # a surely dashed arm long enough to tell has this many points over gaps at least: pieces with
        # fewer (most, all solid) are not ordered along their path
        if c.length() < 2 * DASH_KNOWN * lw or _over_gaps(inked, c.points).sum() < SURELY_DASHED * DASH_KNOWN * lw:
            out.append(c)
            continue
        arms = split_at_reversal(c.points, reach, UNLIKE_ARMS_COS)
        if arms is not None and min(len(a) for a in arms) >= DASH_KNOWN * lw:
            lo, hi = sorted(float(_over_gaps(inked, a).mean()) for a in arms)
            if lo <= SURELY_SOLID and hi >= SURELY_DASHED:
                out.extend(_arm(a, reach) for a in arms)
                continue
        out.append(c)
    return out


def _arm(points: np.ndarray, reach: float) -> Chain:
    """The piece made of ``points``, one arm of a piece split at a corner, ending at the two ends of
    its path (:func:`.skeleton.path_tips`; the trace's own end may be a pixel of a staircase short of
    the tip)."""
    return Chain(points, path_tips(points, reach))


def _through_shapes(ends: list[_End], shapes: list[Shape], stroke: np.ndarray, lw: int,
                    dashed: set[int] = frozenset(), chains: list[Chain] | None = None,
                    gaps: np.ndarray | None = None) -> None:
    """Lines drawn straight across a shape (grid layouts draw connectors over the shapes between
    their ends): two arrowless ends at the same leaf shape, facing each other from opposite sides,
    with the stroke running on between them over the shape, are one connector passing through. A
    connector that ends at a shape stops at its outline, so nothing is drawn inside. Likewise two
    loose ends (or ends at a container's outline) facing each other within 30 line widths with
    the stroke running on between them: a connector crossing an outline or another connector at
    a shallow angle, whose traced pieces stop short of each other. Two dashed chains (``dashed``)
    facing each other across a shape may have no stroke over it: d2 can draw a dashed
    connector under the shapes in its way. An end with a head is one of such a pair only when the
    stroke runs on between them over the shape's inside (its middle at least three line widths
    inside the outline): no connector is drawn into a shape, so its head is a wedge where a line
    passing over the shape crosses the outline.

    Facing is read from the ends' own directions, or, for two straight pieces (``chains``), from
    the pieces as wholes: both lie along one line (:func:`_in_line`). A short piece between two
    neighbouring shapes bends at its traced ends, where it meets the outlines.

    ``gaps`` (:func:`label_gaps`) are the boxes of edge labels, which d2 blanks out of every
    connector passing under them: a line that runs on across another edge's label is still
    covered there, when it is drawn along at least half of its way."""
    lines = [straight_line(c.points, lw) for c in chains] if chains is not None else None
    stroke_or_gap = stroke | gaps if gaps is not None and gaps.any() else None

    def cover_of(p1: np.ndarray, p2: np.ndarray) -> float:
        cover = stroke_cover(stroke, p1, p2, lw)
        if stroke_or_gap is not None and 0.5 <= cover < 0.9:
            cover = stroke_cover(stroke_or_gap, p1, p2, lw)
        return cover

    by_shape: dict[int, list[int]] = {}
    leaves = [s for s in shapes if not s.is_container]
    for i, e in enumerate(ends):
        if e.at_container:
            continue
        si = e.shape if e.shape is not None else _near_leaf(e, leaves, NEAR_LEAF * lw)
        if si is not None:
            by_shape.setdefault(si, []).append(i)
    cands = []
    for si, idx in by_shape.items():
        for a in range(len(idx)):
            for b in range(a + 1, len(idx)):
                e1, e2 = ends[idx[a]], ends[idx[b]]
                if e1.chain == e2.chain:
                    continue
                v = e2.point - e1.point
                dist = float(np.hypot(*v))
                if dist < 4 * lw:
                    continue
                u = v / dist
                if min(float(np.dot(e1.direction, u)), float(np.dot(e2.direction, -u))) < 0.97 and \
                        not _in_line(lines, e1, e2, lw):
                    continue
                if e1.arrow or e2.arrow:
                    # a connector ends at a shape's outline: a line drawn on over the shape's inside
                    # (not along its outline) from a headed end is one passing over it, and the head a
                    # wedge where it crosses the outline
                    mid = (e1.point + e2.point) / 2
                    cover = stroke_cover(stroke, e1.point, e2.point, lw) if \
                        shapes[si].contains(mid[0], mid[1], -3 * lw) else 0.0
                    if cover >= 0.9:
                        cands.append((-cover, dist, idx[a], idx[b]))
                    continue
                cover = cover_of(e1.point, e2.point)
                if cover < 0.9 and e1.chain in dashed and e2.chain in dashed:
                    cover = _hidden_cover(stroke, shapes[si], e1.point, e2.point, lw)
                if cover >= 0.9:
                    cands.append((-cover, dist, idx[a], idx[b]))
    # the same across a container's outline, or a gap in the traced stroke (another connector
    # crossing at a shallow angle): loose ends facing each other with the stroke running between
    loose = [i for i, e in enumerate(ends) if not e.arrow and (e.shape is None or e.at_container)]
    if loose:
        pts = np.array([ends[i].point for i in loose], float)
        dirs = np.array([ends[i].direction for i in loose], float)
        gaps = np.array([_outline_gap(ends[i], shapes, lw) for i in loose], float)
        for a, i in enumerate(loose):
            v = pts - pts[a]
            dist = np.hypot(v[:, 0], v[:, 1])
            ok = (dist >= 2 * lw) & (dist <= np.maximum(30 * lw, np.maximum(gaps, gaps[a])))
            ok[: a + 1] = False
            for b in np.nonzero(ok)[0]:
                j = loose[b]
                if ends[i].chain == ends[j].chain:
                    continue
                if dist[b] > 30 * lw and (ends[i].shape != ends[j].shape or not _lines_meet(ends[i], ends[j], lw)):
                    continue    # a long gap is only the cut of one container's outline crossed
                u = v[b] / dist[b]
                if min(float(np.dot(dirs[a], u)), float(np.dot(dirs[b], -u))) < 0.97 and \
                        not _in_line(lines, ends[i], ends[j], lw) and not _lines_meet(ends[i], ends[j], lw):
                    continue
                cover = cover_of(pts[a], pts[b])
                if cover < 0.9 and _along_cut(ends[i], ends[j], shapes, lw):
                    cover = 0.9
                if cover >= 0.9:
                    # of two partners at about the same distance (connectors crossing an outline
                    # side by side), the one better in line comes first
                    cands.append((-cover, float(dist[b]) * (1 + 10 * max(0.0, 1 - _facing(ends[i], ends[j], lw))), i, j))
    cands.sort()
    for _, _, i, j in cands:
        if ends[i].through is None and ends[j].through is None:
            ends[i].through, ends[j].through = j, i


def _along_cut(e1: _End, e2: _End, shapes: list[Shape], lw: int) -> bool:
    """Do two ends at one container's outline lie either side of a stretch of it that a connector
    runs along? Crossing the outline at a shallow angle, a connector runs for tens of pixels within
    the zone cut away round it (:func:`connector_mask`), where a dashed line's dashes merge with the
    outline, unbridged: the stroke between its pieces is not the line's. The way between the ends
    lies wholly within that zone."""
    if not (e1.at_container and e2.at_container and e1.shape == e2.shape):
        return False
    v = e2.point - e1.point
    way = e1.point + np.linspace(0.0, 1.0, max(2, int(np.hypot(*v) / lw)))[:, None] * v
    outline = shapes[e1.shape]
    return all(outline.border_distance(x, y) <= 2 * lw + 3 for x, y in way)


def label_gaps(blocks: list[Block], shape_hw: tuple[int, int], lw: int) -> np.ndarray:
    """The boxes of edge labels, widened by a line's width and half a text line (the margin d2
    blanks out of a connector around its label), as a boolean mask of the image's size.

    >>> from benchmark.extract.ocr import Word
    >>> b = Block([[Word("ok", 10, 10, 20, 8, 90.0, 0.5)]])
    >>> m = label_gaps([b], (40, 60), 2); bool(m[14, 20]), bool(m[30, 50])
    (True, False)
    """
    h, w = shape_hw
    mask = np.zeros((h, w), bool)
    for b in blocks:
        x, y, bw, bh = b.box
        pad = lw + int(b.line_height) // 2
        mask[max(0, y - pad):max(0, y + bh + pad), max(0, x - pad):max(0, x + bw + pad)] = True
    return mask


#: a loose end this many line widths or fewer from a leaf shape's outline may be one side of a
#: line drawn through that shape (where other connectors crossing near the outline stopped its
#: trace short of it; the stroke must still run on to the other side)
NEAR_LEAF = 8


def _near_leaf(e: _End, leaves: list[Shape], reach: float) -> int | None:
    """The index of the leaf shape nearest a loose end, when its outline is within ``reach``."""
    x, y = float(e.point[0]), float(e.point[1])
    near = [(d, s.index) for s in leaves
            if _box_distance(x, y, s.box) <= reach and (d := s.border_distance(x, y)) <= reach]
    return min(near)[1] if near else None


def straight_line(points: np.ndarray, lw: int) -> tuple[np.ndarray, np.ndarray] | None:
    """(a point on it, unit direction) of the line a traced piece lies along, or None when the
    piece is not straight (a pixel more than a line's width off the line) or shorter than
    ``STRAIGHT_MIN`` line widths.

    >>> pts = np.stack([np.arange(40.), 10 + 0.1 * np.arange(40.)], axis=1)
    >>> c, d = straight_line(pts, 2); bool(abs(d[1] / d[0] - 0.1) < 1e-6)
    True
    >>> straight_line(np.stack([np.arange(40.), (np.arange(40.) - 20) ** 2 / 40], axis=1), 2) is None
    True
    """
    if len(points) < STRAIGHT_MIN * lw:
        return None
    c = points.mean(axis=0)
    d = points - c
    _, _, vt = np.linalg.svd(d, full_matrices=False)
    u = vt[0]
    off = np.abs(d[:, 0] * u[1] - d[:, 1] * u[0])
    if float(np.hypot(*(points.max(axis=0) - points.min(axis=0)))) < STRAIGHT_MIN * lw or off.max() > lw:
        return None
    return c, u


def _in_line(lines: list | None, e1: _End, e2: _End, lw: int) -> bool:
    """Do the straight pieces of ``e1`` and ``e2`` lie along one line, each continuing the other
    past its end: their directions agree, each end lies on the other piece's line, and the gap
    between the ends runs along that line?"""
    if lines is None or lines[e1.chain] is None or lines[e2.chain] is None:
        return False
    (c1, u1), (c2, u2) = lines[e1.chain], lines[e2.chain]
    if abs(float(np.dot(u1, u2))) < IN_LINE_COS:
        return False
    v = e2.point - e1.point
    dist = float(np.hypot(*v))
    # the pieces point at each other: e1's end lies beyond its piece's middle towards e2
    if float(np.dot(e1.point - c1, v)) <= 0 or float(np.dot(e2.point - c2, -v)) <= 0:
        return False
    if abs(float(np.dot(v / dist, u1))) < IN_LINE_COS:
        return False
    for c, u, p in ((c1, u1, e2.point), (c2, u2, e1.point)):
        d = p - c
        if abs(float(d[0] * u[1] - d[1] * u[0])) > 1.5 * lw:
            return False
    return True


#: the longest gap cut out of a line crossing a container's outline at a shallow angle that is
#: bridged, in line widths
OUTLINE_GAP_MAX = 150


def _outline_gap(e: _End, shapes: list[Shape], lw: int) -> float:
    """How long a gap the cut of a container's outline leaves in a straight line crossing it where
    ``e`` ends (0 for an end not at a container's outline, or not on a measured ``line``).

    The outline's zone (about ``2 * lw + 6`` pixels across) is crossed at the angle between the
    line and the nearer side of the container's box; the pieces' traced ends stop a few line
    widths short of it.
    """
    if not e.at_container or e.line is None or e.shape is None:
        return 0.0
    x, y, w, h = shapes[e.shape].box
    px, py = e.line[0]
    u = e.line[1]
    to_side = min(abs(px - x), abs(px - x - w))      # a left or right side: crossed at |u_x|
    to_top = min(abs(py - y), abs(py - y - h))
    sine = abs(float(u[0])) if to_side < to_top else abs(float(u[1]))
    return float(min(OUTLINE_GAP_MAX * lw, (2 * lw + 6) / max(sine, 1e-3) + 6 * lw))


def _lines_meet(e1: _End, e2: _End, lw: int) -> bool:
    """Do two ends, at least one of them at a container's outline with its ``line`` measured
    behind the hook there (:func:`_refit_outline_ends`), face each other along one line?"""
    if e1.line is None and e2.line is None:
        return False
    return _facing(e1, e2, lw) >= 0.97


def _facing(e1: _End, e2: _End, lw: int) -> float:
    """How straight two ends face each other: the smaller cosine between each one's direction (its
    ``line``'s where measured) and the way to the other (-1 for ends less than a line width apart)."""
    (p1, d1), (p2, d2) = (e.line or (e.point, e.direction) for e in (e1, e2))
    v = p2 - p1
    dist = float(np.hypot(*v))
    if dist < lw:
        return -1.0
    u = v / dist
    return min(float(np.dot(d1, u)), float(np.dot(d2, -u)))


def _hidden_cover(stroke: np.ndarray, shape: Shape, p1: np.ndarray, p2: np.ndarray, lw: int) -> float:
    """Share of the segment p1-p2 along which there is stroke or the inside of ``shape`` (0 when
    the segment runs outside the shape for most of its length)."""
    n = max(2, int(np.hypot(*(p2 - p1)) / 2))
    t = np.linspace(0.0, 1.0, n)
    pts = p1[None, :] + t[:, None] * (p2 - p1)[None, :]
    inside = np.array([shape.contains(x, y, -lw) for x, y in pts])
    if inside.mean() < 0.5:
        return 0.0
    h, w = stroke.shape
    xs = np.clip(np.round(pts[:, 0]).astype(int), 0, w - 1)
    ys = np.clip(np.round(pts[:, 1]).astype(int), 0, h - 1)
    r = max(1, lw // 2)
    hit = inside.copy()
    for dy in range(-r, r + 1):
        for dx in range(-r, r + 1):
            hit |= stroke[np.clip(ys + dy, 0, h - 1), np.clip(xs + dx, 0, w - 1)]
    return float(hit.mean())


def stroke_cover(stroke: np.ndarray, p1: np.ndarray, p2: np.ndarray, lw: int) -> float:
    """Share of the straight segment p1-p2 along which there is stroke (within a line's width).

    >>> m = np.zeros((20, 40), bool); m[9:12, 5:35] = True
    >>> stroke_cover(m, np.array([5., 10.]), np.array([34., 10.]), 2)
    1.0
    >>> stroke_cover(m, np.array([5., 10.]), np.array([34., 18.]), 2) < 0.5
    True
    """
    h, w = stroke.shape
    n = max(2, int(np.hypot(*(p2 - p1))))
    t = np.linspace(0.0, 1.0, n)
    xs = np.clip(np.round(p1[0] + t * (p2[0] - p1[0])).astype(int), 0, w - 1)
    ys = np.clip(np.round(p1[1] + t * (p2[1] - p1[1])).astype(int), 0, h - 1)
    r = max(1, lw // 2)
    hit = np.zeros(n, bool)
    for dy in range(-r, r + 1):
        for dx in range(-r, r + 1):
            hit |= stroke[np.clip(ys + dy, 0, h - 1), np.clip(xs + dx, 0, w - 1)]
    return float(hit.mean())


#: letters that reach above the x-height (capitals and digits too): a label with none of them is boxed
#: from its x-height up
ASCENDING = set("bdfhijklt!?/()[]{}|бйё") | set("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") | \
    set("АБВГДЕЁЖЗИЙКЛМНОПРСТУФХЦЧШЩЪЫЬЭЮЯ")


def _mark_label_boxes(ends: list[_End], blocks: list[Block], lw: int) -> None:
    # a label's box is its letters': one with no letter reaching above the x-height (``query``) is boxed
    # from there, while d2's gap in its connector is as high as a whole line (``logs``): its box is
    # taken that much higher
    tall = float(np.percentile([b.line_height for b in blocks], 90)) if blocks else 0.0
    for bi, b in enumerate(blocks):
        x, y, w, h = b.box
        pad = 2 * lw + b.line_height
        low = 0.0 if ASCENDING & set(b.text) else max(0.0, tall - b.line_height)
        for e in ends:
            px, py = e.point
            if x - pad <= px <= x + w + pad and y - pad - low <= py <= y + h + pad:
                e.label_boxes.append(bi)


def _attach_across_labels(ends: list[_End], shapes: list[Shape], blocks: list[Block], lw: int) -> None:
    """A connector leaving a shape under another edge's label: d2 blanks the label's box out of it,
    so its piece starts past the box, too far from the shape to attach. A loose end in a label's
    box, aimed at a leaf shape's outline within the box's height and a text line beyond, with no
    other piece ahead of it facing back (one that would continue it across the box), attaches to
    that shape."""
    leaves = [s for s in shapes if not s.is_container]
    if not leaves or not ends:
        return
    pts = np.array([e.point for e in ends], float).reshape(-1, 2)
    dirs = np.array([e.direction for e in ends], float).reshape(-1, 2)
    chain = np.array([e.chain for e in ends])
    boxes = [cv2.boundingRect(s.contour) for s in leaves]
    for e in ends:
        if e.shape is not None or e.arrow or not e.label_boxes or not e.direction.any():
            continue
        reach = max(blocks[i].box[3] + 2 * blocks[i].line_height for i in set(e.label_boxes)) + 4 * lw
        v = pts - e.point
        along = v @ e.direction
        aside = np.abs(v[:, 0] * e.direction[1] - v[:, 1] * e.direction[0])
        facing = dirs @ -e.direction
        if ((chain != e.chain) & (along > 0) & (along <= reach + 4 * lw) & (aside <= 3 * lw)
                & (facing >= 0.7)).any():
            continue
        far = e.point + reach * e.direction
        lo, hi = np.minimum(e.point, far) - lw, np.maximum(e.point, far) + lw
        near = [s for s, (bx, by, bw, bh) in zip(leaves, boxes)
                if bx <= hi[0] and bx + bw >= lo[0] and by <= hi[1] and by + bh >= lo[1]]
        for step in range(1, int(reach) + 1):
            x, y = e.point + step * e.direction
            hit = next((s for s in near if s.contains(x, y, lw)), None)
            if hit is not None:
                e.shape = hit.index
                break


#: most connectors a drawing shows with no head at either end (neither under a label) for its
#: connectors with a hidden end to be read as pointing into it (:func:`_heads_under_labels`): the
#: bundled diagrams drawn with ``->`` show none to 8 % (one ``--`` in twelve), the network diagram
#: drawn with ``--`` 88 %
HEADLESS_MAX = 0.25


def _heads_under_labels(edges: list[RawEdge]) -> None:
    """A d2 connector with no head in sight, one of whose ends lies under another edge's label (d2
    blanks the label's box out of it, head and all), points into that end: d2 draws a head on every
    connector but those drawn ``--``. Not in a drawing whose connectors mostly show no head
    (``HEADLESS_MAX``): there the hidden end is as headless as the others."""
    if not edges:
        return
    headless = sum(1 for e in edges if not (e.head_a or e.head_b or any(e.under_label)))
    if headless > HEADLESS_MAX * len(edges):
        return
    for e in edges:
        if not (e.head_a or e.head_b) and e.under_label[0] != e.under_label[1]:
            e.head_a, e.head_b = e.under_label


def _join_pairs(ends: list[_End], free: list[int], near: float) -> list[tuple[int, int]]:
    """The pairs (i, j), i < j, of the ends ``free`` (indices into ``ends``) that may be joined: those
    about ``near`` pixels apart or closer (a little more is let through: the caller measures exactly),
    and those beside one edge label box, in ascending order. Every other pair is neither close nor
    across a label, which :func:`_join` refuses; found with a sort by x instead of trying every pair.

    >>> e = [_End(0, 0, np.array([0., 0.]), np.array([1., 0.])), _End(1, 0, np.array([5., 0.]), np.array([-1., 0.])),
    ...      _End(2, 0, np.array([90., 0.]), np.array([1., 0.]), label_boxes=[3]),
    ...      _End(3, 0, np.array([300., 0.]), np.array([1., 0.]), label_boxes=[3])]
    >>> _join_pairs(e, [0, 1, 2, 3], 10)
    [(0, 1), (2, 3)]
    """
    if len(free) < 2:
        return []
    idx = np.asarray(free)
    pts = np.array([ends[i].point for i in free], float).reshape(-1, 2)
    order = np.argsort(pts[:, 0], kind="stable")
    xs = pts[order, 0]
    reach = near * (1 + 1e-9) + 1e-6
    pairs: set[tuple[int, int]] = set()
    hi = np.searchsorted(xs, xs + reach, side="right")
    for a in range(len(order)):
        if hi[a] - a <= 1:
            continue
        others = order[a + 1:hi[a]]
        d = np.hypot(*(pts[others] - pts[order[a]]).T)
        for b in others[d <= reach]:
            i, j = int(idx[order[a]]), int(idx[b])
            pairs.add((min(i, j), max(i, j)))
    by_box: dict[int, list[int]] = {}
    for i in free:
        for box in set(ends[i].label_boxes):
            by_box.setdefault(box, []).append(i)
    for members in by_box.values():
        pairs.update((i, j) for n, i in enumerate(members) for j in members[n + 1:])
    return sorted(pairs)


#: an end at an edge label's box and one further off continue each other across the box when both
#: aim along the way between them to this cosine (about 25 degrees)
ACROSS_COS = 0.9


def _across_label_pairs(ends: list[_End], free: list[int], blocks: list[Block], near: float,
                        lw: int) -> dict[tuple[int, int], int]:
    """Pairs (i, j), i < j, of free ends, one at an edge label's box and the other not, that continue
    each other straight across the box: the way between them crosses it, and both aim along it
    (``ACROSS_COS``), with the label block's index. A connector crossing another one just before the
    label loses its traced stretch up to the label's gap there (the crossing's spur), and its end
    stops short of the box."""
    out: dict[tuple[int, int], int] = {}
    if not free:
        return out
    pts = np.array([ends[i].point for i in free], float).reshape(-1, 2)
    for i in free:
        e = ends[i]
        if not e.label_boxes:
            continue
        dist = np.hypot(*(pts - e.point).T)
        for bi in set(e.label_boxes):
            x, y, w, h = blocks[bi].box
            reach = float(np.hypot(w, h)) + 2 * near
            for b in np.flatnonzero((dist > near) & (dist <= reach)):
                j = free[b]
                o = ends[j]
                if o.chain == e.chain or bi in o.label_boxes:
                    continue
                u = (o.point - e.point) / dist[b]
                if min(float(np.dot(e.direction, u)), float(np.dot(o.direction, -u))) < ACROSS_COS:
                    continue
                t = np.linspace(0.0, 1.0, max(2, int(dist[b] / lw)))[:, None]
                way = e.point[None, :] + t * (o.point - e.point)[None, :]
                if ((way[:, 0] >= x - lw) & (way[:, 0] <= x + w + lw) & (way[:, 1] >= y - lw)
                        & (way[:, 1] <= y + h + lw)).any():
                    out[(min(i, j), max(i, j))] = bi
    return out


#: a traced piece at least this many line widths long is known to be dashed or solid (d2's dashes and
#: gaps are a few line widths each: such a piece holds several)
DASH_KNOWN = 15
#: ... and surely solid when at most this share of its points runs over gaps between dashes
#: (:func:`_gap_shares`), surely dashed when at least this share does (d2's dashed connectors: 0.1 to
#: 0.3, a piece taking a stretch of another line where they cross or touch less; solid ones 0 to 0.01)
SURELY_SOLID, SURELY_DASHED = 0.03, 0.15


def _join(ends: list[_End], chains: list[Chain], lw: int, blocks: list[Block] | None = None,
          gap_shares: np.ndarray | None = None) -> list[tuple[list[int], list[int], tuple[_End, _End], list[int]]]:
    """Join free chain ends to collinear partners; returns (chain ids in order along the group,
    the end of each chain the walk enters it by, the group's outer ends, the edge label blocks
    whose gaps the group crosses) per group. Two ends are joined across an edge label's gap
    when both are at its box, or (with ``blocks``) when one is and the other continues it straight
    across the box from further off (:func:`_across_label_pairs`). A piece surely dashed and one
    surely solid (by ``gap_shares``, :func:`_gap_shares`: ``SURELY_DASHED``, ``SURELY_SOLID``),
    both long enough to tell (``DASH_KNOWN``), are never joined: two connectors crossing under a
    label, one dashed, are each joined on across it in its own line style."""
    def free(e: _End) -> bool:
        return not e.arrow and (e.shape is None or e.at_container)

    def unlike(e1: _End, e2: _End) -> bool:
        if gap_shares is None:
            return False
        lo, hi = sorted((gap_shares[e1.chain], gap_shares[e2.chain]))
        return lo <= SURELY_SOLID and hi >= SURELY_DASHED and \
            min(chains[e1.chain].length(), chains[e2.chain].length()) >= DASH_KNOWN * lw

    cands = []
    near = 8 * lw + 8
    loose_ends = [i for i, e in enumerate(ends) if free(e)]
    across = _across_label_pairs(ends, loose_ends, blocks, near, lw) if blocks else {}
    for i, j in sorted(set(_join_pairs(ends, loose_ends, near)) | set(across)):
        e1, e2 = ends[i], ends[j]
        if e2.chain == e1.chain:
            continue
        v = e2.point - e1.point
        dist = float(np.hypot(*v))
        in_label = bool(set(e1.label_boxes) & set(e2.label_boxes)) or (i, j) in across
        if dist > near and not in_label:
            continue
        if e1.at_container != e2.at_container and not in_label and dist > 2 * lw:
            continue
        facing = float(np.dot(e1.direction, -e2.direction))
        if dist > 2 * lw:
            u = v / dist
            along = min(float(np.dot(e1.direction, u)), float(np.dot(e2.direction, -u)))
        else:
            along = 1.0
        # a corner right at a container's outline or under a label (elk) bends sharply
        loose = in_label or dist <= 4 * lw + 4
        if not loose and (facing < 0.3 or along < 0.5):
            continue
        if loose and (facing < -0.2 or along < 0.0):
            continue
        bend = max(0.0, 2.0 - facing - along)          # 0 when the two pieces continue each other
        if unlike(e1, e2):
            continue
        cands.append((dist * (1 + 4 * bend) - (20 * lw if in_label else 0), i, j))
    cands.sort()
    partner: dict[int, int] = {}
    via_label: dict[int, int] = {}
    for i, e in enumerate(ends):
        if e.through is not None and i not in partner and e.through not in partner \
                and not unlike(e, ends[e.through]):
            partner[i], partner[e.through] = e.through, i
            e.joined = ends[e.through].joined = True
    for _, i, j in cands:
        if i in partner or j in partner:
            continue
        partner[i], partner[j] = j, i
        ends[i].joined = ends[j].joined = True
        shared = sorted(set(ends[i].label_boxes) & set(ends[j].label_boxes)) or \
            ([across[(i, j)]] if (i, j) in across else [])
        if shared:
            via_label[i] = via_label[j] = shared[0]
    # walk the joins: chain c has ends 2c and 2c+1
    groups = []
    seen: set[int] = set()
    for c in range(len(chains)):
        if c in seen:
            continue
        # find a group end: walk from end (2c) through joins
        start = 2 * c
        visited = {c}
        e = start
        while e in partner:
            other = partner[e]
            oc = other // 2
            if oc in visited:
                break
            visited.add(oc)
            e = other ^ 1
        first = e
        members = []
        entries = []
        e = first
        seen_local: set[int] = set()
        while True:
            ch = e // 2
            if ch in seen_local:
                break
            seen_local.add(ch)
            members.append(ch)
            entries.append(e & 1)
            out = e ^ 1
            if out in partner and partner[out] // 2 not in seen_local:
                e = partner[out]
            else:
                break
        seen |= seen_local
        crossed = sorted({via_label[2 * m + k] for m in members for k in (0, 1) if 2 * m + k in via_label})
        groups.append((members, entries, (ends[first], ends[out]), crossed))
    return groups


#: weight of a label's distance from the middle of a connector against its distance from the
#: connector's line, when labels are given to connectors (d2 centres a label on its connector)
MIDDLE_WEIGHT = 0.5


def _label_edges(edges: list[RawEdge], blocks: list[Block], lw: int) -> None:
    """Give each edge label block to one edge, each edge at most one block.

    d2 draws a label at the middle of its connector's path and blanks the label's box out of every
    connector passing under it: a connector passing through the box (or beside it, where d2 placed
    the label by a curve's control points) is a candidate, and the one whose middle is nearest
    the label's centre gets it. Pairs are taken best first by the distance from the box to the
    line (none where the line was joined across the box's gap) plus ``MIDDLE_WEIGHT`` times the
    distance from the label's centre to the middle of the path.
    """
    cands = []
    # a word without ascenders or descenders ("no") has a box about half a line high: reach as
    # far from it as from the image's usual label line
    usual = float(np.median([b.line_height for b in blocks])) if blocks else 0.0
    for ei, e in enumerate(edges):
        # the traced pixels, and the path between them: a stretch along a container's outline, cut
        # out of the connectors with the outline, is bridged straight, and a label may sit on it
        pts = _edge_path(e, lw)
        lo, hi = pts.min(axis=0), pts.max(axis=0)
        mid = _edge_middle(e, pts)
        for bi, b in enumerate(blocks):
            x, y, w, h = b.box
            reach = 3 * lw + 4 * max(b.line_height, usual)
            crossed = bi in e.crossed
            if not crossed and (x > hi[0] + reach or x + w < lo[0] - reach or y > hi[1] + reach
                                or y + h < lo[1] - reach):
                continue
            d_box = 0.0 if crossed else _points_box_distance(pts, b.box)
            if d_box > reach:
                continue
            cx, cy = b.centre
            d_mid = float(np.hypot(mid[0] - cx, mid[1] - cy))
            cands.append((d_box + MIDDLE_WEIGHT * d_mid, bi, ei))
    cands.sort()
    used_b: set[int] = set()
    for _, bi, ei in cands:
        if bi in used_b or edges[ei].label_block is not None:
            continue
        used_b.add(bi)
        edges[ei].label_block = bi
        edges[ei].label = blocks[bi].text


def _route(chains: list[Chain], entries: list[int], start: np.ndarray, end: np.ndarray, lw: int) -> np.ndarray:
    """The path of a group of chains in order, from ``start`` to ``end`` (the gaps between the
    pieces bridged straight), sampled about every ``2 * lw`` pixels."""
    cell = max(2, 2 * lw)
    parts = [np.asarray(start, float).reshape(1, 2)]
    for c, which in zip(chains, entries):
        parts.append(ordered_points(c.points, np.array(c.end(which), float), cell))
    parts.append(np.asarray(end, float).reshape(1, 2))
    return np.concatenate(parts, axis=0)


#: a piece of at most this many cells is ordered with the table of all their distances (8 MB at most)
ORDER_MATRIX_CELLS = 1024


def ordered_points(points: np.ndarray, start: np.ndarray, cell: int) -> np.ndarray:
    """The pixels of a thin piece (in any order) as a path from ``start``: averaged over cells of
    ``cell`` pixels, then walked from the cell nearest ``start`` to the nearest cell left each time.

    >>> t = np.linspace(0, np.pi, 200)
    >>> arc = np.stack([100 + 50 * np.cos(t), 100 - 50 * np.sin(t)], axis=1)
    >>> path = ordered_points(arc[::-1].copy(), np.array([150., 100.]), 4)
    >>> path[0].round().tolist(), path[-1].round().tolist()
    ([150.0, 100.0], [50.0, 100.0])
    >>> bool(abs(np.hypot(*np.diff(path, axis=0).T).sum() - 50 * np.pi) < 8)
    True
    """
    keys = np.floor(points / cell).astype(np.int64)
    # the cells in the order of their (x, y) keys, as np.unique(keys, axis=0) numbers them, from one
    # integer per key: unique on integers costs a fraction of unique on rows
    low = keys.min(axis=0)
    span = int(keys[:, 1].max() - low[1]) + 1
    _, inv = np.unique((keys[:, 0] - low[0]) * span + (keys[:, 1] - low[1]), return_inverse=True)
    inv = inv.reshape(-1)
    n = int(inv.max()) + 1
    sums = np.zeros((n, 2))
    np.add.at(sums, inv, points)
    cells = sums / np.bincount(inv, minlength=n)[:, None]
    cur = np.asarray(start, float)
    first = int(np.argmin((cells[:, 0] - cur[0]) ** 2 + (cells[:, 1] - cur[1]) ** 2))
    if n <= ORDER_MATRIX_CELLS:
        # every cell's squared distance to every other, computed once; a cell walked to is struck out
        # of every row (its column set to infinity), so each step is one argmin of the current row
        dist = (cells[None, :, 0] - cells[:, None, 0]) ** 2 + (cells[None, :, 1] - cells[:, None, 1]) ** 2
        order = [first]
        dist[:, first] = np.inf
        for _ in range(n - 1):
            k = int(np.argmin(dist[order[-1]]))
            order.append(k)
            dist[:, k] = np.inf
        return cells[order]
    left = np.ones(n, bool)
    order = [first]
    left[first] = False
    cur = cells[first]
    for _ in range(n - 1):
        d = np.where(left, (cells[:, 0] - cur[0]) ** 2 + (cells[:, 1] - cur[1]) ** 2, np.inf)
        k = int(np.argmin(d))
        order.append(k)
        left[k] = False
        cur = cells[k]
    return cells[order]


def path_middle(path: np.ndarray) -> np.ndarray:
    """The point halfway along a path (by length).

    >>> path_middle(np.array([[0., 0.], [10., 0.], [10., 30.]])).tolist()
    [10.0, 10.0]
    """
    seg = np.hypot(*np.diff(path, axis=0).T)
    cum = np.concatenate([[0.0], np.cumsum(seg)])
    half = cum[-1] / 2
    k = int(np.clip(np.searchsorted(cum, half), 1, len(path) - 1))
    t = (half - cum[k - 1]) / seg[k - 1] if seg[k - 1] > 0 else 0.0
    return path[k - 1] + t * (path[k] - path[k - 1])


def _points_box_distance(pts: np.ndarray, box: tuple[int, int, int, int]) -> float:
    x, y, w, h = box
    dx = np.maximum(np.maximum(x - pts[:, 0], pts[:, 0] - (x + w)), 0)
    dy = np.maximum(np.maximum(y - pts[:, 1], pts[:, 1] - (y + h)), 0)
    return float(np.min(np.hypot(dx, dy)))
