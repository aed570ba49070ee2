"""diagqa card: the dataset card's statistics, printed or written into annotations/README.md."""
from __future__ import annotations

import argparse
from pathlib import Path

from benchmark.card import card_stats, current_section, render_markdown, replace_section
from benchmark.dataset import DEFAULT_ROOT, load_dataset
from benchmark.errors import DiagQAError, InputError

NAME = "card"
HELP = "print the dataset card's statistics as markdown; --write updates annotations/README.md"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--data", type=Path, default=DEFAULT_ROOT, help="dataset directory (default: the bundled one)")
    p.add_argument("--write", action="store_true",
                   help="replace the text between <!-- card:begin --> and <!-- card:end --> in annotations/README.md")


def main(args: argparse.Namespace) -> int:
    ds, _ = load_dataset(args.data)
    section = render_markdown(card_stats(ds))
    if not args.write:
        print(section, end="")
        return 0
    readme = args.data / "annotations" / "README.md"
    if not readme.exists():
        raise DiagQAError(f"no dataset card at {readme}")
    text = readme.read_text(encoding="utf-8")
    try:
        new = replace_section(text, section)
    except ValueError as exc:
        raise InputError(str(exc), file=str(readme)) from exc
    if current_section(text) == section:
        print(f"{readme}: card is up to date")
        return 0
    readme.write_text(new, encoding="utf-8")
    print(f"{readme}: card updated")
    return 0
