"""Time the diagram finders on a dataset: median of N runs of fit (warm caches) and of per-question ranking.

    python scripts/bench_find.py [--data DIR] [--finders NAME ...] [--runs N] [--ocr-images N]

``--ocr-images N`` also times uncached tesseract on the first N PNGs (median per image), the cost
a cold ``ocr-bm25``/``dense`` fit pays once per image. Finders that cannot run here are listed
with the reason.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmark.dataset import load_dataset  # noqa: E402
from benchmark.errors import StageUnavailable  # noqa: E402
from benchmark.plugins import load_all  # noqa: E402
from benchmark.stages import FINDERS  # noqa: E402


def bench_finder(name: str, dataset, runs: int) -> dict:
    """Median fit seconds and median per-question rank milliseconds over ``runs`` runs."""
    fits, ranks = [], []
    for _ in range(runs):
        finder = FINDERS.create(name)
        t = time.perf_counter()
        finder.fit(dataset)
        fits.append(time.perf_counter() - t)
        for q in dataset.questions:
            t = time.perf_counter()
            finder.rank(q)
            ranks.append(time.perf_counter() - t)
    return {"fit_s": statistics.median(fits), "rank_ms": 1000 * statistics.median(ranks),
            "rank_p95_ms": 1000 * sorted(ranks)[int(0.95 * (len(ranks) - 1))]}


def bench_ocr(dataset, n: int) -> float:
    """Median seconds of uncached OCR over the first ``n`` PNGs."""
    from benchmark.extract.ocr import read_words
    from benchmark.extract.raster import load_rgb

    times = []
    for d in list(dataset.diagrams.values())[:n]:
        rgb = load_rgb(d.png_path)
        t = time.perf_counter()
        read_words(rgb)  # the one OCR pass of an image (stored by image_words; timed here without the store)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", type=Path, default=ROOT)
    p.add_argument("--finders", nargs="+")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--ocr-images", type=int, default=0)
    args = p.parse_args()
    load_all()
    dataset, _ = load_dataset(args.data, strict=False)
    print(f"{len(dataset.diagrams)} diagrams, {len(dataset.questions)} questions, median of {args.runs} runs")
    print(f"{'finder':<10} {'fit_s':>8} {'rank_ms':>9} {'p95_ms':>8}")
    for name in args.finders or FINDERS.names():
        try:
            r = bench_finder(name, dataset, args.runs)
        except StageUnavailable as exc:
            print(f"{name:<10} unavailable: {exc}")
            continue
        print(f"{name:<10} {r['fit_s']:>8.3f} {r['rank_ms']:>9.3f} {r['rank_p95_ms']:>8.3f}")
    if args.ocr_images:
        print(f"uncached OCR: {bench_ocr(dataset, args.ocr_images):.2f} s per image (median of {args.ocr_images})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
