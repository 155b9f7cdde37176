# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The gpu_info module end to end through AnsibleModule on every recorded host, NVML replayed."""

from __future__ import annotations

import pytest
from fixtures.recorded_nvml import RecordedSource

from ansible_collections.gpufabric.cluster.plugins.module_utils import nvml
from ansible_collections.gpufabric.cluster.plugins.modules import gpu_info
from ansible_collections.gpufabric.cluster.tests.unit.helpers import warning_messages

GB200_CLIQUE = "3c1a5f2e-9b7d-4c2a-8e6f-1d0b7a9c4e21.1"
ZERO_UUID = "00000000-0000-0000-0000-000000000000"
ZERO_UNSET = "the cluster UUID is all zero (an NVLink system that is not multi-node)"
HEALTHY = {"mask": 170, "degraded_bandwidth": False, "route_recovery": False, "route_unhealthy": False,
           "access_timeout_recovery": False, "reasons": []}
RESULT_KEYS = {"changed", "driver_loaded", "driver_version", "kernel_module", "cuda_driver_version", "nvml_version",
               "source", "count", "gpus", "cliques", "errors"}
GPU_KEYS = {"index", "uuid", "name", "pci_address", "device_id", "numa_node", "memory_total_mib", "mig_mode",
            "persistence_mode", "fabric", "nvlink", "driver"}


@pytest.fixture
def replay(monkeypatch):
    """Make the module's NVML answer from a recording (the one test seam: nvml.nvml_source)."""
    def use(recording):
        monkeypatch.setattr(nvml, "nvml_source", lambda _root: RecordedSource(recording))
    return use


@pytest.fixture
def run_host(module_runner, host_trees, nvml_recording, replay):
    """Run gpu_info on a recorded host with its recorded NVML answers (or a given recording)."""
    def run(name, recording=None, check_mode=False):
        replay(nvml_recording(name) if recording is None else recording)
        args = {"root": host_trees[name]}
        if check_mode:
            args["_ansible_check_mode"] = True
        return module_runner(gpu_info, args)
    return run


def test_hgx_h100(run_host):
    result = run_host("hgx_h100")
    assert set(result) - {"invocation"} == RESULT_KEYS
    assert (result["changed"], result["driver_loaded"], result["source"], result["count"]) == (False, True, "nvml", 8)
    versions = [result[key] for key in ("driver_version", "kernel_module", "cuda_driver_version", "nvml_version")]
    assert versions == ["570.172.08", "open", "12.8", "12.570.172.08"]
    assert result["cliques"] == []  # NVSwitch system: all-zero cluster UUID, not multi-node
    assert result["errors"] == []
    assert "warnings" not in result
    gpus = result["gpus"]
    assert all(set(g) == GPU_KEYS for g in gpus)
    assert [g["pci_address"] for g in gpus] == ["0000:1b:00.0", "0000:43:00.0", "0000:52:00.0", "0000:61:00.0",
                                                "0000:9d:00.0", "0000:c3:00.0", "0000:d1:00.0", "0000:df:00.0"]
    assert [g["numa_node"] for g in gpus] == [0, 0, 0, 0, 1, 1, 1, 1]
    assert [g["uuid"] for g in gpus] == [f"GPU-8f6b2c1e-4d3a-11ee-9c1a-0000000000{i:02d}" for i in range(8)]
    assert {g["name"] for g in gpus} == {"NVIDIA H100 80GB HBM3"}
    assert {g["memory_total_mib"] for g in gpus} == {81559}
    assert {g["device_id"] for g in gpus} == {"0x2330"}
    assert {g["driver"] for g in gpus} == {"nvidia"}
    assert all(g["persistence_mode"] is True for g in gpus)
    assert all(g["mig_mode"] == {"current": False, "pending": False} for g in gpus)
    assert all(g["fabric"] == {"state": "completed", "status": "success", "cluster_uuid": ZERO_UUID, "clique_id": 0,
                               "clique": None, "clique_unset": ZERO_UNSET, "health": HEALTHY} for g in gpus)
    assert all(g["nvlink"] == {"present": 18, "active": 18, "inactive_links": [], "speed_mbps": 26562, "reasons": []}
               for g in gpus)


def test_gb200_tray(run_host):
    result = run_host("gb200_tray")
    assert (result["source"], result["count"], result["cliques"], result["errors"]) == ("nvml", 4, [GB200_CLIQUE], [])
    assert [g["pci_address"] for g in result["gpus"]] == ["0008:01:00.0", "0009:01:00.0", "0018:01:00.0",
                                                          "0019:01:00.0"]
    assert [g["numa_node"] for g in result["gpus"]] == [0, 0, 1, 1]
    assert result["gpus"][2]["fabric"] == {"state": "completed", "status": "success",
                                           "cluster_uuid": "3c1a5f2e-9b7d-4c2a-8e6f-1d0b7a9c4e21", "clique_id": 1,
                                           "clique": GB200_CLIQUE, "clique_unset": None, "health": HEALTHY}
    assert result["gpus"][2]["nvlink"] == {"present": 18, "active": 18, "inactive_links": [], "speed_mbps": 53125,
                                           "reasons": []}
    assert (result["gpus"][2]["name"], result["gpus"][2]["memory_total_mib"], result["gpus"][2]["device_id"]) == (
        "NVIDIA GB200", 190464, "0x2941")


def test_no_nvidia(run_host):
    result = run_host("no_nvidia")
    assert {key: result[key] for key in RESULT_KEYS} == {
        "changed": False, "driver_loaded": False, "driver_version": None, "kernel_module": None,
        "cuda_driver_version": None, "nvml_version": None, "source": "pci", "count": 0, "gpus": [], "cliques": [],
        "errors": [],
    }
    assert "warnings" not in result


