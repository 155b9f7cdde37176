# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tests of the IMEX parsers and collector (module_utils/imex.py) on upstream samples and recorded host trees."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from ansible_collections.gpufabric.cluster.plugins.module_utils.errors import ParseError
from ansible_collections.gpufabric.cluster.plugins.module_utils.imex import (
    collect_imex,
    find_dpkg_packages,
    normalise_connection_status,
    parse_imex_config,
    parse_imex_ctl_json,
    parse_imex_ctl_text,
    parse_imex_version,
    parse_rpm_query,
    scan_imex_config,
    service_from_unit_files,
    validate_nodes_file,
)
from ansible_collections.gpufabric.cluster.plugins.module_utils.systemd_units import (
    empty_state,
    parse_systemctl_show,
    unit_state,
)
from ansible_collections.gpufabric.cluster.tests.unit.helpers import write_host_file

GB200_IPS = [f"10.114.0.{11 + i}" for i in range(18)]


def run(argv, check_rc=False, environ_update=None):
    """A runner with AnsibleModule.run_command's signature, for the stand-in tools of the trees."""
    env = dict(os.environ, **(environ_update or {}))
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, check=False)
    return proc.returncode, proc.stdout, proc.stderr


def _sample_text(shared_reference: str) -> str:
    with open(os.path.join(shared_reference, "imex", "nvidia-imex-ctl-N.sample.txt"), encoding="utf-8") as handle:
        return handle.read()


# --- config.cfg ------------------------------------------------------------------------------

def test_parse_config_of_the_dra_driver_template(shared_reference):
    path = os.path.join(shared_reference, "imex", "config.cfg.template-from-k8s-dra-driver-gpu")
    with open(path, encoding="utf-8") as handle:
        config = parse_imex_config(handle.read())
    assert len(config) == 33
    assert config["LOG_LEVEL"] == "4"
    assert config["LOG_FILE_NAME"] == ""
    assert config["SERVER_PORT"] == "50000"
    assert config["IMEX_NODE_CONFIG_FILE"] == "{{ .IMEXDaemonNodesConfigPath }}"
    assert config["IMEX_WAIT_FOR_QUORUM"] == "RECOVERY"
    assert config["IMEX_CMD_PORT"] == "50005"
    assert config["IMEX_NODE_DISCONNECTED_GRACE_TIME"] == "-1"
    assert next(iter(config)) == "LOG_LEVEL"


def test_parse_config_strips_and_keeps_last_value():
    text = "# comment\n\n  SERVER_PORT = 50001 \nSERVER_PORT=50002\nBIND_INTERFACE_IP=\nURL=a=b\n"
    assert parse_imex_config(text) == {"SERVER_PORT": "50002", "BIND_INTERFACE_IP": "", "URL": "a=b"}


def test_parse_config_malformed_line_raises_with_line_numbers():
    text = "LOG_LEVEL=4\nthis is garbage\nSERVER_PORT=50000\n=novalue\n9KEY=1\n"
    with pytest.raises(ParseError) as caught:
        parse_imex_config(text)
    assert str(caught.value) == "not KEY=VALUE: lines 2, 4, 5"


def test_scan_config_returns_partial_settings_and_bad_lines():
    settings, bad = scan_imex_config("LOG_LEVEL=4\nthis is garbage\nSERVER_PORT=50000\n")
    assert settings == {"LOG_LEVEL": "4", "SERVER_PORT": "50000"}
    assert bad == [(2, "this is garbage")]


def test_parse_config_many_bad_lines_are_summarised():
    with pytest.raises(ParseError, match=r"^not KEY=VALUE: lines 1, 2, 3, 4, 5, and 2 more$"):
        parse_imex_config("a\nb\nc\nd\ne\nf\ng\n")


# --- nodes file ------------------------------------------------------------------------------

