"""Faithfulness: the share of an answer's claims that hold in the context it was given (DESIGN.md §5).

Each claim's node texts are matched to diagram nodes through labels. A claim is

* ``supported``   -- the context subgraph holds an edge from src to dst (either way when undirected);
* ``unsupported`` -- the diagram has that edge but the context did not: prior knowledge or a guess;
* ``fabricated``  -- the diagram has no such edge, or a node the claim names is not in the diagram.

faithfulness = supported / claims; with no claims it is unmeasured (``None``), never 0 or 1.

>>> from benchmark.answers import Claim
>>> from benchmark.graph import Edge, Subgraph, build_graph
>>> g = build_graph({"nodes": [{"id": n} for n in ("User", "Auth", "DB")],
...                  "edges": [{"src": "User", "dst": "Auth"}, {"src": "Auth", "dst": "DB"}]})
>>> ctx = Subgraph.from_edges([Edge("User", "Auth")])
>>> claims = [Claim("edge", "user", "auth", ""), Claim("relation", "Auth", "DB", ""),
...           Claim("relation", "User", "DB", ""), Claim("relation", "Firewall", "DB", "")]
>>> f = faithfulness(claims, ctx, g)
>>> f.score, f.supported, f.unsupported, f.fabricated, f.n_claims
(0.25, 1, 1, 2, 4)
>>> faithfulness([], ctx, g).score is None
True
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import networkx as nx

from benchmark.answers import Claim
from benchmark.graph import Subgraph
from benchmark.metrics.names import node_matcher


VERDICTS = ("supported", "unsupported", "fabricated")


@dataclass(frozen=True)
class Faithfulness:
    """Counts of claims by verdict and the share supported (``None`` when there are no claims)."""

    score: float | None
    supported: int
    unsupported: int
    fabricated: int
    n_claims: int
    verdicts: tuple[str, ...] = ()


def _walkable(sub: Subgraph) -> set[tuple[str, str]]:
    pairs = set()
    for e in sub.edges:
        pairs.add((e.src, e.dst))
        if not e.directed:
            pairs.add((e.dst, e.src))
    return pairs


def verdict(claim: Claim, context_pairs: set[tuple[str, str]], diagram_graph: nx.MultiDiGraph,
            context_graph: nx.MultiDiGraph | None = None) -> str:
    """``supported``, ``unsupported`` or ``fabricated`` for one claim (see module doc).

    A text naming a label that several nodes share may mean any of them: the claim holds when
    it holds for one of them. Names are matched to the diagram's labels and, when given, to the
    ``context_graph``'s own labels (a context from another graph source, such as OCR, may carry
    node ids and labels of its own); a claim that holds in the context is supported even where
    that context is wrong about the diagram: the answer stayed inside what it was given.
    """
    return _verdict(claim, context_pairs, diagram_graph, node_matcher(diagram_graph),
                    None if context_graph is None else node_matcher(context_graph))


Matcher = Callable[[str], tuple[str, ...]]


def _verdict(claim: Claim, context_pairs: set[tuple[str, str]], diagram_graph: nx.MultiDiGraph,
             in_diagram: Matcher, in_context: Matcher | None) -> str:
    """:func:`verdict` with the node matchers of the diagram and the context graph given."""
    srcs, dsts = in_diagram(claim.src), set(in_diagram(claim.dst))
    if any((s, d) in context_pairs for s in srcs for d in dsts) or (
            in_context is not None and _holds(claim, context_pairs, in_context)):
        return "supported"
    if any(_walks_to(diagram_graph, s, dsts) for s in srcs):
        return "unsupported"
    return "fabricated"


def _holds(claim: Claim, context_pairs: set[tuple[str, str]], match: Matcher) -> bool:
    srcs, dsts = match(claim.src), set(match(claim.dst))
    return any((s, d) in context_pairs for s in srcs for d in dsts)


def _walks_to(g: nx.MultiDiGraph, node: str, targets: set[str]) -> bool:
    """Whether an edge walkable out of ``node`` (see :func:`benchmark.graph.out_edges`) reaches one of ``targets``."""
    if node not in g:
        return False
    succ, pred = g.succ[node], g.pred[node]
    return any(d in succ or (d != node and d in pred and any(not a.get("directed", True) for a in pred[d].values()))
               for d in targets)


def faithfulness(claims: list[Claim], context_subgraph: Subgraph, diagram_graph: nx.MultiDiGraph,
                 context_graph: nx.MultiDiGraph | None = None) -> Faithfulness:
    """Check every claim against the context and the diagram; see the module doc and :func:`verdict`."""
    verdicts: tuple[str, ...] = ()
    if claims:
        pairs = _walkable(context_subgraph)
        in_diagram = node_matcher(diagram_graph)
        in_context = None if context_graph is None else node_matcher(context_graph)
        verdicts = tuple(_verdict(c, pairs, diagram_graph, in_diagram, in_context) for c in claims)
    n = len(verdicts)
    supported = verdicts.count("supported")
    return Faithfulness(supported / n if n else None, supported, verdicts.count("unsupported"),
                        verdicts.count("fabricated"), n, verdicts)
