# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The state of a systemd unit from `systemctl show`: the parser, the state, and the recorded trees' answers."""

from __future__ import annotations

import os

import pytest
from fixtures.commands import run_command
from hypothesis import given
from hypothesis import strategies as st

from ansible_collections.gpufabric.cluster.plugins.module_utils import gpu, systemd_units
from ansible_collections.gpufabric.cluster.plugins.module_utils.errors import CommandError, ParseError
from ansible_collections.gpufabric.cluster.plugins.module_utils.systemd_units import (
    PROPERTIES,
    empty_state,
    parse_systemctl_show,
    read_unit,
    unit_state,
)

FM = "nvidia-fabricmanager.service"
# `systemctl show` of a service that failed after five automatic restarts, in the order systemctl prints the
# properties (the service interface's, then the unit's).
FAILED = ("Result=exit-code\nNRestarts=5\nExecMainStatus=1\nLoadState=loaded\nActiveState=failed\nSubState=failed\n"
          "UnitFileState=enabled\nStateChangeTimestamp=Mon 2026-11-09 03:12:44 UTC\n"
          "ActiveEnterTimestamp=Mon 2026-11-09 03:11:58 UTC\nInactiveEnterTimestamp=Mon 2026-11-09 03:12:44 UTC\n")
KEYS = set(empty_state())


def test_parse_keeps_key_value_lines_only():
    assert parse_systemctl_show("A=1\nno separator\n=x\n B = two words \nA=3\nC=\nD=x=y\n") == {
        "A": "3", "B": "two words", "C": "", "D": "x=y"}


def test_a_failed_unit():
    assert unit_state(parse_systemctl_show(FAILED), FM) == {
        "exists": True, "enabled": True, "active": False, "masked": False, "unit_file_state": "enabled",
        "active_state": "failed", "sub_state": "failed", "since": "Mon 2026-11-09 03:12:44 UTC",
        "result": "exit-code", "exit_status": 1, "restarts": 5}


def test_a_unit_systemd_does_not_know_is_not_installed():
    text = ("Result=success\nNRestarts=0\nExecMainStatus=0\nLoadState=not-found\nActiveState=inactive\n"
            "SubState=dead\nUnitFileState=\nStateChangeTimestamp=\nActiveEnterTimestamp=\nInactiveEnterTimestamp=\n")
    assert unit_state(parse_systemctl_show(text), FM) == {
        **empty_state(), "active": False, "active_state": "inactive", "sub_state": "dead"}


def test_since_falls_back_to_the_enter_timestamp_of_the_state():
    active = "LoadState=loaded\nActiveState=active\nActiveEnterTimestamp=Sat 2026-11-28 06:08:10 CET\n" \
             "InactiveEnterTimestamp=Fri 2026-11-27 06:08:10 CET\n"
    assert unit_state(parse_systemctl_show(active), FM)["since"] == "Sat 2026-11-28 06:08:10 CET"
    inactive = active.replace("ActiveState=active", "ActiveState=inactive")
    assert unit_state(parse_systemctl_show(inactive), FM)["since"] == "Fri 2026-11-27 06:08:10 CET"


def test_older_systemd_prints_unset_timestamps_as_na_and_may_lack_nrestarts():
    text = "LoadState=loaded\nActiveState=inactive\nSubState=dead\nStateChangeTimestamp=n/a\nResult=success\n"
    state = unit_state(parse_systemctl_show(text), FM)
    assert (state["since"], state["restarts"], state["exit_status"], state["result"]) == (None, None, None, "success")


def test_a_masked_unit():
    state = unit_state(parse_systemctl_show("LoadState=masked\nUnitFileState=masked\nActiveState=inactive\n"), FM)
    assert (state["exists"], state["masked"], state["enabled"], state["active"]) == (True, True, False, False)


@pytest.mark.parametrize("text, message", [
    ("", f"systemctl show {FM} printed no LoadState"),
    ("ActiveState=active\n", f"systemctl show {FM} printed no LoadState"),
    ("LoadState=Loaded!\n", f"systemctl show {FM}: LoadState is not a systemd state word"),
    ("LoadState=loaded\nActiveState=act ive\n", f"systemctl show {FM}: ActiveState is not a systemd state word"),
    ("LoadState=loaded\nNRestarts=-1\n", f"systemctl show {FM}: NRestarts is not a whole number"),
    ("LoadState=loaded\nExecMainStatus=0x1\n", f"systemctl show {FM}: ExecMainStatus is not a whole number"),
])
def test_output_of_another_shape_is_an_error_naming_unit_and_property(text, message):
    with pytest.raises(ParseError) as error:
        unit_state(parse_systemctl_show(text), FM)
    assert str(error.value) == message


