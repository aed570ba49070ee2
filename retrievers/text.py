"""Text helpers shared by the selectors: word tokens, light stemming, and edges as text.

Tokens are lower-cased with :meth:`str.casefold`, ``ё`` is folded to ``е``, and each word is
reduced by a light suffix-stripping stemmer (Russian for Cyrillic words, English for Latin
ones), so that inflected forms meet:

>>> words("Сервиса авторизации") == words("Сервис авторизация")
True
>>> words("Orders DB -> Users' sessions!")
['order', 'db', 'user', 'session']

:func:`edge_text` is the document a ranking selector scores for one edge:

>>> from benchmark.graph import build_graph, graph_edges
>>> g = build_graph({"nodes": [{"id": "a", "label": "Auth Service"}, {"id": "b", "label": "Users DB"}],
...                  "edges": [{"src": "a", "dst": "b", "label": "lookup"}]})
>>> edge_text(g, graph_edges(g)[0])
'Auth Service -> Users DB: lookup'
"""
from __future__ import annotations

import functools
import re
import unicodedata

import networkx as nx

from benchmark.graph import Edge, node_label

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_CYRILLIC = re.compile(r"[\u0400-\u04ff]")

#: English function words of questions; never used to link or rank
EN_STOPWORDS = frozenset("""
a an the and or of to from in on at by for with without into onto via is are was were be been being
do does did can could will would should may might must there here this that these those it its
what which who whom whose where when why how any some all every each both either neither not
if then than after before directly direct eventually ever way through pass passes passing passed
go goes going get gets reach reaches reached lead leads come comes step steps node nodes flow arrow
arrows diagram between has have had as so such only also
""".split())
#: Russian function words of questions
RU_STOPWORDS = frozenset("""
и или а но в во на с со к ко по от до из у о об за под над при для без через ли же бы не ни
это этот эта эти тот та те то что кто где когда куда откуда как какой какая какое какие каким каких
чем ли есть ведет ведёт ведут идет идёт идут попасть можно ли после перед между прямо напрямую
все всех всё сколько который которая которые узел узлы стрелка стрелки схема схеме поток шаг шаги
""".split())
STOPWORDS = EN_STOPWORDS | RU_STOPWORDS


def stopwords_for(language: str | None) -> frozenset[str]:
    """Function words to ignore for a question language (``en``, ``ru``; other codes get both lists).

    Russian questions often carry English terms ("API", "DB"), so ``ru`` includes the English list.

    >>> "the" in stopwords_for("ru"), "какие" in stopwords_for("en")
    (True, False)
    """
    if language == "en":
        return EN_STOPWORDS
    return STOPWORDS


_RU_ENDINGS = sorted("""
иями ями ами ией иях ях ах ого его ому ему ыми ими ость ости остью ение ения ении ением
ая яя ое ее ые ие ый ий ой ую юю ых их ым им ом ем ей ов ев ию ия ии ье ья ью ам ям ет ит ют ят ут ат
ть ла ло ли а я о е ы и у ю ь й
""".split(), key=len, reverse=True)
_EN_ENDINGS = ("ies", "sses", "ing", "ed", "es", "s", "e")


def fold(text: str) -> str:
    """Case- and accent-folded text (``ё`` -> ``е``), whitespace collapsed.

    >>> fold("  Ёлка\\nAPI  ")
    'елка api'
    """
    text = unicodedata.normalize("NFKC", str(text)).casefold().replace("ё", "е")
    return " ".join(text.split())


@functools.lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """Light stem of one folded word: strips one inflectional ending, keeping a stem of 3+ letters.

    >>> stem("сервиса"), stem("авторизации"), stem("services"), stem("processing"), stem("db")
    ('сервис', 'авторизац', 'servic', 'process', 'db')
    >>> stem("setting"), stem("swapped"), stem("called"), stem("set")
    ('set', 'swap', 'call', 'set')
    """
    if _CYRILLIC.search(word):
        if word.endswith(("ся", "сь")) and len(word) > 5:
            word = word[:-2]
        for end in _RU_ENDINGS:
            if word.endswith(end) and len(word) - len(end) >= 3:
                return word[: -len(end)]
        return word
    if word.isalpha() and len(word) > 3:
        if word.endswith("ies") and len(word) > 4:
            return word[:-3] + "y"
        if word.endswith("sses"):
            return word[:-2]
        for end in _EN_ENDINGS[2:]:
            if word.endswith(end) and not word.endswith("ss") and len(word) - len(end) >= 3:
                base = word[: -len(end)]
                if end in ("ing", "ed") and len(base) >= 3 and base[-1] == base[-2] and base[-1] not in "lsz":
                    base = base[:-1]  # setting -> set, swapped -> swap
                return base
    return word


def raw_words(text: str) -> list[str]:
    """Folded words of ``text``, unstemmed (letters and digits; punctuation separates)."""
    return _WORD.findall(fold(text))


def words(text: str, *, stopwords: frozenset[str] = STOPWORDS) -> list[str]:
    """Stemmed words of ``text`` without ``stopwords`` (pass ``frozenset()`` to keep every word)."""
    return [stem(w) for w in raw_words(text) if w not in stopwords]


def label_of(g: nx.MultiDiGraph, node: str) -> str:
    """A node's label on one line (whitespace collapsed)."""
    return " ".join(node_label(g, node).split())


def edge_text(g: nx.MultiDiGraph, e: Edge) -> str:
    """``"src label -> dst label: edge label"`` (``--`` for an undirected edge)."""
    arrow = "->" if e.directed else "--"
    text = f"{label_of(g, e.src)} {arrow} {label_of(g, e.dst)}"
    return f"{text}: {' '.join(e.label.split())}" if e.label.strip() else text
