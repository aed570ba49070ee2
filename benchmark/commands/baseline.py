"""diagqa baseline record: keep a run's per-question results and summary as a small, committable baseline."""
from __future__ import annotations

import argparse
from pathlib import Path

NAME = "baseline"
HELP = ("record a baseline (per-question accuracy, grounded accuracy, faithfulness and the summary) of a run, "
        "for `diagqa compare --baseline BASE RUN --max-drop D`")


def add_arguments(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="action", metavar="ACTION")
    sub.required = True
    rec = sub.add_parser("record", help="write the baseline of a run", description="write the baseline of a run")
    rec.add_argument("run_dir", type=Path, help="results/<run-id> (or a results directory with LATEST)")
    rec.add_argument("--out", type=Path, default=None, metavar="PATH",
                     help="where to write it (default: results/baselines/<run-id>.json)")


def main(args: argparse.Namespace) -> int:
    from benchmark.baseline import dumps, record_baseline
    from benchmark.dataset import DEFAULT_ROOT
    from benchmark.rescore import resolve_run_dir
    from benchmark.rundir import write_atomic

    run_dir = resolve_run_dir(args.run_dir)
    doc = record_baseline(run_dir)
    out = args.out or DEFAULT_ROOT / "results" / "baselines" / f"{doc['run_id']}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(out, dumps(doc))
    n = sum(len(g["questions"]) for g in doc["groups"])
    print(f"baseline: {len(doc['groups'])} variant x answerer groups, {n} question results from {run_dir} -> {out}")
    return 0
