# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The pinned versions and the binaries build.sh builds into its cache."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from cluster_harness.common import BINARIES, BUILD_SCRIPT, VERSIONS_FILE, HarnessError


def versions() -> dict[str, str]:
    """The pinned versions (KEY=value lines of versions.env)."""
    result = {}
    for line in VERSIONS_FILE.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#") and "=" in line:
            key, value = line.split("=", 1)
            result[key.strip()] = value.strip()
    return result


def bin_dir() -> Path:
    """The cache directory build.sh builds into (it says where; nothing is built)."""
    out = subprocess.run(["bash", str(BUILD_SCRIPT), "--print-dir"], capture_output=True, text=True, check=True)
    return Path(out.stdout.strip())


def build() -> Path:
    """Build the binaries unless the cache holds them; return their directory."""
    completed = subprocess.run(["bash", str(BUILD_SCRIPT)], check=False)
    if completed.returncode != 0:
        raise HarnessError(
            f"building the cluster binaries failed (tests/cluster/build.sh exited {completed.returncode})"
        )
    return bin_dir()


def check_binaries(directory: Path) -> None:
    missing = [name for name in BINARIES if not os.access(directory / name, os.X_OK)]
    if missing or not (directory / "kwok-stages").is_dir():
        raise HarnessError(
            f"cluster binaries missing in {directory}: {', '.join(missing) or 'kwok-stages'}; run `make cluster-build`"
        )
