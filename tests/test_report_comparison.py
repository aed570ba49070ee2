"""Comparing retrievers: controls apart, the paired ranking, the sensitivity claim on candidates whose
accuracy can vary, and two runs compared question by question."""
from __future__ import annotations

import pandas as pd
import pytest

from benchmark.metrics.guess import GUESS_CLASSES
from benchmark.metrics.paired import cluster_bootstrap_ci, holm, mcnemar, paired_bootstrap
from benchmark.report import aggregate as agg
from benchmark.report import comparison
from benchmark.report.rows import FRAME_COLUMNS


def rows(variant, answerer, outcomes, srrs=None, answers=None, tokens=None):
    out = []
    for i, c in enumerate(outcomes):
        srr = (srrs or [float(c)] * len(outcomes))[i]
        out.append({**dict.fromkeys(FRAME_COLUMNS), "variant": variant, "answerer": answerer, "question_id": f"q{i}", "diagram_id": f"d{i // 2}",
                    "correct": bool(c), "sufficient": bool(c), "guess_class": "grounded" if c else "retrieval_miss",
                    "srr": srr, "node_srr": srr, "f1": srr, "precision": srr, "abstained": False, "error_stage": None,
                    "answer_value": (answers or outcomes)[i], "answer_raw": str((answers or outcomes)[i]),
                    "context_tokens": tokens if tokens is not None else 10 if variant.endswith("good") else 40,
                    "retrieval_s": 0.01})
    return out


def test_every_class_of_the_metrics_is_counted_by_the_report():
    assert agg.ALL_CLASSES == GUESS_CLASSES


def test_controls_are_apart_and_never_ranked():
    df = pd.DataFrame(rows("o+d2+good", "solver", [1] * 12) + rows("o+d2+bad", "solver", [1] * 4 + [0] * 8)
                      + rows("o+d2+oracle", "solver", [1] * 12) + rows("o+d2+full", "solver", [1] * 12))
    summary = agg.summary_table(df, n_boot=100)
    assert dict(zip(summary["variant"], summary["control"])) == {"o+d2+good": False, "o+d2+bad": False,
                                                                 "o+d2+oracle": True, "o+d2+full": True}
    t = comparison.ranking(df, n_boot=200)
    assert list(t["variant"]) == ["o+d2+good", "o+d2+bad"]
    bad = t.set_index("variant").loc["o+d2+bad"]
    # 8 discordant pairs, all for the best: McNemar p = 2 / 2^8; one comparison, so Holm changes nothing
    assert bad["accuracy_p"] == pytest.approx(2 / 256) and bad["accuracy_p_holm"] == pytest.approx(2 / 256)
    assert bad["accuracy_diff"] == pytest.approx(-8 / 12) and bad["accuracy_diff_high"] < 0
    assert bad["context_tokens"] == 40 and t.set_index("variant").loc["o+d2+good", "context_tokens"] == 10


def test_sensitivity_leaves_out_an_answerer_that_ignores_the_context_and_the_controls():
    # blind receives nothing under every candidate: its accuracy cannot vary; the controls would widen the spread
    df = pd.DataFrame(rows("o+d2+good", "solver", [1] * 12, srrs=[1.0] * 12)
                      + rows("o+d2+bad", "solver", [1] * 12, srrs=[0.2] * 12)
                      + rows("o+d2+good", "blind", [1, 0] * 6, srrs=[0.0] * 12, answers=["yes"] * 12, tokens=0)
                      + rows("o+d2+bad", "blind", [1, 0] * 6, srrs=[0.0] * 12, answers=["yes"] * 12, tokens=0)
                      + rows("o+d2+none", "solver", [0] * 12, srrs=[0.0] * 12))
    c = comparison.sensitivity(df, n_boot=500)
    assert [e["answerer"] for e in c["excluded"]] == ["blind"]
    (solver,) = c["per_answerer"]
    assert solver["candidates"] == 2 and solver["spread_accuracy"] == 0.0
    # accuracy cannot tell the two apart (same answers), SRR can (1.0 against 0.2 on every question)
    assert solver["pairs_accuracy_differs"] == 0 and solver["pairs_srr_differs"] == 1
    assert c["verdict"] == "holds"


