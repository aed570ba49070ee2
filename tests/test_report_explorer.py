"""The report's sample explorer data, its diagrams drawn by the real d2, the plots' labels and colours,
and the command-line fixes around the report (bootstrap count, parametrised selector names)."""
from __future__ import annotations

import base64
import doctest
import gzip
import json
import re

import pandas as pd
import pytest

from benchmark.cli import main
from benchmark.errors import DiagQAError
from benchmark.report import diagrams, explorer, plots, write_report
from benchmark.report import html as report_html
from benchmark.runner import run
from test_runner import tiny_spec


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("explorer")
    result = run(tiny_spec(tmp, variants=("oracle+d2+none", "oracle+d2+khop1", "oracle+d2+full"),
                           answerers=("solver", "keyword", "blind")), progress=False, quiet=True)
    records = [json.loads(line) for line in (result.run_dir / "samples.jsonl").read_text().splitlines()]
    return result.run_dir, records, json.loads((result.run_dir / "run.json").read_text())


def test_doctests():
    from benchmark import registry

    for mod in (diagrams, explorer, report_html, registry):
        result = doctest.testmod(mod)
        assert result.failed == 0 and result.attempted > 0, mod.__name__


def test_fields_are_read_generically(tiny, tmp_path, monkeypatch):
    run_dir, records, card = tiny
    monkeypatch.setenv("DIAGQA_CACHE", str(tmp_path / "cache"))
    changed = [dict(r, metrics=dict(r["metrics"])) for r in records]
    changed[0]["metrics"].update(node_srr_new=0.25, abstained=True, guess_class="abstained_miss")
    changed[1]["answer"] = dict(changed[1]["answer"], usage={"prompt_tokens": 12, "completion_tokens": 3})
    data = explorer.explorer_data(run_dir, changed, card)
    assert {"node_srr_new", "abstained", "answer.usage.prompt_tokens"} <= set(data["fields"])
    assert data["columns"]["node_srr_new"][0] == 0.25 and data["columns"]["node_srr_new"][1] is None
    assert data["columns"]["answer.usage.prompt_tokens"][1] == 12
    assert data["columns"]["guess_class"][0] == "abstained_miss"
    assert "abstained" in data["grid"]
    assert len(data["q"]) == len(records) and len(data["questions"]) == len({r["question_id"] for r in records})
    # each distinct context is stored once (the three answerers of a question and variant share one)
    distinct = {json.dumps([r["diagram_id"], r["found_diagram"], r["context"]["text"], r["retrieved"]], sort_keys=True)
                for r in records}
    assert len(data["contexts"]) == len(distinct) < len(records) / 3
    for i, r in enumerate(records):
        assert data["contexts"][data["c"][i]]["text"] == r["context"]["text"]


def test_gold_answers_are_written_with_labels(tiny, tmp_path, monkeypatch):
    run_dir, records, card = tiny
    monkeypatch.setenv("DIAGQA_CACHE", str(tmp_path / "cache"))
    data = explorer.explorer_data(run_dir, records, card)
    gold = {q["id"]: q["gold_text"] for q in data["questions"]}
    assert gold["b-q1"] == "no" and gold["b-q2"] == "2"
    assert explorer.gold_text(["user", "auth"], "successors", {"user": "User", "auth": "Auth Service"}) == \
        "User, Auth Service"


