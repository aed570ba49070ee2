"""diagqa compare: two runs on the same questions, with paired statistics (A/B tests of models or retrievers)."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

NAME = "compare"
HELP = ("compare two runs question by question: per variant x answerer in both, A - B for accuracy, grounded "
        "accuracy, sufficiency (McNemar), SRR and F1 (paired bootstrap over diagrams), Holm-corrected; "
        "or, with --baseline BASE RUN, gate RUN against a recorded baseline (exit 1 on a real regression)")

METRICS = ("accuracy", "grounded_accuracy", "sufficiency", "srr", "f1")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("run_a", type=Path, help="results/<run-id> of run A (or a results directory with LATEST); "
                   "with --baseline, the run to gate")
    p.add_argument("run_b", type=Path, nargs="?", default=None, help="results/<run-id> of run B (not with --baseline)")
    gate = p.add_argument_group("regression gate (diagqa baseline record makes the baseline)")
    gate.add_argument("--baseline", type=Path, default=None, metavar="BASE",
                      help="a baseline file: exit 1 when accuracy, grounded accuracy or faithfulness of a variant x "
                           "answerer drops by more than --max-drop and a paired test says the drop is real, or when "
                           "the run does not cover the baseline")
    gate.add_argument("--max-drop", type=float, default=None, metavar="D",
                      help="largest tolerated drop of a metric's mean on the shared questions (default 0.05)")
    gate.add_argument("--alpha", type=float, default=None,
                      help="significance level of the paired tests, after Holm's correction (default 0.05)")
    gate.add_argument("--max-missing", type=float, default=None, metavar="F",
                      help="largest share of a group's measured baseline questions that may be missing or "
                           "unmeasured in the run (default 0.05)")
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


def _gate(args: argparse.Namespace) -> int:
    from benchmark import baseline as bl
    from benchmark.records import read_samples
    from benchmark.rescore import resolve_run_dir
    from benchmark.runner import SAMPLES

    base = bl.load_baseline(args.baseline)
    run_dir = resolve_run_dir(args.run_a)
    result = bl.check(base, bl.outcomes(read_samples(run_dir / SAMPLES)),
                      max_drop=bl.MAX_DROP if args.max_drop is None else args.max_drop,
                      alpha=bl.ALPHA if args.alpha is None else args.alpha,
                      max_missing=bl.MAX_MISSING if args.max_missing is None else args.max_missing,
                      seed=args.seed, n_boot=args.bootstrap)
    print(bl.render(result, baseline=str(args.baseline), run=str(run_dir)))
    if args.json is not None:
        text = json.dumps(bl.as_json(result), indent=1, ensure_ascii=False)
        if str(args.json) == "-":
            sys.stdout.write(text + "\n")
        else:
            args.json.write_text(text + "\n", encoding="utf-8")
    return 0 if result.passed else 1


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
    if args.baseline is not None:
        if args.run_b is not None:
            raise DiagQAError("with --baseline give one run (the run to gate), not two")
        return _gate(args)
    gate_only = [f for f, v in (("--max-drop", args.max_drop), ("--alpha", args.alpha),
                                ("--max-missing", args.max_missing)) if v is not None]
    if gate_only:
        raise DiagQAError(f"{', '.join(gate_only)} only apply with --baseline")
    if args.run_b is None:
        raise DiagQAError("compare needs two runs (A and B), or one run and --baseline BASE")
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
