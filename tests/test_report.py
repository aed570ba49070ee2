"""Report aggregation on hand-built samples, and the self-contained HTML page."""
from __future__ import annotations

import base64
import doctest
import re

import pandas as pd
import pytest

from benchmark.report import aggregate as agg
from benchmark.report import document, html, markdown, plots, tables


def sample(variant, answerer, correct, sufficient, srr, qid="q", faith=None, claims=0, unsupported=0, fabricated=0,
           qtype="reachable", twin=None, value=None, prior=False):
    cls = {(True, True): "grounded", (True, False): "lucky_guess", (False, True): "misread",
           (False, False): "retrieval_miss"}[(correct, sufficient)]
    return {"sample_id": f"{qid}|{variant}|{answerer}", "question_id": qid, "diagram_id": f"d{qid}",
            "found_diagram": f"d{qid}", "variant": variant,
            "answerer": answerer, "selector": variant.split("+")[-1], "qtype": qtype, "counter_prior": prior,
            "twin_question": twin, "question_text": f"text of {qid}", "gold": True, "answer_raw": str(value),
            "answer_error": None, "context_text": "A -> B", "error_stage": None, "error_message": None,
            "correct": correct, "sufficient": sufficient, "guess_class": cls, "srr": srr, "precision": 0.5, "f1": 0.5,
            "node_srr": srr, "faithfulness": faith, "n_claims": claims,
            "claims_supported": claims - unsupported - fabricated, "claims_unsupported": unsupported,
            "claims_fabricated": fabricated, "answer_value": value, "abstained": False, "error": None,
            "precision_reason": None, "sufficient_if_aligned": None, "context_tokens": 4, "retrieval_s": 0.001,
            "answer_s": 0.001}


@pytest.fixture()
def frame():
    rows = [
        # variant full: reads everything; variant none: guesses
        sample("o+d2+full", "solver", True, True, 1.0, "q1", faith=1.0, claims=2, twin="q2", value=True),
        sample("o+d2+full", "solver", True, True, 1.0, "q2", faith=1.0, claims=1, twin="q1", value=False),
        sample("o+d2+full", "solver", False, True, 0.8, "q3", faith=0.95, claims=3, value=False, qtype="path"),
        sample("o+d2+none", "solver", True, False, 0.0, "q1", faith=0.0, claims=1, unsupported=1, twin="q2", value=True),
        sample("o+d2+none", "solver", False, False, 0.0, "q2", faith=None, claims=0, twin="q1", value=True),
        sample("o+d2+none", "solver", True, False, 0.5, "q3", faith=0.5, claims=2, fabricated=1, value=True,
               qtype="path", prior=True),
    ]
    return pd.DataFrame(rows).astype(object)


def test_summary_by_hand(frame):
    t = agg.summary_table(frame, seed=0, n_boot=300).set_index("variant")
    full, none = t.loc["o+d2+full"], t.loc["o+d2+none"]
    assert full["accuracy"] == pytest.approx(2 / 3) and full["grounded_accuracy"] == pytest.approx(2 / 3)
    assert full["guess_rate"] == 0.0 and full["accuracy_inflation"] == 0.0
    assert none["accuracy"] == pytest.approx(2 / 3) and none["grounded_accuracy"] == 0.0
    assert none["guess_rate"] == 1.0 and none["accuracy_inflation"] == pytest.approx(2 / 3)
    assert none["srr"] == pytest.approx(0.5 / 3) and none["sufficiency"] == 0.0
    assert none["faithfulness"] == pytest.approx(0.25) and none["faithfulness_missing"] == 1
    assert (none["lucky_guess"], none["retrieval_miss"], none["grounded"]) == (2, 1, 0)
    assert full["accuracy_low"] <= full["accuracy"] <= full["accuracy_high"]


def test_bootstrap_is_seeded_and_counts_none():
    spread = [i / 37 for i in range(37)]
    assert agg.bootstrap(spread, 3, "k") == agg.bootstrap(spread, 3, "k")
    assert agg.bootstrap(spread, 3, "k") != agg.bootstrap(spread, 4, "k")
    assert agg.bootstrap(spread, 3, "k") != agg.bootstrap(spread, 3, "other group")
    values = [1, 0, 1, 1, None, 0, 1]
    out = {}
    agg._with_ci(out, "m", values, 0, "k", 200)
    assert out["m"] == pytest.approx(4 / 6) and out["m_missing"] == 1


