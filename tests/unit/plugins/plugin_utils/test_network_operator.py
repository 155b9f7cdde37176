# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The network_operator_resources filter on the recorded GB200 tray's ConnectX ports."""

from __future__ import annotations

import collections
import copy
import ipaddress
import json
import re

import hypothesis
import pytest
from ansible.errors import AnsibleFilterError
from hypothesis import strategies as st

from ansible_collections.gpufabric.cluster.plugins.filter.network_operator_resources import (
    network_operator_resources,
)
from ansible_collections.gpufabric.cluster.plugins.filter.rail_plan import rail_plan


@pytest.fixture(scope="module")
def tray(fleet_facts):
    """``ansible_facts['gpufabric']`` of the recorded GB200 tray (recorded_facts, gathered once per session)."""
    return fleet_facts["gb200_tray"]


def fleet(tray, count=3, **host_vars):
    return {f"t{i}": {"ansible_facts": {"gpufabric": copy.deepcopy(tray)}, **copy.deepcopy(host_vars)}
            for i in range(count)}


# The tray's BlueField-3 port (enP6p1s0f0np0, device id 0xa2dc) named a rail, as a Spectrum-X SuperNIC rail is: the
# tray then has four InfiniBand rails and one Ethernet rail.
SUPERNIC = {"rdma_network_device_ids": ["0x1021", "0xa2dc"]}


def test_rails_without_a_plan_follow_the_rail_rule(tray):
    """Without a rail plan the rails are the ports rdma_network's rule selects: by default not the BlueField DPU
    port; named by a selector (per host, as the inventory sets it) it is a rail; a bad setting names its host."""
    result = network_operator_resources(fleet(tray), ["t0", "t1", "t2"])
    assert [(r["name"], r["interface"], r["link_layer"]) for r in result["rails"]] == [
        ("rail0", "ibp3s0", "InfiniBand"), ("rail1", "ibP2p3s0", "InfiniBand"),
        ("rail2", "ibP16p3s0", "InfiniBand"), ("rail3", "ibP18p3s0", "InfiniBand")]
    assert {n["kind"] for n in result["networks"]} == {"IPoIBNetwork"}
    kept = network_operator_resources(fleet(tray, rdma_network_exclude_device_ids=[]), ["t0", "t1", "t2"])
    assert [r["interface"] for r in kept["rails"]] == [
        "ibp3s0", "ibP2p3s0", "enP6p1s0f0np0", "ibP16p3s0", "ibP18p3s0"]
    # The rule's rail numbers are kept: rdma_network_rail_indices narrows the rails, not their numbers.
    narrowed = network_operator_resources(fleet(tray, rdma_network_rail_indices=[1, 3]), ["t0", "t1", "t2"])
    assert [(r["name"], r["interface"]) for r in narrowed["rails"]] == [
        ("rail1", "ibP2p3s0"), ("rail3", "ibP18p3s0")]
    # A string is a comma-separated list, as Ansible reads one; a device id written without quotes is a number.
    for named in ("0x1021, 0xa2dc", [0x1021, 0xA2DC]):
        assert len(network_operator_resources(fleet(tray, rdma_network_device_ids=named), ["t0"])["rails"]) == 5
    mixed = fleet(tray)
    mixed["t1"].update(copy.deepcopy(SUPERNIC))
    with pytest.raises(AnsibleFilterError, match="different numbers of RDMA rails: t0: 4, t1: 5, t2: 4"):
        network_operator_resources(mixed, ["t0", "t1", "t2"])
    bad_settings = [
        (("rdma_network_include_inactive", "maybe"), r"host t2: rdma_network_include_inactive"),
        (("rdma_network_netdev_pattern", "ib("), r"host t2: rdma_network_netdev_pattern"),
        (("rdma_network_device_ids", {"0x1021": 1}), r"host t2: rdma_network_device_ids must be a list, got a mapping"),
        (("rdma_network_link_layers", ["Ethernet"]), "no RDMA rail on any host|different numbers"),
    ]
    for bad, message in bad_settings:
        hosts = fleet(tray)
        hosts["t2"][bad[0]] = bad[1]
        with pytest.raises(AnsibleFilterError, match=message):
            network_operator_resources(hosts, ["t0", "t1", "t2"])


def test_rails_policy_networks_and_pools_on_the_rail_plan(tray):
    rails = [{"ipv4": f"10.100.{i}.0/24"} for i in range(5)]
    result = network_operator_resources(fleet(tray, **SUPERNIC), ["t0", "t1", "t2"], {"rails": rails})
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
        network_operator_resources(fleet(tray, **SUPERNIC), ["t0", "t1", "t2"], settings)


