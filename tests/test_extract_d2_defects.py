"""Defects seen on d2 renders, each as a minimal D2 drawn by the real d2 binary and read back by
real tesseract; and ``render`` honouring a file's own layout engine."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from benchmark.extract.ocr import tesseract_available
from benchmark.render import render_file, style_flags
from tests.extract_read import drawn, edges_read

needs_tesseract = pytest.mark.skipif(not tesseract_available(), reason="tesseract is not installed")


def read_back(tmp_path: Path, name: str, d2: str, style: str = "default") -> dict:
    from benchmark.extract.pipeline import extract

    src = tmp_path / f"{name}.d2"
    src.write_text(d2, encoding="utf-8")
    png = tmp_path / f"{name}.png"
    render_file(src, png, style=style)
    return extract(png)


def edges(graph: dict) -> set[tuple[str, str, str, str]]:
    return {(e["src"], e["arrow"], e["dst"], e["label"]) for e in graph["edges"]}


@needs_tesseract
def test_comparison_signs_stay_in_their_label(tmp_path):
    g = read_back(tmp_path, "signs", 'start: Start\nx: "attempts < 3?" {shape: diamond}\ny: "errors > 1%"\n'
                                     "start -> x\nx -> y: yes\n")
    assert {n["label"] for n in g["nodes"]} == {"Start", "attempts < 3?", "errors > 1%"}
    assert {n["label"]: n["shape"] for n in g["nodes"]}["attempts < 3?"] == "diamond"
    assert edges(g) == {("start", "->", "attempts-3", ""), ("attempts-3", "->", "errors-1", "yes")}


@needs_tesseract
def test_dashed_outline_is_a_shape(tmp_path):
    g = read_back(tmp_path, "dashed", "a: Payment Service\nx: Chargeback Handler {style.stroke-dash: 3}\n"
                                      "a -> x: disputes\n")
    assert {n["label"] for n in g["nodes"]} == {"Payment Service", "Chargeback Handler"}
    assert edges(g) == {("payment-service", "->", "chargeback-handler", "disputes")}
    assert g["warnings"] == []


@needs_tesseract
def test_arrowhead_in_a_person_neck_notch_keeps_its_direction(tmp_path):
    g = read_back(tmp_path, "neck", "direction: right\na: Billing Service\nb: Audit Service\n"
                                    "u: Support Agent {shape: person}\nv: Operator {shape: person}\n"
                                    "a -> u\nb -> u: alerts\nu -> v: hands over\n")
    assert edges(g) == {("billing-service", "->", "support-agent", ""),
                        ("audit-service", "->", "support-agent", "alerts"),
                        ("support-agent", "->", "operator", "hands over")}


@needs_tesseract
def test_look_alike_letters_still_match_their_d2_node(tmp_path):
    from benchmark.d2 import parse_text
    from benchmark.extract.evaluate import score_diagram

    d2 = "ci: CI\nbuild: Build Stage\nci -> build\n"
    g = read_back(tmp_path, "ci", d2)
    s = score_diagram("ci", g, parse_text(d2))
    # whatever tesseract makes of "CI" (it reads "cl" here), the node and its edge are matched
    assert (s.node_f1, s.edge_f1) == (1.0, 1.0)


def test_look_alike_folding_in_matching():
    from benchmark.extract.align import align, similarity

    assert similarity("Cl", "CI") == similarity("B00T", "BOOT") == similarity("Тор", "Top") == 1.0
    assert similarity("Cache", "Queue") < 0.6
    ref = {"nodes": [{"id": "ci", "label": "CI"}, {"id": "cd", "label": "CD"}]}
    assert align({"nodes": [{"id": "cl", "label": "cl"}, {"id": "cd", "label": "CD"}]}, ref) == {"cl": "ci", "cd": "cd"}


ELK_CONFIG = "vars: {\n  d2-config: {\n    layout-engine: elk\n  }\n}\n"
GRAPH = "a: Alpha\nb: Beta\nc: Gamma\na -> b -> c\na -> c: skip\n"


def test_render_keeps_the_layout_a_file_chooses(tmp_path):
    own, plain = tmp_path / "own.d2", tmp_path / "plain.d2"
    own.write_text(ELK_CONFIG + GRAPH, encoding="utf-8")
    plain.write_text(GRAPH, encoding="utf-8")
    assert style_flags(own, "default") == ["--theme=0"]
    assert style_flags(plain, "default") == ["--layout=dagre", "--theme=0"]
    assert style_flags(own, "sketch") == ["--layout=dagre", "--theme=0", "--sketch"]  # a style overrides
    for src, style, out in ((own, "default", "own.png"), (plain, "elk", "elk.png"), (plain, "default", "dagre.png")):
        render_file(src, tmp_path / out, style=style)
    own_png, elk_png, dagre_png = ((tmp_path / n).read_bytes() for n in ("own.png", "elk.png", "dagre.png"))
    assert own_png == elk_png and own_png != dagre_png


def test_render_command_keeps_the_layout_a_file_chooses(tmp_path):
    from benchmark.cli import main

    ddir = tmp_path / "data" / "diagrams"
    ddir.mkdir(parents=True)
    (ddir / "own.d2").write_text(ELK_CONFIG + GRAPH, encoding="utf-8")
    (tmp_path / "plain.d2").write_text(GRAPH, encoding="utf-8")
    assert main(["render", "--data", str(tmp_path / "data")]) == 0
    render_file(tmp_path / "plain.d2", tmp_path / "elk.png", style="elk")
    assert (ddir / "own.png").read_bytes() == (tmp_path / "elk.png").read_bytes()


@needs_tesseract
def test_connectors_meeting_under_an_edge_label_stay_apart(tmp_path):
    # d2 draws Отклонено -> Архив as a curve that meets the straight Отклонено -> Реестр right
    # where the label "сдать" blanks both; the head into Реестр sits just below the label
    g = read_back(tmp_path, "under_label", "a: Подписание\nb: Отклонено\nc: Архив\nd: Реестр\n"
                                           "a -> d: внести\nb -> c: сдать\na -> c\nb -> d\n")
    assert edges(g) == {("подписание", "->", "реестр", "внести"), ("отклонено", "->", "архив", "сдать"),
                        ("подписание", "->", "архив", ""), ("отклонено", "->", "реестр", "")}


SUBSCRIPTION = """direction: right
trial: Trial
active: Active
past_due: Past Due
retry: Payment retry succeeded? {shape: diamond}
suspended: Suspended
cancelled: Cancelled
expired: Expired {shape: oval}
paused: Paused
trial -> active: card added
trial -> expired: 14 days without card
active -> past_due: renewal failed
active -> paused: customer pauses
paused -> active: resume
active -> cancelled: customer cancels
past_due -> retry
retry -> active: yes
retry -> suspended: no, after 3 tries
suspended -> active: card updated
suspended -> expired: 30 days
cancelled -> expired: end of period
"""


@needs_tesseract
def test_connector_leaving_a_corner_beside_an_arriving_head_keeps_its_direction(tmp_path):
    # dagre, left to right: `active -> cancelled` leaves Active's top right corner right where
    # `resume`'s arrowhead reaches Active's side; the head belongs to `resume` alone
    g = read_back(tmp_path, "corner", SUBSCRIPTION)
    assert {(s, a, d) for s, a, d, _ in edges(g)} == {
        ("trial", "->", "active"), ("trial", "->", "expired"), ("active", "->", "past-due"),
        ("active", "->", "paused"), ("paused", "->", "active"), ("active", "->", "cancelled"),
        ("past-due", "->", "payment-retry-succeeded"), ("payment-retry-succeeded", "->", "active"),
        ("payment-retry-succeeded", "->", "suspended"), ("suspended", "->", "active"),
        ("suspended", "->", "expired"), ("cancelled", "->", "expired")}
    assert ("active", "->", "cancelled", "customer cancels") in edges(g)
    assert ("paused", "->", "active", "resume") in edges(g)


@needs_tesseract
def test_sketch_line_meeting_or_crossing_a_rough_outline_is_not_a_head(tmp_path):
    # the sketch style's thick, doubled outlines leave a blob wider than a line where a connector
    # leaves a shape or crosses a container's outline; only the drawn heads give direction
    g = read_back(tmp_path, "sketch_outline", "direction: right\npr: Pull Request {shape: person}\n"
                                              "build: Build {\n  lint: Lint\n  test: Unit Tests\n}\n"
                                              "forgot: Forgot password link\nemail: Send reset email\n"
                                              "pr -> build.lint\nbuild.lint -> build.test\n"
                                              "build.test -> forgot\nforgot -> email\n", style="sketch")
    assert {(s, a, d) for s, a, d, _ in edges(g)} == {
        ("pull-request", "->", "build.lint"), ("build.lint", "->", "build.unit-tests"),
        ("build.unit-tests", "->", "forgot-password-link"),
        ("forgot-password-link", "->", "send-reset-email")}


@needs_tesseract
def test_sketch_head_arriving_along_a_thick_outline_gives_direction(tmp_path):
    # the sketch style's outlines are thicker than its lines: a head arriving at a shallow angle
    # along a diamond's side joins the outline's stretch into one large core, and the head is what
    # is left without the outline; the rough strokes where the diamonds' sides cross are no heads
    g = read_back(tmp_path, "sketch_shallow", "compare: Compare with target {shape: diamond}\n"
                                              "low: Set low bound\nhigh: Set high bound\n"
                                              "found: Return index {shape: oval}\n"
                                              "empty: Range empty? {shape: diamond}\n"
                                              "compare -> low: less\ncompare -> high: greater\n"
                                              "compare -> found: equal\nlow -> empty\nhigh -> empty\n",
                  style="sketch")
    assert edges(g) == {("compare-with-target", "->", "set-low-bound", "less"),
                        ("compare-with-target", "->", "set-high-bound", "greater"),
                        ("compare-with-target", "->", "return-index", "equal"),
                        ("set-low-bound", "->", "range-empty", ""), ("set-high-bound", "->", "range-empty", "")}


@needs_tesseract
@pytest.mark.parametrize("diagram", ["algo_login_lockout_b", "arch_notification", "ops_db_failover",
                                     "cicd_hotfix_a", "arch_payment", "algo_lru_cache"])
def test_a_bundled_flowchart_drawn_in_sketch_style_reads_with_every_direction(diagram, tmp_path):
    # their diamonds' rough tips, where lines leave them, leave pieces a little smaller than a head
    # off the outline (no head, nor a loop along the outline); the heads arriving along the
    # diamonds' sides are found. Where a line leaves a diamond's tip or a person's neck, the join
    # with the rough outline can pass for a head, smaller than the real one at the line's other end
    # (cicd_hotfix_a, arch_payment: one head, not two); a head ending in a person's neck is found
    # though the outline's band takes its core (cicd_hotfix_a, algo_lru_cache)
    from benchmark.d2 import parse_file
    from benchmark.dataset import DEFAULT_ROOT
    from benchmark.extract.evaluate import score_diagram
    from benchmark.extract.pipeline import extract

    src = DEFAULT_ROOT / "diagrams" / f"{diagram}.d2"
    png = tmp_path / f"{diagram}.png"
    render_file(src, png, style="sketch")
    s = score_diagram(diagram, extract(png), parse_file(src))
    assert (s.matched_edges, s.ext_edges) == (s.ref_edges, s.ref_edges)


@needs_tesseract
def test_connectors_running_together_out_of_one_side_give_no_head_there(tmp_path):
    # arch_api_gateway's gateway sends three connectors out of the top of its box, run together at
    # the outline into a blob as wide as a head. Traced, each stops short of it; the walks on from
    # there of two of them pass that blob, which is no head of either (both were read `<->`)
    graph, read = edges_read("arch_api_gateway", "default", tmp_path)
    assert {("gw", "services.reviews"), ("gw", "services.search")} <= read
    assert [e for e in graph["edges"] if e["arrow"] != "->"] == []


@needs_tesseract
def test_a_piece_of_a_containers_fill_fenced_in_like_a_person_is_no_node(tmp_path):
    # in the sketch style, the connector from "Select vendor" up to the "CFO sign-off" diamond and
    # the diamond's side fence in a piece of the Finance container's fill whose outline the kinds'
    # rules take for a person (a person holds no text: its label is written under it). Nothing is
    # written under that piece: it is no node, and the connector reaches the diamond
    graph, read = edges_read("biz_purchase_approval", "sketch", tmp_path)
    assert [n["label"] for n in graph["nodes"] if n["shape"] == "person"] != [] and \
        all(n["label"] for n in graph["nodes"] if n["shape"] == "person"), graph["nodes"]
    assert ("procurement.vendor", "finance.cfo") in read


@needs_tesseract
def test_a_sketched_dashed_line_is_no_row_of_heads(tmp_path):
    # the sketch style's dashes are rough, and the bridges drawn between them a little off their
    # middle widened the dashed lines of a large diagram enough for the heads' opening to keep
    # hundreds of pieces of them: cut out as heads, they gave dashed connectors heads at both ends
    # or split them. Heads are now sought where the image has ink
    _, read = edges_read("etl_clickstream", "sketch", tmp_path)
    assert {("product.notebooks", "lake.sandbox"), ("stream.enrich", "geoip")} <= read


@needs_tesseract
def test_labels_of_boxes_side_by_side_stay_apart(tmp_path):
    # the sketch style's handwritten font spaces words as widely as the gap between three boxes
    # in a row: their labels are one line to tesseract, split again at the boxes' outlines
    g = read_back(tmp_path, "row", "core: Ядро {\n  grid-columns: 3\n  grid-gap: 12\n"
                                   "  a: Сервис рекомендаций\n  b: Сервис промокодов\n  c: Сервис отзывов\n}\n",
                  style="sketch")
    assert sorted(n["label"] for n in g["nodes"]) == ["Сервис отзывов", "Сервис промокодов",
                                                      "Сервис рекомендаций", "Ядро"]


@needs_tesseract
@pytest.mark.parametrize("style", ["dark", "plantuml"])
def test_a_figure_labelled_underneath_is_a_node(style, tmp_path):
    # d2's person (dark theme, read by structure) and PlantUML's stick-figure actor hold no text:
    # the label is drawn under the figure, and the connector leaves from the figure or its label
    import shutil

    if style == "plantuml" and shutil.which("plantuml") is None:
        pytest.skip("plantuml is not installed")
    g = read_back(tmp_path, f"figure_{style}", "u: Customer {shape: person}\na: Submit refund request\n"
                                                "b: Issue refund\nu -> a\na -> b\n", style=style)
    assert {n["label"] for n in g["nodes"]} == {"Customer", "Submit refund request", "Issue refund"}
    assert {(s, a, d) for s, a, d, _ in edges(g)} == {("customer", "->", "submit-refund-request"),
                                                     ("submit-refund-request", "->", "issue-refund")}


@needs_tesseract
def test_grid_connector_drawn_through_a_shape_is_one_edge(tmp_path):
    # a grid layout draws a -- c straight across b: the pieces either side of b are one connector
    g = read_back(tmp_path, "through", "grid-columns: 3\na: Alpha Service\n"
                                       "b: Beta Store {height: 140; label.near: top-center}\nc: Gamma Queue\n"
                                       "a -- c\n")
    assert {n["label"] for n in g["nodes"]} == {"Alpha Service", "Beta Store", "Gamma Queue"}
    assert edges(g) == {("alpha-service", "--", "gamma-queue", "")}


@needs_tesseract
def test_heads_of_a_diagram_drawn_at_a_reduced_scale_are_found(tmp_path):
    # a diagram too large for d2's default PNG is drawn at a reduced --scale (render.png_scale):
    # its arrowheads are smaller than at d2's default scale, and must still give directions
    import subprocess

    from benchmark.extract.pipeline import extract
    from benchmark.render import d2_binary

    src, png = tmp_path / "small.d2", tmp_path / "small.png"
    src.write_text("a: Order Intake\nb: Stock Check {shape: diamond}\nc: Packing\nd: Backorder Queue\n"
                   "a -> b\nb -> c: in stock\nb -> d: missing\nd -> c: restocked\n", encoding="utf-8")
    subprocess.run([d2_binary(), "--omit-version", "--pad=40", "--scale=0.77", str(src), str(png)],
                   check=True, capture_output=True, timeout=120)
    g = extract(png)
    assert edges(g) == {("order-intake", "->", "stock-check", ""), ("stock-check", "->", "packing", "in stock"),
                        ("stock-check", "->", "backorder-queue", "missing"),
                        ("backorder-queue", "->", "packing", "restocked")}


@needs_tesseract
def test_connectors_crossing_container_outlines_at_shallow_angles_stay_joined():
    # net_k8s_cluster's curves leave their containers at a few degrees to the outline, and the
    # traced pieces either side of an outline stop more than a joining gap apart: facing ends with
    # the stroke running on between them are one connector (17 of its 28 edges were found before)
    from benchmark.d2 import parse_file
    from benchmark.extract.evaluate import score_diagram
    from benchmark.extract.pipeline import extract

    root = Path(__file__).resolve().parent.parent / "diagrams"
    s = score_diagram("net_k8s_cluster", extract(root / "net_k8s_cluster.png"),
                      parse_file(root / "net_k8s_cluster.d2"))
    assert s.matched_edges >= 19 and s.ext_edges <= 28


@needs_tesseract
def test_grey_dashed_connectors_are_read(tmp_path):
    # a D2 class drawing data flow dashed in grey (the colour of d2's edge labels) and an
    # association dotted in light grey: both were read as no connector at all, and tesseract
    # reads their dashes as words (``---``, ``1``) that must not become labels
    g = read_back(tmp_path, "grey", 'classes: {\n  data: {style: {stroke-dash: 4; stroke: "#6b7280"}}\n'
                                    '  association: {style: {stroke-dash: 2; stroke: "#9ca3af"}}\n}\n'
                                    "a: Order Service\nb: Audit Log\nc: Billing\nd: Reports\n"
                                    "a -> b: order events {class: data}\na -> c\nc -- d {class: association}\n")
    assert edges(g) == {("order-service", "->", "audit-log", "order events"), ("order-service", "->", "billing", ""),
                        ("billing", "--", "reports", "")}


@needs_tesseract
def test_connectors_in_other_colours_are_read(tmp_path):
    g = read_back(tmp_path, "colours", 'a: Sensor\nb: Gateway\nc: Dashboard\n'
                                       'a -> b: readings {style.stroke: "#b91c1c"}\n'
                                       'b -> c {style.stroke: "#15803d"; style.stroke-dash: 5}\n')
    assert edges(g) == {("sensor", "->", "gateway", "readings"), ("gateway", "->", "dashboard", "")}


@needs_tesseract
@pytest.mark.parametrize("dash, gap", [(2, 60), (6, 90)])
def test_dashed_connector_drawn_along_a_row_of_shapes_is_one_edge(tmp_path, dash, gap):
    # a grid layout draws n0 -> n4 straight along the row, over the three shapes between: the
    # pieces left between each two neighbours lie along one line, and their traced ends bend a
    # little where they meet the outlines; they were read as Alpha -- Beta and Beta -> Epsilon
    names = ["Alpha", "Beta", "Gamma", "Delta", "Epsilon"]
    d2 = f"grid-rows: 1\ngrid-columns: 5\ngrid-gap: {gap}\n" + "".join(
        f"n{i}: {n} {{width: 120; height: 60}}\n" for i, n in enumerate(names)) + \
        f"n0 -> n4 {{style.stroke-dash: {dash}}}\n"
    g = read_back(tmp_path, "row", d2)
    assert len(g["nodes"]) == 5   # (the dashes through the labels may cost a letter)
    assert edges(g) == {("alpha", "->", "epsilon", "")}


@needs_tesseract
def test_connector_entering_a_container_at_a_shallow_angle_reaches_the_shape_inside(tmp_path):
    # a grid layout draws a -> g.c1 straight down into the wide container at about 13 degrees to
    # its top outline; the outline's cut leaves a hook at the end of the piece outside, whose
    # direction then runs along the outline: the two pieces were read as Order Intake --
    # Fulfilment and Fulfilment -> Packing
    names = ["Picking", "Packing", "Labelling", "Shipping Desk", "Loading Bay", "Returns Desk",
             "Quality Check", "Dispatch", "Sorting", "Weighing", "Customs", "Invoicing"]
    d2 = "grid-rows: 2\ngrid-gap: 20\na: Order Intake\ng: Fulfilment {\n  grid-columns: 12\n" + "".join(
        f"  c{i}: {n}\n" for i, n in enumerate(names)) + "}\na -> g.c1\n"
    g = read_back(tmp_path, "shallow_entry", d2)
    assert edges(g) == {("order-intake", "->", "fulfilment.packing", "")}


@needs_tesseract
def test_head_of_a_dashed_connector_drawn_at_a_reduced_scale_is_found(tmp_path):
    # a large diagram's data class, dashed in grey, drawn at a reduced --scale: the bridged dashes
    # make the line as wide as the opening that finds heads, and the line and its head came out of
    # it as one elongated core, taken for no head (Second nurse witness -- Controlled drug register)
    import subprocess

    from benchmark.extract.pipeline import extract
    from benchmark.render import d2_binary

    src, png = tmp_path / "dashed_head.d2", tmp_path / "dashed_head.png"
    src.write_text('classes: {\n  data: {style: {stroke-dash: 4; stroke: "#6b7280"}}\n}\n'
                   "cd: Controlled drugs {\n  witness: Second nurse witness\n  clerk: Pharmacy ledger clerk\n"
                   "  nurse: Administering nurse\n  register: Controlled drug register {shape: cylinder}\n"
                   "  witness -> register: entry signed {class: data}\n"
                   "  clerk -> register: stock count {class: data}\n"
                   "  nurse -> register: dose given {class: data}\n}\n", encoding="utf-8")
    subprocess.run([d2_binary(), "--omit-version", "--pad=40", "--scale=0.7", str(src), str(png)],
                   check=True, capture_output=True, timeout=120)
    g = extract(png)
    register = "controlled-drugs.controlled-drug-register"
    assert edges(g) == {("controlled-drugs.second-nurse-witness", "->", register, "entry signed"),
                        ("controlled-drugs.pharmacy-ledger-clerk", "->", register, "stock count"),
                        ("controlled-drugs.administering-nurse", "->", register, "dose given")}


@needs_tesseract
def test_head_arriving_along_an_outline_at_a_shallow_angle_is_found(tmp_path):
    # dagre, left to right: Аналитик -> Отчёты для руководства arrives at the box's corner at a
    # shallow angle; its head lies close along the outline, no further off it than where a line
    # meets an outline, and was taken for no head (the edge was read as Отчёты -- Аналитик)
    g = read_back(tmp_path, "shallow_head", "direction: right\ndwh: Хранилище данных {shape: cylinder}\n"
                                            "mart: Витрина продаж\nreports: Отчёты для руководства\n"
                                            "analyst: Аналитик {shape: person}\nemail: Рассылка отчётов\n"
                                            "dwh -> mart -> reports\nreports -> email\n"
                                            "analyst -> reports: правки\n")
    es = edges(g)
    assert len(es) == 4 and {a for _, a, _, _ in es} == {"->"}
    assert {(s, lab) for s, _, _, lab in es if lab} == {("аналитик", "правки")}


@needs_tesseract
def test_connectors_crossing_an_outline_side_by_side_keep_their_partners():
    # etl_clickstream: two connectors cross the right outline of the Batch container a few pixels
    # apart; the piece inside running on to ML scoring's edge was paired with the other connector's
    # piece outside, about as near but less in line with it (Batch -> Warehouse, ML scoring --
    # Hold), and ML scoring -> Warehouse was lost
    from benchmark.d2 import parse_file
    from benchmark.extract.align import align
    from benchmark.extract.pipeline import extract

    root = Path(__file__).resolve().parent.parent / "diagrams"
    g = extract(root / "etl_clickstream.png")
    mapping = align(g, parse_file(root / "etl_clickstream.d2"))
    found = {(mapping.get(e["src"]), e["arrow"], mapping.get(e["dst"]), e["label"]) for e in g["edges"]}
    assert ("ml.scoring", "->", "serving.warehouse", "churn scores") in found
    assert not any(e["arrow"] == "--" and {mapping.get(e["src"]), mapping.get(e["dst"])} == {"ml.scoring", "batch.hold"}
                   for e in g["edges"])


def _shapes_of(name: str, style: str, tmp_path: Path) -> tuple[list, object]:
    """The shapes d2's colours find in the bundled diagram ``name`` drawn in ``style`` (:func:`drawn`), and
    the raster they were found on."""
    from benchmark.extract.image import read_rgb
    from benchmark.extract.pipeline import analysis_raster
    from benchmark.extract.shapes import find_shapes

    r, _ = analysis_raster(read_rgb(drawn(name, style, tmp_path)))
    return find_shapes(r), r


@pytest.mark.parametrize("name", ["arch_event_driven", "arch_search"])
def test_the_page_between_a_grids_cells_is_no_cloud(name, tmp_path):
    # d2 writes a grid cell's container title in the white gap above it, and connectors drawn straight
    # across the grid fence that gap in at its ends: a white region, outlined and holding dark text,
    # that the white-shape rules took for a cloud (and gave the title to, leaving the container
    # untitled). Its ring lies along the cells' outlines; a cloud's ring is its own. And a connector
    # drawn straight through a cloud (arch_event_driven's Carrier API) cuts no slit into it from its
    # outline to its label
    _assert_clouds_hold_their_labels(name, tmp_path)


def _assert_clouds_hold_their_labels(name: str, tmp_path: Path) -> None:
    """The bundled diagram's clouds are found, as many as its D2 file draws, each around its label:
    the label's centre inside it and its text clear of the cloud's sides."""
    from benchmark.dataset import DEFAULT_ROOT

    d2 = (DEFAULT_ROOT / "diagrams" / f"{name}.d2").read_text(encoding="utf-8")
    shapes, r = _shapes_of(name, "default", tmp_path)
    clouds = [s for s in shapes if s.kind == "cloud"]
    assert len(clouds) == d2.count("shape: cloud")
    dark = (r.lum < 60) & r.ink
    for c in clouds:
        x, y, w, h = c.box
        ys, xs = np.nonzero(dark[y:y + h, x:x + w])
        assert c.contains(x + xs.mean(), y + ys.mean()), c.box
        assert xs.min() > 0.1 * w and xs.max() < 0.9 * w, c.box


def test_a_shape_that_connectors_reach_close_inside_its_containers_side_is_nested(tmp_path):
    # in the sketch render of med_medication_order, five connectors cross the Prescriber container's
    # left side and end at "Enter medication order" close inside it: their wide rough strokes cut the
    # strip of the container's paper between the two, so the shape lay outside the paper's contour
    # and had no parent (its connectors then ended at the container)
    shapes, _ = _shapes_of("med_medication_order", "sketch", tmp_path)

    def inside(s, c):
        (x, y, w, h), (cx, cy, cw, ch) = s.box, c.box
        return s is not c and cx < x and cy < y and x + w < cx + cw and y + h < cy + ch

    orphans = [s.box for s in shapes if s.parent is None and any(inside(s, c) for c in shapes if c.is_container)]
    assert orphans == []


def test_the_page_fenced_in_around_shapes_is_no_shape(tmp_path):
    # elk routes fin_wire_transfer_aml's connectors around a block of containers and fences in a
    # stretch of white page around them, which the white-shape (cloud) rules took for a white
    # container of them all: once connectors could end at it, five edges went to it. A cloud holds
    # its label only
    from benchmark.extract.shapes import WHITE

    shapes, _ = _shapes_of("fin_wire_transfer_aml", "elk", tmp_path)
    assert [s.box for s in shapes if s.fill == WHITE and s.children] == []


def crop_edges(name: str, x0: int, x1: int, y0: int, y1: int) -> set[tuple[str, str, str, str]]:
    """The edges read from a part of a bundled diagram's render (drawn by d2)."""
    from benchmark.dataset import DEFAULT_ROOT
    from benchmark.extract.pipeline import extract_image
    from benchmark.extract.raster import load_rgb

    rgb = load_rgb(DEFAULT_ROOT / "diagrams" / f"{name}.png")
    return edges(extract_image(rgb[y0:y1, x0:x1].copy()))


