# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The stand-in pynvml of `make demo` (TEST FIXTURE, tests/fixtures/pynvml_standin/pynvml.py) cannot drift from the
recorded NVML double: the collection's adapter, PynvmlSource, over the stand-in gives the GPU facts the double gives,
for every recorded tree and for recordings changed at random; its structs and errors are nvidia-ml-py's."""

from __future__ import annotations

import copy
import ctypes
import importlib.util
import json
import os

import pynvml
import pytest
from fixtures import build_trees
from fixtures.commands import run_command
from fixtures.recorded_nvml import RecordedSource, load_recording
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.gpufabric.cluster.plugins.module_utils import gpu, nvml

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
STANDIN = os.path.join(ROOT, "tests", "fixtures", "pynvml_standin", "pynvml.py")


@pytest.fixture(scope="module")
def standin():
    """The stand-in, imported under another name than the real nvidia-ml-py's."""
    spec = importlib.util.spec_from_file_location("pynvml_standin", STANDIN)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def all_trees(tmp_path_factory):
    dest = str(tmp_path_factory.mktemp("trees"))
    return {name: build_trees.build_tree(name, dest) for name in sorted(build_trees.HOSTS)}


def _facts_through_standin(standin, monkeypatch, root, recording_path):
    monkeypatch.setattr(standin, "RECORDING", recording_path)
    return gpu.collect_gpu(root, run_command, source_factory=lambda _root: nvml.PynvmlSource(standin))


def _facts_through_double(root, recording):
    return gpu.collect_gpu(root, run_command, source_factory=lambda _root: RecordedSource(recording))


# How each says that NVML does not support an NVLink query: the double words every one as nvidia-ml-py's
# NOT_SUPPORTED error; the adapter over nvidia-ml-py (and the stand-in) says which answer meant it.
NOT_SUPPORTED_WORDINGS = ("NVMLError_NotSupported: Not Supported", "NVMLError_FunctionNotFound: Function Not Found",
                          "NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON: Not Supported")


def _not_supported_worded_alike(facts):
    """``facts`` with each NVLink reason that says NVML does not support a query worded one way."""
    facts = copy.deepcopy(facts)
    for item in facts["gpus"]:
        reasons = (item.get("nvlink") or {}).get("reasons")
        if reasons:
            item["nvlink"]["reasons"] = [
                f"{reason.split(': ', 1)[0]}: not supported" if reason.split(": ", 1)[-1] in NOT_SUPPORTED_WORDINGS
                else reason for reason in reasons]
    return facts


@pytest.mark.parametrize("name", sorted(build_trees.HOSTS))
def test_the_adapter_over_the_standin_answers_as_the_double(standin, all_trees, monkeypatch, name):
    root = all_trees[name]
    through_standin = _facts_through_standin(standin, monkeypatch, root, root + ".nvml.json")
    assert through_standin == _facts_through_double(root, load_recording(root))
    if build_trees.HOSTS[name].driver_version:
        assert through_standin["source"] == "nvml"


def test_the_demo_trays_show_their_rack_slot_and_clique(standin, all_trees, monkeypatch):
    cliques = {}
    for number, (clique, slot) in build_trees.DEMO_TRAYS.items():
        root = all_trees[f"demo_tray{number:02d}"]
        facts = _facts_through_standin(standin, monkeypatch, root, root + ".nvml.json")
        assert facts["cliques"] == [f"{build_trees.GB200_CLUSTER_UUID}.{clique}"]
        assert facts["platform"] == {"chassis_serials": [build_trees.GB200_CHASSIS_SERIAL], "slot_numbers": [slot],
                                     "tray_indices": [number], "host_ids": [1]}
        cliques.setdefault(clique, []).append(number)
        uuids = [item["uuid"] for item in facts["gpus"]]
        assert [uuid[-4:] for uuid in uuids] == [f"{number:02d}{index:02d}" for index in range(4)]
    assert cliques == {1: [7, 8], 2: [16]}


def test_a_missing_or_broken_recording_is_no_nvml(standin, all_trees, monkeypatch, tmp_path):
    root = all_trees["gb200_tray"]
    not_found = _facts_through_double(root, {"init_error": "NVMLError_LibraryNotFound: NVML Shared Library Not Found"})
    assert _facts_through_standin(standin, monkeypatch, root, str(tmp_path / "absent.json")) == not_found
    for content in ("", "[]", '{"devices": [', "null"):
        broken = tmp_path / "broken.json"
        broken.write_text(content, encoding="utf-8")
        assert _facts_through_standin(standin, monkeypatch, root, str(broken)) == not_found
    assert not_found["source"] == "pci"


def test_a_query_before_init_is_uninitialized(standin):
    with pytest.raises(standin.NVMLError_Uninitialized):
        standin.nvmlDeviceGetCount()


