"""The diagram graph (DESIGN.md §3) and the subgraph value that flows between stages.

Two views of an edge are kept apart on purpose:

* the *parse view* (what ``diagqa parse`` prints) mirrors d2: ``src``/``dst`` in source-text
  order plus the arrow, so ``a <- b`` is src ``a``, dst ``b``, arrow ``<-``;
* the *flow view* (the :class:`networkx.MultiDiGraph` built here, which questions are reasoned
  over) follows the flow: ``a <- b`` becomes the edge ``b -> a``; ``<->`` and ``--`` edges are
  stored once, in text order, with ``directed=False`` and may be walked both ways.

>>> g = build_graph({"nodes": [{"id": "a"}, {"id": "b"}],
...                  "edges": [{"src": "a", "dst": "b", "arrow": "<-", "label": "x"}]})
>>> [(e.src, e.dst, e.label) for e in graph_edges(g)]
[('b', 'a', 'x')]
"""
from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, Mapping

import networkx as nx

ARROWS = ("->", "<-", "<->", "--")

#: the D2 classes that give an edge a kind other than flow (DESIGN.md §3). ``class: data`` marks a
#: data feed, read or query (ERP -> Inventory DB, Grafana -> Prometheus): it is drawn but no step
#: of the flow follows it; ``class: association`` marks a line that relates two nodes without any
#: flow (a cache entry and its list node). Every other edge is a flow edge.
EDGE_KINDS = ("flow", "data", "association")
#: the D2 class on the edges out of a fork whose branches all run (not alternatives)
PARALLEL_CLASS = "parallel"


def edge_kind(classes: Iterable[str] | None) -> str:
    """The kind of an edge with the D2 ``classes``: ``association`` or ``data`` when it has that
    class (association wins when it has both), else ``flow``.

    >>> edge_kind(None), edge_kind(["data"]), edge_kind(["parallel"]), edge_kind(["data", "association"])
    ('flow', 'data', 'flow', 'association')
    """
    names = set(classes or ())
    return "association" if "association" in names else "data" if "data" in names else "flow"


@dataclass(frozen=True, order=True, slots=True)
class Edge:
    """One edge of the flow view. ``label`` is ``""`` when the edge has none."""

    src: str
    dst: str
    label: str = ""
    directed: bool = True

    def key(self, with_label: bool = False) -> tuple:
        """Identity used by the metrics: (src, dst), in either order when undirected.

        >>> Edge("b", "a", directed=False).key() == Edge("a", "b", directed=False).key()
        True
        """
        ends = (self.src, self.dst) if self.directed else tuple(sorted((self.src, self.dst)))
        return ends + (self.label,) if with_label else ends

    def to_list(self) -> list:
        out: list = [self.src, self.dst]
        if self.label:
            out.append(self.label)
        return out


@dataclass(frozen=True, slots=True)
class Subgraph:
    """A set of node ids and edges: a retrieved context or a gold certificate.

    Edges bring their endpoints with them: :attr:`all_nodes` includes them.
    """

    nodes: frozenset[str] = field(default_factory=frozenset)
    edges: frozenset[Edge] = field(default_factory=frozenset)

    @property
    def all_nodes(self) -> frozenset[str]:
        return self.nodes | {e.src for e in self.edges} | {e.dst for e in self.edges}

    def is_empty(self) -> bool:
        return not self.nodes and not self.edges

    def union(self, other: "Subgraph") -> "Subgraph":
        return Subgraph(self.nodes | other.nodes, self.edges | other.edges)

    def normalized(self) -> "Subgraph":
        """Same subgraph with edge endpoints listed among the nodes."""
        return Subgraph(self.all_nodes, self.edges)

    def to_json(self) -> dict[str, Any]:
        return {
            "nodes": sorted(self.all_nodes),
            "edges": [e.to_list() for e in sorted(self.edges)],
        }

    @classmethod
    def from_edges(cls, edges: Iterable[Edge], nodes: Iterable[str] = ()) -> "Subgraph":
        edges = frozenset(edges)
        return cls(frozenset(nodes) | {e.src for e in edges} | {e.dst for e in edges}, edges)


