# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The GPU probe of today's code against real machines' recordings (tests/fixtures/hardware, the hardware tier's runs).

Each recording holds what a real machine's NVML answered, nvidia-smi's reading of the same GPUs, and the files the
probe read there (tests/fixtures/hardware_recordings.py). Replayed, today's probe must list the GPUs NVML answered
for, as NVML and nvidia-smi (where it ran) described them: so every change is checked against real answers, and a
recording of a machine the probe misreads fails here until the probe is fixed. A recording is added by a session lent
a GPU machine (CONTRIBUTING.md, "The hardware tier").
"""

from __future__ import annotations

import datetime

import pytest
from fixtures import hardware_recordings

from ansible_collections.gpufabric.cluster.plugins.module_utils.gpu import (
    GPU_CLASSES,
    MIB,
    NVIDIA_VENDOR,
    cuda_version_text,
    normalize_pci_address,
)

RECORDINGS = hardware_recordings.recording_paths()


def test_the_hardware_tier_has_recorded_a_run():
    assert RECORDINGS, f"no recording in {hardware_recordings.FIXTURES}"


@pytest.fixture(params=RECORDINGS, ids=[path.stem for path in RECORDINGS])
def recording(request):
    """One real machine's recording."""
    return hardware_recordings.load(request.param)


def test_the_recording_says_where_and_when(recording):
    recorded = recording["recorded"]
    assert datetime.datetime.fromisoformat(recorded["when"]).tzinfo is not None
    assert recorded["where"].strip()
    assert recorded["by"] == "tools/hardware-run.sh"
    assert recorded["verdict"]
    assert set(recording["modules"]) == set(hardware_recordings.PROBE_MODULES)


def _pci_gpu_functions(recording: dict) -> list[str]:
    """The NVIDIA GPU functions among the recorded files, read as the kernel shows them (not through the probe)."""
    files = recording["tree"]["files"]
    functions = []
    for path, vendor in files.items():
        if path.endswith("/vendor") and int(vendor, 16) == NVIDIA_VENDOR:
            base = path.rsplit("/", 1)[0]
            if int(files.get(f"{base}/class", "0"), 16) >> 8 in GPU_CLASSES:
                functions.append(base.rsplit("/", 1)[1])
    return sorted(functions)


def test_today_s_probe_lists_the_gpus_nvml_answered_for(recording, tmp_path):
    answers = recording["nvml"]
    result = hardware_recordings.replay_gpu_info(recording, str(tmp_path))
    devices = [] if "init_error" in answers else answers.get("devices") or []
    if not devices:  # NVML saw no GPU or could not start: the GPUs are the tree's PCI functions, if any
        assert result["source"] == "pci"
        assert [gpu["pci_address"] for gpu in result["gpus"]] == _pci_gpu_functions(recording)
        return
    assert result["source"] == "nvml", (
        f"NVML answered for {len(devices)} GPU(s) on {recording['recorded']['where']}, and the probe listed "
        f"{result['count']} from {result['source']}: driver loaded {result['driver_loaded']}, "
        f"warnings {result['warnings']}")
    assert [(gpu["uuid"], gpu["name"], gpu["pci_address"], gpu["memory_total_mib"]) for gpu in result["gpus"]] == [
        (device.get("uuid"), device.get("name"),
         normalize_pci_address(device["pci_bus_id"]) if "pci_bus_id" in device else None,
         device["memory_total"] // MIB if "memory_total" in device else None) for device in devices]
    assert result["driver_version"] == answers.get("driver_version", result["driver_version"])
    if "cuda_driver_version" in answers:
        assert result["cuda_driver_version"] == cuda_version_text(answers["cuda_driver_version"])
    smi = recording["nvidia_smi"]
    if "reason" not in smi:  # nvidia-smi ran there: the same GPUs and versions as it saw
        assert sorted((gpu["uuid"], gpu["name"]) for gpu in result["gpus"]) == sorted(
            (gpu["uuid"], gpu["name"]) for gpu in smi["gpus"])
        assert (result["driver_version"], result["cuda_driver_version"]) == (smi["driver_version"],
                                                                             smi["cuda_version"])
