# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tests of the NVML adapter: nvidia-ml-py's (against a stand-in), the factory; and the recorded-NVML test double
(tests/fixtures/recorded_nvml.py) the other tests rely on."""

from __future__ import annotations

import ctypes
import dataclasses
import re
import types

import pynvml
import pytest
from fixtures.recorded_nvml import RecordedSource
from hypothesis import example, given, settings
from hypothesis import strategies as st

from ansible_collections.gpufabric.cluster.plugins.module_utils import nvml
from ansible_collections.gpufabric.cluster.plugins.module_utils.errors import NvmlError

GB200_UUID = "3c1a5f2e-9b7d-4c2a-8e6f-1d0b7a9c4e21"
GB200_UUID_BYTES = bytes.fromhex(GB200_UUID.replace("-", ""))


# --- RecordedSource, the test double (tests/fixtures) ----------------------------------------------


def test_recorded_source_answers_hgx(nvml_recording):
    source = RecordedSource(nvml_recording("hgx_h100"))
    source.init()
    assert source.driver_version() == "570.172.08"
    assert source.cuda_driver_version() == 12080
    assert source.nvml_version() == "12.570.172.08"
    assert source.device_count() == 8
    assert source.uuid(7) == "GPU-8f6b2c1e-4d3a-11ee-9c1a-000000000007"
    assert source.name(0) == "NVIDIA H100 80GB HBM3"
    assert source.pci_bus_id(1) == "00000000:43:00.0"
    assert source.memory_total(0) == 85520809984
    assert source.mig_mode(0) == (0, 0)
    assert source.persistence_mode(0) == 1
    assert source.fabric_info(0) == nvml.FabricInfo(
        state=3, status=0, cluster_uuid="00000000-0000-0000-0000-000000000000", clique_id=0, health_mask=170,
        info_version=2)
    with pytest.raises(nvml.NvmlNotSupported, match="Not Supported"):  # Hopper: no platform info
        source.platform_info(0)
    source.shutdown()


def test_recorded_source_fabric_of_gb200(nvml_recording):
    source = RecordedSource(nvml_recording("gb200_tray"))
    assert source.device_count() == 4
    assert source.pci_bus_id(2) == "00000018:01:00.0"
    # every health field defined and in its healthy value (0x51aa), summary HEALTHY, one clique of each type
    assert source.fabric_info(3) == nvml.FabricInfo(state=3, status=0, cluster_uuid=GB200_UUID, clique_id=None,
                                                    health_mask=0x51AA, health_summary=1,
                                                    cliques=((0, 1), (1, 1), (2, 1), (3, 1)), info_version=4)
    assert source.platform_info(3) == nvml.PlatformInfo(
        info_version=2, ib_guid=bytes.fromhex("03f0c4913a7b0d5e") + bytes(8),
        chassis_serial=b"1823124190518\0\0\0", slot_number=21, tray_index=11, host_id=1, peer_type=1, module_id=3)


def test_recorded_source_init_error(nvml_recording):
    source = RecordedSource(nvml_recording("no_nvidia"))
    with pytest.raises(NvmlError, match=r"^NVMLError_LibraryNotFound: NVML Shared Library Not Found$"):
        source.init()


def test_recorded_source_fabric_null_is_not_supported(nvml_recording):
    recording = nvml_recording("hgx_h100")
    recording["devices"][4]["fabric"] = None
    with pytest.raises(nvml.NvmlNotSupported, match="Not Supported"):
        RecordedSource(recording).fabric_info(4)


@pytest.mark.parametrize(("fabric", "expected"), [
    ({"clique_id": 5}, nvml.FabricInfo(3, 0, GB200_UUID, 5, info_version=1)),
    ({"clique_id": 5, "health_mask": 170}, nvml.FabricInfo(3, 0, GB200_UUID, 5, 170, info_version=2)),
    ({"clique_id": 5, "health_mask": 170, "health_summary": 2},
     nvml.FabricInfo(3, 0, GB200_UUID, 5, 170, 2, info_version=3)),
    ({"cliques": [[1, 4], [0, 5]], "health_mask": 170, "health_summary": 2},
     nvml.FabricInfo(3, 0, GB200_UUID, None, 170, 2, ((1, 4), (0, 5)), 4)),
    # an explicit version wins over the recorded fields: v2 has no summary
    ({"info_version": 2, "clique_id": 5, "health_mask": 170, "health_summary": 2},
     nvml.FabricInfo(3, 0, GB200_UUID, 5, 170, info_version=2)),
])
def test_recorded_source_fabric_versions(fabric, expected):
    recording = {"devices": [{"index": 0, "fabric": {"state": 3, "status": 0, "cluster_uuid": GB200_UUID, **fabric}}]}
    assert RecordedSource(recording).fabric_info(0) == expected


def test_recorded_source_platform_info():
    raw = {"info_version": 1, "ib_guid": "00" * 16, "chassis_serial_number": "ff" * 16, "slot_number": 255,
           "tray_index": 3, "host_id": 0, "peer_type": 0, "module_id": 4}
    source = RecordedSource({"devices": [{"index": 0, "platform": raw}, {"index": 1, "platform": None},
                                         {"index": 2, "errors": {"platform_info": "NVMLError_Unknown: Unknown Error"}},
                                         {"index": 3}]})
    assert source.platform_info(0) == nvml.PlatformInfo(1, bytes(16), b"\xff" * 16, 255, 3, 0, 0, 4)
    with pytest.raises(nvml.NvmlNotSupported, match="Not Supported"):
        source.platform_info(1)
    with pytest.raises(NvmlError, match="Unknown Error") as raised:
        source.platform_info(2)
    assert not isinstance(raised.value, nvml.NvmlNotSupported)
    with pytest.raises(NvmlError, match="no recorded answer for platform_info of GPU 3"):
        source.platform_info(3)


def test_recorded_source_device_error(nvml_recording):
    recording = nvml_recording("hgx_h100")
    recording["devices"][2]["errors"] = {"memory_total": "NVMLError_GpuIsLost: GPU is lost",
                                         "mig_mode": "NVMLError_NotSupported: Not Supported"}
    source = RecordedSource(recording)
    with pytest.raises(NvmlError, match=r"^NVMLError_GpuIsLost: GPU is lost$") as raised:
        source.memory_total(2)
    assert not isinstance(raised.value, nvml.NvmlNotSupported)
    with pytest.raises(nvml.NvmlNotSupported):
        source.mig_mode(2)
    assert source.memory_total(3) == 85520809984
    assert source.uuid(2) == "GPU-8f6b2c1e-4d3a-11ee-9c1a-000000000002"


def test_recorded_source_system_error_and_gaps(nvml_recording):
    recording = nvml_recording("gb200_tray")
    recording["errors"] = {"nvml_version": "NVMLError_FunctionNotFound: Function Not Found",
                           "device_count": "NVMLError_Unknown: Unknown Error"}
    del recording["driver_version"]
    del recording["devices"][0]["name"]
    source = RecordedSource(recording)
    with pytest.raises(NvmlError, match="Function Not Found"):
        source.nvml_version()
    with pytest.raises(NvmlError, match="Unknown Error"):
        source.device_count()
    with pytest.raises(NvmlError, match="no recorded answer for driver_version"):
        source.driver_version()
    with pytest.raises(NvmlError, match="no recorded answer for name of GPU 0"):
        source.name(0)
    with pytest.raises(NvmlError, match="no recorded GPU 9"):
        source.uuid(9)


def test_nvml_return_string():
    assert nvml.nvml_return_string(0) == "Success"
    assert nvml.nvml_return_string(15) == "GPU is lost"
    assert nvml.nvml_return_string(27) == "Not Ready"
    assert nvml.nvml_return_string(999) == "Unknown Error"
    assert nvml.nvml_return_string(4242) == "NVML error 4242"


# --- PynvmlSource against a stand-in pynvml module ------------------------------------------------


class _FabricV1(ctypes.Structure):
    _fields_ = [("clusterUuid", ctypes.c_uint8 * 16), ("status", ctypes.c_uint), ("cliqueId", ctypes.c_uint32),
                ("state", ctypes.c_uint)]


class _FabricV2(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint), ("clusterUuid", ctypes.c_uint8 * 16), ("status", ctypes.c_uint),
                ("cliqueId", ctypes.c_uint32), ("state", ctypes.c_uint), ("healthMask", ctypes.c_uint32)]

    def __init__(self):
        super().__init__(version=0x02000024)


class _FabricV3(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint), ("clusterUuid", ctypes.c_uint8 * 16), ("status", ctypes.c_uint),
                ("cliqueId", ctypes.c_uint32), ("state", ctypes.c_uint), ("healthMask", ctypes.c_uint32),
                ("healthSummary", ctypes.c_uint8)]

    def __init__(self):
        super().__init__(version=0x3000028)


# The installed nvidia-ml-py's own structs (tests/requirements.txt pins 13.615.71): the v4 fabric info, which has no
# version field, and the platform info, whose c_char fields nvidia-ml-py decodes as text when read as attributes.
_FabricV4 = pynvml.c_nvmlGpuFabricInfo_v4_t
STRUCT_VERSIONS = {_FabricV1: 1, _FabricV2: 2, _FabricV3: 3, _FabricV4: 4}
# What the stand-in answers: the GB200 tray's GPU in clique 7, DEGRADED_BW TRUE and every other condition FALSE
# (0x51a9 with the fields of later drivers; v2 and v3 answer the same mask), summary LIMITED_CAPACITY (3); v4 lists
# one clique of each type, the unicast pointer's being the clique id of the older structs.
FAKE_MASK = 1 | 2 << 2 | 2 << 4 | 2 << 6 | 1 << 8 | 1 << 12 | 1 << 14
FAKE_CLIQUES = ((0, 7), (1, 9), (2, 7), (3, 11))
# ... and its platform info: serial 1823825185529 NUL-padded, slot 5, tray 4, host 1, peer type 1, module 2, the
# InfiniBand GUID 0x21ac5b6a528f7cf5 in its first 8 bytes, little-endian (a GB300 tray's nvidia-smi -q).
FAKE_PLATFORM = {"ibGuid": bytes.fromhex("f57c8f526a5bac21") + bytes(8),
                 "serial": b"1823825185529" + bytes(3), "numbers": (5, 4, 1, 1, 2)}
PLATFORM_FIELDS = {pynvml.c_nvmlPlatformInfo_v2_t: ("chassisSerialNumber", "slotNumber", "trayIndex", "hostId"),
                   pynvml.c_nvmlPlatformInfo_v1_t: ("rackGuid", "chassisPhysicalSlotNumber", "computeSlotIndex",
                                                    "nodeIndex")}


def _poke(struct, name, raw):
    """Write ``raw`` into field ``name`` of a ctypes struct, bypassing nvidia-ml-py's text conversion."""
    field = getattr(type(struct), name)
    assert len(raw) == field.size
    ctypes.memmove(ctypes.addressof(struct) + field.offset, raw, field.size)


