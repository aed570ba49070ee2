"""The report's samples frame kept as coded columns (benchmark.report.columns.SampleColumns): every table made
from it is the one made from the whole pandas frame, and the page is written in pieces that make the same text."""
from __future__ import annotations

import base64
import gzip
import json
import math
import random

import numpy as np
import pandas as pd
import pytest

from benchmark.report import aggregate as agg
from benchmark.spill import Blob
from benchmark.report.columns import SampleColumns
from benchmark.report.document import analyse, build_sections, pair_records
from benchmark.report.markdown import render_markdown
from benchmark.report.rows import FRAME_COLUMNS, RowStore

CLASSES = ("grounded", "lucky_guess", "misread", "retrieval_miss", "abstained_appropriate", "abstained_miss", "error")


def _rows(n: int, seed: int = 3) -> list[tuple]:
    """Report rows of every kind a run makes: stage errors (no metrics), answerer errors, abstentions, a
    ``correct`` without a guess class, ``None`` gaps, list and mapping values, bools beside ints, timings unique to their row (a plain column)
    and a column whose floats give way to another kind of value late (a plain list)."""
    rnd = random.Random(seed)
    rows = []
    for i in range(n):
        q = f"q{i % 97}"
        variant = rnd.choice(["o+d2+none", "o+d2+full", "o+d2+khop2", "o+d2+bm25-8", "clip+ocr+khop2"])
        answerer = rnd.choice(["solver", "keyword", "blind"])
        stage_error = rnd.random() < 0.03
        cls = None if stage_error else rnd.choice(CLASSES)
        correct = None if cls in (None, "error") else cls in ("grounded", "lucky_guess")
        srr = None if cls is None else rnd.choice([0.0, 0.25, 0.5, 1.0, None])
        r = dict.fromkeys(FRAME_COLUMNS)
        r.update(question_id=q, diagram_id=f"d{i % 31}", variant=variant, answerer=answerer,
                 selector=variant.rsplit("+", 1)[1], qtype=rnd.choice(["reachable", "path", "count_out"]),
                 counter_prior=rnd.random() < 0.2, twin_question=f"q{(i + 1) % 97}" if i % 5 == 0 else None,
                 question_text=f"text of {q}", gold=[["A", "B"], True, 3, "A"][i % 4],
                 answer_raw=rnd.choice(["yes", "no", "A", None]), answer_error="boom" if cls == "error" else None,
                 answer_error_kind=rnd.choice([None, "unparsable"]) if cls == "error" else None,
                 answer_usage={"prompt_tokens": i % 7, "calls": 1} if answerer == "keyword" else None,
                 context_text="A -> B" if cls == "lucky_guess" else None, finder=variant.split("+")[0],
                 finder_rank=rnd.choice([1, 2, None]), source=variant.split("+")[1],
                 found_diagram=f"d{(i + (i % 11 == 0)) % 31}", twin_of=f"q{i % 13}" if i % 9 == 0 else None,
                 error_stage="select" if stage_error else None, error_message="no such node" if stage_error else None,
                 correct=correct, sufficient=None if cls is None else cls in ("grounded", "misread", "abstained_miss"),
                 guess_class=cls, srr=srr, precision=None if srr is None else rnd.choice([0.5, 1.0, None]),
                 f1=srr, node_srr=srr, faithfulness=rnd.choice([None, 0.0, 0.5, 1.0]), n_claims=rnd.choice([0, 1, 2]),
                 claims_supported=1, claims_unsupported=rnd.choice([0, 1]), claims_fabricated=0,
                 answer_value=rnd.choice([True, False, 1, "A", ["A", "B"], None]), abstained=cls and "abstained" in cls,
                 error="timeout" if cls == "error" else None,
                 precision_reason="nothing retrieved" if srr is not None and rnd.random() < 0.1 else None,
                 sufficient_if_aligned=rnd.choice([None, True]), evidence_recall=rnd.choice([None, 0.5]),
                 evidence_precision=None, context_tokens=rnd.randrange(0, 400),
                 retrieval_s=round(rnd.random(), 6) if i % 50 else None,
                 answer_s=rnd.random() if i < n - 10 else "late")
        if i % 211 == 5:   # scored without a class (a record from before guess classes): still a scored sample
            r.update(guess_class=None, correct=True, error_stage=None, error_message=None)
        rows.append(tuple(r.values()))
    return rows


