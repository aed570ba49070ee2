"""Connectors drawn over the shapes in their way, as d2's grid layouts draw them: straight lines
between the centres of shapes in different cells (:mod:`benchmark.extract.straight`; drawn by the
real d2 binary and read back with real tesseract), and a traced line joined across a shape
(:func:`benchmark.extract.connectors._through_shapes`)."""
from __future__ import annotations

import numpy as np
import pytest

from benchmark.extract.ocr import tesseract_available
from tests.test_extract_d2_defects import edges, read_back

needs_tesseract = pytest.mark.skipif(not tesseract_available(), reason="tesseract is not installed")

#: four rows of two wide cells: a connector between cells that are not neighbours crosses the
#: corners of the shapes between them
CELLS = ("grid-rows: 4\ngrid-gap: 40\n"
         "a: Order Intake {width: 300; height: 100}\nb: Stock Check {width: 300; height: 100}\n"
         "c: Packing Station {width: 300; height: 100}\nd: Label Printer {width: 300; height: 100}\n"
         "e: Courier Pickup {width: 300; height: 100}\nf: Returns Desk {width: 300; height: 100}\n"
         "g: Invoice Service {width: 300; height: 100}\n")


@needs_tesseract
def test_connectors_across_a_grid_are_read_from_shape_to_shape_over_the_shapes_between(tmp_path):
    # each crossing connector runs over the corners of two or three shapes; read piece by piece,
    # three of the four became edges to the shapes they cross. The edge inside the container's
    # cell (Tax Rules -> Ledger, laid out by the container's own layout) is traced as before.
    d2 = CELLS + ("h: Billing {\n  x: Tax Rules\n  y: Ledger\n  x -> y: post\n}\n"
                  "a -> f: ship\nb -> g\nc -> h.y: bill\na -> c\n")
    g = read_back(tmp_path, "grid", d2)
    assert edges(g) == {("order-intake", "->", "returns-desk", "ship"), ("stock-check", "->", "invoice-service", ""),
                        ("packing-station", "->", "billing.ledger", "bill"),
                        ("order-intake", "->", "packing-station", ""), ("billing.tax-rules", "->", "billing.ledger", "post")}


#: the grid above with a fourth row's second cell, and three connectors across it that make it a grid
COLUMN = CELLS + "h: Audit Log {width: 300; height: 100}\na -> f: ship\nb -> g\nc -> h: bill\n"
COLUMN_EDGES = {("order-intake", "->", "returns-desk", "ship"), ("stock-check", "->", "invoice-service", ""),
                ("packing-station", "->", "audit-log", "bill")}


@needs_tesseract
def test_a_connector_along_a_column_over_the_centres_of_other_shapes_is_read_when_no_other_runs_there(tmp_path):
    # Invoice Service -> Order Intake runs up the first column over the centres of the two shapes
    # between them. Connectors end to end would be cut at those shapes' outlines, leaving their
    # insides bare; this one's stroke runs on over them, and no other line lies along it
    g = read_back(tmp_path, "column", COLUMN + "g -> a\n")
    assert edges(g) == COLUMN_EDGES | {("invoice-service", "->", "order-intake", "")}


@needs_tesseract
def test_connectors_end_to_end_along_a_column_are_not_read_as_one_through_the_shapes_between(tmp_path):
    g = read_back(tmp_path, "chain", COLUMN + "g -> e\ne -> c\nc -> a\n")
    assert edges(g) == COLUMN_EDGES | {("invoice-service", "->", "courier-pickup", ""),
                                       ("courier-pickup", "->", "packing-station", ""),
                                       ("packing-station", "->", "order-intake", "")}


@needs_tesseract
def test_connectors_overlapping_along_a_column_are_left_out(tmp_path):
    # Invoice Service -> Order Intake and Invoice Service -> Packing Station overlap from Invoice
    # Service to Packing Station: the first could as well start at Courier Pickup (whose inside the
    # second runs over), so neither is read, nor any edge to the shapes they pass through
    g = read_back(tmp_path, "overlap", COLUMN + "g -> a\ng -> c\n")
    assert edges(g) == COLUMN_EDGES