def _fake_pynvml(fabric_versions=(2, 3), legacy=True, accepted=(2, 3), fabric_error=None, failing=None,
                 v4=False, platform=False, platform_accepted=(1, 2), platform_data=None):
    """A stand-in for the pynvml module: the calls PynvmlSource makes, answering like a GB200 tray.

    ``fabric_versions``: which versioned structs the module defines; ``accepted``: which the "driver"
    takes (others answer ARGUMENT_VERSION_MISMATCH); ``failing``: function name -> NVML error code.  ``v4``: the
    module has nvmlDeviceGetGpuFabricInfo_v4 and its struct; ``platform``: it has nvmlDeviceGetPlatformInfo and the
    v1 and v2 structs, of which the "driver" takes ``platform_accepted``.
    """
    failing = dict(failing or {})

    class NVMLError(Exception):
        def __init__(self, value):
            super().__init__(value)
            self.value = value

        def __str__(self):
            return nvml.nvml_return_string(self.value)

    class NVMLError_NotSupported(NVMLError):
        pass

    class NVMLError_GpuIsLost(NVMLError):
        pass

    class NVMLError_FunctionNotFound(NVMLError):
        pass

    classes = {3: NVMLError_NotSupported, 13: NVMLError_FunctionNotFound, 15: NVMLError_GpuIsLost}
    calls: list[tuple] = []

    def error(code):
        return classes.get(code, NVMLError)(code)

    def api(name, answer):
        def call(*args):
            calls.append((name, *args))
            if name in failing:
                raise error(failing[name])
            return answer(*args) if callable(answer) else answer
        return call

    def fill(info):
        info.clusterUuid[:] = list(GB200_UUID_BYTES)
        info.status, info.state = 0, 3
        version = STRUCT_VERSIONS[type(info)]
        if version >= 4:
            for entry, (kind, clique_id) in zip(info.cliques[:len(FAKE_CLIQUES)], FAKE_CLIQUES, strict=True):
                entry.type, entry.id = kind, clique_id
            info.numCliques = len(FAKE_CLIQUES)
        else:
            info.cliqueId = 7
        if version >= 2:
            info.healthMask = FAKE_MASK
        if version >= 3:
            info.healthSummary = 3

    def fabric_v(handle, ref):
        info = ref._obj
        if fabric_error is not None:
            raise error(fabric_error)
        if {0x02000024: 2, 0x3000028: 3}[info.version] not in accepted:
            raise error(25)
        fill(info)
        return 0

    def fabric_plain(handle, ref):
        if fabric_error is not None:
            raise error(fabric_error)
        fill(ref._obj)
        return 0

    def platform_info(handle, ref):
        info = ref._obj
        if {pynvml.nvmlPlatformInfo_v2: 2, pynvml.nvmlPlatformInfo_v1: 1}[info.version] not in platform_accepted:
            raise error(25)
        data = dict(FAKE_PLATFORM, **(platform_data or {}))
        serial, slot, tray, host = PLATFORM_FIELDS[type(info)]
        _poke(info, "ibGuid", data["ibGuid"])
        _poke(info, serial, data["serial"])
        for name, value in zip((slot, tray, host, "peerType", "moduleId"), data["numbers"], strict=True):
            _poke(info, name, bytes([value]))
        return 0

    module = types.SimpleNamespace(
        NVMLError=NVMLError,
        calls=calls,
        c_nvmlGpuFabricInfo_t=_FabricV1,
        nvmlInit=api("nvmlInit", None),
        nvmlShutdown=api("nvmlShutdown", None),
        nvmlSystemGetDriverVersion=api("nvmlSystemGetDriverVersion", b"570.172.08"),
        nvmlSystemGetCudaDriverVersion=api("nvmlSystemGetCudaDriverVersion", 12080),
        nvmlSystemGetNVMLVersion=api("nvmlSystemGetNVMLVersion", "12.570.172.08"),
        nvmlDeviceGetCount=api("nvmlDeviceGetCount", 4),
        nvmlDeviceGetHandleByIndex=api("nvmlDeviceGetHandleByIndex", lambda index: f"handle{index}"),
        nvmlDeviceGetUUID=api("nvmlDeviceGetUUID", lambda handle: f"GPU-{handle}".encode()),
        nvmlDeviceGetName=api("nvmlDeviceGetName", "NVIDIA GB200"),
        nvmlDeviceGetPciInfo=api("nvmlDeviceGetPciInfo", types.SimpleNamespace(busId=b"00000008:01:00.0")),
        nvmlDeviceGetMemoryInfo=api("nvmlDeviceGetMemoryInfo",
                                    types.SimpleNamespace(total=199715979264, free=1, used=2)),
        nvmlDeviceGetMigMode=api("nvmlDeviceGetMigMode", [1, 0]),
        nvmlDeviceGetPersistenceMode=api("nvmlDeviceGetPersistenceMode", 1),
    )
    if fabric_versions:
        module.nvmlDeviceGetGpuFabricInfoV = api("nvmlDeviceGetGpuFabricInfoV", fabric_v)
    if 2 in fabric_versions:
        module.c_nvmlGpuFabricInfo_v2_t = _FabricV2
    if 3 in fabric_versions:
        module.c_nvmlGpuFabricInfo_v3_t = _FabricV3
    if legacy:
        module.nvmlDeviceGetGpuFabricInfo = api("nvmlDeviceGetGpuFabricInfo", fabric_plain)
    if v4:
        module.nvmlDeviceGetGpuFabricInfo_v4 = api("nvmlDeviceGetGpuFabricInfo_v4", fabric_plain)
        module.c_nvmlGpuFabricInfo_v4_t = _FabricV4
    if platform:
        module.nvmlDeviceGetPlatformInfo = api("nvmlDeviceGetPlatformInfo", platform_info)
        module.c_nvmlPlatformInfo_v2_t = pynvml.c_nvmlPlatformInfo_v2_t
        module.c_nvmlPlatformInfo_v1_t = pynvml.c_nvmlPlatformInfo_v1_t
    return module


