# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tests of the GPU probe: PCI listing, fabric interpretation and collect_gpu over the recorded hosts."""

from __future__ import annotations

import os
import shutil

import pytest
from fixtures.recorded_nvml import RecordedSource

from ansible_collections.gpufabric.cluster.plugins.module_utils import gpu, nvml
from ansible_collections.gpufabric.cluster.plugins.module_utils.errors import ParseError

HGX_ADDRESSES = ["0000:1b:00.0", "0000:43:00.0", "0000:52:00.0", "0000:61:00.0",
                 "0000:9d:00.0", "0000:c3:00.0", "0000:d1:00.0", "0000:df:00.0"]
GB200_ADDRESSES = ["0008:01:00.0", "0009:01:00.0", "0018:01:00.0", "0019:01:00.0"]
GB200_UUID = "3c1a5f2e-9b7d-4c2a-8e6f-1d0b7a9c4e21"
GB200_CLIQUE = GB200_UUID + ".1"
ZERO_UUID = "00000000-0000-0000-0000-000000000000"


@pytest.fixture
def recorded(nvml_recording):
    """collect_gpu with a RecordedSource of ``name`` (or of a given recording dict)."""
    def collect(root, recording):
        return gpu.collect_gpu(root, None, source_factory=lambda _root: RecordedSource(recording))
    return collect


def _write(root, path, text):
    full = os.path.join(root, path.lstrip("/"))
    os.chmod(full, 0o644)
    with open(full, "w", encoding="utf-8") as handle:
        handle.write(text)


# --- pieces --------------------------------------------------------------------------------------


@pytest.mark.parametrize(("bus_id", "address"), [
    ("00000000:1B:00.0", "0000:1b:00.0"),
    ("00000018:01:00.0", "0018:01:00.0"),
    ("0000:df:00.0", "0000:df:00.0"),
    ("00010000:C1:1F.7", "10000:c1:1f.7"),
])
def test_normalize_pci_address(bus_id, address):
    assert gpu.normalize_pci_address(bus_id) == address


@pytest.mark.parametrize("bus_id", ["", "1b:00.0", "0000:zz:00.0", "0000:1b:00", "N/A"])
def test_normalize_pci_address_rejects_garbage(bus_id):
    with pytest.raises(ParseError, match="is not a PCI bus id"):
        gpu.normalize_pci_address(bus_id)


@pytest.mark.parametrize(("encoded", "text"), [(12080, "12.8"), (12090, "12.9"), (13000, "13.0"), (11040, "11.4")])
def test_cuda_version_text(encoded, text):
    assert gpu.cuda_version_text(encoded) == text


def test_list_pci_gpus_hgx_excludes_nvswitches(host_trees):
    gpus, errors = gpu.list_pci_gpus(host_trees["hgx_h100"])
    assert errors == []
    assert [g.address for g in gpus] == HGX_ADDRESSES  # the NVSwitches 0000:07/08:00.0 (class 0x0680) are not GPUs
    assert [g.numa_node for g in gpus] == [0, 0, 0, 0, 1, 1, 1, 1]
    assert {g.device_id for g in gpus} == {"0x2330"}
    assert {g.driver for g in gpus} == {"nvidia"}


def test_list_pci_gpus_broken_node_has_no_driver_bound(host_trees):
    gpus, errors = gpu.list_pci_gpus(host_trees["broken_node"])
    assert errors == []
    assert gpus == [gpu.PciGpu("0000:17:00.0", "0x2331", 0, None), gpu.PciGpu("0000:65:00.0", "0x2331", 0, None)]


def test_list_pci_gpus_no_nvidia(host_trees):
    assert gpu.list_pci_gpus(host_trees["no_nvidia"]) == ([], [])


def test_list_pci_gpus_bad_files(fresh_tree):
    root = fresh_tree("hgx_h100")
    devices = "/sys/bus/pci/devices"
    _write(root, f"{devices}/0000:43:00.0/numa_node", "-1\n")
    _write(root, f"{devices}/0000:52:00.0/numa_node", "zero\n")
    _write(root, f"{devices}/0000:61:00.0/device", "\n")
    os.unlink(os.path.join(root, "sys/bus/pci/devices/0000:9d:00.0/numa_node"))
    _write(root, f"{devices}/0000:06:00.0/vendor", "intel\n")  # the management NIC
    gpus, errors = gpu.list_pci_gpus(root)
    assert [g.address for g in gpus] == HGX_ADDRESSES
    assert [g.numa_node for g in gpus] == [0, None, None, 0, None, 1, 1, 1]
    assert gpus[3].device_id is None
    assert errors == [
        f"{devices}/0000:06:00.0/vendor: not a hexadecimal number",
        f"{devices}/0000:52:00.0/numa_node: not a NUMA node number",
        f"{devices}/0000:61:00.0/device: not a hexadecimal number",
    ]


