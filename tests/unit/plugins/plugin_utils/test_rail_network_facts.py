# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Host addresses come from one source (issue 40 item 2): the rail plan reads fabric_facts' network subset.

The default routes' interfaces, every live address (primary and secondary IPv4, IPv6) and each link's maximum MTU are
read from ``ansible_facts['gpufabric']['network']`` through the flattening the IMEX address rule uses
(plugin_utils/network_facts.py), ``setup``'s network facts when only those were gathered.  On the starting commit the
rail plan read the live addresses and maximum MTU from the role's own ``ip`` command (``__rdma_network_input``'s
``addresses`` and ``max_mtu``): with the facts alone, a host converged without a record was given a new index, and
the kernel's maximum MTU was not applied.
"""

from __future__ import annotations

import copy
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.gpufabric.cluster.plugins.module_utils.connectx import collect_connectx
from ansible_collections.gpufabric.cluster.plugins.module_utils.network import parse_ip_addr
from ansible_collections.gpufabric.cluster.plugins.plugin_utils import imex_address, network_facts, rail_plan
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.rail_indices import RECORD_FILE
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.rail_plan import RailPlanError, derive_rail_plan

RAILS = [{"ipv4": "172.31.0.0/24", "ipv6": "fd00:31::/64"}, {"ipv4": "172.31.1.0/24"}]
NETDEVS = ["enp170s0f0np0", "enp170s0f1np1"]  # the recorded HGX H100's two RoCE ports: rails 0 and 1


@pytest.fixture(scope="module")
def connectx(host_trees):
    """``ansible_facts['gpufabric']['connectx']`` of the recorded HGX H100, from the real collector."""
    return collect_connectx(host_trees["hgx_h100"])


def addr(local, prefix, secondary=False):
    """One entry of ``ip -json address``'s ``addr_info``."""
    return {"family": "inet6" if ":" in local else "inet", "local": local, "prefixlen": prefix, "scope": "global",
            **({"secondary": True} if secondary else {})}


def fabric_network(connectx, addresses=None, max_mtu=None, default="eno1"):
    """fabric_facts' network subset of a host with the ports' links, as its parser makes it of ip's JSON."""
    links = [{"ifname": default, "mtu": 1500, "max_mtu": 9216, "addr_info": [addr("192.0.2.21", 24)]}]
    for port in connectx["ports"]:
        link = {"ifname": port["netdev"], "mtu": 1500, "addr_info": (addresses or {}).get(port["netdev"], [])}
        if port["netdev"] in (max_mtu or {}):
            link["max_mtu"] = max_mtu[port["netdev"]]
        links.append(link)
    return {"default_ipv4": {"interface": default, "address": "192.0.2.21"}, "default_ipv6": {},
            "interfaces": parse_ip_addr(json.dumps(links)), "errors": []}


def hostvars(connectx, network=None, setup=None, **settings_):
    facts = {"gpufabric": {"connectx": copy.deepcopy(connectx)}, **(setup or {})}
    if network is not None:
        facts["gpufabric"]["network"] = network
    return {"h": {"ansible_facts": facts, "__rdma_network_input": {
        "rails": RAILS, "link_layers": ["Ethernet"], "record": {"path": RECORD_FILE, "exists": False},
        **settings_}}}


def refusal(hosts_vars):
    with pytest.raises(RailPlanError) as caught:
        derive_rail_plan(hosts_vars, ["h"])
    return caught.value.errors


def test_the_imex_rule_and_the_rail_plan_share_one_flattening():
    assert imex_address.network_facts is network_facts.network_facts
    network = {"default_ipv4": {"interface": "eth0", "address": "192.0.2.2"}, "default_ipv6": None,
               "interfaces": {"eth0": {"ipv4": {"address": "192.0.2.2"}}, "ib-0": {"max_mtu": 4092}}}
    flat = network_facts.network_facts({"gpufabric": {"network": network}})
    assert flat == {"default_ipv4": {"interface": "eth0", "address": "192.0.2.2"}, "default_ipv6": {},
                    "interfaces": ["eth0", "ib-0"], "eth0": {"ipv4": {"address": "192.0.2.2"}},
                    "ib-0": {"max_mtu": 4092}}
    assert network_facts.interface_entry(flat, "ib-0") == {"max_mtu": 4092}
    assert network_facts.interface_entry({"ib_0": {"mtu": 1}}, "ib-0") == {"mtu": 1}  # setup writes - as _
    setup = {"default_ipv4": {"interface": "eno1"}, "interfaces": ["eno1"], "gpufabric": {"network": network}}
    # setup's facts win for the IMEX rule (as before), fabric_facts' for the rail plan (it alone has max_mtu)
    assert network_facts.network_facts(setup) is setup
    assert network_facts.network_facts(setup, prefer="fabric") == flat
    assert network_facts.network_facts({"interfaces": ["eno1"]}, prefer="fabric") == {"interfaces": ["eno1"]}
    assert network_facts.network_facts(None) == {} and network_facts.network_facts({"gpufabric": []}) == \
        {"gpufabric": []}


