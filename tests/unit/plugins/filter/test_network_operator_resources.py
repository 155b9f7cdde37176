# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The network_operator_resources filter on the recorded GB200 tray's ConnectX ports."""

from __future__ import annotations

import copy
import json

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.gpufabric.cluster.plugins.filter.network_operator_resources import (
    FilterModule,
    network_operator_resources,
)
from ansible_collections.gpufabric.cluster.plugins.filter.rail_plan import rail_plan


@pytest.fixture(scope="module")
def tray(fleet_facts):
    """``ansible_facts['gpufabric']`` of the recorded GB200 tray (recorded_facts, gathered once per session)."""
    return fleet_facts["gb200_tray"]


def fleet(tray, count=3):
    return {f"t{i}": {"ansible_facts": {"gpufabric": copy.deepcopy(tray)}} for i in range(count)}


def test_registered():
    assert FilterModule().filters() == {"network_operator_resources": network_operator_resources}


def test_rails_policy_networks_and_pools_on_the_rail_plan(tray):
    rails = [{"ipv4": f"10.100.{i}.0/24"} for i in range(5)]
    result = network_operator_resources(fleet(tray), ["t0", "t1", "t2"], {"rails": rails})
    assert [(r["name"], r["interface"], r["link_layer"]) for r in result["rails"]] == [
        ("rail0", "ibp3s0", "InfiniBand"), ("rail1", "ibP2p3s0", "InfiniBand"),
        ("rail2", "enP6p1s0f0np0", "Ethernet"), ("rail3", "ibP16p3s0", "InfiniBand"),
        ("rail4", "ibP18p3s0", "InfiniBand")]
    spec = result["policy"]["spec"]
    assert "ofedDriver" not in spec  # OFED is installed on the recorded hosts
    config = json.loads(spec["rdmaSharedDevicePlugin"]["config"])["configList"]
    assert config[2] == {"resourceName": "rdma_rail2", "rdmaHcaMax": 63, "selectors": {
        "vendors": ["15b3"], "deviceIDs": ["a2dc"], "ifNames": ["enP6p1s0f0np0"], "linkTypes": ["ether"]}}
    assert set(spec["secondaryNetwork"]) == {"cniPlugins", "multus", "ipoib"}
    kinds = [(n["kind"], n["spec"].get("master"), n["spec"].get("mtu")) for n in result["networks"]]
    assert kinds[2] == ("MacvlanNetwork", "enP6p1s0f0np0", 9000)
    assert kinds[0] == ("IPoIBNetwork", "ibp3s0", None)
    pool = result["ippools"][2]
    assert pool["spec"]["subnet"] == "10.100.2.0/24"
    # The three hosts' own addresses (network + rdma_network_address_offset 1 + host index 0..2).
    assert pool["spec"]["exclusions"] == [{"startIP": "10.100.2.1", "endIP": "10.100.2.3"}]
    assert json.loads(result["networks"][2]["spec"]["ipam"]) == {"type": "nv-ipam", "poolName": "rail2"}
    assert spec["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] == pool["spec"]["nodeSelector"]
    assert result["decisions"]["subnets"] == "network_operator_rails"


def planned(tray, count=3, **settings):
    """Hosts with the rail plan the rdma_network role publishes (the real rail_plan filter)."""
    hosts = fleet(tray, count)
    for item in hosts.values():
        item["__rdma_network_input"] = {"link_layers": ["InfiniBand"], "address_offset": 10,
                                        "rails": [{"ipv4": f"172.31.{i}.0/24"} for i in range(4)], **settings}
    plan = rail_plan(hosts, list(hosts))
    for host, item in hosts.items():
        item["rdma_network_rail_plan"] = plan[host]
        del item["__rdma_network_input"]
    return hosts


def test_rails_and_pools_follow_the_rail_plan_of_rdma_network(tray):
    hosts = planned(tray, host_index=-1)
    hosts["t2"]["rdma_network_rail_plan"] = rail_plan(
        {**hosts, "t2": dict(hosts["t2"], __rdma_network_input={
            "link_layers": ["InfiniBand"], "address_offset": 10, "host_index": 7,
            "rails": [{"ipv4": f"172.31.{i}.0/24"} for i in range(4)]})}, ["t2"])["t2"]
    result = network_operator_resources(hosts, ["t0", "t1", "t2"], {"network_type": "auto"})
    assert [(r["name"], r["interface"]) for r in result["rails"]] == [
        ("rail0", "ibp3s0"), ("rail1", "ibP2p3s0"), ("rail2", "ibP16p3s0"), ("rail3", "ibP18p3s0")]
    assert result["decisions"]["subnets"].startswith("rdma_network_rail_plan")
    assert [p["spec"]["subnet"] for p in result["ippools"]] == [f"172.31.{i}.0/24" for i in range(4)]
    # t0 and t1 are .10 and .11, t2 has host index 7: .17.
    assert result["ippools"][1]["spec"]["exclusions"] == [{"startIP": "172.31.1.10", "endIP": "172.31.1.11"},
                                                          {"startIP": "172.31.1.17", "endIP": "172.31.1.17"}]
    assert {n["kind"] for n in result["networks"]} == {"IPoIBNetwork"}
    config = json.loads(result["policy"]["spec"]["rdmaSharedDevicePlugin"]["config"])["configList"]
    assert [c["selectors"]["ifNames"] for c in config] == [["ibp3s0"], ["ibP2p3s0"], ["ibP16p3s0"], ["ibP18p3s0"]]
    assert {c["selectors"]["linkTypes"][0] for c in config} == {"infiniband"}
    # network_operator_rails beside the plan must agree with it.
    same = [{"ipv4": f"172.31.{i}.0/24"} for i in range(4)]
    assert network_operator_resources(hosts, ["t0", "t1", "t2"], {"rails": same})["ippools"] == result["ippools"]
    other = [*same[:1], {"ipv4": "10.0.1.0/24"}, *same[2:]]
    with pytest.raises(AnsibleFilterError, match=r"network_operator_rails\[1\] 10.0.1.0/24 disagrees with "
                                                 "rdma_network_rail_plan"):
        network_operator_resources(hosts, ["t0", "t1", "t2"], {"rails": other})
    partial = dict(hosts, t1={"ansible_facts": hosts["t1"]["ansible_facts"]})
    with pytest.raises(AnsibleFilterError, match=r"rdma_network_rail_plan \(the rail plan of rdma_network\) is "
                                                 r"missing for t1"):
        network_operator_resources(partial, ["t0", "t1", "t2"])


def test_host_device_networks_use_the_sriov_device_plugin(tray):
    result = network_operator_resources(planned(tray, 2), ["t0", "t1"], {"network_type": "hostdevice"})
    assert [n["spec"]["resourceName"] for n in result["networks"]] == [f"hostdev_rail{i}" for i in range(4)]
    plugin = result["policy"]["spec"]["sriovDevicePlugin"]
    resources = json.loads(plugin["config"])["resourceList"]
    assert resources[0] == {"resourcePrefix": "nvidia.com", "resourceName": "hostdev_rail0", "selectors": {
        "vendors": ["15b3"], "devices": ["1021"], "pfNames": ["ibp3s0"], "linkTypes": ["infiniband"], "isRdma": True}}
    assert "ipoib" not in result["policy"]["spec"]["secondaryNetwork"]


def test_ofed_container_needs_a_version_and_subnets_cut_from_the_cidr(tray):
    hosts = fleet(tray, 2)
    with pytest.raises(AnsibleFilterError, match="network_operator_ofed_driver_version is empty"):
        network_operator_resources(hosts, ["t0", "t1"], {"ofed": "container"})
    result = network_operator_resources(hosts, ["t0", "t1"], {"ofed": "container", "ofed_driver_version": "doca-x",
                                                              "image_pull_secrets": ["ngc"]})
    assert result["policy"]["spec"]["ofedDriver"] == {"image": "doca-driver", "repository": "nvcr.io/nvidia/mellanox",
                                                      "version": "doca-x", "imagePullSecrets": ["ngc"]}
    assert [p["spec"]["subnet"] for p in result["ippools"]][:2] == ["192.168.128.0/24", "192.168.129.0/24"]


@pytest.mark.parametrize(("settings", "message"), [
    ({"network_type": "macvlan"}, "network_operator_network_type is macvlan but rail0 .ibp3s0. is InfiniBand"),
    ({"network_type": "ipoib"}, "network_operator_network_type is ipoib but rail2"),
    ({"rails": [{"ipv4": "10.0.0.0/24"}]}, "lists 1 rails, the hosts have 5"),
    ({"rails": [{"ipv4": "10.0.0.1/24"}] * 5}, r"network_operator_rails\[0\]"),
    ({"ipam_prefix_length": 29}, "network_operator_ipam_block_size 8 for 3 hosts needs 24 addresses"),
    ({"network_type": "bridge"}, "network_operator_network_type must be one of auto, "),
    ({"colour": "green"}, "unknown setting.s. colour"),
])
def test_bad_input(tray, settings, message):
    with pytest.raises(AnsibleFilterError, match=message):
        network_operator_resources(fleet(tray), ["t0", "t1", "t2"], settings)


def test_rails_must_agree_between_hosts(tray):
    hosts = fleet(tray, 2)
    hosts["t1"]["ansible_facts"]["gpufabric"]["connectx"]["ports"].pop()
    with pytest.raises(AnsibleFilterError, match="different numbers of ConnectX ports"):
        network_operator_resources(hosts, ["t0", "t1"])
