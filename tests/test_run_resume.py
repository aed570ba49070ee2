"""Runs that survive a kill and can be resumed, refuse to clobber, lock their directory and fail loudly.

The crash tests run ``diagqa run`` as a real subprocess whose ``llm`` answerer asks a real local HTTP
server (tests/llm_server.py) that takes a moment per reply, so the run can be killed half-way.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from benchmark.errors import DiagQAError, InputError
from benchmark.rundir import RunLock, check_run_id, scan_samples, write_atomic
from benchmark.records import loads_line
from benchmark.runner import SAMPLES, resume, run
from benchmark.spec import RunSpec
from tests.llm_server import LLMServer
from tests.test_runner import make_dataset, samples_without_timings, tiny_spec

ROOT = Path(__file__).resolve().parents[1]
GRID = ("oracle+d2+khop2", "oracle+d2+none")
LIMIT = 40  # questions of the bundled dataset, from at least three diagrams (workers=2 leave one to interrupt)
TOTAL = LIMIT * len(GRID) * 2  # x 2 variants x 2 answerers


def _llm_config(tmp: Path, base_url: str, **llm) -> Path:
    options = {"llm": dict({"base_url": base_url, "model": "test-model", "api_key_env": "DIAGQA_TEST_KEY",
                            "cache_path": None, "max_attempts": 1, "backoff_s": 0}, **llm)}
    path = tmp / "llm.yaml"
    path.write_text(yaml.safe_dump({"options": options, "variants": list(GRID), "answerers": ["llm", "solver"],
                                    "limit": LIMIT}), encoding="utf-8")
    return path


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "benchmark.cli", "run", *args]


def _env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(ROOT), DIAGQA_TEST_KEY="k")


def _start(args: list[str]) -> subprocess.Popen:
    """The run as a terminal starts it: its own process group (a signal reaches the workers too), with
    Ctrl-C's SIGINT handled, even when this process ignores it (a background job, as a CI runner may start
    the tests: an ignored signal stays ignored across exec, and the run would not see the Ctrl-C)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)   # handled here: the default after exec
    try:
        return subprocess.Popen(args, cwd=ROOT, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)
    finally:
        signal.signal(signal.SIGINT, previous)


