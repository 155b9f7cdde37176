# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 41 item 1: who belongs to an IMEX domain comes from the fleet's facts, never from the hosts of one run.

On the starting commit the domains were derived over the run's hosts alone: one tray of an 11-tray domain in the play
got a nodes file of 1 address. With ``fleet`` every domain of the run is derived over the facts of all its members,
or the derivation refuses, naming exactly the hosts of the fleet whose facts are missing.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ansible_collections.gpufabric.cluster.plugins.plugin_utils.imex_domains import (
    ImexDomainError,
    derive_domains,
    domain_peers,
    members_to_probe,
)
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.preflight import preflight_report

CLIQUES = ("3c1a5f2e-9b7d-4c2a-8e6f-1d0b7a9c4e21.1", "3c1a5f2e-9b7d-4c2a-8e6f-1d0b7a9c4e21.2")
RACK = CLIQUES[0]


def tray(clique: str | None, address: str | None = None, **extra) -> dict:
    """hostvars of a tray with fabric facts: its clique (or none) and its default IPv4 address (network subset)."""
    gpufabric = {"gpu": {"cliques": [clique] if clique else []}}
    if address:
        gpufabric["network"] = {"default_ipv4": {"address": address}}
    return {"ansible_facts": {"gpufabric": gpufabric}, **extra}


def rack(count: int = 11) -> dict:
    return {f"tray-{number:02d}": tray(RACK, f"10.0.0.{number}") for number in range(1, count + 1)}


def nodes(result: dict, name: str) -> list[str]:
    return result[name]["nodes"]


def test_one_tray_of_an_eleven_tray_domain_gets_the_nodes_file_of_the_whole_domain():
    hostvars = rack()
    limited = derive_domains(hostvars, ["tray-05"], fleet=list(hostvars))
    assert nodes(limited, "tray-05") == [f"10.0.0.{number}" for number in range(1, 12)]
    assert limited["tray-05"]["domain"] == RACK and limited["tray-05"]["address"] == "10.0.0.5"
    full = derive_domains(hostvars, list(hostvars), fleet=list(hostvars))
    assert nodes(full, "tray-05") == nodes(limited, "tray-05")


def test_the_run_s_addresses_and_the_others_by_their_own_settings():
    """A host of the run holds the address the role published; one outside it is read by its own inventory's
    nvidia_imex_address, gpufabric_imex_address or interface, as the role would decide it there."""
    hostvars = {"tray-01": tray(RACK, "192.0.2.1", __nvidia_imex_address="10.0.0.1"),
                "tray-02": tray(RACK, "192.0.2.2", nvidia_imex_address="10.0.0.2"),
                "tray-03": tray(RACK, "192.0.2.3", gpufabric_imex_address="10.0.0.3"),
                "tray-04": tray(RACK, "192.0.2.4", gpufabric_imex_interface="ib0")}
    hostvars["tray-04"]["ansible_facts"]["gpufabric"]["network"]["interfaces"] = {"ib0": {"ipv4": {"address":
                                                                                                   "10.0.0.4"}}}
    result = derive_domains(hostvars, ["tray-01"], address_var="__nvidia_imex_address",
                            address_label="nvidia_imex_address", fleet=list(hostvars))
    assert nodes(result, "tray-01") == ["10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4"]


def test_members_without_facts_are_refused_by_name():
    hostvars = rack(4)
    hostvars["tray-03"] = {}
    hostvars["tray-04"] = {"ansible_facts": {"gpufabric": {"imex": {}}}}  # facts, but not the GPUs'
    with pytest.raises(ImexDomainError) as raised:
        derive_domains(hostvars, ["tray-01"], fleet=list(hostvars))
    assert str(raised.value) == (
        f"IMEX domain membership: no fabric facts of tray-03, tray-04 of nvidia_imex_fleet (unreachable, or the probe "
        f"failed); any of this run's IMEX domains ({RACK}) may hold them, and its nodes file lists every member: make "
        "them reachable, keep a fact cache that holds their facts, set nvidia_imex_domains, or leave them out of "
        "nvidia_imex_fleet")


def test_a_run_without_a_clique_needs_no_facts_of_the_others():
    hostvars = {"hgx-1": tray(None, "10.0.1.1"), "tray-01": {}}
    result = derive_domains(hostvars, ["hgx-1"], fleet=list(hostvars))
    assert result["hgx-1"] == {"domain": None, "clique": None, "address": None, "nodes": [], "refused": None}


def test_a_host_of_the_run_outside_the_fleet_is_refused():
    hostvars = rack(3)
    with pytest.raises(ImexDomainError, match=r"^host\(s\) tray-03 of this run are not in nvidia_imex_fleet "
                                              r"\(2 host\(s\)\)"):
        derive_domains(hostvars, ["tray-01", "tray-03"], fleet=["tray-01", "tray-02"])


