# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""TEST FIXTURE: the recorded HGX H100 tree and two variants of it for the GPUDirect RDMA decisions.

* ``hgx_h100``: the unit tier's tree as it is: open kernel module, Linux 6.8, driver loaded, so DMA-BUF is
  supported and nvidia_peermem is not loaded.
* ``peermem_proprietary``: the same host with the proprietary kernel module and nvidia_peermem loaded:
  DMA-BUF is not possible, the legacy module is live but not persisted.
* ``peermem_open_loaded``: the open kernel module (DMA-BUF possible) with nvidia_peermem loaded but not
  persisted, for the forced legacy method.
* ``peermem_proprietary_unloaded``: the proprietary kernel module with nvidia_peermem available (its .ko for the
  running kernel) but not loaded, so the role's load-and-verify path runs; the scenario's modprobe.d rule stands
  in for the kernel and makes the module live in this tree.

Laid out by the shared fixture-tree builder (tests/fixtures/build_trees.py), with the kernel's symlinks.
Usage: ``python3 build_peermem_trees.py DEST`` creates ``DEST/<name>/`` and ``DEST/<name>.nvml.json``.
"""

from __future__ import annotations

import dataclasses
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "tests"))
from fixtures import build_trees  # noqa: E402  (the shared TEST FIXTURES package, tests/fixtures)


def variants(builder):
    """The host descriptions of the scenario."""
    base = builder.HOSTS["hgx_h100"]
    return [
        base,
        dataclasses.replace(base, name="peermem_proprietary", open_kernel_module=False, peermem_loaded=True),
        dataclasses.replace(base, name="peermem_open_loaded", peermem_loaded=True),
        dataclasses.replace(base, name="peermem_proprietary_unloaded", open_kernel_module=False),
    ]


def main() -> None:
    """Build the trees into the directory given as the only argument."""
    dest = sys.argv[1]
    os.makedirs(dest, exist_ok=True)
    for host in variants(build_trees):
        build_trees.HOSTS[host.name] = host
        print(build_trees.build_tree(host.name, dest))


if __name__ == "__main__":
    main()
