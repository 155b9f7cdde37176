# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``gpufabric.cluster.nccl_rdma_plan`` filter: the RDMA shape of the nccl-tests job from the fabric facts.

A thin wrapper over :func:`...plugin_utils.nccl_rdma_plan.nccl_rdma_plan`, which holds the logic.
"""

from __future__ import annotations

import typing as t

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments
from ansible_collections.gpufabric.cluster.plugins.plugin_utils import nccl_rdma_plan as _logic


@arguments.filter_errors("nccl_rdma_plan")
def nccl_rdma_plan(hostvars: t.Any, nodes: t.Any, node_hosts: t.Any = None, rails: t.Any = None,
                   gpus_per_node: t.Any = 0, host_network: t.Any = False) -> dict:
    """See the filter documentation."""
    try:
        return _logic.nccl_rdma_plan(hostvars, nodes, node_hosts=node_hosts, rails=rails,
                                     gpus_per_node=gpus_per_node, host_network=host_network)
    except (arguments.ArgumentError, _logic.NcclRdmaPlanError) as exc:
        raise AnsibleFilterError(f"nccl_rdma_plan: {exc}") from None


class FilterModule:
    """The ``nccl_rdma_plan`` filter."""

    def filters(self) -> dict[str, t.Callable]:
        """Return the filters of this file."""
        return {"nccl_rdma_plan": nccl_rdma_plan}
