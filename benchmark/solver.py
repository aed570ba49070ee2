"""The reference solver: exact graph reasoning, certificates and what it means to prove an answer.

Everything here is a pure function of a question's structured form and a flow-view graph
(:func:`benchmark.graph.build_graph`). The same function that checks that a gold certificate
proves its answer decides whether a retrieved context is *sufficient* (DESIGN.md §5).

Edge kinds (DESIGN.md §3): every question type walks the *flow* edges only
(:func:`benchmark.graph.flow_view`): a ``class: data`` feed and a ``class: association`` line are
not steps of the flow. The two types that ask about a drawn arrow as such, ``edge_exists`` and
``edge_label``, concern any arrow. A ``path`` answer is any simple path along flow edges.

Forks (DESIGN.md §3): the edges out of a fork whose branches all run carry ``class: parallel``.
A ``yes`` to ``reachable_avoiding`` needs a route that avoids the node in a real run: a route may
leave a fork by a parallel edge only when no *other* parallel branch of that fork reaches the
avoided node (:func:`avoiding_view`), since that branch runs too. Where a route exists only through
such a fork the diagram does not answer the question: the solver gives ``None`` and the validator
refuses it (:func:`parallel_only`). A ``no`` is unaffected (more branches running never avoid more).

>>> from benchmark.graph import Edge, Subgraph
>>> g = build_graph({"nodes": [{"id": n} for n in "abc"],
...                  "edges": [{"src": "a", "dst": "b"}, {"src": "b", "dst": "c"}]})
>>> solve("reachable", {"source": "a", "target": "c"}, g)
True
>>> sorted(propose_certificate("reachable", {"source": "a", "target": "c"}, g)[1].all_nodes)
['a', 'b', 'c']
"""
from __future__ import annotations

import re
from collections import deque
from typing import Any, Iterable

import networkx as nx

from benchmark.graph import (Edge, Subgraph, build_graph, edge_hits, edges_between, flow_view,  # noqa: F401
                             in_edges, node_label, out_edges, restrict, whole)
from benchmark.questions import ABSTAIN, QUESTION_TYPES, Question, split_branches

#: the question types solved by the functions at the end of this module
NEW_TYPES = frozenset({"scenario", "necessary", "graph_count", "inside", "absent"})


def _norm(text: str) -> str:
    return " ".join(str(text).split()).casefold()


def _bfs(g: nx.MultiDiGraph, source: str, avoid: str | None = None) -> dict[str, tuple[str, Edge] | None]:
    """Breadth-first search over walkable edges; returns node -> (parent, edge) (sorted, deterministic)."""
    if source not in g or source == avoid:
        return {}
    parents: dict[str, tuple[str, Edge] | None] = {source: None}
    queue = deque([source])
    while queue:
        u = queue.popleft()
        for v, e in out_edges(g, u):
            if v == avoid or v in parents:
                continue
            parents[v] = (u, e)
            queue.append(v)
    return parents


def _path_edges(parents: dict[str, tuple[str, Edge] | None], target: str) -> list[Edge]:
    edges: list[Edge] = []
    node = target
    while parents.get(node) is not None:
        prev, e = parents[node]  # type: ignore[misc]
        edges.append(e)
        node = prev
    return edges[::-1]


def _path_nodes(source: str, edges: list[Edge]) -> tuple[str, ...]:
    nodes = [source]
    for e in edges:
        nodes.append(e.dst if e.src == nodes[-1] else e.src)
    return tuple(nodes)


def _successors(g: nx.MultiDiGraph, node: str) -> frozenset[str]:
    return frozenset(v for v, _ in out_edges(g, node))


def _predecessors(g: nx.MultiDiGraph, node: str) -> frozenset[str]:
    return frozenset(u for u, _ in in_edges(g, node))


def _reaches(g: nx.MultiDiGraph, s: str, t: str, avoid: str | None = None) -> bool:
    return t in _bfs(g, s, avoid) and t != avoid


#: question types about a drawn arrow as such: they concern every edge, whatever its kind
ANY_ARROW_TYPES = frozenset({"edge_exists", "edge_label"})


def walked(qtype: str, g: nx.MultiDiGraph) -> nx.MultiDiGraph:
    """The edges of ``g`` that questions of ``qtype`` reason over: all of them for
    :data:`ANY_ARROW_TYPES`, else the flow edges (:func:`benchmark.graph.flow_view`)."""
    return g if qtype in ANY_ARROW_TYPES else flow_view(g)


