# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""tools/hardware_run.py and tools/hardware-run.sh: recording a host, the modules' results, the run's verdict.

The recorder is checked against the recorded NVML double (what it records replays as what it was asked of), the
junit parser against pytest's own report, and the run script's refusals by running it; the whole run, offline, is the
molecule tier's (tests/molecule/hardware_offline.py).
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from xml.etree import ElementTree

import pytest
from fixtures import hardware_recordings
from fixtures.recorded_nvml import RecordedSource
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.gpufabric.cluster.plugins.module_utils.errors import NvmlError
from ansible_collections.gpufabric.cluster.plugins.module_utils.gpu import collect_gpu
from ansible_collections.gpufabric.cluster.plugins.module_utils.nvml import (
    DEVICE_QUERIES,
    SYSTEM_QUERIES,
    NvmlNotSupported,
)

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
SCRIPT = os.path.join(ROOT, "tools", "hardware-run.sh")
_SPEC = importlib.util.spec_from_file_location("hardware_run", os.path.join(ROOT, "tools", "hardware_run.py"))
hardware_run = importlib.util.module_from_spec(_SPEC)
sys.modules["hardware_run"] = hardware_run  # its dataclasses look their module up
_SPEC.loader.exec_module(hardware_run)
NO_GPU = hardware_run.load_readings().NO_GPU
GPU_HOSTS = ("hgx_h100", "gb200_tray", "gb200_tray_degraded", "broken_node")


# --- record ---------------------------------------------------------------------------------------


def _answers(source: RecordedSource, count: int) -> list:
    """Every query's answer, or its error's kind and text, as the probe would see them."""
    def ask(query, *args):
        try:
            value = getattr(source, query)(*args)
        except NvmlNotSupported as exc:
            return ("not supported", str(exc))
        except NvmlError as exc:
            return ("error", str(exc))
        return ("value", value.__dict__ if hasattr(value, "__dict__") else value)
    try:
        source.init()
    except NvmlError as exc:
        return [("init", type(exc).__name__, str(exc))]

    def active(index):  # the links the probe asks the NVLink error counters of
        try:
            return [link for link, state in enumerate(source.nvlink_states(index)) if state == 1]
        except NvmlError:
            return []
    answers = [ask(query) for query in SYSTEM_QUERIES]
    answers += [ask(query, index, *([active(index)] if query == "nvlink_errors" else []))
                for index in range(count) for query in DEVICE_QUERIES
                if query != "nvlink_errors" or active(index)]  # asked of the active links only, as the probe asks
    return answers


ERROR_TEXTS = st.sampled_from(["NVMLError_GpuIsLost: GPU is lost", "NVMLError_NotSupported: Not Supported",
                               "NVMLError_Unknown: Unknown Error",
                               "NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON: Not Supported"])


def _fabric(version):
    """A fabric struct of NVML's ``version`` (1 to 4) in the double's format: v4 lists cliques, v1 to v3 one id."""
    fields = {"info_version": st.just(version), "state": st.integers(0, 3), "status": st.integers(0, 30),
              "cluster_uuid": st.uuids().map(str)}
    if version < 4:
        fields["clique_id"] = st.integers(0, 2 ** 32 - 1)
    else:
        fields["cliques"] = st.lists(st.tuples(st.integers(0, 3), st.integers(0, 2 ** 32 - 1)).map(list), max_size=3)
    if version >= 2:
        fields["health_mask"] = st.integers(0, 2 ** 32 - 1)
    if version >= 3:
        fields["health_summary"] = st.integers(0, 3)
    return st.fixed_dictionaries(fields)


