# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""kubernetes.core for the tests' ansible-playbook, from the pinned ``ansible`` wheel (Galaxy is not reachable)."""

from __future__ import annotations

import shutil
import zipfile
from pathlib import Path

from cluster_harness.common import HarnessError


def install_kubernetes_core(wheel_dir: Path, collections: Path) -> Path:
    """Extract kubernetes.core from the ``ansible`` wheel that tests/cluster/requirements.txt pins.

    Galaxy is not reachable; PyPI is. The collection goes under ``<collections>/ansible_collections``
    (our ANSIBLE_COLLECTIONS_PATH) rather than into the virtual environment, which the Makefile keeps
    out of the collection search path (ANSIBLE_COLLECTIONS_SCAN_SYS_PATH=false).
    """
    wheels = sorted(wheel_dir.glob("ansible-*.whl"))
    if not wheels:
        raise HarnessError(f"no ansible wheel in {wheel_dir}")
    prefix = "ansible_collections/kubernetes/core/"
    target = collections / prefix
    if target.exists():
        shutil.rmtree(target)
    with zipfile.ZipFile(wheels[-1]) as wheel:
        members = [name for name in wheel.namelist() if name.startswith(prefix)]
        if not members:
            raise HarnessError(f"{wheels[-1].name} holds no kubernetes.core collection")
        wheel.extractall(collections, members)
    return target
