# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The rail_plan filter: port selection, addresses (IPv4, IPv6), MTU rules and bad input."""

from __future__ import annotations

import copy

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.gpufabric.cluster.plugins.filter.rail_plan import FilterModule, rail_plan
from ansible_collections.gpufabric.cluster.plugins.module_utils.connectx import collect_connectx
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.rail_plan import host_capacity

HGX_IB = ["ibp24s0", "ibp64s0", "ibp79s0", "ibp94s0", "ibp154s0", "ibp192s0", "ibp206s0", "ibp220s0"]
HGX_ETH = ["enp170s0f0np0", "enp170s0f1np1"]


@pytest.fixture(scope="module")
def hgx_connectx(host_trees):
    """``ansible_facts['gpufabric']['connectx']`` of the recorded HGX H100, from the real collector."""
    facts = collect_connectx(host_trees["hgx_h100"])
    assert [port["netdev"] for port in facts["ports"]] == HGX_IB + HGX_ETH
    return facts


@pytest.fixture(scope="module")
def broken_connectx(host_trees):
    """The recorded broken node: ibp49s0 ACTIVE, ibp177s0 DOWN."""
    return collect_connectx(host_trees["broken_node"])


def rails(count, v6=False, base=0):
    return [{"ipv4": f"172.31.{base + n}.0/24", **({"ipv6": f"fd00:31:{base + n}::/64"} if v6 else {})}
            for n in range(count)]


def host(connectx, default_if="eno1", default_ip="192.0.2.21", **settings):
    facts = {"gpufabric": {"connectx": copy.deepcopy(connectx)},
             "default_ipv4": {"interface": default_if, "address": default_ip},
             "interfaces": [default_if, "lo"],
             default_if: {"ipv4": {"address": default_ip, "netmask": "255.255.255.0"}}}
    return {"ansible_facts": facts, "__rdma_network_input": settings}


def errors_of(hostvars, hosts):
    with pytest.raises(AnsibleFilterError) as caught:
        rail_plan(hostvars, hosts)
    return str(caught.value)


def test_filter_is_registered():
    assert FilterModule().filters() == {"rail_plan": rail_plan}


def test_hgx_infiniband_rails_in_pci_order_with_sorted_host_indices(hgx_connectx):
    hostvars = {name: host(hgx_connectx, rails=rails(8), link_layers=["InfiniBand"])
                for name in ("hgx-10", "hgx-2", "hgx-1")}
    plan = rail_plan(hostvars, ["hgx-10", "hgx-2", "hgx-1"])
    # natural order: hgx-1, hgx-2, hgx-10 -> indices 0, 1, 2 -> .1, .2, .3
    assert [plan[name]["host_index"] for name in ("hgx-1", "hgx-2", "hgx-10")] == [0, 1, 2]
    first = plan["hgx-1"]["rails"]
    assert [rail["netdev"] for rail in first] == HGX_IB
    assert [rail["rail"] for rail in first] == list(range(8))
    assert [rail["ipv4"] for rail in plan["hgx-10"]["rails"]] == [f"172.31.{n}.3" for n in range(8)]
    assert first[0] == {
        "rail": 0, "netdev": "ibp24s0", "rdma_device": "mlx5_0", "port": 1, "pci_address": "0000:18:00.0",
        "device_id": "0x1021", "model": "ConnectX-7", "link_layer": "InfiniBand", "state": "ACTIVE",
        "numa_node": 0, "gpus_same_switch": ["0000:1b:00.0"], "mtu": 4092, "max_mtu": 4092,
        "ipoib_mode": "datagram", "table": 100, "priority": 1000, "ipv4": "172.31.0.1",
        "ipv4_network": "172.31.0.0/24", "ipv4_prefix": 24, "ipv6": None, "ipv6_network": None, "ipv6_prefix": None,
    }
    assert [rail["table"] for rail in first] == list(range(100, 108))
    assert plan["hgx-1"]["skipped"] == []


