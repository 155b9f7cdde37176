# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The rail rule (issue 45): which ConnectX ports are rails, one rule for the rail plan and the preflight.

The HGX H100 with a frontend ConnectX-6 Dx port on the default route and a BlueField-3 DPU port without board_id
(tests/fixtures/build_trees.py, ``hgx_h100_frontend``) is gathered by the real collectors.
"""

from __future__ import annotations

import copy

import pytest
from fixtures.recorded_nvml import recorded_facts
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.gpufabric.cluster.plugins.filter.preflight_report import preflight_report
from ansible_collections.gpufabric.cluster.plugins.filter.rail_plan import rail_plan
from ansible_collections.gpufabric.cluster.plugins.plugin_utils import rail_selection
from ansible_collections.gpufabric.cluster.plugins.plugin_utils import settings as collection_settings
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.rail_plan import select_ports

# in PCI order: the frontend port (0000:0c:00.0) would be first, the DPU port (0000:b5:00.0) after enp170s0f1np1
RAILS = ["ibp24s0", "ibp64s0", "ibp79s0", "ibp94s0", "ibp154s0", "enp170s0f0np0", "enp170s0f1np1", "ibp192s0",
         "ibp206s0", "ibp220s0"]
FRONTEND = "enp12s0f0np0"
DPU = "enp181s0f0np0"
NOT_JUDGED = (f"2 non-rail port(s) not judged: {FRONTEND} (protected: default route), {DPU} (BlueField-3, device id "
              "0xa2dc in rdma_network_exclude_device_ids)")


@pytest.fixture(scope="module")
def frontend_facts(tmp_path_factory, tree_builder, command_runner):
    """``ansible_facts['gpufabric']`` of the recorded HGX H100 with its frontend and DPU ports."""
    root = tree_builder.build_tree("hgx_h100_frontend", str(tmp_path_factory.mktemp("frontend")))
    facts = recorded_facts(root, command_runner)
    facts.pop("warnings")
    return facts


def hostvars_of(facts, **variables):
    return {"ansible_facts": {"gpufabric": copy.deepcopy(facts)}, **variables}


def rails_of(facts, **variables):
    host_vars = hostvars_of(facts, **variables)
    selection, problems = rail_selection.host_rails("hgx", host_vars, host_vars["ansible_facts"]["gpufabric"]
                                                    ["connectx"]["ports"])
    assert problems == []
    return [port["netdev"] for port in selection.rails], {port["netdev"]: port["reason"]
                                                          for port in selection.left_out}


def rdma_ports(report, host="hgx"):
    return next(check for check in report["hosts"][host]["checks"] if check["name"] == "rdma_ports")


def test_the_hgx_frontend_tree_passes_preflight(frontend_facts):
    """Issue 45 acceptance: on the starting commit the frontend port failed 'rate 100 Gb/s below 200 Gb/s, mtu 1500
    instead of 9000' and the DPU port 'unreadable (... board_id: is missing)'."""
    report = preflight_report({"hgx": hostvars_of(frontend_facts)}, ["hgx"])
    assert rdma_ports(report) == {"name": "rdma_ports", "status": "pass", "message":
                                  "10 port(s) ACTIVE at expected rate and MTU (2 Ethernet, 8 InfiniBand); "
                                  + NOT_JUDGED}
    # nothing fails; the one warning is the tree's driver, R570, past its end of life (issue 42)
    assert report["hosts"]["hgx"]["status"] == "warn", report["hosts"]["hgx"]["checks"]
    assert report["hosts"]["hgx"]["summary"] == "warnings: driver_lifecycle"


def test_default_exclusion_leaves_out_the_protected_and_the_dpu_ports(frontend_facts):
    rails, left_out = rails_of(frontend_facts)
    assert rails == RAILS
    assert left_out == {FRONTEND: "protected: default route",
                        DPU: "BlueField-3, device id 0xa2dc in rdma_network_exclude_device_ids"}
    # the interface holding ansible_host and the configured list are protected too
    network = copy.deepcopy(frontend_facts)
    network["network"]["default_ipv4"] = {}
    _rails, left_out = rails_of(network, ansible_host="192.0.2.22", rdma_network_protected_interfaces=["ibp24s0"])
    assert left_out[FRONTEND] == "protected: holds ansible_host"
    assert left_out["ibp24s0"] == "protected: rdma_network_protected_interfaces"