def _lines(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


def _wait_for_lines(proc: subprocess.Popen, path: Path, at_least: int, timeout: float = 120) -> int:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        n = _lines(path)
        if n >= at_least:
            return n
        if proc.poll() is not None:
            raise AssertionError(f"the run ended before writing {at_least} samples:\n{proc.stderr.read()}")
        time.sleep(0.02)
    raise AssertionError("no samples appeared in time")


def _slow_model(request) -> str:
    return json.dumps({"answer": "yes", "evidence": [], "explanation": ""})


def _sample_ids(path: Path) -> list[str]:
    return [json.loads(line)["sample_id"] for line in path.read_text(encoding="utf-8").splitlines()]


def _kept_ids(path: Path) -> list[str]:
    """The samples a killed run kept. SIGKILL can land while a batch is being written (between two of the
    writes a large batch takes), leaving the last line cut off: a resume drops that line and makes its
    sample again (a whole record that lost only its newline is kept)."""
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    if lines and not text.endswith("\n"):
        try:
            json.loads(lines[-1])
        except ValueError:
            lines.pop()
    return [json.loads(line)["sample_id"] for line in lines]


#: summary columns that measure the run rather than the answers (call latency, cache hits)
RUN_COLUMNS = ("latency_p50", "latency_p95", "cache_hits")


def _summary(path: Path) -> list[dict]:
    import csv

    with path.open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert rows and all(c in rows[0] for c in RUN_COLUMNS)
    return [{k: v for k, v in r.items() if k not in RUN_COLUMNS} for r in rows]


def _comparable(path: Path) -> dict[str, dict]:
    out = {}
    for d in samples_without_timings(path):
        if d.get("answer"):
            d["answer"].pop("meta", None)
            # how long a call took and whether it came from the cache are the run's, not the answer's
            for k in ("latency_s", "cache_hit"):
                (d["answer"].get("usage") or {}).pop(k, None)
        out[d["sample_id"]] = d
    return out


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_killed_run_keeps_its_samples_and_resume_adds_exactly_the_missing_ones(tmp_path, workers):
    with LLMServer(responder=_slow_model, script=[{"delay": 0.12, "content": _slow_model(None)}] * 200) as server:
        config = _llm_config(tmp_path, server.base_url)
        out = tmp_path / "results"
        proc = _start(_cli("--config", str(config), "--workers", workers, "--out", str(out), "--run-id", "k",
                           "--no-progress"))
        samples = out / "k" / SAMPLES
        _wait_for_lines(proc, samples, 10)
        os.killpg(proc.pid, signal.SIGKILL)  # the run and its workers, with no chance to clean up
        proc.wait(timeout=30)
        proc.stdout.close(), proc.stderr.close()
        kept = _kept_ids(samples)
        assert 10 <= len(kept) < TOTAL, "the kill must land half-way"
        card = json.loads((out / "k" / "run.json").read_text())
        assert card["status"] == "running" and card["samples_planned"] == TOTAL
        assert not (out / "LATEST").exists()
        calls_before = server.calls

        again = subprocess.run(_cli("--resume", "k", "--out", str(out), "--workers", workers, "--no-progress"),
                               cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=300)
        assert again.returncode == 0, again.stderr
        assert "took over the lock left by process" in again.stderr
        assert f"{len(kept)} of {TOTAL} samples done, {TOTAL - len(kept)} to run" in again.stderr
        ids = _sample_ids(samples)
        assert len(ids) == len(set(ids)) == TOTAL  # nothing lost, nothing twice
        assert ids[:len(kept)] == kept           # what the killed run wrote is kept as it was
        # only the missing llm samples asked the server again
        assert server.calls - calls_before == sum(1 for i in ids[len(kept):] if i.endswith("|llm"))

        reference = run(RunSpec(data_dir=ROOT, variants=GRID, answerers=("llm", "solver"), out_dir=tmp_path / "ref",
                                run_id="ref", workers=1, limit=LIMIT,
                                options=yaml.safe_load(config.read_text())["options"]), progress=False, quiet=True)
    assert _comparable(samples) == _comparable(reference.run_dir / SAMPLES)
    card = json.loads((out / "k" / "run.json").read_text())
    assert card["status"] == "complete" and card["samples"] == TOTAL and card["resumes"][0]["samples_before"] == len(kept)
    assert (out / "LATEST").read_text().strip() == "k" and (out / "k" / "report.html").is_file()
    assert _summary(out / "k" / "summary.csv") == _summary(reference.run_dir / "summary.csv")
    assert not list((out / "k").glob(".*")), "no lock or scratch file is left behind"


def test_ctrl_c_prints_one_line_and_the_run_resumes(tmp_path):
    with LLMServer(responder=_slow_model, script=[{"delay": 0.12, "content": _slow_model(None)}] * 200) as server:
        config = _llm_config(tmp_path, server.base_url)
        out = tmp_path / "results"
        proc = _start(_cli("--config", str(config), "--workers", "2", "--out", str(out), "--run-id", "c",
                           "--no-progress"))
        _wait_for_lines(proc, out / "c" / SAMPLES, 10)
        os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C in a terminal does: the whole foreground group
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 130, err
        lines = [line for line in err.splitlines() if line.strip()]
        assert len(lines) == 1, err
        assert lines[0].startswith("diagqa run: interrupted: ") and "diagqa run --resume c" in lines[0]
        assert "Traceback" not in err and "leaked" not in err and "KeyboardInterrupt" not in err
        card = json.loads((out / "c" / "run.json").read_text())
        assert card["status"] == "interrupted" and card["samples"] == _lines(out / "c" / SAMPLES) < TOTAL
        result = resume(out / "c", progress=False, quiet=True)
    ids = _sample_ids(out / "c" / SAMPLES)
    assert len(ids) == len(set(ids)) == TOTAL and result.card["status"] == "complete"


def test_rerunning_a_run_id_is_refused_unless_overwrite(tmp_path):
    out = tmp_path / "results"
    args = ["--data", str(make_dataset(tmp_path / "data")), "--variants", "oracle+d2+full", "--answerers", "solver",
            "--workers", "1", "--out", str(out), "--run-id", "r", "--no-progress"]
    first = subprocess.run(_cli(*args), cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=120)
    assert first.returncode == 0, first.stderr
    before = {p.name: p.read_bytes() for p in (out / "r").iterdir() if p.is_file()}
    again = subprocess.run(_cli(*args[:3], "oracle+d2+none", *args[4:]), cwd=ROOT, env=_env(), capture_output=True,
                           text=True, timeout=120)
    assert again.returncode == 2
    assert "already holds a run (4 samples, complete)" in again.stderr and "--overwrite" in again.stderr
    assert {p.name: p.read_bytes() for p in (out / "r").iterdir() if p.is_file()} == before  # not touched
    forced = subprocess.run(_cli(*args[:3], "oracle+d2+none", *args[4:], "--overwrite"), cwd=ROOT, env=_env(),
                            capture_output=True, text=True, timeout=120)
    assert forced.returncode == 0, forced.stderr
    assert {json.loads(x)["variant"] for x in (out / "r" / SAMPLES).read_text().splitlines()} == {"oracle+d2+none"}


@pytest.mark.parametrize("run_id", ["../x", "/tmp/x", "a/b", "..", ".hidden", "LATEST", "latest", "a\\b", " x"])
def test_run_ids_that_leave_the_results_directory_are_refused(tmp_path, run_id):
    with pytest.raises(DiagQAError, match="run id"):
        check_run_id(run_id)
    with pytest.raises(DiagQAError, match="run id"):
        run(tiny_spec(tmp_path, run_id=run_id, out_dir=tmp_path / "out" / "results"), progress=False, quiet=True)
    assert [p.name for p in tmp_path.iterdir()] == ["data"]  # nothing was written anywhere


def test_path_escape_is_refused_by_the_command(tmp_path):
    proc = subprocess.run(_cli("--data", str(make_dataset(tmp_path / "data")), "--variants", "oracle+d2+full",
                               "--answerers", "solver", "--out", str(tmp_path / "results"), "--run-id", "../x"),
                          cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "run id '../x' is not a plain directory name" in proc.stderr
    assert not (tmp_path / "x").exists()


def lock_holder(run_dir: Path) -> subprocess.Popen:
    """Another process holding ``run_dir``'s lock until its stdin closes (returned once it holds it)."""
    holder = subprocess.Popen([sys.executable, "-c", "import sys; from pathlib import Path; "
                               "from benchmark.rundir import RunLock; "
                               f"lock = RunLock(Path({str(run_dir)!r})).acquire(); print('locked', flush=True); "
                               "sys.stdin.read()"],
                              cwd=ROOT, env=_env(), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "locked"
    return holder


def test_a_live_lock_refuses_a_second_writer_and_a_dead_ones_is_taken_over(tmp_path):
    run_dir = tmp_path / "results" / "r1"
    run_dir.mkdir(parents=True)
    holder = lock_holder(run_dir)
    try:
        with pytest.raises(DiagQAError, match=f"being written by process {holder.pid}"):
            run(tiny_spec(tmp_path), progress=False, quiet=True)
        assert not (run_dir / SAMPLES).exists()
    finally:
        holder.communicate("", timeout=30)
    # the holder is gone but its lock file (with its PID) is still there
    assert (run_dir / ".lock").read_text().split()[0] == str(holder.pid)
    lock = RunLock(run_dir).acquire()
    assert lock.stale_pid == holder.pid and (run_dir / ".lock").read_text().split()[0] == str(os.getpid())
    lock.release()
    assert not (run_dir / ".lock").exists()
    assert run(tiny_spec(tmp_path), progress=False, quiet=True).card["status"] == "complete"


def test_a_run_with_no_samples_fails_and_leaves_latest_alone(tmp_path):
    data = make_dataset(tmp_path / "data")
    out = tmp_path / "results"
    base = ["--data", str(data), "--variants", "oracle+d2+full", "--workers", "1", "--out", str(out), "--no-progress"]
    ok = subprocess.run(_cli(*base, "--answerers", "solver", "--run-id", "good"), cwd=ROOT, env=_env(),
                        capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0, ok.stderr
    env = {k: v for k, v in _env().items() if not k.startswith("DIAGQA_LLM")}
    none = subprocess.run(_cli(*base, "--answerers", "llm", "--run-id", "nomodel"), cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert none.returncode == 1
    assert "no model configured" in none.stderr and "the run produced no samples" in none.stderr
    assert (out / "LATEST").read_text().strip() == "good" and os.readlink(out / "latest") == "good"
    assert json.loads((out / "nomodel" / "run.json").read_text())["status"] == "failed"


def test_a_run_whose_every_llm_call_failed_exits_non_zero(tmp_path):
    data = make_dataset(tmp_path / "data")
    out = tmp_path / "results"
    with LLMServer(responder=_slow_model, script=[{"status": 500}] * 50) as server:
        config = tmp_path / "down.yaml"
        config.write_text(yaml.safe_dump({"options": {"llm": {"base_url": server.base_url, "model": "m",
                                                              "cache_path": None, "max_attempts": 1,
                                                              "backoff_s": 0}}}), encoding="utf-8")
        proc = subprocess.run(_cli("--config", str(config), "--data", str(data), "--variants", "oracle+d2+full",
                                   "--answerers", "llm,solver", "--workers", "1", "--out", str(out), "--run-id", "down",
                                   "--no-progress"), cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=120)
        assert server.calls == 4
    assert proc.returncode == 1, proc.stderr
    assert "every sample of answerer llm failed (4 of 4)" in proc.stderr and "LATEST not moved" in proc.stderr
    assert not (out / "LATEST").exists()
    card = json.loads((out / "down" / "run.json").read_text())
    assert card["status"] == "failed" and card["answerer_failures"] == {"llm": {"samples": 4, "failed": 4},
                                                                       "solver": {"samples": 4, "failed": 0}}


def _answer_failures(path: Path) -> dict[str, tuple[int, int, dict[str, int]]]:
    """Per answerer, from the samples file: samples that reached it, samples it failed on, failures by kind."""
    from benchmark.runner import NOT_ASKED, answer_failure

    out: dict[str, list] = {}
    for line in path.open(encoding="utf-8"):
        rec = json.loads(line)
        kind = answer_failure(rec)
        if kind != NOT_ASKED:
            n = out.setdefault(rec["answerer"], [0, 0, {}])
            n[0] += 1
            if kind is not None:
                n[1] += 1
                n[2][kind] = n[2].get(kind, 0) + 1
    return {a: (n, f, dict(sorted(k.items()))) for a, (n, f, k) in sorted(out.items())}


def test_the_answerers_failures_are_counted_as_the_samples_are_written_and_as_a_resume_reads_them_back(tmp_path):
    """``diagqa run`` tells of an answerer that failed too often from the counts the run kept as it wrote its
    samples (it read the whole samples file again after the run before: 4.7 GB at 100 times the bundled data);
    a resumed run counts the samples it read back as well as those it made."""
    data = make_dataset(tmp_path / "data")
    with LLMServer(responder=_slow_model, script=[{"status": 500}] * 2) as server:
        options = {"llm": {"base_url": server.base_url, "model": "m", "cache_path": None, "max_attempts": 1,
                           "backoff_s": 0}}
        spec = RunSpec(data_dir=data, variants=("oracle+d2+full",), answerers=("llm", "solver"),
                       out_dir=tmp_path / "results", run_id="f", workers=1, options=options)
        first = run(spec, progress=False, quiet=True)
        path = first.run_dir / SAMPLES
        assert first.answer_failures == _answer_failures(path)
        assert first.answer_failures["llm"] == (4, 2, {"http_error": 2}) and first.answer_failures["solver"][1] == 0
        lines = path.read_bytes().splitlines(keepends=True)
        path.write_bytes(b"".join(lines[:-3]))   # three samples lost: the resume reads the others back
        again = resume(first.run_dir, progress=False, quiet=True)
    assert again.card["resumes"][0]["samples_before"] == len(lines) - 3
    assert again.answer_failures == _answer_failures(path) == first.answer_failures


def test_a_cut_off_last_line_is_dropped_and_that_sample_is_run_again(tmp_path):
    first = run(tiny_spec(tmp_path), progress=False, quiet=True)
    path = first.run_dir / SAMPLES
    whole = path.read_bytes()
    lines = whole.splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:-3]) + lines[-3][:40])  # two samples lost, the third cut mid-line
    assert [n for n, _ in scan_samples(path, loads_line)] == list(range(1, len(lines) - 2))
    again = resume(first.run_dir, progress=False, quiet=True)
    assert again.card["resumes"][0]["samples_before"] == len(lines) - 3
    assert samples_without_timings(path) == samples_without_timings_bytes(whole, tmp_path)


def test_resume_shows_the_samples_already_made_read_back_among_the_setup_bars(tmp_path, capsys):
    """A resumed run reads its samples back before planning the rest: a bar counts them against the samples
    planned (left at the share made), between the checking's bar and the planning's."""
    from tests.test_runner import _bars_left

    first = run(tiny_spec(tmp_path), progress=False, quiet=True)
    path = first.run_dir / SAMPLES
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:7]))
    resume(first.run_dir, progress=True, quiet=False)
    bars = [b.split(":")[0] + " " + b.split()[-1] for b in _bars_left(capsys.readouterr().err)]
    assert bars == ["loading annotations 2/2", "measuring counter-prior 4/4", "checking questions 2/2",
                    f"samples already made 7/{len(lines)}", "ranking and planning 2/2", "prior baselines 4/4",
                    f"diagqa run r1 {len(lines)}/{len(lines)}"], bars


