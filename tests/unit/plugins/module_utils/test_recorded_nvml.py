# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The recorded NVML double (tests/fixtures/recorded_nvml.py) against expectations written here by hand.

Nothing below is read back from the tree builder that wrote the recordings: the expected answers are literals, as
``nvidia-smi -q`` shows them for these hosts, and NVML's own conventions come from nvidia-ml-py (its
``c_nvmlGpuFabricInfo_t`` struct, its ``NVMLError_*`` classes and texts) and the DRA driver's clique rule
(``<ClusterUUID>.<CliqueId>``, an all-zero ClusterUUID is no clique). Where the double and the real adapter
(``PynvmlSource`` over a stand-in pynvml built from those facts) are given the same facts, they must answer alike.
"""

from __future__ import annotations

import ctypes
import dataclasses
import types

import pytest
from fixtures.recorded_nvml import RecordedSource

from ansible_collections.gpufabric.cluster.plugins.module_utils import gpu, nvml
from ansible_collections.gpufabric.cluster.plugins.module_utils.errors import NvmlError

# nvidia-smi -q of the GB200 tray: Bus Id, GPU UUID, FB Memory Usage Total, Fabric section.
GB200_BUS_IDS = ["00000008:01:00.0", "00000009:01:00.0", "00000018:01:00.0", "00000019:01:00.0"]
GB200_UUIDS = ["GPU-5e0d7b3a-91c4-4f0e-b1d2-7a3c9e0f1200", "GPU-5e0d7b3a-91c4-4f0e-b1d2-7a3c9e0f1201",
               "GPU-5e0d7b3a-91c4-4f0e-b1d2-7a3c9e0f1202", "GPU-5e0d7b3a-91c4-4f0e-b1d2-7a3c9e0f1203"]
GB200_CLUSTER_UUID_BYTES = bytes([0x3c, 0x1a, 0x5f, 0x2e, 0x9b, 0x7d, 0x4c, 0x2a,
                                  0x8e, 0x6f, 0x1d, 0x0b, 0x7a, 0x9c, 0x4e, 0x21])
GB200_CLIQUE = "3c1a5f2e-9b7d-4c2a-8e6f-1d0b7a9c4e21.1"
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
    # the stand-in answers the v1 struct, which has no health mask; the double records a healthy one
    assert dataclasses.replace(double, health_mask=None) == real.fabric_info(0)
    assert real.fabric_info(0).health_mask is None and double.health_mask == 170
    assert gpu.interpret_fabric(real.fabric_info(0))["clique"] == GB200_CLIQUE


def test_hgx_h100_fabric_is_an_nvswitch_system_without_clique(nvml_recording):
    # nvidia-smi -q on an HGX H100: State Completed, Status Success, CliqueId 0, ClusterUUID all zero.
    real = nvml.PynvmlSource(_pynvml(fabric={"uuid": bytes(16), "status": 0, "clique": 0, "state": 3}))
    double = RecordedSource(nvml_recording("hgx_h100"))
    assert [dataclasses.replace(double.fabric_info(index), health_mask=None) for index in range(8)] == [
        real.fabric_info(0)] * 8
    assert gpu.interpret_fabric(double.fabric_info(0)) == {
        "state": "completed", "status": "success", "cluster_uuid": "00000000-0000-0000-0000-000000000000",
        "clique_id": 0, "clique": None,
        "clique_unset": "the cluster UUID is all zero (an NVLink system that is not multi-node)",
        "health": {"mask": 170, "degraded_bandwidth": False, "route_recovery": False, "route_unhealthy": False,
                   "access_timeout_recovery": False, "reasons": []}}


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
