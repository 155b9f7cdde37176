# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``gpufabric.cluster.dcgm_diag_plan`` filter: the nodes and pods of a DCGM diagnostic run.

A thin wrapper over :func:`...plugin_utils.dcgm_diag_plan.dcgm_diag_plan`, which holds the logic.
"""

from __future__ import annotations

import typing as t

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments
from ansible_collections.gpufabric.cluster.plugins.plugin_utils import dcgm_diag_plan as _logic


@arguments.filter_errors("dcgm_diag_plan")
def dcgm_diag_plan(nodes: t.Any, node_names: t.Any = None, name: t.Any = "dcgm-diag",
                   resource: t.Any = _logic.GPU_RESOURCE) -> list[dict]:
    """See the filter documentation."""
    try:
        return _logic.dcgm_diag_plan(nodes, node_names, name, resource)
    except (arguments.ArgumentError, _logic.DcgmDiagPlanError) as exc:
        raise AnsibleFilterError(f"dcgm_diag_plan: {exc}") from None


class FilterModule:
    """The ``dcgm_diag_plan`` filter."""

    def filters(self) -> dict[str, t.Callable]:
        """Return the filters of this file."""
        return {"dcgm_diag_plan": dcgm_diag_plan}