def avoiding_view(g: nx.MultiDiGraph, avoid: str) -> nx.MultiDiGraph:
    """The flow edges of ``g`` that a run avoiding ``avoid`` can take: all of them except a
    ``class: parallel`` edge F -> X when another parallel edge of the same fork F leads to a node
    that reaches ``avoid`` (or is it): that branch runs too.

    >>> g = build_graph({"edges": [{"src": "f", "dst": "x", "classes": ["parallel"]}, {"src": "f", "dst": "y", "classes": ["parallel"]},
    ...                            {"src": "y", "dst": "c"}, {"src": "x", "dst": "e"}]})
    >>> sorted((e.src, e.dst) for e in _edges(avoiding_view(g, "c"))), len(_edges(avoiding_view(g, "e")))
    ([('f', 'y'), ('x', 'e'), ('y', 'c')], 3)
    """
    f = flow_view(g)
    reaches_avoid: dict[str, bool] = {}

    def runs_into(node: str) -> bool:
        if node not in reaches_avoid:
            reaches_avoid[node] = node == avoid or avoid in _bfs(f, node)
        return reaches_avoid[node]

    blocked = set()
    for u, v, k, d in f.edges(keys=True, data=True):
        if d.get("parallel"):
            siblings = {w for _, w, dd in f.out_edges(u, data=True) if dd.get("parallel") and w != v}
            if any(runs_into(w) for w in siblings):
                blocked.add((u, v, k))
    if not blocked:
        return f
    h = nx.MultiDiGraph()
    h.add_nodes_from(f.nodes(data=True))
    h.add_edges_from((u, v, k, d) for u, v, k, d in f.edges(keys=True, data=True) if (u, v, k) not in blocked)
    return h


def _edges(g: nx.MultiDiGraph) -> list[Edge]:
    return [Edge(u, v, d.get("label") or "", d.get("directed", True)) for u, v, d in g.edges(data=True)]


def parallel_only(qtype: str, args: dict[str, str], g: nx.MultiDiGraph) -> bool:
    """True when a ``reachable_avoiding`` route exists only through a ``class: parallel`` fork whose
    other branch reaches the avoided node, so that ``g`` does not answer the question (see the
    module docstring).

    >>> g = build_graph({"edges": [{"src": "s", "dst": "f"}, {"src": "f", "dst": "x", "classes": ["parallel"]},
    ...                            {"src": "f", "dst": "y", "classes": ["parallel"]}, {"src": "x", "dst": "j"},
    ...                            {"src": "y", "dst": "j"}, {"src": "j", "dst": "e"}]})
    >>> parallel_only("reachable_avoiding", {"source": "s", "target": "e", "avoid": "x"}, g)
    True
    >>> solve("reachable_avoiding", {"source": "s", "target": "e", "avoid": "x"}, g) is None
    True
    >>> solve("reachable_avoiding", {"source": "s", "target": "e", "avoid": "j"}, g), solve("reachable", {"source": "s", "target": "e"}, g)
    (False, True)
    """
    if qtype != "reachable_avoiding" or args["source"] not in g:
        return False
    a = args
    return (_reaches(flow_view(g), a["source"], a["target"], a["avoid"])
            and not _reaches(avoiding_view(g, a["avoid"]), a["source"], a["target"], a["avoid"]))


def solve(qtype: str, args: dict[str, str], g: nx.MultiDiGraph) -> Any:
    """The answer to a structured question on graph ``g`` (canonical form), or ``None`` when
    ``g`` does not determine one (no such branch, no path, ambiguous label, a witness only
    through a parallel fork)."""
    a = args
    if qtype in NEW_TYPES:
        return _solve_new(qtype, args, g)
    g = walked(qtype, g)
    if qtype == "edge_exists":
        return any(v == a["target"] for v, _ in out_edges(g, a["source"]))
    if qtype == "reachable":
        return a["source"] in g and _reaches(g, a["source"], a["target"])
    if qtype == "reachable_avoiding":
        if a["source"] not in g:
            return False
        if _reaches(avoiding_view(g, a["avoid"]), a["source"], a["target"], a["avoid"]):
            return True
        return None if _reaches(g, a["source"], a["target"], a["avoid"]) else False
    if qtype == "common_downstream":
        return _reaches(g, a["first"], a["target"]) and _reaches(g, a["second"], a["target"])
    if qtype == "path":
        parents = _bfs(g, a["source"])
        if a["target"] not in parents:
            return None
        return _path_nodes(a["source"], _path_edges(parents, a["target"]))
    if qtype == "successors":
        return _successors(g, a["node"])
    if qtype == "predecessors":
        return _predecessors(g, a["node"])
    if qtype == "count_out":
        return len(_successors(g, a["node"]))
    if qtype == "count_in":
        return len(_predecessors(g, a["node"]))
    if qtype == "edge_label":
        labels = {e.label for v, e in out_edges(g, a["source"]) if v == a["target"]}
        return labels.pop() if len(labels) == 1 else None
    if qtype == "decision_outcome":
        targets = {v for v, e in out_edges(g, a["node"]) if e.label and _norm(e.label) == _norm(a["branch"])}
        return targets.pop() if len(targets) == 1 else None
    raise ValueError(f"unknown question type {qtype!r}")