def test_guess_table_lucky_list_and_breakdowns(frame):
    g = agg.guess_tables(frame)["solver"]
    assert g.loc["correct", "sufficient context"] == 2 and g.loc["correct", "insufficient context"] == 2
    assert g.loc["wrong", "sufficient context"] == 1 and g.loc["wrong", "insufficient context"] == 1
    lucky = agg.lucky_guesses(frame)
    assert list(lucky["question_id"]) == ["q1", "q3"] and set(lucky["variant"]) == {"o+d2+none"}
    by_type = agg.breakdown(frame, "qtype").set_index("qtype")
    assert by_type.loc["path", "accuracy"] == 0.5 and by_type.loc["path", "lucky_guesses"] == 1
    prior = agg.breakdown(frame, "counter_prior").set_index("counter_prior")
    assert prior.loc[True, "n"] == 1 and prior.loc[False, "n"] == 5


def test_twin_consistency(frame):
    t = agg.twin_consistency(frame).set_index("variant")
    # full answers the twins differently (True / False); none answers both alike (True / True)
    assert t.loc["o+d2+full", "pairs"] == 1 and t.loc["o+d2+full", "answered_differently"] == 1.0
    assert t.loc["o+d2+none", "answered_differently"] == 0.0 and t.loc["o+d2+none", "both_correct"] == 0
    assert t.loc["o+d2+full", "finder_same"] == 0 and t.loc["o+d2+full", "own_pairs"] == 1


def test_twin_consistency_separates_the_finders_confusion_from_the_answerers(frame):
    # a finder that returned q1's diagram for both twins: the answerer cannot tell them apart
    confused = frame[frame["variant"] == "o+d2+full"].copy()
    confused["variant"] = "f+d2+full"
    confused.loc[confused["question_id"] == "q2", "found_diagram"] = "dq1"
    t = agg.twin_consistency(pd.concat([frame, confused])).set_index("variant")
    row = t.loc["f+d2+full"]
    assert row["finder_same"] == 1 and row["own_pairs"] == 0 and row["answered_differently"] is None
    assert row["answered_differently_all"] == 1.0


def test_faithfulness_table_counts_unsupported_and_fabricated(frame):
    t = agg.faithfulness_table(frame, n_boot=200).set_index("variant")
    none = t.loc["o+d2+none"]
    assert none["with_claims"] == 2 and none["unmeasured"] == 1
    assert none["share_unsupported"] == 0.5 and none["share_fabricated"] == 0.5


def test_claim_check_numbers(frame):
    summary = agg.summary_table(frame, n_boot=200)
    c = agg.claim_check(frame, summary)
    s = c["sensitivity"][0]
    # SRR separates sufficient (1, 1, .8) from insufficient (0, 0, .5) perfectly; accuracy does not
    assert s["auc_srr"] == 1.0 and s["auc_accuracy"] == 0.5
    assert s["spread_srr"] == pytest.approx(2.8 / 3 - 0.5 / 3) and s["spread_accuracy"] == 0.0
    assert s["srr_more_sensitive"] is True
    # above SRR 0.7: faithfulness 1, 1, .95 -> all >= .9; right answers below: faith 0 and .5 -> both < .9
    assert c["faithful_above"]["share_faithful"] == 1.0 and c["unfaithful_right_below"]["share_unfaithful"] == 1.0
    assert c["faithfulness_holds"] is True


