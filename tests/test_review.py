"""Human review: stratified seeded export (CSV + HTML form), import with kappa against automatic labels
and between two reviewers, bad sheets named by file and line."""
from __future__ import annotations

import csv
import json
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from benchmark.cli import main as cli_main
from benchmark.review.agreement import cohen_kappa
from benchmark.review.sampling import stratified_sample

ROOT = Path(__file__).resolve().parent.parent
CLASSES = ["grounded"] * 24 + ["lucky_guess"] * 8 + ["misread"] * 5 + ["retrieval_miss"] * 2 + ["error"]


def _records():
    out = []
    for i, gc in enumerate(CLASSES):
        correct = None if gc == "error" else gc in ("grounded", "lucky_guess")
        out.append({"sample_id": f"algo_binary_search-q{i}|v|solver", "diagram_id": "algo_binary_search",
                    "answerer": "solver", "question": {"text": f"Question {i}?", "answer": "GOLD-SECRET"},
                    "context": {"text": "Start -> Compare\nCompare -> \"Found\", done"}, "answer": {"raw": f"answer {i}", "explanation": "",
                                                                          "evidence": [["Start", "Compare"]]},
                    "metrics": {"correct": correct, "guess_class": gc, "faithfulness": 1.0 if i % 3 else 0.5}})
    out.append({"sample_id": "x|v|solver", "diagram_id": "algo_binary_search", "answer": None, "metrics": None})
    return out


@pytest.fixture()
def run(tmp_path):
    d = tmp_path / "run1"
    d.mkdir()
    (d / "samples.jsonl").write_text("".join(json.dumps(r) + "\n" for r in _records()))
    (d / "run.json").write_text(json.dumps({"dataset": {"root": str(ROOT)}}))
    return d


def test_stratified_sample_is_seeded_and_covers_every_stratum():
    recs = _records()
    a = stratified_sample(recs, 10, "guess_class", seed=3)
    assert len(a) == 10 and all(r["answer"] is not None for r in a)
    counts = Counter(r["metrics"]["guess_class"] for r in a)
    assert set(counts) == set(CLASSES)                 # the single error sample still gets a place
    assert counts["grounded"] > counts["lucky_guess"] > counts["error"]
    assert [r["sample_id"] for r in a] == [r["sample_id"] for r in stratified_sample(recs, 10, "guess_class", seed=3)]
    assert [r["sample_id"] for r in a] != [r["sample_id"] for r in stratified_sample(recs, 10, "guess_class", seed=4)]


