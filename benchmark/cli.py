"""The ``diagqa`` command: a thin layer that turns arguments into library calls.

Each sub-command lives in its own module under :mod:`benchmark.commands`, named for the command,
and exposes ``NAME``, ``HELP``, ``add_arguments(parser)`` and ``main(args) -> int``. Modules are
discovered, so adding a command touches one new file. Only the module of the command that runs
is imported (``diagqa parse`` never loads what ``diagqa run`` needs); ``diagqa --help`` imports
them all to list their help lines.
"""
from __future__ import annotations

import argparse
import importlib
import os
import sys

from benchmark import commands
from benchmark.errors import DiagQAError


def command_names() -> list[str]:
    """Every command, from the module names in :mod:`benchmark.commands` (nothing is imported)."""
    names = set()
    for folder in commands.__path__:
        names.update(f[:-3] for f in os.listdir(folder) if f.endswith(".py") and not f.startswith("_"))
    return sorted(names)


def _add_command(sub: argparse._SubParsersAction, name: str) -> None:
    mod = importlib.import_module(f"{commands.__name__}.{name}")
    if mod.NAME != name:
        raise RuntimeError(f"command module {mod.__name__} must be named for its command {mod.NAME!r}")
    p = sub.add_parser(mod.NAME, help=mod.HELP, description=mod.HELP)
    mod.add_arguments(p)
    p.set_defaults(_main=mod.main)


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The argument parser. When ``argv`` names a command first, only that command's module is
    imported; otherwise (no command, ``--help``, a misspelt name) every command is added."""
    parser = argparse.ArgumentParser(prog="diagqa", description="Diagram-QA benchmark harness")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    names = command_names()
    first = argv[0] if argv else None
    for name in [first] if first in names else names:
        _add_command(sub, name)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser(argv).parse_args(argv)
    try:
        return int(args._main(args) or 0)
    except DiagQAError as exc:
        print(f"diagqa {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("diagqa: interrupted", file=sys.stderr)
        return 130


def run() -> None:
    """The ``diagqa`` console script: :func:`main`, its return value as the exit status."""
    sys.exit(main())


if __name__ == "__main__":  # pragma: no cover
    run()