def test_list_pci_gpus_without_sysfs(tmp_path):
    assert gpu.list_pci_gpus(str(tmp_path)) == ([], ["/sys/bus/pci/devices: not found"])


@pytest.mark.parametrize(("info", "expected"), [
    (None, {"state": "not_supported", "status": None, "cluster_uuid": None, "clique_id": None, "clique": None}),
    (nvml.FabricInfo(3, 0, ZERO_UUID, 0),
     {"state": "completed", "status": "success", "cluster_uuid": ZERO_UUID, "clique_id": 0, "clique": None}),
    (nvml.FabricInfo(3, 0, GB200_UUID, 1),
     {"state": "completed", "status": "success", "cluster_uuid": GB200_UUID, "clique_id": 1, "clique": GB200_CLIQUE}),
    (nvml.FabricInfo(3, 0, GB200_UUID, 32766),
     {"state": "completed", "status": "success", "cluster_uuid": GB200_UUID, "clique_id": 32766,
      "clique": GB200_UUID + ".32766"}),
    (nvml.FabricInfo(2, 0, GB200_UUID, 1),
     {"state": "in_progress", "status": "success", "cluster_uuid": GB200_UUID, "clique_id": 1, "clique": None}),
    (nvml.FabricInfo(1, 0, ZERO_UUID, 0),
     {"state": "not_started", "status": "success", "cluster_uuid": ZERO_UUID, "clique_id": 0, "clique": None}),
    # what a PCIe H100 (driver 580.159.04, nvidia-ml-py 13.610) answers: success, state NOT_SUPPORTED, zeros
    (nvml.FabricInfo(0, 0, ZERO_UUID, 0),
     {"state": "not_supported", "status": None, "cluster_uuid": None, "clique_id": None, "clique": None}),
    (nvml.FabricInfo(3, 999, GB200_UUID, 1),
     {"state": "completed", "status": "Unknown Error", "cluster_uuid": GB200_UUID, "clique_id": 1, "clique": None}),
    (nvml.FabricInfo(7, 0, GB200_UUID, 1),
     {"state": "unknown_7", "status": "success", "cluster_uuid": GB200_UUID, "clique_id": 1, "clique": None}),
])
def test_interpret_fabric(info, expected):
    result = gpu.interpret_fabric(info)
    assert {key: result[key] for key in expected} == expected
    assert (result["clique_unset"] is None) == (result["clique"] is not None)


V4_CLIQUES = ((0, 7), (1, 9), (2, 7), (3, 11))


@pytest.mark.parametrize(("cliques", "clique_id", "listed"), [
    # NVML: v3's cliqueId is the id of the first UNICAST_POINTER (type 0) entry; the list is sorted by type then id
    (V4_CLIQUES, 7, [{"type": "unicast_pointer", "id": 7}, {"type": "multicast_pointer", "id": 9},
                     {"type": "unicast_logical_endpoint", "id": 7}, {"type": "multicast_logical_endpoint", "id": 11}]),
    (((0, 3), (0, 8), (1, 1)), 3, [{"type": "unicast_pointer", "id": 3}, {"type": "unicast_pointer", "id": 8},
                                   {"type": "multicast_pointer", "id": 1}]),
    (((1, 4), (2, 5), (9, 6)), None, [{"type": "multicast_pointer", "id": 4},
                                      {"type": "unicast_logical_endpoint", "id": 5}, {"type": "unknown_9", "id": 6}]),
    ((), None, []),
])
def test_interpret_fabric_v4_cliques(cliques, clique_id, listed):
    result = gpu.interpret_fabric(nvml.FabricInfo(3, 0, GB200_UUID, None, 0x51AA, 1, cliques, 4))
    assert (result["clique_id"], result["cliques"], result["info_version"]) == (clique_id, listed, 4)
    if clique_id is None:
        assert result["clique"] is None
        assert result["clique_unset"] == ("the v4 fabric info lists no unicast-pointer clique, the clique GPU Feature "
                                          "Discovery and the DRA driver read")
    else:  # the string GPU Feature Discovery and the DRA driver build from v1's cliqueId
        assert result["clique"] == f"{GB200_UUID}.{clique_id}"


