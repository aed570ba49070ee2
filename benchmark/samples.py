"""Reading a run's ``samples.jsonl`` as plain dicts, for the commands that work on a finished run.

A line that is not a JSON object is reported (file and line) and left out; it never loses the
rest of the run. :func:`run_dir_of` accepts a run directory, a results directory with ``LATEST``,
or a run id under ``results/``.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from benchmark.errors import DiagQAError

SAMPLES = "samples.jsonl"


@dataclass
class RunSamples:
    """The records of one run, and the lines that could not be read (``"file:line: why"``)."""

    run_dir: Path
    records: list[dict[str, Any]]
    problems: list[str] = field(default_factory=list)


def run_dir_of(path: Path | str, results: Path | str | None = None) -> Path:
    """The run directory ``path`` names: itself, the run ``LATEST`` names in it, or ``results/<path>``."""
    p = Path(path)
    if (p / SAMPLES).exists():
        return p
    if (p / "LATEST").exists():
        return p / (p / "LATEST").read_text(encoding="utf-8").strip()
    if results is not None and (Path(results) / p / SAMPLES).exists():
        return Path(results) / p
    raise DiagQAError(f"{p} is not a run directory (no {SAMPLES}) nor a results directory (no LATEST)")


def parse_lines(lines: Iterable[str], where: str) -> tuple[list[dict[str, Any]], list[str]]:
    """JSON objects of ``lines`` and a problem per bad line.

    >>> parse_lines(['{"sample_id": "a"}', '', 'oops', '[1]'], "s.jsonl")
    ([{'sample_id': 'a'}], ['s.jsonl:3: not JSON (Expecting value)', 's.jsonl:4: not a JSON object'])
    """
    out: list[dict[str, Any]] = []
    problems: list[str] = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(f"{where}:{n}: not JSON ({exc.msg})")
            continue
        if not isinstance(rec, dict):
            problems.append(f"{where}:{n}: not a JSON object")
            continue
        out.append(rec)
    return out, problems


def load_samples(run: Path | str) -> RunSamples:
    """Every record of the run's ``samples.jsonl`` (bad lines reported, not fatal)."""
    run_dir = run_dir_of(run)
    path = run_dir / SAMPLES
    with open(path, encoding="utf-8") as fh:
        records, problems = parse_lines(fh, str(path))
    return RunSamples(run_dir, records, problems)