def is_path_in(g: nx.MultiDiGraph, path: Iterable[str]) -> bool:
    """True when consecutive nodes of ``path`` are joined by walkable edges of ``g`` (of any kind:
    pass the view that the question walks)."""
    path = list(path)
    if not path or any(n not in g for n in path):
        return False
    return all(any(v == b for v, _ in out_edges(g, a)) for a, b in zip(path, path[1:]))


def is_route(args: dict[str, str], path: Any, g: nx.MultiDiGraph) -> bool:
    """Is ``path`` an answer to a ``path`` question on ``g``: a simple path (no node twice) from
    the source to the target along flow edges?

    >>> g = build_graph({"edges": [{"src": "a", "dst": "b"}, {"src": "b", "dst": "c"}, {"src": "a", "dst": "c"},
    ...                            {"src": "b", "dst": "a"}, {"src": "a", "dst": "d", "classes": ["data"]}]})
    >>> is_route({"source": "a", "target": "c"}, ("a", "b", "c"), g), is_route({"source": "a", "target": "c"}, ("a", "c"), g)
    (True, True)
    >>> is_route({"source": "a", "target": "c"}, ("a", "b", "a", "c"), g), is_route({"source": "a", "target": "d"}, ("a", "d"), g)
    (False, False)
    """
    p = tuple(path)
    return (len(p) >= 1 and p[0] == args["source"] and p[-1] == args["target"] and len(set(p)) == len(p)
            and is_path_in(flow_view(g), p))


def answers_match(qtype: str, args: dict[str, str], predicted: Any, gold: Any, g: nx.MultiDiGraph) -> bool:
    """Equality of two canonical answers; for ``path`` both must be routes of the diagram ``g``
    (:func:`is_route`): any simple path is accepted, not only the one annotated."""
    if predicted is None or gold is None:
        return False
    if QUESTION_TYPES[qtype].kind == "path":
        return is_route(args, predicted, g) and is_route(args, gold, g)
    if QUESTION_TYPES[qtype].kind == "label":
        return _norm(predicted) == _norm(gold)
    return predicted == gold


def _closure(g: nx.MultiDiGraph, source: str, avoid: str | None = None) -> Subgraph:
    """The closed set of ``source`` in the graph without ``avoid`` (DESIGN.md §4): ``source``, every
    node reachable from it there, and every edge of that graph leaving those nodes; edges into
    ``avoid`` are not part of it.

    >>> from benchmark.graph import build_graph
    >>> g = build_graph({"edges": [{"src": "a", "dst": "c"}, {"src": "c", "dst": "b"}, {"src": "a", "dst": "d"}]})
    >>> c = _closure(g, "a", avoid="c")
    >>> sorted(c.all_nodes), [(e.src, e.dst) for e in sorted(c.edges)]
    (['a', 'd'], [('a', 'd')])
    >>> sorted(_closure(g, "a").all_nodes)
    ['a', 'b', 'c', 'd']
    """
    reached = _bfs(g, source, avoid) if source != avoid else {}
    nodes = set(reached) | {source}
    edges = {e for n in reached for v, e in out_edges(g, n) if v != avoid}
    return Subgraph.from_edges(edges, nodes)


def closures(qtype: str, args: dict[str, str], answer: Any, g: nx.MultiDiGraph) -> list[Subgraph]:
    """The closed sets (any one suffices) that a certificate of ``answer`` must contain; ``[]`` when none is needed."""
    t = QUESTION_TYPES[qtype]
    if not (t.always_closed or (t.closed_when_false and answer is False) or (t.closed_when_nonempty and answer)):
        return []
    if qtype in NEW_TYPES:
        return _closures_new(qtype, args, answer, g)
    a = args
    g = walked(qtype, g)
    if qtype == "edge_exists":
        edges = [e for _, e in out_edges(g, a["source"])]
        return [Subgraph.from_edges(edges, [a["source"], a["target"]])]
    if qtype == "reachable":
        return [_closure(g, a["source"])]
    if qtype == "reachable_avoiding":
        return [_closure(g, a["source"], a["avoid"])]
    if qtype == "common_downstream":
        failing = [_closure(g, a[k]) for k in ("first", "second") if not _reaches(g, a[k], a["target"])]
        # when both sides do reach the target, "no" is wrong: only both closed sets together can be
        # asked for, and they show the target reached
        return failing or [_closure(g, a["first"]).union(_closure(g, a["second"]))]
    if qtype in ("successors", "count_out"):
        return [Subgraph.from_edges([e for _, e in out_edges(g, a["node"])], [a["node"]])]
    if qtype in ("predecessors", "count_in"):
        return [Subgraph.from_edges([e for _, e in in_edges(g, a["node"])], [a["node"]])]
    raise ValueError(f"no closure defined for {qtype!r}")  # pragma: no cover