@pytest.mark.parametrize("version", [1, 2, 3])
def test_interpret_fabric_older_structs_list_their_one_clique(version):
    result = gpu.interpret_fabric(nvml.FabricInfo(3, 0, GB200_UUID, 1, info_version=version))
    assert (result["cliques"], result["info_version"], result["clique"]) == (
        [{"type": None, "id": 1}], version, GB200_CLIQUE)


def test_interpret_fabric_not_supported_keeps_the_struct_version():
    assert gpu.interpret_fabric(nvml.FabricInfo(0, 0, ZERO_UUID, None, 0, 0, (), 4))["info_version"] == 4
    assert gpu.interpret_fabric(None)["info_version"] is None
    assert gpu.interpret_fabric(None)["cliques"] == []


@pytest.mark.parametrize(("info", "unset"), [
    (None, "the GPU has no NVLink fabric"),
    (nvml.FabricInfo(3, 0, ZERO_UUID, 0), "the cluster UUID is all zero (an NVLink system that is not multi-node)"),
    (nvml.FabricInfo(2, 0, GB200_UUID, 1), "fabric registration is in_progress"),
    (nvml.FabricInfo(3, 999, GB200_UUID, 1), "fabric registration failed: Unknown Error"),
    (nvml.FabricInfo(3, 0, GB200_UUID, 1), None),
])
def test_interpret_fabric_says_why_no_clique(info, unset):
    assert gpu.interpret_fabric(info)["clique_unset"] == unset


def test_interpret_fabric_health_mask():
    degraded = gpu.interpret_fabric(nvml.FabricInfo(3, 0, GB200_UUID, 1, health_mask=0x51A9, health_summary=3))
    assert degraded["health"] == {"mask": 0x51A9, "degraded_bandwidth": True, "route_recovery": False,
                                  "route_unhealthy": False, "access_timeout_recovery": False,
                                  "incorrect_configuration": "none", "partition_assigned": True,
                                  "gfm_connected": True, "undefined_bits": 0, "summary": "limited_capacity",
                                  "reasons": []}
    v1 = gpu.interpret_fabric(nvml.FabricInfo(3, 0, GB200_UUID, 1))["health"]
    assert {key: v1[key] for key in nvml.FABRIC_HEALTH_FIELDS} == dict.fromkeys(nvml.FABRIC_HEALTH_FIELDS)
    assert v1["mask"] is None and v1["reasons"][0].startswith("NVML gave no health mask")
    assert gpu.interpret_fabric(None)["health"] is None


ZERO_UNSET = "the cluster UUID is all zero (an NVLink system that is not multi-node)"
# The v2 health of driver 570 (the HGX H100): the four conditions FALSE, the fields of later drivers not supported.
HEALTHY = {"mask": 170, "degraded_bandwidth": False, "route_recovery": False, "route_unhealthy": False,
           "access_timeout_recovery": False, "incorrect_configuration": None, "partition_assigned": None,
           "gfm_connected": None, "undefined_bits": 0, "summary": None,
           "reasons": ["incorrect_configuration: NVML reports it not supported",
                       "partition_assigned: NVML reports it not supported",
                       "gfm_connected: NVML reports it not supported",
                       "summary: NVML gave no health summary (fabric info older than nvmlGpuFabricInfo_v3)"]}
NO_PLATFORM = {"chassis_serials": [], "slot_numbers": [], "tray_indices": [], "host_ids": []}
NO_NVSWITCH = {"count": 0, "pci_addresses": []}
GB200_PLATFORM = {"chassis_serials": ["1823124190518"], "slot_numbers": [21], "tray_indices": [11], "host_ids": [1]}


# --- collect_gpu over the recorded hosts ---------------------------------------------------------


