# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The host state after each drill of side_effect.yml, read with testinfra.

Not a ``test_*.py`` file on purpose: molecule's verify collects those after converge, while these tests hold only
at one point of side_effect.yml, which runs each of them by node id (``drills.py::test_<drill>``) right after the
drill's action; see ../tasks/verify_drill.yml.

The stand-in daemon counts its starts in STARTS since the container was created: once by the first converge (the
check run and the idempotence run start nothing, test_default.py asserts 1), then once per restart a drill causes.
Every test names the counts the drills before it leave, so a drill that restarts a daemon it should not, or misses
one, fails at that drill.
"""

from __future__ import annotations

import json

STARTS = "/var/lib/nvidia-imex-standin/starts"
NODES_FILE = "/etc/nvidia-imex/nodes_config.cfg"
CONFIG_FILE = "/etc/nvidia-imex/config.cfg"
LOADED_NODES = "/var/lib/nvidia-imex-standin/loaded-nodes"
LOADED_CONFIG = "/var/lib/nvidia-imex-standin/loaded-config.cfg"
UNREACHABLE = "192.0.2.1"      # TEST-NET-1: the address the first drill gives imex-1; no daemon reaches it
STRANGER = "198.51.100.7"      # the member the hand edit puts into imex-2's nodes file
SOCKET = "/etc/nvidia-imex/imex_ctrl.sock"  # gpufabric_imex_socket_path's default


def _starts(member):
    return int(member.file(STARTS).content_string)


def _lines(member, path):
    return member.file(path).content_string.splitlines()


def _domain(member):
    """The domain as the member's daemon sees it (nvidia-imex-ctl -N -j)."""
    return json.loads(member.check_output("nvidia-imex-ctl -N -j"))


def _assert_starts(members, expected):
    found = {name: _starts(member) for name, member in members.items()}
    assert found == expected, f"daemon starts {found}, expected {expected}"


def _assert_loaded_files_on_disk(members, expected_nodes):
    """Every daemon holds the files on disk, and the nodes files list the three members."""
    for name, member in members.items():
        assert member.file(CONFIG_FILE).content_string == member.file(LOADED_CONFIG).content_string, name
        assert member.file(NODES_FILE).content_string == member.file(LOADED_NODES).content_string, name
        assert _lines(member, NODES_FILE) == expected_nodes, name


def test_address_changed(members):
    """A changed address for imex-1 restarted every daemon exactly once; 192.0.2.1 is unreachable, so no daemon
    reports it READY or the domain UP."""
    _assert_starts(members, dict.fromkeys(members, 2))
    for name, member in members.items():
        assert UNREACHABLE in _lines(member, NODES_FILE), name
        domain = _domain(member)
        assert domain["status"] != "UP", (name, domain)
        assert [node["status"] for node in domain["nodes"].values() if node["host"] == UNREACHABLE] \
            == ["UNAVAILABLE"], (name, domain)


def test_interrupted_before_the_restart(members):
    """The run killed at the restart task wrote config.cfg (LOG_LEVEL=2) and restarted no daemon."""
    _assert_starts(members, dict.fromkeys(members, 2))
    for name, member in members.items():
        assert "LOG_LEVEL=2" in _lines(member, CONFIG_FILE), name
        assert "LOG_LEVEL=2" not in _lines(member, LOADED_CONFIG), name


def test_rerun_restarted_every_daemon_once(members, expected_nodes):
    """The rerun after the interrupted run restarted every daemon once, each now holds the files on disk, and the
    nodes files hold the default addresses again (also true after the third run, which restarts nothing)."""
    _assert_starts(members, dict.fromkeys(members, 3))
    _assert_loaded_files_on_disk(members, expected_nodes)


def test_hand_edit_disconnects_imex_2(members, addresses, expected_nodes):
    """imex-2 restarted on its hand-edited nodes file: its peers reach it over the network, find another nodes list
    there and report it not connected."""
    _assert_starts(members, {"imex-1": 3, "imex-2": 4, "imex-3": 3})
    edited = _lines(members["imex-2"], LOADED_NODES)
    assert STRANGER in edited and addresses["imex-3"] not in edited, edited
    for name in ("imex-1", "imex-3"):
        domain = _domain(members[name])
        assert domain["status"] == "DEGRADED", (name, domain)
        assert [node["status"] for node in domain["nodes"].values() if node["host"] == addresses["imex-2"]] \
            == ["UNAVAILABLE"], (name, domain)


