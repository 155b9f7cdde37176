# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``gpufabric.cluster.gpu_operator_values`` filter: GPU Operator chart values from the host facts.

A thin wrapper over :func:`...plugin_utils.gpu_operator.gpu_operator_values`, which holds the decisions.
"""

from __future__ import annotations

import typing as t
from collections.abc import Mapping

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments, gpu_operator
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.cluster_roles import ClusterRoleError


@arguments.filter_errors("gpu_operator_values")
def gpu_operator_values(hostvars: Mapping, hosts: t.Sequence[str], settings: Mapping | None = None) -> dict:
    """Return ``{values, decisions}`` for the GPU Operator chart; see the filter documentation."""
    try:
        return gpu_operator.gpu_operator_values(hostvars, hosts, settings)
    except ClusterRoleError as exc:
        raise AnsibleFilterError(f"gpu_operator_values: {exc}") from None


class FilterModule:
    """The GPU Operator values filter."""

    def filters(self) -> dict[str, t.Callable]:
        """Return the filters of this file."""
        return {"gpu_operator_values": gpu_operator_values}
