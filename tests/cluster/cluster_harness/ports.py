# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Ports on 127.0.0.1: the requested ones must be free, the others are picked free.

Picked ports lie outside the kernel's ephemeral range (``net.ipv4.ip_local_port_range``). A port the kernel hands
out for ``bind(0)`` comes from that range, and so does the source port of every outgoing connection: between the
choice and the moment a component binds it, a client of another harness (pytest-xdist runs one per worker) could
take it, and the component would exit with "address already in use". Outside the range only a deliberate bind can
take a port, and each worker starts its search in its own slice of the range, so two harnesses do not pick alike.
"""

from __future__ import annotations

import os
import random
import socket
from pathlib import Path

from cluster_harness.common import PORTS, HarnessError

EPHEMERAL_RANGE = Path("/proc/sys/net/ipv4/ip_local_port_range")
LOWEST_PICKED = 10000
WORKER_SLICES = 16


def ephemeral_range(path: Path = EPHEMERAL_RANGE) -> tuple[int, int]:
    """The kernel's ephemeral port range; Linux's default where it cannot be read."""
    try:
        low, high = (int(field) for field in path.read_text().split())
    except (OSError, ValueError):
        return 32768, 60999
    return low, high


def pickable_ports(path: Path = EPHEMERAL_RANGE) -> range:
    """Ports the harness may pick: below the ephemeral range, or above it where too little lies below."""
    low, high = ephemeral_range(path)
    if low - LOWEST_PICKED >= 1000:
        return range(LOWEST_PICKED, low)
    return range(high + 1, 65536)


def worker_slice() -> int:
    """This process's slice: the pytest-xdist worker's number (gw3 is 3), else one chosen by the process id."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    if worker.startswith("gw") and worker[2:].isdigit():
        return int(worker[2:]) % WORKER_SLICES
    return os.getpid() % WORKER_SLICES


def port_in_use(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return True
    return False


def free_ports(count: int, taken: set[int], candidates: range | None = None) -> list[int]:
    """``count`` free ports from this worker's slice of the pickable ports, none of them in ``taken``."""
    candidates = candidates if candidates is not None else pickable_ports()
    width = len(candidates) // WORKER_SLICES
    start = worker_slice() * width + random.randrange(max(width, 1))
    found: list[int] = []
    for step in range(len(candidates)):
        port = candidates[(start + step) % len(candidates)]
        if port not in taken and not port_in_use(port):
            found.append(port)
            if len(found) == count:
                return found
    raise HarnessError(f"no {count} free ports on 127.0.0.1 between {candidates.start} and {candidates.stop - 1}")


def choose_ports(requested: dict[str, int]) -> dict[str, int]:
    """Requested ports (arguments, then environment) must be free; the others are picked free."""
    ports: dict[str, int] = {}
    for name, (env, what) in PORTS.items():
        port = requested.get(name) or int(os.environ.get(env) or 0)
        if port:
            if port_in_use(port):
                raise HarnessError(f"port {port} on 127.0.0.1 ({what}, {env}) is already in use")
            ports[name] = port
    unpicked = [name for name in PORTS if name not in ports]
    picked = free_ports(len(unpicked), set(ports.values())) if unpicked else []
    ports.update(zip(unpicked, picked, strict=True))
    return {name: ports[name] for name in PORTS}
