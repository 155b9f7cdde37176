# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""bench/fleet_preflight.py --rounds: the ratios of several preflight / floor pairs per size, and the verdict.

The verdict is the median of the controller's ratio (each run's CPU less the module every host runs); the module's
ratio and the whole runs' CPU and wall ratios are printed beside it, for comparison only.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import statistics
import subprocess
import sys

from hypothesis import given
from hypothesis import strategies as st

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
sys.path.insert(0, os.path.join(REPO, "bench"))
import fleet_preflight  # noqa: E402  pylint: disable=wrong-import-position

SPREAD = r"([\d.]+)x \(([\d.-]+)\)"


def run(hosts: int, wall: float, cpu: float, module: str, module_cpu: float) -> fleet_preflight.Run:
    return fleet_preflight.Run(label="run", hosts=hosts, wall=wall, cpu=cpu, peak_main=0, peak_tree=0, peak_procs=0,
                               samples=0, log="", load=0.0, modules={module: (hosts, module_cpu)})


def preflight(hosts: int, wall: float, cpu: float, module_cpu: float) -> fleet_preflight.Run:
    return run(hosts, wall, cpu, fleet_preflight.PREFLIGHT_HOST_MODULE, module_cpu)


def floor(hosts: int, wall: float, cpu: float, module_cpu: float) -> fleet_preflight.Run:
    return run(hosts, wall, cpu, fleet_preflight.FLOOR_HOST_MODULE, module_cpu)


def rows(text: str) -> dict[int, list[str]]:
    """The table's rows by N: [rounds, controller median, range, verdict, module median, range, CPU median, range,
    wall median, range]."""
    found = {}
    for line in text.splitlines()[1:]:
        match = re.fullmatch(rf"\s*(\d+)\s+(\d+)\s+{SPREAD}\s+(yes|no)\s+{SPREAD}\s+{SPREAD}\s+{SPREAD}", line)
        assert match, line
        found[int(match.group(1))] = list(match.groups()[1:])
    return found


def test_the_verdict_is_the_controllers_median_not_the_best_round(capsys):
    """18 hosts: one good round of three does not make it; 72 hosts: one bad round of three does not break it."""
    small, large = floor(18, 10.0, 10.0, 6.0), floor(72, 10.0, 10.0, 6.0)  # the floor's controller: 4 CPU s
    pairs = [(preflight(18, 14.0, 11.6, 6.0), small), (preflight(18, 16.0, 12.4, 6.0), small),
             (preflight(18, 17.0, 12.2, 6.0), small),  # controller 5.6, 6.4, 6.2 s: 1.40, 1.60, 1.55x
             (preflight(72, 14.0, 11.2, 6.0), large), (preflight(72, 19.0, 13.6, 6.0), large),
             (preflight(72, 12.0, 10.8, 6.0), large)]  # controller 5.2, 7.6, 4.8 s: 1.30, 1.90, 1.20x
    fleet_preflight.print_floor_rounds(pairs)
    table = rows(capsys.readouterr().out)
    assert table[18][:4] == ["3", "1.55", "1.40-1.60", "no"]
    assert table[72][:4] == ["3", "1.30", "1.20-1.90", "yes"]


def test_the_verdict_is_the_controller_not_the_whole_run(capsys):
    """On this machine the whole run holds every host's module: a module that costs much (what the GPU hosts pay)
    does not fail the controller, and a cheap one does not hide a controller over the goal."""
    pairs = [(preflight(18, 20.0, 20.0, 17.6), floor(18, 10.0, 10.0, 8.0)),  # whole 2.00x, controller 2.4/2 = 1.20x
             (preflight(72, 12.0, 12.0, 8.0), floor(72, 10.0, 10.0, 8.0))]  # whole 1.20x, controller 4/2 = 2.00x
    fleet_preflight.print_floor_rounds(pairs)
    table = rows(capsys.readouterr().out)
    assert table[18] == ["1", "1.20", "1.20-1.20", "yes", "2.20", "2.20-2.20", "2.00", "2.00-2.00", "2.00",
                         "2.00-2.00"]
    assert table[72] == ["1", "2.00", "2.00-2.00", "no", "1.00", "1.00-1.00", "1.20", "1.20-1.20", "1.20",
                         "1.20-1.20"]


@given(st.lists(st.tuples(st.floats(0.5, 3.0), st.floats(0.5, 3.0), st.floats(0.0, 0.9), st.floats(0.0, 0.9)),
                min_size=1, max_size=7))
def test_any_rounds_give_their_medians_and_ranges(rounds):
    """Each round: (whole CPU ratio, wall ratio, preflight's module share, the floor's module share)."""
    pairs = [(preflight(18, 10.0 * wall, 10.0 * cpu, 10.0 * cpu * pre_share), floor(18, 10.0, 10.0, 10.0 * floor_share))
             for cpu, wall, pre_share, floor_share in rounds]
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        fleet_preflight.print_floor_rounds(pairs)
    table = rows(output.getvalue())
    assert list(table) == [18]
    controller = sorted((pre.cpu - pre.modules[fleet_preflight.PREFLIGHT_HOST_MODULE][1])
                        / (base.cpu - base.modules[fleet_preflight.FLOOR_HOST_MODULE][1]) for pre, base in pairs)
    cpu = sorted(pre.cpu / base.cpu for pre, base in pairs)
    wall = sorted(pre.wall / base.wall for pre, base in pairs)
    median = statistics.median(controller)  # the verdict is of the median as printed, to two decimals
    expected = [f"{median:.2f}", f"{controller[0]:.2f}-{controller[-1]:.2f}",
                "yes" if round(median, 2) <= 1.5 else "no"]
    assert table[18][0] == str(len(rounds))
    assert table[18][1:4] == expected
    assert table[18][6:] == [f"{statistics.median(cpu):.2f}", f"{cpu[0]:.2f}-{cpu[-1]:.2f}",
                             f"{statistics.median(wall):.2f}", f"{wall[0]:.2f}-{wall[-1]:.2f}"]


def test_zero_rounds_is_refused_naming_the_option():
    completed = subprocess.run([sys.executable, os.path.join(REPO, "bench", "fleet_preflight.py"), "--rounds", "0"],
                               capture_output=True, text=True, check=False)
    assert completed.returncode == 2
    assert "--rounds must be at least 1, got 0" in completed.stderr
