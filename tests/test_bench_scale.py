"""``scripts/bench_scale.py``'s memory measurement: a child's peak is its own, read while it runs."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.scripts_loaded import load_script

pytestmark = pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc")


def _bench():
    return load_script("bench_scale")


def test_the_largest_childs_peak_is_read_from_the_running_child_not_the_parent():
    bench = _bench()
    ballast = bytearray(120 * 2**20)  # this process is large; a program it starts is not
    ballast[::4096] = b"x" * len(ballast[::4096])
    small = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    big = subprocess.Popen([sys.executable, "-c", "b = bytearray(60 * 2**20); b[::4096] = b'x' * len(b[::4096]); "
                            "print('ready', flush=True); import time; time.sleep(30)"], stdout=subprocess.PIPE, text=True)
    try:
        assert big.stdout.readline().strip() == "ready"
        pss, child = bench._tree(os.getpid())
        assert 60 <= child < 110        # the big child's own peak, not this process's 120 MB and more
        assert pss >= 120 + 60          # the tree holds both
        big.kill()
        big.wait()
        time.sleep(0.2)
        _, after = bench._tree(os.getpid())
        assert after < 60               # only the small child is left
    finally:
        for p in (small, big):
            p.kill()
            p.wait()
    del ballast


def test_code_from_another_checkout_is_what_every_process_of_a_measurement_imports(tmp_path, monkeypatch):
    """``--code DIR`` measures DIR's ``benchmark`` package: the measured run's own process and its pool's
    workers (started by the forkserver, which imports the script again) all import it, not this checkout's."""
    import argparse
    import shutil

    bench = _bench()
    checkout = tmp_path / "checkout"
    shutil.copytree(bench.ROOT / "benchmark", checkout / "benchmark",
                    ignore=shutil.ignore_patterns("__pycache__"))
    log = tmp_path / "imports.log"
    with (checkout / "benchmark" / "__init__.py").open("a", encoding="utf-8") as fh:
        fh.write("\nimport os as _os\n"
                 "with open(_os.environ['BENCH_IMPORT_LOG'], 'a', encoding='utf-8') as _f:\n"
                 "    _f.write(f'{_os.getpid()} {__file__}\\n')\n")
    monkeypatch.setenv("BENCH_IMPORT_LOG", str(log))
    data = tmp_path / "data"
    n = bench.make_dataset(data, 1, 40)   # the first 40 questions: more than one diagram, so a pool of two
    args = argparse.Namespace(workers=2, variants=["oracle+d2+full"], answerers=["solver"], code=checkout)
    got = bench.measure("run", data, tmp_path / "out", "t", args)
    assert got["samples"] == n
    imports = [line.split(" ", 1) for line in log.read_text(encoding="utf-8").splitlines()]
    assert len({pid for pid, _ in imports}) >= 3, imports   # the run and its two workers
    assert {Path(f).resolve() for _, f in imports} == {(checkout / "benchmark" / "__init__.py").resolve()}


def test_code_from_a_folder_without_the_package_is_refused_not_measured_as_this_checkout(tmp_path):
    """``--code`` naming a folder that holds no ``benchmark`` package (a typo, the wrong level) would import this
    checkout's instead: the measurement is refused, naming what was imported."""
    import argparse

    bench = _bench()
    (tmp_path / "elsewhere").mkdir()
    args = argparse.Namespace(workers=1, variants=["oracle+d2+full"], answerers=["solver"], code=tmp_path / "elsewhere")
    with pytest.raises(SystemExit, match=r"--code .*elsewhere: this process imported .*benchmark"):
        bench.measure("run", tmp_path / "data", tmp_path / "out", "t", args)
