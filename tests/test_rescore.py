"""Re-scoring reads samples.jsonl only and reproduces the run's numbers exactly."""
from __future__ import annotations

import json

import pytest

from benchmark.cli import main
from benchmark.rescore import rescore, resolve_run_dir
from benchmark.runner import run
from test_runner import samples_without_timings, tiny_spec


@pytest.fixture()
def finished(tmp_path):
    return run(tiny_spec(tmp_path, answerers=("solver", "keyword", "blind")), progress=False, quiet=True)


def _without_score_time(path):
    return samples_without_timings(path)


def test_rescore_reproduces_summary_and_metrics_from_wiped_metrics(finished):
    d = finished.run_dir
    summary = (d / "summary.csv").read_bytes()
    before = _without_score_time(d / "samples.jsonl")
    # wipe every stored metric: the re-score must recompute them, not copy them
    lines = [json.loads(line) for line in (d / "samples.jsonl").read_text().splitlines()]
    for r in lines:
        r["metrics"] = None
    (d / "samples.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    (d / "summary.csv").unlink()
    run_dir, records, card = rescore(d)
    assert run_dir == d and len(records) == len(lines)
    assert (d / "summary.csv").read_bytes() == summary
    assert _without_score_time(d / "samples.jsonl") == before
    assert len(card["rescored"]) == 1 and card["rescored"][0]["samples_changed"] == len(lines)
    # nothing changes on a second re-score: samples.jsonl is left as it is
    written = (d / "samples.jsonl").read_bytes()
    _, _, card = rescore(d)
    assert card["rescored"][-1]["samples_changed"] == 0 and (d / "samples.jsonl").read_bytes() == written


def test_rescore_never_calls_a_stage(finished, monkeypatch):
    from benchmark.stages import ANSWERERS, SELECTORS

    def refuse(*a, **k):
        raise AssertionError("a re-score must not create stages")

    monkeypatch.setattr(ANSWERERS, "create", refuse)
    monkeypatch.setattr(SELECTORS, "create", refuse)
    rescore(finished.run_dir)


def test_rescore_command_follows_latest_and_records_a_bad_line(finished, capsys):
    results = finished.run_dir.parent
    assert resolve_run_dir(results) == finished.run_dir
    assert main(["rescore", str(results)]) == 0
    assert "rescore: 36" in capsys.readouterr().out
    with (finished.run_dir / "samples.jsonl").open("a") as fh:
        fh.write("{not json\n")
    assert main(["rescore", str(finished.run_dir)]) == 2
    err = capsys.readouterr().err
    assert "samples.jsonl:37" in err


def test_report_command_rewrites_reports(finished, capsys):
    (finished.run_dir / "report.html").unlink()
    assert main(["report", str(finished.run_dir), "--bootstrap", "200"]) == 0
    assert (finished.run_dir / "report.html").exists()


def test_report_command_writes_the_runs_own_report_again(finished):
    """Made again from the run's files, the report is the one the run wrote: run.json keeps its keys
    sorted, so nothing the report lists may take its order from a mapping in the card."""
    d = finished.run_dir
    groups = json.loads((d / "run.json").read_text())["priors"]["groups"]
    assert groups != sorted(groups)   # the order the table keeps is not the sorted one
    before = {n: (d / n).read_bytes() for n in ("report.md", "summary.csv", "decisions.jsonl")}
    assert main(["report", str(d)]) == 0
    assert {n: (d / n).read_bytes() for n in before} == before


def test_parallel_rescore_equals_serial(finished):
    from benchmark.rescore import load_run, rescore_records

    records, graphs, _ = load_run(finished.run_dir)
    serial = rescore_records(records, graphs, workers=1)
    parallel = rescore_records(records, graphs, workers=2, min_parallel=0)
    assert [r.metrics for r in serial] == [r.metrics for r in parallel]
    assert [r.sample_id for r in parallel] == [r.sample_id for r in records]


def test_report_rows_carry_what_the_report_reads(finished):
    from benchmark.records import read_samples
    from benchmark.report.aggregate import frame
    from benchmark.report.rows import frame_row

    records = read_samples(finished.run_dir / "samples.jsonl")
    df = frame(records)
    assert frame([frame_row(r) for r in records]).equals(df)
    assert frame([r.to_json() for r in records]).equals(df)
    # the context's text travels only for the lucky guesses that list it
    lucky = df["guess_class"] == "lucky_guess"
    assert lucky.any() and df.loc[lucky, "context_text"].notna().all() and df.loc[~lucky, "context_text"].isna().all()


def test_rescore_file_parts_in_processes_equal_serial(finished):
    from benchmark.report.rows import frame_row
    from benchmark.rescore import load_run, rescore_records, score_file

    records, graphs, _ = load_run(finished.run_dir)
    path = finished.run_dir / "samples.jsonl"
    serial = score_file(path, graphs, workers=1)
    parallel = score_file(path, graphs, workers=2, min_parallel=0)  # 16 parts of a 36-line file
    assert len(serial.rows) == len(records) == 36
    assert list(serial.rows) == list(parallel.rows) and serial.changed == parallel.changed == []
    assert [s is None for s in serial.seconds] == [s is None for s in parallel.seconds]
    assert list(serial.rows) == [frame_row(r) for r in rescore_records(records, graphs)]


def test_rescore_counts_the_samples_with_a_stage_error(finished):
    """The card's ``sample_errors`` after a re-score counts the records that carry a stage error (read from the
    coded rows of every part), and the report lists them."""
    d = finished.run_dir
    lines = [json.loads(line) for line in (d / "samples.jsonl").read_text().splitlines()]
    for r in lines[3:5]:
        r.update(metrics=None, error={"stage": "select", "message": "no such node"})
    (d / "samples.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    for workers in (1, 2):
        _, _, card = rescore(d, workers=workers)
        assert card["sample_errors"] == 2
    assert "Samples with a stage error" in (d / "report.md").read_text()


def test_file_parts_cover_every_line_once(tmp_path):
    from benchmark.rescore import _lines_of, _spans

    path = tmp_path / "s.jsonl"
    lines = [b"{\"n\": %d}%s\n" % (i, b" " * (i * 37 % 300)) for i in range(50)]
    path.write_bytes(b"".join(lines[:20]) + b"\n  \n" + b"".join(lines[20:]))  # two blank lines inside
    for n in (1, 2, 3, 7, 16, 64, 500):
        spans = _spans(path, n)
        assert spans[0][0] == 0 and spans[-1][1] == path.stat().st_size
        assert all(a[1] == b[0] for a, b in zip(spans, spans[1:]))
        got = [line for span in spans for _, line in _lines_of(path, *span)]
        assert got == lines, n
    data = path.read_bytes()
    assert all(data[off:].startswith(line) for off, line in _lines_of(path))


def test_changed_metrics_and_a_bad_line_are_placed_by_file_position(finished):
    from benchmark.rescore import _rewrite, line_number, load_run, score_file

    path = finished.run_dir / "samples.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    rows[5]["metrics"], rows[30]["metrics"] = None, None
    stale = "".join(json.dumps(r) + "\n" + ("\n" if i == 10 else "") for i, r in enumerate(rows))
    _, graphs, _ = load_run(finished.run_dir)
    for workers in (1, 2):
        path.write_text(stale)
        scored = score_file(path, graphs, workers=workers, min_parallel=0)
        assert [line_number(path, off) for off in scored.changed] == [6, 32] and scored.bad is None
        assert sum(part is not None for _, part in scored.parts) == (1 if workers == 1 else 2)
        _rewrite(path, scored.parts)  # the parts put together: those two lines new, every other one as it was
        before, after = stale.split("\n"), path.read_text().split("\n")
        assert [i + 1 for i, (a, b) in enumerate(zip(before, after)) if a != b] == [6, 32] and len(after) == len(before)
        assert not list(finished.run_dir.glob(".samples.jsonl*.part-*")) and not (path.parent / "samples.jsonl.tmp").exists()
    path.write_text(stale)
    _, records, card = rescore(finished.run_dir)
    assert card["rescored"][-1]["samples_changed"] == 2
    after = path.read_text().split("\n")
    new = [json.loads(after[n - 1]) for n in (6, 32)]
    assert [r["sample_id"] for r in new] == [rows[5]["sample_id"], rows[30]["sample_id"]]
    assert all(r["metrics"] is not None and "score_s" in r["timings"] for r in new)
    assert after[11] == "" and not list(finished.run_dir.glob(".samples.jsonl.part-*"))
    with path.open("a") as fh:
        fh.write("\n[1, 2]\n")
    path.write_text(path.read_text().replace('"metrics": {', '"metrics": {"stale": 1, ', 3))  # parts to drop
    scored = score_file(path, graphs, workers=2, min_parallel=0)
    assert scored.bad is not None and line_number(path, scored.bad[0]) == 36 + 1 + 2  # after a blank line
    assert not list(finished.run_dir.glob(".samples.jsonl.part-*"))  # a bad line leaves no part behind


def test_rescore_returns_full_records_when_nothing_changed(finished):
    from benchmark.records import read_samples

    _, records, card = rescore(finished.run_dir)
    assert card["rescored"][-1]["samples_changed"] == 0
    stored = read_samples(finished.run_dir / "samples.jsonl")
    assert len(records) == len(stored)
    assert [(r.sample_id, r.metrics, r.error) for r in records] == [(r.sample_id, r.metrics, r.error) for r in stored]
    assert all("score_s" in r.timings for r in records if r.metrics is not None)


def test_records_that_share_stored_hashes_are_still_scored_as_they_stand(finished):
    """Scoring is shared between records with equal stored values; an edit that kept the old hashes is not missed."""
    from dataclasses import replace

    from benchmark.rescore import load_run, rescore_records

    records, graphs, _ = load_run(finished.run_dir)
    base = next(r for r in records if r.sample_id == "a-q1|oracle+d2+full|keyword" and r.context["edges"])
    same = replace(base, sample_id="copy", variant="copy+d2+full")
    other_answer = replace(base, sample_id="answer", answer=dict(base.answer, raw="yes" if base.answer["raw"] == "no" else "no"))
    other_context = replace(base, sample_id="context", retrieved={"nodes": [], "edges": []},
                            context=dict(base.context, nodes=[], edges=[], node_attrs={}, text=""))
    assert base.hashes == other_answer.hashes == other_context.hashes
    out = rescore_records([base, same, other_answer, other_context], graphs)
    alone = [rescore_records([r], graphs)[0].metrics for r in (base, other_answer, other_context)]
    assert [out[0].metrics, out[2].metrics, out[3].metrics] == alone
    assert out[1].metrics == out[0].metrics and out[1].metrics is not out[0].metrics
    assert out[2].metrics["correct"] != out[0].metrics["correct"]
    assert out[3].metrics["srr"] != out[0].metrics["srr"] and out[3].metrics["srr"] == 0.0


def test_rescore_rewrites_only_the_lines_whose_metrics_changed(finished):
    path = finished.run_dir / "samples.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    stale = json.loads(lines[7])
    stale["metrics"]["srr"] = 0.123456  # as an older metric would have left it
    lines[7] = json.dumps(stale, ensure_ascii=False, sort_keys=True) + "\n"
    path.write_text("".join(lines))
    _, records, card = rescore(finished.run_dir)
    assert card["rescored"][-1]["samples_changed"] == 1
    after = path.read_text().splitlines(keepends=True)
    assert [i for i, (a, b) in enumerate(zip(lines, after)) if a != b] == [7] and len(after) == len(lines)
    fixed = json.loads(after[7])
    assert fixed["metrics"]["srr"] != 0.123456 and fixed["metrics"] == records[7].metrics
