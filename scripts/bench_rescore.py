"""Time of ``diagqa rescore`` by phase: the median of several runs, printed side by side.

Each run is a fresh process re-scoring a copy of the run directory (the run itself is left as it
is) and reports: importing the package, reading + scoring (``score_s`` of the run card: reading
``samples.jsonl``, parsing and scoring every sample), the report, the whole wall time, and the
CPU seconds of the process and its workers together (what the load of other jobs does not change);
then ``command``: the wall time of ``diagqa rescore`` on that copy as a user runs it, from the
interpreter's start to its exit.

    .venv/bin/python scripts/bench_rescore.py results/perf            # 3 runs
    .venv/bin/python scripts/bench_rescore.py results/perf --runs 5 --src /path/to/other/checkout
    .venv/bin/python scripts/bench_rescore.py results/perf --changed  # as after a change of a metric

``--src`` times the ``benchmark`` package of another checkout (to compare two versions).
``--changed`` re-scores a copy whose every stored metric is stale (each record's ``srr`` set to
-1, as an older metric would have left it), so every record is written anew: the re-score that
follows a change of the scoring code.
"""
from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD = r"""
import json, resource, sys, time
t0 = time.perf_counter()
sys.path.insert(0, sys.argv[1])
sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in repr(f).lower()]  # the checkout named, not the installed one
from benchmark.rescore import rescore
t1 = time.perf_counter()
_, records, card = rescore(sys.argv[2])
t2 = time.perf_counter()
last = card["rescored"][-1]
cpu = sum(getattr(resource.getrusage(who), f) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
          for f in ("ru_utime", "ru_stime"))
print(json.dumps({"import": t1 - t0, "read+score": last["score_s"], "report": last["report_s"], "wall": t2 - t0,
                  "cpu": cpu, "changed": last["samples_changed"], "samples": len(records)}))
"""

COMMAND = r"""
import sys
sys.path.insert(0, sys.argv[1])
sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in repr(f).lower()]
sys.argv[1:] = ["rescore", sys.argv[2]]
from benchmark import cli
if hasattr(cli, "run"):  # the console script's entry point
    cli.run()
sys.exit(cli.main())  # a checkout from before it
"""

PHASES = ("import", "read+score", "report", "wall", "cpu", "command")


def stale_copy(samples: Path, dst: Path) -> None:
    """``samples`` with every record's stored ``srr`` set to -1 (a metric a re-score must put right)."""
    with samples.open(encoding="utf-8") as src, dst.open("w", encoding="utf-8") as out:
        for line in src:
            if line.strip():
                record = json.loads(line)
                if record.get("metrics"):
                    record["metrics"]["srr"] = -1.0
                line = json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n"
            out.write(line)


def one_run(src: Path, run_dir: Path, stale: Path | None = None) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / run_dir.name
        shutil.copytree(run_dir, copy)
        if stale is not None:
            shutil.copyfile(stale, copy / "samples.jsonl")
        out = subprocess.run([sys.executable, "-c", CHILD, str(src), str(copy)], cwd=tmp, check=True,
                             capture_output=True, text=True)
        found = json.loads(out.stdout.strip().splitlines()[-1])
        if stale is not None:
            shutil.copyfile(stale, copy / "samples.jsonl")
        # the whole command as a user runs it: interpreter start, imports, re-score, report, exit
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", COMMAND, str(src), str(copy)], cwd=tmp, check=True, capture_output=True)
        found["command"] = time.perf_counter() - t
    return found


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("run_dir", type=Path, help="results/<run-id> to re-score (a copy of it)")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--src", type=Path, default=ROOT, help="checkout whose benchmark package is timed")
    p.add_argument("--changed", action="store_true", help="every stored metric stale: every record is rewritten")
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        stale = None
        if args.changed:
            stale = Path(tmp) / "stale.jsonl"
            stale_copy(args.run_dir / "samples.jsonl", stale)
        runs = [one_run(args.src.resolve(), args.run_dir.resolve(), stale) for _ in range(args.runs)]
    print(f"{runs[0]['samples']} samples, {runs[0]['changed']} changed; seconds ({args.src})")
    print(f"{'phase':<12}" + "".join(f"{f'run {i + 1}':>9}" for i in range(len(runs))) + f"{'median':>9}")
    for phase in PHASES:
        values = [r[phase] for r in runs]
        print(f"{phase:<12}" + "".join(f"{v:>9.2f}" for v in values) + f"{statistics.median(values):>9.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