def test_ipv6_and_explicit_host_index_and_offset(hgx_connectx):
    hostvars = {
        "a": host(hgx_connectx, rails=rails(2, v6=True), link_layers=["Ethernet"], host_index=7, address_offset=10),
        "b": host(hgx_connectx, rails=rails(2, v6=True), link_layers=["Ethernet"], host_index=0, address_offset=10),
    }
    plan = rail_plan(hostvars, ["a", "b"])
    assert [(rail["netdev"], rail["ipv4"], rail["ipv6"], rail["mtu"]) for rail in plan["a"]["rails"]] == [
        ("enp170s0f0np0", "172.31.0.17", "fd00:31::11", 9000),
        ("enp170s0f1np1", "172.31.1.17", "fd00:31:1::11", 9000),
    ]
    assert plan["b"]["rails"][1]["ipv6"] == "fd00:31:1::a"
    assert plan["b"]["rails"][1]["ipv6_prefix"] == 64
    assert plan["a"]["rails"][0]["ipoib_mode"] is None


def test_ipv6_only_rail(hgx_connectx):
    hostvars = {"a": host(hgx_connectx, rails=[{"ipv6": "fd00:99::/120"}], netdev_pattern="enp170s0f0np0")}
    rail = rail_plan(hostvars, ["a"])["a"]["rails"][0]
    assert (rail["ipv4"], rail["ipv6"], rail["ipv6_network"]) == (None, "fd00:99::1", "fd00:99::/120")


@pytest.mark.parametrize(("settings", "expected"), [
    ({"pci_addresses": ["0000:40:00.0", "0000:AA:00.1"]}, ["ibp64s0", "enp170s0f1np1"]),
    ({"device_ids": ["0x1021"], "netdev_pattern": "ibp(2|9)\\d+s0"}, ["ibp24s0", "ibp94s0", "ibp206s0", "ibp220s0"]),
    ({"link_layers": ["InfiniBand"], "rail_indices": [1, 6]}, ["ibp64s0", "ibp206s0"]),
    ({}, HGX_IB[:5] + HGX_ETH + HGX_IB[5:]),  # PCI order: 0000:aa (Ethernet) before 0000:c0
])
def test_selection(hgx_connectx, settings, expected):
    plan = rail_plan({"h": host(hgx_connectx, rails=rails(10), **settings)}, ["h"])
    assert [rail["netdev"] for rail in plan["h"]["rails"]] == expected


def test_rail_numbers_are_kept_with_the_selection(hgx_connectx):
    # rail numbers count the ports of the static selection, so rail_indices picks rails[6] for rail 6
    plan = rail_plan({"h": host(hgx_connectx, rails=rails(8), link_layers=["InfiniBand"], rail_indices=[6])}, ["h"])
    assert [(rail["rail"], rail["ipv4"], rail["table"]) for rail in plan["h"]["rails"]] == [(6, "172.31.6.1", 106)]


def test_inactive_port_is_skipped_but_keeps_its_rail(broken_connectx):
    plan = rail_plan({"n": host(broken_connectx, default_if="eno1", rails=rails(2))}, ["n"])
    assert [rail["netdev"] for rail in plan["n"]["rails"]] == ["ibp49s0"]
    assert plan["n"]["skipped"] == [{"rail": 1, "netdev": "ibp177s0", "reason": "state DOWN, not ACTIVE"}]
    plan = rail_plan({"n": host(broken_connectx, rails=rails(2), include_inactive=True)}, ["n"])
    assert [(rail["netdev"], rail["ipv4"]) for rail in plan["n"]["rails"]] == [
        ("ibp49s0", "172.31.0.1"), ("ibp177s0", "172.31.1.1")]