@st.composite
def recordings(draw):
    """Recordings in the double's format: answers, missing answers, errors, NOT_SUPPORTED, an NVML that won't start."""
    if draw(st.booleans()) and draw(st.booleans()):
        return {"init_error": draw(ERROR_TEXTS)}
    devices = []
    for index in range(draw(st.integers(0, 3))):
        device = {"index": index}
        for query, values in (("uuid", st.just(f"GPU-{index:08x}-0000-0000-0000-000000000000")),
                              ("name", st.sampled_from(["NVIDIA H100 80GB HBM3", "NVIDIA GB200"])),
                              ("pci_bus_id", st.just(f"00000000:{index + 0x1b:02X}:00.0")),
                              ("memory_total", st.integers(1, 2 ** 40)),
                              ("mig_mode", st.lists(st.integers(0, 1), min_size=2, max_size=2)),
                              ("persistence_mode", st.integers(0, 1))):
            if draw(st.integers(0, 5)):
                device[query] = draw(values)
        device["fabric"] = draw(st.one_of(st.none(), st.integers(1, 4).flatmap(_fabric)))
        if draw(st.integers(0, 5)):
            device["platform"] = draw(st.one_of(st.none(), st.fixed_dictionaries({
                "info_version": st.integers(1, 2), "ib_guid": st.binary(min_size=16, max_size=16).map(bytes.hex),
                "chassis_serial_number": st.binary(min_size=16, max_size=16).map(bytes.hex),
                **{field: st.integers(0, 255)
                   for field in ("slot_number", "tray_index", "host_id", "peer_type", "module_id")}})))
        device["nvlink"] = draw(st.one_of(st.none(), st.fixed_dictionaries({
            "states": st.lists(st.sampled_from([0, 1, None]), max_size=18),
            "speed_mbps": st.one_of(st.none(), st.integers(1, 60000))})))
        for query, values in (
                ("remapped_rows", st.tuples(st.integers(0, 2 ** 32 - 1), st.integers(0, 2 ** 32 - 1), st.booleans(),
                                            st.booleans()).map(list)),
                ("ecc_uncorrected", st.lists(st.integers(0, 2 ** 64 - 1), min_size=2, max_size=2)),
                ("recovery_action", st.integers(0, 7)),
                ("nvlink_errors", st.dictionaries(st.integers(0, 17).map(str), st.fixed_dictionaries(
                    {name: st.integers(0, 2 ** 64 - 1) for name in ("replay", "recovery", "crc")}), max_size=3))):
            if draw(st.integers(0, 5)):
                device[query] = draw(st.one_of(st.none(), values))
        errors = draw(st.dictionaries(st.sampled_from(DEVICE_QUERIES), ERROR_TEXTS, max_size=2))
        if errors:
            device["errors"] = errors
        devices.append(device)
    recording = {"devices": devices}
    for query, values in (("driver_version", st.just("580.159.04")), ("cuda_driver_version", st.just(13000)),
                          ("nvml_version", st.just("13.580.159.04"))):
        if draw(st.integers(0, 5)):
            recording[query] = draw(values)
    errors = draw(st.dictionaries(st.sampled_from(SYSTEM_QUERIES[:3]), ERROR_TEXTS, max_size=2))
    if errors:
        recording["errors"] = errors
    return recording


@settings(deadline=None)  # no deadline: the CI machine runs tiers side by side
@given(recordings())
def test_what_the_recorder_records_replays_as_what_it_was_asked(recording):
    recorded = hardware_run.record_nvml(RecordedSource(recording), NvmlError, NvmlNotSupported)
    json.dumps(recorded)  # the recording is plain JSON
    count = len(recording.get("devices", []))
    assert _answers(RecordedSource(recorded), count) == _answers(RecordedSource(recording), count)


def test_a_device_count_nvml_refuses_is_recorded_as_refused():
    recording = {"driver_version": "580.159.04", "cuda_driver_version": 13000, "nvml_version": "13.580.159.04",
                 "errors": {"device_count": "NVMLError_Unknown: Unknown Error"}, "devices": []}
    recorded = hardware_run.record_nvml(RecordedSource(recording), NvmlError, NvmlNotSupported)
    assert recorded["errors"] == {"device_count": "NVMLError_Unknown: Unknown Error"}
    with pytest.raises(NvmlError, match="Unknown Error"):
        RecordedSource(recorded).device_count()


