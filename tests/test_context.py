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


def test_a_stored_context_keeps_its_data_edges_out_of_the_flow():
    from benchmark.d2 import parse_text
    from benchmark.graph import build_graph, whole
    from benchmark.records import context_from_json, context_to_json
    from benchmark.solver import solve

    g = build_graph(parse_text("classes: {data: {style.stroke-dash: 4}}\na -> db: reads {class: data}\n"
                               "db -> report\na -> b {class: parallel}\n"))
    ctx = make_context("d", whole(g), g)
    back = context_from_json(context_to_json(ctx))
    kinds = {(u, v): (d.get("kind", "flow"), d.get("parallel", False)) for u, v, d in back.graph.edges(data=True)}
    assert kinds == {("a", "db"): ("data", False), ("db", "report"): ("flow", False), ("a", "b"): ("flow", True)}
    assert solve("reachable", {"source": "a", "target": "report"}, back.graph) is False
    # a context without such edges is stored exactly as before
    plain = build_graph(parse_text("a -> b\n"))
    assert "edge_kinds" not in context_to_json(make_context("d", whole(plain), plain))