def test_collect_hgx_h100(host_trees, nvml_recording, recorded):
    result = recorded(host_trees["hgx_h100"], nvml_recording("hgx_h100"))
    gpus = result.pop("gpus")
    assert result == {
        "driver_loaded": True, "driver_version": "570.172.08", "kernel_module": "open",
        "cuda_driver_version": "12.8", "nvml_version": "12.570.172.08", "source": "nvml", "nvml_bindings": True,
        "count": 8,
        "cliques": [], "platform": NO_PLATFORM, "errors": [], "warnings": [],
        "nvswitches": {"count": 2, "pci_addresses": ["0000:07:00.0", "0000:08:00.0"]},
        "xid_events": {"source": "/dev/kmsg", "complete": True, "other_addresses": {}},
        "fabricmanager": None,  # no runner: systemctl is not asked
    }
    assert [g["index"] for g in gpus] == list(range(8))
    assert [g["pci_address"] for g in gpus] == HGX_ADDRESSES
    assert [g["numa_node"] for g in gpus] == [0, 0, 0, 0, 1, 1, 1, 1]
    assert gpus[5] == {
        "index": 5, "uuid": "GPU-8f6b2c1e-4d3a-11ee-9c1a-000000000005", "name": "NVIDIA H100 80GB HBM3",
        "pci_address": "0000:c3:00.0", "device_id": "0x2330", "numa_node": 1, "memory_total_mib": 81559,
        "mig_mode": {"current": False, "pending": False}, "persistence_mode": True,
        "fabric": {"state": "completed", "status": "success", "cluster_uuid": ZERO_UUID, "clique_id": 0,
                   "clique": None, "clique_unset": ZERO_UNSET, "health": HEALTHY, "info_version": 2,
                   "cliques": [{"type": None, "id": 0}]},
        "platform": None,  # an H100: NVML has platform info for Blackwell and newer only
        "nvlink": {"present": 18, "active": 18, "inactive_links": [], "speed_mbps": 26562, "reasons": []},
        "driver": "nvidia",
        "memory_errors": {"remapped_rows": {"correctable": 0, "uncorrectable": 0, "pending": False, "failure": False},
                          "ecc_uncorrected": {"volatile": 0, "aggregate": 0}, "reasons": []},
        "recovery_action": "none", "nvlink_errors": [], "xid_counts": {},
    }


def test_collect_gb200_tray(host_trees, nvml_recording, recorded):
    result = recorded(host_trees["gb200_tray"], nvml_recording("gb200_tray"))
    assert (result["source"], result["count"], result["cliques"]) == ("nvml", 4, [GB200_CLIQUE])
    assert (result["errors"], result["warnings"]) == ([], [])
    assert [g["pci_address"] for g in result["gpus"]] == GB200_ADDRESSES
    assert [g["numa_node"] for g in result["gpus"]] == [0, 0, 1, 1]
    assert [g["fabric"]["clique"] for g in result["gpus"]] == [GB200_CLIQUE] * 4
    assert {g["memory_total_mib"] for g in result["gpus"]} == {190464}
    assert result["gpus"][3]["uuid"] == "GPU-5e0d7b3a-91c4-4f0e-b1d2-7a3c9e0f1203"
    assert result["platform"] == GB200_PLATFORM
    assert [g["platform"]["module_id"] for g in result["gpus"]] == [2, 1, 4, 3]
    assert result["gpus"][1]["platform"] == {"info_version": 2, "chassis_serial": "1823124190518", "slot_number": 21,
                                             "tray_index": 11, "host_id": 1, "peer_type": 1, "module_id": 1,
                                             "ib_guid": "0x5e0d7b3a91c4f001", "reasons": []}
    assert {g["fabric"]["info_version"] for g in result["gpus"]} == {4}
    assert {g["fabric"]["health"]["summary"] for g in result["gpus"]} == {"healthy"}


def test_collect_no_nvidia(host_trees, nvml_recording, recorded):
    assert recorded(host_trees["no_nvidia"], nvml_recording("no_nvidia")) == {
        "driver_loaded": False, "driver_version": None, "kernel_module": None, "cuda_driver_version": None,
        "nvml_version": None, "source": "pci", "nvml_bindings": None,
        "count": 0, "gpus": [], "cliques": [], "platform": NO_PLATFORM, "nvswitches": NO_NVSWITCH,
        "errors": [], "warnings": [], "xid_events": None, "fabricmanager": None,
    }