def test_every_drawn_sample_has_its_diagram_mapped(tiny, tmp_path, monkeypatch):
    run_dir, records, card = tiny
    monkeypatch.setenv("DIAGQA_CACHE", str(tmp_path / "cache"))
    data = explorer.explorer_data(run_dir, records, card)
    drawn = {r["diagram_id"] for r in records if r["metrics"]["guess_class"] in explorer.DRAWN}
    assert drawn and set(data["diagrams"]) == drawn and not data["missing_diagrams"]
    graphs = json.loads((run_dir / "graphs.json").read_text())
    for did, d in data["diagrams"].items():
        svg = str(d["svg"])   # kept on disk until the page is written
        assert svg.lstrip().startswith("<?xml") or "<svg" in svg[:200]
        assert "@font-face" not in svg
        assert set(d["nodes"]) >= {n["id"] for n in graphs[did]["nodes"]}
        assert all(e[4] is not None for e in d["edges"]) and len(d["edges"]) == len(graphs[did]["edges"])
        # the class names are the base64 of the d2 ids
        assert all(base64.b64decode(c).decode() == n for n, c in d["nodes"].items())
    # every certificate maps onto its drawn diagram: one distinct diagram edge per gold edge, nothing left over
    certs = {r["question_id"]: r["question"]["certificate"] for r in records}
    checked = 0
    for q in data["questions"]:
        d = data["diagrams"].get(q["diagram"])
        if d is None:
            continue
        cert = certs[q["id"]]
        assert not q["gold_map"]["u"] and len(q["gold_map"]["e"]) == len(cert["edges"])
        assert sorted(tuple(d["edges"][i][:2]) for i in q["gold_map"]["e"]) == sorted((e[0], e[1]) for e in cert["edges"])
        checked += 1
    assert checked


#: a diagram whose node and connector carry D2 classes: d2 writes the classes' names after the id's base64
CLASSED = ("classes: {data: {style.stroke-dash: 4}; store: {shape: cylinder}; hot: {style.bold: true}}\n"
           "a: Alpha\nb: Beta {class: store}\nc: Gamma {class: [store; hot]}\n"
           "a -> b: write {class: data}\nb -> c {class: [data; hot]}\na -> c\n")
CLASSED_GRAPH = {"nodes": [{"id": "a"}, {"id": "b"}, {"id": "c"}],
                 "edges": [{"source": "a", "target": "b", "label": "write", "directed": True},
                           {"source": "b", "target": "c", "label": "", "directed": True},
                           {"source": "a", "target": "c", "label": "", "directed": True}]}


def classed_map(tmp_path):
    src = tmp_path / "classed.d2"
    src.write_text(CLASSED, encoding="utf-8")
    return diagrams.diagram_map(diagrams.render_svg(src, cache=tmp_path / "svg"), CLASSED_GRAPH)


def test_nodes_and_connectors_with_d2_classes_are_mapped(tmp_path):
    # d2 draws a classed element as <g class="<base64 of its id> data">: it is mapped like any other
    d = classed_map(tmp_path)
    assert '<g class="' + base64.b64encode(b"(a -&gt; b)[0]").decode() + ' data"' in d["svg"]
    assert set(d["nodes"]) == {"a", "b", "c"}
    assert all(base64.b64decode(c).decode() == n for n, c in d["nodes"].items())
    assert [e[4] for e in d["edges"]] == [base64.b64encode(k.encode()).decode()
                                          for k in ("(a -&gt; b)[0]", "(b -&gt; c)[0]", "(a -&gt; c)[0]")]


def test_renders_are_cached(tmp_path, monkeypatch):
    src = tmp_path / "d.d2"
    src.write_text("a: Alpha\nb: Beta\na -> b: go\n", encoding="utf-8")
    first = diagrams.render_svg(src, cache=tmp_path / "cache")
    assert len(list((tmp_path / "cache").rglob("*.svg"))) == 1
    monkeypatch.setattr(diagrams, "d2_binary", lambda: "/nonexistent/d2")  # a second render would fail
    assert diagrams.render_svg(src, cache=tmp_path / "cache") == first
    src.write_text("a: Alpha\nb: Beta\na -> b: stop\n", encoding="utf-8")
    with pytest.raises(OSError):
        diagrams.render_svg(src, cache=tmp_path / "cache")


