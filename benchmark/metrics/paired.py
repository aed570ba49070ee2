"""Paired statistics: comparing two systems on the same questions (pure functions, seeded).

Two retrievers (or two runs) answered the same questions; per question each has a value (0/1 for
accuracy or sufficiency, a share for SRR or F1). Comparing their means as if the samples were
independent wastes the pairing and overstates certainty when questions of one diagram move
together. Here:

* :func:`mcnemar` -- exact McNemar test for paired 0/1 outcomes (binomial on the discordant pairs);
* :func:`paired_bootstrap` -- the mean difference with a percentile interval and a two-sided
  bootstrap p-value; with ``clusters`` (the diagram of each question) whole clusters are resampled
  (cluster bootstrap), so questions of one diagram stay together;
* :func:`cluster_bootstrap_ci` -- the interval of one mean, resampling whole clusters;
* :func:`holm` -- Holm's step-down correction of a family of p-values.

``None`` (unmeasured) in either member of a pair leaves the pair out; every result says how many
pairs it used and how many it left out.

>>> a = [1, 1, 1, 1, 1, 1, 1, 1, 0, 1]
>>> b = [0, 0, 0, 0, 0, 0, 0, 1, 0, 1]
>>> m = mcnemar(a, b)
>>> m.a_only, m.b_only, round(m.p, 4)
(7, 0, 0.0156)
>>> d = paired_bootstrap(a, b, seed=0, n_boot=2000)
>>> round(d.diff, 2), d.low > 0, d.p < 0.05, d.n
(0.7, True, True, 10)
>>> holm([0.01, 0.04, 0.03, None])
[0.03, 0.06, 0.06, None]
"""
from __future__ import annotations

import math
import zlib
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np


@dataclass(frozen=True)
class McNemar:
    """Exact McNemar test of paired 0/1 outcomes: pairs used, pairs left out (unmeasured), the
    discordant counts (``a_only``: a right, b wrong) and the two-sided p-value (``None`` with no pair)."""

    n: int
    missing: int
    a_only: int
    b_only: int
    p: float | None


@dataclass(frozen=True)
class PairedDiff:
    """Mean of a - b over the pairs, its percentile interval, a two-sided bootstrap p-value."""

    diff: float | None
    low: float | None
    high: float | None
    p: float | None
    n: int
    missing: int
    clusters: int | None = None


def _pairs(a: Sequence[Any], b: Sequence[Any], clusters: Sequence[Any] | None = None
           ) -> tuple[np.ndarray, np.ndarray, list[Any] | None, int]:
    if len(a) != len(b) or (clusters is not None and len(clusters) != len(a)):
        raise ValueError(f"paired values differ in length: {len(a)}, {len(b)}"
                         + (f", clusters {len(clusters)}" if clusters is not None else ""))
    if _float_array(a) and _float_array(b):   # NaN is unmeasured: the pairs kept with numpy, in order
        both = ~np.isnan(a) & ~np.isnan(b)
        cl = None if clusters is None else (clusters[both] if isinstance(clusters, np.ndarray)
                                            else [clusters[i] for i in np.flatnonzero(both)])
        return a[both], b[both], cl, len(a) - int(both.sum())
    keep = [i for i, (x, y) in enumerate(zip(a, b)) if x is not None and y is not None
            and not (isinstance(x, float) and math.isnan(x)) and not (isinstance(y, float) and math.isnan(y))]
    xa = np.array([float(a[i]) for i in keep], dtype=float)
    xb = np.array([float(b[i]) for i in keep], dtype=float)
    cl = [clusters[i] for i in keep] if clusters is not None else None
    return xa, xb, cl, len(a) - len(keep)


def _float_array(x: Any) -> bool:
    return isinstance(x, np.ndarray) and x.dtype.kind == "f"


def binomial_two_sided(k: int, n: int) -> float:
    """Exact two-sided p-value of ``k`` successes or fewer (or as many or more) in ``n`` fair trials.

    >>> binomial_two_sided(0, 6), binomial_two_sided(3, 6), binomial_two_sided(0, 0)
    (0.03125, 1.0, 1.0)
    """
    if n == 0:
        return 1.0
    k = min(k, n - k)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2 ** n  # exact integers, one rounding
    return min(1.0, 2 * tail)


def mcnemar(a: Sequence[Any], b: Sequence[Any]) -> McNemar:
    """Exact McNemar test of two paired 0/1 sequences (see :class:`McNemar`).

    >>> mcnemar([1, 0, None], [1, 1, 0])
    McNemar(n=2, missing=1, a_only=0, b_only=1, p=1.0)
    """
    xa, xb, _, missing = _pairs(a, b)
    a_only = int(np.sum((xa > 0) & (xb <= 0)))
    b_only = int(np.sum((xa <= 0) & (xb > 0)))
    n = int(xa.size)
    return McNemar(n, missing, a_only, b_only, binomial_two_sided(a_only, a_only + b_only) if n else None)


def _rng(seed: int, key: str) -> np.random.Generator:
    return np.random.default_rng([int(seed), zlib.crc32(key.encode("utf-8"))])


#: values drawn at a time when resampling: resamples are drawn a block of them at a time, so the memory a
#: bootstrap takes stays flat however many values (or clusters) it resamples
RESAMPLE_BLOCK = 1 << 18