def test_mtu_rules(hgx_connectx):
    def mtus(**settings):
        plan = rail_plan({"h": host(hgx_connectx, rails=rails(10), **settings)}, ["h"])
        return {rail["netdev"]: rail["mtu"] for rail in plan["h"]["rails"]}

    assert set(mtus(link_layers=["InfiniBand"]).values()) == {4092}
    assert set(mtus(link_layers=["InfiniBand"], ipoib_mode="connected").values()) == {65520}
    assert set(mtus(link_layers=["Ethernet"]).values()) == {9000}
    assert set(mtus(link_layers=["Ethernet"], mtu=4200).values()) == {4200}
    per_rail = rails(10)
    per_rail[0]["mtu"] = 9978
    plan = rail_plan({"h": host(hgx_connectx, rails=per_rail, link_layers=["Ethernet"])}, ["h"])
    assert {rail["netdev"]: rail["mtu"] for rail in plan["h"]["rails"]} == {
        "enp170s0f0np0": 9978, "enp170s0f1np1": 9000}
    assert mtus(link_layers=["InfiniBand"], mtu=2044)["ibp24s0"] == 2044


def test_mtu_above_the_port_maximum_names_variable_and_host(hgx_connectx):
    plan = rail_plan({"h1": host(hgx_connectx, rails=rails(10), link_layers=["Ethernet"], mtu=9978)}, ["h1"])
    assert {rail["mtu"] for rail in plan["h1"]["rails"]} == {9978}
    message = errors_of({"h1": host(hgx_connectx, rails=rails(10), link_layers=["Ethernet"], mtu=10000)}, ["h1"])
    assert "host h1: rdma_network_mtu 10000 is above the maximum MTU 9978 of enp170s0f0np0 (RoCE (Ethernet))" in message
    message = errors_of({"h1": host(hgx_connectx, rails=rails(8), link_layers=["InfiniBand"], mtu=9000)}, ["h1"])
    assert "host h1: rdma_network_mtu 9000 is above the maximum MTU 4092 of ibp24s0 (IPoIB datagram mode)" in message
    # the kernel's maximum (ip -d link: maxmtu) lowers the limit
    live = dict.fromkeys(HGX_IB + HGX_ETH, 1500)
    per_rail = rails(10)
    per_rail[1]["mtu"] = 1600
    message = errors_of({"h1": host(hgx_connectx, rails=per_rail, link_layers=["Ethernet"], mtu=1500,
                                    max_mtu=live)}, ["h1"])
    assert message.count("is above") == 1
    assert "host h1: rdma_network_rails[1].mtu 1600 is above the maximum MTU 1500 of enp170s0f1np1" in message


def test_overlapping_subnets_name_both_entries(hgx_connectx):
    bad = rails(8)
    bad[3]["ipv4"] = "172.31.0.128/25"
    bad[5]["ipv6"] = "fd00::/16"
    bad[6]["ipv6"] = "fd00:1::/64"
    message = errors_of({"gpu-1": host(hgx_connectx, rails=bad, link_layers=["InfiniBand"])}, ["gpu-1"])
    assert ("host gpu-1: rdma_network_rails[3].ipv4 172.31.0.128/25 overlaps rdma_network_rails[0].ipv4 "
            "172.31.0.0/24") in message
    assert "host gpu-1: rdma_network_rails[6].ipv6 fd00:1::/64 overlaps rdma_network_rails[5].ipv6 fd00::/16" in message


