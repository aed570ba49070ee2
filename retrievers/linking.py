"""Linking a question's words to the diagram nodes it mentions.

A node is *mentioned* when every content word of one of its names appears in the question, in
order and next to each other once the question's function words are set aside. A node's names
are its label, its label without bracketed parts (``"Orders DB (primary)"`` -> ``"Orders DB"``)
and, matched word for word only, the last segment of its id with ``_``/``-``/camelCase split
(``users_db`` -> ``users db``).

Two words match when (after folding case, ``ё`` -> ``е`` and light stemming, see
:mod:`retrievers.text`) they are equal; or both are Cyrillic, share a prefix of four or more
letters and differ only in an ending (Russian inflection: ``сервиса`` / ``сервис``); or both have
five or more letters, start alike and are one edit apart (two from nine letters: typos such as
``Paymnet``). Words with digits must match exactly; a word under five letters may carry one typo
only inside a name of several words whose other words match (``Auht Service``).

A name of two to four words also matches with its words in another order, when nothing else
stands between them but function words (``"Isolate host"`` in "once a host is isolated").

Where mentions overlap, the longest one wins (``"Orders API"`` over ``"API"``), then the one
matching more words as written, then one in the name's own order, then a label over an id;
nodes that share the winning name (two ``DB`` nodes in different containers) are all linked.
Only the question's text and the graph's labels and ids are read: never the question's answer
or certificate. The question's ``language`` picks the function words to skip
(:func:`retrievers.text.stopwords_for`); each word is stemmed by its own script, so mixed labels
(``"Шлюз API"``) link in either language.

>>> from benchmark.graph import build_graph
>>> g = build_graph({"nodes": [{"id": "api", "label": "API"}, {"id": "orders_api", "label": "Orders API"},
...                            {"id": "db", "label": "Orders DB"}], "edges": []})
>>> link_mentions("Does the Orders API write to the orders db?", g)
['orders_api', 'db']
"""
from __future__ import annotations

import functools
import re
import threading
import weakref
from dataclasses import dataclass
from itertools import permutations

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


@functools.lru_cache(maxsize=262144)
def words_match(a: str, b: str) -> bool:
    """Do two folded words name the same thing (equal stems, Russian ending, one typo)?

    Words that match always start with the same letter (a stem keeps its word's first letter), which
    :class:`LabelIndex` relies on to compare a word only with the names' words that start like it.

    >>> words_match("сервиса", "сервис"), words_match("paymnet", "payment"), words_match("used", "user")
    (True, True, False)
    >>> words_match("closing", "closed"), words_match("checking", "check")
    (False, True)
    """
    if a == b:
        return True
    sa, sb = stem(a), stem(b)
    if sa == sb:
        # one stem, two different steps: "closing" is not "closed"
        return not (a.endswith("ing") and b.endswith("ed") or a.endswith("ed") and b.endswith("ing"))
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


def _reordered(window: list[_Word], name: tuple[str, ...]) -> list[str] | None:
    """``name``'s words in the order they appear in ``window``, else None (every word of ``window``
    matches some word of ``name``: the caller checks)."""
    for perm in permutations(name):
        if all(words_match(q.raw, w) for q, w in zip(window, perm)):
            return list(perm)
    return None


def _short_typo(a: str, b: str) -> bool:
    return min(len(a), len(b)) >= 4 and not any(c.isdigit() for c in a + b) and OSA.distance(a, b) <= 1


def node_names(g: nx.MultiDiGraph, node: str, ranked: bool = False) -> list:
    """The names a question may use for ``node`` (label, label without brackets, id), deduplicated.

    The id (its last segment, split into words) is matched only word for word, since it is the
    script's name and not what the reader sees.

    >>> from benchmark.graph import build_graph
    >>> g = build_graph({"nodes": [{"id": "be.userStore", "label": "Users DB (primary)"}, {"id": "check", "label": "OK?"}]})
    >>> node_names(g, "be.userStore"), node_names(g, "check")
    (['Users DB (primary)', 'Users DB', 'user Store'], ['OK?', 'check'])
    """
    out = _ranked_names(node, label_of(g, node))
    return out if ranked else [n for _, n in out]


def _ranked_names(node: str, label: str) -> list[tuple[int, str]]:
    tail = node.split(".")[-1]
    id_name = " ".join(_CAMEL.sub(" ", tail).replace("_", " ").replace("-", " ").split())
    names = [label, " ".join(_BRACKETS.sub(" ", label).split()), id_name]
    out: list[tuple[int, str]] = []
    for rank, n in enumerate(names):
        if n and fold(n) not in {fold(o) for _, o in out}:
            out.append((rank, n))
    return out


@dataclass(frozen=True)
class _Mention:
    node: str
    start: int
    end: int  # last word position, inclusive
    size: int  # number of name words matched
    exact: int  # 2 per word written the same, 1 per word with the same stem
    rank: int  # which name matched: 0 label, 1 label without brackets, 2 id
    shuffled: bool = False  # the name's words appear in another order

    def span(self) -> tuple:
        return (self.start, self.end, self.size, self.exact, self.shuffled, self.rank)


