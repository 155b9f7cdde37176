# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The rail_plan filter: port selection, addresses (IPv4, IPv6), MTU rules and bad input (issue 17 included)."""

from __future__ import annotations

import copy
import ipaddress
import json

import pytest
from ansible.errors import AnsibleFilterError
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.gpufabric.cluster.plugins.filter.rail_plan import rail_plan
from ansible_collections.gpufabric.cluster.plugins.module_utils.connectx import collect_connectx
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.rail_plan import (
    DEFAULT_LABELS,
    host_capacity,
    rail_address,
)

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


def host(connectx, default_if="eno1", default_ip="192.0.2.21", max_mtu=None, **settings):
    """A host's facts: its ConnectX ports, and the network subset of fabric_facts with the default route on
    ``default_if`` and the ports' netdevs as links (``max_mtu``: the links by netdev with their maximum MTU)."""
    links = {port["netdev"]: {} for port in connectx["ports"]} if max_mtu is None else \
        {netdev: {"max_mtu": value} for netdev, value in max_mtu.items()}
    network = {"default_ipv4": {"interface": default_if, "address": default_ip}, "default_ipv6": {},
               "interfaces": {default_if: {"ipv4": {"address": default_ip, "prefix": "24"}}, "lo": {}, **links}}
    facts = {"gpufabric": {"connectx": copy.deepcopy(connectx), "network": network}}
    return {"ansible_facts": facts, "__rdma_network_input": settings}


def errors_of(hostvars, hosts):
    with pytest.raises(AnsibleFilterError) as caught:
        rail_plan(hostvars, hosts)
    return str(caught.value)


def errors_of_fleet(hostvars, hosts, fleet):
    with pytest.raises(AnsibleFilterError) as caught:
        rail_plan(hostvars, hosts, fleet=fleet)
    return str(caught.value)


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
    # the kernel's maximum (ansible_facts['gpufabric']['network']['interfaces'][netdev]['max_mtu']) lowers the limit
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
    """Issue 45: with the default selection a protected interface is no rail (listed in skipped with why); on the
    starting commit it was rail 0 and the plan was refused. A selection that names it is still refused."""
    # the default route leaves through a ConnectX port: never reconfigure it
    hostvars = {"h": host(hgx_connectx, default_if="enp170s0f0np0", default_ip="10.1.0.5",
                          rails=rails(1), link_layers=["Ethernet"])}
    plan = rail_plan(hostvars, ["h"])["h"]
    assert [(rail["rail"], rail["netdev"]) for rail in plan["rails"]] == [(0, "enp170s0f1np1")]
    assert plan["skipped"] == [{"rail": None, "netdev": "enp170s0f0np0", "reason": "protected: default route"}]
    named = {"h": host(hgx_connectx, default_if="enp170s0f0np0", default_ip="10.1.0.5", rails=rails(2),
                       netdev_pattern="enp170s0f[01]np[01]")}
    assert "host h: rail 0 is enp170s0f0np0, an interface the role must not touch" in errors_of(named, ["h"])
    # a rail subnet covering the management network
    hostvars = {"h": host(hgx_connectx, default_ip="172.31.1.77", rails=rails(10), link_layers=["Ethernet"])}
    message = errors_of(hostvars, ["h"])
    assert ("host h: rdma_network_rails[1].ipv4 172.31.1.0/24 overlaps the network of eno1 (172.31.1.77/24)"
            in message)
    # the interface holding ansible_host, and an explicit list: left out by default, refused when named
    hostvars = {"h": host(hgx_connectx, rails=rails(10), link_layers=["Ethernet"],
                          protected_interfaces=["enp170s0f1np1"])}
    plan = rail_plan(hostvars, ["h"])["h"]
    assert [rail["netdev"] for rail in plan["rails"]] == ["enp170s0f0np0"]
    assert plan["skipped"] == [{"rail": None, "netdev": "enp170s0f1np1",
                                "reason": "protected: rdma_network_protected_interfaces"}]
    hostvars["h"]["__rdma_network_input"]["device_ids"] = ["0x1021"]
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


