"""diagqa extract on real renders: one PNG, and --eval over a small dataset (two styles)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from benchmark.cli import main
from benchmark.extract.ocr import tesseract_available
from benchmark.render import render_file

FIXTURES = Path(__file__).parent / "fixtures" / "extract"

pytestmark = pytest.mark.skipif(not tesseract_available(), reason="tesseract is not installed")


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("data")
    ddir = root / "diagrams"
    ddir.mkdir()
    for name in ("flow", "ru"):
        shutil.copy(FIXTURES / f"{name}.d2", ddir / f"{name}.d2")
        render_file(ddir / f"{name}.d2", ddir / f"{name}.png")
    shutil.copy(FIXTURES / "ru.d2", ddir / "broken.d2")
    (ddir / "broken.png").write_bytes(b"not a png at all")
    return root


def test_extract_one_png_as_json(dataset, tmp_path, capsys):
    assert main(["extract", str(dataset / "diagrams" / "ru.png"), "--format", "json",
                 "--cache", str(tmp_path)]) == 0
    graph = json.loads(capsys.readouterr().out)
    assert {n["label"] for n in graph["nodes"]} >= {"Проверка", "Архив"}
    assert {"src": "выполнена", "dst": "архив", "label": "сохранить", "directed": True, "arrow": "->"} in graph["edges"]


def test_extract_one_png_as_text(dataset, tmp_path, capsys):
    assert main(["extract", str(dataset / "diagrams" / "ru.png"), "--cache", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("5 nodes, 5 edges")
    assert "выполнена -> архив: сохранить" in out


def test_bad_arguments_are_one_line_errors(dataset, tmp_path, capsys):
    assert main(["extract", str(tmp_path / "missing.png")]) == 2
    assert "missing.png" in capsys.readouterr().err
    assert main(["extract"]) == 2
    assert "give a PNG" in capsys.readouterr().err


def test_eval_prints_the_figures_and_keeps_going_past_a_broken_png(dataset, tmp_path, capsys):
    out_json = tmp_path / "fig.json"
    assert main(["extract", "--eval", "--data", str(dataset), "--workers", "1", "--cache", str(tmp_path / "c"),
                 "--json", str(out_json)]) == 0
    out = capsys.readouterr().out
    assert "extraction on 3 diagrams (default style), 1 failed" in out
    assert "node F1           1.000" in out
    assert "directed-edge F1  1.000" in out
    assert "edge-label acc.   1.000" in out
    assert "nesting acc.      1.000" in out
    assert "broken" in out and "error:" in out
    data = json.loads(out_json.read_text(encoding="utf-8"))
    assert data["summary"]["matched_edges"] == 14 and data["summary"]["ref_edges"] == 14
    assert {d["diagram"]: d["edge_f1"] for d in data["diagrams"]} == {"broken": None, "flow": 1.0, "ru": 1.0}


def test_eval_in_another_style_renders_into_the_cache(dataset, tmp_path, capsys):
    cache = tmp_path / "c"
    assert main(["extract", "--eval", "--data", str(dataset), "--style", "elk", "--workers", "2",
                 "--cache", str(cache)]) == 0
    out = capsys.readouterr().out
    assert "(elk style)" in out and "directed-edge F1  1.000" in out
    # broken.d2 is a valid diagram: only its bundled PNG is damaged, so its elk render is fine
    assert len(list((cache / "renders" / "elk").glob("*.png"))) == 3
    assert "0 failed" in out