def test_straight_lines_between_drawn_boxes():
    # three boxes in a row and one below: a line from the first to the third runs on over the
    # middle box's centre and no other line lies along it, so it is read (undirected), and its
    # pieces to the middle box are no lines (the stroke runs on through it); a line from the first
    # box's centre to the one below, with a head, is read
    import cv2

    from benchmark.extract.shapes import Shape
    from benchmark.extract.straight import is_grid, straight_lines

    canvas = np.zeros((300, 400), np.uint8)
    boxes = [(10, 10, 80, 40), (160, 10, 80, 40), (310, 10, 80, 40), (160, 200, 80, 40)]
    shapes = []
    for i, (x, y, w, h) in enumerate(boxes):
        contour = np.array([[[x, y]], [[x + w, y]], [[x + w, y + h]], [[x, y + h]]], np.int32)
        shapes.append(Shape(index=i, kind="rectangle", contour=contour, box=(x, y, w, h), area=float(w * h),
                            fill=(245, 246, 252)))
        cv2.rectangle(canvas, (x, y), (x + w, y + h), 1, 2)
    cv2.line(canvas, (90, 30), (310, 30), 1, 2)                     # over box 1's centre
    a, b = np.array(shapes[0].centre), np.array(shapes[3].centre)
    u = (b - a) / np.hypot(*(b - a))
    # from where the centres' line leaves box 0 to where it meets box 3's top
    start, tip = a + u * (50 - a[1]) / u[1], a + u * (200 - a[1]) / u[1]
    cv2.line(canvas, tuple(int(v) for v in start), tuple(int(v) for v in tip), 1, 2)
    back, side = tip - 14 * u, 6 * np.array([-u[1], u[0]])
    cv2.fillPoly(canvas, [np.round([tip, back + side, back - side]).astype(np.int32)], 1)
    stroke = canvas > 0
    lines = straight_lines(stroke, shapes, [], np.zeros_like(stroke), 2)
    assert {(ln.a, ln.b, ln.head_a, ln.head_b) for ln in lines if not ln.ambiguous} == {(0, 3, False, True),
                                                                                      (0, 2, False, False)}
    assert {(ln.a, ln.b, tuple(ln.over), tuple(ln.centres)) for ln in lines if ln.a == 0 and ln.b == 2} == {(0, 2, (1,), (1,))}
    assert not is_grid(lines)          # one line read passes over another shape, not three
    # without its head the same line is read as undirected
    plain = np.zeros((300, 400), np.uint8)
    for x, y, w, h in boxes:
        cv2.rectangle(plain, (x, y), (x + w, y + h), 1, 2)
    cv2.line(plain, tuple(int(v) for v in start), tuple(int(v) for v in tip), 1, 2)
    lines = straight_lines(plain > 0, shapes, [], np.zeros_like(stroke), 2)
    assert {(ln.a, ln.b, ln.head_a, ln.head_b, ln.ambiguous) for ln in lines} == {(0, 3, False, False, False)}