@needs_tesseract
def test_the_small_head_of_a_grey_dashed_connector_is_found():
    # a grey dashed connector's head is drawn a little smaller than the blue ones: its core is under
    # the image's least head core, but nothing but its own line's last dash leaves it
    assert crop_edges("state_subscription", 0, 700, 7600, 8300) == {
        ("exit-survey", "->", "churn-feedback-store", "answers")}


@needs_tesseract
def test_a_grey_head_tesseract_reads_as_a_letter_stays_a_head():
    # the head of the grey dashed "запись о релизе" into a container's shape was read as the word "у",
    # taken for text and cut out of the strokes
    assert ("деплой-в-прод", "->", "документация.страница-релиза-в-вики", "запись о релизе") in \
        crop_edges("cicd_ru_deploy", 4000, 5700, 9800, 11100)


@needs_tesseract
def test_a_head_arriving_at_a_diamonds_side_at_a_shallow_angle_is_found():
    # the head of "yes" lies along the diamond's side, its core a little smaller than the image's heads
    assert crop_edges("state_subscription", 6500, 7700, 3700, 4500) == {
        ("seat-count-within-new-plan", "->", "downgrade-at-period-end", "yes")}


def test_a_fill_of_a_colour_of_its_own_is_found_however_small_a_share_of_the_image():
    # med_triage_ru's only queue covers under 0.04 % of its 79 Mpx render, the share the palette asked
    # of a fill; a blend colour along a long straight line is no fill however many pixels it has
    from benchmark.extract.raster import fill_palette

    rgb = np.full((2000, 2000, 3), 255, np.uint8)
    rgb[500:530, 500:530] = (222, 225, 235)        # 900 pixels: a small queue
    rgb[1500, 50:1950] = (200, 205, 230)           # an anti-aliased line's blend, 1 900 pixels
    palette = fill_palette(rgb, min_area=144)
    assert (222, 225, 235) in palette and (200, 205, 230) not in palette
    assert palette[0] == (255, 255, 255)


