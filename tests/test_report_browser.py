"""report.html in a real browser: Debian's Chromium, headless, driven by Playwright.

A small run of the bundled dataset; the page must load with no console error, its tables must sort
and filter, and a lucky guess's drill-down must open with its diagram, the certificate's nodes drawn
on it. ``scripts/setup.sh`` installs Chromium (Debian package) and Playwright (the ``dev`` extra; no
browser is downloaded, the Debian one is used).
"""
from __future__ import annotations

import base64
import html as htmlmod
import json
import os
import shutil
from pathlib import Path

import pytest

from benchmark.runner import run
from benchmark.spec import RunSpec

CHROMIUM = os.environ.get("DIAGQA_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
ROOT = Path(__file__).resolve().parent.parent

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is installed by `make setup` (dev extra)")
if not (Path(CHROMIUM).exists() or shutil.which(CHROMIUM)):
    pytest.skip(f"no Chromium at {CHROMIUM}: `make setup` installs the Debian package", allow_module_level=True)


@pytest.fixture(scope="module")
def small_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("browser")
    os.environ["DIAGQA_CACHE"] = str(tmp / "cache")  # the diagrams are rendered by d2 for this test
    try:
        spec = RunSpec(data_dir=ROOT, variants=("oracle+d2+none", "oracle+d2+khop1", "oracle+d2+bm25-8"),
                       answerers=("solver", "keyword", "blind"), out_dir=tmp / "results", run_id="b", workers=1,
                       limit=24)
        result = run(spec, progress=False, quiet=True)
    finally:
        os.environ.pop("DIAGQA_CACHE", None)
    records = [json.loads(line) for line in (result.run_dir / "samples.jsonl").read_text().splitlines()]
    return result.run_dir, records


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        yield b
        b.close()


@pytest.fixture()
def page(browser, small_run):
    run_dir, _ = small_run
    pg = browser.new_page(viewport={"width": 1300, "height": 900})
    problems: list[str] = []
    pg.on("console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type in ("error", "warning") else None)
    pg.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    pg.on("request", lambda r: problems.append(f"request: {r.url}") if not r.url.startswith(("file:", "data:")) else None)
    pg.goto((run_dir / "report.html").as_uri())
    pg.wait_for_selector("body[data-ready='1']", timeout=15000)
    pg.problems = problems
    yield pg
    pg.close()


def _column(pg, field: str) -> list[str]:
    idx = pg.eval_on_selector_all("#samples thead th", "(ths, f) => ths.findIndex(t => t.dataset.field === f)", field)
    assert idx >= 0, field
    return pg.eval_on_selector_all(f"#samples tbody tr td:nth-child({idx + 1})", "tds => tds.map(t => t.textContent)")


def _numbers(cells: list[str]) -> list[float]:
    return [float(c) for c in cells if c != "–"]


def test_page_loads_without_console_errors_or_requests(page):
    assert page.locator("#samples tbody tr").count() == 50  # one page of the explorer
    assert page.locator("main img").count() >= 3  # the plots
    assert page.problems == []


def test_explorer_sorts_and_filters(page, small_run):
    _, records = small_run
    page.click("#samples th[data-field='srr']")
    up = _numbers(_column(page, "srr"))
    assert up == sorted(up) and up[0] == min(r["metrics"]["srr"] for r in records if r["metrics"]["srr"] is not None)
    page.click("#samples th[data-field='srr']")
    down = _numbers(_column(page, "srr"))
    assert down == sorted(down, reverse=True) and down[0] > up[0]

    page.select_option("#f-answerer", "blind")
    blind = sum(1 for r in records if r["answerer"] == "blind")
    assert set(_column(page, "answerer")) == {"blind"}
    assert page.text_content("#count").startswith(f"{blind} of {len(records)} samples")
    page.select_option("#f-guess_class", "lucky_guess")
    lucky = sum(1 for r in records if r["answerer"] == "blind" and r["metrics"]["guess_class"] == "lucky_guess")
    assert page.text_content("#count").startswith(f"{lucky} of {len(records)} samples")
    assert page.problems == []


def test_the_drill_down_marks_nodes_and_connectors_with_d2_classes(page, tmp_path):
    # d2 writes a classed element's group as <g class="<base64 of its id> data">: the drill-down finds
    # and marks it like any other (the page's own paint(), on a real d2 drawing)
    from test_report_explorer import classed_map

    d = classed_map(tmp_path)
    counts = page.evaluate("""([d]) => {
        var box = document.createElement("div"); box.id = "classed"; document.body.appendChild(box);
        return paint(box, d, {e: [0, 1], n: []}, {e: [0], n: []});
    }""", [d])
    assert counts["hl-hit"] == [1, 2] and counts["hl-missed"] == [1, 1]
    marks = {n: page.eval_on_selector(f"#classed g[class~='{c}']", "g => [...g.classList]") for n, c in d["nodes"].items()}
    assert "hl-hit" in marks["a"] and "hl-hit" in marks["b"] and "hl-missed" in marks["c"], marks
    edge_marks = [page.eval_on_selector(f"#classed g[class~='{e[4]}']", "g => [...g.classList]") for e in d["edges"]]
    assert "hl-hit" in edge_marks[0] and "data" in edge_marks[0]
    assert "hl-missed" in edge_marks[1] and "hot" in edge_marks[1]
    assert not {"hl-hit", "hl-missed", "hl-extra"} & set(edge_marks[2])
    assert page.problems == []


def test_report_tables_sort_and_filter(page):
    # the first table of the report with a variant and an answerer column (one row per variant x answerer)
    tables = page.locator("main table")
    table = next(tables.nth(i) for i in range(tables.count())
                 if {"variant", "answerer"} <= set(tables.nth(i).locator("thead th").all_text_contents()))
    heads = table.locator("thead th").all_text_contents()
    rows = table.locator("tbody tr")
    n = rows.count()
    before = [rows.nth(i).text_content() for i in range(n)]
    assert n >= 3
    table.locator("thead th").nth(heads.index("answerer")).click()
    col = heads.index("answerer")
    answerers = [rows.nth(i).locator("td").nth(col).text_content() for i in range(n)]
    assert answerers == sorted(answerers) and len(set(answerers)) > 1
    table.locator("thead th").nth(heads.index("answerer")).click()  # again: the other way
    assert [rows.nth(i).locator("td").nth(col).text_content() for i in range(n)] == sorted(answerers, reverse=True)
    table.locator("xpath=preceding-sibling::div[contains(@class, 'tools')][1]//input").fill("khop1")
    visible = [rows.nth(i).text_content() for i in range(n) if rows.nth(i).is_visible()]
    assert visible and len(visible) == sum("oracle+d2+khop1" in r for r in before) < n
    assert all("oracle+d2+khop1" in v for v in visible)
    assert page.problems == []


def test_drill_down_draws_the_certificate_on_the_diagram(page, small_run):
    _, records = small_run
    # a lucky guess on a context that holds part of the diagram (khop1), else any lucky guess, else a misread
    page.select_option("#f-guess_class", "lucky_guess")
    page.select_option("#f-variant", "oracle+d2+khop1")
    if not page.locator("#samples tbody tr").count():
        page.select_option("#f-variant", "")
    if not page.locator("#samples tbody tr").count():
        page.select_option("#f-guess_class", "misread")
    first = page.locator("#samples tbody tr").first
    assert first.count() == 1, "the small run has a lucky guess or a misread"
    first.click()
    page.wait_for_selector("#drill[open] #drill-diagram svg")
    sample_id = page.locator("#drill dl.facts dd").first.text_content()
    rec = next(r for r in records if r["sample_id"] == sample_id)
    body = page.text_content("#drill")
    assert rec["question"]["text"] in body and rec["metrics"]["guess_class"].replace("_", " ") in body
    graph = json.loads((small_run[0] / "graphs.json").read_text())[rec["diagram_id"]]
    label = {n["id"]: n["label"] for n in graph["nodes"]}
    gold = rec["question"]["answer"]
    expect = ("yes" if gold else "no") if isinstance(gold, bool) else str(gold) if isinstance(gold, int) else None
    if expect is not None:
        assert page.locator("#drill dl.facts dd strong").first.text_content() == expect
    else:  # node ids are shown as their labels
        assert label[gold if isinstance(gold, str) else gold[0]] in page.locator("#drill dl.facts dd strong").first.text_content()
    # every node of the gold certificate is marked on the SVG: in the context the answerer received (hit) or missed
    cert, ctx = rec["question"]["certificate"], rec["context"]
    nodes = set(cert["nodes"]) | {e[0] for e in cert["edges"]} | {e[1] for e in cert["edges"]}
    retrieved = set(ctx["nodes"]) | {e[0] for e in ctx["edges"]} | {e[1] for e in ctx["edges"]}
    for node in nodes:
        cls = base64.b64encode(htmlmod.escape(node).encode()).decode()
        marks = page.eval_on_selector(f"#drill-diagram g[class~='{cls}']", "g => [...g.classList]")
        assert ("hl-hit" if node in retrieved else "hl-missed") in marks, (node, marks)
    # and no node outside the certificate and the retrieval is marked
    marked = page.eval_on_selector_all("#drill-diagram g.hl-hit, #drill-diagram g.hl-missed, #drill-diagram g.hl-extra",
                                       "gs => gs.length")
    assert marked >= len(nodes)
    assert rec["context"]["text"] in page.text_content("#drill pre.context")
    page.click("#drill-close")
    assert not page.is_visible("#drill")
    assert page.problems == []
