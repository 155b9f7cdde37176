# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The preflight imex check in mode dra_host_managed: service active, control socket on at the setting, READY."""

from __future__ import annotations

import copy

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.gpufabric.cluster.plugins.filter.preflight_report import preflight_report
from ansible_collections.gpufabric.cluster.tests.unit.helpers import gathered_trees

SOCKET = "/etc/nvidia-imex/imex_ctrl.sock"
TREES = ("gb200_tray", "gb200_tray_host_managed", "gb200_tray_imex_not_ready", "hgx_h100", "broken_node")


@pytest.fixture(scope="module")
def facts(tmp_path_factory, tree_builder, command_runner):
    """The gathered facts of the recorded trees this file judges."""
    return gathered_trees(tree_builder, command_runner, str(tmp_path_factory.mktemp("host-managed")), TREES)


def _imex_check(facts, tree, **host_vars):
    hostvars = {"tray": {"ansible_facts": {"gpufabric": copy.deepcopy(facts[tree]),
                                           "default_ipv4": {"address": "10.114.0.11"}}, **host_vars}}
    report = preflight_report(hostvars, ["tray"])
    [check] = [check for check in report["hosts"]["tray"]["checks"] if check["name"] == "imex"]
    return check


def test_host_managed_tray_ready_passes(facts):
    check = _imex_check(facts, "gb200_tray_host_managed", gpufabric_imex_mode="dra_host_managed")
    assert check["status"] == "pass"
    assert check["message"].endswith(f"nodes file with 18 address(es), READY on {SOCKET}")


def test_the_role_variable_wins_over_the_site_variable(facts):
    check = _imex_check(facts, "gb200_tray_imex_not_ready", gpufabric_imex_mode="host",
                        nvidia_imex_mode="dra_host_managed")
    assert check["status"] == "fail"
    check = _imex_check(facts, "gb200_tray_imex_not_ready", gpufabric_imex_mode="dra_host_managed",
                        nvidia_imex_mode="host")
    assert check["status"] == "pass"


def test_a_tray_not_ready_fails_naming_the_state(facts):
    check = _imex_check(facts, "gb200_tray_imex_not_ready", gpufabric_imex_mode="dra_host_managed")
    assert check["status"] == "fail"
    assert check["message"] == ("the host IMEX daemon is not READY on its control socket: "
                                "the daemon answered 'WAITING_FOR_PEERS', not READY")


def test_a_tray_without_control_socket_fails_naming_each_problem(facts):
    check = _imex_check(facts, "gb200_tray", gpufabric_imex_mode="dra_host_managed")
    assert check["status"] == "fail"
    assert check["message"] == (
        f"the IMEX control socket is None (IMEX_CMD_UNIX_DOMAIN_PATH), not {SOCKET} (gpufabric_imex_socket_path); "
        "the host IMEX daemon is not READY on its control socket: "
        "no control socket (IMEX_CMD_UNIX_DOMAIN_PATH is not set)")


def test_another_socket_path_setting_fails(facts):
    check = _imex_check(facts, "gb200_tray_host_managed", gpufabric_imex_mode="dra_host_managed",
                        gpufabric_imex_socket_path="/run/nvidia-imex/ctl.sock")
    assert check["status"] == "fail"
    assert check["message"] == (f"the IMEX control socket is {SOCKET} (IMEX_CMD_UNIX_DOMAIN_PATH), not "
                                "/run/nvidia-imex/ctl.sock (gpufabric_imex_socket_path)")
    check = _imex_check(facts, "gb200_tray_host_managed", gpufabric_imex_mode="dra_host_managed",
                        gpufabric_imex_socket_path="/run/nvidia-imex/ctl.sock", nvidia_imex_socket_path=SOCKET)
    assert check["status"] == "pass"


