"""The context given to an answerer: subgraph, graph and text."""
from benchmark.context import Context, context_text, make_context
from benchmark.graph import Edge, Subgraph, build_graph, whole

G = build_graph({
    "nodes": [{"id": "auth", "label": "Auth Service"}, {"id": "db", "label": "Orders DB", "shape": "cylinder"},
              {"id": "log", "label": "Audit\nLog"}, {"id": "cache", "label": "Cache"}, {"id": "q", "label": "Queue"}],
    "edges": [{"src": "auth", "dst": "db", "label": "reads"},
              {"src": "db", "dst": "log", "arrow": "<->"},
              {"src": "cache", "dst": "auth", "arrow": "--", "label": "warm"},
              {"src": "q", "dst": "auth", "arrow": "<-"}],
})


def test_text_lists_edges_then_lone_nodes_with_labels_sorted():
    sub = Subgraph(frozenset({"auth", "db", "q", "cache"}),
                   frozenset({Edge("auth", "db", "reads"), Edge("auth", "q")}))
    ctx = make_context("d1", sub, G)
    assert ctx.text.splitlines() == ["Auth Service -> Orders DB [reads]", "Auth Service -> Queue", "Cache"]
    assert "auth" not in ctx.text  # labels, never ids


def test_undirected_edges_keep_their_arrow_and_labels_are_one_line():
    text = context_text(whole(G), G)
    assert "Orders DB <-> Audit Log" in text.splitlines()
    assert "Cache -- Auth Service [warm]" in text.splitlines()


def test_graph_is_the_restriction_with_attributes():
    sub = Subgraph.from_edges([Edge("auth", "db", "reads")])
    ctx = make_context("d1", sub, G)
    assert isinstance(ctx, Context) and ctx.diagram_id == "d1" and ctx.subgraph == sub
    assert sorted(ctx.graph.nodes) == ["auth", "db"]
    assert ctx.graph.nodes["db"]["shape"] == "cylinder" and ctx.graph.nodes["db"]["label"] == "Orders DB"
    assert [(u, v, d["label"]) for u, v, d in ctx.graph.edges(data=True)] == [("auth", "db", "reads")]


def test_empty_context_is_empty_text():
    ctx = make_context("d1", Subgraph(), G)
    assert ctx.text == "" and ctx.is_empty() and ctx.graph.number_of_nodes() == 0


def test_same_subgraph_same_text():
    a = make_context("d1", whole(G), G).text
    b = make_context("d1", Subgraph(frozenset(reversed(sorted(whole(G).nodes))), whole(G).edges), G).text
    assert a == b


def test_doctests():
    import doctest

    import benchmark.context

    result = doctest.testmod(benchmark.context)
    assert result.failed == 0 and result.attempted > 0
