"""diagqa render: D2 -> PNG with the official d2 binary, recorded in diagrams/renders.json."""
from __future__ import annotations

import argparse
from pathlib import Path

from benchmark.dataset import DEFAULT_ROOT
from benchmark.render import ALL_STYLES, render_dataset, render_file

NAME = "render"
HELP = "render diagrams/*.d2 to PNG with the d2 binary (only missing or stale ones unless --force)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("ids", nargs="*", help="diagram ids (default: all)")
    p.add_argument("--data", type=Path, default=DEFAULT_ROOT, help="dataset directory (default: the bundled one)")
    p.add_argument("--force", action="store_true", help="render even when the PNG is up to date")
    p.add_argument("--style", choices=ALL_STYLES, default="default",
                   help="render style; styles other than default write to --out and are not recorded")
    p.add_argument("--out", type=Path, help="output folder for --style other than default")


def main(args: argparse.Namespace) -> int:
    ddir = args.data / "diagrams"
    if args.style != "default":
        out = args.out or (args.data / "results" / f"renders-{args.style}")
        ids = args.ids or sorted(p.stem for p in ddir.glob("*.d2"))
        for did in ids:
            render_file(ddir / f"{did}.d2", out / f"{did}.png", style=args.style)
        print(f"rendered {len(ids)} diagrams in style {args.style} to {out}")
        return 0
    done = render_dataset(ddir, args.ids or None, force=args.force)
    print(f"rendered {len(done)} diagrams" + (f": {', '.join(done)}" if done else " (all up to date)"))
    return 0