def _fabric_calls(fake):
    return [(call[0], type(call[2]._obj).__name__) for call in fake.calls if "Fabric" in call[0]]


def test_pynvml_source_converts_answers():
    fake = _fake_pynvml()
    source = nvml.PynvmlSource(fake)
    source.init()
    assert source.driver_version() == "570.172.08"  # bytes from older nvidia-ml-py decoded
    assert source.cuda_driver_version() == 12080
    assert source.nvml_version() == "12.570.172.08"
    assert source.device_count() == 4
    assert source.uuid(1) == "GPU-handle1"
    assert source.name(1) == "NVIDIA GB200"
    assert source.pci_bus_id(1) == "00000008:01:00.0"
    assert source.memory_total(1) == 199715979264
    assert source.mig_mode(1) == (1, 0)
    assert source.persistence_mode(1) == 1
    assert source.fabric_info(1) == nvml.FabricInfo(state=3, status=0, cluster_uuid=GB200_UUID, clique_id=7,
                                                    health_mask=0x51A9, health_summary=3, info_version=3)
    source.shutdown()
    assert [call for call in fake.calls if call[0] == "nvmlDeviceGetHandleByIndex"] == [
        ("nvmlDeviceGetHandleByIndex", 1)]  # one handle per GPU, reused by every query
    assert fake.calls[-1] == ("nvmlShutdown",)


def test_pynvml_source_prefers_newest_fabric_struct():
    fake = _fake_pynvml(v4=True)
    info = nvml.PynvmlSource(fake).fabric_info(0)
    assert _fabric_calls(fake) == [("nvmlDeviceGetGpuFabricInfo_v4", "c_nvmlGpuFabricInfo_v4_t")]
    assert info == nvml.FabricInfo(state=3, status=0, cluster_uuid=GB200_UUID, clique_id=None, health_mask=0x51A9,
                                   health_summary=3, cliques=((0, 7), (1, 9), (2, 7), (3, 11)), info_version=4)


def test_pynvml_source_without_v4_reads_v3():
    fake = _fake_pynvml()
    nvml.PynvmlSource(fake).fabric_info(0)
    assert _fabric_calls(fake) == [("nvmlDeviceGetGpuFabricInfoV", "_FabricV3")]


def test_pynvml_source_v4_function_without_its_struct_reads_v3():
    fake = _fake_pynvml(v4=True)
    del fake.c_nvmlGpuFabricInfo_v4_t
    assert nvml.PynvmlSource(fake).fabric_info(0).info_version == 3
    assert _fabric_calls(fake) == [("nvmlDeviceGetGpuFabricInfoV", "_FabricV3")]


@pytest.mark.parametrize("code", [13, 3, 25], ids=["FUNCTION_NOT_FOUND", "NOT_SUPPORTED", "VERSION_MISMATCH"])
def test_pynvml_source_v4_refused_falls_back_to_v3(code):
    fake = _fake_pynvml(v4=True, failing={"nvmlDeviceGetGpuFabricInfo_v4": code})
    info = nvml.PynvmlSource(fake).fabric_info(0)
    assert (info.info_version, info.clique_id, info.health_summary, info.cliques) == (3, 7, 3, None)
    assert _fabric_calls(fake) == [("nvmlDeviceGetGpuFabricInfo_v4", "c_nvmlGpuFabricInfo_v4_t"),
                                   ("nvmlDeviceGetGpuFabricInfoV", "_FabricV3")]


def test_pynvml_source_falls_back_through_every_struct_to_v1():
    fake = _fake_pynvml(v4=True, accepted=(), failing={"nvmlDeviceGetGpuFabricInfo_v4": 13})
    info = nvml.PynvmlSource(fake).fabric_info(0)
    assert info == nvml.FabricInfo(state=3, status=0, cluster_uuid=GB200_UUID, clique_id=7, info_version=1)
    assert _fabric_calls(fake) == [("nvmlDeviceGetGpuFabricInfo_v4", "c_nvmlGpuFabricInfo_v4_t"),
                                   ("nvmlDeviceGetGpuFabricInfoV", "_FabricV3"),
                                   ("nvmlDeviceGetGpuFabricInfoV", "_FabricV2"),
                                   ("nvmlDeviceGetGpuFabricInfo", "_FabricV1")]