def test_validate_nodes_file_of_broken_node():
    lines = ["# hand edited", "", "10.0.0.1", "10.0.0.2", "10.0.0.2", "gpu-node-07", "  10.0.0.4  "]
    assert validate_nodes_file(lines) == {
        "addresses": ["10.0.0.1", "10.0.0.2", "10.0.0.2", "10.0.0.4"],
        "duplicates": ["10.0.0.2"],
        "invalid": [{"line": 6}],  # by number: the entry's text is never kept
        "blank_or_comment": 2,
        "valid": False,
    }


def test_validate_nodes_file_valid_with_ipv6():
    result = validate_nodes_file(["10.0.0.9", "fd00::1", "10.0.0.10"])
    assert result == {"addresses": ["10.0.0.9", "fd00::1", "10.0.0.10"], "duplicates": [], "invalid": [],
                      "blank_or_comment": 0, "valid": True}


def test_validate_nodes_file_duplicates_sorted_by_address_and_ipv6_canonical():
    lines = ["10.0.0.10", "10.0.0.9", "fd00:0:0::1", "10.0.0.10", "fd00::1", "10.0.0.9"]
    result = validate_nodes_file(lines)
    assert result["duplicates"] == ["10.0.0.9", "10.0.0.10", "fd00::1"]
    assert result["addresses"][2] == "fd00::1"
    assert result["valid"] is False


def test_an_ipv6_scope_that_is_not_an_interface_name_is_no_address():
    """ipaddress takes any text after % as a scope; on the starting commit such an entry's text was reported."""
    result = validate_nodes_file(["fd00::1%root:$6$salt$hash:19876:0:99999:7:::", "fe80::1%ibp3s0"])
    assert result["invalid"] == [{"line": 1}]
    assert result["addresses"] == ["fe80::1%ibp3s0"]
    assert "salt" not in json.dumps(result)


def test_validate_nodes_file_garbage_and_empty():
    garbage = validate_nodes_file(["gpu-a", "10.0.0.256", "10.0.0.1 10.0.0.2", "010.0.0.1", "#x", "  "])
    assert garbage["addresses"] == []
    assert garbage["invalid"] == [{"line": 1}, {"line": 2}, {"line": 3}, {"line": 4}]
    assert garbage["blank_or_comment"] == 2
    assert garbage["valid"] is False
    assert validate_nodes_file([])["valid"] is False
    assert validate_nodes_file(["# only a comment"])["valid"] is False


# --- nvidia-imex-ctl -N [-j] -----------------------------------------------------------------

def test_parse_ctl_text_upstream_sample(shared_reference):
    domain = parse_imex_ctl_text(_sample_text(shared_reference))
    assert domain["status"] == "UP"
    assert domain["timestamp"] == "5/4/2026 06:08:10.580"
    assert domain["source"] == "text"
    assert domain["nodes"] == [
        {"index": 0, "host": "172.31.48.81", "status": "READY", "version": "570.172", "local": False},
        {"index": 1, "host": "172.31.48.98", "status": "READY", "version": "570.172", "local": False},
        {"index": 17, "host": "172.31.56.47", "status": "READY", "version": "570.172", "local": False},
    ]
    full_row = {"0": "CONNECTED", "1": "CONNECTED", "2": "CONNECTED", "17": "CONNECTED"}
    assert domain["connections"] == {"0": full_row, "17": full_row}
    assert domain["not_connected"] == []


def test_parse_ctl_text_failures_and_local_node(shared_reference):
    text = _sample_text(shared_reference)
    text = text.replace("Node #1   - 172.31.48.98", "Node #1   * 172.31.48.98")
    text = text.replace("Node #17  - 172.31.56.47    - READY", "Node #17  - 172.31.56.47    - UNAVAILABLE")
    text = text.replace("      17        C   C   C   ...  C", "      17        I   !V!  N   ...  I")
    text = text.replace("       0        C   C   C   ...  C", "       0        C   R   !M!  ...  D")
    text = text.replace("Domain State: UP", "Domain State: DEGRADED")
    domain = parse_imex_ctl_text(text)
    assert domain["status"] == "DEGRADED"
    assert [node["local"] for node in domain["nodes"]] == [False, True, False]
    assert domain["nodes"][2]["status"] == "UNAVAILABLE"
    assert domain["connections"]["0"] == {"0": "CONNECTED", "1": "RECOVERING", "2": "NODE_MAP_MISMATCH",
                                          "17": "DISCONNECTED"}
    assert domain["connections"]["17"] == {"0": "INVALID", "1": "VERSION_MISMATCH", "2": "NEVER_CONNECTED",
                                           "17": "INVALID"}
    assert domain["not_connected"] == [[0, 1], [0, 2], [0, 17], [17, 0], [17, 1], [17, 2], [17, 17]]


