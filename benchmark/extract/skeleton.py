"""Thinning a connector mask to one-pixel curves and tracing those into chains.

A *segment* is a run of skeleton pixels between two nodes (curve ends or junctions). At a
junction (two connectors crossing, or touching) segments are paired by straightness: the two
whose directions are most nearly opposite continue each other. Following the pairs turns
segments into *chains*: ordered point lists, one per drawn connector (or piece of one).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from benchmark.extract.components import component_pixels, components, nonzero

# neighbour offsets, clockwise from north: P2..P9 of Zhang & Suen
_DY = np.array([-1, -1, 0, 1, 1, 1, 0, -1])
_DX = np.array([0, 1, 1, 1, 0, -1, -1, -1])


def thin(mask: np.ndarray) -> np.ndarray:
    """Zhang-Suen thinning of a boolean mask (works on the set pixels only).

    >>> m = np.zeros((9, 20), bool); m[3:6, 2:18] = True
    >>> t = thin(m); int(t.sum()) < 20 and bool(t[4, 5:15].all())
    True
    """
    img = np.zeros((mask.shape[0] + 2, mask.shape[1] + 2), np.uint8)
    img[1:-1, 1:-1] = mask
    h, w = img.shape
    flat = img.ravel()
    offs = _DY * w + _DX
    ys, xs = nonzero(img)
    idx = ys * w + xs          # np.flatnonzero(flat), read a row at a time
    while True:
        changed = False
        for step in (0, 1):
            nb = flat[idx[None, :] + offs[:, None]]
            b = nb.sum(axis=0)
            a = ((nb == 0) & (np.roll(nb, -1, axis=0) == 1)).sum(axis=0)
            p2, p4, p6, p8 = nb[0], nb[2], nb[4], nb[6]
            if step == 0:
                c = (p2 * p4 * p6 == 0) & (p4 * p6 * p8 == 0)
            else:
                c = (p2 * p4 * p8 == 0) & (p2 * p6 * p8 == 0)
            rm = (b >= 3) & (b <= 6) & (a == 1) & c  # 3, not 2: keeps 2-pixel diagonals (Lu & Wang)
            if rm.any():
                flat[idx[rm]] = 0
                idx = idx[~rm]
                changed = True
        if not changed:
            break
    return img[1:-1, 1:-1].astype(bool)


@dataclass
class Chain:
    """A traced connector piece: its skeleton pixels (x, y; unordered) and its two ends.

    ``ends[i]`` is ``(point, direction)``: where the piece stops and the unit vector pointing
    out of it there.
    """

    points: np.ndarray                                   # N x 2 float (x, y)
    ends: list[tuple[np.ndarray, np.ndarray]]

    def end(self, which: int) -> tuple[float, float]:
        p = self.ends[which][0]
        return float(p[0]), float(p[1])

    def direction(self, which: int) -> np.ndarray:
        return self.ends[which][1]

    def length(self) -> float:
        return float(len(self.points))


@dataclass
class _Seg:
    points: np.ndarray                     # N x 2 (x, y)
    tips: list[np.ndarray]                 # one or two end pixels
    dirs: list[np.ndarray]
    nodes: list[int | None]                # junction id at each tip, or None for a free end


def _ring_runs_table() -> np.ndarray:
    """For each 8-neighbour code, how many separate groups the set neighbours form.

    Bit k of the code is the neighbour at ring position k (N, NE, E, SE, S, SW, W, NW). Two
    4-neighbours at a right angle touch each other, so the diagonal between them never splits.
    """
    table = np.zeros(256, np.uint8)
    for code in range(256):
        ring = [(code >> k) & 1 for k in range(8)]
        for d in (1, 3, 5, 7):
            if ring[d - 1] and ring[(d + 1) % 8]:
                ring[d] = 1
        table[code] = sum(1 for k in range(8) if ring[k] and not ring[k - 1]) if not all(ring) else 1
    return table


_RUNS = _ring_runs_table()


#: how many of the 8 neighbours an 8-neighbour code sets
_BITS = np.array([bin(code).count("1") for code in range(256)], np.uint8)


def neighbour_codes(padded: np.ndarray, ys: np.ndarray, xs: np.ndarray, pad: int = 1) -> np.ndarray:
    """The 8-neighbour codes (bit k: the neighbour at ring position k is set) of the pixels ``ys``,
    ``xs`` of a 0/1 uint8 mask, given ``padded`` by ``pad`` pixels of zeros on every side.

    Read at the pixels asked for only (a skeleton's: a fraction of a per cent of the image) where a
    filter over the whole image would compute a code for every pixel.

    >>> m = np.zeros((3, 3), np.uint8); m[0, 1] = m[1, 2] = m[2, 0] = 1
    >>> int(neighbour_codes(np.pad(m, 1), np.array([1]), np.array([1]))[0])    # N, E and SW
    37
    """
    code = np.zeros(len(ys), np.uint8)
    for k, (dy, dx) in enumerate(zip(_DY, _DX)):
        code |= padded[ys + pad + dy, xs + pad + dx] << k
    return code


def _ring(radius: int) -> tuple[np.ndarray, np.ndarray]:
    """Offsets (dy, dx) of the square ring at ``radius``, in cyclic order."""
    r = radius
    pts = [(-r, x) for x in range(-r, r)] + [(y, r) for y in range(-r, r)] + \
          [(r, x) for x in range(r, -r, -1)] + [(y, -r) for y in range(r, -r, -1)]
    arr = np.array(pts)
    return arr[:, 0], arr[:, 1]


_RING_DY, _RING_DX = _ring(3)


def _junctions(padded: np.ndarray, ys: np.ndarray, xs: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    """Junction pixels among the skeleton pixels ``ys``, ``xs`` (those with three or more set
    neighbours; ``padded``: the skeleton padded by 3): three or more branches cross the ring of
    radius 3 around them.

    Counting on a ring instead of the 8 neighbours is immune to the 2-pixel staircases and
    split crossings that thinning leaves.
    """
    out = np.zeros(shape, np.uint8)
    if len(ys) == 0:
        return out
    vals = padded[ys[:, None] + 3 + _RING_DY[None, :], xs[:, None] + 3 + _RING_DX[None, :]]
    runs = ((vals == 1) & (np.roll(vals, 1, axis=1) == 0)).sum(axis=1)
    hit = runs >= 3
    out[ys[hit], xs[hit]] = 1
    return out


def _path_order(points: np.ndarray) -> np.ndarray | None:
    """Geodesic distance of every pixel of a thin 8-connected piece from one of its ends (the
    pixel farthest from an arbitrary start), or None when the piece is not connected."""
    from collections import deque

    index = {(int(x), int(y)): i for i, (x, y) in enumerate(points)}

    def bfs(start: int) -> np.ndarray:
        dist = np.full(len(points), -1, np.int64)
        dist[start] = 0
        queue = deque([start])
        while queue:
            i = queue.popleft()
            x, y = int(points[i][0]), int(points[i][1])
            for dx in (-1, 0, 1):
                for dy in (-1, 0, 1):
                    j = index.get((x + dx, y + dy))
                    if j is not None and dist[j] < 0:
                        dist[j] = dist[i] + 1
                        queue.append(j)
        return dist

    first = bfs(0)
    if (first < 0).any():
        return None
    return bfs(int(np.argmax(first)))


def split_at_reversal(points: np.ndarray, reach: float, max_cos: float = -0.3) -> tuple[np.ndarray, np.ndarray] | None:
    """A piece that turns back on itself (a V: two connectors meeting at a point, as under an
    edge label) split at the turn into its two arms; None when it never turns by more than
    ``acos(max_cos)``. Connectors bend smoothly or at right angles, never like that.

    >>> import cv2
    >>> m = np.zeros((70, 40), np.uint8)
    >>> _ = cv2.line(m, (2, 2), (12, 60), 1); _ = cv2.line(m, (12, 60), (30, 5), 1)
    >>> v = np.argwhere(m)[:, ::-1].astype(float)
    >>> a, b = split_at_reversal(v, 8)
    >>> bool(len(a) + len(b) < len(v)), bool(max(a[:, 0].max(), b[:, 0].max()) > 25), bool(min(a[:, 0].min(), b[:, 0].min()) < 5)
    (True, True, True)
    >>> m[:] = 0; _ = cv2.line(m, (2, 2), (12, 60), 1); _ = cv2.line(m, (12, 60), (38, 60), 1)  # a right angle
    >>> split_at_reversal(np.argwhere(m)[:, ::-1].astype(float), 8) is None
    True
    """
    dist = _path_order(points)
    if dist is None:
        return None
    n = int(dist.max()) + 1
    step = max(2, int(reach))
    if n < 2 * step + 3:
        return None
    sums = np.zeros((n, 2))
    np.add.at(sums, dist, points)
    path = sums / np.maximum(np.bincount(dist, minlength=n), 1)[:, None]
    before = path[step:n - step] - path[:n - 2 * step]
    after = path[2 * step:] - path[step:n - step]
    cos = (before * after).sum(1) / np.maximum(np.hypot(*before.T) * np.hypot(*after.T), 1e-9)
    k = int(np.argmin(cos))
    if cos[k] > max_cos:
        return None
    turn = k + step
    a, b = points[dist < turn - 1], points[dist > turn + 1]
    if len(a) < 2 or len(b) < 2:
        return None
    return a, b


def _junction_at(jlab: np.ndarray, x: int, y: int) -> int | None:
    """The first junction (in raster order) of the 3 x 3 window around ``x``, ``y`` of the junction
    labels ``jlab``, or None."""
    win = jlab[max(0, y - 1):y + 2, max(0, x - 1):x + 2]
    found = win[win > 0]
    return int(found[0]) if len(found) else None


def _free_seg(pts: np.ndarray, reach: float, jlab: np.ndarray, x0: int, y0: int) -> _Seg:
    """A segment for one arm of a split piece: its tips are the ends of its path (the one at the
    split is free; the other keeps the junction it touches, if any)."""
    ends = path_tips(pts, reach)
    return _Seg(pts, [tip for tip, _ in ends], [d for _, d in ends],
                [_junction_at(jlab, int(tip[0]) - x0, int(tip[1]) - y0) for tip, _ in ends])


def path_tips(points: np.ndarray, reach: float) -> list[tuple[np.ndarray, np.ndarray]]:
    """The two ends of a thin piece's path (:func:`_path_order`; its first and last points when it is
    not connected), each with the direction out of the piece there (:func:`_out_direction`)."""
    dist = _path_order(points)
    ends = [int(np.argmin(dist)), int(np.argmax(dist))] if dist is not None else [0, len(points) - 1]
    return [(points[t], _out_direction(points, points[t], reach)) for t in ends]


def _out_direction(points: np.ndarray, tip: np.ndarray, reach: float) -> np.ndarray:
    """The unit vector pointing out of a piece at its ``tip``: from the mean of its points within
    ``reach`` of the tip to the tip (zero when they are all at the tip)."""
    d = np.hypot(*(points - tip).T)
    near = points[d <= reach]
    v = tip - near.mean(axis=0)
    n = float(np.hypot(*v))
    return v / n if n > 0 else np.zeros(2)


#: a piece with two tips is looked at for a turn back (:func:`split_at_reversal`) only when the
#: directions out of its tips differ from opposite ones by more than this cosine (about 80 degrees):
#: a straight line's are opposite, a V's differ by its turn
TURN_BACK_COS = -0.2


def _turns_back(pts: np.ndarray, tips: np.ndarray, reach: float) -> bool:
    """Does the piece turn by more than about 80 degrees between its two tips (``TURN_BACK_COS``)?"""
    d0, d1 = (_out_direction(pts, pts[t], reach) for t in tips)
    return float(np.dot(d0, d1)) > TURN_BACK_COS


#: two lines crossing at a shallow angle are one line's width apart along a stretch as long as
#: their width over the angle's sine: their skeleton forks into two junctions joined by that
#: stretch. The arms across the stretch continue each other straight to this cosine
CROSSING_COS = -0.8
#: ... and that stretch is shorter than this many ``reach`` lengths: lines three pixels wide crossing
#: at 15 degrees are read apart (at twice ``reach``, only from about 25 degrees)
CROSSING_MAX = 4


def _shallow_crossing(i: int, s: _Seg, arms: dict[int, list[tuple[int, np.ndarray]]]) -> bool:
    """Is segment ``i`` (``s``), between two junctions of three arms each (``arms``: the segments
    ending at every junction, with their directions out of it), the overlap of two lines crossing at
    a shallow angle: do its junctions' other arms pair across it into two straight lines?"""
    a, b = s.nodes
    if len(arms.get(a, ())) != 3 or len(arms.get(b, ())) != 3:
        return False
    (p, q), (r, t) = ([d for j, d in arms[n] if j != i] for n in (a, b))
    return any(float(np.dot(x, y)) < CROSSING_COS and float(np.dot(u, v)) < CROSSING_COS
               for (x, y), (u, v) in (((p, r), (q, t)), ((p, t), (q, r))))


