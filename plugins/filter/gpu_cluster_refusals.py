# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``gpufabric.cluster.gpu_cluster_refusals`` filter: why the GPU Operator's GPUCluster path cannot be taken.

A thin wrapper over :func:`...plugin_utils.gpu_operator.gpu_cluster_refusals`, which holds the logic.
"""

from __future__ import annotations

import typing as t
from collections.abc import Mapping

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments, gpu_operator


@arguments.filter_errors("gpu_cluster_refusals")
def gpu_cluster_refusals(cluster: Mapping, site: Mapping) -> list[str]:
    """Return the reasons against the GPUCluster path (empty: none); see the filter documentation."""
    try:
        return gpu_operator.gpu_cluster_refusals(cluster, site)
    except arguments.ArgumentError as exc:
        raise AnsibleFilterError(f"gpu_cluster_refusals: {exc}") from None


class FilterModule:
    """The GPUCluster refusals filter."""

    def filters(self) -> dict[str, t.Callable]:
        """Return the filters of this file."""
        return {"gpu_cluster_refusals": gpu_cluster_refusals}