# --- nvidia-ml-py's own names, structs and errors --------------------------------------------------


@pytest.mark.parametrize("struct", ["c_nvmlGpuFabricInfo_t", "c_nvmlGpuFabricInfo_v2_t", "c_nvmlGpuFabricInfo_v3_t",
                                    "c_nvmlGpuFabricInfo_v4_t", "c_nvmlPlatformInfo_v1_t", "c_nvmlPlatformInfo_v2_t",
                                    "c_nvmlFieldValue_t"])
def test_the_structs_are_laid_out_as_nvidia_ml_py_s(standin, struct):
    ours, theirs = getattr(standin, struct), getattr(pynvml, struct)
    assert ctypes.sizeof(ours) == ctypes.sizeof(theirs)
    layout = [(field[0], getattr(ours, field[0]).offset, getattr(ours, field[0]).size) for field in ours._fields_]
    assert layout == [(field[0], getattr(theirs, field[0]).offset, getattr(theirs, field[0]).size)
                      for field in theirs._fields_]
    if "version" in dict(theirs._fields_):
        assert ours().version == theirs().version


def test_the_errors_are_nvidia_ml_py_s(standin):
    for name, (code, text) in standin._ERRORS.items():
        assert pynvml.NVMLError._valClassMapping[code].__name__ == f"NVMLError_{name}"
        raised = standin._error(code)
        assert type(raised).__name__ == f"NVMLError_{name}" and raised.value == code
        assert isinstance(raised, standin.NVMLError)
        assert text == nvml.NVML_RETURN_STRINGS[code]
    assert standin.NVML_NVLINK_MAX_LINKS == nvml.NVML_NVLINK_MAX_LINKS
    assert standin.NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON == pynvml.NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON


# --- recordings changed at random: the same facts, or the same error ---------------------------------

ERROR_TEXTS = st.sampled_from(["NVMLError_GpuIsLost: GPU is lost", "NVMLError_NotSupported: Not Supported",
                               "NVMLError_Unknown: Unknown Error", "NVMLError_NoPermission: Insufficient Permissions"])
DEVICE_QUERIES = st.sampled_from(nvml.DEVICE_QUERIES)
SYSTEM_QUERIES = st.sampled_from(nvml.SYSTEM_QUERIES)


@st.composite
def changed_recordings(draw):
    """The GB200 tray's recording with its answers changed as NVML may answer them: an older struct, NOT_SUPPORTED,
    a query failing, fewer links, a health counter."""
    recording = copy.deepcopy(BASE_RECORDING)
    for device in recording["devices"]:
        fabric = device["fabric"]
        version = draw(st.sampled_from([4, 3, 2, 1, None]))
        if version is None:
            device["fabric"] = None
        elif version < 4:
            fabric.update(info_version=version, clique_id=fabric.pop("cliques")[0][1])
            if version < 3:
                fabric.pop("health_summary")
            if version < 2:
                fabric.pop("health_mask")
        if draw(st.booleans()):
            device["platform"] = None
        device["nvlink"] = draw(st.sampled_from([device["nvlink"], None, {"states": [1, 0, None], "speed_mbps": None}]))
        for query in ("remapped_rows", "ecc_uncorrected", "recovery_action"):
            if draw(st.booleans()):
                device[query] = None
        device["nvlink_errors"] = draw(st.sampled_from([{}, {"3": {"replay": 7, "recovery": 1, "crc": 2}}]))
        device["errors"] = draw(st.dictionaries(DEVICE_QUERIES, ERROR_TEXTS, max_size=2))
    recording["errors"] = draw(st.dictionaries(SYSTEM_QUERIES, ERROR_TEXTS, max_size=1))
    return recording


BASE_RECORDING: dict = {}


@given(recording=changed_recordings())
@settings(max_examples=40)
def test_any_changed_recording_gives_the_double_s_facts(standin, all_trees, tmp_path_factory, recording):
    root = all_trees["gb200_tray"]
    path = tmp_path_factory.mktemp("recording") / "nvml.json"
    path.write_text(json.dumps(recording), encoding="utf-8")
    previous = standin.RECORDING
    standin.RECORDING = str(path)
    try:
        through_standin = gpu.collect_gpu(root, run_command, source_factory=lambda _root: nvml.PynvmlSource(standin))
    finally:
        standin.RECORDING = previous
    assert _not_supported_worded_alike(through_standin) == _not_supported_worded_alike(
        _facts_through_double(root, recording))


@pytest.fixture(scope="module", autouse=True)
def _base_recording(all_trees):
    BASE_RECORDING.clear()
    BASE_RECORDING.update(load_recording(all_trees["gb200_tray"]))