def test_collect_broken_node_lists_pci(host_trees, nvml_recording, recorded):
    result = recorded(host_trees["broken_node"], nvml_recording("broken_node"))
    gpus = result.pop("gpus")
    assert result == {
        "driver_loaded": False, "driver_version": None, "kernel_module": None, "cuda_driver_version": None,
        "nvml_version": None, "source": "pci", "nvml_bindings": None,
        "count": 2, "cliques": [], "platform": NO_PLATFORM, "nvswitches": NO_NVSWITCH, "errors": [],
        "warnings": [], "xid_events": {"source": "/dev/kmsg", "complete": True, "other_addresses": {}},
        "fabricmanager": None,
    }
    assert gpus[1] == {
        "index": 1, "uuid": None, "name": None, "pci_address": "0000:65:00.0", "device_id": "0x2331",
        "numa_node": 0, "memory_total_mib": None, "mig_mode": None, "persistence_mode": None, "fabric": None,
        "platform": None, "nvlink": None, "driver": None, "memory_errors": None, "recovery_action": None,
        "nvlink_errors": None, "xid_counts": {},  # the kernel log is read without the driver too
    }


def test_collect_does_not_ask_nvml_without_driver(host_trees):
    def factory(_root):
        raise AssertionError("NVML must not be asked when the driver is not loaded")
    assert gpu.collect_gpu(host_trees["broken_node"], None, source_factory=factory)["count"] == 2


def test_nvml_error_on_one_gpu_keeps_the_others(host_trees, nvml_recording, recorded):
    recording = nvml_recording("gb200_tray")
    recording["devices"][1]["errors"] = {"fabric_info": "NVMLError_GpuIsLost: GPU is lost",
                                         "memory_total": "NVMLError_GpuIsLost: GPU is lost"}
    result = recorded(host_trees["gb200_tray"], recording)
    assert result["errors"] == ["GPU 1: NVML memory_total failed: NVMLError_GpuIsLost: GPU is lost",
                                "GPU 1: NVML fabric_info failed: NVMLError_GpuIsLost: GPU is lost"]
    assert (result["source"], result["count"], result["cliques"]) == ("nvml", 4, [GB200_CLIQUE])
    broken = result["gpus"][1]
    assert (broken["fabric"], broken["memory_total_mib"]) == (None, None)
    assert (broken["uuid"], broken["pci_address"], broken["numa_node"]) == (
        "GPU-5e0d7b3a-91c4-4f0e-b1d2-7a3c9e0f1201", "0009:01:00.0", 0)
    assert [g["fabric"]["clique"] for i, g in enumerate(result["gpus"]) if i != 1] == [GB200_CLIQUE] * 3


def test_every_query_of_one_gpu_failing(host_trees, nvml_recording, recorded):
    recording = nvml_recording("hgx_h100")
    recording["devices"][7]["errors"] = dict.fromkeys(nvml.DEVICE_QUERIES, "NVMLError_Unknown: Unknown Error")
    result = recorded(host_trees["hgx_h100"], recording)
    # every query but the NVLink error counters, which are asked of the active links only (none known here)
    assert result["errors"] == [f"GPU 7: NVML {query} failed: NVMLError_Unknown: Unknown Error"
                                for query in nvml.DEVICE_QUERIES if query != "nvlink_errors"]
    assert result["gpus"][7] == {"index": 7, "uuid": None, "name": None, "pci_address": None, "device_id": None,
                                 "numa_node": None, "memory_total_mib": None, "mig_mode": None,
                                 "persistence_mode": None, "fabric": None, "platform": None, "driver": None,
                                 "nvlink": {"present": None, "active": None, "inactive_links": None,
                                            "speed_mbps": None,
                                            "reasons": ["nvlink_states: NVML failed (see errors)",
                                                        "nvlink_speed_mbps: NVML failed (see errors)"]},
                                 "memory_errors": {"remapped_rows": None, "ecc_uncorrected": None,
                                                   "reasons": ["remapped_rows: NVML failed (see errors)",
                                                               "ecc_uncorrected: NVML failed (see errors)"]},
                                 "recovery_action": None, "nvlink_errors": None, "xid_counts": {}}
    assert result["count"] == 8
    assert result["warnings"] == ["PCI GPU 0000:df:00.0 is not reported by NVML"]


