"""Alignment of extracted nodes to D2 nodes, and the extraction scores, on hand-built graphs."""
from __future__ import annotations

from benchmark.extract.align import align, similarity
from benchmark.extract.evaluate import failed, f1, match_edges, score_diagram, summarise, worst
from benchmark.graph import Edge


def _g(nodes, edges=()):
    return {"nodes": [{"id": i, "label": l} for i, l in nodes],
            "edges": [{"src": s, "dst": d, "arrow": a, "label": l} for s, a, d, l in edges]}


REF = _g([("gw", "API Gateway"), ("auth", "Auth Service"), ("db", "Orders DB"), ("q", "Queue")],
         [("gw", "->", "auth", "REST"), ("db", "<-", "auth", "writes"), ("auth", "<->", "q", "")])


def test_alignment_is_one_to_one_and_fuzzy():
    ext = _g([("api-gateway", "API Gatevvay"), ("auth-service", "Auth Service"), ("auth-2", "Auth Service"),
              ("orders", "0rders DB"), ("noise", "zzzz")])
    m = align(ext, REF)
    assert m == {"api-gateway": "gw", "auth-service": "auth", "orders": "db"}
    assert len(set(m.values())) == len(m)


def test_alignment_prefers_the_best_match_over_the_first():
    ext = _g([("a", "Order DB"), ("b", "Orders DB")])
    ref = _g([("db", "Orders DB"), ("odb", "Order DB")])
    assert align(ext, ref) == {"a": "odb", "b": "db"}


def test_similarity_ignores_case_line_breaks_and_lookalike_letters():
    assert similarity("Is user\nvalid?", "is user valid?") == 1.0
    assert similarity("QА одобрил?", "QA одобрил?") == 1.0   # Cyrillic А in the first
    assert similarity("Queue", "Worker") < 0.6


def test_perfect_extraction_scores_one():
    ext = _g([("g", "API Gateway"), ("a", "Auth Service"), ("d", "Orders DB"), ("q", "Queue")],
             [("g", "->", "a", "REST"), ("a", "->", "d", "writes"), ("q", "<->", "a", "")])
    s = score_diagram("x", ext, REF)
    assert (s.node_f1, s.edge_f1, s.label_accuracy) == (1.0, 1.0, 1.0)


def test_wrong_direction_and_wrong_label_are_counted():
    ext = _g([("g", "API Gateway"), ("a", "Auth Service"), ("d", "Orders DB")],
             [("a", "->", "g", "REST"),            # reversed: wrong
              ("a", "->", "d", "write")])          # right edge, wrong label
    s = score_diagram("x", ext, REF)
    assert s.matched_nodes == 3 and s.ref_nodes == 4
    assert s.node_precision == 1.0 and s.node_recall == 0.75
    assert s.matched_edges == 1 and s.ext_edges == 2 and s.ref_edges == 3
    assert s.edge_precision == 0.5 and abs(s.edge_recall - 1 / 3) < 1e-9
    assert abs(s.edge_f1 - f1(0.5, 1 / 3)) < 1e-9
    assert s.labelled_edges == 1 and s.labels_correct == 0 and s.label_accuracy == 0.0


def test_undirected_edges_match_only_undirected_ones_in_either_order():
    ext = [Edge("q", "a", directed=False), Edge("a", "q")]
    ref = [Edge("a", "q", directed=False)]
    pairs = match_edges(ext, ref)
    assert len(pairs) == 1 and pairs[0][0].directed is False


def test_repeated_edges_match_one_to_one():
    ext = [Edge("a", "b"), Edge("a", "b"), Edge("a", "b")]
    ref = [Edge("a", "b", "x"), Edge("a", "b", "y")]
    assert len(match_edges(ext, ref)) == 2


def test_unmeasurable_values_are_none():
    s = score_diagram("x", _g([]), _g([]))
    assert s.node_f1 is None and s.edge_f1 is None and s.label_accuracy is None
    s = score_diagram("x", _g([("a", "A")]), _g([("a", "A")]))
    assert s.edge_f1 is None and s.label_accuracy is None and s.node_f1 == 1.0


def test_summary_pools_counts_and_keeps_failures_out_of_the_means():
    good = score_diagram("good", _g([("g", "API Gateway")]), REF)        # 1 of 4 nodes
    perfect = score_diagram("perfect", _g([("a", "A")]), _g([("a", "A")]))
    s = summarise([good, perfect, failed("broken", "ValueError: bad png")])
    assert s["diagrams"] == 3 and s["failed"] == 1
    assert s["matched_nodes"] == 2 and s["ref_nodes"] == 5
    assert abs(s["node_recall"] - 0.4) < 1e-9
    assert abs(s["macro_node_f1"] - (good.node_f1 + 1.0) / 2) < 1e-9
    assert [d.diagram for d in worst([good, perfect, failed("broken", "x")], 2)] == ["broken", "good"]