@needs_tesseract
def test_a_dashed_connector_across_a_containers_title_reaches_the_shape_inside():
    # "метрики канарейки", grey and dashed, runs through the container's title "Мониторинг": bridged
    # across it, the line took the letters it touched, read as a head at the title (the edge went to
    # the container); the letters are no part of it
    assert ("канареечный-релиз", "->", "мониторинг.prometheus", "метрики канарейки") in \
        crop_edges("cicd_ru_deploy", 3350, 5450, 9150, 11750)


@needs_tesseract
def test_a_connector_running_along_its_containers_outline_is_one_edge():
    # "Incident commander" -> "Personal data affected?" leaves the person's neck, runs along the
    # top of its container's outline for a stretch, then rises to the diamond: cut where it lies
    # along the outline, it was read as an edge from the commander to its own container and one
    # from the container to the diamond
    got = crop_edges("ops_security_incident", 3900, 8600, 0, 2000)
    assert ("incident-response.incident-commander", "->", "legal-and-comms.personal-data-affected", "") in got
    assert not {e for e in got if {e[0], e[2]} == {"incident-response", "incident-response.incident-commander"}
                or e[0] == "incident-response" and e[2].startswith("legal")}


def test_pieces_meeting_a_containers_outline_are_joined_only_where_a_line_thickens_it():
    # a container (0) holding shape 1, and shape 2 outside it; a piece from 1 to the container's
    # top outline and one from there to 2 (its head at 2)
    import cv2

    from benchmark.extract.connectors import RawEdge, join_along_outlines
    from benchmark.extract.shapes import Shape

    def box(i: int, x: int, y: int, w: int, h: int, parent: int | None = None) -> Shape:
        contour = np.array([[[x, y]], [[x + w, y]], [[x + w, y + h]], [[x, y + h]]], np.int32)
        return Shape(index=i, kind="rectangle", contour=contour, box=(x, y, w, h), area=float(w * h),
                     fill=(230, 235, 250), parent=parent, children=[1] if i == 0 else [])

    shapes = [box(0, 20, 60, 300, 160), box(1, 60, 140, 80, 40, parent=0), box(2, 250, 5, 60, 30)]

    def stroke(along: bool) -> np.ndarray:
        m = np.zeros((240, 340), np.uint8)
        for s in shapes:
            x, y, w, h = s.box
            cv2.rectangle(m, (x, y), (x + w, y + h), 1, 2)
        if along:                                  # the connector drawn beside the top outline
            cv2.line(m, (130, 62), (230, 62), 1, 2)
        return m > 0

    def pieces(head: bool = True) -> list[RawEdge]:
        up = np.array([[100.0, 140.0], [115.0, 100.0], [130.0, 61.0]])
        out = np.array([[230.0, 61.0], [260.0, 45.0], [275.0, 36.0]])
        return [RawEdge(1, 0, False, False, up, route=up), RawEdge(0, 2, False, head, out, route=out)]

    def read(edges: list[RawEdge]) -> set:
        return {(e.a, e.b, e.head_a, e.head_b) for e in edges}

    assert read(join_along_outlines(pieces(), shapes, stroke(True), 2)) == {(1, 2, False, True)}
    # the outline as thin there as elsewhere: two edges meeting it, not one along it
    assert read(join_along_outlines(pieces(), shapes, stroke(False), 2)) == {(1, 0, False, False), (0, 2, False, True)}
    # no head at either end: no connector is known to run on
    assert read(join_along_outlines(pieces(False), shapes, stroke(True), 2)) == {(1, 0, False, False), (0, 2, False, False)}


