"""Linking a question's words to the diagram nodes it mentions.

A node is *mentioned* when every content word of one of its names appears in the question, in
order and next to each other once the question's function words are set aside. A node's names
are its label, its label without bracketed parts (``"Orders DB (primary)"`` -> ``"Orders DB"``)
and the last segment of its id with ``_``/``-``/camelCase split (``users_db`` -> ``users db``).

Two words match when (after folding case, ``ё`` -> ``е`` and light stemming, see
:mod:`retrievers.text`) they are equal; or both are Cyrillic, share a prefix of four or more
letters and differ only in an ending (Russian inflection: ``сервиса`` / ``сервис``); or both have
five or more letters, start alike and are one edit apart (two from nine letters: typos such as
``Paymnet``). Words with digits must match exactly; a word under five letters may carry one typo
only inside a name of several words whose other words match (``Auht Service``).

Where mentions overlap, the longest one wins (``"Orders API"`` over ``"API"``), then the one
matching more words exactly, then a label over an id; nodes that share the winning name (two
``DB`` nodes in different containers) are all linked. Only the question's
text and the graph's labels are read: never the question's answer or certificate.

>>> from benchmark.graph import build_graph
>>> g = build_graph({"nodes": [{"id": "api", "label": "API"}, {"id": "orders_api", "label": "Orders API"},
...                            {"id": "db", "label": "Orders DB"}], "edges": []})
>>> link_mentions("Does the Orders API write to the orders db?", g)
['orders_api', 'db']
"""
from __future__ import annotations

import re
import threading
import weakref
from dataclasses import dataclass

import networkx as nx
from rapidfuzz.distance import OSA

from retrievers.text import fold, label_of, raw_words, stem, stopwords_for

_CYRILLIC = re.compile(r"[\u0400-\u04ff]")
_BRACKETS = re.compile(r"\([^)]*\)|\[[^\]]*\]|\{[^}]*\}")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


@dataclass(frozen=True)
class _Word:
    raw: str
    stem: str
    pos: int  # index among all words of the text


def _tokens(text: str) -> list[_Word]:
    return [_Word(w, stem(w), i) for i, w in enumerate(raw_words(text))]


def words_match(a: str, b: str) -> bool:
    """Do two folded words name the same thing (equal stems, Russian ending, one typo)?

    >>> words_match("сервиса", "сервис"), words_match("paymnet", "payment"), words_match("used", "user")
    (True, True, False)
    """
    sa, sb = stem(a), stem(b)
    if sa == sb or a == b:
        return True
    if any(c.isdigit() for c in a + b):
        return False
    if _CYRILLIC.search(a) and _CYRILLIC.search(b):
        short, long_ = sorted((sa, sb), key=len)
        if len(short) >= 4 and long_.startswith(short) and len(long_) - len(short) <= 3:
            return True
    if min(len(a), len(b)) >= 5 and a[0] == b[0]:
        limit = 2 if min(len(a), len(b)) >= 9 else 1
        return OSA.distance(a, b) <= limit or OSA.distance(sa, sb) <= limit
    return False


def _short_typo(a: str, b: str) -> bool:
    return min(len(a), len(b)) >= 4 and not any(c.isdigit() for c in a + b) and OSA.distance(a, b) <= 1


def node_names(g: nx.MultiDiGraph, node: str, ranked: bool = False) -> list:
    """The names a question may use for ``node`` (label, label without brackets, id), deduplicated.

    >>> from benchmark.graph import build_graph
    >>> node_names(build_graph({"nodes": [{"id": "be.userStore", "label": "Users DB (primary)"}]}), "be.userStore")
    ['Users DB (primary)', 'Users DB', 'user Store']
    """
    label = label_of(g, node)
    tail = node.split(".")[-1]
    names = [label, " ".join(_BRACKETS.sub(" ", label).split()), " ".join(_CAMEL.sub(" ", tail).replace("_", " ").replace("-", " ").split())]
    out: list[tuple[int, str]] = []
    for rank, n in enumerate(names):
        if n and fold(n) not in {fold(o) for _, o in out}:
            out.append((rank, n))
    return out if ranked else [n for _, n in out]