def samples_without_timings_bytes(data: bytes, tmp: Path) -> list[dict]:
    p = tmp / "copy.jsonl"
    p.write_bytes(data)
    return samples_without_timings(p)


def test_a_bad_line_in_the_middle_or_a_duplicate_is_an_error_naming_the_line(tmp_path):
    first = run(tiny_spec(tmp_path), progress=False, quiet=True)
    path = first.run_dir / SAMPLES
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:2] + [lines[0]] + lines[3:]))
    with pytest.raises(InputError, match=r"samples.jsonl:3: .* is in the file twice"):
        resume(first.run_dir, progress=False, quiet=True)
    path.write_text("".join(lines[:4] + ["{not json\n"] + lines[5:]))
    with pytest.raises(InputError, match=r"samples.jsonl:5: not a sample record"):
        resume(first.run_dir, progress=False, quiet=True)


def test_a_repeated_sample_id_is_found_from_hashes_and_checked_on_the_ids(tmp_path):
    """scan_samples keeps a hash of each line's sample id, not the ids: a repeated id is reported at the
    first line it is seen again on, once every line is read (the file is then not repaired), and two ids
    whose hashes are equal are no repeat unless the ids are."""
    from array import array

    from benchmark.rundir import _no_repeated_id

    path = tmp_path / "samples.jsonl"
    unique = "".join(json.dumps({"sample_id": f"s{i}"}) + "\n" for i in range(50))
    path.write_text(unique + '{"sample_id": "s7"}\n{"sample_id": "s3"}\n{"sample_id": "s9')   # last line cut off
    size, read = path.stat().st_size, []
    with pytest.raises(InputError, match=r"samples.jsonl:51: sample s7 is in the file twice"):
        for line, rec in scan_samples(path, loads_line, repair=True):
            read.append(line)
    assert read == list(range(1, 53)) and path.stat().st_size == size
    path.write_text(unique)
    assert [rec["sample_id"] for _, rec in scan_samples(path, loads_line)] == [f"s{i}" for i in range(50)]
    _no_repeated_id(path, array("q", [5] * 50), loads_line)   # every hash the same, no id twice: no error
    path.write_text(unique + '{"sample_id": "s0"}\n')
    with pytest.raises(InputError, match=r"samples.jsonl:51: sample s0 is in the file twice"):
        _no_repeated_id(path, array("q", [5] * 51), loads_line)
    path.write_text(unique + '{"sample_id": ["s0"]}\n' + unique)   # an id that is no string (nor hashable)
    with pytest.raises(InputError, match=r"samples.jsonl:51: not a sample record"):
        list(scan_samples(path, loads_line))