def test_drawings_made_in_the_background_are_read_from_the_cache_with_why_others_are_missing(tmp_path, monkeypatch):
    """The report starts d2 on its diagrams before its plots (:class:`explorer.Drawings`); the explorer then
    reads each drawing from the render cache, d2 is not run twice for a diagram, and a diagram d2 cannot
    draw, or whose D2 file is gone, is missing with the reason."""
    monkeypatch.setenv("DIAGQA_CACHE", str(tmp_path / "cache"))
    (tmp_path / "data" / "diagrams").mkdir(parents=True)
    (tmp_path / "data" / "diagrams" / "ok.d2").write_text("a: Alpha\nb: Beta\na -> b: go\n", encoding="utf-8")
    (tmp_path / "data" / "diagrams" / "bad.d2").write_text("a -> {\n", encoding="utf-8")
    card = {"dataset": {"root": str(tmp_path / "data")}}
    runs = []
    real_run = diagrams.subprocess.run
    monkeypatch.setattr(diagrams.subprocess, "run", lambda *a, **k: runs.append(a[0][-2]) or real_run(*a, **k))
    with explorer.Drawings(card, {"ok", "bad", "gone"}) as drawings:
        assert set(drawings.paths) == {"ok", "bad"} and "no D2 file" in drawings.missing["gone"]
        for f in drawings._drawn.values():
            f.result()
        assert len(list((tmp_path / "cache").rglob("*.svg"))) == 1   # drawn before anything asked for it
        out, missing = explorer._diagrams(drawings, {})
    assert set(out) == {"ok"} and set(missing) == {"bad", "gone"} and "could not render" in missing["bad"]
    assert "<svg" in str(out["ok"]["svg"])[:400]
    assert sorted(runs) == sorted([str(tmp_path / "data" / "diagrams" / "ok.d2"),
                                   str(tmp_path / "data" / "diagrams" / "bad.d2")])   # once each


def test_page_embeds_compact_data_not_rows(tiny):
    run_dir, records, _ = tiny
    page = (run_dir / "report.html").read_text(encoding="utf-8")
    blob = re.search(r'<script id="diagqa-data" type="application/octet-stream">([^<]+)</script>', page).group(1)
    data = json.loads(gzip.decompress(base64.b64decode(blob)))
    assert len(data["q"]) == len(records)
    assert "data-sample" not in page.split("<script>")[0]  # the explorer's rows are built a page at a time


def test_bootstrap_below_one_is_a_clear_error(tiny, capsys):
    run_dir, records, card = tiny
    for bad in ("0", "-3", "many"):
        with pytest.raises(SystemExit) as exc:
            main(["report", str(run_dir), "--bootstrap", bad])
        assert exc.value.code == 2
        err = capsys.readouterr().err
        assert "argument --bootstrap:" in err and "Traceback" not in err
    with pytest.raises(DiagQAError, match="at least 1"):
        write_report(run_dir, records, card, n_boot=0)


def test_list_shows_parametrised_forms(capsys):
    assert main(["run", "--list"]) == 0
    out = capsys.readouterr().out
    for form in ("bm25-<k>", "khop<k>", "dense-<k>", "d2chunks-<k>[-w<window>s<stride>]", "(e.g. bm25-8)"):
        assert form in out, form


def test_a_size_less_selector_says_which_size(tmp_path, capsys):
    code = main(["run", "--variants", "oracle+d2+bm25", "--answerers", "solver", "--out", str(tmp_path),
                 "--no-progress"])
    assert code == 2
    err = capsys.readouterr().err
    assert "bm25 needs a size, e.g. bm25-8" in err
    assert not (tmp_path / "LATEST").exists()


def _figure(monkeypatch):
    monkeypatch.setattr(plots, "_png", lambda fig, margins=None: fig)  # the figure itself, not its PNG


def test_plots_label_the_full_variant_in_colour_blind_safe_colours(monkeypatch):
    _figure(monkeypatch)
    variants = ["oracle+d2+khop2", "oracle+ocr+khop2", "clip+ocr+khop2", "dense+ocr+khop2", "ocr-bm25+ocr+khop2"]
    summary = pd.DataFrame([{"variant": v, "answerer": a, "srr": 0.1 * i, "accuracy": 0.5, "accuracy_low": 0.4,
                             "accuracy_high": 0.6} for i, v in enumerate(variants) for a in ("solver", "blind")])
    fig = plots.srr_vs_accuracy(summary)
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert labels == variants[::-1]  # every variant named in full, highest SRR first
    colours = {line.get_color().upper() for ax in fig.axes for line in ax.lines
               if line.get_marker() not in (None, "None", "")}
    assert len(colours) == 2 and colours <= {c.upper() for c in plots.OKABE_ITO}


