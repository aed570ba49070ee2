"""``keyword``: a bag-of-words guesser over the question and the context *text*, blind to structure.

It sees the context as lines of words: it knows which names appear on a line together but not
which way an arrow points or what lies two steps away. Yes/no comes from whether the names the
question mentions appear (and, after a negation cue such as "without", whether the avoided name
appears); node answers from the name whose lines share most words with the question; counts from
the number of lines that mention the node. It cites the lines sharing most words with the question
as its evidence, each pair in the order the question names them -- often the wrong pairs, or
the right pair the wrong way round.

>>> from benchmark.context import make_context
>>> from benchmark.graph import build_graph, whole
>>> from benchmark.questions import Question
>>> g = build_graph({"nodes": [{"id": "u", "label": "User"}, {"id": "a", "label": "Auth"}, {"id": "d", "label": "DB"}],
...                  "edges": [{"src": "u", "dst": "a"}, {"src": "a", "dst": "d"}]})
>>> q = Question("q", "x", "How many nodes come directly after Auth?", "count_out", (("node", "a"),), None, None)
>>> KeywordAnswerer().answer(q, make_context("x", whole(g), g)).raw   # counts both sides: wrong
2
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Any

import networkx as nx

from benchmark.answers import Answer
from benchmark.questions import Question
from benchmark.stages import ANSWERERS
from retrievers.linking import link_mentions
from retrievers.text import raw_words, words

_LINE = re.compile(r"^(?P<a>.+?) (?:<->|->|--) (?P<b>.+?)(?: \[(?P<label>.*)\])?$")
#: a context line saying that a node is drawn inside a container (benchmark.context.membership_lines)
_INSIDE = re.compile(r"^(?P<a>.+?) is inside (?P<b>.+)$")
NEGATION_CUES = {"without", "avoid", "avoiding", "bypass", "bypassing", "skip", "skipping", "except",
                 "без", "минуя", "обходя", "обойти", "избегая", "кроме"}
MAX_EVIDENCE = 3


@dataclass(frozen=True)
class Line:
    """One context line as a bag of words, with the names on it (text order) and its bracket text."""

    text: str
    names: tuple[str, ...]
    label: str
    words: frozenset[str]


def read_lines(text: str) -> list[Line]:
    """The context text as :class:`Line` bags (blank lines skipped).

    >>> [(ln.names, ln.label) for ln in read_lines("Auth -> DB [reads]\\nLog")]
    [(('Auth', 'DB'), 'reads'), (('Log',), '')]
    """
    out = []
    for raw in (t.strip() for t in text.splitlines()):
        if not raw:
            continue
        m = _LINE.match(raw)
        inside = _INSIDE.match(raw) if not m else None
        names = (m["a"].strip(), m["b"].strip()) if m else (inside["a"].strip(), inside["b"].strip()) if inside else (raw,)
        out.append(Line(raw, names, (m["label"] or "").strip() if m else "", frozenset(words(raw))))
    return out


def avoided_names(text: str, mentioned: list[str]) -> list[str] | None:
    """Names mentioned after a negation cue ("without Auth"); ``None`` when there is no cue.

    >>> avoided_names("Can User reach DB without Auth?", ["User", "DB", "Auth"])
    ['Auth']
    """
    folded = raw_words(text)
    cue = next((i for i, w in enumerate(folded) if w in NEGATION_CUES), None)
    if cue is None:
        return None
    after = " " + " ".join(folded[cue + 1:]) + " "
    return [n for n in mentioned if raw_words(n) and f" {' '.join(raw_words(n))} " in after]


def _in_question_order(names: tuple[str, ...], mentioned: list[str]) -> tuple[str, str]:
    """A line's two names, the question's names first: a bag of words does not know which way
    an arrow points, so it cites the pair the way the question reads.

    >>> _in_question_order(("User", "DB"), ["DB", "User"]), _in_question_order(("User", "DB"), ["DB"])
    (('DB', 'User'), ('DB', 'User'))
    """
    rank = {n: i for i, n in enumerate(mentioned)}
    a, b = names[0], names[1]
    return (b, a) if rank.get(b, len(rank)) < rank.get(a, len(rank)) else (a, b)


def _names_graph(lines: list[Line]) -> nx.MultiDiGraph:
    """The names of the context as a graph without edges (for linking the question's mentions)."""
    g = nx.MultiDiGraph()
    for line in lines:
        for n in line.names:
            g.add_node(n, label=n)
    return g


@ANSWERERS.register("keyword")
class KeywordAnswerer:
    """Bag-of-words guesser: question words against context lines, no structure."""

    name = "keyword"
    #: its result depends on its inputs alone: the run makes it once for samples that give it the same inputs
    deterministic = True

    def __init__(self) -> None:
        self.config: dict[str, Any] = {"max_evidence": MAX_EVIDENCE}

    def answer(self, question: Question, context: Any) -> Answer:
        start = time.perf_counter()
        lines = read_lines(context.text if context is not None else "")
        qwords = frozenset(words(question.text))
        mentioned = link_mentions(question.text, _names_graph(lines), question.language) if lines else []
        score = {line.text: len(qwords & line.words) for line in lines}
        raw = self._guess(question, lines, mentioned, score)
        best = sorted((ln for ln in lines if score[ln.text] > 0 and len(ln.names) == 2),
                      key=lambda ln: (-score[ln.text], ln.text))[:MAX_EVIDENCE]
        shared = sorted(qwords & frozenset().union(*(ln.words for ln in lines))) if lines else []
        meta = {"latency_s": round(time.perf_counter() - start, 6), "mentioned": mentioned}
        explanation = f"Words shared with the question: {', '.join(shared)}." if shared else "No words shared with the question."
        assumed = self._assumed(question, raw, mentioned)
        if assumed:
            explanation += " The names go together: " + "; ".join(f"{a} → {b}" for a, b in assumed) + "."
        if raw is None:  # an abstention, flagged as one (not an error)
            meta["abstained"] = True
            explanation = "No name in the context to answer with. " + explanation
        return Answer(self.name, raw, evidence=tuple(_in_question_order(ln.names, mentioned) for ln in best),
                      explanation=explanation, meta=meta)

    @staticmethod
    def _assumed(question: Question, raw: Any, mentioned: list[str]) -> list[tuple[str, str]]:
        """The relations the guess takes for granted (co-occurrence read as an arrow)."""
        first = mentioned[0] if mentioned else None
        kind = question.surface_kind
        if kind == "bool":
            if raw != "yes":
                return []
            names = [n for n in mentioned if n not in (avoided_names(question.text, mentioned) or [])]
            return list(zip(names, names[1:]))
        if kind == "node" and first and raw:
            return [(first, raw)]
        if kind == "nodes" and first:
            inward = question.type == "predecessors"
            return [(n, first) if inward else (first, n) for n in raw]
        if kind == "path":
            return list(zip(raw, raw[1:]))
        if kind == "label" and len(mentioned) >= 2:
            return [(mentioned[0], mentioned[1])]
        return []

    @staticmethod
    def _guess(question: Question, lines: list[Line], mentioned: list[str], score: dict[str, int]) -> Any:
        kind = question.surface_kind  # an absent-entity question reads as its form; a guesser answers that
        present = {n for ln in lines for n in ln.names}
        if kind == "bool":
            avoided = avoided_names(question.text, mentioned)
            if avoided is not None:
                return "no" if avoided and avoided[-1] in present else "yes"
            return "yes" if mentioned and all(n in present for n in mentioned) else "no"
        first = mentioned[0] if mentioned else None
        beside = sorted({n for ln in lines if first in ln.names for n in ln.names if n != first})
        if kind == "nodes":
            return beside
        if kind == "int":
            return sum(1 for ln in lines if first is not None and first in ln.names and len(ln.names) == 2)
        if kind == "label":
            cands = [ln for ln in lines if ln.label and any(n in ln.names for n in mentioned)] or [ln for ln in lines if ln.label]
            return max(cands, key=lambda ln: (score[ln.text], ln.text)).label if cands else ""
        if kind == "node":
            cands = sorted(present - set(mentioned))
            weight = {n: sum(score[ln.text] for ln in lines if n in ln.names) for n in cands}
            return min(cands, key=lambda n: (-weight[n], n)) if cands else None
        if kind == "path":
            return mentioned[:1] + mentioned[-1:] if len(mentioned) >= 2 else list(mentioned)
        raise ValueError(f"unknown answer kind {kind!r}")
