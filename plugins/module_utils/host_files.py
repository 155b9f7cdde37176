# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Read files of a host below a filesystem root (``/`` on a live host, a fixture tree in tests).

Every probe reads /sys, /proc, /etc and /dev through these helpers so that one
``root`` option moves all of them.  Paths given here are host-absolute
(``/sys/class/net``); they are joined below ``root``.  Relative symlinks (all of
sysfs) are followed as the kernel lays them out; absolute symlinks are read with
:func:`link_target` and never followed outside ``root``.
"""

from __future__ import annotations

import os

from ansible_collections.gpufabric.cluster.plugins.module_utils.errors import ProbeRootError


def check_root(root: str) -> str:
    """Return ``root`` normalised; raise :class:`ProbeRootError` when it is not a readable directory."""
    if not os.path.isdir(root):
        raise ProbeRootError(f"root {root!r} does not exist or is not a directory")
    if not os.access(root, os.R_OK | os.X_OK):
        raise ProbeRootError(f"root {root!r} is not readable")
    return os.path.normpath(root)


def host_path(root: str, path: str) -> str:
    """Join a host-absolute ``path`` below ``root``."""
    return os.path.join(root, path.lstrip("/"))


def read_text(root: str, path: str, default: str | None = None) -> str | None:
    """Return the stripped content of a host file, or ``default`` when it cannot be read."""
    try:
        with open(host_path(root, path), encoding="utf-8", errors="replace") as handle:
            return handle.read().strip()
    except OSError:
        return default


def read_lines(root: str, path: str) -> list[str] | None:
    """Return every line of a host file without line ends (line N is item N-1), or ``None`` when unreadable."""
    try:
        with open(host_path(root, path), encoding="utf-8", errors="replace") as handle:
            return handle.read().splitlines()
    except OSError:
        return None


def list_dir(root: str, path: str) -> list[str]:
    """Return the sorted entries of a host directory; an absent directory is empty."""
    try:
        return sorted(os.listdir(host_path(root, path)))
    except OSError:
        return []


def exists(root: str, path: str) -> bool:
    """Whether a host path exists (a dangling or absolute symlink counts as existing)."""
    return os.path.lexists(host_path(root, path))


def link_target(root: str, path: str) -> str | None:
    """Return what a host symlink points to, unresolved, or ``None`` when it is not a symlink."""
    try:
        return os.readlink(host_path(root, path))
    except OSError:
        return None


def resolve(root: str, path: str) -> str | None:
    """Return a host path with relative symlinks resolved, as a host-absolute path below ``root``."""
    full = host_path(root, path)
    if not os.path.exists(full):
        return None
    real = os.path.realpath(full)
    real_root = os.path.realpath(root)
    if real_root != "/" and not (real == real_root or real.startswith(real_root + os.sep)):
        return None
    relative = os.path.relpath(real, real_root)
    return "/" if relative == "." else "/" + relative
