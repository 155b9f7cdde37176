# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 44: the recorded members of a job slice's IMEX domains, read from the fact cache, and the refusal of a domain
whose recorded members' facts are missing (plugin_utils/fleet_facts.py and the filters that take ``outside``)."""

from __future__ import annotations

from collections.abc import Mapping

import pytest
from ansible.errors import AnsibleFilterError
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.gpufabric.cluster.plugins.filter.imex_domains import imex_domains
from ansible_collections.gpufabric.cluster.plugins.filter.imex_outside_members import imex_outside_members
from ansible_collections.gpufabric.cluster.plugins.filter.preflight_report import preflight_report
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.fleet_facts import (
    FleetHostvars,
    membership_record,
    outside_members,
    recorded_members,
)

CLIQUE = "3c1a5f2e-9b7d-4c2a-8e6f-1d0b7a9c4e21.1"
OTHER = "7d2b6a3f-0c8e-4d3b-9f70-2e1c8b0d5f32.1"
MEMBERS = {f"tray-{number:02d}": f"10.0.0.{10 + number}" for number in range(1, 5)}


def facts(clique: str = CLIQUE) -> dict:
    return {"gpufabric": {"gpu": {"cliques": [clique]}}}


def tray(name: str, clique: str = CLIQUE, record: dict | None = None) -> dict:
    own = facts(clique)
    if record is not None:
        own["gpufabric_imex_membership"] = record
    return {"ansible_facts": own, "gpufabric_imex_address": MEMBERS.get(name, "10.9.9.9")}


RECORD = {"clique": CLIQUE, "members": MEMBERS}


def test_a_slice_reads_its_recorded_peers_from_the_cache_with_their_recorded_addresses():
    hostvars = {"tray-01": tray("tray-01", record=RECORD), "tray-03": tray("tray-03", record=RECORD)}
    cached = {name: facts() for name in MEMBERS}
    found = outside_members(hostvars, ["tray-01", "tray-03"], cached)
    assert found["missing"] == {}
    assert sorted(found["hostvars"]) == ["tray-02", "tray-04"]
    assert found["hostvars"]["tray-02"] == {"ansible_facts": facts(), "gpufabric_imex_address": "10.0.0.12"}
    placement = imex_domains(hostvars, ["tray-01", "tray-03"], fleet=["tray-01", "tray-03"], outside=found,
                             address_var="gpufabric_imex_address")
    assert placement["tray-01"]["nodes"] == sorted(MEMBERS.values(), key=lambda text: int(text.split(".")[-1]))
    assert placement["tray-03"]["nodes"] == placement["tray-01"]["nodes"]


def test_a_slice_whose_peers_are_not_cached_refuses_their_domain_by_name_and_leaves_the_others():
    hostvars = {"tray-01": tray("tray-01", record=RECORD), "other-01": tray("other-01", OTHER)}
    found = outside_members(hostvars, ["tray-01", "other-01"], {"tray-02": facts()})
    assert found["missing"] == {CLIQUE: ["tray-03", "tray-04"]}
    # The refused domain's hosts get no domain and no nodes file, and why; the other domain of the run is placed.
    other = dict(hostvars, **{"other-02": dict(tray("other-02", OTHER), gpufabric_imex_address="10.9.9.10")})
    placement = imex_domains(other, ["tray-01", "other-01"], fleet=["tray-01", "other-01", "other-02"],
                             outside=found, address_var="gpufabric_imex_address")
    assert placement["tray-01"]["domain"] is None and placement["tray-01"]["nodes"] == []
    assert placement["tray-01"]["refused"].startswith(f"IMEX domain {CLIQUE}: no facts of its member(s) tray-03, "
                                                      "tray-04 (recorded in gpufabric_imex_membership")
    assert placement["other-01"]["domain"] == OTHER and placement["other-01"]["refused"] is None
    assert placement["other-01"]["nodes"] == ["10.9.9.9", "10.9.9.10"]
    report = preflight_report(hostvars, ["tray-01", "other-01"], outside=found)
    domains = {domain["clique"]: domain for domain in report["imex_domains"]}
    assert domains[CLIQUE]["status"] == "fail" and domains[CLIQUE]["expected_nodes"] is None
    assert domains[CLIQUE]["problems"][0].startswith(f"not judged: IMEX domain {CLIQUE}: no facts of its member(s) "
                                                     "tray-03, tray-04, recorded as members")
    assert not any("not judged" in problem for problem in domains[OTHER]["problems"])


@pytest.mark.parametrize("record", [
    None, "yes", {"clique": OTHER, "members": MEMBERS}, {"clique": CLIQUE, "members": {}},
    {"clique": CLIQUE, "members": ["tray-02"]}, {"clique": CLIQUE, "members": {"tray-02": None}},
    {"clique": CLIQUE}, {"members": MEMBERS},
])
def test_a_record_of_another_clique_or_shape_is_no_record(record):
    """A host that moved to another clique (or a record an operator typed) names no member: nothing is refused for it,
    and the run decides from what its inventory holds, as before slicing was known."""
    assert membership_record(tray("tray-01", record=record)) is None
    assert outside_members({"tray-01": tray("tray-01", record=record)}, ["tray-01"], {}) == \
        {"hostvars": {}, "missing": {}}


