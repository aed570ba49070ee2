"""SRR / precision / F1 (DESIGN.md §5): the seed's worked example, edge SRR as the headline, node SRR
apart, the edge-less rule, label-aware only where asked, one symmetric rule for undirected edges,
the best of several certificates."""
import doctest
import importlib

import pytest

from benchmark.graph import Edge, Subgraph, build_graph
from benchmark.metrics import overlap
from benchmark.metrics.overlap import best_overlap
from benchmark.metrics.sample import gold_certificates, gold_closures, score_context
from benchmark.questions import Question

METRIC_MODULES = ["overlap", "names", "accuracy", "sufficiency", "claims", "faithfulness", "guess", "stats", "sample",
                  "abstention", "paired"]


def test_worked_example_of_the_seed_through_the_public_api():
    gold = Subgraph.from_edges([Edge("A", "B"), Edge("B", "C"), Edge("C", "D")])
    retrieved = Subgraph.from_edges([Edge("A", "B"), Edge("B", "C"), Edge("X", "Y")])
    o = overlap(retrieved, gold)
    assert o.srr == pytest.approx(2 / 3)
    assert o.precision == pytest.approx(2 / 3) and o.f1 == pytest.approx(2 / 3)
    assert o.node_srr == pytest.approx(3 / 4) and o.node_precision == pytest.approx(3 / 5)


def test_missing_the_only_gold_edge_scores_zero_whatever_nodes_were_retrieved():
    o = overlap(Subgraph.from_edges([Edge("User", "Auth"), Edge("Auth", "DB")]), Subgraph.from_edges([Edge("User", "DB")]))
    assert (o.srr, o.precision, o.f1) == (0.0, 0.0, 0.0) and o.node_srr == 1.0


def test_nothing_retrieved_is_f1_zero_and_precision_unmeasured_with_a_reason():
    o = overlap(Subgraph(), Subgraph.from_edges([Edge("a", "b")]))
    assert o.srr == 0.0 and o.f1 == 0.0 and o.precision is None and o.precision_reason == "empty context"
    o = overlap(Subgraph(frozenset({"a"})), Subgraph.from_edges([Edge("a", "b")]))
    assert o.f1 == 0.0 and o.precision is None and o.precision_reason == "no edge in the context"


def test_edgeless_certificate_is_scored_on_its_nodes():
    gold = Subgraph(frozenset({"a", "b"}), frozenset())
    o = overlap(Subgraph(frozenset({"a"}), frozenset()), gold)
    assert o.srr == 0.5 == o.node_srr and o.precision == 1.0 and o.f1 == pytest.approx(2 / 3)
    assert overlap(Subgraph.from_edges([Edge("a", "c")]), Subgraph(frozenset({"a"}))).srr == 1.0


def test_labels_count_only_when_asked():
    gold = Subgraph.from_edges([Edge("api", "svc", "REST")])
    wrong = Subgraph.from_edges([Edge("api", "svc", "gRPC")])
    assert overlap(wrong, gold).srr == 1.0
    assert overlap(wrong, gold, with_label=True).srr == 0.0
    assert overlap(gold, gold, with_label=True).srr == 1.0


@pytest.mark.parametrize("src,dst", [("a", "b"), ("b", "a")])
def test_undirected_context_edges_match_by_one_rule_whatever_the_ids_sort(src, dst):
    gold = Subgraph.from_edges([Edge(src, dst)])
    assert overlap(Subgraph.from_edges([Edge(src, dst, directed=False)]), gold).srr == 1.0
    assert overlap(Subgraph.from_edges([Edge(dst, src, directed=False)]), gold).srr == 1.0
    assert overlap(Subgraph.from_edges([Edge(dst, src)]), gold).srr == 0.0   # directed the wrong way
    ugold = Subgraph.from_edges([Edge(src, dst, directed=False)])
    assert overlap(Subgraph.from_edges([Edge(dst, src)]), ugold).srr == 1.0


def test_score_context_uses_the_certificate_that_best_matches_the_context():
    # two equally short paths a -> b -> d and a -> c -> d; the question lists the first
    g = build_graph({"edges": [{"src": "a", "dst": "b"}, {"src": "b", "dst": "d"},
                               {"src": "a", "dst": "c"}, {"src": "c", "dst": "d"}]})
    q = Question("q", "x", "t", "reachable", (("source", "a"), ("target", "d")), True,
                 Subgraph.from_edges([Edge("a", "b"), Edge("b", "d")]))
    assert len(gold_certificates(q, g)) == 2
    other = Subgraph.from_edges([Edge("a", "c"), Edge("c", "d")])
    m = score_context(q, g, other)
    assert m["sufficient"] and m["srr"] == 1.0 and m["precision"] == 1.0 and m["certificate_index"] == 1
    # a longer path is no certificate: it proves the answer but scores against the shortest
    assert best_overlap(other, [q.certificate])[0].srr == 0.0


def test_score_context_checks_a_context_against_the_questions_closed_sets():
    # "does a reach d?" no: a context proves it only when it holds every edge out of what a reaches
    g = build_graph({"edges": [{"src": "a", "dst": "b"}, {"src": "b", "dst": "c"}, {"src": "d", "dst": "a"}]})
    q = Question("q", "x", "t", "reachable", (("source", "a"), ("target", "d")), False,
                 Subgraph.from_edges([Edge("a", "b"), Edge("b", "c")]))
    needed = gold_closures(q, g)
    assert [c.edges for c in needed] == [{Edge("a", "b"), Edge("b", "c")}]
    part, closed = Subgraph.from_edges([Edge("a", "b")]), Subgraph.from_edges([Edge("a", "b"), Edge("b", "c")])
    for ctx, sufficient in ((part, False), (closed, True)):
        assert score_context(q, g, ctx)["sufficient"] is sufficient
        assert score_context(q, g, ctx, needed=needed) == score_context(q, g, ctx)   # given once per question
    assert score_context(q, g, part, needed=[])["sufficient"]   # the closed sets given are those checked


@pytest.mark.parametrize("name", METRIC_MODULES)
def test_doctests_of_metric_modules(name):
    module = importlib.import_module(f"benchmark.metrics.{name}")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0, f"{name} has no doctest"
    assert result.failed == 0


def test_doctests_of_answers_module():
    import benchmark.answers

    result = doctest.testmod(benchmark.answers)
    assert result.attempted > 0 and result.failed == 0