def test_pynvml_source_v4_not_supported_then_v3_not_supported_is_no_fabric():
    fake = _fake_pynvml(v4=True, fabric_error=3)
    with pytest.raises(nvml.NvmlNotSupported, match=r"^NVMLError_NotSupported: Not Supported$"):
        nvml.PynvmlSource(fake).fabric_info(0)
    assert [name for name, _struct in _fabric_calls(fake)] == ["nvmlDeviceGetGpuFabricInfo_v4",
                                                               "nvmlDeviceGetGpuFabricInfoV"]


def test_pynvml_source_v4_not_supported_with_nothing_older_is_no_fabric():
    fake = _fake_pynvml(fabric_versions=(), legacy=False, v4=True, fabric_error=3)
    with pytest.raises(nvml.NvmlNotSupported, match=r"^NVMLError_NotSupported: Not Supported$"):
        nvml.PynvmlSource(fake).fabric_info(0)


def test_pynvml_source_without_any_fabric_query():
    fake = _fake_pynvml(fabric_versions=(), legacy=False)
    with pytest.raises(nvml.NvmlNotSupported, match="nvidia-ml-py has no GPU fabric info query"):
        nvml.PynvmlSource(fake).fabric_info(0)


def test_pynvml_source_v4_error_is_not_a_fallback():
    fake = _fake_pynvml(v4=True, failing={"nvmlDeviceGetGpuFabricInfo_v4": 15})
    with pytest.raises(NvmlError, match=r"^NVMLError_GpuIsLost: GPU is lost$") as raised:
        nvml.PynvmlSource(fake).fabric_info(0)
    assert not isinstance(raised.value, nvml.NvmlNotSupported)
    assert len(_fabric_calls(fake)) == 1


def test_pynvml_source_v4_clique_count_beyond_the_array_is_an_error():
    fake = _fake_pynvml(v4=True)
    answer = fake.nvmlDeviceGetGpuFabricInfo_v4

    def too_many(handle, ref):
        answer(handle, ref)
        ref._obj.numCliques = 65

    fake.nvmlDeviceGetGpuFabricInfo_v4 = too_many
    with pytest.raises(NvmlError, match="numCliques 65 exceeds the 64 entries of cliques"):
        nvml.PynvmlSource(fake).fabric_info(0)


def test_pynvml_source_reads_the_state_byte_only():
    # nvml.h: nvmlGpuFabricState_t is an unsigned char; nvidia-ml-py's v1 to v3 structs read it as a c_uint, whose
    # three upper bytes are padding NVML need not clear.
    fake = _fake_pynvml()
    answer = fake.nvmlDeviceGetGpuFabricInfoV

    def padded(handle, ref):
        answer(handle, ref)
        ref._obj.state = 0xA5A5A503

    fake.nvmlDeviceGetGpuFabricInfoV = padded
    assert nvml.PynvmlSource(fake).fabric_info(0).state == 3


def test_pynvml_source_falls_back_to_v2_on_version_mismatch():
    fake = _fake_pynvml(accepted=(2,))
    info = nvml.PynvmlSource(fake).fabric_info(0)
    assert (info.cluster_uuid, info.info_version, info.health_summary) == (GB200_UUID, 2, None)
    assert _fabric_calls(fake) == [("nvmlDeviceGetGpuFabricInfoV", "_FabricV3"),
                                   ("nvmlDeviceGetGpuFabricInfoV", "_FabricV2")]


def test_pynvml_source_uses_v2_when_module_has_no_v3():
    fake = _fake_pynvml(fabric_versions=(2,))
    nvml.PynvmlSource(fake).fabric_info(0)
    assert _fabric_calls(fake) == [("nvmlDeviceGetGpuFabricInfoV", "_FabricV2")]


def test_pynvml_source_uses_legacy_call_on_old_module():
    fake = _fake_pynvml(fabric_versions=())
    info = nvml.PynvmlSource(fake).fabric_info(2)
    assert info == nvml.FabricInfo(state=3, status=0, cluster_uuid=GB200_UUID, clique_id=7, info_version=1)
    assert _fabric_calls(fake) == [("nvmlDeviceGetGpuFabricInfo", "_FabricV1")]


def test_pynvml_source_uses_legacy_call_when_driver_takes_no_versioned_struct():
    fake = _fake_pynvml(accepted=())
    nvml.PynvmlSource(fake).fabric_info(0)
    assert [name for name, _struct in _fabric_calls(fake)] == [
        "nvmlDeviceGetGpuFabricInfoV", "nvmlDeviceGetGpuFabricInfoV", "nvmlDeviceGetGpuFabricInfo"]


def test_pynvml_source_fabric_not_supported():
    fake = _fake_pynvml(fabric_error=3)
    with pytest.raises(nvml.NvmlNotSupported, match=r"^NVMLError_NotSupported: Not Supported$"):
        nvml.PynvmlSource(fake).fabric_info(0)
    # NOT_SUPPORTED from the versioned call is an answer (no fabric), not a reason to ask the same of older calls
    assert len(_fabric_calls(fake)) == 1


def test_pynvml_source_fabric_error():
    with pytest.raises(NvmlError, match=r"^NVMLError_GpuIsLost: GPU is lost$") as raised:
        nvml.PynvmlSource(_fake_pynvml(fabric_error=15)).fabric_info(0)
    assert not isinstance(raised.value, nvml.NvmlNotSupported)


# --- platform info through nvidia-ml-py -----------------------------------------------------------------


GB300_PLATFORM = nvml.PlatformInfo(info_version=2, ib_guid=bytes.fromhex("f57c8f526a5bac21") + bytes(8),
                                   chassis_serial=b"1823825185529\0\0\0", slot_number=5, tray_index=4, host_id=1,
                                   peer_type=1, module_id=2)


def _platform_calls(fake):
    return [type(call[2]._obj).__name__ for call in fake.calls if call[0] == "nvmlDeviceGetPlatformInfo"]


def test_pynvml_platform_info_v2():
    fake = _fake_pynvml(platform=True)
    assert nvml.PynvmlSource(fake).platform_info(0) == GB300_PLATFORM
    assert _platform_calls(fake) == ["c_nvmlPlatformInfo_v2_t"]


def test_pynvml_platform_info_falls_back_to_v1_on_version_mismatch():
    fake = _fake_pynvml(platform=True, platform_accepted=(1,))
    assert nvml.PynvmlSource(fake).platform_info(0) == dataclasses.replace(GB300_PLATFORM, info_version=1)
    assert _platform_calls(fake) == ["c_nvmlPlatformInfo_v2_t", "c_nvmlPlatformInfo_v1_t"]


