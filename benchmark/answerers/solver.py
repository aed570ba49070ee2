"""``solver``: exact graph reasoning over the context only -- what a perfect reader would say.

It reads the question's structured form (type and node-id args) and the context's graph, never
the gold answer or certificate; it answers in labels, as a person would write them, and cites
the edges of the path or closed set it used (:func:`benchmark.solver.propose_certificate`).

>>> from benchmark.context import make_context
>>> from benchmark.graph import build_graph, whole
>>> from benchmark.questions import Question, split_branches
>>> g = build_graph({"nodes": [{"id": "u", "label": "User"}, {"id": "c", "label": "Cache"}, {"id": "d", "label": "DB"}],
...                  "edges": [{"src": "u", "dst": "c"}, {"src": "c", "dst": "d"}]})
>>> q = Question("q", "x", "Which steps lead from User to DB?", "path", (("source", "u"), ("target", "d")), None, None)
>>> a = SolverAnswerer().answer(q, make_context("x", whole(g), g))
>>> a.raw, a.evidence, a.explanation
(['User', 'Cache', 'DB'], (('User', 'Cache'), ('Cache', 'DB')), 'In the context: User → Cache → DB.')
"""
from __future__ import annotations

import time
from typing import Any

import networkx as nx

from benchmark.answers import Answer
from benchmark.graph import node_label
from benchmark.questions import Question, split_branches
from benchmark.solver import (ancestors_chain, decisions, end_states, flow_edges_only, propose_certificate,
                              scenario_walk)
from benchmark.stages import ANSWERERS

YES_NO = {"en": ("yes", "no"), "ru": ("да", "нет")}
#: what the solver says when the context does not determine the answer (it abstains)
ABSTAIN = "the context does not determine the answer"


def display_name(g: nx.MultiDiGraph, node: str) -> str:
    """The node's label, or its id where another node of ``g`` carries the same label."""
    return DisplayNames(g)(node)


class DisplayNames:
    """:func:`display_name` of any node of ``g``, its labels compared once (an answer names many nodes).

    >>> from benchmark.graph import build_graph
    >>> g = build_graph({"nodes": [{"id": "a.db", "label": "DB"}, {"id": "b.db", "label": "db"},
    ...                            {"id": "api", "label": "API  Gateway"}], "edges": []})
    >>> names = DisplayNames(g)
    >>> names("a.db"), names("api"), names("x.db"), names("zz")
    ('a.db', 'API Gateway', 'x.db', 'zz')
    """

    def __init__(self, g: nx.MultiDiGraph) -> None:
        self.g = g
        self.carried: dict[str, int] = {}   # label as compared -> how many nodes of g carry it
        for n in g.nodes:
            key = " ".join(node_label(g, n).split()).casefold()
            self.carried[key] = self.carried.get(key, 0) + 1

    def __call__(self, node: str) -> str:
        label = " ".join(node_label(self.g, node).split())
        others = self.carried.get(label.casefold(), 0) - (node in self.g)
        return node if others else label


def written(value: Any, kind: str, g: nx.MultiDiGraph, language: str, names: DisplayNames | None = None) -> Any:
    """A canonical answer as a person would write it: yes/no, labels, lists of labels."""
    display = names or DisplayNames(g)
    if kind == "bool":
        yes, no = YES_NO.get(language, YES_NO["en"])
        return yes if value else no
    if kind == "node":
        return display(value)
    if kind == "nodes":
        return sorted(display(n) for n in value)
    if kind == "path":
        return [display(n) for n in value]
    return value


@ANSWERERS.register("solver")
class SolverAnswerer:
    """Exact graph reasoning over the context graph only."""

    name = "solver"
    #: its result depends on its inputs alone: the run makes it once for samples that give it the same inputs
    deterministic = True

    def __init__(self) -> None:
        self.config: dict[str, Any] = {}

    def answer(self, question: Question, context: Any) -> Answer:
        start = time.perf_counter()
        g = context.graph
        value, cert = propose_certificate(question.type, question.arg, g)
        meta = {"latency_s": round(time.perf_counter() - start, 6)}
        if value is None:  # an abstention, flagged as one (not an error)
            return Answer(self.name, None, explanation=ABSTAIN, meta=dict(meta, abstained=True))
        if question.kind == "abstain":  # what the question names is not in the context: abstain
            return Answer(self.name, None, meta=dict(meta, abstained=True),
                          explanation=f"No node in the context is {question.arg['entity']!r}: {ABSTAIN}.")
        name = DisplayNames(g)
        evidence = tuple(sorted((name(e.src), name(e.dst)) for e in cert.edges))
        if question.kind == "path":
            evidence = tuple((name(a), name(b)) for a, b in zip(value, value[1:]))
        raw = written(value, question.kind, g, question.language, name)
        return Answer(self.name, raw, evidence=evidence, explanation=self._explain(question, value, cert, g, name),
                      meta=meta)

    @staticmethod
    def _explain(question: Question, value: Any, cert: Any, g: nx.MultiDiGraph, name: DisplayNames) -> str:
        a = question.arg
        if question.type == "scenario":
            walked = scenario_walk(flow_edges_only(g), a["start"], split_branches(a["branches"]))[1]
            return "In the context: " + " → ".join(name(n) for n in walked) + "; the flow stops there."
        if question.type == "necessary":
            steps = ", ".join(sorted(name(n) for n in value)) or "none"
            return (f"Steps on every path in the context between {name(a['source'])} and "
                    f"{name(a['target'])}: {steps}.")
        if question.type == "graph_count":
            flow = flow_edges_only(g)
            found = end_states(flow) if a["what"] == "end_states" else decisions(flow)
            what = "End states" if a["what"] == "end_states" else "Decisions"
            return f"{what} in the context: {', '.join(sorted(name(n) for n in found)) or 'none'}."
        if question.type == "inside":
            chain = [a["node"], *ancestors_chain(g, a["node"])[0]]
            return "; ".join(f"{name(x)} is inside {name(y)}" for x, y in zip(chain, chain[1:])) \
                or f"{name(a['node'])} is inside no container."
        if question.kind == "path":
            return "In the context: " + " → ".join(name(n) for n in value) + "."
        if question.needs_closure(value):
            reached = sorted(name(n) for n in cert.all_nodes)
            return f"The context holds every edge these nodes have on that side: {', '.join(reached)}."
        chains = [f"{name(e.src)} → {name(e.dst)}" for e in sorted(cert.edges)]
        return ("In the context: " + "; ".join(chains) + ".") if chains else ""