def test_resume_refuses_a_changed_dataset(tmp_path):
    first = run(tiny_spec(tmp_path), progress=False, quiet=True)
    question = tmp_path / "data" / "annotations" / "auth_b.yaml"
    question.write_text(question.read_text().replace("How many nodes", "How many boxes"))
    with pytest.raises(DiagQAError, match="changed since run r1 started"):
        resume(first.run_dir, progress=False, quiet=True)


def test_a_report_that_fails_half_way_leaves_the_old_files_whole(tmp_path, monkeypatch):
    import benchmark.report as report

    first = run(tiny_spec(tmp_path), progress=False, quiet=True)
    before = {n: (first.run_dir / n).read_bytes() for n in ("summary.csv", "report.md", "report.html", "run.json")}
    real = report.write_summary

    def summary_then_crash(path, summary):
        real(path, summary)
        raise RuntimeError("disk full")

    monkeypatch.setattr(report, "write_summary", summary_then_crash)
    with pytest.raises(RuntimeError, match="disk full"):
        resume(first.run_dir, progress=False, quiet=True)
    assert {n: (first.run_dir / n).read_bytes() for n in before if n != "run.json"} == \
        {n: b for n, b in before.items() if n != "run.json"}
    assert not [p for p in first.run_dir.iterdir() if p.name.startswith(".")]


