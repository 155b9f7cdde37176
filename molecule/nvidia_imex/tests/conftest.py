# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fixtures of the nvidia_imex testinfra tests (test_default.py after converge, drills.py during side_effect)."""

from __future__ import annotations

import ipaddress
import json

import pytest
import testinfra

MEMBERS = ("imex-1", "imex-2", "imex-3")


@pytest.fixture(scope="module")
def members():
    """Every member of the clique by name, through testinfra's podman backend."""
    return {name: testinfra.get_host(f"podman://{name}") for name in MEMBERS}


@pytest.fixture(scope="module")
def addresses(members):
    """The IPv4 address of every member's default-route interface, as the containers report it."""
    found = {}
    for name, member in members.items():
        device = json.loads(member.check_output("ip -j -4 route show default"))[0]["dev"]
        info = json.loads(member.check_output(f"ip -j -4 addr show dev {device}"))[0]["addr_info"]
        found[name] = next(str(ipaddress.ip_address(entry["local"])) for entry in info if entry["family"] == "inet")
    return found


@pytest.fixture(scope="module")
def expected_nodes(addresses):
    """The nodes file the role writes for the clique: the members' addresses in numeric order, one a line."""
    return sorted(addresses.values(), key=lambda address: int(ipaddress.ip_address(address)))
