"""``scripts/edge_visibility.py``: connectors that d2 draws on top of others, read from the real d2's SVG."""
from __future__ import annotations

import doctest
import json

import pytest

from benchmark.render import d2_binary
from tests.scripts_loaded import load_script

try:
    d2_binary()
except Exception:  # pragma: no cover - set-up installs d2
    pytest.skip("the d2 binary is not installed", allow_module_level=True)


def _dataset(tmp_path, **files: str):
    (tmp_path / "diagrams").mkdir()
    for name, text in files.items():
        (tmp_path / "diagrams" / f"{name}.d2").write_text(text, encoding="utf-8")
    return tmp_path


COLUMN = "grid-columns: 1\ngrid-gap: 40\na: A\nb: B\nc: C\n"


def test_the_functions_do_what_their_examples_say():
    mod = load_script("edge_visibility")
    assert doctest.testmod(mod).failed == 0


def test_a_connector_drawn_along_a_longer_one_is_hidden_and_one_of_two_is_kept(tmp_path, capsys):
    vis = load_script("edge_visibility")
    data = _dataset(tmp_path,
                    # a -- c runs straight down the column, through b: a -- b lies on it
                    along=COLUMN + "a -- b\na -- c\n",
                    # each connector has its own stretch of the column
                    chain=COLUMN + "a -- b\nb -- c\n",
                    # the same connector twice: drawn one on the other, one of them can be read
                    twice=COLUMN + "a -- b\na -- b\n")
    out = tmp_path / "vis.json"
    assert vis.main(["--data", str(data), "--json", str(out), "--list"]) == 0
    rows = {r["diagram"]: r for r in json.loads(out.read_text())["rows"]}
    assert rows["along"]["hidden"] == ["(a -- b)[0]"] and rows["along"]["connectors"] == 2
    assert rows["chain"]["hidden"] == [] and rows["chain"]["connectors"] == 2
    assert len(rows["twice"]["hidden"]) == 1 and rows["twice"]["connectors"] == 2
    assert "6 connectors drawn, 2 hidden under others" in capsys.readouterr().out


def test_connectors_with_d2_classes_are_measured(tmp_path):
    # d2 writes a classed connector's group as <g class="<base64 of its key> data">: it is read and can
    # be hidden, and it hides the connectors drawn along it
    vis = load_script("edge_visibility")
    classes = "classes: {data: {style.stroke-width: 2}}\n"
    data = _dataset(tmp_path, under=classes + COLUMN + "a -- b {class: data}\na -- c\n",
                    over=classes + COLUMN + "a -- b\na -- c {class: data}\n")
    out = tmp_path / "vis.json"
    assert vis.main(["--data", str(data), "--json", str(out)]) == 0
    rows = {r["diagram"]: r for r in json.loads(out.read_text())["rows"]}
    assert rows["under"]["connectors"] == 2 and rows["under"]["hidden"] == ["(a -- b)[0]"]
    assert rows["over"]["connectors"] == 2 and rows["over"]["hidden"] == ["(a -- b)[0]"]


def test_a_diagram_d2_cannot_draw_is_named_and_the_others_are_still_measured(tmp_path, capsys):
    vis = load_script("edge_visibility")
    data = _dataset(tmp_path, along=COLUMN + "a -- b\na -- c\n", broken="a -> {\n")
    out = tmp_path / "vis.json"
    assert vis.main(["--data", str(data), "--json", str(out)]) == 1
    rows = {r["diagram"]: r for r in json.loads(out.read_text())["rows"]}
    assert rows["along"]["hidden"] == ["(a -- b)[0]"]
    assert "error" in rows["broken"] and "hidden" not in rows["broken"]
    err = capsys.readouterr().err
    assert str(data / "diagrams" / "broken.d2") in err and "1 diagram(s) not measured" in err


def test_a_path_command_it_does_not_read_is_refused_not_misread():
    vis = load_script("edge_visibility")
    with pytest.raises(ValueError, match="path command 'A'"):
        vis.path_points("M 0 0 A 5 5 0 0 1 10 0")


ROW = "grid-rows: 1\ngrid-gap: 40\na: A\nb: Middle\nc: C\n"


def test_a_label_drawn_over_other_text_is_counted_and_one_clear_of_it_is_not(tmp_path):
    vis = load_script("edge_visibility")
    data = _dataset(tmp_path,
                    # a -> c runs straight through b, and its label sits at its middle: on b's label
                    over=ROW + "a -> c: across the middle\n",
                    # each label in the gap between its connector's shapes, clear of every other text
                    clear=ROW + "a -> b: one\nb -> c: two\n")
    out = tmp_path / "vis.json"
    assert vis.main(["--data", str(data), "--json", str(out), "--list"]) == 0
    result = json.loads(out.read_text())
    rows = {r["diagram"]: r for r in result["rows"]}
    assert rows["over"]["overlapped_labels"] == [
        {"connector": "(a -> c)[0]", "label": "across the middle", "under": "Middle"}]
    assert rows["clear"]["labels"] == 2 and rows["clear"]["overlapped_labels"] == []
    assert (result["labels"], result["overlapped_labels"]) == (3, 1)


def test_label_boxes_are_as_wide_as_d2_makes_them(tmp_path):
    """d2 cuts its connector out under each label with a mask rectangle a little wider than the text: the
    boxes measured from the embedded fonts have its centres and, within its padding, its widths."""
    import re

    from benchmark.render import render_file

    vis = load_script("edge_visibility")
    d2 = tmp_path / "x.d2"
    d2.write_text(ROW + "a -> b: one\nb -> c: a longer label\na -> c: Ünïcode ж\n", encoding="utf-8")
    svg = tmp_path / "x.svg"
    render_file(d2, svg)
    text = svg.read_text(encoding="utf-8")
    masks = [tuple(map(float, m)) for m in re.findall(
        r'<rect x="([-\d.]+)" y="([-\d.]+)" width="([\d.]+)" height="([\d.]+)" fill="black">', text)]
    labels = [(t, b) for k, t, b in vis.text_boxes(text) if k.startswith("(")]
    assert {t for t, _ in labels} == {"Ünïcode ж", "a longer label", "one"}
    assert len(masks) == 3
    for t, (x0, y0, x1, y1) in labels:
        mx, my, mw, mh = min(masks, key=lambda m: abs(m[0] + m[2] / 2 - (x0 + x1) / 2))
        assert abs(mx + mw / 2 - (x0 + x1) / 2) <= 1, t
        assert mw - 8 <= x1 - x0 <= mw, (t, x1 - x0, mw)
        assert my <= y0 and y1 <= my + mh, t


def test_an_svg_without_d2s_fonts_is_refused_with_a_reason_not_a_key_error():
    vis = load_script("edge_visibility")
    with pytest.raises(ValueError, match="embeds no d2 text font"):
        vis.text_boxes('<svg><g class="KGEgLT4gYilbMF0="><text x="0" y="0" style="font-size:16px">yes</text></g></svg>')
