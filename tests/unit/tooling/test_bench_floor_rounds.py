# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""bench/fleet_preflight.py --rounds: the ratios of several preflight / floor pairs per size, and the verdict."""

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


def run(hosts: int, wall: float, cpu: float) -> fleet_preflight.Run:
    return fleet_preflight.Run(label="run", hosts=hosts, wall=wall, cpu=cpu, peak_main=0, peak_tree=0, peak_procs=0,
                               samples=0, log="", load=0.0, modules={})


def rows(capsys) -> dict[int, list[str]]:
    """The table's rows by N: [rounds, CPU median, CPU range, wall median, wall range, verdict]."""
    found = {}
    for line in capsys.readouterr().out.splitlines()[1:]:
        match = re.fullmatch(r"\s*(\d+)\s+(\d+)\s+([\d.]+)x \(([\d.-]+)\)\s+([\d.]+)x \(([\d.-]+)\)\s+(yes|no)", line)
        assert match, line
        found[int(match.group(1))] = list(match.groups()[1:])
    return found


def test_the_verdict_is_the_medians_not_the_best_round(capsys):
    """18 hosts: one good round of three does not make it; 72 hosts: one bad round of three does not break it."""
    floor = run(18, 10.0, 10.0)
    pairs = [(run(18, 14.0, 14.0), floor), (run(18, 16.0, 16.0), floor), (run(18, 17.0, 15.0), floor),
             (run(72, 14.0, 13.0), floor), (run(72, 19.0, 19.0), floor), (run(72, 12.0, 14.0), floor)]
    fleet_preflight.print_floor_rounds(pairs)
    table = rows(capsys)
    assert table[18] == ["3", "1.50", "1.40-1.60", "1.60", "1.40-1.70", "no"]
    assert table[72] == ["3", "1.40", "1.30-1.90", "1.40", "1.20-1.90", "yes"]


@given(st.lists(st.tuples(st.floats(0.5, 3.0), st.floats(0.5, 3.0)), min_size=1, max_size=7))
def test_any_rounds_give_their_median_and_range(ratios):
    pairs = [(run(18, 10.0 * wall, 10.0 * cpu), run(18, 10.0, 10.0)) for cpu, wall in ratios]
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        fleet_preflight.print_floor_rounds(pairs)
    lines = output.getvalue().splitlines()
    cpu = sorted(preflight.cpu / floor.cpu for preflight, floor in pairs)
    wall = sorted(preflight.wall / floor.wall for preflight, floor in pairs)
    expected_within = statistics.median(cpu) <= 1.5 and statistics.median(wall) <= 1.5
    assert len(lines) == 2
    assert f"{statistics.median(cpu):.2f}x ({cpu[0]:.2f}-{cpu[-1]:.2f})" in lines[1]
    assert f"{statistics.median(wall):.2f}x ({wall[0]:.2f}-{wall[-1]:.2f})" in lines[1]
    assert lines[1].rstrip().endswith("yes" if expected_within else "no")


def test_zero_rounds_is_refused_naming_the_option():
    completed = subprocess.run([sys.executable, os.path.join(REPO, "bench", "fleet_preflight.py"), "--rounds", "0"],
                               capture_output=True, text=True, check=False)
    assert completed.returncode == 2
    assert "--rounds must be at least 1, got 0" in completed.stderr
