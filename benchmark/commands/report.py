"""diagqa report: rewrite summary.csv, report.md and report.html of a run from its samples.jsonl."""
from __future__ import annotations

import argparse
from pathlib import Path

from benchmark.dataset import DEFAULT_ROOT

NAME = "report"
HELP = "rewrite a run's summary.csv, report.md and report.html from its samples.jsonl (metrics as stored)"


def resamples(text: str) -> int:
    """``--bootstrap N``: a whole number of at least 1 (an interval needs resamples)."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number of resamples, got {text!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1 (an interval needs resamples), got {n}")
    return n


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("run_dir", nargs="?", type=Path, default=DEFAULT_ROOT / "results",
                   help="results/<run-id> (default: the run named in results/LATEST)")
    p.add_argument("--bootstrap", type=resamples, default=1000, metavar="N", help="bootstrap resamples (default 1000)")


def main(args: argparse.Namespace) -> int:
    import json

    from benchmark.records import loads_line
    from benchmark.report.rows import frame_row
    from benchmark.rescore import resolve_run_dir
    from benchmark.rundir import RunLock, scan_samples, write_atomic
    from benchmark.runner import CARD, SAMPLES, RowStore, write_report_atomic

    run_dir = resolve_run_dir(args.run_dir)
    with RunLock(run_dir):  # not while a run is still writing it
        rows = RowStore()  # samples.jsonl read as a stream: the report's row of each record, not the record
        for _, rec in scan_samples(run_dir / SAMPLES, loads_line):
            rows.add(frame_row(rec))
        card_path = run_dir / CARD
        card = json.loads(card_path.read_text(encoding="utf-8")) if card_path.exists() else {"run_id": run_dir.name}
        paths = write_report_atomic(run_dir, rows, card, n_boot=args.bootstrap)
        if card_path.exists():  # the run card's usage roll-up is rewritten with the summary
            write_atomic(card_path, json.dumps(card, indent=1, ensure_ascii=False, sort_keys=True) + "\n")
    print(f"report: {paths['html']}")
    return 0