def test_faithfulness_plot_bins_instead_of_overplotting(monkeypatch):
    from matplotlib.collections import PathCollection, PolyCollection

    _figure(monkeypatch)
    df = pd.DataFrame({"srr": [1.0] * 500 + [0.5] * 20, "faithfulness": [1.0] * 500 + [0.0] * 20,
                       "correct": [True] * 510 + [False] * 10}, dtype=object)
    fig = plots.faithfulness_vs_srr(df)
    hexes = [c for ax in fig.axes for c in ax.collections if isinstance(c, PolyCollection)]
    assert len(hexes) == 2 and not [c for ax in fig.axes for c in ax.collections if isinstance(c, PathCollection)]
    assert sorted(int(v) for v in hexes[0].get_array() if v) == [10, 500]  # counts, not 510 dots on 2 places


def test_frame_rows_are_read_back_from_the_run(tiny):
    """A re-score hands the report frame rows only; the explorer reads the samples from samples.jsonl."""
    from benchmark.report.rows import frame_row

    run_dir, records, card = tiny
    data = explorer.explorer_data(run_dir, [frame_row(r) for r in records], card, render=False)
    assert data["columns"]["sample_id"] == [r["sample_id"] for r in records]
    assert data["columns"]["srr"] == [r["metrics"]["srr"] for r in records]
    assert not data["diagrams"] and set(data["missing_diagrams"].values()) == {"not rendered"}


def test_the_drawn_context_is_the_one_received(tiny, tmp_path, monkeypatch):
    """An answerer that receives an empty context (while the selector retrieved edges) is drawn with nothing
    in its context, and the page says how much was retrieved."""
    run_dir, records, card = tiny
    monkeypatch.setenv("DIAGQA_CACHE", str(tmp_path / "cache"))
    i, rec = next((i, r) for i, r in enumerate(records) if r["variant"] == "oracle+d2+full" and r["answerer"] == "blind")
    changed = list(records)
    changed[i] = dict(rec, context=dict(rec["context"], nodes=[], edges=[], text=""))
    data = explorer.explorer_data(run_dir, changed, card)
    blind = data["contexts"][data["c"][i]]
    assert blind["map"] == {"n": [], "e": [], "u": []}
    assert blind["retrieved"] == {"nodes": len(rec["retrieved"]["nodes"]), "edges": len(rec["retrieved"]["edges"])}
    other = records[i - 2]  # the solver's sample of the same question and variant
    assert (other["answerer"], other["question_id"], other["variant"]) == ("solver", rec["question_id"], rec["variant"])
    solver = data["contexts"][data["c"][i - 2]]
    assert "retrieved" not in solver and len(solver["map"]["e"]) == len(other["context"]["edges"]) > 0


def test_columns_written_out_in_chunks_give_the_same_page_data(tiny, monkeypatch):
    """The explorer's columns are written to files every few rows (a large run holds none of them whole):
    the page's data is the same as with every row held, including fields first met after a chunk was written."""
    from benchmark.report.html import packed

    run_dir, records, card = tiny
    changed = [dict(r, answer=dict(r["answer"], late_field=i)) if i >= 5 else r for i, r in enumerate(records)]
    held = explorer.explorer_data(run_dir, changed, card, render=False)
    monkeypatch.setattr(explorer, "COLUMN_CHUNK", 2)
    spooled = explorer.explorer_data(run_dir, changed, card, render=False)
    assert any(c._file is not None for c in spooled["columns"].values())   # written out, not held
    assert list(spooled["columns"]["answer.late_field"]) == [None] * 5 + list(range(5, len(records)))
    assert list(spooled["columns"]["sample_id"]) == [r["sample_id"] for r in records]
    # each sample's references to its question and context are written out the same way, and the questions
    # (one per question of the run) go to a spool file as they are met
    assert spooled["q"]._file is not None and list(spooled["q"]) == list(held["q"])
    assert list(spooled["c"]) == list(held["c"]) and list(spooled["questions"]) == list(held["questions"])
    assert type(spooled["questions"]) is explorer.Spool
    page = json.loads(gzip.decompress(base64.b64decode(packed(spooled))))
    assert packed(spooled) == packed(held) and page["columns"]["srr"] == [r["metrics"]["srr"] for r in records]