def test_inactive_service_and_command_service_off_fail(facts):
    gathered = copy.deepcopy(facts)
    imex = gathered["gb200_tray_host_managed"]["imex"]
    imex["service"].update(active=False, active_state="inactive", sub_state="dead")
    imex["domain"] = None
    imex["control"].update(enabled=False, ready=None, status=None,
                           reason="the command service is off (IMEX_CMD_ENABLED is not 1)")
    check = _imex_check(gathered, "gb200_tray_host_managed", gpufabric_imex_mode="dra_host_managed")
    assert check["status"] == "fail"
    assert check["message"].split("; ") == [
        "nvidia-imex.service inactive (dead) since Sat 2026-11-28 06:08:10 UTC on tray "
        "(IMEX mode dra_host_managed runs it on the host)",
        "the IMEX command service is off (IMEX_CMD_ENABLED is not 1 in config.cfg)",
        "the host IMEX daemon is not READY on its control socket: "
        "the command service is off (IMEX_CMD_ENABLED is not 1)"]


def test_clique_host_without_nvidia_imex_fails_only_in_host_managed_mode(facts):
    gathered = copy.deepcopy(facts)
    gathered["gb200_tray"]["imex"]["installed"] = False
    assert _imex_check(gathered, "gb200_tray", gpufabric_imex_mode="dra")["status"] == "warn"
    check = _imex_check(gathered, "gb200_tray", gpufabric_imex_mode="dra_host_managed")
    assert check == {"name": "imex", "status": "fail",
                     "message": "GPUs are in an MNNVL clique but nvidia-imex is not installed "
                                "(gpufabric_imex_mode dra_host_managed needs the host service)"}


def test_hosts_without_a_clique_are_skipped_in_every_mode(facts):
    for mode in ("host", "dra", "dra_host_managed"):
        assert _imex_check(facts, "hgx_h100", gpufabric_imex_mode=mode)["status"] == "skip"


@pytest.mark.parametrize("tree", TREES)
@pytest.mark.parametrize("mode", ["host", "dra", None, "DRA_HOST_MANAGED", 5])
def test_other_modes_judge_as_before(facts, tree, mode):
    """Every mode but dra_host_managed (and an unset one) gives the verdict of the default mode, host."""
    before = _imex_check(facts, tree)
    assert _imex_check(facts, tree, gpufabric_imex_mode=mode) == before
    assert _imex_check(facts, tree, nvidia_imex_mode=mode, gpufabric_imex_socket_path="/x") == before


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8),
                    lambda children: st.lists(children, max_size=2)
                    | st.dictionaries(st.text(max_size=6), children, max_size=2), max_leaves=4)


@settings(max_examples=60, deadline=None)
@given(tree=st.sampled_from(TREES), control=JSON | st.fixed_dictionaries(
    {}, optional={"enabled": JSON, "socket_path": JSON, "ready": JSON, "reason": JSON}),
    socket=JSON, mode=st.sampled_from(["dra_host_managed", "host"]) | JSON)
def test_any_control_payload_or_setting_gives_a_verdict(facts, tree, control, socket, mode):
    gathered = copy.deepcopy(facts)
    gathered[tree]["imex"]["control"] = control
    check = _imex_check(gathered, tree, gpufabric_imex_mode=mode, gpufabric_imex_socket_path=socket)
    assert check["status"] in {"skip", "pass", "warn", "fail"} and isinstance(check["message"], str)
    if mode == "dra_host_managed" and check["status"] == "pass":
        assert isinstance(control, dict) and control.get("ready") is True and control.get("enabled")
        assert control.get("socket_path") == (SOCKET if socket is None else socket)


@pytest.mark.parametrize("path", ["/tmp/imex_ctrl.sock", "/etc/nvidia-imex/../imex/ctrl.sock", "run/imex.sock"])
def test_an_unsafe_wanted_socket_path_fails_by_the_roles_rule(facts, path):
    # The preflight judges the wanted path by the rule the nvidia_imex and dra_driver roles refuse it by
    # (plugin_utils/imex_socket.py): a path under a world-writable directory, with '..', or relative fails here
    # too, before any role runs, even where the daemon's own socket is at that path.
    check = _imex_check(facts, "gb200_tray_host_managed", gpufabric_imex_mode="dra_host_managed",
                        gpufabric_imex_socket_path=path)
    assert check["status"] == "fail"
    assert check["message"].startswith("gpufabric_imex_socket_path ")
    assert f"'{path}'" in check["message"]
