"""Matching node texts (as an answerer wrote them) to node ids of a graph, through labels.

Case, spacing and quotes are ignored; a text that equals no id and no label is matched to the
one label closest to it (rapidfuzz) when it is close enough, else to nothing.

>>> from benchmark.graph import build_graph
>>> g = build_graph({"nodes": [{"id": "auth", "label": "Auth Service"}, {"id": "db", "label": "Orders DB"}]})
>>> match_node("auth service", g), match_node("db", g), match_node("Auth  Servce", g)
('auth', 'db', 'auth')
>>> match_node("Firewall", g) is None
True
"""
from __future__ import annotations

import re
import threading
import weakref
from collections.abc import Callable

import networkx as nx
from rapidfuzz import fuzz, process

#: smallest rapidfuzz ratio (0-100) for a fuzzy match of a node text to a label
FUZZY_CUTOFF = 80.0

_QUOTES = "\"'`«»“”‘’*_"


def norm(text: str) -> str:
    """Case-, space- and quote-insensitive form of a node text.

    >>> norm("  «Auth   Service» ")
    'auth service'
    """
    text = str(text).strip().strip(_QUOTES + ".,;:!?")
    return " ".join(text.split()).casefold()


_INDEXES: "weakref.WeakKeyDictionary[nx.MultiDiGraph, _Index]" = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


class _Index:
    """The label indexes of one graph, valid while its (node, label) pairs stay as they were."""

    __slots__ = ("signature", "labels", "ids", "keys", "_patterns", "matches")

    def __init__(self, signature: list[tuple[str, object]], labels: dict[str, list[str]], ids: dict[str, str]) -> None:
        self.signature, self.labels, self.ids = signature, labels, ids
        self.keys = list(labels)
        self._patterns: list[tuple[str, str, re.Pattern[str]]] | None = None
        self.matches: dict[tuple[str, float], tuple[str, ...]] = {}  # match_nodes results by text and cutoff

    @property
    def patterns(self) -> list[tuple[str, str, "re.Pattern[str]"]]:
        """(label, first id, whole-word pattern) of every non-empty label, longest label first."""
        if self._patterns is None:
            self._patterns = [(label, ids[0], re.compile(r"(?<!\w)" + re.escape(label) + r"(?!\w)"))
                              for label, ids in sorted(self.labels.items(), key=lambda kv: (-len(kv[0]), kv[0]))
                              if label]
        return self._patterns


def _signature(g: nx.MultiDiGraph) -> list[tuple[str, object]]:
    return [(n, d.get("label")) for n, d in g._node.items()]  # the order of g.nodes(data=True)


def _index(g: nx.MultiDiGraph) -> _Index:
    """The label indexes of ``g``, built once per graph and labels."""
    signature = _signature(g)
    with _LOCK:
        cached = _INDEXES.get(g)
    if cached is not None and cached.signature == signature:
        return cached
    labels: dict[str, list[str]] = {}
    for n in sorted(g.nodes):
        labels.setdefault(norm(g.nodes[n].get("label") or n), []).append(n)
    ids = {norm(n): n for n in sorted(g.nodes, reverse=True)}
    built = _Index(signature, labels, ids)
    with _LOCK:
        _INDEXES[g] = built
    return built


def _indexes(g: nx.MultiDiGraph) -> tuple[dict[str, list[str]], dict[str, str]]:
    """(normalised label -> ids, normalised id -> id) of ``g``, built once per graph and labels."""
    idx = _index(g)
    return idx.labels, idx.ids


def label_index(g: nx.MultiDiGraph) -> dict[str, list[str]]:
    """Normalised label -> node ids carrying it (sorted)."""
    return _index(g).labels


