# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The gpu_info module end to end through AnsibleModule on every recorded host, NVML replayed."""

from __future__ import annotations

import pytest
from fixtures.recorded_nvml import RecordedSource, load_recording

from ansible_collections.gpufabric.cluster.plugins.module_utils import nvml
from ansible_collections.gpufabric.cluster.plugins.modules import gpu_info
from ansible_collections.gpufabric.cluster.tests.unit.helpers import warning_messages

GB200_CLIQUE = "3c1a5f2e-9b7d-4c2a-8e6f-1d0b7a9c4e21.1"
ZERO_UUID = "00000000-0000-0000-0000-000000000000"
ZERO_UNSET = "the cluster UUID is all zero (an NVLink system that is not multi-node)"
# driver 570's v2 fabric info on the HGX H100: the four conditions FALSE, the later fields NOT_SUPPORTED
HGX_HEALTH = {"mask": 170, "degraded_bandwidth": False, "route_recovery": False, "route_unhealthy": False,
              "access_timeout_recovery": False, "incorrect_configuration": None, "partition_assigned": None,
              "gfm_connected": None, "undefined_bits": 0, "summary": None,
              "reasons": ["incorrect_configuration: NVML reports it not supported",
                          "partition_assigned: NVML reports it not supported",
                          "gfm_connected: NVML reports it not supported",
                          "summary: NVML gave no health summary (fabric info older than nvmlGpuFabricInfo_v3)"]}
# the v4 fabric info of a healthy GB200: every field known and good, mask 0x51aa
GB200_HEALTH = {"mask": 0x51AA, "degraded_bandwidth": False, "route_recovery": False, "route_unhealthy": False,
                "access_timeout_recovery": False, "incorrect_configuration": "none", "partition_assigned": True,
                "gfm_connected": True, "undefined_bits": 0, "summary": "healthy", "reasons": []}
GB200_CLIQUES = [{"type": "unicast_pointer", "id": 1}, {"type": "multicast_pointer", "id": 1},
                 {"type": "unicast_logical_endpoint", "id": 1}, {"type": "multicast_logical_endpoint", "id": 1}]
NO_PLATFORM = {"chassis_serials": [], "slot_numbers": [], "tray_indices": [], "host_ids": []}
RESULT_KEYS = {"changed", "driver_loaded", "driver_version", "kernel_module", "cuda_driver_version", "nvml_version",
               "source", "nvml_bindings", "count", "gpus", "cliques", "platform", "nvswitches", "xid_events",
               "fabricmanager", "errors"}
GPU_KEYS = {"index", "uuid", "name", "pci_address", "device_id", "numa_node", "memory_total_mib", "mig_mode",
            "persistence_mode", "fabric", "platform", "nvlink", "driver", "memory_errors", "recovery_action",
            "nvlink_errors", "xid_counts"}


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
    assert set(result) == RESULT_KEYS
    assert (result["changed"], result["driver_loaded"], result["source"], result["count"]) == (False, True, "nvml", 8)
    versions = [result[key] for key in ("driver_version", "kernel_module", "cuda_driver_version", "nvml_version")]
    assert versions == ["570.172.08", "open", "12.8", "12.570.172.08"]
    assert result["cliques"] == []  # NVSwitch system: all-zero cluster UUID, not multi-node
    assert result["errors"] == []
    assert "warnings" not in result
    assert result["fabricmanager"] == {
        "exists": True, "enabled": True, "active": True, "masked": False, "unit_file_state": "enabled",
        "active_state": "active", "sub_state": "running", "since": "Sat 2026-11-28 06:08:10 UTC", "result": "success",
        "exit_status": 0, "restarts": 0}
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
                               "clique": None, "clique_unset": ZERO_UNSET, "health": HGX_HEALTH, "info_version": 2,
                               "cliques": [{"type": None, "id": 0}]} for g in gpus)
    assert {g["platform"] is None for g in gpus} == {True}  # Hopper: NVML has no platform info
    assert result["platform"] == NO_PLATFORM
    assert all(g["nvlink"] == {"present": 18, "active": 18, "inactive_links": [], "speed_mbps": 26562, "reasons": []}
               for g in gpus)


def test_gb200_tray(run_host):
    result = run_host("gb200_tray")
    assert (result["source"], result["count"], result["cliques"], result["errors"]) == ("nvml", 4, [GB200_CLIQUE], [])
    # A compute tray runs no fabric manager (the rack's switch trays do): systemd does not know the unit.
    assert (result["fabricmanager"]["exists"], result["fabricmanager"]["active"]) == (False, False)
    assert [g["pci_address"] for g in result["gpus"]] == ["0008:01:00.0", "0009:01:00.0", "0018:01:00.0",
                                                          "0019:01:00.0"]
    assert [g["numa_node"] for g in result["gpus"]] == [0, 0, 1, 1]
    assert result["gpus"][2]["fabric"] == {"state": "completed", "status": "success",
                                           "cluster_uuid": "3c1a5f2e-9b7d-4c2a-8e6f-1d0b7a9c4e21", "clique_id": 1,
                                           "clique": GB200_CLIQUE, "clique_unset": None, "health": GB200_HEALTH,
                                           "info_version": 4, "cliques": GB200_CLIQUES}
    assert result["gpus"][2]["platform"] == {"info_version": 2, "chassis_serial": "1823124190518", "slot_number": 21,
                                             "tray_index": 11, "host_id": 1, "peer_type": 1, "module_id": 4,
                                             "ib_guid": "0x5e0d7b3a91c4f002", "reasons": []}
    assert result["platform"] == {"chassis_serials": ["1823124190518"], "slot_numbers": [21], "tray_indices": [11],
                                  "host_ids": [1]}
    assert "warnings" not in result
    assert result["gpus"][2]["nvlink"] == {"present": 18, "active": 18, "inactive_links": [], "speed_mbps": 53125,
                                           "reasons": []}
    assert (result["gpus"][2]["name"], result["gpus"][2]["memory_total_mib"], result["gpus"][2]["device_id"]) == (
        "NVIDIA GB200", 190464, "0x2941")