def _described_json_document() -> dict:
    """A document in the shape /work/shared/reference/imex/nvidia-imex-ctl-N.sample.txt describes for -N -j."""
    return {
        "nodes": {
            "0": {"status": "READY", "host": "10.0.0.1", "hostName": "gpu-node-a",
                  "connections": {"0": {"host": "10.0.0.1", "status": "CONNECTED", "changed": True},
                                  "1": {"host": "10.0.0.2", "status": "CONNECTED", "changed": True}}},
            "1": {"status": "READY", "host": "10.0.0.2", "hostName": "gpu-node-b",
                  "connections": {"0": {"host": "10.0.0.1", "status": "CONNECTED", "changed": True},
                                  "1": {"host": "10.0.0.2", "status": "CONNECTED", "changed": True}}},
        },
        "timestamp": "9/4/2026 00:00:00.000",
        "status": "UP",
    }


def test_parse_ctl_json_described_shape(shared_reference):
    # The shape is the one the reference sample documents; check the sample still says so.
    assert '"timestamp": "9/4/2026 00:00:00.000", "status": "UP"}' in _sample_text(shared_reference)
    domain = parse_imex_ctl_json(json.dumps(_described_json_document()))
    assert domain == {
        "status": "UP",
        "timestamp": "9/4/2026 00:00:00.000",
        "nodes": [
            {"index": 0, "host": "10.0.0.1", "status": "READY", "version": None, "local": None},
            {"index": 1, "host": "10.0.0.2", "status": "READY", "version": None, "local": None},
        ],
        "connections": {"0": {"0": "CONNECTED", "1": "CONNECTED"}, "1": {"0": "CONNECTED", "1": "CONNECTED"}},
        "not_connected": [],
        "source": "json",
    }


def test_parse_ctl_json_down_domain_and_numeric_order():
    document = _described_json_document()
    document["status"] = "DOWN"
    document["nodes"]["1"]["status"] = "UNAVAILABLE"
    document["nodes"]["1"]["connections"]["0"]["status"] = "INVALID"
    document["nodes"]["0"]["connections"]["1"]["status"] = "INVALID"
    document["nodes"]["10"] = {"status": "READY", "host": "10.0.0.11", "connections": {}}
    domain = parse_imex_ctl_json(json.dumps(document))
    assert domain["status"] == "DOWN"
    assert [node["index"] for node in domain["nodes"]] == [0, 1, 10]
    assert list(domain["connections"]) == ["0", "1", "10"]
    assert domain["not_connected"] == [[0, 1], [1, 0]]


def test_json_and_text_of_the_same_domain_compare_equal():
    document = _described_json_document()
    document["nodes"]["1"]["connections"]["0"]["status"] = "NEVER_CONNECTED"
    text = ("Connectivity Table Legend:\nC - Connected - Ready for operation\n\n9/4/2026 00:00:00.000\nNodes:\n"
            "Node #0   * 10.0.0.1        - READY                - Version: 570.172.08\n"
            "Node #1   - 10.0.0.2        - READY                - Version: 570.172.08\n\n"
            " Nodes From\\To  0   1\n       0        C   C\n       1        N   C\n\nDomain State: UP\n")
    from_json = parse_imex_ctl_json(json.dumps(document))
    from_text = parse_imex_ctl_text(text)
    assert from_json["connections"] == from_text["connections"]
    assert from_json["not_connected"] == from_text["not_connected"] == [[1, 0]]
    assert (from_json["status"], from_json["timestamp"]) == (from_text["status"], from_text["timestamp"])
    assert [n["host"] for n in from_json["nodes"]] == [n["host"] for n in from_text["nodes"]]


