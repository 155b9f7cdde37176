# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``gpufabric.cluster.dra_driver_upgrade`` filter: how the installed DRA driver release moves to the chosen chart.

A thin wrapper over :func:`...plugin_utils.dra_driver_chart.upgrade_plan`, which holds the logic.
"""

from __future__ import annotations

import typing as t
from collections.abc import Mapping

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments
from ansible_collections.gpufabric.cluster.plugins.plugin_utils import dra_driver_chart as _logic
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.cluster_roles import ClusterRoleError


@arguments.filter_errors("dra_driver_upgrade")
def dra_driver_upgrade(installed: Mapping | None, target: Mapping, allow_downgrade: t.Any = False) -> dict:
    """See the filter documentation."""
    try:
        return _logic.upgrade_plan(installed, target, allow_downgrade)
    except ClusterRoleError as exc:
        raise AnsibleFilterError(f"dra_driver_upgrade: {exc}") from None


class FilterModule:
    """The ``dra_driver_upgrade`` filter."""

    def filters(self) -> dict[str, t.Callable]:
        """Return the filters of this file."""
        return {"dra_driver_upgrade": dra_driver_upgrade}
