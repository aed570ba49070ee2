"""Overlap of a retrieved subgraph with the gold certificate: SRR, precision, F1 (DESIGN.md §5).

Nodes are compared by id, edges by (src, dst) -- in either order for undirected edges; the
label-aware variant also requires equal edge labels. Edges bring their endpoints with them.

Worked example of DESIGN.md §5:

>>> from benchmark.graph import Edge, Subgraph
>>> G = Subgraph.from_edges([Edge("User", "DB")])
>>> R = Subgraph.from_edges([Edge("User", "Auth"), Edge("Auth", "DB")])
>>> o = overlap(R, G)
>>> round(o.srr, 2), o.precision, round(o.f1, 3)
(0.67, 0.4, 0.5)
>>> o.node_srr, o.edge_srr, o.edge_precision
(1.0, 0.0, 0.0)
"""
from __future__ import annotations

from dataclasses import dataclass, fields

from benchmark.graph import Subgraph


@dataclass(frozen=True)
class Overlap:
    """SRR / precision / F1, combined and for nodes and edges alone; ``None`` where undefined."""

    srr: float | None
    precision: float | None
    f1: float | None
    node_srr: float | None
    node_precision: float | None
    node_f1: float | None
    edge_srr: float | None
    edge_precision: float | None
    edge_f1: float | None

    def to_dict(self, prefix: str = "") -> dict[str, float | None]:
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
    """Harmonic mean of recall and precision; ``None`` when either is undefined, 0.0 when both are 0.

    >>> f1(2/3, 0.4), f1(0.0, 0.0), f1(1.0, None) is None
    (0.5, 0.0, True)
    """
    if r is None or p is None:
        return None
    return 0.0 if r + p == 0 else 2 * r * p / (r + p)


def overlap(retrieved: Subgraph, gold: Subgraph, with_label: bool = False) -> Overlap:
    """SRR, precision and F1 of ``retrieved`` against ``gold`` (see module doc).

    >>> from benchmark.graph import Edge, Subgraph
    >>> g = Subgraph.from_edges([Edge("a", "b", "REST")])
    >>> r = Subgraph.from_edges([Edge("a", "b", "gRPC")])
    >>> overlap(r, g).srr, overlap(r, g, with_label=True).srr
    (1.0, 0.6666666666666666)
    >>> overlap(Subgraph(), g).precision is None
    True
    """
    rn, gn = retrieved.all_nodes, gold.all_nodes
    re_ = {e.key(with_label) for e in retrieved.edges}
    ge = {e.key(with_label) for e in gold.edges}
    node_hits, edge_hits = len(rn & gn), len(re_ & ge)
    srr = recall(node_hits + edge_hits, len(gn) + len(ge))
    prec = precision(node_hits + edge_hits, len(rn) + len(re_))
    n_srr, n_prec = recall(node_hits, len(gn)), precision(node_hits, len(rn))
    e_srr, e_prec = recall(edge_hits, len(ge)), precision(edge_hits, len(re_))
    return Overlap(srr, prec, f1(srr, prec), n_srr, n_prec, f1(n_srr, n_prec), e_srr, e_prec, f1(e_srr, e_prec))