def test_a_rail_address_held_as_a_secondary_ipv4_address_keeps_the_hosts_index(connectx):
    # converged by a build without records: rail 0's address is secondary (an address of its subnet came first),
    # rail 1's comes after an address of another subnet; both are .3 (index 2)
    addresses = {NETDEVS[0]: [addr("172.31.0.200", 24), addr("172.31.0.3", 24, secondary=True)],
                 NETDEVS[1]: [addr("10.9.0.1", 16), addr("172.31.1.3", 24)]}
    network = fabric_network(connectx, addresses)
    assert network["interfaces"][NETDEVS[0]]["ipv4_secondaries"][0]["address"] == "172.31.0.3"
    with pytest.raises(RailPlanError) as caught:
        derive_rail_plan(hostvars(connectx, network), ["h"])
    # .200 and .3 on rail 0 are two indices: named, with the secondary address among them
    assert caught.value.errors == [
        "host h: its live rail addresses are not of one host index: 172.31.0.200 on rail 0 (enp170s0f0np0, index 199), "
        "172.31.0.3 on rail 0 (enp170s0f0np0, index 2), 172.31.1.3 on rail 1 (enp170s0f1np1, index 2); set "
        "rdma_network_host_index to the index it keeps"]
    addresses[NETDEVS[0]] = [addr("10.8.0.1", 16), addr("172.31.0.3", 24), addr("fd00:31::3", 64)]
    plan = derive_rail_plan(hostvars(connectx, fabric_network(connectx, addresses)), ["h"])["h"]
    assert (plan["host_index"], plan["host_index_source"]) == (2, "addresses")
    assert plan["record"]["rails"] == {"0": {"netdev": NETDEVS[0], "ipv4": "172.31.0.3/24", "ipv6": "fd00:31::3/64"},
                                       "1": {"netdev": NETDEVS[1], "ipv4": "172.31.1.3/24"}}


def test_the_links_maximum_mtu_comes_from_the_network_facts(connectx):
    network = fabric_network(connectx, max_mtu={NETDEVS[0]: 1500, NETDEVS[1]: 0})
    assert refusal(hostvars(connectx, network)) == [
        "host h: the default MTU 9000 is above the maximum MTU 1500 of enp170s0f0np0 (RoCE (Ethernet))"]
    # 0: the driver sets no maximum, the hardware's applies
    plan = derive_rail_plan(hostvars(connectx, network, mtu=1500), ["h"])["h"]
    assert [rail["max_mtu"] for rail in plan["rails"]] == [1500, 9978]


def test_a_rail_netdev_missing_from_the_network_facts_is_named(connectx):
    network = fabric_network(connectx)
    del network["interfaces"][NETDEVS[1]]
    assert refusal(hostvars(connectx, network)) == [
        "host h: rail 1: netdev enp170s0f1np1 from ansible_facts['gpufabric']['connectx'] does not exist on the host "
        "(ansible_facts['gpufabric']['network']['interfaces']); is the probe root right?"]


def test_the_default_route_interface_is_protected_from_the_facts(connectx):
    """Issue 45: the default route's interface is no rail by default (skipped, named with why); a selection that
    names it is refused."""
    network = fabric_network(connectx)
    network["default_ipv4"] = {"interface": NETDEVS[1], "address": "172.31.1.9"}
    plan = derive_rail_plan(hostvars(connectx, network), ["h"])["h"]
    assert [rail["netdev"] for rail in plan["rails"]] == NETDEVS[:1]
    assert plan["skipped"] == [{"rail": None, "netdev": NETDEVS[1], "reason": "protected: default route"}]
    named = hostvars(connectx, network, pci_addresses=[port["pci_address"] for port in connectx["ports"]
                                                       if port["netdev"] in NETDEVS])
    assert "host h: rail 1 is enp170s0f1np1, an interface the role must not touch (default route, ansible_host or " \
        "rdma_network_protected_interfaces)" in refusal(named)[0]


