"""diagqa rescore: recompute every metric of a run from samples.jsonl and rewrite its summary and reports."""
from __future__ import annotations

import argparse
from pathlib import Path

from benchmark.dataset import DEFAULT_ROOT

NAME = "rescore"
HELP = "re-score a run from its samples.jsonl (no answer is regenerated) and rewrite summary.csv and the reports"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("run_dir", nargs="?", type=Path, default=DEFAULT_ROOT / "results",
                   help="results/<run-id> (default: the run named in results/LATEST)")


def main(args: argparse.Namespace) -> int:
    from benchmark.rescore import rescore

    run_dir, records, card = rescore(args.run_dir)
    last = card["rescored"][-1]
    print(f"rescore: {len(records)} samples in {last['score_s']:.2f} s ({last['samples_changed']} changed), "
          f"report in {last['report_s']:.2f} s -> {run_dir}")
    return 0
