"""Overlap of a retrieved subgraph with the gold certificate: SRR, precision, F1 (DESIGN.md §5).

The headline SRR is the seed's: the share of the gold certificate's *edges* that were retrieved.
Node SRR (the share of its nodes) is reported beside it and never mixed into it.

* Edges are compared in flow direction, ``(src, dst)``. An undirected edge -- on either side --
  matches an edge between the same two nodes in either order: one symmetric rule, the same
  whatever the node ids are called (:func:`edges_match`).
* ``with_label`` (used for the questions that depend on a label: ``edge_label``,
  ``decision_outcome``) also requires equal labels (case and spacing ignored).
* A certificate without edges (a "no" from a node with no way out) is scored on its nodes:
  SRR, precision and F1 are then the node ones.
* Precision is unmeasured (``None``) when nothing that could be compared was retrieved; F1 is
  0 when nothing was retrieved (an empty retrieval is not "unmeasured", it is a miss).

Worked example of the seed (DESIGN.md §5):

>>> from benchmark.graph import Edge, Subgraph, edge_hits, edges_match  # noqa: F401  (edges_match: the rule, re-exported)
>>> G = Subgraph.from_edges([Edge("A", "B"), Edge("B", "C"), Edge("C", "D")])
>>> R = Subgraph.from_edges([Edge("A", "B"), Edge("B", "C"), Edge("X", "Y")])
>>> o = overlap(R, G)
>>> round(o.srr, 4), round(o.precision, 4), round(o.f1, 4), o.node_srr
(0.6667, 0.6667, 0.6667, 0.75)

A retrieval that misses the only gold edge scores 0, whatever nodes it holds:

>>> o = overlap(Subgraph.from_edges([Edge("User", "Auth"), Edge("Auth", "DB")]), Subgraph.from_edges([Edge("User", "DB")]))
>>> o.srr, o.precision, o.f1, o.node_srr
(0.0, 0.0, 0.0, 1.0)
"""
from __future__ import annotations

from dataclasses import dataclass, fields

from benchmark.graph import Edge, Subgraph, edge_hits, edges_match  # noqa: F401  (edges_match: the rule, re-exported)


@dataclass(frozen=True)
class Overlap:
    """Headline (edge) SRR / precision / F1 and node SRR / precision; ``None`` where unmeasured,
    with the reason in ``precision_reason``."""

    srr: float | None
    precision: float | None
    f1: float | None
    node_srr: float | None
    node_precision: float | None
    precision_reason: str | None = None

    def to_dict(self, prefix: str = "") -> dict[str, float | str | None]:
        return {prefix + f.name: getattr(self, f.name) for f in fields(self)}


def recall(hits: int, gold: int) -> float:
    """Share of the gold that was retrieved; 1.0 when there is no gold to find.

    >>> recall(2, 3), recall(0, 0)
    (0.6666666666666666, 1.0)
    """
    return 1.0 if gold == 0 else hits / gold


def precision(hits: int, retrieved: int) -> float | None:
    """Share of the retrieved that is gold; ``None`` (undefined) when nothing was retrieved.

    >>> precision(2, 5), precision(0, 0) is None
    (0.4, True)
    """
    return None if retrieved == 0 else hits / retrieved


def f1(r: float | None, p: float | None) -> float | None:
    """Harmonic mean of recall and precision; 0.0 when recall is 0 (whatever the precision, even
    undefined); ``None`` only when recall is undefined or recall > 0 with no precision.

    >>> f1(2/3, 0.4), f1(0.0, 0.0), f1(0.0, None), f1(1.0, None) is None
    (0.5, 0.0, 0.0, True)
    """
    if r is None:
        return None
    if r == 0:
        return 0.0
    if p is None:
        return None
    return 0.0 if r + p == 0 else 2 * r * p / (r + p)


def overlap(retrieved: Subgraph, gold: Subgraph, with_label: bool = False) -> Overlap:
    """SRR, precision and F1 of ``retrieved`` against ``gold`` (see module doc).

    >>> from benchmark.graph import Edge, Subgraph, edge_hits, edges_match  # noqa: F401  (edges_match: the rule, re-exported)
    >>> g = Subgraph.from_edges([Edge("a", "b", "REST")])
    >>> r = Subgraph.from_edges([Edge("a", "b", "gRPC")])
    >>> overlap(r, g).srr, overlap(r, g, with_label=True).srr
    (1.0, 0.0)
    >>> o = overlap(Subgraph(), g)
    >>> o.srr, o.precision, o.f1, o.precision_reason
    (0.0, None, 0.0, 'empty context')

    A certificate with no edge is scored on its nodes:

    >>> o = overlap(Subgraph(frozenset({"a", "z"})), Subgraph(frozenset({"a"})))
    >>> o.srr, o.precision, o.f1, o.node_srr
    (1.0, 0.5, 0.6666666666666666, 1.0)
    """
    rn, gn = retrieved.all_nodes, gold.all_nodes
    node_hits = len(rn & gn)
    n_srr, n_prec = recall(node_hits, len(gn)), precision(node_hits, len(rn))
    reason = None
    if retrieved.is_empty():
        reason = "empty context"
    if gold.edges:
        g_hit, r_hit = edge_hits(retrieved.edges, gold.edges, with_label)
        srr, prec = recall(g_hit, len(gold.edges)), precision(r_hit, len(retrieved.edges))
        if prec is None and reason is None:
            reason = "no edge in the context"
    else:  # an edge-less certificate: its nodes are all there is to retrieve
        srr, prec = n_srr, n_prec
    score = 0.0 if retrieved.is_empty() else f1(srr, prec)  # nothing retrieved is a miss, never unmeasured
    return Overlap(srr, prec, score, n_srr, n_prec, reason if prec is None else None)


def best_overlap(retrieved: Subgraph, certificates: list[Subgraph], with_label: bool = False) -> tuple[Overlap, int]:
    """The overlap with the valid certificate that best matches ``retrieved`` (highest SRR, then
    precision, then node SRR; the first listed on ties) and that certificate's index.

    >>> from benchmark.graph import Edge, Subgraph, edge_hits, edges_match  # noqa: F401  (edges_match: the rule, re-exported)
    >>> top = Subgraph.from_edges([Edge("a", "b"), Edge("b", "d")])
    >>> bottom = Subgraph.from_edges([Edge("a", "c"), Edge("c", "d")])
    >>> o, i = best_overlap(bottom, [top, bottom])
    >>> o.srr, o.precision, i
    (1.0, 1.0, 1)
    """
    if not certificates:
        raise ValueError("no certificate to score against")
    scored = [(overlap(retrieved, c, with_label), i) for i, c in enumerate(certificates)]

    def rank(item: tuple[Overlap, int]) -> tuple:
        o, i = item
        return (o.srr or 0.0, -1.0 if o.precision is None else o.precision, o.node_srr or 0.0, -i)

    return max(scored, key=rank)
