"""Time and size of a run's report by part: the median of several runs, printed side by side.

Each run writes the report of a copy of the run directory (the run itself is left as it is) in this
process, timing in CPU seconds of the process (which the load of other jobs does not change): the
analysis (every table, with its bootstrap intervals), the plots (with the long-context one), the
decisions (the decision layer over every sample, text signals where needed, embeddings from the
on-disk cache where an earlier report left them; ``--cold`` starts with none), the sample explorer's data
(reading the records' fields, diagrams from the render cache), packing it into the page, and
writing report.md and report.html; then the sizes of report.html and of its parts.

    .venv/bin/python scripts/bench_report.py results/<run-id>            # 3 runs
    .venv/bin/python scripts/bench_report.py results/<run-id> --runs 5 --cold   # renders not cached

``--cold`` renders every diagram again and embeds every text again (empty caches per run; the
embedding model loads once per process, in the first run), as the first report of a
dataset does; d2 runs in its own process, so its CPU time is not counted.

``--tables`` measures memory instead: the run's rows are read as the report reads them (the coded columns
of a RowStore), then each table of the analysis is made alone under ``tracemalloc``, and its traced peak
over what was held before it is printed, in MB and in bytes per sample (Python's allocations, counted
exactly: one run, not a median; a table's time is printed beside it, slowed by the tracing):

    .venv/bin/python scripts/bench_report.py results/<run-id> --tables
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def one(run_dir: Path, cold: bool) -> dict[str, float]:
    from benchmark.records import read_samples
    from benchmark.report import decisions_section, long_context_section, make_plots, write_summary
    from benchmark.report.document import analyse, build_sections
    from benchmark.report.explorer import explorer_data, node_labels
    from benchmark.report.html import packed, render_html
    from benchmark.report.markdown import render_markdown

    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / run_dir.name
        shutil.copytree(run_dir, copy)
        if cold:
            from benchmark import embeddings

            os.environ["DIAGQA_CACHE"] = str(Path(tmp) / "cache")
            embeddings._memory.clear()   # no embedding from an earlier run either
        records = read_samples(copy / "samples.jsonl")
        card = json.loads((copy / "run.json").read_text(encoding="utf-8"))
        t = [time.process_time()]
        a = analyse(records, seed=int(card.get("seed") or 0))
        write_summary(copy / "summary.csv", a.summary)
        t.append(time.process_time())
        figs = make_plots(a)
        longctx = long_context_section(a, figs)
        t.append(time.process_time())
        decisions = decisions_section(copy, records, card, copy)
        t.append(time.process_time())
        data = explorer_data(copy, records, card)
        t.append(time.process_time())
        blob = packed(data)
        t.append(time.process_time())
        sections = build_sections(a, card, figs, node_labels(copy))
        sections[-2:-2] = [x for x in (longctx, decisions) if x is not None]
        (copy / "report.md").write_text(render_markdown(sections, "t"), encoding="utf-8")
        page = render_html(sections, "t", figs, data)
        (copy / "report.html").write_text(page, encoding="utf-8")
        t.append(time.process_time())
        os.environ.pop("DIAGQA_CACHE", None)
        return {"samples": len(records), "analysis_s": t[1] - t[0], "plots_s": t[2] - t[1],
                "decisions_s": t[3] - t[2], "explorer_s": t[4] - t[3], "pack_s": t[5] - t[4], "write_s": t[6] - t[5],
                "total_s": t[6] - t[0],
                "page_MB": len(page.encode()) / 1e6, "data_MB": len(blob) / 1e6,
                "plots_MB": sum(len(f) for f in figs.values()) * 4 / 3 / 1e6, "diagrams": len(data["diagrams"])}


def tables(run_dir: Path) -> int:
    """Print each table's traced peak (see the module's docstring)."""
    import tracemalloc

    from benchmark.records import loads_line
    from benchmark.report import aggregate as agg
    from benchmark.report import comparison
    from benchmark.report.rows import RowStore, frame_row
    from benchmark.report.usage import usage_table
    from benchmark.rundir import scan_samples

    rows = RowStore()
    for _, rec in scan_samples(run_dir / "samples.jsonl", loads_line):
        rows.add(frame_row(rec))
    n = len(rows)
    seed = int(json.loads((run_dir / "run.json").read_text(encoding="utf-8")).get("seed") or 0)
    tracemalloc.start()
    df = agg.frame(rows)
    summary = agg.summary_table(df, seed)
    parts = [("guess", agg.guess_tables, ()), ("summary", agg.summary_table, (seed,)),
             ("blind floor", agg.blind_floor, (seed,)), ("srr buckets", agg.srr_buckets, ()),
             ("costs", comparison.costs, ()), ("lucky guesses", agg.lucky_guesses, ()),
             ("by question type", agg.breakdown, ("qtype",)), ("by counter-prior", agg.breakdown, ("counter_prior",)),
             ("twin consistency", agg.twin_consistency, ()), ("faithfulness", agg.faithfulness_table, (seed,)),
             ("claim check", agg.claim_check, (summary,)), ("ranking", comparison.ranking, (seed,)),
             ("sensitivity", comparison.sensitivity, (seed,)), ("usage", usage_table, ())]
    print(f"{n} samples; traced peak of each table over what was held before it")
    print(f"{'table':18s} {'peak MB':>8s} {'B/sample':>9s} {'s':>6s}")
    for name, make, extra in parts:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        t = time.perf_counter()
        make(df, *extra)
        peak = tracemalloc.get_traced_memory()[1] - before
        print(f"{name:18s} {peak / 2**20:8.1f} {peak / max(n, 1):9.0f} {time.perf_counter() - t:6.1f}")
    tracemalloc.stop()
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run_dir", type=Path)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--cold", action="store_true", help="render every diagram again (empty render cache)")
    ap.add_argument("--tables", action="store_true",
                    help="the traced memory peak of each table of the analysis instead of the times")
    args = ap.parse_args()
    if args.tables:
        return tables(args.run_dir)
    results = [one(args.run_dir, args.cold) for _ in range(args.runs)]
    keys = list(results[0])
    print(" ".join(f"{k:>11s}" for k in keys))
    for r in results:
        print(" ".join(f"{r[k]:11.3f}" if isinstance(r[k], float) else f"{r[k]:11d}" for k in keys))
    med = {k: statistics.median(r[k] for r in results) for k in keys}
    print(" ".join(f"{med[k]:11.3f}" if isinstance(med[k], float) else f"{med[k]:11d}" for k in keys), "(median)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