@pytest.mark.parametrize("variables", [
    pytest.param({"rdma_network_netdev_pattern": "enp181s0f0np0|ibp.*"}, id="netdev_pattern"),
    pytest.param({"rdma_network_device_ids": ["0x1021", "0xa2dc"]}, id="device_ids"),
    pytest.param({"rdma_network_device_ids": [0x1021, 0xA2DC]}, id="device_ids written without quotes"),
    pytest.param({"rdma_network_pci_addresses": "0000:18:00.0,0000:b5:00.0"}, id="pci_addresses as text"),
])
def test_an_explicit_selection_that_names_a_dpu_port_makes_it_a_rail(frontend_facts, variables):
    """A Spectrum-X BlueField-3 SuperNIC is a rail when named: the explicit selection wins over the exclusion."""
    rails, left_out = rails_of(frontend_facts, **variables)
    assert DPU in rails and FRONTEND not in rails
    assert "protected" not in left_out.get(FRONTEND, "")


def test_an_empty_exclusion_list_keeps_the_dpu_ports(frontend_facts):
    rails, left_out = rails_of(frontend_facts, rdma_network_exclude_device_ids=[])
    assert rails == [*RAILS[:7], DPU, *RAILS[7:]]
    assert list(left_out) == [FRONTEND]


def test_each_host_is_judged_by_its_own_selection(frontend_facts):
    hostvars = {"a": hostvars_of(frontend_facts),
                "b": hostvars_of(frontend_facts, rdma_network_link_layers=["Ethernet"])}
    report = preflight_report(hostvars, ["a", "b"])
    assert rdma_ports(report, "a")["message"].startswith("10 port(s) ACTIVE at expected rate and MTU")
    message = rdma_ports(report, "b")["message"]
    assert message.startswith("2 port(s) ACTIVE at expected rate and MTU (2 Ethernet); 10 non-rail port(s)")
    assert "ibp24s0 (link layer InfiniBand not in rdma_network_link_layers)" in message


def test_the_plan_and_the_preflight_choose_the_same_rails(frontend_facts):
    """The rail plan's default leaves the frontend and the DPU port out too, listed as skipped (rail None); on the
    starting commit it made the frontend port rail 0 and refused the plan."""
    host_vars = hostvars_of(frontend_facts, __rdma_network_input={
        "rails": [{"ipv4": f"172.31.{number}.0/24"} for number in range(10)]})
    plan = rail_plan({"hgx": host_vars}, ["hgx"])["hgx"]
    assert [rail["netdev"] for rail in plan["rails"]] == RAILS
    assert plan["skipped"] == [
        {"rail": None, "netdev": FRONTEND, "reason": "protected: default route"},
        {"rail": None, "netdev": DPU, "reason": "BlueField-3, device id 0xa2dc in rdma_network_exclude_device_ids"}]
    assert plan["record"]["rails"].keys() == {str(number) for number in range(10)}


@pytest.mark.parametrize(("variables", "line"), [
    ({"rdma_network_link_layers": 5}, "host hgx: rdma_network_link_layers must be a list, got a number"),
    ({"rdma_network_link_layers": ["ethernet"]},
     "host hgx: rdma_network_link_layers: 'ethernet' is not one of Ethernet, InfiniBand"),
    ({"rdma_network_device_ids": [{"id": 1}]}, "host hgx: rdma_network_device_ids must hold non-empty strings, got "
     "a mapping"),
    ({"rdma_network_exclude_device_ids": {"a": 1}}, "host hgx: rdma_network_exclude_device_ids must be a list, got "
     "a mapping"),
    ({"rdma_network_include_inactive": "maybe"}, 'host hgx: rdma_network_include_inactive must be a boolean '
     '(true/false, "yes"/"no", 1/0), got \'maybe\''),
    ({"rdma_network_netdev_pattern": "   "},
     "host hgx: rdma_network_netdev_pattern is blank; leave it empty ('') to keep any netdev"),
    ({"rdma_network_netdev_pattern": ["ib.*"]},
     "host hgx: rdma_network_netdev_pattern must be a regular expression (a string), got a list"),
    ({"rdma_network_netdev_pattern": "ib(p"}, "host hgx: rdma_network_netdev_pattern: 'ib(p' is not a regular "
     "expression (missing ), unterminated subpattern at position 2)"),
    ({"rdma_network_rail_indices": ["first"]}, "host hgx: rdma_network_rail_indices: 'first' is not a rail number"),
])
def test_a_bad_selection_is_one_line_naming_the_variable_and_the_host(frontend_facts, variables, line):
    report = preflight_report({"hgx": hostvars_of(frontend_facts, **variables)}, ["hgx"])
    assert rdma_ports(report) == {"name": "rdma_ports", "status": "fail", "message": line}


@pytest.mark.parametrize(("value", "inactive"), [("yes", True), ("false", False), ("0", False), (None, False)])
def test_include_inactive_is_read_as_ansible_reads_booleans(value, inactive):
    errors = []
    ports = [{"netdev": "ibp1s0", "pci_address": "0000:01:00.0", "port": 1, "state": "DOWN"}]
    selection = rail_selection.select_rails(ports, {"include_inactive": value}, {}, "h", errors)
    assert errors == [] and selection.include_inactive is inactive
    assert [port["netdev"] for port in rail_selection.configured(selection)[0]] == (["ibp1s0"] if inactive else [])