def test_write_atomic_replaces_whole_files(tmp_path):
    target = tmp_path / "run.json"
    write_atomic(target, "old\n")
    write_atomic(target, "new\n")
    assert target.read_text() == "new\n" and [p.name for p in tmp_path.iterdir()] == ["run.json"]
    write_atomic(target, iter(["é", b"\n", "2"]))   # pieces, text or bytes, one after another
    assert target.read_text(encoding="utf-8") == "é\n2" and [p.name for p in tmp_path.iterdir()] == ["run.json"]


def test_write_atomic_keeps_the_old_file_when_its_pieces_fail(tmp_path):
    target = tmp_path / "graphs.json"
    write_atomic(target, "old")

    def pieces():
        yield "{"
        raise RuntimeError("a graph that cannot be written")

    with pytest.raises(RuntimeError, match="cannot be written"):
        write_atomic(target, pieces())
    assert target.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["graphs.json"]


def test_gold_graphs_are_written_a_diagram_at_a_time():
    """graphs.json is written diagram by diagram, as one json.dumps of them all wrote it, without keeping the
    gold graphs of diagrams this process did not score with (nor leaving them to the cycle collector)."""
    import gc

    import networkx as nx

    from benchmark.dataset import load_dataset
    from benchmark.records import graph_to_json
    from benchmark.runner import _Work

    ds, _ = load_dataset(Path(__file__).resolve().parents[1], strict=False)
    ids = ["arch_ru_marketplace", "arch_api_gateway"]   # Cyrillic labels, written as they are
    work = _Work(ds, {}, [], [], None, {})
    scored = work.gold("arch_api_gateway")
    gc.collect()
    gc.disable()   # what the pass leaves for the cycle collector is counted, before any collection frees it
    try:
        before = sum(isinstance(o, nx.MultiDiGraph) for o in gc.get_objects())
        text = "".join(work.gold_json_pieces(ids))
        left = sum(isinstance(o, nx.MultiDiGraph) for o in gc.get_objects()) - before
    finally:
        gc.enable()
    assert left == 0, "the graphs made to be written are freed as they are let go"
    whole = {did: graph_to_json(ds.diagrams[did].graph) for did in ids}
    assert text == json.dumps(whole, ensure_ascii=False, sort_keys=True) and "Уровни клиента" in text
    assert list(work.gold_graphs) == ["arch_api_gateway"] and work.gold_graphs["arch_api_gateway"] is scored
    assert "".join(work.gold_json_pieces([])) == json.dumps({})


