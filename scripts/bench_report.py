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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run_dir", type=Path)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--cold", action="store_true", help="render every diagram again (empty render cache)")
    args = ap.parse_args()
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