def test_not_supported_answers_are_not_errors(host_trees, nvml_recording, recorded):
    recording = nvml_recording("hgx_h100")
    recording["devices"][0]["fabric"] = None
    recording["devices"][0]["errors"] = {"mig_mode": "NVMLError_NotSupported: Not Supported",
                                         "persistence_mode": "NVMLError_NotSupported: Not Supported"}
    recording["devices"][1]["errors"] = {"uuid": "NVMLError_NotSupported: Not Supported"}
    result = recorded(host_trees["hgx_h100"], recording)
    first = result["gpus"][0]
    assert first["fabric"] == {"state": "not_supported", "status": None, "cluster_uuid": None, "clique_id": None,
                               "clique": None, "clique_unset": "the GPU has no NVLink fabric", "health": None,
                               "info_version": None, "cliques": []}
    assert (first["mig_mode"], first["persistence_mode"]) == (None, None)
    assert result["errors"] == ["GPU 1: NVML uuid failed: NVMLError_NotSupported: Not Supported"]


def test_platform_info_errors_and_gaps(host_trees, nvml_recording, recorded):
    recording = nvml_recording("gb200_tray")
    recording["devices"][0]["errors"] = {"platform_info": "NVMLError_GpuIsLost: GPU is lost"}
    recording["devices"][1]["platform"] = None  # NOT_SUPPORTED on a GPU of a clique: unexpected, warned
    recording["devices"][2]["platform"]["chassis_serial_number"] = (b"18231241\xe9" + bytes(7)).hex()  # not ASCII
    result = recorded(host_trees["gb200_tray"], recording)
    assert result["errors"] == ["GPU 0: NVML platform_info failed: NVMLError_GpuIsLost: GPU is lost"]
    assert result["warnings"] == ["GPU 1: NVML gives no platform info (NVMLError_NotSupported: Not Supported) for a "
                                  "GPU of a multi-node NVLink clique; its rack, slot and tray are unknown"]
    assert [g["platform"] is None for g in result["gpus"]] == [True, True, False, False]
    assert result["gpus"][2]["platform"]["chassis_serial"] is None
    assert result["gpus"][2]["platform"]["reasons"] == [
        "chassis_serial: not a chassis serial (1 to 16 letters, digits and _.-)"]
    assert result["platform"] == GB200_PLATFORM  # from GPU 3, the one that has it all


def test_gpus_of_two_trays_on_one_host_warn(host_trees, nvml_recording, recorded):
    recording = nvml_recording("gb200_tray")
    recording["devices"][3]["platform"].update(chassis_serial_number=b"1823124190733".ljust(16, b"\0").hex(),
                                               slot_number=5, tray_index=4)
    result = recorded(host_trees["gb200_tray"], recording)
    assert result["platform"] == {"chassis_serials": ["1823124190518", "1823124190733"], "slot_numbers": [5, 21],
                                  "tray_indices": [4, 11], "host_ids": [1]}
    assert result["warnings"] == ["GPUs of this host report different chassis serials: 1823124190518, 1823124190733",
                                  "GPUs of this host report different slot numbers: 5, 21",
                                  "GPUs of this host report different tray indices: 4, 11"]


def test_no_platform_info_outside_a_clique_is_not_warned(host_trees, nvml_recording, recorded):
    recording = nvml_recording("hgx_h100")  # every GPU NOT_SUPPORTED, none in a multi-node clique
    assert recorded(host_trees["hgx_h100"], recording)["warnings"] == []


@pytest.mark.parametrize("info", [
    nvml.PlatformInfo(2, bytes(16), bytes(16), 0, 0, 0, 0, 0),
    nvml.PlatformInfo(1, b"\xff" * 16, b"\xff" * 16, 255, 255, 255, 255, 255),
])
def test_platform_summary_skips_unknown_values(info):
    gpus = [{"platform": nvml.decode_platform_info(info)}, {"platform": None}, {}]
    warnings = []
    summary = gpu.platform_summary(gpus, warnings)
    serial_unknown = {"chassis_serials": [], "host_ids": [info.host_id]}
    if info.slot_number == 255:
        assert summary == dict(serial_unknown, slot_numbers=[], tray_indices=[])
    else:
        assert summary == dict(serial_unknown, slot_numbers=[0], tray_indices=[0])
    assert warnings == []


def test_mig_and_persistence(host_trees, nvml_recording, recorded):
    recording = nvml_recording("hgx_h100")
    recording["devices"][2]["mig_mode"] = [1, 0]
    recording["devices"][3]["mig_mode"] = [0, 1]
    recording["devices"][3]["persistence_mode"] = 0
    gpus = recorded(host_trees["hgx_h100"], recording)["gpus"]
    assert gpus[2]["mig_mode"] == {"current": True, "pending": False}
    assert (gpus[3]["mig_mode"], gpus[3]["persistence_mode"]) == ({"current": False, "pending": True}, False)


