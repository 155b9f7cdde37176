# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The imex_config_problems filter: nvidia_imex refuses bad config.cfg settings, paths and modes by name."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from ansible.errors import AnsibleFilterError
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.gpufabric.cluster.plugins.filter.imex_config_problems import (
    imex_config_problems,
)
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.imex_config import KNOWN_KEYS

ROLE = Path(__file__).parents[4] / "roles" / "nvidia_imex"
PATHS = {"nvidia_imex_config_file": "/etc/nvidia-imex/config.cfg",
         "nvidia_imex_nodes_config_file": "/etc/nvidia-imex/nodes_config.cfg"}


def test_known_keys_are_the_keys_the_role_writes():
    """The list of keys nvidia-imex knows is the role's list of package defaults (vars/main.yml), in order."""
    defaults = yaml.safe_load((ROLE / "vars" / "main.yml").read_text(encoding="utf-8"))
    assert list(defaults["__nvidia_imex_config_defaults"]) == list(KNOWN_KEYS)
    assert len(KNOWN_KEYS) == 33


@pytest.mark.parametrize("config", [
    pytest.param({}, id="empty"),
    pytest.param({"SERVER_PORT": 50010, "LOG_LEVEL": "2", "LOG_FILE_NAME": ""}, id="known"),
    pytest.param({"IMEX_AUTH_SOURCE": "FILE", "IMEX_SERVER_KEY": "/etc/imex/server.key"}, id="path"),
    pytest.param({"IMEX_GSS_TIMEOUT_SEC": -1, "LOG_FILE_MAX_SIZE": 1.5}, id="numbers"),
])
def test_good_input_has_no_problem(config):
    assert imex_config_problems(config, "tray-1", paths=PATHS, mode="host", driver_mode="host") == []


@pytest.mark.parametrize(("config", "allow_unknown", "expected"), [
    pytest.param({"SERVER_PROT": 50010}, False,
                 "host tray-1: nvidia_imex_config key SERVER_PROT is not a setting nvidia-imex knows (a typo keeps "
                 "the package default); set nvidia_imex_config_allow_unknown: true to write it anyway",
                 id="unknown-key"),
    pytest.param({"SERVER_PROT": 50010}, "false",
                 "host tray-1: nvidia_imex_config key SERVER_PROT is not a setting nvidia-imex knows (a typo keeps "
                 "the package default); set nvidia_imex_config_allow_unknown: true to write it anyway",
                 id="unknown-key-string-false"),
    pytest.param({"server_port": 1}, True,
                 "host tray-1: nvidia_imex_config key 'server_port' is not a config.cfg key (upper case letters, "
                 "digits and _)", id="key-shape-even-when-allowed"),
    pytest.param({"LOG_LEVEL": "2\nSERVER_PORT=1"}, False,
                 "host tray-1: nvidia_imex_config LOG_LEVEL holds a newline or another control character, which would "
                 "start another line of config.cfg", id="newline"),
    pytest.param({"LOG_LEVEL": "2\r"}, False,
                 "host tray-1: nvidia_imex_config LOG_LEVEL holds a newline or another control character, which would "
                 "start another line of config.cfg", id="carriage-return"),
    pytest.param({"LOG_LEVEL": "2\x0c"}, False,
                 "host tray-1: nvidia_imex_config LOG_LEVEL holds a newline or another control character, which would "
                 "start another line of config.cfg", id="form-feed"),
    pytest.param({"IMEX_SECURITY_TARGET_OVERRIDE": "a=b"}, False,
                 "host tray-1: nvidia_imex_config IMEX_SECURITY_TARGET_OVERRIDE holds '=', which config.cfg cannot "
                 "carry in a value", id="equals"),
    pytest.param({"LOG_FILE_NAME": "/var/log/my imex.log"}, False,
                 "host tray-1: nvidia_imex_config LOG_FILE_NAME '/var/log/my imex.log' is a path holding "
                 "whitespace or '%'", id="path-space"),
    pytest.param({"STATS_FILE_NAME": "/var/log/imex-%H.log"}, False,
                 "host tray-1: nvidia_imex_config STATS_FILE_NAME '/var/log/imex-%H.log' is a path holding "
                 "whitespace or '%'", id="path-percent"),
    pytest.param({"DAEMONIZE": True}, False,
                 "host tray-1: nvidia_imex_config DAEMONIZE is a boolean (True), which would be written as True; "
                 "write 1 or 0", id="boolean"),
    pytest.param({"BIND_INTERFACE_IP": None}, False,
                 'host tray-1: nvidia_imex_config BIND_INTERFACE_IP is null, which would be written as None; '
                 'write "" for an empty setting', id="null"),
    pytest.param({"SERVER_PORT": [50000]}, False,
                 "host tray-1: nvidia_imex_config SERVER_PORT must be a string or a number, got list", id="list"),
    pytest.param({"IMEX_NODE_CONFIG_FILE": "/etc/nodes"}, False,
                 "host tray-1: nvidia_imex_config sets IMEX_NODE_CONFIG_FILE, which the role writes from "
                 "nvidia_imex_nodes_config_file; set nvidia_imex_nodes_config_file instead", id="role-key"),
    pytest.param("SERVER_PORT=1", False,
                 "host tray-1: nvidia_imex_config must be a mapping of config.cfg settings, got str", id="string"),
])
def test_bad_config_is_refused_naming_host_and_variable(config, allow_unknown, expected):
    assert imex_config_problems(config, "tray-1", allow_unknown, paths=PATHS) == [expected]