@needs_tesseract
def test_a_connector_parting_slowly_from_a_bundle_reaches_the_shape_the_bundle_leaves():
    # dagre draws "renewal failed" out of Active's right side into one stroke with the connectors
    # leaving and arriving there; the bundle parts some hundreds of pixels out, so the traced piece
    # of "renewal failed" began where it left the bundle, at no shape, and the edge was lost
    assert crop_edges("state_subscription", 1500, 4700, 2500, 3200) == {
        ("active", "->", "past-due", "renewal failed")}


def test_an_end_on_a_bundles_stroke_takes_the_shape_ahead_and_its_head_only_without_one_of_its_own():
    from benchmark.extract.connectors import _along_trunks, _End
    from benchmark.extract.skeleton import Chain

    def chain(p0: tuple[float, float], p1: tuple[float, float]) -> Chain:
        a, b = np.array(p0, float), np.array(p1, float)
        pts = a + np.linspace(0, 1, int(np.hypot(*(b - a))) + 1)[:, None] * (b - a)
        u = (b - a) / np.hypot(*(b - a))
        return Chain(pts, [(a, -u), (b, u)])

    def read(parted: tuple[float, float], far_head: bool) -> tuple:
        # the bundle: from shape 5 (whose end has a head: a connector drawn into it) out to shape 7;
        # the parted piece leaves it at x = 150 towards shape 9
        trunk, piece = chain((0, 0), (400, 0)), chain((150, 1), parted)
        t0 = _End(0, 0, trunk.ends[0][0], trunk.ends[0][1], arrow=True, shape=5)
        t1 = _End(0, 1, trunk.ends[1][0], trunk.ends[1][1], shape=7)
        loose = _End(1, 0, piece.ends[0][0], piece.ends[0][1])
        far = _End(1, 1, piece.ends[1][0], piece.ends[1][1], arrow=far_head, shape=9)
        _along_trunks([([0], [0], (t0, t1), []), ([1], [0], (loose, far), [])], [trunk, piece], 2, [])
        return loose.shape, loose.arrow, loose.point.tolist()

    # parting at a shallow angle: the end is on the bundle, aimed back along it at shape 5
    assert read((450, 40), far_head=False) == (5, True, [0.0, 0.0])
    assert read((450, 40), far_head=True) == (5, False, [0.0, 0.0])
    # a line crossing the bundle steeply is no part of it
    assert read((300, 200), far_head=False) == (None, False, [150.0, 1.0])


