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
PLOT_TABLES = ("samples", "guess", "summary", "floor", "buckets", "costs")


def _plot_specs() -> list[tuple[str, Callable[..., bytes], tuple[str, ...], Callable[..., Any]]]:
    """(file name, plot function, tables it needs, its arguments from them or ``None`` for no plot),
    in the order of the report."""
    from benchmark.report import plots, tradeoff
    from benchmark.report.aggregate import matching
    from benchmark.report.rows import present

    return [
        ("accuracy_grounded.png", plots.accuracy_vs_grounded, ("summary", "floor_accuracy"),
         lambda summary, floor: (summary, floor)),
        ("guess_tables.png", plots.guess_heatmaps, ("guess",), lambda guess: (guess,) if guess else None),
        ("accuracy_srr.png", plots.accuracy_by_srr, ("buckets",), lambda buckets: (buckets,) if len(buckets) else None),
        ("srr_accuracy_variants.png", plots.srr_vs_accuracy, ("summary",), lambda summary: (summary,)),
        ("faithfulness_srr.png", plots.faithfulness_vs_srr, ("samples",),
         lambda samples: (samples,) if matching(samples, "faithfulness", present).any() else None),
        ("grounded_tokens.png", tradeoff.grounded_vs_tokens, ("summary", "costs"),
         lambda summary, costs: (summary, costs) if len(costs) and costs["context_tokens"].notna().any() else None),
    ]


def make_plots(a: Any) -> dict[str, bytes]:
    """Every plot of the analysis ``a`` as PNG bytes, by file name in the report's order (drawn here,
    one after another)."""
    if not len(a.samples):
        return {}  # nothing was scored: no plot
    out = {}
    for name, fn, needs, make in _plot_specs():
        args = make(*(getattr(a, n) for n in needs))
        png = fn(*args) if args is not None else None
        if png is not None:  # None: a plot with nothing to show
            out[name] = png
    return out


LONG_CONTEXT_PLOT = "long_context.png"


def long_context_section(a: Any, figs: dict[str, bytes]) -> Any:
    """The "Long-context faithfulness" section when the run has ``long<n>k-<position>-<base>`` variants
    (:mod:`benchmark.long_context`), else None; its plot is added to ``figs``."""
    from benchmark.long_context import frame_records, long_context_blocks, long_context_png, long_context_table
    from benchmark.report.document import Plot, Section

    table = long_context_table(frame_records(a.samples))
    if not table:
        return None
    blocks = long_context_blocks(table, tokens="context tokens (median)")
    png = long_context_png(table)
    if png is not None:
        figs[LONG_CONTEXT_PLOT] = png
        blocks.insert(1, Plot(LONG_CONTEXT_PLOT, "Accuracy, grounded accuracy and faithfulness (rows) against context "
                                                 "length, one line per position of the evidence, one column per "
                                                 "answerer and base selector; dotted: the unpadded base."))
    return Section("Long-context faithfulness", blocks)


def decisions_section(run_dir: Path, records: list[Any] | None, card: dict[str, Any], run_files: Path) -> Any:
    """The "Decisions per answer" section (:mod:`benchmark.decision`), and ``decisions.jsonl`` (one
    decision per sample) written into ``run_dir``; the layer's time goes into the run card, not the report."""
    from benchmark.decision.apply import DECISIONS, report_decisions

    decided, why = report_decisions(records, run_files, run_dir / DECISIONS)
    return _decided_section(decided, why, card)


def _decided_section(decided: Any, why: str | None, card: dict[str, Any]) -> Any:
    """The section of decisions written (:class:`benchmark.decision.apply.WrittenDecisions`), or why there are none;
    their count and the layer's seconds go into the run card."""
    from benchmark.decision.apply import DECISIONS
    from benchmark.report.document import Section

    if decided is None:
        return Section("Decisions per answer", [f"Not computed: {why}. `diagqa decide RUN` computes them once it can."])
    card["decisions"] = {"samples": decided.samples, "seconds": round(decided.seconds, 3), "file": DECISIONS}
    return Section("Decisions per answer", decided.tally.blocks())


