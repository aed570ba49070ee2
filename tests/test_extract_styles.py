"""Extraction of one small graph drawn by real Graphviz, PlantUML, Mermaid and d2's dark theme,
read back by structure alone and scored against the D2; skipped where a tool is not installed."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from benchmark.extract.ocr import tesseract_available
from benchmark.render import render_file
from tests.extract_read import edges_read

pytestmark = pytest.mark.skipif(not tesseract_available(), reason="tesseract is not installed")

GRAPH = """direction: down
start: Receive order {shape: oval}
check: Payment ok? {shape: diamond}
ship: Ship parcel
refund: Refund customer
archive: Archive {shape: cylinder}
start -> check
check -> ship: yes
check -> refund: no
ship -> archive
refund -> archive: log
"""

TOOLS = {"graphviz": "dot", "plantuml": "plantuml", "mermaid": "mmdc", "dark": "d2"}


def _available(style: str) -> bool:
    if style == "dark":
        return True
    return shutil.which(TOOLS[style]) is not None


@pytest.fixture(scope="module")
def source(tmp_path_factory) -> Path:
    d2 = tmp_path_factory.mktemp("styles") / "order.d2"
    d2.write_text(GRAPH, encoding="utf-8")
    return d2


@pytest.mark.parametrize("style", ["graphviz", "plantuml", "mermaid", "dark"])
def test_a_graph_drawn_by_another_tool_is_read_by_structure(style, source, tmp_path):
    if not _available(style):
        pytest.skip(f"{TOOLS[style]} is not installed (scripts/setup.sh installs it)")
    from benchmark.d2 import parse_file
    from benchmark.extract.evaluate import score_diagram
    from benchmark.extract.pipeline import extract

    png = tmp_path / f"order-{style}.png"
    render_file(source, png, style=style)
    graph = extract(png)
    assert graph["reader"] == "any"
    s = score_diagram("order", graph, parse_file(source))
    assert s.node_f1 == 1.0, graph["nodes"]
    assert s.edge_f1 >= 0.8, graph["edges"]
    assert graph["warnings"] == []


CONTAINERS = """direction: down
web: Web shop {
  cart: Shopping cart
  pay: Checkout
  cart -> pay
}
ops: Warehouse {
  pick: Pick items
  tag: Print label
}
mail: Email customer
web.pay -> ops.pick
web.pay -> ops.tag
ops.pick -> mail: packed
"""


@pytest.mark.parametrize("style", ["graphviz", "plantuml", "mermaid", "dark"])
def test_containers_drawn_by_another_tool_are_read_with_the_connectors_across_them(style, tmp_path):
    """A container is a box drawn around its shapes (a Graphviz cluster, a PlantUML package, a Mermaid
    subgraph): the connectors that leave it cut the paper inside it apart, but not its outline, so it is
    found by its outline; and its outline does not cut those connectors in two."""
    if not _available(style):
        pytest.skip(f"{TOOLS[style]} is not installed (scripts/setup.sh installs it)")
    from benchmark.d2 import parse_file
    from benchmark.extract.align import align
    from benchmark.extract.evaluate import score_diagram
    from benchmark.extract.pipeline import extract

    d2 = tmp_path / "shop.d2"
    d2.write_text(CONTAINERS, encoding="utf-8")
    png = tmp_path / f"shop-{style}.png"
    render_file(d2, png, style=style)
    graph = extract(png)
    ref = parse_file(d2)
    s = score_diagram("shop", graph, ref)
    assert s.node_f1 == 1.0, graph["nodes"]
    to_ref = align(graph, ref)
    parent = {to_ref[n["id"]]: to_ref.get(n["parent"]) for n in graph["nodes"] if n["id"] in to_ref}
    assert parent == {"web": None, "web.cart": "web", "web.pay": "web", "ops": None, "ops.pick": "ops",
                      "ops.tag": "ops", "mail": None}
    edges = {(to_ref.get(e["src"]), to_ref.get(e["dst"]), e["arrow"]) for e in graph["edges"]}
    assert edges == {("web.cart", "web.pay", "->"), ("web.pay", "ops.pick", "->"), ("web.pay", "ops.tag", "->"),
                     ("ops.pick", "mail", "->")}, graph["edges"]


def test_d2_default_render_is_still_read_by_its_colours(source, tmp_path):
    from benchmark.extract.pipeline import extract

    png = tmp_path / "order.png"
    render_file(source, png)
    assert extract(png)["reader"] == "d2"


def test_tool_writers_name_every_node_and_edge(source):
    from benchmark.d2 import parse_file
    from benchmark.renderers import to_dot, to_mermaid, to_plantuml

    g = parse_file(source)
    for text in (to_dot(g), to_plantuml(g), to_mermaid(g)):
        for label in ("Receive order", "Payment ok?", "Ship parcel", "Refund customer", "Archive", "yes", "no", "log"):
            assert label in text
    assert to_dot(g).count(" -> ") == 5 and to_mermaid(g).count("-->") == 5 and to_plantuml(g).count("-->") == 5


def test_a_missing_tool_is_reported_as_unavailable(monkeypatch, source, tmp_path):
    from benchmark.errors import StageUnavailable

    monkeypatch.setenv("PATH", str(tmp_path))  # no dot, plantuml or mmdc here
    with pytest.raises(StageUnavailable, match="graphviz"):
        render_file(source, tmp_path / "x.png", style="graphviz")


@pytest.mark.skipif(not _available("plantuml"), reason="plantuml is not installed")
def test_plantuml_draws_a_large_diagram_whole(tmp_path, monkeypatch):
    """PlantUML crops a drawing to 4096 px a side unless told otherwise: the enlarged bundled diagrams
    lost whole columns of shapes that way. A chain of 60 shapes is drawn more than 4096 px tall."""
    import struct

    from benchmark.renderers import draw

    monkeypatch.delenv("PLANTUML_LIMIT_SIZE", raising=False)
    nodes = [{"id": f"n{i}", "label": f"Step {i}", "shape": "rectangle", "parent": None} for i in range(60)]
    edges = [{"src": f"n{i}", "dst": f"n{i + 1}", "label": "", "directed": True, "arrow": "->"} for i in range(59)]
    out = tmp_path / "chain.png"
    draw({"nodes": nodes, "edges": edges}, "plantuml", out)
    width, height = struct.unpack(">II", out.read_bytes()[16:24])
    assert max(width, height) > 4096


@pytest.mark.skipif(not _available("mermaid"), reason="mermaid-cli is not installed")
def test_mermaid_draws_within_the_pixel_limit(tmp_path, monkeypatch):
    """Mermaid draws at twice the natural size, unless that is more pixels than the extractor reads: then
    it draws again at the largest scale within the limit (the enlarged diagrams were refused as too large)."""
    import struct

    import benchmark.render as render
    from benchmark.renderers import draw

    nodes = [{"id": f"n{i}", "label": f"Step {i}", "shape": "rectangle", "parent": None} for i in range(6)]
    edges = [{"src": f"n{i}", "dst": f"n{i + 1}", "label": "", "directed": True, "arrow": "->"} for i in range(5)]
    graph = {"nodes": nodes, "edges": edges}
    draw(graph, "mermaid", tmp_path / "full.png")
    width, height = struct.unpack(">II", (tmp_path / "full.png").read_bytes()[16:24])
    limit = width * height // 3
    monkeypatch.setattr(render, "MAX_PNG_PIXELS", limit)
    draw(graph, "mermaid", tmp_path / "small.png")
    w2, h2 = struct.unpack(">II", (tmp_path / "small.png").read_bytes()[16:24])
    assert w2 * h2 <= limit and w2 * h2 > limit // 2


@pytest.mark.skipif(not _available("graphviz"), reason="graphviz is not installed")
def test_a_region_fenced_in_by_connectors_under_a_shape_is_no_container(tmp_path):
    """Graphviz draws the two connectors back to `Developer` around the whole pipeline below it: the region
    between them is a convex box right under `Developer`, whose label is that shape's own, not a title."""
    from benchmark.extract.pipeline import extract

    png = tmp_path / "hotfix.png"
    render_file(Path(__file__).resolve().parent.parent / "diagrams" / "cicd_hotfix_a.d2", png, style="graphviz")
    graph = extract(png)
    assert [n for n in graph["nodes"] if n["parent"] or not n["label"]] == []
    assert "Developer" in [n["label"] for n in graph["nodes"]]


