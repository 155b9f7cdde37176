# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""nccl_rdma_plan on the facts the real collectors gather from the recorded host trees, and wrong input."""

from __future__ import annotations

import copy

import pytest
from ansible.errors import AnsibleFilterError
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.gpufabric.cluster.plugins.filter.nccl_rdma_plan import nccl_rdma_plan


@pytest.fixture
def hostvars(fleet_facts):
    return {name: {"ansible_facts": {"gpufabric": copy.deepcopy(fleet_facts[tree])}}
            for name, tree in (("hgx-a", "hgx_h100"), ("hgx-b", "hgx_h100"), ("tray-1", "gb200_tray"),
                               ("tray-2", "gb200_tray"), ("plain", "no_nvidia"))}


def _facts(hostvars, host):
    return hostvars[host]["ansible_facts"]["gpufabric"]


def test_hgx_pair_uses_the_eight_infiniband_rails_and_dma_buf(hostvars):
    plan = nccl_rdma_plan(hostvars, ["hgx-a", "hgx-b"], gpus_per_node=0)
    assert plan["env"] == {"NCCL_IB_HCA": "=" + ",".join(f"mlx5_{index}:1" for index in range(8)),
                           "NCCL_SOCKET_IFNAME": "eth0", "NCCL_DMABUF_ENABLE": "1"}
    assert (plan["nics"], plan["rate_gbps"], plan["link_layer"]) == (8, 400, "InfiniBand")
    assert (plan["gpus_per_node"], plan["np"], plan["gpudirect"]) == (8, 16, "dma_buf")
    assert plan["threshold_facts"] == {"shape": "rdma", "nic_rate_gbps": 400, "nics": 8}
    assert plan["hosts"] == {"hgx-a": "hgx-a", "hgx-b": "hgx-b"} and plan["gpudirect_not_ready"] == []
    assert [rail["netdev"] for rail in plan["rails"]][:2] == ["ibp24s0", "ibp64s0"]


def test_named_rails_host_network_and_node_hosts(hostvars):
    plan = nccl_rdma_plan(hostvars, ["node-1", "node-2"], node_hosts={"node-1": "tray-1", "node-2": "tray-2"},
                          rails=["mlx5_0", "mlx5_1:1"], gpus_per_node=2, host_network=True)
    assert plan["env"]["NCCL_IB_HCA"] == "=mlx5_0:1,mlx5_1:1"
    assert plan["env"]["NCCL_SOCKET_IFNAME"] == "=ibP2p3s0,ibp3s0"
    assert (plan["np"], plan["hosts"]["node-1"]) == (4, "tray-1")


def test_the_ethernet_rail_alone_when_asked(hostvars):
    plan = nccl_rdma_plan(hostvars, ["tray-1", "tray-2"], rails=["mlx5_4"])
    assert (plan["link_layer"], plan["rate_gbps"], plan["nics"]) == ("Ethernet", 200, 1)


def test_slowest_side_sets_the_rate_and_a_port_down_leaves_the_rails(hostvars):
    _facts(hostvars, "tray-2")["connectx"]["ports"][1]["rate_gbps"] = 200
    _facts(hostvars, "tray-2")["connectx"]["ports"][3]["state"] = "DOWN"
    plan = nccl_rdma_plan(hostvars, ["tray-1", "tray-2"])
    assert plan["env"]["NCCL_IB_HCA"] == "=mlx5_0:1,mlx5_1:1,mlx5_2:1"
    assert plan["rate_gbps"] == 200


@pytest.mark.parametrize(("method", "peermem", "expected", "env"), [
    ("nvidia_peermem", True, "nvidia_peermem", {"NCCL_DMABUF_ENABLE": "0"}),
    (None, False, "off", {"NCCL_NET_GDR_LEVEL": "LOC"}),
])
def test_gpudirect_mode_is_what_every_node_supports(hostvars, method, peermem, expected, env):
    for host in ("hgx-a", "hgx-b"):
        _facts(hostvars, host)["peermem"]["nvidia_peermem"]["loaded"] = peermem
    _facts(hostvars, "hgx-b")["peermem"]["gpudirect_rdma"] = {"ready": method is not None, "method": method}
    plan = nccl_rdma_plan(hostvars, ["hgx-a", "hgx-b"])
    assert plan["gpudirect"] == expected
    assert {key: plan["env"][key] for key in env} == env
    assert plan["gpudirect_not_ready"] == ([] if method else ["hgx-b"])