def test_broken_node(run_host):
    result = run_host("broken_node")
    assert (result["driver_loaded"], result["driver_version"], result["source"], result["count"]) == (
        False, None, "pci", 2)
    assert result["gpus"] == [
        {"index": index, "uuid": None, "name": None, "pci_address": address, "device_id": "0x2331", "numa_node": 0,
         "memory_total_mib": None, "mig_mode": None, "persistence_mode": None, "fabric": None, "nvlink": None,
         "driver": None}
        for index, address in enumerate(["0000:17:00.0", "0000:65:00.0"])
    ]
    assert (result["cliques"], result["errors"]) == ([], [])


def test_check_mode_returns_the_same(run_host):
    assert run_host("gb200_tray", check_mode=True)["cliques"] == [GB200_CLIQUE]


def test_nvml_error_on_one_gpu(run_host, nvml_recording):
    recording = nvml_recording("gb200_tray")
    recording["devices"][3]["errors"] = {"fabric_info": "NVMLError_GpuIsLost: GPU is lost"}
    result = run_host("gb200_tray", recording)
    assert "failed" not in result
    assert result["errors"] == ["GPU 3: NVML fabric_info failed: NVMLError_GpuIsLost: GPU is lost"]
    assert (result["source"], result["count"], result["cliques"]) == ("nvml", 4, [GB200_CLIQUE])
    assert [g["fabric"] is None for g in result["gpus"]] == [False, False, False, True]
    assert result["gpus"][3]["uuid"] == "GPU-5e0d7b3a-91c4-4f0e-b1d2-7a3c9e0f1203"


def test_nvml_init_failure(run_host):
    reason = "NVMLError_LibRmVersionMismatch: RM has detected an NVML/RM version mismatch."
    result = run_host("hgx_h100", {"init_error": reason})
    assert "failed" not in result
    assert warning_messages(result) == [f"NVML is not usable ({reason}); listing GPUs from PCI sysfs instead"]
    assert (result["driver_loaded"], result["driver_version"], result["source"], result["count"]) == (
        True, "570.172.08", "pci", 8)
    assert (result["cuda_driver_version"], result["nvml_version"], result["cliques"]) == (None, None, [])
    assert [g["numa_node"] for g in result["gpus"]] == [0, 0, 0, 0, 1, 1, 1, 1]
    assert {g["uuid"] for g in result["gpus"]} == {None}


def test_pynvml_missing(module_runner, host_trees, monkeypatch):
    monkeypatch.setattr(nvml, "pynvml", None)
    result = module_runner(gpu_info, {"root": host_trees["gb200_tray"]})
    assert "failed" not in result
    warnings = warning_messages(result)
    assert len(warnings) == 1
    assert warnings[0].startswith("Failed to import the required Python library (nvidia-ml-py) on ")
    assert "This is required to query GPUs through NVML." in warnings[0]
    assert warnings[0].endswith("Listing GPUs from PCI sysfs instead")
    assert (result["driver_loaded"], result["source"], result["count"], result["cliques"]) == (True, "pci", 4, [])
    assert [g["pci_address"] for g in result["gpus"]] == ["0008:01:00.0", "0009:01:00.0", "0018:01:00.0",
                                                          "0019:01:00.0"]


def test_pynvml_missing_without_driver_is_silent(module_runner, host_trees, monkeypatch):
    monkeypatch.setattr(nvml, "pynvml", None)
    result = module_runner(gpu_info, {"root": host_trees["broken_node"]})
    assert (result["source"], result["count"]) == ("pci", 2)
    assert "warnings" not in result


def test_missing_root(module_runner, tmp_path):
    missing = str(tmp_path / "nowhere")
    result = module_runner(gpu_info, {"root": missing})
    assert result["failed"] is True
    assert result["msg"] == f"root {missing!r} does not exist or is not a directory"
    assert "gpus" not in result


def test_root_without_sysfs(module_runner, tmp_path):
    result = module_runner(gpu_info, {"root": str(tmp_path)})
    assert result["failed"] is True
    assert result["msg"] == f"root {str(tmp_path)!r} has no sys/ directory; the probe cannot read a host there"
    assert "gpus" not in result


def test_root_with_empty_sysfs_is_answered(module_runner, tmp_path):
    (tmp_path / "sys").mkdir()
    result = module_runner(gpu_info, {"root": str(tmp_path)})
    assert "failed" not in result
    assert result["errors"] == ["/sys/bus/pci/devices: not found"]
    assert result["count"] == 0


def test_garbage_in_sysfs(module_runner, fresh_tree, nvml_recording, replay):
    root = fresh_tree("broken_node")
    with open(f"{root}/sys/bus/pci/devices/0000:65:00.0/class", "w", encoding="utf-8") as handle:
        handle.write("\x00\x01garbage")
    replay(nvml_recording("broken_node"))
    result = module_runner(gpu_info, {"root": root})
    assert "failed" not in result
    assert result["errors"] == ["/sys/bus/pci/devices/0000:65:00.0/class: not a hexadecimal number"]
    assert [g["pci_address"] for g in result["gpus"]] == ["0000:17:00.0"]


def test_wrong_option_type_is_converted_to_a_path(module_runner):
    # `root` is type path: AnsibleModule turns a non-string into its text, which is then no directory.
    result = module_runner(gpu_info, {"root": ["/"]})
    assert result["failed"] is True
    assert result["msg"] == "root \"['/']\" does not exist or is not a directory"


def test_unknown_option_fails(module_runner, host_trees):
    result = module_runner(gpu_info, {"root": host_trees["hgx_h100"], "gather_subset": ["all"]})
    assert result["failed"] is True
    assert "Unsupported parameters for (basic.py) module: gather_subset" in result["msg"]