def test_a_fleet_host_that_is_down_keeps_its_index_from_its_facts(hgx_connectx):
    # n2 is down this run: its rail plan of an earlier run (fact cache) holds index 1, so n3 does not take it
    hostvars = {name: host(hgx_connectx, rails=rails(2), link_layers=["Ethernet"]) for name in ("n1", "n3")}
    hostvars["n2"] = {"ansible_facts": {"rdma_network_rail_plan": {
        "host_index": 1, "rails": [{"rail": 0, "ipv4": "172.31.0.2", "ipv4_prefix": 24}]}}}
    plan = rail_plan(hostvars, ["n1", "n3"], fleet=["n1", "n2", "n3"])
    assert [plan[name]["rails"][0]["ipv4"] for name in ("n1", "n3")] == ["172.31.0.1", "172.31.0.3"]
    # without its facts its index is unknown: no index is handed out that might be its
    del hostvars["n2"]
    message = errors_of_fleet(hostvars, ["n1", "n3"], ["n1", "n2", "n3"])
    assert message == (
        "rail_plan: host n1, n3: a new host index is needed, but the index of n2 (rdma_network_fleet, not in this "
        "run) is unknown: neither rdma_network_host_index nor a rail plan in their facts; run the role on them too "
        "(or keep a fact cache), leave them out of rdma_network_fleet if they have no rails, or set "
        "rdma_network_host_index for n1, n3")


# --- issue 41: a host's rail addresses never move because other hosts joined, left or were left out of a run (the
# logic: tests/unit/plugins/plugin_utils/test_rail_indices.py)

def recorded(connectx, index, **settings):
    """A host converged before: the role's record of index ``index`` on the two RoCE rails, as read on the host."""
    text = json.dumps({"version": 1, "host_index": index, "address_offset": 1, "rails": {
        str(rail): {"netdev": HGX_ETH[rail], "ipv4": f"172.31.{rail}.{index + 1}/24"} for rail in (0, 1)}})
    record = {"path": "/etc/gpufabric/rdma_network.json", "exists": True, "regular": True, "size": len(text),
              "content": text}
    return host(connectx, rails=rails(2), link_layers=["Ethernet"], record=record, **settings)


def test_a_limited_run_gives_the_host_its_recorded_addresses(hgx_connectx):
    # `--limit hgx-3` on a converged fleet: the starting commit gave hgx-3 172.31.0.1, hgx-1's address
    plan = rail_plan({"hgx-3": recorded(hgx_connectx, 2)}, ["hgx-3"])
    assert [rail["ipv4"] for rail in plan["hgx-3"]["rails"]] == ["172.31.0.3", "172.31.1.3"]
    assert (plan["hgx-3"]["host_index"], plan["hgx-3"]["host_index_source"]) == (2, "record")


def test_a_host_added_to_the_inventory_moves_nobody(hgx_connectx):
    # the starting commit moved hgx-3 to .4 and hgx-4 to .5 and gave hgx-2b .3
    hostvars = {name: recorded(hgx_connectx, index) for index, name in enumerate(("hgx-1", "hgx-2", "hgx-3", "hgx-4"))}
    hostvars["hgx-2b"] = host(hgx_connectx, rails=rails(2), link_layers=["Ethernet"])
    plan = rail_plan(hostvars, list(hostvars))
    assert {name: plan[name]["rails"][0]["ipv4"] for name in hostvars} == {
        "hgx-1": "172.31.0.1", "hgx-2": "172.31.0.2", "hgx-3": "172.31.0.3", "hgx-4": "172.31.0.4",
        "hgx-2b": "172.31.0.5"}
    assert plan["hgx-2b"]["host_index_source"] == "allocated"


