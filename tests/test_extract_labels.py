"""Edge labels on d2 renders, each defect as a minimal D2 drawn by the real d2 binary and read
back by real tesseract."""
from __future__ import annotations

from pathlib import Path

import pytest

from benchmark.extract.align import comparable
from benchmark.extract.ocr import tesseract_available
from benchmark.render import render_file

needs_tesseract = pytest.mark.skipif(not tesseract_available(), reason="tesseract is not installed")


def read_back(tmp_path: Path, name: str, d2: str) -> dict:
    from benchmark.extract.pipeline import extract

    src = tmp_path / f"{name}.d2"
    src.write_text(d2, encoding="utf-8")
    png = tmp_path / f"{name}.png"
    render_file(src, png)
    return extract(png)


def edges(graph: dict) -> set[tuple[str, str, str, str]]:
    return {(e["src"], e["arrow"], e["dst"], e["label"]) for e in graph["edges"]}


def grid(cells: dict[int, str], links: list[str], columns: int = 5, rows: int = 3) -> str:
    """A D2 grid of equal cells; the cells not named in ``cells`` are there but invisible."""
    lines = [f"grid-rows: {rows}", f"grid-columns: {columns}", "grid-gap: 60"]
    for i in range(rows * columns):
        if i in cells:
            lines.append(f"n{i}: {cells[i]} {{width: 120; height: 60}}")
        else:
            lines.append(f'n{i}: "" {{width: 120; height: 60; style.opacity: 0}}')
    return "\n".join(lines + links) + "\n"


@needs_tesseract
def test_label_where_a_long_connector_crosses_goes_to_the_connector_it_is_the_middle_of(tmp_path):
    # Lambda -> Epsilon runs straight across the grid and passes through the label of the short
    # Eta -> Omicron, right where that label sits: the label is in the middle of Eta -> Omicron
    # only, so it is that edge's
    d2 = grid({4: "Epsilon", 6: "Eta", 10: "Lambda", 11: "Omicron"}, ["n6 -> n11: spare", "n10 -> n4"])
    g = read_back(tmp_path, "crossing", d2)
    assert edges(g) == {("eta", "->", "omicron", "spare"), ("lambda", "->", "epsilon", "")}


def bundled_crop(name: str, x: int, y: int, half: int = 600):
    """A square of a bundled diagram's render (drawn by d2), centred on (x, y)."""
    from benchmark.dataset import DEFAULT_ROOT
    from benchmark.extract.raster import load_rgb

    rgb = load_rgb(DEFAULT_ROOT / "diagrams" / f"{name}.png")
    return rgb[y - half:y + half, x - half:x + half].copy()


@needs_tesseract
@pytest.mark.parametrize("name, x, y, edge", [
    # an English diagram: tesseract, reading English and Russian, reads the italic "no" as "по"
    ("fin_wire_transfer_aml", 5055, 9987, ("politically-exposed-person", "->", "risk-rating-high", "no")),
    # a Russian one: "да" read as "4a"
    ("med_triage_ru", 5253, 10520, ("тропонин-повышен", "->", "осмотр-кардиолога", "да")),
])
def test_short_label_read_in_the_wrong_script_is_read_again_in_the_diagrams_own(name, x, y, edge):
    from benchmark.extract.pipeline import extract_image

    g = extract_image(bundled_crop(name, x, y))
    assert edge in edges(g)


@needs_tesseract
def test_pieces_of_connectors_drawn_over_two_shapes_do_not_repeat_their_labelled_edge():
    # OTP Sender -> Token Service ("code ok") in a grid where several long straight connectors
    # pass over both shapes: their pieces between the two read as edges between them too
    from benchmark.extract.pipeline import extract_image

    g = extract_image(bundled_crop("arch_event_driven", 1680, 4400, half=800))
    between = {e for e in edges(g) if {e[0], e[2]} == {"otp-sender", "token-service"}}
    assert between == {("otp-sender", "->", "token-service", "code ok")}


@needs_tesseract
def test_node_label_crossed_by_a_connector_is_read_whole(tmp_path):
    # Alpha -> Delta runs straight over Gamma and through its label: the letters under the line
    # are kept, not blanked with it (tesseract read the cut "Gamma" as "баплта")
    d2 = grid({0: "Alpha", 4: "Beta", 7: "Gamma", 14: "Delta"}, ["n4 -> n7: code ok", "n0 -> n14"],
              columns=3, rows=5)
    g = read_back(tmp_path, "over-label", d2)
    assert {n["label"] for n in g["nodes"]} == {"Alpha", "Beta", "Gamma", "Delta"}
    assert ("beta", "->", "gamma", "code ok") in edges(g)