#: question types whose answer depends on an edge label: only there do labels count
LABEL_TYPES = frozenset({"edge_label", "decision_outcome", "scenario"})


def _contains(outer: Subgraph, inner: Subgraph, with_label: bool = False) -> bool:
    """Every node and edge of ``inner`` is in ``outer`` (edges by :func:`benchmark.graph.edges_match`)."""
    return (inner.all_nodes <= outer.all_nodes
            and edge_hits(outer.edges, inner.edges, with_label)[0] == len(inner.edges))


def proves(qtype: str, args: dict[str, str], answer: Any, sub: Subgraph, g: nx.MultiDiGraph,
           needed: list[Subgraph] | None = None) -> bool:
    """Does ``sub`` (a certificate, or any retrieved context) prove ``answer`` about diagram ``g``?

    The solver, run on ``sub`` alone, must return ``answer``, and for negative or universal
    questions ``sub`` must contain a closed set of ``g``. This is DESIGN.md's *sufficiency*.
    ``needed`` is :func:`closures` of the same question, answer and ``g`` when the caller has them
    (one question tried against many subgraphs); otherwise they are computed here.
    """
    h = restrict(g, sub)
    if not answers_match(qtype, args, solve(qtype, args, h), answer, g):
        return False
    if qtype == "graph_count":
        return covers_graph(args["what"], sub, g)
    if needed is None:
        needed = closures(qtype, args, answer, g)
    return not needed or any(_contains(sub, c, qtype in LABEL_TYPES) for c in needed)


def droppable(qtype: str, args: dict[str, str], answer: Any, cert: Subgraph, g: nx.MultiDiGraph) -> list[str]:
    """Elements of ``cert`` that can be dropped while it still proves ``answer`` (empty = minimal)."""
    cert = cert.normalized()
    found = []
    for e in sorted(cert.edges):
        if proves(qtype, args, answer, Subgraph(cert.nodes, cert.edges - {e}), g):
            found.append(f"edge {e.src} -> {e.dst}" + (f" [{e.label}]" if e.label else ""))
    endpoints = {e.src for e in cert.edges} | {e.dst for e in cert.edges}
    for n in sorted(cert.nodes - endpoints):
        if proves(qtype, args, answer, Subgraph(cert.nodes - {n}, cert.edges), g):
            found.append(f"node {n}")
    return found


def _minimise(qtype: str, args: dict[str, str], answer: Any, cert: Subgraph, g: nx.MultiDiGraph,
              needed: list[Subgraph] | None = None) -> Subgraph:
    """``cert`` without every edge, then every node, that it still proves ``answer`` without
    (``needed``: :func:`closures` of the question on ``g``, computed here when not given)."""
    if needed is None:
        needed = closures(qtype, args, answer, g)
    cert = cert.normalized()
    for e in sorted(cert.edges):
        smaller = Subgraph(cert.nodes, cert.edges - {e})
        if proves(qtype, args, answer, smaller, g, needed):
            cert = smaller
    endpoints = {e.src for e in cert.edges} | {e.dst for e in cert.edges}
    for n in sorted(cert.nodes - endpoints):
        smaller = Subgraph(cert.nodes - {n}, cert.edges)
        if proves(qtype, args, answer, smaller, g, needed):
            cert = smaller
    return cert


def _shortest(g: nx.MultiDiGraph, s: str, t: str, avoid: str | None = None) -> Subgraph:
    parents = _bfs(g, s, avoid)
    return Subgraph.from_edges(_path_edges(parents, t), [s, t])


def propose_certificate(qtype: str, args: dict[str, str], g: nx.MultiDiGraph) -> tuple[Any, Subgraph]:
    """The solver's answer and a minimal certificate for it, for an annotator to review."""
    answer = solve(qtype, args, g)
    if answer is None:
        return None, Subgraph()
    needed = closures(qtype, args, answer, g)
    if needed:
        closed = min(needed, key=lambda c: (len(c.all_nodes) + len(c.edges), sorted(c.all_nodes)))
        if qtype == "necessary":  # the closed sets hold no way past the steps: add the paths through them
            closed = closed.union(whole_between(g, args["source"], args["target"]))
        # a directed and an undirected edge between the same nodes can share one identity (Edge.key)
        return answer, _minimise(qtype, args, answer, closed, g, needed)
    a = args
    w = walked(qtype, g)
    if qtype == "necessary":  # an empty answer: the paths that show no step is on all of them
        cert = whole_between(g, a["source"], a["target"])
    elif qtype == "graph_count":
        cert = whole(flow_edges_only(g))
    elif qtype == "inside":  # the node and the containers around it, out to the one asked about
        chain = ancestors_chain(g, a["node"])[0]
        cert = Subgraph(frozenset([a["node"], *chain[:chain.index(a["container"]) + 1]]))
    elif qtype in ("reachable", "path"):
        cert = _shortest(w, a["source"], a["target"])
    elif qtype == "reachable_avoiding":
        cert = _shortest(avoiding_view(w, a["avoid"]), a["source"], a["target"], a["avoid"])
    elif qtype == "common_downstream":
        cert = _shortest(w, a["first"], a["target"]).union(_shortest(w, a["second"], a["target"]))
    elif qtype in ("edge_exists", "edge_label"):
        cert = Subgraph.from_edges([min(e for v, e in out_edges(g, a["source"]) if v == a["target"])])
    elif qtype == "decision_outcome":
        cert = Subgraph.from_edges([min(e for v, e in out_edges(w, a["node"])
                                        if v == answer and _norm(e.label) == _norm(a["branch"]))])
    else:  # pragma: no cover - every type is handled above
        raise ValueError(qtype)
    return answer, _minimise(qtype, args, answer, cert, g, needed)