# --- issue 17: point-to-point and single-address subnets, addresses inside their subnet, hosts that disagree,
# booleans, argument types and wrongly shaped facts; then any input gives a plan of the documented shape or
# AnsibleFilterError.

def test_slash31_rail_follows_rfc3021(hgx_connectx):
    # both addresses of a /31 are host addresses (RFC 3021): network + 0 and + 1
    p2p = [{"ipv4": "172.31.0.0/31"}, {"ipv4": "172.31.0.2/31", "ipv6": "fd00:31::/127"}]
    hostvars = {name: host(hgx_connectx, rails=p2p, link_layers=["Ethernet"], address_offset=0) for name in ("a", "b")}
    plan = rail_plan(hostvars, ["a", "b"])
    assert [[rail["ipv4"] for rail in plan[name]["rails"]] for name in ("a", "b")] == [
        ["172.31.0.0", "172.31.0.2"], ["172.31.0.1", "172.31.0.3"]]
    assert [plan[name]["rails"][1]["ipv6"] for name in ("a", "b")] == ["fd00:31::", "fd00:31::1"]
    assert plan["a"]["rails"][0]["ipv4_prefix"] == 31


def test_slash31_address_beyond_the_pair_is_refused(hgx_connectx):
    # with the default offset 1 the second host would be network + 2, outside the /31
    hostvars = {name: host(hgx_connectx, rails=[{"ipv4": "172.31.0.0/31"}], link_layers=["Ethernet"],
                           rail_indices=[0]) for name in ("a", "b")}
    message = errors_of(hostvars, ["a", "b"])
    assert message == ("rail_plan: host b: rdma_network_rails[0].ipv4 172.31.0.0/31 holds 2 host address(es) "
                       "(numbers 0 and 1, RFC 3021) but this host needs number 2 (rdma_network_host_index 1 + "
                       "rdma_network_address_offset 1); use a larger subnet")


@pytest.mark.parametrize(("subnet", "family", "expected"), [
    ("172.31.0.5/32", "ipv4", "rdma_network_rails[0].ipv4: '172.31.0.5/32' is a single address, not a rail subnet; "
                              "a rail needs at least a /31 (RFC 3021, point to point)"),
    ("fd00:31::5/128", "ipv6", "rdma_network_rails[0].ipv6: 'fd00:31::5/128' is a single address, not a rail subnet; "
                               "a rail needs at least a /127 (RFC 6164, point to point)"),
])
def test_single_address_subnet_is_refused(hgx_connectx, subnet, family, expected):
    hostvars = {"h": host(hgx_connectx, rails=[{family: subnet}], link_layers=["Ethernet"], rail_indices=[0])}
    assert errors_of(hostvars, ["h"]) == f"rail_plan: host h: {expected}"


def test_every_capacity_counts_only_addresses_inside_the_subnet():
    assert host_capacity(ipaddress.ip_network("10.0.0.0/31")) == 2
    assert host_capacity(ipaddress.ip_network("10.0.0.1/32")) == 0
    assert host_capacity(ipaddress.ip_network("fd00::/127")) == 2
    assert host_capacity(ipaddress.ip_network("fd00::1/128")) == 0
    assert rail_address(ipaddress.ip_network("10.0.0.0/31"), 1, 1) is None
    assert rail_address(ipaddress.ip_network("10.0.0.4/32"), 1, 0) is None
    assert rail_address(ipaddress.ip_network("10.0.0.0/30"), 1, 2) is None  # the broadcast address


@settings(max_examples=300, deadline=None)
@given(version=st.sampled_from([4, 6]), prefix=st.integers(0, 128), base=st.integers(0, 2 ** 128 - 1),
       offset=st.integers(-3, 300), index=st.integers(0, 300))
