"""The ``diagqa`` console script: it exits at once after a command, with all output delivered."""
from __future__ import annotations

import io
import os
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

from benchmark.cli import main

ROOT = Path(__file__).resolve().parents[1]


def test_console_script_is_the_fast_exit_entry_point():
    (script,) = [e for e in entry_points(group="console_scripts") if e.name == "diagqa"]
    assert script.value == "benchmark.cli:run"


def test_buffered_output_through_a_pipe_is_delivered_whole(capsys):
    assert main(["card"]) == 0
    expected = capsys.readouterr().out
    # less than a pipe's buffer: unless flushed before the process exits, it would never be written
    assert 0 < len(expected.encode()) < io.DEFAULT_BUFFER_SIZE
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # block-buffered, as by default
    proc = subprocess.run([sys.executable, "-m", "benchmark.cli", "card"], capture_output=True, text=True,
                          timeout=120, cwd=ROOT, env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == expected


def test_error_exit_code_and_message_survive_the_fast_exit(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "benchmark.cli", "rescore", str(tmp_path)], capture_output=True,
                          text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 2
    assert proc.stderr.startswith("diagqa rescore: error:") and str(tmp_path) in proc.stderr