@needs_tesseract
def test_single_letter_word_run_into_its_neighbour_is_split_again(tmp_path):
    # tesseract reads the italic "баг в трекер" as "багв трекер" and "с решением" as "срешением"
    g = read_back(tmp_path, "spaces", "qa: Тестирование\ndev: Задача в трекере\nesc: Эскалация\nwork: В работе\n"
                                      "qa -> dev: баг в трекер\nesc -> work: вернули с решением\n")
    assert edges(g) == {("тестирование", "->", "задача-в-трекере", "баг в трекер"),
                        ("эскалация", "->", "в-работе", "вернули с решением")}


@needs_tesseract
def test_short_label_without_ascenders_beside_its_curve_is_found():
    # "no" (a box half a line high) lies beside the curve it labels, where d2 placed it by the
    # curve's control points, further from the line than four of its own heights
    from benchmark.extract.pipeline import extract_image

    g = extract_image(bundled_crop("state_subscription", 920, 2150, half=900))
    assert ("sign-up-risk-score-high", "->", "trial", "no") in edges(g)
    assert ("manual-risk-review", "->", "trial", "approved") in edges(g)


@needs_tesseract
def test_dashes_of_a_grey_connector_read_as_text_are_no_label(tmp_path):
    # the grey dashed connector beside Deploy Service -> Secrets Vault reads as a column of "1"s,
    # which went to the blue edge beside it as its label
    g = read_back(tmp_path, "dashes", 'classes: {\n  data: {style: {stroke-dash: 4; stroke: "#6b7280"}}\n}\n'
                                      "a: Deploy Service\nb: Secrets Vault\nc: Audit Log\n"
                                      "a -> b\na -> b {class: data}\nb -> c\nb -> c {class: data}\n")
    assert ("deploy-service", "->", "secrets-vault", "") in edges(g)


def test_a_container_takes_one_title_and_leaves_the_labels_near_its_top_to_the_edges():
    """Graphviz and PlantUML draw a cluster's title inside its top edge; an edge label just below it
    (a connector entering the cluster) is no part of the title."""
    import numpy as np

    from benchmark.extract.labels import Block, assign_node_labels
    from benchmark.extract.ocr import Word
    from benchmark.extract.shapes import Shape

    def box(i, x, y, w, h):
        cnt = np.array([[[x, y]], [[x + w, y]], [[x + w, y + h]], [[x, y + h]]], np.int32)
        return Shape(i, "rectangle", cnt, (x, y, w, h), float(w * h), (255, 255, 255))

    shapes = [box(0, 100, 100, 400, 300), box(1, 200, 250, 150, 60)]
    shapes[0].children, shapes[1].parent = [1], 0
    title = Block([[Word("Warehouse", 250, 105, 90, 16, 95, 0)]])
    near = Block([[Word("order", 380, 128, 50, 16, 95, 0)]])      # an edge label, two lines lower
    inside = Block([[Word("Pick", 240, 270, 40, 16, 95, 0), Word("items", 285, 270, 45, 16, 95, 0)]])
    used: set[int] = set()
    labels = assign_node_labels([near, title, inside], shapes, {}, used)
    assert labels == {0: "Warehouse", 1: "Pick items"}
    assert used == {1, 2}


@needs_tesseract
def test_a_person_a_grid_stretched_takes_its_label_from_below():
    # arch_search's grid stretches the person "Shopper" to its column's width: a flat head over a flat
    # body, no longer read as a person, so its label below it went to no node
    from benchmark.dataset import DEFAULT_ROOT
    from benchmark.extract.pipeline import extract_image
    from benchmark.extract.raster import load_rgb

    rgb = load_rgb(DEFAULT_ROOT / "diagrams" / "arch_search.png")
    g = extract_image(rgb[2250:2750, 0:2700].copy())
    assert [(n["label"], n["shape"]) for n in g["nodes"]] == [("Shopper", "person")]


@needs_tesseract
def test_a_short_label_ocr_skipped_is_read_again_in_its_shape(tmp_path):
    # tesseract's sparse reading of med_triage_ru skipped the box "КТ" alone: a shape left without a
    # label whose dark ink no word was read from is read again; ink read already is not
    import cv2

    from benchmark.extract.labels import read_unlabelled
    from benchmark.extract.ocr import Word
    from benchmark.extract.pipeline import analysis_raster
    from benchmark.extract.raster import load_rgb
    from benchmark.extract.shapes import find_shapes

    src, png = tmp_path / "kt.d2", tmp_path / "kt.png"
    src.write_text("kt: КТ\n", encoding="utf-8")
    render_file(src, png)
    rgb = load_rgb(png)
    r, factor = analysis_raster(rgb)
    shapes = find_shapes(r)
    assert len(shapes) == 1
    labels: dict[int, str] = {}
    read_unlabelled(labels, shapes, r, [], rgb, factor, "eng+rus")
    assert comparable(labels[0]) == comparable("КТ")   # Latin or Cyrillic look-alikes
    # the same ink with a word read over it: nothing to read again
    x, y, w, h = cv2.boundingRect((r.ink & (r.lum < 100)).astype("uint8"))
    labels = {}
    read_unlabelled(labels, shapes, r, [Word("КТ", x, y, w, h, 96.0, 16.0)], rgb, factor, "eng+rus")
    assert labels == {}