def test_a_host_of_the_inventory_always_reads_its_own_hostvars():
    view = FleetHostvars({"tray-01": {"own": True}}, {"tray-01": {"own": False}, "tray-02": {"own": False}})
    assert view["tray-01"] == {"own": True} and "tray-02" in view and len(view) == 2
    assert view.outside == ["tray-02"]


@pytest.mark.parametrize(("hostvars", "hosts", "message"), [
    ("hostvars", ["tray-01"], "the input must be hostvars"),
    ({}, "tray-01", "hosts must be a list"),
    ({}, [""], "hosts entry must not be empty"),
    ({}, [1], "hosts entry must be a string"),
])
def test_the_filter_refuses_arguments_of_the_wrong_type_by_name(hostvars, hosts, message):
    with pytest.raises(AnsibleFilterError, match=f"imex_outside_members: .*{message}"):
        imex_outside_members(hostvars, hosts)


def test_the_filter_reads_nothing_from_the_default_memory_cache():
    hostvars = {"tray-01": tray("tray-01", record=RECORD)}
    assert imex_outside_members(hostvars, ["tray-01", "tray-01"]) == \
        {"hostvars": {}, "missing": {CLIQUE: ["tray-02", "tray-03", "tray-04"]}}


@pytest.mark.parametrize("outside", ["x", {"hostvars": {}}, {"hostvars": [], "missing": {}},
                                     {"hostvars": {}, "missing": {CLIQUE: "tray-02"}}])
def test_an_outside_of_another_shape_is_refused_naming_it(outside):
    with pytest.raises(AnsibleFilterError, match="outside"):
        imex_domains({"tray-01": tray("tray-01")}, ["tray-01"], fleet=["tray-01"], outside=outside)


names = st.sampled_from(sorted(MEMBERS))


@settings(max_examples=60, deadline=None)
@given(inventory=st.sets(names, min_size=1), cached=st.sets(names))
def test_every_recorded_member_is_in_the_inventory_found_or_missing_exactly_once(inventory, cached):
    hostvars = {name: tray(name, record=RECORD) for name in inventory}
    found = outside_members(hostvars, sorted(inventory), {name: facts() for name in cached})
    missing = found["missing"].get(CLIQUE, [])
    assert sorted([*inventory, *found["hostvars"], *missing]) == sorted(MEMBERS)
    assert set(found["hostvars"]) == set(cached) - set(inventory)
    placement = imex_domains(hostvars, sorted(inventory), fleet=sorted(inventory), outside=found)
    if missing:
        # never a partial domain: no host of the run gets a domain or a nodes file, each says which members lack
        assert {placement[name]["domain"] for name in inventory} == {None}
        assert {len(placement[name]["nodes"]) for name in inventory} == {0}
        assert {placement[name]["refused"] for name in inventory} == \
            {f"IMEX domain {CLIQUE}: no facts of its member(s) {', '.join(missing)} "
             + placement[sorted(inventory)[0]]["refused"].split(f"{', '.join(missing)} ", 1)[1]}
    else:
        assert {len(placement[name]["nodes"]) for name in inventory} == {len(MEMBERS)}
        assert {placement[name]["refused"] for name in inventory} == {None}


class CountingHostvars(Mapping):
    """hostvars that count how often each host's variables are read (Ansible's HostVars builds them on each read)."""

    def __init__(self, hosts: dict):
        self._hosts = hosts
        self.reads: dict[str, int] = {}

    def __getitem__(self, name):
        self.reads[name] = self.reads.get(name, 0) + 1
        return self._hosts[name]

    def __contains__(self, name):
        return name in self._hosts

    def __iter__(self):
        return iter(self._hosts)

    def __len__(self):
        return len(self._hosts)


def test_the_filter_reads_every_host_once():
    hostvars = CountingHostvars({"tray-01": tray("tray-01", record=RECORD), "tray-02": tray("tray-02")})
    found = imex_outside_members(hostvars, ["tray-01", "tray-02"])
    assert found == {"hostvars": {}, "missing": {CLIQUE: ["tray-03", "tray-04"]}}
    assert hostvars.reads == {"tray-01": 1, "tray-02": 1}


@settings(max_examples=40, deadline=None)
@given(inventory=st.sets(names, min_size=1), cached=st.sets(names))
def test_the_recorded_members_given_are_what_reading_them_finds(inventory, cached):
    hostvars = {name: tray(name, record=RECORD) for name in inventory}
    cached_facts = {name: facts() for name in cached}
    recorded = recorded_members(hostvars, sorted(inventory))
    assert outside_members(hostvars, sorted(inventory), cached_facts, recorded) == \
        outside_members(hostvars, sorted(inventory), cached_facts)
