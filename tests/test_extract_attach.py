"""Connector ends are attached to shapes and arrowheads given to ends by measuring only what lies
near them (bounding rectangles first): the choice must be the one measuring everything makes."""
from __future__ import annotations

from typing import Iterator

import cv2
import numpy as np
import pytest

from benchmark.extract import connectors
from benchmark.extract.connectors import _attach_one, _End, _Outlines, _box_distance, _pointing_end
from benchmark.extract.shapes import Shape


def _shapes(rng: np.random.Generator, n: int) -> list[Shape]:
    out = []
    for i in range(n):
        x, y = (int(v) for v in rng.integers(0, 400, 2))
        w, h = (int(v) for v in rng.integers(8, 80, 2))
        if i % 3 == 0:  # a diamond: its outline is far from its bounding box's corners
            pts = [(x + w // 2, y), (x + w, y + h // 2), (x + w // 2, y + h), (x, y + h // 2)]
        else:
            pts = [(x, y), (x + w, y), (x + w, y + h), (x, y + h)]
        contour = np.array(pts, np.int32).reshape(-1, 1, 2)
        out.append(Shape(i, "rectangle", contour, cv2.boundingRect(contour), float(cv2.contourArea(contour)),
                         (255, 255, 255)))
    out[0].children = [1]  # one container: never "inside" for the attachment
    return out


def _attach_everything(x: float, y: float, shapes: list[Shape], lw: int, tol: float,
                       label_boxes: dict) -> int | None:
    """The attachment measuring every shape's outline exactly (the rule, without shortcuts)."""
    best = None
    for s in shapes:
        d = s.border_distance(x, y)
        if not s.is_container and s.contains(x, y):
            d = 0.0
        for box in label_boxes.get(s.index, ()):
            d = min(d, _box_distance(x, y, box) + lw)
        if d <= tol and (best is None or d < best[0] or (d == best[0] and s.area < best[1].area)):
            best = (d, s)
    return None if best is None else best[1].index


@pytest.mark.parametrize("seed", range(5))
def test_an_end_attaches_where_measuring_every_outline_would_attach_it(seed: int) -> None:
    rng = np.random.default_rng(seed)
    shapes = _shapes(rng, 40)
    label_boxes = {5: [(450, 450, 30, 10)], 7: [(10, 460, 40, 12)]}
    outlines = _Outlines(shapes, label_boxes)
    attached = 0
    for x, y in rng.uniform(-20, 500, (400, 2)):
        for tol in (2.0, 6.0, 14.0):
            e = _End(0, 0, np.array([x, y]), np.array([1.0, 0.0]))
            _attach_one(e, shapes, 2, tol, label_boxes, outlines)
            assert e.shape == _attach_everything(x, y, shapes, 2, tol, label_boxes), (x, y, tol)
            attached += e.shape is not None
    assert attached > 100  # the points do reach shapes, and not only by being inside them


def _heads_given(seed: int) -> list[int | None]:
    """Which end (its chain) each of 80 random blobs goes to, among 60 random ends."""
    rng = np.random.default_rng(seed)
    ends = [_End(i, 0, rng.uniform(0, 200, 2), (lambda a: np.array([np.cos(a), np.sin(a)]))(rng.uniform(0, 6.3)))
            for i in range(60)]
    chosen = []
    for _ in range(80):
        blob = rng.uniform(0, 200, 2) + rng.uniform(-6, 6, (25, 2))
        best = _pointing_end(blob, ends, 24.0, 0.5, 3)
        chosen.append(None if best is None else best.chain)
    return chosen


def test_a_head_goes_to_the_end_measuring_every_end_would_choose(monkeypatch) -> None:
    chosen = _heads_given(7)
    # the same without the bounding-box test: every end is measured
    monkeypatch.setattr(connectors, "_within", lambda points, rects, reach: np.ones(len(points), bool))
    assert chosen == _heads_given(7)
    assert sum(c is not None for c in chosen) >= 10


def _runs_by_walking(arr: np.ndarray) -> np.ndarray:
    """Histogram (0..31) of vertical run lengths, walking every column (the rule, without shortcuts)."""
    counts = np.zeros(32, np.int64)
    for col in np.asarray(arr, bool).T:
        run = 0
        for v in list(col) + [False]:
            if v:
                run += 1
            elif run:
                if run < 32:
                    counts[run] += 1
                run = 0
    return counts


@pytest.mark.parametrize("seed", range(3))
def test_stroke_run_lengths_are_those_walking_each_column_or_row_finds(seed: int) -> None:
    from benchmark.extract.raster import _row_run_counts, _run_counts

    rng = np.random.default_rng(seed)
    for _ in range(30):
        h, w = (int(v) for v in rng.integers(1, 70, 2))
        a = rng.random((h, w)) < rng.uniform(0.1, 0.95)
        assert _run_counts(a).tolist() == _runs_by_walking(a).tolist()
        assert _run_counts(a[:, ::3]).tolist() == _runs_by_walking(a[:, ::3]).tolist()  # a strided view
        assert _row_run_counts(a).tolist() == _runs_by_walking(a.T).tolist()
        assert _row_run_counts(a[::3]).tolist() == _runs_by_walking(a[::3].T).tolist()


def _blue_by_rule(rgb: np.ndarray) -> np.ndarray:
    """Stroke blue in integers: blue less the mean of red and green (halves rounded to even, as
    OpenCV rounds), floored at 0, above BLUENESS_MIN."""
    from benchmark.extract.raster import BLUENESS_MIN

    r, g, b = (rgb[..., i].astype(np.int32) for i in range(3))
    s = r + g
    mean = s // 2 + ((s & 1) & ((s // 2) & 1))
    return np.maximum(b - mean, 0) > BLUENESS_MIN


@pytest.mark.parametrize("seed", range(3))
def test_stroke_blue_is_the_rule_pixel_by_pixel(seed: int) -> None:
    from benchmark.extract.raster import stroke_colour

    rng = np.random.default_rng(seed)
    for _ in range(20):
        h, w = (int(v) for v in rng.integers(2, 90, 2))
        rgb = rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
        rgb[::2, ::3, 2] = rgb[::2, ::3, 0] // 2 + rgb[::2, ::3, 1] // 2 + 41  # near the threshold
        assert (stroke_colour(rgb) == _blue_by_rule(rgb)).all()
        assert (stroke_colour(rgb[::2, 1:]) == _blue_by_rule(rgb[::2, 1:])).all()  # a strided view
    # halves: 0.5 -> 0, 1.5 -> 2, 2.5 -> 2
    edge = np.array([[[0, 1, 40], [0, 1, 41], [1, 2, 42], [1, 2, 43], [2, 3, 42], [2, 3, 43], [255, 255, 255],
                      [0, 0, 255]]], np.uint8)
    assert stroke_colour(edge).tolist() == [[False, True, False, True, False, True, False, True]]


@pytest.mark.parametrize("seed", range(3))
def test_a_window_of_outline_distances_is_the_whole_images_up_to_the_distance_asked_for(seed: int) -> None:
    """Arrowheads weigh the distance to the nearest outline in small windows, measured on the outlines
    near each window only: every distance up to ``exact`` must be the whole image's (the same shortest
    path; OpenCV's float sums may round the last bit differently), and every longer one must be longer
    than ``exact`` too. Windows at the image's edges, and far from every outline, included."""
    rng = np.random.default_rng(seed)
    shapes = _shapes(rng, 12)
    dist = connectors.OutlineDistance(shapes, (480, 520))
    whole = cv2.distanceTransform(dist.lines, cv2.DIST_L2, 3)
    far = 0
    for _ in range(400):
        exact = float(rng.uniform(2, 40))
        y0, x0 = int(rng.integers(0, 470)), int(rng.integers(0, 510))
        y1, x1 = min(480, y0 + int(rng.integers(1, 70))), min(520, x0 + int(rng.integers(1, 70)))
        win, ref = dist.window(y0, y1, x0, x1, exact), whole[y0:y1, x0:x1]
        assert win.shape == ref.shape
        near = ref <= exact
        assert np.allclose(win[near], ref[near], rtol=1e-6, atol=0)
        assert (win[~near] > exact * (1 - 1e-6)).all()
        far += int((~near).sum())
    assert far > 0   # some distances were longer than asked for


@pytest.mark.parametrize("threads", [1, 2])
def test_components_are_labelled_as_opencvs_default_labels_them(threads: int) -> None:
    """Extraction labels 8-connected components with the algorithm fastest on one thread; the labels,
    their numbering and their stats must be those of ``cv2.connectedComponentsWithStats``, on noise of
    several densities and on the ink and fills of a bundled render."""
    from benchmark.dataset import DEFAULT_ROOT
    from benchmark.extract.components import components
    from benchmark.extract.image import read_rgb
    from benchmark.extract.raster import colour_mask, make_raster

    before = cv2.getNumThreads()
    cv2.setNumThreads(threads)
    try:
        rng = np.random.default_rng(threads)
        masks = [(rng.random((301, 257)) < p).astype(np.uint8) for p in (0.05, 0.3, 0.6)]
        r = make_raster(read_rgb(DEFAULT_ROOT / "diagrams" / "algo_binary_search.png"))
        masks += [r.ink.view(np.uint8), r.stroke.view(np.uint8), colour_mask(r.rgb, (255, 255, 255))]
        for mask in masks:
            n, labels, stats, centroids = components(mask)
            n0, labels0, stats0, centroids0 = cv2.connectedComponentsWithStats(mask, connectivity=8)
            assert n == n0 and n > 2
            assert np.array_equal(labels, labels0) and np.array_equal(stats, stats0)
            assert np.allclose(centroids, centroids0)
    finally:
        cv2.setNumThreads(before)


def _random_masks(rng: np.random.Generator, count: int, noise_every: int, ink: int) -> Iterator[np.ndarray]:
    """``count`` small 0/1 masks: every ``noise_every``-th noise of a random density, the others
    rectangles' outlines and lines drawn in ``ink`` on the other value (regions at the image's edge,
    regions in regions, one-pixel and diagonal ones)."""
    for t in range(count):
        h, w = (int(v) for v in rng.integers(1, 60, 2))
        if t % noise_every == 0:
            yield (rng.random((h, w)) < rng.random()).astype(np.uint8)
            continue
        mask = np.full((h, w), 1 - ink, np.uint8)
        for _ in range(int(rng.integers(1, 8))):
            p, q, u, v = (tuple(int(c) for c in rng.integers(0, (w, h))) for _ in range(4))
            cv2.rectangle(mask, p, q, ink, 1)
            cv2.line(mask, u, v, ink, 1)
        yield mask


def _holes_by_labelling_every_zero(mask: np.ndarray, max_area: int) -> np.ndarray:
    """What ``fill_small_holes`` is defined to return: every 4-connected component of the zeros of at
    most ``max_area`` pixels set (one labelling of the whole complement)."""
    n, labels, stats, _ = cv2.connectedComponentsWithStats(1 - mask, connectivity=4)
    small = np.zeros(n, np.uint8)
    small[1:][stats[1:, cv2.CC_STAT_AREA] <= max_area] = 1
    return mask | small[labels]


@pytest.mark.parametrize("seed", range(4))
def test_small_holes_are_those_labelling_every_zero_finds(seed: int) -> None:
    """Holes are found from their borders and labelled in their borders' boxes only; the filled mask
    must be the one labelling the whole complement gives: holes at the image's edge, holes with
    islands in them, diagonal and one-pixel holes, on noise, outlines and lines, and on a render."""
    from benchmark.dataset import DEFAULT_ROOT
    from benchmark.extract.connectors import fill_small_holes
    from benchmark.extract.image import read_rgb
    from benchmark.extract.raster import make_raster

    rng = np.random.default_rng(seed)
    filled = 0
    for t, mask in enumerate(_random_masks(rng, 400, noise_every=3, ink=1)):
        max_area = int(rng.integers(0, 60))
        got, want = fill_small_holes(mask.copy(), max_area), _holes_by_labelling_every_zero(mask, max_area)
        assert np.array_equal(got, want), (t, max_area)
        filled += int((want != mask).any())
    assert filled > 100   # most masks had holes to fill
    r = make_raster(read_rgb(DEFAULT_ROOT / "diagrams" / "algo_binary_search.png"))
    stroke = r.stroke.view(np.uint8)
    for max_area in (0, 12 * r.line_width ** 2, 5000):
        assert np.array_equal(fill_small_holes(stroke, max_area), _holes_by_labelling_every_zero(stroke, max_area))


def test_set_pixels_are_read_in_numpys_order() -> None:
    """``components.nonzero`` reads 2-D uint8 and bool masks with OpenCV; the indices, their order and
    type must be ``np.nonzero``'s, for views, empty masks and the arrays it leaves to numpy."""
    from benchmark.extract.components import nonzero

    rng = np.random.default_rng(7)
    arrays = []
    for p in (0.0, 0.01, 0.5, 1.0):
        m = rng.random((37, 53)) < p
        arrays += [m, m.astype(np.uint8) * 200, m[3:-2, 5:], m[:, ::2], m.T, m[:0], m.astype(np.int32), m[0]]
    for a in arrays:
        got, want = nonzero(a), np.nonzero(a)
        assert len(got) == len(want)
        assert all(np.array_equal(g, w) and g.dtype == w.dtype for g, w in zip(got, want))


@pytest.mark.parametrize("seed", range(3))
def test_neighbour_codes_at_a_skeletons_pixels_are_those_a_filter_over_the_image_gives(seed: int) -> None:
    """Tracing reads each skeleton pixel's 8-neighbour code (and from it the set neighbours and the
    groups they form) at the skeleton's pixels only; the codes must be those of a filter over the
    whole mask weighing neighbour k by 2**k, at the image's edges too."""
    from benchmark.extract.components import nonzero
    from benchmark.extract.skeleton import _BITS, _DX, _DY, neighbour_codes, thin

    kernel = np.zeros((3, 3), np.float32)
    for k, (dy, dx) in enumerate(zip(_DY, _DX)):
        kernel[1 + dy, 1 + dx] = 2 ** k     # filter2D correlates: cell (1+dy, 1+dx) weighs that neighbour
    rng = np.random.default_rng(seed)
    for p in (0.05, 0.3, 0.7):
        mask = (rng.random((41, 67)) < p).astype(np.uint8)
        for m in (mask, thin(mask > 0).astype(np.uint8)):
            dense = cv2.filter2D(m, cv2.CV_16S, kernel, borderType=cv2.BORDER_CONSTANT)
            count = cv2.filter2D(m, cv2.CV_16S, np.ones((3, 3), np.float32), borderType=cv2.BORDER_CONSTANT) - m
            ys, xs = nonzero(m)
            for pad in (1, 3):
                code = neighbour_codes(np.pad(m, pad), ys, xs, pad=pad)
                assert np.array_equal(code, dense[ys, xs]) and np.array_equal(_BITS[code], count[ys, xs])
            assert ((dense[ys, xs] > 0) & (dense[ys, xs] < 255)).any()


def _enclosed_by_labelling_the_whole_mask(mask: np.ndarray, min_w: int, min_h: int) -> list:
    n, labels, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=4)
    h_img, w_img = mask.shape
    out = []
    for i in range(1, n):
        x, y, w, h, a = (int(v) for v in stats[i])
        if x == 0 or y == 0 or x + w >= w_img or y + h >= h_img or w < min_w or h < min_h:
            continue
        out.append((x, y, w, h, a, (labels[y:y + h, x:x + w] == i).astype(np.uint8)))
    return out


@pytest.mark.parametrize("seed", range(3))
def test_enclosed_regions_are_those_labelling_the_whole_mask_finds_in_its_order(seed: int) -> None:
    """White shapes are sought among the page's enclosed regions, found from their borders and labelled
    in their borders' boxes; they must be the 4-connected components labelling the whole mask gives
    that do not touch the image's edge, in its numbering order, with the same boxes, areas and masks:
    regions inside regions, one-pixel regions, on noise and outlines, and the page of a render."""
    from benchmark.dataset import DEFAULT_ROOT
    from benchmark.extract.image import read_rgb
    from benchmark.extract.raster import colour_mask, make_raster
    from benchmark.extract.components import enclosed_regions
    from benchmark.extract.shapes import WHITE

    masks = list(_random_masks(np.random.default_rng(seed), 300, noise_every=2, ink=0))
    r = make_raster(read_rgb(DEFAULT_ROOT / "diagrams" / "algo_binary_search.png"))
    masks.append(colour_mask(r.rgb, WHITE, tol=3))
    found = 0
    for mask in masks:
        for min_w, min_h in ((1, 1), (3, 2), (12, 12)):
            got, want = enclosed_regions(mask, min_w, min_h), _enclosed_by_labelling_the_whole_mask(mask, min_w, min_h)
            assert [g[:5] for g in got] == [w_[:5] for w_ in want]
            assert all(np.array_equal(g[5], w_[5]) for g, w_ in zip(got, want))
            found += len(want)
    assert found > 1000


def _sparse_masks(rng: np.random.Generator, count: int, side: int) -> list[np.ndarray]:
    """``count`` masks of at most ``side`` x ``side`` pixels: sparse noise (at most 5 % set) and a few lines
    one or two pixels wide; every third one bool, the others uint8."""
    masks = []
    for t in range(count):
        h, w = (int(v) for v in rng.integers(1, side, 2))
        m = (rng.random((h, w)) < rng.random() * 0.05).astype(np.uint8)
        for _ in range(int(rng.integers(0, 4))):
            p, q = (tuple(int(c) for c in rng.integers(0, (w, h))) for _ in range(2))
            cv2.line(m, p, q, 1, int(rng.integers(1, 3)))
        masks.append(m.astype(bool) if t % 3 == 0 else m)
    return masks


def test_components_labelled_by_runs_are_opencvs(monkeypatch) -> None:
    """``components`` labels a sparse mask by its runs of set pixels; the count, labels (numbered as
    OpenCV numbers them), boxes, areas and centroids must be OpenCV's on the whole mask, bit for bit."""
    from benchmark.dataset import DEFAULT_ROOT
    from benchmark.extract import components as cc
    from benchmark.extract.image import read_rgb
    from benchmark.extract.raster import make_raster

    monkeypatch.setattr(cc, "RUNS_MIN_PIXELS", 1)
    rng = np.random.default_rng(11)
    masks = list(_random_masks(rng, 200, noise_every=5, ink=1))
    for t in range(300):   # small blobs and lines far apart in a larger frame, some at its edges
        h, w = (int(v) for v in rng.integers(8, 200, 2))
        m = np.zeros((h, w), np.uint8)
        for _ in range(int(rng.integers(1, 12))):
            x, y = int(rng.integers(0, w)), int(rng.integers(0, h))
            blob = m[y:y + int(rng.integers(1, 7)), x:x + int(rng.integers(1, 7))]
            blob[:] = rng.random(blob.shape) < 0.7
        masks.append(m * (255 if t % 4 == 0 else 1))
    masks += _sparse_masks(rng, 300, 120)   # runs meeting diagonally, side by side, in every row
    r = make_raster(read_rgb(DEFAULT_ROOT / "diagrams" / "algo_binary_search.png"))
    masks.append(r.stroke.view(np.uint8))
    by_runs = 0
    for t, m in enumerate(masks):
        want = cv2.connectedComponentsWithStatsWithAlgorithm(m.view(np.uint8), 8, cv2.CV_32S, cv2.CCL_BBDT)
        by_runs += cc._run_components(m) is not None
        got = cc.components(m)
        assert got[0] == want[0], t
        for g, w_ in zip(got[1:], want[1:]):
            assert g.dtype == w_.dtype and np.array_equal(g, w_, equal_nan=g.dtype.kind == "f"), t
    assert by_runs > 400   # about half the masks were labelled by their runs


@pytest.mark.parametrize("runs", [True, False])
def test_labels_read_at_pixels_are_the_label_images(monkeypatch, runs: bool) -> None:
    """``component_pixels``, ``component_stats``, ``PixelLabels`` and ``component_labels`` give what the
    label image of ``components`` holds, without making it where the runs label the mask: the set pixels'
    labels in raster order, the stats, and any pixel's or box's labels (0 off the mask), by runs and by
    OpenCV alike."""
    from benchmark.extract import components as cc

    monkeypatch.setattr(cc, "RUNS_MIN_PIXELS", 1 if runs else 1 << 40)
    rng = np.random.default_rng(5)
    masks = list(_random_masks(rng, 60, noise_every=5, ink=1)) + _sparse_masks(rng, 120, 90)
    by_runs = 0
    for t, m in enumerate(masks):
        n, labels, stats, _ = cc.components(m)
        by_runs += cc._sparse_candidate(m) and cc._runs_labelled(m) is not None
        got_n, got_stats, ys, xs, lab = cc.component_pixels(m)
        want_ys, want_xs = np.nonzero(m)
        assert got_n == n and np.array_equal(got_stats, stats), t
        assert np.array_equal(ys, want_ys) and np.array_equal(xs, want_xs), t
        assert np.array_equal(lab, labels[want_ys, want_xs]), t
        assert cc.component_stats(m)[0] == n and np.array_equal(cc.component_stats(m)[1], stats), t
        by_pixels = cc.PixelLabels(m.shape, ys, xs, lab)
        got_n, got_stats, reader = cc.component_labels(m)   # PixelLabels where the runs label it
        assert got_n == n and np.array_equal(got_stats, stats), t
        assert isinstance(reader, cc.PixelLabels if cc._sparse_candidate(m) and cc._runs_labelled(m) is not None
                          else cc.ImageLabels), t
        h, w = m.shape
        for read in (by_pixels, reader):
            py, px = rng.integers(0, h, (3, 17)), rng.integers(0, w, (3, 17))   # any pixel, set or not
            assert np.array_equal(read.at(py, px), labels[py, px]), t
            for _ in range(4):
                y0, x0 = int(rng.integers(0, h)), int(rng.integers(0, w))
                y1, x1 = int(rng.integers(y0, h + 1)), int(rng.integers(x0, w + 1))
                box = read.box(x0, y0, x1, y1)
                assert box.dtype == np.int32 and np.array_equal(box, labels[y0:y1, x0:x1]), (t, x0, y0, x1, y1)
    assert (by_runs > 40) if runs else by_runs == 0   # (by runs: most of the sparse masks)


@pytest.mark.parametrize("seed", range(3))
def test_an_outlines_widths_are_the_stroke_pixels_counted_around_each_point(seed: int) -> None:
    # the squares read as views of the image, and those cut by its border counted one by one
    rng = np.random.default_rng(seed)
    for _ in range(100):
        h, w = (int(v) for v in rng.integers(5, 90, 2))
        lw = int(rng.integers(1, 4))
        mask = rng.random((h, w)) < rng.random()
        ring = rng.uniform(-5, max(h, w) + 5, (int(rng.integers(1, 50)), 2))
        r = 3 * lw
        want = []
        for x, y in ring:
            x, y = min(max(int(round(x)), 0), w - 1), min(max(int(round(y)), 0), h - 1)
            want.append(mask[max(0, y - r):y + r + 1, max(0, x - r):x + r + 1].sum() / (2 * r + 1))
        assert connectors._outline_widths(ring, mask, lw).tolist() == want


@pytest.mark.parametrize("seed", range(4))
def test_the_pairs_tried_for_joining_are_every_near_pair_and_every_pair_beside_one_label(seed: int) -> None:
    rng = np.random.default_rng(seed)
    ends = [_End(i // 2, i % 2, np.round(rng.uniform(0, 600, 2)) if i % 5 else rng.uniform(0, 600, 2),
                 np.array([1.0, 0.0]), label_boxes=[int(b) for b in rng.choice(12, rng.integers(0, 3), replace=False)]
                 if i % 4 == 0 else [])
            for i in range(300)]
    free = [i for i in range(len(ends)) if i % 7]
    near = 18.0
    pairs = connectors._join_pairs(ends, free, near)
    everything = [(i, j) for n, i in enumerate(free) for j in free[n + 1:]
                  if float(np.hypot(*(ends[j].point - ends[i].point))) <= near
                  or set(ends[i].label_boxes) & set(ends[j].label_boxes)]
    assert pairs == sorted(pairs) and len(set(pairs)) == len(pairs)
    assert set(everything) <= set(pairs)
    # and little more: a pair let through is within a hair of the distance, or beside one label
    extra = set(pairs) - set(everything)
    assert all(float(np.hypot(*(ends[j].point - ends[i].point))) <= near * (1 + 1e-8) for i, j in extra)
    assert sum(1 for i, j in everything if not set(ends[i].label_boxes) & set(ends[j].label_boxes)) > 20


def _dense_path_by_segments(path: np.ndarray, step: float) -> np.ndarray:
    """The polyline's points about ``step`` apart, a segment at a time (the rule, without shortcuts)."""
    out = []
    for p, q in zip(path[:-1], path[1:]):
        n = max(1, int(np.ceil(float(np.hypot(*(q - p))) / step)))
        out.append(p + (q - p) * (np.arange(n)[:, None] / n))
    return np.concatenate(out + [path[-1:].astype(float)])


@pytest.mark.parametrize("seed", range(3))
def test_a_path_made_dense_at_once_is_the_one_made_a_segment_at_a_time(seed: int) -> None:
    rng = np.random.default_rng(seed)
    for _ in range(200):
        path = rng.integers(0, 500, (int(rng.integers(2, 30)), 2))
        path = path if rng.random() < 0.5 else path + rng.random(path.shape)
        step = float(rng.integers(1, 12))
        got, want = connectors.dense_path(path, step), _dense_path_by_segments(path, step)
        assert got.dtype == want.dtype and np.array_equal(got, want)


@pytest.mark.parametrize("seed", range(3))
def test_a_pieces_cells_are_walked_alike_with_and_without_the_table_of_distances(seed: int, monkeypatch) -> None:
    rng = np.random.default_rng(seed)
    cases = []
    for _ in range(150):
        n = int(rng.integers(1, 300))
        walk = np.round(np.cumsum(rng.normal(size=(n, 2)) * 4, axis=0))   # a wandering thin piece
        cases.append((walk, walk[int(rng.integers(0, n))] + rng.normal(size=2) * 6, int(rng.integers(2, 8))))
    tabled = [connectors.ordered_points(p, s, c) for p, s, c in cases]
    monkeypatch.setattr(connectors, "ORDER_MATRIX_CELLS", 0)    # every piece walked measuring each step
    for (p, s, c), got in zip(cases, tabled):
        assert np.array_equal(got, connectors.ordered_points(p, s, c))
    assert max(len(t) for t in tabled) > 50