def _store(rows: list[tuple]) -> RowStore:
    store = RowStore()
    for row in rows:
        store.add(row)
    return store


@pytest.fixture(scope="module")
def rows():
    return _rows(5000)


def test_the_store_keeps_plain_and_coded_columns(rows):
    store = _store(rows)
    plain = {name for j, name in enumerate(FRAME_COLUMNS) if store._plain[j] is not None}
    # unique values become plain columns: doubles while they are floats, a list once another kind of value came
    assert {"retrieval_s", "answer_s"} <= plain and "variant" not in plain and "gold" not in plain
    assert type(store._plain[FRAME_COLUMNS.index("retrieval_s")]).__name__ == "Floats"
    assert type(store._plain[FRAME_COLUMNS.index("answer_s")]) is list


def test_a_store_of_samples_keeps_its_timings_as_doubles_from_the_first_row(rows):
    """Timings that repeat often enough to stay coded in a plain store (a run's are rounded to microseconds)
    are doubles in a store made for samples, none of their values held by number; every column, row and
    frame reads the same, a timing that is no float turning the column into a list as before."""
    from benchmark.report import rows as rowmod

    rnd = random.Random(5)
    coarse = [r[:-2] + (round(rnd.random(), 2), r[-1]) for r in rows]   # 101 distinct retrieval times
    plain, samples = _store(coarse), RowStore.for_samples()
    for r in coarse:
        samples.add(r)
    j_r, j_a = FRAME_COLUMNS.index("retrieval_s"), FRAME_COLUMNS.index("answer_s")
    assert plain._plain[j_r] is None and len(plain._values[j_r]) == 101          # coded: each value held
    assert type(samples._plain[j_r]) is rowmod.Floats and samples._codes[j_r] is None and not samples._values[j_r]
    assert type(samples._plain[j_a]) is list                                      # "late": a list from there
    assert [samples._plain[j] is None for j in range(len(FRAME_COLUMNS)) if j not in (j_r, j_a)] == \
        [plain._plain[j] is None for j in range(len(FRAME_COLUMNS)) if j not in (j_r, j_a)]
    for j, name in enumerate(FRAME_COLUMNS):
        assert list(samples.column(j)) == list(plain.column(j)), name
        assert samples.present(j).tolist() == plain.present(j).tolist(), name
    assert list(samples) == list(plain) and samples[4321] == plain[4321]
    taken = samples.take()
    assert list(taken) == list(plain) and len(samples) == 0 and samples._plain_from_start == taken._plain_from_start
    pd.testing.assert_frame_equal(taken.to_frame(), plain.to_frame())


def test_a_columns_sequence_is_its_values_read_from_the_stores_numbers(rows, monkeypatch):
    """``RowStore.sequence`` of every kind of column (coded, doubles, a plain list), of every row and of some rows
    in the order given, is ``RowStore.column``'s values, the same objects; a coded column's numbers are the store's
    own (nothing copied) for every row, and it is read a chunk of rows at a time."""
    from benchmark.report.rows import Coded

    monkeypatch.setattr(Coded, "CHUNK", 7)   # several chunks, the last one short
    store = _store(rows)
    picked = np.array([4, 0, 4999, 17, 17, 2500], dtype=np.int64)
    for j, name in enumerate(FRAME_COLUMNS):
        for sel in (None, picked, picked[:0]):
            seq, col = store.sequence(j, sel), store.column(j, sel)
            assert len(seq) == len(col) and list(seq) == list(col), name
            assert all(seq[i] is col[i] or seq[i] == col[i] for i in range(len(col))), name
            assert [type(v) for v in seq] == [type(v) for v in col], name
            assert list(seq[1:4]) == list(col[1:4]) and list(seq[-2:]) == list(col[-2:]), name
        if store._plain[j] is None:
            assert type(store.sequence(j)) is Coded


