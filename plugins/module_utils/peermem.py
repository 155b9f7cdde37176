# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""GPUDirect RDMA readiness of one host: nvidia_peermem, legacy nv_peer_mem, OFED and DMA-BUF support.

GPUDirect RDMA works through DMA-BUF (open NVIDIA kernel module, Linux 5.12 or
newer, a loaded driver) or through the legacy ``nvidia_peermem`` module (GPU
Operator documentation, "Common Prerequisites").  :func:`collect_peermem`
reads a host below ``root`` and returns the ``peermem_info`` module's payload.

The payload holds no text of the files read: /proc/modules, the modules-load.d
files and modules.dep only answer yes or no, the kernel release is reported only
when it has the shape ``uname -r`` prints, the OFED version only when it is a
version string (:func:`.host_values.is_version`).  Each file is read up to its
limit in :mod:`.host_files`.
"""

from __future__ import annotations

import os
import re

from ansible_collections.gpufabric.cluster.plugins.module_utils.errors import CommandError, ProbeRootError
from ansible_collections.gpufabric.cluster.plugins.module_utils.host_commands import Runner, find_command, run_tool
from ansible_collections.gpufabric.cluster.plugins.module_utils.host_files import (
    MODULES_DEP_LIMIT,
    MODULES_LOAD_LIMIT,
    PROC_TABLE_LIMIT,
    check_root,
    link_target,
    list_dir,
    problem,
    read_lines,
    read_text,
    walk_files,
)
from ansible_collections.gpufabric.cluster.plugins.module_utils.host_values import is_version
from ansible_collections.gpufabric.cluster.plugins.module_utils.nvidia_driver import read_nvidia_driver

OSRELEASE = "/proc/sys/kernel/osrelease"
DMA_BUF_MIN_KERNEL = (5, 12)
PEERMEM_NAMES = ("nvidia_peermem", "nvidia-peermem")
PEERMEM_FILES = tuple(f"nvidia{sep}peermem.ko{ext}" for sep in ("-", "_") for ext in ("", ".xz", ".zst", ".gz"))
# modules-load.d(5) directories, highest precedence first: a file name in an earlier one hides the later ones.
MODULES_LOAD_DIRS = ("/etc/modules-load.d", "/run/modules-load.d", "/usr/lib/modules-load.d", "/lib/modules-load.d")
ETC_MODULES = "/etc/modules"

# Codes of dma_buf.reasons: the controller decides on these; the messages are for people.
NO_DRIVER = "no_driver"
PROPRIETARY_MODULES = "proprietary_modules"
KERNEL_MODULE_UNKNOWN = "kernel_module_unknown"
KERNEL_UNKNOWN = "kernel_unknown"
KERNEL_TOO_OLD = "kernel_too_old"
HOST_UNREADABLE = "host_unreadable"
REASON_CODES = (NO_DRIVER, PROPRIETARY_MODULES, KERNEL_MODULE_UNKNOWN, KERNEL_UNKNOWN, KERNEL_TOO_OLD, HOST_UNREADABLE)

_KERNEL_RE = re.compile(r"^\s*(\d+)\.(\d+)(?:\.(\d+))?")
# What uname -r can print: a release is one path component of printable characters (it names /lib/modules/<r>).
_RELEASE_RE = re.compile(r"^[0-9][0-9A-Za-z._+~-]{0,63}$")


def parse_kernel_version(release: str | None) -> tuple[int, int, int] | None:
    """Return ``(major, minor, patch)`` of a kernel release string, or ``None``.

    >>> parse_kernel_version("6.8.0-1025-nvidia-64k")
    (6, 8, 0)
    >>> parse_kernel_version("5.14.0-503.14.1.el9_5.x86_64")
    (5, 14, 0)
    """
    if not release:
        return None
    match = _KERNEL_RE.match(release)
    if not match:
        return None
    return int(match.group(1)), int(match.group(2)), int(match.group(3) or 0)


def parse_proc_modules(text: str) -> list[str]:
    """Return the names of the loaded modules in /proc/modules (the first field of each line)."""
    return [line.split()[0] for line in text.splitlines() if line.strip()]


def module_loaded(root: str, loaded_modules: list[str], name: str) -> bool:
    """Whether module ``name`` is in /proc/modules or its /sys/module/<name>/initstate is ``live``."""
    return name in loaded_modules or read_text(root, f"/sys/module/{name}/initstate") == "live"


def lists_module(lines: list[str], names: tuple[str, ...]) -> bool:
    """Whether a modules-load.d file (or /etc/modules) names one of ``names`` on a non-comment line."""
    for line in lines:
        stripped = line.strip()
        if not stripped or stripped[0] in "#;":
            continue
        if stripped.split()[0] in names:
            return True
    return False


def _modules_load_files(root: str) -> list[str]:
    """The modules-load.d files systemd reads, after /etc and /run hide same-named files further down."""
    chosen: dict[str, str] = {}
    for directory in MODULES_LOAD_DIRS:
        for name in list_dir(root, directory):
            if name.endswith(".conf") and name not in chosen:
                chosen[name] = f"{directory}/{name}"
    return [chosen[name] for name in sorted(chosen)]


def find_persisted(root: str) -> list[str]:
    """Return the host paths of the files that load nvidia_peermem at boot."""
    found = []
    for path in [*_modules_load_files(root), ETC_MODULES]:
        if link_target(root, path) == "/dev/null":
            continue  # a masked file
        lines = read_lines(root, path, limit=MODULES_LOAD_LIMIT)
        if lines and lists_module(lines, PEERMEM_NAMES):
            found.append(path)
    return found


def find_module_file(root: str, kernel_release: str | None) -> str | None:
    """Return the host path of an nvidia-peermem.ko[.xz|.zst|.gz] below /lib/modules/<release>, or None."""
    if not kernel_release or "/" in kernel_release or kernel_release in (".", ".."):
        return None
    base = f"/lib/modules/{kernel_release}"
    # depmod's index names every module of the kernel in one file; walk the tree only without it.
    for line in read_lines(root, f"{base}/modules.dep", limit=MODULES_DEP_LIMIT) or []:
        path = line.split(":", 1)[0].strip()
        if os.path.basename(path) in PEERMEM_FILES:
            return path if path.startswith("/") else f"{base}/{path}"
    for path in walk_files(root, base):
        if os.path.basename(path) in PEERMEM_FILES:
            return path
    return None


def reason(code: str, message: str) -> dict[str, str]:
    """One ``dma_buf.reasons`` entry: a code from :data:`REASON_CODES` and the message for people."""
    return {"code": code, "message": message}


def dma_buf_support(driver: dict, kernel_release: str | None) -> dict:
    """Judge DMA-BUF GPUDirect RDMA support; ``reasons`` names every unmet requirement as ``{code, message}``."""
    reasons = []
    if not driver.get("loaded"):
        reasons.append(reason(NO_DRIVER, "NVIDIA driver not loaded"))
    elif driver.get("kernel_module") == "proprietary":
        reasons.append(reason(PROPRIETARY_MODULES,
                              "proprietary kernel module loaded; DMA-BUF needs the open kernel module"))
    elif driver.get("kernel_module") != "open":
        reasons.append(reason(KERNEL_MODULE_UNKNOWN,
                              "NVIDIA kernel module flavour unknown; DMA-BUF needs the open kernel module"))
    version = parse_kernel_version(kernel_release)
    if version is None:
        reasons.append(reason(KERNEL_UNKNOWN,
                              f"kernel version {kernel_release!r} unknown; DMA-BUF needs Linux 5.12 or newer"
                              if kernel_release else "kernel version unknown; DMA-BUF needs Linux 5.12 or newer"))
    elif version[:2] < DMA_BUF_MIN_KERNEL:
        reasons.append(reason(KERNEL_TOO_OLD, f"kernel {kernel_release} is older than 5.12"))
    return {"supported": not reasons, "reasons": reasons}


def _read_ofed(root: str, runner: Runner, errors: list[str]) -> dict:
    if find_command(root, "ofed_info") is None:
        return {"installed": False, "version": None}
    try:
        out = run_tool(runner, root, ["ofed_info", "-s"])
    except CommandError as exc:
        errors.append(str(exc))
        return {"installed": True, "version": None}
    lines = [line.strip() for line in out.splitlines() if line.strip()]
    version = lines[0].rstrip(":").strip() if lines else ""
    if not version:
        errors.append("ofed_info -s printed no version")
    elif not is_version(version):
        errors.append("ofed_info -s: what it printed is not a version string")
        version = ""
    return {"installed": True, "version": version or None}


def empty_payload() -> dict:
    """The payload of a host where nothing could be read."""
    return {
        "kernel_version": None,
        "nvidia_peermem": {"loaded": False, "persisted": False, "persisted_in": [], "available": False},
        "nv_peer_mem": {"loaded": False},
        "ofed": {"installed": False, "version": None},
        "driver": {"loaded": False, "version": None, "kernel_module": None},
        "dma_buf": {"supported": False, "reasons": []},
        "gpudirect_rdma": {"ready": False, "method": None},
        "errors": [],
        "warnings": [],
    }


def collect_peermem(root: str, runner: Runner) -> dict:
    """Read GPUDirect RDMA readiness below ``root``; return the ``peermem_info`` payload.

    ``runner`` has the signature of ``AnsibleModule.run_command``.  Nothing
    raises: problems become ``errors`` entries or ``warnings``.
    """
    payload = empty_payload()
    errors: list[str] = payload["errors"]
    warnings: list[str] = payload["warnings"]
    try:
        root = check_root(root)
    except ProbeRootError as exc:
        errors.append(str(exc))
        payload["dma_buf"]["reasons"].append(reason(HOST_UNREADABLE, f"host not readable: {exc}"))
        return payload
    kernel = read_text(root, OSRELEASE) or None
    if kernel is None:
        errors.append(f"{OSRELEASE}: {problem(root, OSRELEASE)}")
    elif parse_kernel_version(kernel) is None or not _RELEASE_RE.match(kernel):
        errors.append(f"{OSRELEASE}: not a kernel release")
        kernel = None
    payload["kernel_version"] = kernel

    modules_text = read_text(root, "/proc/modules", limit=PROC_TABLE_LIMIT)
    if modules_text is None:
        errors.append(f"/proc/modules: {problem(root, '/proc/modules')}")
    loaded_modules = parse_proc_modules(modules_text or "")

    persisted_in = find_persisted(root)
    module_file = find_module_file(root, kernel)
    peermem = {
        "loaded": module_loaded(root, loaded_modules, "nvidia_peermem"),
        "persisted": bool(persisted_in),
        "persisted_in": persisted_in,
        "available": module_file is not None,
    }
    payload["nvidia_peermem"] = peermem
    payload["nv_peer_mem"] = {"loaded": module_loaded(root, loaded_modules, "nv_peer_mem")}
    if peermem["persisted"] and not peermem["available"] and kernel:
        warnings.append(f"nvidia_peermem is loaded at boot by {', '.join(persisted_in)} "
                        f"but no nvidia-peermem module exists for the running kernel (below /lib/modules)")
    if peermem["loaded"] and payload["nv_peer_mem"]["loaded"]:
        warnings.append("both nvidia_peermem and the legacy nv_peer_mem are loaded; unload nv_peer_mem")

    payload["ofed"] = _read_ofed(root, runner, errors)
    driver = read_nvidia_driver(root).as_dict()  # its errors are the gpu probe's
    payload["driver"] = driver
    dma_buf = dma_buf_support(driver, kernel)
    payload["dma_buf"] = dma_buf
    if dma_buf["supported"]:
        method = "dma_buf"
    elif peermem["loaded"]:
        method = "nvidia_peermem"
    else:
        method = None
    payload["gpudirect_rdma"] = {"ready": method is not None, "method": method}
    errors.extend(root.refusal_errors(errors))
    return payload