@needs_tesseract
def test_a_head_arriving_along_a_diamonds_side_with_a_slightly_drawn_out_core_is_found():
    # the head of "заключение" lies along the upper left side of "Нужна госпитализация?": its core,
    # a little longer than wide (1.25 to 1.4) and about a head's size, was taken for the wedge a line
    # leaves where it meets an outline, and the edge lost its direction
    assert ("лучевая-диагностика", "->", "нужна-госпитализация", "заключение") in \
        crop_edges("med_triage_ru", 2500, 6500, 2500, 6500)


@needs_tesseract
def test_a_label_on_the_stretch_a_connector_runs_along_its_containers_outline_is_its_own():
    # "yes" runs down the right side of the carrier's container, along its outline, to "Order
    # complete": the stretch is cut out with the outline and bridged straight, and the label on it
    # was measured against the traced pixels alone, a gap's length away
    assert ("carrier.delivered", "->", "order-complete", "yes") in \
        crop_edges("biz_order_fulfillment", 0, 3000, 4000, 7700)


@needs_tesseract
def test_two_connectors_run_together_up_to_the_head_they_share_keep_it():
    # "да" from "QA одобрил?" and "срочный фикс" arrive at the right side of "Канареечный релиз" along
    # one path for their last stretch: run together, the two lines are wide enough for the opening
    # to keep them, and their core, a head with a long stroke behind it, was taken for lines run
    # together, no head; the edge lost its direction
    assert crop_edges("cicd_ru_deploy", 4900, 6300, 8900, 9500) == {
        ("оа-одобрил", "->", "канареечный-релиз", "да")}


