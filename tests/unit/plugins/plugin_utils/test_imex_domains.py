# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The imex_domains filter: domains from fabric cliques or explicit lists, addresses, and bad input."""

from __future__ import annotations

import ipaddress

import pytest
from ansible.errors import AnsibleFilterError
from fixtures.recorded_nvml import recorded_facts
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.gpufabric.cluster.plugins.filter.imex_domains import imex_domains
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.imex_domains import nodes_file

GB200_CLIQUE = "3c1a5f2e-9b7d-4c2a-8e6f-1d0b7a9c4e21.1"
OTHER_CLIQUE = "3c1a5f2e-9b7d-4c2a-8e6f-1d0b7a9c4e21.2"


@pytest.fixture(scope="module")
def gb200_gpu(host_trees, command_runner):
    """``ansible_facts['gpufabric']['gpu']`` of the recorded GB200 tray, gathered by the real collector."""
    facts = recorded_facts(host_trees["gb200_tray"], command_runner, subsets=("gpu",))
    assert facts["gpu"]["cliques"] == [GB200_CLIQUE]
    return facts["gpu"]


def host(cliques=None, ipv4=None, **extra):
    """hostvars of one host with the given cliques and default IPv4 address."""
    facts = {"gpufabric": {"gpu": {"cliques": list(cliques or [])}}}
    if ipv4:
        facts["default_ipv4"] = {"address": ipv4, "interface": "eth0"}
    return {"ansible_facts": facts, **extra}


def test_three_trays_of_one_clique_share_one_sorted_nodes_file(gb200_gpu):
    hostvars = {name: {"ansible_facts": {"gpufabric": {"gpu": gb200_gpu}, "default_ipv4": {"address": address}}}
                for name, address in (("tray-c", "10.0.0.10"), ("tray-a", "10.0.0.9"), ("tray-b", "10.0.0.100"))}
    result = imex_domains(hostvars, ["tray-a", "tray-b", "tray-c"])
    nodes = ["10.0.0.9", "10.0.0.10", "10.0.0.100"]
    assert result == {
        "tray-a": {"domain": GB200_CLIQUE, "clique": GB200_CLIQUE, "address": "10.0.0.9", "nodes": nodes,
                   "refused": None},
        "tray-b": {"domain": GB200_CLIQUE, "clique": GB200_CLIQUE, "address": "10.0.0.100", "nodes": nodes,
                   "refused": None},
        "tray-c": {"domain": GB200_CLIQUE, "clique": GB200_CLIQUE, "address": "10.0.0.10", "nodes": nodes,
                   "refused": None},
    }


def test_two_cliques_make_two_domains_and_hosts_without_clique_none():
    hostvars = {
        "a1": host([GB200_CLIQUE], "10.0.0.1"), "a2": host([GB200_CLIQUE], "10.0.0.2"),
        "b1": host([OTHER_CLIQUE], "10.0.1.1"), "h100": host([], "10.0.2.1"), "bare": {},
    }
    result = imex_domains(hostvars, ["a1", "a2", "b1", "h100", "bare"])
    assert result["a1"]["nodes"] == result["a2"]["nodes"] == ["10.0.0.1", "10.0.0.2"]
    assert result["b1"] == {"domain": OTHER_CLIQUE, "clique": OTHER_CLIQUE, "address": "10.0.1.1",
                            "nodes": ["10.0.1.1"], "refused": None}
    assert result["h100"] == {"domain": None, "clique": None, "address": None, "nodes": [], "refused": None}
    assert result["bare"]["domain"] is None


def test_explicit_address_interface_and_ipv6():
    hostvars = {
        "a": host([GB200_CLIQUE], "192.0.2.1", nvidia_imex_address="10.1.0.2"),
        "b": host([GB200_CLIQUE], "192.0.2.2"),
    }
    hostvars["b"]["ansible_facts"]["ib0"] = {"ipv4": {"address": "10.1.0.1"},
                                             "ipv6": [{"address": "fe80::1", "scope": "link"},
                                                      {"address": "fd00::1", "scope": "global"}]}
    hostvars["a"]["ansible_facts"]["ib0"] = {"ipv4": {"address": "10.1.0.9"}}
    assert imex_domains(hostvars, ["a", "b"], interface="ib0")["a"]["nodes"] == ["10.1.0.1", "10.1.0.2"]
    hostvars["a"]["nvidia_imex_address"] = "fd00:0:0::2"
    assert imex_domains(hostvars, ["a", "b"], family="ipv6", interface="ib0")["b"]["nodes"] == ["fd00::1", "fd00::2"]


