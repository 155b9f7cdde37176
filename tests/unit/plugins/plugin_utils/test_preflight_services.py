# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 43 items 1 and 2, services: nvidia-fabricmanager judged on NVSwitch systems (fabric_manager), nvidia-imex
judged only where the site's IMEX mode runs it on the host (imex); one line per finding naming host, unit and state."""

from __future__ import annotations

import copy

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import settings as site_settings
from ansible_collections.gpufabric.cluster.plugins.plugin_utils import site
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.preflight import preflight_report
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.preflight_fixes import fixed_by
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.services import (
    check_fabric_manager,
    imex_service_findings,
    unit_finding,
)
from ansible_collections.gpufabric.cluster.tests.unit.helpers import gathered_trees

TREES = ("hgx_h100", "hgx_h100_fm_down", "gb200_tray", "gb200_tray_imex_failed", "gb200_tray_no_partition",
         "gb200_tray_host_managed", "broken_node", "no_nvidia")
ADDRESSES = {"hgx_h100": "192.0.2.21", "hgx_h100_fm_down": "192.0.2.21", "broken_node": "10.0.0.3",
             "no_nvidia": "192.0.2.30"}
FM_FAILED = ("nvidia-fabricmanager.service failed since Mon 2026-11-09 03:12:44 UTC, last result exit-code, exit "
             "status 1 on node, an NVSwitch system that needs it; the NVLink fabric waits meanwhile (8 GPU(s) "
             "in_progress instead of completed)")
IMEX_FAILED = ("nvidia-imex.service failed since Sat 2026-11-28 06:08:10 UTC, last result exit-code, exit status 1, "
               "restarted 5 time(s) by systemd on node (IMEX mode {mode} runs it on the host)")


@pytest.fixture(scope="module")
def facts(tmp_path_factory, tree_builder, command_runner):
    """The gathered facts of the recorded trees this file judges."""
    return gathered_trees(tree_builder, command_runner, str(tmp_path_factory.mktemp("services")), TREES)


def _report(facts, tree, **host_vars):
    named = isinstance(tree, str)
    hostvars = {"node": {"ansible_facts": {"gpufabric": copy.deepcopy(facts[tree]) if named else tree,
                                           "default_ipv4": {"address": ADDRESSES.get(tree, "10.114.0.11")
                                                            if named else "10.114.0.11"}},
                         **host_vars}}
    return preflight_report(hostvars, ["node"])


def _checks(facts, tree, **host_vars):
    return {check["name"]: check for check in _report(facts, tree, **host_vars)["hosts"]["node"]["checks"]}


# --- nvidia-fabricmanager ---------------------------------------------------------------------------------------

def test_hgx_with_its_fabric_manager_running_passes(facts):
    assert _checks(facts, "hgx_h100")["fabric_manager"] == {
        "name": "fabric_manager", "status": "pass",
        "message": "nvidia-fabricmanager.service active (running) since Sat 2026-11-28 06:08:10 UTC on node"}


def test_hgx_whose_fabric_manager_failed_fails_naming_host_unit_state_since_and_result(facts):
    checks = _checks(facts, "hgx_h100_fm_down")
    assert checks["fabric_manager"] == {"name": "fabric_manager", "status": "fail", "message": FM_FAILED}
    assert checks["fabric"]["status"] == "fail"  # the symptom (fabric in progress) next to its cause
    assert "nvidia-fabricmanager" in fixed_by("fabric_manager")
    assert "gpufabric.cluster.nvidia_driver" in fixed_by("fabric_manager")


def test_the_failed_fabric_manager_keeps_the_host_out_by_default(facts):
    report = _report(facts, "hgx_h100_fm_down")
    assert "fabric_manager" in site.DEFAULT_GATE_CHECKS
    record = site.site_gate(report, ["node"], ["fabric_manager"], ["node"], ["node"])
    assert record["excluded"] == {"node": [FM_FAILED]}


