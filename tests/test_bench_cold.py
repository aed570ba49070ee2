"""``scripts/bench_cold.py``'s account of the machine's cores: busy and idle core-seconds that add up to the time passed."""
from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from tests.scripts_loaded import load_script

pytestmark = pytest.mark.skipif(not Path("/proc/stat").exists(), reason="reads /proc/stat")


def _bench():
    return load_script("bench_cold")


def test_core_seconds_add_up_to_the_time_passed_on_every_core_and_count_this_process_busy():
    bench = _bench()
    cores = os.cpu_count() or 1   # /proc/stat's first line sums every core of the machine
    before, t0, cpu0 = bench.core_seconds(), time.monotonic(), time.process_time()
    x = 0
    while time.process_time() - cpu0 < 0.6:   # this process busy on one core
        x += 1
    after, wall, cpu = bench.core_seconds(), time.monotonic() - t0, time.process_time() - cpu0
    busy, idle = after[0] - before[0], after[1] - before[1]
    assert busy >= 0 and idle >= 0
    # every core is either busy or idle: together they are the time passed on each (ticks of 10 ms)
    assert abs((busy + idle) - wall * cores) <= 0.15 * wall * cores + 0.1
    assert busy >= 0.8 * cpu - 0.05     # the loop's own time is counted busy, not idle


def test_core_seconds_count_each_column_of_proc_stat_as_busy_or_idle(tmp_path):
    bench = _bench()
    hz = os.sysconf("SC_CLK_TCK")
    stat = tmp_path / "stat"
    # user nice system idle iowait irq softirq steal guest guest_nice (guest time is within user)
    stat.write_text("cpu  1000 20 300 4000 50 6 7 80 900 9\ncpu0 1 2 3 4 5 6 7 8 9 10\n")
    busy, idle = bench.core_seconds(str(stat))
    assert busy == pytest.approx((1000 + 20 + 300 + 6 + 7 + 80) / hz)
    assert idle == pytest.approx((4000 + 50) / hz)
    assert bench.core_seconds(str(tmp_path / "absent")) is None
    for bad in ("cpu  1 2 3 4\n", "cpu  a b c d e f g h\n", ""):   # too few columns, not numbers, empty
        stat.write_text(bad)
        assert bench.core_seconds(str(stat)) is None
