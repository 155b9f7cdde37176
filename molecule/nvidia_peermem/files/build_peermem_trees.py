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

Laid out by the unit tier's builder (tests/unit/fixtures/build_trees.py), with the kernel's symlinks.
Usage: ``python3 build_peermem_trees.py DEST`` creates ``DEST/<name>/`` and ``DEST/<name>.nvml.json``.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import os
import sys

BUILDER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "tests", "unit", "fixtures",
                       "build_trees.py")


def load_builder():
    """Import tests/unit/fixtures/build_trees.py."""
    spec = importlib.util.spec_from_file_location("build_trees", BUILDER)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve their module through sys.modules
    spec.loader.exec_module(module)
    return module


def variants(builder):
    """The host descriptions of the scenario."""
    base = builder.HOSTS["hgx_h100"]
    return [
        base,
        dataclasses.replace(base, name="peermem_proprietary", open_kernel_module=False, peermem_loaded=True),
        dataclasses.replace(base, name="peermem_open_loaded", peermem_loaded=True),
    ]


def main() -> None:
    """Build the trees into the directory given as the only argument."""
    dest = sys.argv[1]
    builder = load_builder()
    os.makedirs(dest, exist_ok=True)
    for host in variants(builder):
        builder.HOSTS[host.name] = host
        print(builder.build_tree(host.name, dest))


if __name__ == "__main__":
    main()