@needs_tesseract
def test_a_connector_leaving_where_another_arrives_does_not_take_its_head():
    # "Откат" -> "Постмортем" leaves the left side of "Откат" from the point where "откатить релиз"
    # arrives: its piece stops where the two lines part, and the walk on to the shape passed the other
    # connector's head, which it took as its own (the edge read <->)
    got = crop_edges("cicd_ru_deploy", 2000, 5600, 11300, 12200)
    assert ("откат", "->", "постмортем", "") in got
    assert not any(e[1] == "<->" for e in got)


@needs_tesseract
def test_two_connectors_leaving_one_point_together_take_no_head_there():
    # "end of period" and "cancellation confirmed" leave the left side of "Cancelled" from one point
    # and part slowly: the wedge they make at the outline is as wide as a head, one end took it as
    # its head and Cancelled -> Expired read <->; both connectors have their heads at their far ends
    got = crop_edges("state_subscription", 0, 1300, 6800, 8500)
    assert {("cancelled", "->", "expired", "end of period"),
            ("cancelled", "->", "offboarding.exit-survey", "cancellation confirmed")} <= got
    assert not any(e[1] == "<->" for e in got)


@needs_tesseract
def test_a_connector_whose_piece_ends_in_a_stub_off_its_line_is_walked_on_along_the_line():
    # "read flags", "/search" and "/reviews" leave the top of "API Gateway" from one point; thinning
    # their merged stroke left "read flags" ending a few widths off the outline in a stub turned
    # sideways, and the walk on to the shape, taken along the stub, left the stroke at once
    assert ("api-gateway", "->", "feature-flags", "read flags") in \
        crop_edges("arch_api_gateway", 2600, 3950, 0, 3800)


@needs_tesseract
def test_two_connectors_crossing_at_a_shallow_angle_are_not_given_a_head_where_they_cross():
    # the lines from "Forensic image" and "Reset credentials" cross at about 10 degrees before their
    # heads at "Remove malware": their overlap was taken for a head (the pieces entering it from the
    # left, shortened by thinning the X's forks, ended too far from it to count as running through)
    assert crop_edges("ops_security_incident", 5450, 6850, 1450, 1950) == {
        ("forensic-image", "->", "remove-malware", ""), ("reset-credentials", "->", "remove-malware", "")}


@needs_tesseract
def test_a_connector_is_joined_across_a_label_whose_letters_have_no_ascender():
    # "query" is boxed from its x-height down, while d2's gap in the dashed connector is a whole line
    # high: the piece above the label ended outside the padded box and was not joined across it
    assert ("grafana", "->", "prometheus", "query") in crop_edges("net_k8s_cluster", 500, 1400, 2200, 3000)


@needs_tesseract
def test_two_heads_run_together_at_one_point_are_both_heads():
    # "Return to depot" and "chat" arrive side by side at the top of "Support ticket": their heads run
    # together into one blob twice a head's size, which only one of the two lines was given; the
    # other line, headless and stopping at the container's outline, read Return to depot -- Customer
    # support
    got = crop_edges("biz_order_fulfillment", 0, 1500, 6300, 7600)
    assert ("return-to-depot", "->", "customer-support.support-ticket", "") in got
    assert not any(e[2] == "customer-support" for e in got)


@needs_tesseract
def test_a_thick_connector_ending_in_a_stub_off_its_line_takes_its_head():
    # "ipa" is drawn three pixels wide (its class's stroke-width): thinning left its piece ending in a
    # stub turned sideways beside its head, measured there it pointed past the head, which no line took
    assert ("code-signing", "->", "testflight", "ipa") in crop_edges("cicd_mobile_release", 0, 3000, 300, 1800)


def crop_words(name: str, x0: int, x1: int, y0: int, y1: int) -> list[str]:
    """The words tesseract reads in a part of a bundled diagram's render (drawn by d2)."""
    from benchmark.dataset import DEFAULT_ROOT
    from benchmark.extract.ocr import read_words
    from benchmark.extract.raster import load_rgb

    rgb = load_rgb(DEFAULT_ROOT / "diagrams" / f"{name}.png")
    return [w.text for w in read_words(rgb[y0:y1, x0:x1].copy())]


@needs_tesseract
def test_an_edge_label_beside_a_shapes_label_is_read_on_its_own():
    # the grey italic "syslog" is set just right of the bold "Test Rack": read as one line with it,
    # tesseract read it as "5559"
    assert sorted(crop_words("net_office", 4700, 5500, 2100, 2350)) == ["Enginee", "Rack", "Test", "syslog"]


@needs_tesseract
def test_an_edge_label_touching_a_shapes_label_is_read_on_its_own():
    # the first "s" of the grey "sessions" touches the last "s" of "Batch Jobs": one piece of ink, whose
    # grey part is the edge label's (read together: "Job$@ss/0"s")
    assert sorted(crop_words("etl_clickstream", 3400, 4000, 1800, 1980)) == ["Batch", "Jobs", "sessions"]


@needs_tesseract
def test_two_labels_set_side_by_side_on_two_close_connectors_go_one_to_each():
    # "no" and "approved" sit side by side where the two connectors into "Compound dose" run close
    # together, read as one line "no approved": it went whole to one connector, the other had none
    got = {(src.split(".")[-1][:10], label) for src, _, dst, label in crop_edges(
        "med_medication_order", 3450, 6500, 3400, 4700) if dst == "compound-dose"}
    assert got == {("restricted", "no"), ("microbiolo", "approved")}


@needs_tesseract
def test_a_connector_crossing_another_at_a_shallow_angle_keeps_its_own_path():
    # "нет" leaves "Риск высокий?" and crosses a longer line at about 25 degrees on its way round to
    # "Сплит-платёж": the crossing's skeleton forks into two junctions a few pixels apart, and the
    # curve's upper arm went on along the other line
    assert ("риск-высокий", "->", "сплит-платёж", "нет") in crop_edges("arch_ru_marketplace", 4900, 6500, 4300, 5700)


@pytest.mark.parametrize("degrees", [15, 25])
def test_two_lines_crossing_at_a_shallow_angle_trace_as_two(degrees):
    import cv2

    from benchmark.extract.skeleton import thin, trace

    rise = int(round(110 * np.tan(np.radians(degrees))))
    lines = [((10, 60), (230, 60)), ((10, 60 + rise), (230, 60 - rise))]
    m = np.zeros((140, 240), np.uint8)
    for a, b in lines:
        cv2.line(m, a, b, 1, 3)
    chains = trace(thin(m > 0), spur=6, reach=8)
    assert len(chains) == 2
    for c in chains:   # each chain runs from one end of a drawn line to its other end
        ends = [np.array(c.ends[k][0]) for k in (0, 1)]
        assert any(sorted(float(np.hypot(*(e - np.array(p)))) < 3 for e in ends for p in line) == [False, False, True, True]
                   for line in lines)


