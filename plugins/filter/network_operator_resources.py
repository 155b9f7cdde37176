# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``gpufabric.cluster.network_operator_resources`` filter: NicClusterPolicy, networks and IPPools.

A thin wrapper over :func:`...plugin_utils.network_operator.network_operator_resources`, which holds the logic.
"""

from __future__ import annotations

import typing as t
from collections.abc import Mapping

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments, network_operator
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.cluster_roles import ClusterRoleError


@arguments.filter_errors("network_operator_resources")
def network_operator_resources(hostvars: Mapping, hosts: t.Sequence[str], settings: Mapping | None = None) -> dict:
    """Return ``{policy, networks, ippools, rails, decisions}``; see the filter documentation."""
    try:
        return network_operator.network_operator_resources(hostvars, hosts, settings)
    except ClusterRoleError as exc:
        raise AnsibleFilterError(f"network_operator: {exc}") from None


class FilterModule:
    """The network operator resources filter."""

    def filters(self) -> dict[str, t.Callable]:
        """Return the filters of this file."""
        return {"network_operator_resources": network_operator_resources}