def test_a_coded_columns_numbers_are_kept_deflated_a_chunk_of_rows_at_a_time(rows, monkeypatch):
    """Sealed chunks of a column's numbers (at the width they had, the column widened since) read back as the
    store whose numbers were never sealed: every column, sequence, measured mask, row and iteration; a column
    of repeating numbers takes a small share of a byte a row once sealed."""
    from benchmark.report import rows as rowmod

    picked = np.array([4999, 0, 63, 64, 65, 2500, 63], dtype=np.int64)
    at = (0, 64, 4999, -1, 130, 129)

    def read(store: RowStore) -> list:
        return [[(list(store.column(j, sel)), list(store.sequence(j, sel))) for sel in (None, picked)]
                + [store.present(j).tolist()] for j in range(len(FRAME_COLUMNS))] + [list(store), [store[i] for i in at]]

    whole = _store(rows)                              # 5000 rows, under one chunk: nothing sealed
    assert all(c is None or not c._sealed for c in whole._codes)
    expected = read(whole)
    monkeypatch.setattr(rowmod._Codes, "CHUNK", 64)
    monkeypatch.setattr(rowmod.Floats, "CHUNK", 64)
    chunked = _store(rows)                            # 78 chunks sealed per coded column, the last one open
    tokens = chunked._codes[FRAME_COLUMNS.index("context_tokens")]
    assert tokens.typecode == "H" and {w for w, _ in tokens._sealed} == {"B", "H"}   # widened after sealing
    timings = chunked._plain[FRAME_COLUMNS.index("retrieval_s")]   # unique to their row: doubles, sealed too
    assert type(timings) is rowmod.Floats and len(timings._sealed) == 78 and len(timings.values) == 5000 - 78 * 64
    # the sealed chunks are in the spill file, not in memory: where each lies is held
    assert all(type(p) is Blob for c in chunked._codes if c is not None for _, p in c._sealed)
    assert chunked._spill.size >= 78 * 64 * 9 + sum(len(p) for c in chunked._codes if c is not None for _, p in c._sealed)
    got = read(chunked)
    for j, name in enumerate(FRAME_COLUMNS):
        assert got[j] == expected[j], name
    assert got[-2:] == expected[-2:]
    listed = expected[FRAME_COLUMNS.index("retrieval_s")][0][0]
    assert [timings[i] for i in (0, 63, 64, 4999, -1, 130, 64)] == [listed[i] for i in (0, 63, 64, 4999, -1, 130, 64)]
    assert timings[60:70] == listed[60:70] and list(timings) == listed
    counter = chunked._codes[FRAME_COLUMNS.index("claims_supported")]   # one value: every number 0
    assert sum(len(p) for _, p in counter._sealed) < len(rows) / 4
    with pytest.raises(IndexError):
        chunked[5000]
    # the taken store reads the same file; the frame made from it closes it
    taken = chunked.take()
    assert read(taken)[:-2] == expected[:-2] and len(chunked) == 0
    frame = taken.to_frame()
    assert taken._spill.size == 0 and len(frame) == 5000
    assert frame["retrieval_s"].tolist() == expected[FRAME_COLUMNS.index("retrieval_s")][0][0]


def test_columns_are_the_frames_columns(rows):
    df = agg.frame(rows)
    store = _store(rows)
    sc = agg.frame(store)
    assert isinstance(sc, SampleColumns) and len(store) == 0   # the store given is left empty
    assert len(sc) == len(df) and list(sc.columns) == list(df.columns) and "srr" in sc and "nope" not in sc
    for name in FRAME_COLUMNS:
        assert sc[name].equals(df[name]), name
        assert [type(v) for v in sc[name]] == [type(v) for v in df[name]], name   # True stays True, 1 stays 1
    mask = df["guess_class"] == "lucky_guess"
    assert sc[sc["guess_class"] == "lucky_guess"].equals(df[mask])
    assert sc.loc[mask, ["variant", "gold"]].equals(df.loc[mask, ["variant", "gold"]])
    assert sc.loc[mask.to_numpy(), "srr"].equals(df.loc[mask, "srr"])
    assert sc[["answer_usage", "srr"]].equals(df[["answer_usage", "srr"]])
    for columns in (None, ["answerer", "srr"], ["variant", "guess_class", "gold"]):
        assert agg.scored(sc, columns).equals(agg.scored(df, columns)), columns
    names = ["answerer", "srr", "gold", "answer_s", "retrieval_s"]
    for only in (False, True):
        lazy, listed = agg._columns(sc, names, only), agg._columns(df, names, only)
        assert {n: list(lazy[n]) for n in names} == listed   # each made when it is read
        for n in names:   # read as the tables read them: by position, iterated, counted; the same objects' types
            seq = lazy[n]
            assert len(seq) == len(listed[n]) and [seq[i] for i in range(len(seq))] == listed[n]
            assert [type(v) for v in seq] == [type(v) for v in listed[n]], n
        with pytest.raises(KeyError):
            lazy["variant"]   # not asked for
    with pytest.raises(KeyError):
        sc["nope"]
    with pytest.raises(ValueError, match="a mask of"):
        sc[np.ones(3, dtype=bool)]


