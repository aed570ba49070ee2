"""Sufficiency: does the context, as the answerer received it, contain a certificate of the gold
answer? (DESIGN.md §5)

Exact, not a threshold on SRR: the reference solver, run on the context alone, must return the
gold answer, and for negative or universal questions the context must hold a closed set of the
diagram (:func:`benchmark.solver.proves`; labels count only for the questions that ask about one,
and an undirected edge stands for the edge between its two nodes either way). The context is
judged as given: an extracted context whose edges lack their labels or point the wrong way is not
repaired against the D2 first (:func:`align_edges` only tells an extraction error apart). An empty
context is never sufficient.

>>> from benchmark.graph import Edge, Subgraph, build_graph
>>> from benchmark.questions import Question
>>> g = build_graph({"nodes": [{"id": n} for n in ("User", "Auth", "DB")],
...                  "edges": [{"src": "User", "dst": "Auth"}, {"src": "Auth", "dst": "DB"}]})
>>> q = Question("q", "d", "Can User reach DB?", "reachable", (("source", "User"), ("target", "DB")), True, Subgraph())
>>> is_sufficient(q, Subgraph.from_edges([Edge("User", "Auth"), Edge("Auth", "DB")]), g)
True
>>> is_sufficient(q, Subgraph.from_edges([Edge("User", "Auth")]), g)
False
"""
from __future__ import annotations

import networkx as nx

from benchmark.graph import Subgraph, edges_between
from benchmark.questions import Question
from benchmark.solver import proves


def align_edges(retrieved: Subgraph, diagram_graph: nx.MultiDiGraph) -> Subgraph:
    """``retrieved`` with each edge replaced by the diagram's edge it names (direction and label
    as in the diagram) where exactly that pair is joined; other edges are kept as they are.

    A context whose edges came from another graph source (written ``b -> a`` for an undirected
    ``a -- b``, or without its label) then proves what the diagram's own edge proves.
    """
    edges = set()
    for e in retrieved.edges:
        cands = edges_between(diagram_graph, e.src, e.dst)
        same = [c for c in cands if c.label == e.label]
        if e in cands:
            edges.add(e)
        else:
            edges.add(min(same) if same else min(cands) if len(cands) == 1 and not e.label else e)
    return Subgraph(retrieved.nodes, frozenset(edges))


def is_sufficient(question: Question, retrieved: Subgraph, diagram_graph: nx.MultiDiGraph) -> bool:
    """True when ``retrieved``, as given, proves ``question``'s gold answer about ``diagram_graph``.

    >>> from benchmark.graph import Edge, Subgraph, build_graph
    >>> g = build_graph({"edges": [{"src": "a", "dst": "b", "label": "errors > 1%"}]})
    >>> q = Question("q", "d", "After a?", "successors", (("node", "a"),), frozenset({"b"}), Subgraph())
    >>> is_sufficient(q, Subgraph.from_edges([Edge("a", "b", "errors")]), g)   # the label does not matter here
    True
    """
    if retrieved.is_empty():
        return False
    return proves(question.type, question.arg, question.answer, retrieved, diagram_graph)
