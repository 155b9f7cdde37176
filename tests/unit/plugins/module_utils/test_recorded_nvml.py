# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The recorded NVML double (tests/fixtures/recorded_nvml.py) against expectations written here by hand.

Nothing below is read back from the tree builder that wrote the recordings: the expected answers are literals, as
``nvidia-smi -q`` shows them for these hosts, and NVML's own conventions come from nvidia-ml-py (its
``c_nvmlGpuFabricInfo_t``, ``c_nvmlGpuFabricInfo_v4_t`` and ``c_nvmlPlatformInfo_v2_t`` structs, its ``NVMLError_*``
classes and texts) and the DRA driver's clique rule (``<ClusterUUID>.<CliqueId>``, an all-zero ClusterUUID is no
clique). Where the double and the real adapter (``PynvmlSource`` over a stand-in pynvml built from those facts) are
given the same facts, they must answer alike.
"""

from __future__ import annotations

import ctypes
import dataclasses
import types

import pynvml
import pytest
from fixtures.recorded_nvml import RecordedSource, load_recording

from ansible_collections.gpufabric.cluster.plugins.module_utils import gpu, nvml
from ansible_collections.gpufabric.cluster.plugins.module_utils.errors import NvmlError

# nvidia-smi -q of the GB200 tray: Bus Id, GPU UUID, FB Memory Usage Total, Fabric section.
GB200_BUS_IDS = ["00000008:01:00.0", "00000009:01:00.0", "00000018:01:00.0", "00000019:01:00.0"]
GB200_UUIDS = ["GPU-5e0d7b3a-91c4-4f0e-b1d2-7a3c9e0f1200", "GPU-5e0d7b3a-91c4-4f0e-b1d2-7a3c9e0f1201",
               "GPU-5e0d7b3a-91c4-4f0e-b1d2-7a3c9e0f1202", "GPU-5e0d7b3a-91c4-4f0e-b1d2-7a3c9e0f1203"]
GB200_CLUSTER_UUID_BYTES = bytes([0x3c, 0x1a, 0x5f, 0x2e, 0x9b, 0x7d, 0x4c, 0x2a,
                                  0x8e, 0x6f, 0x1d, 0x0b, 0x7a, 0x9c, 0x4e, 0x21])
GB200_CLIQUE = "3c1a5f2e-9b7d-4c2a-8e6f-1d0b7a9c4e21.1"
# nvidia-smi -q of the GB200 tray, Platform Info: Chassis Serial Number, Slot Number, Tray Index, Host ID, Peer Type
# (Switch Connected: 1), Module Id per GPU, GPU Fabric GUID per GPU.
GB200_CHASSIS_SERIAL = b"1823124190518"
GB200_PLACE = {"slot_number": 21, "tray_index": 11, "host_id": 1, "peer_type": 1}
GB200_MODULE_IDS = [2, 1, 4, 3]
GB200_GUIDS = ["0x5e0d7b3a91c4f000", "0x5e0d7b3a91c4f001", "0x5e0d7b3a91c4f002", "0x5e0d7b3a91c4f003"]
# Fabric health of a healthy GB200: the four conditions FALSE (2), configuration NONE (1), partition assigned TRUE
# (1), global fabric manager CONNECTED (1): 0b01_01_0001_10101010; summary HEALTHY (1); one clique of each of the
# four types, all clique 1.
GB200_HEALTH_MASK = 0b0101_0001_1010_1010
GB200_V4_CLIQUES = [(0, 1), (1, 1), (2, 1), (3, 1)]
# nvidia-smi -q of the HGX H100: NVML's bus id has an 8-digit domain and upper-case hex.
HGX_BUS_IDS = ["00000000:1B:00.0", "00000000:43:00.0", "00000000:52:00.0", "00000000:61:00.0",
               "00000000:9D:00.0", "00000000:C3:00.0", "00000000:D1:00.0", "00000000:DF:00.0"]


class _FabricInfo(ctypes.Structure):
    """nvidia-ml-py's ``c_nvmlGpuFabricInfo_t``: clusterUuid (c_uint8*16), status, cliqueId, state."""

    _fields_ = [("clusterUuid", ctypes.c_uint8 * 16), ("status", ctypes.c_uint), ("cliqueId", ctypes.c_uint32),
                ("state", ctypes.c_uint)]


