# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tests of the IMEX command service probe (``control``): IMEX_CMD_* settings and ``nvidia-imex-ctl -q``."""

from __future__ import annotations

import os
import subprocess

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ansible_collections.gpufabric.cluster.plugins.module_utils.errors import CommandTimeout, ParseError
from ansible_collections.gpufabric.cluster.plugins.module_utils.imex import (
    DAEMON_STATES,
    QUERY_STATUS_LIMIT,
    collect_imex,
    control_settings,
    is_ready,
    parse_imex_ctl_query,
    read_control,
)
from ansible_collections.gpufabric.cluster.tests.unit.helpers import write_host_file

SOCKET = "/etc/nvidia-imex/imex_ctrl.sock"
CONFIG_PATH = "/etc/nvidia-imex/config.cfg"


def run(argv, check_rc=False, environ_update=None):
    """A runner with AnsibleModule.run_command's signature, for the stand-in tools of the trees."""
    env = dict(os.environ, **(environ_update or {}))
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, check=False)
    return proc.returncode, proc.stdout, proc.stderr


def _ctl(root: str, body: str) -> None:
    """Replace the tree's nvidia-imex-ctl stand-in (TEST FIXTURE)."""
    write_host_file(root, "/usr/bin/nvidia-imex-ctl", "#!/bin/sh\n# TEST FIXTURE: altered stand-in.\n" + body, 0o755)


def _config(root: str, extra: str) -> None:
    with open(os.path.join(root, CONFIG_PATH.lstrip("/")), "a", encoding="utf-8") as handle:
        handle.write(extra)


# --- IMEX_CMD_ENABLED / IMEX_CMD_UNIX_DOMAIN_PATH --------------------------------------------

@pytest.mark.parametrize(("value", "enabled", "warned"), [
    ("1", True, False),
    ("1 ", True, False),
    (" 1", True, False),
    ("0", False, False),
    ("", False, False),
    ("true", False, True),
    ("yes", False, True),
    ("01", False, True),
    ("2", False, True),
    ("1 # on", False, True),
])
def test_what_counts_as_enabled(value, enabled, warned):
    got, socket, warnings = control_settings({"IMEX_CMD_ENABLED": value})
    assert (got, socket) == (enabled, None)
    assert bool(warnings) is warned
    if warned:  # the key, never the value
        assert warnings == [f"{CONFIG_PATH}: IMEX_CMD_ENABLED is neither 0 nor 1; read as disabled"]


def test_absent_or_no_config_is_disabled():
    assert control_settings({}) == (False, None, [])
    assert control_settings(None) == (False, None, [])
    assert control_settings(["IMEX_CMD_ENABLED=1"]) == (False, None, [])


@pytest.mark.parametrize(("value", "expected"), [
    (SOCKET, SOCKET),
    (f"  {SOCKET}  ", SOCKET),
    ("/run/imex control/ctl.sock", "/run/imex control/ctl.sock"),
    ("", None),
    ("   ", None),
    ("relative.sock", "relative.sock"),
])
def test_socket_path(value, expected):
    assert control_settings({"IMEX_CMD_ENABLED": "1", "IMEX_CMD_UNIX_DOMAIN_PATH": value}) == (True, expected, [])


def test_non_text_values_are_ignored_with_a_warning():
    enabled, socket, warnings = control_settings({"IMEX_CMD_ENABLED": 1, "IMEX_CMD_UNIX_DOMAIN_PATH": [SOCKET]})
    assert (enabled, socket) == (False, None)
    assert warnings == [f"{CONFIG_PATH}: IMEX_CMD_ENABLED is not text (int); ignored",
                        f"{CONFIG_PATH}: IMEX_CMD_UNIX_DOMAIN_PATH is not text (list); ignored"]


def test_an_enabled_value_is_never_quoted_in_the_warning():
    """On the starting commit the warning quoted the value's first 20 characters."""
    warnings = control_settings({"IMEX_CMD_ENABLED": "s3cret-of-the-file"})[2]
    assert warnings == [f"{CONFIG_PATH}: IMEX_CMD_ENABLED is neither 0 nor 1; read as disabled"]


@given(st.dictionaries(st.sampled_from(["IMEX_CMD_ENABLED", "IMEX_CMD_UNIX_DOMAIN_PATH", "SERVER_PORT"]),
                       st.text() | st.integers() | st.booleans() | st.none() | st.lists(st.text(), max_size=2)))
def test_control_settings_property(config):
    enabled, socket, warnings = control_settings(config)
    value = config.get("IMEX_CMD_ENABLED")
    assert enabled is (isinstance(value, str) and value.strip() == "1")
    path = config.get("IMEX_CMD_UNIX_DOMAIN_PATH")
    assert socket == (path.strip() or None if isinstance(path, str) else None)
    assert all(isinstance(warning, str) for warning in warnings)


