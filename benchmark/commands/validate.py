"""diagqa validate: check a dataset's annotations, certificates and renders."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from benchmark.dataset import DEFAULT_ROOT
from benchmark.validate import validate_path

NAME = "validate"
HELP = "validate a dataset: schema, solver answers, certificates (inside, proving, minimal), PNG renders, twins"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--data", type=Path, default=DEFAULT_ROOT, help="dataset directory (default: the bundled one)")
    p.add_argument("--no-renders", action="store_true", help="skip the PNG staleness check")
    p.add_argument("--allow-outside-imports", action="store_true",
                   help="accept D2 imports of files outside the dataset folder (flagged by default)")


def main(args: argparse.Namespace) -> int:
    from benchmark.dataset import STEP_UNITS
    from benchmark.progress import Bars
    from benchmark.validate import VALIDATING

    # bars only where someone watches: a script or CI reading stderr gets the problems alone
    with Bars(enabled=sys.stderr.isatty(),
              units={**STEP_UNITS, VALIDATING: "diagram"}) as bars:
        ds, problems = validate_path(args.data, check_renders=not args.no_renders,
                                     allow_outside_imports=args.allow_outside_imports, progress=bars)
    for p in problems:
        print(f"error: {p}", file=sys.stderr)
    n_q = len(ds.questions)
    if problems:
        print(f"validate: {len(problems)} problem(s) in {len(ds.diagrams)} diagrams, {n_q} questions", file=sys.stderr)
        return 1
    print(f"validate: ok ({len(ds.diagrams)} diagrams, {n_q} questions)")
    return 0