def write_report(run_dir: Path, records: list[Any], card: dict[str, Any], n_boot: int = 1000,
                 run_files: Path | None = None) -> dict[str, Path]:
    """Write summary.csv, report.md, plots/*.png, report.html and decisions.jsonl into ``run_dir``; returns
    the paths of the first three.

    ``records`` are sample records, dicts of their shape, their rows as made by
    :func:`benchmark.report.rows.frame_row` (a list, or a :class:`benchmark.report.rows.RowStore`, whose
    coded columns the tables read a few at a time, :class:`benchmark.report.columns.SampleColumns`; the
    store given is emptied), or the samples frame made of such rows; in the last cases the decisions and
    the interactive page read the samples one by one from ``samples.jsonl``, and the frame is let go once
    the tables are made. report.html is written a piece at a time (:func:`benchmark.report.html.write_html`).
    The run's own files (``samples.jsonl``, ``graphs.json``) are read from ``run_files`` (default
    ``run_dir``), so the report can be written elsewhere first and moved into place.
    """
    from benchmark.decision.apply import DECISIONS, DecisionWriter, start_report_decisions
    from benchmark.errors import DiagQAError
    from benchmark.judge.section import run_sections
    from benchmark.report.document import analyse, build_sections
    from benchmark.report.explorer import DRAWN, Drawings, explorer_data, node_labels
    from benchmark.report.html import write_html
    from benchmark.report.markdown import render_markdown
    from benchmark.report.usage import usage_json, usage_section, usage_table, with_usage

    if isinstance(n_boot, bool) or not isinstance(n_boot, int) or n_boot < 1:
        raise DiagQAError(f"bootstrap resamples must be a whole number of at least 1, got {n_boot!r}")
    run_dir = Path(run_dir)
    run_files = Path(run_files) if run_files is not None else run_dir
    from benchmark.report.rows import reads_samples_file

    # frame rows (or the frame made of them) hold no whole records: the decisions and the sample explorer
    # read them from samples.jsonl one at a time (records=None)
    whole = None if reads_samples_file(records) else records
    from benchmark.report.aggregate import frame, matching

    samples = frame(records)   # (a store of rows gives its columns: it is left empty)
    del records   # the frame holds what the rest of the report reads
    # the diagrams the sample explorer shows: d2 draws them in the background while the tables, the plots,
    # the decisions and the sections are made
    draw = set(samples.loc[matching(samples, "guess_class", lambda g: g in DRAWN), "diagram_id"])
    drawings = Drawings(card, draw)
    try:
        a = analyse(samples, seed=int(card.get("seed") or 0), n_boot=n_boot)
        del samples
        a.priors = card.get("priors")
        a.pairs = dict(card.get("pairs") or {})
        usage = usage_table(a.samples)
        write_summary(run_dir / SUMMARY, with_usage(a.summary, usage))
        card["usage"] = usage_json(usage)   # the run card (run.json) holds the same roll-up
        figs = make_plots(a)
        longctx = long_context_section(a, figs)   # adds its plot to figs
        (run_dir / "plots").mkdir(exist_ok=True)
        for name, data in figs.items():
            (run_dir / "plots" / name).write_bytes(data)
        sections = build_sections(a, card, figs, lambda diagrams: node_labels(run_files, diagrams))
        sections.insert(len(sections) - 1, usage_section(usage, a.samples))   # before "Errors and skipped stages"
        del a, usage   # the samples frame and its tables: the decisions and the explorer read the samples one at a time
        # the decisions' first pass over the samples (their text signals computed); the second, which writes
        # them, is the explorer's pass
        decided, why = start_report_decisions(whole, run_files, run_dir / DECISIONS)
        writer = decided if isinstance(decided, DecisionWriter) else None
        try:
            explorer = explorer_data(run_files, whole, card, draw=draw, drawings=drawings,
                                     each=writer.add if writer is not None else None)
        except BaseException:
            if writer is not None:
                writer.discard()
            raise
        if writer is not None:
            decided = writer.close()
        at = next(i for i, s in enumerate(sections) if s.title == "Unmeasured values and why")
        sections.insert(at, _decided_section(decided, why, card))
        if longctx is not None:
            sections.insert(at, longctx)
        sections[-1:-1] = run_sections(run_files)   # citation check, LLM judge, self-check: when `diagqa judge` ran
        title = f"diagqa report — {card.get('run_id', run_dir.name)}"
        (run_dir / "report.md").write_text(render_markdown(sections, title), encoding="utf-8")
        write_html(run_dir / "report.html", sections, title, figs, explorer)
    finally:
        drawings.close()
    return {"summary": run_dir / SUMMARY, "markdown": run_dir / "report.md", "html": run_dir / "report.html"}
