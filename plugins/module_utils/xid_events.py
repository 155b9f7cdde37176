# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The XID events the NVIDIA driver logged since boot, counted per GPU from the kernel log; never the log's text.

The driver reports a GPU error as a kernel message (NVIDIA's XID catalogue,
https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html)::

    NVRM: Xid (PCI:0000:10:1c): 63, pid=1896, Row Remapper: New row marked for remapping, reset gpu to activate.

that is ``NVRM: Xid (PCI:<domain>:<bus>:<device>): <code>, <free text>`` (older drivers leave out ``PCI:``, some
name the function too).  Only the address and the code are read; the free text is never kept.

Where: ``/dev/kmsg`` below the probe root, read without blocking (as ``dmesg`` reads it): every record the kernel's
ring buffer still holds, oldest first, each ``<priority>,<sequence>,<microseconds>,<flags>;<message>``.  The ring
buffer starts at boot with sequence 0, so ``complete`` says whether it still holds the boot's first record (a busy
host may have overwritten older ones: the counts are then since the oldest record kept).  A journal would keep more,
but is not always there and needs a tool run; ``/dev/kmsg`` is on every Linux host.  Reading it needs root (or
CAP_SYSLOG where ``kernel.dmesg_restrict`` is set): when it cannot be read the XID counts are ``None`` and the probe
warns, never fails.
"""

from __future__ import annotations

import errno
import os
import re
import stat
import typing as t

from ansible_collections.gpufabric.cluster.plugins.module_utils.host_files import MIB, OUTSIDE_ROOT, OutsideRoot, jail

KMSG = "/dev/kmsg"
# The most of the kernel log read: the ring buffer is at most a few MiB (CONFIG_LOG_BUF_SHIFT <= 25: 32 MiB).
KMSG_LIMIT = 32 * MIB
_RECORD = 8192  # a /dev/kmsg read returns one record; the kernel's records are shorter (LOG_LINE_MAX 992 + header)
# A kmsg record header: priority, sequence, timestamp, flags, then ';' and the message.
_HEADER_RE = re.compile(r"^[0-9]{1,4},([0-9]{1,20}),[0-9]{1,20},[^;]{0,16};", re.ASCII)
_XID_RE = re.compile(r"NVRM: Xid \((?:PCI:)?([0-9a-fA-F]{4,8}):([0-9a-fA-F]{2}):([0-9a-fA-F]{2})(?:\.[0-7])?\): "
                     r"([0-9]{1,5})\b", re.ASCII)


class KmsgUnreadable(OSError):
    """The kernel log cannot be read (the message names the path and why, never its content)."""


def parse_xid_log(text: str) -> tuple[dict[str, dict[int, int]], bool | None]:
    """Count the XID events of kernel log text: ``({gpu: {code: count}}, complete)``.

    ``gpu`` is the address the driver names, in the kernel's form without the function (``0000:10:1c``);
    ``complete`` is True when the text starts with the kmsg record of sequence 0 (the boot's first), False when it
    starts with a later one, None when it is not kmsg records.  Any text gives counts (possibly none), never an
    error.
    """
    counts: dict[str, dict[int, int]] = {}
    complete: bool | None = None
    first = True
    for line in text.splitlines():
        header = _HEADER_RE.match(line)
        if first and line.strip():
            complete = None if header is None else int(header.group(1)) == 0
            first = False
        for match in _XID_RE.finditer(line):
            domain, bus, device, code = match.groups()
            address = f"{int(domain, 16):04x}:{int(bus, 16):02x}:{int(device, 16):02x}"
            codes = counts.setdefault(address, {})
            codes[int(code)] = codes.get(int(code), 0) + 1
    return counts, complete


def read_kmsg(root: str, limit: int = KMSG_LIMIT) -> str:
    """The records ``/dev/kmsg`` below ``root`` holds now, as text (a regular file there is read whole).

    Raises :class:`KmsgUnreadable` naming the path and why when it is missing, cannot be opened (permissions),
    is neither a character device nor a regular file, or holds more than ``limit`` bytes.
    """
    try:
        real = jail(root, KMSG)
        descriptor = os.open(real, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    except OutsideRoot:
        raise KmsgUnreadable(f"{KMSG}: {OUTSIDE_ROOT}") from None
    except OSError as exc:
        why = "is missing" if exc.errno == errno.ENOENT else os.strerror(exc.errno) if exc.errno else "cannot be read"
        raise KmsgUnreadable(f"{KMSG}: {why.lower()}") from None
    chunks: list[bytes] = []
    size = 0
    try:
        mode = os.fstat(descriptor).st_mode
        if not (stat.S_ISCHR(mode) or stat.S_ISREG(mode)):
            raise KmsgUnreadable(f"{KMSG}: not a character device")
        while True:
            try:
                chunk = os.read(descriptor, _RECORD)
            except BlockingIOError:  # EAGAIN: every record read
                break
            except OSError as exc:
                if exc.errno == errno.EPIPE:  # the record was overwritten while reading: go on with the next
                    continue
                raise KmsgUnreadable(f"{KMSG}: {os.strerror(exc.errno).lower()}") from None
            if not chunk:
                break
            size += len(chunk)
            if size > limit:
                raise KmsgUnreadable(f"{KMSG}: larger than the limit of {limit} bytes")
            chunks.append(chunk)
    finally:
        os.close(descriptor)
    return b"".join(chunks).decode("utf-8", errors="replace")


def xid_address(pci_address: t.Any) -> str | None:
    """The address an XID line names for a GPU's PCI address (``0000:1b:00.0`` -> ``0000:1b:00``)."""
    if not isinstance(pci_address, str) or "." not in pci_address:
        return None
    return pci_address.rsplit(".", 1)[0]


def collect_xids(root: str, gpus: list[dict], warnings: list[str]) -> dict | None:
    """Set each GPU's ``xid_counts`` (``{code: count}``, string codes, empty when none) and return the host's
    ``xid_events``: ``{source, complete, other_addresses}`` (addresses no GPU of ``gpus`` has, with their counts).

    When the log cannot be read every ``xid_counts`` and the result are ``None`` and ``warnings`` says why; a host
    without GPUs has nothing to count and its log is not read (``None``).
    """
    if not gpus:
        return None
    try:
        counts, complete = parse_xid_log(read_kmsg(root))
    except KmsgUnreadable as exc:
        for gpu in gpus:
            gpu["xid_counts"] = None
        warnings.append(f"XID events not read: {exc}")
        return None
    seen = set()
    for gpu in gpus:
        address = xid_address(gpu.get("pci_address"))
        seen.add(address)
        gpu["xid_counts"] = {str(code): count for code, count in sorted(counts.get(address or "", {}).items())}
    other = {address: {str(code): count for code, count in sorted(codes.items())}
             for address, codes in sorted(counts.items()) if address not in seen}
    return {"source": KMSG, "complete": complete, "other_addresses": other}
