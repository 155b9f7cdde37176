# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Ports on 127.0.0.1: the requested ones must be free, the others are picked free."""

from __future__ import annotations

import os
import socket

from cluster_harness.common import PORTS, HarnessError


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def port_in_use(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return True
    return False


def choose_ports(requested: dict[str, int]) -> dict[str, int]:
    """Requested ports (arguments, then environment) must be free; the others are picked free."""
    ports: dict[str, int] = {}
    for name, (env, what) in PORTS.items():
        port = requested.get(name) or int(os.environ.get(env) or 0)
        if port:
            if port_in_use(port):
                raise HarnessError(f"port {port} on 127.0.0.1 ({what}, {env}) is already in use")
        else:
            port = free_port()
            while port in ports.values():
                port = free_port()
        ports[name] = port
    return ports