def test_subnet_too_small_for_the_hosts(hgx_connectx):
    small = [{"ipv4": "172.31.0.0/30"}, {"ipv4": "172.31.1.0/24", "ipv6": "fd00:1::/126"}]
    names = ["n1", "n2", "n3", "n4"]
    hostvars = {name: host(hgx_connectx, rails=small, link_layers=["Ethernet"]) for name in names}
    message = errors_of(hostvars, names)
    # /30: two host addresses (.1, .2): n3 and n4 do not fit; /126: three (::1 to ::3): n4 does not fit
    assert ("host n3: rdma_network_rails[0].ipv4 172.31.0.0/30 holds 2 host address(es) but this host needs "
            "number 3 (rdma_network_host_index 2 + rdma_network_address_offset 1)") in message
    assert "host n4: rdma_network_rails[0].ipv4 172.31.0.0/30 holds 2" in message
    assert "host n4: rdma_network_rails[1].ipv6 fd00:1::/126 holds 3 host address(es)" in message
    assert "host n3: rdma_network_rails[1].ipv6" not in message
    assert "host n1" not in message and "host n2" not in message
    assert rail_plan({name: hostvars[name] for name in names[:2]}, names[:2])["n2"]["rails"][0]["ipv4"] == "172.31.0.2"


def test_capacity():
    import ipaddress
    assert host_capacity(ipaddress.ip_network("10.0.0.0/24")) == 254
    assert host_capacity(ipaddress.ip_network("10.0.0.0/31")) == 2
    assert host_capacity(ipaddress.ip_network("fd00::/120")) == 255


def test_duplicate_host_index(hgx_connectx):
    hostvars = {name: host(hgx_connectx, rails=rails(2), link_layers=["Ethernet"], host_index=4) for name in ("a", "b")}
    message = errors_of(hostvars, ["a", "b"])
    assert ("host b: rdma_network_host_index 4 gives 172.31.0.5 on rail 0 (enp170s0f0np0), already the address "
            "of host a") in message


def test_selector_matching_nothing_names_the_variables(hgx_connectx, broken_connectx):
    message = errors_of({"h": host(hgx_connectx, rails=rails(10), netdev_pattern="eth.*")}, ["h"])
    assert "host h: no ConnectX port matches rdma_network_netdev_pattern='eth.*'" in message
    assert "ibp24s0 (InfiniBand, 0x1021, 0000:18:00.0, ACTIVE)" in message
    message = errors_of({"h": host(hgx_connectx, rails=rails(10), device_ids=["0x101d"], link_layers=["Ethernet"])},
                        ["h"])
    assert "host h: no ConnectX port matches rdma_network_link_layers=['Ethernet'] and " \
           "rdma_network_device_ids=['0x101d']" in message
    message = errors_of({"n": host(broken_connectx, rails=rails(2), pci_addresses=["0000:b1:00.0"])}, ["n"])
    assert "1 matching port(s) are not ACTIVE (set rdma_network_include_inactive" in message
    message = errors_of({"h": host(hgx_connectx, rails=rails(10), rail_indices=[12])}, ["h"])
    assert "host h: rdma_network_rail_indices: rail 12 does not exist; the selection has 10 rail(s)" in message


def test_missing_rail_subnet_and_bad_subnet(hgx_connectx):
    message = errors_of({"h": host(hgx_connectx, rails=rails(7), link_layers=["InfiniBand"])}, ["h"])
    assert "host h: rdma_network_rails has 7 entries, so rail 7 (ibp220s0) has no subnet" in message
    bad = rails(2)
    bad[0]["ipv4"] = "172.31.0.1/24"
    bad[1] = {"ipv4": "fd00::/64"}
    message = errors_of({"h": host(hgx_connectx, rails=bad, link_layers=["Ethernet"])}, ["h"])
    assert "host h: rdma_network_rails[0].ipv4: '172.31.0.1/24' is not an IPv4 subnet (172.31.0.1/24 has host bits" \
        in message
    assert "host h: rdma_network_rails[1].ipv4: 'fd00::/64' is an IPv6 subnet, expected IPv4" in message


