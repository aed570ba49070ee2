"""diagqa review: export a review sheet of a run, import reviewers' labels and report agreement."""
from __future__ import annotations

import argparse
from pathlib import Path

from benchmark.dataset import DEFAULT_ROOT

NAME = "review"
HELP = "human review: export a stratified review sheet (CSV + HTML form), import filled sheets and report agreement"

REVIEW_DIR = "review"


def add_arguments(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="review_command", metavar="ACTION")
    sub.required = True
    ex = sub.add_parser("export", help="write review/sheet.csv and review/sheet.html into the run directory")
    ex.add_argument("run_dir", type=Path, help="results/<run-id> or a run id")
    ex.add_argument("--n", type=int, default=60, help="samples to review (default 60)")
    ex.add_argument("--stratify", default="guess_class",
                    help="field whose values are the strata: a metrics key or a record key (default guess_class)")
    ex.add_argument("--seed", type=int, default=0, help="seed of the sample (default 0)")
    ex.add_argument("--out", type=Path, default=None, help="folder for the sheet (default: <run>/review)")
    im = sub.add_parser("import", help="agreement of filled sheet(s) with the automatic labels (and each other)")
    im.add_argument("run_dir", type=Path, help="results/<run-id> or a run id")
    im.add_argument("sheets", type=Path, nargs="+", metavar="FILE", help="one or two filled CSV sheets")
    im.add_argument("--seed", type=int, default=0, help="seed of the bootstrap intervals (default 0)")


def _export(args: argparse.Namespace) -> int:
    import json

    from benchmark.review.sampling import stratified_sample
    from benchmark.review.sheet import diagram_png, sheet_rows, write_csv, write_html
    from benchmark.samples import load_samples, run_dir_of

    run = load_samples(run_dir_of(args.run_dir, DEFAULT_ROOT / "results"))
    chosen = stratified_sample(run.records, args.n, args.stratify, args.seed)
    rows = sheet_rows(chosen)
    out = args.out or run.run_dir / REVIEW_DIR
    out.mkdir(parents=True, exist_ok=True)
    root = DEFAULT_ROOT
    card = run.run_dir / "run.json"
    if card.exists():
        root = Path((json.loads(card.read_text(encoding="utf-8")).get("dataset") or {}).get("root") or root)
    images = {d: diagram_png(root / "diagrams" / f"{d}.png") for d in sorted({r["diagram_id"] for r in rows})}
    write_csv(out / "sheet.csv", rows)
    write_html(out / "sheet.html", rows, images, f"Review of run {run.run_dir.name}")
    (out / "sample.json").write_text(json.dumps({"n": len(rows), "stratify": args.stratify, "seed": args.seed,
                                                 "sample_ids": [r["sample_id"] for r in rows]}, indent=1) + "\n",
                                     encoding="utf-8")
    print(f"review export: {len(rows)} samples stratified by {args.stratify} (seed {args.seed}) -> "
          f"{out / 'sheet.csv'}, {out / 'sheet.html'}")
    return 0


def _import(args: argparse.Namespace) -> int:
    from benchmark.errors import DiagQAError
    from benchmark.review.report import review_section
    from benchmark.review.sheet import read_labels
    from benchmark.samples import load_samples, run_dir_of

    if len(args.sheets) > 2:
        raise DiagQAError("review import takes one or two sheets")
    run = load_samples(run_dir_of(args.run_dir, DEFAULT_ROOT / "results"))
    records = {str(r.get("sample_id")): r for r in run.records}
    sheets = [(p.name, read_labels(p)) for p in args.sheets]
    text = review_section(records, sheets, seed=args.seed)
    out = run.run_dir / REVIEW_DIR
    out.mkdir(parents=True, exist_ok=True)
    (out / "agreement.md").write_text(text, encoding="utf-8")
    print(text)
    print(f"review import: -> {out / 'agreement.md'}")
    return 0


def main(args: argparse.Namespace) -> int:
    return _export(args) if args.review_command == "export" else _import(args)
