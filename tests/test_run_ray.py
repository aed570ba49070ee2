"""The Ray executor: a real local Ray cluster writes the same samples as the local executor.

One cluster (``ray.init(num_cpus=2)``) serves the module; each run joins it (a run that finds Ray
initialised uses that connection and leaves it open).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")

from benchmark.cli import main  # noqa: E402
from benchmark.dataset import DEFAULT_ROOT  # noqa: E402
from benchmark.runner import run  # noqa: E402
from llm_server import LLMServer  # noqa: E402
from test_runner import copy_bundled, make_dataset, samples_without_timings, tiny_spec  # noqa: E402


@pytest.fixture(scope="module")
def cluster():
    ray.init(num_cpus=2, include_dashboard=False, logging_level="WARNING")
    yield
    ray.shutdown()


def test_ray_writes_the_local_executors_samples(tmp_path, cluster, capsys):
    variants = ("oracle+d2+none", "oracle+d2+khop1", "oracle+d2+bm25-3", "d2-bm25+d2+khop2")
    answerers = ("solver", "keyword", "blind")
    local = run(tiny_spec(tmp_path, variants=variants, answerers=answerers, run_id="local", workers=2),
                progress=False, quiet=True)
    on_ray = run(tiny_spec(tmp_path, variants=variants, answerers=answerers, run_id="ray", workers=2, executor="ray"),
                 progress=False)
    # the finders were fitted and ranked in tasks on the cluster, and resolve as the local ones do
    assert "finder d2-bm25: indexed 2 diagrams in" in capsys.readouterr().err.split("(on the cluster)")[0]
    assert on_ray.card["components"] == local.card["components"]
    assert on_ray.ok and on_ray.card["executor"]["name"] == "ray" and on_ray.card["executor"]["actors"] == 2
    a = samples_without_timings(local.run_dir / "samples.jsonl")
    b = samples_without_timings(on_ray.run_dir / "samples.jsonl")
    assert len(a) == on_ray.card["samples"] == local.card["samples"] > 0
    assert a == b  # same samples, same order
    assert (local.run_dir / "summary.csv").read_bytes() == (on_ray.run_dir / "summary.csv").read_bytes()
    # byte for byte once the timings are dropped: the lines themselves, not only their parsed values
    strip = [json.dumps(d, sort_keys=True) for d in a]
    assert strip == [json.dumps(d, sort_keys=True) for d in b]


def test_extraction_runs_on_the_actors_and_matches_the_local_executor(tmp_path, cluster):
    """Image variants: each executor extracts the PNGs itself (each into its own empty cache)."""
    from benchmark.runner import RunSpec

    data = copy_bundled(tmp_path / "data", sorted(p.stem for p in (DEFAULT_ROOT / "diagrams").glob("*.png"))[:2])
    results = {}
    for executor in ("local", "ray"):
        cache = tmp_path / f"cache-{executor}"
        spec = RunSpec(data_dir=data, variants=("oracle+ocr+khop2", "oracle+d2+path"), answerers=("solver", "blind"),
                       out_dir=tmp_path / "results", run_id=executor, workers=2, executor=executor,
                       options={"ocr": {"cache_dir": str(cache)}})
        results[executor] = run(spec, progress=False, quiet=True)
        assert len(list((cache).glob("*.json"))) == 2  # both images extracted by this run
    assert results["ray"].ok
    assert samples_without_timings(results["local"].run_dir / "samples.jsonl") == \
        samples_without_timings(results["ray"].run_dir / "samples.jsonl")


def test_a_stage_error_on_an_actor_is_recorded_like_the_local_one(tmp_path, cluster):
    """A diagram whose graph cannot be read on the actor (its PNG is missing) is a source error in its samples."""
    data = make_dataset(tmp_path / "data")  # no PNGs: the ocr source fails for every question
    out = {}
    for executor in ("local", "ray"):
        out[executor] = run(tiny_spec(tmp_path, variants=("oracle+ocr+khop2", "oracle+d2+full"), run_id=executor,
                                      workers=2, executor=executor), progress=False, quiet=True)
    recs = samples_without_timings(out["ray"].run_dir / "samples.jsonl")
    assert any(r["error"] and r["error"]["stage"] == "source" for r in recs)
    assert any(r["error"] is None for r in recs)
    assert recs == samples_without_timings(out["local"].run_dir / "samples.jsonl")
    assert out["ray"].card["sample_errors"] == out["local"].card["sample_errors"] > 0


def test_llm_concurrency_limit_holds_across_the_cluster(tmp_path, cluster):
    """Two actors, one slot: the server never sees a request before the previous one was answered."""
    delay = 0.4
    server = LLMServer(script=[{"content": json.dumps({"answer": "yes", "evidence": [], "explanation": ""}),
                                "delay": delay}] * 40)
    server.start()
    try:
        spec = tiny_spec(tmp_path, variants=("oracle+d2+full",), answerers=("llm",), run_id="llm", workers=2,
                         executor="ray",
                         options={"llm": {"base_url": server.base_url, "model": "test-model", "cache_path": None,
                                          "max_attempts": 1}})
        res = run(spec, progress=False, quiet=True)
    finally:
        server.stop()
    assert res.card["samples"] >= 3
    assert res.card["executor"]["peak_in_flight"] == {"llm": 1}
    times = sorted(r["time"] for r in server.requests)
    assert len(times) == res.card["samples"]
    # each reply takes `delay` seconds; with one slot the next request cannot arrive sooner
    assert all(b - a >= delay * 0.95 for a, b in zip(times, times[1:])), times


def test_cli_flags_and_errors(tmp_path, capsys):
    data = make_dataset(tmp_path / "data")
    rc = main(["run", "--data", str(data), "--variants", "oracle+d2+full", "--answerers", "solver",
               "--address", "auto", "--out", str(tmp_path / "r"), "--no-progress"])
    assert rc != 0
    assert "executor ray" in capsys.readouterr().err


def test_cli_starts_its_own_cluster_and_shuts_it_down(tmp_path):
    """``diagqa run --executor ray`` in a fresh process: an in-process cluster for the run, the usual outputs."""
    import os
    import subprocess

    data = make_dataset(tmp_path / "data")
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parent.parent))
    proc = subprocess.run([sys.executable, "-m", "benchmark.cli", "run", "--data", str(data), "--variants",
                           "oracle+d2+full,oracle+d2+khop1", "--answerers", "solver,blind", "--executor", "ray",
                           "--workers", "2", "--out", str(tmp_path / "r"), "--run-id", "x", "--no-progress"],
                          env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    card = json.loads((tmp_path / "r" / "x" / "run.json").read_text())
    assert card["executor"] == {"name": "ray", "address": None, "actors": 2, "peak_in_flight": {}}
    assert card["config"]["executor"] == "ray" and card["status"] == "complete"
    assert (tmp_path / "r" / "x" / "report.html").exists()


def test_a_local_run_cut_short_is_finished_on_ray(tmp_path, cluster):
    """``resume(..., executor="ray")`` runs exactly the missing samples on the cluster."""
    from benchmark.runner import resume

    first = run(tiny_spec(tmp_path, variants=("oracle+d2+khop1", "d2-bm25+d2+khop2")), progress=False, quiet=True)
    path = first.run_dir / "samples.jsonl"
    whole = path.read_text(encoding="utf-8").splitlines(keepends=True)
    path.write_text("".join(whole[:-5]), encoding="utf-8")  # the last question's samples lost
    again = resume(first.run_dir, progress=False, quiet=True, executor="ray")
    assert again.ok and again.card["resumes"][0]["samples_before"] == len(whole) - 5
    assert again.card["executor"]["name"] == "ray"
    ref = tmp_path / "whole.jsonl"
    ref.write_text("".join(whole), encoding="utf-8")
    assert samples_without_timings(path) == samples_without_timings(ref)


def test_the_process_that_fits_a_finder_exits_after_the_fit(cluster):
    """A finder's fit receives the whole dataset: the worker process that ran it must not stay idle (holding that
    memory) for the rest of the run. A task run as the fits are (:data:`benchmark.cluster.FIT_TASK`) leaves
    no process behind, where a plain task's worker stays."""
    import os
    import time

    from benchmark.cluster import FIT_TASK

    def gone(pid: int, wait_s: float) -> bool:
        end = time.monotonic() + wait_s
        while time.monotonic() < end:
            if not os.path.exists(f"/proc/{pid}"):
                return True
            time.sleep(0.1)
        return not os.path.exists(f"/proc/{pid}")

    def pid() -> int:  # defined here, it travels by value (this test module is not importable on the workers)
        import os

        return os.getpid()

    fitted = ray.get(ray.remote(**FIT_TASK)(pid).remote())
    assert fitted != os.getpid() and gone(fitted, 20.0)
    kept = ray.get(ray.remote(num_cpus=1)(pid).remote())
    assert kept != fitted and not gone(kept, 1.0)  # the check above can fail: a plain task's worker stays