def test_facts_gathered_by_an_earlier_play_keep_working(connectx):
    # setup's network facts and fabric_facts' network subset: the subset decides (it has max_mtu)
    setup = {"default_ipv4": {"interface": "eno1"}, "interfaces": ["eno1", *NETDEVS], "eno1": {}}
    network = fabric_network(connectx, max_mtu={NETDEVS[0]: 1500})
    assert rail_plan.network_of(hostvars(connectx, network, setup)["h"])["interfaces"][0] == "eno1"
    assert "maximum MTU 1500" in refusal(hostvars(connectx, network, setup))[0]
    # setup's alone (a host's vars from before the subset): read as the same layout
    plan = derive_rail_plan(hostvars(connectx, None, setup), ["h"])["h"]
    assert [rail["netdev"] for rail in plan["rails"]] == NETDEVS
    setup[NETDEVS[1]] = {"ipv4": {"address": "172.31.1.5", "netmask": "255.255.255.0"}}
    plan = derive_rail_plan(hostvars(connectx, None, setup), ["h"])["h"]
    assert (plan["host_index"], plan["host_index_source"]) == (4, "addresses")
    # none: no live addresses, no maximum, no existence check
    assert rail_plan.network_of(hostvars(connectx)["h"]) == {}
    assert derive_rail_plan(hostvars(connectx), ["h"])["h"]["host_index_source"] == "allocated"


@pytest.mark.parametrize(("entry", "message"), [
    ({"ipv4_secondaries": {"address": "172.31.0.3"}}, "ipv4_secondaries must be a list of addresses, got dict"),
    ({"ipv6": ["fd00:31::3"]}, "an entry of ipv6 is not a mapping"),
    ({"ipv4": {"address": "172.31.0.3", "prefix": "x"}}, "an entry of ipv4 is not an address with its prefix length"),
])
def test_live_addresses_of_a_wrong_shape_are_named(connectx, entry, message):
    network = fabric_network(connectx)
    network["interfaces"][NETDEVS[0]] = entry
    assert refusal(hostvars(connectx, network)) == [
        f"host h: ansible_facts['gpufabric']['network']['interfaces']['{NETDEVS[0]}'] (its live addresses): {message}"]


_scalar = st.one_of(st.none(), st.booleans(), st.integers(-1, 70000), st.text(max_size=6),
                    st.sampled_from(["172.31.0.3", "fd00:31::3", "24", "64", "global", "link"]))
_value = st.recursive(_scalar, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
    st.sampled_from(["address", "prefix", "netmask", "scope", "max_mtu", "ipv4", "ipv6", "ipv4_secondaries"]),
    inner, max_size=4), max_leaves=12)
_entry = st.one_of(_value, st.fixed_dictionaries({}, optional={
    "ipv4": _value, "ipv4_secondaries": _value, "ipv6": _value, "max_mtu": _value}))


@settings(max_examples=150, deadline=None)
@given(interfaces=st.one_of(_value, st.dictionaries(st.sampled_from([*NETDEVS, "eno1"]), _entry, max_size=3)),
       default=st.one_of(_value, st.fixed_dictionaries({"interface": st.sampled_from([*NETDEVS, "eno1"])})))
def test_property_any_network_facts_give_a_plan_or_named_errors(connectx, interfaces, default):
    network = {"default_ipv4": default, "default_ipv6": {}, "interfaces": interfaces}
    try:
        plan = derive_rail_plan(hostvars(connectx, network), ["h"])["h"]
    except RailPlanError as exc:
        assert exc.errors and all(error.startswith("host h: ") and "\n" not in error for error in exc.errors)
        return
    assert plan["host_index"] >= 0 and plan["host_index_source"] in ("addresses", "allocated")
    for rail in plan["rails"]:
        assert 1 <= rail["max_mtu"] <= 9978 and rail["mtu"] <= rail["max_mtu"]
