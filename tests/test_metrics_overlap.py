"""SRR / precision / F1 (DESIGN.md §5), incl. the worked example, label-aware and undirected edges."""
import doctest
import importlib

import pytest

from benchmark.graph import Edge, Subgraph
from benchmark.metrics.overlap import overlap

METRIC_MODULES = ["overlap", "names", "accuracy", "sufficiency", "claims", "faithfulness", "guess", "stats", "sample"]


def test_worked_example_of_the_design():
    gold = Subgraph.from_edges([Edge("User", "DB")])
    retrieved = Subgraph.from_edges([Edge("User", "Auth"), Edge("Auth", "DB")])
    o = overlap(retrieved, gold)
    assert o.srr == pytest.approx(2 / 3)
    assert o.precision == pytest.approx(2 / 5)
    assert o.f1 == pytest.approx(2 * (2 / 3) * 0.4 / (2 / 3 + 0.4))
    assert (o.node_srr, o.node_precision) == (1.0, pytest.approx(2 / 3))
    assert (o.edge_srr, o.edge_precision, o.edge_f1) == (0.0, 0.0, 0.0)


def test_empty_gold_is_full_recall_and_empty_retrieval_has_no_precision():
    r = Subgraph.from_edges([Edge("a", "b")])
    assert overlap(r, Subgraph()).srr == 1.0
    o = overlap(Subgraph(), Subgraph.from_edges([Edge("a", "b")]))
    assert o.srr == 0.0 and o.precision is None and o.f1 is None and o.edge_precision is None


def test_label_aware_variant_separates_protocols():
    gold = Subgraph.from_edges([Edge("api", "svc", "REST")])
    wrong = Subgraph.from_edges([Edge("api", "svc", "gRPC")])
    assert overlap(wrong, gold).edge_srr == 1.0
    assert overlap(wrong, gold, with_label=True).edge_srr == 0.0
    assert overlap(gold, gold, with_label=True).srr == 1.0


def test_undirected_edges_match_in_either_order_directed_do_not():
    gold = Subgraph.from_edges([Edge("a", "b", directed=False)])
    assert overlap(Subgraph.from_edges([Edge("b", "a", directed=False)]), gold).edge_srr == 1.0
    dgold = Subgraph.from_edges([Edge("a", "b")])
    assert overlap(Subgraph.from_edges([Edge("b", "a")]), dgold).edge_srr == 0.0


def test_isolated_gold_node_counts():
    gold = Subgraph(frozenset({"a", "b"}), frozenset())
    o = overlap(Subgraph(frozenset({"a"}), frozenset()), gold)
    assert o.srr == 0.5 and o.precision == 1.0 and o.edge_srr == 1.0 and o.edge_precision is None


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
