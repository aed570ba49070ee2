"""Agreement between two labellings of the same samples: Cohen's kappa with a seeded bootstrap interval.

* **observed agreement** p_o: share of samples given the same label by both.
* **chance agreement** p_e: sum over labels of the product of the two labellings' label shares.
* **Cohen's kappa** = (p_o − p_e) / (1 − p_e); undefined (None) when p_e = 1 (both give one and the
  same label to every sample: agreement cannot be told from chance).
* **interval**: 95 % percentile bootstrap over samples (resampled with replacement, seeded); resamples
  where kappa is undefined are left out, and counted.

Only pairs where both labels are known (not None) are compared.
"""
from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass
from typing import Any, Hashable, Sequence


def cohen_kappa(a: Sequence[Hashable], b: Sequence[Hashable]) -> float | None:
    """Cohen's kappa of two equal-length labellings; None when undefined (p_e = 1 or no samples).

    >>> cohen_kappa([1, 1, 0, 0], [1, 1, 0, 0])
    1.0
    >>> cohen_kappa([1, 0, 1, 0], [0, 1, 0, 1])
    -1.0
    >>> round(cohen_kappa([1, 1, 1, 0, 0, 0], [1, 1, 0, 0, 0, 1]), 4)
    0.3333
    >>> cohen_kappa([1, 1], [1, 1]) is None, cohen_kappa([], []) is None
    (True, True)
    """
    if len(a) != len(b):
        raise ValueError(f"labellings differ in length: {len(a)} and {len(b)}")
    n = len(a)
    if n == 0:
        return None
    p_o = sum(x == y for x, y in zip(a, b)) / n
    ca, cb = Counter(a), Counter(b)
    p_e = sum(ca[k] * cb[k] for k in ca) / (n * n)
    if p_e >= 1.0:
        return None
    return (p_o - p_e) / (1.0 - p_e)


def _quantile(xs: list[float], q: float) -> float:
    pos = q * (len(xs) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


@dataclass(frozen=True)
class Agreement:
    """Kappa of two labellings with its interval; ``undefined`` resamples were left out of the interval."""

    n: int
    observed: float | None
    kappa: float | None
    low: float | None
    high: float | None
    undefined: int
    confusion: dict[tuple[Any, Any], int]


def agreement(a: Sequence[Any], b: Sequence[Any], *, seed: int = 0, resamples: int = 1000,
              level: float = 0.95) -> Agreement:
    """Kappa of the pairs where both labels are known, with a seeded percentile bootstrap interval.

    >>> r = agreement([True, True, False, None, False], [True, False, False, True, False], seed=0)
    >>> r.n, r.observed, round(r.kappa, 4), r.confusion[(True, False)]
    (4, 0.75, 0.5, 1)
    >>> r.low <= r.kappa <= r.high
    True
    >>> agreement([True, False] * 10, [True, False] * 10, seed=1) == agreement([True, False] * 10, [True, False] * 10, seed=1)
    True
    """
    pairs = [(x, y) for x, y in zip(a, b) if x is not None and y is not None]
    n = len(pairs)
    if n == 0:
        return Agreement(0, None, None, None, None, 0, {})
    xs, ys = [p[0] for p in pairs], [p[1] for p in pairs]
    kappa = cohen_kappa(xs, ys)
    rng = random.Random(seed)
    stats: list[float] = []
    undefined = 0
    for _ in range(resamples):
        idx = [rng.randrange(n) for _ in range(n)]
        k = cohen_kappa([xs[i] for i in idx], [ys[i] for i in idx])
        if k is None:
            undefined += 1
        else:
            stats.append(k)
    stats.sort()
    alpha = (1.0 - level) / 2
    low = _quantile(stats, alpha) if stats else None
    high = _quantile(stats, 1 - alpha) if stats else None
    return Agreement(n, sum(x == y for x, y in pairs) / n, kappa, low, high, undefined, dict(Counter(pairs)))
