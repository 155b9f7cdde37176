# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The imex_address filter: one rule for a host's IMEX address, shared by preflight and nvidia_imex."""

from __future__ import annotations

import ipaddress

import pytest
from ansible.errors import AnsibleFilterError
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.gpufabric.cluster.plugins.filter.imex_address import imex_address
from ansible_collections.gpufabric.cluster.plugins.filter.imex_domains import imex_domains
from ansible_collections.gpufabric.cluster.plugins.filter.preflight_report import preflight_report

CLIQUE = "3c1a5f2e-9b7d-4c2a-8e6f-1d0b7a9c4e21.1"


def facts(default_ipv4="10.0.0.1", ib0="192.168.7.1", ib0_ipv6=None):
    """ansible_facts as setup's network subset gives them: the default route's interface and ib0."""
    result = {"default_ipv4": {"address": default_ipv4, "interface": "eth0"} if default_ipv4 else {},
              "ib0": {"device": "ib0", "ipv4": {"address": ib0, "prefix": "24"}} if ib0 else {"device": "ib0"}}
    if ib0_ipv6:
        result["ib0"]["ipv6"] = [{"address": "fe80::1", "prefix": "64", "scope": "link"},
                                 {"address": ib0_ipv6, "prefix": "64", "scope": "global"}]
    return result


@pytest.mark.parametrize(("settings", "expected"), [
    pytest.param({}, "10.0.0.1", id="default-route"),
    pytest.param({"interface": "ib0"}, "192.168.7.1", id="interface"),
    pytest.param({"address": " 10.9.9.9 ", "interface": "ib0"}, "10.9.9.9", id="explicit-wins"),
    pytest.param({"interface": "ib0", "family": "ipv6"}, "fd00::7", id="interface-ipv6-global"),
    pytest.param({"address": "fd00:0:0::2", "family": "ipv6"}, "fd00::2", id="canonical"),
])
def test_rule(settings, expected):
    assert imex_address(facts(ib0_ipv6="fd00::7"), "tray-1", **settings) == expected


@pytest.mark.parametrize(("host_facts", "settings", "message"), [
    pytest.param(facts(default_ipv4=None), {}, "imex_address: host tray-1: no IMEX address found: "
                 "gpufabric_imex_address is not set and ansible_facts['default_ipv4'] is empty", id="no-default"),
    pytest.param(facts(ib0=None), {"interface": "ib0", "prefix": "nvidia_imex"},
                 "host tray-1: no IMEX address found: nvidia_imex_address is not set and "
                 "ansible_facts['ib0']['ipv4'] is empty (gather setup facts, choose another nvidia_imex_interface "
                 "or nvidia_imex_address_family, or set nvidia_imex_address)", id="interface-without-address"),
    pytest.param(facts(), {"address": "tray-1.example"},
                 "host tray-1: gpufabric_imex_address: 'tray-1.example' is not an IP address", id="host-name"),
    pytest.param(facts(), {"family": "ipv5"},
                 "host tray-1: gpufabric_imex_address_family must be one of ipv4, ipv6, got 'ipv5'", id="family"),
    pytest.param([], {}, "the input must be a host's ansible_facts, got list", id="not-facts"),
])
def test_errors_name_host_and_variable(host_facts, settings, message):
    with pytest.raises(AnsibleFilterError, match="imex_address: ") as error:
        imex_address(host_facts, "tray-1", **settings)
    assert message in str(error.value)


def test_preflight_and_nvidia_imex_agree_on_a_site_that_sets_only_the_interface():
    """gpufabric_imex_interface alone: preflight expects and nvidia_imex writes the same addresses (those of ib0)."""
    site = {"gpufabric_imex_interface": "ib0"}
    hostvars = {}
    for number in (1, 2):
        host_facts = facts(default_ipv4=f"10.0.0.{number}", ib0=f"192.168.7.{number}")
        host_facts["gpufabric"] = {"gpu": {"count": 4, "driver_loaded": True, "cliques": [CLIQUE], "gpus": []},
                                   "imex": {}, "connectx": {}, "peermem": {}}
        hostvars[f"tray-{number}"] = {"ansible_facts": host_facts, **site}
    hosts = sorted(hostvars)
    # nvidia_imex: nvidia_imex_interface defaults to gpufabric_imex_interface; each host publishes its address
    # (tasks/validate.yml), then the controller derives the nodes file.
    for name in hosts:
        role = {"address": "", "interface": hostvars[name]["gpufabric_imex_interface"], "family": "ipv4"}
        hostvars[name]["__nvidia_imex_address"] = imex_address(hostvars[name]["ansible_facts"], name, **role,
                                                               prefix="nvidia_imex")
    placement = imex_domains(hostvars, hosts, [], "ipv4", "ib0", address_var="__nvidia_imex_address",
                             address_label="nvidia_imex_address")
    written = placement["tray-1"]["nodes"]
    assert written == ["192.168.7.1", "192.168.7.2"]
    # preflight: the same rule over the site variables, and the nodes file the role wrote is judged consistent.
    for name in hosts:
        hostvars[name]["ansible_facts"]["gpufabric"]["imex"] = {
            "installed": True, "version": "570.172.08-1",
            "nodes": {"path": "/etc/nvidia-imex/nodes_config.cfg", "addresses": written}}
    report = preflight_report(hostvars, hosts)
    assert {name: report["hosts"][name]["imex_address"] for name in hosts} == \
        {name: placement[name]["address"] for name in hosts}
    [domain] = report["imex_domains"]
    # the domain's own verdict (its status also holds its members', whose minimal facts fail other checks)
    assert (domain["own_status"], domain["problems"], domain["notes"]) == ("pass", [], [])


