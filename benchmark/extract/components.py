"""8-connected components of a binary mask, with the labelling algorithm that is fastest here; the
regions a mask encloses; the set pixels of a mask in raster order."""
from __future__ import annotations

import cv2
import numpy as np


#: a mask of at least this many pixels with at most :data:`RUNS_SET` of them set is labelled by its
#: runs (:func:`_run_components`)
RUNS_MIN_PIXELS = 1 << 20
RUNS_SET = 0.05


def components(mask: np.ndarray) -> tuple[int, np.ndarray, np.ndarray, np.ndarray]:
    """``cv2.connectedComponentsWithStats(mask, connectivity=8)``, label for label: the count
    (background included), the int32 label image, the stats rows and the centroids.

    OpenCV's default for 8-connectivity (Spaghetti) and BBDT both label 2 x 2 blocks in raster
    order and number the components alike; with statistics, on one thread (each process of the
    image pool has one), BBDT labels an 80-Mpx mask in 0.27-0.40 s where the default takes 0.65 s.

    A large sparse mask (a drawing's connectors, its arrowheads) is labelled by its runs of set
    pixels instead (:func:`_run_components`), every number the same: its cost follows the set
    pixels, not the mask's size.
    """
    if _sparse_candidate(mask):
        found = _run_components(mask)
        if found is not None:
            return found
    return cv2.connectedComponentsWithStatsWithAlgorithm(mask, 8, cv2.CV_32S, cv2.CCL_BBDT)


def component_stats(mask: np.ndarray) -> tuple[int, np.ndarray]:
    """The count and the stats rows of :func:`components`, without the label image where the runs give
    them (:func:`component_labels`).

    >>> m = np.zeros((2048, 1024), np.uint8); m[5:9, 7:20] = 1; m[100, 3] = 1
    >>> n, stats = component_stats(m); n, stats[1:].tolist() == components(m)[2][1:].tolist()
    (3, True)
    """
    n, stats, _ = component_labels(mask)
    return n, stats


