# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Reading Kubernetes Node objects (as ``kubernetes.core.k8s_info`` returns them): readiness and allocatable."""

from __future__ import annotations

import typing as t
from collections.abc import Mapping

GPU_RESOURCE = "nvidia.com/gpu"


def _status(node: t.Any) -> Mapping:
    status = node.get("status") if isinstance(node, Mapping) else None
    return status if isinstance(status, Mapping) else {}


def node_ready(node: Mapping) -> bool:
    """Whether the Node's ``Ready`` condition is ``True``."""
    conditions = _status(node).get("conditions")
    return isinstance(conditions, list) and any(
        isinstance(item, Mapping) and item.get("type") == "Ready" and item.get("status") == "True"
        for item in conditions)


def allocatable(node: Mapping, resource: str) -> int:
    """How many of ``resource`` the Node can allocate (0 when absent or not a count)."""
    found = _status(node).get("allocatable")
    value: t.Any = (found.get(resource) if isinstance(found, Mapping) else None) or "0"
    try:
        return int(str(value))
    except ValueError:
        return 0