@needs_tesseract
def test_two_connectors_meeting_in_a_sharp_corner_are_two():
    # "no" runs straight down from "Escalate to MLRO?" and the line from "MLRO verdict" meets it in a
    # sharp corner just above the "not suspicious" label: traced as one piece turning back on itself,
    # the two read Escalate to MLRO? -- MLRO verdict, and neither reached "Close case"
    assert crop_edges("fin_wire_transfer_aml", 3478, 4600, 7906, 9386) == {
        ("escalate-to-mlro", "->", "close-case-no-further-action", "no"),
        ("mlro-verdict", "->", "close-case-no-further-action", "not suspicious")}


@needs_tesseract
def test_a_connector_leaving_a_shape_under_another_edges_label_is_attached_to_it():
    # the label of a connector crossing below "CDN" covers the start of CDN -> WAF: d2 blanks the
    # label's box out of it, and its piece starts past the box, too far from CDN to attach
    got = {(src, arrow, dst) for src, arrow, dst, _ in crop_edges("arch_ru_marketplace", 4916, 5348, 1992, 2752)}
    assert got == {("cdn", "->", "waf")}


@needs_tesseract
def test_a_connector_whose_head_is_under_another_edges_label_points_into_it():
    # "Хранилище данных" -> "Витрина признаков" ends under the label of a connector passing above
    # "Витрина признаков": its head is blanked with the label's box, and no head shows at either end
    got = {(src, arrow, dst) for src, arrow, dst, _ in crop_edges("arch_ru_marketplace", 6510, 7776, 4720, 5688)}
    assert ("хранилище-данных", "->", "витрина-признаков") in got


@needs_tesseract
def test_straight_connectors_of_a_grid_whose_heads_are_under_a_label_point_into_them():
    # arch_event_driven is a grid layout: its connectors are straight lines between the shapes'
    # centres. "partner order" and "till sale" end at "Order Service" under the label "checkout",
    # and "complaint" at "Helpdesk Portal" under "spans": their heads are blanked with the labels'
    # boxes, and no head shows at their other ends
    got = crop_edges("arch_event_driven", 0, 8950, 0, 6838)
    assert {("sales-channels.marketplace-connector", "->", "order-service", "partner order"),
            ("sales-channels.in-store-pos", "->", "order-service", "till sale"),
            ("customer", "->", "customer-care.helpdesk-portal", "complaint")} <= got


def test_a_hidden_end_is_read_as_a_head_only_where_connectors_show_their_heads():
    from benchmark.extract.connectors import RawEdge, _heads_under_labels

    def edge(heads: tuple[bool, bool], under: tuple[bool, bool]) -> RawEdge:
        return RawEdge(0, 1, heads[0], heads[1], np.zeros((2, 2)), under_label=under)

    directed = [edge((False, True), (False, False)) for _ in range(8)]
    hidden, both, plain = edge((False, False), (True, False)), edge((False, False), (True, True)), \
        edge((False, False), (False, False))
    _heads_under_labels(directed + [hidden, both, plain])
    assert (hidden.head_a, hidden.head_b) == (True, False)
    assert not (both.head_a or both.head_b or plain.head_a or plain.head_b)
    # a drawing whose connectors mostly show no head (a network drawn with --): the hidden end is as
    # headless as the others
    undirected = [edge((False, False), (False, False)) for _ in range(8)]
    hidden = edge((False, False), (False, True))
    _heads_under_labels(undirected + [hidden])
    assert not (hidden.head_a or hidden.head_b)


@needs_tesseract
def test_a_connector_stopping_short_of_a_labels_gap_where_it_crosses_another_is_joined_across_it():
    # "yes" from "Authorised?" crosses another line just before its label: the crossing's stretch up to
    # the label's gap is dropped, and the piece ends too far from the label's box to be joined across it
    assert ("authorised", "->", "payments-topic", "yes") in crop_edges("arch_event_driven", 3926, 5454, 1810, 2708)


@needs_tesseract
def test_a_grid_connector_drawn_end_to_end_with_others_along_one_line_is_read():
    # arch_search is a grid layout. "Hybrid Retriever" -> "Score Blender" lies, inside its container's
    # cell, along a straight line from a shape above through both their centres, read as no edge
    # (which connector runs where along it cannot be seen); the traced edge was dropped as a piece of
    # that line, and the connector was lost
    got = crop_edges("arch_search", 0, 8000, 0, 4200)
    assert ("retrieval.hybrid-retriever", "->", "retrieval.score-blender", "") in got


@needs_tesseract
def test_a_wedge_larger_than_the_images_heads_is_the_head_dropped_not_the_real_one():
    # a line drawn over "Zero results?" crosses its side where "yes" leaves it: the wedge there, larger
    # than the image's heads, was taken for a head too, and of the connector's two heads the smaller
    # (its real one, at "Fallback Recommendations") was dropped: the edge read backwards
    assert ("zero-results", "->", "fallback-recommendations", "yes") in crop_edges("arch_search", 6500, 8200, 1600, 2600)


@needs_tesseract
def test_a_head_arriving_along_a_persons_shoulder_into_its_neck_is_found():
    # "failed tests" arrives at "Data On-call" along the person's shoulder into its neck: its head's
    # core lies near the outline all over and was taken for a wedge where a line meets an outline, and
    # the edge lost its direction
    assert ("batch-jobs.hold-and-page-data-team", "->", "data-quality.data-on-call", "failed tests") in \
        crop_edges("etl_clickstream", 0, 8156, 0, 5414)


@needs_tesseract
@pytest.mark.parametrize("name, edge", [
    ("fin_wire_transfer_aml", ("transaction-monitoring", "->", "financiat-intelligence-unit", "alerts for investigation")),
    ("net_office", ("remote-branch-site", "->", "vpn-concentrator", "site-to-site IPsec")),
])
def test_an_edge_label_read_unsurely_among_all_the_text_is_read_again_alone(name, edge):
    # in the mosaic of all the image's text tesseract read "lerts for investigation" and
    # "site-to-site [Р5ес", less surely than clean words; read alone, the lines read right
    assert edge in crop_edges(name, 0, 20000, 0, 20000)


def test_a_line_read_again_replaces_the_first_reading_only_when_surer():
    from benchmark.extract.labels import Block, reread_unsure_labels, surer_reading
    from benchmark.extract.ocr import Word

    assert surer_reading([("sev", 17), ("l", 17)], [("sev", 59), ("1", 59)])
    # as sure, fewer or more words, or a mark at a word's end the first reading lacked: kept as read
    assert not surer_reading([("da", 90)], [("aa", 91)])
    assert not surer_reading([("recv", 92), ("ack", 96)], [("recvack", 99)])
    assert not surer_reading([("poisk", 76)], [("\u201epoisk", 90)])
    assert surer_reading([("trigge.,", 37)], [("trigger,", 74)])
    # a sure label is not read again, nor is a dark (a shape's) one: no tesseract call is made
    sure = Block([[Word("checkout", 0, 0, 60, 12, 96.0, 110.0)]], grey=True)
    dark = Block([[Word("Checkout", 0, 0, 60, 12, 40.0, 10.0)]], grey=False)
    reread_unsure_labels([sure, dark], None, 1, "eng")
    assert (sure.text, dark.text) == ("checkout", "Checkout")


