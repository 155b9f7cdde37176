# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""TEST FIXTURE: a recorded-style host tree whose ConnectX netdevs are the rails the scenario creates.

An HGX-like node with three ConnectX-7 functions in Ethernet (RoCE) mode, each behind a PCIe switch with a
GPU: ``enp24s0np0`` and ``enp64s0np0`` ACTIVE (the scenario gives the containers veth links of these names),
``enp79s0np0`` DOWN (the role must skip it and keep rail 2 for it).  The tree is laid out by the same
builder as every tier's recorded trees (tests/fixtures/build_trees.py), with the kernel's symlinks.

Usage: ``python3 build_rail_tree.py DEST`` creates ``DEST/rail_host/`` and ``DEST/rail_host.nvml.json``.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "tests"))
from fixtures import build_trees  # noqa: E402  (the shared TEST FIXTURES package, tests/fixtures)

RAILS = (("0000:18:00.0", "enp24s0np0", "ACTIVE"), ("0000:40:00.0", "enp64s0np0", "ACTIVE"),
         ("0000:4f:00.0", "enp79s0np0", "DOWN"))


def rail_host(builder):
    """The host description: the HGX H100 with its InfiniBand rails replaced by three RoCE rails."""
    host = builder.HOSTS["hgx_h100"]
    nics = [
        builder.NicPort(bdf=bdf, device_id="0x1021", rdma_device=f"mlx5_{number}", netdev=netdev,
                        link_layer="Ethernet", rate="400 Gb/sec (4X NDR)", numa_node=0, mtu=1500, state=state,
                        phys_state="LinkUp" if state == "ACTIVE" else "Disabled", switch=f"sw{number}")
        for number, (bdf, netdev, state) in enumerate(RAILS)
    ]
    gpus = [gpu for number, gpu in enumerate(host.gpus) if number < len(RAILS)]
    return builder.Host(name="rail_host", arch=host.arch, kernel=host.kernel, driver_version=host.driver_version,
                        gpus=gpus, nics=nics, others=host.others, ofed_version=host.ofed_version,
                        mgmt_ip=host.mgmt_ip)


def main() -> None:
    """Build the tree into the directory given on the command line."""
    build_trees.HOSTS["rail_host"] = rail_host(build_trees)
    os.makedirs(sys.argv[1], exist_ok=True)
    print(build_trees.build_tree("rail_host", sys.argv[1]))


if __name__ == "__main__":
    main()