def test_rails_must_agree_between_hosts(tray):
    hosts = fleet(tray, 2)
    ports = hosts["t1"]["ansible_facts"]["gpufabric"]["connectx"]["ports"]
    ports.remove(next(port for port in ports if port["netdev"] == "ibP18p3s0"))
    with pytest.raises(AnsibleFilterError, match="different numbers of RDMA rails: t0: 4, t1: 3"):
        network_operator_resources(hosts, ["t0", "t1"])
    hosts = fleet(tray, 2)
    ports = hosts["t1"]["ansible_facts"]["gpufabric"]["connectx"]["ports"]
    next(port for port in ports if port["netdev"] == "ibP2p3s0")["netdev"] = "ibP9p3s0"
    with pytest.raises(AnsibleFilterError, match="rail 1 is not the same port on every host: netdevs ibP2p3s0, "
                                                 "ibP9p3s0"):
        network_operator_resources(hosts, ["t0", "t1"])


def test_cidr_pools_on_the_rail_plan_with_per_node_prefixes(tray):
    hosts = planned(tray)
    ippools = network_operator_resources(hosts, ["t0", "t1", "t2"])
    result = network_operator_resources(hosts, ["t0", "t1", "t2"], {"ipam_pool_kind": "cidrpool"})
    assert result["ippools"] == [] and ippools["cidrpools"] == []
    assert result["decisions"]["pool_kind"] == "CIDRPool" and ippools["decisions"]["pool_kind"] == "IPPool"
    assert [p["kind"] for p in result["cidrpools"]] == ["CIDRPool"] * 4
    assert result["cidrpools"][1] == {
        "apiVersion": "nv-ipam.nvidia.com/v1alpha1", "kind": "CIDRPool",
        "metadata": {"name": "rail1", "namespace": "nvidia-network-operator"},
        "spec": {"cidr": "172.31.1.0/24", "perNodeNetworkPrefix": 29,
                 "exclusions": [{"startIP": "172.31.1.10", "endIP": "172.31.1.12"}],
                 "nodeSelector": ippools["ippools"][1]["spec"]["nodeSelector"]}}
    # The networks ask nv-ipam for the CIDRPool of the same name; with IPPools they stay as they were.
    assert json.loads(result["networks"][0]["spec"]["ipam"]) == {
        "type": "nv-ipam", "poolName": "rail0", "poolType": "cidrpool"}
    assert json.loads(ippools["networks"][0]["spec"]["ipam"]) == {"type": "nv-ipam", "poolName": "rail0"}
    assert result["policy"] == ippools["policy"] and result["rails"] == ippools["rails"]
    gateway = network_operator_resources(hosts, ["t0", "t1", "t2"], {
        "ipam_pool_kind": "cidrpool", "ipam_per_node_prefix_length": 28, "ipam_gateway_index": 0})
    assert {(p["spec"]["perNodeNetworkPrefix"], p["spec"]["gatewayIndex"]) for p in gateway["cidrpools"]} == {(28, 0)}


def test_cidr_pools_on_ipv6_rails(tray):
    rails = [{"ipv6": f"fd00:{i}::/64"} for i in range(5)]
    result = network_operator_resources(fleet(tray, 2), ["t0", "t1"], {
        "rails": rails, "ipam_pool_kind": "cidrpool", "ipam_per_node_prefix_length": 120})
    assert [(p["spec"]["cidr"], p["spec"]["perNodeNetworkPrefix"]) for p in result["cidrpools"]][:2] == [
        ("fd00::/64", 120), ("fd00:1::/64", 120)]
    assert result["cidrpools"][0]["spec"]["exclusions"] == [{"startIP": "fd00::1", "endIP": "fd00::2"}]