@needs_tesseract
def test_a_small_head_arriving_along_a_diamonds_side_at_a_very_shallow_angle_is_found():
    # "инсульт" arrives at "Шкала FAST положительна?" almost along its upper side: the head's core, on a
    # diagram drawn with thin lines, is drawn out to 1.58 times its width and was taken for a wedge
    assert ("профиль-пациента", "->", "шкала-fast-положительна", "инсульт") in \
        crop_edges("med_triage_ru", 0, 3600, 8500, 9700)


@needs_tesseract
def test_a_connector_drawn_over_a_diamond_is_one_edge_though_a_wedge_at_its_outline_looks_like_a_head():
    # the grey dashed "renal function" runs from "Lab information system" over "Second pharmacist
    # check": the wedge where it crosses the diamond's outline near its tip was taken for a head, and
    # the connector read as two edges, into and out of the diamond
    got = crop_edges("med_medication_order", 0, 6500, 2700, 5500)
    assert ("laboratory.lab-information-system", "->", "pharmacy.pharmacist-verification", "renal function") in got
    assert not {e for e in got if "second-pharmacist-check" in (e[0], e[2]) and "lab-information" in e[0] + e[2]}


@needs_tesseract
def test_heads_piled_up_where_several_connectors_arrive_at_one_point_are_each_ones_head():
    # four connectors arrive at one point of "Enter medication order"'s left side, their heads drawn
    # one over another: the pile was too large for a head and dropped, and the connectors (among them
    # "no" from "Discrepancy found?") were read without direction
    assert ("discrepancy-found", "->", "enter-medication-order", "no") in \
        crop_edges("med_medication_order", 0, 5500, 600, 1600)


@needs_tesseract
def test_labels_set_side_by_side_on_three_connectors_go_one_to_each():
    # "checkout", "checkout API" and "checkout API" touch in one row where three connectors into the
    # storefront cross it; tesseract boxed the first word of each label over the whole label, and the
    # row was read as one line, then split into the three "checkout"s and two lone "API"s
    got = {e for e in crop_edges("arch_event_driven", 0, 2600, 0, 2200) if e[2] == "storefront"}
    assert {("web-shop", "->", "storefront", "checkout"), ("ios-app", "->", "storefront", "checkout API"),
            ("android-app", "->", "storefront", "checkout API")} <= got


@needs_tesseract
def test_a_lone_l_in_an_edge_label_is_a_one():
    # "sev 1" was read as one word "sevl", split at the space as "sev" and "l"
    assert ("work-the-incident", "->", "call-engineering-manager", "sev 1") in \
        crop_edges("ops_pager_escalation", 0, 1500, 2000, 3600)


@needs_tesseract
def test_a_dashed_and_a_solid_connector_crossing_under_their_labels_are_each_joined_in_its_own_style():
    # the dashed "pull" from the registry and the solid "/api" from the ingress controller cross just
    # under their labels; the pieces were joined the wrong way across the labels' gaps, swapping ends
    got = {(a.split(".")[-1], arrow, b.split(".")[-1]) for a, arrow, b, _ in
           crop_edges("net_k8s_cluster", 2400, 4142, 900, 3100)}   # ids without their container's
    assert ("container-registry", "->", "web-pods") in got
    assert ("ingress-controller", "->", "api-service") in got
    assert ("container-registry", "->", "api-service") not in got


@needs_tesseract
def test_two_connectors_run_together_into_one_stroke_keep_their_way_to_the_shape():
    # "no" from "Score above threshold?" and "yes" from "Customer confirms payment?" run together into
    # one stroke two lines wide before "Daily limit exceeded?": a small piece of it the head opening
    # kept was taken for a head pointing back, and both connectors were lost
    got = {e[:3] for e in crop_edges("fin_wire_transfer_aml", 1600, 5000, 800, 2400)}
    assert {("score-above-threshold", "->", "daily-limit-exceeded"),
            ("customer-confirms-payment", "->", "daily-limit-exceeded")} <= got


@needs_tesseract
def test_a_connector_merging_into_another_just_before_their_shape_shares_its_head():
    # "Reverse charge applied" and "Tax calculated" both lead into "Charge card"'s right side, their
    # lines merging into one some 70 pixels before the head: where they merge, the thinning left no
    # skeleton on either line for a few widths, and the loose end, stopped short of the other line,
    # was attached to nothing
    got = {e[:3] for e in crop_edges("state_subscription", 6000, 8588, 5200, 6200)}
    assert {("reverse-charge-applied", "->", "charge-card"), ("tax-calculated", "->", "charge-card")} <= got


@pytest.mark.parametrize("name", ["arch_ru_marketplace", "net_office"])
def test_wide_clouds_and_clouds_cut_by_connectors_are_found(name, tmp_path):
    # arch_ru_marketplace's "Банк-эквайер" and "Курьерская служба" and net_office's "Internet" are
    # drawn some fifteen times wider than tall, and their bumps, a few pixels along a long outline, did
    # not count as a cloud's. Connectors drawn across "Банк-эквайер", "Offsite Backup Service" and
    # "HVAC Vendor Cloud" cut each into pieces: none cloud-shaped, or one holding part of the label
    _assert_clouds_hold_their_labels(name, tmp_path)


@needs_tesseract
def test_a_solid_and_a_dashed_connector_meeting_at_a_corner_beside_a_label_are_two():
    # the dashed "stock levels" crosses the solid "fail" right at the top of the "fail" label, whose
    # box blanks the crossing's lower arm: the thinning joined the solid line from "Pick items" and
    # the dashed one round the corner into one piece, and "fail" was lost
    assert ("quality-check", "->", "pick-items", "fail") in crop_edges("biz_order_fulfillment", 0, 1400, 2400, 4600)


@needs_tesseract
def test_a_connector_merging_into_another_at_a_containers_outline_shares_its_head_inside():
    # "return notice" from "Credit funds back" and "statement copy" run together into one stroke just
    # where they cross the outline of "Customer notifications", and share one head at "Letter to
    # customer" inside it: "return notice" stopped at the container's outline, headless, and was read
    # as an edge to the container
    got = {e[:3] for e in crop_edges("fin_wire_transfer_aml", 3200, 6800, 4380, 11306)}
    assert ("clearing-and-settlement.credit-funds-back", "->", "customer-notifications.letter-to-customer") in got


@needs_tesseract
def test_a_dashed_connector_crossing_a_containers_outline_at_a_shallow_angle_is_one():
    # the dashed "daily export" crosses the top of "Revenue analytics" at about 10 degrees: it runs
    # for some 50 pixels within the zone cut away round the outline, where its dashes merge with it,
    # and its two pieces were read as two edges, one to the container and one from it
    got = crop_edges("state_subscription", 500, 7800, 4380, 9200)
    assert ("billing-cycle.revenue-ledger", "->", "revenue-analytics.mrr-dashboard", "daily export") in got
    assert not {e for e in got if "revenue-analytics" in (e[0], e[2]) and e[3] != "ticket trends"}


@needs_tesseract
def test_a_loose_end_on_a_curving_line_walks_on_along_the_curve_to_its_shape():
    # "reindex" leaves the bottom of "Catalog DB" steeply and curves away; two other connectors cross
    # it just below the outline, and its traced piece stops there. The walk on from that end, straight
    # along the end's direction, left the curving line after a few pixels
    assert ("catalog-and-pricing.catalogdb", "->", "catalog-and-pricing.search-index", "reindex") in \
        crop_edges("arch_event_driven", 960, 3700, 4940, 6800)
