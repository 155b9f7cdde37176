# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The rdma_network templates of each network stack, rendered from real rail plans and read back by parsers.

The rails come from the ``rail_plan`` filter over the recorded HGX H100 (eight IPoIB rails, two RoCE ports);
each file is parsed the way its stack reads it (YAML for netplan, an INI keyfile for NetworkManager, the
interfaces(5) stanza grammar for ifupdown). The scenario molecule/rdma_network runs them live.
"""

from __future__ import annotations

import configparser
import copy
import os
import re

import jinja2
import yaml
from ansible.plugins.filter.core import FilterModule as CoreFilters

from ansible_collections.gpufabric.cluster.plugins.filter.rail_plan import rail_plan

ROLE = os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "roles", "rdma_network")
MANAGED = "Ansible managed"


def plan_rails(connectx, link_layers, rails, **settings):
    """The rails of host ``hgx-2`` (index 1) in a play of two hosts."""
    facts = {"gpufabric": {"connectx": copy.deepcopy(connectx)},
             "default_ipv4": {"interface": "eno1", "address": "192.0.2.21"},
             "interfaces": ["eno1", "lo", *(port["netdev"] for port in connectx["ports"])],
             "eno1": {"ipv4": {"address": "192.0.2.21", "netmask": "255.255.255.0"}}}
    hostvars = {name: {"ansible_facts": facts,
                       "__rdma_network_input": {"rails": rails, "link_layers": link_layers, **settings}}
                for name in ("hgx-1", "hgx-2")}
    return rail_plan(hostvars, ["hgx-1", "hgx-2"])["hgx-2"]["rails"]


def render(template, rails, item=None, policy_routing=True):
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(os.path.join(ROLE, "templates")),
                             undefined=jinja2.StrictUndefined, keep_trailing_newline=True,
                             extensions=["jinja2.ext.loopcontrols"])
    env.filters.update(CoreFilters().filters())
    context = {"ansible_managed": MANAGED, "__rdma_network_rails": rails,
               "rdma_network_policy_routing": policy_routing}
    if item is not None:
        context["item"] = item
    return env.get_template(template).render(context)


def parse_interfaces(text):
    """interfaces(5): ``auto`` lines and ``iface NAME FAMILY METHOD`` stanzas with indented options."""
    autos, stanzas, current = [], [], None
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        words = line.split()
        if words[0] == "auto":
            autos.extend(words[1:])
        elif words[0] == "iface":
            assert len(words) == 4, line
            current = {"name": words[1], "family": words[2], "method": words[3], "options": []}
            stanzas.append(current)
        else:
            assert line.startswith((" ", "\t")) and current is not None, f"option outside a stanza: {line}"
            current["options"].append((words[0], " ".join(words[1:])))
    return autos, stanzas


ROCE_RAILS = [{"ipv4": "172.31.0.0/24", "ipv6": "fd00:31::/64"}, {"ipv4": "172.31.1.0/24"}]


def test_ifupdown_stanzas_of_a_dual_stack_roce_rail(hgx_connectx):
    rails = plan_rails(hgx_connectx, ["Ethernet"], ROCE_RAILS)
    rail = rails[0]
    text = render("rail.interfaces.j2", rails, rail)
    assert text.startswith(f"#\n# {MANAGED}\n")
    autos, stanzas = parse_interfaces(text)
    assert autos == [rail["netdev"]]
    assert [(s["name"], s["family"], s["method"]) for s in stanzas] == [
        (rail["netdev"], "inet", "static"), (rail["netdev"], "inet6", "static")]
    inet, inet6 = (dict_of(s) for s in stanzas)
    assert inet["address"] == ["172.31.0.2/24"] and inet["mtu"] == ["9000"]
    assert inet["up"] == [f"ip -4 route replace 172.31.0.0/24 dev {rail['netdev']} table 100 scope link src 172.31.0.2",
                          "ip -4 rule add from 172.31.0.2 table 100 priority 1000"]
    assert inet["pre-down"] == ["ip -4 rule del from 172.31.0.2 table 100 priority 1000 || true"]
    assert inet6["address"] == ["fd00:31::2/64"]
    assert inet6["accept_ra"] == ["0"] and inet6["autoconf"] == ["0"]
    assert inet6["up"] == [f"ip -6 route replace fd00:31::/64 dev {rail['netdev']} table 100 src fd00:31::2",
                           "ip -6 rule add from fd00:31::2 table 100 priority 1000"]


def dict_of(stanza):
    options = {}
    for key, value in stanza["options"]:
        options.setdefault(key, []).append(value)
    return options


def test_ifupdown_ipv4_only_rail_without_policy_routing(hgx_connectx):
    rails = plan_rails(hgx_connectx, ["Ethernet"], ROCE_RAILS)
    autos, stanzas = parse_interfaces(render("rail.interfaces.j2", rails, rails[1], policy_routing=False))
    assert autos == [rails[1]["netdev"]]
    assert [s["family"] for s in stanzas] == ["inet"]
    assert dict_of(stanzas[0]) == {"address": ["172.31.1.2/24"], "mtu": ["9000"]}


def test_ifupdown_ipoib_rail_mtu(hgx_connectx):
    rails = plan_rails(hgx_connectx, ["InfiniBand"], [{"ipv4": f"10.200.{n}.0/24"} for n in range(8)],
                       ipoib_mode="connected")
    stanzas = parse_interfaces(render("rail.interfaces.j2", rails, rails[7]))[1]
    assert stanzas[0]["name"] == "ibp220s0"
    assert dict_of(stanzas[0])["mtu"] == ["65520"]
    assert "ip -4 rule add from 10.200.7.2 table 107 priority 1007" in dict_of(stanzas[0])["up"]


def test_netplan_file_of_each_rail(hgx_connectx):
    rails = plan_rails(hgx_connectx, ["Ethernet"], ROCE_RAILS)
    documents = [yaml.safe_load(render("netplan.yaml.j2", rails, rail)) for rail in rails]
    assert {document["network"]["version"] for document in documents} == {2}
    assert [list(document["network"]["ethernets"]) for document in documents] == [[rail["netdev"]] for rail in rails]
    first = documents[0]["network"]["ethernets"][rails[0]["netdev"]]
    assert first["renderer"] == "networkd" and first["match"] == {"name": rails[0]["netdev"]}
    assert first["mtu"] == 9000 and first["dhcp4"] is False and first["link-local"] == ["ipv6"]
    assert first["addresses"] == ["172.31.0.2/24", "fd00:31::2/64"]
    assert first["routes"] == [{"to": "172.31.0.0/24", "table": 100, "scope": "link", "from": "172.31.0.2"},
                               {"to": "fd00:31::/64", "table": 100, "from": "fd00:31::2"}]
    assert first["routing-policy"] == [{"from": "172.31.0.2", "table": 100, "priority": 1000},
                                       {"from": "fd00:31::2", "table": 100, "priority": 1000}]
    assert documents[1]["network"]["ethernets"][rails[1]["netdev"]]["link-local"] == []


def test_netplan_infiniband_mode(hgx_connectx):
    rails = plan_rails(hgx_connectx, ["InfiniBand"], [{"ipv4": f"10.200.{n}.0/24"} for n in range(8)])
    devices = [device for rail in rails for device in yaml.safe_load(
        render("netplan.yaml.j2", rails, rail, policy_routing=False))["network"]["ethernets"].values()]
    assert len(devices) == 8
    assert {device["infiniband-mode"] for device in devices} == {"datagram"}
    assert all("routes" not in device and "routing-policy" not in device for device in devices)


def keyfile(text):
    parser = configparser.ConfigParser(interpolation=None, strict=True)
    parser.optionxform = str
    parser.read_string(text)
    return parser


def test_networkmanager_keyfile_of_a_roce_rail(hgx_connectx):
    rails = plan_rails(hgx_connectx, ["Ethernet"], ROCE_RAILS)
    parser = keyfile(render("rail.nmconnection.j2", rails, rails[0]))
    assert dict(parser["connection"]) == {"id": "gpufabric-rail0", "type": "ethernet",
                                          "interface-name": rails[0]["netdev"], "autoconnect": "true"}
    assert parser["ethernet"]["mtu"] == "9000"
    assert parser["ipv4"]["address1"] == "172.31.0.2/24" and parser["ipv4"]["route-table"] == "100"
    assert parser["ipv4"]["routing-rule1"] == "priority 1000 from 172.31.0.2 table 100"
    assert parser["ipv6"]["address1"] == "fd00:31::2/64"
    second = keyfile(render("rail.nmconnection.j2", rails, rails[1]))
    assert second["ipv6"]["method"] == "link-local" and "address1" not in second["ipv6"]


def test_networkmanager_keyfile_of_an_ipoib_rail(hgx_connectx):
    rails = plan_rails(hgx_connectx, ["InfiniBand"], [{"ipv4": f"10.200.{n}.0/24"} for n in range(8)])
    parser = keyfile(render("rail.nmconnection.j2", rails, rails[0]))
    assert parser["connection"]["type"] == "infiniband"
    assert dict(parser["infiniband"]) == {"mtu": "4092", "transport-mode": "datagram"}
    assert parser["ipv6"]["method"] == "link-local"


def test_every_backend_has_its_task_file_and_handlers():
    with open(os.path.join(ROLE, "vars", "main.yml"), encoding="utf-8") as handle:
        backends = yaml.safe_load(handle)["__rdma_network_backends"]
    assert backends == ["systemd-networkd", "netplan", "networkmanager", "ifupdown"]
    for backend in backends:
        assert os.path.isfile(os.path.join(ROLE, "tasks", f"backend_{backend.replace('-', '_')}.yml"))
    with open(os.path.join(ROLE, "handlers", "main.yml"), encoding="utf-8") as handle:
        listens = {handler["listen"] for handler in yaml.safe_load(handle)}
    assert {"rdma_network ifupdown changed", "rdma_network netplan changed",
            "rdma_network networkmanager changed"} <= listens
    with open(os.path.join(ROLE, "meta", "argument_specs.yml"), encoding="utf-8") as handle:
        spec = yaml.safe_load(handle)["argument_specs"]["main"]["options"]
    assert spec["rdma_network_backend"]["choices"] == ["auto", *backends]
    with open(os.path.join(ROLE, "defaults", "main.yml"), encoding="utf-8") as handle:
        assert set(yaml.safe_load(handle)) == set(spec)


def test_templates_have_no_trailing_whitespace(hgx_connectx):
    rails = plan_rails(hgx_connectx, ["Ethernet"], ROCE_RAILS)
    for name in ("rail.interfaces.j2", "rail.nmconnection.j2", "rail.network.j2", "netplan.yaml.j2"):
        text = render(name, rails, rails[0])
        assert not re.search(r"[ \t]$", text, re.MULTILINE), name