def _fill(src: Path, dst: Path, labels):
    with open(src, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    for r in rows:
        r.update(labels(r))
    with open(dst, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    return rows


def test_export_then_import(run, capsys):
    assert cli_main(["review", "export", str(run), "--n", "12", "--stratify", "guess_class", "--seed", "1"]) == 0
    sheet = run / "review" / "sheet.csv"
    with open(sheet, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 12 and len({r["sample_id"] for r in rows}) == 12
    assert all(r["correct"] == r["grounded"] == r["faithful"] == "" for r in rows)
    page = (run / "review" / "sheet.html").read_text()
    assert "GOLD-SECRET" not in page and "GOLD-SECRET" not in sheet.read_text()   # blind: no gold answer
    assert "guess_class" not in sheet.read_text()
    assert '"algo_binary_search": "iVBORw0KGgo' in page                           # the diagram, embedded once
    assert page.count("iVBORw0KGgo") == 1 and "http" not in page.split("<body>")[1].split("<script")[0]

    recs = {r["sample_id"]: r for r in _records()}
    # reviewer A agrees on correct everywhere except the first two judged rows; says "faithful: yes" always
    flips = set()

    def label_a(r):
        auto = recs[r["sample_id"]]["metrics"]["correct"]
        if auto is None:
            return {"correct": ""}
        if len(flips) < 2:
            flips.add(r["sample_id"])
            auto = not auto
        return {"correct": "yes" if auto else "no", "faithful": "yes"}

    a_rows = _fill(sheet, run / "a.csv", label_a)
    assert cli_main(["review", "import", str(run), str(run / "a.csv")]) == 0
    out = capsys.readouterr().out
    judged = [r for r in a_rows if r["correct"]]
    human = [r["correct"] == "yes" for r in judged]
    auto = [recs[r["sample_id"]]["metrics"]["correct"] for r in judged]
    kappa = cohen_kappa(human, auto)
    assert f"| correct | {len(judged)} | {sum(h == x for h, x in zip(human, auto)) / len(judged):.2f} | {kappa:.2f} |" in out
    for sid in flips:
        assert f"| {sid} | correct |" in out
    assert (run / "review" / "agreement.md").read_text().startswith("## Human review")

    # a second reviewer: identical to A on correct -> inter-annotator kappa 1
    _fill(run / "a.csv", run / "b.csv", lambda r: {})
    assert cli_main(["review", "import", str(run), str(run / "a.csv"), str(run / "b.csv")]) == 0
    out = capsys.readouterr().out
    assert "Inter-annotator agreement: `a.csv` against `b.csv`" in out
    inter = out.split("Inter-annotator")[1]
    assert f"| correct | {len(judged)} | 1.00 | 1.00 |" in inter


def test_bad_sheet_names_file_and_line(run, capsys):
    cli_main(["review", "export", str(run), "--n", "5"])
    rows = _fill(run / "review" / "sheet.csv", run / "bad.csv", lambda r: {"correct": "yes"})
    rows[2]["grounded"] = "sort of"
    with open(run / "bad.csv", "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    capsys.readouterr()
    assert cli_main(["review", "import", str(run), str(run / "bad.csv")]) == 2
    err = capsys.readouterr().err
    # rows span two lines each (a two-line context): the third row starts on line 6
    assert "bad.csv:6:" in err and "'grounded'" in err and "sort of" in err


FORM_HARNESS = r"""// Runs the review form's script against a minimal DOM and prints the CSV its Download button makes.
const fs = require('fs');
const html = fs.readFileSync(process.argv[2], 'utf8');
const data = {};
for (const m of html.matchAll(/<script type='application\/json' id='(\w+)'>([\s\S]*?)<\/script>/g)) data[m[1]] = m[2];
const js = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].pop()[1];
const answers = JSON.parse(process.argv[3]);   // {"<review_id>": {"correct": "yes", ...}, ...}
let saved = null;
global.Blob = class { constructor(parts) { saved = parts.join(''); } };
global.URL = { createObjectURL: () => 'blob:x' };
global.document = {
  getElementById: id => id in data ? { textContent: data[id] } : id === 'who' ? { value: 'ann' }
                        : { value: (answers[id.replace('notes-', '')] || {}).notes || '' },
  querySelectorAll: () => [],
  querySelector: sel => { const m = sel.match(/name="(\w+)-(\d+)"/); const v = (answers[m[2]] || {})[m[1]];
                          return v ? { value: v } : null; },
  createElement: () => ({ click() {} }),
};
eval(js + '\ndownload();');
process.stdout.write(saved);
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node to run the form's script")
def test_html_form_download_is_an_importable_sheet(run, tmp_path, capsys):
    """The form's own script (run by node against a minimal DOM) saves a CSV that import reads."""
    cli_main(["review", "export", str(run), "--n", "6"])
    harness = tmp_path / "harness.js"
    harness.write_text(FORM_HARNESS)
    answers = {"1": {"correct": "yes", "grounded": "no", "notes": 'a, "quoted"\nnote'}, "2": {"faithful": "no"}}
    out = subprocess.run(["node", str(harness), str(run / "review" / "sheet.html"), json.dumps(answers)],
                         capture_output=True, text=True, check=True).stdout
    (tmp_path / "form.csv").write_text(out)
    with open(tmp_path / "form.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    with open(run / "review" / "sheet.csv", newline="", encoding="utf-8") as fh:
        exported = list(csv.DictReader(fh))
    assert [r["sample_id"] for r in rows] == [r["sample_id"] for r in exported]
    assert rows[0]["context"] == exported[0]["context"] and "\n" in rows[0]["context"]
    assert (rows[0]["correct"], rows[0]["grounded"], rows[0]["notes"]) == ("yes", "no", 'a, "quoted"\nnote')
    assert rows[1]["faithful"] == "no" and rows[2]["correct"] == ""
    capsys.readouterr()
    assert cli_main(["review", "import", str(run), str(tmp_path / "form.csv")]) == 0
    assert "| correct | 1 |" in capsys.readouterr().out