def test_the_cluster_is_sent_the_questions_packed_and_sends_its_rankings_packed(tmp_path, cluster, monkeypatch):
    """The run's process holds each diagram's questions packed (:class:`benchmark.dataset.PackedQuestions`): the
    Ray session is given them so, not every question made an object at once, and the finders' results come
    back a diagram at a time, packed, giving the local executor's samples."""
    from benchmark import cluster as cluster_mod
    from benchmark.dataset import PackedQuestions

    given, returned = [], []

    class Recording(cluster_mod.Session):
        def __init__(self, address, num_cpus, options, dataset, questions):
            given.append(questions)
            super().__init__(address, num_cpus, options, dataset, questions)

        def fit_finders(self, names):
            wait = super().fit_finders(names)

            def results():
                out = wait()
                returned.append({n: (r[0], dict(r[-1])) for n, r in out.items()})   # (the run empties them)
                return out
            return results

    monkeypatch.setattr(cluster_mod, "Session", Recording)
    variants, answerers = ("oracle+d2+khop1", "d2-bm25+d2+khop2"), ("solver", "blind")
    on_ray = run(tiny_spec(tmp_path, variants=variants, answerers=answerers, run_id="ray", workers=2, executor="ray"),
                 progress=False, quiet=True)
    local = run(tiny_spec(tmp_path, variants=variants, answerers=answerers, run_id="local", workers=2),
                progress=False, quiet=True)
    (questions,) = given
    assert questions and all(isinstance(qs, PackedQuestions) for qs in questions.values())
    (results,) = returned
    assert sorted(results) == ["d2-bm25", "oracle"]
    for status, by_diagram in results.values():
        assert status == "ok" and sorted(by_diagram) == sorted(questions)
        assert all(isinstance(v, bytes) for v in by_diagram.values())
    assert samples_without_timings(on_ray.run_dir / "samples.jsonl") == \
        samples_without_timings(local.run_dir / "samples.jsonl")
