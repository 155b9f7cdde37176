# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpu_info on a real NVIDIA GPU host (root ``/``, the real driver and NVML) against independent readings.

Each test compares the module's answer with one reading taken another way (NVML asked directly, ``nvidia-smi -q -x``,
the PCI functions in sysfs) or is skipped saying which reading this host does not give (conftest.py).
"""

from __future__ import annotations

import json

import pytest
from hardware_readings import MIB, normalize_bus_id

pytestmark = pytest.mark.hardware

# nvidia-smi's "FB Memory Usage: Total" and NVML's memory total may differ by what the driver reserves; a unit slip
# (bytes, MiB, GiB) is off by a factor of 1024, far beyond this.
MEMORY_TOLERANCE = 0.02
# nvidia-smi's fabric state text -> gpu_info's fabric state
SMI_FABRIC_STATES = {"n/a": "not_supported", "not supported": "not_supported", "not started": "not_started",
                     "in progress": "in_progress", "completed": "completed"}


@pytest.fixture
def result(probe):
    """gpu_info's result on this host, printed so that the run documents the host it saw."""
    answer = probe("gpu_info")
    print(json.dumps(answer, indent=2, sort_keys=True))
    return answer


def _by_address(result: dict) -> dict:
    return {gpu["pci_address"]: gpu for gpu in result["gpus"]}


def test_gpu_info_lists_every_gpu_nvml_sees(result, host):
    nvml = host.nvml
    assert nvml.present, f"an NVIDIA GPU is here ({'; '.join(host.evidence())}) but NVML cannot be used: {nvml.reason}"
    assert "failed" not in result
    assert result["source"] == "nvml", (
        f"gpu_info listed the GPUs from {result['source']} although NVML sees {nvml.value['device_count']}: "
        f"warnings {result.get('warnings', [])}, errors {result['errors']}, driver files {host.driver_files}")
    assert result["driver_loaded"] is True
    assert result["errors"] == []
    assert result["count"] == nvml.value["device_count"] == len(result["gpus"]) > 0
    assert result["driver_version"] == nvml.value["driver_version"]
    assert [(gpu["uuid"], gpu["name"], gpu["pci_address"]) for gpu in result["gpus"]] == [
        (gpu["uuid"], gpu["name"], normalize_bus_id(gpu["pci_bus_id"])) for gpu in nvml.value["gpus"]]


def test_versions_match_nvidia_smi(result, host, needs):
    smi = needs(host.nvidia_smi, "comparing the driver and CUDA versions with nvidia-smi")
    assert result["driver_version"] == smi["driver_version"]
    assert result["cuda_driver_version"] == smi["cuda_version"]
    assert result["nvml_version"].endswith(result["driver_version"])
    assert result["kernel_module"] in ("open", "proprietary", None)


def test_gpus_match_nvidia_smi(result, host, needs):
    smi = needs(host.nvidia_smi, "comparing each GPU with nvidia-smi")
    gpus = _by_address(result)
    assert sorted(gpus) == sorted(normalize_bus_id(gpu["pci_bus_id"]) for gpu in smi["gpus"])
    for seen in smi["gpus"]:
        gpu = gpus[normalize_bus_id(seen["pci_bus_id"])]
        assert gpu["uuid"] == seen["uuid"]
        assert gpu["name"] == seen["name"]
        assert seen["memory_total_mib"] is not None, "nvidia-smi gave no FB memory total"
        assert abs(gpu["memory_total_mib"] - seen["memory_total_mib"]) <= MEMORY_TOLERANCE * seen["memory_total_mib"]
        assert gpu["persistence_mode"] == seen["persistence_mode"]
        if seen["mig_current"] is None:  # nvidia-smi: N/A, a GPU without MIG
            assert gpu["mig_mode"] is None
        else:
            assert gpu["mig_mode"] == {"current": seen["mig_current"], "pending": seen["mig_pending"]}
        state = SMI_FABRIC_STATES.get((seen["fabric_state"] or "n/a").lower())
        assert gpu["fabric"]["state"] == state, seen


def test_gpus_match_the_pci_functions(result, host, needs):
    functions = [f for f in needs(host.pci, "comparing the GPUs with the PCI functions") if f.is_nvidia_gpu]
    gpus = _by_address(result)
    assert sorted(gpus) == sorted(function.address for function in functions)
    for function in functions:
        gpu = gpus[function.address]
        assert gpu["device_id"] == function.device
        assert gpu["numa_node"] == function.numa_node
        assert gpu["driver"] == function.driver


def test_gpu_fields_are_sane(result):
    assert [gpu["index"] for gpu in result["gpus"]] == list(range(result["count"]))
    for gpu in result["gpus"]:
        assert gpu["uuid"].startswith("GPU-")
        assert gpu["name"]
        assert gpu["memory_total_mib"] > 0
        assert gpu["memory_total_mib"] * MIB < 2 ** 50  # bytes read as MiB would be beyond a petabyte
        assert isinstance(gpu["persistence_mode"], bool)
        assert gpu["mig_mode"] is None or set(gpu["mig_mode"]) == {"current", "pending"}
        fabric = gpu["fabric"]
        assert fabric["state"] in ("not_supported", "not_started", "in_progress", "completed")
        if fabric["state"] == "not_supported":
            assert (fabric["status"], fabric["cluster_uuid"], fabric["clique_id"], fabric["clique"]) == (
                None, None, None, None)
        if fabric["clique"] is not None:
            assert fabric["clique"] == f"{fabric['cluster_uuid']}.{fabric['clique_id']}"
        assert gpu["nvlink"]["present"] is None or gpu["nvlink"]["active"] <= gpu["nvlink"]["present"]
    assert result["cliques"] == sorted({gpu["fabric"]["clique"] for gpu in result["gpus"]} - {None})
