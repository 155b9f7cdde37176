# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``gpufabric.cluster.rail_plan`` filter: RDMA rails, addresses, MTU and routing tables from hostvars.

A thin wrapper over :func:`...plugin_utils.rail_plan.derive_rail_plan`, which holds the logic.
"""

from __future__ import annotations

import typing as t
from collections.abc import Mapping

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufabric.cluster.plugins.plugin_utils.rail_plan import RailPlanError, derive_rail_plan


def rail_plan(hostvars: Mapping, hosts: t.Sequence[str], input_var: str = "__rdma_network_input",
              labels: Mapping[str, str] | None = None, all_hosts: t.Sequence[str] | None = None) -> dict[str, dict]:
    """Return ``{host: {host, host_index, rails, skipped}}`` for ``hosts``; see the filter documentation."""
    if isinstance(hosts, str) or not isinstance(hosts, (list, tuple)):
        raise AnsibleFilterError(f"rail_plan: hosts must be a list of host names, got {type(hosts).__name__}")
    if labels is not None and not isinstance(labels, Mapping):
        raise AnsibleFilterError("rail_plan: labels must be a mapping of setting name to variable name")
    try:
        return derive_rail_plan(hostvars, [str(host) for host in hosts], input_var=input_var, labels=labels,
                                all_hosts=[str(host) for host in all_hosts or []])
    except RailPlanError as exc:
        raise AnsibleFilterError(f"rail_plan: {exc}") from None


class FilterModule:
    """The RDMA rail plan filter."""

    def filters(self) -> dict[str, t.Callable]:
        """Return the filters of this file."""
        return {"rail_plan": rail_plan}
