"""Extraction on real renders: fixture D2 files drawn by the d2 binary, read by real tesseract."""
from __future__ import annotations

from pathlib import Path

import pytest

from benchmark.extract.ocr import tesseract_available
from benchmark.render import render_file

FIXTURES = Path(__file__).parent / "fixtures" / "extract"

pytestmark = pytest.mark.skipif(not tesseract_available(), reason="tesseract is not installed")


def _edges(graph: dict) -> set[tuple[str, str, str, str]]:
    return {(e["src"], e["arrow"], e["dst"], e["label"]) for e in graph["edges"]}


@pytest.fixture(scope="module", params=["default", "elk"])
def flow(request, tmp_path_factory) -> dict:
    from benchmark.extract.pipeline import extract

    png = tmp_path_factory.mktemp("flow") / f"flow-{request.param}.png"
    render_file(FIXTURES / "flow.d2", png, style=request.param)
    return extract(png)


@pytest.fixture(scope="module")
def ru(tmp_path_factory) -> dict:
    from benchmark.extract.pipeline import extract

    png = tmp_path_factory.mktemp("ru") / "ru.png"
    render_file(FIXTURES / "ru.d2", png)
    return extract(png)


def test_nodes_labels_and_shapes(flow):
    nodes = {n["id"]: n for n in flow["nodes"]}
    assert {n["label"] for n in flow["nodes"]} == {
        "Customer", "Start", "Is the order\nvalid?", "Reject Order", "API Gateway", "Orders DB",
        "Job Queue", "Backend", "Order Service", "Worker"}
    kinds = {n["label"]: n["shape"] for n in flow["nodes"]}
    assert kinds["Customer"] == "person"
    assert kinds["Start"] == "oval"
    assert kinds["Is the order\nvalid?"] == "diamond"
    assert kinds["Orders DB"] == "cylinder"
    assert kinds["Job Queue"] == "queue"
    assert kinds["API Gateway"] == "rectangle"
    assert nodes["backend.order-service"]["parent"] == "backend"
    assert nodes["backend.worker"]["parent"] == "backend"
    assert nodes["api-gateway"]["parent"] is None


def test_multi_line_label_is_one_node(flow):
    assert "is-the-order-valid" in {n["id"] for n in flow["nodes"]}


def test_edges_directions_and_labels(flow):
    assert _edges(flow) == {
        ("customer", "->", "start", ""),
        ("start", "->", "is-the-order-valid", ""),
        ("is-the-order-valid", "->", "api-gateway", "yes"),
        ("is-the-order-valid", "->", "reject-order", "no"),
        ("api-gateway", "->", "backend.order-service", "REST"),
        ("backend.order-service", "->", "backend.worker", "enqueue"),
        # `db <- backend.worker` is drawn as an arrow from the worker into the database
        ("backend.worker", "->", "orders-db", "writes"),
        ("backend.worker", "<->", "job-queue", ""),
        ("api-gateway", "--", "reject-order", ""),
    }
    directed = {(e["src"], e["dst"]): e["directed"] for e in flow["edges"]}
    assert directed[("backend.worker", "job-queue")] is False
    assert directed[("api-gateway", "reject-order")] is False
    assert directed[("start", "is-the-order-valid")] is True


def test_russian_labels(ru):
    assert {n["label"] for n in ru["nodes"]} == {"Новая заявка", "Проверка", "Одобрена?", "Выполнена", "Архив"}
    assert _edges(ru) == {
        ("новая-заявка", "->", "проверка", "создана"),
        ("проверка", "->", "одобрена", ""),
        ("одобрена", "->", "выполнена", "да"),
        ("одобрена", "->", "проверка", "нет"),
        ("выполнена", "->", "архив", "сохранить"),
    }


def test_extraction_is_deterministic(tmp_path):
    from benchmark.extract.pipeline import extract

    png = tmp_path / "ru.png"
    render_file(FIXTURES / "ru.d2", png)
    assert extract(png) == extract(png)


def test_scores_against_the_parser(flow):
    from benchmark.d2 import parse_file
    from benchmark.extract.evaluate import score_diagram

    s = score_diagram("flow", flow, parse_file(FIXTURES / "flow.d2"))
    assert (s.node_f1, s.edge_f1, s.label_accuracy) == (1.0, 1.0, 1.0)
    assert s.matched_edges == s.ref_edges == 9
