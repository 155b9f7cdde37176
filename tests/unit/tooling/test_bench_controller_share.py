# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""bench/fleet_preflight.py: the controller's own share of a run (its CPU less the module each host runs) against
the floor's, the verdict, and the module's share printed apart as what the GPU hosts pay on a real fleet."""

from __future__ import annotations

import contextlib
import io
import os
import re
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
sys.path.insert(0, os.path.join(REPO, "bench"))
import fleet_preflight  # noqa: E402  pylint: disable=wrong-import-position

PREFLIGHT = fleet_preflight.PREFLIGHT_HOST_MODULE
FLOOR = fleet_preflight.FLOOR_HOST_MODULE


def run(hosts: int, cpu: float, modules: dict[str, tuple[int, float]], load: float = 0.0) -> fleet_preflight.Run:
    return fleet_preflight.Run(label="run", hosts=hosts, wall=cpu, cpu=cpu, peak_main=0, peak_tree=0, peak_procs=0,
                               samples=0, log="", load=load, modules=modules)


def printed(function, pairs) -> list[list[str]]:
    """The rows of a table, split on blanks, without its header."""
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        function(pairs)
    return [line.split() for line in output.getvalue().splitlines()[1:]]


def test_the_controller_is_the_run_less_the_host_module_other_modules_included():
    """A module the run started other than the one each host runs (one on the controller, say) is the controller's."""
    result = fleet_preflight.split(run(18, 10.0, {PREFLIGHT: (18, 6.0), "ansible.modules.stat": (1, 0.5)}), PREFLIGHT)
    assert result == fleet_preflight.Split(module_runs=18, module=6.0, controller=pytest.approx(4.0))


def test_a_run_whose_host_module_did_not_run_is_all_controller():
    assert fleet_preflight.split(run(18, 10.0, {}), PREFLIGHT) == fleet_preflight.Split(0, 0.0, 10.0)


def test_the_controller_table_gives_each_pair_per_host_its_ratio_and_verdict():
    pairs = [(run(18, 9.0, {PREFLIGHT: (18, 5.4)}, load=2.0), run(18, 6.0, {FLOOR: (18, 3.6)}, load=3.0)),
             (run(72, 21.6, {PREFLIGHT: (72, 10.8)}), run(72, 14.4, {FLOOR: (72, 7.2)}))]
    # 18 hosts: controller 3.6 s against 2.4 s, 200 ms a host against 133: 1.50x, within.
    # 72 hosts: 10.8 s against 7.2 s, 150 ms against 100: 1.50x (as printed: 1.5000000000000002 in floats); the
    # whole run (21.6/14.4) is no verdict.
    assert printed(fleet_preflight.print_controller, pairs) == [
        ["18", "200", "133", "1.50x", "yes", "2.0/3.0"],
        ["72", "150", "100", "1.50x", "yes", "0.0/0.0"]]
    over = [(run(18, 9.0, {PREFLIGHT: (18, 1.8)}), run(18, 9.0, {FLOOR: (18, 4.5)}))]  # 7.2 s against 4.5 s: 1.60x
    assert printed(fleet_preflight.print_controller, over) == [["18", "400", "250", "1.60x", "no", "0.0/0.0"]]


def test_the_module_table_gives_what_each_host_pays_and_how_many_ran_it():
    pairs = [(run(18, 9.0, {PREFLIGHT: (18, 5.4)}), run(18, 6.0, {FLOOR: (17, 3.6)}))]
    assert printed(fleet_preflight.print_modules, pairs) == [["18", "300", "200", "1.50x", "18/17"]]


def test_the_whole_run_table_gives_no_verdict():
    pairs = [(run(18, 18.0, {PREFLIGHT: (18, 1.8)}), run(18, 9.0, {FLOOR: (18, 4.5)}))]
    rows = printed(fleet_preflight.print_floor, pairs)
    assert rows == [["18", "1000", "500", "2.00x", "1000", "500", "2.00x", "0.0/0.0"]]


@given(st.integers(1, 300), st.floats(0.1, 1000.0), st.floats(0.0, 0.99), st.floats(0.1, 1000.0),
       st.floats(0.0, 0.99))
def test_any_pair_gives_its_controller_ratio_and_verdict(hosts, pre_cpu, pre_share, floor_cpu, floor_share):
    preflight = run(hosts, pre_cpu, {PREFLIGHT: (hosts, pre_cpu * pre_share)})
    floor = run(hosts, floor_cpu, {FLOOR: (hosts, floor_cpu * floor_share)})
    ratio = fleet_preflight.controller_ratio(preflight, floor)
    assert ratio == pytest.approx((pre_cpu - pre_cpu * pre_share) / (floor_cpu - floor_cpu * floor_share))
    [row] = printed(fleet_preflight.print_controller, [(preflight, floor)])
    assert re.fullmatch(r"[\d.]+x", row[3]) and row[3] == f"{ratio:.2f}x"
    assert row[4] == ("yes" if round(ratio, 2) <= fleet_preflight.FLOOR_LIMIT else "no")  # the ratio as printed