@pytest.mark.parametrize(("settings", "message"), [
    ({"ipam_per_node_prefix_length": 24}, "rail0 subnet 192.168.128.0/24 .network_operator_ipam_cidr "
                                          "192.168.128.0/17.: network_operator_ipam_per_node_prefix_length 24 must "
                                          "be longer than /24 and at most /32"),
    ({"ipam_per_node_prefix_length": 33}, "at most /32"),
    ({"ipam_per_node_prefix_length": 0}, "ipam_per_node_prefix_length must be a whole number of at least 1, got 0"),
    ({"ipam_per_node_prefix_length": "29"}, "ipam_per_node_prefix_length must be a number, got '29'"),
    ({"ipam_per_node_prefix_length": True}, "ipam_per_node_prefix_length must be a number, got True"),
    ({"ipam_per_node_prefix_length": 28.5}, "must be a whole number of at least 1, got 28.5"),
    ({"ipam_per_node_prefix_length": 25}, "leaves 2 /25 prefixes with a free address beside the hosts' own addresses, "
                                          "3 hosts need one each"),
    ({"ipam_gateway_index": 8}, "network_operator_ipam_gateway_index 8 is outside a /29 prefix of rail0 .8 addresses."),
    ({"ipam_gateway_index": -1}, "ipam_gateway_index must be a whole number of at least 0, got -1"),
    ({"ipam_gateway_index": "0"}, "ipam_gateway_index must be a number, got '0'"),
])
def test_bad_cidr_pool_input(tray, settings, message):
    with pytest.raises(AnsibleFilterError, match=message):
        network_operator_resources(fleet(tray), ["t0", "t1", "t2"], {"ipam_pool_kind": "cidrpool", **settings})


def test_bad_pool_kind(tray):
    with pytest.raises(AnsibleFilterError, match="network_operator_ipam_pool_kind must be one of ippool, cidrpool, "
                                                 "got 'CIDRPool'"):
        network_operator_resources(fleet(tray, 1), ["t0"], {"ipam_pool_kind": "CIDRPool"})


@hypothesis.given(prefix=st.integers(16, 30), per_node=st.integers(14, 33), count=st.integers(1, 40),
                  offset=st.integers(1, 40), gateway=st.one_of(st.none(), st.integers(-1, 300)))
@hypothesis.settings(max_examples=80, deadline=None,
                     suppress_health_check=[hypothesis.HealthCheck.function_scoped_fixture])
def test_cidr_pools_give_every_host_a_prefix_or_fail_naming_why(tray, prefix, per_node, count, offset, gateway):
    """Every host can get a per-node prefix with a free address, or the filter says which setting is wrong."""
    same = {"ansible_facts": {"gpufabric": tray}}
    hosts = {f"t{i}": same for i in range(count)}
    settings_ = {"ipam_pool_kind": "cidrpool", "ipam_prefix_length": prefix, "ipam_per_node_prefix_length": per_node,
                 "address_offset": offset, "ipam_cidr": f"10.0.0.0/{prefix - 3}", "ipam_gateway_index": gateway}
    try:
        result = network_operator_resources(hosts, list(hosts), settings_)
    except AnsibleFilterError as exc:
        assert re.search(r"network_operator_(ipam_per_node_prefix_length|ipam_gateway_index) |is too small for "
                         r"\d+ hosts", str(exc)), exc
        return
    for pool, rail in zip(result["cidrpools"], result["rails"], strict=True):
        subnet = ipaddress.ip_network(pool["spec"]["cidr"])
        assert str(subnet) == rail["subnet"] and pool["spec"]["perNodeNetworkPrefix"] == per_node
        excluded = {ipaddress.ip_address(a) for a in rail["host_addresses"]}
        ranges = [(ipaddress.ip_address(r["startIP"]), ipaddress.ip_address(r["endIP"]))
                  for r in pool["spec"]["exclusions"]]
        assert {ipaddress.ip_address(int(start) + i) for start, end in ranges
                for i in range(int(end) - int(start) + 1)} == excluded
        reserved = excluded | {subnet.network_address, subnet.broadcast_address}
        # The blocks all of whose addresses are reserved, counted from the reserved addresses.
        per_block = collections.Counter(int(address) >> (32 - per_node) for address in reserved)
        full = sum(1 for used in per_block.values() if used == 2 ** (32 - per_node))
        free = 2 ** (per_node - subnet.prefixlen) - full
        assert free >= count
        assert pool["spec"].get("gatewayIndex") == gateway
        assert 0 <= (gateway or 0) < 2 ** (32 - per_node)


def test_the_rail_rule_reads_a_boolean_given_as_text(tray):
    """`-e rdma_network_include_inactive=false` passes the text "false": read as the boolean, not as a true string."""
    for text in ("false", "False", "no", "true", "yes"):
        result = network_operator_resources(fleet(tray, rdma_network_include_inactive=text), ["t0", "t1"])
        assert [r["interface"] for r in result["rails"]] == ["ibp3s0", "ibP2p3s0", "ibP16p3s0", "ibP18p3s0"]