def shortest_paths(g: nx.MultiDiGraph, source: str, target: str, avoid: str | None = None,
                   limit: int = 64) -> list[Subgraph]:
    """Every shortest walkable path from ``source`` to ``target`` (not entering ``avoid``), each as a
    certificate (parallel edges give one path each); at most ``limit``, in a sorted, stable order.

    >>> g = build_graph({"edges": [{"src": "a", "dst": "b"}, {"src": "b", "dst": "d"},
    ...                            {"src": "a", "dst": "c"}, {"src": "c", "dst": "d", "arrow": "--"}]})
    >>> [sorted((e.src, e.dst) for e in p.edges) for p in shortest_paths(g, "a", "d")]
    [[('a', 'b'), ('b', 'd')], [('a', 'c'), ('c', 'd')]]
    """
    if source not in g or source == avoid:
        return []
    dist = {source: 0}
    order = deque([source])
    while order:  # breadth-first distances over walkable edges
        u = order.popleft()
        for v, _ in out_edges(g, u):
            if v != avoid and v not in dist:
                dist[v] = dist[u] + 1
                order.append(v)
    if target not in dist or target == avoid:
        return []
    found: list[Subgraph] = []

    def back(node: str, tail: list[Edge]) -> None:
        if len(found) >= limit:
            return
        if node == source:
            found.append(Subgraph.from_edges(tail, [source, target]))
            return
        for u, e in in_edges(g, node):
            if u != avoid and dist.get(u) == dist[node] - 1:
                back(u, [e] + tail)

    back(target, [])
    return found


def simple_routes(g: nx.MultiDiGraph, source: str, target: str, limit: int = 64) -> list[Subgraph]:
    """The first ``limit`` simple paths from ``source`` to ``target`` over walkable edges of ``g``,
    shortest first (ties in a stable order), each as a certificate: every answer to a ``path``
    question is one of them.

    >>> g = build_graph({"edges": [{"src": "a", "dst": "b"}, {"src": "b", "dst": "d"}, {"src": "a", "dst": "c"},
    ...                            {"src": "c", "dst": "e"}, {"src": "e", "dst": "d"}]})
    >>> [sorted(e.src + e.dst for e in p.edges) for p in simple_routes(g, "a", "d")]
    [['ab', 'bd'], ['ac', 'ce', 'ed']]
    """
    if source not in g or target not in g:
        return []
    simple = nx.DiGraph()
    simple.add_nodes_from(sorted(g.nodes))
    for u in sorted(g.nodes):
        for v, e in out_edges(g, u):
            if v != u and not simple.has_edge(u, v):
                simple.add_edge(u, v, edge=e)
    if not nx.has_path(simple, source, target):
        return []
    found: list[Subgraph] = []
    for nodes in nx.shortest_simple_paths(simple, source, target):
        found.append(Subgraph.from_edges([simple.edges[a, b]["edge"] for a, b in zip(nodes, nodes[1:])], [source, target]))
        if len(found) >= limit:
            break
    return found


#: how many alternative certificates are compared at most (several shortest paths)
MAX_CERTIFICATES = 64