def _same(a, b) -> bool:
    if isinstance(a, pd.DataFrame):
        return isinstance(b, pd.DataFrame) and a.equals(b)
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, float) and math.isnan(a):
        return isinstance(b, float) and math.isnan(b)
    return a == b


@pytest.mark.parametrize("chunk, all_scored", [(None, False), (64, False), (None, True)])
def test_every_table_is_the_same_from_the_coded_columns(rows, chunk, all_scored, monkeypatch):
    """The whole analysis (every table, the sensitivity and claim checks) and the report's text from the coded
    columns equal those from the pandas frame of the same rows; also when the store's columns were sealed a
    chunk at a time (the timings read back a chunk at a time for the rows asked for), and when every sample is
    scored (the scored samples' columns are then the columns, none picked)."""
    from benchmark.report import rows as rowmod

    if all_scored:
        g, c = FRAME_COLUMNS.index("guess_class"), FRAME_COLUMNS.index("correct")
        rows = [r for r in rows if r[g] is not None or r[c] is not None]
        assert 4000 < len(rows) < 5000
    whole = analyse(list(rows), seed=5, n_boot=50)
    if chunk:
        monkeypatch.setattr(rowmod._Codes, "CHUNK", chunk)
        monkeypatch.setattr(rowmod.Floats, "CHUNK", chunk)
    coded = analyse(_store(rows), seed=5, n_boot=50)
    assert isinstance(coded.samples, SampleColumns) and isinstance(whole.samples, pd.DataFrame)
    for name in ("summary", "guess", "lucky", "by_type", "by_prior", "twins", "faith", "buckets", "claim", "floor",
                 "finding", "sources", "ranking", "costs", "sensitivity"):
        assert _same(getattr(whole, name), getattr(coded, name)), name
    assert len(whole.lucky) and len(whole.twins) and len(whole.finding)   # the comparison is not of empty tables
    pairs = {"q1": "q2", "q5": "q6"}
    assert pair_records(coded.samples, pairs) == [r for r in pair_records(whole.samples)
                                                  if r["question_id"] in {"q1", "q2", "q5", "q6"}]
    for a in (whole, coded):
        a.pairs = pairs
    card = {"run_id": "r", "samples": len(rows)}
    md = [render_markdown(build_sections(a, dict(card), {}), "t") for a in (whole, coded)]
    assert md[0] == md[1] and "Counterfactual pairs" in md[0]


@pytest.mark.parametrize("coded", [False, True])
def test_the_analysis_holds_only_the_lucky_guesses_listed_and_counts_every_one(rows, coded):
    """A run's analysis keeps the first lucky guesses of each answerer (those the report lists), not every one
    (at a hundred times the bundled data, 165 000 rows held to the end of the report), and the report it makes
    is the report of an analysis that holds every one."""
    from dataclasses import replace

    from benchmark.report import document

    a = analyse(_store(rows) if coded else list(rows), seed=5, n_boot=50)
    every = replace(a, lucky=agg.lucky_guesses(a.samples), lucky_counts=None)
    per_answerer = every.lucky.groupby("answerer", sort=False)
    assert min(len(g) for _, g in per_answerer) > document.LUCKY_LISTED   # (more than are listed, for each)
    assert a.lucky_counts == {k: len(g) for k, g in per_answerer}
    assert len(a.lucky) == document.LUCKY_LISTED * len(a.lucky_counts)
    for answerer, g in per_answerer:
        assert a.lucky[a.lucky["answerer"] == answerer].reset_index(drop=True).equals(
            g.head(document.LUCKY_LISTED).reset_index(drop=True))
    card = {"run_id": "r", "samples": len(rows)}
    labels = {f"d{i}": {"A": "Alpha"} for i in range(31)}
    md = [render_markdown(build_sections(x, dict(card), {}, labels), "t") for x in (a, every)]
    assert md[0] == md[1] and f"{sum(a.lucky_counts.values())} lucky guesses in all" in md[0]


