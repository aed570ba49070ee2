"""Straight connectors between shapes' centres, the way d2's grid layouts draw them.

A grid layout (``grid-rows`` / ``grid-columns``) places shapes in cells and draws a connector
between two cells as one straight line from the centre of one shape to the centre of the other,
cut at their outlines, over any shape in its way. Traced piece by piece (:mod:`.connectors`), such
a line breaks at every shape it crosses, and its pieces attach to the shapes they cross. Here each
pair of shapes in different cells is tried instead (:func:`straight_lines`):

1. The stretch of the centre-to-centre line between the two outlines must be stroke along at
   least ``COVER_MIN`` of its length. An edge label's box, which d2 blanks out of every connector
   passing under it, counts as stroke where at least half of the stretch is drawn.
2. An end has a head when an arrowhead blob lies on the line just off the outline, or when the
   stroke there is wider than a line on both sides of it (:func:`_wide_both_sides`).
3. An arrowless end where the stroke runs on inside the shape is a line passing through that
   shape, not one ending at it.
4. A line through another shape's centre is read as no edge (``Line.ambiguous``). Connectors
   drawn along one column or row of a grid overlap, and which of them runs from where to where
   cannot be seen. But for two cases (:func:`resolve_through_centres`): connectors end to end are
   cut at the outlines of the shape between them, so a line whose stroke runs on over each such
   shape passes through it; it is read when no other line lies along it, or when those that do are
   its pieces, with no head where they meet (they are left out for it).

A drawing is read as a grid (:func:`is_grid`) when at least ``GRID_MIN_OVER`` of the lines kept
pass over another shape. Layouts that route connectors around shapes never do.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import cv2
import numpy as np

from benchmark.extract.shapes import Shape

#: least share of a line's stretch between two outlines that must be stroke
COVER_MIN = 0.9
#: lines passing over another shape that mark a drawing as a grid layout's
GRID_MIN_OVER = 3
#: an arrowhead blob belongs to a line's end when its centre is within this many line widths of
#: the line, and within ``HEAD_REACH`` of the end
HEAD_OFF_LINE = 2
HEAD_REACH = 8
#: least share of a line's points inside a shape whose centre it passes that must be stroke for the
#: line to pass over that shape (a dashed line's dashes, the shape's label under it); connectors end
#: to end leave none there
PASS_MIN = 0.4
#: another line lies along a line when both its ends lie within this many line widths of it and
#: they share more than ``SHARED_MIN`` line widths
ALONG_OFF = 2
SHARED_MIN = 4


@dataclass
class Line:
    """A straight connector from shape ``a`` to shape ``b`` (indices), with where its heads are,
    its points between the outlines, and the shapes it passes over."""

    a: int
    b: int
    head_a: bool
    head_b: bool
    points: np.ndarray
    over: set[int] = field(default_factory=set)
    ambiguous: bool = False        # through another shape's centre (rule 4): drawn, but no edge read
    centres: set[int] = field(default_factory=set)   # the shapes whose centre it passes through


def cells_of(shapes: list[Shape]) -> list[int | None]:
    """For each shape, the outermost container holding it (its cell, when the drawing is a grid),
    or None for a shape at the top level (a cell of its own)."""
    return [up[-1] if up else None for up in (ancestors(shapes, s.index) for s in shapes)]


def ancestors(shapes: list[Shape], i: int) -> list[int]:
    """The containers holding shape ``i``, the nearest first."""
    out = []
    while shapes[i].parent is not None:
        i = shapes[i].parent
        out.append(i)
    return out


class _Insides:
    """Which sampled points lie inside a shape: a label image of the leaves (each drawn filled with
    its index, smaller ones over larger) and a filled mask per container."""

    def __init__(self, shapes: list[Shape], hw: tuple[int, int]) -> None:
        self.label = np.full(hw, -1, np.int32)
        for s in sorted((s for s in shapes if not s.is_container), key=lambda s: -s.box[2] * s.box[3]):
            cv2.drawContours(self.label, [s.contour], -1, int(s.index), thickness=cv2.FILLED)
        self.filled: dict[int, tuple[int, int, np.ndarray]] = {}
        for s in shapes:
            if s.is_container:
                x0, y0, w, h = s.box
                m = np.zeros((h + 1, w + 1), np.uint8)
                cv2.drawContours(m, [s.contour - np.array([x0, y0], np.int32)], -1, 1, thickness=cv2.FILLED)
                self.filled[s.index] = (x0, y0, m > 0)

    def of(self, s: Shape, xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
        if not s.is_container:
            return self.label[ys, xs] == s.index
        x0, y0, m = self.filled[s.index]
        ok = (xs >= x0) & (ys >= y0) & (xs < x0 + m.shape[1]) & (ys < y0 + m.shape[0])
        out = np.zeros(len(xs), bool)
        out[ok] = m[ys[ok] - y0, xs[ok] - x0]
        return out


def straight_lines(stroke: np.ndarray, shapes: list[Shape], blobs: list[np.ndarray], gaps: np.ndarray,
                   lw: int, cells: list[int | None] | None = None) -> list[Line]:
    """The straight centre-to-centre connectors drawn between shapes of different cells (see the
    module's description). ``blobs`` are the arrowheads found (:func:`.connectors.arrowheads`),
    ``gaps`` the edge labels' boxes (:func:`.connectors.label_gaps`); ``cells`` the container cell
    of each shape (:func:`cells_of`, the default)."""
    h, w = stroke.shape
    cells = cells if cells is not None else cells_of(shapes)
    insides = _Insides(shapes, (h, w))
    r = max(1, lw // 2)
    thick = cv2.dilate(stroke.view(np.uint8), np.ones((2 * r + 1, 2 * r + 1), np.uint8)) > 0
    thick_gap = thick | gaps
    heads = np.array([b.mean(axis=0) for b in blobs]) if blobs else np.zeros((0, 2))
    holders = [set(ancestors(shapes, s.index)) for s in shapes]
    lines = []
    for i, A in enumerate(shapes):
        for B in shapes[i + 1:]:
            if cells[A.index] is not None and cells[A.index] == cells[B.index]:
                continue              # one container's cell: routed by the container's own layout
            if A.index in holders[B.index] or B.index in holders[A.index]:
                continue
            line = _try(A, B, shapes, insides, stroke, thick, thick_gap, heads, lw)
            if line is not None:
                lines.append(line)
    return resolve_through_centres(_one_head_each(lines, lw), shapes, insides, thick, lw)


def _try(A: Shape, B: Shape, shapes: list[Shape], insides: _Insides, stroke: np.ndarray, thick: np.ndarray,
         thick_gap: np.ndarray, heads: np.ndarray, lw: int) -> Line | None:
    h, w = stroke.shape
    ca, cb = np.array(A.centre, float), np.array(B.centre, float)
    v = cb - ca
    length = float(np.hypot(*v))
    if length < 10 * lw:
        return None

    def along(t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return (np.clip(np.round(ca[0] + t * v[0]).astype(int), 0, w - 1),
                np.clip(np.round(ca[1] + t * v[1]).astype(int), 0, h - 1))

    # a quick look first: the middle of the line, where outside both shapes, must be mostly stroke
    xs, ys = along(np.linspace(0.3, 0.7, 9))
    between = ~(insides.of(A, xs, ys) | insides.of(B, xs, ys))
    if between.any() and float(thick_gap[ys[between], xs[between]].mean()) < 0.5:
        return None
    n = int(length)
    xs, ys = along(np.linspace(0.0, 1.0, n))
    in_a, in_b = np.nonzero(insides.of(A, xs, ys))[0], np.nonzero(insides.of(B, xs, ys))[0]
    if len(in_a) == 0 or len(in_b) == 0:
        return None
    leave, enter = int(in_a.max()) + 1, int(in_b.min())     # the line's first and last points outside
    s0, s1 = leave + lw + 1, enter - lw - 1                  # past the outlines' width
    if s1 - s0 < 2 * lw:
        return None
    cover = float(thick[ys[s0:s1], xs[s0:s1]].mean())
    if 0.5 <= cover < COVER_MIN:
        cover = float(thick_gap[ys[s0:s1], xs[s0:s1]].mean())
    if cover < COVER_MIN:
        return None
    u = v / length
    end_a = np.array([xs[leave], ys[leave]], float)            # just outside each outline
    end_b = np.array([xs[enter - 1], ys[enter - 1]], float)
    head_a = _head(end_a, u, heads, stroke, lw)
    head_b = _head(end_b, -u, heads, stroke, lw)

    def runs_on(i0: int, i1: int) -> bool:
        i0, i1 = max(0, i0), min(n, i1)
        return i1 - i0 >= 3 and float(thick[ys[i0:i1], xs[i0:i1]].mean()) > 0.8

    if (not head_a and runs_on(leave - 8 * lw, leave - 3 * lw)) or \
            (not head_b and runs_on(enter + 3 * lw, enter + 8 * lw)):
        return None
    if head_a and head_b:
        # a head of another connector arriving beside this line's end lies near it too: where only one
        # end has a head's triangle spreading to both sides of this line, that one is its own (decided
        # after rule 3: the other connector's head and line are still drawn at that end)
        wide_a, wide_b = (_wide_both_sides(stroke, end_a, u, lw) >= 2, _wide_both_sides(stroke, end_b, -u, lw) >= 2)
        if wide_a != wide_b:
            head_a, head_b = wide_a, wide_b
    owners = insides.label[ys[s0:s1], xs[s0:s1]]
    over = set(np.unique(owners).tolist()) - {-1, A.index, B.index}
    centres = {k for k in over
               if abs((shapes[k].centre[0] - ca[0]) * u[1] - (shapes[k].centre[1] - ca[1]) * u[0]) <= 2 * lw}
    return Line(A.index, B.index, head_a, head_b, np.stack([xs[s0:s1], ys[s0:s1]], axis=1).astype(float), over,
                bool(centres), centres)


def _one_head_each(lines: list[Line], lw: int) -> list[Line]:
    """``lines`` where two of them meet a shape at one point, both with a head there: lines to two
    shapes about in line with it overlap near it, and the one head drawn there was found for both.
    A line with a head at its other end too leaves the shape there, and drops that head when the
    other line has none at its other end (that line arrives).

    >>> pts = np.array([[0.0, 0.0], [50.0, 0.0]])
    >>> arrives, leaves = Line(0, 1, True, False, pts), Line(0, 2, True, True, pts + [0.0, 1.0])
    >>> [(line.head_a, line.head_b) for line in _one_head_each([arrives, leaves], 2)]
    [(True, False), (False, True)]
    """
    ends = [(line, which, line.a if which == 0 else line.b, line.points[0] if which == 0 else line.points[-1])
            for line in lines for which in (0, 1) if (line.head_a, line.head_b)[which]]
    drop = []
    for n, (l1, w1, s1, p1) in enumerate(ends):
        for l2, w2, s2, p2 in ends[n + 1:]:
            if l1 is l2 or s1 != s2 or float(np.hypot(*(p1 - p2))) > 2 * lw:
                continue
            far1, far2 = (l1.head_b, l1.head_a)[w1], (l2.head_b, l2.head_a)[w2]
            if far1 != far2:
                drop.append((l1, w1) if far1 else (l2, w2))
    for line, which in drop:
        setattr(line, ("head_a", "head_b")[which], False)
    return lines


def resolve_through_centres(lines: list[Line], shapes: list[Shape], insides: _Insides, thick: np.ndarray,
                            lw: int) -> list[Line]:
    """``lines`` with the lines through other shapes' centres that can be told apart read after all.

    d2 cuts every connector at the outlines of the two shapes it joins, so connectors end to end
    through a shape leave its inside bare, and a line whose stroke runs on over the inside of every
    shape whose centre it passes (``PASS_MIN``) passes through them. It is read (no longer
    ambiguous) when no other line lies along it (``ALONG_OFF``, ``SHARED_MIN``), or when each line
    lying along it runs between its ends and the shapes it passes, and has no head where it meets
    one of those shapes: those are pieces of it (from a head to a bare end), and are left out. Lines
    along it that reach beyond its ends, or heads where its pieces meet, leave it ambiguous: which
    connector starts or stops where cannot be seen there.
    """
    pieces_of: dict[int, list[int]] = {}
    for i, L in enumerate(lines):
        if not L.ambiguous or not _passes_over(L, shapes, insides, thick, lw):
            continue
        stops = {L.a, L.b} | L.centres
        pieces = []
        for j, O in enumerate(lines):
            if j == i or _shared(L, O, shapes, lw) <= SHARED_MIN * lw:
                continue
            if not {O.a, O.b} <= stops or (O.a in L.centres and O.head_a) or (O.b in L.centres and O.head_b):
                break
            pieces.append(j)
        else:
            pieces_of[i] = pieces
    dropped = {j for pieces in pieces_of.values() for j in pieces}
    for i in pieces_of:
        lines[i].ambiguous = False
    return [L for j, L in enumerate(lines) if j not in dropped]


def _passes_over(L: Line, shapes: list[Shape], insides: _Insides, thick: np.ndarray, lw: int) -> bool:
    """Does the stroke run on over the inside of every shape whose centre the centre-to-centre line
    ``L`` passes (``PASS_MIN`` of its points inside each, a line width in from the outline)?"""
    h, w = thick.shape
    ca, cb = np.array(shapes[L.a].centre, float), np.array(shapes[L.b].centre, float)
    t = np.linspace(0.0, 1.0, max(int(np.hypot(*(cb - ca))), 2))
    xs = np.clip(np.round(ca[0] + t * (cb[0] - ca[0])).astype(int), 0, w - 1)
    ys = np.clip(np.round(ca[1] + t * (cb[1] - ca[1])).astype(int), 0, h - 1)
    for c in L.centres:
        inside = np.flatnonzero(insides.of(shapes[c], xs, ys))
        if len(inside) == 0:
            return False
        first, last = int(inside.min()) + lw + 1, int(inside.max()) - lw - 1
        if last - first < 2 or float(thick[ys[first:last + 1], xs[first:last + 1]].mean()) < PASS_MIN:
            return False
    return True


def _shared(L: Line, O: Line, shapes: list[Shape], lw: int) -> float:
    """How long line ``O`` lies along line ``L`` (0 when either of its ends is off ``L``'s line by
    more than ``ALONG_OFF`` line widths), both taken between their shapes' centres."""
    p, q = np.array(shapes[L.a].centre, float), np.array(shapes[L.b].centre, float)
    length = float(np.hypot(*(q - p)))
    u = (q - p) / length
    normal = np.array([-u[1], u[0]])
    ends = [np.array(shapes[O.a].centre, float) - p, np.array(shapes[O.b].centre, float) - p]
    if any(abs(float(e @ normal)) > ALONG_OFF * lw for e in ends):
        return 0.0
    lo, hi = sorted(float(e @ u) for e in ends)
    return max(0.0, min(hi, length) - max(lo, 0.0))


def _head(end: np.ndarray, out: np.ndarray, heads: np.ndarray, stroke: np.ndarray, lw: int) -> bool:
    """Is there an arrowhead at ``end`` (a point on a shape's outline), for a line leaving it along
    ``out``?"""
    if len(heads):
        d = heads - end
        near = np.hypot(d[:, 0], d[:, 1]) <= HEAD_REACH * lw
        off = np.abs(d[:, 0] * out[1] - d[:, 1] * out[0])
        if bool((near & (off <= HEAD_OFF_LINE * lw)).any()):
            return True
    return _wide_both_sides(stroke, end, out, lw) >= 2


def _wide_both_sides(stroke: np.ndarray, end: np.ndarray, out: np.ndarray, lw: int) -> int:
    """At how many of 2, 3, 4 and 5 line widths out from ``end`` along ``out`` the stroke reaches
    at least 1.5 line widths to both sides of the line: a head's triangle does, a line alone
    does not (a head the blob search missed where other connectors run into it).

    >>> m = np.zeros((40, 40), bool); m[20, 5:35] = True
    >>> _wide_both_sides(m, np.array([5., 20.]), np.array([1., 0.]), 2)
    0
    >>> for x in range(5, 17): m[20 - (x - 5) // 2:21 + (x - 5) // 2, x] = True
    >>> _wide_both_sides(m, np.array([5., 20.]), np.array([1., 0.]), 2)
    3
    """
    h, w = stroke.shape
    normal = np.array([-out[1], out[0]])
    count = 0
    for k in (2, 3, 4, 5):
        q = end + out * k * lw
        reach = []
        for sign in (1, -1):
            j = 0
            while j < 5 * lw:
                z = q + sign * normal * (j + 1)
                x, y = int(round(z[0])), int(round(z[1]))
                if not (0 <= x < w and 0 <= y < h) or not stroke[y, x]:
                    break
                j += 1
            reach.append(j)
        count += min(reach) >= 1.5 * lw
    return count


def is_grid(lines: list[Line]) -> bool:
    """Is a drawing with these straight lines a grid layout's: do enough of them pass over other
    shapes?"""
    return sum(1 for line in lines if line.over and not line.ambiguous) >= GRID_MIN_OVER