def test_a_fabric_manager_not_installed_on_hgx_fails(facts):
    gathered = copy.deepcopy(facts["hgx_h100"])
    gathered["gpu"]["fabricmanager"] = dict(gathered["gpu"]["fabricmanager"], exists=False, active=False,
                                            active_state="inactive", sub_state="dead", since=None, result=None)
    check = _checks(facts, gathered)["fabric_manager"]
    assert (check["status"], check["message"]) == (
        "fail", "nvidia-fabricmanager.service is not installed on node, an NVSwitch system that needs it")


def test_without_a_unit_the_gpu_operators_driver_container_runs_it(facts):
    gathered = copy.deepcopy(facts["hgx_h100"])
    gathered["gpu"]["fabricmanager"].update(exists=False, active=False)
    check = _checks(facts, gathered, nvidia_driver_gpu_operator=True)["fabric_manager"]
    assert check["status"] == "skip" and "GPU Operator's driver container" in check["message"]


def test_a_restarted_fabric_manager_warns(facts):
    gathered = copy.deepcopy(facts["hgx_h100"])
    gathered["gpu"]["fabricmanager"]["restarts"] = 2
    check = _checks(facts, gathered)["fabric_manager"]
    assert (check["status"], check["message"]) == (
        "warn", "nvidia-fabricmanager.service active (running) since Sat 2026-11-28 06:08:10 UTC, restarted 2 time(s) "
                "by systemd on node")


@pytest.mark.parametrize("tree", ["gb200_tray", "gb200_tray_no_partition", "gb200_tray_imex_failed", "no_nvidia",
                                  "broken_node"])
def test_no_fabric_manager_finding_off_nvswitch_systems(facts, tree):
    """A GB200 compute tray (no fabric manager installed), one still without its partition (zero cluster UUID, fabric
    in progress: not an HGX), a host without GPUs, and an HGX-like host without a loaded driver raise nothing."""
    assert _checks(facts, tree)["fabric_manager"]["status"] == "skip"


def test_facts_of_an_older_probe_or_a_host_without_systemctl_are_not_judged(facts):
    gathered = copy.deepcopy(facts["hgx_h100_fm_down"])
    del gathered["gpu"]["fabricmanager"]
    check = _checks(facts, gathered)["fabric_manager"]
    assert check["status"] == "skip" and "unknown" in check["message"]


# --- nvidia-imex ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("mode", ["host", "dra_host_managed"])
def test_a_failed_nvidia_imex_where_the_mode_runs_it_fails(facts, mode):
    check = _checks(facts, "gb200_tray_imex_failed", gpufabric_imex_mode=mode)["imex"]
    assert check["status"] == "fail"
    assert check["message"].split("; ")[0] == IMEX_FAILED.format(mode=mode)


def test_a_gb200_tray_in_dra_mode_with_nvidia_imex_inactive_raises_nothing(facts):
    assert _checks(facts, "gb200_tray_imex_failed", gpufabric_imex_mode="dra")["imex"] == {
        "name": "imex", "status": "pass",
        "message": "nvidia-imex 570.172.08-1 inactive, nodes file with 18 address(es)"}
    gathered = copy.deepcopy(facts["gb200_tray_imex_failed"])
    gathered["imex"]["service"].update(active_state="inactive", sub_state="dead", result="success", exit_status=0,
                                       restarts=0)
    assert _checks(facts, gathered, gpufabric_imex_mode="dra")["imex"]["status"] == "pass"


def test_a_host_without_a_clique_raises_no_imex_alarm_in_host_mode(facts):
    """broken_node has nvidia-imex installed and inactive, and no clique (its driver is not loaded)."""
    assert not facts["broken_node"]["gpu"]["cliques"]
    assert facts["broken_node"]["imex"]["service"]["active"] is False
    message = _checks(facts, "broken_node", gpufabric_imex_mode="host")["imex"]["message"]
    assert "nvidia-imex.service" not in message


