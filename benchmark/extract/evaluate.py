"""How well extraction recovered a diagram: node F1, directed-edge F1, edge-label accuracy, nesting
accuracy.

Nodes are aligned to the D2 graph by label (:mod:`.align`). A found node is nested right when its
container is the one its D2 node lies in, aligned (or both are top-level): what ``inside`` questions
ask of the extracted graph. An extracted edge is correct when
its aligned ends and its direction match a D2 edge in the flow view (``a <- b`` is ``b -> a``;
undirected edges match in either order and only undirected edges). Edge labels are compared on
the correctly found edges whose D2 edge has a label. Values that cannot be measured are None.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Iterable

from benchmark.extract.align import align, normalise_label
from benchmark.graph import Edge, build_graph, graph_edges


@dataclass(frozen=True)
class DiagramScore:
    """Counts and figures for one diagram (None where a figure is undefined)."""

    diagram: str
    ref_nodes: int
    ext_nodes: int
    matched_nodes: int
    ref_edges: int
    ext_edges: int
    matched_edges: int
    labelled_edges: int
    labels_correct: int
    node_precision: float | None
    node_recall: float | None
    node_f1: float | None
    edge_precision: float | None
    edge_recall: float | None
    edge_f1: float | None
    label_accuracy: float | None
    error: str | None = None
    warnings: tuple[str, ...] = ()
    #: found nodes whose container is their D2 node's (both top-level counts), and their share
    nested_right: int = 0
    nesting_accuracy: float | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def ratio(num: int, den: int) -> float | None:
    """``num / den``, or None when ``den`` is 0.

    >>> ratio(1, 4), ratio(0, 0)
    (0.25, None)
    """
    return num / den if den else None


def f1(precision: float | None, recall: float | None) -> float | None:
    """Harmonic mean; None when either side is unmeasured.

    >>> f1(1.0, 0.5)
    0.6666666666666666
    >>> f1(0.0, 0.0), f1(None, 1.0)
    (0.0, None)
    """
    if precision is None or recall is None:
        return None
    return 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)


def flow_edges(parsed: dict[str, Any]) -> list[Edge]:
    """Edges of the flow view of a parse-form graph."""
    return graph_edges(build_graph(parsed))


def match_edges(extracted: Iterable[Edge], reference: Iterable[Edge]) -> list[tuple[Edge, Edge]]:
    """One-to-one (extracted, reference) pairs with equal ends and direction.

    >>> ext = [Edge("a", "b"), Edge("c", "b", directed=False), Edge("b", "a")]
    >>> ref = [Edge("a", "b", "x"), Edge("b", "c", directed=False)]
    >>> [(e.src, r.src) for e, r in match_edges(ext, ref)]
    [('a', 'a'), ('c', 'b')]
    """
    pool: dict[tuple, list[Edge]] = {}
    for r in reference:
        pool.setdefault((r.key(), r.directed), []).append(r)
    pairs = []
    for e in extracted:
        cands = pool.get((e.key(), e.directed))
        if cands:
            pairs.append((e, cands.pop(0)))
    return pairs


def score_diagram(diagram: str, extracted: dict[str, Any], reference: dict[str, Any]) -> DiagramScore:
    """Extraction against the D2 graph of the same diagram.

    >>> ref = {"nodes": [{"id": "a", "label": "Start"}, {"id": "b", "label": "Orders DB"}],
    ...        "edges": [{"src": "b", "dst": "a", "arrow": "<-", "label": "reads"}]}
    >>> ext = {"nodes": [{"id": "start", "label": "Start"}, {"id": "orders-db", "label": "Orders DB"},
    ...                  {"id": "x", "label": "zzz"}],
    ...        "edges": [{"src": "start", "dst": "orders-db", "arrow": "->", "label": "reads"}]}
    >>> s = score_diagram("d", ext, ref)
    >>> s.matched_nodes, round(s.node_f1, 2), s.edge_f1, s.label_accuracy, s.nesting_accuracy
    (2, 0.8, 1.0, 1.0, 1.0)
    >>> ref["nodes"][1]["parent"] = "a"; score_diagram("d", ext, ref).nested_right
    1
    """
    mapping = align(extracted, reference)
    renamed = {
        "nodes": [{**n, "id": mapping.get(n["id"], "ocr:" + n["id"]),
                   "parent": None} for n in extracted.get("nodes", [])],
        "edges": [{**e, "src": mapping.get(e["src"], "ocr:" + e["src"]),
                   "dst": mapping.get(e["dst"], "ocr:" + e["dst"])} for e in extracted.get("edges", [])],
    }
    ext_edges = flow_edges(renamed)
    ref_edges = flow_edges(reference)
    pairs = match_edges(ext_edges, ref_edges)
    labelled = [(e, r) for e, r in pairs if r.label]
    correct = sum(1 for e, r in labelled if normalise_label(e.label) == normalise_label(r.label))
    n_ref, n_ext, n_match = len(reference.get("nodes", [])), len(extracted.get("nodes", [])), len(mapping)
    ref_parent = {n["id"]: n.get("parent") for n in reference.get("nodes", [])}
    nested = sum(1 for n in extracted.get("nodes", []) if n["id"] in mapping
                 and (mapping.get(n["parent"], "ocr:" + n["parent"]) if n.get("parent") else None)
                 == ref_parent.get(mapping[n["id"]]))
    np_, nr = ratio(n_match, n_ext), ratio(n_match, n_ref)
    ep, er = ratio(len(pairs), len(ext_edges)), ratio(len(pairs), len(ref_edges))
    return DiagramScore(
        diagram=diagram, ref_nodes=n_ref, ext_nodes=n_ext, matched_nodes=n_match,
        ref_edges=len(ref_edges), ext_edges=len(ext_edges), matched_edges=len(pairs),
        labelled_edges=len(labelled), labels_correct=correct,
        node_precision=np_, node_recall=nr, node_f1=f1(np_, nr) if (n_ref or n_ext) else None,
        edge_precision=ep, edge_recall=er,
        edge_f1=f1(ep, er) if ep is not None and er is not None else (0.0 if (ep is None) != (er is None) else None),
        label_accuracy=ratio(correct, len(labelled)), warnings=tuple(extracted.get("warnings", ())),
        nested_right=nested, nesting_accuracy=ratio(nested, n_match))


def failed(diagram: str, error: str) -> DiagramScore:
    """The record of a diagram whose extraction or reference could not be read."""
    return DiagramScore(diagram, 0, 0, 0, 0, 0, 0, 0, 0, None, None, None, None, None, None, None, error)


def summarise(scores: list[DiagramScore]) -> dict[str, Any]:
    """Overall figures: micro (pooled counts) and macro (mean of per-diagram values), plus counts.

    >>> a = score_diagram("a", {"nodes": [{"id": "x", "label": "X"}], "edges": []},
    ...                   {"nodes": [{"id": "x", "label": "X"}], "edges": []})
    >>> s = summarise([a, failed("b", "boom")])
    >>> s["node_f1"], s["diagrams"], s["failed"], s["edge_f1"]
    (1.0, 2, 1, None)
    """
    ok = [s for s in scores if s.error is None]
    tot = {k: sum(getattr(s, k) for s in ok) for k in (
        "ref_nodes", "ext_nodes", "matched_nodes", "ref_edges", "ext_edges", "matched_edges",
        "labelled_edges", "labels_correct", "nested_right")}
    npr, nre = ratio(tot["matched_nodes"], tot["ext_nodes"]), ratio(tot["matched_nodes"], tot["ref_nodes"])
    epr, ere = ratio(tot["matched_edges"], tot["ext_edges"]), ratio(tot["matched_edges"], tot["ref_edges"])

    def mean(name: str) -> float | None:
        vals = [getattr(s, name) for s in ok if getattr(s, name) is not None]
        return sum(vals) / len(vals) if vals else None

    return {
        "diagrams": len(scores), "failed": len(scores) - len(ok),
        "warned": sum(1 for s in ok if s.warnings), **tot,
        "node_precision": npr, "node_recall": nre, "node_f1": f1(npr, nre),
        "edge_precision": epr, "edge_recall": ere, "edge_f1": f1(epr, ere),
        "label_accuracy": ratio(tot["labels_correct"], tot["labelled_edges"]),
        "nesting_accuracy": ratio(tot["nested_right"], tot["matched_nodes"]),
        "macro_node_f1": mean("node_f1"), "macro_edge_f1": mean("edge_f1"),
        "macro_label_accuracy": mean("label_accuracy"),
    }


def worst(scores: list[DiagramScore], n: int = 5) -> list[DiagramScore]:
    """The ``n`` diagrams with the lowest edge F1 (then node F1); failures first."""
    def key(s: DiagramScore) -> tuple:
        return (s.error is None, s.edge_f1 if s.edge_f1 is not None else 2.0,
                s.node_f1 if s.node_f1 is not None else 2.0, s.diagram)
    return sorted(scores, key=key)[:n]
