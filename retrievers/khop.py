"""``khop<k>``: the k-hop neighbourhood of the nodes a question mentions.

Mentions are linked by label (:func:`retrievers.linking.link_mentions`); from them every node
within ``k`` edges is taken, walking edges either way, with every edge of the graph whose two
ends are taken. No mention, empty context. ``khop0`` is the mentioned nodes and the edges
among them.
"""
from __future__ import annotations

import networkx as nx

from benchmark.graph import Edge, Subgraph, graph_edges
from benchmark.stages import SELECTORS
from retrievers.linking import link_mentions


def neighbourhood(g: nx.MultiDiGraph, seeds: list[str], k: int) -> set[str]:
    """Nodes within ``k`` hops of ``seeds``, edges walked in both directions.

    >>> from benchmark.graph import build_graph
    >>> g = build_graph({"edges": [{"src": "a", "dst": "b"}, {"src": "c", "dst": "b"}, {"src": "c", "dst": "d"}]})
    >>> sorted(neighbourhood(g, ["a"], 1)), sorted(neighbourhood(g, ["a"], 2))
    (['a', 'b'], ['a', 'b', 'c'])
    """
    seen = {s for s in seeds if s in g}
    frontier = sorted(seen)
    for _ in range(k):
        nxt = set()
        for n in frontier:
            nxt.update(g.successors(n))
            nxt.update(g.predecessors(n))
        frontier = sorted(nxt - seen)
        seen.update(frontier)
        if not frontier:
            break
    return seen


def induced(g: nx.MultiDiGraph, nodes: set[str]) -> Subgraph:
    """``nodes`` with every edge of ``g`` whose two ends are among them."""
    edges: list[Edge] = [e for e in graph_edges(g) if e.src in nodes and e.dst in nodes]
    return Subgraph.from_edges(edges, nodes)


@SELECTORS.register("khop", pattern=r"khop(?P<k>\d+)")
class KHopSelector:
    """k-hop neighbourhood (both directions) of the nodes the question mentions."""

    #: its result depends on its inputs alone: the run makes it once for samples that give it the same inputs
    deterministic = True

    def __init__(self, k: int = 1) -> None:
        if k < 0:
            raise ValueError(f"khop needs k >= 0, got {k}")
        self.k = k
        self.name = f"khop{k}"

    def select(self, question, graph, diagram) -> Subgraph:
        seeds = link_mentions(question.text, graph, question.language)
        if not seeds:
            return Subgraph()
        return induced(graph, neighbourhood(graph, seeds, self.k))
