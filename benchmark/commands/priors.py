"""diagqa priors: prior baselines on a dataset -- how much of it can be answered without the diagram."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import yaml

from benchmark.dataset import DEFAULT_ROOT
from benchmark.errors import DiagQAError, InputError

NAME = "priors"
HELP = ("run the prior baselines (majority per type, text cues, keyword and blind without the diagram, "
        "a text-only llm when configured): accuracy table, strongest prior, measured counter-prior")


def _names(text: str) -> list[str]:
    return [n.strip() for n in text.split(",") if n.strip()]


def add_arguments(p: argparse.ArgumentParser) -> None:
    from benchmark.priors import BASELINES

    p.add_argument("--data", type=Path, default=DEFAULT_ROOT, help="dataset directory (default: the bundled one)")
    p.add_argument("--out", type=Path, default=Path("results") / "priors.json",
                   help="JSON file to write (default: results/priors.json)")
    p.add_argument("--baselines", type=_names, metavar="B1,B2",
                   help=f"baselines to run (default: all; known: {', '.join(BASELINES)}); the llm ones run "
                        "only when a model is configured")
    p.add_argument("--config", type=Path, help="a run config whose options.llm configures the llm baselines")
    p.add_argument("--llm-model", help="model name for the llm baselines (or DIAGQA_LLM_MODEL)")
    p.add_argument("--llm-base-url", help="OpenAI-compatible endpoint (or DIAGQA_LLM_BASE_URL)")
    p.add_argument("--llm-api-key-env", help="name of the environment variable holding the API key")


def _llm_options(args: argparse.Namespace) -> dict:
    options: dict = {}
    if args.config:
        try:
            data = yaml.safe_load(args.config.read_text(encoding="utf-8")) or {}
        except (OSError, yaml.YAMLError) as exc:
            raise InputError(f"cannot read run config: {exc}", file=str(args.config)) from exc
        llm = (data.get("options") or {}).get("llm") if isinstance(data, dict) else None
        if llm is not None and not isinstance(llm, dict):
            raise InputError("options.llm must be a mapping", file=str(args.config))
        options.update(llm or {})
    for key, value in (("model", args.llm_model), ("base_url", args.llm_base_url), ("api_key_env", args.llm_api_key_env)):
        if value:
            options[key] = value
    return options


def main(args: argparse.Namespace) -> int:
    from benchmark.priors import BASELINES, render_summary, run_priors
    from benchmark.runner import prepare_dataset

    names = args.baselines or list(BASELINES)
    unknown = [n for n in names if n not in BASELINES]
    if unknown:
        raise DiagQAError(f"unknown prior baselines {', '.join(unknown)}; known: {', '.join(BASELINES)}")
    # the questions a run would score: those that fail the validator's check are reported and left out
    ds, questions, problems = prepare_dataset(args.data)
    for p in problems:
        print(f"skipped: {p}", file=sys.stderr)

    def progress(baseline: str, done: int, total: int) -> None:
        if baseline.startswith("llm") and (done % 50 == 0 or done == total):
            print(f"priors: {baseline} {done}/{total}", file=sys.stderr)

    res = run_priors(ds, names, _llm_options(args), progress=progress, questions=questions)
    for b, why in res.unavailable.items():
        print(f"priors: {b} not run: {why}", file=sys.stderr)
    data = res.to_json()
    data["dataset"] = {"root": str(args.data), "hash": ds.content_hash(), "problems": [str(p) for p in problems]}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(render_summary(res), end="")
    print(f"\nwritten: {args.out}")
    return 0
