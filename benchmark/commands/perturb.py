"""diagqa perturb: counterfactual pairs -- per question, a minimally edited diagram on which the answer flips."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from benchmark.dataset import DEFAULT_ROOT

NAME = "perturb"
HELP = ("generate counterfactual pairs: per question, one edge removed, reversed or relabelled (or added, or, "
        "for container membership, the node moved) so that the reference solver's answer flips; writes a "
        "validated dataset split (usable with --data)")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--data", type=Path, default=DEFAULT_ROOT, help="dataset to perturb (default: the bundled one)")
    p.add_argument("--out", type=Path, required=True, help="folder of the generated split (e.g. data/generated)")
    p.add_argument("--seed", type=int, default=0, help="seed of the choice among equally good edits (default 0)")
    p.add_argument("--diagrams", help="only these diagram ids, comma-separated")
    p.add_argument("--no-render", action="store_true",
                   help="no PNGs: check each edited file with `d2 validate` instead of rendering it")
    p.add_argument("--no-originals", action="store_true", help="do not copy the original diagrams into the split")


def main(args: argparse.Namespace) -> int:
    from benchmark.errors import DiagQAError
    from benchmark.generated import plan_split, write_split
    from benchmark.runner import prepare_dataset
    from benchmark.validate import validate_path

    ds, questions, problems = prepare_dataset(args.data)
    for p in problems:
        print(f"skipped: {p}", file=sys.stderr)
    if args.diagrams:
        wanted = {d.strip() for d in args.diagrams.split(",") if d.strip()}
        unknown = sorted(wanted - set(ds.diagrams))
        if unknown:
            raise DiagQAError(f"not diagrams of {args.data}: {', '.join(unknown)}")
        questions = [q for q in questions if q.diagram in wanted]
        ds.diagrams = {k: v for k, v in ds.diagrams.items() if k in wanted}
    plan = plan_split(ds, questions, seed=args.seed)
    print(f"perturb: {len(plan.pairs)} pairs in {len(plan.texts)} edited diagrams; writing {args.out}", file=sys.stderr)
    data = write_split(ds, plan, args.out, render=not args.no_render, originals=not args.no_originals)
    _, bad = validate_path(args.out, check_renders=not args.no_render)
    for p in bad:
        print(f"error: {p}", file=sys.stderr)
    share = data["share_with_pair"]
    print(f"questions with a counterfactual pair: {data['with_pair']} of {data['questions']}"
          + (f" ({100 * share:.1f} %)" if share is not None else "")
          + f"; on the certificate (pivotal): {data['pivotal']}; edits: "
          + ", ".join(f"{k} {v}" for k, v in data["by_edit"].items()))
    for t, c in data["by_type"].items():
        print(f"  {t}: {c['with_pair']} of {c['questions']}")
    print(f"validate {args.out}: " + ("ok" if not bad else f"{len(bad)} problem(s)"))
    return 1 if bad else 0
