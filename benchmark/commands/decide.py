"""diagqa decide: ACCEPT / REVIEW / REJECT for every sample of a run, written next to it."""
from __future__ import annotations

import argparse
from pathlib import Path

from benchmark.dataset import DEFAULT_ROOT

NAME = "decide"
HELP = "decide ACCEPT / REVIEW / REJECT for every answer of a run (writes decisions.jsonl and decisions.md)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("run_dir", nargs="?", type=Path, default=DEFAULT_ROOT / "results",
                   help="results/<run-id> or a run id (default: the run named in results/LATEST)")
    p.add_argument("--config", type=Path, default=None, help="thresholds (default: configs/decision.yaml)")
    p.add_argument("--judge", action="store_true",
                   help="consult the LLM judge on uncertain text decisions only (composite in the uncertainty window): "
                        "its rows in judge.jsonl, and for samples without one the run's judge: (or --judge-config)")
    p.add_argument("--judge-config", type=Path, default=None, help="YAML with judge: (the endpoint) for --judge")
    p.add_argument("--all-signals", action="store_true",
                   help="compute the text signals of every sample, also those a graph rule decides (the same "
                        "verdicts; slower; adds the graph-against-text comparison)")


def main(args: argparse.Namespace) -> int:
    import sys

    from benchmark.decision.apply import decide_records, write_decisions
    from benchmark.decision.config import load_config
    from benchmark.decision.section import decision_section
    from benchmark.samples import load_samples, run_dir_of

    cfg = load_config(args.config)
    run = load_samples(run_dir_of(args.run_dir, DEFAULT_ROOT / "results"))
    for p in run.problems:
        print(f"diagqa decide: skipped {p}", file=sys.stderr)
    judge = None
    if args.judge or args.judge_config:
        import json

        from benchmark.commands.judge import load_judge_config
        from benchmark.judge.apply import stored_or_asked

        card_path = run.run_dir / "run.json"
        endpoint = load_judge_config(args.judge_config)["judge"] if args.judge_config else \
            (json.loads(card_path.read_text(encoding="utf-8")).get("config") or {}).get("judge") if card_path.exists() else None
        judge = stored_or_asked(run.run_dir, endpoint, lambda msg: print(f"diagqa decide: {msg}", file=sys.stderr))
    decided = decide_records(run.records, cfg, judge=judge, signals="all" if args.all_signals else "needed")
    jpath, mpath = write_decisions(run.run_dir, decided, decision_section(decided.rows, seconds=decided.seconds))
    counts = {v: sum(1 for r in decided.rows if r["verdict"] == v) for v in ("ACCEPT", "REVIEW", "REJECT")}
    print(f"decide: {len(decided.rows)} samples ({decided.texts} with text signals) in {decided.seconds:.2f} s "
          f"(ACCEPT {counts['ACCEPT']}, REVIEW {counts['REVIEW']}, REJECT {counts['REJECT']}) -> {jpath}, {mpath}")
    if judge is not None:
        consulted = [r for r in decided.rows if r.get("judge")]
        changed = sum(r["verdict"] != r["judge"]["heuristic_verdict"] for r in consulted)
        print(f"decide: the judge was consulted on {len(consulted)} uncertain decisions and changed {changed} verdicts")
    return 0
