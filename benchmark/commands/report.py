"""diagqa report: rewrite summary.csv, report.md and report.html of a run from its samples.jsonl."""
from __future__ import annotations

import argparse
from pathlib import Path

from benchmark.dataset import DEFAULT_ROOT

NAME = "report"
HELP = "rewrite a run's summary.csv, report.md and report.html from its samples.jsonl (metrics as stored)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("run_dir", nargs="?", type=Path, default=DEFAULT_ROOT / "results",
                   help="results/<run-id> (default: the run named in results/LATEST)")
    p.add_argument("--bootstrap", type=int, default=1000, metavar="N", help="bootstrap resamples (default 1000)")


def main(args: argparse.Namespace) -> int:
    import json

    from benchmark.records import read_samples
    from benchmark.report import write_report
    from benchmark.rescore import resolve_run_dir
    from benchmark.runner import CARD, SAMPLES

    run_dir = resolve_run_dir(args.run_dir)
    records = read_samples(run_dir / SAMPLES)
    card_path = run_dir / CARD
    card = json.loads(card_path.read_text(encoding="utf-8")) if card_path.exists() else {"run_id": run_dir.name}
    paths = write_report(run_dir, records, card, n_boot=args.bootstrap)
    if card_path.exists():  # the run card's usage roll-up is rewritten with the summary
        card_path.write_text(json.dumps(card, indent=1, ensure_ascii=False, sort_keys=True) + "\n", encoding="utf-8")
    print(f"report: {paths['html']}")
    return 0
