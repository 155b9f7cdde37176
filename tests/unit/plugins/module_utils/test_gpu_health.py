# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 43: each GPU's memory errors (row remapper, uncorrected ECC), recovery action and NVLink error counters,
asked of NVML through the one adapter; NOT_SUPPORTED is None with a reason, another failure an error, never a crash."""

from __future__ import annotations

import types

import pynvml
import pytest
from fixtures.recorded_nvml import RecordedSource

from ansible_collections.gpufabric.cluster.plugins.module_utils import gpu, nvml
from ansible_collections.gpufabric.cluster.plugins.module_utils.gpu_health import gpu_health

HEALTHY_MEMORY = {"remapped_rows": {"correctable": 0, "uncorrectable": 0, "pending": False, "failure": False},
                  "ecc_uncorrected": {"volatile": 0, "aggregate": 0}, "reasons": []}


def _nvml_error(code):
    return pynvml.NVMLError(code)


def _field(code=0, value=0, value_type=3):
    return types.SimpleNamespace(nvmlReturn=code, valueType=value_type,
                                 value=types.SimpleNamespace(uiVal=value, ullVal=value, dVal=float(value)))


def _fake(recovery=(0, 1, 1), error_counter=None, fields=None, rows=(2, 1, 1, 0), ecc=None):
    """A stand-in for pynvml with the health queries; ``error_counter`` raises that NVML code when set."""
    calls = []

    def counter(handle, link, kind):
        calls.append(("nvmlDeviceGetNvLinkErrorCounter", link, kind))
        if error_counter is not None:
            raise _nvml_error(error_counter)
        return 10 * link + kind

    def field_values(handle, ids):
        calls.append(("nvmlDeviceGetFieldValues", list(ids)))
        if ids == [nvml.NVML_FI_DEV_GET_GPU_RECOVERY_ACTION]:
            code, value, value_type = recovery
            return [_field(code, value, value_type)]
        return [_field(*(fields or {}).get(entry, (0, 100 * entry[1] + entry[0]))) for entry in ids]

    def total_ecc(handle, error_type, counter_type):
        calls.append(("nvmlDeviceGetTotalEccErrors", error_type, counter_type))
        if ecc is not None:
            raise _nvml_error(ecc)
        return {0: 1, 1: 5}[counter_type]

    return types.SimpleNamespace(
        NVMLError=pynvml.NVMLError, calls=calls,
        nvmlDeviceGetHandleByIndex=lambda index: f"handle{index}",
        nvmlDeviceGetRemappedRows=lambda handle: rows,
        nvmlDeviceGetTotalEccErrors=total_ecc,
        nvmlDeviceGetFieldValues=field_values,
        nvmlDeviceGetNvLinkErrorCounter=counter,
    )


def test_constants_are_nvidia_ml_py_s():
    """The field ids, counter kinds and recovery actions are those of the installed nvidia-ml-py (13.615.71)."""
    assert nvml.NVML_FI_DEV_GET_GPU_RECOVERY_ACTION == pynvml.NVML_FI_DEV_GET_GPU_RECOVERY_ACTION
    assert (nvml.NVML_MEMORY_ERROR_TYPE_UNCORRECTED, nvml.NVML_VOLATILE_ECC, nvml.NVML_AGGREGATE_ECC) == (
        pynvml.NVML_MEMORY_ERROR_TYPE_UNCORRECTED, pynvml.NVML_VOLATILE_ECC, pynvml.NVML_AGGREGATE_ECC)
    assert nvml.NVLINK_ERROR_COUNTERS == {
        "replay": (pynvml.NVML_NVLINK_ERROR_DL_REPLAY, pynvml.NVML_FI_DEV_NVLINK_ERROR_DL_REPLAY),
        "recovery": (pynvml.NVML_NVLINK_ERROR_DL_RECOVERY, pynvml.NVML_FI_DEV_NVLINK_ERROR_DL_RECOVERY),
        "crc": (pynvml.NVML_NVLINK_ERROR_DL_CRC_FLIT, pynvml.NVML_FI_DEV_NVLINK_ERROR_DL_CRC)}
    for value, name in nvml.GPU_RECOVERY_ACTIONS.items():
        assert getattr(pynvml, f"NVML_GPU_RECOVERY_ACTION_{name.upper()}") == value


def test_pynvml_source_reads_the_health_queries():
    fake = _fake()
    source = nvml.PynvmlSource(fake)
    assert source.remapped_rows(0) == (2, 1, True, False)
    assert source.ecc_uncorrected(0) == (1, 5)
    assert ("nvmlDeviceGetTotalEccErrors", 1, 0) in fake.calls and ("nvmlDeviceGetTotalEccErrors", 1, 1) in fake.calls
    assert source.recovery_action(0) == 1
    assert source.nvlink_errors(0, [2, 5]) == {2: {"replay": 20, "recovery": 21, "crc": 22},
                                               5: {"replay": 50, "recovery": 51, "crc": 52}}
    assert source.nvlink_errors(0, []) == {}


def test_pynvml_nvlink_errors_from_fields_where_the_counter_is_not_supported():
    fake = _fake(error_counter=nvml.NVML_ERROR_NOT_SUPPORTED)
    source = nvml.PynvmlSource(fake)
    assert source.nvlink_errors(0, [1, 4]) == {1: {"replay": 261, "recovery": 262, "crc": 263},
                                               4: {"replay": 561, "recovery": 562, "crc": 563}}
    assert fake.calls[-1] == ("nvmlDeviceGetFieldValues", [(161, 1), (162, 1), (163, 1), (161, 4), (162, 4),
                                                           (163, 4)])


def test_pynvml_nvlink_field_not_supported_is_not_supported():
    fake = _fake(error_counter=nvml.NVML_ERROR_NOT_SUPPORTED, fields={(162, 1): (nvml.NVML_ERROR_NOT_SUPPORTED, 0)})
    with pytest.raises(nvml.NvmlNotSupported, match="NVLink field 162 of link 1: Not Supported"):
        nvml.PynvmlSource(fake).nvlink_errors(0, [1])


def test_pynvml_nvlink_counter_failure_is_an_error():
    with pytest.raises(nvml.NvmlError, match="GPU is lost") as raised:
        nvml.PynvmlSource(_fake(error_counter=15)).nvlink_errors(0, [1])
    assert not isinstance(raised.value, nvml.NvmlNotSupported)


@pytest.mark.parametrize(("recovery", "kind", "message"), [
    ((nvml.NVML_ERROR_NOT_SUPPORTED, 0, 1), nvml.NvmlNotSupported,
     "NVML_FI_DEV_GET_GPU_RECOVERY_ACTION: Not Supported"),
    ((15, 0, 1), nvml.NvmlError, "NVML_FI_DEV_GET_GPU_RECOVERY_ACTION: GPU is lost"),
])
def test_pynvml_recovery_action_field_errors(recovery, kind, message):
    with pytest.raises(kind, match=message):
        nvml.PynvmlSource(_fake(recovery=recovery)).recovery_action(0)


def test_pynvml_health_query_the_binding_lacks_is_not_supported():
    fake = _fake()
    del fake.nvmlDeviceGetRemappedRows
    with pytest.raises(nvml.NvmlNotSupported, match="nvidia-ml-py has no nvmlDeviceGetRemappedRows"):
        nvml.PynvmlSource(fake).remapped_rows(0)


def test_gpu_health_of_a_degraded_gpu():
    recording = {"devices": [{"index": 0, "remapped_rows": [3, 1, True, False], "ecc_uncorrected": [1, 1],
                              "recovery_action": 1, "nvlink_errors": {"3": {"replay": 14, "recovery": 2, "crc": 31},
                                                                      "9": {"replay": 0, "recovery": 0, "crc": 0}}}]}
    errors: list[str] = []
    assert gpu_health(RecordedSource(recording), 0, [3, 9, 12], errors) == {
        "memory_errors": {"remapped_rows": {"correctable": 3, "uncorrectable": 1, "pending": True, "failure": False},
                          "ecc_uncorrected": {"volatile": 1, "aggregate": 1}, "reasons": []},
        "recovery_action": "gpu_reset",
        "nvlink_errors": [{"link": 3, "replay": 14, "recovery": 2, "crc": 31}],  # only links that counted errors
    }
    assert errors == []


def test_gpu_health_not_supported_is_none_with_reasons():
    recording = {"devices": [{"index": 0, "remapped_rows": None, "ecc_uncorrected": None, "recovery_action": None,
                              "nvlink_errors": None}]}
    errors: list[str] = []
    assert gpu_health(RecordedSource(recording), 0, [0], errors) == {
        "memory_errors": {"remapped_rows": None, "ecc_uncorrected": None,
                          "reasons": ["remapped_rows: NVMLError_NotSupported: Not Supported",
                                      "ecc_uncorrected: NVMLError_NotSupported: Not Supported"]},
        "recovery_action": None, "nvlink_errors": None}
    assert errors == []


def test_gpu_health_unknown_action_and_no_links():
    recording = {"devices": [{"index": 0, "remapped_rows": [0, 0, 0, 0], "ecc_uncorrected": [0, 0],
                              "recovery_action": 42, "nvlink_errors": {}}]}
    health = gpu_health(RecordedSource(recording), 0, [], [])
    assert (health["recovery_action"], health["nvlink_errors"]) == ("unknown_42", None)


def test_gpu_health_failures_are_errors_naming_gpu_and_query():
    recording = {"devices": [{"index": 2, "remapped_rows": [0, 0, 0, 0], "ecc_uncorrected": [0, 0],
                              "recovery_action": 0, "nvlink_errors": {},
                              "errors": {"ecc_uncorrected": "NVMLError_GpuIsLost: GPU is lost",
                                         "nvlink_errors": "NVMLError_Unknown: Unknown Error"}}]}
    errors: list[str] = []
    health = gpu_health(RecordedSource(recording), 2, [1], errors)
    assert errors == ["GPU 2: NVML ecc_uncorrected failed: NVMLError_GpuIsLost: GPU is lost",
                      "GPU 2: NVML nvlink_errors failed: NVMLError_Unknown: Unknown Error"]
    assert (health["memory_errors"]["ecc_uncorrected"], health["nvlink_errors"]) == (None, None)
    assert health["memory_errors"]["reasons"] == ["ecc_uncorrected: NVML failed (see errors)"]


def test_recorded_trees_healthy_and_degraded(host_trees, nvml_recording):
    def collect(name):
        return gpu.collect_gpu(host_trees[name], None,
                               source_factory=lambda _root: RecordedSource(nvml_recording(name)))
    healthy = collect("gb200_tray")
    assert {(str(item["memory_errors"]), item["recovery_action"], str(item["nvlink_errors"]))
            for item in healthy["gpus"]} == {(str(HEALTHY_MEMORY), "none", "[]")}
    degraded = collect("gb200_tray_degraded")
    assert degraded["errors"] == []
    assert [item["memory_errors"]["remapped_rows"] for item in degraded["gpus"]] == [
        HEALTHY_MEMORY["remapped_rows"],
        {"correctable": 0, "uncorrectable": 8, "pending": False, "failure": True},
        {"correctable": 3, "uncorrectable": 1, "pending": True, "failure": False},
        HEALTHY_MEMORY["remapped_rows"]]
    assert [item["memory_errors"]["ecc_uncorrected"] for item in degraded["gpus"]] == [
        {"volatile": 0, "aggregate": 2}, {"volatile": 0, "aggregate": 8}, {"volatile": 1, "aggregate": 1},
        {"volatile": 0, "aggregate": 0}]
    assert [item["recovery_action"] for item in degraded["gpus"]] == ["none", "node_reboot", "gpu_reset", "none"]
    assert [item["nvlink_errors"] for item in degraded["gpus"]] == [
        [], [],
        [{"link": 3, "replay": 14, "recovery": 2, "crc": 31}, {"link": 12, "replay": 0, "recovery": 1, "crc": 0}],
        []]
