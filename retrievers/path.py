"""``path``: shortest paths among the nodes a question mentions.

For every pair of mentioned nodes, the shortest flow path from each to the other (both
directions) is taken, found by the same breadth-first walk as the reference solver (sorted
neighbours, undirected edges walkable both ways), so a reachability question's witness path is
the gold one. Mentioned nodes that no path joins are kept on their own; no mention, empty context.
"""
from __future__ import annotations

from collections import deque
from itertools import permutations

import networkx as nx

from benchmark.graph import Edge, Subgraph, out_edges
from benchmark.stages import SELECTORS
from retrievers.linking import link_mentions


def shortest_path_edges(g: nx.MultiDiGraph, source: str, target: str) -> list[Edge] | None:
    """Edges of one shortest walkable path ``source`` -> ``target`` (``[]`` when equal, None when none).

    >>> from benchmark.graph import build_graph
    >>> g = build_graph({"edges": [{"src": "a", "dst": "b"}, {"src": "b", "dst": "c"}, {"src": "a", "dst": "c", "arrow": "<-"}]})
    >>> [(e.src, e.dst) for e in shortest_path_edges(g, "a", "c")], shortest_path_edges(g, "c", "x")
    ([('a', 'b'), ('b', 'c')], None)
    """
    if source not in g or target not in g:
        return None
    parents: dict[str, tuple[str, Edge] | None] = {source: None}
    queue = deque([source])
    while queue and target not in parents:
        u = queue.popleft()
        for v, e in out_edges(g, u):
            if v not in parents:
                parents[v] = (u, e)
                queue.append(v)
    if target not in parents:
        return None
    edges: list[Edge] = []
    node = target
    while parents[node] is not None:
        node, e = parents[node]  # type: ignore[misc]
        edges.append(e)
    return edges[::-1]


@SELECTORS.register("path")
class PathSelector:
    """Shortest flow paths between every pair of mentioned nodes, both directions."""

    name = "path"
    #: its result depends on its inputs alone: the run makes it once for samples that give it the same inputs
    deterministic = True

    def select(self, question, graph, diagram) -> Subgraph:
        linked = link_mentions(question.text, graph, question.language)
        edges: set[Edge] = set()
        for a, b in permutations(linked, 2):
            found = shortest_path_edges(graph, a, b)
            if found:
                edges.update(found)
        return Subgraph.from_edges(edges, linked)