def _pynvml(fabric=None, fabric_error=None, init_error=None):
    """A stand-in pynvml answering one GPU's fabric info; errors as nvidia-ml-py raises them."""

    class NVMLError(Exception):
        texts = {3: "Not Supported", 12: "NVML Shared Library Not Found"}

        def __init__(self, value):
            super().__init__(value)
            self.value = value

        def __str__(self):
            return self.texts[self.value]

    class NVMLError_NotSupported(NVMLError):  # nvidia-ml-py names it so
        pass

    class NVMLError_LibraryNotFound(NVMLError):  # nvidia-ml-py names it so
        pass

    errors = {3: NVMLError_NotSupported, 12: NVMLError_LibraryNotFound}

    def init():
        if init_error is not None:
            raise errors[init_error](init_error)

    def fabric_info(_handle, ref):
        if fabric_error is not None:
            raise errors[fabric_error](fabric_error)
        info = ref._obj
        info.clusterUuid[:] = list(fabric["uuid"])
        info.status, info.cliqueId, info.state = fabric["status"], fabric["clique"], fabric["state"]

    return types.SimpleNamespace(NVMLError=NVMLError, nvmlInit=init, c_nvmlGpuFabricInfo_t=_FabricInfo,
                                 nvmlDeviceGetHandleByIndex=lambda index: f"handle-{index}",
                                 nvmlDeviceGetGpuFabricInfo=fabric_info)


