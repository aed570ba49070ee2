"""Re-scoring a finished run from ``samples.jsonl`` alone: no stage runs again, no answer is regenerated.

Every record that reached the answerer is scored again with ``score_sample`` from its stored
question, retrieved subgraph, context and answer (the diagram graphs come from the run's
``graphs.json``); ``summary.csv`` and the reports are rewritten, the lines of ``samples.jsonl`` whose
metrics changed too (with their new score time), and the run card records the re-score (with how
many samples changed).
"""
from __future__ import annotations

import datetime as _dt
import json
import os
import shutil
import time
from dataclasses import replace
from pathlib import Path
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from benchmark.errors import DiagQAError, InputError
from benchmark.records import SampleRecord, graph_from_json, loads_line, read_samples
from benchmark.report.rows import FRAME_COLUMNS, RowStore, frame_row
from benchmark.runner import CARD, GRAPHS, SAMPLES, _error, foreign_view, score_stored, write_report_atomic
from benchmark.rundir import RunLock, write_atomic


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
    graphs, card = _load_graphs_and_card(run_dir)
    return records, graphs, card


def _load_graphs_and_card(run_dir: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    gpath = run_dir / GRAPHS
    if not gpath.exists():
        raise InputError("the run has no diagram graphs to score against", file=str(gpath))
    graphs = json.loads(gpath.read_text(encoding="utf-8"))
    cpath = run_dir / CARD
    card = json.loads(cpath.read_text(encoding="utf-8")) if cpath.exists() else {"run_id": run_dir.name}
    return graphs, card


def _score_all(records: list[SampleRecord], graphs: dict[str, Any]) -> list[tuple[Any, Any, float | None]]:
    """(metrics, error, seconds) of each record; ``None`` seconds for a record with nothing to score.

    Records that hold the same question, retrieved subgraph and context (variants that retrieved
    alike, such as a finder that found the right diagram) are rebuilt once; those that also hold the
    same answer are scored once. Stored hashes only find candidates: a candidate is shared only
    when its stored values are equal to the record's, so an edited record is scored as it stands.
    """
    from benchmark.records import context_from_json, question_from_json, subgraph_from_json

    built: dict[str, Any] = {}
    contexts: dict[Any, Any] = {}   # score_context by diagram, question and retrieved subgraph; gold subgraphs
    views: dict[Any, _View] = {}                # rebuilt question / context / retrieved, by their stored hashes
    done: dict[Any, tuple[_View, dict[str, Any], dict[str, Any]]] = {}  # (view, answer as given, metrics) by view key, answer hash
    answers: dict[Any, Any] = {}  # score_answer by question and answer (see score_stored)
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
            key = (r.diagram_id, r.found_diagram, r.question_id, r.hashes.get("question"), r.hashes.get("context"))
            view = views.get(key)
            if view is None or not view.holds(r):
                retrieved = subgraph_from_json(r.retrieved)
                sub, ctx = foreign_view(retrieved, context_from_json(r.context, like=(r.retrieved, retrieved)),
                                        r.found_diagram, r.diagram_id)
                q = question_from_json(r.question)
                view = views[key] = _View(r, q, sub, ctx,
                                          _context_metrics(contexts, r.diagram_id, q, built[r.diagram_id], ctx.subgraph))
            given = _as_given(r.answer)
            same = done.get((key, r.hashes.get("answer")))
            if same is not None and same[0] is view and same[1] == given:
                metrics = dict(same[2])
            else:
                metrics = score_stored(view.q, built[r.diagram_id], view.sub, view.ctx, r.answer, view.cm, answers)
                done[(key, r.hashes.get("answer"))] = (view, given, metrics)
                metrics = dict(metrics)
            error = None
        except Exception as exc:
            metrics, error = None, _error("score", exc)
        prior = r.error if r.error is not None and r.error.get("stage") != "score" else None
        out.append((metrics, error or prior, time.perf_counter() - t))
    return out


def _as_given(answer: dict[str, Any]) -> tuple[Any, ...]:
    """The parts of a stored answer that scoring reads (those ``answer_hash`` covers; not answerer nor meta)."""
    return answer.get("raw"), answer.get("evidence"), answer.get("explanation"), answer.get("error")


class _View:
    """A record's question, retrieved subgraph and context as rebuilt for scoring, with the stored
    values they were rebuilt from and their ``score_context`` metrics."""

    __slots__ = ("stored", "q", "sub", "ctx", "cm")

    def __init__(self, r: SampleRecord, q: Any, sub: Any, ctx: Any, cm: dict[str, Any]) -> None:
        self.stored = (r.question, r.retrieved, r.context, r.found_diagram, r.diagram_id)
        self.q, self.sub, self.ctx, self.cm = q, sub, ctx, cm

    def holds(self, r: SampleRecord) -> bool:
        """Whether ``r`` stores the very values this view was rebuilt from."""
        return self.stored == (r.question, r.retrieved, r.context, r.found_diagram, r.diagram_id)


def _context_metrics(cache: dict[Any, Any], diagram_id: str, q: Any, g: Any, sub: Any) -> dict[str, Any]:
    """``score_context`` of the question on the received subgraph ``sub``, computed once per diagram, question
    structure and subgraph (variants that retrieved the same subgraph share it); the valid certificates once per
    diagram, question structure and annotated certificate."""
    from benchmark.metrics import score_context
    from benchmark.metrics.sample import gold_certificates

    gkey = ("gold", diagram_id, q.type, q.args, q.certificate)
    gold = cache.get(gkey)
    if gold is None:
        try:
            gold = cache[gkey] = gold_certificates(q, g)
        except TypeError:  # an unhashable answer: not cached
            gold = gold_certificates(q, g)
    key = (diagram_id, q.type, q.args, q.answer, q.certificate, sub)
    try:
        return cache[key]
    except KeyError:
        pass
    except TypeError:  # an unhashable answer: not cached
        return score_context(q, g, sub, gold)
    cache[key] = found = score_context(q, g, sub, gold)
    return found


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


_ERROR_STAGE = FRAME_COLUMNS.index("error_stage")


class _Scored:
    """What scoring sample lines gives: report rows (``frame_row``; a :class:`RowStore` of every part's rows once
    :func:`score_file` puts them together), score seconds, where metrics changed
    (and the parts of the file written anew there), a bad line."""

    __slots__ = ("rows", "seconds", "changed", "bad", "parts")

    def __init__(self) -> None:
        self.rows: list[tuple[Any, ...]] | RowStore = []   # a RowStore once the parts are put together
        self.seconds: list[float | None] = []
        self.changed: list[int] = []             # byte offsets of the records whose metrics changed
        self.bad: tuple[int, str] | None = None  # (byte offset, message) of the first bad line
        # the file's byte ranges in order, each with the file holding its new text (None: unchanged)
        self.parts: list[tuple[tuple[int, int], Path | None]] = []


def _score_lines(lines: list[tuple[int, bytes]], graphs: dict[str, Any]) -> tuple[_Scored, dict[int, str]]:
    """Parse and score ``lines`` ((byte offset, line) each, blank lines left out); a bad line stops them.

    Returns what was scored and, by byte offset, the new line of each record whose metrics (or
    scoring error) changed: the record with them and its new score time."""
    out, new_lines = _Scored(), {}
    records = []
    for offset, line in lines:
        try:
            records.append(SampleRecord.from_json(loads_line(line)))
        except (ValueError, TypeError, KeyError) as exc:
            out.bad = (offset, f"not a sample record: {exc}")
            return out, new_lines
    for (offset, _), r, (metrics, error, seconds) in zip(lines, records, _score_all(records, graphs)):
        out.seconds.append(seconds)
        if seconds is None:
            out.rows.append(frame_row(r))
            continue
        if (r.metrics, r.error) != (metrics, error):
            out.changed.append(offset)
            new_lines[offset] = replace(r, metrics=metrics, error=error,
                                        timings=dict(r.timings, score_s=round(seconds, 6))).dumps()
        out.rows.append(frame_row(r, metrics, error))
    return out, new_lines


def _lines_of(path: Path, start: int = 0, end: int | None = None) -> list[tuple[int, bytes]]:
    """The non-blank lines of ``path`` between byte offsets ``start`` and ``end`` (line starts), with their
    offsets; lines end at ``\\n`` only, as when the file is read line by line."""
    with path.open("rb") as fh:
        fh.seek(start)
        data = fh.read() if end is None else fh.read(end - start)
    out, pos, size = [], 0, len(data)
    while pos < size:
        nl = data.find(b"\n", pos)
        stop = size if nl < 0 else nl + 1
        line = data[pos:stop]
        if line.strip():
            out.append((start + pos, line))
        pos = stop
    return out


def _spans(path: Path, n: int) -> list[tuple[int, int]]:
    """``n`` byte ranges of ``path`` of about equal size, each from a line start to a line start."""
    size = path.stat().st_size
    bounds = [0]
    with path.open("rb") as fh:
        for k in range(1, n):
            fh.seek(max(bounds[-1], round(k * size / n)))
            if fh.tell() > 0:
                fh.seek(fh.tell() - 1)
                fh.readline()  # to the start of the next line (or stay at one)
            bounds.append(fh.tell())
    bounds.append(size)
    return [(a, b) for a, b in zip(bounds, bounds[1:]) if b > a]


_FILE: tuple[Path, dict[str, Any]] | None = None


def _score_span(span: tuple[int, int]) -> _Scored:
    assert _FILE is not None
    path, graphs = _FILE
    return _score_part(path, span, graphs)


def _score_part(path: Path, span: tuple[int, int], graphs: dict[str, Any]) -> _Scored:
    """Score the byte range ``span`` of ``path``; where a line changed, the range's new text is written
    beside the file (a part the caller puts together, see :func:`_rewrite`)."""
    out, new_lines = _score_lines(_lines_of(path, *span), graphs)
    part = None
    if new_lines and out.bad is None:
        part = path.with_name(f".{path.name}.part-{span[0]}")
        with path.open("rb") as src:
            src.seek(span[0])
            data = src.read(span[1] - span[0])
        with part.open("wb") as dst:
            pos = 0
            while pos < len(data):
                nl = data.find(b"\n", pos)
                stop = len(data) if nl < 0 else nl + 1
                new = new_lines.get(span[0] + pos)
                dst.write(data[pos:stop] if new is None else new.encode("utf-8") + b"\n")
                pos = stop
    out.parts = [(span, part)]
    return out


def line_number(path: Path, offset: int) -> int:
    """The 1-based number of the line that starts at byte ``offset`` of ``path``."""
    with path.open("rb") as fh:
        return fh.read(offset).count(b"\n") + 1


def score_file(path: Path, graphs: dict[str, Any], workers: int = 1, min_parallel: int = 2_000_000,
               meanwhile: Callable[[], Any] | None = None) -> _Scored:
    """Parse and score the sample lines of ``path``, in ``workers`` forked processes that each read
    a part of the file when it has at least ``min_parallel`` bytes; each record is scored as
    :func:`rescore_records` scores it. ``meanwhile`` is called while the processes score (or
    before scoring in this one)."""
    global _FILE
    import multiprocessing

    path = Path(path)
    if workers > 1 and path.stat().st_size >= min_parallel and "fork" in multiprocessing.get_all_start_methods():
        _FILE = (path, graphs)
        try:
            with multiprocessing.get_context("fork").Pool(workers) as pool:
                pending = pool.map_async(_score_span, _spans(path, workers * 8), chunksize=1)
                if meanwhile is not None:
                    meanwhile()
                parts = pending.get()
        finally:
            _FILE = None
    else:
        if meanwhile is not None:
            meanwhile()
        parts = [_score_part(path, (0, path.stat().st_size), graphs)]
    out = _Scored()
    out.rows = RowStore.for_samples()   # the report's rows of every sample, coded as a run keeps them
    for part in parts:
        out.parts.extend(part.parts)
        if part.bad is not None and out.bad is None:
            out.bad = part.bad
        for row in part.rows:
            out.rows.add(row)
        part.rows = []
        out.seconds.extend(part.seconds)
        out.changed.extend(part.changed)
    if out.bad is not None:
        _drop_parts(out.parts)
    return out


def _drop_parts(parts: list[tuple[tuple[int, int], Path | None]]) -> None:
    for _, part in parts:
        if part is not None:
            part.unlink(missing_ok=True)


def _rewrite(path: Path, parts: list[tuple[tuple[int, int], Path | None]]) -> None:
    """``path`` put together from its byte ranges: each range's new text where one was written, else
    the range as it is (through a temporary file, which replaces ``path``); the parts are removed."""
    tmp = path.with_name(path.name + ".tmp")
    try:
        with path.open("rb") as src, tmp.open("wb") as dst:
            for (start, end), part in parts:
                if part is not None:
                    with part.open("rb") as fh:
                        shutil.copyfileobj(fh, dst, 1 << 20)
                else:
                    src.seek(start)
                    left = end - start
                    while left > 0:
                        block = src.read(min(left, 1 << 20))
                        if not block:
                            break
                        dst.write(block)
                        left -= len(block)
            dst.flush()
            os.fsync(dst.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
        _drop_parts(parts)


class RescoredRecords(Sequence):
    """The records of a re-scored run, read from its ``samples.jsonl`` when first used."""

    def __init__(self, path: Path, n: int) -> None:
        self._path, self._n = path, n
        self._records: list[SampleRecord] | None = None

    def _load(self) -> list[SampleRecord]:
        if self._records is None:
            self._records = read_samples(self._path)
        return self._records

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, index: Any) -> Any:
        return self._load()[index]

    def __iter__(self) -> Iterator[SampleRecord]:
        return iter(self._load())


def _import_report() -> None:
    import benchmark.report.document  # noqa: F401  (pandas)
    import benchmark.report.plots  # noqa: F401  (matplotlib)


def rescore(path: Path | str, report: bool = True, workers: int | None = None) -> tuple[Path, Sequence[SampleRecord], dict[str, Any]]:
    """Re-score the run at ``path`` in place; returns its directory, records and updated card.

    ``workers`` processes share the reading, parsing and scoring (default: one per core); no stage
    is loaded. Each returns what the report reads and the new lines of the records whose metrics
    changed: ``samples.jsonl`` is rewritten only then, and only those lines in it. The returned
    records are read from it when first used.
    """
    from benchmark.spec import default_workers

    run_dir = resolve_run_dir(path)
    with RunLock(run_dir):  # not while a run (or another rescore or report) writes it
        return _rescore(run_dir, report, workers or default_workers())


def _rescore(run_dir: Path, report: bool, workers: int) -> tuple[Path, Sequence[SampleRecord], dict[str, Any]]:
    t0 = time.perf_counter()
    spath = run_dir / SAMPLES
    graphs, card = _load_graphs_and_card(run_dir)
    # the report's modules load while the samples are scored
    scored = score_file(spath, graphs, workers=workers, meanwhile=_import_report if report else None)
    if scored.bad is not None:
        raise InputError(scored.bad[1], file=str(spath), line=line_number(spath, scored.bad[0]))
    changed = len(scored.changed)
    if changed:  # the records whose metrics changed, with their new score time; the others as the run wrote them
        _rewrite(spath, scored.parts)
    records = RescoredRecords(spath, len(scored.seconds))
    card["sample_errors"] = int(scored.rows.present(_ERROR_STAGE).sum()) if len(scored.rows) else 0
    t1 = time.perf_counter()
    if report:
        write_report_atomic(run_dir, scored.rows, card)
    card.setdefault("rescored", []).append({"at_utc": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
                                           "score_s": round(t1 - t0, 3), "samples_changed": changed,
                                           "report_s": round(time.perf_counter() - t1, 3)})
    write_atomic(run_dir / CARD, json.dumps(card, indent=1, ensure_ascii=False, sort_keys=True) + "\n")
    return run_dir, records, card
