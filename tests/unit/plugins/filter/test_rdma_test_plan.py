# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""rdma_test_plan on the facts the real collectors gather from the recorded host trees."""

from __future__ import annotations

import copy

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.gpufabric.cluster.plugins.filter.rdma_test_plan import rdma_test_plan


@pytest.fixture
def hostvars(fleet_facts):
    return {name: {"ansible_facts": {"gpufabric": copy.deepcopy(fleet_facts[tree])}}
            for name, tree in (("hgx-a", "hgx_h100"), ("hgx-b", "hgx_h100"), ("tray-1", "gb200_tray"),
                               ("tray-2", "gb200_tray"), ("broken", "broken_node"), ("plain", "no_nvidia"))}


def test_filter_is_registered():
    from ansible_collections.gpufabric.cluster.plugins.filter.rdma_test_plan import FilterModule
    assert FilterModule().filters()["rdma_test_plan"] is rdma_test_plan


def test_hgx_rails_use_the_gpu_behind_the_same_pcie_switch(hostvars):
    tests = rdma_test_plan(hostvars, [{"server": "hgx-a", "client": "hgx-b"}], ["mlx5_0", "mlx5_1"], ["host", "cuda"])
    assert [test["name"] for test in tests] == ["0-mlx5-0-host", "0-mlx5-0-cuda", "0-mlx5-1-host", "0-mlx5-1-cuda"]
    host, cuda = tests[0], tests[1]
    assert host["server"]["gpu_index"] is None and host["rate_gbps"] == 400
    assert host["server"]["gpu_count"] == 8
    assert (cuda["server"]["gpu_index"], cuda["server"]["gpu_reason"]) == (0, "same PCIe switch")
    assert tests[3]["client"]["gpu_index"] == 1
    assert cuda["server"]["link_layer"] == "InfiniBand" and cuda["pair"] == "hgx-a -> hgx-b"


def test_gb200_rails_fall_back_to_the_numa_node_and_the_slower_side_sets_the_rate(hostvars):
    hostvars["tray-2"]["ansible_facts"]["gpufabric"]["connectx"]["ports"][2]["rate_gbps"] = 200
    tests = rdma_test_plan(hostvars, [{"server": "tray-1", "client": "tray-2"}], ["mlx5_2"], ["cuda_dmabuf"])
    [test] = tests
    assert (test["server"]["gpu_index"], test["server"]["gpu_reason"]) == (2, "same NUMA node")
    assert test["rate_gbps"] == 200


def test_node_names_map_to_inventory_hosts(hostvars):
    [test] = rdma_test_plan(hostvars, [{"server": "node-1", "client": "node-2"}], ["mlx5_0"], ["host"],
                            node_hosts={"node-1": "hgx-a", "node-2": "hgx-b"})
    assert (test["server"]["host"], test["server"]["node"]) == ("hgx-a", "node-1")


@pytest.mark.parametrize(("pairs", "rails", "memory", "message"), [
    ([{"server": "hgx-a", "client": "plain"}], ["mlx5_0"], ["host"],
     "host plain (node plain) has no RDMA device mlx5_0 (validate_rdma_rails); it has: none"),
    ([{"server": "hgx-a", "client": "tray-1"}], ["mlx5_9"], ["host"],
     "host tray-1 (node tray-1) has no RDMA device mlx5_9 (validate_rdma_rails); it has: mlx5_0, mlx5_1, mlx5_2"),
    ([{"server": "hgx-a", "client": "ghost"}], ["mlx5_0"], ["host"],
     "node ghost: host ghost is not in the inventory (set validate_rdma_node_hosts)"),
    ([{"server": "hgx-a", "client": "hgx-a"}], ["mlx5_0"], ["host"],
     "validate_rdma_pairs[0]: server and client are the same node hgx-a"),
    ([], ["mlx5_0"], ["host"], "validate_rdma_pairs must be a non-empty list"),
    ([{"server": "hgx-a"}], ["mlx5_0"], ["host"], "validate_rdma_pairs must be a non-empty list"),
    ([{"server": "hgx-a", "client": "hgx-b"}], [], ["host"], "validate_rdma_rails must be a non-empty list"),
    ([{"server": "hgx-a", "client": "hgx-b"}], ["mlx5_0"], ["gpu"], "validate_rdma_memory must be a list of host"),
])
def test_bad_input_names_the_variable_and_host(hostvars, pairs, rails, memory, message):
    with pytest.raises(AnsibleFilterError, match=r"^rdma_test_plan: ") as caught:
        rdma_test_plan(hostvars, pairs, rails, memory)
    assert message in str(caught.value)


def test_a_port_without_a_known_rate_is_refused(hostvars):
    hostvars["hgx-b"]["ansible_facts"]["gpufabric"]["connectx"]["ports"][0].update(rate_gbps=None, rate=None)
    with pytest.raises(AnsibleFilterError, match=r"host hgx-b \(node hgx-b\) port mlx5_0/1: the line rate is unknown"):
        rdma_test_plan(hostvars, [{"server": "hgx-a", "client": "hgx-b"}], ["mlx5_0"], ["host"])


def test_a_host_without_facts_is_refused(hostvars):
    hostvars["hgx-b"] = {"ansible_facts": {}}
    with pytest.raises(AnsibleFilterError, match=r"has no ansible_facts\['gpufabric'\] with gpu and connectx"):
        rdma_test_plan(hostvars, [{"server": "hgx-a", "client": "hgx-b"}], ["mlx5_0"], ["host"])


def node(name, ready=True, **allocatable):
    """A looped k8s_info result for one Node."""
    status = {"conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
              "allocatable": allocatable}
    return {"item": name, "resources": [{"metadata": {"name": name}, "status": status}]}


def test_nodes_ready_with_the_resources_pass(hostvars):
    from ansible_collections.gpufabric.cluster.plugins.filter.rdma_test_nodes import rdma_test_nodes

    tests = rdma_test_plan(hostvars, [{"server": "hgx-a", "client": "hgx-b"}], ["mlx5_0"], ["host", "cuda"])
    results = [node("hgx-a", **{"rdma/x": "63", "nvidia.com/gpu": "8"}),
               node("hgx-b", **{"rdma/x": "63", "nvidia.com/gpu": "8"})]
    assert rdma_test_nodes(tests, results, "rdma/x") == {"not_ready": [], "short": []}


def test_nodes_missing_not_ready_or_short_are_named(hostvars):
    from ansible_collections.gpufabric.cluster.plugins.filter.rdma_test_nodes import rdma_test_nodes

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