def test_preflight_names_why_an_address_is_unknown():
    hostvars = {"tray-1": {"ansible_facts": {**facts(ib0=None), "gpufabric": {
        "gpu": {"count": 4, "driver_loaded": True, "cliques": [CLIQUE], "gpus": []}}},
        "gpufabric_imex_interface": "ib0"}}
    [domain] = preflight_report(hostvars, ["tray-1"])["imex_domains"]
    assert domain["own_status"] == "warn"
    assert domain["notes"] == ["no IMEX address known for tray-1 (set gpufabric_imex_address): host tray-1: no IMEX "
                               "address found: gpufabric_imex_address is not set and ansible_facts['ib0']['ipv4'] is "
                               "empty (gather setup facts, choose another gpufabric_imex_interface or "
                               "gpufabric_imex_address_family, or set gpufabric_imex_address)"]


@pytest.mark.parametrize(("address", "kind"), [("127.0.0.1", "loopback"), ("0.0.0.0", "unspecified"),
                                               ("169.254.3.4", "link-local"), ("::1", "loopback")])
def test_an_address_peers_cannot_reach_is_refused_naming_host_and_variable(address, kind):
    with pytest.raises(AnsibleFilterError, match=rf"host h1: gpufabric_imex_address: .* is a {kind} address"):
        imex_address({}, "h1", address=address)


def test_the_string_false_from_extra_vars_is_not_an_address():
    with pytest.raises(AnsibleFilterError, match=r"host h1: gpufabric_imex_address: 'false' is not an IP address"):
        imex_address({}, "h1", address="false")


def fabric_network(default_ipv4="10.0.0.1", ib0="192.168.7.1", ib0_ipv6=None):
    """ansible_facts with only fabric_facts' network subset: the same values as facts(), nested."""
    flat = facts(default_ipv4, ib0, ib0_ipv6)
    return {"gpufabric": {"network": {"default_ipv4": flat["default_ipv4"], "default_ipv6": {},
                                      "interfaces": {"ib0": flat["ib0"]}, "errors": []}}}


@pytest.mark.parametrize(("settings", "expected"), [
    pytest.param({}, "10.0.0.1", id="default-route"),
    pytest.param({"interface": "ib0"}, "192.168.7.1", id="interface"),
    pytest.param({"interface": "ib0", "family": "ipv6"}, "fd00::7", id="interface-ipv6-global"),
])
def test_fabric_facts_network_gives_the_same_address_as_setup(settings, expected):
    assert imex_address(fabric_network(ib0_ipv6="fd00::7"), "tray-1", **settings) == expected
    assert imex_address(facts(ib0_ipv6="fd00::7"), "tray-1", **settings) == expected


def test_setup_facts_take_precedence_over_fabric_facts_network():
    both = {**facts(default_ipv4="10.0.0.2", ib0="192.168.7.2"), **fabric_network()}
    assert imex_address(both, "tray-1") == "10.0.0.2"
    assert imex_address(both, "tray-1", interface="ib0") == "192.168.7.2"


@pytest.mark.parametrize("network", [None, "eth0", [], {"interfaces": "ib0"}, {"default_ipv4": None}])
def test_malformed_fabric_facts_network_means_no_address(network):
    with pytest.raises(AnsibleFilterError, match=r"host tray-1: no IMEX address found"):
        imex_address({"gpufabric": {"network": network}}, "tray-1")


def test_preflight_reads_the_address_from_fabric_facts_alone():
    gpufabric = {"gpu": {"count": 0, "gpus": []}, "connectx": {"count": 0}, "imex": {}, "peermem": {}}
    host = {"ansible_facts": {"gpufabric": {**gpufabric, **fabric_network()["gpufabric"]}}}
    report = preflight_report({"tray-1": host}, ["tray-1"])
    assert report["hosts"]["tray-1"]["imex_address"] == "10.0.0.1"