def test_the_page_written_in_pieces_is_the_page(tmp_path):
    from benchmark.report import html
    from benchmark.report.document import Section

    explorer = {"columns": {"x": list(range(30000)), "y": ["é"] * 5}, "q": [{"t": "a < b"}]}
    sections = [Section("One", ["**bold** text"])]
    page = html.render_html(sections, "t <1>", {}, explorer)
    html.write_html(tmp_path / "r.html", sections, "t <1>", {}, explorer)
    assert (tmp_path / "r.html").read_bytes() == page.encode("utf-8")
    data = page.split('<script id="diagqa-data" type="application/octet-stream">')[1].split("</script>")[0]
    assert json.loads(gzip.decompress(base64.b64decode(data))) == explorer
    pieces = list(html.packed_pieces(explorer))
    assert len(pieces) > 2 and all(len(p) % 4 == 0 for p in pieces)   # whole base64 groups, joined as one text


def test_the_claim_check_counts_unmeasured_values_as_before():
    """Faithfulness above and below the SRR line and the AUC rows, from a frame and from coded columns: a
    claimless answer is unmeasured where it falls, an SRR of None is on neither side, a ``correct`` of
    None is no right answer, and an AUC row needs both SRR and sufficiency."""
    def row(srr, faith, correct, sufficient):
        r = dict.fromkeys(FRAME_COLUMNS)
        r.update(question_id=f"q{srr}{faith}{correct}{sufficient}", variant="o+d2+khop2", answerer="a", srr=srr,
                 faithfulness=faith, correct=correct, sufficient=sufficient, guess_class="grounded")
        return tuple(r.values())

    rows = [row(0.9, None, True, True), row(0.9, 0.95, False, True), row(0.8, 0.5, True, False),
            row(0.2, 0.3, True, False), row(0.2, None, True, False), row(0.2, 0.95, None, True),
            row(None, 1.0, True, True), row(0.5, 0.1, True, None)]
    summary = pd.DataFrame({"answerer": ["a"], "accuracy": [0.5], "srr": [0.5]})
    for df in (agg.frame(rows), SampleColumns(_store(rows))):
        c = agg.claim_check(df, summary)
        assert c["faithful_above"] == {"n": 2, "share_faithful": 0.5, "unmeasured": 1}
        assert c["unfaithful_right_below"] == {"n": 2, "share_unfaithful": 1.0, "unmeasured": 1}
        assert c["faithfulness_holds"] is False
        s = c["sensitivity"][0]
        assert s["n"] == 6 and s["auc_srr"] == pytest.approx(7 / 9) and s["auc_accuracy"] == pytest.approx(1.5 / 9)
        assert c["faithfulness_by_answerer"][0]["faithful_above"]["n"] == 2


