"""The ``diagqa`` command: a thin layer that turns arguments into library calls.

Each sub-command lives in its own module under :mod:`benchmark.commands` and
exposes ``NAME``, ``HELP``, ``add_arguments(parser)`` and ``main(args) -> int``.
Modules are discovered, so adding a command touches one new file.
"""
from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys

from benchmark import commands
from benchmark.errors import DiagQAError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="diagqa", description="Diagram-QA benchmark harness")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        mod = importlib.import_module(f"{commands.__name__}.{info.name}")
        p = sub.add_parser(mod.NAME, help=mod.HELP, description=mod.HELP)
        mod.add_arguments(p)
        p.set_defaults(_main=mod.main)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args._main(args) or 0)
    except DiagQAError as exc:
        print(f"diagqa {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("diagqa: interrupted", file=sys.stderr)
        return 130


def run() -> None:
    """The ``diagqa`` console script: :func:`main`, then exit with its code."""
    sys.exit(main())


if __name__ == "__main__":  # pragma: no cover
    run()
