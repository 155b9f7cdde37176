# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Error counters of one RDMA port read from sysfs, read-only: what fails between runs on a link that is up now.

Two directories of a port, ``/sys/class/infiniband/<dev>/ports/<n>/``, hold them (Documentation/ABI/stable/
sysfs-class-infiniband):

* ``counters/``: the port's performance management (PMA) counters, read by the kernel from the device
  (drivers/infiniband/core/sysfs.c, ``show_pma_counter``); :data:`PMA_COUNTERS` are the error counters of them.
  The kernel prints each as a decimal number and a newline; the InfiniBand specification gives them 8 to 32 bits
  and the device stops them at their largest value (``symbol_error`` at 65535, ``link_downed`` at 255), so a
  saturated counter reads as that number and is reported as it reads;
* ``hw_counters/``: the driver's own counters (``rdma_hw_stats``, printed ``%llu``: up to 64 bits); of mlx5's queue
  counters (drivers/infiniband/hw/mlx5/counters.c, ``out_of_seq_q_cnts`` and ``retrans_q_cnts``)
  :data:`HW_COUNTERS` are the RoCE/InfiniBand transport's sequence errors.

Only the named files are read (never a walk of either directory, which holds dozens of counters on mlx5), each at
most one page (:data:`.host_files.ATTRIBUTE_LIMIT`). A directory the kernel does not create (an older kernel, a
driver without PMA on RoCE, a port without ``hw_counters``) makes its counters absent, not wrong; so does a missing
file. A file that is there but cannot be read (a read the device refuses, a directory, a symlink loop, a link out of
the root) or does not hold a decimal number is absent from the counters and named, with why, in the port's
``counter_errors``; its text is never reported.
"""

from __future__ import annotations

import re

from ansible_collections.gpufabric.cluster.plugins.module_utils.host_files import exists, problem, read_text

# The error counters of a port's ``counters/`` (PMA) directory, as the kernel names the files.
PMA_COUNTERS = (
    "symbol_error",
    "link_error_recovery",
    "link_downed",
    "port_rcv_errors",
    "port_rcv_remote_physical_errors",
    "excessive_buffer_overrun_errors",
    "local_link_integrity_errors",
    "port_xmit_discards",
)
# The transport sequence errors of a port's ``hw_counters/`` directory (mlx5 names).
HW_COUNTERS = ("out_of_sequence", "packet_seq_err")
# Every counter read, in the order reported.
COUNTERS = PMA_COUNTERS + HW_COUNTERS
# The largest value a counter holds: the kernel prints at most an unsigned 64-bit number.
COUNTER_MAX = 2 ** 64 - 1
_DECIMAL_RE = re.compile(r"^[0-9]{1,20}\Z", re.ASCII)


class CounterError(ValueError):
    """A counter file's text is not a counter as the kernel prints one (the message never quotes it)."""


def parse_counter(text: str) -> int:
    """Parse a counter file's text (``"27\\n"``, stripped) into its value.

    Only what the kernel prints is accepted: decimal digits, at most :data:`COUNTER_MAX`. Raises
    :class:`CounterError` otherwise (empty, a sign, hexadecimal, anything else), without quoting the text.
    """
    text = text.strip()
    if not _DECIMAL_RE.match(text):
        raise CounterError("not a counter (expected a decimal number)")
    value = int(text)
    if value > COUNTER_MAX:
        raise CounterError("not a counter (larger than 64 bits)")
    return value


def read_port_counters(root: str, port_dir: str) -> tuple[dict[str, int], list[str]]:
    """Return ``(counters, errors)`` of the port whose host directory is ``port_dir``, read below ``root``.

    ``counters`` maps each counter of :data:`COUNTERS` whose file is there and holds a counter to its value, in the
    order of :data:`COUNTERS`; ``errors`` names each file that is there but could not be read or parsed,
    ``"<path>: <why>"``.
    """
    counters: dict[str, int] = {}
    errors: list[str] = []
    for directory, names in (("counters", PMA_COUNTERS), ("hw_counters", HW_COUNTERS)):
        for name in names:
            path = f"{port_dir}/{directory}/{name}"
            text = read_text(root, path)
            if text is None:
                # not there (also when the kernel or driver has no such directory): absent; else unreadable
                if exists(root, path):
                    errors.append(f"{path}: {problem(root, path)}")
                continue
            try:
                counters[name] = parse_counter(text)
            except CounterError as exc:
                errors.append(f"{path}: {exc}")
    return counters, errors