@pytest.mark.parametrize("text", ["", "not json {", "[1, 2]", '{"other": 1}', '{"nodes": []}',
                                  '{"nodes": {"x": {}}}', '{"nodes": {"0": "READY"}}',
                                  '{"nodes": {"0": {"connections": []}}}'])
def test_parse_ctl_json_rejects_garbage(text):
    with pytest.raises(ParseError):
        parse_imex_ctl_json(text)


@pytest.mark.parametrize("text", ["", "garbage\nmore garbage", "Connection to IMEX daemon failed\n"])
def test_parse_ctl_text_rejects_garbage(text):
    with pytest.raises(ParseError, match="no 'Node #' lines"):
        parse_imex_ctl_text(text)


@pytest.mark.parametrize(("value", "expected"), [
    ("C", "CONNECTED"), ("CONNECTED", "CONNECTED"), ("N", "NEVER_CONNECTED"), ("never connected", "NEVER_CONNECTED"),
    ("!V!", "VERSION_MISMATCH"), ("!M!", "NODE_MAP_MISMATCH"), ("A", "AUTHENTICATING"), (None, None),
])
def test_normalise_connection_status(value, expected):
    assert normalise_connection_status(value) == expected


# --- package, version, service ---------------------------------------------------------------

DPKG_STATUS = """Package: nvidia-imex-575
Status: deinstall ok config-files
Version: 575.57.08-1

Package: libc6
Status: install ok installed
Version: 2.39-0ubuntu8
Description: GNU C Library
 continuation line
 Package: nvidia-imex

Package: nvidia-imex-570
Status: install ok installed
Architecture: arm64
Version: 570.172.08-1
"""


def test_find_dpkg_packages():
    assert find_dpkg_packages(DPKG_STATUS) == [("nvidia-imex-570", "570.172.08-1")]
    assert find_dpkg_packages("Package: nvidia-imex\nStatus: install ok installed\nVersion: 580.65.06-1\n") == [
        ("nvidia-imex", "580.65.06-1")]
    assert find_dpkg_packages("Package: nvidia-imexx\nStatus: install ok installed\n") == []
    assert find_dpkg_packages("") == []


def test_parse_rpm_query_and_imex_version():
    out = "nvidia-imex\t570.172.08-1.el9\nnvidia-imex-libs-x\t1-1\n"
    assert parse_rpm_query(out) == [("nvidia-imex", "570.172.08-1.el9")]
    assert parse_imex_version("IMEX version is: 570.172.08\n") == "570.172.08"
    assert parse_imex_version("garbage") is None


def test_service_from_systemctl_properties():
    masked = unit_state(parse_systemctl_show(
        "LoadState=masked\nUnitFileState=masked\nActiveState=inactive\nSubState=dead\n"), "nvidia-imex.service")
    assert masked == {**empty_state(), "exists": True, "active": False, "masked": True, "unit_file_state": "masked",
                      "active_state": "inactive", "sub_state": "dead"}
    absent = unit_state(parse_systemctl_show(
        "LoadState=not-found\nUnitFileState=\nActiveState=inactive\nSubState=dead\n"), "nvidia-imex.service")
    assert absent == {**empty_state(), "active": False, "active_state": "inactive", "sub_state": "dead"}


def test_service_from_unit_files(host_trees, fresh_tree):
    assert service_from_unit_files(host_trees["gb200_tray"]) == {
        **empty_state(), "exists": True, "enabled": True, "unit_file_state": "enabled"}
    assert service_from_unit_files(host_trees["broken_node"])["unit_file_state"] == "disabled"
    assert service_from_unit_files(host_trees["hgx_h100"])["exists"] is False
    root = fresh_tree("broken_node")
    os.symlink("/dev/null", os.path.join(root, "etc/systemd/system/nvidia-imex.service"))
    assert service_from_unit_files(root) == {
        **empty_state(), "exists": True, "masked": True, "unit_file_state": "masked"}