ADDRESSES = st.sampled_from(["10.0.0.1", "fd00::7", "127.0.0.1", "fe80::1", "0.0.0.0", "tray-1", "", " 10.0.0.2 "])
JSON = st.recursive(st.none() | st.booleans() | st.integers(-1, 5) | st.text(max_size=4) | ADDRESSES,
                    lambda children: st.lists(children, max_size=3)
                    | st.dictionaries(st.sampled_from(["address", "scope", "ipv4", "ipv6", "ib0", "default_ipv4",
                                                       "gpufabric", "network", "interfaces"]), children, max_size=3),
                    max_leaves=8)


@settings(max_examples=200, deadline=None)
@given(host_facts=st.none() | JSON | st.builds(facts, ADDRESSES, ADDRESSES, ADDRESSES),
       address=st.none() | ADDRESSES | JSON, interface=st.sampled_from(["", "ib0", "eth0"]) | JSON,
       family=st.sampled_from(["ipv4", "ipv6"]) | JSON)
def test_any_input_gives_a_usable_address_of_the_family_or_the_documented_error(host_facts, address, interface, family):
    try:
        result = imex_address(host_facts, "tray-1", address, interface, family)
    except AnsibleFilterError as exc:
        assert str(exc).startswith("imex_address: ")
        return
    parsed = ipaddress.ip_address(result)
    assert str(parsed) == result
    assert f"ipv{parsed.version}" == (family or "ipv4")
    assert not (parsed.is_loopback or parsed.is_link_local or parsed.is_unspecified)


@pytest.mark.parametrize(("kwargs", "message"), [
    pytest.param({"host": ["tray-1"]}, "imex_address: host must be a string, got a list", id="host-list"),
    pytest.param({"prefix": None}, "imex_address: prefix must be a string, got null", id="prefix-null"),
    pytest.param({"interface": ["ib0"]}, "imex_address: host tray-1: gpufabric_imex_interface must be an interface "
                 "name, got list", id="interface-list"),
    pytest.param({"address": ["10.0.0.1"]}, "imex_address: host tray-1: gpufabric_imex_address: must be an IP "
                 "address as a string, got list", id="address-list"),
])
def test_bad_argument_types_are_refused_naming_the_argument(kwargs, message):
    arguments = {"host": "tray-1", **kwargs}
    with pytest.raises(AnsibleFilterError) as caught:
        imex_address(facts(), **arguments)
    assert str(caught.value) == message


# Issue 39 item 9: an address that is no unicast address of one host (224.0.0.1 was accepted) is refused, given or
# read from the facts, IPv4 and IPv6, with the loopback, unspecified and link-local ones refused before.
@pytest.mark.parametrize(("address", "family", "kind"), [
    ("224.0.0.1", "ipv4", "multicast"), ("239.255.255.250", "ipv4", "multicast"), ("ff02::1", "ipv6", "multicast"),
    ("ff05::1:3", "ipv6", "multicast"), ("255.255.255.255", "ipv4", "broadcast"), ("240.0.0.1", "ipv4", "reserved"),
    ("100::1", "ipv6", "reserved"),
])
def test_a_multicast_broadcast_or_reserved_address_is_refused(address, family, kind):
    with pytest.raises(AnsibleFilterError) as caught:
        imex_address({}, "h1", address=address, family=family)
    assert str(caught.value) == (f"imex_address: host h1: gpufabric_imex_address: {address} is a {kind} address, "
                                 "which IMEX peers on other hosts cannot reach")
    with pytest.raises(AnsibleFilterError) as caught:
        imex_address(facts(default_ipv4=address), "h1") if family == "ipv4" else \
            imex_address(facts(ib0_ipv6=address), "h1", interface="ib0", family="ipv6")
    assert f"is a {kind} address, which IMEX peers on other hosts cannot reach" in str(caught.value)


@pytest.mark.parametrize(("address", "family"), [("10.0.0.1", "ipv4"), ("192.168.7.1", "ipv4"), ("100.64.0.1", "ipv4"),
                                                 ("fd00::7", "ipv6"), ("2001:db8::1", "ipv6"),
                                                 ("::ffff:10.0.0.1", "ipv6")])
def test_a_unicast_address_of_a_host_is_kept(address, family):
    assert imex_address({}, "h1", address=address, family=family) == str(ipaddress.ip_address(address))


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.ip_addresses(v=4), st.ip_addresses(v=6)))
def test_any_address_is_kept_only_when_it_is_a_unicast_address_of_one_host(address):
    family = f"ipv{address.version}"
    unfit = (address.is_loopback or address.is_unspecified or address.is_link_local or address.is_multicast
             or str(address) == "255.255.255.255"
             or (address.is_reserved and not (address.version == 6 and address.ipv4_mapped)))
    try:
        result = imex_address({}, "h1", address=str(address), family=family)
    except AnsibleFilterError as exc:
        assert unfit, str(exc)
        assert str(exc).endswith("address, which IMEX peers on other hosts cannot reach")
        return
    assert not unfit and result == str(address)