def test_pynvml_platform_info_reads_raw_bytes_nvidia_ml_py_cannot_decode():
    # nvidia-ml-py reads its c_char fields as UTF-8 text: a byte above 0x7f raises, a NUL ends the value.
    fake = _fake_pynvml(platform=True, platform_data={"serial": b"\xff" * 16,
                                                      "ibGuid": b"\x00\xc3" + b"\x00" * 14,
                                                      "numbers": (255, 200, 0, 0, 0)})
    info = fake.c_nvmlPlatformInfo_v2_t()
    fake.nvmlDeviceGetPlatformInfo("handle0", ctypes.byref(info))
    with pytest.raises(UnicodeDecodeError):
        print(info.chassisSerialNumber)
    assert info.ibGuid == ""  # nvidia-ml-py's reading stops at the first NUL
    read = nvml.PynvmlSource(fake).platform_info(0)
    assert (read.chassis_serial, read.ib_guid) == (b"\xff" * 16, b"\x00\xc3" + bytes(14))
    assert (read.slot_number, read.tray_index, read.host_id) == (255, 200, 0)


@pytest.mark.parametrize(("failing", "message"), [
    ({"nvmlDeviceGetPlatformInfo": 3}, r"^NVMLError_NotSupported: Not Supported$"),  # an H100: NVML has none
    ({"nvmlDeviceGetPlatformInfo": 13}, r"^NVMLError_FunctionNotFound: Function Not Found$"),  # an older driver
])
def test_pynvml_platform_info_not_supported(failing, message):
    fake = _fake_pynvml(platform=True, failing=failing)
    with pytest.raises(nvml.NvmlNotSupported, match=message):
        nvml.PynvmlSource(fake).platform_info(0)
    assert len(_platform_calls(fake)) == 1


def test_pynvml_platform_info_without_the_query_or_structs():
    with pytest.raises(nvml.NvmlNotSupported, match="nvidia-ml-py has no nvmlDeviceGetPlatformInfo"):
        nvml.PynvmlSource(_fake_pynvml()).platform_info(0)
    fake = _fake_pynvml(platform=True, platform_accepted=())
    with pytest.raises(nvml.NvmlNotSupported, match="nvidia-ml-py has no nvmlPlatformInfo struct NVML takes"):
        nvml.PynvmlSource(fake).platform_info(0)
    assert _platform_calls(fake) == ["c_nvmlPlatformInfo_v2_t", "c_nvmlPlatformInfo_v1_t"]


def test_pynvml_platform_info_error():
    fake = _fake_pynvml(platform=True, failing={"nvmlDeviceGetPlatformInfo": 15})
    with pytest.raises(NvmlError, match=r"^NVMLError_GpuIsLost: GPU is lost$") as raised:
        nvml.PynvmlSource(fake).platform_info(0)
    assert not isinstance(raised.value, nvml.NvmlNotSupported)


@pytest.mark.parametrize(("function", "query", "code", "message"), [
    ("nvmlInit", "init", 9, "NVMLError: Driver Not Loaded"),
    ("nvmlDeviceGetHandleByIndex", "uuid", 15, "NVMLError_GpuIsLost: GPU is lost"),
    ("nvmlDeviceGetMigMode", "mig_mode", 3, "NVMLError_NotSupported: Not Supported"),
    ("nvmlDeviceGetPciInfo", "pci_bus_id", 999, "NVMLError: Unknown Error"),
])
def test_pynvml_source_translates_errors(function, query, code, message):
    source = nvml.PynvmlSource(_fake_pynvml(failing={function: code}))
    call = getattr(source, query)
    with pytest.raises(NvmlError) as raised:
        call() if query == "init" else call(0)
    assert str(raised.value) == message
    assert isinstance(raised.value, nvml.NvmlNotSupported) == (code == 3)


# --- the factory ---------------------------------------------------------------------------------


def test_factory_without_pynvml(monkeypatch):
    monkeypatch.setattr(nvml, "pynvml", None)
    monkeypatch.setattr(nvml, "PYNVML_IMPORT_ERROR", "Traceback ...\nModuleNotFoundError: No module named 'pynvml'")
    with pytest.raises(nvml.PynvmlMissing) as raised:
        nvml.nvml_source("/")
    assert str(raised.value).startswith("Failed to import the required Python library (nvidia-ml-py) on ")
    assert "required to query GPUs through NVML. See https://pypi.org/project/nvidia-ml-py/" in str(raised.value)
    assert raised.value.traceback.endswith("No module named 'pynvml'")
    with pytest.raises(nvml.PynvmlMissing):
        nvml.PynvmlSource()


def test_factory_refuses_a_tree(monkeypatch, host_trees):
    monkeypatch.setattr(nvml, "pynvml", _fake_pynvml())
    with pytest.raises(NvmlError, match="NVML describes the running host, not the tree at root") as raised:
        nvml.nvml_source(host_trees["gb200_tray"])
    assert not isinstance(raised.value, nvml.PynvmlMissing)


def test_factory_on_the_running_host(monkeypatch):
    fake = _fake_pynvml()
    monkeypatch.setattr(nvml, "pynvml", fake)
    source = nvml.nvml_source("/")
    assert isinstance(source, nvml.PynvmlSource)
    assert source.device_count() == 4
    assert fake.calls == [("nvmlDeviceGetCount",)]


def _running_boot_id():
    with open(nvml.BOOT_ID, encoding="ascii") as handle:
        return handle.read()


def _tree_with_boot_id(root, content):
    path = root / nvml.BOOT_ID.lstrip("/")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return str(root)


def test_factory_on_the_running_host_mounted_elsewhere(monkeypatch, tmp_path):
    # the host's / as a container mounts it at /host: its /proc shows the running kernel's boot id
    monkeypatch.setattr(nvml, "pynvml", _fake_pynvml())
    root = _tree_with_boot_id(tmp_path / "host", _running_boot_id())
    assert nvml.is_running_host(root)
    assert isinstance(nvml.nvml_source(root), nvml.PynvmlSource)
    # as the probe hands it over: the checked root, whose refusals stay empty
    checked = nvml.host_files.check_root(root)
    assert isinstance(nvml.nvml_source(checked), nvml.PynvmlSource)
    assert checked.refusal_errors() == []


@pytest.mark.parametrize("content", [
    "00000000-0000-0000-0000-000000000000\n",  # another boot's (or another host's)
    "", "\n", b"\xff\xfe", "x" * 5000,  # empty, not text, over the limit of an attribute
], ids=["other-boot", "empty", "newline", "binary", "huge"])
def test_factory_refuses_a_tree_of_another_boot(monkeypatch, tmp_path, content):
    monkeypatch.setattr(nvml, "pynvml", _fake_pynvml())
    root = _tree_with_boot_id(tmp_path / "tree", content)
    assert not nvml.is_running_host(root)
    with pytest.raises(NvmlError, match="NVML describes the running host, not the tree at root"):
        nvml.nvml_source(root)


