# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tests of the NVML adapter: nvidia-ml-py's (against a stand-in), the factory; and the recorded-NVML test double
(tests/fixtures/recorded_nvml.py) the other tests rely on."""

from __future__ import annotations

import ctypes
import types

import pytest
from fixtures.recorded_nvml import RecordedSource

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
        state=3, status=0, cluster_uuid="00000000-0000-0000-0000-000000000000", clique_id=0, health_mask=170)
    source.shutdown()


def test_recorded_source_fabric_of_gb200(nvml_recording):
    source = RecordedSource(nvml_recording("gb200_tray"))
    assert source.device_count() == 4
    assert source.pci_bus_id(2) == "00000018:01:00.0"
    assert source.fabric_info(3) == nvml.FabricInfo(state=3, status=0, cluster_uuid=GB200_UUID, clique_id=1,
                                                    health_mask=170)


def test_recorded_source_init_error(nvml_recording):
    source = RecordedSource(nvml_recording("no_nvidia"))
    with pytest.raises(NvmlError, match=r"^NVMLError_LibraryNotFound: NVML Shared Library Not Found$"):
        source.init()


def test_recorded_source_fabric_null_is_not_supported(nvml_recording):
    recording = nvml_recording("hgx_h100")
    recording["devices"][4]["fabric"] = None
    with pytest.raises(nvml.NvmlNotSupported, match="Not Supported"):
        RecordedSource(recording).fabric_info(4)


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


def _fake_pynvml(fabric_versions=(2, 3), legacy=True, accepted=(2, 3), fabric_error=None, failing=None):
    """A stand-in for the pynvml module: the calls PynvmlSource makes, answering like a GB200 tray.

    ``fabric_versions``: which versioned structs the module defines; ``accepted``: which the "driver"
    takes (others answer ARGUMENT_VERSION_MISMATCH); ``failing``: function name -> NVML error code.
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

    classes = {3: NVMLError_NotSupported, 15: NVMLError_GpuIsLost}
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
        info.status, info.cliqueId, info.state = 0, 7, 3
        if hasattr(info, "healthMask"):  # v2 and later: every condition FALSE but DEGRADED_BW TRUE
            info.healthMask = 1 | 2 << 2 | 2 << 4 | 2 << 6

    def fabric_v(handle, ref):
        info = ref._obj
        if fabric_error is not None:
            raise error(fabric_error)
        if {0x02000024: 2, 0x3000028: 3}[info.version] not in accepted:
            raise error(25)
        fill(info)
        return 0

    def fabric_legacy(handle, ref):
        if fabric_error is not None:
            raise error(fabric_error)
        fill(ref._obj)
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
        module.nvmlDeviceGetGpuFabricInfo = api("nvmlDeviceGetGpuFabricInfo", fabric_legacy)
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
                                                    health_mask=169)
    source.shutdown()
    assert [call for call in fake.calls if call[0] == "nvmlDeviceGetHandleByIndex"] == [
        ("nvmlDeviceGetHandleByIndex", 1)]  # one handle per GPU, reused by every query
    assert fake.calls[-1] == ("nvmlShutdown",)


def test_pynvml_source_prefers_newest_fabric_struct():
    fake = _fake_pynvml()
    nvml.PynvmlSource(fake).fabric_info(0)
    assert _fabric_calls(fake) == [("nvmlDeviceGetGpuFabricInfoV", "_FabricV3")]


def test_pynvml_source_falls_back_to_v2_on_version_mismatch():
    fake = _fake_pynvml(accepted=(2,))
    info = nvml.PynvmlSource(fake).fabric_info(0)
    assert info.cluster_uuid == GB200_UUID
    assert _fabric_calls(fake) == [("nvmlDeviceGetGpuFabricInfoV", "_FabricV3"),
                                   ("nvmlDeviceGetGpuFabricInfoV", "_FabricV2")]


def test_pynvml_source_uses_v2_when_module_has_no_v3():
    fake = _fake_pynvml(fabric_versions=(2,))
    nvml.PynvmlSource(fake).fabric_info(0)
    assert _fabric_calls(fake) == [("nvmlDeviceGetGpuFabricInfoV", "_FabricV2")]


def test_pynvml_source_uses_legacy_call_on_old_module():
    fake = _fake_pynvml(fabric_versions=())
    info = nvml.PynvmlSource(fake).fabric_info(2)
    assert info == nvml.FabricInfo(state=3, status=0, cluster_uuid=GB200_UUID, clique_id=7)
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
    assert len(_fabric_calls(fake)) == 1  # NOT_SUPPORTED is an answer, not a reason to try older calls


def test_pynvml_source_fabric_error():
    with pytest.raises(NvmlError, match=r"^NVMLError_GpuIsLost: GPU is lost$") as raised:
        nvml.PynvmlSource(_fake_pynvml(fabric_error=15)).fabric_info(0)
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


@pytest.mark.parametrize(("mask", "expected"), [
    (2 | 2 << 2 | 2 << 4 | 2 << 6, dict.fromkeys(nvml.FABRIC_HEALTH_FIELDS, False)),
    (1 | 1 << 2 | 1 << 4 | 1 << 6, dict.fromkeys(nvml.FABRIC_HEALTH_FIELDS, True)),
    (2 | 2 << 2 | 1 << 4 | 2 << 6, dict(dict.fromkeys(nvml.FABRIC_HEALTH_FIELDS, False), route_unhealthy=True)),
    (2 | 2 << 2 | 2 << 4 | 1 << 6, dict(dict.fromkeys(nvml.FABRIC_HEALTH_FIELDS, False), access_timeout_recovery=True)),
    # bits above the four fields (INCORRECT_CONFIGURATION at shift 8 in newer headers) do not leak into them
    (2 | 2 << 2 | 2 << 4 | 2 << 6 | 5 << 8, dict.fromkeys(nvml.FABRIC_HEALTH_FIELDS, False)),
])
def test_decode_health_mask(mask, expected):
    health = nvml.decode_health_mask(mask)
    assert {key: health[key] for key in expected} == expected
    assert health["reasons"] == [] and health["mask"] == mask


def test_decode_health_mask_not_supported_and_undefined():
    health = nvml.decode_health_mask(0 | 3 << 2 | 2 << 4 | 2 << 6)
    assert (health["degraded_bandwidth"], health["route_recovery"], health["route_unhealthy"]) == (None, None, False)
    assert health["reasons"] == ["degraded_bandwidth: NVML reports it not supported",
                                 "route_recovery: value 3 of NVML_GPU_FABRIC_HEALTH_MASK_ROUTE_RECOVERY is not defined"]


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
