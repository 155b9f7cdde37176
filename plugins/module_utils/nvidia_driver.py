# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which NVIDIA kernel driver is loaded, read from /proc/driver/nvidia/version and /sys/module/nvidia."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass

from ansible_collections.gpufabric.cluster.plugins.module_utils.host_files import read_text

_NVRM_RE = re.compile(
    r"NVRM version:\s+(?P<flavour>.*?Kernel Module)\s+(?:for\s+\S+\s+)?(?P<version>\d+\.\d+(?:\.\d+)?)"
)


@dataclass(frozen=True)
class NvidiaDriver:
    """The loaded NVIDIA kernel driver; ``loaded`` is False when the nvidia module is absent."""

    loaded: bool
    version: str | None
    kernel_module: str | None  # "open" | "proprietary" | None when unknown

    def as_dict(self) -> dict:
        """Return the driver as plain data."""
        return asdict(self)


def parse_nvrm_version(text: str) -> tuple[str | None, str | None]:
    """Return ``(version, kernel_module)`` from the first line of /proc/driver/nvidia/version.

    >>> parse_nvrm_version("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.172.08  Release Build")
    ('570.172.08', 'open')
    """
    match = _NVRM_RE.search(text)
    if not match:
        return None, None
    flavour = "open" if "Open Kernel Module" in match.group("flavour") else "proprietary"
    return match.group("version"), flavour


def read_nvidia_driver(root: str) -> NvidiaDriver:
    """Read the loaded NVIDIA driver below ``root``."""
    nvrm = read_text(root, "/proc/driver/nvidia/version")
    module_version = read_text(root, "/sys/module/nvidia/version")
    if nvrm is None and module_version is None:
        return NvidiaDriver(loaded=False, version=None, kernel_module=None)
    version, flavour = parse_nvrm_version(nvrm or "")
    return NvidiaDriver(loaded=True, version=version or module_version or None, kernel_module=flavour)