def test_the_blind_floor_counts_each_question_once_with_its_first_measured_values():
    """The blind floor, from a frame and from coded columns: a question's blind samples (one per variant) count
    once, with the first value met of each column among its scored samples; a stage error is not scored, a
    question without a measured answer is missing, and an unknown counter-prior flag is in neither group."""
    def row(q, variant, correct, qtype="path", flag=False, cls="grounded", answerer="blind"):
        r = dict.fromkeys(FRAME_COLUMNS)
        r.update(question_id=q, variant=variant, answerer=answerer, correct=correct, qtype=qtype, counter_prior=flag,
                 guess_class=cls if correct is not None or cls == "error" else None)
        return tuple(r.values())

    rows = [row("q1", "v1", None, cls="error"), row("q1", "v2", True, qtype="count", flag=True),
            row("q2", "v1", None, cls=None), row("q2", "v2", False, qtype="reachable"), row("q2", "v3", True),
            row("q3", "v1", None, qtype=None, flag=None, cls="error"), row("q3", "v2", None, qtype="count", cls="error"),
            row("q4", "v1", True, flag=None), row("q5", "v1", False, answerer="solver")]
    for df in (agg.frame(rows), SampleColumns(_store(rows))):
        f = agg.blind_floor(df, n_boot=50)
        assert f["questions"] == 4 and f["accuracy_missing"] == 1 and f["accuracy"] == pytest.approx(2 / 3)
        # q1: path and not counter-prior (its error sample comes first), right; q2: its first scored sample
        # (reachable) is wrong; q3: count (its first type given), missing; q4: path, right, flag unknown
        assert f["by_type"] == {"count": None, "path": 1.0, "reachable": 0.0}
        assert f["counter_prior"] == {"False": 0.5}
        assert agg.blind_floor(df, answerer="nobody") is None


def test_an_answerer_that_receives_no_context_is_told_by_its_sizes_or_else_by_its_answers():
    """An answerer whose samples under the candidates all had an empty context receives nothing; where a size is
    unknown, whether some question got different answers under different candidates decides. The same from
    lists and from coded columns (whose distinct sizes are looked at once each)."""
    from array import array

    from benchmark.report.comparison import _receives_nothing
    from benchmark.report.rows import Coded

    def coded(values):
        distinct = list(dict.fromkeys(values))
        return Coded(distinct, array("B", [distinct.index(v) for v in values]))

    groups = {"v1": array("i", [0, 2]), "v2": array("i", [1, 3])}
    cases = [([0, 0, 0, 0], ["a", "b", "a", "b"], True), ([0, 5, 0, 0], ["a"] * 4, False),
             ([0, None, 0, 0], ["a"] * 4, True), ([None, None, 0, 0], ["a", "b", "a", "a"], False)]
    for tokens, answers, expected in cases:
        for wrap in (list, coded):
            s = {"context_tokens": wrap(tokens), "answer_value": wrap(answers), "answer_raw": wrap([None] * 4),
                 "question_id": wrap(["q1", "q1", "q2", "q2"])}
            assert _receives_nothing(s, groups, ["v1", "v2"]) is expected, (tokens, answers)
            assert _receives_nothing(s, groups, ["v1"]) is True   # (its sizes are 0, or it answered each question once)
            assert _receives_nothing(s, groups, ["v3"]) is True


def test_the_faithfulness_plot_counts_each_distinct_point_once_with_its_samples(rows, monkeypatch):
    """The hexagons drawn from each distinct (SRR, faithfulness) weighted by its samples are those drawn from
    every sample (the same cells, the same counts), and the points are the same counted from a frame or from
    coded columns, a chunk of rows at a time."""
    from matplotlib.figure import Figure

    from benchmark.report import plots

    df, cols = agg.frame(rows), SampleColumns(_store(rows))
    whole = plots._hex_points(agg._columns(df, ["srr", "faithfulness", "correct"]))
    monkeypatch.setattr(plots, "POINTS_CHUNK", 7)
    chunked = plots._hex_points(agg._columns(cols, ["srr", "faithfulness", "correct"]))
    for want in (True, False):
        assert all((a == b).all() for a, b in zip(whole[want], chunked[want]))
        frame = df[df["srr"].notna() & df["faithfulness"].notna()
                   & (df["correct"].map(lambda v: v is True or v == 1) == want)]
        assert whole[want][2].sum() == len(frame) > 100 > len(whole[want][0])
        every = Figure().subplots().hexbin(frame["srr"].astype(float), frame["faithfulness"].astype(float),
                                           gridsize=16, extent=(0, 1, 0, 1), bins="log", mincnt=1)
        xs, ys, counts = whole[want]
        weighted = Figure().subplots().hexbin(xs, ys, C=counts, reduce_C_function=np.sum, gridsize=16,
                                              extent=(0, 1, 0, 1), bins="log", mincnt=1)
        assert (every.get_offsets() == weighted.get_offsets()).all()
        assert (every.get_array() == weighted.get_array()).all()