def test_a_not_supported_whose_text_does_not_say_so_still_replays_as_not_supported():
    class NoNvlinkQuery(RecordedSource):
        def nvlink_states(self, index):
            raise NvmlNotSupported("nvidia-ml-py has no nvmlDeviceGetNvLinkState")
    recording = {"driver_version": "580.159.04", "cuda_driver_version": 13000, "nvml_version": "13.580.159.04",
                 "devices": [{"index": 0, "fabric": None, "nvlink": {"states": [], "speed_mbps": None}}]}
    recorded = hardware_run.record_nvml(NoNvlinkQuery(recording), NvmlError, NvmlNotSupported)
    with pytest.raises(NvmlNotSupported, match="nvidia-ml-py has no nvmlDeviceGetNvLinkState"):
        RecordedSource(recorded).nvlink_states(0)


@pytest.mark.parametrize("name", (*GPU_HOSTS, "no_nvidia"))
def test_a_run_recorded_on_a_host_replays_as_gpu_info_answered_there(name, host_trees, nvml_recording, tmp_path):
    """The whole mechanism on the recorded hosts: what the run records (the files the probe reads, NVML's answers),
    made a fixture and replayed, gives the answer gpu_info gave on the host."""
    root = host_trees[name]
    source = RecordedSource(nvml_recording(name))
    real = collect_gpu(root, None, source_factory=lambda _root: source)
    recording = {"tree": hardware_run.capture_tree(root),
                 "nvml": hardware_run.record_nvml(source, NvmlError, NvmlNotSupported)}
    replayed = hardware_recordings.replay_gpu_info(recording, str(tmp_path))
    assert hardware_recordings.compared(replayed, real) == hardware_recordings.compared(real, real)
    assert replayed["count"] == real["count"]


def test_the_tree_holds_the_nvidia_functions_and_the_driver_files_only(host_trees):
    tree = hardware_run.capture_tree(host_trees["hgx_h100"])
    classes = {path: text.strip() for path, text in tree["files"].items() if path.endswith("/class")}
    # the eight H100s and the two NVSwitches (NVIDIA functions the probe reads and passes over); not the NICs
    assert sorted(classes.values()) == ["0x030200"] * 8 + ["0x068000"] * 2
    assert all(text.strip() == "0x10de" for path, text in tree["files"].items() if path.endswith("/vendor"))
    assert set(tree["drivers"].values()) == {"nvidia"}
    assert "/proc/driver/nvidia/version" in tree["files"]
    assert tree["dirs"] == ["/sys", "/sys/bus/pci/devices"]


def test_a_tree_without_a_pci_bus_says_so(tmp_path):
    (tmp_path / "sys").mkdir()
    assert hardware_run.capture_tree(str(tmp_path)) == {"dirs": ["/sys"], "files": {}, "drivers": {}}


def test_a_pci_bus_the_sandbox_refuses_to_list_is_recorded_as_absent(host_trees, monkeypatch):
    listdir = os.listdir

    def refused(path):
        if str(path).endswith("/sys/bus/pci/devices"):
            raise PermissionError(13, "Permission denied")
        return listdir(path)
    monkeypatch.setattr(os, "listdir", refused)
    tree = hardware_run.capture_tree(host_trees["hgx_h100"])
    assert not any(path.startswith("/sys/bus/pci/devices/") for path in tree["files"])
    assert "/proc/driver/nvidia/version" in tree["files"]


# --- modules --------------------------------------------------------------------------------------


JSON_VALUES = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=10),
                           lambda children: st.lists(children, max_size=3)
                           | st.dictionaries(st.text(max_size=5), children, max_size=3), max_leaves=10)


RESULTS = st.dictionaries(st.text(max_size=8), JSON_VALUES, max_size=5)


@settings(deadline=None)  # no deadline: the CI machine runs tiers side by side
@given(st.dictionaries(st.sampled_from(hardware_run.PROBE_MODULES), RESULTS))
def test_each_task_s_result_is_read_back_whole(results):
    assert hardware_run.module_results(json.dumps(results)) == results


