"""A stratified, seeded sample of a run's answered samples for human review.

The ``n`` places are shared among the strata (values of one field, e.g. ``guess_class``) in
proportion to their sizes by largest remainder, every stratum getting at least one place when
``n`` allows; the samples of a stratum are drawn with :class:`random.Random` seeded from ``seed``,
and the chosen samples are shuffled (seeded) so that a reviewer cannot read a stratum off the order.
"""
from __future__ import annotations

import random
from collections import defaultdict
from typing import Any, Sequence

from benchmark.errors import DiagQAError


def field_value(rec: dict[str, Any], field: str) -> str:
    """The stratum of a record: ``field`` among its metrics, else at its top level; ``"none"`` when absent.

    >>> field_value({"metrics": {"guess_class": "grounded"}, "answerer": "solver"}, "guess_class")
    'grounded'
    >>> field_value({"metrics": {}, "answerer": "solver"}, "answerer"), field_value({}, "x")
    ('solver', 'none')
    """
    m = rec.get("metrics") or {}
    value = m.get(field) if field in m else rec.get(field)
    return "none" if value is None else str(value)


def allocate(sizes: dict[str, int], n: int) -> dict[str, int]:
    """Places per stratum: proportional to its size (largest remainder), at least one each when ``n`` allows.

    >>> allocate({"a": 80, "b": 15, "c": 5}, 10)
    {'a': 7, 'b': 2, 'c': 1}
    >>> allocate({"a": 3, "b": 1}, 10)
    {'a': 3, 'b': 1}
    >>> sum(allocate({"a": 50, "b": 30, "c": 20, "d": 1}, 7).values())
    7
    """
    total = sum(sizes.values())
    n = min(n, total)
    keys = sorted(k for k, v in sizes.items() if v > 0)
    if n <= 0 or not keys:
        return {k: 0 for k in sorted(sizes)}
    out = {k: 0 for k in keys}
    if n >= len(keys):
        for k in keys:
            out[k] = 1
    rest = n - sum(out.values())
    cap = {k: sizes[k] - out[k] for k in keys}
    while rest > 0:
        room = {k: cap[k] for k in keys if cap[k] > 0}
        weight = sum(room.values())
        quotas = {k: rest * room[k] / weight for k in room}
        given = {k: min(cap[k], int(quotas[k])) for k in room}
        if sum(given.values()) == 0:   # every quota below one: the largest remainders get one each
            for k in sorted(room, key=lambda k: (-quotas[k], k))[:rest]:
                given[k] = 1
        for k, g in given.items():
            out[k] += g
            cap[k] -= g
        rest -= sum(given.values())
    return {k: out.get(k, 0) for k in sorted(sizes)}


def stratified_sample(records: Sequence[dict[str, Any]], n: int, field: str, seed: int = 0) -> list[dict[str, Any]]:
    """``n`` answered records (those with an answer), stratified by ``field``, seeded, shuffled."""
    if n < 1:
        raise DiagQAError(f"--n must be at least 1, got {n}")
    strata: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in records:
        if r.get("answer") is not None:
            strata[field_value(r, field)].append(r)
    if not strata:
        raise DiagQAError("the run has no answered sample to review")
    places = allocate({k: len(v) for k, v in strata.items()}, n)
    rng = random.Random(f"review:{seed}:{field}")
    chosen: list[dict[str, Any]] = []
    for k in sorted(strata):
        pool = sorted(strata[k], key=lambda r: str(r.get("sample_id")))
        chosen += rng.sample(pool, places[k])
    rng.shuffle(chosen)
    return chosen
