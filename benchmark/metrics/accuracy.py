"""Answer accuracy: normalising a raw answer to its canonical form per answer kind, then comparing.

Kinds are those of :mod:`benchmark.questions`. Yes/no is read in English and Russian, node
answers are matched to ids through labels (one best match), sets compared as sets, integers
read from digits or number words, labels compared case- and space-insensitively, and paths
matched through labels where any shortest path of the diagram counts
(:func:`benchmark.solver.answers_match`).

>>> from benchmark.graph import build_graph
>>> g = build_graph({"nodes": [{"id": "u", "label": "User"}, {"id": "db", "label": "Orders DB"}]})
>>> [normalise_answer("bool", r, g, "en") for r in ("Yes.", "yes, via the cache", "Да", "нет", "maybe")]
[True, True, True, False, None]
>>> normalise_answer("int", "three", g, "en"), normalise_answer("int", "три", g, "ru"), normalise_answer("int", "2 nodes", g, "en")
(3, 3, 2)
>>> sorted(normalise_answer("nodes", "User and orders db", g, "en"))
['db', 'u']
>>> normalise_answer("path", "User -> Orders DB", g, "en")
('u', 'db')
"""
from __future__ import annotations

import re
from typing import Any

import networkx as nx

from benchmark.metrics.names import find_labels, match_node, norm
from benchmark.questions import ABSTAIN, Question
from benchmark.solver import answers_match

YES = {"yes", "y", "true", "correct", "yeah", "yep", "да", "верно", "истина", "конечно"}
NO = {"no", "n", "false", "incorrect", "nope", "нет", "неверно", "ложь", "никак"}

NUMBER_WORDS = {
    "zero": 0, "none": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
    "ноль": 0, "один": 1, "одна": 1, "одно": 1, "два": 2, "две": 2, "три": 3, "четыре": 4, "пять": 5,
    "шесть": 6, "семь": 7, "восемь": 8, "девять": 9, "десять": 10, "одиннадцать": 11, "двенадцать": 12,
}
#: replies that abstain in so many words (besides what :func:`says_cannot_tell` reads)
ABSTAIN_WORDS = {"abstain", "cannot tell", "can't tell", "unknown", "not shown", "n/a", "не могу сказать", "неизвестно"}
EMPTY_SET = {"", "none", "nothing", "no nodes", "empty", "нет", "ничего", "никаких"}

_WORD = re.compile(r"[\w-]+", re.UNICODE)
_LIST_SPLIT = re.compile(r"\s*(?:,|;|\n|\band\b|\bи\b)\s*", re.IGNORECASE)
_PATH_SPLIT = re.compile(r"\s*(?:->|→|=>|⇒|-->|,|;|\n)\s*")


def _words(text: str) -> list[str]:
    return [w.casefold() for w in _WORD.findall(text)]


def _bool(raw: Any) -> tuple[bool | None, str | None]:
    if isinstance(raw, bool):
        return raw, None
    words = _words(str(raw))
    if not words:
        return None, "empty answer"
    if words[0] in YES or words[0] in NO:
        return words[0] in YES, None
    found = {w in YES for w in words if w in YES or w in NO}
    if len(found) == 1:
        return found.pop(), None
    return None, f"no yes/no in {str(raw)[:60]!r}"


def _int(raw: Any) -> tuple[int | None, str | None]:
    if isinstance(raw, bool):
        return None, "a yes/no is not a count"
    if isinstance(raw, int):
        return raw, None
    if isinstance(raw, float) and raw.is_integer():
        return int(raw), None
    for w in _words(str(raw)):
        if w.isdigit():
            return int(w), None
        if w in NUMBER_WORDS:
            return NUMBER_WORDS[w], None
    return None, f"no number in {str(raw)[:60]!r}"


def _node(raw: Any, g: nx.MultiDiGraph) -> tuple[str | None, str | None]:
    if isinstance(raw, (list, tuple)) and len(raw) == 1:
        raw = raw[0]
    if not isinstance(raw, (str, int)) or isinstance(raw, bool):
        return None, f"expected one node, got {raw!r}"
    hit = match_node(str(raw), g)
    if hit is not None:
        return hit, None
    mentioned = sorted({n for _, _, n in find_labels(str(raw), g)})
    if len(mentioned) == 1:
        return mentioned[0], None
    if mentioned:
        return None, f"answer names several nodes: {', '.join(mentioned)}"
    return None, f"{str(raw)[:60]!r} names no node of the diagram"