def test_sensitivity_reports_what_the_data_shows_when_srr_is_not_more_sensitive():
    df = pd.DataFrame(rows("o+d2+a", "solver", [1] * 12, srrs=[0.5] * 12)
                      + rows("o+d2+b", "solver", [0] * 12, srrs=[0.5] * 12, answers=[2] * 12))
    c = comparison.sensitivity(df, n_boot=300)
    assert c["per_answerer"][0]["pairs_accuracy_differs"] == 1 and c["per_answerer"][0]["pairs_srr_differs"] == 0
    assert c["verdict"] == "does not hold"


def test_compare_runs_pairs_questions_across_runs():
    a = pd.DataFrame(rows("o+d2+x", "llm", [1] * 10 + [0] * 2))
    b = pd.DataFrame(rows("o+d2+x", "llm", [0] * 12)[:11])   # one question missing from B
    t = comparison.compare_runs(a, b, n_boot=200)
    r = t.iloc[0]
    assert r["pairs"] == 11 and r["only_a"] == 1 and r["only_b"] == 0
    assert r["accuracy_a"] == pytest.approx(10 / 11) and r["accuracy_b"] == 0.0
    assert r["accuracy_p"] == pytest.approx(2 / 2 ** 10)


def test_paired_statistics_by_hand():
    m = mcnemar([1, 1, 0, None], [0, 1, 1, 1])
    assert (m.n, m.missing, m.a_only, m.b_only, m.p) == (3, 1, 1, 1, 1.0)
    same = paired_bootstrap([0.5, 0.5], [0.5, 0.5], seed=0)
    assert (same.diff, same.low, same.high, same.p) == (0.0, 0.0, 0.0, 1.0)
    # resampling whole clusters widens the interval when clusters move together
    xs = [1.0] * 10 + [0.0] * 10
    narrow = paired_bootstrap(xs, [0.5] * 20, seed=0, n_boot=2000)
    wide = paired_bootstrap(xs, [0.5] * 20, seed=0, n_boot=2000, clusters=["a"] * 10 + ["b"] * 10)
    assert wide.high - wide.low > narrow.high - narrow.low
    assert paired_bootstrap(xs, [0.5] * 20, seed=3, key="k") == paired_bootstrap(xs, [0.5] * 20, seed=3, key="k")
    assert cluster_bootstrap_ci([1, 1, 1], ["a", "b", "c"], seed=0) == (1.0, 1.0)
    assert holm([0.04, 0.01]) == [0.04, 0.02]
    with pytest.raises(ValueError):
        paired_bootstrap([1, 0], [1], seed=0)


def test_resamples_are_drawn_a_block_at_a_time_as_one_draw_would_draw_them(monkeypatch):
    """A bootstrap's draws are made a block of :data:`RESAMPLE_BLOCK` values at a time (a (resamples x clusters)
    matrix grows with the diagrams of a run), and are the draws of one (resamples x n) draw, in order."""
    import numpy as np

    from benchmark.metrics import paired

    rnd = np.random.default_rng(5)
    values = rnd.choice([0.0, 0.5, 1.0], size=300)
    clusters = [f"d{int(c)}" for c in rnd.integers(0, 40, size=300)]
    monkeypatch.setattr(paired, "RESAMPLE_BLOCK", 200)
    drawn_sizes = []

    class Recording:
        def __init__(self, rng):
            self.rng = rng

        def multinomial(self, n, pvals, size):
            drawn_sizes.append(size * len(pvals))
            return self.rng.multinomial(n, pvals, size=size)

        def integers(self, low, high, size):
            drawn_sizes.append(size[0] * size[1])
            return self.rng.integers(low, high, size=size)

    # one draw of every resample at once, as the statistics are defined
    rng = np.random.default_rng([1, 2])
    ids = {c: i for i, c in enumerate(sorted(set(clusters)))}
    which = np.array([ids[c] for c in clusters])
    drawn = rng.multinomial(len(ids), np.full(len(ids), 1 / len(ids)), size=1000)
    by_cluster = (drawn @ np.bincount(which, weights=values, minlength=len(ids))) / \
        (drawn @ np.bincount(which, minlength=len(ids)).astype(float))
    by_value = values[rng.integers(0, values.size, size=(1000, values.size))].mean(axis=1)

    rng = Recording(np.random.default_rng([1, 2]))
    assert np.array_equal(paired._resampled_means(values, clusters, rng, 1000), by_cluster)
    assert 0 < max(drawn_sizes) <= 200 and len(drawn_sizes) == 200   # 5 resamples of 40 clusters a block
    drawn_sizes.clear()
    assert np.array_equal(paired._resampled_means(values, None, rng, 1000), by_value)
    assert max(drawn_sizes) == 300 and len(drawn_sizes) == 1000      # a value count over the block: one a block