def valid_certificates(qtype: str, args: dict[str, str], answer: Any, annotated: Subgraph, g: nx.MultiDiGraph,
                       limit: int = MAX_CERTIFICATES) -> list[Subgraph]:
    """The annotated certificate first, then the other certificates as valid as it: the other
    shortest witness paths of a positive reachability question, the other routes of a path
    question (any route is an answer; the first ``limit``, shortest first), the other edges of an
    existing edge. Closed sets (negative and universal answers) have no alternative.

    >>> g = build_graph({"edges": [{"src": "a", "dst": "b"}, {"src": "b", "dst": "d"},
    ...                            {"src": "a", "dst": "c"}, {"src": "c", "dst": "d"}]})
    >>> top = Subgraph.from_edges([Edge("a", "b"), Edge("b", "d")])
    >>> [sorted(e.src + e.dst for e in c.edges) for c in valid_certificates("reachable", {"source": "a", "target": "d"}, True, top, g)]
    [['ab', 'bd'], ['ac', 'cd']]
    """
    out = [annotated]
    a = args
    alternatives: list[Subgraph] = []
    if closures(qtype, args, answer, g):
        return out
    w = walked(qtype, g)
    if qtype == "reachable" and answer is True:
        alternatives = shortest_paths(w, a["source"], a["target"], limit=limit)
    elif qtype == "path" and answer is not None:  # any route is an answer, so any route is a certificate
        alternatives = simple_routes(w, a["source"], a["target"], limit=limit)
    elif qtype == "reachable_avoiding" and answer is True:
        alternatives = shortest_paths(avoiding_view(w, a["avoid"]), a["source"], a["target"], a["avoid"], limit=limit)
    elif qtype == "common_downstream" and answer is True:
        firsts = shortest_paths(w, a["first"], a["target"], limit=limit)
        seconds = shortest_paths(w, a["second"], a["target"], limit=limit)
        alternatives = [f.union(s) for f in firsts for s in seconds][:limit]
    elif qtype == "edge_exists" and answer is True:
        alternatives = [Subgraph.from_edges([e]) for e in sorted(edges_between(g, a["source"], a["target"]))]
    size = len(annotated.edges) if qtype != "path" else None
    for c in alternatives:
        if c != annotated and (size is None or len(c.edges) <= size) and proves(qtype, args, answer, c, g):
            out.append(c)
    return out


def resolve_certificate(cert: Subgraph, g: nx.MultiDiGraph) -> tuple[Subgraph, list[str]]:
    """Match an annotated certificate's edges to the diagram's edges (direction, label).

    Returns the resolved certificate and a list of problems (elements not in the diagram).
    An edge written without a label matches the diagram's edge between those nodes; one
    written in reverse matches an undirected edge.
    """
    problems: list[str] = []
    edges: set[Edge] = set()
    for n in sorted(cert.nodes):
        if n not in g:
            problems.append(f"node {n!r} is not in the diagram")
    for e in sorted(cert.edges):
        cands = edges_between(g, e.src, e.dst)
        if e.label:
            cands = [c for c in cands if _norm(c.label) == _norm(e.label)]
        if not cands:
            problems.append(f"edge {e.src} -> {e.dst}" + (f" [{e.label}]" if e.label else "") + " is not in the diagram")
            continue
        # several diagram edges may fit: prefer one in the written direction, then one with the exact label
        edges.add(min(cands, key=lambda c: ((c.src, c.dst) != (e.src, e.dst), c.label != e.label, c)))
    return Subgraph(frozenset(n for n in cert.nodes if n in g), frozenset(edges)), problems


def question_proves(q: Question, sub: Subgraph, g: nx.MultiDiGraph) -> bool:
    """:func:`proves` for a loaded :class:`Question` and its gold answer."""
    return proves(q.type, q.arg, q.answer, sub, g)


# --- the question kinds over several decisions, every path, the whole graph, containers and absent names ---

def scenario_walk(g: nx.MultiDiGraph, start: str, branches: list[str]) -> tuple[str | None, list[str]]:
    """Walk a ``scenario`` (DESIGN.md §4): from ``start``, a node with one way out (one distinct next
    node) is left by it; at a node with several, the next of ``branches`` is taken (the labelled edge
    whose label equals it; it must lead to one node). The walk stops at a node with no way out, or at
    a node with several when every branch has been taken. Returns (the node where it stops, the nodes
    walked in order); the node is ``None`` when the branches do not fit (no such label, an ambiguous
    one, a branch left over at the end) or the walk loops for ever.

    >>> g = build_graph({"edges": [{"src": "s", "dst": "d"}, {"src": "d", "dst": "x", "label": "yes"},
    ...                            {"src": "d", "dst": "y", "label": "no"}, {"src": "y", "dst": "z"}]})
    >>> scenario_walk(g, "s", ["no"]), scenario_walk(g, "s", []), scenario_walk(g, "s", ["maybe"])[0]
    (('z', ['s', 'd', 'y', 'z']), ('d', ['s', 'd']), None)
    """
    if start not in g:
        return None, []
    node, i, walked, seen = start, 0, [start], set()
    while (node, i) not in seen:
        seen.add((node, i))
        outs = list(out_edges(g, node))
        targets = {v for v, _ in outs}
        if not targets:
            return (node if i == len(branches) else None), walked
        if len(targets) > 1:
            if i == len(branches):
                return node, walked
            taken = {v for v, e in outs if e.label and _norm(e.label) == _norm(branches[i])}
            if len(taken) != 1:
                return None, walked
            i += 1
            node = taken.pop()
        else:
            node = next(iter(targets))
        walked.append(node)
    return None, walked


