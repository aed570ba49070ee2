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


#: the tables the plots are drawn from (attributes of :class:`~benchmark.report.document.Analysis`)
PLOT_TABLES = ("samples", "guess", "summary", "floor", "buckets")


def _plot_specs() -> list[tuple[str, Callable[..., bytes], tuple[str, ...], Callable[..., Any]]]:
    """(file name, plot function, tables it needs, its arguments from them or ``None`` for no plot),
    in the order of the report."""
    from benchmark.report import plots

    return [
        ("accuracy_grounded.png", plots.accuracy_vs_grounded, ("summary", "floor"),
         lambda summary, floor: (summary, floor["accuracy"] if floor else None)),
        ("guess_tables.png", plots.guess_heatmaps, ("guess",), lambda guess: (guess,) if guess else None),
        ("accuracy_srr.png", plots.accuracy_by_srr, ("buckets",), lambda buckets: (buckets,) if len(buckets) else None),
        ("srr_accuracy_variants.png", plots.srr_vs_accuracy, ("summary",), lambda summary: (summary,)),
        ("faithfulness_srr.png", plots.faithfulness_vs_srr, ("samples",),
         lambda samples: (samples,) if samples["faithfulness"].notna().any() else None),
    ]


_JOBS: dict[str, tuple[Callable[..., bytes], tuple[Any, ...]]] | None = None


def _draw(name: str) -> bytes:
    assert _JOBS is not None
    fn, args = _JOBS[name]
    return fn(*args)


class Plotting:
    """The plots of one report, each drawn as soon as the tables it needs exist.

    The analysis hands over its tables one by one (:meth:`table`); a plot whose tables are all
    there goes to ``workers`` forked processes (when more than one) while the analysis goes on:
    the processes start with the first such plot and find its tables in memory; later plots are
    sent with theirs (small aggregated tables). :meth:`result` waits for the PNG bytes, by file
    name in the report's order. With one worker the plots are drawn in :meth:`result`.
    """

    def __init__(self, workers: int = 1) -> None:
        import multiprocessing

        self.parallel = workers > 1 and "fork" in multiprocessing.get_all_start_methods()
        self.workers = workers
        self._tables: dict[str, Any] = {}
        self._specs = _plot_specs()
        self._jobs: dict[str, tuple[Callable[..., bytes], tuple[Any, ...]]] = {}
        self._pending: dict[str, Any] = {}
        self._pool: Any = None

    def table(self, name: str, value: Any) -> None:
        """One of :data:`PLOT_TABLES` is ready."""
        self._tables[name] = value
        if name == "samples" and not len(value):
            self._specs = []  # nothing was scored: no plot
        for spec_name, fn, needs, make in self._specs:
            if spec_name in self._jobs or name not in needs or any(n not in self._tables for n in needs):
                continue
            args = make(*(self._tables[n] for n in needs))
            if args is not None:
                self._jobs[spec_name] = (fn, args)
                if self.parallel:
                    self._submit(spec_name)

    def _submit(self, name: str) -> None:
        global _JOBS
        import multiprocessing

        if self._pool is None:
            _JOBS = self._jobs  # the forked processes find the first plots' tables here, nothing is pickled
            try:
                self._pool = multiprocessing.get_context("fork").Pool(min(self.workers, len(self._specs)))
            finally:
                _JOBS = None
            for first in self._jobs:
                self._pending[first] = self._pool.apply_async(_draw, (first,))
        else:
            fn, args = self._jobs[name]
            self._pending[name] = self._pool.apply_async(fn, args)

    def result(self) -> dict[str, bytes]:
        order = [name for name, *_ in _plot_specs() if name in self._jobs]
        if self.parallel:
            return {name: self._pending[name].get() for name in order}
        return {name: self._jobs[name][0](*self._jobs[name][1]) for name in order}

    def close(self) -> None:
        if self._pool is not None:
            self._pool.terminate()
            self._pool.join()
            self._pool = None

    def __enter__(self) -> "Plotting":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def make_plots(a: Any, workers: int = 1) -> dict[str, bytes]:
    """Every plot of the analysis ``a`` as PNG bytes, drawn in ``workers`` forked processes when more than one."""
    with Plotting(workers) as plotting:
        for name in PLOT_TABLES:
            plotting.table(name, getattr(a, name))
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
    from benchmark.report.usage import usage_json, usage_section, usage_table, with_usage

    run_dir = Path(run_dir)
    with Plotting(workers) as plotting:
        # the plots are drawn while the tables that no plot shows are computed
        a = analyse(records, seed=int(card.get("seed") or 0), n_boot=n_boot, ready=plotting.table)
        usage = usage_table(a.samples)
        write_summary(run_dir / SUMMARY, with_usage(a.summary, usage))
        card["usage"] = usage_json(usage)   # the run card (run.json) holds the same roll-up
        figs = plotting.result()
    (run_dir / "plots").mkdir(exist_ok=True)
    for name, data in figs.items():
        (run_dir / "plots" / name).write_bytes(data)
    sections = build_sections(a, card, figs)
    sections.insert(len(sections) - 1, usage_section(usage, a.samples))   # before "Errors and skipped stages"
    title = f"diagqa report — {card.get('run_id', run_dir.name)}"
    (run_dir / "report.md").write_text(render_markdown(sections, title), encoding="utf-8")
    (run_dir / "report.html").write_text(render_html(sections, title, figs), encoding="utf-8")
    return {"summary": run_dir / SUMMARY, "markdown": run_dir / "report.md", "html": run_dir / "report.html"}