def _label_key(text: str) -> str:
    return " ".join(str(text).split()).casefold()


def edges_match(retrieved: Edge, gold: Edge, with_label: bool = False) -> bool:
    """Does ``retrieved`` name the edge ``gold``? Directed against directed: same (src, dst);
    when either is undirected: the same two nodes in either order. Symmetric in the node ids.

    >>> edges_match(Edge("a", "b", directed=False), Edge("a", "b")), edges_match(Edge("b", "a", directed=False), Edge("b", "a"))
    (True, True)
    >>> edges_match(Edge("b", "a"), Edge("a", "b")), edges_match(Edge("b", "a"), Edge("a", "b", directed=False))
    (False, True)
    >>> edges_match(Edge("a", "b", "errors"), Edge("a", "b", "errors > 1%")), edges_match(Edge("a", "b", "x"), Edge("a", "b", " X"), True)
    (True, True)
    """
    if retrieved.directed and gold.directed:
        same = (retrieved.src, retrieved.dst) == (gold.src, gold.dst)
    else:
        same = {retrieved.src, retrieved.dst} == {gold.src, gold.dst}
    return same and (not with_label or _label_key(retrieved.label) == _label_key(gold.label))


def _pair(e: Edge) -> frozenset[str]:
    return frozenset((e.src, e.dst))


def edge_hits(retrieved: frozenset[Edge], gold: frozenset[Edge], with_label: bool = False) -> tuple[int, int]:
    """(gold edges that some retrieved edge matches, retrieved edges that match some gold edge).

    >>> edge_hits(frozenset({Edge("a", "b"), Edge("b", "c")}), frozenset({Edge("a", "b")}))
    (1, 1)
    """
    by_pair: dict[frozenset[str], list[Edge]] = {}
    for g in gold:
        by_pair.setdefault(_pair(g), []).append(g)
    gold_hit: set[Edge] = set()
    ret_hit = 0
    for r in retrieved:
        found = [g for g in by_pair.get(_pair(r), ()) if edges_match(r, g, with_label)]
        if found:
            ret_hit += 1
            gold_hit.update(found)
    return len(gold_hit), ret_hit


def build_graph(parsed: dict[str, Any]) -> nx.MultiDiGraph:
    """Flow-view graph from the parser's (or the extractor's) public JSON form."""
    g = nx.MultiDiGraph()
    for n in parsed.get("nodes", []):
        g.add_node(n["id"], label=n.get("label") if n.get("label") is not None else n["id"].split(".")[-1],
                   shape=n.get("shape") or "rectangle", parent=n.get("parent"))
    for e in parsed.get("edges", []):
        arrow = e.get("arrow", "->")
        if arrow not in ARROWS:
            raise ValueError(f"unknown arrow {arrow!r} in edge {e!r}")
        src, dst = (e["dst"], e["src"]) if arrow == "<-" else (e["src"], e["dst"])
        for n in (src, dst):
            if n not in g:
                g.add_node(n, label=n.split(".")[-1], shape="rectangle", parent=None)
        classes = e.get("classes") or ()
        g.add_edge(src, dst, label=e.get("label") or "", directed=arrow in ("->", "<-"), arrow=arrow,
                   kind=edge_kind(classes), parallel=PARALLEL_CLASS in classes)
    return g


#: the views networkx makes once and keeps on a graph (``g.nodes``, ``g.edges``, ``g.succ``, ...)
_CACHED_VIEWS = frozenset(name for cls in (nx.Graph, nx.DiGraph, nx.MultiGraph, nx.MultiDiGraph) for name in dir(cls)
                          if isinstance(getattr(cls, name, None), functools.cached_property))


def drop_views(g: nx.Graph) -> None:
    """Forget the views networkx keeps on ``g`` once they are read (``g.nodes``, ``g.edges``, ``g.succ``, ...).
    Each view holds the graph, so a graph that was read is a reference cycle, which only the cycle
    collector's full collection frees; called where a graph is let go, it is freed at once instead. (A run
    writing graphs.json makes and lets go of two graphs per diagram: at 10x the bundled data 3.2 MB of them
    were left waiting for a full collection.) The graph stays whole: a view is made again when next read.

    >>> import weakref
    >>> g = build_graph({"edges": [{"src": "a", "dst": "b"}]}); n = len(g.edges); gone = weakref.ref(g)
    >>> drop_views(g); del g; gone() is None
    True
    """
    for name in _CACHED_VIEWS & g.__dict__.keys():
        del g.__dict__[name]


