# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``gpufabric.cluster.compute_domain_placement`` filter: the nodes of a ComputeDomain test.

A thin wrapper over :func:`...plugin_utils.compute_domain_placement.compute_domain_placement`, which holds the logic.
"""

from __future__ import annotations

import typing as t

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments
from ansible_collections.gpufabric.cluster.plugins.plugin_utils import compute_domain_placement as _logic


@arguments.filter_errors("compute_domain_placement")
def compute_domain_placement(nodes_info: t.Any, nodes: t.Any, gpus_per_node: t.Any, clique: t.Any = None,
                             node_names: t.Any = None) -> dict:
    """See the filter documentation."""
    try:
        return _logic.compute_domain_placement(nodes_info, nodes, gpus_per_node, clique, node_names)
    except (arguments.ArgumentError, _logic.PlacementError) as exc:
        raise AnsibleFilterError(f"compute_domain_placement: {exc}") from None


class FilterModule:
    """The ``compute_domain_placement`` filter."""

    def filters(self) -> dict[str, t.Callable]:
        """Return the filters of this file."""
        return {"compute_domain_placement": compute_domain_placement}