def test_html_is_self_contained_and_readable(frame):
    a = document.Analysis(frame, agg.summary_table(frame, n_boot=100), agg.guess_tables(frame),
                          agg.lucky_guesses(frame), agg.breakdown(frame, "qtype"),
                          agg.breakdown(frame, "counter_prior"), agg.twin_consistency(frame),
                          agg.faithfulness_table(frame, n_boot=100), agg.srr_buckets(frame), {}, None)
    a.claim = agg.claim_check(frame, a.summary)
    from benchmark.report import make_plots

    figs = make_plots(a)
    assert set(figs) >= {"accuracy_grounded.png", "guess_tables.png", "accuracy_srr.png", "faithfulness_srr.png"}
    page = html.render_html(document.build_sections(a, {"run_id": "x"}, figs), "t", figs)
    assert not re.search(r"""(src|href)=["'](?!data:|#)""", page), "external asset"
    assert not re.search(r"<script[^>]*\ssrc=", page) and "@import" not in page and "url(http" not in page
    images = re.findall(r'src="data:image/png;base64,([^"]+)"', page)
    assert len(images) == len(figs)
    assert all(base64.b64decode(i).startswith(b"\x89PNG") for i in images)
    assert "The blind answerer was not part" in page or "not part of this run" in page
    md = markdown.render_markdown(document.build_sections(a, {"run_id": "x"}, figs), "t")
    assert "(plots/accuracy_grounded.png)" in md


def test_lucky_guesses_give_gold_answers_with_the_labels_of_the_diagrams_listed_only(frame, monkeypatch):
    """The labels are asked for the diagrams of the lucky guesses listed, not every diagram of the run."""
    frame.at[5, "gold"] = ["n1", "n2"]   # q3 under none: a lucky guess, its gold a path
    asked = []

    def labels(diagrams):
        asked.append(set(diagrams))
        return {"dq3": {"n1": "Auth", "n2": "Orders DB"}}

    a = document.Analysis(frame, agg.summary_table(frame, n_boot=100), agg.guess_tables(frame),
                          agg.lucky_guesses(frame), agg.breakdown(frame, "qtype"),
                          agg.breakdown(frame, "counter_prior"), agg.twin_consistency(frame),
                          agg.faithfulness_table(frame, n_boot=100), agg.srr_buckets(frame), {}, None)
    a.claim = agg.claim_check(frame, a.summary)
    md = markdown.render_markdown(document.build_sections(a, {"run_id": "x"}, {}, labels), "t")
    assert asked == [{"dq1", "dq3"}] and "Auth" in md and "Orders DB" in md
    monkeypatch.setattr(document, "LUCKY_LISTED", 1)    # only q1's lucky guess listed
    asked.clear()
    md = markdown.render_markdown(document.build_sections(a, {"run_id": "x"}, {}, labels), "t")
    assert asked == [{"dq1"}] and "Auth" not in md
    plain = markdown.render_markdown(document.build_sections(a, {"run_id": "x"}, {},
                                                             {"dq3": {"n1": "Auth", "n2": "Orders DB"}}), "t")
    assert plain == markdown.render_markdown(document.build_sections(a, {"run_id": "x"}, {}, labels), "t")


def test_plots_are_deterministic(frame):
    s = agg.summary_table(frame, n_boot=100)
    assert plots.srr_vs_accuracy(s) == plots.srr_vs_accuracy(s)


def test_doctests():
    from benchmark.report import columns, comparison

    for mod in (agg, tables, comparison, columns):
        result = doctest.testmod(mod)
        assert result.failed == 0 and result.attempted > 0, mod.__name__


@pytest.mark.parametrize("values", [[0.0, 0.5] * 60, [0.25, 0.5, 0.75, 1.0, 0.0] * 30, [i / 50 for i in range(50)] * 3])
def test_bootstrap_by_counts_has_the_law_of_resampling_indices(values):
    """Two levels (binomial), a few (multinomial), many (indices): all match plain index resampling."""
    import numpy as np

    agg._INTERVALS.clear()
    low, high = agg.bootstrap(values, 0, "law", n_boot=20000)
    kept = np.array(values, dtype=float)
    means = kept[np.random.default_rng(123).integers(0, kept.size, size=(20000, kept.size))].mean(axis=1)
    ref_low, ref_high = np.quantile(means, [0.025, 0.975])
    assert abs(low - ref_low) < 0.006 and abs(high - ref_high) < 0.006
    assert low < float(np.mean(kept)) < high