def test_duplicates_are_removed_and_sorted_numerically():
    hostvars = {"a": host([GB200_CLIQUE], "10.0.0.2"), "b": host([GB200_CLIQUE], "10.0.0.1")}
    domains = [{"name": "rack1", "hosts": ["a", "b"], "nodes": ["10.0.0.10", "10.0.0.2", " 10.0.0.3 "]}]
    result = imex_domains(hostvars, ["a", "b"], domains)
    assert result["a"]["nodes"] == ["10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.10"]
    assert result["a"]["domain"] == "rack1"
    assert result["a"]["clique"] == GB200_CLIQUE


def test_explicit_domain_without_cliques_is_allowed():
    hostvars = {"a": host([], "10.0.0.2"), "b": host(None, "10.0.0.1")}
    result = imex_domains(hostvars, ["a", "b"], [{"name": "lab", "hosts": ["a", "b"]}])
    assert result["b"] == {"domain": "lab", "clique": None, "address": "10.0.0.1", "nodes": ["10.0.0.1", "10.0.0.2"],
                           "refused": None}


@pytest.mark.parametrize(("hostvars", "args", "message"), [
    pytest.param({"a": host([GB200_CLIQUE], "10.0.0.1"), "b": host([OTHER_CLIQUE], "10.0.0.2")},
                 ([{"name": "rack1", "hosts": ["a", "b"]}],),
                 "nvidia_imex_domains (rack1): its hosts are in different cliques: "
                 f"a ({GB200_CLIQUE}), b ({OTHER_CLIQUE})", id="explicit-domain-spans-cliques"),
    pytest.param({"a": host([GB200_CLIQUE, OTHER_CLIQUE], "10.0.0.1")}, (),
                 "host a: its GPUs are in 2 cliques", id="host-in-two-cliques"),
    pytest.param({"a": host([GB200_CLIQUE], "10.0.0.1")},
                 ([{"name": "rack1", "hosts": ["a"], "nodes": ["gpu-node-07"]}],),
                 "nvidia_imex_domains[0] (rack1): nodes entry: 'gpu-node-07' is not an IP address",
                 id="hostname-in-nodes"),
    pytest.param({"a": host([GB200_CLIQUE], "10.0.0.1", nvidia_imex_address="tray-a.example")}, (),
                 "host a: nvidia_imex_address: 'tray-a.example' is not an IP address", id="hostname-address"),
    pytest.param({"a": host([GB200_CLIQUE])}, (),
                 "host a: no IMEX address found: nvidia_imex_address is not set and "
                 "ansible_facts['default_ipv4'] is empty", id="no-address"),
    pytest.param({"a": host([GB200_CLIQUE], "10.0.0.1")}, ([{"name": "r", "hosts": ["a", "ghost"]}],),
                 "host ghost is not in the inventory", id="unknown-host"),
    pytest.param({"a": host([GB200_CLIQUE], "10.0.0.1")},
                 ([{"name": "r", "hosts": ["a"]}, {"name": "s", "hosts": ["a"]}],),
                 "host a is in two domains, r and s", id="host-twice"),
    pytest.param({"a": host([GB200_CLIQUE], "10.0.0.1")}, ([{"hosts": ["a"]}],),
                 "nvidia_imex_domains[0] must be a mapping with a name", id="domain-without-name"),
    pytest.param({"a": host([GB200_CLIQUE], "10.0.0.1")}, ([], "ipv5"),
                 "family must be one of ipv4, ipv6", id="bad-family"),
])
def test_bad_input_names_host_and_variable(hostvars, args, message):
    with pytest.raises(AnsibleFilterError, match=r"^imex_domains: ") as caught:
        imex_domains(hostvars, sorted(hostvars), *args)
    assert message in str(caught.value)


def test_hosts_must_be_a_list():
    with pytest.raises(AnsibleFilterError, match=r"^imex_domains: hosts must be a list, got a string$"):
        imex_domains({}, "a")


def test_two_members_with_one_address_are_refused_naming_both():
    hostvars = {name: {"nvidia_imex_address": "10.0.0.7", "ansible_facts": {}} for name in ("tray-a", "tray-b")}
    domains = [{"name": "rack1", "hosts": ["tray-a", "tray-b"], "nodes": []}]
    message = (r"IMEX domain rack1: hosts tray-a and tray-b have the same IMEX address 10\.0\.0\.7 "
               r"\(nvidia_imex_address\)")
    with pytest.raises(AnsibleFilterError, match=message):
        imex_domains(hostvars, ["tray-a", "tray-b"], domains=domains)