def _graphviz_drawing(name: str, tmp_path: Path) -> dict:
    from benchmark.extract.pipeline import extract

    png = tmp_path / f"{name}.png"
    render_file(Path(__file__).resolve().parent.parent / "diagrams" / f"{name}.d2", png, style="graphviz")
    return extract(png)


@pytest.mark.skipif(not _available("graphviz"), reason="graphviz is not installed")
def test_a_letter_touching_its_line_is_no_arrowhead(tmp_path):
    """Graphviz sets `checkout` against the line from `New order` down to `Payment Pending`: its `c`
    touches the line and is as wide as a head. The line runs on past it, so it is one connector with
    one head (it was read as a second, two-headed connector between the same shapes)."""
    graph = _graphviz_drawing("state_order", tmp_path)
    ids = {n["label"]: n["id"] for n in graph["nodes"]}
    between = [e for e in graph["edges"] if {e["src"], e["dst"]} == {ids["New order"], ids["Payment Pending"]}]
    assert [(e["src"], e["arrow"]) for e in between] == [(ids["New order"], "->")], between
    assert [e for e in graph["edges"] if e["arrow"] == "<->"] == []


@pytest.mark.skipif(not _available("graphviz"), reason="graphviz is not installed")
def test_a_pocket_between_crossing_connectors_is_no_node(tmp_path):
    """Graphviz sets the label `rejected` in a pocket fenced in by connectors crossing each other: a
    convex region holding centred text, like a node, but lines cross at its corners. It is an edge
    label, not a node standing between the two halves of the connectors around it."""
    from benchmark.d2 import parse_file
    from benchmark.extract.align import align

    graph = _graphviz_drawing("biz_purchase_approval", tmp_path)
    assert not [n for n in graph["nodes"] if n["label"].lower().startswith("reject")], graph["nodes"]
    mapping = align(graph, parse_file(Path(__file__).resolve().parent.parent / "diagrams" / "biz_purchase_approval.d2"))
    ids = {mapping[n["id"]]: n["id"] for n in graph["nodes"] if n["id"] in mapping}
    cut = [e for e in graph["edges"] if (e["src"], e["dst"]) == (ids["finance.cfo"], ids["cancel"])]
    assert [e["label"][:6] for e in cut] == ["reject"], graph["edges"]