def test_a_line_over_a_shapes_centre_is_read_when_its_stroke_runs_on_over_it_and_its_pieces_meet_headless():
    # three boxes in a row; the candidate lines are given: the whole row 0-2 over box 1's centre,
    # and its two pieces 0-1 (no head) and 1->2
    import cv2

    from benchmark.extract.shapes import Shape
    from benchmark.extract.straight import Line, _Insides, resolve_through_centres

    boxes = [(10, 10, 80, 40), (160, 10, 80, 40), (310, 10, 80, 40)]
    shapes = [Shape(index=i, kind="rectangle", box=b, area=float(b[2] * b[3]), fill=(245, 246, 252),
                    contour=np.array([[[b[0], b[1]]], [[b[0] + b[2], b[1]]], [[b[0] + b[2], b[1] + b[3]]],
                                      [[b[0], b[1] + b[3]]]], np.int32)) for i, b in enumerate(boxes)]
    insides = _Insides(shapes, (80, 400))

    def canvas(through: bool) -> np.ndarray:
        c = np.zeros((80, 400), np.uint8)
        for x, y, w, h in boxes:
            cv2.rectangle(c, (x, y), (x + w, y + h), 1, 2)
        cv2.line(c, (90, 30), (160, 30), 1, 2)
        cv2.line(c, (240, 30), (310, 30), 1, 2)
        if through:                               # the stroke runs on over box 1's inside
            cv2.line(c, (160, 30), (240, 30), 1, 2)
        return c > 0

    def lines(head_at_1: str = "") -> list:
        pts = np.zeros((2, 2))
        return [Line(0, 2, False, True, pts, {1}, True, {1}), Line(0, 1, False, head_at_1 == "left", pts),
                Line(1, 2, head_at_1 == "right", True, pts)]

    def read(ls: list) -> set:
        return {(ln.a, ln.b, ln.ambiguous) for ln in ls}

    # the stroke runs on over box 1: the row is one line, its pieces are left out
    assert read(resolve_through_centres(lines(), shapes, insides, canvas(True), 2)) == {(0, 2, False)}
    # box 1's inside bare: connectors end to end, cut at its outline
    assert read(resolve_through_centres(lines(), shapes, insides, canvas(False), 2)) == \
        {(0, 2, True), (0, 1, False), (1, 2, False)}
    # a head where the pieces meet: 0 -> 1 is a connector of its own, and which starts where cannot be seen
    for side in ("left", "right"):
        assert read(resolve_through_centres(lines(side), shapes, insides, canvas(True), 2)) == \
            {(0, 2, True), (0, 1, False), (1, 2, False)}
    # another line along the row reaching beyond it (from box 0 to a box further right) leaves it ambiguous
    shapes.append(Shape(index=3, kind="rectangle", box=(460, 10, 80, 40), area=3200.0, fill=(245, 246, 252),
                        contour=np.array([[[460, 10]], [[540, 10]], [[540, 50]], [[460, 50]]], np.int32)))
    longer = [lines()[0], Line(0, 3, False, True, np.zeros((2, 2)), {1, 2}, True, {1, 2})]
    assert read(resolve_through_centres(longer, shapes, _Insides(shapes, (80, 600)),
                                        np.pad(canvas(True), ((0, 0), (0, 200))), 2)) == {(0, 2, True), (0, 3, True)}


def test_a_head_beside_a_lines_end_is_not_its_own_when_its_other_end_has_a_head_spreading_both_ways():
    # a line from box 0 to box 1 with its head at box 1; another connector arrives at box 0 at a
    # shallow angle right where the line leaves it, its head (a blob on the line) beside the line's end
    import cv2

    from benchmark.extract.shapes import Shape
    from benchmark.extract.straight import straight_lines

    boxes = [(10, 40, 80, 40), (300, 40, 80, 40)]
    shapes = [Shape(index=i, kind="rectangle", box=b, area=float(b[2] * b[3]), fill=(245, 246, 252),
                    contour=np.array([[[b[0], b[1]]], [[b[0] + b[2], b[1]]], [[b[0] + b[2], b[1] + b[3]]],
                                      [[b[0], b[1] + b[3]]]], np.int32)) for i, b in enumerate(boxes)]

    def head(canvas: np.ndarray, tip: np.ndarray, u: np.ndarray) -> np.ndarray:
        """A filled head at ``tip`` for a line arriving along ``u``; its pixels (x, y)."""
        back, side = tip - 14 * u, 6 * np.array([-u[1], u[0]])
        one = np.zeros_like(canvas)
        cv2.fillPoly(one, [np.round([tip, back + side, back - side]).astype(np.int32)], 1)
        canvas |= one
        ys, xs = np.nonzero(one)
        return np.stack([xs, ys], axis=1).astype(float)

    def read(other: bool, over_box_0: bool = False) -> set:
        canvas = np.zeros((120, 400), np.uint8)
        for x, y, w, h in boxes:
            cv2.rectangle(canvas, (x, y), (x + w, y + h), 1, 2)
        cv2.line(canvas, (90, 60), (300, 60), 1, 2)
        if over_box_0:                             # a third connector drawn over box 0 along the line
            cv2.line(canvas, (10, 60), (90, 60), 1, 2)
        blobs = [head(canvas, np.array([300.0, 60.0]), np.array([1.0, 0.0]))]
        if other:                                  # arriving from the upper right at 12 degrees
            u = np.array([-np.cos(np.radians(12)), np.sin(np.radians(12))])
            tip = np.array([91.0, 60.0])
            cv2.line(canvas, tuple(int(v) for v in tip - 120 * u), tuple(int(v) for v in tip), 1, 2)
            blobs.append(head(canvas, tip, u))
        lines = straight_lines(canvas > 0, shapes, blobs, np.zeros(canvas.shape, bool), 2)
        return {(ln.a, ln.b, ln.head_a, ln.head_b) for ln in lines}

    assert read(False) == {(0, 1, False, True)}
    assert read(True) == {(0, 1, False, True)}
    # the stroke running on inside box 0 is the other connectors', not this line's passing through it:
    # the line still has a head drawn at box 0 (whose it is is decided after that)
    assert read(True, over_box_0=True) == {(0, 1, False, True)}


