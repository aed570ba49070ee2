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
    p.add_argument("--executor", choices=("local", "ray"),
                   help="where the per-diagram work runs: local (default; --workers processes) or ray (--workers actors "
                        "on a Ray cluster)")
    p.add_argument("--address", metavar="ray://HOST:PORT|auto",
                   help="the Ray cluster to join (with --executor ray); without it a cluster is started for the run")
    p.add_argument("--limit", type=int, help="run at most this many questions")
    p.add_argument("--sample", type=int, metavar="N",
                   help="a stratified sample of N questions (the same share of every question type, chosen by --seed; "
                        "a smaller sample is part of a larger one with the same seed)")
    p.add_argument("--run-id", help="name of the run directory (default: <UTC time>-<config hash>)")
    p.add_argument("--out", type=Path, help="results directory (default: results/)")
    p.add_argument("--overwrite", action="store_true",
                   help="replace the run already in results/<run-id> (without it such a run is refused)")
    p.add_argument("--resume", metavar="RUN",
                   help="finish a stopped run: a run id in the results directory, or a path with a '/' to a run directory; only its "
                        "missing samples are run (its own configuration is used; --workers and --executor may differ)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--max-error-share", type=float, default=0.1, metavar="SHARE",
                   help="exit with status 3 when more than this share of an answerer's samples failed "
                        "(failed call, unparsable reply, not attempted); default 0.1")
    p.add_argument("--allow-outside-imports", action="store_true",
                   help="let D2 imports read files outside the dataset folder (refused by default)")
    p.add_argument("--list", action="store_true",
                   help="list the registered finders, sources, selectors, answerers (as written in a variant: "
                        "khop<k>, bm25-<k>)")


def _list() -> int:
    from benchmark.plugins import load_all
    from benchmark.stages import ANSWERERS, FINDERS, SELECTORS, SOURCES

    load_all()
    for title, reg in (("finders", FINDERS), ("sources", SOURCES), ("selectors", SELECTORS), ("answerers", ANSWERERS)):
        print(f"{title}:")
        forms, docs = reg.forms(), reg.describe()
        width = max(14, *(len(f) for f in forms.values()))
        for name, doc in docs.items():
            example = reg.example(name)
            print(f"  {forms[name]:{width}s} {doc}" + (f" (e.g. {example})" if example else ""))
    print("A variant is finder+source+selector, e.g. oracle+d2+bm25-8.")
    return 0


def _resume_dir(args: argparse.Namespace) -> Path:
    """``--resume RUN``: a path when it has a ``/`` (``results/x``), else a run id in ``--out`` (default results/)."""
    from benchmark.dataset import DEFAULT_ROOT
    from benchmark.errors import DiagQAError
    from benchmark.rundir import run_dir_for

    text = str(args.resume)
    path = Path(text) if "/" in text else run_dir_for(args.out or DEFAULT_ROOT / "results", text)
    if not path.is_dir():
        raise DiagQAError(f"no run to resume at {path}")
    return path


def main(args: argparse.Namespace) -> int:
    if args.list:
        return _list()
    from benchmark.errors import DiagQAError
    from benchmark.runner import RunInterrupted, resume, run
    from benchmark.spec import build_spec

    try:
        if args.resume:
            fixed = [f"--{n.replace('_', '-')}" for n in ("data", "config", "variants", "answerers", "seed", "limit",
                                                           "sample", "run_id") if getattr(args, n) is not None]
            if fixed or args.overwrite:
                raise DiagQAError(f"--resume runs the stopped run as it was configured: {', '.join(fixed or ['--overwrite'])} "
                                  "cannot be given with it")
            result = resume(_resume_dir(args), workers=args.workers, progress=not args.no_progress,
                            executor=args.executor, address=args.address)
        else:
            spec = build_spec(args.config, data=str(args.data) if args.data else None, variants=args.variants,
                              answerers=args.answerers, seed=args.seed, workers=args.workers, limit=args.limit,
                              sample=args.sample, run_id=args.run_id, out=str(args.out) if args.out else None,
                              executor=args.executor, address=args.address,
                              allow_outside_imports=True if args.allow_outside_imports else None)
            result = run(spec, progress=not args.no_progress, overwrite=args.overwrite)
    except RunInterrupted as exc:
        print(f"diagqa run: interrupted: {exc}", file=sys.stderr)
        return 130
    card = result.card
    print(f"run {result.run_id}: {card['samples']} samples ({card['sample_errors']} with a stage error, "
          f"{len(result.skipped)} skipped stage(s), {len(result.problems)} dataset problem(s)) "
          f"in {card['wall_s']['total']:.1f} s", file=sys.stderr)
    failing = failed_answerers(result.answer_failures, args.max_error_share)
    for line in failing:
        print(f"diagqa run: {line}", file=sys.stderr)
    if result.failures:  # no sample, or every sample of an answerer failed: the run itself failed
        for why in result.failures:
            print(f"diagqa run: failed: {why}", file=sys.stderr)
        print(f"diagqa run: results/LATEST not moved; the failed run is in {result.run_dir}", file=sys.stderr)
        return 1
    config = card.get("config") or {}
    if config.get("judge") is not None or config.get("selfcheck") is not None:   # the run config's judge: / selfcheck:
        from benchmark.commands.judge import run_pass

        summary = run_pass(result.run_dir, config.get("judge"), config.get("selfcheck"), int(card.get("seed") or 0))
        print(f"diagqa run: judge and self-check written to {result.run_dir / 'judge.json'}"
              + (f" (judge kappa {summary['judge']['all']['kappa']})" if summary.get("judge") else ""), file=sys.stderr)
    print(result.run_dir / "report.html")
    return 3 if failing else 0


def failed_answerers(counts: dict[str, tuple[int, int, dict[str, int]]], max_share: float) -> list[str]:
    """One line per answerer with more than ``max_share`` of its samples failed, from its counts (samples that
    reached it, samples it failed on, failures by kind: :attr:`benchmark.runner.RunResult.answer_failures`).

    >>> failed_answerers({"llm": (10, 3, {"http_error": 2, "timeout": 1}), "solver": (10, 0, {})}, 0.1)
    ['answerer llm: 3 of 10 samples failed (30%: http_error 2, timeout 1), more than --max-error-share 0.1']
    """
    lines = []
    for name, (asked, failed, kinds) in sorted(counts.items()):
        if asked and failed / asked > max_share:
            what = ", ".join(f"{k} {n}" for k, n in sorted(kinds.items(), key=lambda kv: (-kv[1], kv[0])))
            lines.append(f"answerer {name}: {failed} of {asked} samples failed ({failed / asked:.0%}: {what}), "
                         f"more than --max-error-share {max_share:g}")
    return lines