def test_management_interface_is_protected(hgx_connectx):
    # the default route leaves through a ConnectX port: never reconfigure it
    hostvars = {"h": host(hgx_connectx, default_if="enp170s0f0np0", default_ip="10.1.0.5",
                          rails=rails(10), link_layers=["Ethernet"])}
    message = errors_of(hostvars, ["h"])
    assert "host h: rail 0 is enp170s0f0np0, an interface the role must not touch" in message
    # a rail subnet covering the management network
    hostvars = {"h": host(hgx_connectx, default_ip="172.31.1.77", rails=rails(10), link_layers=["Ethernet"])}
    message = errors_of(hostvars, ["h"])
    assert ("host h: rdma_network_rails[1].ipv4 172.31.1.0/24 overlaps the network of eno1 (172.31.1.77/24)"
            in message)
    # the interface holding ansible_host, and an explicit list
    hostvars = {"h": host(hgx_connectx, rails=rails(10), link_layers=["Ethernet"],
                          protected_interfaces=["enp170s0f1np1"])}
    assert "rail 1 is enp170s0f1np1, an interface the role must not touch" in errors_of(hostvars, ["h"])


def test_netdev_missing_on_the_host_and_missing_facts(hgx_connectx):
    live = dict.fromkeys(HGX_ETH[:1], 65535)
    message = errors_of({"h": host(hgx_connectx, rails=rails(10), link_layers=["Ethernet"], max_mtu=live)}, ["h"])
    assert "host h: rail 1: netdev enp170s0f1np1 from ansible_facts['gpufabric']['connectx'] does not exist" in message
    message = errors_of({"h": {"__rdma_network_input": {"rails": rails(1)}}}, ["h"])
    assert "host h: ansible_facts['gpufabric']['connectx'] is missing" in message
    message = errors_of({"h": {}}, ["h"])
    assert "host h: __rdma_network_input (the role's published input) is missing" in message


def test_reserved_table_and_bad_values(hgx_connectx):
    per_rail = rails(10)
    per_rail[0]["table"] = 254
    per_rail[9]["speed"] = 1
    message = errors_of({"h": host(hgx_connectx, rails=per_rail, link_layers=["Ethernet"], ipoib_mode="fast",
                                   host_index="x")}, ["h"])
    assert "host h: rail 0: routing table 254 is reserved" in message
    assert "host h: rdma_network_rails[9]: unknown key(s) speed" in message
    assert "host h: rdma_network_host_index: 'x' is not an integer" in message
    message = errors_of({"h": host(hgx_connectx, rails=rails(8), link_layers=["InfiniBand"], ipoib_mode="fast")},
                        ["h"])
    assert "host h: rdma_network_ipoib_mode: 'fast' is not one of datagram, connected" in message


def test_every_error_of_every_host_is_reported(hgx_connectx):
    hostvars = {
        "a": host(hgx_connectx, rails=rails(10), netdev_pattern="nothing"),
        "b": host(hgx_connectx, rails=rails(10), link_layers=["Ethernet"], mtu=12000),
    }
    message = errors_of(hostvars, ["a", "b"])
    assert "host a: no ConnectX port matches" in message
    assert "host b: rdma_network_mtu 12000 is above" in message


def test_hosts_must_be_a_list():
    with pytest.raises(AnsibleFilterError, match="hosts must be a list"):
        rail_plan({}, "a")


def test_custom_labels(hgx_connectx):
    with pytest.raises(AnsibleFilterError, match="host h: site_mtu 10000 is above"):
        rail_plan({"h": host(hgx_connectx, rails=rails(10), link_layers=["Ethernet"], mtu=10000)}, ["h"],
                  labels={"mtu": "site_mtu"})


def test_all_hosts_keep_the_order_when_a_host_is_down(hgx_connectx):
    hostvars = {name: host(hgx_connectx, rails=rails(2), link_layers=["Ethernet"]) for name in ("n1", "n3")}
    plan = rail_plan(hostvars, ["n1", "n3"], all_hosts=["n1", "n2", "n3"])
    assert [plan[name]["rails"][0]["ipv4"] for name in ("n1", "n3")] == ["172.31.0.1", "172.31.0.3"]
    assert rail_plan(hostvars, ["n1", "n3"])["n3"]["rails"][0]["ipv4"] == "172.31.0.2"