def test_factory_refuses_a_truncated_or_doubled_boot_id(monkeypatch, tmp_path):
    monkeypatch.setattr(nvml, "pynvml", _fake_pynvml())
    running = _running_boot_id().strip()
    for content in (running[:-1], running + running, running + "\n" + running):
        assert not nvml.is_running_host(_tree_with_boot_id(tmp_path / "tree", content))


def test_factory_never_follows_a_tree_s_boot_id_out_of_the_tree(monkeypatch, tmp_path):
    # a link to the running host's own boot id resolves below the tree, as every path of a probe does
    monkeypatch.setattr(nvml, "pynvml", _fake_pynvml())
    path = tmp_path / "tree" / nvml.BOOT_ID.lstrip("/")
    path.parent.mkdir(parents=True)
    path.symlink_to(nvml.BOOT_ID)
    assert not nvml.is_running_host(str(tmp_path / "tree"))
    relative = tmp_path / "tree2" / nvml.BOOT_ID.lstrip("/")
    relative.parent.mkdir(parents=True)
    relative.symlink_to("../../../../../../../../.." + nvml.BOOT_ID)
    assert not nvml.is_running_host(str(tmp_path / "tree2"))


def test_factory_without_the_running_host_s_boot_id_asks_nvml_for_slash_only(monkeypatch, tmp_path):
    # a kernel without the file (or a path that does not read as a boot id) makes no tree the running host
    monkeypatch.setattr(nvml, "pynvml", _fake_pynvml())
    monkeypatch.setattr(nvml, "BOOT_ID", "/proc/sys/kernel/random/no_such_boot_id")
    root = _tree_with_boot_id(tmp_path / "tree", "")
    assert not nvml.is_running_host(root)
    assert isinstance(nvml.nvml_source("/"), nvml.PynvmlSource)
    monkeypatch.setattr(nvml, "BOOT_ID", "/proc/sys/kernel/osrelease")  # readable, but no boot id
    release = nvml.host_files.read_text("/", "/proc/sys/kernel/osrelease")
    assert not nvml.is_running_host(_tree_with_boot_id(tmp_path / "tree2", release))


@given(st.binary(max_size=80))
@settings(max_examples=60)
def test_only_the_running_boot_id_makes_a_tree_the_running_host(tmp_path_factory, content):
    root = _tree_with_boot_id(tmp_path_factory.mktemp("tree"), content)
    running = _running_boot_id().strip()
    expected = content.decode("utf-8", "replace").strip() == running
    assert nvml.is_running_host(root) is expected


# --- NVLink state and speed, fabric health mask ---------------------------------------------------


def _nvlink_module(states, speed=(0, 53125), missing=()):
    """``_fake_pynvml`` with NVLink answers: ``states`` per link (an int state or an NVML error code to raise
    as ``('error', code)``), ``speed`` ``(nvmlReturn, MB/s)`` of the field value; ``missing`` functions removed."""
    fake = _fake_pynvml()
    error_type = fake.NVMLError

    def link_state(_handle, link):
        answer = states[link] if link < len(states) else ("error", 2)
        if isinstance(answer, tuple):
            raise error_type(answer[1])
        return answer

    def field_values(_handle, fields):
        assert fields == [nvml.NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON]
        return [types.SimpleNamespace(nvmlReturn=speed[0], value=types.SimpleNamespace(uiVal=speed[1]))]

    fake.NVML_NVLINK_MAX_LINKS = 18
    fake.nvmlDeviceGetNvLinkState = link_state
    fake.nvmlDeviceGetFieldValues = field_values
    for name in missing:
        delattr(fake, name)
    return fake


def test_pynvml_nvlink_states_absent_links_are_none():
    states = [1] * 7 + [0] + [1] * 4 + [("error", 3)] * 6
    source = nvml.PynvmlSource(_nvlink_module(states))
    assert source.nvlink_states(0) == [1] * 7 + [0] + [1] * 4 + [None] * 6
    assert source.nvlink_speed_mbps(0) == 53125


def test_pynvml_nvlink_invalid_link_index_is_absent():
    source = nvml.PynvmlSource(_nvlink_module([1, 1]))
    assert source.nvlink_states(0) == [1, 1] + [None] * 16


def test_pynvml_nvlink_other_error_is_an_error():
    source = nvml.PynvmlSource(_nvlink_module([("error", 15)]))
    with pytest.raises(NvmlError) as caught:
        source.nvlink_states(0)
    assert not isinstance(caught.value, nvml.NvmlNotSupported)


@pytest.mark.parametrize("missing", ["nvmlDeviceGetNvLinkState", "nvmlDeviceGetFieldValues"])
def test_pynvml_nvlink_binding_without_the_call_is_not_supported(missing):
    source = nvml.PynvmlSource(_nvlink_module([1] * 18, missing=(missing,)))
    query = source.nvlink_states if missing == "nvmlDeviceGetNvLinkState" else source.nvlink_speed_mbps
    with pytest.raises(nvml.NvmlNotSupported, match=missing):
        query(0)


@pytest.mark.parametrize(("code", "kind"), [(3, nvml.NvmlNotSupported), (999, NvmlError)])
def test_pynvml_nvlink_speed_field_errors(code, kind):
    source = nvml.PynvmlSource(_nvlink_module([1] * 18, speed=(code, 0)))
    with pytest.raises(kind, match="NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON"):
        source.nvlink_speed_mbps(0)


# --- the fabric health mask and summary ---------------------------------------------------------------
# The bit layout as nvml.h (NVIDIA/go-nvml pkg/nvml/nvml.h) and nvidia-ml-py 13.615 (GFM_STATE) define it, written
# here from those headers, not from the decoder's table: name in the facts -> (NVML field, shift, width, value ->
# what it reports).  0 is every field's NOT_SUPPORTED.
NVML_LAYOUT = {
    "degraded_bandwidth": ("DEGRADED_BW", 0, 0x3, {1: True, 2: False}),  # TRUE 1: bandwidth degraded
    "route_recovery": ("ROUTE_RECOVERY", 2, 0x3, {1: True, 2: False}),  # TRUE 1: route recovery in progress
    "route_unhealthy": ("ROUTE_UNHEALTHY", 4, 0x3, {1: True, 2: False}),  # TRUE 1: route unhealthy
    "access_timeout_recovery": ("ACCESS_TIMEOUT_RECOVERY", 6, 0x3, {1: True, 2: False}),
    "incorrect_configuration": ("INCORRECT_CONFIGURATION", 8, 0xF, {
        1: "none", 2: "incorrect_sysguid", 3: "incorrect_chassis_sn", 4: "no_partition", 5: "insufficient_nvlinks",
        6: "incompatible_gpu_fw", 7: "invalid_location", 8: "gpu_state_invalid"}),
    "partition_assigned": ("PARTITION_ASSIGNED", 12, 0x3, {1: True, 2: False}),  # FALSE 2: partition not assigned
    "gfm_connected": ("GFM_STATE", 14, 0x3, {1: True, 2: False}),  # CONNECTED 1, DISCONNECTED 2
}
# NVML_GPU_FABRIC_HEALTH_SUMMARY_*
SUMMARIES = {0: "not_supported", 1: "healthy", 2: "unhealthy", 3: "limited_capacity"}
# A healthy GPU of a driver that knows every field: 0b01_01_0001_10_10_10_10 (GFM connected, partition assigned,
# configuration NONE, the four conditions FALSE).
HEALTHY = 0x51AA