def match_nodes(text: str, g: nx.MultiDiGraph, cutoff: float = FUZZY_CUTOFF) -> list[str]:
    """Every node id that ``text`` may name: the id itself; else all nodes carrying that label
    (case/space-insensitive); else all nodes carrying the single best fuzzy label match scoring at
    least ``cutoff``; ``[]`` when nothing fits.

    >>> from benchmark.graph import build_graph
    >>> match_nodes("orders db", build_graph({"nodes": [{"id": "a.db", "label": "Orders DB"}, {"id": "db", "label": "Orders DB"}]}))
    ['a.db', 'db']

    A trailing ``[edge label]`` copied from a context line is not part of the name (unless a label
    has it):

    >>> g = build_graph({"nodes": [{"id": "db", "label": "Orders DB"}, {"id": "q", "label": "Queue [dlq]"}]})
    >>> match_nodes("Orders DB [write order]", g), match_nodes("Queue [dlq]", g)
    (['db'], ['q'])
    """
    return list(_matched(text, g, _index(g), cutoff))


def node_matcher(g: nx.MultiDiGraph, cutoff: float = FUZZY_CUTOFF) -> Callable[[str], tuple[str, ...]]:
    """:func:`match_nodes` on ``g`` for many texts, as a tuple: the graph's labels are looked up
    once, so ``g`` must not change while the matcher is used.

    >>> from benchmark.graph import build_graph
    >>> m = node_matcher(build_graph({"nodes": [{"id": "auth", "label": "Auth Service"}]}))
    >>> m("auth service"), m("Auth  Servce"), m("Firewall")
    (('auth',), ('auth',), ())
    """
    idx: _Index | None = None

    def match(text: str) -> tuple[str, ...]:
        nonlocal idx
        if idx is None:  # looked up at the first text (a matcher may go unused)
            idx = _index(g)
        return _matched(text, g, idx, cutoff)

    return match


def _matched(text: str, g: nx.MultiDiGraph, idx: _Index, cutoff: float) -> tuple[str, ...]:
    """:func:`match_nodes` with the index of ``g`` given; results are kept in the index."""
    key = (text, cutoff)
    found = idx.matches.get(key)
    if found is None:
        found = idx.matches[key] = tuple(_match(text, g, idx, cutoff))
    return found


#: a trailing ``[edge label]``, as a context line "Source -> Target [label]" writes it after a node
_LABEL_SUFFIX = re.compile(r"\s*\[[^\]]*\]\s*$")


def _match(text: str, g: nx.MultiDiGraph, idx: _Index, cutoff: float) -> list[str]:
    raw = str(text).strip().strip(_QUOTES)
    if raw in g:
        return [raw]
    key = norm(text)
    if not key:
        return []
    index, ids = idx.labels, idx.ids
    if key in ids:
        return [ids[key]]
    if key in index:
        return list(index[key])
    bare = _LABEL_SUFFIX.sub("", raw)
    if bare != raw and norm(bare):  # a node name with the edge label copied from the context after it
        return _match(bare, g, idx, cutoff)
    best = process.extractOne(key, idx.keys, scorer=fuzz.ratio, score_cutoff=cutoff)
    return list(index[best[0]]) if best else []


def match_node(text: str, g: nx.MultiDiGraph, cutoff: float = FUZZY_CUTOFF) -> str | None:
    """The node id that ``text`` names (see :func:`match_nodes`); where several nodes share the
    label the first id in sorted order is taken; ``None`` when nothing fits."""
    found = match_nodes(text, g, cutoff)
    return found[0] if found else None


def find_labels(text: str, g: nx.MultiDiGraph) -> list[tuple[int, int, str]]:
    """Non-overlapping mentions of node labels in ``text``: (start, end, node id), longest label first.

    >>> from benchmark.graph import build_graph
    >>> g = build_graph({"nodes": [{"id": "a", "label": "Auth"}, {"id": "s", "label": "Auth Service"}]})
    >>> find_labels("User calls the Auth Service", g)
    [(15, 27, 's')]
    """
    low = text.casefold()
    taken: list[tuple[int, int, str]] = []
    for label, first, pattern in _index(g).patterns:
        if label not in low:  # no match without the label's text
            continue
        for m in pattern.finditer(low):
            if all(m.end() <= s or m.start() >= e for s, e, _ in taken):
                taken.append((m.start(), m.end(), first))
    return sorted(taken)
