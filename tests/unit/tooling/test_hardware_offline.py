# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""tests/molecule/hardware_offline.py: what the molecule tier accepts of the offline hardware run.

The run itself needs podman and the test image (``make hardware-offline``); its judgement is checked here on the
results of an offline run and on each way such a run can go wrong.
"""

from __future__ import annotations

import copy
import importlib.util
import json
import os

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
_SPEC = importlib.util.spec_from_file_location("hardware_offline",
                                               os.path.join(ROOT, "tests", "molecule", "hardware_offline.py"))
hardware_offline = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(hardware_offline)

NO_GPU = hardware_offline.NO_GPU
REASON = f"{NO_GPU} (/sys/bus/pci/devices: no NVIDIA GPU function among 3; NVML: nvmlInit failed)"
LOG = "network interfaces: lo \n=== install the bundle\ninstalled in 1.2 s\n"
MODULES = {name: {"changed": False} for name in hardware_offline.PROBE_MODULES}
MODULES["gpu_info"] = {"changed": False, "count": 0, "driver_loaded": False, "source": "pci"}
SUMMARY = {"verdict": NO_GPU, "status": 0, "tests": [
    {"test": "test_gpu_info_hardware::test_gpu_fields_are_sane", "outcome": "not applicable", "reason": REASON},
    {"test": "test_fabric_facts_hardware::test_peermem_kernel_is_the_running_kernel", "outcome": "not applicable",
     "reason": REASON}]}


def _judge(tmp_path, modules=None, summary=None, log=LOG, seconds=20.0):
    (tmp_path / "modules.json").write_text(json.dumps(MODULES if modules is None else modules))
    (tmp_path / "summary.json").write_text(json.dumps(SUMMARY if summary is None else summary))
    return hardware_offline.judge(tmp_path, log, seconds)


def test_an_offline_run_on_a_host_without_a_gpu_passes(tmp_path):
    assert _judge(tmp_path) == []


def _spoiled(path: tuple, value):
    summary, modules = copy.deepcopy(SUMMARY), copy.deepcopy(MODULES)
    target = {"summary": summary, "modules": modules}
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return modules, summary


@pytest.mark.parametrize(("modules_summary", "log", "seconds", "problem"), [
    (({}, None), LOG, 20.0, None),
    ((None, None), "network interfaces: eth0 lo \ninstalled in 1 s\n", 20.0,
     "the container had the network interfaces ['eth0', 'lo'], not only lo"),
    ((None, None), LOG + "Looking in indexes: https://pypi.org/simple\n", 20.0,
     "pip reached for an index ('Looking in indexes' in the log)"),
    ((None, None), "network interfaces: lo \n", 20.0, "the bundle was not installed"),
    (_spoiled(("modules", "imex_info"), {"failed": True, "msg": "boom"}), LOG, 20.0, "imex_info failed: boom"),
    (_spoiled(("modules", "gpu_info", "count"), 1), LOG, 20.0, "gpu_info reported 1 GPU(s), driver loaded False"),
    (_spoiled(("summary", "verdict"), "FAILED: 1 of 2 hardware test(s) failed"), LOG, 20.0,
     "the verdict is 'FAILED: 1 of 2 hardware test(s) failed' (status 0), not 'no NVIDIA GPU here'"),
    (_spoiled(("summary", "tests"), []), LOG, 20.0, "no hardware test ran"),
    (_spoiled(("summary", "tests"), [{"test": "t::x", "outcome": "passed", "reason": ""}]), LOG, 20.0,
     "t::x: passed"),
    ((None, None), LOG, 181.0, "the run took 181 s, over 180 s"),
], ids=["modules-missing", "network", "index", "no-install", "module-failed", "gpu-seen", "verdict", "no-test",
        "silent-pass", "slow"])
def test_each_way_the_run_can_go_wrong_is_named(tmp_path, modules_summary, log, seconds, problem):
    modules, summary = modules_summary
    problems = _judge(tmp_path, modules, summary, log, seconds)
    if problem is None:  # no modules at all: each one is named as not run
        assert problems[:5] == [f"{name} failed: not run" for name in hardware_offline.PROBE_MODULES]
    else:
        assert problem in problems, problems


def test_a_run_that_left_no_results_says_so(tmp_path):
    assert hardware_offline.judge(tmp_path, LOG, 5.0)[-1].startswith("the run left no results: ")