@pytest.mark.skipif(not _available("mermaid"), reason="mermaid-cli is not installed")
def test_a_connector_ending_on_a_cylinders_cap_reaches_the_cylinder(tmp_path):
    """Mermaid draws a cylinder's top as its own closed ellipse above the labelled body; the line
    between them is an arc, so the cap's box reaches below the top of the body's. The cap is part
    of the cylinder, and the connectors whose heads touch it end at the cylinder (four of them
    were lost: `Debezium Connector -> CDC Topic`, `Merge Task -> Snowflake Warehouse`, ...)."""
    from benchmark.d2 import parse_file
    from benchmark.extract.evaluate import score_diagram
    from benchmark.extract.pipeline import extract

    d2 = Path(__file__).resolve().parent.parent / "diagrams" / "etl_cdc.d2"
    png = tmp_path / "etl_cdc.png"
    render_file(d2, png, style="mermaid")
    graph = extract(png)
    labels = {n["id"]: n["label"] for n in graph["nodes"]}
    into = {(labels[e["src"]], labels[e["dst"]]) for e in graph["edges"] if e["arrow"] == "->"}
    for pair in [("Debezium Connector", "CDC Topic"), ("Merge Task", "Snowflake Warehouse"),
                 ("Schema compatible?", "Staging Tables"), ("Backfill Job", "Staging Tables")]:
        assert pair in into, graph["edges"]
    assert score_diagram("etl_cdc", graph, parse_file(d2)).edge_f1 == 1.0, graph["edges"]


def _read_dark(tmp_path: Path, name: str, source: str) -> dict:
    """The graph read back from ``source`` drawn by d2 in its dark theme (read by structure)."""
    from benchmark.extract.pipeline import extract

    src = tmp_path / f"{name}.d2"
    src.write_text(source, encoding="utf-8")
    png = tmp_path / f"{name}.png"
    render_file(src, png, style="dark")
    graph = extract(png)
    assert graph["reader"] == "any"
    return graph


def test_connectors_leaving_a_queues_end_start_at_the_queue(tmp_path):
    # d2 draws a queue's end as a closed ellipse of its own beside the labelled body: read by
    # structure (the dark theme), it is part of the queue, and a connector leaving it starts there
    graph = _read_dark(tmp_path, "queue", "direction: right\np: Parser\nq: Dead-Letter Queue {shape: queue}\n"
                       "w: Retry Worker\na: On-call Alert\np -> q: unparseable\nq -> w\nq -> a: depth over 100\n")
    assert {(e["src"], e["arrow"], e["dst"], e["label"]) for e in graph["edges"]} == {
        ("parser", "->", "dead-letter-queue", "unparseable"), ("dead-letter-queue", "->", "retry-worker", ""),
        ("dead-letter-queue", "->", "on-call-alert", "depth over 100")}