@pytest.mark.parametrize(("domains", "message"), [
    pytest.param("rack1", "nvidia_imex_domains must be a list of {name, hosts, nodes} mappings, got a string ('rack1')",
                 id="domains-string"),
    pytest.param({"name": "rack1", "hosts": ["a"]},
                 "nvidia_imex_domains must be a list of {name, hosts, nodes} mappings, got a mapping",
                 id="domains-mapping"),
    pytest.param(["rack1"], "nvidia_imex_domains[0] must be a mapping with a name, got a string ('rack1')",
                 id="domain-string"),
    pytest.param([{"name": "rack1", "hosts": "a"}], "nvidia_imex_domains[0] (rack1).hosts must be a list, "
                 "got a string ('a')", id="hosts-string"),
    pytest.param([{"name": "rack1", "hosts": ["a"], "nodes": "10.0.0.9"}],
                 "nvidia_imex_domains[0] (rack1).nodes must be a list, got a string ('10.0.0.9')", id="nodes-string"),
    pytest.param([{"name": "rack1", "host": ["a"]}],
                 "nvidia_imex_domains[0]: unknown key(s) host (known: name, hosts, nodes)", id="misspelt-key"),
    pytest.param([{"name": "rack1", "hosts": [["a"]]}],
                 "nvidia_imex_domains[0] (rack1).hosts must hold host names (strings), got ['a']", id="host-list"),
    pytest.param([{"name": "r", "hosts": ["a"]}, {"name": "r", "hosts": []}],
                 "nvidia_imex_domains: two domains are named r", id="name-twice"),
    pytest.param([{"name": "rack1", "hosts": ["a"], "nodes": ["127.0.0.1"]}],
                 "nvidia_imex_domains[0] (rack1): nodes entry: 127.0.0.1 is a loopback address", id="nodes-loopback"),
    pytest.param([{"name": "rack1", "hosts": ["a"], "nodes": ["fd00::9"]}],
                 "nvidia_imex_domains[0] (rack1): nodes entry: fd00::9 is an IPv6 address but "
                 "nvidia_imex_address_family is ipv4", id="nodes-wrong-family"),
])
def test_a_domain_definition_of_the_wrong_shape_is_refused(domains, message):
    """On the starting commit a string was iterated by character ('a' -> hosts 'a'), a misspelt key ignored."""
    hostvars = {"a": host([GB200_CLIQUE], "10.0.0.1")}
    with pytest.raises(AnsibleFilterError) as caught:
        imex_domains(hostvars, ["a"], domains)
    assert str(caught.value).startswith(f"imex_domains: {message}"), str(caught.value)


@pytest.mark.parametrize(("address", "kind"), [("127.0.0.2", "loopback"), ("0.0.0.0", "unspecified"),
                                               ("169.254.1.1", "link-local"), ("224.0.0.1", "multicast"),
                                               ("255.255.255.255", "broadcast"), ("240.1.2.3", "reserved")])
def test_an_unusable_member_address_is_refused_naming_host_and_variable(address, kind):
    hostvars = {"a": host([GB200_CLIQUE], "10.0.0.1", nvidia_imex_address=address)}
    with pytest.raises(AnsibleFilterError) as caught:
        imex_domains(hostvars, ["a"])
    assert str(caught.value) == (f"imex_domains: host a: nvidia_imex_address: {address} is a {kind} address, "
                                 "which IMEX peers on other hosts cannot reach")


def test_an_address_of_the_wrong_family_is_refused_naming_host_and_variables():
    """On the starting commit an IPv6 nvidia_imex_address went into an IPv4 nodes file."""
    hostvars = {"a": host([GB200_CLIQUE], "10.0.0.1", nvidia_imex_address="fd00::1"),
                "b": host([GB200_CLIQUE], "10.0.0.2")}
    with pytest.raises(AnsibleFilterError) as caught:
        imex_domains(hostvars, ["a", "b"])
    assert str(caught.value) == ("imex_domains: host a: nvidia_imex_address: fd00::1 is an IPv6 address but "
                                 "nvidia_imex_address_family is ipv4 (one nodes file holds addresses of one family)")


def test_two_hosts_of_different_domains_with_one_address_are_refused_naming_both():
    """On the starting commit only members of one domain were compared."""
    hostvars = {"a1": host([GB200_CLIQUE], "10.0.0.7"), "b1": host([OTHER_CLIQUE], "10.0.0.7")}
    with pytest.raises(AnsibleFilterError) as caught:
        imex_domains(hostvars, ["a1", "b1"])
    assert str(caught.value) == (f"imex_domains: hosts a1 (IMEX domain {GB200_CLIQUE}) and b1 (IMEX domain "
                                 f"{OTHER_CLIQUE}) have the same IMEX address 10.0.0.7 (nvidia_imex_address); "
                                 "every host needs its own")