def _looks_clean(health):
    """What a judge reads as a clean fabric: every condition absent, every state good, nothing unknown."""
    return (health["degraded_bandwidth"] is health["route_recovery"] is health["route_unhealthy"]
            is health["access_timeout_recovery"] is False and health["incorrect_configuration"] == "none"
            and health["partition_assigned"] is True and health["gfm_connected"] is True
            and health["summary"] == "healthy" and health["undefined_bits"] == 0)


FIELD_VALUES = [(name, value) for name, (_nvml, _shift, width, _values) in NVML_LAYOUT.items()
                for value in range(width + 1)]


@pytest.mark.parametrize("background", [0, HEALTHY], ids=["alone", "among_healthy_fields"])
@pytest.mark.parametrize(("name", "value"), FIELD_VALUES, ids=[f"{n}={v}" for n, v in FIELD_VALUES])
def test_decode_every_value_of_every_field(name, value, background):
    nvml_name, shift, width, values = NVML_LAYOUT[name]
    mask = (background & ~(width << shift)) | value << shift
    health = nvml.decode_health_mask(mask, 1)
    reasons = [reason for reason in health["reasons"] if reason.startswith(f"{name}: ")]
    if value in values:
        assert health[name] == values[value]
        assert reasons == []
    elif value == 0:
        assert health[name] is None
        assert reasons == [f"{name}: NVML reports it not supported"]
    else:
        assert health[name] == (f"unknown_{value}" if name == "incorrect_configuration" else None)
        assert reasons == [f"{name}: value {value} of NVML_GPU_FABRIC_HEALTH_MASK_{nvml_name} is not defined"]
    others = {other: health[other] for other in NVML_LAYOUT if other != name}
    if background:  # the other fields keep their healthy values
        healthy = {"degraded_bandwidth": False, "route_recovery": False, "route_unhealthy": False,
                   "access_timeout_recovery": False, "incorrect_configuration": "none", "partition_assigned": True,
                   "gfm_connected": True}
        assert others == {other: healthy[other] for other in others}
    else:
        assert set(others.values()) == {None}
    assert _looks_clean(health) == (mask == HEALTHY)


@pytest.mark.parametrize(("mask", "summary", "expected"), [
    # hand-decoded examples: mask -> the fields that differ from a healthy GPU
    (0x51AA, 1, {}),
    (0x53AA, 2, {"incorrect_configuration": "incorrect_chassis_sn", "summary": "unhealthy"}),
    (0x91AA, 2, {"gfm_connected": False, "summary": "unhealthy"}),
    (0x64AA, 2, {"incorrect_configuration": "no_partition", "partition_assigned": False, "summary": "unhealthy"}),
    (0x51A6, 3, {"route_recovery": True, "summary": "limited_capacity"}),
    (0x51A9, 3, {"degraded_bandwidth": True, "summary": "limited_capacity"}),
    (0x5F9A, 1, {"incorrect_configuration": "unknown_15", "route_unhealthy": True}),
    (0xD1AA, 1, {"gfm_connected": None}),  # GFM_STATE 3: not defined
    (0x0001_51AA, 1, {"undefined_bits": 0x10000}),
    (0x51AA, 7, {"summary": "unknown_7"}),
    (0x51AA, 0, {"summary": "not_supported"}),
    (0x51AA, None, {"summary": None}),
])
def test_decode_hand_decoded_masks(mask, summary, expected):
    clean = {"mask": mask, "degraded_bandwidth": False, "route_recovery": False, "route_unhealthy": False,
             "access_timeout_recovery": False, "incorrect_configuration": "none", "partition_assigned": True,
             "gfm_connected": True, "undefined_bits": 0, "summary": "healthy"}
    health = nvml.decode_health_mask(mask, summary)
    reasons = health.pop("reasons")
    assert health == clean | expected
    assert bool(reasons) == any(value is None or str(value).startswith(("unknown_", "not_supported"))
                                or key == "undefined_bits" for key, value in expected.items())


@pytest.mark.parametrize(("summary", "expected", "reason"), [
    (0, "not_supported", "summary: NVML reports it not supported"),
    (1, "healthy", None),
    (2, "unhealthy", None),
    (3, "limited_capacity", None),
    (4, "unknown_4", "summary: value 4 of NVML_GPU_FABRIC_HEALTH_SUMMARY is not defined"),
    (255, "unknown_255", "summary: value 255 of NVML_GPU_FABRIC_HEALTH_SUMMARY is not defined"),
    (None, None, "summary: NVML gave no health summary (fabric info older than nvmlGpuFabricInfo_v3)"),
])
def test_decode_health_summary(summary, expected, reason):
    health = nvml.decode_health_mask(HEALTHY, summary)
    assert health["summary"] == expected
    assert health["reasons"] == ([] if reason is None else [reason])


def test_decode_without_mask():
    health = nvml.decode_health_mask(None)
    assert {name: health[name] for name in NVML_LAYOUT} == dict.fromkeys(NVML_LAYOUT)
    assert (health["mask"], health["undefined_bits"], health["summary"]) == (None, None, None)
    assert health["reasons"] == [
        "NVML gave no health mask (fabric info v1 only: driver or nvidia-ml-py older than nvmlGpuFabricInfo_v2)",
        "summary: NVML gave no health summary (fabric info older than nvmlGpuFabricInfo_v3)"]
    assert not _looks_clean(health)


def test_decode_driver_570_mask_leaves_the_later_fields_unknown():
    # driver 570 sets the four conditions only: the fields it does not know are 0, NOT_SUPPORTED, never clean
    health = nvml.decode_health_mask(0xAA)
    assert [health[name] for name in ("incorrect_configuration", "partition_assigned", "gfm_connected")] == [None] * 3
    assert health["reasons"] == ["incorrect_configuration: NVML reports it not supported",
                                 "partition_assigned: NVML reports it not supported",
                                 "gfm_connected: NVML reports it not supported",
                                 "summary: NVML gave no health summary (fabric info older than nvmlGpuFabricInfo_v3)"]
    assert not _looks_clean(health)