def test_a_grids_connector_drawn_across_a_shape_and_its_label_leaves_both_whole(tmp_path):
    # a grid layout draws a connector straight from shape to shape, over the shapes between them
    # and their labels. Read by structure (the dark theme): the letters the line runs through are
    # told from it by colour, and the shape's paper, which the line cuts in two, is one shape
    graph = _read_dark(tmp_path, "column", "grid-columns: 1\ngrid-gap: 80\na: Inventory Service\n"
                       "b: Stock DB {shape: cylinder}\nc: Items in stock? {shape: diamond}\na -> c\n")
    assert sorted(n["label"] for n in graph["nodes"]) == ["Inventory Service", "Items in stock?", "Stock DB"]
    assert [(e["src"], e["arrow"], e["dst"], e["label"]) for e in graph["edges"]] == [
        ("inventory-service", "->", "items-in-stock", "")]


def test_a_label_a_connector_runs_through_is_read_whole(tmp_path):
    graph = _read_dark(tmp_path, "row", "grid-rows: 1\ngrid-gap: 80\na: Order Service\nb: Inventory Service\n"
                       "c: Billing Service\na -> c\n")
    assert sorted(n["label"].casefold() for n in graph["nodes"]) == [
        "billing service", "inventory service", "order service"]
    assert [(e["src"], e["arrow"], e["dst"]) for e in graph["edges"]] == [("order-service", "->", "billing-service")]


def test_a_grids_straight_connectors_reach_containers_read_by_structure(tmp_path):
    # a grid layout draws a connector to or from a container straight from its centre, like any
    # other: read by structure (the dark theme), such lines are sought between all the shapes,
    # containers too, while the connectors are traced between the shapes that hold no other
    graph, read = edges_read("etl_clickstream", "dark", tmp_path)
    assert graph["reader"] == "any"
    assert {("lake", "cold"), ("privacy.erasure_job", "lake")} <= read


@pytest.mark.skipif(not _available("graphviz"), reason="graphviz is not installed")
def test_an_edge_labels_letter_touching_its_line_is_read(tmp_path):
    # Graphviz sets "yes" against the line from "Token available?" to "Take one token": its "y" touches
    # the line and was one piece of ink with it, left out of the text ("es"); "yes" from "Client on
    # allowlist?" is set the same way
    graph = _graphviz_drawing("algo_token_bucket", tmp_path)
    labels = {(e["src"], e["dst"]): e["label"] for e in graph["edges"]}
    assert labels[("token-available", "take-one-token")] == "yes"
    assert labels[("client-on-allowlist", "forward-to-service")] == "yes"


@pytest.mark.skipif(not _available("graphviz"), reason="graphviz is not installed")
def test_the_line_beside_an_edge_label_is_no_letter_of_it(tmp_path):
    # the stub of line beside "result" was read as a letter of it ("tresult"); the line a label's first
    # letter touches is taken off the text, not the letter's edge with it ("equal" read "aqual"), and
    # a real "l" beside a line is no stub of it ("less" read "ess")
    labels = {(e["src"], e["dst"]): e["label"] for e in _graphviz_drawing("arch_payment", tmp_path)["edges"]}
    assert labels[("payment-provider", "webhook-handler")] == "result"
    labels = {e["label"] for e in _graphviz_drawing("algo_binary_search", tmp_path)["edges"]}
    assert {"equal", "less", "greater"} <= labels


@pytest.mark.skipif(not _available("mermaid"), reason="mermaid-cli is not installed")
def test_a_label_on_a_box_of_its_own_keeps_no_speck_of_its_line(tmp_path):
    # Mermaid sets an edge label on a grey box that hides its line: no line reaches its letters, and
    # what was left of the line's end beside the box, once its straight run was taken off, was read
    # as a letter ("‘no", "yes’")
    from benchmark.extract.pipeline import extract

    png = tmp_path / "lockout.png"
    render_file(Path(__file__).resolve().parent.parent / "diagrams" / "algo_login_lockout_b.d2", png, style="mermaid")
    labels = sorted(e["label"] for e in extract(png)["edges"] if e["label"])
    assert labels == ["no", "no", "no", "yes", "yes", "yes"]
