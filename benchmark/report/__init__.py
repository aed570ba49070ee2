"""The report of a run: ``summary.csv``, ``report.md`` (+ ``plots/``) and a self-contained ``report.html``.

:func:`write_report` reads only sample records and the run card, so a re-score rewrites the same
files from ``samples.jsonl`` alone.
"""
from __future__ import annotations

import csv
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:  # pandas loads with the report's modules, not with this package
    import pandas as pd

SUMMARY = "summary.csv"


def summary_rows(summary: pd.DataFrame) -> tuple[list[str], list[list[str]]]:
    """The main table as CSV cells: floats in full precision, unmeasured as an empty cell."""
    cols = list(summary.columns)
    rows = [["" if v is None else repr(float(v)) if isinstance(v, float) else str(v) for v in row]
            for row in summary.itertuples(index=False)]
    return cols, rows


def write_summary(path: Path, summary: pd.DataFrame) -> None:
    cols, rows = summary_rows(summary)
    with Path(path).open("w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(cols)
        w.writerows(rows)


def _plot_jobs(a: Any) -> list[tuple[str, Callable[..., bytes], tuple[Any, ...]]]:
    """(file name, plot function, its arguments) of every plot of the analysis ``a`` (an
    :class:`~benchmark.report.document.Analysis` or its :class:`~benchmark.report.document.PlotInputs`)."""
    from benchmark.report import plots

    if not len(a.summary):
        return []
    jobs: list[tuple[str, Callable[..., bytes], tuple[Any, ...]]] = [
        ("accuracy_grounded.png", plots.accuracy_vs_grounded, (a.summary, a.floor["accuracy"] if a.floor else None))]
    if a.guess:
        jobs.append(("guess_tables.png", plots.guess_heatmaps, (a.guess,)))
    if len(a.buckets):
        jobs.append(("accuracy_srr.png", plots.accuracy_by_srr, (a.buckets,)))
    jobs.append(("srr_accuracy_variants.png", plots.srr_vs_accuracy, (a.summary,)))
    if a.samples["faithfulness"].notna().any():
        jobs.append(("faithfulness_srr.png", plots.faithfulness_vs_srr, (a.samples,)))
    return jobs


_JOBS: list[tuple[str, Callable[..., bytes], tuple[Any, ...]]] | None = None


def _draw(i: int) -> bytes:
    assert _JOBS is not None
    _, fn, args = _JOBS[i]
    return fn(*args)


class Plotting:
    """The plots of one report, drawn while the rest of it is built.

    :meth:`start` (with the analysis' plot inputs) hands the plots to ``workers`` forked processes
    when there are more than one, and returns at once; :meth:`result` waits for the PNG bytes (by
    file name, in a fixed order). With one worker the plots are drawn in :meth:`result`.
    """

    def __init__(self, workers: int = 1) -> None:
        self.workers = workers
        self._jobs: list[tuple[str, Callable[..., bytes], tuple[Any, ...]]] = []
        self._pool: Any = None
        self._pending: Any = None

    def start(self, inputs: Any) -> None:
        global _JOBS
        import multiprocessing

        self._jobs = _plot_jobs(inputs)
        if self.workers > 1 and len(self._jobs) > 1 and "fork" in multiprocessing.get_all_start_methods():
            _JOBS = self._jobs  # the forked processes find their inputs here, nothing is pickled to them
            try:
                self._pool = multiprocessing.get_context("fork").Pool(min(self.workers, len(self._jobs)))
            finally:
                _JOBS = None
            # the slowest plots go first: the bars of every variant x answerer, then the per-sample scatter
            order = sorted(range(len(self._jobs)), key=lambda i: (_FIRST.get(self._jobs[i][0], len(_FIRST)), i))
            self._pending = (order, self._pool.map_async(_draw, order, chunksize=1))

    def result(self) -> dict[str, bytes]:
        if self._pending is not None:
            order, pending = self._pending
            drawn = dict(zip(order, pending.get()))
            data = [drawn[i] for i in range(len(self._jobs))]
        else:
            data = [fn(*args) for _, fn, args in self._jobs]
        return {name: png for (name, _, _), png in zip(self._jobs, data)}

    def close(self) -> None:
        if self._pool is not None:
            self._pool.terminate()
            self._pool.join()
            self._pool = self._pending = None

    def __enter__(self) -> "Plotting":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


_FIRST = {"accuracy_grounded.png": 0, "faithfulness_srr.png": 1}


def make_plots(a: Any, workers: int = 1) -> dict[str, bytes]:
    """Every plot of the analysis ``a`` as PNG bytes, drawn in ``workers`` forked processes when more than one."""
    with Plotting(workers) as plotting:
        plotting.start(a)
        return plotting.result()


def write_report(run_dir: Path, records: list[Any], card: dict[str, Any], n_boot: int = 1000,
                 workers: int = 1) -> dict[str, Path]:
    """Write summary.csv, report.md, plots/*.png and report.html into ``run_dir``; returns their paths.

    ``records`` are sample records, dicts of their shape, or their rows as made by
    :func:`benchmark.report.rows.frame_row`; with ``workers > 1`` the plots are drawn in forked processes
    while the rest of the analysis is computed.
    """
    from benchmark.report.document import analyse, build_sections
    from benchmark.report.html import render_html
    from benchmark.report.markdown import render_markdown

    run_dir = Path(run_dir)
    with Plotting(workers) as plotting:
        # the plots are drawn while the tables that no plot shows are computed
        a = analyse(records, seed=int(card.get("seed") or 0), n_boot=n_boot, plot_inputs=plotting.start)
        write_summary(run_dir / SUMMARY, a.summary)
        figs = plotting.result()
    (run_dir / "plots").mkdir(exist_ok=True)
    for name, data in figs.items():
        (run_dir / "plots" / name).write_bytes(data)
    sections = build_sections(a, card, figs)
    title = f"diagqa report — {card.get('run_id', run_dir.name)}"
    (run_dir / "report.md").write_text(render_markdown(sections, title), encoding="utf-8")
    (run_dir / "report.html").write_text(render_html(sections, title, figs), encoding="utf-8")
    return {"summary": run_dir / SUMMARY, "markdown": run_dir / "report.md", "html": run_dir / "report.html"}
