"""diagqa longctx: the long-context section of a run (accuracy against evidence position and context length)."""
from __future__ import annotations

import argparse
from pathlib import Path

from benchmark.dataset import DEFAULT_ROOT

NAME = "longctx"
HELP = "long-context faithfulness of a run: accuracy, grounded accuracy and faithfulness by position and length"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("run_dir", nargs="?", type=Path, default=DEFAULT_ROOT / "results",
                   help="results/<run-id> or a run id (default: the run named in results/LATEST)")


def main(args: argparse.Namespace) -> int:
    import sys

    from benchmark.long_context import long_context_section, plot_long_context
    from benchmark.samples import load_samples, run_dir_of

    run = load_samples(run_dir_of(args.run_dir, DEFAULT_ROOT / "results"))
    for p in run.problems:
        print(f"diagqa longctx: skipped {p}", file=sys.stderr)
    png = plot_long_context(run.records, run.run_dir / "plots" / "long_context.png")
    text = long_context_section(run.records, plot="plots/long_context.png" if png else None)
    out = run.run_dir / "long-context.md"
    out.write_text(text, encoding="utf-8")
    print(text)
    print(f"longctx: -> {out}")
    return 0
