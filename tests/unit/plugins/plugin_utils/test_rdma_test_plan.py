# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""rdma_test_plan on the facts the real collectors gather from the recorded host trees."""

from __future__ import annotations

import copy

import pytest
from ansible.errors import AnsibleFilterError
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.gpufabric.cluster.plugins.filter.rdma_test_plan import rdma_test_plan


@pytest.fixture
def hostvars(fleet_facts):
    return {name: {"ansible_facts": {"gpufabric": copy.deepcopy(fleet_facts[tree])}}
            for name, tree in (("hgx-a", "hgx_h100"), ("hgx-b", "hgx_h100"), ("tray-1", "gb200_tray"),
                               ("tray-2", "gb200_tray"), ("broken", "broken_node"), ("plain", "no_nvidia"))}


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


def test_two_nodes_of_one_inventory_host_are_refused(hostvars):
    """Two node names mapped to the same host would measure one NIC against itself, judged as if between hosts."""
    with pytest.raises(AnsibleFilterError, match=r"^rdma_test_plan: ") as caught:
        rdma_test_plan(hostvars, [{"server": "node-1", "client": "node-2"}], ["mlx5_0"], ["host"],
                       node_hosts={"node-1": "hgx-a", "node-2": "hgx-a"})
    assert ("validate_rdma_pairs[0]: server node node-1 and client node node-2 are the same host hgx-a "
            "(validate_rdma_node_hosts)") in str(caught.value)


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


def _gpus(tests):
    return [(test["rail"], test["server"]["gpu_index"], test["server"]["gpu_reason"]) for test in tests]


def test_rails_tested_at_the_same_time_never_share_a_gpu(hostvars):
    # mlx5_0 and mlx5_1 of a GB200 tray both sit on the NUMA node of GPUs 0 and 1, behind no GPU's switch
    tests = rdma_test_plan(hostvars, [{"server": "tray-1", "client": "tray-2"}], ["mlx5_0", "mlx5_1"],
                           ["cuda_dmabuf"])
    assert _gpus(tests) == [("mlx5_0", 0, "same NUMA node"), ("mlx5_1", 1, "same NUMA node")]
    assert [test["client"]["gpu_index"] for test in tests] == [0, 1]
    # a third rail on that NUMA node takes a free GPU elsewhere rather than share
    tests = rdma_test_plan(hostvars, [{"server": "tray-1", "client": "tray-2"}], ["mlx5_0", "mlx5_1", "mlx5_4"],
                           ["cuda_dmabuf"])
    assert _gpus(tests)[2] == ("mlx5_4", 2, "the GPUs near the port are taken, a free GPU")


def test_a_rail_without_a_gpu_behind_its_switch_does_not_take_another_rail_s(hostvars):
    tests = rdma_test_plan(hostvars, [{"server": "hgx-a", "client": "hgx-b"}], ["mlx5_8", "mlx5_4"], ["cuda"])
    assert _gpus(tests) == [("mlx5_8", 5, "same NUMA node"), ("mlx5_4", 4, "same PCIe switch")]


def test_only_more_rails_than_gpus_share_and_say_so(hostvars):
    rails = ["mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3", "mlx5_4"]
    tests = rdma_test_plan(hostvars, [{"server": "tray-1", "client": "tray-2"}], rails, ["cuda"])
    assert sorted(index for _rail, index, _reason in _gpus(tests)[:4]) == [0, 1, 2, 3]
    assert _gpus(tests)[4] == ("mlx5_4", 0, "same NUMA node, shared with mlx5_0 (more rails than GPUs)")


@pytest.mark.parametrize(("pairs", "rails", "memory", "node_hosts", "message"), [
    ([{"server": "hgx-a", "client": "hgx-b"}], "mlx5_0", ["host"], None,
     "validate_rdma_rails must be a non-empty list of RDMA device names, got 'mlx5_0'"),
    ([{"server": "hgx-a", "client": "hgx-b"}], ["mlx5_0", "mlx5_0"], ["host"], None,
     "validate_rdma_rails names 'mlx5_0' twice"),
    ([{"server": "hgx-a", "client": "hgx-b"}], ["mlx5_0"], "host", None,
     "validate_rdma_memory must be a list of host, cuda, cuda_dmabuf, got 'host'"),
    ([{"server": "hgx-a", "client": "hgx-b"}], ["mlx5_0"], 5, None,
     "validate_rdma_memory must be a list of host, cuda, cuda_dmabuf, got 5"),
    ([{"server": "hgx-a", "client": 7}], ["mlx5_0"], ["host"], None,
     "validate_rdma_pairs must be a non-empty list of {server, client} node names, got [{'server': 'hgx-a', "
     "'client': 7}]"),
    ([{"server": "hgx-a", "client": "hgx-b"}], ["mlx5_0"], ["host"], ["hgx-a"],
     "validate_rdma_node_hosts must be a mapping of node names to inventory hosts, got ['hgx-a']"),
])
def test_wrong_types_are_refused_naming_the_variable(hostvars, pairs, rails, memory, node_hosts, message):
    with pytest.raises(AnsibleFilterError) as caught:
        rdma_test_plan(hostvars, pairs, rails, memory, node_hosts=node_hosts)
    assert str(caught.value) == f"rdma_test_plan: {message}"


_PORT = st.fixed_dictionaries({
    "rdma_device": st.sampled_from(["mlx5_0", "mlx5_1", "mlx5_2"]),
    "rate_gbps": st.one_of(st.none(), st.sampled_from([0, 100, 400, "400"])),
    "gpus_same_switch": st.lists(st.sampled_from(["a", "b", "c", "z"]), max_size=2),
    "gpus_same_numa": st.lists(st.sampled_from(["a", "b", "c", "z"]), max_size=3),
})
_HOST = st.fixed_dictionaries({"ansible_facts": st.fixed_dictionaries({"gpufabric": st.fixed_dictionaries({
    "connectx": st.fixed_dictionaries({"ports": st.lists(_PORT, max_size=3)}),
    "gpu": st.fixed_dictionaries({"gpus": st.lists(st.fixed_dictionaries({
        "index": st.integers(0, 3), "pci_address": st.sampled_from(["a", "b", "c"])}), max_size=3)}),
})})})


@settings(max_examples=100, deadline=None)
@given(_HOST, _HOST, st.lists(st.sampled_from(["mlx5_0", "mlx5_1", "mlx5_2", ""]), max_size=3),
       st.lists(st.sampled_from(["host", "cuda", "cuda_dmabuf", "gpu"]), max_size=2))
def test_any_facts_give_a_plan_or_a_filter_error(server, client, rails, memory):
    try:
        tests = rdma_test_plan({"a": server, "b": client}, [{"server": "a", "client": "b"}], rails, memory)
    except AnsibleFilterError as exc:
        assert str(exc).startswith("rdma_test_plan: ")
        return
    assert len(tests) == len(rails) * len(memory)
    for mode in memory:
        for role, facts in (("server", server), ("client", client)):
            chosen = [test[role]["gpu_index"] for test in tests if test["memory"] == mode]
            gpus = {gpu["index"] for gpu in facts["ansible_facts"]["gpufabric"]["gpu"]["gpus"]}
            if mode != "host" and len(gpus) >= len(rails):
                assert len(set(chosen)) == len(chosen)