def test_questions_and_contexts_are_stored_once_whatever_the_order_of_the_samples(tiny, monkeypatch):
    """The explorer keeps its index of questions and contexts a diagram at a time (the diagrams read before sealed,
    :class:`explorer._ByDiagram`): samples interleaved across diagrams, each diagram met again and again, still
    give each question and each distinct context one entry, and each sample the references to its own."""
    import random

    from benchmark.records import dumps_line

    run_dir, records, card = tiny
    assert len({r["diagram_id"] for r in records}) > 1
    mixed = list(records)
    random.Random(4).shuffle(mixed)
    seals = []
    real_of = explorer._ByDiagram._of

    def watched(self, did):
        seals.append((did != self._did and bool(self._open), did != self._did and did in self._sealed))
        return real_of(self, did)   # (sealing the diagram open, making a sealed one again)

    monkeypatch.setattr(explorer._ByDiagram, "_of", watched)
    for recs in (records, mixed):
        seals.clear()
        data = explorer.explorer_data(run_dir, recs, card, render=False)
        questions, contexts = list(data["questions"]), list(data["contexts"])
        assert [q["id"] for q in questions] == list(dict.fromkeys(r["question_id"] for r in recs))
        keys = {dumps_line([r["diagram_id"], r.get("found_diagram"), (r.get("context") or {}).get("text"),
                            r.get("retrieved")]) for r in recs if r.get("context") is not None or r.get("retrieved") is not None}
        assert len(contexts) == len(keys)
        for r, qi, ci in zip(recs, data["q"], data["c"]):
            assert questions[qi]["id"] == r["question_id"]
            assert contexts[ci]["text"] == (r.get("context") or {}).get("text")
        assert any(sealed for sealed, _ in seals)
    assert any(again for _, again in seals)   # the shuffled samples met sealed diagrams again


def test_the_samples_frame_is_let_go_before_the_explorer_reads_the_samples(tiny, tmp_path, monkeypatch):
    """A report from the run's rows (as `diagqa run` and `diagqa report` make it) frees its samples frame (the
    rows' coded columns) once the tables are made: the explorer, which reads samples.jsonl again, does not hold
    both, and the caller's store is left empty."""
    import gc

    from benchmark.report.columns import SampleColumns
    from benchmark.report.rows import RowStore, frame_row
    from benchmark.runner import write_report_atomic

    run_dir, records, card = tiny
    alive = []
    real = explorer.explorer_data

    def counting(*args, **kwargs):
        gc.collect()
        alive.append([o.shape if type(o) is pd.DataFrame else type(o).__name__ for o in gc.get_objects()
                      if type(o) in (pd.DataFrame, SampleColumns) and len(o) == len(records)])
        return real(*args, **kwargs)

    monkeypatch.setattr(explorer, "explorer_data", counting)
    monkeypatch.setenv("DIAGQA_CACHE", str(tmp_path / "cache"))
    rows = RowStore()
    for rec in records:
        rows.add(frame_row(rec))
    write_report_atomic(run_dir, rows, dict(card))
    assert alive == [[]] and len(rows) == 0


@pytest.mark.parametrize("chunk", [1 << 20, 1, 2, 3, 7])
def test_graphs_json_is_read_a_diagram_at_a_time_as_json_reads_it(tmp_path, monkeypatch, chunk):
    """iter_graphs yields graphs.json's pairs in order, equal to json.loads of the file, whatever the
    spacing, braces inside labels included, and wherever a chunk of the file read ends (in a key, a
    label, a number, the spaces); malformed files raise as json.loads does."""
    from benchmark.report import explorer
    from benchmark.report.explorer import _graphs, iter_graphs, node_labels

    monkeypatch.setattr(explorer, "GRAPHS_CHUNK", chunk)

    f = tmp_path / "graphs.json"
    graphs = {"b": {"nodes": [{"id": "x", "label": "a } or {"}], "links": []}, "a": {"nodes": [{"id": "y"}]}, "c": {}}
    numbers = {"n": 12345, "d": {"w": 1.5e-07, "k": [10, 200, 3000]}, "t": -42, "ё": "Сервис заказов"}
    for text in (json.dumps(graphs), json.dumps(graphs, indent=2), "{ }", '{"a":{}}\n', json.dumps(numbers),
                 json.dumps(numbers, ensure_ascii=False, indent=3) + "\n\n"):
        f.write_text(text, encoding="utf-8")
        assert list(iter_graphs(f)) == list(json.loads(text).items())
    f.write_text(json.dumps(graphs), encoding="utf-8")
    assert _graphs(tmp_path, {"a", "zz"}) == {"a": graphs["a"]} and _graphs(tmp_path) == graphs
    assert node_labels(tmp_path) == {"b": {"x": "a } or {"}, "a": {"y": "y"}, "c": {}}
    assert node_labels(tmp_path, {"a", "zz"}) == {"a": {"y": "y"}}
    for bad in ("", "{", '{"a" {}}', '{"a": {},}', '{"a": {}} x', "[]", '{"a": {}', '{"a": 12', '{"a": 1} 2',
                '{"a": {"b": [1, 2}}'):
        f.write_text(bad, encoding="utf-8")
        with pytest.raises(json.JSONDecodeError):
            list(iter_graphs(f))