def test_role_repaired_imex_2(members, expected_nodes):
    """The role rewrote imex-2's nodes file and restarted imex-2 only (once, after the drill's restart); every daemon
    reports every member READY and connected again."""
    _assert_starts(members, {"imex-1": 3, "imex-2": 5, "imex-3": 3})
    _assert_loaded_files_on_disk(members, expected_nodes)
    for name, member in members.items():
        assert STRANGER not in member.file(NODES_FILE).content_string, name
        domain = _domain(member)
        assert domain["status"] == "UP", (name, domain)
        assert {node["status"] for node in domain["nodes"].values()} == {"READY"}, (name, domain)
        assert {connection["status"] for node in domain["nodes"].values()
                for connection in node["connections"].values()} == {"CONNECTED"}, (name, domain)


def test_stopped_peer_is_unavailable(members, addresses):
    """imex-3's daemon stopped: imex-1 and imex-2 report it UNAVAILABLE, no connection to it, the domain DEGRADED."""
    assert not members["imex-3"].service("nvidia-imex").is_running
    for name in ("imex-1", "imex-2"):
        domain = _domain(members[name])
        stopped = [node for node in domain["nodes"].values() if node["host"] == addresses["imex-3"]]
        assert len(stopped) == 1, (name, domain)
        assert domain["status"] == "DEGRADED", (name, domain)
        assert stopped[0]["status"] == "UNAVAILABLE", (name, domain)
        assert {connection["status"] for connection in stopped[0]["connections"].values()} == {"INVALID"}, name
        assert {node["status"] for node in domain["nodes"].values() if node["host"] != addresses["imex-3"]} \
            == {"READY"}, (name, domain)
        assert "Domain State: DEGRADED" in members[name].check_output("nvidia-imex-ctl -N").splitlines(), name


def test_host_managed_imex_1(members):
    """imex-1 in dra_host_managed mode: its config.cfg has the control socket settings (the other members' do not),
    imex-1 restarted once and no other member, and its daemon answers READY on the socket."""
    _assert_starts(members, {"imex-1": 4, "imex-2": 5, "imex-3": 4})
    for name, member in members.items():
        config = _lines(member, CONFIG_FILE)
        assert member.file(CONFIG_FILE).content_string == member.file(LOADED_CONFIG).content_string, name
        if name == "imex-1":
            assert "IMEX_CMD_ENABLED=1" in config and f"IMEX_CMD_UNIX_DOMAIN_PATH={SOCKET}" in config, config
        else:
            assert "IMEX_CMD_UNIX_DOMAIN_PATH=" in config, (name, config)
        assert "LOG_LEVEL=2" in config, (name, config)
        assert member.service("nvidia-imex").is_running, name
    assert members["imex-1"].socket(f"unix://{SOCKET}").is_listening
    assert members["imex-1"].check_output(f"nvidia-imex-ctl -q --u={SOCKET}") == "READY"


def _unit(member):
    shown = member.check_output("systemctl show -p ActiveState -p UnitFileState nvidia-imex.service")
    return dict(line.split("=", 1) for line in shown.splitlines())


def test_refused_dra_mode_left_the_daemon_running(members):
    """The refused dra mode (driver below the minimum) changed nothing: every daemon still runs."""
    for name, member in members.items():
        assert _unit(member)["ActiveState"] == "active", name


def test_dra_mode_stopped_and_masked_the_unit(members):
    """dra mode leaves the nvidia-imex unit stopped and masked on every member."""
    for name, member in members.items():
        assert _unit(member) == {"ActiveState": "inactive", "UnitFileState": "masked"}, name


def test_check_mode_installed_nothing(members):
    """The check-mode run without the role's repository did not install the removed package on imex-1."""
    status = members["imex-1"].run("dpkg-query -W -f '${db:Status-Status}' nvidia-imex-570")
    assert status.stdout != "installed", status