def _resampled_means(values: np.ndarray, clusters: list[Any] | None, rng: np.random.Generator,
                     n_boot: int) -> np.ndarray:
    """Means of ``n_boot`` bootstrap resamples of ``values``: of the values, or of whole clusters.

    The resamples are drawn a block at a time (:data:`RESAMPLE_BLOCK` values a block): the same draws, in
    the same order, as one ``(n_boot, n)`` draw, whose matrix grows with the data (a thousand resamples of
    five thousand diagrams: 40 MB, and as much again made floats to be multiplied;
    ``tests/test_report_comparison.py`` checks the draws against one draw)."""
    means = np.empty(n_boot)
    if clusters is None:
        per = max(1, RESAMPLE_BLOCK // max(1, values.size))
        for start in range(0, n_boot, per):
            k = min(per, n_boot - start)
            means[start:start + k] = values[rng.integers(0, values.size, size=(k, values.size))].mean(axis=1)
        return means
    ids = {c: i for i, c in enumerate(sorted(set(clusters), key=str))}
    which = np.array([ids[c] for c in clusters])
    sums = np.bincount(which, weights=values, minlength=len(ids))
    counts = np.bincount(which, minlength=len(ids)).astype(float)
    uniform = np.full(len(ids), 1 / len(ids))
    per = max(1, RESAMPLE_BLOCK // len(ids))
    for start in range(0, n_boot, per):
        k = min(per, n_boot - start)
        drawn = rng.multinomial(len(ids), uniform, size=k)  # clusters drawn, with replacement
        means[start:start + k] = (drawn @ sums) / (drawn @ counts)
    return means


def paired_bootstrap(a: Sequence[Any], b: Sequence[Any], seed: int, n_boot: int = 1000, level: float = 0.95,
                     clusters: Sequence[Any] | None = None, key: str = "") -> PairedDiff:
    """Mean of ``a - b`` over the pairs, its bootstrap percentile interval, and a two-sided p-value
    (twice the share of resampled differences on the other side of 0, at most 1). With
    ``clusters``, whole clusters are resampled. ``key`` gives the comparison its own seeded stream.

    >>> d = paired_bootstrap([0.5, 1.0, 0.0, 1.0], [0.5, 0.0, 0.0, 1.0], seed=1, clusters=["x", "x", "y", "z"])
    >>> d.diff, d.n, d.clusters, 0 <= d.low <= d.diff <= d.high
    (0.25, 4, 3, True)
    >>> paired_bootstrap([None], [1], seed=0).diff is None
    True
    """
    xa, xb, cl, missing = _pairs(a, b, clusters)
    n_clusters = len(set(cl)) if cl is not None else None
    if not xa.size:
        return PairedDiff(None, None, None, None, 0, missing, n_clusters)
    d = xa - xb
    diff = float(d.mean())
    if not np.any(d):
        return PairedDiff(diff, 0.0, 0.0, 1.0, int(d.size), missing, n_clusters)
    means = _resampled_means(d, cl, _rng(seed, key), n_boot)
    tail = (1 - level) / 2
    low, high = np.quantile(means, [tail, 1 - tail])
    p = min(1.0, 2 * min(float(np.mean(means <= 0)), float(np.mean(means >= 0))))
    return PairedDiff(diff, float(low), float(high), p, int(d.size), missing, n_clusters)


def cluster_bootstrap_ci(values: Sequence[Any], clusters: Sequence[Any], seed: int, n_boot: int = 1000,
                         level: float = 0.95, key: str = "") -> tuple[float | None, float | None]:
    """Percentile interval of the mean of ``values``, resampling whole clusters (``None`` values left out).

    >>> low, high = cluster_bootstrap_ci([1, 1, 0, 0, 1, 0], ["a", "a", "b", "b", "c", "c"], seed=0)
    >>> 0.0 <= low <= 0.5 <= high <= 1.0
    True
    >>> cluster_bootstrap_ci([None], ["a"], seed=0)
    (None, None)
    """
    if _float_array(values):   # NaN is unmeasured
        kept = ~np.isnan(values)
        if not kept.any():
            return None, None
        x = values[kept]
        cl = clusters[kept] if isinstance(clusters, np.ndarray) else [clusters[i] for i in np.flatnonzero(kept)]
    else:
        keep = [i for i, v in enumerate(values) if v is not None and not (isinstance(v, float) and math.isnan(v))]
        if not keep:
            return None, None
        x = np.array([float(values[i]) for i in keep])
        cl = [clusters[i] for i in keep]
    means = _resampled_means(x, cl, _rng(seed, key), n_boot)
    tail = (1 - level) / 2
    low, high = np.quantile(means, [tail, 1 - tail])
    return float(low), float(high)


def holm(pvalues: Sequence[float | None]) -> list[float | None]:
    """Holm's step-down adjusted p-values of a family (``None`` stays ``None`` and is not counted).

    >>> holm([0.01, 0.02, 0.5])
    [0.03, 0.04, 0.5]
    """
    order = sorted((p, i) for i, p in enumerate(pvalues) if p is not None)
    m = len(order)
    out: list[float | None] = [None] * len(pvalues)
    running = 0.0
    for rank, (p, i) in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p))
        out[i] = round(running, 12)
    return out