class LabelIndex:
    """The names of every node of one graph, tokenised once; :meth:`link` finds mentions."""

    def __init__(self, g: nx.MultiDiGraph, language: str | None = "en") -> None:
        self.stopwords = stopwords_for(language)
        self.names: list[tuple[str, tuple[str, ...], bool, int]] = []  # (node, words, content-only, rank)
        for node in sorted(g.nodes, key=str):
            self.names.extend(_name_words(str(node), label_of(g, str(node)), self.stopwords))
        # the names' words by their first letter: words that match always share it (see words_match)
        self.vocabulary: dict[str, list[str]] = {}
        for w in sorted({w for _, name, _, _ in self.names for w in name}):
            self.vocabulary.setdefault(w[0], []).append(w)
        self._linked: dict[str, list[str]] = {}

    def _find(self, seq: list[_Word], matched: list[frozenset[str]], name: tuple[str, ...], node: str,
              rank: int) -> list[_Mention]:
        found: list[_Mention] = []
        n = len(name)
        # every way a window can match (all words in order, all but one short typo, all in another
        # order) matches at least max(1, n - 1) of its words to a word of the name: windows with
        # fewer such words are not looked at (most windows of most names)
        hit = [not m.isdisjoint(name) for m in matched]
        need = max(1, n - 1)
        if sum(hit) < need:
            return found
        for i in range(len(seq) - n + 1):
            if sum(hit[i:i + n]) < need:
                continue
            window = seq[i:i + n]
            if rank == 2:  # an id is matched word for word
                if all(q.raw == w for q, w in zip(window, name)):
                    found.append(_Mention(node, window[0].pos, window[-1].pos, n, 2 * n, rank))
                continue
            strict = [words_match(q.raw, w) for q, w in zip(window, name)]
            shuffled = False
            if not all(strict):
                # a name of several words tolerates one typo in a short word when the rest match
                misses = [(q.raw, w) for (q, w), ok in zip(zip(window, name), strict) if not ok]
                order = _reordered(window, name) if 2 <= n <= 4 and all(hit[i:i + n]) else None
                if order is not None:
                    name_here, shuffled = order, True
                elif n < 2 or len(misses) > 1 or not _short_typo(*misses[0]):
                    continue
                else:
                    name_here = name
            else:
                name_here = name
            exact = sum(2 if q.raw == w else q.stem == stem(w) for q, w in zip(window, name_here))
            found.append(_Mention(node, window[0].pos, window[-1].pos, n, exact, rank, shuffled))
        return found

    def link(self, text: str) -> list[str]:
        """Node ids mentioned in ``text``, in order of first mention (ties by id)."""
        linked = self._linked.get(text)
        if linked is None:
            if len(self._linked) >= 1024:   # a graph asked about many texts keeps only the latest
                self._linked.clear()
            linked = self._linked[text] = self._link(text)
        return list(linked)

    def _link(self, text: str) -> list[str]:
        every = _tokens(text)
        content = [w for w in every if w.raw not in self.stopwords]
        # the names' words each of the text's words matches, worked out once per distinct word
        matches = {q.raw: frozenset(w for w in self.vocabulary.get(q.raw[0], ()) if words_match(q.raw, w))
                   for q in every}
        every_matched = [matches[q.raw] for q in every]
        content_matched = [matches[q.raw] for q in content]
        cands: list[_Mention] = []
        for node, name, content_only, rank in self.names:
            seq, matched = (content, content_matched) if content_only else (every, every_matched)
            cands.extend(self._find(seq, matched, name, node, rank))
        cands.sort(key=lambda m: (-m.size, -m.exact, m.shuffled, m.rank, m.start, m.node))
        taken: list[tuple] = []  # spans already won (see _Mention.span)
        chosen: dict[str, int] = {}
        for m in cands:
            clash = [t for t in taken if not (m.end < t[0] or m.start > t[1])]
            if clash and any(t != m.span() for t in clash):
                continue
            if not clash:
                taken.append(m.span())
            chosen.setdefault(m.node, m.start)
        return sorted(chosen, key=lambda n: (chosen[n], n))


@functools.lru_cache(maxsize=65536)
def _name_words(node: str, label: str, stopwords: frozenset[str]) -> tuple[tuple[str, tuple[str, ...], bool, int], ...]:
    """(node, words, content-only, rank) of each of a node's names (:func:`node_names`) that has words:
    its content words, or all its words when every one is a function word."""
    out = []
    for rank, name in _ranked_names(node, label):
        toks = tuple(raw_words(name))
        content = tuple(w for w in toks if w not in stopwords)
        if content:
            out.append((node, content, True, rank))
        elif toks:
            out.append((node, toks, False, rank))
    return tuple(out)


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