def test_a_secret_looking_value_is_never_quoted():
    with pytest.raises(ParseError) as error:
        unit_state(parse_systemctl_show("LoadState=loaded\nResult=hunter2 password\n"), FM)
    assert "hunter2" not in str(error.value)


WORDS = st.sampled_from(["", "n/a", "active", "failed", "exit-code", "0", "12", "-1", "x y", "Sat 2026-11-28 06:08:10 "
                         "UTC", "enabled-runtime", "not-found", "masked", "\u00e9t\u00e9"])


@given(st.text(max_size=300) | st.lists(st.tuples(st.sampled_from(PROPERTIES) | st.text(max_size=8), WORDS | st.text(
    max_size=20)), max_size=12).map(lambda pairs: "".join(f"{key}={value}\n" for key, value in pairs)))
def test_any_text_gives_a_documented_state_or_a_clear_error(text):
    try:
        state = unit_state(parse_systemctl_show(text), FM)
    except ParseError as exc:
        assert str(exc).startswith(f"systemctl show {FM}") and "\n" not in str(exc)
        return
    assert set(state) == KEYS
    assert all(isinstance(state[key], bool) for key in ("exists", "enabled", "masked"))
    assert state["active"] in (None, True, False)
    assert (state["active"] is True) == (state["active_state"] == "active")
    for key in ("unit_file_state", "active_state", "sub_state", "result"):
        assert state[key] is None or systemd_units._WORD_RE.match(state[key])
    for key in ("exit_status", "restarts"):
        assert state[key] is None or (isinstance(state[key], int) and state[key] >= 0)
    assert state["since"] is None or systemd_units._TIMESTAMP_RE.match(state["since"])
    if not state["exists"]:
        assert (state["since"], state["result"], state["exit_status"], state["restarts"]) == (None,) * 4


# --- the recorded trees ---------------------------------------------------------------------------------------------

def test_read_unit_asks_one_show_call_from_below_the_root(fresh_tree):
    calls = []

    def runner(argv, **kwargs):
        calls.append(argv)
        return run_command(argv, **kwargs)

    root = fresh_tree("hgx_h100_fm_down")
    state = read_unit(root, runner, FM)
    assert calls == [[os.path.join(root, "usr/bin/systemctl"), "show", FM,
                      "--property=" + ",".join(PROPERTIES)]]
    assert (state["active_state"], state["result"], state["exit_status"]) == ("failed", "exit-code", 1)


def test_without_systemctl_the_state_is_unknown_not_an_error(fresh_tree):
    root = fresh_tree("hgx_h100")
    os.unlink(os.path.join(root, "usr/bin/systemctl"))
    assert read_unit(root, run_command, FM) is None
    assert gpu.read_fabricmanager(root, run_command, []) is None


def test_a_failing_systemctl_is_a_command_error_the_gpu_probe_names(fresh_tree):
    root = fresh_tree("hgx_h100")
    with open(os.path.join(root, "usr/bin/systemctl"), "w", encoding="utf-8") as handle:
        handle.write("#!/bin/sh\n# TEST FIXTURE: altered stand-in.\necho 'Failed to connect to bus' >&2\nexit 1\n")
    with pytest.raises(CommandError):
        read_unit(root, run_command, FM)
    errors = []
    assert gpu.read_fabricmanager(root, run_command, errors) is None
    assert len(errors) == 1 and errors[0].startswith(f"systemctl show {FM} --property=")
    assert errors[0].endswith("exited 1: Failed to connect to bus")


@pytest.mark.parametrize("tree, expected", [
    ("hgx_h100", ("active", "running", "success", 0, 0)),
    ("hgx_h100_fm_down", ("failed", "failed", "exit-code", 1, 0)),
    ("gb200_tray", ("inactive", "dead", None, None, None)),  # not installed on a compute tray
])
def test_the_trees_answer_for_the_fabric_manager(fresh_tree, tree, expected):
    state = read_unit(fresh_tree(tree), run_command, FM)
    assert (state["active_state"], state["sub_state"], state["result"], state["exit_status"],
            state["restarts"]) == expected


def test_the_imex_failed_tree_records_the_restarts(fresh_tree):
    state = read_unit(fresh_tree("gb200_tray_imex_failed"), run_command, "nvidia-imex.service")
    assert (state["active"], state["result"], state["exit_status"], state["restarts"]) == (False, "exit-code", 1, 5)
