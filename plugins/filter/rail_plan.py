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

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.imex_domains import ImexDomainError
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.rail_plan import (
    DEFAULT_LABELS,
    RailPlanError,
    derive_rail_plan,
)


def _host_names(name: str, value: t.Any) -> list[str]:
    names = arguments.sequence(name, value)
    for item in names:
        if not isinstance(item, str) or not item:
            raise arguments.ArgumentError(f"{name} must be a list of host names, got the item {item!r}")
    return names


def _labels(value: t.Any) -> dict[str, str] | None:
    labels = arguments.optional(arguments.mapping, "labels", value)
    if labels is None:
        return None
    unknown = sorted(str(key) for key in labels if key not in DEFAULT_LABELS)
    if unknown:
        raise arguments.ArgumentError(f"labels: unknown setting(s) {', '.join(unknown)}; known: "
                                      f"{', '.join(DEFAULT_LABELS)}")
    return {key: arguments.text(f"labels.{key}", label) for key, label in labels.items()}


@arguments.filter_errors("rail_plan")
def rail_plan(hostvars: Mapping, hosts: t.Sequence[str], input_var: str = "__rdma_network_input",
              labels: Mapping[str, str] | None = None, fleet: t.Sequence[str] | None = None,
              outside: Mapping | None = None) -> dict[str, dict]:
    """Return ``{host: {host, host_index, host_index_source, rails, skipped, record, moved}}`` for ``hosts``; see the
    filter documentation."""
    try:
        return derive_rail_plan(arguments.mapping("hostvars (the input)", hostvars), _host_names("hosts", hosts),
                                input_var=arguments.text("input_var", input_var), labels=_labels(labels),
                                fleet=None if fleet is None else _host_names("fleet", fleet), outside=outside)
    except (arguments.ArgumentError, RailPlanError, ImexDomainError) as exc:
        raise AnsibleFilterError(f"rail_plan: {exc}") from None


class FilterModule:
    """The RDMA rail plan filter."""

    def filters(self) -> dict[str, t.Callable]:
        """Return the filters of this file."""
        return {"rail_plan": rail_plan}
