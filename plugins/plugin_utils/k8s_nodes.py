# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Reading Kubernetes Node objects (as ``kubernetes.core.k8s_info`` returns them): readiness and allocatable."""

from __future__ import annotations

import typing as t
from collections.abc import Mapping

GPU_RESOURCE = "nvidia.com/gpu"


def node_ready(node: Mapping) -> bool:
    """Whether the Node's ``Ready`` condition is ``True``."""
    conditions = (node.get("status") or {}).get("conditions") or []
    return any(item.get("type") == "Ready" and item.get("status") == "True" for item in conditions)


def allocatable(node: Mapping, resource: str) -> int:
    """How many of ``resource`` the Node can allocate (0 when absent or not a count)."""
    value: t.Any = ((node.get("status") or {}).get("allocatable") or {}).get(resource) or "0"
    try:
        return int(str(value))
    except ValueError:
        return 0