def test_fabric_not_ready_and_failed_registration_warn(host_trees, nvml_recording, recorded):
    recording = nvml_recording("gb200_tray")
    recording["devices"][2]["fabric"]["state"] = 2
    recording["devices"][3]["fabric"]["status"] = 27
    result = recorded(host_trees["gb200_tray"], recording)
    assert result["warnings"] == ["GPU 2: NVLink fabric registration is in_progress; no clique yet",
                                  "GPU 3: NVLink fabric registration failed: Not Ready"]
    assert [g["fabric"]["clique"] for g in result["gpus"]] == [GB200_CLIQUE, GB200_CLIQUE, None, None]
    assert result["cliques"] == [GB200_CLIQUE]


def test_gpus_in_different_cliques_warn(host_trees, nvml_recording, recorded):
    recording = nvml_recording("gb200_tray")
    recording["devices"][3]["fabric"]["cliques"] = [[0, 2], [1, 1], [2, 1], [3, 1]]
    result = recorded(host_trees["gb200_tray"], recording)
    assert result["cliques"] == [GB200_CLIQUE, GB200_UUID + ".2"]
    assert result["warnings"] == [f"GPUs of this host report different cliques: {GB200_CLIQUE}, {GB200_UUID}.2"]


def test_nvml_gpu_missing_from_sysfs(host_trees, nvml_recording, recorded):
    recording = nvml_recording("gb200_tray")
    recording["devices"][0]["pci_bus_id"] = "00000042:01:00.0"
    recording["devices"][1]["pci_bus_id"] = "N/A"
    result = recorded(host_trees["gb200_tray"], recording)
    assert result["errors"] == ["GPU 1: NVML pci_bus_id: 'N/A' is not a PCI bus id"]
    assert result["warnings"] == ["GPU 0: 0042:01:00.0 is not in /sys/bus/pci/devices",
                                  "PCI GPU 0008:01:00.0 is not reported by NVML",
                                  "PCI GPU 0009:01:00.0 is not reported by NVML"]
    assert (result["gpus"][0]["numa_node"], result["gpus"][0]["device_id"], result["gpus"][0]["driver"]) == (
        None, None, None)


def test_system_query_errors(host_trees, nvml_recording, recorded):
    recording = nvml_recording("hgx_h100")
    recording["errors"] = {"driver_version": "NVMLError_Unknown: Unknown Error",
                           "cuda_driver_version": "NVMLError_Unknown: Unknown Error"}
    result = recorded(host_trees["hgx_h100"], recording)
    assert result["errors"] == ["NVML driver_version failed: NVMLError_Unknown: Unknown Error",
                                "NVML cuda_driver_version failed: NVMLError_Unknown: Unknown Error"]
    assert (result["source"], result["driver_version"], result["cuda_driver_version"], result["count"]) == (
        "nvml", "570.172.08", None, 8)  # the driver version then comes from /proc


def test_nvml_init_failure_falls_back_to_pci(host_trees, recorded):
    result = recorded(host_trees["hgx_h100"], {"init_error": "NVMLError_DriverNotLoaded: Driver Not Loaded"})
    assert result["warnings"] == ["NVML is not usable (NVMLError_DriverNotLoaded: Driver Not Loaded); "
                                  "listing GPUs from PCI sysfs instead"]
    assert (result["driver_loaded"], result["driver_version"], result["kernel_module"]) == (True, "570.172.08", "open")
    assert (result["source"], result["count"], result["cuda_driver_version"], result["nvml_version"]) == (
        "pci", 8, None, None)
    assert [g["pci_address"] for g in result["gpus"]] == HGX_ADDRESSES
    assert {g["uuid"] for g in result["gpus"]} == {None}
    assert {g["driver"] for g in result["gpus"]} == {"nvidia"}
    assert result["errors"] == []


def test_device_count_failure_falls_back_to_pci(host_trees, nvml_recording, recorded):
    recording = nvml_recording("gb200_tray")
    recording["errors"] = {"nvml_version": "NVMLError_Unknown: Unknown Error",
                           "device_count": "NVMLError_InsufficientPermissions: Insufficient Permissions"}
    result = recorded(host_trees["gb200_tray"], recording)
    assert result["warnings"] == ["NVML is not usable (NVMLError_InsufficientPermissions: Insufficient Permissions); "
                                  "listing GPUs from PCI sysfs instead"]
    assert (result["source"], result["count"], result["cliques"], result["cuda_driver_version"]) == (
        "pci", 4, [], None)
    assert result["errors"] == []