@settings(deadline=None)  # no deadline: the CI machine runs tiers side by side
@given(st.text(max_size=40) | JSON_VALUES.map(json.dumps))
def test_anything_else_is_a_clear_error(text):
    try:
        results = hardware_run.module_results(text)
    except ValueError as exc:
        assert "\n" not in str(exc)
    else:
        assert results == json.loads(text)
        assert all(isinstance(result, dict) for result in results.values())


def test_modules_json_holds_each_result_and_a_module_that_did_not_run_as_failed(tmp_path, capsys):
    (tmp_path / "played.json").write_text(json.dumps({"gpu_info": {"count": 0, "warnings": ["w"]}}))
    results = hardware_run.gather_modules(tmp_path, tmp_path / "played.json")
    assert results["gpu_info"] == {"count": 0, "warnings": ["w"]}
    assert results["imex_info"] == {"failed": True, "msg": "imex_info: not run"}
    assert list(results) == list(hardware_run.PROBE_MODULES)
    assert json.loads((tmp_path / "modules.json").read_text()) == results
    assert '--- gpu_info\n{\n "count": 0,' in capsys.readouterr().out


def test_without_the_play_s_results_every_module_is_failed_with_the_reason(tmp_path):
    results = hardware_run.gather_modules(tmp_path, tmp_path / "absent.json")
    for name, result in results.items():
        assert result["failed"] is True
        assert result["msg"].startswith(f"{name}: no results from ansible-playbook ([Errno 2] No such file")


# --- summary --------------------------------------------------------------------------------------


def _pytest_report(tmp_path, body: str) -> str:
    """pytest's own --junitxml report of a test file with ``body``."""
    (tmp_path / "test_sample.py").write_text("import pytest\n" + body)
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                    f"--junitxml={tmp_path / 'report.xml'}", str(tmp_path / "test_sample.py")],
                   capture_output=True, check=False, cwd=tmp_path, timeout=120)
    return (tmp_path / "report.xml").read_text()


def test_pytest_s_report_reads_as_passed_failed_and_not_applicable_with_the_reason(tmp_path):
    report = _pytest_report(tmp_path, (
        "def test_ok():\n    pass\n"
        "def test_wrong():\n    assert 1 == 2, 'NVML and nvidia-smi disagree'\n"
        "def test_elsewhere():\n    pytest.skip('not applicable: /sys/bus/pci/devices is absent')\n"
        "@pytest.fixture\ndef broken():\n    raise RuntimeError('fixture broke')\n"
        "def test_error(broken):\n    pass\n"))
    outcomes = hardware_run.parse_junit(report)
    assert [(o.test, o.outcome) for o in outcomes] == [
        ("test_sample::test_ok", "passed"), ("test_sample::test_wrong", "failed"),
        ("test_sample::test_elsewhere", "not applicable"), ("test_sample::test_error", "failed")]
    assert "NVML and nvidia-smi disagree" in outcomes[1].reason
    assert outcomes[2].reason == "not applicable: /sys/bus/pci/devices is absent"
    assert "fixture broke" in outcomes[3].reason


@settings(deadline=None)  # no deadline: the CI machine runs tiers side by side
@given(st.text(max_size=60))
def test_a_report_that_is_not_junit_is_a_clear_error(text):
    try:
        outcomes = hardware_run.parse_junit(text)
    except ValueError as exc:
        assert "\n" not in str(exc)
    else:
        assert ElementTree.fromstring(text).tag in ("testsuites", "testsuite")
        assert all(o.outcome in ("passed", "failed", "not applicable") for o in outcomes)


def _outcome(outcome, reason=""):
    return hardware_run.TestOutcome(f"t::{outcome}{reason[:3]}", outcome, reason)


RAN = {name: {"changed": False} for name in hardware_run.PROBE_MODULES}


