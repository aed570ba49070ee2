"""Aggregation helpers: means and seeded bootstrap confidence intervals that skip and count ``None``.

Unmeasured values are never averaged as NaN nor silently dropped: every helper reports how
many it left out.

>>> m = mean([1, 0, None, True])
>>> round(m.value, 3), m.n, m.missing
(0.667, 3, 1)
>>> ci = bootstrap_ci([1, 1, 0, 1, None], seed=0)
>>> low, high = ci
>>> 0.0 <= low <= 0.75 <= high <= 1.0, ci.n, ci.missing
(True, 4, 1)
>>> bootstrap_ci([None], seed=0) == (None, None)
True
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Iterable


@dataclass(frozen=True)
class Mean:
    """Mean of the measured values (``None`` when there are none), how many, how many were ``None``."""

    value: float | None
    n: int
    missing: int


class CI(tuple):
    """``(low, high)`` of a bootstrap interval, with ``n`` values used and ``missing`` (``None``) left out."""

    n: int
    missing: int
    level: float

    def __new__(cls, low: float | None, high: float | None, n: int, missing: int, level: float = 0.95) -> "CI":
        self = super().__new__(cls, (low, high))
        self.n, self.missing, self.level = n, missing, level
        return self

    @property
    def low(self) -> float | None:
        return self[0]

    @property
    def high(self) -> float | None:
        return self[1]


def _split(values: Iterable[float | bool | None]) -> tuple[list[float], int]:
    kept, missing = [], 0
    for v in values:
        if v is None:
            missing += 1
        else:
            kept.append(float(v))
    return kept, missing


def mean(values: Iterable[float | bool | None]) -> Mean:
    """Mean over the values that are not ``None``."""
    kept, missing = _split(values)
    return Mean(sum(kept) / len(kept) if kept else None, len(kept), missing)


def _quantile(sorted_values: list[float], q: float) -> float:
    """Linear-interpolated quantile of already sorted values.

    >>> _quantile([0.0, 1.0, 2.0, 3.0], 0.5)
    1.5
    """
    pos = q * (len(sorted_values) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def bootstrap_ci(values: Iterable[float | bool | None], seed: int, n: int = 1000, level: float = 0.95) -> CI:
    """Percentile bootstrap interval of the mean, ``n`` resamples drawn with ``random.Random(seed)``.

    ``None`` values are left out and counted (``CI.missing``); with nothing measured the
    interval is ``(None, None)``.
    """
    kept, missing = _split(values)
    if not kept:
        return CI(None, None, 0, missing, level)
    rng = random.Random(seed)
    k = len(kept)
    means = sorted(sum(kept[rng.randrange(k)] for _ in range(k)) / k for _ in range(n))
    tail = (1 - level) / 2
    return CI(_quantile(means, tail), _quantile(means, 1 - tail), k, missing, level)
