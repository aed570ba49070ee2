"""The flow-view graph (DESIGN.md §3): arrows, undirected walking, Edge identity, restrict, Subgraph JSON."""
import doctest
import json

import pytest

import benchmark.graph as graph_module
from benchmark.graph import (Edge, Subgraph, build_graph, graph_edges, in_edges, node_label, out_edges, restrict,
                             to_node_link, whole)


def parsed(edges, nodes=()):
    """Parser-shaped dict from ``(src, arrow, dst, label)`` tuples."""
    return {"nodes": [dict(n) for n in nodes],
            "edges": [{"src": s, "dst": d, "arrow": a, "label": lab, "directed": a in ("->", "<-")}
                      for s, a, d, lab in edges]}


def test_doctests():
    assert doctest.testmod(graph_module).failed == 0


def test_reverse_arrow_is_stored_in_flow_direction():
    g = build_graph(parsed([("a", "<-", "b", "reads")]))
    assert [(u, v) for u, v in g.edges()] == [("b", "a")]
    data = next(iter(g.edges(data=True)))[2]
    assert data == {"label": "reads", "directed": True, "arrow": "<-", "kind": "flow", "parallel": False}
    assert [v for v, _ in out_edges(g, "b")] == ["a"]
    assert list(out_edges(g, "a")) == []


@pytest.mark.parametrize("arrow", ["<->", "--"])
def test_undirected_edges_walk_both_ways_and_keep_text_order(arrow):
    g = build_graph(parsed([("a", arrow, "b", "sync")]))
    assert graph_edges(g) == [Edge("a", "b", "sync", directed=False)]
    assert list(out_edges(g, "a")) == [("b", Edge("a", "b", "sync", False))]
    assert list(out_edges(g, "b")) == [("a", Edge("a", "b", "sync", False))]
    assert list(in_edges(g, "a")) == [("b", Edge("a", "b", "sync", False))]
    assert list(in_edges(g, "b")) == [("a", Edge("a", "b", "sync", False))]


def test_directed_edge_is_walked_one_way_only():
    g = build_graph(parsed([("a", "->", "b", "")]))
    assert [v for v, _ in out_edges(g, "a")] == ["b"]
    assert list(out_edges(g, "b")) == []
    assert [u for u, _ in in_edges(g, "b")] == ["a"]
    assert list(in_edges(g, "a")) == []


def test_undirected_self_loop_is_listed_once():
    g = build_graph(parsed([("a", "--", "a", "")]))
    assert list(out_edges(g, "a")) == [("a", Edge("a", "a", "", False))]
    assert list(in_edges(g, "a")) == [("a", Edge("a", "a", "", False))]


def test_parallel_edges_are_all_kept_and_sorted():
    g = build_graph(parsed([("a", "->", "b", "REST"), ("a", "->", "b", "gRPC"), ("a", "->", "c", "")]))
    assert sorted(e.label for v, e in out_edges(g, "a") if v == "b") == ["REST", "gRPC"]
    assert list(out_edges(g, "a")) == sorted(out_edges(g, "a"))


def test_out_edges_of_unknown_node_is_empty():
    g = build_graph(parsed([("a", "->", "b", "")]))
    assert list(out_edges(g, "zz")) == [] and list(in_edges(g, "zz")) == []


def test_nodes_keep_attributes_and_implicit_nodes_get_their_last_id_segment():
    g = build_graph({"nodes": [{"id": "vpc", "label": "VPC", "shape": "rectangle", "parent": None},
                               {"id": "vpc.web", "label": None, "shape": None, "parent": "vpc"}],
                     "edges": [{"src": "vpc.web", "dst": "ext.db", "arrow": "->"}]})
    assert g.nodes["vpc"] == {"label": "VPC", "shape": "rectangle", "parent": None}
    assert g.nodes["vpc.web"] == {"label": "web", "shape": "rectangle", "parent": "vpc"}
    assert g.nodes["ext.db"]["label"] == "db"
    assert node_label(g, "vpc") == "VPC" and node_label(g, "missing.thing") == "thing"


def test_unknown_arrow_is_rejected():
    with pytest.raises(ValueError, match="unknown arrow"):
        build_graph(parsed([("a", "=>", "b", "")]))


