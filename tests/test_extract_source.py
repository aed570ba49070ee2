"""The ``ocr`` graph source: extraction aligned to D2 ids, unaligned nodes kept as ocr:<slug>."""
from __future__ import annotations

from pathlib import Path

import pytest

from benchmark.dataset import Diagram
from benchmark.errors import StageUnavailable
from benchmark.extract.ocr import tesseract_available
from benchmark.graph import graph_edges
from benchmark.render import render_file
from benchmark.stages import SOURCES

FIXTURES = Path(__file__).parent / "fixtures" / "extract"


def _source(tmp_path):
    import benchmark.sources.ocr  # noqa: F401  (registers "ocr")

    return SOURCES.create("ocr", cache_dir=tmp_path / "cache")


@pytest.mark.skipif(not tesseract_available(), reason="tesseract is not installed")
def test_node_ids_are_d2_ids_and_edges_follow_the_flow(tmp_path):
    png = tmp_path / "flow.png"
    render_file(FIXTURES / "flow.d2", png)
    g = _source(tmp_path).load(Diagram(id="flow", d2_path=FIXTURES / "flow.d2", png_path=png))
    assert set(g.nodes) == {"customer", "start", "check", "reject", "api", "db", "queue",
                            "backend", "backend.svc", "backend.worker"}
    assert g.nodes["backend.svc"]["parent"] == "backend"
    edges = {(e.src, e.dst, e.label, e.directed) for e in graph_edges(g)}
    assert ("backend.worker", "db", "writes", True) in edges          # `db <- backend.worker`
    assert ("check", "reject", "no", True) in edges
    assert {(e.src, e.dst) for e in graph_edges(g) if not e.directed} == {("backend.worker", "queue"),
                                                                          ("api", "reject")}


@pytest.mark.skipif(not tesseract_available(), reason="tesseract is not installed")
def test_nodes_that_match_no_d2_label_keep_an_ocr_id(tmp_path):
    png = tmp_path / "ru.png"
    render_file(FIXTURES / "ru.d2", png)
    # the scorer's D2 names the archive differently from what the picture shows
    d2 = tmp_path / "ru.d2"
    d2.write_text((FIXTURES / "ru.d2").read_text(encoding="utf-8").replace("Архив", "Хранилище отчётов"),
                  encoding="utf-8")
    g = _source(tmp_path).load(Diagram(id="ru", d2_path=d2, png_path=png))
    assert "ocr:архив" in g and "archive" not in g
    assert g.nodes["ocr:архив"]["label"] == "Архив"
    assert ("done", "ocr:архив") in {(e.src, e.dst) for e in graph_edges(g)}


def test_missing_tesseract_is_reported_at_once(tmp_path, monkeypatch):
    import benchmark.extract.ocr as ocr

    monkeypatch.setattr(ocr.shutil, "which", lambda name: None)
    diagram = Diagram(id="x", d2_path=tmp_path / "x.d2", png_path=tmp_path / "x.png")   # neither exists
    with pytest.raises(StageUnavailable, match="tesseract is not installed"):
        _source(tmp_path).load(diagram)


@pytest.mark.skipif(not tesseract_available(), reason="tesseract is not installed")
def test_missing_png_names_the_file(tmp_path):
    from benchmark.errors import InputError

    diagram = Diagram(id="x", d2_path=FIXTURES / "ru.d2", png_path=tmp_path / "x.png")
    with pytest.raises(InputError, match="x.png"):
        _source(tmp_path).load(diagram)


@pytest.mark.skipif(not tesseract_available(), reason="tesseract is not installed")
def test_a_styled_source_reads_the_diagram_drawn_by_another_tool(tmp_path):
    import shutil

    import benchmark.sources.ocr  # noqa: F401  (registers "ocr-<style>")

    if shutil.which("dot") is None:
        pytest.skip("graphviz is not installed (scripts/setup.sh installs it)")
    src = SOURCES.create("ocr-graphviz", cache_dir=tmp_path / "cache")
    assert src.name == "ocr-graphviz"
    g = src.load(Diagram(id="ru", d2_path=FIXTURES / "ru.d2", png_path=tmp_path / "unused.png"))
    assert set(g.nodes) == {"new", "check", "ok", "done", "archive"}
    assert len(list((tmp_path / "cache" / "renders" / "graphviz").glob("*.png"))) == 1
    edges = {(e.src, e.dst) for e in graph_edges(g)}
    assert ("new", "check") in edges and ("done", "archive") in edges