def test_gb200_tray_answers_as_nvidia_smi_shows(nvml_recording):
    source = RecordedSource(nvml_recording("gb200_tray"))
    source.init()
    assert (source.driver_version(), source.cuda_driver_version(), source.nvml_version()) == (
        "570.172.08", 12080, "12.570.172.08")
    assert source.device_count() == 4
    assert [source.pci_bus_id(index) for index in range(4)] == GB200_BUS_IDS
    assert [source.uuid(index) for index in range(4)] == GB200_UUIDS
    assert {source.name(index) for index in range(4)} == {"NVIDIA GB200"}
    assert {source.memory_total(index) // (1024 * 1024) for index in range(4)} == {190464}


def test_hgx_h100_bus_ids_are_nvml_s_form(nvml_recording):
    source = RecordedSource(nvml_recording("hgx_h100"))
    assert [source.pci_bus_id(index) for index in range(8)] == HGX_BUS_IDS
    assert [gpu.normalize_pci_address(bus_id) for bus_id in HGX_BUS_IDS[:2]] == ["0000:1b:00.0", "0000:43:00.0"]


@pytest.mark.parametrize("index", range(4))
def test_double_and_pynvml_adapter_agree_on_the_gb200_fabric(nvml_recording, index):
    real = nvml.PynvmlSource(_pynvml(fabric={"uuid": GB200_CLUSTER_UUID_BYTES, "status": 0, "clique": 1,
                                             "state": 3}))
    double = RecordedSource(nvml_recording("gb200_tray")).fabric_info(index)
    # the stand-in answers the v1 struct: no health, no clique list; the double records the v4 answer
    v1_of_double = dataclasses.replace(double, health_mask=None, health_summary=None, cliques=None, clique_id=1,
                                       info_version=1)
    assert v1_of_double == real.fabric_info(0)
    assert gpu.interpret_fabric(real.fabric_info(0))["clique"] == GB200_CLIQUE
    assert gpu.interpret_fabric(double)["clique"] == GB200_CLIQUE  # v4's first unicast pointer is clique 1


def _pynvml_v4_and_platform(index):
    """A stand-in pynvml whose v4 fabric info and v2 platform info (nvidia-ml-py's own structs) are filled as NVML
    fills them on GPU ``index`` of the GB200 tray, byte by byte."""
    class NVMLError(Exception):
        pass

    def fabric_v4(_handle, ref):
        info = ref._obj
        info.clusterUuid[:] = list(GB200_CLUSTER_UUID_BYTES)
        info.status, info.state, info.healthMask, info.healthSummary = 0, 3, GB200_HEALTH_MASK, 1
        for entry, (kind, clique) in zip(info.cliques[:len(GB200_V4_CLIQUES)], GB200_V4_CLIQUES, strict=True):
            entry.type, entry.id = kind, clique
        info.numCliques = len(GB200_V4_CLIQUES)

    def platform(_handle, ref):
        info = ref._obj
        raw = bytes.fromhex(GB200_GUIDS[index][2:])[::-1] + bytes(8) + GB200_CHASSIS_SERIAL.ljust(16, b"\0")
        raw += bytes([GB200_PLACE["slot_number"], GB200_PLACE["tray_index"], GB200_PLACE["host_id"],
                      GB200_PLACE["peer_type"], GB200_MODULE_IDS[index]])
        ctypes.memmove(ctypes.addressof(info) + type(info).ibGuid.offset, raw, len(raw))

    return types.SimpleNamespace(NVMLError=NVMLError, nvmlDeviceGetHandleByIndex=lambda i: f"handle-{i}",
                                 nvmlDeviceGetGpuFabricInfo_v4=fabric_v4,
                                 c_nvmlGpuFabricInfo_v4_t=pynvml.c_nvmlGpuFabricInfo_v4_t,
                                 nvmlDeviceGetPlatformInfo=platform,
                                 c_nvmlPlatformInfo_v2_t=pynvml.c_nvmlPlatformInfo_v2_t)


@pytest.mark.parametrize("index", range(4))
def test_double_and_pynvml_adapter_agree_on_gb200_v4_fabric_and_platform(nvml_recording, index):
    real = nvml.PynvmlSource(_pynvml_v4_and_platform(index))
    double = RecordedSource(nvml_recording("gb200_tray"))
    assert double.fabric_info(index) == real.fabric_info(0)
    assert double.platform_info(index) == real.platform_info(0)
    platform = nvml.decode_platform_info(double.platform_info(index))
    assert platform == {"info_version": 2, "chassis_serial": "1823124190518", **GB200_PLACE,
                        "module_id": GB200_MODULE_IDS[index], "ib_guid": GB200_GUIDS[index], "reasons": []}


# The new trays as nvidia-smi -q would show them, per GPU: fabric struct version, health (only the fields that are
# not a healthy GPU's), summary, clique; and the host's platform summary.
TRAYS = {
    "gb200_tray_misconfigured": {
        "versions": [3] * 4, "health": [{"incorrect_configuration": "incorrect_chassis_sn"}] * 4,
        "summaries": ["unhealthy"] * 4, "cliques": [GB200_CLIQUE] * 4,
        "platform": {"chassis_serials": ["1823124190733"], "slot_numbers": [5], "tray_indices": [4],
                     "host_ids": [1]}},
    "gb200_tray_gfm_down": {
        "versions": [4] * 4, "health": [{"gfm_connected": False}] * 4, "summaries": ["unhealthy"] * 4,
        "cliques": [GB200_CLIQUE] * 4,
        "platform": {"chassis_serials": ["1823124190518"], "slot_numbers": [21], "tray_indices": [11],
                     "host_ids": [1]}},
    "gb200_tray_limited": {
        "versions": [4] * 4, "health": [{}, {"route_recovery": True}, {}, {}],
        "summaries": ["healthy", "limited_capacity", "healthy", "healthy"], "cliques": [GB200_CLIQUE] * 4,
        "platform": {"chassis_serials": ["1823124190518"], "slot_numbers": [21], "tray_indices": [11],
                     "host_ids": [1]}},
    "gb200_tray_no_partition": {
        "versions": [4] * 4, "health": [{"incorrect_configuration": "no_partition", "partition_assigned": False}] * 4,
        "summaries": ["unhealthy"] * 4, "cliques": [None] * 4,
        "platform": {"chassis_serials": ["1823124190518"], "slot_numbers": [21], "tray_indices": [11],
                     "host_ids": [1]}},
}
HEALTHY_FIELDS = {"degraded_bandwidth": False, "route_recovery": False, "route_unhealthy": False,
                  "access_timeout_recovery": False, "incorrect_configuration": "none", "partition_assigned": True,
                  "gfm_connected": True}


@pytest.mark.parametrize("name", sorted(TRAYS))
def test_new_trays_read_as_nvidia_smi_shows(name, tree_builder, tmp_path):
    root = tree_builder.build_tree(name, str(tmp_path))
    recording = load_recording(root)
    result = gpu.collect_gpu(root, None, source_factory=lambda _root: RecordedSource(recording))
    expected = TRAYS[name]
    assert result["errors"] == []
    fabrics = [item["fabric"] for item in result["gpus"]]
    assert [fabric["info_version"] for fabric in fabrics] == expected["versions"]
    assert [{key: fabric["health"][key] for key in HEALTHY_FIELDS} for fabric in fabrics] == [
        HEALTHY_FIELDS | health for health in expected["health"]]
    assert [fabric["health"]["summary"] for fabric in fabrics] == expected["summaries"]
    assert [fabric["health"]["reasons"] for fabric in fabrics] == [[]] * 4  # every field known
    assert [fabric["clique"] for fabric in fabrics] == expected["cliques"]
    assert result["platform"] == expected["platform"]


def test_hgx_h100_fabric_is_an_nvswitch_system_without_clique(nvml_recording):
    # nvidia-smi -q on an HGX H100: State Completed, Status Success, CliqueId 0, ClusterUUID all zero.
    real = nvml.PynvmlSource(_pynvml(fabric={"uuid": bytes(16), "status": 0, "clique": 0, "state": 3}))
    double = RecordedSource(nvml_recording("hgx_h100"))
    assert [dataclasses.replace(double.fabric_info(index), health_mask=None, info_version=1)
            for index in range(8)] == [real.fabric_info(0)] * 8
    assert gpu.interpret_fabric(double.fabric_info(0)) == {
        "state": "completed", "status": "success", "cluster_uuid": "00000000-0000-0000-0000-000000000000",
        "clique_id": 0, "clique": None,
        "clique_unset": "the cluster UUID is all zero (an NVLink system that is not multi-node)",
        # driver 570: the v2 struct; the four conditions FALSE, the fields of later drivers NOT_SUPPORTED
        "health": {"mask": 170, "degraded_bandwidth": False, "route_recovery": False, "route_unhealthy": False,
                   "access_timeout_recovery": False, "incorrect_configuration": None, "partition_assigned": None,
                   "gfm_connected": None, "undefined_bits": 0, "summary": None,
                   "reasons": ["incorrect_configuration: NVML reports it not supported",
                               "partition_assigned: NVML reports it not supported",
                               "gfm_connected: NVML reports it not supported",
                               "summary: NVML gave no health summary (fabric info older than nvmlGpuFabricInfo_v3)"]},
        "info_version": 2, "cliques": [{"type": None, "id": 0}]}


def test_not_supported_is_raised_as_pynvml_raises_it():
    # A GPU without an NVLink fabric (a PCIe H100): the double's ``fabric: null``.
    with pytest.raises(nvml.NvmlNotSupported) as real:
        nvml.PynvmlSource(_pynvml(fabric_error=3)).fabric_info(0)
    with pytest.raises(nvml.NvmlNotSupported) as double:
        RecordedSource({"devices": [{"index": 0, "fabric": None}]}).fabric_info(0)
    assert str(real.value) == str(double.value) == "NVMLError_NotSupported: Not Supported"


def test_library_not_found_is_raised_as_pynvml_raises_it(nvml_recording):
    with pytest.raises(NvmlError) as real:
        nvml.PynvmlSource(_pynvml(init_error=12)).init()
    with pytest.raises(NvmlError) as double:
        RecordedSource(nvml_recording("no_nvidia")).init()
    assert str(real.value) == str(double.value) == "NVMLError_LibraryNotFound: NVML Shared Library Not Found"
    assert not isinstance(double.value, nvml.NvmlNotSupported)


def test_probe_over_the_double_reads_as_nvidia_smi(host_trees, nvml_recording):
    result = gpu.collect_gpu(host_trees["gb200_tray"], None,
                             source_factory=lambda _root: RecordedSource(nvml_recording("gb200_tray")))
    assert (result["driver_version"], result["cuda_driver_version"], result["nvml_version"]) == (
        "570.172.08", "12.8", "12.570.172.08")
    assert result["cliques"] == [GB200_CLIQUE]
    assert [item["pci_address"] for item in result["gpus"]] == [
        "0008:01:00.0", "0009:01:00.0", "0018:01:00.0", "0019:01:00.0"]
    assert [item["uuid"] for item in result["gpus"]] == GB200_UUIDS
    assert {item["memory_total_mib"] for item in result["gpus"]} == {190464}