def test_of_two_lines_meeting_a_shape_at_one_point_the_one_leaving_it_drops_the_head_there():
    # arch_ru_marketplace: lines from "Сервис возвратов" to two shapes about in line with it overlap
    # near it, and the head of the one arriving there was found for both: the line leaving it, with
    # its own head at its far end, was read with a head at each end
    import cv2

    from benchmark.extract.shapes import Shape
    from benchmark.extract.straight import straight_lines

    boxes = [(30, 40, 40, 40), (300, 32, 80, 40), (600, 40, 80, 40)]
    shapes = [Shape(index=i, kind="rectangle", box=b, area=float(b[2] * b[3]), fill=(245, 246, 252),
                    contour=np.array([[[b[0], b[1]]], [[b[0] + b[2], b[1]]], [[b[0] + b[2], b[1] + b[3]]],
                                      [[b[0], b[1] + b[3]]]], np.int32)) for i, b in enumerate(boxes)]
    canvas = np.zeros((120, 720), np.uint8)
    for x, y, w, h in boxes:
        cv2.rectangle(canvas, (x, y), (x + w, y + h), 1, 2)
    blobs = []
    for (p, q) in (((70, 59), (300, 53)), ((70, 60), (600, 60))):
        cv2.line(canvas, p, q, 1, 2)
    for tip, u in (((300.0, 53.0), (230.0, -6.0)), ((71.0, 60.0), (-1.0, 0.0))):
        tip, u = np.array(tip), np.array(u) / np.hypot(*u)
        back, side = tip - 16 * u, 8 * np.array([-u[1], u[0]])
        one = np.zeros_like(canvas)
        cv2.fillPoly(one, [np.round([tip, back + side, back - side]).astype(np.int32)], 1)
        canvas |= one
        ys, xs = np.nonzero(one)
        blobs.append(np.stack([xs, ys], axis=1).astype(float))
    lines = straight_lines(canvas > 0, shapes, blobs, np.zeros(canvas.shape, bool), 2)
    assert {(ln.a, ln.b, ln.head_a, ln.head_b) for ln in lines} == {(0, 1, False, True), (0, 2, True, False)}


def _seg(p, q, n=50):
    t = np.linspace(0.0, 1.0, n)[:, None]
    return np.array(p, float) + t * (np.array(q, float) - np.array(p, float))


def _grid_lines():
    """Three straight lines between cells, each over another shape: enough for a grid."""
    from benchmark.extract.straight import Line

    return [Line(0, 1, False, True, _seg((10, 10), (190, 10)), {5}), Line(0, 2, False, True, _seg((10, 20), (10, 190)), {6}),
            Line(1, 2, True, False, _seg((190, 20), (20, 190)), {7})]


