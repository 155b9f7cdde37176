# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Controller-side reading of a host's DMA-BUF verdict (``ansible_facts['gpufabric']['peermem']['dma_buf']``).

The host probe (:mod:`...module_utils.peermem`) names every unmet requirement as ``{code, message}``; the
controller decides on the codes, and shows the messages to people.
"""

from __future__ import annotations

import typing as t
from collections.abc import Mapping

from ansible_collections.gpufabric.cluster.plugins.module_utils.peermem import (
    KERNEL_MODULE_UNKNOWN,
    NO_DRIVER,
    PROPRIETARY_MODULES,
)

# The code of a verdict without reasons (facts from elsewhere, or none gathered).
UNKNOWN = "unknown"
# Reasons that only concern a host-installed driver: a driver the GPU Operator installs (open kernel modules)
# does not have them.
HOST_DRIVER_CODES = frozenset((NO_DRIVER, PROPRIETARY_MODULES, KERNEL_MODULE_UNKNOWN))


def reasons_of(dma_buf: Mapping | None) -> list[dict[str, t.Any]]:
    """The ``{code, message}`` reasons of an unsupported verdict; one ``unknown`` reason when it names none."""
    dma_buf = dma_buf or {}
    if dma_buf.get("supported"):
        return []
    found = []
    for item in dma_buf.get("reasons") or []:
        if isinstance(item, Mapping):
            found.append({"code": item.get("code") or UNKNOWN, "message": str(item.get("message") or item.get("code"))})
        else:  # a bare message, as facts cached before the codes carried them
            found.append({"code": UNKNOWN, "message": str(item)})
    return found or [{"code": UNKNOWN, "message": "DMA-BUF support unknown"}]


def blocking_messages(dma_buf: Mapping | None, operator_driver: bool = False) -> list[str]:
    """The messages of the reasons that keep DMA-BUF away; ``operator_driver`` drops the host-driver ones."""
    return [reason["message"] for reason in reasons_of(dma_buf)
            if not (operator_driver and reason["code"] in HOST_DRIVER_CODES)]