def trace(skel: np.ndarray, spur: float, reach: float) -> list[Chain]:
    """Chains of a skeleton.

    Segments are the skeleton minus its junction pixels; junction clusters joined by a very
    short segment, or by the overlap of two lines crossing at a shallow angle
    (:func:`_shallow_crossing`), count as one junction; a piece turning back on itself is split
    at the turn (:func:`split_at_reversal`); spurs shorter than
    ``spur`` are dropped; at each junction the segments whose directions (measured over
    ``reach`` pixels) are most nearly opposite continue each other.
    """
    import cv2

    sk = skel.astype(np.uint8)
    if not sk.any():
        return []
    bx, by, bw, bh = cv2.boundingRect(sk)
    pad = 2
    x0, y0 = max(0, bx - pad), max(0, by - pad)
    sk = sk[y0:by + bh + pad, x0:bx + bw + pad]
    # neighbours are counted at the skeleton's pixels only, on masks framed by 3 zeros (views
    # of the framed arrays are what the rest reads)
    framed = np.zeros((sk.shape[0] + 6, sk.shape[1] + 6), np.uint8)
    framed[3:-3, 3:-3] = sk
    sk = framed[3:-3, 3:-3]
    ys, xs = nonzero(sk)
    many = _BITS[neighbour_codes(framed, ys, xs, pad=3)] >= 3
    junction = _junctions(framed, ys[many], xs[many], sk.shape)
    jzone = cv2.dilate(junction, np.ones((3, 3), np.uint8)) & sk
    seg_framed = np.zeros_like(framed)
    seg_mask = seg_framed[3:-3, 3:-3]
    np.bitwise_and(sk, 1 - jzone, out=seg_mask)
    nj, jlab = components(jzone)[:2]
    ns, _, ys, xs, labs = component_pixels(seg_mask)
    order = np.argsort(labs, kind="stable")
    ys, xs, labs = ys[order], xs[order], labs[order]
    code = neighbour_codes(seg_framed, ys, xs, pad=3)
    sdeg, sgroups = _BITS[code], _RUNS[code]     # set neighbours, and the groups they form
    bounds = np.searchsorted(labs, np.arange(1, ns + 1))
    segs: list[_Seg] = []
    for k in range(1, ns):
        a, b = bounds[k - 1], bounds[k]
        sx, sy = xs[a:b], ys[a:b]
        pts = np.stack([sx + x0, sy + y0], axis=1).astype(float)
        deg = sdeg[a:b]
        tip_mask = (deg <= 1) | ((sgroups[a:b] == 1) & (deg == 2))
        tips_idx = np.nonzero(tip_mask)[0]
        if len(tips_idx) == 0:
            continue                                   # a closed loop: no connector
        if len(tips_idx) > 2 or (len(tips_idx) == 2 and _turns_back(pts, tips_idx, reach)):
            halves = split_at_reversal(pts, reach)
            if halves is not None:                     # two connectors meeting in a V
                for half in halves:
                    segs.append(_free_seg(half, reach, jlab, x0, y0))
                continue
        if len(tips_idx) > 2:                          # keep the two farthest apart
            tp = pts[tips_idx]
            dd = np.hypot(*(tp[:, None, :] - tp[None, :, :]).transpose(2, 0, 1))
            i, j = np.unravel_index(np.argmax(dd), dd.shape)
            tips_idx = tips_idx[[i, j]]
        if len(tips_idx) == 1:
            tips_idx = np.array([tips_idx[0], tips_idx[0]]) if len(pts) == 1 else np.array(
                [tips_idx[0], int(np.argmax(np.hypot(*(pts - pts[tips_idx[0]]).T)))])
        tips, dirs, nodes = [], [], []
        for t in tips_idx:
            tip = pts[t]
            tips.append(tip)
            dirs.append(_out_direction(pts, tip, reach))
            nodes.append(_junction_at(jlab, int(sx[t]), int(sy[t])))
        segs.append(_Seg(pts, tips, dirs, nodes))

    # junctions joined by a short segment are one junction
    parent = list(range(nj))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    arms: dict[int, list[tuple[int, np.ndarray]]] = {}
    for i, s in enumerate(segs):
        for n, d in zip(s.nodes, s.dirs):
            if n is not None:
                arms.setdefault(n, []).append((i, d))
    keep = []
    for i, s in enumerate(segs):
        a, b = s.nodes
        if a is not None and b is not None and a != b and (
                len(s.points) < spur or (len(s.points) < CROSSING_MAX * reach and _shallow_crossing(i, s, arms))):
            parent[find(a)] = find(b)
            continue
        keep.append(s)
    segs = keep
    for s in segs:
        s.nodes = [find(n) if n is not None else None for n in s.nodes]
    # prune spurs: a short segment with one free end hanging off a junction of 3 or more
    count: dict[int, int] = {}
    for s in segs:
        for n in s.nodes:
            if n is not None:
                count[n] = count.get(n, 0) + 1
    segs = [s for s in segs if not (len(s.points) < spur and sum(n is None for n in s.nodes) == 1
                                   and count.get(next(n for n in s.nodes if n is not None), 0) >= 3)]
    # pair segment ends at junctions by straightness
    ends_at: dict[int, list[tuple[int, int]]] = {}
    for i, s in enumerate(segs):
        for w, n in enumerate(s.nodes):
            if n is not None:
                ends_at.setdefault(n, []).append((i, w))
    partner: dict[tuple[int, int], tuple[int, int]] = {}
    for _, ends in sorted(ends_at.items()):
        pairs = []
        for x in range(len(ends)):
            for y in range(x + 1, len(ends)):
                if ends[x][0] == ends[y][0]:
                    continue
                dx, dy = segs[ends[x][0]].dirs[ends[x][1]], segs[ends[y][0]].dirs[ends[y][1]]
                pairs.append((float(np.dot(dx, dy)), ends[x], ends[y]))
        pairs.sort()
        used: set = set()
        for cos, e1, e2 in pairs:
            if cos > -0.3 or e1 in used or e2 in used:
                continue
            used |= {e1, e2}
            partner[e1], partner[e2] = e2, e1
    # follow pairs into chains
    done: set[int] = set()
    chains: list[Chain] = []
    for i in range(len(segs)):
        if i in done:
            continue
        seg, tip = i, 0
        seen = {i}
        while (seg, tip) in partner:                 # walk back to the chain's first end
            nseg, ntip = partner[(seg, tip)]
            if nseg in seen:
                break
            seen.add(nseg)
            seg, tip = nseg, 1 - ntip
        first = (seg, tip)
        members = []
        cur, entry = seg, tip
        while True:
            done.add(cur)
            members.append(cur)
            exit_ = 1 - entry
            nxt = partner.get((cur, exit_))
            if nxt is None or nxt[0] in done:
                break
            cur, entry = nxt
        last = (cur, 1 - entry)
        pts = np.concatenate([segs[m].points for m in members], axis=0)
        ends = [(segs[first[0]].tips[first[1]], segs[first[0]].dirs[first[1]]),
                (segs[last[0]].tips[last[1]], segs[last[0]].dirs[last[1]])]
        chains.append(Chain(pts, ends))
    return chains
