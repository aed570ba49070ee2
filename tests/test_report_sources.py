"""The report's finder table (twin confusions) and the text-path / image-path comparison."""
import pandas as pd

from benchmark.report import aggregate as agg


def _summary(rows):
    return pd.DataFrame(rows, columns=["variant", "answerer", "accuracy", "grounded_accuracy", "srr", "sufficiency"])


def test_source_comparison_puts_text_path_first_and_skips_single_variants():
    s = _summary([
        ["ocr-bm25+ocr+khop2", "solver", 0.7, 0.6, 0.72, 0.61],
        ["oracle+ocr+khop2", "solver", 0.8, 0.7, 0.89, 0.74],
        ["oracle+d2+khop2", "solver", 0.9, 0.8, 0.90, 0.81],
        ["oracle+d2+path", "solver", 0.5, 0.4, 0.53, 0.39],   # only one source/finder: not compared
    ])
    t = agg.source_comparison(s)
    assert list(t["variant"]) == ["oracle+d2+khop2", "oracle+ocr+khop2", "ocr-bm25+ocr+khop2"]
    assert set(t["selector"]) == {"khop2"}
    assert list(t["srr"]) == [0.90, 0.89, 0.72]


def test_source_comparison_empty_summary():
    assert len(agg.source_comparison(_summary([]))) == 0


def test_finding_counts_questions_sent_to_the_twin():
    df = pd.DataFrame({
        "variant": ["f+ocr+khop2"] * 4, "finder": ["f"] * 4,
        "question_id": ["a", "b", "c", "d"], "finder_rank": [1, 2, 2, None],
        "twin_of": [None, "d_b", "d_b", "d_a"], "found_diagram": ["d_x", "d_b", "d_c", "d_y"],
    })
    row = agg.finding(df).iloc[0]
    assert row["questions"] == 4 and row["not_ranked"] == 1
    assert row["twin_questions"] == 3
    assert row["twin_found"] == 1  # only question b was answered from its twin diagram
    assert row["at_1"] == 0.25
