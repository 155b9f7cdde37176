# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The name of the nvidia-imex package per distribution family, package source and driver branch: one table.

:data:`PACKAGES` is the one table the ``nvidia_imex`` role reads (through the filter
``gpufabric.cluster.imex_package``).  A key is a distribution family (``debian``: Debian and Ubuntu; ``redhat``:
RHEL and Rocky) and a package source (``cuda``: NVIDIA's CUDA repository, the one the role configures, or a mirror
of it; ``ubuntu``: Ubuntu's own archive, Ubuntu hosts only); its value maps a driver branch to the package name.
:data:`VERSION_PINS` says how a version is pinned per family (``name=version`` for apt, ``name-version`` for
dnf/yum).

A branch a source does not list has no known package name there: it is never guessed from its number (NVIDIA
and Canonical have renamed the package twice: branch-suffixed up to 575 and unsuffixed from 580 on in NVIDIA's
repository, suffixed for every branch in Ubuntu's archive).  :func:`decide` then returns a one-line problem naming
``nvidia_imex_driver_branch`` and the host, unless the user named the package (``nvidia_imex_package``).
"""

from __future__ import annotations

import re
import typing as t

FAMILIES = ("debian", "redhat")
SOURCES = ("cuda", "ubuntu")
# How a version is pinned in the name the package manager gets (nvidia_imex_package_version, e.g. 580.95.05-1).
VERSION_PINS = {"debian": "{name}={version}", "redhat": "{name}-{version}"}
# A driver branch as the role has it: the number before the first dot of a driver version.
_BRANCH = re.compile(r"[1-9][0-9]{2,3}")


def _suffixed(*branches: int) -> dict[int, str]:
    return {branch: f"nvidia-imex-{branch}" for branch in branches}


def _plain(*branches: int) -> dict[int, str]:
    return dict.fromkeys(branches, "nvidia-imex")


# Read on 2026-11-28.
# NVIDIA's CUDA repository (https://developer.download.nvidia.com/compute/cuda/repos/<distro>/<arch>/):
#   * 580, 590, 595 are plain nvidia-imex with the branch in the version on the RPM side: NVIDIA's packages in
#     Amazon Linux 2023's release notes (github amazonlinux/amazon-linux-2023, the AMI package lists) list
#     nvidia-imex-580.126.20-1, nvidia-imex-595.71.05-1 and nvidia-imex-595.91.07-1 (name nvidia-imex, version
#     580.126.20 / 595.x), and "dnf install nvidia-imex" installing 595.91.07 on a host locked to 580 is reported
#     there too (the branch comes from the version lock, not the name).
#   * From 590 on the Ubuntu packages of NVIDIA's repository drop the branch from their names and keep one name
#     ("Ubuntu 590 and later packages", Recent Updates of NVIDIA's Driver Installation Guide, branch 590,
#     https://docs.nvidia.com/datacenter/tesla/driver-installation-guide/; branch tracking becomes an apt pin).
#   * NOT confirmed from a stored source: nvidia-imex-570 / nvidia-imex-575 in NVIDIA's repository (Debian, Ubuntu
#     and RHEL), plain nvidia-imex for 580 on Debian/Ubuntu, and 610/620 on RHEL; these rows keep the names the
#     role installed before this table (suffixed on 570 and 575, plain from 580 on; its molecule scenario installs
#     nvidia-imex-570 from stand-ins with these names).
# Ubuntu's archive (multiverse; source packages from https://github.com/canonical/apt-packaging-imex):
#   * nvidia-imex-550 (550.163.01, jammy and noble), nvidia-imex-570 (570.211.01, noble), nvidia-imex-575
#     (575.57.08, noble), nvidia-imex-590 (590.48.01, jammy and noble), nvidia-imex-595 (595.71.05, noble):
#     https://packages.ubuntu.com/source/<release>/nvidia-imex-<branch>; nvidia-imex-565 (565.57.01, jammy and
#     noble): the 565-jammy and 565-noble branches of canonical/apt-packaging-imex.
#   * nvidia-imex-580: NOT on a stored packages.ubuntu.com page; seen only in third-party scripts that install it
#     with Ubuntu's other -580 names (nvidia-fabricmanager-580, libnvidia-nscq-580), and Ubuntu's archive carries
#     the matching fabric-manager-580 (https://packages.ubuntu.com/questing/nvidia-fabricmanager-580). Kept:
#     every other branch of 550-595 is there under the same pattern.
#   * 610 and 620: not found; refused unless nvidia_imex_package names the package.
#   * The table does not tell Ubuntu releases apart: 570, 575 and 595 were seen for noble (24.04) only; on jammy
#     (22.04) the package manager reports a missing one at install time.
PACKAGES: dict[tuple[str, str], dict[int, str]] = {
    ("debian", "cuda"): {**_suffixed(570, 575), **_plain(580, 590, 595, 610, 620)},
    ("redhat", "cuda"): {**_suffixed(570, 575), **_plain(580, 590, 595, 610, 620)},
    ("debian", "ubuntu"): _suffixed(550, 565, 570, 575, 580, 590, 595),
}


class ImexPackageError(ValueError):
    """An argument the decision cannot use (not the user's setting, the role's own); the message names it."""


def _family(os_family: t.Any) -> str:
    family = str(os_family).strip().lower() if isinstance(os_family, str) else ""
    if family not in FAMILIES:
        raise ImexPackageError(f"os_family must be Debian or RedHat, got {os_family!r}"[:200])
    return family


def _text(name: str, value: t.Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise ImexPackageError(f"{name} must be a string, got {type(value).__name__}")
    return str(value).strip()


def decide(os_family: t.Any, distribution: t.Any, source: t.Any, branch: t.Any, package: t.Any = "",
           version: t.Any = "", host: t.Any = "") -> dict[str, str]:
    """The package of ``branch`` from ``source`` on a host of ``os_family`` / ``distribution``.

    Returns ``{'package', 'install', 'problem'}``: ``package`` the name (``package`` when the user set it, else the
    table's), ``install`` what the package manager gets (the name, with ``version`` pinned as
    :data:`VERSION_PINS` says when set), ``problem`` ``''`` or one line naming the variable to set and ``host``
    (then ``package`` and ``install`` are ``''``). ``branch`` is the driver branch (``580``); an empty one with
    no ``package`` is a problem too. ``os_family`` must be ``Debian`` or ``RedHat`` (any case): the role loads
    only those families' variables, so anything else is an :class:`ImexPackageError`.
    """
    family = _family(os_family)
    distribution_text = _text("distribution", distribution)
    source_text = _text("nvidia_imex_package_source", source)
    branch_text = _text("nvidia_imex_driver_branch", branch)
    name = _text("nvidia_imex_package", package)
    version_text = _text("nvidia_imex_package_version", version)
    where = f"host {_text('host', host)}"

    def refused(problem: str) -> dict[str, str]:
        return {"package": "", "install": "", "problem": f"{where}: {problem}"}

    if source_text not in SOURCES:
        return refused(f"nvidia_imex_package_source must be one of {', '.join(SOURCES)}, got {source_text!r}"[:300])
    if source_text == "ubuntu" and (family != "debian" or distribution_text.lower() != "ubuntu"):
        return refused(f"nvidia_imex_package_source is ubuntu (Ubuntu's own archive) but this host runs "
                       f"{distribution_text or 'an unknown distribution'}; use cuda (NVIDIA's CUDA repository)")
    if not name:
        if not branch_text:
            return refused("no NVIDIA driver found in ansible_facts['gpufabric']['gpu']['driver_version'] and "
                           "nvidia_imex_driver_branch is not set, so the nvidia-imex package of the driver branch "
                           "is unknown")
        if not _BRANCH.fullmatch(branch_text):
            return refused(f"nvidia_imex_driver_branch must be a driver branch such as 580, "
                           f"got {branch_text[:40]!r}")
        name = PACKAGES.get((family, source_text), {}).get(int(branch_text), "")
        if not name:
            known = sorted(PACKAGES.get((family, source_text), {}))
            return refused(f"no known nvidia-imex package for driver branch {branch_text} "
                           f"(nvidia_imex_driver_branch, or the loaded driver's) from {_SOURCE_TEXT[source_text]} "
                           f"on {family.capitalize()} hosts (known branches: {', '.join(map(str, known))}); "
                           f"set nvidia_imex_package to the package name")
    install = VERSION_PINS[family].format(name=name, version=version_text) if version_text else name
    return {"package": name, "install": install, "problem": ""}


_SOURCE_TEXT = {"cuda": "NVIDIA's CUDA repository", "ubuntu": "Ubuntu's archive"}
