"""Time the D2 parser on the conformance corpus: median of N runs per file and in total.

    python scripts/bench_parser.py [--corpus DIR] [--runs N]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmark.d2 import parse_file  # noqa: E402

DEFAULT_CORPUS = Path(os.environ.get("DIAGQA_SHARED") or ROOT.parent / "shared") / "d2-conformance"


def bench(files: list[Path], runs: int) -> tuple[dict[Path, float], float]:
    """Median seconds per file, and median seconds for one pass over all files."""
    per_file: dict[Path, list[float]] = {f: [] for f in files}
    totals = []
    for _ in range(runs):
        start_all = time.perf_counter()
        for f in files:
            t0 = time.perf_counter()
            parse_file(f)
            per_file[f].append(time.perf_counter() - t0)
        totals.append(time.perf_counter() - start_all)
    return {f: statistics.median(ts) for f, ts in per_file.items()}, statistics.median(totals)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--runs", type=int, default=7, help="runs per file (median; at least 5)")
    args = ap.parse_args(argv)
    files = sorted(args.corpus.rglob("*.d2"))
    if not files:
        print(f"bench_parser: no .d2 files under {args.corpus}", file=sys.stderr)
        return 2
    medians, total = bench(files, max(5, args.runs))
    width = max(len(str(f.relative_to(args.corpus))) for f in files)
    for f in files:
        size = f.stat().st_size
        print(f"{str(f.relative_to(args.corpus)):<{width}}  {size:>6} B  {medians[f] * 1000:8.2f} ms")
    print(f"{'total (' + str(len(files)) + ' files)':<{width}}  {'':>8}  {total * 1000:8.2f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
