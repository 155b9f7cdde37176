# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``gpufabric.cluster.dra_driver_prerequisites`` filter: the DRA driver's prerequisites, checked first.

A thin wrapper over :func:`...plugin_utils.dra_driver_prerequisites.dra_driver_prerequisites`, which holds the
logic.
"""

from __future__ import annotations

import typing as t
from collections.abc import Mapping

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments
from ansible_collections.gpufabric.cluster.plugins.plugin_utils import dra_driver_prerequisites as _logic
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.cluster_roles import ClusterRoleError


@arguments.filter_errors("dra_driver_prerequisites")
def dra_driver_prerequisites(hostvars: Mapping, hosts: t.Sequence[str], cluster: Mapping,
                             settings: Mapping | None = None) -> dict:
    """See the filter documentation."""
    try:
        return _logic.dra_driver_prerequisites(hostvars, hosts, cluster, settings)
    except ClusterRoleError as exc:
        raise AnsibleFilterError(f"dra_driver_prerequisites: {exc}") from None


class FilterModule:
    """The ``dra_driver_prerequisites`` filter."""

    def filters(self) -> dict[str, t.Callable]:
        """Return the filters of this file."""
        return {"dra_driver_prerequisites": dra_driver_prerequisites}