@pytest.mark.parametrize("allow_unknown", [True, "yes", "true", 1])
def test_unknown_keys_are_written_when_allowed(allow_unknown):
    assert imex_config_problems({"IMEX_FUTURE_SETTING": 3}, "tray-1", allow_unknown) == []


def test_unknown_key_values_are_still_checked():
    assert imex_config_problems({"IMEX_FUTURE_SETTING": "a\nb"}, "tray-1", True) == [
        "host tray-1: nvidia_imex_config IMEX_FUTURE_SETTING holds a newline or another control character, which "
        "would start another line of config.cfg"]


@pytest.mark.parametrize(("paths", "expected"), [
    pytest.param({"nvidia_imex_config_file": "/etc/nvidia imex/config.cfg"},
                 "host tray-1: nvidia_imex_config_file '/etc/nvidia imex/config.cfg' holds whitespace or '%', which "
                 "the nvidia-imex unit's drop-in and config.cfg cannot carry", id="space"),
    pytest.param({"nvidia_imex_nodes_config_file": "/etc/imex/%n.cfg"},
                 "host tray-1: nvidia_imex_nodes_config_file '/etc/imex/%n.cfg' holds whitespace or '%', which the "
                 "nvidia-imex unit's drop-in and config.cfg cannot carry", id="percent"),
    pytest.param({"nvidia_imex_nodes_config_file": "/etc/imex/nodes\n.cfg"},
                 "host tray-1: nvidia_imex_nodes_config_file '/etc/imex/nodes\\n.cfg' holds whitespace or '%', "
                 "which the nvidia-imex unit's drop-in and config.cfg cannot carry", id="newline"),
    pytest.param({"nvidia_imex_config_file": "etc/config.cfg"},
                 "host tray-1: nvidia_imex_config_file 'etc/config.cfg' must be an absolute path", id="relative"),
    pytest.param({"nvidia_imex_config_file": ""},
                 "host tray-1: nvidia_imex_config_file must be a non-empty path, got ''", id="empty"),
    pytest.param({"nvidia_imex_config_file": 5},
                 "host tray-1: nvidia_imex_config_file must be a non-empty path, got 5", id="number"),
])
def test_bad_paths_are_refused_naming_the_variable(paths, expected):
    assert imex_config_problems({}, "tray-1", paths=paths) == [expected]


