"""How tall the diagrams' labels are when a vision model sees them, per diagram.

For every diagram (or the ids given): the PNG's size and aspect ratio, the height of its smallest
label in the PNG (the font size, measured from d2's SVG of the same file: see
:mod:`benchmark.image_input`), that height when the whole PNG is scaled to the stated input size
(1568 px long side, 1.15 MP: what a model does to a PNG sent as it is), and, with the tiling the
``llm`` answerer uses by default, the number of tiles, their grid and the label height each tile
carries. A Markdown table, then a summary; ``--json`` writes the rows too.

    .venv/bin/python scripts/label_legibility.py                     # the bundled dataset
    .venv/bin/python scripts/label_legibility.py cicd_ru_deploy state_order --json out.json
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmark import image_input  # noqa: E402
from benchmark.dataset import DEFAULT_ROOT  # noqa: E402


def row(d2: Path, png: Path) -> dict:
    w, h = image_input.png_size(png)
    plan = image_input.plan_for(png, d2)
    whole = image_input.fit_scale(w, h)
    return {"diagram": d2.stem, "width": w, "height": h, "aspect": round(max(w, h) / min(w, h), 2),
            "png_bytes": png.stat().st_size,
            "label_px_png": None if plan.label_px is None else round(plan.label_px, 1),
            "label_px_whole": None if plan.label_px is None else round(plan.label_px * whole, 1),
            "tiles": plan.tiles, "grid": "x".join(map(str, plan.grid)),
            "label_px_tiled": None if plan.label_px_input is None else round(plan.label_px_input, 1),
            "notes": "; ".join(plan.notes)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("ids", nargs="*", help="diagram ids (default: every diagram)")
    ap.add_argument("--data", type=Path, default=DEFAULT_ROOT, help="dataset directory")
    ap.add_argument("--json", type=Path, help="also write the rows here")
    args = ap.parse_args(argv)
    folder = args.data / "diagrams"
    ids = args.ids or sorted(p.stem for p in folder.glob("*.d2"))
    rows = [row(folder / f"{i}.d2", folder / f"{i}.png") for i in ids]
    print(f"Input size: at most {image_input.LONG_SIDE} px on the long side and {image_input.MAX_PIXELS:,} pixels "
          f"per image; tiles at most {image_input.MAX_ASPECT:g}:1, labels aimed at {image_input.MIN_LABEL_PX:g} px, "
          f"at most {image_input.MAX_TILES} tiles.\n")
    print("| diagram | PNG (px) | aspect | label px in PNG | label px, whole PNG at input size | tiles (rows x cols) "
          "| label px per tile | notes |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['diagram']} | {r['width']}x{r['height']} | {r['aspect']:g} | {r['label_px_png']} | {r['label_px_whole']} "
              f"| {r['tiles']} ({r['grid']}) | {r['label_px_tiled']} | {r['notes']} |")
    wide = [r for r in rows if r["aspect"] > 4]
    whole = [r["label_px_whole"] for r in rows if r["label_px_whole"] is not None]
    tiled = [r["label_px_tiled"] for r in rows if r["label_px_tiled"] is not None]
    print(f"\n{len(rows)} diagrams; {len(wide)} more elongated than 4:1. Smallest label at the input size: "
          f"whole PNG median {statistics.median(whole):.1f} px (min {min(whole):.1f}), tiled median "
          f"{statistics.median(tiled):.1f} px (min {min(tiled):.1f}); tiles per diagram median "
          f"{statistics.median(r['tiles'] for r in rows):g}, max {max(r['tiles'] for r in rows)}.")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
