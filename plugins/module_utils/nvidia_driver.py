# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which NVIDIA kernel driver is loaded, read from /proc/driver/nvidia/version and /sys/module/nvidia.

Only the parsed version (:data:`DRIVER_VERSION_RE`, ``570.172.08``) and the module flavour (``open`` or
``proprietary``) are reported, never the text of either file; each is read up to one page.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass

from ansible_collections.gpufabric.cluster.plugins.module_utils.host_files import read_text

NVRM_VERSION = "/proc/driver/nvidia/version"
MODULE_VERSION = "/sys/module/nvidia/version"
# A driver version as the driver writes it: 570.172.08, 580.65.06, 535.54 (older branches have two parts).
DRIVER_VERSION_RE = re.compile(r"[0-9]{1,4}\.[0-9]{1,4}(?:\.[0-9]{1,4})?\Z")
_NVRM_RE = re.compile(
    r"NVRM version:\s+(?P<flavour>.*?Kernel Module)\s+(?:for\s+\S+\s+)?(?P<version>\d+\.\d+(?:\.\d+)?)", re.ASCII
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


def read_nvidia_driver(root: str, errors: list[str] | None = None) -> NvidiaDriver:
    """Read the loaded NVIDIA driver below ``root``.

    The version is the one /proc/driver/nvidia/version names, else /sys/module/nvidia/version when that is a
    driver version (:data:`DRIVER_VERSION_RE`); one that is not is left out and, with ``errors``, named there
    by path (never quoted).
    """
    nvrm = read_text(root, NVRM_VERSION)
    module_version = read_text(root, MODULE_VERSION)
    if nvrm is None and module_version is None:
        return NvidiaDriver(loaded=False, version=None, kernel_module=None)
    version, flavour = parse_nvrm_version(nvrm or "")
    if module_version is not None and not DRIVER_VERSION_RE.match(module_version):
        if errors is not None:
            errors.append(f"{MODULE_VERSION}: not a driver version")
        module_version = None
    return NvidiaDriver(loaded=True, version=version or module_version or None, kernel_module=flavour)