def test_compare_command_table_and_json(tmp_path, capsys):
    """Two real runs of the tiny dataset; B's stored answers of one variant are made wrong (as a worse model's
    would be): compare reports the paired difference as a table and as JSON."""
    import json

    from benchmark.cli import main
    from benchmark.runner import run
    from test_runner import tiny_spec

    a = run(tiny_spec(tmp_path, variants=("oracle+d2+full", "oracle+d2+khop1"), answerers=("solver",)),
            progress=False, quiet=True)
    b = run(tiny_spec(tmp_path, variants=("oracle+d2+full", "oracle+d2+khop1"), answerers=("solver",), run_id="r2"),
            progress=False, quiet=True)
    path = b.run_dir / "samples.jsonl"
    lines = []
    for line in path.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        if rec["variant"] == "oracle+d2+full":
            rec["metrics"]["correct"] = False
            rec["metrics"]["guess_class"] = "misread"
        lines.append(json.dumps(rec))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out_json = tmp_path / "cmp.json"
    assert main(["compare", str(a.run_dir), str(b.run_dir), "--json", str(out_json), "--bootstrap", "200"]) == 0
    table = capsys.readouterr().out
    assert "| oracle+d2+full | solver | 4 |" in table and "1.00/0.00 +1.00" in table
    doc = json.loads(out_json.read_text())
    rows = {r["variant"]: r for r in doc["rows"]}
    assert rows["oracle+d2+full"]["accuracy_diff"] == 1.0 and rows["oracle+d2+full"]["accuracy_p"] == 0.125
    assert rows["oracle+d2+khop1"]["accuracy_diff"] == 0.0 and doc["tests"]["srr"] == "paired cluster bootstrap"
    assert main(["compare", str(a.run_dir), str(b.run_dir), "--bootstrap", "0"]) == 2


def test_costs_state_context_size_against_the_whole_diagram():
    from benchmark.report.sections import cost_table

    df = pd.DataFrame(rows("o+d2+good", "solver", [1] * 6) + rows("o+d2+full", "solver", [1] * 6)
                      + rows("o+d2+bad", "solver", [1] * 6, tokens=None))
    df.loc[df["variant"].eq("o+d2+good") & df["question_id"].eq("q0"), "context_tokens"] = 30
    c = comparison.costs(df).set_index("variant")
    # good: five questions at 10 tokens, one at 30, each against a whole diagram of 40 tokens
    assert c.loc["o+d2+good", "context_tokens_max"] == 30 and c.loc["o+d2+good", "full_tokens"] == 40
    assert c.loc["o+d2+good", "context_share"] == pytest.approx((5 * 10 / 40 + 30 / 40) / 6)
    assert c.loc["o+d2+full", "context_share"] == 1.0
    table = cost_table(comparison.costs(df))
    assert "share of the whole diagram" in table.headers
    assert [(r[0], r[3], r[4], r[5]) for r in table.rows] == [("o+d2+good", "30", "40.0", "33 %"),
                                                               ("o+d2+full", "40", "40.0", "100 %"),
                                                               ("o+d2+bad", "40", "40.0", "100 %")]
    # no `full` variant in the run: nothing to compare with, unmeasured rather than made up
    alone = comparison.costs(pd.DataFrame(rows("o+d2+good", "solver", [1] * 4))).iloc[0]
    assert alone["context_share"] is None and alone["full_tokens"] is None and alone["context_tokens_max"] == 10
