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