def test_doctests_of_the_run_directory_module():
    import doctest

    import benchmark.rundir

    result = doctest.testmod(benchmark.rundir)
    assert result.attempted >= 3 and result.failed == 0


def test_bootstrap_by_blocks_draws_the_same_resamples_as_one_block(monkeypatch):
    """The report's intervals of many-valued metrics resample in blocks (flat memory); same numbers."""
    import numpy as np

    import benchmark.report.aggregate as agg

    values = np.sort(np.random.default_rng(3).random(4999)).tobytes()  # > COUNTED_VALUES levels: by index
    monkeypatch.setattr(agg, "RESAMPLE_BLOCK", 10**9)  # every resample in one (1000, 4999) draw
    whole = agg._interval(values, 0, "g|srr", 1000, 0.95)
    monkeypatch.setattr(agg, "RESAMPLE_BLOCK", 4999 * 7 + 3)  # blocks of 7 resamples, the last one shorter
    assert agg._interval(values, 0, "g|srr", 1000, 0.95) == whole
    monkeypatch.setattr(agg, "RESAMPLE_BLOCK", 1)
    assert agg._interval(values, 0, "g|srr", 1000, 0.95) == whole


def test_report_rows_share_repeated_values():
    from benchmark.runner import RowStore

    rows = RowStore()
    rows.add(("s1", "v" + "x" * 20, 0.25, None, [1]))
    rows.add(("s2", "v" + "x" * 20, 0.25, None, [1]))
    assert rows[0] == ("s1", "v" + "x" * 20, 0.25, None, [1]) and rows[1][1] is rows[0][1] and rows[1][2] is rows[0][2]


