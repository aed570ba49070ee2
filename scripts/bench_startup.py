"""Time ``diagqa parse`` on a one-line D2 file, as a fresh process: median of N runs.

    python scripts/bench_startup.py [--runs N]

Three ways, interleaved run by run so that a busy machine slows them alike:

- ``python``: a bare interpreter (``python -c pass``), the floor no command can go under;
- ``eager``: every command module imported before the command runs (how ``diagqa`` started up
  before commands were imported on demand);
- ``diagqa parse``: the command as shipped, ``python -m benchmark.cli parse FILE``.

The ratio column is each median over the shipped command's median. The target is a median of
at most 80 ms for ``diagqa parse``.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

EAGER = ("import sys; from benchmark import cli; "
         "[cli._add_command(cli.argparse.ArgumentParser().add_subparsers(), n) for n in cli.command_names()]; "
         "sys.exit(cli.main(sys.argv[1:]))")


def commands(d2: Path) -> dict[str, list[str]]:
    py = sys.executable
    return {
        "python": [py, "-c", "pass"],
        "eager": [py, "-c", EAGER, "parse", str(d2)],
        "diagqa parse": [py, "-m", "benchmark.cli", "parse", str(d2)],
    }


def bench(cmds: dict[str, list[str]], runs: int) -> dict[str, list[float]]:
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    times: dict[str, list[float]] = {name: [] for name in cmds}
    for name, cmd in cmds.items():  # one untimed run each: file-system caches warm
        subprocess.run(cmd, cwd=ROOT, env=env, check=True, capture_output=True)
    for _ in range(runs):
        for name, cmd in cmds.items():
            t0 = time.perf_counter()
            subprocess.run(cmd, cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL)
            times[name].append(time.perf_counter() - t0)
    return times


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=15, help="runs of each way (median; at least 5)")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        d2 = Path(tmp) / "one.d2"
        d2.write_text("a -> b\n", encoding="utf-8")
        times = bench(commands(d2), max(5, args.runs))
    medians = {name: statistics.median(ts) for name, ts in times.items()}
    ref = medians["diagqa parse"]
    print(f"{'':14s} {'median':>9s} {'min':>9s} {'max':>9s} {'ratio':>6s}   ({len(times['python'])} runs each)")
    for name, ts in times.items():
        print(f"{name:14s} {medians[name] * 1000:7.1f} ms {min(ts) * 1000:6.1f} ms {max(ts) * 1000:6.1f} ms "
              f"{medians[name] / ref:6.2f}")
    print(f"diagqa parse: {ref * 1000:.1f} ms median, target 80 ms: {'met' if ref <= 0.080 else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