def test_property_every_address_is_a_host_address_inside_its_subnet(version, prefix, base, offset, index):
    bits = 32 if version == 4 else 128
    prefix = min(prefix, bits)
    network = ipaddress.ip_network((base % (2 ** bits), prefix), strict=False)
    address = rail_address(network, offset, index)
    if address is None:
        return
    assert address in network
    if network.num_addresses > 2:
        assert address != network.network_address
        if version == 4:
            assert address != network.broadcast_address
    assert network.num_addresses > 1


def test_hosts_whose_rail_subnets_disagree_are_named(hgx_connectx):
    hostvars = {name: host(hgx_connectx, rails=rails(2, v6=True), link_layers=["Ethernet"]) for name in ("a", "b", "c")}
    hostvars["b"]["__rdma_network_input"]["rails"] = [{"ipv4": "172.31.8.0/24", "ipv6": "fd00:31::/64"},
                                                      {"ipv4": "172.31.1.0/24"}]
    message = errors_of(hostvars, ["a", "b", "c"])
    assert message == (
        "rail_plan: rdma_network_rails[0].ipv4 differs between the hosts: 172.31.0.0/24 on a, c; 172.31.8.0/24 on b; "
        "every host of a fabric needs the same rail subnets; "
        "rdma_network_rails[1].ipv6 differs between the hosts: fd00:31:1::/64 on a, c; none on b; "
        "every host of a fabric needs the same rail subnets")


@pytest.mark.parametrize("value", ["false", "no", "0", 0, False])
def test_include_inactive_false_in_any_spelling_skips_the_down_port(broken_connectx, value):
    hostvars = {"n": host(broken_connectx, rails=rails(2), include_inactive=value)}
    plan = rail_plan(hostvars, ["n"])["n"]
    assert [rail["netdev"] for rail in plan["rails"]] == ["ibp49s0"]
    assert plan["skipped"] == [{"rail": 1, "netdev": "ibp177s0", "reason": "state DOWN, not ACTIVE"}]


def test_include_inactive_true_and_nonsense(broken_connectx):
    plan = rail_plan({"n": host(broken_connectx, rails=rails(2), include_inactive="yes")}, ["n"])["n"]
    assert [rail["netdev"] for rail in plan["rails"]] == ["ibp49s0", "ibp177s0"]
    message = errors_of({"n": host(broken_connectx, rails=rails(2), include_inactive="maybe")}, ["n"])
    assert message == ('rail_plan: host n: rdma_network_include_inactive must be a boolean (true/false, "yes"/"no", '
                       "1/0), got 'maybe'")


@pytest.mark.parametrize(("call", "expected"), [
    (lambda: rail_plan(["h"], ["h"]), "rail_plan: hostvars (the input) must be a mapping, got a list"),
    (lambda: rail_plan({}, "h"), "rail_plan: hosts must be a list, got a string"),
    (lambda: rail_plan({}, [1]), "rail_plan: hosts must be a list of host names, got the item 1"),
    (lambda: rail_plan({}, ["h"], 3), "rail_plan: input_var must be a string, got a number"),
    (lambda: rail_plan({}, ["h"], labels="x"), "rail_plan: labels must be a mapping, got a string"),
    (lambda: rail_plan({}, ["h"], labels={"mtu": 5}), "rail_plan: labels.mtu must be a string, got a number"),
    (lambda: rail_plan({}, ["h"], labels={"speed": "x"}),
     "rail_plan: labels: unknown setting(s) speed; known: " + ", ".join(DEFAULT_LABELS)),
    (lambda: rail_plan({}, ["h"], fleet="h"), "rail_plan: fleet must be a list, got a string"),
    (lambda: rail_plan({}, ["h"], fleet=[None]), "rail_plan: fleet must be a list of host names, got the item None"),
])
def test_bad_argument_types_name_filter_argument_and_expectation(call, expected):
    with pytest.raises(AnsibleFilterError) as caught:
        call()
    assert str(caught.value) == expected


