"""Sufficiency: does the retrieved context contain a certificate of the gold answer? (DESIGN.md §5)

Exact, not a threshold on SRR: the reference solver, run on the retrieved subgraph alone, must
return the gold answer, and for negative or universal questions the retrieved subgraph must hold
a closed set of the diagram (:func:`benchmark.solver.proves`).

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
    """True when ``retrieved`` proves ``question``'s gold answer about ``diagram_graph``."""
    sub = align_edges(retrieved, diagram_graph)
    return proves(question.type, question.arg, question.answer, sub, diagram_graph)
