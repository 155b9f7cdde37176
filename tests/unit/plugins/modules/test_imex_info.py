# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""End-to-end tests of the imex_info module through AnsibleModule on the recorded host trees."""

from __future__ import annotations

import os
import shutil

import pytest

from ansible_collections.gpufabric.cluster.plugins.modules import imex_info
from ansible_collections.gpufabric.cluster.tests.unit.helpers import warning_messages, write_host_file

RESULT_KEYS = {"changed", "installed", "package", "version", "service", "config_path", "config", "nodes", "channels",
               "domain", "control", "errors"}
GB200_IPS = [f"10.114.0.{11 + i}" for i in range(18)]
NODES_PATH = "/etc/nvidia-imex/nodes_config.cfg"
CONFIG_PATH = "/etc/nvidia-imex/config.cfg"
FIXTURE_CONFIG = {"LOG_LEVEL": "4", "LOG_FILE_NAME": "/var/log/nvidia-imex.log", "SERVER_PORT": "50000",
                  "BIND_INTERFACE_IP": "", "IMEX_NODE_CONFIG_FILE": NODES_PATH, "IMEX_WAIT_FOR_QUORUM": "RECOVERY",
                  "IMEX_ENABLE_AUTH_ENCRYPTION": "0", "IMEX_CMD_ENABLED": "1", "IMEX_CMD_PORT": "50005"}
# The service fields systemctl gives beyond the unit files: sub-state, since when, the last result, restarts.
UNIT_FILES_ONLY = {"sub_state": None, "since": None, "result": None, "exit_status": None, "restarts": None}
NOT_INSTALLED_SERVICE = {"exists": False, "enabled": False, "active": False, "masked": False,
                         "unit_file_state": None, "active_state": "inactive", **UNIT_FILES_ONLY, "sub_state": "dead"}
SINCE = "Sat 2026-11-28 06:08:10 UTC"


def _ctl(root: str, body: str) -> None:
    """Replace the tree's nvidia-imex-ctl stand-in (TEST FIXTURE)."""
    write_host_file(root, "/usr/bin/nvidia-imex-ctl", "#!/bin/sh\n# TEST FIXTURE: altered stand-in.\n" + body, 0o755)


def _all_connected(count: int) -> dict:
    return {str(i): {str(j): "CONNECTED" for j in range(count)} for i in range(count)}


def test_gb200_tray(module_runner, host_trees):
    result = module_runner(imex_info, {"root": host_trees["gb200_tray"]})
    assert "failed" not in result
    assert set(result) == RESULT_KEYS
    assert result["changed"] is False
    assert result["errors"] == []
    assert result["installed"] is True
    assert result["package"] == "nvidia-imex-570"
    assert result["version"] == "570.172.08-1"
    assert result["service"] == {"exists": True, "enabled": True, "active": True, "masked": False,
                                 "unit_file_state": "enabled", "active_state": "active", "sub_state": "running",
                                 "since": SINCE, "result": "success", "exit_status": 0, "restarts": 0}
    assert result["config_path"] == CONFIG_PATH
    assert result["config"] == FIXTURE_CONFIG
    assert result["nodes"] == {"path": NODES_PATH, "addresses": GB200_IPS, "duplicates": [], "invalid": [],
                               "blank_or_comment": 1, "valid": True}
    assert len(result["nodes"]["addresses"]) == 18
    assert result["channels"] == {"supported": True, "devices": ["channel0"]}
    domain = result["domain"]
    assert domain["status"] == "UP"
    assert domain["source"] == "json"
    assert domain["timestamp"] == "11/22/2026 06:08:10.580"
    assert domain["nodes"] == [{"index": i, "host": ip, "status": "READY", "version": "570.172.08", "local": None}
                               for i, ip in enumerate(GB200_IPS)]
    assert domain["connections"] == _all_connected(18)
    assert domain["not_connected"] == []
    assert result["control"] == {"enabled": True, "socket_path": None, "ready": None, "status": None,
                                 "reason": "no control socket (IMEX_CMD_UNIX_DOMAIN_PATH is not set)"}