def test_an_imex_restarted_by_systemd_warns_where_it_must_run(facts):
    gathered = copy.deepcopy(facts["gb200_tray"])
    gathered["imex"]["service"]["restarts"] = 3
    check = _checks(facts, gathered, gpufabric_imex_mode="host")["imex"]
    assert check == {"name": "imex", "status": "warn",
                     "message": "nvidia-imex.service active (running) since Sat 2026-11-28 06:08:10 UTC, restarted 3 "
                                "time(s) by systemd on node (IMEX mode host runs it on the host)"}
    assert _checks(facts, gathered, gpufabric_imex_mode="dra")["imex"]["status"] == "pass"


def test_the_role_variable_decides_the_mode(facts):
    assert _checks(facts, "gb200_tray_imex_failed", gpufabric_imex_mode="host",
                   nvidia_imex_mode="dra")["imex"]["status"] == "pass"


def test_a_masked_nvidia_imex_in_host_mode_fails(facts):
    gathered = copy.deepcopy(facts["gb200_tray"])
    gathered["imex"]["service"].update(masked=True, active=False, active_state="inactive", sub_state="dead")
    check = _checks(facts, gathered)["imex"]
    assert check["status"] == "fail"
    assert check["message"].startswith("nvidia-imex.service is masked since Sat 2026-11-28 06:08:10 UTC on node")


def test_the_imex_service_state_unknown_from_unit_files_is_no_finding():
    imex = {"installed": True, "service": {"exists": True, "enabled": True, "active": None, "masked": False}}
    assert imex_service_findings("node", {"cliques": ["c.1"]}, imex, "host") == ([], [])


# --- gate and settings -------------------------------------------------------------------------------------------

def test_gpu_health_and_fabric_manager_are_gate_choices_and_defaults():
    option = site_settings.option(site_settings.SITE_ROLE, "gpufabric_site_gate_checks")
    assert {"gpu_health", "fabric_manager"} <= set(option["choices"])
    assert {"gpu_health", "fabric_manager"} <= set(option["default"])
    assert tuple(option["default"]) == site.DEFAULT_GATE_CHECKS


# --- any facts --------------------------------------------------------------------------------------------------

JSON = st.recursive(st.none() | st.booleans() | st.integers(min_value=-3, max_value=300) | st.text(max_size=12),
                    lambda children: st.lists(children, max_size=2)
                    | st.dictionaries(st.text(max_size=8), children, max_size=3), max_leaves=6)
SERVICE = st.fixed_dictionaries({}, optional={
    "exists": JSON, "active": JSON, "masked": JSON, "active_state": JSON | st.sampled_from(["active", "failed"]),
    "sub_state": JSON, "since": JSON, "result": JSON | st.just("exit-code"), "exit_status": JSON, "restarts": JSON})


@settings(max_examples=80, deadline=None)
@given(service=SERVICE | JSON, nvswitches=JSON, loaded=JSON, mode=st.sampled_from(["host", "dra", "dra_host_managed"])
       | JSON)
def test_any_unit_facts_give_one_line_verdicts(facts, service, nvswitches, loaded, mode):
    gpu = copy.deepcopy(facts["hgx_h100_fm_down"]["gpu"])
    gpu.update(fabricmanager=service, nvswitches={"count": nvswitches}, driver_loaded=loaded)
    check = check_fabric_manager("node", gpu, {})
    assert check["status"] in ("skip", "pass", "warn", "fail") and "\n" not in check["message"]
    if check["status"] in ("fail", "warn"):
        assert "nvidia-fabricmanager.service" in check["message"] and "node" in check["message"]
    finding = unit_finding(service, "x.service")
    assert finding is None or finding[0] in ("pass", "warn", "fail")
    imex = copy.deepcopy(facts["gb200_tray_imex_failed"]["imex"])
    imex["service"] = service
    failures, warnings = imex_service_findings("node", {"cliques": ["c.1"]}, imex, mode)
    if mode == "dra":
        assert (failures, warnings) == ([], [])
    assert all("nvidia-imex.service" in line and "\n" not in line for line in failures + warnings)