@pytest.mark.parametrize(("mode", "driver_mode", "expected"), [
    pytest.param("host", None, None, id="driver-mode-not-set"),
    pytest.param("host", "host", None, id="host-host"),
    pytest.param("dra", "dra", None, id="dra-dra"),
    pytest.param("dra", "none", None, id="dra-none"),
    pytest.param("host", "none",
                 "host tray-1: nvidia_imex_mode is host but nvidia_driver_imex_mode is none; the host IMEX service "
                 "needs the IMEX channel 0 that nvidia_driver creates only in host mode; set both to the same mode "
                 "(or only gpufabric_imex_mode)", id="host-none"),
    pytest.param("host", "dra",
                 "host tray-1: nvidia_imex_mode is host but nvidia_driver_imex_mode is dra; the host IMEX service "
                 "needs the IMEX channel 0 that nvidia_driver creates only in host mode; set both to the same mode "
                 "(or only gpufabric_imex_mode)", id="host-dra"),
    pytest.param("dra", "host",
                 "host tray-1: nvidia_imex_mode is dra but nvidia_driver_imex_mode is host; nvidia_driver creates "
                 "the host IMEX channel 0 in host mode, which the DRA driver must own; set both to the same mode "
                 "(or only gpufabric_imex_mode)", id="dra-host"),
    pytest.param("dra_host_managed", "dra_host_managed", None, id="managed-managed"),
    pytest.param("dra_host_managed", "dra", None, id="managed-dra"),
    pytest.param("dra_host_managed", "none", None, id="managed-none"),
    pytest.param("dra", "dra_host_managed", None, id="dra-managed"),
    pytest.param("dra_host_managed", "host",
                 "host tray-1: nvidia_imex_mode is dra_host_managed but nvidia_driver_imex_mode is host; nvidia_driver "
                 "creates the host IMEX channel 0 in host mode, which the DRA driver must own; set both to the same "
                 "mode (or only gpufabric_imex_mode)", id="managed-host"),
    pytest.param("host", "dra_host_managed",
                 "host tray-1: nvidia_imex_mode is host but nvidia_driver_imex_mode is dra_host_managed; the host IMEX "
                 "service needs the IMEX channel 0 that nvidia_driver creates only in host mode; set both to the same "
                 "mode (or only gpufabric_imex_mode)", id="host-managed"),
    pytest.param("host", "Host",
                 "host tray-1: nvidia_driver_imex_mode must be none, host, dra or dra_host_managed, got 'Host'",
                 id="driver-mode-unknown"),
    pytest.param("hosts", "host", "host tray-1: nvidia_imex_mode must be host, dra or dra_host_managed, got 'hosts'",
                 id="mode-unknown"),
])
def test_modes_must_agree(mode, driver_mode, expected):
    assert imex_config_problems({}, "tray-1", mode=mode, driver_mode=driver_mode) == ([expected] if expected else [])


@pytest.mark.parametrize(("socket", "problem"), [
    pytest.param("/tmp/imex.sock", "host tray-1: nvidia_imex_socket_path '/tmp/imex.sock' lies under /tmp, which every "
                 "local user may write: another user could create the socket before nvidia-imex does and answer the "
                 "DRA driver in its place; choose a directory only root writes, such as /run/nvidia-imex or "
                 "/etc/nvidia-imex", id="tmp"),
    pytest.param("/etc/nvidia-imex/../../tmp/x.sock", "host tray-1: nvidia_imex_socket_path must be the absolute "
                 "path of the IMEX control socket in its normal form, got '/etc/nvidia-imex/../../tmp/x.sock', which "
                 "has a '.', '..' or empty component (the daemon's path and the DRA driver's must compare equal, and "
                 "stay in the directory they name)", id="dot-dot"),
    pytest.param("imex.sock", "host tray-1: nvidia_imex_socket_path must be the absolute path of the IMEX control "
                 "socket, got 'imex.sock'", id="relative"),
    pytest.param("/etc/nvidia-imex/imex_ctrl.sock", None, id="default"),
])
def test_the_host_managed_socket_path_is_checked_in_that_mode_only(socket, problem):
    """Issue 39 item 9: a host-managed IMEX socket under /tmp, or with '..', was accepted."""
    assert imex_config_problems({}, "tray-1", mode="dra_host_managed", socket_path=socket) == \
        ([problem] if problem else [])
    assert imex_config_problems({}, "tray-1", mode="dra", socket_path=socket) == []