@pytest.fixture(scope="module")
def new_trays(tree_builder, tmp_path_factory):
    """The GB200 trays that show the health fields and the platform info: misconfigured, GFM down, limited, no
    partition."""
    dest = str(tmp_path_factory.mktemp("health-trays"))
    return {name: tree_builder.build_tree(name, dest) for name in (
        "gb200_tray_misconfigured", "gb200_tray_gfm_down", "gb200_tray_limited", "gb200_tray_no_partition")}


def _run_tray(module_runner, replay, new_trays, name):
    replay(load_recording(new_trays[name]))
    return module_runner(gpu_info, {"root": new_trays[name]})


def test_misconfigured_tray_of_another_chassis(module_runner, replay, new_trays):
    result = _run_tray(module_runner, replay, new_trays, "gb200_tray_misconfigured")
    assert (result["cliques"], result["errors"]) == ([GB200_CLIQUE], [])
    assert result["platform"] == {"chassis_serials": ["1823124190733"], "slot_numbers": [5], "tray_indices": [4],
                                  "host_ids": [1]}
    for item in result["gpus"]:
        assert item["fabric"]["info_version"] == 3
        assert item["fabric"]["cliques"] == [{"type": None, "id": 1}]
        assert item["fabric"]["health"] == dict(GB200_HEALTH, mask=0x53AA, summary="unhealthy",
                                                incorrect_configuration="incorrect_chassis_sn")


def test_gfm_down_tray(module_runner, replay, new_trays):
    result = _run_tray(module_runner, replay, new_trays, "gb200_tray_gfm_down")
    assert {(item["fabric"]["health"]["gfm_connected"], item["fabric"]["health"]["summary"])
            for item in result["gpus"]} == {(False, "unhealthy")}
    assert result["cliques"] == [GB200_CLIQUE]


def test_limited_tray(module_runner, replay, new_trays):
    result = _run_tray(module_runner, replay, new_trays, "gb200_tray_limited")
    assert [item["fabric"]["health"] for item in result["gpus"]] == [
        GB200_HEALTH, dict(GB200_HEALTH, mask=0x51A6, route_recovery=True, summary="limited_capacity"),
        GB200_HEALTH, GB200_HEALTH]


def test_no_partition_tray(module_runner, replay, new_trays):
    result = _run_tray(module_runner, replay, new_trays, "gb200_tray_no_partition")
    assert result["cliques"] == []
    assert warning_messages(result) == [f"GPU {index}: NVLink fabric registration is in_progress; no clique yet"
                                        for index in range(4)]
    for item in result["gpus"]:
        assert (item["fabric"]["state"], item["fabric"]["cliques"], item["fabric"]["clique_unset"]) == (
            "in_progress", [], "fabric registration is in_progress")
        assert item["fabric"]["health"] == dict(GB200_HEALTH, mask=0x64AA, incorrect_configuration="no_partition",
                                                partition_assigned=False, summary="unhealthy")
    assert result["platform"]["chassis_serials"] == ["1823124190518"]


def test_no_nvidia(run_host):
    result = run_host("no_nvidia")
    assert {key: result[key] for key in RESULT_KEYS} == {
        "changed": False, "driver_loaded": False, "driver_version": None, "kernel_module": None,
        "cuda_driver_version": None, "nvml_version": None, "source": "pci", "nvml_bindings": None,
        "count": 0, "gpus": [], "cliques": [],
        "platform": NO_PLATFORM, "nvswitches": {"count": 0, "pci_addresses": []}, "xid_events": None, "errors": [],
        "fabricmanager": None,  # no NVIDIA GPU or NVSwitch: the unit is not asked for
    }
    assert "warnings" not in result


def test_broken_node(run_host):
    result = run_host("broken_node")
    assert (result["driver_loaded"], result["driver_version"], result["source"], result["count"]) == (
        False, None, "pci", 2)
    assert result["gpus"] == [
        {"index": index, "uuid": None, "name": None, "pci_address": address, "device_id": "0x2331", "numa_node": 0,
         "memory_total_mib": None, "mig_mode": None, "persistence_mode": None, "fabric": None, "platform": None,
         "nvlink": None, "driver": None, "memory_errors": None, "recovery_action": None, "nvlink_errors": None,
         "xid_counts": {}}
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
