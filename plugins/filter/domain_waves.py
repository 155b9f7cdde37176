# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``gpufabric.cluster.domain_waves`` filter: a day-2 change one NVLink domain at a time, canary first.

A thin wrapper over :func:`...plugin_utils.domain_waves.plan_waves`, which holds the logic.
"""

from __future__ import annotations

import typing as t

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments
from ansible_collections.gpufabric.cluster.plugins.plugin_utils import domain_waves as _logic


@arguments.filter_errors("domain_waves")
def domain_waves(hostvars: t.Any, changing: t.Any, run: t.Any, fleet: t.Any, domains_at_a_time: t.Any = 1,
                 serial: t.Any = 1, fleet_variable: str = "fleet", nodes: t.Any = None,
                 nodes_variable: str = "nodes", changes: t.Any = None) -> list[dict]:
    """Return the waves of the change; see the filter documentation."""
    try:
        return _logic.plan_waves(hostvars, changing, run, fleet, domains_at_a_time, serial, fleet_variable, nodes,
                                 nodes_variable, changes)
    except (arguments.ArgumentError, _logic.DomainWaveError) as exc:
        raise AnsibleFilterError(f"domain_waves: {exc}") from None


class FilterModule:
    """The day-2 change plan filter."""

    def filters(self) -> dict[str, t.Callable]:
        """Return the filters of this file."""
        return {"domain_waves": domain_waves}
