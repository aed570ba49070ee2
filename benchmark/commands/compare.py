"""diagqa compare: two runs on the same questions, with paired statistics (A/B tests of models or retrievers)."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

NAME = "compare"
HELP = ("compare two runs question by question: per variant x answerer in both, A - B for accuracy, grounded "
        "accuracy, sufficiency (McNemar), SRR and F1 (paired bootstrap over diagrams), Holm-corrected")

METRICS = ("accuracy", "grounded_accuracy", "sufficiency", "srr", "f1")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("run_a", type=Path, help="results/<run-id> of run A (or a results directory with LATEST)")
    p.add_argument("run_b", type=Path, help="results/<run-id> of run B")
    p.add_argument("--json", type=Path, default=None, metavar="PATH", help="also write the comparison as JSON ('-': stdout)")
    p.add_argument("--bootstrap", type=int, default=1000, metavar="N", help="bootstrap resamples (default 1000)")
    p.add_argument("--seed", type=int, default=0, help="seed of the bootstrap (default 0)")


def _cell(row: dict, metric: str) -> str:
    from benchmark.report.tables import fmt

    diff = row.get(f"{metric}_diff")
    if diff is None:
        return "–"
    p = row.get(f"{metric}_p_holm")
    p_text = "–" if p is None else "<0.001" if p < 0.001 else f"{p:.3f}"
    return (f"{fmt(row[f'{metric}_a'])}/{fmt(row[f'{metric}_b'])} {diff:+.2f} "
            f"[{fmt(row[f'{metric}_diff_low'])}, {fmt(row[f'{metric}_diff_high'])}] p={p_text}")


def main(args: argparse.Namespace) -> int:
    from benchmark.errors import DiagQAError
    from benchmark.records import read_samples
    from benchmark.report.aggregate import frame
    from benchmark.report.comparison import compare_runs
    from benchmark.report.tables import Table, to_markdown
    from benchmark.rescore import resolve_run_dir
    from benchmark.runner import SAMPLES

    if args.bootstrap < 1:
        raise DiagQAError(f"--bootstrap must be at least 1, got {args.bootstrap}")
    dirs = [resolve_run_dir(p) for p in (args.run_a, args.run_b)]
    a, b = (frame(read_samples(d / SAMPLES)) for d in dirs)
    t = compare_runs(a, b, seed=args.seed, n_boot=args.bootstrap)
    if not len(t):
        raise DiagQAError(f"{dirs[0]} and {dirs[1]} share no variant x answerer: nothing to compare")
    rows = [dict(r) for _, r in t.iterrows()]
    table = Table(f"A = {dirs[0].name}, B = {dirs[1].name}: A/B means, A − B [95 % CI over diagrams], Holm p",
                  ["variant", "answerer", "pairs", *METRICS],
                  [[r["variant"], r["answerer"], str(r["pairs"]) + (f" (+{r['only_a']} A only, +{r['only_b']} B only)"
                                                                     if r["only_a"] or r["only_b"] else "")]
                   + [_cell(r, m) for m in METRICS] for r in rows])
    print(table.caption)
    print(to_markdown(table))
    if args.json is not None:
        doc = {"run_a": str(dirs[0]), "run_b": str(dirs[1]), "seed": args.seed, "bootstrap": args.bootstrap,
               "tests": {"accuracy": "mcnemar", "grounded_accuracy": "mcnemar", "sufficiency": "mcnemar",
                         "srr": "paired cluster bootstrap", "f1": "paired cluster bootstrap"},
               "rows": [{k: (None if v is None else v) for k, v in r.items()} for r in rows]}
        text = json.dumps(doc, indent=1, ensure_ascii=False, default=lambda v: v.item() if hasattr(v, "item") else str(v))
        if str(args.json) == "-":
            sys.stdout.write(text + "\n")
        else:
            args.json.write_text(text + "\n", encoding="utf-8")
            print(f"compare: {args.json}")
    return 0