def test_shutdown_failure_is_a_warning(host_trees, nvml_recording):
    class Source(RecordedSource):
        def shutdown(self):
            raise nvml.NvmlError("NVMLError_Uninitialized: Uninitialized")

    recording = nvml_recording("gb200_tray")
    result = gpu.collect_gpu(host_trees["gb200_tray"], None, source_factory=lambda _root: Source(recording))
    assert result["warnings"] == ["NVML shutdown failed: NVMLError_Uninitialized: Uninitialized"]
    assert (result["source"], result["count"]) == ("nvml", 4)


def test_default_factory_without_pynvml(host_trees, monkeypatch):
    monkeypatch.setattr(nvml, "pynvml", None)
    result = gpu.collect_gpu(host_trees["gb200_tray"], None)
    assert len(result["warnings"]) == 1
    assert result["warnings"][0].startswith("Failed to import the required Python library (nvidia-ml-py) on ")
    assert result["warnings"][0].endswith("ansible_python_interpreter. Listing GPUs from PCI sysfs instead")
    assert (result["source"], result["count"], result["driver_loaded"]) == ("pci", 4, True)


def test_default_factory_does_not_mix_live_nvml_into_a_tree(host_trees, monkeypatch):
    monkeypatch.setattr(nvml, "pynvml", object())  # importable, but never used for a tree
    result = gpu.collect_gpu(host_trees["hgx_h100"], None)
    assert result["warnings"] == [
        f"NVML is not usable (NVML describes the running host, not the tree at root {host_trees['hgx_h100']!r}); "
        "listing GPUs from PCI sysfs instead"]
    assert (result["source"], result["count"]) == ("pci", 8)


def test_factory_is_looked_up_when_called(host_trees, nvml_recording, monkeypatch):
    monkeypatch.setattr(nvml, "nvml_source", lambda _root: RecordedSource(nvml_recording("gb200_tray")))
    assert gpu.collect_gpu(host_trees["gb200_tray"], None)["cliques"] == [GB200_CLIQUE]


def test_missing_root(tmp_path):
    missing = str(tmp_path / "absent")
    assert gpu.collect_gpu(missing, None) == {
        "driver_loaded": False, "driver_version": None, "kernel_module": None, "cuda_driver_version": None,
        "nvml_version": None, "source": "pci", "nvml_bindings": None,
        "count": 0, "gpus": [], "cliques": [], "platform": NO_PLATFORM, "nvswitches": NO_NVSWITCH,
        "errors": [f"root {missing!r} does not exist or is not a directory"], "warnings": [], "xid_events": None,
        "fabricmanager": None,
    }


# --- NVSwitches on PCI, before any driver loads (issue 42 item 4) --------------------------------

def _driverless_copy(tmp_path, root):
    """The recorded host as on its first run: the same PCI functions, no NVIDIA driver loaded."""
    copy = str(tmp_path / "driverless")
    shutil.copytree(root, copy, symlinks=True)
    for path in ("sys/module/nvidia", "proc/driver/nvidia"):
        shutil.rmtree(os.path.join(copy, path), ignore_errors=True)
    return copy


def test_a_driverless_hgx_host_lists_its_nvswitches_from_pci(tmp_path, host_trees):
    result = gpu.collect_gpu(_driverless_copy(tmp_path, host_trees["hgx_h100"]), None)
    assert (result["driver_loaded"], result["source"], result["count"]) == (False, "pci", 8)
    assert result["nvswitches"] == {"count": 2, "pci_addresses": ["0000:07:00.0", "0000:08:00.0"]}
    assert all(item["fabric"] is None for item in result["gpus"])


def test_a_gb200_tray_has_no_nvswitch_on_its_pci_bus(tmp_path, host_trees):
    assert gpu.collect_gpu(_driverless_copy(tmp_path, host_trees["gb200_tray"]), None)["nvswitches"] == NO_NVSWITCH


def test_list_pci_nvswitches_is_only_nvidia_bridge_other(host_trees):
    assert gpu.list_pci_nvswitches(host_trees["hgx_h100"]) == (["0000:07:00.0", "0000:08:00.0"], [])
    assert gpu.list_pci_nvswitches(host_trees["no_nvidia"]) == ([], [])
