"""The analysis notebook runs on a fresh run and reproduces the report's main table."""
from __future__ import annotations

import csv
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from benchmark.runner import run
from test_runner import VARIANTS, tiny_spec

NOTEBOOK = Path(__file__).resolve().parent.parent / "notebooks" / "guessing_analysis.ipynb"
COLUMNS = ["accuracy", "grounded_accuracy", "srr", "precision", "f1", "sufficiency", "guess_rate", "accuracy_inflation"]


def _rows(path: Path) -> dict[tuple[str, str], dict[str, str]]:
    with path.open() as fh:
        return {(r["variant"], r["answerer"]): r for r in csv.DictReader(fh)}


def test_notebook_reproduces_the_main_table(tmp_path, monkeypatch):
    # the controls and two candidate retrievers (the ranking compares candidates only)
    variants = (*VARIANTS, "oracle+d2+khop1", "oracle+d2+path")
    result = run(tiny_spec(tmp_path, answerers=("solver", "keyword", "blind"), variants=variants),
                 progress=False, quiet=True)
    out = tmp_path / "notebook_table.csv"
    monkeypatch.setenv("DIAGQA_RUN_DIR", str(result.run_dir))
    monkeypatch.setenv("DIAGQA_NOTEBOOK_TABLE", str(out))
    nb = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(nb, timeout=180, kernel_name="python3",
                   resources={"metadata": {"path": str(NOTEBOOK.parent)}}).execute()
    mine, report = _rows(out), _rows(result.run_dir / "summary.csv")
    assert list(mine) == list(report) and len(mine) == len(variants) * 3
    for key, row in report.items():
        for col in COLUMNS:
            if row[col] == "":
                assert mine[key][col] == "", (key, col)  # unmeasured in both
            else:
                assert float(mine[key][col]) == pytest.approx(float(row[col]), abs=1e-12), (key, col)
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    assert len(images) == 2, "the notebook draws its two plots"
    assert not [o for o in outputs if o.output_type == "error" or "Error" in o.get("text", "")]
    # the intervals as summary.csv holds them, e.g. "0.68 [0.52, 0.80]"
    row = next(iter(report.values()))
    shown = f"{float(row['accuracy']):.2f} [{float(row['accuracy_low']):.2f}, {float(row['accuracy_high']):.2f}]"
    assert any(shown in o.get("data", {}).get("text/html", "") for o in outputs), shown
    # the paired ranking: the same first candidate for the solver as report.md's ranking table
    md = (result.run_dir / "report.md").read_text(encoding="utf-8")
    table = md.split("**solver: candidates ranked", 1)[1]
    best = next(line.split("|")[2].strip() for line in table.splitlines() if line.startswith("| 1 |"))
    ranked = [o["data"]["text/html"] for o in outputs if "grounded_accuracy_p_holm" in o.get("data", {}).get("text/html", "")]
    assert len(ranked) == 1 and best in ranked[0]
