"""Shapes of a d2 render: flat fill regions inside a stroke outline, their kind and nesting.

Every d2 shape is a flat light fill inside a blue outline. For each fill colour of the image the
mask of that colour is closed (which bridges connectors and text drawn over it), its connected
components are candidate shapes, and a candidate is kept when a stroke surrounds it. A shape
that contains other shapes is a container; its ``parent`` links follow the nesting.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import cv2
import numpy as np

from benchmark.extract.components import component_labels, enclosed_regions, nonzero
from benchmark.extract.raster import Raster, colour_mask, fill_palette

#: share of the ring just outside a candidate that must be stroke for it to be a shape
OUTLINE_SHARE_MIN = 0.55
#: a dashed outline covers at least this share of the ring, spread over every sector of it
DASH_SHARE_MIN = 0.25
DASH_SECTORS = 24
WHITE = (255, 255, 255)
#: containers are boxes: a region at least this convex is taken as its convex hull when nesting
#: (:func:`nest_closed`)
CONTAINER_SOLIDITY_MIN = 0.9
#: a white region whose ring lies more than this share on other shapes' outlines is the page between
#: them (a gap between a grid's cells, fenced in by connectors where no cell bounds it), not a cloud:
#: a cloud's ring is its own outline (none of the bundled clouds' rings lies on another shape's; the
#: gaps between grid cells taken for clouds lay 42 % and 62 % on them)
SHARED_OUTLINE_MAX = 0.3
#: d2 writes a person's label under it, within this many line widths of its bottom
PERSON_LABEL_BELOW = 12


@dataclass
class Shape:
    """One shape found in the image (pixel coordinates)."""

    index: int
    kind: str
    contour: np.ndarray                     # N x 1 x 2 int32, outer boundary of the fill
    box: tuple[int, int, int, int]          # x, y, w, h of the fill
    area: float
    fill: tuple[int, int, int]
    parent: int | None = None
    children: list[int] = field(default_factory=list)

    @property
    def is_container(self) -> bool:
        return bool(self.children)

    @property
    def centre(self) -> tuple[float, float]:
        x, y, w, h = self.box
        return x + w / 2, y + h / 2

    def contains(self, x: float, y: float, margin: float = 0.0) -> bool:
        """Is the point inside the fill (or within ``margin`` pixels of it)?"""
        return cv2.pointPolygonTest(self.contour, (float(x), float(y)), True) >= -margin

    def border_distance(self, x: float, y: float) -> float:
        """Distance of the point to the outline (positive inside and outside alike)."""
        return abs(cv2.pointPolygonTest(self.contour, (float(x), float(y)), True))


def innermost(shapes: list[Shape], point: tuple[float, float]) -> int | None:
    """The smallest of ``shapes`` holding the point (its index), or None."""
    inside = [s for s in shapes if s.contains(*point)]
    return min(inside, key=lambda s: s.area).index if inside else None


def find_shapes(r: Raster) -> list[Shape]:
    """All shapes of the image, with kinds, parents and children set, in a stable order."""
    lw = r.line_width
    k = 2 * lw + 3
    kernel = cv2.getStructuringElement(cv2.MORPH_RECT, (k, k))
    min_area = (6 * lw) ** 2
    h_img, w_img = r.shape
    found: list = []
    stroke8 = r.stroke.view(np.uint8) if r.stroke.dtype == np.bool_ else r.stroke.astype(np.uint8)
    palette = fill_palette(r.rgb, min_area)
    regions = [(c, (0, 0, w_img, h_img)) for c in palette if c != WHITE]
    for colour, region in regions:
        found.extend(_candidates(r, colour, region, kernel, min_area, stroke8))
    if WHITE in palette:
        # white fills only occur inside deeply nested containers: look for them there
        seen = {f[1] for f in found}
        for cnt, (x, y, w, h), *_ in list(found):
            for cand in _candidates(r, WHITE, (x, y, w, h), kernel, min_area, stroke8):
                if cand[1] not in seen:
                    seen.add(cand[1])
                    found.append(cand)
    found.extend(_white_shapes(r, found, min_area, stroke8))
    found.extend(_same_fill_children(r, found, min_area, stroke8))
    found.sort(key=lambda f: (f[1][1], f[1][0], -f[2]))
    shapes = [Shape(i, "rectangle", c, box, area, col) for i, (c, box, area, col, _) in enumerate(found)]
    nest_closed(shapes)
    for s, f in zip(shapes, found):
        if s.is_container:
            s.kind = "rectangle"
        elif s.fill == WHITE and s.parent is None:
            s.kind = "cloud"
        else:
            s.kind = classify(f[4])
    return shapes


def _candidates(r: Raster, colour: tuple[int, int, int], region: tuple[int, int, int, int], kernel: np.ndarray,
                min_area: int, stroke8: np.ndarray) -> list:
    """Fill regions of one colour inside ``region`` that an outline surrounds."""
    lw = r.line_width
    k = kernel.shape[0]
    h_img, w_img = r.shape
    rx, ry, rw, rh = region
    mask = colour_mask(r.rgb[ry:ry + rh, rx:rx + rw], colour)
    bx, by, bw, bh = cv2.boundingRect(mask)
    if bw == 0 or bh == 0:
        return []
    x_off, y_off = rx + bx, ry + by
    closed = cv2.morphologyEx(mask[by:by + bh, bx:bx + bw], cv2.MORPH_CLOSE, kernel)
    n, stats, labels = component_labels(closed)
    out = []
    for i in range(1, n):
        x, y, w, h, a = (int(v) for v in stats[i])
        if a < min_area or w < 4 * lw or h < 4 * lw:
            continue
        if x + x_off <= 0 or y + y_off <= 0 or x + x_off + w >= w_img or y + y_off + h >= h_img:
            continue  # the page background
        if colour == WHITE and (x + x_off <= rx or y + y_off <= ry or x + x_off + w >= rx + rw
                                or y + y_off + h >= ry + rh):
            continue  # white that reaches the searched region's edge is not enclosed
        sub = (labels.box(x, y, x + w, y + h) == i).astype(np.uint8)
        contours, _ = cv2.findContours(sub, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
        if not contours:
            continue
        cnt = max(contours, key=cv2.contourArea)
        filled = np.zeros((h + 2 * k, w + 2 * k), np.uint8)
        cv2.drawContours(filled, [cnt + k], -1, 1, thickness=cv2.FILLED)
        ring = cv2.dilate(filled, cv2.getStructuringElement(cv2.MORPH_RECT, (2 * lw + 1, 2 * lw + 1))) - filled
        gx, gy = x + x_off, y + y_off
        ys, xs = nonzero(ring)
        ys, xs = ys + gy - k, xs + gx - k
        ok = (ys >= 0) & (ys < h_img) & (xs >= 0) & (xs < w_img)
        if not outlined(stroke8[ys[ok], xs[ok]], xs[ok], ys[ok]):
            continue
        cnt = cnt + np.array([[gx, gy]], dtype=np.int32)
        out.append((cnt, (gx, gy, w, h), float(cv2.contourArea(cnt)), colour, filled[k:-k, k:-k]))
    return out


def outlined(on_stroke: np.ndarray, xs: np.ndarray, ys: np.ndarray, share_min: float = OUTLINE_SHARE_MIN) -> bool:
    """Is a ring of pixels (``on_stroke``: stroke or not, at ``xs``, ``ys``) an outline?

    Solid outlines cover at least ``share_min`` of the ring. A dashed or dotted one covers less,
    but evenly: every one of :data:`DASH_SECTORS` sectors around the ring's centre holds some
    stroke, where a connector running past a fill touches one side only.

    >>> t = np.linspace(0, 2 * np.pi, 400, endpoint=False)
    >>> xs, ys = (100 + 50 * np.cos(t)).astype(int), (100 + 30 * np.sin(t)).astype(int)
    >>> dashed = (np.arange(400) // 6) % 2 == 0          # half the ring, in short dashes
    >>> outlined(dashed, xs, ys), outlined(np.arange(400) < 200, xs, ys)
    (True, False)
    """
    if on_stroke.size == 0:
        return False
    share = float(on_stroke.mean())
    if share >= share_min:
        return True
    if share < DASH_SHARE_MIN:
        return False
    angle = np.arctan2(ys - ys.mean(), xs - xs.mean())
    sector = ((angle + np.pi) / (2 * np.pi) * DASH_SECTORS).astype(int).clip(0, DASH_SECTORS - 1)
    hits = np.bincount(sector, weights=on_stroke.astype(float), minlength=DASH_SECTORS)
    sizes = np.bincount(sector, minlength=DASH_SECTORS)
    filled = (sizes > 0) & (hits >= 0.15 * np.maximum(sizes, 1))
    return bool(filled[sizes > 0].mean() >= 0.95)


def _white_shapes(r: Raster, found: list, min_area: int, stroke8: np.ndarray) -> list:
    """White-filled shapes on the white page (d2 draws clouds so): white regions closed off by
    an outline (slits a connector cut into them closed, :func:`_close_slits`), compact,
    cloud-shaped, holding dark (node label) text, neither inside a shape already found nor around
    one, and not the page between shapes (their ring mostly along other shapes' outlines).

    Connectors drawn right across a wide cloud cut it into pieces, none of them cloud-shaped, or
    one cloud-shaped with only part of the label: the pieces beside the one holding the label are
    joined to it while what they make stays about convex (:func:`_joined_pieces`)."""
    h_img, w_img = r.shape
    lw = r.line_width
    white = colour_mask(r.rgb, WHITE, tol=3)
    out = []
    boxes = [f[1] for f in found]
    dark = (r.lum < 60) & r.ink
    others: list[np.ndarray | None] = [None]   # the outlines of the shapes found, drawn when first needed
    pieces = []
    for x, y, w, h, a, sub in enclosed_regions(white, 4 * lw, 4 * lw):
        if a < min_area or a > 0.25 * h_img * w_img:
            continue
        if any(bx <= x and by <= y and x + w <= bx + bw and y + h <= by + bh for bx, by, bw, bh in boxes):
            continue
        if any(x <= bx and y <= by and bx + bw <= x + w and by + bh <= y + h for bx, by, bw, bh in boxes):
            continue  # the page around shapes, fenced in by connectors (a cloud holds its label only)
        pieces.append((x, y, w, h, sub))
    return _joined_pieces(r, pieces, dark, stroke8, found, others)


#: pieces of a cloud cut by connectors are joined while the region they make keeps this solidity
PIECES_SOLIDITY_MIN = 0.9
#: ... and at most this many are joined to the piece holding the label
PIECES_MAX = 6


def _joined_pieces(r: Raster, pieces: list, dark: np.ndarray, stroke8: np.ndarray, found: list,
                   others: list) -> list:
    """The white shapes among the white regions (``pieces``), some of them clouds cut into pieces
    by connectors drawn across them. From each region holding dark text (most text first), the
    regions beside it (no more than a connector's width away) are joined one by one, the one
    leaving the region most convex first, while it stays about convex (``PIECES_SOLIDITY_MIN``:
    the page beside a cloud, fenced in by the same connectors, juts out of it). The first of these
    that is a white shape (:func:`_white_cloud`) with its text clear of its sides is one (a region
    that is one alone is joined to none, unless a connector cut its label: :func:`_text_cut`)."""
    lw = r.line_width
    gap = 2 * lw + 3
    text = [int((dark[y:y + h, x:x + w] & (_outline(sub)[1] > 0)).sum()) for x, y, w, h, sub in pieces]
    out = []
    used: set[int] = set()
    for i in sorted(range(len(pieces)), key=lambda i: -text[i]):
        if i in used or text[i] < 4 * lw * lw:
            continue
        x, y, _, _, sub = pieces[i]
        group, chosen = [i], [i]
        cloud = _white_cloud(r, x, y, sub, dark, stroke8, found, others)
        while (cloud is None or _text_cut(cloud, dark, gap)) and len(group) <= PIECES_MAX:
            box = _union_box([pieces[j] for j in group])
            best = None
            for j, p in enumerate(pieces):
                if j in group or j in used or not _boxes_near(box, p[:4], gap):
                    continue
                mask, (ux, uy) = _union_mask([pieces[k] for k in group + [j]], gap)
                if mask is None:
                    continue
                cnt, _ = _close_slits(mask, gap)
                solid = cv2.contourArea(cnt) / max(cv2.contourArea(cv2.convexHull(cnt)), 1.0)
                if solid >= PIECES_SOLIDITY_MIN and (best is None or solid > best[0]):
                    best = (solid, j, mask, ux, uy)
            if best is None:
                break
            _, j, mask, ux, uy = best
            group.append(j)
            grown = _white_cloud(r, ux, uy, mask, dark, stroke8, found, others, joined=True)
            if grown is not None:
                cloud, chosen = grown, list(group)
        if cloud is not None:
            out.append(cloud)
            used.update(chosen)
    return out


def _text_cut(cloud: tuple, dark: np.ndarray, gap: int) -> bool:
    """Does the dark text in a found white shape's box reach the box's side (within ``gap``): its label
    cut by a connector drawn through it, the rest in a piece beside it? (Outlines and connectors are
    not dark: d2 draws them blue.)"""
    _, (x, y, w, h), _, _, _ = cloud
    ys, xs = np.nonzero(dark[y:y + h, x:x + w])
    return len(xs) > 0 and (xs.min() < gap or xs.max() >= w - gap or ys.min() < gap or ys.max() >= h - gap)


def _union_box(pieces: list) -> tuple[int, int, int, int]:
    x0 = min(p[0] for p in pieces)
    y0 = min(p[1] for p in pieces)
    x1 = max(p[0] + p[2] for p in pieces)
    y1 = max(p[1] + p[3] for p in pieces)
    return x0, y0, x1 - x0, y1 - y0


def _boxes_near(a: tuple[int, int, int, int], b: tuple[int, int, int, int], gap: int) -> bool:
    return (a[0] - gap <= b[0] + b[2] and b[0] <= a[0] + a[2] + gap
            and a[1] - gap <= b[1] + b[3] and b[1] <= a[1] + a[3] + gap)


def _union_mask(pieces: list, gap: int) -> tuple[np.ndarray | None, tuple[int, int]]:
    """The pieces' masks drawn together in their joint box, and the box's corner; None when the
    last piece lies more than ``gap`` pixels from all the others."""
    ux, uy, uw, uh = _union_box(pieces)
    mask = np.zeros((uh, uw), np.uint8)
    for x, y, w, h, sub in pieces[:-1]:
        mask[y - uy:y - uy + h, x - ux:x - ux + w] |= sub
    x, y, w, h, sub = pieces[-1]
    last = np.zeros_like(mask)
    last[y - uy:y - uy + h, x - ux:x - ux + w] = sub
    near = cv2.dilate(mask, cv2.getStructuringElement(cv2.MORPH_RECT, (2 * gap + 1, 2 * gap + 1)))
    if not (near & last).any():
        return None, (ux, uy)
    return mask | last, (ux, uy)


def _white_cloud(r: Raster, x: int, y: int, sub: np.ndarray, dark: np.ndarray, stroke8: np.ndarray,
                 found: list, others: list, joined: bool = False) -> tuple | None:
    """The white region ``sub`` (its box's corner at x, y; ``joined``: pieces of one) as a found
    shape, or None when it is no cloud (see :func:`_white_shapes`). ``others`` holds the found
    shapes' outlines, drawn once."""
    h_img, w_img = r.shape
    lw = r.line_width
    h, w = sub.shape
    if joined:     # pieces with a connector's width between them: closed into one region first
        sub = _closed(sub, 2 * lw + 3)
    cnt, filled = _outline(sub)
    cnt, filled = _close_slits(filled, 2 * lw + 3)
    hull_area = max(cv2.contourArea(cv2.convexHull(cnt)), 1.0)
    if cv2.contourArea(cnt) / hull_area < 0.8:
        return None
    if int((dark[y:y + h, x:x + w] & (filled > 0)).sum()) < 4 * lw * lw:
        return None
    k = 2 * lw + 3
    pad = np.zeros((h + 2 * k, w + 2 * k), np.uint8)
    pad[k:-k, k:-k] = filled
    ring = cv2.dilate(pad, cv2.getStructuringElement(cv2.MORPH_RECT, (2 * lw + 1, 2 * lw + 1))) - pad
    ys, xs = nonzero(ring)
    ys, xs = ys + y - k, xs + x - k
    ok = (ys >= 0) & (ys < h_img) & (xs >= 0) & (xs < w_img)
    if ok.sum() == 0 or stroke8[ys[ok], xs[ok]].mean() < 0.6:
        return None
    if not _cloud_like(filled):
        return None  # white regions fenced in by connectors and outlines are not shapes
    if others[0] is None:
        others[0] = np.zeros((h_img, w_img), np.uint8)
        cv2.drawContours(others[0], [f[0] for f in found], -1, 1, thickness=2 * lw + 1)
    if others[0][ys[ok], xs[ok]].mean() > SHARED_OUTLINE_MAX:
        return None  # the page between shapes (a grid's cells), its sides fenced in by connectors
    cnt = cnt + np.array([[x, y]], dtype=np.int32)
    return cnt, (x, y, w, h), float(cv2.contourArea(cnt)), WHITE, filled


def _component_outline(labels: np.ndarray, i: int, x: int, y: int, w: int, h: int) -> tuple[np.ndarray, np.ndarray]:
    """Component ``i`` of ``labels`` inside its box (x, y, w, h): its outer contour (box coordinates)
    and the box's mask with that contour filled."""
    return _outline((labels[y:y + h, x:x + w] == i).astype(np.uint8))


def _outline(sub: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A component's mask inside its box (uint8): its outer contour (box coordinates) and the box's
    mask with that contour filled."""
    contours, _ = cv2.findContours(sub, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    cnt = max(contours, key=cv2.contourArea)
    filled = np.zeros_like(sub)
    cv2.drawContours(filled, [cnt], -1, 1, thickness=cv2.FILLED)
    return cnt, filled


def _closed(mask: np.ndarray, k: int) -> np.ndarray:
    """The mask closed by a ``k`` square, as if the page around its box were empty."""
    padded = cv2.copyMakeBorder(mask, k, k, k, k, cv2.BORDER_CONSTANT, value=0)
    closed = cv2.morphologyEx(padded, cv2.MORPH_CLOSE, cv2.getStructuringElement(cv2.MORPH_RECT, (k, k)))
    return np.ascontiguousarray(closed[k:-k, k:-k])


def _close_slits(filled: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """A white region's mask (box coordinates) closed by ``k``, and its outer contour: a connector
    drawn across a white shape on the white page cuts a slit into it from its outline to the label it
    runs through (white shapes are not closed before they are split into regions, or the page would
    join them across their own outlines), and the label's centre then lies outside the contour.

    >>> m = np.zeros((40, 60), np.uint8); m[5:35, 5:55] = 1; m[5:20, 29:31] = 0     # a slit from the top
    >>> cnt, closed = _close_slits(m, 7); int(closed[10, 30]), int(closed.sum()) == 30 * 50
    (1, True)
    """
    closed = _closed(filled, k)
    contours, _ = cv2.findContours(closed, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    cnt = max(contours, key=cv2.contourArea)
    out = np.zeros_like(closed)
    cv2.drawContours(out, [cnt], -1, 1, thickness=cv2.FILLED)
    return cnt, out


def _same_fill_children(r: Raster, found: list, min_area: int, stroke8: np.ndarray) -> list:
    """Shapes filled with the colour of the container around them (a person in a top-level
    container, a cylinder two levels down): closing that colour bridged their outline away.
    Inside each region found, the unclosed colour mask is split by outlines; an enclosed piece
    is a shape when an outline rings it and it looks like one: a person, or any other kind
    holding dark text (pieces of the fill fenced in by crossing connectors hold none)."""
    h_img, w_img = r.shape
    lw = r.line_width
    dark = (r.lum < 60) & r.ink
    seen = {f[1] for f in found}
    out = []
    for _, (bx, by, bw, bh), area, colour, _ in list(found):
        if bw * bh < 4 * min_area:
            continue
        raw = colour_mask(r.rgb[by:by + bh, bx:bx + bw], colour)
        n, labels, stats, _ = cv2.connectedComponentsWithStats(raw, connectivity=4)
        for i in range(1, n):
            x, y, w, h, a = (int(v) for v in stats[i])
            if a < min_area or w < 4 * lw or h < 4 * lw or a > 0.5 * area:
                continue
            if x <= 1 or y <= 1 or x + w >= bw - 1 or y + h >= bh - 1:
                continue
            cnt, filled = _component_outline(labels, i, x, y, w, h)
            gx, gy = bx + x, by + y
            if (gx, gy, w, h) in seen:
                continue
            k = 2 * lw + 1
            pad = np.zeros((h + 2 * k, w + 2 * k), np.uint8)
            pad[k:-k, k:-k] = filled
            ring = cv2.dilate(pad, cv2.getStructuringElement(cv2.MORPH_RECT, (k, k))) - pad
            ys, xs = nonzero(ring)
            ys, xs = ys + gy - k, xs + gx - k
            ok = (ys >= 0) & (ys < h_img) & (xs >= 0) & (xs < w_img)
            if ok.sum() == 0 or stroke8[ys[ok], xs[ok]].mean() < 0.7:
                continue
            kind = classify(filled)
            if shape_features(filled)["solidity"] < 0.85:
                continue
            # a leaf holds its label, a person's lies right under it; a piece of the container's
            # fill that connectors crossing it fence in (a triangle, a quadrilateral; with a
            # diamond's side, one the kinds' rules take for a person) has none
            if kind == "person":
                label = dark[gy + h:gy + h + PERSON_LABEL_BELOW * lw, gx:gx + w]
            else:
                label = dark[gy:gy + h, gx:gx + w] & (filled > 0)
            if int(label.sum()) < 4 * lw * lw:
                continue
            seen.add((gx, gy, w, h))
            c2 = cnt + np.array([[gx, gy]], dtype=np.int32)
            out.append((c2, (gx, gy, w, h), float(cv2.contourArea(c2)), colour, filled))
    return out


#: a white region wider than this many times its height is measured squeezed to this aspect (:func:`_cloud_like`)
CLOUD_ASPECT = 3.0


def _cloud_like(mask: np.ndarray) -> bool:
    """A cloud's outline: bumpy top, flat bottom, no filled corners.

    >>> _cloud_like(np.ones((40, 80), np.uint8))
    False
    """
    h, w = mask.shape
    if w > CLOUD_ASPECT * h:
        # d2 stretches one cloud path to the shape's width: a cloud many times wider than tall is
        # measured squeezed back, where its bumps are bumps still and not a few pixels along a long
        # outline
        mask = (cv2.resize(mask.astype(np.float32), (int(CLOUD_ASPECT * h), h), interpolation=cv2.INTER_AREA)
                >= 0.5).astype(np.uint8)
    f = shape_features(mask)
    return (0.6 <= f["extent"] <= 0.88 and f["corner_top"] < 0.1 and f["bottom_flat"] > 0.5
            and f["solidity"] > 0.85 and f["vertices"] >= 5)


def _nest(shapes: list[Shape]) -> None:
    """Set ``parent`` (smallest enclosing shape) and ``children``."""
    for s in shapes:
        cx, cy = s.centre
        best = None
        for o in shapes:
            if o is s or o.area <= s.area * 1.2:
                continue
            x, y, w, h = s.box
            if all(o.contains(px, py, margin=2) for px, py in ((x, y), (x + w, y), (x, y + h), (x + w, y + h), (cx, cy))):
                if best is None or o.area < best.area:
                    best = o
        s.parent = best.index if best else None
    for s in shapes:
        if s.parent is not None:
            shapes[s.parent].children.append(s.index)


def solidity(cnt: np.ndarray) -> float:
    """Area of a contour over the area of its convex hull."""
    return float(cv2.contourArea(cnt)) / max(float(cv2.contourArea(cv2.convexHull(cnt))), 1.0)


def nest_closed(shapes: list[Shape]) -> None:
    """:func:`_nest` with each region convex enough to be a container taken as its convex hull.
    Connectors that cross a container's outline into it cut its paper: d2 draws a grid's
    connectors straight, over everything, and in a dagre layout several connectors arriving at a
    shape close inside a container's side (the sketch style's wider lines) cut the strip of paper
    between the two. The shape they reach, with every shape joined to it, then lies outside the
    paper's own contour.

    >>> inlet = np.array([[0, 0], [100, 0], [100, 100], [0, 100], [0, 52], [38, 52], [38, 62], [62, 62],
    ...                   [62, 38], [38, 38], [38, 48], [0, 48]], np.int32).reshape(-1, 1, 2)
    >>> box = np.array([[40, 40], [60, 40], [60, 60], [40, 60]], np.int32).reshape(-1, 1, 2)
    >>> shapes = [Shape(0, "rectangle", inlet, (0, 0, 101, 101), float(cv2.contourArea(inlet)), (255,) * 3),
    ...           Shape(1, "rectangle", box, (40, 40, 21, 21), 400.0, (255,) * 3)]
    >>> nest_closed(shapes); shapes[1].parent, shapes[0].children
    (0, [1])
    >>> shapes = [replace(s, children=[]) for s in shapes]; _nest(shapes); shapes[1].parent
    """
    closed = [replace(s, children=[], contour=cv2.convexHull(s.contour)
                                  if solidity(s.contour) >= CONTAINER_SOLIDITY_MIN else s.contour)
              for s in shapes]
    _nest(closed)
    for s, c in zip(shapes, closed):
        s.parent, s.children = c.parent, c.children


def shape_features(mask: np.ndarray) -> dict[str, float]:
    """Scale-free features of one filled shape mask (1 inside).

    >>> m = np.ones((40, 80), np.uint8)
    >>> f = shape_features(m); round(f["extent"], 2), round(f["corner"], 2)
    (1.0, 1.0)
    """
    h, w = mask.shape
    area = float(mask.sum())
    contours, _ = cv2.findContours(mask.astype(np.uint8), cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    cnt = max(contours, key=cv2.contourArea)
    hull = cv2.convexHull(cnt)
    hull_area = max(cv2.contourArea(hull), 1.0)
    s = max(2, int(round(0.12 * min(w, h))))
    corners = [mask[:s, :s], mask[:s, -s:], mask[-s:, :s], mask[-s:, -s:]]
    cols = mask.any(axis=0)
    rows = mask.any(axis=1)
    top = np.argmax(mask, axis=0)[cols]
    bottom = (h - 1 - np.argmax(mask[::-1], axis=0))[cols]
    left = np.argmax(mask, axis=1)[rows]
    right = (w - 1 - np.argmax(mask[:, ::-1], axis=1))[rows]
    peri = cv2.arcLength(cnt, True)
    approx = cv2.approxPolyDP(cnt, 0.02 * peri, True)
    return {
        "extent": area / (w * h),
        "solidity": area / hull_area,
        "aspect": w / h,
        "corner": float(np.mean([c.mean() for c in corners])),
        "corner_top": float(np.mean([corners[0].mean(), corners[1].mean()])),
        "corner_left": float(np.mean([corners[0].mean(), corners[2].mean()])),
        "corner_right": float(np.mean([corners[1].mean(), corners[3].mean()])),
        "corner_bottom": float(np.mean([corners[2].mean(), corners[3].mean()])),
        "vert_flat": float(np.mean(np.abs(left - np.median(left)) < 0.02 * w)) if len(left) else 0.0,
        "horiz_flat": float(np.mean(np.abs(top - np.median(top)) < 0.02 * h)) if len(top) else 0.0,
        "bottom_flat": float(np.mean(np.abs(bottom - np.median(bottom)) < 0.02 * h)) if len(bottom) else 0.0,
        "right_flat": float(np.mean(np.abs(right - np.median(right)) < 0.02 * w)) if len(right) else 0.0,
        "vertices": float(len(approx)),
        "top_depth": _depth(top) / h,
        "left_depth": _depth(left) / w,
    }


def _depth(profile: np.ndarray) -> float:
    """How far a side bends inward over its central 80%: 0 for a straight side."""
    n = len(profile)
    if n < 5:
        return 0.0
    mid = profile[n // 10: n - n // 10]
    return float(mid.max() - mid.min())


def classify(mask: np.ndarray) -> str:
    """Kind of a leaf shape from its filled mask, as a d2 shape name.

    >>> classify(np.ones((60, 120), np.uint8))
    'rectangle'
    >>> m = np.zeros((101, 201), np.uint8)
    >>> _ = cv2.fillPoly(m, [np.array([[100, 0], [200, 50], [100, 100], [0, 50]], np.int32)], 1)
    >>> classify(m)
    'diamond'
    >>> m = np.zeros((101, 161), np.uint8)
    >>> _ = cv2.ellipse(m, (80, 50), (80, 50), 0, 0, 360, 1, -1)
    >>> classify(m)
    'oval'
    """
    f = shape_features(mask)
    ext, corner, v = f["extent"], f["corner"], f["vertices"]
    if ext > 0.96 and corner > 0.95:
        return "rectangle"
    if ext > 0.94 and 0.35 < f["corner_top"] < 0.65 and f["corner_bottom"] > 0.95:
        return "page"
    if f["solidity"] < 0.93 and f["corner_bottom"] > 0.8 and f["corner_top"] < 0.2:
        return "person"
    if 0.42 <= ext <= 0.6 and v <= 5 and corner < 0.1:
        return "diamond"
    if ext >= 0.86 and corner < 0.3 and f["solidity"] > 0.97:
        return "cylinder" if f["top_depth"] > f["left_depth"] else "queue"
    if 0.70 <= ext < 0.775 and v == 6 and f["horiz_flat"] > 0.35:
        return "hexagon"
    if 0.65 <= ext <= 0.85 and v >= 7 and f["bottom_flat"] > 0.6 and f["corner_top"] < 0.1:
        return "cloud"
    if 0.74 <= ext <= 0.83 and v >= 7 and corner < 0.1:
        return "circle" if abs(f["aspect"] - 1) < 0.03 else "oval"
    if 0.7 <= ext <= 0.9 and v == 4 and f["solidity"] > 0.97:
        return "parallelogram"
    return "rectangle"