def test_a_graph_longer_than_a_chunk_is_decoded_a_few_times_not_once_per_chunk(tmp_path, monkeypatch):
    """The text read doubles while a value is cut off: a 40 000-character graph read a character at a time is
    tried some twenty times, not forty thousand (each try parses what is read so far)."""
    from benchmark.report import explorer

    tries = []

    class Counting(json.JSONDecoder):
        def raw_decode(self, s, idx=0):
            tries.append(idx)
            return super().raw_decode(s, idx)

    monkeypatch.setattr(explorer, "GRAPHS_CHUNK", 1)
    monkeypatch.setattr(explorer.json, "JSONDecoder", Counting)
    graph = {"nodes": [{"id": f"n{i}", "label": "Сервис"} for i in range(1500)]}
    f = tmp_path / "graphs.json"
    f.write_text(json.dumps({"a": graph, "b": {}}, ensure_ascii=False), encoding="utf-8")
    assert len(f.read_text(encoding="utf-8")) > 40000
    assert list(explorer.iter_graphs(f)) == [("a", graph), ("b", {})]
    assert len(tries) < 60


def test_a_report_from_the_rows_coded_columns_is_the_report_from_their_frame(tiny, tmp_path, monkeypatch):
    """`diagqa run` and `diagqa report` hand the report a RowStore (read as coded columns, a few at a time);
    the files are the same, byte for byte, as from the pandas frame of the same rows."""
    from benchmark.report import write_report
    from benchmark.report.rows import RowStore, frame_row

    run_dir, records, card = tiny
    monkeypatch.setenv("DIAGQA_CACHE", str(tmp_path / "cache"))
    store = RowStore()
    for rec in records:
        store.add(frame_row(rec))
    files = {}
    for name, rows in (("frame", [frame_row(r) for r in records]), ("coded", store)):
        out = tmp_path / name
        out.mkdir()
        write_report(out, rows, dict(card), n_boot=100, run_files=run_dir)
        files[name] = {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
    assert {"summary.csv", "report.md", "report.html", "decisions.jsonl"} <= set(files["frame"])
    assert files["frame"] == files["coded"]


def test_an_edge_is_matched_by_its_ends_index_as_by_every_edge():
    """:func:`diagrams.match_edge` given the index of the edges by their ends (:func:`diagrams.edge_pairs`, what the
    explorer's drawn maps keep) finds the same edge as when it looks at every edge: directed and undirected on
    either side, labels, self-loops, several edges between the same ends, ends of other types than text."""
    import random

    rng = random.Random(7)
    nodes = ["a", "b", "c", "d", 1]
    for _ in range(300):
        edges = [(rng.choice(nodes), rng.choice(nodes), rng.choice(["", "x", "y"]), rng.random() < 0.7)
                 for _ in range(rng.randint(0, 12))]
        pairs = diagrams.edge_pairs(edges)
        assert sorted(i for idx in pairs.values() for i in idx) == list(range(len(edges)))
        for _ in range(10):
            edge = [rng.choice(nodes), rng.choice(nodes), rng.choice(["", "x", "y", None]), rng.random() < 0.7]
            edge = edge[:rng.randint(2, 4)]
            assert diagrams.match_edge(edge, edges, pairs) == diagrams.match_edge(edge, edges)