def _check_health(mask, summary):
    health = nvml.decode_health_mask(mask, summary)
    for name, (_nvml_name, shift, width, values) in NVML_LAYOUT.items():
        value = (mask >> shift) & width
        named = [reason for reason in health["reasons"] if reason.startswith(f"{name}: ")]
        if value in values:
            assert (health[name], named) == (values[value], [])
        else:  # not supported or not defined: never a documented value, always a reason
            assert health[name] == (f"unknown_{value}" if name == "incorrect_configuration" and value else None)
            assert len(named) == 1
    assert health["undefined_bits"] == mask & 0xFFFF0000
    assert any(reason.startswith("health mask bits 16-31") for reason in health["reasons"]) == bool(mask >> 16)
    if summary in SUMMARIES:
        assert health["summary"] == SUMMARIES[summary]
    else:
        assert health["summary"] == (None if summary is None else f"unknown_{summary}")
    assert any(reason.startswith("summary: ") for reason in health["reasons"]) == (summary not in (1, 2, 3))
    # clean only when every field and the summary say so; anything unknown keeps it from looking clean
    assert _looks_clean(health) == (mask == HEALTHY and summary == 1)
    defined = all((mask >> shift) & width in values for _n, shift, width, values in NVML_LAYOUT.values())
    assert (health["reasons"] == []) == (defined and mask >> 16 == 0 and summary in (1, 2, 3))


@settings(max_examples=400)
@given(mask=st.integers(min_value=0, max_value=0xFFFF),
       summary=st.one_of(st.none(), st.integers(min_value=0, max_value=255)))
@example(mask=HEALTHY, summary=1)
@example(mask=HEALTHY, summary=0)
@example(mask=HEALTHY & ~0xC000, summary=1)
def test_every_16_bit_mask_decodes_to_documented_values_or_a_reason(mask, summary):
    _check_health(mask, summary)


@settings(max_examples=200)
@given(mask=st.integers(min_value=0, max_value=0xFFFF_FFFF), summary=st.integers(min_value=0, max_value=255))
def test_every_32_bit_mask_reports_its_undefined_bits(mask, summary):
    _check_health(mask, summary)


def test_every_16_bit_mask_exhaustively():
    # each of the 65,536 masks once, with a healthy summary: only 0x51aa reads as clean
    clean = [mask for mask in range(0x10000) if _looks_clean(nvml.decode_health_mask(mask, 1))]
    assert clean == [HEALTHY]


# --- platform info decoding -----------------------------------------------------------------------------


@pytest.mark.parametrize(("raw", "expected"), [
    (b"1823825185529\0\0\0", ("1823825185529", None)),
    (b"ABCDEFGHIJKLMNOP", ("ABCDEFGHIJKLMNOP", None)),  # 16 characters, no NUL
    (b"  1823825185529\0", ("1823825185529", None)),  # padded with spaces
    (b"1823\0" + b"\xff" * 11, ("1823", None)),  # after the NUL is not the serial
    (b"SN-1.2_3\0\0\0\0\0\0\0\0", ("SN-1.2_3", None)),
    (bytes(16), (None, "chassis_serial: empty (the platform reports no chassis serial)")),
    (b" " * 16, (None, "chassis_serial: empty (the platform reports no chassis serial)")),
    (b"\xff" * 16, (None, "chassis_serial: NVML reports it invalid (all bytes 0xff)")),
    (b"18238\xe9185529\0\0\0", (None, "chassis_serial: not a chassis serial (1 to 16 letters, digits and _.-)")),
    (b"1823{{ x }}\0\0\0\0\0\0", (None, "chassis_serial: not a chassis serial (1 to 16 letters, digits and _.-)")),
    (b"18 23\0" + bytes(10), (None, "chassis_serial: not a chassis serial (1 to 16 letters, digits and _.-)")),
    (b"\x01\x02\x03" + bytes(13), (None, "chassis_serial: not a chassis serial (1 to 16 letters, digits and _.-)")),
    (b"-1823\0" + bytes(10), (None, "chassis_serial: not a chassis serial (1 to 16 letters, digits and _.-)")),
])
def test_decode_chassis_serial(raw, expected):
    assert nvml.decode_chassis_serial(raw) == expected


@pytest.mark.parametrize(("raw", "expected"), [
    (bytes.fromhex("f57c8f526a5bac21") + bytes(8), ("0x21ac5b6a528f7cf5", None)),  # DCGM's "0x%016llx"
    (bytes.fromhex("0100000000000000") + bytes(8), ("0x0000000000000001", None)),
    (bytes(16), (None, "ib_guid: all zero (the platform reports no GUID)")),
    (b"\xff" * 16, (None, "ib_guid: NVML reports it invalid (all bytes 0xff)")),
    (bytes.fromhex("f57c8f526a5bac21") + b"\x01" + bytes(7),
     (None, "ib_guid: more than the 8 bytes NVML documents are set")),
])
def test_decode_ib_guid(raw, expected):
    assert nvml.decode_ib_guid(raw) == expected


@given(st.binary(min_size=16, max_size=16))
@example(b"\xff" * 16)
@example(bytes(16))
def test_platform_byte_fields_decode_to_a_shape_or_a_reason(raw):
    serial, why = nvml.decode_chassis_serial(raw)
    assert (serial is None) != (why is None)
    if serial is None:
        assert why.startswith("chassis_serial: ") and raw.hex() not in why
    else:
        assert re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,15}", serial)
        assert serial.encode() == raw.split(b"\0")[0].strip(b" ")
    guid, why = nvml.decode_ib_guid(raw)
    assert (guid is None) != (why is None)
    if guid is None:
        assert why.startswith("ib_guid: ")
    else:
        assert re.fullmatch(r"0x[0-9a-f]{16}", guid) and int(guid, 16) == int.from_bytes(raw[:8], "little") != 0
        assert not any(raw[8:])


def test_decode_platform_info():
    assert nvml.decode_platform_info(GB300_PLATFORM) == {
        "info_version": 2, "chassis_serial": "1823825185529", "slot_number": 5, "tray_index": 4, "host_id": 1,
        "peer_type": 1, "module_id": 2, "ib_guid": "0x21ac5b6a528f7cf5", "reasons": []}
    invalid = dataclasses.replace(GB300_PLATFORM, info_version=1, chassis_serial=b"\xff" * 16, ib_guid=bytes(16),
                                  slot_number=255, tray_index=255, host_id=255, module_id=0)
    assert nvml.decode_platform_info(invalid) == {
        "info_version": 1, "chassis_serial": None, "slot_number": None, "tray_index": None, "host_id": 255,
        "peer_type": 1, "module_id": 0, "ib_guid": None,
        "reasons": ["chassis_serial: NVML reports it invalid (all bytes 0xff)",
                    "ib_guid: all zero (the platform reports no GUID)",
                    "slot_number: NVML reports it invalid (0xff)", "tray_index: NVML reports it invalid (0xff)"]}


def test_recorded_source_nvlink(nvml_recording):
    recording = nvml_recording("gb200_tray_degraded")
    source = RecordedSource(recording)
    assert source.nvlink_states(2).count(1) == 16
    assert source.nvlink_speed_mbps(2) == 53125
    recording["devices"][0]["nvlink"] = None
    with pytest.raises(nvml.NvmlNotSupported):
        RecordedSource(recording).nvlink_states(0)
    with pytest.raises(nvml.NvmlNotSupported):
        RecordedSource(recording).nvlink_speed_mbps(0)
