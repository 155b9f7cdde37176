# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""fabric_facts on a real GPU host (root /, the real driver and NVML). Run with `make hardware` on such a host."""

from __future__ import annotations

import json
import os

import pytest

from ansible_collections.gpufabric.cluster.plugins.modules import fabric_facts

pytestmark = pytest.mark.hardware


def _pci_gpus() -> list[str]:
    found = []
    for address in sorted(os.listdir("/sys/bus/pci/devices")):
        base = os.path.join("/sys/bus/pci/devices", address)
        with open(os.path.join(base, "vendor")) as vendor, open(os.path.join(base, "class")) as pci_class:
            if vendor.read().strip() == "0x10de" and pci_class.read().strip()[:6] in ("0x0300", "0x0302"):
                found.append(address)
    return found


def test_fabric_facts_on_this_host(module_runner):
    result = module_runner(fabric_facts, {})
    print(json.dumps(result, indent=1, sort_keys=True))
    facts = result["ansible_facts"]["gpufabric"]
    gpu = facts["gpu"]
    assert gpu["driver_loaded"] is True
    assert gpu["source"] == "nvml"
    assert gpu["count"] >= 1
    assert gpu["count"] == len(gpu["gpus"])
    pci = set(_pci_gpus())
    if pci:  # a guest may hide PCI; where it shows it, NVML and sysfs must agree
        assert {item["pci_address"] for item in gpu["gpus"]} == pci
    for item in gpu["gpus"]:
        assert item["uuid"].startswith("GPU-")
        assert item["memory_total_mib"] > 0
    assert facts["peermem"]["driver"]["version"] == gpu["driver_version"]
    assert facts["peermem"]["kernel_version"]
