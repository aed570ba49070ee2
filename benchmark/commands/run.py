"""diagqa run: the benchmark -- variants x answerers x questions -> results/<run-id>/ (what `make run` calls)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

NAME = "run"
HELP = "run variants x answerers over a dataset and write results/<run-id>/ (samples, summary, report, run card)"


def _names(text: str) -> list[str]:
    return [n.strip() for n in text.split(",") if n.strip()]


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--data", type=Path, help="dataset directory (diagrams/ + annotations/); default: the bundled one")
    p.add_argument("--config", type=Path, help="YAML run config (keys as in configs/default.yaml)")
    p.add_argument("--variants", type=_names, metavar="V1,V2",
                   help="finder+source+selector names, comma-separated (e.g. oracle+d2+khop2,oracle+d2+bm25-8)")
    p.add_argument("--answerers", type=_names, metavar="A1,A2", help="answerer names, comma-separated")
    p.add_argument("--seed", type=int, help="seed recorded in the run card (bootstrap intervals)")
    p.add_argument("--workers", type=int, help="worker processes over diagrams (default: one per core)")
    p.add_argument("--limit", type=int, help="run at most this many questions")
    p.add_argument("--sample", type=int, metavar="N",
                   help="a stratified sample of N questions (the same share of every question type, chosen by --seed; "
                        "a smaller sample is part of a larger one with the same seed)")
    p.add_argument("--run-id", help="name of the run directory (default: <UTC time>-<config hash>)")
    p.add_argument("--out", type=Path, help="results directory (default: results/)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--max-error-share", type=float, default=0.1, metavar="SHARE",
                   help="exit with status 3 when more than this share of an answerer's samples failed "
                        "(failed call, unparsable reply, not attempted); default 0.1")
    p.add_argument("--list", action="store_true", help="list the registered finders, sources, selectors, answerers")


def _list() -> int:
    from benchmark.plugins import load_all
    from benchmark.stages import ANSWERERS, FINDERS, SELECTORS, SOURCES

    load_all()
    for title, reg in (("finders", FINDERS), ("sources", SOURCES), ("selectors", SELECTORS), ("answerers", ANSWERERS)):
        print(f"{title}:")
        for name, doc in reg.describe().items():
            print(f"  {name:14s} {doc}")
    return 0


def main(args: argparse.Namespace) -> int:
    if args.list:
        return _list()
    from benchmark.runner import run
    from benchmark.spec import build_spec

    spec = build_spec(args.config, data=str(args.data) if args.data else None, variants=args.variants,
                      answerers=args.answerers, seed=args.seed, workers=args.workers, limit=args.limit, sample=args.sample,
                      run_id=args.run_id, out=str(args.out) if args.out else None)
    result = run(spec, progress=not args.no_progress)
    card = result.card
    print(f"run {result.run_id}: {card['samples']} samples ({card['sample_errors']} with a stage error, "
          f"{len(result.skipped)} skipped stage(s), {len(result.problems)} dataset problem(s)) "
          f"in {card['wall_s']['total']:.1f} s", file=sys.stderr)
    print(result.run_dir / "report.html")
    failing = failed_answerers(result.records, args.max_error_share)
    for line in failing:
        print(f"diagqa run: {line}", file=sys.stderr)
    return 3 if failing else 0


def failure_counts(records: list) -> dict[str, tuple[int, int, dict[str, int]]]:
    """Per answerer: (samples it was asked about, samples whose answer failed, failures by kind).

    A sample fails when the answerer raised or returned an error (``Answer.error``); samples that
    never reached the answerer (a finder or selector error) are not its failures.
    """
    out: dict[str, tuple[int, int, dict[str, int]]] = {}
    for r in records:
        stage = (r.error or {}).get("stage")
        if stage is not None and stage not in ("answer", "score"):
            continue
        asked, failed, kinds = out.get(r.answerer, (0, 0, {}))
        kind = None
        if stage == "answer":
            kind = "raised"
        elif r.answer is not None and r.answer.get("error"):
            kind = r.answer.get("error_kind") or "error"
        if kind is not None:
            kinds = dict(kinds, **{kind: kinds.get(kind, 0) + 1})
        out[r.answerer] = (asked + 1, failed + (kind is not None), kinds)
    return out


def failed_answerers(records: list, max_share: float) -> list[str]:
    """One line per answerer with more than ``max_share`` of its samples failed."""
    lines = []
    for name, (asked, failed, kinds) in sorted(failure_counts(records).items()):
        if asked and failed / asked > max_share:
            what = ", ".join(f"{k} {n}" for k, n in sorted(kinds.items(), key=lambda kv: (-kv[1], kv[0])))
            lines.append(f"answerer {name}: {failed} of {asked} samples failed ({failed / asked:.0%}: {what}), "
                         f"more than --max-error-share {max_share:g}")
    return lines