def component_pixels(mask: np.ndarray) -> tuple[int, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The count and stats of :func:`components` and the set pixels of ``mask`` with their labels: rows,
    columns (as :func:`nonzero` gives them, in raster order) and labels, which ``labels[ys, xs]`` of the
    label image reads. A large sparse mask is labelled by its runs (:func:`_runs_labelled`), whose pixels'
    labels are their runs', and no label image is made: at 80 Mpx one is 320 MB of int32 written at a
    few per cent of its pixels.

    >>> m = np.zeros((2048, 1024), np.uint8); m[5:9, 7:20] = 1; m[100, 3] = 1; m[6, 30] = 1
    >>> n, stats, ys, xs, lab = component_pixels(m)
    >>> full = components(m)[1]; bool((lab == full[ys, xs]).all()), [a.tolist() for a in nonzero(m)] == [ys.tolist(), xs.tolist()]
    (True, True)
    """
    found = _runs_labelled(mask) if _sparse_candidate(mask) else None
    if found is not None:
        n, stats, _, ys, xs, lab = found
        return n, stats, ys, xs, lab
    n, labels, stats, _ = cv2.connectedComponentsWithStatsWithAlgorithm(mask, 8, cv2.CV_32S, cv2.CCL_BBDT)
    ys, xs = nonzero(mask)
    return n, stats, ys, xs, labels[ys, xs]


class PixelLabels:
    """The label image of a mask's components (:func:`components`), read at pixels without being made:
    the labels of the mask's set pixels (:func:`component_pixels`), found by position; any other pixel
    reads 0, the background's label, as in the image.

    >>> m = np.zeros((3, 5), np.uint8); m[0, 1] = m[1, 2] = m[2, 4] = 1
    >>> labels = PixelLabels(m.shape, *component_pixels(m)[2:]); full = components(m)[1]
    >>> labels.at(np.array([0, 2, 1]), np.array([1, 4, 0])).tolist(), full[[0, 2, 1], [1, 4, 0]].tolist()
    ([1, 2, 0], [1, 2, 0])
    >>> bool((labels.box(1, 0, 5, 3) == full[0:3, 1:5]).all())
    True
    """

    def __init__(self, shape: tuple[int, int], ys: np.ndarray, xs: np.ndarray, lab: np.ndarray) -> None:
        self.shape = shape
        self._width = shape[1]
        self._keys = ys.astype(np.int64) * self._width + xs   # raster order: sorted
        self._lab = lab.astype(np.int32, copy=False)

    def at(self, ys: np.ndarray, xs: np.ndarray) -> np.ndarray:
        """``labels[ys, xs]`` of the label image (index arrays of one shape, inside the image)."""
        keys = np.asarray(ys, np.int64) * self._width + np.asarray(xs, np.int64)
        if not len(self._keys):
            return np.zeros(keys.shape, np.int32)
        i = np.minimum(np.searchsorted(self._keys, keys), len(self._keys) - 1)
        return np.where(self._keys[i] == keys, self._lab[i], 0).astype(np.int32, copy=False)

    def box(self, x0: int, y0: int, x1: int, y1: int) -> np.ndarray:
        """``labels[y0:y1, x0:x1]`` of the label image (int32)."""
        out = np.zeros((max(0, y1 - y0), max(0, x1 - x0)), np.int32)
        if not out.size:
            return out
        # the set pixels from the box's first to its last: its rows whole, then those in its columns
        lo, hi = np.searchsorted(self._keys, (y0 * self._width + x0, (y1 - 1) * self._width + x1))
        ys, xs = np.divmod(self._keys[lo:hi], self._width)
        inside = (xs >= x0) & (xs < x1)
        out[ys[inside] - y0, xs[inside] - x0] = self._lab[lo:hi][inside]
        return out


class ImageLabels:
    """A label image read as :class:`PixelLabels` reads one (:meth:`at`, :meth:`box`): what
    :func:`component_labels` gives for a mask OpenCV labels.

    >>> ImageLabels(np.array([[0, 1], [2, 2]], np.int32)).box(1, 0, 2, 2).tolist()
    [[1], [2]]
    """

    def __init__(self, labels: np.ndarray) -> None:
        self.labels = labels
        self.shape = labels.shape

    def at(self, ys: np.ndarray, xs: np.ndarray) -> np.ndarray:
        """``labels[ys, xs]``."""
        return self.labels[ys, xs]

    def box(self, x0: int, y0: int, x1: int, y1: int) -> np.ndarray:
        """``labels[y0:y1, x0:x1]`` (a view)."""
        return self.labels[y0:y1, x0:x1]


def component_labels(mask: np.ndarray) -> tuple[int, np.ndarray, "PixelLabels | ImageLabels"]:
    """The count and stats of :func:`components` and its labels to read at pixels and boxes: a large
    sparse mask's by position among its set pixels (:class:`PixelLabels`, no label image made), any
    other's from OpenCV's label image (:class:`ImageLabels`).

    >>> m = np.zeros((2048, 1024), np.uint8); m[5:9, 7:20] = 1; m[100, 3] = 1
    >>> n, stats, labels = component_labels(m); type(labels).__name__, labels.box(0, 0, 30, 10).tolist() == components(m)[1][:10, :30].tolist()
    ('PixelLabels', True)
    >>> type(component_labels(np.ones((3, 3), np.uint8))[2]).__name__
    'ImageLabels'
    """
    found = _runs_labelled(mask) if _sparse_candidate(mask) else None
    if found is not None:
        n, stats, _, ys, xs, lab = found
        return n, stats, PixelLabels(mask.shape, ys, xs, lab)
    n, labels, stats, _ = cv2.connectedComponentsWithStatsWithAlgorithm(mask, 8, cv2.CV_32S, cv2.CCL_BBDT)
    return n, stats, ImageLabels(labels)


def _sparse_candidate(mask: np.ndarray) -> bool:
    return mask.ndim == 2 and mask.size >= RUNS_MIN_PIXELS and mask.dtype in (np.uint8, np.bool_)


def _run_components(mask: np.ndarray) -> tuple[int, np.ndarray, np.ndarray, np.ndarray] | None:
    """:func:`components` of ``mask`` from its runs (:func:`_runs_labelled`), the label image written at
    the set pixels only (None when none of it, or more than :data:`RUNS_SET` of it, is set)."""
    found = _runs_labelled(mask)
    if found is None:
        return None
    n, stats, centroids, ys, xs, lab = found
    labels = np.zeros(mask.shape, np.int32)
    labels[ys, xs] = lab
    return n, labels, stats, centroids


def _runs_labelled(mask: np.ndarray) -> tuple[int, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """The count, stats and centroids of :func:`components` of ``mask`` from its runs, and its set pixels
    (rows, columns in raster order) with their labels (None when none of it, or more than
    :data:`RUNS_SET` of it, is set).

    A run is a row's stretch of set pixels. Two runs of consecutive rows are 8-connected when they
    overlap with one of them widened by a pixel on each side; the components are those of the graph
    of runs (``scipy.sparse.csgraph``). They are numbered as OpenCV numbers them on the whole mask:
    in the raster order of the first 2 x 2 block of pixels each reaches (a block's set pixels are all
    one component's). Boxes and areas come from the runs' ends and lengths, centroids are the sums of
    the pixels' own coordinates over their count, as OpenCV computes them, and a pixel's label is its
    run's. The background's row is computed from the zeros' rows, columns and count.
    """
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    h, w = mask.shape
    count = cv2.countNonZero(mask.view(np.uint8))
    if count == 0 or count > RUNS_SET * h * w:
        return None   # nothing to label, or so much that labelling pixel by pixel costs more
    ys, xs = nonzero(mask)
    starts = np.flatnonzero(np.concatenate(([True], (ys[1:] != ys[:-1]) | (xs[1:] != xs[:-1] + 1))))
    lengths = np.diff(np.append(starts, len(ys)))
    ry, x0 = ys[starts], xs[starts]
    x1 = x0 + lengths - 1
    # the runs of the row above that touch each run: a range of them, as a row's runs are sorted and apart
    stride = w + 2
    above = (ry - 1) * stride
    lo = np.searchsorted(ry * stride + x1, above + x0 - 1)
    hi = np.searchsorted(ry * stride + x0, above + x1 + 2)
    touching = np.maximum(hi - lo, 0)
    below = np.repeat(np.arange(len(starts)), touching)
    offsets = np.arange(len(below)) - np.repeat(np.cumsum(touching) - touching, touching)
    graph = coo_matrix((np.ones(len(below), np.int8), (np.repeat(lo, touching) + offsets, below)),
                       shape=(len(starts), len(starts)))
    found, comp = connected_components(graph, directed=False)
    # each component's first block, and the whole mask's numbering from them
    first = np.full(found, np.iinfo(np.int64).max)
    np.minimum.at(first, comp, (ry // 2) * ((w + 1) // 2) + x0 // 2)
    label = np.empty(found, np.int32)
    label[np.argsort(first)] = np.arange(1, found + 1, dtype=np.int32)
    run_label = label[comp]
    n = found + 1
    # boxes: the extremes of each component's runs (grouped by label)
    by = np.argsort(run_label, kind="stable")
    group = np.flatnonzero(np.concatenate(([True], np.diff(run_label[by]) != 0)))
    stats = np.empty((n, 5), np.int32)
    left, top = np.minimum.reduceat(x0[by], group), np.minimum.reduceat(ry[by], group)
    stats[1:, 0], stats[1:, 1] = left, top
    stats[1:, 2] = np.maximum.reduceat(x1[by], group) - left + 1
    stats[1:, 3] = np.maximum.reduceat(ry[by], group) - top + 1
    stats[1:, 4] = np.bincount(run_label, weights=lengths, minlength=n)[1:]
    # the background: every pixel that is not set
    row_count, col_count = np.bincount(ys, minlength=h), np.bincount(xs, minlength=w)
    zero_cols, zero_rows = np.flatnonzero(col_count < h), np.flatnonzero(row_count < w)
    stats[0] = (zero_cols[0], zero_rows[0], zero_cols[-1] - zero_cols[0] + 1, zero_rows[-1] - zero_rows[0] + 1,
                h * w - len(ys))
    centroids = np.empty((n, 2), np.float64)
    # a run's x sum is its length times its middle, an integer (x0 + x1 is odd only for an even length)
    centroids[:, 0] = np.bincount(run_label, weights=(x0 + x1) * lengths // 2, minlength=n)
    centroids[:, 1] = np.bincount(run_label, weights=ry * lengths, minlength=n)
    centroids[0, 0] = h * (w * (w - 1) // 2) - float(np.dot(col_count, np.arange(w)))
    centroids[0, 1] = w * (h * (h - 1) // 2) - float(np.dot(row_count, np.arange(h)))
    centroids /= stats[:, 4:5].astype(np.float64)
    return n, stats, centroids, ys, xs, np.repeat(run_label, lengths)


def pixels_of(mask: np.ndarray, labels: np.ndarray, chosen: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows, columns and labels of the pixels of ``mask`` whose component is ``chosen`` (a bool per
    label of ``labels``, the components of ``mask``), in raster order. Labels are read at the mask's
    pixels only (a few per cent of a drawing), not by mapping the whole label image.

    >>> m = np.array([[1, 0, 1], [1, 0, 0]], np.uint8)
    >>> n, labels, _, _ = components(m)
    >>> [a.tolist() for a in pixels_of(m, labels, np.array([False, False, True]))]
    [[0], [2], [2]]
    """
    ys, xs = nonzero(mask)
    lab = labels[ys, xs]
    keep = chosen[lab]
    return ys[keep], xs[keep], lab[keep]


def nonzero(mask: np.ndarray) -> tuple[np.ndarray, ...]:
    """``np.nonzero(mask)``: the same index arrays, in the same (raster) order and type.

    A 2-D uint8 or bool mask whose rows are each contiguous is read with ``cv2.findNonZero``: on an
    80-Mpx mask with 1 % of its pixels set it takes 6 ms where ``np.nonzero`` takes 270 ms (numpy
    visits every element one at a time; OpenCV counts and collects a row at a time). Anything else
    goes to ``np.nonzero``.

    >>> m = np.zeros((3, 4), bool); m[0, 3] = m[2, 0] = m[2, 2] = True
    >>> [a.tolist() for a in nonzero(m)], [a.tolist() for a in nonzero(m[:, 1:])], nonzero(m[:0])[0].dtype
    ([[0, 2, 2], [3, 0, 2]], [[0, 2], [2, 1]], dtype('int64'))
    """
    if mask.ndim != 2 or mask.dtype not in (np.uint8, np.bool_) or mask.strides[1] != 1 or mask.size == 0:
        return np.nonzero(mask)
    points = cv2.findNonZero(mask.view(np.uint8))
    if points is None:
        return np.empty(0, np.intp), np.empty(0, np.intp)
    points = points.reshape(-1, 2)
    return points[:, 1].astype(np.intp), points[:, 0].astype(np.intp)


def enclosed_regions(mask: np.ndarray, min_w: int = 1, min_h: int = 1,
                     max_area: int | None = None) -> list[tuple[int, int, int, int, int, np.ndarray]]:
    """The 4-connected components of a 0/1 uint8 ``mask`` that do not touch the image's edge, are
    at least ``min_w`` wide and ``min_h`` tall and (when given) at most ``max_area`` pixels, in the order
    ``cv2.connectedComponentsWithStats(mask, connectivity=4)`` numbers them (by their first pixel in
    raster order): x, y, w, h, area and the component's mask inside its box (uint8).

    They are the holes of the rest of the image, whose borders ``cv2.findContours`` follows
    (8-connected ink around 4-connected holes). A hole lies inside its border's box, one pixel in
    from each side; each box as wide and tall as asked for is labelled, and the components in it
    that do not reach its edge are whole. A 4-connected region spans at most as many columns plus
    rows as it has pixels, plus one: with ``max_area``, a box wider plus taller than ``max_area + 5``
    holds only larger regions and is not labelled. Labelling the whole mask labels every pixel of the
    page (0.75 s on an 80-Mpx image); the borders take a tenth of that.

    >>> m = np.ones((7, 12), np.uint8); m[1:6, 1] = m[1, 1:11] = m[5, 1:11] = m[1:6, 4] = m[1:6, 10] = 0
    >>> [r[:5] for r in enclosed_regions(m)], [r[:5] for r in enclosed_regions(m, min_w=4)]
    ([(2, 2, 2, 3, 6), (5, 2, 5, 3, 15)], [(5, 2, 5, 3, 15)])
    """
    rest = (mask == 0).view(np.uint8)
    contours, hierarchy = cv2.findContours(rest, cv2.RETR_CCOMP, cv2.CHAIN_APPROX_SIMPLE)
    found: dict[tuple[int, int], tuple[int, int, int, int, int, np.ndarray]] = {}
    for contour, (_, _, _, parent) in zip(contours, hierarchy[0] if hierarchy is not None else ()):
        if parent < 0:
            continue  # an outer border: holes are the second level
        bx, by, bw, bh = cv2.boundingRect(contour)
        if bw - 2 < min_w or bh - 2 < min_h:
            continue  # the hole, and anything inside it, is smaller
        if max_area is not None and bw + bh > max_area + 5:
            continue  # the hole is larger, and what lies inside it is found from its own border
        n, labels, stats, _ = cv2.connectedComponentsWithStats(mask[by:by + bh, bx:bx + bw], connectivity=4)
        for i in range(1, n):
            x, y, w, h, a = (int(v) for v in stats[i])
            if x == 0 or y == 0 or x + w == bw or y + h == bh:
                continue  # reaches the box's edge: not whole here
            if w < min_w or h < min_h or (max_area is not None and a > max_area):
                continue
            sub = (labels[y:y + h, x:x + w] == i).view(np.uint8)
            first = (by + y, bx + x + int(np.argmax(sub[0])))
            if first not in found:
                found[first] = (bx + x, by + y, w, h, a, sub)
    return [found[k] for k in sorted(found)]
