"""A stratified sample of questions: the same share of every question type, chosen by seed; a
question whose twin (the same question on the twin diagram) is in the pool brings it along, so
twin consistency is measured on the sample.

>>> from collections import Counter
>>> from benchmark.questions import Question
>>> qs = [Question(f"q{i}", "d", "?", t, (), None, None) for i, t in enumerate(["reachable"] * 60 + ["path"] * 30 + ["edge_label"] * 10)]
>>> s = stratified(qs, 20, seed=0)
>>> sorted(Counter(q.type for q in s).items())
[('edge_label', 2), ('path', 6), ('reachable', 12)]
>>> [q.id for q in s] == [q.id for q in qs if q in s]      # dataset order is kept
True
>>> stratified(qs, 20, seed=0) == s and stratified(qs, 20, seed=1) != s
True
>>> twins = [Question("a1", "d_a", "?", "reachable", (), None, None, extra=(("twin_question", "b1"),)),
...          Question("b1", "d_b", "?", "reachable", (), None, None, extra=(("twin_question", "a1"),))]
>>> [q.id for q in stratified(twins + qs[:3], 1, seed=0)]       # one picked; its twin comes along
['a1', 'b1']
"""
from __future__ import annotations

import hashlib
from typing import Sequence

from benchmark.questions import Question


def _rank(seed: int, qid: str) -> str:
    return hashlib.sha256(f"{seed}:{qid}".encode()).hexdigest()


def _twin(q: Question) -> str | None:
    return dict(q.extra or ()).get("twin_question")


def stratified(questions: Sequence[Question], size: int, seed: int = 0) -> list[Question]:
    """``size`` questions (all when there are fewer), each type given its share of ``size``
    (largest remainders; every type at least one while the size allows), the questions of a type
    picked by a hash of ``seed`` and their id; then the twin of every picked question that is in
    ``questions`` (so the result may hold up to twice ``size``); returned in the order of ``questions``.
    A smaller sample with the same seed is part of a larger one."""
    if size >= len(questions):
        return list(questions)
    by_type: dict[str, list[Question]] = {}
    for q in questions:
        by_type.setdefault(q.type, []).append(q)
    total = len(questions)
    exact = {t: size * len(qs) / total for t, qs in by_type.items()}
    take = {t: min(len(by_type[t]), max(1, int(x))) for t, x in exact.items()}
    while sum(take.values()) > size:  # more types than places: drop from the largest
        t = max(take, key=lambda k: (take[k], k))
        take[t] -= 1
    for t in sorted(exact, key=lambda k: (-(exact[k] - int(exact[k])), k)):
        if sum(take.values()) >= size:
            break
        if take[t] < len(by_type[t]):
            take[t] += 1
    chosen = {q.id for t, qs in by_type.items() for q in sorted(qs, key=lambda q: _rank(seed, q.id))[:take[t]]}
    pool = {q.id for q in questions}
    chosen |= {_twin(q) for q in questions if q.id in chosen and _twin(q) in pool}
    return [q for q in questions if q.id in chosen]