@pytest.mark.parametrize(("connectx", "expected"), [
    ("none", "host h: ansible_facts['gpufabric']['connectx'] must be a mapping with a list of ports, got str"),
    ({"ports": "mlx5_0"}, "host h: ansible_facts['gpufabric']['connectx']['ports'] must be a list of ports, got str"),
    ({"ports": ["mlx5_0"]}, "host h: ansible_facts['gpufabric']['connectx']['ports'][0] must be a mapping, got str"),
    ({"ports": [{"netdev": 5}]},
     "host h: ansible_facts['gpufabric']['connectx']['ports'][0]['netdev'] must be a string, got 5"),
])
def test_wrongly_shaped_facts_are_named(connectx, expected):
    hostvars = {"h": {"ansible_facts": {"gpufabric": {"connectx": connectx}},
                      "__rdma_network_input": {"rails": rails(1)}}}
    assert expected in errors_of(hostvars, ["h"])


@pytest.mark.parametrize(("settings_", "expected"), [
    ({"host_index": float("inf")}, "host h: rdma_network_host_index: inf is not an integer"),
    ({"host_index": True}, "host h: rdma_network_host_index: True is not an integer"),
    ({"address_offset": 1.5}, "host h: rdma_network_address_offset: 1.5 is not an integer"),
    ({"rail_indices": [float("nan")]}, "host h: rdma_network_rail_indices: nan is not a rail number"),
])
def test_numbers_that_are_not_integers_are_refused(hgx_connectx, settings_, expected):
    hostvars = {"h": host(hgx_connectx, rails=rails(10), link_layers=["Ethernet"], **settings_)}
    assert expected in errors_of(hostvars, ["h"])


SOURCES = {"explicit", "record", "addresses", "facts", "allocated"}  # the documented host_index_source values
PLAN_KEYS = {"host", "host_index", "host_index_source", "rails", "skipped", "record", "moved"}
RAIL_KEYS = {"rail", "netdev", "rdma_device", "port", "pci_address", "device_id", "model", "link_layer", "state",
             "numa_node", "gpus_same_switch", "mtu", "max_mtu", "ipoib_mode", "table", "priority", "ipv4",
             "ipv4_network", "ipv4_prefix", "ipv6", "ipv6_network", "ipv6_prefix"}
_scalars = st.one_of(st.none(), st.booleans(), st.integers(-5, 70000), st.floats(allow_nan=True),
                     st.text(max_size=12), st.sampled_from(["false", "yes", "Ethernet", "InfiniBand", "ACTIVE",
                                                            "DOWN", "172.31.0.0/31", "10.0.0.1/32", "fd00::/127"]))
_anything = st.recursive(_scalars, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                           st.dictionaries(st.text(max_size=8), inner, max_size=3)),
                         max_leaves=8)


def _maybe(strategy):
    return st.one_of(strategy, _anything)


_port = st.fixed_dictionaries({
    "netdev": _maybe(st.sampled_from(["enp1s0np0", "enp2s0np0", "ibp3s0", ""])),
    "pci_address": _maybe(st.sampled_from(["0000:01:00.0", "0000:02:00.0", "0000:03:00.0"])),
    "port": _maybe(st.integers(1, 2)),
    "link_layer": _maybe(st.sampled_from(["Ethernet", "InfiniBand"])),
    "state": _maybe(st.sampled_from(["ACTIVE", "DOWN"])),
    "device_id": _maybe(st.just("0x1021")),
    "gpus_same_switch": _maybe(st.lists(st.just("0000:1b:00.0"), max_size=1)),
})
_rail = st.fixed_dictionaries({}, optional={
    "ipv4": _maybe(st.sampled_from(["172.31.0.0/24", "172.31.1.0/31", "172.31.2.1/32", "172.31.3.0/30"])),
    "ipv6": _maybe(st.sampled_from(["fd00:31::/64", "fd00:32::/127", "fd00:33::1/128"])),
    "mtu": _maybe(st.integers(60, 70000)), "table": _maybe(st.integers(0, 300))})