@pytest.mark.parametrize(("args", "kwargs", "message"), [
    (["hgx-a"], {}, "nodes must list two or more node names"),
    (["hgx-a", "hgx-a"], {}, "nodes names 'hgx-a' twice"),
    ("hgx-a,hgx-b", {}, "nodes must be a list"),
    (["hgx-a", "ghost"], {}, "node ghost: host ghost is not in the inventory (set validate_nccl_node_hosts)"),
    (["hgx-a", "plain"], {}, "host plain (node plain) has no ACTIVE ConnectX port with an RDMA device"),
    (["hgx-a", "tray-1"], {"rails": ["mlx5_7"]}, "host tray-1 (node tray-1) has no ACTIVE RDMA port mlx5_7"),
    (["hgx-a", "hgx-b"], {"gpus_per_node": 9}, "9 GPUs per node asked, more than these nodes have: hgx-a (8)"),
    (["hgx-a", "hgx-b"], {"gpus_per_node": "4"}, "gpus_per_node must be 0 or a positive whole number"),
    (["hgx-a", "hgx-b"], {"gpus_per_node": True}, "gpus_per_node must be 0 or a positive whole number"),
    (["hgx-a", "hgx-b"], {"rails": "mlx5_0"}, "rails must be a list"),
    (["hgx-a", "hgx-b"], {"rails": ["mlx5_0", "mlx5_0"]}, "rails must list distinct RDMA device names"),
    (["hgx-a", "hgx-b"], {"host_network": "maybe"}, "host_network"),
    (["hgx-a", "hgx-b"], {"node_hosts": ["hgx-a"]}, "node_hosts must be a mapping"),
    (["node-1", "hgx-b", "node-2"], {"node_hosts": {"node-1": "hgx-a", "node-2": "hgx-a"}},
     "nodes node-1, node-2 are the same host hgx-a (validate_nccl_node_hosts)"),
])
def test_refusals_name_the_filter_and_the_cause(hostvars, args, kwargs, message):
    with pytest.raises(AnsibleFilterError, match=r"^nccl_rdma_plan: ") as error:
        nccl_rdma_plan(hostvars, args, **kwargs)
    assert message in str(error.value)


def test_string_booleans_are_converted(hostvars):
    assert nccl_rdma_plan(hostvars, ["tray-1", "tray-2"], host_network="yes")["env"]["NCCL_SOCKET_IFNAME"] != "eth0"
    assert nccl_rdma_plan(hostvars, ["tray-1", "tray-2"], host_network="false")["env"]["NCCL_SOCKET_IFNAME"] == "eth0"


def test_facts_not_gathered_and_unknown_rate(hostvars):
    del _facts(hostvars, "tray-2")["peermem"]
    with pytest.raises(AnsibleFilterError, match=r"host tray-2 .* gather them with gpufabric.cluster.fabric_facts"):
        nccl_rdma_plan(hostvars, ["tray-1", "tray-2"])
    _facts(hostvars, "hgx-b")["connectx"]["ports"][0]["rate_gbps"] = None
    with pytest.raises(AnsibleFilterError, match=r"line rate of a port is unknown.*hgx-b/mlx5_0:1"):
        nccl_rdma_plan(hostvars, ["hgx-a", "hgx-b"])


def test_no_rail_in_common(hostvars):
    for index, port in enumerate(_facts(hostvars, "tray-2")["connectx"]["ports"]):
        port["rdma_device"] = f"mlx5_{index + 10}"
    with pytest.raises(AnsibleFilterError, match="the nodes have no ACTIVE RDMA port in common"):
        nccl_rdma_plan(hostvars, ["tray-1", "tray-2"])


_ANY = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
                    max_leaves=8)


@settings(max_examples=150, deadline=None)
@given(port=st.dictionaries(st.sampled_from(["rdma_device", "port", "state", "rate_gbps", "netdev", "link_layer",
                                            "pci_address"]), _ANY, max_size=7),
       gpus=_ANY, peermem=_ANY, nodes=_ANY, rails=_ANY, gpus_per_node=_ANY)
def test_any_input_gives_a_plan_or_a_clear_error(port, gpus, peermem, nodes, rails, gpus_per_node):
    facts = {"gpu": {"gpus": gpus}, "connectx": {"ports": [port]}, "peermem": peermem}
    hostvars = {name: {"ansible_facts": {"gpufabric": facts}} for name in ("a", "b")}
    for arguments in ((hostvars, ["a", "b"]), (hostvars, nodes)):
        try:
            plan = nccl_rdma_plan(*arguments, rails=rails, gpus_per_node=gpus_per_node)
        except AnsibleFilterError as error:
            assert str(error).startswith("nccl_rdma_plan: ")
            continue
        assert plan["nics"] >= 1 and plan["rate_gbps"] > 0 and plan["np"] >= 2
        assert plan["env"]["NCCL_IB_HCA"].startswith("=")
