# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""rdma_test_nodes, whose check of the looped k8s_info results lives in the filter file itself, on a real plan."""

from __future__ import annotations

import copy

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.gpufabric.cluster.plugins.filter.rdma_test_nodes import rdma_test_nodes
from ansible_collections.gpufabric.cluster.plugins.filter.rdma_test_plan import rdma_test_plan


@pytest.fixture
def hostvars(fleet_facts):
    return {name: {"ansible_facts": {"gpufabric": copy.deepcopy(fleet_facts[tree])}}
            for name, tree in (("hgx-a", "hgx_h100"), ("hgx-b", "hgx_h100"), ("tray-1", "gb200_tray"),
                               ("tray-2", "gb200_tray"))}


def node(name, ready=True, **allocatable):
    """A looped k8s_info result for one Node."""
    status = {"conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
              "allocatable": allocatable}
    return {"item": name, "resources": [{"metadata": {"name": name}, "status": status}]}


def test_nodes_ready_with_the_resources_pass(hostvars):
    tests = rdma_test_plan(hostvars, [{"server": "hgx-a", "client": "hgx-b"}], ["mlx5_0"], ["host", "cuda"])
    results = [node("hgx-a", **{"rdma/x": "63", "nvidia.com/gpu": "8"}),
               node("hgx-b", **{"rdma/x": "63", "nvidia.com/gpu": "8"})]
    assert rdma_test_nodes(tests, results, "rdma/x") == {"not_ready": [], "short": []}


def test_nodes_missing_not_ready_or_short_are_named(hostvars):
    tests = rdma_test_plan(hostvars, [{"server": "hgx-a", "client": "hgx-b"}, {"server": "tray-1", "client": "tray-2"}],
                           ["mlx5_0"], ["cuda"])
    results = [node("hgx-a", ready=False, **{"rdma/x": "63", "nvidia.com/gpu": "8"}),
               node("tray-1", **{"nvidia.com/gpu": "4"}),
               node("hgx-b", **{"rdma/x": "1", "nvidia.com/gpu": "2"}),
               {"item": "tray-2", "resources": []}]
    assert rdma_test_nodes(tests, results, "rdma/x") == {
        "not_ready": ["hgx-a", "tray-2"],
        "short": ["tray-1: no rdma/x", "hgx-b: 2 nvidia.com/gpu, 8 needed", "tray-2: no rdma/x"],
    }
    # host memory needs no GPU
    host_tests = rdma_test_plan(hostvars, [{"server": "hgx-a", "client": "hgx-b"}], ["mlx5_0"], ["host"])
    assert rdma_test_nodes(host_tests, [node("hgx-a", **{"rdma/x": "1"}), node("hgx-b", **{"rdma/x": "1"})],
                           "rdma/x") == {"not_ready": [], "short": []}
    with pytest.raises(AnsibleFilterError, match="rdma_test_nodes: each result must be a looped k8s_info result"):
        rdma_test_nodes(tests, [{"resources": []}], "rdma/x")