def test_bootstrap_of_equal_values_under_one_key_is_computed_once(monkeypatch):
    agg._INTERVALS.clear()
    computed = []
    interval = agg._interval
    monkeypatch.setattr(agg, "_interval", lambda *a: computed.append(a) or interval(*a))
    first = agg.bootstrap([0.2, 0.4, 0.4, 1.0], 0, "once")
    assert agg.bootstrap([1.0, 0.4, None, 0.2, 0.4], 0, "once") == first  # order and None do not matter
    assert len(computed) == 1
    assert agg.bootstrap([0.2, 0.4, 0.4, 0.9], 0, "once") != first
    assert agg.bootstrap([0.2, 0.4, 0.4, 1.0], 0, "other") != first   # another key: another stream
    assert len(computed) == 3
    # what is kept is bounded, the oldest going first; an interval made again is the same
    monkeypatch.setattr(agg, "KEPT_INTERVALS", 2)
    assert agg.bootstrap([0.1, 0.3], 0, "third") and len(agg._INTERVALS) == 2
    assert agg.bootstrap([0.2, 0.4, 0.4, 1.0], 0, "once") == first and len(computed) == 5


def test_grounded_accuracy_against_context_size_plot(frame):
    from benchmark.report import comparison, tradeoff

    s, costs = agg.summary_table(frame, n_boot=100), comparison.costs(frame)
    png = tradeoff.grounded_vs_tokens(s, costs)
    assert png.startswith(b"\x89PNG") and png == tradeoff.grounded_vs_tokens(s, costs)
    assert tradeoff.grounded_vs_tokens(s, costs.iloc[0:0]) is None


def test_unmeasured_section_counts_errors_reasons_and_claimless_answers_among_scored_samples():
    """Answerer errors by kind and listed in order, precision's reasons in first-seen order, faithfulness
    unmeasured (None and NaN alike), with a stage error's sample (not scored) counted nowhere; the same
    from the samples frame and from the coded columns."""
    import math

    from benchmark.report.rows import FRAME_COLUMNS, RowStore
    from benchmark.report.sections import unmeasured_section

    def row(i, answerer, guess, error=None, precision=1.0, reason=None, faith=1.0, stage=None):
        r = dict.fromkeys(FRAME_COLUMNS)
        r.update(question_id=f"q{i}", variant="o+d2+khop2", answerer=answerer, guess_class=guess,
                 correct=None if guess in ("error", None) else True, error=error, answer_error=error and f"{error} #{i}",
                 precision=precision, precision_reason=reason, faithfulness=faith, error_stage=stage)
        return tuple(r[c] for c in FRAME_COLUMNS)

    rows = [row(0, "llm", "error", "timeout", precision=None, reason="empty context"),
            row(1, "solver", "grounded", faith=None),
            row(2, "llm", "error", "refusal"),
            row(3, "solver", "misread", precision=math.nan, reason="empty context", faith=math.nan),
            row(4, "llm", "error", "timeout"),
            row(5, "keyword", "lucky_guess", precision=None, reason="no edges"),
            row(6, "keyword", None, "timeout", precision=None, reason="stage", faith=None, stage="select")]
    store = RowStore()
    for r in rows:
        store.add(r)
    for df in (agg.frame(rows), agg.frame(store)):
        kinds, listed, reasons, faith = unmeasured_section(df)
        assert kinds.caption.startswith("Answerer errors (3)")
        assert kinds.rows == [["llm", "refusal", "1"], ["llm", "timeout", "2"]]
        assert [r[2:4] for r in listed.rows] == [["q0", "timeout"], ["q2", "refusal"], ["q4", "timeout"]]
        assert listed.rows[0][4] == "timeout #0"
        assert reasons.rows == [["o+d2+khop2", "llm", "empty context", "1"],
                                ["o+d2+khop2", "solver", "empty context", "1"],
                                ["o+d2+khop2", "keyword", "no edges", "1"]]
        assert faith == "Faithfulness is unmeasured for 2 answers: they state no claims."
    clean = [row(0, "solver", "grounded")]
    assert unmeasured_section(agg.frame(clean)) == ["No answerer error: every answer was measured."]