_input = st.fixed_dictionaries({}, optional={
    "rails": _maybe(st.lists(_maybe(_rail), max_size=3)), "host_index": _maybe(st.integers(-1, 5)),
    "address_offset": _maybe(st.integers(-1, 3)), "mtu": _maybe(st.integers(0, 70000)),
    "ipoib_mode": _maybe(st.sampled_from(["datagram", "connected"])),
    "link_layers": _maybe(st.lists(st.sampled_from(["Ethernet", "InfiniBand"]), max_size=2)),
    "netdev_pattern": _maybe(st.sampled_from(["enp.*", "(", ""])), "rail_indices": _maybe(st.lists(st.integers(-1, 3))),
    "include_inactive": _maybe(st.booleans()),
    "protected_interfaces": _maybe(st.lists(st.sampled_from(["enp1s0np0", "eno1"]), max_size=1))})
_host = st.fixed_dictionaries({}, optional={
    "ansible_facts": _maybe(st.fixed_dictionaries({"gpufabric": _maybe(st.fixed_dictionaries(
        {"connectx": _maybe(st.fixed_dictionaries({"ports": _maybe(st.lists(_maybe(_port), max_size=3))}))},
        optional={"network": _maybe(st.fixed_dictionaries({"interfaces": _maybe(st.dictionaries(
            st.sampled_from(["enp1s0np0", "enp2s0np0", "ibp3s0", "eno1"]), _maybe(st.fixed_dictionaries({}, optional={
                "max_mtu": _maybe(st.integers(0, 70000)),
                "ipv4_secondaries": _maybe(st.lists(st.fixed_dictionaries(
                    {"address": st.sampled_from(["172.31.0.2", "172.31.1.1"]), "prefix": st.just("24")}),
                    max_size=2))}))))}))})),
        "default_ipv4": _maybe(st.fixed_dictionaries({"interface": _maybe(st.just("eno1"))})),
        "interfaces": _maybe(st.lists(st.just("eno1"))),
        "eno1": _maybe(st.fixed_dictionaries({"ipv4": _maybe(st.fixed_dictionaries(
            {"address": st.just("172.31.0.9"), "netmask": st.just("255.255.255.0")}))}))})),
    "__rdma_network_input": _maybe(_input), "ansible_host": _maybe(st.just("172.31.0.9"))})


@settings(max_examples=150, deadline=None)
@given(hostvars=_maybe(st.dictionaries(st.sampled_from(["a", "b", "c"]), _maybe(_host), max_size=3)),
       hosts=_maybe(st.lists(st.sampled_from(["a", "b", "c"]), max_size=3, unique=True)),
       fleet=st.one_of(st.none(), _maybe(st.lists(st.sampled_from(["a", "b", "c", "d"]), max_size=4))))
def test_property_any_input_gives_the_documented_plan_or_a_filter_error(hostvars, hosts, fleet):
    try:
        plan = rail_plan(hostvars, hosts, fleet=fleet)
    except AnsibleFilterError as exc:
        assert str(exc).startswith("rail_plan: ")
        return
    assert set(plan) == set(hosts)
    for name, host_plan in plan.items():
        assert set(host_plan) == PLAN_KEYS and host_plan["host"] == name
        assert isinstance(host_plan["host_index"], int) and host_plan["host_index"] >= 0
        assert host_plan["host_index_source"] in SOURCES
        assert host_plan["record"]["host_index"] == host_plan["host_index"] and host_plan["moved"] == []
        for rail in host_plan["rails"]:
            assert set(rail) == RAIL_KEYS
            for key in ("ipv4", "ipv6"):
                if rail[key] is not None:
                    network = ipaddress.ip_network(rail[f"{key}_network"])
                    assert ipaddress.ip_address(rail[key]) in network and network.num_addresses > 1
        for skipped in host_plan["skipped"]:
            assert set(skipped) == {"rail", "netdev", "reason"}


