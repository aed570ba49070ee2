"""diagqa judge: an LLM judge, the citation check and a self-check over a finished run, into its report."""
from __future__ import annotations

import argparse
from pathlib import Path

from benchmark.dataset import DEFAULT_ROOT

NAME = "judge"
HELP = ("label a run's answer claims with an LLM judge (agreement with the structural check), check citations, "
        "self-check answers; writes judge.jsonl, selfcheck.jsonl, judge.json, judge.md and rewrites the report")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("run_dir", nargs="?", type=Path, default=DEFAULT_ROOT / "results",
                   help="results/<run-id> or a run id (default: the run named in results/LATEST)")
    p.add_argument("--config", type=Path, default=None,
                   help="YAML with `judge:` and/or `selfcheck:` (a run config holding them will do; other keys are "
                        "ignored); default: the run's own configuration")
    p.add_argument("--seed", type=int, default=None,
                   help="seed of the sample choice and the bootstrap intervals (default: the run's seed)")
    p.add_argument("--no-report", action="store_true", help="leave report.md and report.html as they are")


def load_judge_config(path: Path) -> dict:
    """``judge`` and ``selfcheck`` of a YAML file (each None when absent); errors name the file and line."""
    import yaml

    from benchmark.errors import InputError

    try:
        text = path.read_text(encoding="utf-8")
        data = yaml.safe_load(text) or {}
    except OSError as exc:
        raise InputError(f"cannot read config: {exc.strerror or exc}", file=str(path)) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise InputError(f"not valid YAML: {getattr(exc, 'problem', exc)}", file=str(path),
                         line=mark.line + 1 if mark else None) from None
    if not isinstance(data, dict):
        raise InputError("a judge config must be a mapping", file=str(path), line=1)
    for key in ("judge", "selfcheck"):
        if data.get(key) is not None and not isinstance(data[key], dict):
            raise InputError(f"{key} must be a mapping of options", file=str(path))
    from benchmark.judge.apply import split_judge_options
    from benchmark.judge.selfcheck import SelfCheckConfig

    if data.get("judge") is not None:   # checked before any request is made
        split_judge_options(data["judge"], where=f"{path}: judge")
    if data.get("selfcheck") is not None:
        SelfCheckConfig.from_mapping(data["selfcheck"], where=f"{path}: selfcheck")
    return {"judge": data.get("judge"), "selfcheck": data.get("selfcheck")}


def run_pass(run_dir: Path, judge: dict | None, selfcheck: dict | None, seed: int, report: bool = True) -> dict:
    """:func:`benchmark.judge.apply.judge_run` with the run locked, then the report rewritten (as
    ``diagqa report`` does) so that its section shows the new numbers."""
    import sys

    from benchmark.judge.apply import judge_run
    from benchmark.rundir import RunLock

    with RunLock(run_dir):
        summary = judge_run(run_dir, judge, selfcheck, seed=seed,
                            say=lambda msg: print(f"diagqa judge: {msg}", file=sys.stderr))
    if report:
        import contextlib
        import io

        from benchmark.commands import report as report_command

        with contextlib.redirect_stdout(io.StringIO()):   # this command says where its output went
            report_command.main(argparse.Namespace(run_dir=run_dir, bootstrap=1000))
    return summary


def main(args: argparse.Namespace) -> int:
    import json

    from benchmark.samples import run_dir_of

    run_dir = run_dir_of(args.run_dir, DEFAULT_ROOT / "results")
    card = {}
    if (run_dir / "run.json").exists():
        card = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    if args.config is not None:
        cfg = load_judge_config(args.config)
    else:
        config = card.get("config") or {}
        cfg = {"judge": config.get("judge"), "selfcheck": config.get("selfcheck")}
    seed = args.seed if args.seed is not None else int(card.get("seed") or 0)
    summary = run_pass(run_dir, cfg["judge"], cfg["selfcheck"], seed, report=not args.no_report)
    parts = []
    j = summary.get("judge")
    if cfg["judge"] is not None and j:
        a = j["all"]
        parts.append(f"judge {j['model']}: {a['judged']} of {a['samples']} samples judged, "
                     f"{sum(a['errors'].values())} errors; {a['claims']} claims compared, kappa {a['kappa']}")
    s = summary.get("selfcheck")
    if cfg["selfcheck"] is not None and s:
        parts.append("self-check: " + "; ".join(f"{n} consistency {b['consistency']}, unstable right "
                                                f"{b['unstable_right']}/{b['right_checked']}"
                                                for n, b in s["answerers"].items()))
    if cfg["judge"] is None and cfg["selfcheck"] is None:
        parts.append("no judge and no self-check configured: citation check only")
    print(f"judge: {'; '.join(parts)} -> {run_dir / 'judge.json'}")
    return 0