# --- nvidia-imex-ctl -q ----------------------------------------------------------------------

@pytest.mark.parametrize("state", DAEMON_STATES)
def test_every_daemon_state_is_read_and_only_ready_is_ready(state):
    assert parse_imex_ctl_query(f"{state}\n") == state
    assert is_ready(parse_imex_ctl_query(f"{state}\n")) is (state == "READY")


@pytest.mark.parametrize(("text", "status", "ready"), [
    ("READY", "READY", True),
    ("  READY \r\n", "READY", True),
    ("ready\n", "ready", False),
    ("READ", "READ", False),
    ("READY READY\n", "READY READY", False),
    ("Connection to IMEX daemon failed\nREADY\n", "Connection to IMEX daemon failed\nREADY", False),
    ("NOT_READY\n", "NOT_READY", False),
])
def test_query_answers(text, status, ready):
    assert parse_imex_ctl_query(text) == status
    assert is_ready(parse_imex_ctl_query(text)) is ready


@pytest.mark.parametrize("text", ["", "\n", "  \t\n", None, b"READY", 5])
def test_query_without_an_answer_is_a_parse_error(text):
    with pytest.raises(ParseError):
        parse_imex_ctl_query(text)


def test_a_long_answer_is_cut():
    status = parse_imex_ctl_query("X" * 1000)
    assert status == "X" * QUERY_STATUS_LIMIT + "..."
    assert not is_ready(status)


@given(st.text() | st.binary() | st.none() | st.integers())
def test_query_property(text):
    try:
        status = parse_imex_ctl_query(text)
    except ParseError:
        assert not isinstance(text, str) or not text.strip()
        return
    assert status
    assert status == status.strip() or status.endswith("...")
    assert len(status) <= QUERY_STATUS_LIMIT + 3
    assert is_ready(status) is (text.strip() == "READY")


# --- the collector on recorded trees ---------------------------------------------------------

def test_host_managed_tray_is_ready(fresh_tree):
    payload = collect_imex(fresh_tree("gb200_tray_host_managed"), run)
    assert payload["errors"] == []
    assert payload["control"] == {"enabled": True, "socket_path": SOCKET, "ready": True, "status": "READY",
                                  "reason": None}


def test_a_tray_whose_daemon_waits_for_its_peers_is_not_ready(fresh_tree):
    payload = collect_imex(fresh_tree("gb200_tray_imex_not_ready"), run)
    assert payload["errors"] == []
    assert payload["control"] == {"enabled": True, "socket_path": SOCKET, "ready": False,
                                  "status": "WAITING_FOR_PEERS",
                                  "reason": "the daemon answered 'WAITING_FOR_PEERS', not READY"}


def test_the_socket_path_is_passed_whole(fresh_tree):
    root = fresh_tree("gb200_tray")
    _config(root, "IMEX_CMD_UNIX_DOMAIN_PATH=/run/imex control/ctl.sock\n")
    _ctl(root, 'case "$*" in\n  *-N*) exit 1 ;;\nesac\n'
               '[ "$1" = "-q" ] && [ "$2" = "--u=/run/imex control/ctl.sock" ] && [ $# -eq 2 ] && echo READY\n')
    control = collect_imex(root, run)["control"]
    assert control == {"enabled": True, "socket_path": "/run/imex control/ctl.sock", "ready": True,
                       "status": "READY", "reason": None}


def test_no_socket_path_is_not_asked(fresh_tree):
    payload = collect_imex(fresh_tree("gb200_tray"), run)
    assert payload["control"] == {"enabled": True, "socket_path": None, "ready": None, "status": None,
                                  "reason": "no control socket (IMEX_CMD_UNIX_DOMAIN_PATH is not set)"}


def test_command_service_off_is_not_asked(fresh_tree):
    root = fresh_tree("gb200_tray_host_managed")
    _config(root, "IMEX_CMD_ENABLED=0\n")
    control = collect_imex(root, run)["control"]
    assert (control["enabled"], control["socket_path"], control["ready"]) == (False, SOCKET, None)
    assert control["reason"] == "the command service is off (IMEX_CMD_ENABLED is not 1)"


def test_relative_socket_path_is_not_asked(fresh_tree):
    root = fresh_tree("gb200_tray_host_managed")
    _config(root, "IMEX_CMD_UNIX_DOMAIN_PATH=imex_ctrl.sock\n")
    control = collect_imex(root, run)["control"]
    assert (control["ready"], control["reason"]) == (None, "IMEX_CMD_UNIX_DOMAIN_PATH is not an absolute path")