@pytest.mark.parametrize(("outcomes", "modules", "expected"), [
    ([_outcome("not applicable", f"{NO_GPU} (looked at: nothing)")] * 3, RAN, (NO_GPU, 0)),
    ([_outcome("passed"), _outcome("not applicable", "not applicable: /proc/modules is absent")], RAN,
     ("passed: 1 hardware test(s), 1 not applicable", 0)),
    ([_outcome("passed"), _outcome("failed", "assert 1 == 2")], RAN, ("FAILED: 1 of 2 hardware test(s) failed", 1)),
    ([], RAN, ("FAILED: no hardware test ran", 1)),
    ([_outcome("not applicable", "not applicable: /proc/modules is absent")], RAN,
     ("FAILED: none of 1 hardware test(s) applied", 1)),
    ([_outcome("not applicable", f"{NO_GPU} (...)")], dict(RAN, imex_info={"failed": True}),
     ("FAILED: module(s) imex_info failed", 1)),
], ids=["no-gpu", "passed", "failed", "none-ran", "none-applied", "module-failed"])
def test_the_verdict(outcomes, modules, expected):
    assert hardware_run.verdict(outcomes, modules, NO_GPU) == expected


def test_the_table_names_the_no_gpu_reason_once():
    reason = f"{NO_GPU} (/sys/bus/pci/devices: no NVIDIA GPU function among 6)"
    text = hardware_run.table([hardware_run.TestOutcome("a::one", "not applicable", reason),
                               hardware_run.TestOutcome("a::two", "not applicable", reason),
                               hardware_run.TestOutcome("a::three", "passed")], NO_GPU)
    assert text.splitlines() == ["test      result", f"a::one    not applicable: {NO_GPU}",
                                 f"a::two    not applicable: {NO_GPU}", "a::three  passed", reason]


def test_the_summary_is_written_and_its_status_returned(tmp_path, capsys):
    (tmp_path / "hardware-tests.xml").write_text(_pytest_report(tmp_path, "def test_ok():\n    pass\n"))
    (tmp_path / "modules.json").write_text(json.dumps(RAN))
    assert hardware_run.main(["summary", str(tmp_path), "--timing", "total=12.34"]) == 0
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["verdict"] == "passed: 1 hardware test(s), 0 not applicable"
    assert summary["seconds"] == {"total": 12.3}
    assert summary["modules"] == dict.fromkeys(hardware_run.PROBE_MODULES, True)
    assert "verdict: passed" in capsys.readouterr().out


# --- the run script's refusals --------------------------------------------------------------------


def _run_script(tmp_path, **env):
    return subprocess.run(["bash", SCRIPT], capture_output=True, text=True, check=False, timeout=60,
                          env={"PATH": os.environ["PATH"], "OUT": str(tmp_path / "out"), **env})


def test_the_run_refuses_without_a_bundle_naming_the_variable_and_the_make_target(tmp_path):
    done = _run_script(tmp_path, PYTHON=sys.executable, HARDWARE_BUNDLE=str(tmp_path / "none"))
    assert done.returncode == 2, done.stdout
    assert f"HARDWARE_BUNDLE: no wheels in {tmp_path / 'none'}; run 'make hardware-bundle'" in done.stdout
    assert "HARDWARE_BUNDLE: no wheels" in (tmp_path / "out" / "hardware-run.log").read_text()


def test_the_run_refuses_a_python_older_than_3_11(tmp_path):
    old = tmp_path / "python3.10"
    old.write_text("#!/bin/sh\nexit 1\n")
    old.chmod(0o755)
    done = _run_script(tmp_path, PYTHON=str(old))
    assert done.returncode == 2
    assert f"PYTHON: {old} is older than Python 3.11" in done.stdout


def test_the_run_writes_where_it_is_told_without_out(tmp_path):
    done = subprocess.run(["bash", SCRIPT, str(tmp_path / "elsewhere")], capture_output=True, text=True, check=False,
                          timeout=60, env={"PATH": os.environ["PATH"], "PYTHON": sys.executable,
                                           "HARDWARE_BUNDLE": str(tmp_path / "none")})
    assert done.returncode == 2
    assert f"results in {tmp_path / 'elsewhere'}" in done.stdout
    assert (tmp_path / "elsewhere" / "hardware-run.log").exists()