def _view(g: nx.MultiDiGraph, keep) -> nx.MultiDiGraph:
    """``g`` with only the edges whose data ``keep`` accepts (``g`` itself when it keeps them all)."""
    if all(keep(d) for nbrs in g._succ.values() for keyed in nbrs.values() for d in keyed.values()):
        return g
    h = nx.MultiDiGraph()
    _add_nodes(h, g._node)
    h.add_edges_from((u, v, k, d) for u, v, k, d in g.edges(keys=True, data=True) if keep(d))
    return h


def _add_nodes(h: nx.MultiDiGraph, attrs: Mapping[str, Mapping[str, Any]], names: Iterable[str] | None = None) -> None:
    """Nodes ``names`` (default: all of ``attrs``) added to ``h`` in that order, each with a copy of its
    attributes in ``attrs`` (a node ``attrs`` lacks: its id's last part as label, a rectangle, no parent).

    (Added bare, then given their attributes: ``add_nodes_from`` with ``(node, attributes)`` pairs finds
    each pair's type by failing to hash it, which costs three times as much.)
    """
    names = list(attrs) if names is None else list(names)
    h.add_nodes_from(names)
    own = h.nodes
    for n in names:
        a = attrs.get(n)
        own[n].update(a if a is not None else {"label": n.split(".")[-1], "shape": "rectangle", "parent": None})


def flow_view(g: nx.MultiDiGraph) -> nx.MultiDiGraph:
    """The flow edges of ``g`` (every node kept): what the questions about the flow walk.

    >>> g = build_graph({"edges": [{"src": "a", "dst": "b"}, {"src": "b", "dst": "db", "classes": ["data"]}]})
    >>> [(e.src, e.dst) for e in graph_edges(flow_view(g))], sorted(flow_view(g).nodes)
    ([('a', 'b')], ['a', 'b', 'db'])
    """
    return _view(g, lambda d: d.get("kind", "flow") == "flow")


def graph_edges(g: nx.MultiDiGraph) -> list[Edge]:
    """All edges of a flow-view graph, in insertion order."""
    return [Edge(u, v, d.get("label") or "", d.get("directed", True)) for u, v, d in g.edges(data=True)]


def out_edges(g: nx.MultiDiGraph, node: str) -> Iterator[tuple[str, Edge]]:
    """(neighbour, edge) for every edge that can be walked out of ``node`` (sorted, deterministic)."""
    if node not in g:
        return iter(())
    # (the adjacency dicts themselves: an edge view object per call costs more than the walk)
    found = [(v, Edge(node, v, d.get("label") or "", d.get("directed", True)))
             for v, keyed in g._succ[node].items() for d in keyed.values()]
    found += [(u, Edge(u, node, d.get("label") or "", False)) for u, keyed in g._pred[node].items() if u != node
              for d in keyed.values() if not d.get("directed", True)]
    return iter(sorted(found))


def edges_between(g: nx.MultiDiGraph, src: str, dst: str) -> list[Edge]:
    """Every edge that can be walked from ``src`` to ``dst``: those of :func:`out_edges` that lead to
    ``dst``, without walking all of ``src``'s edges (unsorted).

    >>> g = build_graph({"edges": [{"src": "a", "dst": "b", "label": "x"}, {"src": "b", "dst": "a", "arrow": "--"},
    ...                            {"src": "a", "dst": "c"}]})
    >>> sorted(edges_between(g, "a", "b")) == sorted(e for v, e in out_edges(g, "a") if v == "b")
    True
    >>> len(edges_between(g, "a", "b")), edges_between(g, "b", "c"), edges_between(g, "z", "a")
    (2, [], [])
    """
    if src not in g:
        return []
    found = [Edge(src, dst, d.get("label") or "", d.get("directed", True)) for d in g._succ[src].get(dst, {}).values()]
    if dst != src:
        found += [Edge(dst, src, d.get("label") or "", False) for d in g._pred[src].get(dst, {}).values()
                  if not d.get("directed", True)]
    return found