def test_every_problem_is_reported_at_once():
    problems = imex_config_problems({"SERVER_PROT": 1, "LOG_LEVEL": "1=2"}, "tray-1",
                                    paths={"nvidia_imex_config_file": "/a b"}, mode="host", driver_mode="none")
    assert [problem.split(": ", 1)[1].split(" ")[0:2] for problem in problems] == [
        ["nvidia_imex_mode", "is"], ["nvidia_imex_config_file", "'/a"], ["nvidia_imex_config", "LOG_LEVEL"],
        ["nvidia_imex_config", "key"]]


@pytest.mark.parametrize(("arguments", "message"), [
    pytest.param({"host": ""}, "imex_config_problems: host must not be empty", id="empty-host"),
    pytest.param({"host": 3}, "imex_config_problems: host must be a string, got a number", id="host-number"),
    pytest.param({"allow_unknown": "maybe"},
                 "imex_config_problems: allow_unknown must be a boolean (true/false, \"yes\"/\"no\", 1/0), "
                 "got 'maybe'", id="allow-unknown"),
    pytest.param({"paths": ["/etc"]}, "imex_config_problems: paths must be a mapping, got a list", id="paths"),
])
def test_wrong_arguments_name_the_filter(arguments, message):
    call = {"host": "tray-1", **arguments}
    with pytest.raises(AnsibleFilterError) as error:
        imex_config_problems({}, **call)
    assert str(error.value) == message


SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=8)
VALUES = st.recursive(
    SCALARS, lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=3), inner, max_size=2),
    max_leaves=4)
KEYS = st.sampled_from(KNOWN_KEYS) | st.text(max_size=12) | st.integers() | st.sampled_from(["LOG_LEVEL "])


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(KEYS, VALUES, max_size=6) | VALUES, VALUES, VALUES, VALUES, VALUES)
def test_any_input_gives_problems_or_the_filter_error(config, allow_unknown, paths, mode, driver_mode):
    """For any input: a list of one-line sentences naming the host, or an AnsibleFilterError naming the filter."""
    try:
        problems = imex_config_problems(config, "tray-1", allow_unknown, paths=paths, mode=mode,
                                        driver_mode=driver_mode)
    except AnsibleFilterError as error:
        assert str(error).startswith("imex_config_problems: ")
        return
    assert isinstance(problems, list)
    for problem in problems:
        assert isinstance(problem, str) and problem.startswith("host tray-1: ")
        assert "\n" not in problem and "\r" not in problem


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.sampled_from(KNOWN_KEYS).filter(lambda key: key != "IMEX_NODE_CONFIG_FILE"),
                       st.integers() | st.text(max_size=10), max_size=8))
def test_accepted_config_renders_one_setting_per_line(config):
    """Whatever is accepted renders as KEY=value lines that parse back to the same settings."""
    if imex_config_problems(config, "tray-1"):
        return
    rendered = "".join(f"{key}={value}\n" for key, value in config.items())
    parsed = dict(line.split("=", 1) for line in rendered.splitlines())
    assert parsed == {key: str(value) for key, value in config.items()}
    assert all(re.fullmatch(r"[A-Z][A-Z0-9_]*", key) for key in parsed)


def test_a_paths_key_that_is_no_variable_name_is_refused_on_one_line():
    """Found by hypothesis: a key holding a newline made a problem of two lines."""
    with pytest.raises(AnsibleFilterError) as caught:
        imex_config_problems({}, "tray-1", paths={"\n": None})
    assert str(caught.value) == "imex_config_problems: paths must map variable names to paths, got the key '\\n'"
