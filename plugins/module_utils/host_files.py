# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Read files of a host below a filesystem root (``/`` on a live host, a fixture tree in tests).

Every probe reads /sys, /proc, /etc and /dev through these helpers so that one
``root`` option moves all of them.  Paths given here are host-absolute
(``/sys/class/net``); they are resolved below ``root`` as if ``root`` were the
host's ``/`` (a jail): :func:`jail` follows every symlink component by component,
an absolute target starts again at ``root`` and a ``..`` that would climb above
``root`` is refused.  Nothing outside ``root`` is ever opened, listed or read;
a path that leads outside is recorded on the :class:`HostRoot` returned by
:func:`check_root` (see :meth:`HostRoot.refusal_errors`) and read as absent.

Every read is bounded: :func:`read_text` and :func:`read_lines` take a size limit (one page,
:data:`ATTRIBUTE_LIMIT`, unless the caller names one of the limits below) and read at most one byte more than
it, never the whole file.  A file over its limit is not read at all: it reads as unreadable, and the
:class:`HostRoot` records ``"<path>: larger than the limit of <n> bytes"`` for the probe's errors.
"""

from __future__ import annotations

import errno
import os
import stat

from ansible_collections.gpufabric.cluster.plugins.module_utils.errors import ProbeRootError

# More symlinks than this on one path is a loop (the kernel's own limit is 40).
MAX_SYMLINKS = 40
OUTSIDE_ROOT = "outside root"

KIB = 1024
MIB = 1024 * KIB
# The most a probe reads of one file, by kind of file.  A file over its limit is an error naming it.
# A sysfs attribute or a /proc/sys value: the kernel formats one into a page (its show buffer is PAGE_SIZE).
ATTRIBUTE_LIMIT = 4 * KIB
# IMEX config.cfg and nodes file: a few dozen settings; at most a few thousand addresses of at most 39 characters.
IMEX_FILE_LIMIT = 1 * MIB
# A /proc table of the kernel: /proc/modules (a line per loaded module), /proc/devices.
PROC_TABLE_LIMIT = 1 * MIB
# A modules-load.d file or /etc/modules: module names, a line each.
MODULES_LOAD_LIMIT = 64 * KIB
# /lib/modules/<release>/modules.dep: a line per module of the kernel (about 1 MiB for a distribution kernel).
MODULES_DEP_LIMIT = 16 * MIB
# /var/lib/dpkg/status: a stanza per installed package (a few MiB on a server).
PACKAGE_STATUS_LIMIT = 32 * MIB
_CHUNK = 64 * KIB


def too_large(limit: int) -> str:
    """Why a file is not read: ``larger than the limit of <limit> bytes``."""
    return f"larger than the limit of {limit} bytes"


class OutsideRoot(OSError):
    """A host path leads outside the probe root; it is never read."""

    def __init__(self, path: str):
        super().__init__(errno.EACCES, OUTSIDE_ROOT, path)
        self.host_path = path


class FileTooLarge(OSError):
    """A host file is larger than the limit its reader gave; it is not read."""

    def __init__(self, path: str, limit: int):
        super().__init__(errno.EFBIG, too_large(limit), path)
        self.host_path = path
        self.limit = limit


class HostRoot(str):
    """A checked probe root (the normalised path) that remembers which host paths it refused and why.

    A path is refused when it leads outside the root (``outside root``) or its file is larger than the limit
    its reader gave (:func:`too_large`).
    """

    def __new__(cls, value: str):
        instance = super().__new__(cls, value)
        instance.refused = {}
        return instance

    def refuse(self, path: str, reason: str = OUTSIDE_ROOT) -> None:
        """Record that ``path`` was refused for ``reason`` (the first reason recorded for a path is kept)."""
        self.refused.setdefault(path, reason)

    def refusal(self, path: str) -> str | None:
        """Why ``path`` was refused, or ``None`` when it was not."""
        return self.refused.get(path)

    def refusal_errors(self, known: list[str] | tuple[str, ...] = ()) -> list[str]:
        """One ``"<path>: <reason>"`` entry per refused path, in the order refused, leaving out those in ``known``."""
        entries = [f"{path}: {reason}" for path, reason in self.refused.items()]
        return [entry for entry in entries if entry not in known]


def check_root(root: str) -> HostRoot:
    """Return ``root`` normalised; raise :class:`ProbeRootError` when it is not a readable directory."""
    if not os.path.isdir(root):
        raise ProbeRootError(f"root {root!r} does not exist or is not a directory")
    if not os.access(root, os.R_OK | os.X_OK):
        raise ProbeRootError(f"root {root!r} is not readable")
    return HostRoot(os.path.realpath(root))  # a fresh record per collector: each reports its own refusals


def check_probe_root(root: str) -> HostRoot:
    """:func:`check_root`, and the root must hold a ``sys/`` directory (else no probe can answer anything)."""
    checked = check_root(root)
    try:
        sys_dir = jail(checked, "/sys")
    except OSError:
        sys_dir = None
    if sys_dir is None or not os.path.isdir(sys_dir):
        raise ProbeRootError(f"root {root!r} has no sys/ directory; the probe cannot read a host there")
    return checked


def _record(root: str, path: str, reason: str = OUTSIDE_ROOT) -> None:
    if isinstance(root, HostRoot):
        root.refuse(path, reason)


def _parts(path: str) -> list[str]:
    return [part for part in path.split("/") if part not in ("", ".")]


def jail(root: str, path: str, follow: bool = True) -> str:
    """Return the real path, below ``root``, of the host-absolute ``path``.

    Symlinks are followed one component at a time as if ``root`` were ``/``: an absolute
    target starts again at ``root``; a ``..`` above ``root`` raises :class:`OutsideRoot`
    (recorded on a :class:`HostRoot`).  With ``follow=False`` a symlink in the last
    component is not followed.  A component that does not exist ends the walk: the rest
    is appended unresolved (the caller's open or stat then fails as for a missing file).
    Raises ``OSError(ELOOP)`` on a symlink loop.
    """
    base = os.path.realpath(root) if not isinstance(root, HostRoot) else str(root)
    if base == "/":
        base = ""
    pending = _parts(path)
    resolved: list[str] = []
    links = 0
    while pending:
        part = pending.pop(0)
        if part == "..":
            if not resolved and not base:
                continue  # the host's own / : the kernel stays at /
            if not resolved:
                _record(root, path)
                raise OutsideRoot(path)
            resolved.pop()
            continue
        candidate = base + "/" + "/".join([*resolved, part])
        if not follow and not pending:
            resolved.append(part)
            break
        try:
            info = os.lstat(candidate)
        except OSError:
            resolved.append(part)
            resolved.extend(pending)
            return base + "/" + "/".join(resolved)
        if not stat.S_ISLNK(info.st_mode):
            resolved.append(part)
            continue
        links += 1
        if links > MAX_SYMLINKS:
            raise OSError(errno.ELOOP, "too many levels of symbolic links", path)
        target = os.readlink(candidate)
        if target.startswith("/"):
            resolved = []
        pending = _parts(target) + pending
    return base + "/" + "/".join(resolved) if resolved else (base or "/")


def host_path(root: str, path: str) -> str:
    """The real path below ``root`` of a host path, symlinks followed inside the jail.

    Raises :class:`OutsideRoot` (an ``OSError``) when it leads outside ``root``.
    """
    return jail(root, path)


def _read(root: str, path: str, limit: int) -> str:
    """The text of a regular host file of at most ``limit`` bytes (UTF-8, undecodable bytes replaced).

    Reads at most ``limit + 1`` bytes: a file with more raises :class:`FileTooLarge` (recorded on a
    :class:`HostRoot`) without reading the rest.  Raises ``OSError`` when the file cannot be read.
    """
    real = jail(root, path)
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    descriptor = os.open(real, flags)
    try:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", path)
        os.set_blocking(descriptor, True)
        chunks = []
        size = 0
        while size <= limit:
            chunk = os.read(descriptor, min(limit + 1 - size, _CHUNK))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    finally:
        os.close(descriptor)
    if size > limit:
        _record(root, path, too_large(limit))
        raise FileTooLarge(path, limit)
    return b"".join(chunks).decode("utf-8", errors="replace")


def read_text(root: str, path: str, default: str | None = None, limit: int = ATTRIBUTE_LIMIT) -> str | None:
    """Return the stripped content of a host file of at most ``limit`` bytes, or ``default`` when it cannot be
    read, is outside root or is larger (see :func:`problem`)."""
    try:
        return _read(root, path, limit).strip()
    except (OSError, ValueError):
        return default


def read_lines(root: str, path: str, limit: int = ATTRIBUTE_LIMIT) -> list[str] | None:
    """Return every line of a host file of at most ``limit`` bytes without line ends (line N is item N-1), or
    ``None`` when it cannot be read, is outside root or is larger (see :func:`problem`)."""
    try:
        return _read(root, path, limit).splitlines()
    except (OSError, ValueError):
        return None


def list_dir(root: str, path: str) -> list[str]:
    """Return the sorted entries of a host directory; an absent directory (or one outside root) is empty."""
    try:
        return sorted(os.listdir(jail(root, path)))
    except OSError:
        return []


def walk_files(root: str, path: str) -> list[str]:
    """Host paths of the files below a host directory, sorted, without following symlinked directories."""
    try:
        top = jail(root, path)
    except OSError:
        return []
    found = []
    pending = [("", top)]
    while pending:
        relative, directory = pending.pop(0)
        try:
            with os.scandir(directory) as scan:
                entries = sorted(scan, key=lambda entry: entry.name)
        except OSError:
            continue
        subdirs = []
        for entry in entries:
            name = f"{relative}/{entry.name}" if relative else entry.name
            try:
                is_dir = entry.is_dir(follow_symlinks=False)  # a symlink is never followed, even to a directory
            except OSError:
                continue
            if is_dir:
                subdirs.append((name, entry.path))
            else:
                found.append(path.rstrip("/") + "/" + name)
        pending[:0] = subdirs
    return found


def exists(root: str, path: str) -> bool:
    """Whether a host path exists (a dangling symlink counts as existing; one leading outside root does not)."""
    try:
        return os.path.lexists(jail(root, path, follow=False))
    except OSError:
        return False


def outside(root: str, path: str) -> bool:
    """Whether a host path leads outside ``root`` (recorded on a :class:`HostRoot` when it does)."""
    try:
        jail(root, path)
    except OutsideRoot:
        return True
    except OSError:
        return False
    return False


def problem(root: str, path: str) -> str:
    """Why a host path could not be read: ``outside root``, ``larger than the limit of <n> bytes`` (when a read
    through a :class:`HostRoot` refused it), ``is missing``, ``dangling link`` or ``cannot be read``."""
    if outside(root, path):
        return OUTSIDE_ROOT
    refusal = root.refusal(path) if isinstance(root, HostRoot) else None
    if refusal is not None:
        return refusal
    if not exists(root, path):
        return "is missing"
    return "cannot be read" if resolve(root, path) is not None else "dangling link"


def link_target(root: str, path: str) -> str | None:
    """Return what a host symlink points to, unresolved, or ``None`` when it is not a symlink."""
    try:
        return os.readlink(jail(root, path, follow=False))
    except OSError:
        return None


def resolve(root: str, path: str) -> str | None:
    """Return a host path with its symlinks resolved inside the jail, or ``None`` when it does not exist or
    leads outside ``root``."""
    try:
        real = jail(root, path)
    except OSError:
        return None
    if not os.path.exists(real):
        return None
    base = os.path.realpath(root) if not isinstance(root, HostRoot) else str(root)
    relative = os.path.relpath(real, base)
    return "/" if relative == "." else "/" + relative
