"""Edge labels on d2 renders, each defect as a minimal D2 drawn by the real d2 binary and read
back by real tesseract."""
from __future__ import annotations

from pathlib import Path

import pytest

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
