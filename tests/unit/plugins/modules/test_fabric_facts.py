# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""fabric_facts end to end through AnsibleModule on the recorded host trees."""

from __future__ import annotations

import pytest
from fixtures.recorded_nvml import RecordedSource

from ansible_collections.gpufabric.cluster.plugins.module_utils import nvml
from ansible_collections.gpufabric.cluster.plugins.modules import (
    connectx_info,
    fabric_facts,
    gpu_info,
    imex_info,
    peermem_info,
)

INFO_MODULES = {"gpu": gpu_info, "connectx": connectx_info, "imex": imex_info, "peermem": peermem_info}


@pytest.fixture
def recorded_nvml(monkeypatch, nvml_recording):
    def use(name):
        recording = nvml_recording(name)
        monkeypatch.setattr(nvml, "nvml_source", lambda _root: RecordedSource(recording))
    return use


@pytest.mark.parametrize("host", ["hgx_h100", "gb200_tray", "no_nvidia", "broken_node"])
def test_facts_equal_the_info_modules(host, host_trees, recorded_nvml, module_runner):
    recorded_nvml(host)
    result = module_runner(fabric_facts, {"root": host_trees[host]})
    assert result["changed"] is False
    facts = result["ansible_facts"]["gpufabric"]
    assert facts["gather_subset"] == ["gpu", "connectx", "imex", "peermem", "network"]
    # the recorded trees hold no ip tool: the network subset says so and never fails
    assert facts["network"]["errors"] == ["ip: not found below the probe root"]
    for subset, module in INFO_MODULES.items():
        single = module_runner(module, {"root": host_trees[host]})
        for key in ("changed", "warnings", "deprecations"):
            single.pop(key, None)
        assert facts[subset] == single, subset


def test_gb200_facts(host_trees, recorded_nvml, module_runner):
    recorded_nvml("gb200_tray")
    facts = module_runner(fabric_facts, {"root": host_trees["gb200_tray"]})["ansible_facts"]["gpufabric"]
    assert facts["gpu"]["cliques"] == ["3c1a5f2e-9b7d-4c2a-8e6f-1d0b7a9c4e21.1"]
    # rack, slot and tray of the host without walking its GPUs
    assert facts["gpu"]["platform"] == {"chassis_serials": ["1823124190518"], "slot_numbers": [21],
                                        "tray_indices": [11], "host_ids": [1]}
    assert {item["fabric"]["health"]["summary"] for item in facts["gpu"]["gpus"]} == {"healthy"}
    assert facts["connectx"]["count"] == 5
    assert facts["imex"]["nodes"]["addresses"][0] == "10.114.0.11"
    assert len(facts["imex"]["nodes"]["addresses"]) == 18
    assert facts["peermem"]["dma_buf"]["supported"] is True


def test_subset_selection(host_trees, recorded_nvml, module_runner):
    recorded_nvml("hgx_h100")
    facts = module_runner(fabric_facts, {"root": host_trees["hgx_h100"], "gather_subset": ["all", "!imex", "!gpu"]})
    gpufabric = facts["ansible_facts"]["gpufabric"]
    assert sorted(gpufabric) == ["connectx", "gather_subset", "network", "peermem"]
    assert gpufabric["connectx"]["count"] == 10


def test_missing_root_fails_naming_it(tmp_path, module_runner):
    missing = str(tmp_path / "absent")
    result = module_runner(fabric_facts, {"root": missing})
    assert result["failed"] is True
    assert result["msg"] == f"root {missing!r} does not exist or is not a directory"
    assert "ansible_facts" not in result


def test_unknown_subset_fails(host_trees, module_runner):
    result = module_runner(fabric_facts, {"root": host_trees["no_nvidia"], "gather_subset": ["gpus"]})
    assert result["failed"] is True
    assert "unknown subset 'gpus'" in result["msg"]


def test_wrong_option_type_fails(module_runner):
    result = module_runner(fabric_facts, {"gather_subset": {"a": 1}})
    assert result["failed"] is True
    assert "gather_subset" in result["msg"]


@pytest.mark.parametrize("module", [fabric_facts, *INFO_MODULES.values()], ids=lambda module: module.__name__)
def test_check_mode_returns_the_same_facts(module, host_trees, recorded_nvml, module_runner):
    recorded_nvml("gb200_tray")
    normal = module_runner(module, {"root": host_trees["gb200_tray"]})
    checked = module_runner(module, {"root": host_trees["gb200_tray"], "_ansible_check_mode": True})
    assert checked == normal
    assert checked["changed"] is False