def necessary_steps(g: nx.MultiDiGraph, source: str, target: str) -> frozenset[str] | None:
    """The nodes other than ``source`` and ``target`` that lie on every path from ``source`` to
    ``target`` (the dominators of ``target`` among the paths from ``source``); ``None`` when there is
    no such path or the two are one node.

    >>> g = build_graph({"edges": [{"src": "a", "dst": "b"}, {"src": "b", "dst": "c"}, {"src": "b", "dst": "d"},
    ...                            {"src": "c", "dst": "e"}, {"src": "d", "dst": "e"}]})
    >>> sorted(necessary_steps(g, "a", "e")), necessary_steps(g, "e", "a")
    (['b'], None)
    """
    if source == target or not _reaches(g, source, target):
        return None
    return frozenset(n for n in _bfs(g, source) if n not in (source, target) and not _reaches(g, source, target, n))


def end_states(g: nx.MultiDiGraph) -> frozenset[str]:
    """Nodes that some flow edge enters and no flow edge leaves (DESIGN.md §4).

    >>> sorted(end_states(build_graph({"nodes": [{"id": "note"}], "edges": [{"src": "a", "dst": "b"}]})))
    ['b']
    """
    return frozenset(n for n in g if next(in_edges(g, n), None) is not None and next(out_edges(g, n), None) is None)


def _alternative(g: nx.MultiDiGraph, e: Edge) -> bool:
    """Is ``e`` a labelled branch, not one of a fork's parallel branches (an edge the graph marks
    ``parallel``, when it marks them)?"""
    if not e.label:
        return False
    found = [d for d in g.get_edge_data(e.src, e.dst, default={}).values() if (d.get("label") or "") == e.label]
    found += [d for d in g.get_edge_data(e.dst, e.src, default={}).values()
              if (d.get("label") or "") == e.label and not d.get("directed", True)]
    return not found or not all(d.get("parallel", False) for d in found)


def decisions(g: nx.MultiDiGraph) -> frozenset[str]:
    """Nodes whose labelled outgoing flow edges lead to at least two different nodes (DESIGN.md §4);
    labelled edges that a graph marks as the parallel branches of a fork are not alternatives.

    >>> g = build_graph({"edges": [{"src": "d", "dst": "x", "label": "yes"}, {"src": "d", "dst": "y", "label": "no"},
    ...                            {"src": "f", "dst": "x"}, {"src": "f", "dst": "y"}]})
    >>> sorted(decisions(g))
    ['d']
    """
    return frozenset(n for n in g if len({v for v, e in out_edges(g, n) if _alternative(g, e)}) >= 2)


def ancestors_chain(g: nx.MultiDiGraph, node: str) -> tuple[list[str], bool]:
    """The containers around ``node``, innermost first, as far as ``g`` has them, and whether the
    chain is complete (it ends at a top-level node rather than at a container ``g`` lacks)."""
    chain: list[str] = []
    n = node
    while n in g:
        parent = g.nodes[n].get("parent")
        if parent is None:
            return chain, True
        if parent not in g or parent in chain:
            return chain, False
        chain.append(parent)
        n = parent
    return chain, False


def is_inside(g: nx.MultiDiGraph, container: str, node: str) -> bool | None:
    """Is ``node`` drawn inside ``container``, at any depth? ``None`` when ``g`` lacks the node or a
    container between (so it cannot tell).

    >>> g = build_graph({"nodes": [{"id": "vpc"}, {"id": "vpc.app", "parent": "vpc"}, {"id": "lb"}]})
    >>> is_inside(g, "vpc", "vpc.app"), is_inside(g, "vpc", "lb"), is_inside(g, "lb", "vpc.app")
    (True, False, False)
    """
    if node not in g:
        return None
    chain, complete = ancestors_chain(g, node)
    if container in chain:
        return True
    return False if complete else None


def _entity_words(text: str) -> tuple[str, ...]:
    return tuple(re.findall(r"\w+", str(text).casefold()))


def _holds(words: tuple[str, ...], part: tuple[str, ...]) -> bool:
    return bool(part) and any(words[i:i + len(part)] == part for i in range(len(words) - len(part) + 1))


def named_like(g: nx.MultiDiGraph, entity: str) -> list[str]:
    """Nodes whose label or id names ``entity``: one's words hold the other's, in order (so "Fraud
    Check" names "Fraud Check Service" and "Check"). What an ``absent`` question asks about must match none.

    >>> g = build_graph({"nodes": [{"id": "fc", "label": "Fraud Check Service"}, {"id": "db", "label": "Orders DB"}]})
    >>> named_like(g, "fraud check"), named_like(g, "Ledger")
    (['fc'], [])
    """
    want = _entity_words(entity)
    found = []
    for n in sorted(g):
        for name in (node_label(g, n), n.split(".")[-1].replace("_", " ")):
            have = _entity_words(name)
            if _holds(have, want) or _holds(want, have):
                found.append(n)
                break
    return found


