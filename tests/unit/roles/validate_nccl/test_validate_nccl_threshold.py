# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The threshold validate_nccl derives for its nvlink shape, through the role's own expressions: the set_fact of
tasks/placement.yml that builds the threshold facts from the Nodes' nvidia.com/gpu.product label (via the real
compute_domain_placement filter), and the judge call of tasks/report.yml, rendered with Jinja's native types as Ansible
renders them, over a run laid out as nccl-tests prints it (synthetic) (issue 43: GB300 trays are judged against the
GB300 floor, not GB200's)."""

from __future__ import annotations

import os

import pytest
import yaml
from ansible.plugins.filter.core import FilterModule as CoreFilters
from jinja2 import StrictUndefined
from jinja2.nativetypes import NativeEnvironment

from ansible_collections.gpufabric.cluster.plugins.filter.compute_domain_placement import compute_domain_placement
from ansible_collections.gpufabric.cluster.plugins.filter.judge_nccl_tests import judge_nccl_tests
from ansible_collections.gpufabric.cluster.plugins.filter.parse_nccl_tests import parse_nccl_tests

ROLE = os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "roles", "validate_nccl")
CLIQUE = "3c1a5f2e-9b7d-4c2a-8e6f-1d0b7a9c4e21.1"
GIB = 1024 ** 3


def _tasks(name: str) -> list[dict]:
    with open(os.path.join(ROLE, "tasks", name), encoding="utf-8") as handle:
        return yaml.safe_load(handle)


def _task(tasks: list[dict], name: str) -> dict:
    for task in tasks:
        if task.get("name") == name:
            return task
        found = [inner for inner in task.get("block") or [] if inner.get("name") == name]
        if found:
            return found[0]
    raise AssertionError(f"no task {name!r}")


def _environment() -> NativeEnvironment:
    env = NativeEnvironment(undefined=StrictUndefined)
    env.filters.update(CoreFilters().filters())
    env.filters.update({"gpufabric.cluster.compute_domain_placement": compute_domain_placement,
                        "gpufabric.cluster.parse_nccl_tests": parse_nccl_tests,
                        "gpufabric.cluster.judge_nccl_tests": judge_nccl_tests})
    return env


def _render(env: NativeEnvironment, expression: str, context: dict):
    return env.from_string(expression.strip()).render(context)


def _tray(name: str, product: str) -> dict:
    return {"metadata": {"name": name, "labels": {"nvidia.com/gpu.clique": CLIQUE, "nvidia.com/gpu.product": product}},
            "status": {"allocatable": {"nvidia.com/gpu": "4"}, "conditions": [{"type": "Ready", "status": "True"}]}}


def _log(busbw: float) -> str:
    """SYNTHETIC: an all_reduce_perf output of two trays of 4 ranks, laid out as nccl-tests src/util.cu prints it."""
    lines = [f"#  Rank {rank:2d} Group  0 Pid {1000 + rank:6d} on {'tray-' + str(rank // 4):>10s} device "
             f"{rank % 4:2d} [0008:01:00] NVIDIA GB300" for rank in range(8)]
    lines += [f"{size:12d} {size // 4:13d}     float     sum      -1   9000.0  {busbw / 1.75:.2f}  {busbw:.2f}  0"
              f"   9001.0  {busbw / 1.75:.2f}  {busbw:.2f}  0" for size in (GIB, 2 * GIB)]
    return "\n".join([*lines, "# Out of bounds values : 0 OK", f"# Avg bus bandwidth    : {busbw:.2f}"]) + "\n"


def _verdict(product: str, busbw: float) -> dict:
    env = _environment()
    with open(os.path.join(ROLE, "defaults", "main.yml"), encoding="utf-8") as handle:
        context = yaml.safe_load(handle)
    context.update(validate_nccl_nodes=2, validate_nccl_gpus_per_node=4,
                   __validate_nccl_gpu_nodes={"resources": [_tray(f"tray-{index}", product) for index in range(2)]})
    choose = _task(_tasks("placement.yml"), "Choose the nodes of one clique")
    context["__cd"] = _render(env, choose["vars"]["__cd"], context)
    context["__validate_nccl_placement"] = _render(env, choose["ansible.builtin.set_fact"]["__validate_nccl_placement"],
                                                   context)
    judge = _task(_tasks("report.yml"), "Parse and judge the launcher log")
    context["__validate_nccl_job"] = {"log": _log(busbw)}
    context["__parsed"] = _render(env, judge["vars"]["__parsed"], context)
    return _render(env, judge["vars"]["__verdict"], context)


def test_gb300_trays_are_judged_against_the_gb300_floor():
    verdict = _verdict("NVIDIA-GB300", 650.0)
    assert (verdict["threshold_gbps"], verdict["passed"]) == (700.0, False)
    assert verdict["threshold_source"].startswith("GB300 NVL72 NVLink domain all_reduce floor 700 GB/s")
    assert verdict["failures"] == ["peak busbw 650 GB/s (at 1073741824 B) below the threshold 700 GB/s"]


@pytest.mark.parametrize(("product", "floor"), [("NVIDIA-GB300", 700.0), ("NVIDIA-GB200", 600.0)])
def test_each_product_label_gets_its_floor_and_a_run_above_it_passes(product, floor):
    verdict = _verdict(product, 840.0)
    assert (verdict["threshold_gbps"], verdict["passed"]) == (floor, True), verdict["failures"]
