"""The seed's worked example end to end: G = {A→B, B→C, C→D}, R = {A→B, B→C, X→Y} gives SRR = 2/3,
through the public metric API and in a one-sample run (record, summary.csv, a re-score)."""
from __future__ import annotations

import csv
from pathlib import Path

import pytest

from benchmark.graph import Edge, Subgraph
from benchmark.metrics import overlap
from benchmark.rescore import rescore
from benchmark.runner import run
from benchmark.spec import RunSpec
from benchmark.stages import SELECTORS

D2 = "a: A\nb: B\nc: C\nd: D\nx: X\ny: Y\na -> b\nb -> c\nc -> d\nx -> y\n"
YAML = """diagram: seed
title: The seed's chain
domain: algorithm
language: en
questions:
  - id: seed-q1
    text: Which steps lead from A to D?
    type: path
    args: {source: a, target: d}
    answer: [a, b, c, d]
    certificate:
      nodes: [a, b, c, d]
      edges: [[a, b], [b, c], [c, d]]
    counter_prior: false
    rationale: The one way from A to D.
"""


class SeedSelector:
    """Retrieves exactly R of the seed's example."""

    name = "test-seed"

    def select(self, question, graph, diagram):
        return Subgraph.from_edges([Edge("a", "b"), Edge("b", "c"), Edge("x", "y")])


@pytest.fixture()
def seed_selector():
    SELECTORS.register("test-seed")(SeedSelector)
    yield
    SELECTORS._entries.pop("test-seed", None)


def test_public_api():
    gold = Subgraph.from_edges([Edge("A", "B"), Edge("B", "C"), Edge("C", "D")])
    assert overlap(Subgraph.from_edges([Edge("A", "B"), Edge("B", "C"), Edge("X", "Y")]), gold).srr == pytest.approx(2 / 3)


def test_one_sample_run(tmp_path: Path, seed_selector):
    data = tmp_path / "data"
    (data / "diagrams").mkdir(parents=True)
    (data / "annotations").mkdir()
    (data / "diagrams" / "seed.d2").write_text(D2, encoding="utf-8")
    (data / "annotations" / "seed.yaml").write_text(YAML, encoding="utf-8")
    spec = RunSpec(data_dir=data, variants=("oracle+d2+test-seed",), answerers=("solver",), out_dir=tmp_path / "out",
                   run_id="seed", workers=1)
    result = run(spec, progress=False, quiet=True)
    (rec,) = result.records
    m = rec.metrics
    assert m["srr"] == pytest.approx(2 / 3) and m["precision"] == pytest.approx(2 / 3) and m["f1"] == pytest.approx(2 / 3)
    assert m["node_srr"] == pytest.approx(3 / 4)
    # C -> D is missing: the solver cannot find the path, and says so (an abstention on an insufficient context)
    assert m["sufficient"] is False and m["abstained"] is True and m["guess_class"] == "abstained_appropriate"
    with (result.run_dir / "summary.csv").open() as fh:
        (row,) = list(csv.DictReader(fh))
    assert float(row["srr"]) == pytest.approx(2 / 3) and float(row["node_srr"]) == pytest.approx(3 / 4)
    assert row["abstained"] == "1" and float(row["coverage"]) == 0.0 and row["accuracy_attempted"] == ""
    _, records, _ = rescore(result.run_dir, workers=1)
    assert records[0].metrics["srr"] == pytest.approx(2 / 3)
