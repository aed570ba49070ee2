"""Re-scoring a finished run from ``samples.jsonl`` alone: no stage runs again, no answer is regenerated.

Every record that reached the answerer is scored again with ``score_sample`` from its stored
question, retrieved subgraph, context and answer (the diagram graphs come from the run's
``graphs.json``); ``summary.csv`` and the reports are rewritten, ``samples.jsonl`` too when a metric
changed, and the run card records the re-score (with how many samples changed).
"""
from __future__ import annotations

import datetime as _dt
import json
import os
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from benchmark.errors import DiagQAError, InputError
from benchmark.records import SampleRecord, graph_from_json, read_samples
from benchmark.runner import CARD, GRAPHS, SAMPLES, _error, foreign_view, score_stored, write_samples


def resolve_run_dir(path: Path | str) -> Path:
    """A run directory, or a results directory whose ``LATEST`` names one."""
    p = Path(path)
    if (p / SAMPLES).exists():
        return p
    if (p / "LATEST").exists():
        return p / (p / "LATEST").read_text(encoding="utf-8").strip()
    raise DiagQAError(f"{p} is not a run directory (no {SAMPLES}) nor a results directory (no LATEST)")


def load_run(run_dir: Path) -> tuple[list[SampleRecord], dict[str, Any], dict[str, Any]]:
    """Records, diagram graphs (JSON) and run card of a run directory."""
    records = read_samples(run_dir / SAMPLES)
    gpath = run_dir / GRAPHS
    if not gpath.exists():
        raise InputError("the run has no diagram graphs to score against", file=str(gpath))
    graphs = json.loads(gpath.read_text(encoding="utf-8"))
    cpath = run_dir / CARD
    card = json.loads(cpath.read_text(encoding="utf-8")) if cpath.exists() else {"run_id": run_dir.name}
    return records, graphs, card


def _score_all(records: list[SampleRecord], graphs: dict[str, Any]) -> list[tuple[Any, Any, float | None]]:
    """(metrics, error, seconds) of each record; ``None`` seconds for a record with nothing to score."""
    from benchmark.metrics import score_context
    from benchmark.records import context_from_json, question_from_json, subgraph_from_json

    built: dict[str, Any] = {}
    shared: dict[str, Any] = {}   # rebuilt question / context / retrieved, shared by consecutive samples
    out: list[tuple[Any, Any, float | None]] = []
    for r in records:
        if r.answer is None or r.context is None:
            out.append((r.metrics, r.error, None))  # an earlier stage failed: nothing to score
            continue
        if r.diagram_id not in built:
            if r.diagram_id not in graphs:
                raise DiagQAError(f"{GRAPHS} has no graph of diagram {r.diagram_id!r}")
            built[r.diagram_id] = graph_from_json(graphs[r.diagram_id])
        t = time.perf_counter()
        try:
            key = (r.question_id, r.hashes.get("context"), r.variant)
            if shared.get("key") != key:
                sub, ctx = foreign_view(subgraph_from_json(r.retrieved), context_from_json(r.context),
                                        r.found_diagram, r.diagram_id)
                q = question_from_json(r.question)
                shared = {"key": key, "q": q, "ctx": ctx, "sub": sub,
                          "cm": score_context(q, built[r.diagram_id], sub)}
            metrics, error = score_stored(shared["q"], built[r.diagram_id], shared["sub"], shared["ctx"], r.answer,
                                          shared["cm"]), None
        except Exception as exc:
            metrics, error = None, _error("score", exc)
        prior = r.error if r.error is not None and r.error.get("stage") != "score" else None
        out.append((metrics, error or prior, time.perf_counter() - t))
    return out


_SHARED: tuple[list[SampleRecord], dict[str, Any]] | None = None


def _score_chunk(indices: list[int]) -> list[tuple[Any, Any, float | None]]:
    assert _SHARED is not None
    records, graphs = _SHARED
    return _score_all([records[i] for i in indices], graphs)


def rescore_records(records: list[SampleRecord], graphs: dict[str, Any], workers: int = 1,
                    min_parallel: int = 2000) -> list[SampleRecord]:
    """Records with their metrics recomputed; a record whose scoring raises keeps its error, not the run.

    With ``workers > 1`` (and at least ``min_parallel`` records) diagrams are scored in forked
    processes that share the records; the result is the same as scoring in one process.
    """
    global _SHARED
    import multiprocessing

    if workers > 1 and len(records) >= min_parallel and "fork" in multiprocessing.get_all_start_methods():
        chunks: dict[str, list[int]] = {}
        for i, r in enumerate(records):
            chunks.setdefault(r.diagram_id, []).append(i)
        _SHARED = (records, graphs)
        try:
            with multiprocessing.get_context("fork").Pool(workers) as pool:
                parts = pool.map(_score_chunk, list(chunks.values()), chunksize=1)
        finally:
            _SHARED = None
        scored: list[Any] = [None] * len(records)
        for idx, part in zip(chunks.values(), parts):
            for i, res in zip(idx, part):
                scored[i] = res
    else:
        scored = _score_all(records, graphs)
    out = []
    for r, (metrics, error, seconds) in zip(records, scored):
        if seconds is None:
            out.append(r)
        else:
            out.append(replace(r, metrics=metrics, error=error, timings=dict(r.timings, score_s=round(seconds, 6))))
    return out


def rescore(path: Path | str, report: bool = True, workers: int | None = None) -> tuple[Path, list[SampleRecord], dict[str, Any]]:
    """Re-score the run at ``path`` in place; returns its directory, records and updated card.

    ``workers`` processes share the scoring (default: one per core).
    """
    from benchmark.spec import default_workers

    from benchmark.plugins import load_all
    from benchmark.report import write_report

    run_dir = resolve_run_dir(path)
    t0 = time.perf_counter()
    load_all()
    records, graphs, card = load_run(run_dir)
    stored = records
    records = rescore_records(records, graphs, workers=workers or default_workers())
    changed = sum(1 for old, new in zip(stored, records) if (old.metrics, old.error) != (new.metrics, new.error))
    if changed:  # unchanged metrics keep the file (and its timings) as the run wrote it
        tmp = run_dir / (SAMPLES + ".tmp")
        write_samples(tmp, records)
        os.replace(tmp, run_dir / SAMPLES)
    card["sample_errors"] = sum(1 for r in records if r.error is not None)
    t1 = time.perf_counter()
    if report:
        write_report(run_dir, records, card)
    card.setdefault("rescored", []).append({"at_utc": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
                                           "score_s": round(t1 - t0, 3), "samples_changed": changed,
                                           "report_s": round(time.perf_counter() - t1, 3)})
    (run_dir / CARD).write_text(json.dumps(card, indent=1, ensure_ascii=False, sort_keys=True) + "\n", encoding="utf-8")
    return run_dir, records, card
