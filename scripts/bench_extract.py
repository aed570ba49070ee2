"""Extraction speed against tesseract's own time on the same images.

For every image both are timed alternately, several times: the tesseract binary on the PNG file as
it is (``tesseract PNG stdout -l eng+rus tsv``: words with their boxes, as extraction needs them;
the same command as ``bench_cold.py``'s floor), and the whole extraction in this process (PNG read,
shapes, OCR, connectors, labels). ``pytesseract.image_to_data`` is not the reference: it writes the
decoded image to a temporary PNG before tesseract reads it, which on an 80 Mpx image adds about half
of tesseract's own time. Reported: the median of the runs per image, the
ratio extraction / tesseract side by side, the median ratio and the ratio of the totals, and
the median time of each extraction stage.

    .venv/bin/python scripts/bench_extract.py                 # every bundled diagram, 3 runs
    .venv/bin/python scripts/bench_extract.py --limit 10 --runs 5 --out results/bench_extract.json
    .venv/bin/python scripts/bench_extract.py --style graphviz --limit 10   # drawn by another tool

Tesseract runs with one OpenMP thread for both measurements (``--threads`` to change): the
evaluation command runs one image per core instead.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("images", nargs="*", type=Path, help="PNG files (default: diagrams/*.png)")
    p.add_argument("--data", type=Path, default=ROOT, help="dataset directory when no images are given")
    p.add_argument("--limit", type=int, default=0, help="only the first N images (sorted by name)")
    p.add_argument("--runs", type=int, default=3, help="timed runs per image (median reported)")
    p.add_argument("--threads", type=int, default=1, help="OMP_THREAD_LIMIT for tesseract")
    p.add_argument("--lang", default="eng+rus")
    p.add_argument("--style", default="default",
                   help="render the dataset's diagrams in this style first (d2's or another tool's; into the cache)")
    p.add_argument("--out", type=Path, help="write all timings as JSON here")
    args = p.parse_args(argv)
    os.environ["OMP_THREAD_LIMIT"] = str(args.threads)

    from PIL import Image

    from benchmark.extract.ocr import require_tesseract
    from benchmark.extract.pipeline import extract_image
    from benchmark.extract.raster import load_rgb

    require_tesseract()
    images = args.images or sorted((args.data / "diagrams").glob("*.png"))
    if args.limit:
        images = images[:args.limit]
    if args.style != "default" and not args.images:
        from benchmark.extract.cache import default_cache_dir
        from benchmark.extract.runs import style_png

        images = [style_png(png.with_suffix(".d2"), args.style, default_cache_dir() / "renders") for png in images]
    rows = []
    print(f"{'image':<34} {'pixels':>9} {'tesseract s':>11} {'extract s':>10} {'ratio':>6}")
    for png in images:
        tess, ext, stages = [], [], []
        for _ in range(args.runs):
            t0 = time.perf_counter()
            subprocess.run(["tesseract", str(png), "stdout", "-l", args.lang, "tsv"], check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            tess.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            timings: dict[str, float] = {}
            extract_image(load_rgb(png), lang=args.lang, timings=timings)
            ext.append(time.perf_counter() - t0)
            stages.append(timings)
        with Image.open(png) as im:
            pixels = im.size[0] * im.size[1]
        t, e = statistics.median(tess), statistics.median(ext)
        stage_med = {k: statistics.median(s.get(k, 0.0) for s in stages) for k in stages[0]}
        rows.append({"image": png.name, "pixels": pixels, "tesseract_s": t, "extract_s": e, "ratio": e / t,
                     "stages_s": stage_med, "runs": args.runs})
        print(f"{png.stem[:34]:<34} {pixels:>9} {t:>11.3f} {e:>10.3f} {e / t:>6.2f}", flush=True)
    if not rows:
        print("no images")
        return 1
    total_t = sum(r["tesseract_s"] for r in rows)
    total_e = sum(r["extract_s"] for r in rows)
    med_ratio = statistics.median(r["ratio"] for r in rows)
    worst = max(rows, key=lambda r: r["ratio"])
    stages = {k: statistics.median(r["stages_s"].get(k, 0.0) for r in rows) for k in rows[0]["stages_s"]}
    print(f"\n{len(rows)} images, {args.runs} runs each (median per image), OMP_THREAD_LIMIT={args.threads}")
    print(f"  tesseract alone  total {total_t:.2f} s")
    print(f"  extraction       total {total_e:.2f} s")
    print(f"  ratio            median {med_ratio:.2f}, of totals {total_e / total_t:.2f}, "
          f"worst {worst['ratio']:.2f} ({worst['image']})")
    print("  median stage time per image: " + ", ".join(f"{k} {v:.3f} s" for k, v in stages.items()))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"images": rows, "median_ratio": med_ratio, "total_ratio": total_e / total_t,
                                        "threads": args.threads, "runs": args.runs}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
