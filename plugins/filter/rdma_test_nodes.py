# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``gpufabric.cluster.rdma_test_nodes`` filter: what keeps the nodes of an RDMA test plan from running it.

A thin wrapper over :func:`...plugin_utils.rdma_test_plan.test_nodes`; it only turns the registered results of
``kubernetes.core.k8s_info`` (one per node, the node name in ``item``) into ``{node: Node or None}``.
"""

from __future__ import annotations

import typing as t
from collections.abc import Mapping

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments
from ansible_collections.gpufabric.cluster.plugins.plugin_utils import rdma_test_plan as plan


@arguments.filter_errors("rdma_test_nodes")
def rdma_test_nodes(tests: t.Any, results: t.Any, resource: t.Any) -> dict[str, list[str]]:
    """Return ``{not_ready, short}`` for the nodes of ``tests``; see the filter documentation."""
    if not isinstance(tests, list) or not isinstance(results, list):
        raise AnsibleFilterError("rdma_test_nodes: expected the plan of rdma_test_plan and the k8s_info results")
    try:
        resource = arguments.text("resource", resource)
    except arguments.ArgumentError as exc:
        raise AnsibleFilterError(f"rdma_test_nodes: {exc}") from None
    if not all(isinstance(test, Mapping) and all(isinstance(test.get(side), Mapping) and isinstance(
            test[side].get("node"), str) for side in ("server", "client")) for test in tests):
        raise AnsibleFilterError("rdma_test_nodes: _input must be the plan of rdma_test_plan (tests with a server "
                                 "and a client node)")
    nodes = {}
    for result in results:
        if not isinstance(result, Mapping) or "item" not in result:
            raise AnsibleFilterError("rdma_test_nodes: each result must be a looped k8s_info result with its item")
        found = result.get("resources") or []
        nodes[str(result["item"])] = found[0] if found else None
    return plan.test_nodes(tests, nodes, resource)


class FilterModule:
    """The RDMA test node check."""

    def filters(self) -> dict[str, t.Callable]:
        """Return the filters of this file."""
        return {"rdma_test_nodes": rdma_test_nodes}