def _items(raw: Any, splitter: re.Pattern[str]) -> list[str]:
    if isinstance(raw, (list, tuple, set, frozenset)):
        items = [str(x) for x in (sorted(raw, key=str) if isinstance(raw, (set, frozenset)) else raw)]
    else:
        items = splitter.split(str(raw))
    return [x for x in (i.strip() for i in items) if x]


_SEPARATORS = re.compile(r"(?:\s|,|;|\.|->|→|=>|⇒|-->|\band\b|\bи\b|\bthen\b|\bзатем\b)*", re.IGNORECASE)


def _labels_only(text: str, g: nx.MultiDiGraph) -> list[str] | None:
    """The nodes a text lists when it is nothing but labels and separators ("Build and test, Deploy"),
    so that a label holding "and" or a comma is not split; ``None`` otherwise."""
    found = find_labels(text, g)
    rest = "".join(text[e:s] for (_, e, _), (s, _, _) in zip([(0, 0, "")] + found, found + [(len(text), 0, "")]))
    return [n for _, _, n in found] if found and _SEPARATORS.fullmatch(rest) else None


def _match_all(items: list[str], g: nx.MultiDiGraph) -> list[str]:
    """Each item's node id, or the item's own text when it names no node (so it cannot match)."""
    return [match_node(i, g) or i for i in items]


def normalise_with_reason(kind: str, raw: Any, graph: nx.MultiDiGraph, language: str = "en") -> tuple[Any, str | None]:
    """(canonical value or None, why None). See :func:`normalise_answer`."""
    if raw is None:
        return None, "no answer"
    if kind == "abstain":  # an absent-entity question: only an abstention is its answer
        from benchmark.metrics.abstention import says_cannot_tell

        text = raw[0] if isinstance(raw, (list, tuple)) and len(raw) == 1 else raw
        if isinstance(text, str) and (says_cannot_tell(text) or norm(text) in ABSTAIN_WORDS):
            return ABSTAIN, None
        return (norm(str(text)) or None), None if str(text).strip() else "empty answer"
    if kind == "bool":
        return _bool(raw)
    if kind == "int":
        return _int(raw)
    if kind == "node":
        return _node(raw, graph)
    if kind == "label":
        if isinstance(raw, (list, tuple)) and len(raw) == 1:
            raw = raw[0]
        return (norm(raw), None) if isinstance(raw, (str, int)) and not isinstance(raw, bool) else (None, f"expected a label, got {raw!r}")
    if kind == "nodes":
        if isinstance(raw, str) and norm(raw) in EMPTY_SET:
            return frozenset(), None
        listed = _labels_only(raw, graph) if isinstance(raw, str) else None
        return frozenset(listed if listed is not None else _match_all(_items(raw, _LIST_SPLIT), graph)), None
    if kind == "path":
        listed = _labels_only(raw, graph) if isinstance(raw, str) else None
        items = listed if listed is not None else _match_all(_items(raw, _PATH_SPLIT), graph)
        return (tuple(items), None) if items else (None, "empty path")
    raise ValueError(f"unknown answer kind {kind!r}")


def normalise_answer(kind: str, raw: Any, graph: nx.MultiDiGraph, language: str = "en") -> Any:
    """Canonical value of ``raw`` for answer ``kind`` over ``graph``, or ``None`` when it cannot be read.

    ``language`` names the question's language; yes/no and number words of both English and
    Russian are read whatever it is.
    """
    return normalise_with_reason(kind, raw, graph, language)[0]


def is_correct(question: Question, answer_value: Any, diagram_graph: nx.MultiDiGraph) -> bool:
    """Does the raw answer ``answer_value`` equal the question's gold answer after normalisation?

    >>> from benchmark.graph import build_graph, Subgraph
    >>> g = build_graph({"nodes": [{"id": n} for n in "abc"],
    ...                  "edges": [{"src": "a", "dst": "b"}, {"src": "b", "dst": "c"}]})
    >>> q = Question("q1", "d", "Can a reach c?", "reachable", (("source", "a"), ("target", "c")), True, Subgraph())
    >>> is_correct(q, "Yes, through b.", g), is_correct(q, "no", g), is_correct(q, None, g)
    (True, False, False)
    """
    value = normalise_answer(question.kind, answer_value, diagram_graph, question.language)
    return answers_match(question.type, question.arg, value, question.answer, diagram_graph)