# --- collector -------------------------------------------------------------------------------

def test_collect_gb200_tray(host_trees):
    result = collect_imex(host_trees["gb200_tray"], run)
    assert result["errors"] == []
    assert result["warnings"] == []
    assert (result["installed"], result["package"], result["version"]) == (True, "nvidia-imex-570", "570.172.08-1")
    assert result["service"] == {"exists": True, "enabled": True, "active": True, "masked": False,
                                 "unit_file_state": "enabled", "active_state": "active", "sub_state": "running",
                                 "since": "Sat 2026-11-28 06:08:10 UTC", "result": "success", "exit_status": 0,
                                 "restarts": 0}
    assert result["config"]["IMEX_NODE_CONFIG_FILE"] == "/etc/nvidia-imex/nodes_config.cfg"
    assert result["nodes"] == {"path": "/etc/nvidia-imex/nodes_config.cfg", "addresses": GB200_IPS, "duplicates": [],
                               "invalid": [], "blank_or_comment": 1, "valid": True}
    assert result["channels"] == {"supported": True, "devices": ["channel0"]}
    domain = result["domain"]
    assert domain["source"] == "json"
    assert domain["status"] == "UP"
    assert [node["host"] for node in domain["nodes"]] == GB200_IPS
    assert {node["status"] for node in domain["nodes"]} == {"READY"}
    assert {node["version"] for node in domain["nodes"]} == {"570.172.08"}
    assert len(domain["connections"]) == 18
    assert all(row == {str(i): "CONNECTED" for i in range(18)} for row in domain["connections"].values())
    assert domain["not_connected"] == []


def test_collect_follows_imex_node_config_file(fresh_tree):
    root = fresh_tree("gb200_tray")
    write_host_file(root, "/etc/nvidia-imex/config.cfg", "IMEX_NODE_CONFIG_FILE=/etc/nvidia-imex/rack7.cfg\n")
    write_host_file(root, "/etc/nvidia-imex/rack7.cfg", "10.1.0.1\n10.1.0.2\n")
    result = collect_imex(root, run)
    assert result["nodes"]["path"] == "/etc/nvidia-imex/rack7.cfg"
    assert result["nodes"]["addresses"] == ["10.1.0.1", "10.1.0.2"]
    os.unlink(os.path.join(root, "etc/nvidia-imex/rack7.cfg"))
    result = collect_imex(root, run)
    assert result["nodes"] is None
    assert result["warnings"] == ["IMEX nodes file /etc/nvidia-imex/rack7.cfg does not exist"]


def test_collect_version_from_rpm_then_binary(fresh_tree):
    root = fresh_tree("broken_node")
    os.unlink(os.path.join(root, "var/lib/dpkg/status"))
    write_host_file(root, "/usr/bin/rpm", "#!/bin/sh\n# TEST: stand-in\n"
                    "[ \"$1\" = \"-qa\" ] && [ \"$3\" = '%{NAME}\\t%{VERSION}-%{RELEASE}\\n' ] && "
                    "printf 'nvidia-imex\\t570.172.08-1.el9\\n' && exit 0\nexit 3\n", 0o755)
    result = collect_imex(root, run)
    assert (result["installed"], result["package"], result["version"]) == (True, "nvidia-imex", "570.172.08-1.el9")
    write_host_file(root, "/usr/bin/rpm", "#!/bin/sh\nexit 0\n", 0o755)
    result = collect_imex(root, run)
    assert (result["installed"], result["package"], result["version"]) == (True, None, "570.172.08")
    assert result["errors"] == []


def test_collect_missing_root():
    result = collect_imex("/nonexistent/gpufabric-root", run)
    assert result["errors"] == ["root '/nonexistent/gpufabric-root' does not exist or is not a directory"]
    assert result["installed"] is False
    assert result["domain"] is None