def test_inactive_service_is_not_asked(fresh_tree):
    root = fresh_tree("gb200_tray_host_managed")
    write_host_file(root, "/usr/bin/systemctl", "#!/bin/sh\necho LoadState=loaded\necho UnitFileState=enabled\n"
                                                "echo ActiveState=failed\necho SubState=failed\n", 0o755)
    control = collect_imex(root, run)["control"]
    assert (control["ready"], control["reason"]) == (None, "nvidia-imex.service is not active")


def test_unknown_service_state_is_not_asked(fresh_tree):
    root = fresh_tree("gb200_tray_host_managed")
    os.unlink(os.path.join(root, "usr/bin/systemctl"))
    control = collect_imex(root, run)["control"]
    assert control["ready"] is None
    assert control["reason"] == "whether nvidia-imex.service runs is unknown (no systemctl)"


def test_missing_tool_is_not_asked(fresh_tree):
    root = fresh_tree("gb200_tray_host_managed")
    os.unlink(os.path.join(root, "usr/bin/nvidia-imex-ctl"))
    control = collect_imex(root, run)["control"]
    assert (control["ready"], control["reason"]) == (None, "nvidia-imex-ctl not found")


def test_no_config_file(fresh_tree):
    payload = collect_imex(fresh_tree("hgx_h100"), run)
    assert payload["control"] == {"enabled": False, "socket_path": None, "ready": None, "status": None,
                                  "reason": f"no {CONFIG_PATH}"}


def test_refused_connection_is_not_ready(fresh_tree):
    root = fresh_tree("gb200_tray_host_managed")
    _ctl(root, 'case "$*" in\n  *-q*) echo "Connection to IMEX daemon failed: No such file or directory" >&2\n'
               '  exit 1 ;;\n  *) exit 1 ;;\nesac\n')
    payload = collect_imex(root, run)
    assert payload["control"] == {
        "enabled": True, "socket_path": SOCKET, "ready": False, "status": None,
        "reason": f"nvidia-imex-ctl -q on {SOCKET} exited 1: "
                  "Connection to IMEX daemon failed: No such file or directory"}
    assert not any("-q" in error for error in payload["errors"])


def test_ready_with_a_failing_exit_is_not_ready(fresh_tree):
    root = fresh_tree("gb200_tray_host_managed")
    _ctl(root, 'echo READY\nexit 3\n')
    control = collect_imex(root, run)["control"]
    assert (control["ready"], control["status"]) == (False, "READY")
    assert control["reason"] == f"nvidia-imex-ctl -q on {SOCKET} exited 3: READY"


def test_silent_query_is_not_ready(fresh_tree):
    root = fresh_tree("gb200_tray_host_managed")
    _ctl(root, 'case "$*" in\n  *-q*) exit 0 ;;\n  *) exit 1 ;;\nesac\n')
    control = collect_imex(root, run)["control"]
    assert (control["ready"], control["status"]) == (False, None)
    assert control["reason"] == f"nvidia-imex-ctl -q on {SOCKET} printed nothing"


def test_timeout_is_not_ready_and_an_error(fresh_tree):
    root = fresh_tree("gb200_tray_host_managed")

    def hanging(argv, **kwargs):
        if "-q" in argv:
            raise CommandTimeout("nvidia-imex-ctl: no answer within 10 s (killed)")
        return run(argv, **kwargs)

    errors, warnings = [], []
    control = read_control(root, hanging, {"IMEX_CMD_ENABLED": "1", "IMEX_CMD_UNIX_DOMAIN_PATH": SOCKET}, True,
                           errors, warnings)
    assert control["ready"] is False
    assert control["reason"] == (f"the daemon did not answer on {SOCKET} "
                                 "(nvidia-imex-ctl: no answer within 10 s (killed))")
    assert errors == ["nvidia-imex-ctl: no answer within 10 s (killed)"]


def test_a_string_boolean_enabled_value_warns_through_the_collector(fresh_tree):
    root = fresh_tree("gb200_tray_host_managed")
    _config(root, "IMEX_CMD_ENABLED=true\n")
    payload = collect_imex(root, run)
    assert payload["control"]["enabled"] is False
    assert f"{CONFIG_PATH}: IMEX_CMD_ENABLED is neither 0 nor 1; read as disabled" in payload["warnings"]
    # not an integer either: its config value is reported as null, the line named
    assert payload["config"]["IMEX_CMD_ENABLED"] is None
    with open(os.path.join(root, CONFIG_PATH.lstrip("/")), encoding="utf-8") as handle:
        line = len(handle.read().splitlines())
    assert f"{CONFIG_PATH}: line {line}: IMEX_CMD_ENABLED is not an integer" in payload["errors"]
    assert not [message for message in payload["errors"] + payload["warnings"] if "'true'" in message]
