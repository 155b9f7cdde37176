# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``gpufabric.cluster.rdma_test_plan`` filter: GPUDirect RDMA bandwidth tests from the hosts' facts.

A thin wrapper over :func:`...plugin_utils.rdma_test_plan.rdma_test_plan`.
"""

from __future__ import annotations

import typing as t

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments
from ansible_collections.gpufabric.cluster.plugins.plugin_utils import rdma_test_plan as plan


@arguments.filter_errors("rdma_test_plan")
def rdma_test_plan(hostvars: t.Any, pairs: t.Any, rails: t.Any, memory: t.Any = ("host", "cuda"),
                   node_hosts: t.Any = None) -> list[dict]:
    """One test per node pair, rail and memory mode; see the filter documentation."""
    try:
        return plan.rdma_test_plan(hostvars, pairs, rails, memory, node_hosts)
    except plan.RdmaTestPlanError as exc:
        raise AnsibleFilterError(f"rdma_test_plan: {exc}") from None


class FilterModule:
    """The RDMA test planner."""

    def filters(self) -> dict[str, t.Callable]:
        """Return the filters of this file."""
        return {"rdma_test_plan": rdma_test_plan}
