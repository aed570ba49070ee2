"""8-connected components of a binary mask, with the labelling algorithm that is fastest here, and
the set pixels of a mask in raster order."""
from __future__ import annotations

import cv2
import numpy as np


def components(mask: np.ndarray) -> tuple[int, np.ndarray, np.ndarray, np.ndarray]:
    """``cv2.connectedComponentsWithStats(mask, connectivity=8)``, label for label: the count
    (background included), the int32 label image, the stats rows and the centroids.

    OpenCV's default for 8-connectivity (Spaghetti) and BBDT both label 2 x 2 blocks in raster
    order and number the components alike; with statistics, on one thread (each process of the
    image pool has one), BBDT labels an 80-Mpx mask in 0.27-0.40 s where the default takes 0.65 s.
    """
    return cv2.connectedComponentsWithStatsWithAlgorithm(mask, 8, cv2.CV_32S, cv2.CCL_BBDT)


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