@needs_tesseract
def test_two_labels_set_one_on_the_other_are_both_read():
    # state_tcp: d2 set "passive open" over "timeout", the "p" of one in the other. In the mosaic of
    # all the image's text tesseract read them as "assive" two lines tall beside "open" and "timeo",
    # and each label lost letters; the tall word and its neighbours read again alone read right
    from benchmark.dataset import DEFAULT_ROOT
    from benchmark.extract.pipeline import extract

    g = extract(DEFAULT_ROOT / "diagrams" / "state_tcp.png")
    assert ("closed", "->", "listen", "passive open") in edges(g)
    assert ("syn-sent", "->", "closed", "timeout") in edges(g)


def test_the_lines_of_a_stacked_reading_are_two_labels():
    from benchmark.extract.labels import group_blocks, group_lines, stacked_regions
    from benchmark.extract.ocr import Word

    # "candidates" with "no" just under it, centred on it: lines one label's would be
    words = [Word("candidates", 100, 100, 98, 16, 96, 109), Word("no", 124, 117, 22, 12, 96, 109)]
    assert [b.text for b in group_blocks(group_lines(words))] == ["candidates\nno"]
    assert [b.text for b in group_blocks(group_lines(words), [words])] == ["candidates", "no"]
    # a word that alone is two lines tall, with the words beside it on its rows, is one region;
    # a word far off, or of a node label, is not in it
    words = [Word("trigge.,", 100, 100, 67, 28, 37, 109), Word("clicks", 175, 104, 50, 16, 96, 109),
             Word("far", 400, 104, 30, 16, 96, 109), Word("Indexer", 60, 104, 30, 16, 96, 16)]
    words += [Word("yes", 0, 300 + 40 * i, 30, 16 + i % 2 * 4, 96, 109) for i in range(8)]
    regions, tall = stacked_regions(words)
    assert regions == [[0, 1]] and tall == 20.0


def test_a_label_read_just_beside_its_connectors_middle_is_not_shared_with_the_next_one():
    # arch_search: "read" set right over "zero-result queries". The connector of "read" is joined
    # across both labels and runs through the other, but its own label lies nearer its middle: the
    # other block is not split between the two connectors ("zero-result" | "queries")
    import numpy as np

    from benchmark.extract.connectors import RawEdge, split_shared_labels
    from benchmark.extract.labels import Block
    from benchmark.extract.ocr import Word

    read = Block([[Word("read", 100, 80, 41, 16, 95, 109)]], True)
    other = Block([[Word("zero-result", 40, 96, 96, 16, 88, 109), Word("queries", 141, 100, 64, 16, 96, 109)]], True)
    down = RawEdge(0, 1, False, True, np.array([[120.0, y] for y in range(-24, 201)]), crossed=[0, 1])
    across = RawEdge(2, 3, False, True, np.array([[x, 104.0] for x in range(0, 301)]), crossed=[1])
    blocks = split_shared_labels([down, across], [read, other], 2)
    assert [b.text for b in blocks] == ["read", "zero-result queries"]


@needs_tesseract
@pytest.mark.parametrize("name, line, text", [
    # the space before a one-letter word looks narrow only at a slant far from the font's,
    # where the gaps between letters widen too
    ("med_triage_ru", [("боль", 2377, 9205, 55, 18), ("вгруди", 2440, 9210, 90, 18)], "боль в груди"),
    # a space a third of the line's height (its words with ascenders and descenders), and a three
    # read as the letter "з"
    ("arch_ru_marketplace", [("забрали", 6930, 2144, 130, 43), ("заз", 7075, 2144, 78, 28)], "забрали за 3"),
])
def test_a_word_run_into_a_one_letter_word_over_a_space_is_split(name, line, text):
    from benchmark.dataset import DEFAULT_ROOT
    from benchmark.extract.labels import Block, split_run_together
    from benchmark.extract.ocr import Word
    from benchmark.extract.raster import load_rgb

    rgb = load_rgb(DEFAULT_ROOT / "diagrams" / f"{name}.png")
    b = Block([[Word(t, x, y, w, h, 96.0, 109.0) for t, x, y, w, h in line]], True)
    split_run_together([b], rgb, 1)
    assert b.text == text
