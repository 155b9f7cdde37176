# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``gpufabric.cluster.dra_driver_values`` filter: nvidia-dra-driver-gpu chart values.

A thin wrapper over :func:`...plugin_utils.dra_driver_values.dra_driver_values`, which holds the logic.
"""

from __future__ import annotations

import typing as t
from collections.abc import Mapping

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments
from ansible_collections.gpufabric.cluster.plugins.plugin_utils import dra_driver_values as _logic
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.cluster_roles import ClusterRoleError


@arguments.filter_errors("dra_driver_values")
def dra_driver_values(gpu_operator: Mapping | None, settings: Mapping | None = None) -> dict:
    """See the filter documentation."""
    try:
        return _logic.dra_driver_values(gpu_operator, settings)
    except ClusterRoleError as exc:
        raise AnsibleFilterError(f"dra_driver_values: {exc}") from None


class FilterModule:
    """The ``dra_driver_values`` filter."""

    def filters(self) -> dict[str, t.Callable]:
        """Return the filters of this file."""
        return {"dra_driver_values": dra_driver_values}