@pytest.mark.parametrize(("host", "ready", "status", "reason"), [
    ("gb200_tray_host_managed", True, "READY", None),
    ("gb200_tray_imex_not_ready", False, "WAITING_FOR_PEERS", "the daemon answered 'WAITING_FOR_PEERS', not READY"),
])
def test_host_managed_trays(module_runner, fresh_tree, host, ready, status, reason):
    result = module_runner(imex_info, {"root": fresh_tree(host)})
    assert "failed" not in result
    assert set(result) == RESULT_KEYS
    assert result["errors"] == []
    assert result["config"]["IMEX_CMD_UNIX_DOMAIN_PATH"] == "/etc/nvidia-imex/imex_ctrl.sock"
    assert result["control"] == {"enabled": True, "socket_path": "/etc/nvidia-imex/imex_ctrl.sock", "ready": ready,
                                 "status": status, "reason": reason}


def test_broken_node(module_runner, host_trees):
    result = module_runner(imex_info, {"root": host_trees["broken_node"]})
    assert "failed" not in result
    assert set(result) == RESULT_KEYS | {"warnings"}
    assert result["errors"] == []
    assert (result["installed"], result["package"], result["version"]) == (True, "nvidia-imex-570", "570.172.08-1")
    assert result["service"] == {"exists": True, "enabled": False, "active": False, "masked": False,
                                 "unit_file_state": "disabled", "active_state": "inactive", "sub_state": "dead",
                                 "since": SINCE, "result": "success", "exit_status": 0, "restarts": 0}
    assert result["config"] == FIXTURE_CONFIG
    assert result["nodes"] == {
        "path": NODES_PATH,
        "addresses": ["10.0.0.1", "10.0.0.2", "10.0.0.2", "10.0.0.4"],
        "duplicates": ["10.0.0.2"],
        "invalid": [{"line": 6}],
        "blank_or_comment": 2,
        "valid": False,
    }
    # The driver is not loaded: no channel device class, although the /dev entry was left behind.
    assert result["channels"] == {"supported": False, "devices": ["channel0"]}
    assert result["domain"] is None
    assert warning_messages(result) == [
        f"IMEX nodes file {NODES_PATH} is not valid: addresses listed more than once: 10.0.0.2; "
        "entries that are not IP addresses on line 6"]


def test_hgx_h100(module_runner, host_trees):
    result = module_runner(imex_info, {"root": host_trees["hgx_h100"]})
    assert "failed" not in result
    assert set(result) == RESULT_KEYS
    assert result["errors"] == []
    assert (result["installed"], result["package"], result["version"]) == (False, None, None)
    assert result["service"] == NOT_INSTALLED_SERVICE
    assert result["config"] is None
    assert result["nodes"] is None
    assert result["channels"] == {"supported": False, "devices": []}
    assert result["domain"] is None


def test_no_nvidia(module_runner, host_trees):
    result = module_runner(imex_info, {"root": host_trees["no_nvidia"]})
    assert "failed" not in result
    assert set(result) == RESULT_KEYS
    assert result["errors"] == []
    assert result["installed"] is False
    assert result["package"] is None
    assert result["service"] == NOT_INSTALLED_SERVICE
    assert (result["config"], result["nodes"], result["domain"]) == (None, None, None)
    assert result["channels"] == {"supported": False, "devices": []}


def test_check_mode_returns_the_same(module_runner, host_trees):
    normal = module_runner(imex_info, {"root": host_trees["gb200_tray"]})
    checked = module_runner(imex_info, {"root": host_trees["gb200_tray"], "_ansible_check_mode": True})
    assert checked == normal


def test_missing_root(module_runner, tmp_path):
    missing = str(tmp_path / "absent")
    result = module_runner(imex_info, {"root": missing})
    assert result["failed"] is True
    assert result["msg"] == f"root {missing!r} does not exist or is not a directory"
    assert "installed" not in result


