"""A cold ``diagqa run`` against the tesseract floor, side by side on the same machine.

1. *floor*: plain tesseract (the binary, ``tesseract PNG stdout -l eng+rus``, no preprocessing) over
   every bundled PNG, ``--workers`` images at a time (each a process with ``OMP_THREAD_LIMIT=1``):
   the least time any cold run that reads every image once with tesseract can take here;
2. *cold*: ``diagqa run`` (the default grid of ``configs/default.yaml`` unless ``--variants`` /
   ``--answerers``) in a fresh process with ``--workers`` workers and every cache empty: ``DIAGQA_CACHE``
   points at a new temporary folder, which holds every computed cache (extraction, OCR text,
   embeddings, renders); model weights are not caches and stay where they are. The run reads its
   images with one tesseract thread per worker process itself (``OMP_THREAD_LIMIT=1`` in its image
   pool), so both sides read images with the same parallelism; its other work (torch embedding texts)
   keeps its own threads, as for any user. ``--run-omp-limit`` sets ``OMP_THREAD_LIMIT=1`` for the
   whole run instead (how this script measured before), which holds torch to one thread;
3. with ``--warm``, the same run again on the now filled cache.

The two are alternated ``--runs`` times and the medians printed with their ratio (cold / floor; the
target is at most 2). Wall times on a shared machine measure its load as well: the load average is
printed before and after, and the run card's own wall times (load, finder fitting and ranking,
samples, report) and the finders' fitting lines show where the cold run's time went, and the
machine's busy and idle core-seconds during the last cold run (``/proc/stat``) whether it was bound by
the processor (little idle time: only less work shortens it) or waited.

    .venv/bin/python scripts/bench_cold.py                 # one floor + one cold run, default grid
    .venv/bin/python scripts/bench_cold.py --runs 3 --warm
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def floor(pngs: list[Path], workers: int, lang: str) -> float:
    """Seconds for plain tesseract to read every PNG, ``workers`` processes at a time."""
    env = dict(os.environ, OMP_THREAD_LIMIT="1")

    def one(png: Path) -> None:
        subprocess.run(["tesseract", str(png), "stdout", "-l", lang], env=env, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    t = time.perf_counter()
    with ThreadPoolExecutor(workers) as pool:
        list(pool.map(one, pngs))
    return time.perf_counter() - t


def core_seconds(stat: str = "/proc/stat") -> tuple[float, float] | None:
    """The machine's busy and idle core-seconds since boot (``/proc/stat``: user, nice, system, irq,
    softirq and steal are busy; idle and iowait idle), or None where there is no ``/proc/stat``."""
    try:
        with open(stat, encoding="ascii") as fh:
            user, nice, system, idle, iowait, irq, softirq, steal = (int(v) for v in fh.readline().split()[1:9])
    except (OSError, ValueError):   # absent, or not the eight numbers a kernel since 2.6.11 writes
        return None
    hz = os.sysconf("SC_CLK_TCK")
    return (user + nice + system + irq + softirq + steal) / hz, (idle + iowait) / hz


def cold_run(args: argparse.Namespace, tmp: Path, name: str, cache: Path) -> dict:
    """One ``diagqa run`` in a fresh process with ``DIAGQA_CACHE=cache``; its wall time, card times and notes."""
    env = dict(os.environ, DIAGQA_CACHE=str(cache), PYTHONPATH=str(ROOT))
    if args.run_omp_limit:
        env["OMP_THREAD_LIMIT"] = "1"
    cmd = [sys.executable, "-m", "benchmark.cli", "run", "--out", str(tmp / "results"), "--run-id", name,
           "--workers", str(args.workers), "--no-progress"]
    if args.variants:
        cmd += ["--variants", args.variants]
    if args.answerers:
        cmd += ["--answerers", args.answerers]
    if args.limit:
        cmd += ["--limit", str(args.limit)]
    t, cores = time.perf_counter(), core_seconds()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=ROOT)
    wall, cores_after = time.perf_counter() - t, core_seconds()
    if proc.returncode != 0:
        raise SystemExit(f"diagqa run failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    card = json.loads((tmp / "results" / name / "run.json").read_text())
    cached = {d.name: sum(1 for _ in d.rglob("*") if _.is_file()) for d in sorted(cache.iterdir()) if d.is_dir()} \
        if cache.exists() else {}
    shutil.rmtree(tmp / "results" / name, ignore_errors=True)
    return {"wall_s": wall, "card_wall_s": card["wall_s"], "samples": card["samples"],
            "fit_lines": [ln for ln in proc.stderr.splitlines() if ln.startswith("finder ")],
            "skipped": [s.get("variant") or s.get("answerer") for s in card.get("skipped", [])],
            "cache_files": cached,
            # the whole machine's cores meanwhile: how much of the run's time they had nothing to do
            "core_s": {"busy": cores_after[0] - cores[0], "idle": cores_after[1] - cores[1]}
            if cores and cores_after else None}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--workers", type=int, default=2, help="tesseract processes for the floor and diagqa run --workers")
    p.add_argument("--runs", type=int, default=1, help="floor/cold pairs, alternated (medians reported)")
    p.add_argument("--warm", action="store_true", help="also time the run again on the filled cache")
    p.add_argument("--variants", help="comma-separated variants (default: the default grid)")
    p.add_argument("--answerers", help="comma-separated answerers (default: the default grid's)")
    p.add_argument("--lang", default="eng+rus", help="tesseract languages of the floor (the harness reads eng+rus)")
    p.add_argument("--run-omp-limit", action="store_true",
                   help="OMP_THREAD_LIMIT=1 for the whole run (torch on one thread too), not only its OCR")
    p.add_argument("--limit", type=int, help="diagqa run --limit (a quick check; the measurement runs every question)")
    p.add_argument("--pngs", type=int, help="the floor over only the first N PNGs (a quick check of the script)")
    p.add_argument("--json", type=Path, default=ROOT / "results" / "bench_cold.json")
    args = p.parse_args()
    if shutil.which("tesseract") is None:
        raise SystemExit("tesseract is not installed")
    pngs = sorted((ROOT / "diagrams").glob("*.png"))[:args.pngs or None]
    load_before = os.getloadavg()
    floors, colds, warms = [], [], []
    with tempfile.TemporaryDirectory(prefix="diagqa-cold-") as tmp_s:
        tmp = Path(tmp_s)
        for i in range(args.runs):
            floors.append(floor(pngs, args.workers, args.lang))
            print(f"floor {i + 1}: {floors[-1]:.1f} s for {len(pngs)} PNGs", file=sys.stderr)
            cache = tmp / f"cache{i}"
            cache.mkdir()
            colds.append(cold_run(args, tmp, f"cold{i}", cache))
            print(f"cold {i + 1}: {colds[-1]['wall_s']:.1f} s ({colds[-1]['samples']} samples)", file=sys.stderr)
            if args.warm:
                warms.append(cold_run(args, tmp, f"warm{i}", cache))
                print(f"warm {i + 1}: {warms[-1]['wall_s']:.1f} s", file=sys.stderr)
            shutil.rmtree(cache, ignore_errors=True)
    load_after = os.getloadavg()
    f_med = statistics.median(floors)
    c_med = statistics.median(c["wall_s"] for c in colds)
    limit = "the whole run" if args.run_omp_limit else "the run's OCR pool"
    print(f"\n{len(pngs)} PNGs, {args.workers} processes, OMP_THREAD_LIMIT=1 for the floor and {limit}; "
          f"median of {args.runs}; "
          f"load average before {load_before[0]:.1f}, after {load_after[0]:.1f} (1 min) on {os.cpu_count()} cores\n")
    print("| measurement | median s | all runs s |\n|---|---:|---|")
    def runs(xs: list[float]) -> str:
        return ", ".join(f"{x:.1f}" for x in xs)

    print(f"| tesseract floor | {f_med:.1f} | {runs(floors)} |")
    print(f"| cold diagqa run | {c_med:.1f} | {runs([c['wall_s'] for c in colds])} |")
    if warms:
        w_med = statistics.median(w["wall_s"] for w in warms)
        print(f"| warm diagqa run | {w_med:.1f} | {runs([w['wall_s'] for w in warms])} |")
    print(f"\ncold / floor = {c_med / f_med:.2f} (target: at most 2.00)")
    last = colds[-1]
    print(f"cold run card wall times (last run): {last['card_wall_s']}")
    if last["core_s"]:
        busy, idle = last["core_s"]["busy"], last["core_s"]["idle"]
        print(f"the machine's cores during it: {busy:.0f} core-seconds busy, {idle:.0f} idle "
              f"({busy / max(busy + idle, 1e-9):.0%} busy; /proc/stat, every process on the machine)")
    for line in last["fit_lines"]:
        print(f"  {line}")
    print(f"cache files written by the cold run: {last['cache_files']}; skipped: {last['skipped'] or 'none'}")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"args": {k: str(v) for k, v in vars(args).items()}, "pngs": len(pngs),
                                     "load_before": load_before, "load_after": load_after, "floor_s": floors,
                                     "cold": colds, "warm": warms, "ratio": c_med / f_med}, indent=1))
    print(f"written: {args.json}", file=sys.stderr)


if __name__ == "__main__":
    main()