# Plausible input at the edges (string booleans, /31 and /32 rails, offsets, duplicate and down ports), so that
# many examples plan: the same contract, plus the addresses of one rail are distinct across the hosts.
def _edge_port_of(number, state, link_layer):
    return {"netdev": f"enp{number}s0np0", "pci_address": f"0000:{number:02x}:00.0", "port": 1,
            "link_layer": link_layer, "state": state, "device_id": "0x1021"}


def _edge_rails_of(prefixes):
    return [{"ipv4": f"172.31.{number * 4}.{1 if prefix == 32 else 0}/{prefix}"} if prefix
            else {"ipv6": f"fd00:31:{number}::/64"} for number, prefix in enumerate(prefixes)]


_edge_port = st.builds(_edge_port_of, st.integers(1, 4), st.sampled_from(["ACTIVE", "ACTIVE", "DOWN"]),
                       st.sampled_from(["Ethernet", "Ethernet", "InfiniBand"]))
_edge_rails = st.lists(st.sampled_from([24, 24, 24, 31, 30, 32, None]), min_size=4, max_size=4).map(_edge_rails_of)
_edge_input = st.fixed_dictionaries({"rails": _edge_rails}, optional={
    "include_inactive": st.sampled_from([True, False, "false", "no", "yes", 0, 1, "maybe"]),
    "address_offset": st.integers(0, 2), "host_index": st.sampled_from([-1, -1, "-1", 0, 1, 2, "x"]),
    "mtu": st.sampled_from([0, 0, 1500, 4092, 12000])})


@settings(max_examples=150, deadline=None)
@given(ports=st.lists(_edge_port, min_size=1, max_size=4), inputs=st.lists(_edge_input, min_size=1, max_size=3),
       same_rails=st.booleans())
def test_property_edge_input_plans_inside_the_subnets_or_fails_clearly(ports, inputs, same_rails):
    names = [f"h{number}" for number in range(len(inputs))]
    hostvars = {}
    for name, settings_ in zip(names, inputs, strict=True):
        if same_rails:
            settings_ = {**settings_, "rails": inputs[0]["rails"]}
        hostvars[name] = {"ansible_facts": {"gpufabric": {"connectx": {"ports": ports}}},
                          "__rdma_network_input": settings_}
    try:
        plan = rail_plan(hostvars, names)
    except AnsibleFilterError as exc:
        assert str(exc).startswith("rail_plan: host ") or str(exc).startswith("rail_plan: rdma_network_rails[")
        return
    owners = {}
    for name in names:
        for rail in plan[name]["rails"]:
            assert set(rail) == RAIL_KEYS
            for key in ("ipv4", "ipv6"):
                if rail[key] is None:
                    continue
                network = ipaddress.ip_network(rail[f"{key}_network"])
                address = ipaddress.ip_address(rail[key])
                assert address in network and network.num_addresses > 1
                if network.num_addresses > 2:
                    assert address != network.network_address
                assert owners.setdefault((rail["rail"], key, rail[key]), name) == name


# --- issue 44: a job slice holds part of each rack; the recorded members outside it keep their indices

SLICE_CLIQUE = "3c1a5f2e-9b7d-4c2a-8e6f-1d0b7a9c4e21.1"


def slice_member(connectx, members, **settings):
    """A new tray of a job slice (no record, no plan): its GPUs in the rack's clique, the rack's membership recorded
    by the preflight."""
    item = host(connectx, rails=rails(2), link_layers=["Ethernet"], **settings)
    item["ansible_facts"]["gpufabric"]["gpu"] = {"cliques": [SLICE_CLIQUE]}
    item["ansible_facts"]["gpufabric_imex_membership"] = {"clique": SLICE_CLIQUE, "members": members}
    return item


