# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""fabric_facts, peermem_info and connectx_info on a real GPU host (root ``/``) against independent readings.

Each test compares with one reading taken another way (gpu_info's own run, ``os.uname()``, ``/proc/modules``,
``/sys/class/infiniband``) or is skipped saying which reading this host does not give (conftest.py).
"""

from __future__ import annotations

import json
import os

import pytest
from hardware_readings import MELLANOX_VENDOR

pytestmark = pytest.mark.hardware


@pytest.fixture
def facts(probe):
    """``ansible_facts['gpufabric']`` on this host, printed so that the run documents the host it saw."""
    result = probe("fabric_facts")
    print(json.dumps(result, indent=1, sort_keys=True))
    assert "failed" not in result, result.get("msg")
    return result["ansible_facts"]["gpufabric"]


def test_fabric_facts_gpu_is_what_gpu_info_says(facts, probe):
    gpu_info = {key: value for key, value in probe("gpu_info").items() if key not in ("changed", "warnings")}
    gpu = {key: value for key, value in facts["gpu"].items() if key != "warnings"}
    assert gpu == gpu_info


def test_peermem_kernel_is_the_running_kernel(facts, host):
    assert facts["peermem"]["kernel_version"] == host.kernel_release


def test_peermem_driver_is_the_loaded_driver(facts, host, needs):
    if not any(host.driver_files.values()):
        pytest.skip(f"not applicable: peermem_info reads the driver from {' or '.join(host.driver_files)}, "
                    "and this host shows neither")
    nvml = needs(host.nvml, "comparing the driver version peermem_info reads with NVML's")
    assert facts["peermem"]["driver"]["loaded"] is True
    assert facts["peermem"]["driver"]["version"] == nvml["driver_version"]


def test_peermem_loaded_matches_proc_modules(facts, host, needs):
    loaded = needs(host.proc_modules, "comparing nvidia_peermem's state with /proc/modules")
    if "nvidia_peermem" in loaded:
        assert facts["peermem"]["nvidia_peermem"]["loaded"] is True
    elif not os.path.exists("/sys/module/nvidia_peermem"):
        assert facts["peermem"]["nvidia_peermem"]["loaded"] is False
    legacy_loaded = "nv_peer_mem" in loaded or os.path.exists("/sys/module/nv_peer_mem")
    assert facts["peermem"]["nv_peer_mem"]["loaded"] is legacy_loaded


def test_connectx_rdma_devices_match_sysfs(facts, host, needs):
    functions = {f.address: f for f in needs(host.pci, "comparing the ConnectX RDMA devices with the PCI functions")}
    devices = needs(host.infiniband, "comparing the ConnectX RDMA devices with /sys/class/infiniband")
    expected = sorted(name for name, address in devices
                      if address in functions and functions[address].vendor == MELLANOX_VENDOR)
    assert sorted(facts["connectx"]["rdma_devices"]) == expected