def test_a_grid_keeps_the_traced_edges_of_a_container_cell_but_the_pieces_of_lines_crossing_it(monkeypatch):
    # the straight lines replace the traced edges between cells; of the traced edges within the
    # container's cell, the one lying along a line (a crossing connector's piece, here along an
    # ambiguous one from shape 5 to shape 6, over shapes 3, 4 and 8) goes, the other stays
    import benchmark.extract.connectors as C
    from benchmark.extract.straight import Line

    lines = _grid_lines() + [Line(5, 6, False, False, _seg((60, 100), (160, 100)), {3, 4, 8}, ambiguous=True,
                                  centres={8})]
    monkeypatch.setattr(C, "straight_lines", lambda *a, **k: lines)
    cells = [None, None, None, 9, 9, None, None]   # shapes 3 and 4 lie in one container's cell
    traced = [C.RawEdge(0, 1, False, False, _seg((10, 12), (120, 12))),      # between cells: replaced
              C.RawEdge(3, 4, False, True, _seg((62, 101), (158, 101))),     # along the ambiguous line
              C.RawEdge(3, 4, True, False, _seg((60, 140), (160, 170)))]     # the cell's own
    got = C._grid_edges(traced, np.zeros((200, 200), bool), [], [], np.zeros((200, 200), bool), 2, cells)
    assert [(e.a, e.b, e.head_a, e.head_b) for e in got] == [(3, 4, True, False), (0, 1, False, True), (0, 2, False, True),
                                                            (1, 2, True, False)]


def test_a_grid_keeps_a_traced_edge_between_two_stops_of_a_line_read_as_no_edge(monkeypatch):
    # an ambiguous line from shape 0 through the centre of shape 3 to shape 4 is read as no edge: the
    # traced edge 3 -> 4 along it, between two of the shapes it stops at or passes, is a connector
    # drawn end to end with another along that line, and stays
    import benchmark.extract.connectors as C
    from benchmark.extract.straight import Line

    lines = _grid_lines() + [Line(0, 4, False, True, _seg((60, 30), (60, 180)), {3}, ambiguous=True, centres={3})]
    monkeypatch.setattr(C, "straight_lines", lambda *a, **k: lines)
    cells = [None, None, None, 9, 9]
    traced = [C.RawEdge(3, 4, False, True, _seg((60, 120), (60, 178)))]
    got = C._grid_edges(traced, np.zeros((200, 200), bool), [], [], np.zeros((200, 200), bool), 2, cells)
    assert (3, 4, False, True) in [(e.a, e.b, e.head_a, e.head_b) for e in got]


def test_a_line_through_a_shape_under_another_edges_label_and_stopping_short_of_the_far_outline_is_one():
    # a connector drawn over a shape: its stroke is blanked under another edge's label on the way
    # (d2 blanks a label's box out of every connector under it), and its traced piece beyond the
    # shape stopped 7 line widths short of the outline (connectors crossing there)
    from benchmark.extract.connectors import _End, _through_shapes, label_gaps
    from benchmark.extract.labels import Block
    from benchmark.extract.ocr import Word
    from benchmark.extract.shapes import Shape

    box = (100, 40, 100, 40)
    contour = np.array([[[100, 40]], [[200, 40]], [[200, 80]], [[100, 80]]], np.int32)
    shape = Shape(index=0, kind="rectangle", contour=contour, box=box, area=4000.0, fill=(245, 246, 252))
    stroke = np.zeros((120, 320), bool)
    stroke[59:62, 20:300] = True
    stroke[50:70, 138:162] = False                         # the label's box, blanked
    label = Block([[Word("ok", 142, 54, 16, 12, 90.0, 120.0)]], grey=True)

    def ends():
        return [_End(0, 1, np.array([98.0, 60.0]), np.array([1.0, 0.0]), shape=0),
                _End(1, 0, np.array([214.0, 60.0]), np.array([-1.0, 0.0]))]

    joined = ends()
    _through_shapes(joined, [shape], stroke, 2, gaps=label_gaps([label], stroke.shape, 2))
    assert (joined[0].through, joined[1].through) == (1, 0)
    apart = ends()                                         # the label's box not known: a gap too long
    _through_shapes(apart, [shape], stroke, 2)
    assert (apart[0].through, apart[1].through) == (None, None)