def test_explicit_domains_need_no_facts_of_members_whose_inventory_sets_the_address():
    hostvars = {"tray-01": tray(RACK, "10.0.0.1"), "tray-02": {"nvidia_imex_address": "10.0.0.2"}}
    domains = [{"name": "rack1", "hosts": ["tray-01", "tray-02"]}]
    assert members_to_probe(hostvars, list(hostvars), domains) == []
    result = derive_domains(hostvars, ["tray-01"], domains, fleet=list(hostvars))
    assert nodes(result, "tray-01") == ["10.0.0.1", "10.0.0.2"]


def test_members_to_probe_names_the_members_lacking_facts_with_their_root_and_subsets():
    hostvars = {"tray-1": tray(RACK, "10.0.0.1"),
                "tray-2": {},
                "tray-10": {"gpufabric_probe_root": "/srv/tray-10", "nvidia_imex_address": "10.0.0.10"},
                "tray-3": {"nvidia_imex_probe_root": "/srv/tray-3",
                           "ansible_facts": {"gpufabric": {"gpu": {"cliques": [RACK]}, "imex": {}}}},
                "tray-4": {"ansible_facts": {"default_ipv4": {"address": "10.0.0.4"},
                                             "gpufabric": {"gpu": {"cliques": []}}}}}
    assert members_to_probe(hostvars, list(hostvars), root="/fixture") == [
        {"name": "tray-2", "root": "/fixture", "gather_subset": ["gpu", "network"]},
        {"name": "tray-3", "root": "/srv/tray-3", "gather_subset": ["gpu", "imex", "network"]},
        {"name": "tray-10", "root": "/srv/tray-10", "gather_subset": ["gpu"]},
    ]
    # the preflight reads every subset of each member
    every = ["gpu", "connectx", "imex", "peermem", "network"]
    probes = members_to_probe(hostvars, ["tray-1", "tray-3"], subsets=every)
    assert [(probe["name"], probe["gather_subset"]) for probe in probes] == [("tray-1", every), ("tray-3", every)]


ADDRESSES = [f"10.0.0.{number}" for number in range(1, 40)]


@st.composite
def fleets(draw) -> tuple[dict, dict, list[str], list[str]]:
    """A fleet with and without some members' facts, and a run over part of it: ``(all facts, hostvars of the run,
    run hosts, hosts without facts)``."""
    count = draw(st.integers(1, 12))
    names = [f"gpu-{number}" for number in range(count)]
    addresses = draw(st.permutations(ADDRESSES))
    full = {name: tray(draw(st.sampled_from((*CLIQUES, None))), addresses[number])
            for number, name in enumerate(names)}
    run = draw(st.lists(st.sampled_from(names), min_size=1, unique=True))
    outside = [name for name in names if name not in run]
    missing = draw(st.lists(st.sampled_from(outside), unique=True)) if outside else []
    hostvars = {name: ({} if name in missing else facts) for name, facts in full.items()}
    return full, hostvars, run, sorted(missing, key=lambda name: int(name.split("-")[1]))


@given(fleets())
def test_any_part_of_a_fleet_gets_the_whole_fleet_s_nodes_files_or_a_refusal_naming_the_members_without_facts(drawn):
    full, hostvars, run, missing = drawn
    names = list(full)
    whole = derive_domains(full, names, fleet=names)
    assert [probe["name"] for probe in members_to_probe(hostvars, names)] == missing
    try:
        limited = derive_domains(hostvars, run, fleet=names)
    except ImexDomainError as exc:
        named = re.match(r"IMEX domain membership: no fabric facts of (.*?) of nvidia_imex_fleet", str(exc))
        assert named, str(exc)
        assert named.group(1).split(", ") == missing
        assert any(full[name]["ansible_facts"]["gpufabric"]["gpu"]["cliques"] for name in run)
        return
    assert not missing or not any(full[name]["ansible_facts"]["gpufabric"]["gpu"]["cliques"] for name in run)
    for name in run:
        assert limited[name] == whole[name]


def test_the_preflight_of_one_tray_judges_its_whole_domain(fleet_facts):
    """The preflight playbook judges the run's hosts with the members domain_peers finds outside the run: the IMEX
    domain check of a run limited to tray-02 holds all four trays."""
    hostvars = {f"tray-0{number}": {"ansible_facts": {"gpufabric": fleet_facts["gb200_tray"],
                                                      "default_ipv4": {"address": f"10.0.0.{number}"}}}
                for number in range(1, 5)}
    hostvars["tray-05"] = {}  # no facts, and another GPU host of the fleet: it may be a member
    hostvars["hgx-1"] = {"ansible_facts": {"gpufabric": fleet_facts["hgx_h100"]}}
    peers = domain_peers(hostvars, ["tray-02"], list(hostvars))
    assert peers == {"members": ["tray-01", "tray-03", "tray-04"], "unknown": ["tray-05"]}
    report = preflight_report(hostvars, ["tray-02", *peers["members"]])
    (domain,) = report["imex_domains"]
    assert domain["members"] == ["tray-01", "tray-02", "tray-03", "tray-04"]
    assert domain_peers(hostvars, ["hgx-1"], list(hostvars)) == {"members": [], "unknown": []}
