"""Evidence attribution: the edges an answer cites, mapped to the diagram's edges by their node
labels, and scored against the question's gold certificate.

Unlike faithfulness (are the claims true of the context the answerer saw?), this asks whether the
answer points at the structure that proves the answer -- for image input, where no text context
exists, it is the only grounding signal.

>>> from benchmark.graph import Edge, Subgraph, build_graph
>>> g = build_graph({"nodes": [{"id": "u", "label": "User"}, {"id": "c", "label": "Cache"}, {"id": "d", "label": "DB"}],
...                  "edges": [{"src": "u", "dst": "c"}, {"src": "c", "dst": "d", "label": "miss"}]})
>>> cited = cite_edges([("User", "Cache"), ("Cache [miss]", "DB"), ("DB", "User"), ("Cache", "Moon")], g)
>>> cited.mapped, cited.unmapped
((('c', 'd'), ('u', 'c')), 2)
>>> evidence_scores(cited, Subgraph.from_edges([Edge("c", "d", "miss")]))
{'evidence_recall': 1.0, 'evidence_precision': 0.25, 'evidence_cited': 4, 'evidence_unmapped': 2}
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

import networkx as nx

from benchmark.graph import Subgraph, edges_between
from benchmark.metrics.names import node_matcher

@dataclass(frozen=True)
class CitedEdges:
    """Distinct cited pairs: those that name an edge of the diagram (as edge keys, sorted) and how
    many name none (an unknown node, or two nodes with no edge between them in that direction)."""

    mapped: tuple[tuple[str, ...], ...]
    unmapped: int

    @property
    def cited(self) -> int:
        return len(self.mapped) + self.unmapped


def cite_edges(evidence: Iterable[tuple[str, str]], g: nx.MultiDiGraph) -> CitedEdges:
    """Map cited ``(source label, target label)`` pairs to edges of ``g`` (labels matched as the
    claims are: id, exact label, then fuzzy; a trailing ``[edge label]`` copied from the context is
    ignored). A pair counts once however often it is cited."""
    match = node_matcher(g)
    seen: set[tuple[str, str]] = set()
    mapped: set[tuple[str, ...]] = set()
    unmapped = 0
    for src, dst in evidence:
        pair = (str(src).strip().casefold(), str(dst).strip().casefold())
        if pair in seen:
            continue
        seen.add(pair)
        ends = [match(str(src)), match(str(dst))]  # a trailing "[edge label]" is dropped by the matcher
        edge = next((e for s in ends[0] for d in ends[1] for e in edges_between(g, s, d)), None)
        if edge is None:
            unmapped += 1
        else:
            mapped.add(edge.key())
    return CitedEdges(tuple(sorted(mapped)), unmapped)


def evidence_scores(cited: CitedEdges, gold: Subgraph) -> dict[str, float | int | None]:
    """Evidence recall (share of the certificate's edges cited; None when it has none) and precision
    (share of the distinct cited pairs that are certificate edges; None when nothing was cited)."""
    gold_keys = {e.key() for e in gold.edges}
    hits = len(gold_keys & set(cited.mapped))
    return {"evidence_recall": hits / len(gold_keys) if gold_keys else None,
            "evidence_precision": hits / cited.cited if cited.cited else None,
            "evidence_cited": cited.cited, "evidence_unmapped": cited.unmapped}