@pytest.mark.parametrize(("args", "kwargs", "message"), [
    pytest.param(([], 4), {}, "imex_domains: family must be a string, got a number", id="family-number"),
    pytest.param(([], "ipv4", ["ib0"]), {}, "imex_domains: interface must be a string, got a list", id="interface"),
    pytest.param((), {"address_var": None}, "imex_domains: address_var must be a string, got null", id="address-var"),
])
def test_bad_argument_types_are_refused_naming_the_argument(args, kwargs, message):
    with pytest.raises(AnsibleFilterError) as caught:
        imex_domains({"a": host([GB200_CLIQUE], "10.0.0.1")}, ["a"], *args, **kwargs)
    assert str(caught.value) == message


def test_the_nodes_file_rule_is_the_one_preflight_checks_against():
    """nvidia_imex writes __nvidia_imex_placement[host]['nodes'] (this filter); preflight expects nodes_file()."""
    hostvars = {name: host([GB200_CLIQUE], address)
                for name, address in (("z", "10.0.0.1"), ("a", "10.0.0.30"), ("m", "10.0.0.4"))}
    placement = imex_domains(hostvars, ["a", "m", "z"])
    assert placement["a"]["nodes"] == nodes_file(["10.0.0.30", "10.0.0.4", "10.0.0.1"]) == \
        ["10.0.0.1", "10.0.0.4", "10.0.0.30"]


@pytest.mark.parametrize("hostvars", ["x", [], None])
def test_hostvars_must_be_a_mapping(hostvars):
    with pytest.raises(AnsibleFilterError, match=r"^imex_domains: the input must be hostvars \(a mapping\)"):
        imex_domains(hostvars, ["a"])


ADDRESSES = st.sampled_from(["10.0.0.1", "10.0.0.2", "10.0.0.10", "fd00::1", "127.0.0.1", "169.254.0.1", "0.0.0.0",
                             "tray-a", "", " 10.0.0.3 "])
SCALARS = st.none() | st.booleans() | st.integers(-1, 3) | st.text(max_size=4) | ADDRESSES
JSON = st.recursive(SCALARS, lambda children: st.lists(children, max_size=3)
                    | st.dictionaries(st.sampled_from(["name", "hosts", "nodes", "host", "x"]), children, max_size=3),
                    max_leaves=6)
HOSTS = st.sampled_from(["a", "b", "c"])


@st.composite
def hostvars_strategy(draw):
    hostvars = {}
    for name in draw(st.lists(HOSTS, unique=True, max_size=3)):
        cliques = st.lists(st.sampled_from([GB200_CLIQUE, OTHER_CLIQUE]), max_size=2) | JSON
        facts = {"gpufabric": {"gpu": {"cliques": draw(cliques)}},
                 "default_ipv4": draw(st.fixed_dictionaries({"address": ADDRESSES}) | JSON)}
        host_vars = {"ansible_facts": draw(st.just(facts) | JSON)}
        if draw(st.booleans()):
            host_vars["nvidia_imex_address"] = draw(ADDRESSES | JSON)
        hostvars[name] = host_vars
    return hostvars


DOMAINS = st.none() | JSON | st.lists(st.fixed_dictionaries(
    {"name": st.sampled_from(["r1", "r2"]), "hosts": st.lists(HOSTS, max_size=3) | JSON},
    optional={"nodes": st.lists(ADDRESSES, max_size=3) | JSON}), max_size=2)


@settings(max_examples=150, deadline=None)
@given(hostvars=hostvars_strategy() | JSON, hosts=st.lists(HOSTS, max_size=3) | JSON, domains=DOMAINS,
       family=st.sampled_from(["ipv4", "ipv6"]) | JSON, interface=st.none() | st.just("ib0") | JSON)
def test_any_input_gives_placements_or_the_documented_error(hostvars, hosts, domains, family, interface):
    """Placements of the documented shape (one family, usable addresses, sorted, unique), or AnsibleFilterError."""
    try:
        result = imex_domains(hostvars, hosts, domains, family, interface)
    except AnsibleFilterError as exc:
        assert str(exc).startswith("imex_domains: ")
        return
    assert set(result) == set(hosts)
    owners = {}
    for name, entry in result.items():
        assert set(entry) == {"domain", "clique", "address", "nodes", "refused"}
        assert entry["refused"] is None  # nothing is refused without outside
        if entry["domain"] is None:
            assert entry["nodes"] == [] and entry["address"] is None
            continue
        assert entry["address"] in entry["nodes"]
        assert owners.setdefault(entry["address"], name) == name, "two hosts share an address"
        parsed = [ipaddress.ip_address(node) for node in entry["nodes"]]
        assert {f"ipv{item.version}" for item in parsed} == {family}
        assert not any(item.is_loopback or item.is_link_local or item.is_unspecified for item in parsed)
        assert entry["nodes"] == nodes_file(entry["nodes"])
