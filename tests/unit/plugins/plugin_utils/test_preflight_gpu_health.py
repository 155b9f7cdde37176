# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 43 item 2: the gpu_health check. A pending row remap, a row-remap failure, a volatile uncorrectable ECC
error or a reset/reboot recovery action fails; aggregate ECC errors, NVLink errors and serious XIDs warn by the
setting gpu_health_thresholds, refused in one line when wrong; each finding names host, GPU and counter."""

from __future__ import annotations

import copy

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import settings as site_settings
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.preflight import (
    SHOWN_GPUS,
    PreflightError,
    check_gpu_health,
    preflight_report,
)
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.preflight_fixes import fixed_by
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.settings import settings_problems

SERIOUS_XIDS = [48, 63, 64, 74, 79, 92, 94, 95, 119, 120, 140, 145, 146, 147, 148, 149, 150]
DEFAULTS = {"ecc_aggregate_uncorrected": 0, "nvlink_errors": None, "xids": SERIOUS_XIDS}
CLEAN_MEMORY = {"remapped_rows": {"correctable": 0, "uncorrectable": 0, "pending": False, "failure": False},
                "ecc_uncorrected": {"volatile": 0, "aggregate": 0}, "reasons": []}


def _hostvars(fleet_facts, layout):
    return {host: {"ansible_facts": {"gpufabric": copy.deepcopy(fleet_facts[tree]),
                                     "default_ipv4": {"address": address}}}
            for host, (tree, address) in layout.items()}


def _check(report, host):
    return {check["name"]: check for check in report["hosts"][host]["checks"]}["gpu_health"]


def _gpu(index=0, memory=None, action="none", links=(), xids=None):
    return {"index": index, "pci_address": f"0000:{0x1b + index:02x}:00.0",
            "memory_errors": copy.deepcopy(CLEAN_MEMORY) if memory is None else memory, "recovery_action": action,
            "nvlink_errors": list(links), "xid_counts": {} if xids is None else xids}


def test_the_defaults_are_documented_in_the_argument_spec():
    spec = site_settings.suboption_defaults(site_settings.SITE_ROLE, "gpufabric_preflight_settings")
    assert spec["gpu_health_thresholds"] == DEFAULTS


def test_a_healthy_tray_passes(fleet_facts):
    report = preflight_report(_hostvars(fleet_facts, {"tray": ("gb200_tray", "10.114.0.11")}), ["tray"])
    assert _check(report, "tray") == {
        "name": "gpu_health", "status": "pass",
        "message": "4 GPU(s): no pending row remap, remap failure, volatile uncorrectable ECC error or pending reset, "
                   "nothing above its threshold"}
    assert report["settings"]["gpu_health_thresholds"] == DEFAULTS


def test_the_degraded_tray_fails_naming_each_gpu_and_counter(fleet_facts):
    report = preflight_report(_hostvars(fleet_facts, {"tray-7": ("gb200_tray_degraded", "10.114.0.11")}), ["tray-7"])
    assert _check(report, "tray-7") == {
        "name": "gpu_health", "status": "fail",
        "message": "GPU health on tray-7 (warnings by settings.gpu_health_thresholds): "
                   "GPU 0 (0008:01:00.0): aggregate uncorrectable ECC errors 2 (threshold 0); "
                   "GPU 1 (0009:01:00.0): row remap failure, recovery action node_reboot, aggregate uncorrectable ECC "
                   "errors 8 (threshold 0), XID 64; "
                   "GPU 2 (0018:01:00.0): row remap pending, volatile uncorrectable ECC errors 1, recovery action "
                   "gpu_reset, aggregate uncorrectable ECC errors 1 (threshold 0), XID 63, 74 x2, 94"}
    # XID 13 of GPU 0 (an application's fault) is not in the list: not named
    assert "XID 13" not in _check(report, "tray-7")["message"]
    assert "gpu_health" in report["hosts"]["tray-7"]["summary"]
    assert report["summary"]["failed_hosts"] == ["tray-7"]


def test_nvlink_errors_warn_when_a_threshold_is_set(fleet_facts):
    hostvars = _hostvars(fleet_facts, {"tray": ("gb200_tray_degraded", "10.114.0.11")})
    rules = {"gpu_health_thresholds": {"nvlink_errors": 10, "ecc_aggregate_uncorrected": 100, "xids": None}}
    report = preflight_report(hostvars, ["tray"], rules)
    assert report["settings"]["gpu_health_thresholds"] == {"ecc_aggregate_uncorrected": 100, "nvlink_errors": 10,
                                                           "xids": None}
    assert _check(report, "tray")["message"] == (
        "GPU health on tray (warnings by settings.gpu_health_thresholds): "
        "GPU 1 (0009:01:00.0): row remap failure, recovery action node_reboot; "
        "GPU 2 (0018:01:00.0): row remap pending, volatile uncorrectable ECC errors 1, recovery action gpu_reset, "
        "NVLink errors link 3 replay 14, crc 31 (threshold 10)")


def test_warnings_alone_warn():
    gpus = {"gpus": [_gpu(0, xids={"79": 1, "13": 4}), _gpu(1, action="drain_p2p")]}
    assert check_gpu_health("node-2", gpus, {"gpu_health_thresholds": DEFAULTS}) == {
        "name": "gpu_health", "status": "warn",
        "message": "GPU health on node-2 (warnings by settings.gpu_health_thresholds): GPU 0 (0000:1b:00.0): XID 79; "
                   "GPU 1 (0000:1c:00.0): recovery action drain_p2p"}


@pytest.mark.parametrize(("action", "status"), [
    ("gpu_reset", "fail"), ("node_reboot", "fail"), ("drain_and_reset", "fail"), ("bus_reset", "fail"),
    ("system_reboot", "fail"), ("drain_p2p", "warn"), ("recover_imex_domain", "warn"), ("unknown_42", "warn"),
    ("none", "pass"), (None, "pass")])
def test_each_recovery_action(action, status):
    assert check_gpu_health("h", {"gpus": [_gpu(action=action)]}, {"gpu_health_thresholds": DEFAULTS})["status"] == \
        status


def test_unreadable_health_is_not_judged():
    pci_only = {"index": 0, "pci_address": "0000:17:00.0", "memory_errors": None, "recovery_action": None,
                "nvlink_errors": None, "xid_counts": None}
    assert check_gpu_health("h", {"gpus": [pci_only]}, {"gpu_health_thresholds": DEFAULTS}) == {
        "name": "gpu_health", "status": "skip",
        "message": "the health of the 1 GPU(s) could not be read (no NVML, no kernel log)"}
    assert check_gpu_health("h", {"gpus": [pci_only, _gpu(1)]}, {"gpu_health_thresholds": DEFAULTS}) == {
        "name": "gpu_health", "status": "pass",
        "message": "1 GPU(s): no pending row remap, remap failure, volatile uncorrectable ECC error or pending reset, "
                   "nothing above its threshold; the health of 1 GPU(s) could not be read"}
    assert check_gpu_health("h", {"gpus": []}, {})["status"] == "skip"


def test_the_listing_is_capped():
    gpus = [_gpu(index, action="gpu_reset") for index in range(SHOWN_GPUS + 2)]
    message = check_gpu_health("h", {"gpus": gpus}, {"gpu_health_thresholds": DEFAULTS})["message"]
    assert message.endswith("GPU 7 (0000:22:00.0): recovery action gpu_reset and 2 more")
    many = _gpu(0, xids={str(code): 1 for code in SERIOUS_XIDS})
    message = check_gpu_health("h", {"gpus": [many]}, {"gpu_health_thresholds": DEFAULTS})["message"]
    assert message.endswith("XID 48, 63, 64, 74 and 13 more")


def test_the_check_names_what_fixes_it():
    assert "gpu_health_thresholds" in fixed_by("gpu_health")


@pytest.mark.parametrize(("thresholds", "line"), [
    ({"ecc": 1}, "gpu_health_thresholds has unknown keys: ecc; known: ecc_aggregate_uncorrected, nvlink_errors, "
                 "xids"),
    ({"ecc_aggregate_uncorrected": -1}, "gpu_health_thresholds.ecc_aggregate_uncorrected must be a whole number of "
                                        "errors, 0 or more, got -1"),
    ({"nvlink_errors": "5"}, "gpu_health_thresholds.nvlink_errors must be a whole number of errors, 0 or more, got "
                             "'5'"),
    ({"xids": 79}, "gpu_health_thresholds.xids must be a list, got a number"),
    ({"xids": [79, "94"]}, "gpu_health_thresholds.xids entry must be an XID code, a whole number from 0 to 65535, "
                           "got '94'"),
    ({"xids": [True]}, "gpu_health_thresholds.xids entry must be an XID code, a whole number from 0 to 65535, got "
                       "True"),
    ([1], "gpu_health_thresholds must be a mapping, got a list"),
])
def test_bad_thresholds_are_refused_in_one_line_by_the_settings_check_and_the_preflight(thresholds, line):
    rules = {"gpu_health_thresholds": thresholds}
    problems = settings_problems({"tray-1": {"gpufabric_preflight_settings": rules}}, ["tray-1"], ["gpufabric"])
    assert problems == [f"host tray-1: gpufabric_preflight_settings.{line}"]
    with pytest.raises(PreflightError) as caught:
        preflight_report({}, [], rules)
    assert str(caught.value) == f"settings.{line}"


def test_null_judges_nothing_that_warns_but_still_fails(fleet_facts):
    hostvars = _hostvars(fleet_facts, {"tray": ("gb200_tray_degraded", "10.114.0.11")})
    report = preflight_report(hostvars, ["tray"], {"gpu_health_thresholds": None})
    assert report["settings"]["gpu_health_thresholds"] == {"ecc_aggregate_uncorrected": None, "nvlink_errors": None,
                                                           "xids": None}
    check = _check(report, "tray")
    assert check["status"] == "fail"
    assert "aggregate" not in check["message"] and "XID" not in check["message"]


VALUES = st.one_of(st.none(), st.booleans(), st.integers(-5, 2 ** 65), st.floats(), st.text(max_size=5),
                   st.lists(st.integers(), max_size=2))


@given(gpus=st.lists(st.fixed_dictionaries({
    "index": VALUES, "pci_address": VALUES,
    "memory_errors": st.one_of(VALUES, st.fixed_dictionaries({
        "remapped_rows": st.one_of(VALUES, st.dictionaries(st.sampled_from(["pending", "failure", "correctable"]),
                                                           VALUES)),
        "ecc_uncorrected": st.one_of(VALUES, st.dictionaries(st.sampled_from(["volatile", "aggregate"]), VALUES))})),
    "recovery_action": st.one_of(VALUES, st.sampled_from(["none", "gpu_reset", "drain_p2p"])),
    "nvlink_errors": st.one_of(VALUES, st.lists(st.dictionaries(st.sampled_from(["link", "replay", "crc"]), VALUES),
                                                max_size=3)),
    "xid_counts": st.one_of(VALUES, st.dictionaries(st.one_of(st.text(max_size=3), st.sampled_from(["79", "94"])),
                                                    VALUES, max_size=3)),
}), max_size=6), thresholds=st.fixed_dictionaries({
    "ecc_aggregate_uncorrected": st.one_of(st.none(), st.integers(0, 5)),
    "nvlink_errors": st.one_of(st.none(), st.integers(0, 5)),
    "xids": st.one_of(st.none(), st.lists(st.integers(0, 200), max_size=4))}))
def test_any_gpu_facts_give_a_check(gpus, thresholds):
    check = check_gpu_health("h", {"gpus": gpus}, {"gpu_health_thresholds": thresholds})
    assert check["name"] == "gpu_health"
    assert check["status"] in ("skip", "pass", "warn", "fail")
    assert "\n" not in check["message"]