def test_rescore_refuses_a_locked_run_and_writes_nothing(tmp_path):
    from benchmark.rescore import rescore

    done = run(tiny_spec(tmp_path), progress=False, quiet=True)
    run_dir = done.run_dir
    before = {p.name: p.read_bytes() for p in run_dir.iterdir() if p.is_file()}
    holder = lock_holder(run_dir)
    try:
        with pytest.raises(DiagQAError, match=f"being written by process {holder.pid}"):
            rescore(run_dir, workers=1)
        after = {p.name: p.read_bytes() for p in run_dir.iterdir() if p.is_file() and p.name != ".lock"}
        assert after == {k: v for k, v in before.items() if k != ".lock"}
    finally:
        holder.communicate("", timeout=30)
    _, records, card = rescore(run_dir, workers=1)  # the writer is gone: it runs
    assert card["rescored"][-1]["samples_changed"] == 0 and len(records) == len(done.records)
    assert not [p.name for p in run_dir.iterdir() if p.name.startswith(".report-") or ".tmp" in p.name]


def test_report_rows_become_the_frame_column_by_column():
    from benchmark.report.aggregate import frame
    from benchmark.report.rows import FRAME_COLUMNS
    from benchmark.runner import RowStore

    gold, usage = FRAME_COLUMNS.index("gold"), FRAME_COLUMNS.index("answer_usage")
    rows = []
    for i in range(4):
        row = [None if (i + j) % 3 == 0 else f"v{j}" if j < 20 else j / 4 for j in range(len(FRAME_COLUMNS))]
        row[0], row[gold], row[usage] = f"s{i}", ["A", "B"][: i % 3], {"prompt_tokens": i}
        rows.append(tuple(row))
    store = RowStore()
    for row in rows:
        store.add(row)
    assert len(store) == 4 and list(store) == rows and store[2] == rows[2]
    df = store.to_frame()
    # the same frame as from the tuples: list-valued answers kept whole, None kept, every column of objects
    assert df.equals(frame(rows)) and all(t == object for t in df.dtypes) and df.at[2, "gold"] == ["A", "B"]
    assert len(store) == 0 and list(store) == [] and store.to_frame().shape == (0, len(FRAME_COLUMNS))
    store.add(rows[0])
    with pytest.raises(ValueError, match=f"3 values among rows of {len(FRAME_COLUMNS)}"):
        store.add(("s", "q", "d"))


def test_report_rows_keep_each_value_as_it_was_given(monkeypatch):
    """Values are shared by key, not by equality: True, 1 and 1.0 stay themselves, a NaN is kept as it
    is, equal lists and dicts become one object (dict order kept), a column past 256 values widens,
    and a column of mostly new values (timings) becomes a plain list."""
    import math

    from benchmark.report import rows as rowmod
    from benchmark.runner import RowStore

    monkeypatch.setattr(rowmod, "_PLAIN_AFTER", 16)
    nan = float("nan")
    values = [True, 1, 1.0, 0, False, None, "1", nan, ["a", 1], ["a", 1], {"x": 1, "y": 2}, {"y": 2, "x": 1}]
    store = RowStore()
    expect = []
    for i in range(600):
        row = (f"s{i}", values[i % len(values)], f"q{(i // 2) % 300}", i / 7, [i % 2, {"k": None}])
        store.add(row)
        expect.append(row)
    assert len(store) == 600
    got = list(store)
    for g, e in zip(got, expect):
        assert [type(x) for x in g] == [type(x) for x in e]
        assert all(x == y or (x != x and y != y) for x, y in zip(g, e))
    assert [list(got[i][1]) for i in (10, 11)] == [["x", "y"], ["y", "x"]]   # equal dicts, each its own order
    assert got[8][1] is got[9][1] and got[8][1] is got[20][1]                    # equal lists: one object
    assert got[0][4] is got[2][4] and got[0][4] is not got[1][4]
    assert math.isnan(got[7][1]) and store[-1] == expect[-1] and store[599][2] == "q299"
    assert store._codes[2].typecode == "H" and store._codes[1].typecode == "B"  # q0..q299: two bytes a row
    assert store._plain[3] is not None                                           # i / 7: a new value every row
    with pytest.raises(IndexError):
        store[600]