def in_edges(g: nx.MultiDiGraph, node: str) -> Iterator[tuple[str, Edge]]:
    """(neighbour, edge) for every edge that can be walked into ``node`` (sorted, deterministic)."""
    if node not in g:
        return iter(())
    found = [(u, Edge(u, node, d.get("label") or "", d.get("directed", True)))
             for u, keyed in g._pred[node].items() for d in keyed.values()]
    found += [(v, Edge(node, v, d.get("label") or "", False)) for v, keyed in g._succ[node].items() if v != node
              for d in keyed.values() if not d.get("directed", True)]
    return iter(sorted(found))


def restrict(g: nx.MultiDiGraph, sub: Subgraph) -> nx.MultiDiGraph:
    """The part of ``g`` that ``sub`` names, as a graph of its own (node attributes kept).

    Edges of ``sub`` that ``g`` does not have are still added (a context may hold
    claims that are not in the diagram); nodes unknown to ``g`` get their id as label. An edge
    keeps the kind (flow, data, association) and the ``parallel`` mark of the edge of ``g`` it
    names (same ends, direction and label); an edge ``g`` lacks is a flow edge.

    >>> g = build_graph({"edges": [{"src": "a", "dst": "db", "label": "reads", "classes": ["data"]}]})
    >>> [d["kind"] for _, _, d in restrict(g, whole(g)).edges(data=True)]
    ['data']
    """
    return copy_kinds(graph_of(sub, g._node), g)


def copy_kinds(h: nx.MultiDiGraph, g: nx.MultiDiGraph) -> nx.MultiDiGraph:
    """``h`` with each edge given the kind and ``parallel`` mark of the edge of ``g`` it names (same
    ends, direction and label); edges ``g`` lacks are left as they are (flow)."""
    for u, v, d in h.edges(data=True):
        same = [x for x in (g._succ[u].get(v, {}).values() if u in g else ())
                if (x.get("label") or "") == d["label"] and x.get("directed", True) == d["directed"]]
        if not same and not d["directed"] and v in g:  # an undirected edge written the other way round
            same = [x for x in g._succ[v].get(u, {}).values()
                    if (x.get("label") or "") == d["label"] and not x.get("directed", True)]
        if same:
            d["kind"] = same[0].get("kind", "flow")
            d["parallel"] = same[0].get("parallel", False)
    return h


def graph_of(sub: Subgraph, node_attrs: Mapping[str, Mapping[str, Any]]) -> nx.MultiDiGraph:
    """:func:`restrict` of a graph whose nodes and their attributes are ``node_attrs`` (without building it).

    >>> h = graph_of(Subgraph.from_edges([Edge("a", "b", "x")]), {"a": {"label": "A", "shape": "oval", "parent": None}})
    >>> dict(h.nodes(data=True)) == {"a": {"label": "A", "shape": "oval", "parent": None},
    ...                              "b": {"label": "b", "shape": "rectangle", "parent": None}}
    True
    """
    h = nx.MultiDiGraph()
    _add_nodes(h, node_attrs, sorted(sub.all_nodes))
    for e in sorted(sub.edges):
        h.add_edge(e.src, e.dst, label=e.label, directed=e.directed, arrow="->" if e.directed else "--")
    return h


def whole(g: nx.MultiDiGraph) -> Subgraph:
    """The whole graph as a :class:`Subgraph`."""
    return Subgraph(frozenset(g.nodes), frozenset(graph_edges(g)))


def node_label(g: nx.MultiDiGraph, node: str) -> str:
    if node in g:
        return str(g.nodes[node].get("label") or node)
    return node.split(".")[-1]


def to_node_link(g: nx.MultiDiGraph) -> dict[str, Any]:
    """Node-link JSON (stable order) for storage."""
    return nx.node_link_data(g, edges="edges")


def dumps(parsed: dict[str, Any]) -> str:
    return json.dumps(parsed, ensure_ascii=False, indent=1)
