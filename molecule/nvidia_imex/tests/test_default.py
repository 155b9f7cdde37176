# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Verify nvidia_imex on the three hosts of one clique: one nodes file, the configuration and the service."""

from __future__ import annotations

import hashlib
import json

NODES_FILE = "/etc/nvidia-imex/nodes_config.cfg"
CONFIG_FILE = "/etc/nvidia-imex/config.cfg"

# The files gpufabric.cluster._nvidia_repository writes: the keyring per repository URL (nvidia-<sha256(url)[:12]>),
# the sources file per URL and suite (nvidia-<sha256("<url> <suite>")[:12]>).
REPO_URL = "file:/opt/gpufabric-standin-repo/"
REPO_NAME = "nvidia-" + hashlib.sha256(REPO_URL.encode()).hexdigest()[:12]
SOURCES = "/etc/apt/sources.list.d/nvidia-" + hashlib.sha256(f"{REPO_URL} /".encode()).hexdigest()[:12] + ".list"


def _entries(text):
    return [line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")]


def test_nodes_file_lists_the_three_addresses_sorted(host, expected_nodes):
    nodes = host.file(NODES_FILE)
    assert nodes.user == "root" and nodes.mode == 0o644
    # nvidia-imex reads every line as an address: the file holds the addresses and nothing else
    assert nodes.content_string.splitlines() == expected_nodes


def test_nodes_files_are_identical_on_every_member(members):
    contents = {name: member.file(NODES_FILE).content_string for name, member in members.items()}
    assert len(set(contents.values())) == 1, contents


def test_config_points_at_the_nodes_file(host):
    config = host.file(CONFIG_FILE)
    assert config.content_string.startswith("#\n# Ansible managed\n")
    settings = dict(line.split("=", 1) for line in _entries(config.content_string))
    assert settings["IMEX_NODE_CONFIG_FILE"] == NODES_FILE
    assert settings["SERVER_PORT"] == "50000"
    assert settings["IMEX_CMD_PORT"] == "50005"
    assert settings["DAEMONIZE"] == "1"
    assert len(settings) == 33


def test_package_repository_and_service(host):
    assert host.package("nvidia-imex-570").is_installed
    assert not host.package("nvidia-imex").is_installed
    sources = host.file(SOURCES).content_string
    assert "file:/opt/gpufabric-standin-repo/ /" in sources
    service = host.service("nvidia-imex")
    assert service.is_enabled
    assert service.is_running


def test_daemon_started_once_and_domain_is_up(host, addresses):
    # prepare, check, converge and idempotence: the daemon started exactly once (first converge).
    assert host.file("/var/lib/nvidia-imex-standin/starts").content_string.strip() == "1"
    domain = json.loads(host.check_output("nvidia-imex-ctl -N -j"))
    assert domain["status"] == "UP"
    assert sorted(node["host"] for node in domain["nodes"].values()) == sorted(addresses.values())
    # the stand-in reports READY / CONNECTED only for daemons it reached over the containers' network
    assert {node["status"] for node in domain["nodes"].values()} == {"READY"}
    assert {connection["status"] for node in domain["nodes"].values()
            for connection in node["connections"].values()} == {"CONNECTED"}


def test_daemon_listens_on_the_server_port(host, addresses):
    """The stand-in daemon listens on SERVER_PORT (50000) and every member's port answers from this host."""
    for address in addresses.values():
        host.run_expect([0], f"python3 -c 'import socket; socket.create_connection((\"{address}\", 50000), 2).close()'")


def test_check_diff_on_the_converged_hosts_changes_nothing(converge_check_diff, members):
    """``--check --diff`` of the converge playbook on the converged hosts reports no change on any host."""
    converge_check_diff(len(members))