def cached_member(index):
    """A member of another slice as the fact cache holds it: fabric facts and the rail plan it was given."""
    return {"ansible_facts": {"gpufabric": {"gpu": {"cliques": [SLICE_CLIQUE]}}, "rdma_network_rail_plan": {
        "host_index": index, "rails": [{"rail": 0, "ipv4": f"172.31.0.{index + 1}", "ipv4_prefix": 24}]}},
        "gpufabric_imex_address": f"10.0.0.{index + 1}"}


def test_a_slice_gives_new_trays_no_index_a_member_of_another_slice_holds(hgx_connectx):
    members = {f"tray-{n}": f"10.0.0.{n}" for n in range(1, 5)}
    hostvars = {name: slice_member(hgx_connectx, members) for name in ("tray-3", "tray-4")}
    # Without the members outside the slice, its new trays take indices 0 and 1, which tray-1 and tray-2 hold.
    alone = rail_plan(hostvars, ["tray-3", "tray-4"])
    assert [alone[name]["host_index"] for name in ("tray-3", "tray-4")] == [0, 1]
    # With them from the fact cache (what imex_outside_members returns), the slice's trays take the next free ones.
    outside = {"hostvars": {"tray-1": cached_member(0), "tray-2": cached_member(1)}, "missing": {}}
    plan = rail_plan(hostvars, ["tray-3", "tray-4"], fleet=["tray-3", "tray-4"], outside=outside)
    assert [(plan[name]["host_index"], plan[name]["rails"][0]["ipv4"]) for name in ("tray-3", "tray-4")] == [
        (2, "172.31.0.3"), (3, "172.31.0.4")]
    assert set(plan) == {"tray-3", "tray-4"}
    # A member found nowhere has an unknown index: the new trays get none, the message names it.
    outside = {"hostvars": {"tray-1": cached_member(0)}, "missing": {SLICE_CLIQUE: ["tray-2"]}}
    message = errors_of_outside(hostvars, ["tray-3", "tray-4"], outside)
    assert "host tray-3, tray-4: a new host index is needed, but the index of tray-2 " in message
    # Trays of the slice with their own explicit index (rdma_network_host_index, in the role's input) need no free one.
    hostvars["tray-3"]["__rdma_network_input"]["host_index"] = 7
    hostvars["tray-4"]["__rdma_network_input"]["host_index"] = 8
    assert rail_plan(hostvars, ["tray-3", "tray-4"], outside=outside)["tray-4"]["host_index"] == 8


def errors_of_outside(hostvars, hosts, outside):
    with pytest.raises(AnsibleFilterError) as caught:
        rail_plan(hostvars, hosts, outside=outside)
    return str(caught.value)


@pytest.mark.parametrize("outside", ["x", [], {"hostvars": {}}, {"hostvars": [], "missing": {}},
                                     {"hostvars": {}, "missing": {SLICE_CLIQUE: "tray-2"}}])
def test_an_outside_of_another_shape_is_refused_naming_it(hgx_connectx, outside):
    hostvars = {"tray-3": slice_member(hgx_connectx, {"tray-3": "10.0.0.3"})}
    assert "rail_plan: outside" in errors_of_outside(hostvars, ["tray-3"], outside)


def test_a_slice_tray_given_the_index_a_member_of_another_slice_holds_is_named_with_it(hgx_connectx):
    """A value shared by two hosts: a slice's tray set explicitly to the index a cached member of another slice
    holds would take its addresses; both are named."""
    members = {f"tray-{n}": f"10.0.0.{n}" for n in range(1, 4)}
    hostvars = {"tray-3": slice_member(hgx_connectx, members, host_index=0)}
    outside = {"hostvars": {"tray-1": cached_member(0), "tray-2": cached_member(1)}, "missing": {}}
    message = errors_of_outside(hostvars, ["tray-3"], outside)
    assert "tray-1" in message and "tray-3" in message