def test_edge_key_is_order_free_only_when_undirected():
    assert Edge("b", "a", directed=False).key() == Edge("a", "b", directed=False).key() == ("a", "b")
    assert Edge("b", "a").key() != Edge("a", "b").key()
    assert Edge("a", "b", "x").key() == ("a", "b")
    assert Edge("b", "a", "x", directed=False).key(with_label=True) == ("a", "b", "x")
    assert Edge("a", "b", "x").key(with_label=True) != Edge("a", "b", "y").key(with_label=True)


def test_edge_to_list_omits_an_empty_label():
    assert Edge("a", "b").to_list() == ["a", "b"]
    assert Edge("a", "b", "yes").to_list() == ["a", "b", "yes"]


def test_subgraph_edges_bring_their_endpoints():
    sub = Subgraph(frozenset({"x"}), frozenset({Edge("b", "a", "l")}))
    assert sub.all_nodes == {"x", "a", "b"}
    assert sub.normalized() == Subgraph(frozenset({"x", "a", "b"}), sub.edges)
    assert not sub.is_empty() and Subgraph().is_empty()
    assert Subgraph.from_edges([Edge("a", "b")], ["c"]).nodes == {"a", "b", "c"}
    u = sub.union(Subgraph.from_edges([Edge("c", "d")]))
    assert u.all_nodes == {"a", "b", "c", "d", "x"} and len(u.edges) == 2


def test_subgraph_json_is_sorted_and_round_trips():
    sub = Subgraph.from_edges([Edge("c", "a", "yes"), Edge("a", "b")], ["z"])
    data = sub.to_json()
    assert data == {"nodes": ["a", "b", "c", "z"], "edges": [["a", "b"], ["c", "a", "yes"]]}
    assert json.loads(json.dumps(data)) == data
    from benchmark.questions import certificate_from_json
    assert certificate_from_json(data) == Subgraph(frozenset(data["nodes"]), sub.edges)


def test_restrict_keeps_attributes_and_only_what_the_subgraph_names():
    g = build_graph({"nodes": [{"id": "a", "label": "Alpha", "shape": "cylinder"}, {"id": "b"}, {"id": "c"}],
                     "edges": [{"src": "a", "dst": "b", "label": "x"}, {"src": "b", "dst": "c"}]})
    h = restrict(g, Subgraph.from_edges([Edge("a", "b", "x")]))
    assert set(h.nodes) == {"a", "b"}
    assert h.nodes["a"]["label"] == "Alpha" and h.nodes["a"]["shape"] == "cylinder"
    assert [(e.src, e.dst, e.label) for e in graph_edges(h)] == [("a", "b", "x")]


def test_restrict_adds_claimed_edges_and_unknown_nodes():
    g = build_graph(parsed([("a", "->", "b", "")]))
    h = restrict(g, Subgraph.from_edges([Edge("b", "ghost.node", "made up")]))
    assert h.nodes["ghost.node"]["label"] == "node"
    assert [v for v, _ in out_edges(h, "b")] == ["ghost.node"]


def test_restrict_keeps_undirected_edges_walkable_both_ways():
    g = build_graph(parsed([("a", "--", "b", "")]))
    h = restrict(g, whole(g))
    assert [v for v, _ in out_edges(h, "b")] == ["a"]
    assert graph_edges(h) == graph_edges(g)


def test_whole_and_node_link_cover_every_node_and_edge():
    g = build_graph(parsed([("a", "->", "b", "1"), ("b", "<->", "c", "")], nodes=[{"id": "lonely"}]))
    w = whole(g)
    assert w.nodes == {"a", "b", "c", "lonely"} and len(w.edges) == 2
    data = to_node_link(g)
    assert json.loads(json.dumps(data)) == data
    assert len(data["nodes"]) == 4 and len(data["edges"]) == 2


def test_edges_between_is_out_edges_to_that_node():
    """Every pair of a graph with parallel, reversed, undirected and self-loop edges."""
    import itertools
    import random

    rng = random.Random(7)
    nodes = ["a", "b", "c", "d"]
    for _ in range(40):
        edges = [(rng.choice(nodes), rng.choice(["->", "<-", "--", "<->"]), rng.choice(nodes), rng.choice(["", "x", "y"]))
                 for _ in range(rng.randint(0, 9))]
        g = build_graph(parsed(edges, nodes=[{"id": n} for n in nodes]))
        for src, dst in itertools.product(nodes + ["zz"], repeat=2):
            expected = sorted(e for v, e in out_edges(g, src) if v == dst)
            assert sorted(graph_module.edges_between(g, src, dst)) == expected, (edges, src, dst)