def test_malformed_config_keeps_what_parses(module_runner, fresh_tree):
    root = fresh_tree("gb200_tray")
    write_host_file(root, CONFIG_PATH, "# IMEX\nLOG_LEVEL=4\nthis line is garbage\nSERVER_PORT=50000\n=novalue\n"
                    "IMEX_CMD_PORT=50005\n")
    result = module_runner(imex_info, {"root": root})
    assert "failed" not in result
    assert result["errors"] == [f"{CONFIG_PATH}: not KEY=VALUE: lines 3, 5"]
    assert result["config"] == {"LOG_LEVEL": "4", "SERVER_PORT": "50000", "IMEX_CMD_PORT": "50005"}
    # IMEX_NODE_CONFIG_FILE is gone: the default nodes file is read.
    assert result["nodes"]["path"] == NODES_PATH
    assert result["nodes"]["valid"] is True
    assert result["domain"]["status"] == "UP"


def test_nodes_file_full_of_garbage(module_runner, fresh_tree):
    root = fresh_tree("gb200_tray")
    write_host_file(root, NODES_PATH, "gpu-node-01\n\x00\x01binary\n300.1.1.1\n10.0.0.1/24\n")
    result = module_runner(imex_info, {"root": root})
    assert "failed" not in result
    assert result["errors"] == []
    assert result["nodes"] == {
        "path": NODES_PATH, "addresses": [], "duplicates": [],
        "invalid": [{"line": 1}, {"line": 2}, {"line": 3}, {"line": 4}],
        "blank_or_comment": 0, "valid": False}
    assert warning_messages(result) == [
        f"IMEX nodes file {NODES_PATH} is not valid: no IP addresses; entries that are not IP addresses on "
        "lines 1, 2, 3, 4"]


def test_ctl_json_garbage_falls_back_to_text(module_runner, fresh_tree):
    root = fresh_tree("gb200_tray")
    _ctl(root, 'case "$*" in *-j*) echo "{garbage"; exit 0 ;; esac\n'
               'cat "$(dirname "$0")/../share/fixture/imex-ctl-N.txt"\n')
    result = module_runner(imex_info, {"root": root})
    assert "failed" not in result
    assert result["errors"] == []
    assert len(warning_messages(result)) == 1
    assert warning_messages(result)[0].startswith("nvidia-imex-ctl -N -j: output is not JSON (")
    assert warning_messages(result)[0].endswith("); read the text output of nvidia-imex-ctl -N instead")
    domain = result["domain"]
    assert domain["source"] == "text"
    assert domain["status"] == "UP"
    assert domain["timestamp"] == "11/22/2026 06:08:10.580"
    assert domain["nodes"] == [{"index": i, "host": ip, "status": "READY", "version": "570.172.08", "local": i == 0}
                               for i, ip in enumerate(GB200_IPS)]
    assert domain["connections"] == _all_connected(18)
    assert domain["not_connected"] == []


def test_ctl_without_json_option_falls_back_silently(module_runner, fresh_tree):
    root = fresh_tree("gb200_tray")
    _ctl(root, 'case "$*" in *-j*) echo "unknown option -j" >&2; exit 2 ;; esac\n'
               'cat "$(dirname "$0")/../share/fixture/imex-ctl-N.txt"\n')
    result = module_runner(imex_info, {"root": root})
    assert "warnings" not in result
    assert result["errors"] == []
    assert result["domain"]["source"] == "text"
    assert len(result["domain"]["nodes"]) == 18


def test_ctl_failing_is_an_error(module_runner, fresh_tree):
    root = fresh_tree("gb200_tray")
    _ctl(root, 'echo "Connection to IMEX daemon failed: Connection refused" >&2\nexit 1\n')
    result = module_runner(imex_info, {"root": root})
    assert "failed" not in result
    assert result["domain"] is None
    assert result["errors"] == ["nvidia-imex-ctl -N exited 1: Connection to IMEX daemon failed: Connection refused"]
    assert result["service"]["active"] is True