def test_the_defaults_are_the_role_argument_spec():
    spec = collection_settings.options("rdma_network")
    assert rail_selection.defaults() == {key: spec[f"rdma_network_{key}"]["default"] for key in rail_selection.KEYS}
    assert rail_selection.defaults()["exclude_device_ids"] == ["0xa2d6", "0xa2dc"]


_NETDEVS = ["eno1", "enp1s0np0", "enp2s0np0", "ibp3s0", "enp4s0f0np0"]
_port = st.fixed_dictionaries({
    "netdev": st.one_of(st.sampled_from(_NETDEVS), st.none(), st.just("")),
    "pci_address": st.sampled_from(["0000:01:00.0", "0000:02:00.0", "0000:03:00.0", "0000:b5:00.0"]),
    "link_layer": st.sampled_from(["Ethernet", "InfiniBand", None]),
    "state": st.sampled_from(["ACTIVE", "DOWN"]),
    "device_id": st.sampled_from(["0x1021", "0x101d", "0xa2dc", "0xa2d6", None]),
    "rate_gbps": st.sampled_from([100, 200, 400]),
    "mtu": st.sampled_from([1500, 4092, 9000]),
    "errors": st.lists(st.just("rate: not a rate"), max_size=1),
})
_variables = st.fixed_dictionaries({}, optional={
    "rdma_network_link_layers": st.one_of(st.lists(st.sampled_from(["Ethernet", "InfiniBand"]), max_size=2),
                                          st.just("InfiniBand"), st.just(3)),
    "rdma_network_device_ids": st.one_of(st.lists(st.sampled_from(["0x1021", "0xa2dc", 0xA2D6]), max_size=2),
                                         st.just([None])),
    "rdma_network_pci_addresses": st.lists(st.sampled_from(["0000:01:00.0", "0000:b5:00.0"]), max_size=2),
    "rdma_network_netdev_pattern": st.sampled_from(["", "enp.*", "ib.*|eno1", "(", " "]),
    "rdma_network_rail_indices": st.lists(st.integers(-1, 3), max_size=2),
    "rdma_network_include_inactive": st.sampled_from([True, False, "yes", "no", "maybe"]),
    "rdma_network_exclude_device_ids": st.lists(st.sampled_from(["0xa2dc", "0x101d"]), max_size=2),
    "rdma_network_protected_interfaces": st.lists(st.sampled_from(_NETDEVS), max_size=2),
    "ansible_host": st.sampled_from(["192.0.2.5", "host.example"]),
})


@settings(max_examples=200, deadline=None)
@given(ports=st.lists(_port, max_size=5), variables=_variables, default_route=st.sampled_from([None, *_NETDEVS]))
def test_property_preflight_judges_exactly_the_rails_of_the_rule(ports, variables, default_route):
    """For any ports and selection, the preflight's rdma_ports check judges the ports the rule chooses and no other:
    with a minimum rate no port reaches, every judged port is named as failing, a port left out never is; a
    selection with problems fails the check with exactly the rule's lines."""
    ports = [{**port, "rdma_device": f"mlx5_{number}", "port": 1} for number, port in enumerate(ports)]
    network = {"default_ipv4": {"interface": default_route} if default_route else {}, "default_ipv6": {},
               "interfaces": {"eno1": {"ipv4": {"address": "192.0.2.5", "prefix": "24"}}}}
    host_vars = {"ansible_facts": {"gpufabric": {"connectx": {"count": len(ports), "ports": ports},
                                                 "network": network}}, **variables}
    report = preflight_report({"h": host_vars}, ["h"], {"rdma_min_rate_gbps": 100000})
    message = rdma_ports(report, "h")["message"]
    selection, problems = rail_selection.host_rails("h", host_vars, ports)
    if problems:
        assert message == "; ".join(problems)
        return
    judged = {port["rdma_device"] for port in ports if f"{port['rdma_device']}/1 ({port['netdev']}): " in message}
    assert judged == {port["rdma_device"] for port in selection.rails}
    left_out = {port["rdma_device"] for port in selection.left_out}
    assert judged.isdisjoint(left_out) and judged | left_out == {port["rdma_device"] for port in ports}
    plan_errors: list[str] = []
    chosen, skipped = select_ports(ports, {key: variables[f"rdma_network_{key}"] for key in rail_selection.KEYS
                                           if f"rdma_network_{key}" in variables},
                                   {}, "h", plan_errors, rail_selection.protected_reasons(
                                       host_vars, variables.get("rdma_network_protected_interfaces") or []))
    assert {port["rdma_device"] for port in chosen} | {port["rdma_device"] for port in skipped
                                                       if port["rail"] is not None} == judged
