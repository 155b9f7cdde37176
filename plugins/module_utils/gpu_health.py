# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A GPU's memory and link health as NVML counts it, read-only: what fails between runs on a GPU that works now.

:func:`gpu_health` asks one GPU's NVML counters through the adapter (:mod:`.nvml`) and returns the three keys it
adds to the GPU's facts:

* ``memory_errors``: ``remapped_rows`` (``correctable``, ``uncorrectable``, ``pending``, ``failure``; Ampere and
  later) and ``ecc_uncorrected`` (``volatile``: since the driver loaded, ``aggregate``: the GPU's lifetime), each
  ``None`` where NVML answers NOT_SUPPORTED (no row remapper, ECC off), with the reason in ``reasons``.  GPUs before
  Ampere retire pages instead of remapping rows; their retired pages are not read (no GPU this collection prepares
  is older than Ampere), ``remapped_rows`` is then ``None``;
* ``recovery_action``: NVML's GPU recovery action (``none``, ``gpu_reset``, ``node_reboot``, ``drain_p2p``,
  ``drain_and_reset``, ``recover_imex_domain``, ``bus_reset``, ``system_reboot``, ``unknown_<n>``), ``None`` where
  the driver has none (before r570);
* ``nvlink_errors``: the links of the GPU whose replay, recovery or CRC error counters are not zero,
  ``[{link, replay, recovery, crc}]`` in link order (an empty list: every counter of every active link is zero),
  ``None`` when the GPU has no active link or NVML answers no error counter.

A query that fails otherwise is an error naming the GPU and the query (as every NVML query of the probe); the key
is then ``None``.  Never a crash.
"""

from __future__ import annotations

import typing as t

from ansible_collections.gpufabric.cluster.plugins.module_utils import nvml
from ansible_collections.gpufabric.cluster.plugins.module_utils.errors import NvmlError


def _ask(source: nvml.NvmlSource, index: int, query: str, errors: list[str], reasons: list[str],
         *args: t.Any) -> t.Any:
    """``source.<query>(index, *args)``; NOT_SUPPORTED adds a reason, another failure an error; both give None."""
    try:
        return getattr(source, query)(index, *args)
    except nvml.NvmlNotSupported as exc:
        reasons.append(f"{query}: {exc}")
    except NvmlError as exc:
        errors.append(f"GPU {index}: NVML {query} failed: {exc}")
        reasons.append(f"{query}: NVML failed (see errors)")
    return None


def recovery_action_name(action: int) -> str:
    """The name in the facts of an ``nvmlDeviceGpuRecoveryAction_t`` (``2`` -> ``'node_reboot'``)."""
    return nvml.GPU_RECOVERY_ACTIONS.get(action, f"unknown_{action}")


def nonzero_links(counters: t.Mapping[int, t.Mapping[str, int]]) -> list[dict]:
    """The links with a non-zero error counter, ``[{link, replay, recovery, crc}]`` in link order."""
    return [{"link": int(link), **{name: int(values.get(name, 0)) for name in nvml.NVLINK_ERROR_COUNTERS}}
            for link, values in sorted(counters.items())
            if any(int(values.get(name, 0)) for name in nvml.NVLINK_ERROR_COUNTERS)]


def gpu_health(source: nvml.NvmlSource, index: int, active_links: t.Sequence[int] | None,
               errors: list[str]) -> dict:
    """``{memory_errors, recovery_action, nvlink_errors}`` of GPU ``index``; ``active_links`` are its active NVLink
    links (``None`` or empty: no link to count errors on).  Failing queries are appended to ``errors``."""
    reasons: list[str] = []
    rows = _ask(source, index, "remapped_rows", errors, reasons)
    ecc = _ask(source, index, "ecc_uncorrected", errors, reasons)
    memory = {
        "remapped_rows": None if rows is None else {
            "correctable": int(rows[0]), "uncorrectable": int(rows[1]), "pending": bool(rows[2]),
            "failure": bool(rows[3])},
        "ecc_uncorrected": None if ecc is None else {"volatile": int(ecc[0]), "aggregate": int(ecc[1])},
        "reasons": reasons,
    }
    action = _ask(source, index, "recovery_action", errors, [])
    links = None
    if active_links:
        counters = _ask(source, index, "nvlink_errors", errors, [], list(active_links))
        links = None if counters is None else nonzero_links(counters)
    return {"memory_errors": memory, "recovery_action": None if action is None else recovery_action_name(int(action)),
            "nvlink_errors": links}