def test_ctl_printing_garbage_everywhere(module_runner, fresh_tree):
    root = fresh_tree("gb200_tray")
    _ctl(root, 'echo "Segmentation fault"\nexit 0\n')
    result = module_runner(imex_info, {"root": root})
    assert result["domain"] is None
    assert result["errors"] == ["nvidia-imex-ctl -N: no 'Node #' lines and no 'Domain State' line in the output"]
    assert warning_messages(result)[0].startswith("nvidia-imex-ctl -N -j: output is not JSON")


def test_masked_service_from_unit_files_without_systemctl(module_runner, fresh_tree):
    root = fresh_tree("broken_node")
    os.unlink(os.path.join(root, "usr/bin/systemctl"))
    os.symlink("/dev/null", os.path.join(root, "etc/systemd/system/nvidia-imex.service"))
    result = module_runner(imex_info, {"root": root})
    assert "failed" not in result
    assert result["errors"] == []
    assert result["service"] == {"exists": True, "enabled": False, "active": None, "masked": True,
                                 "unit_file_state": "masked", "active_state": None, **UNIT_FILES_ONLY}
    assert result["domain"] is None


def test_enabled_service_from_unit_files_is_not_queried(module_runner, fresh_tree):
    root = fresh_tree("gb200_tray")
    os.unlink(os.path.join(root, "usr/bin/systemctl"))
    result = module_runner(imex_info, {"root": root})
    assert result["service"] == {"exists": True, "enabled": True, "active": None, "masked": False,
                                 "unit_file_state": "enabled", "active_state": None, **UNIT_FILES_ONLY}
    # Whether the daemon runs is unknown: nvidia-imex-ctl is not asked.
    assert result["domain"] is None
    assert result["errors"] == []


def test_failing_systemctl_warns_and_reads_unit_files(module_runner, fresh_tree):
    root = fresh_tree("gb200_tray")
    write_host_file(root, "/usr/bin/systemctl",
                    "#!/bin/sh\necho 'System has not been booted with systemd' >&2\nexit 1\n", 0o755)
    result = module_runner(imex_info, {"root": root})
    assert result["service"]["enabled"] is True
    assert result["service"]["active"] is None
    assert warning_messages(result) == [
        "systemctl show nvidia-imex.service --property=LoadState,UnitFileState,ActiveState,SubState,Result,"
        "ExecMainStatus,NRestarts,StateChangeTimestamp,ActiveEnterTimestamp,InactiveEnterTimestamp exited 1: "
        "System has not been booted with systemd; service state read from the unit files"]


def test_binary_without_package(module_runner, fresh_tree):
    root = fresh_tree("broken_node")
    os.unlink(os.path.join(root, "var/lib/dpkg/status"))
    result = module_runner(imex_info, {"root": root})
    assert (result["installed"], result["package"], result["version"]) == (True, None, "570.172.08")


def test_unreadable_config_is_an_error(module_runner, fresh_tree):
    root = fresh_tree("broken_node")
    full = os.path.join(root, CONFIG_PATH.lstrip("/"))
    os.unlink(full)
    os.mkdir(full)  # exists, cannot be read as a file
    result = module_runner(imex_info, {"root": root})
    assert result["config"] is None
    assert result["errors"] == [f"{CONFIG_PATH}: cannot be read"]
    shutil.rmtree(full)
    result = module_runner(imex_info, {"root": root})
    assert result["errors"] == []
    assert f"{CONFIG_PATH} does not exist although nvidia-imex is installed" in warning_messages(result)


def test_unknown_option_fails(module_runner, host_trees):
    result = module_runner(imex_info, {"root": host_trees["no_nvidia"], "rooot": "/"})
    assert result["failed"] is True
    assert "Unsupported parameters" in result["msg"]
    assert "rooot" in result["msg"]


@pytest.mark.parametrize("value", [["/"], {"path": "/"}])
def test_non_string_root_is_never_read_as_a_host(module_runner, value):
    # AnsibleModule converts any value of a `path` option to text; the result is no directory: the task fails.
    result = module_runner(imex_info, {"root": value})
    assert result["failed"] is True
    assert result["msg"] == f"root {str(value)!r} does not exist or is not a directory"
