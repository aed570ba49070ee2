"""The context: what reached the answerer, as a subgraph, as a graph and as text.

The text form is what a reader sees: one line per edge, ``"Auth Service -> Orders DB [reads]"``
(``--`` for an undirected edge, ``<->`` for a two-headed one; `` (data)``, `` (association)`` or
`` (parallel)`` after an edge of that kind, DESIGN.md §3), then the nodes that have no edge
in the context, one per line, then which node is drawn inside which container
(``"Web Server is inside VPC"``, where both are in the context). Labels, never ids; lines sorted; ``""`` when the context is empty.

>>> from benchmark.graph import build_graph, whole
>>> g = build_graph({"nodes": [{"id": "auth", "label": "Auth Service"}, {"id": "db", "label": "Orders DB"},
...                            {"id": "log", "label": "Audit Log"}],
...                  "edges": [{"src": "auth", "dst": "db", "label": "reads"},
...                            {"src": "db", "dst": "log", "arrow": "<->"}]})
>>> print(make_context("d1", whole(g), g).text)
Auth Service -> Orders DB [reads]
Orders DB <-> Audit Log
>>> make_context("d1", Subgraph(frozenset({"log"})), g).text
'Audit Log'
"""
from __future__ import annotations

from dataclasses import dataclass

import networkx as nx

from benchmark.graph import Edge, Subgraph, copy_kinds, graph_of, node_label, restrict


@dataclass(frozen=True)
class Context:
    """The part of a diagram given to an answerer for one question."""

    diagram_id: str
    #: node ids + edges that reached the answerer (flow view)
    subgraph: Subgraph
    #: ``restrict(source_graph, subgraph)``: the context as a graph, node attributes kept
    graph: nx.MultiDiGraph
    #: the context as the answerer reads it (see the module docstring)
    text: str

    def is_empty(self) -> bool:
        return self.subgraph.is_empty()


def _label(g: nx.MultiDiGraph, node: str) -> str:
    return " ".join(node_label(g, node).split())


def _arrow(g: nx.MultiDiGraph, e: Edge) -> str:
    """The arrow to print for ``e``: ``->`` when directed, else the diagram's own (``<->`` or ``--``)."""
    if e.directed:
        return "->"
    for u, v in ((e.src, e.dst), (e.dst, e.src)):
        if g.has_edge(u, v):
            for d in g.get_edge_data(u, v).values():
                if not d.get("directed", True) and (d.get("label") or "") == e.label:
                    return "<->" if d.get("arrow") == "<->" else "--"
    return "--"


def _marks(g: nx.MultiDiGraph, e: Edge) -> str:
    """``" (data)"``, ``" (association)"`` or ``" (parallel)"`` when the diagram's edge ``e`` has that
    kind or fork mark (DESIGN.md §3), else ``""``: the text shows what the image's line style shows."""
    for u, v in ((e.src, e.dst),) if e.directed else ((e.src, e.dst), (e.dst, e.src)):
        for d in (g._succ[u].get(v, {}).values() if u in g else ()):
            if (d.get("label") or "") == e.label and d.get("directed", True) == e.directed:
                kind = d.get("kind", "flow")
                return f" ({kind})" if kind != "flow" else " (parallel)" if d.get("parallel") else ""
    return ""


def edge_line(g: nx.MultiDiGraph, e: Edge) -> str:
    """One edge as a context line: ``"Auth Service -> Orders DB [reads]"``, with ``" (data)"``,
    ``" (association)"`` or ``" (parallel)"`` after it for an edge of that kind.

    >>> from benchmark.graph import build_graph
    >>> g = build_graph({"edges": [{"src": "erp", "dst": "db", "label": "sync", "classes": ["data"]}]})
    >>> edge_line(g, Edge("erp", "db", "sync"))
    'erp -> db [sync] (data)'
    """
    line = f"{_label(g, e.src)} {_arrow(g, e)} {_label(g, e.dst)}"
    label = " ".join(e.label.split())
    return (f"{line} [{label}]" if label else line) + _marks(g, e)


def context_text(sub: Subgraph, g: nx.MultiDiGraph) -> str:
    """The text form of ``sub`` with labels from ``g`` (see the module docstring)."""
    lines = sorted(edge_line(g, e) for e in sub.edges)
    ends = {e.src for e in sub.edges} | {e.dst for e in sub.edges}
    lines += sorted(_label(g, n) for n in sub.nodes - ends)
    lines += membership_lines(sub, g)
    return "\n".join(lines)


#: how a context line says that a node is drawn inside a container
INSIDE = " is inside "


def membership_lines(sub: Subgraph, g: nx.MultiDiGraph) -> list[str]:
    """``"Web Server is inside VPC"`` for every node of ``sub`` whose container is in ``sub`` too (sorted).

    >>> from benchmark.graph import build_graph, whole
    >>> g = build_graph({"nodes": [{"id": "vpc", "label": "VPC"}, {"id": "vpc.web", "label": "Web", "parent": "vpc"}]})
    >>> membership_lines(whole(g), g), membership_lines(Subgraph(frozenset({"vpc.web"})), g)
    (['Web is inside VPC'], [])
    """
    nodes = sub.all_nodes
    return sorted(f"{_label(g, n)}{INSIDE}{_label(g, p)}" for n in nodes if n in g
                  for p in [g.nodes[n].get("parent")] if p is not None and p in nodes)


def make_context(diagram_id: str, subgraph: Subgraph, source_graph: nx.MultiDiGraph) -> Context:
    """The :class:`Context` of ``subgraph``, a selection from ``source_graph`` (the flow view).

    A selection that carries its own ``context_text`` and the labels of nodes the source graph lacks
    (``node_attrs``, as :class:`retrievers.longctx.PaddedSubgraph` does) keeps that text and those labels.
    """
    text = getattr(subgraph, "context_text", None)
    if text is not None:
        attrs = {n: {"label": label, "shape": "rectangle", "parent": None} for n, label in getattr(subgraph, "node_attrs", ())}
        attrs.update(source_graph._node)
        return Context(diagram_id=diagram_id, subgraph=subgraph, graph=copy_kinds(graph_of(subgraph, attrs), source_graph),
                       text=text)
    return Context(diagram_id=diagram_id, subgraph=subgraph, graph=restrict(source_graph, subgraph),
                   text=context_text(subgraph, source_graph))
