"""Time ``diagqa parse`` on a one-line D2 file, as a fresh process: median of N runs.

    python scripts/bench_startup.py [--runs N] [--against REV]

Each run is timed twice: wall-clock, and the CPU seconds of the process (user + system, from
``getrusage``), which a machine busy with other work inflates far less than the wall clock.

Three ways, interleaved run by run so that a busy machine slows them alike:

- ``python``: a bare interpreter (``python -c pass``), the floor no command can go under;
- ``eager``: every command module imported before the command runs (how ``diagqa`` started up
  before commands were imported on demand);
- ``diagqa parse``: the command as shipped, ``python -m benchmark.cli parse FILE``;
- with ``--against REV``, also ``diagqa parse`` of the package as it was at git revision REV
  (its ``benchmark/`` extracted with ``git archive`` into a temporary folder).

The ratio column is each median over the shipped command's median. The target is a median of
at most 80 ms for ``diagqa parse`` (wall clock on an idle machine; CPU time where it is busy).
"""
from __future__ import annotations

import argparse
import os
import resource
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


def commands(d2: Path, old: tuple[str, Path] | None = None) -> dict[str, list[str]]:
    py = sys.executable
    cmds = {
        "python": [py, "-c", "pass"],
        "eager": [py, "-c", EAGER, "parse", str(d2)],
        "diagqa parse": [py, "-m", "benchmark.cli", "parse", str(d2)],
    }
    if old is not None:  # the old package first on the path, so that it is the one imported
        rev, root = old
        cmds[f"parse @{rev}"] = [py, "-c", f"import runpy, sys; sys.path.insert(0, {str(root)!r}); "
                                 "runpy.run_module('benchmark.cli', run_name='__main__')",
                                 "parse", str(d2)]
    return cmds


def extract(rev: str, into: Path) -> Path:
    """The ``benchmark/`` package as it was at ``rev``, under ``into``."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "benchmark"], check=True, capture_output=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def bench(cmds: dict[str, list[str]], runs: int) -> dict[str, dict[str, list[float]]]:
    """Per way: the wall-clock and the CPU seconds of each run (runs of the ways interleaved)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    times: dict[str, dict[str, list[float]]] = {name: {"wall": [], "cpu": []} for name in cmds}
    for name, cmd in cmds.items():  # one untimed run each: file-system caches warm
        subprocess.run(cmd, cwd=ROOT, env=env, check=True, capture_output=True)
    for _ in range(runs):
        for name, cmd in cmds.items():
            c0, t0 = _cpu(), time.perf_counter()
            subprocess.run(cmd, cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL)
            times[name]["wall"].append(time.perf_counter() - t0)
            times[name]["cpu"].append(_cpu() - c0)
    return times


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=15, help="runs of each way (median; at least 5)")
    ap.add_argument("--against", metavar="REV", help="also time diagqa parse as it was at this git revision")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        d2 = Path(tmp) / "one.d2"
        d2.write_text("a -> b\n", encoding="utf-8")
        old = None
        if args.against:
            (Path(tmp) / "old").mkdir()
            old = (args.against, extract(args.against, Path(tmp) / "old"))
        times = bench(commands(d2, old), max(5, args.runs))
    med = {name: {k: statistics.median(v) for k, v in t.items()} for name, t in times.items()}
    ref = med["diagqa parse"]
    print(f"{'':14s} {'wall median':>12s} {'ratio':>6s} {'CPU median':>11s} {'ratio':>6s}   "
          f"({len(times['python']['wall'])} runs each)")
    for name in times:
        m = med[name]
        print(f"{name:14s} {m['wall'] * 1000:9.1f} ms {m['wall'] / ref['wall']:6.2f} {m['cpu'] * 1000:8.1f} ms "
              f"{m['cpu'] / ref['cpu']:6.2f}")
    verdict = "met" if ref["wall"] <= 0.080 else "met in CPU time" if ref["cpu"] <= 0.080 else "NOT met"
    print(f"diagqa parse: {ref['wall'] * 1000:.1f} ms wall, {ref['cpu'] * 1000:.1f} ms CPU (medians); "
          f"target 80 ms: {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