def test_report_rows_of_repeated_values_take_a_few_bytes_each():
    """A run's rows mostly repeat a few values per column: kept as one-byte codes, not a pointer per value."""
    import tracemalloc

    from benchmark.report.rows import FRAME_COLUMNS
    from benchmark.runner import RowStore

    rows = [tuple([f"s{i}"] + [f"v{j}-{i % 5}" if j % 2 else (i % 3) / 4 for j in range(1, len(FRAME_COLUMNS))])
            for i in range(20_000)]
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        store = RowStore()
        for row in rows:
            store.add(row)
        per_row = (tracemalloc.get_traced_memory()[0] - before) / len(rows)
    finally:
        tracemalloc.stop()
    assert per_row < 100, per_row   # a pointer per value would be 8 bytes x 45 columns
    assert list(store) == rows



def test_report_rows_keep_a_column_of_timings_as_doubles_and_give_back_each_value():
    """Timings are new in every row: a column of floats and None is kept as doubles (9 bytes a row, not a
    float object and a pointer: 32), gives back every value exactly (None, -0.0, the smallest double),
    and becomes a list, losing nothing, at its first value that is no float."""
    import math
    import tracemalloc

    from benchmark.runner import RowStore

    special = [None, -0.0, 5e-324, 1e300, 0.1 + 0.2]

    def row(i: int) -> tuple:   # made as the run makes them: each timing a new float that only the store keeps
        return ("s", (i * 0.001 + 1e-7) if i % 97 else special[(i // 97) % len(special)])

    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        store = RowStore()
        for i in range(30_000):
            store.add(row(i))
        per_row = (tracemalloc.get_traced_memory()[0] - before) / 30_000
    finally:
        tracemalloc.stop()
    assert per_row < 16, per_row
    rows = [row(i) for i in range(30_000)]
    got = list(store)
    assert got == rows and all(type(g[1]) is type(r[1]) for g, r in zip(got, rows))
    assert math.copysign(1, store[97][1]) == -1.0 and store[97 * 2][1] == 5e-324 and store[-1] == rows[-1]
    store.add(("s", 7))       # an int among the floats: kept as it was given, the column a list from here
    store.add(("s", "late"))
    assert list(store) == [*rows, ("s", 7), ("s", "late")] and type(store[-2][1]) is int


def test_the_report_is_made_once_the_dataset_and_stages_are_let_go(tmp_path, monkeypatch):
    """The report reads only its rows and the card: when it starts, the run's parsed dataset and its
    questions are no longer held (a dataset ten times as large must not add its own size to the
    report's memory)."""
    import gc
    import weakref

    from benchmark import runner

    refs = []
    real_prepare, real_report = runner.prepare_run, runner.write_report_atomic

    def prepare(*a, **k):
        dataset, questions, problems = real_prepare(*a, **k)   # (each diagram's questions, packed)
        refs.extend(weakref.ref(x) for x in (dataset, *questions.values()))
        return dataset, questions, problems

    held = []

    def report(run_dir, rows, card, **kw):
        gc.collect()
        held.append(sum(r() is not None for r in refs))
        return real_report(run_dir, rows, card, **kw)

    monkeypatch.setattr(runner, "prepare_run", prepare)
    monkeypatch.setattr(runner, "write_report_atomic", report)
    done = run(tiny_spec(tmp_path), progress=False, quiet=True)
    assert len(refs) > 1 and held == [0]
    assert (done.run_dir / "report.html").exists() and done.card["wall_s"]["report"] > 0