def flow_edges_only(g: nx.MultiDiGraph) -> nx.MultiDiGraph:
    """``g`` without the edges whose ``kind`` is not ``flow`` (``class: data`` / ``class: association``
    edges, when the graph marks them): what the new question types walk. ``g`` itself when every
    edge is a flow edge.

    >>> g = build_graph({"edges": [{"src": "a", "dst": "b"}]})
    >>> flow_edges_only(g) is g
    True
    >>> g.add_edge("b", "db", label="", directed=True, kind="data")
    0
    >>> [(u, v) for u, v in flow_edges_only(g).edges()], sorted(flow_edges_only(g).nodes)
    ([('a', 'b')], ['a', 'b', 'db'])
    """
    if all(d.get("kind", "flow") == "flow" for _, _, d in g.edges(data=True)):
        return g
    h = nx.MultiDiGraph()
    h.add_nodes_from(g.nodes(data=True))
    h.add_edges_from((u, v, k, d) for u, v, k, d in g.edges(keys=True, data=True) if d.get("kind", "flow") == "flow")
    return h


def _solve_new(qtype: str, args: dict[str, str], g: nx.MultiDiGraph) -> Any:
    a = args
    g = flow_edges_only(g)
    if qtype == "scenario":
        return scenario_walk(g, a["start"], split_branches(a["branches"]))[0]
    if qtype == "necessary":
        return necessary_steps(g, a["source"], a["target"])
    if qtype == "graph_count":
        return len(end_states(g) if a["what"] == "end_states" else decisions(g))
    if qtype == "inside":
        return is_inside(g, a["container"], a["node"])
    if qtype == "absent":
        named = named_like(g, a["entity"])
        return named[0] if named else ABSTAIN
    raise ValueError(f"unknown question type {qtype!r}")


def _closures_new(qtype: str, args: dict[str, str], answer: Any, g: nx.MultiDiGraph) -> list[Subgraph]:
    a = args
    g = flow_edges_only(g)
    if qtype == "scenario":
        walked = scenario_walk(g, a["start"], split_branches(a["branches"]))[1]
        return [Subgraph.from_edges([e for n in walked for _, e in out_edges(g, n)], walked)]
    if qtype == "necessary":
        closed = Subgraph()
        for n in sorted(answer or ()):
            closed = closed.union(_closure(g, a["source"], n))
        return [closed]
    if qtype == "inside":
        return [Subgraph(frozenset([a["node"], *ancestors_chain(g, a["node"])[0]]))]
    if qtype == "absent":
        return [Subgraph(frozenset(g.nodes))]
    return []  # graph_count: see _covers_graph


def _edge_keys(sub: Subgraph) -> set[tuple]:
    return {e.key(True) for e in sub.edges}


def covers_graph(what: str, sub: Subgraph, g: nx.MultiDiGraph) -> bool:
    """Does ``sub`` hold what proves a ``graph_count`` of ``g`` (a universal claim over the whole
    diagram)? Every node of ``g``, and

    * ``end_states``: for every node with a way out, one edge out; for every end state, one edge in;
    * ``decisions``: for every decision, labelled edges out to two different nodes; for every other
      node, all of its labelled edges out (so it is seen to have no second labelled branch).

    >>> g = build_graph({"edges": [{"src": "a", "dst": "b"}, {"src": "a", "dst": "c"}]})
    >>> covers_graph("end_states", Subgraph.from_edges([Edge("a", "b"), Edge("a", "c")]), g)
    True
    >>> covers_graph("end_states", Subgraph.from_edges([Edge("a", "b")]), g)   # c not shown
    False
    """
    if not set(g.nodes) <= sub.all_nodes:
        return False
    g = flow_edges_only(g)
    have = _edge_keys(sub)
    if what == "end_states":
        ends = end_states(g)
        for n in g:
            outs = [e for _, e in out_edges(g, n)]
            if outs and not any(e.key(True) in have for e in outs):
                return False
            if n in ends and not any(e.key(True) in have for _, e in in_edges(g, n)):
                return False
        return True
    dec = decisions(g)
    for n in g:
        labelled = [(v, e) for v, e in out_edges(g, n) if _alternative(g, e)]
        shown = {v for v, e in labelled if e.key(True) in have}
        if n in dec and len(shown) < 2:
            return False
        if n not in dec and any(e.key(True) not in have for _, e in labelled):
            return False
    return True


def whole_between(g: nx.MultiDiGraph, source: str, target: str) -> Subgraph:
    """Every edge on some walk from ``source`` to ``target``: edges between nodes that ``source``
    reaches and that reach ``target`` (flow edges only)."""
    g = flow_edges_only(g)
    ahead = set(_bfs(g, source))
    edges = [e for n in ahead for v, e in out_edges(g, n) if v in ahead and _reaches(g, v, target) or v == target]
    return Subgraph.from_edges(edges, [source, target])