@dataclass(frozen=True)
class _Mention:
    node: str
    start: int
    end: int  # last word position, inclusive
    size: int  # number of name words matched
    exact: int  # of which exactly equal stems
    rank: int  # which name matched: 0 label, 1 label without brackets, 2 id

    def span(self) -> tuple[int, int, int, int, int]:
        return (self.start, self.end, self.size, self.exact, self.rank)


class LabelIndex:
    """The names of every node of one graph, tokenised once; :meth:`link` finds mentions."""

    def __init__(self, g: nx.MultiDiGraph, language: str | None = "en") -> None:
        self.stopwords = stopwords_for(language)
        self.names: list[tuple[str, list[str], bool, int]] = []  # (node, words, content-only, rank)
        for node in sorted(g.nodes, key=str):
            for rank, name in node_names(g, str(node), ranked=True):
                toks = raw_words(name)
                content = [w for w in toks if w not in self.stopwords]
                if content:
                    self.names.append((str(node), content, True, rank))
                elif toks:
                    self.names.append((str(node), toks, False, rank))

    def _find(self, seq: list[_Word], name: list[str], node: str, rank: int) -> list[_Mention]:
        found = []
        n = len(name)
        for i in range(len(seq) - n + 1):
            window = seq[i:i + n]
            strict = [words_match(q.raw, w) for q, w in zip(window, name)]
            if not all(strict):
                # a name of several words tolerates one typo in a short word when the rest match
                misses = [(q.raw, w) for (q, w), ok in zip(zip(window, name), strict) if not ok]
                if n < 2 or len(misses) > 1 or not _short_typo(*misses[0]):
                    continue
            exact = sum(q.stem == stem(w) for q, w in zip(window, name))
            found.append(_Mention(node, window[0].pos, window[-1].pos, n, exact, rank))
        return found

    def link(self, text: str) -> list[str]:
        """Node ids mentioned in ``text``, in order of first mention (ties by id)."""
        every = _tokens(text)
        content = [w for w in every if w.raw not in self.stopwords]
        cands: list[_Mention] = []
        for node, name, content_only, rank in self.names:
            cands.extend(self._find(content if content_only else every, name, node, rank))
        cands.sort(key=lambda m: (-m.size, -m.exact, m.rank, m.start, m.node))
        taken: list[tuple[int, int, int, int, int]] = []  # spans already won
        chosen: dict[str, int] = {}
        for m in cands:
            clash = [t for t in taken if not (m.end < t[0] or m.start > t[1])]
            if clash and any(t != m.span() for t in clash):
                continue
            if not clash:
                taken.append(m.span())
            chosen.setdefault(m.node, m.start)
        return sorted(chosen, key=lambda n: (chosen[n], n))


_CACHE: "weakref.WeakKeyDictionary[nx.MultiDiGraph, dict]" = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def label_index(g: nx.MultiDiGraph, language: str | None = "en") -> LabelIndex:
    """The :class:`LabelIndex` of ``g`` for ``language``, built once per graph object."""
    key = (language, g.number_of_nodes(), tuple(sorted((str(n), str(d.get("label"))) for n, d in g.nodes(data=True))))
    with _LOCK:
        per_graph = _CACHE.setdefault(g, {})
        index = per_graph.get(key[0])
        if index is not None and index[0] == key:
            return index[1]
    built = LabelIndex(g, language)
    with _LOCK:
        _CACHE.setdefault(g, {})[key[0]] = (key, built)
    return built


def link_mentions(question_text: str, graph: nx.MultiDiGraph, language: str | None = "en") -> list[str]:
    """Node ids of ``graph`` mentioned in ``question_text`` (see the module docstring)."""
    return label_index(graph, language).link(question_text)
