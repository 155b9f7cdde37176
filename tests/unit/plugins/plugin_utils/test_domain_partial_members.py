# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Domains whose members disagree or are partly present (issue 41): every decision about a domain refuses or names,
and none is derived from part of its members.

On the starting commit:

- the preflight judged a domain from the members whose facts it had: with one tray unreachable (no facts, or outside
  the run with no facts: ``imex_domain_peers``' ``unknown``), or with one tray whose GPUs name two cliques, it derived
  the nodes file of the others and failed the healthy members for listing the absent tray's address, without naming
  the tray;
- ``derive_domains`` (the nvidia_imex nodes file) dropped a fleet member outside the run whose GPUs name two cliques,
  one of them the run's, and wrote the domain's nodes file without it; ``domain_peers`` left it out of the members the
  preflight judges;
- members of another driver or nvidia-imex version, and members of another chassis, were named by host only.
"""

from __future__ import annotations

import copy

import pytest
from fixtures.recorded_nvml import recorded_facts
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.gpufabric.cluster.plugins.plugin_utils.imex_domains import (
    ImexDomainError,
    derive_domains,
    domain_peers,
)
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.preflight import PreflightError, preflight_report
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.preflight_html import preflight_report_html
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.report_markdown import preflight_markdown

RACK = "1823124190518"
OTHER_CLIQUE_ID = "99"


@pytest.fixture(scope="module")
def tray_facts(tree_builder, tmp_path_factory, command_runner):
    """``ansible_facts['gpufabric']`` of the recorded healthy GB200 tray, gathered by the real probe."""
    gathered = recorded_facts(tree_builder.build_tree("gb200_tray", str(tmp_path_factory.mktemp("partial"))),
                              command_runner)
    gathered.pop("warnings")
    return gathered


def fleet(tray_facts, count):
    """hostvars of ``count`` healthy trays of one rack: tray-<i> at 10.114.0.<11+i> in slot <10+i>, every nodes file
    listing exactly the members."""
    addresses = [f"10.114.0.{11 + index}" for index in range(count)]
    hostvars = {}
    for index in range(count):
        facts = copy.deepcopy(tray_facts)
        facts["imex"]["nodes"]["addresses"] = list(addresses)
        facts["gpu"]["platform"]["slot_numbers"] = [10 + index]
        hostvars[f"tray-{index}"] = {"ansible_facts": {"gpufabric": facts,
                                                       "default_ipv4": {"address": addresses[index]}}}
    return hostvars


def split(hostvars, name):
    """Make ``name``'s GPUs name two cliques: the rack's and another."""
    gpu = hostvars[name]["ansible_facts"]["gpufabric"]["gpu"]
    clique = gpu["cliques"][0]
    gpu["cliques"] = [clique, f"{clique.rsplit('.', 1)[0]}.{OTHER_CLIQUE_ID}"]
    return clique


def only_domain(report):
    assert len(report["imex_domains"]) == 1
    return report["imex_domains"][0]


def undecided(*named):
    return (f"membership not complete: {', '.join(named)} may be members; the domain is not judged from the others "
            "alone (its expected nodes file is not derived, the members' nodes files are checked for gaps only)")


def assert_judged_whole(report, members, note):
    """The domain of ``members`` names its undecided members in one note, warns (never passes), derives no nodes
    file and fails none of its healthy members for the absent one."""
    domain = only_domain(report)
    assert domain["members"] == members
    assert domain["notes"] == [note]
    assert domain["problems"] == [] and domain["stale"] == [] and domain["expected_nodes"] is None
    assert domain["own_status"] == "warn"
    for name in members:
        check = next(check for check in report["hosts"][name]["checks"] if check["name"] == "imex_domain")
        assert check == {"name": "imex_domain", "status": "warn", "message": note}
    return domain


def test_an_unreachable_member_of_the_run_is_named_and_the_others_are_not_blamed(tray_facts):
    hostvars = fleet(tray_facts, 4)
    hostvars["tray-3"] = {}  # unreachable: no facts
    report = preflight_report(hostvars, list(hostvars))
    assert_judged_whole(report, ["tray-0", "tray-1", "tray-2"], undecided("tray-3 (no gpufabric facts)"))
    assert report["hosts"]["tray-3"]["status"] == "fail"
    assert only_domain(report)["status"] == "warn"  # the three that answered pass their own checks


def test_a_member_outside_the_run_without_facts_is_named(tray_facts):
    """``imex_domain_peers``' unknown: a GPU host of the fleet outside the run, without facts (--limit, a job slice)."""
    hostvars = fleet(tray_facts, 4)
    report = preflight_report(hostvars, ["tray-0", "tray-1", "tray-2"], unknown_members=["tray-3"])
    assert_judged_whole(report, ["tray-0", "tray-1", "tray-2"], undecided("tray-3 (no gpufabric facts)"))
    assert "tray-3" not in report["hosts"] and report["summary"]["failed_hosts"] == []


def test_a_member_whose_gpus_name_two_cliques_is_named_with_its_rack_and_slot(tray_facts):
    hostvars = fleet(tray_facts, 4)
    split(hostvars, "tray-2")
    report = preflight_report(hostvars, list(hostvars))
    domain = assert_judged_whole(report, ["tray-0", "tray-1", "tray-3"],
                                 undecided(f"tray-2 (rack {RACK}, slot 12: its GPUs are in 2 cliques)"))
    assert report["hosts"]["tray-2"]["status"] == "fail"  # its own fabric check names the cliques
    assert domain["status"] == "warn"


def test_gaps_stay_sure_while_a_member_is_undecided(tray_facts):
    """A member that answered and lacks another answered member's address is still named."""
    hostvars = fleet(tray_facts, 4)
    hostvars["tray-3"] = {}
    hostvars["tray-0"]["ansible_facts"]["gpufabric"]["imex"]["nodes"]["addresses"].remove("10.114.0.12")
    domain = only_domain(preflight_report(hostvars, list(hostvars)))
    assert domain["problems"] == ["nodes file of tray-0 differs from the expected one (3 member address(es), sorted, "
                                  "as nvidia_imex writes it): lacks 10.114.0.12"]
    assert domain["stale"] == ["tray-0"] and domain["status"] == "fail"


def test_the_reports_name_the_undecided_member_and_draw_the_rack_of_the_others(tray_facts):
    hostvars = fleet(tray_facts, 3)
    hostvars["tray-2"] = {}
    report = preflight_report(hostvars, list(hostvars))
    text = preflight_markdown(report)
    assert "membership not complete: tray-2 (no gpufabric facts) may be members" in text
    assert text.endswith(f"| {RACK} | 10 | 11 | tray-0 | WARN |\n| {RACK} | 11 | 11 | tray-1 | WARN |\n")
    page = preflight_report_html(report)
    section = page.split('<section class="domain"')[1]
    assert section.startswith(f' data-clique="{only_domain(report)["clique"]}" data-status="warn">')
    assert '<ul class="notes"><li>membership not complete: tray-2 (no gpufabric facts) may be members' in section


@pytest.mark.parametrize("value", ["tray-3", [3], [""]])
def test_unknown_members_must_be_a_list_of_names(value):
    with pytest.raises(PreflightError, match=r"^unknown_members"):
        preflight_report({}, [], unknown_members=value)


def test_versions_and_chassis_name_the_odd_trays_with_rack_and_slot(tray_facts):
    hostvars = fleet(tray_facts, 4)
    hostvars["tray-1"]["ansible_facts"]["gpufabric"]["gpu"]["driver_version"] = "580.65.06"
    hostvars["tray-2"]["ansible_facts"]["gpufabric"]["imex"]["version"] = "580.65.06-1"
    hostvars["tray-3"]["ansible_facts"]["gpufabric"]["gpu"]["platform"]["chassis_serials"] = ["1823124190733"]
    domain = only_domain(preflight_report(hostvars, list(hostvars), {"imex_domain_single_chassis": True}))
    assert domain["problems"][0] == ("members run different NVIDIA driver versions: 570.172.08 on 3 member(s); "
                                     f"580.65.06 on tray-1 (rack {RACK}, slot 11)")
    assert domain["problems"][1].startswith("members run different nvidia-imex versions: 570.172.08 on 3 member(s); "
                                            f"580.65.06 on tray-2 (rack {RACK}, slot 12) (peers")
    assert domain["problems"][2].startswith(f"members sit in 2 chassis (rack {RACK}: tray-0 (slot 10), tray-1 (slot "
                                            "11), tray-2 (slot 12); rack 1823124190733: tray-3 (slot 13))")


# --- the nodes file the nvidia_imex role writes, and the peers the preflight judges


def test_a_fleet_member_outside_the_run_in_two_cliques_is_refused_not_dropped(tray_facts):
    hostvars = fleet(tray_facts, 4)
    clique = split(hostvars, "tray-3")
    with pytest.raises(ImexDomainError) as caught:
        derive_domains(hostvars, ["tray-0"], fleet=list(hostvars))
    message = str(caught.value)
    assert message.startswith("host tray-3 of nvidia_imex_fleet: its GPUs are in 2 cliques (")
    assert clique in message and "set nvidia_imex_domains" in message and "\n" not in message


def test_a_fleet_member_in_another_clique_alone_is_not_the_run_s(tray_facts):
    """A host whose GPUs name two cliques, neither of them the run's, is no member of the run's domain."""
    hostvars = fleet(tray_facts, 4)
    for name in ("tray-2", "tray-3"):
        gpu = hostvars[name]["ansible_facts"]["gpufabric"]["gpu"]
        gpu["cliques"] = ["aaaaaaaa-0000-0000-0000-000000000000.1", "aaaaaaaa-0000-0000-0000-000000000000.2"]
    result = derive_domains(hostvars, ["tray-0"], fleet=list(hostvars))
    assert result["tray-0"]["nodes"] == ["10.114.0.11", "10.114.0.12"]


def test_the_preflight_judges_a_peer_whose_gpus_name_the_run_s_clique_and_another(tray_facts):
    hostvars = fleet(tray_facts, 4)
    split(hostvars, "tray-3")
    peers = domain_peers(hostvars, ["tray-0"], list(hostvars))
    assert peers == {"members": ["tray-1", "tray-2", "tray-3"], "unknown": []}
    report = preflight_report(hostvars, ["tray-0", *peers["members"]], unknown_members=peers["unknown"])
    assert report["hosts"]["tray-3"]["status"] == "fail"
    assert only_domain(report)["notes"] == [undecided(f"tray-3 (rack {RACK}, slot 13: its GPUs are in 2 cliques)")]


# --- any fleet: a domain with an undecided member is never judged from the others

STATES = st.sampled_from(["healthy", "healthy", "unreachable", "outside", "split", "other"])


@settings(max_examples=60, deadline=None)
@given(states=st.lists(STATES, min_size=1, max_size=6))
def test_property_a_domain_names_every_undecided_member_and_never_passes_without_it(tray_facts, states):
    hostvars = fleet(tray_facts, len(states))
    run, unknown = [], []
    for index, state in enumerate(states):
        name = f"tray-{index}"
        if state == "unreachable":
            hostvars[name] = {}
        if state == "split":
            split(hostvars, name)
        if state == "other":  # another domain whose nodes file is the rack's: a clique the others do not share
            gpu = hostvars[name]["ansible_facts"]["gpufabric"]["gpu"]
            gpu["cliques"] = [f"{gpu['cliques'][0].rsplit('.', 1)[0]}.{OTHER_CLIQUE_ID}"]
        (unknown if state == "outside" else run).append(name)
    report = preflight_report(hostvars, run, unknown_members=unknown)
    absent = [f"tray-{index}" for index, state in enumerate(states) if state in ("unreachable", "outside")]
    # a split tray names the rack's clique and the other domain's: undecided in both
    named = [f"tray-{index}" for index, state in enumerate(states) if state in ("unreachable", "outside", "split")]
    for domain in report["imex_domains"]:
        notes = [note for note in domain["notes"] if note.startswith("membership not complete: ")]
        if named:
            assert len(notes) == 1 and domain["status"] != "pass" and domain["expected_nodes"] is None
            for name in named:
                assert f"{name} (" in notes[0]
        else:
            assert notes == []
        # the addresses of absent members are never held against the members that answered
        for problem in domain["problems"]:
            if absent and "differs from the expected one" in problem:
                assert "lists " not in problem


def test_an_address_of_a_tray_of_another_clique_is_named_with_the_tray_and_its_place(tray_facts):
    """tray-3's facts say another clique than the nodes files of the others, which list it: the others' domain names
    the tray that holds the address, and its rack and slot."""
    hostvars = fleet(tray_facts, 4)
    gpu = hostvars["tray-3"]["ansible_facts"]["gpufabric"]["gpu"]
    gpu["cliques"] = [f"{gpu['cliques'][0].rsplit('.', 1)[0]}.{OTHER_CLIQUE_ID}"]
    hostvars["tray-0"]["ansible_facts"]["gpufabric"]["imex"]["nodes"]["addresses"].append("10.114.0.99")
    report = preflight_report(hostvars, list(hostvars))
    rack_domain = next(domain for domain in report["imex_domains"] if domain["members"] == ["tray-0", "tray-1",
                                                                                            "tray-2"])
    assert rack_domain["problems"] == [
        "nodes file of tray-0 differs from the expected one (3 member address(es), sorted, as nvidia_imex writes it): "
        f"lists 10.114.0.14 of tray-3 (rack {RACK}, slot 13) (not of this clique); lists 10.114.0.99 (no member of "
        "this run)",
        "nodes file of tray-1, tray-2 differs from the expected one (3 member address(es), sorted, as nvidia_imex "
        f"writes it): lists 10.114.0.14 of tray-3 (rack {RACK}, slot 13) (not of this clique)"]
