"""The ``diagqa`` console script: only the command that runs is imported, its output is delivered
whole and the process ends normally (exit status from the command, exit handlers run)."""
from __future__ import annotations

import io
import os
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

from benchmark.cli import build_parser, command_names, main

ROOT = Path(__file__).resolve().parents[1]


def python(code: str, *argv: str, **kw) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("PYTHONUNBUFFERED", None)  # block-buffered output, as by default
    return subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=120,
                          cwd=ROOT, env=env, **kw)


def test_console_script_is_the_cli_run_entry_point():
    (script,) = [e for e in entry_points(group="console_scripts") if e.name == "diagqa"]
    assert script.value == "benchmark.cli:run"


def test_only_the_command_that_runs_is_imported(tmp_path):
    d2 = tmp_path / "one.d2"
    d2.write_text("a -> b\n", encoding="utf-8")
    proc = python("import sys; from benchmark.cli import main; rc = main(sys.argv[1:]); "
                  "print(sorted(m for m in sys.modules if m.startswith('benchmark.commands.'))); "
                  "print(sorted(m for m in ('networkx', 'yaml', 'numpy', 'pandas', 'benchmark.dataset') "
                  "if m in sys.modules)); sys.exit(rc)", "parse", str(d2), "--format", "text")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[:3] == ["node a [rectangle] \"a\"", "node b [rectangle] \"b\"", "edge a -> b"]
    assert lines[3:] == ["['benchmark.commands.parse']", "[]"]


def test_help_lists_every_command(capsys):
    names = command_names()
    assert {"parse", "run", "validate", "card", "render"} <= set(names)
    build_parser([]).print_help()
    listed = capsys.readouterr().out
    for name in names:
        assert f"\n    {name} " in listed, name


def test_a_misspelt_command_lists_the_commands(capsys):
    try:
        main(["pars", "x.d2"])
    except SystemExit as exc:
        assert exc.code == 2
    else:
        raise AssertionError("no usage error")
    err = capsys.readouterr().err
    assert "invalid choice: 'pars'" in err and "'parse'" in err and "'validate'" in err


def test_buffered_output_through_a_pipe_is_delivered_whole(capsys):
    d2 = str(ROOT / "diagrams" / "etl_cdc.d2")
    assert main(["parse", d2]) == 0
    expected = capsys.readouterr().out
    # less than a pipe's buffer: it reaches the pipe only when the process flushes it at exit
    assert 1000 < len(expected.encode()) < io.DEFAULT_BUFFER_SIZE
    proc = python("from benchmark.cli import run; run()", "parse", d2)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == expected


def test_the_console_script_exits_normally_with_the_command_status(tmp_path):
    # exit handlers run: the interpreter shuts down as usual instead of being cut short
    code = ("import atexit, sys; atexit.register(lambda: print('exit handlers ran', file=sys.stderr)); "
            "sys.argv[0] = 'diagqa'; from benchmark.cli import run; run()")
    proc = python(code, "rescore", str(tmp_path))
    assert proc.returncode == 2
    assert proc.stderr.startswith("diagqa rescore: error:") and str(tmp_path) in proc.stderr
    assert proc.stderr.rstrip().endswith("exit handlers ran")
    d2 = tmp_path / "one.d2"
    d2.write_text("a -> b\n", encoding="utf-8")
    proc = python(code, "parse", str(d2))
    assert proc.returncode == 0 and '"src": "a"' in proc.stdout
    assert proc.stderr == "exit handlers ran\n"
