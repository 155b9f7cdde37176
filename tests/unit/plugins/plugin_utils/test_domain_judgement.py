# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 41 item 3: the preflight judges the NVLink domain as one thing.

On the starting commit a domain's verdict read only the members' nodes files: a domain with a member failing fabric
health was headed PASS, members with different drivers or nvidia-imex versions passed, members in two chassis passed,
and a live domain's ``!V!`` (version mismatch) connections were "not connected" without their state.
"""

from __future__ import annotations

import copy
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import nvlink_domain
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.preflight import PreflightError, preflight_report
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.preflight_html import preflight_report_html
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.report_markdown import preflight_markdown
from ansible_collections.gpufabric.cluster.tests.unit.helpers import gathered_trees

TREES = ("gb200_tray", "gb200_tray_degraded", "gb200_tray_misconfigured", "gb200_tray_gfm_down")
RACK = "1823124190518"


@pytest.fixture(scope="module")
def trays(tree_builder, tmp_path_factory, command_runner):
    """``ansible_facts['gpufabric']`` of the recorded GB200 trays, gathered by the real probe."""
    return gathered_trees(tree_builder, command_runner, str(tmp_path_factory.mktemp("domain-trays")), TREES)


def fleet(trays, members, driver=None, imex=None):
    """hostvars of ``members`` (a list of tree names): tray-<i> at 10.114.0.<11+i> in slot <10+i>, every nodes file
    listing exactly the members; ``driver`` / ``imex``: {index: version} to change."""
    addresses = [f"10.114.0.{11 + index}" for index in range(len(members))]
    hostvars = {}
    for index, tree in enumerate(members):
        facts = copy.deepcopy(trays[tree])
        facts["imex"]["nodes"]["addresses"] = list(addresses)
        if facts["gpu"]["platform"]["chassis_serials"] == [RACK]:
            facts["gpu"]["platform"]["slot_numbers"] = [10 + index]
        if driver and index in driver:
            facts["gpu"]["driver_version"] = driver[index]
        if imex and index in imex:
            facts["imex"]["version"] = imex[index]
        hostvars[f"tray-{index}"] = {"ansible_facts": {"gpufabric": facts,
                                                       "default_ipv4": {"address": addresses[index]}}}
    return hostvars


def only_domain(report):
    assert len(report["imex_domains"]) == 1
    return report["imex_domains"][0]


def test_a_domain_with_a_failing_member_is_not_headed_pass(trays):
    hostvars = fleet(trays, ["gb200_tray", "gb200_tray", "gb200_tray_degraded", "gb200_tray"])
    report = preflight_report(hostvars, list(hostvars))
    domain = only_domain(report)
    assert report["hosts"]["tray-2"]["status"] == "fail"
    assert (domain["own_status"], domain["status"]) == ("pass", "fail")
    # the recorded trays run 570.172.08, a branch past its end of life: every member also warns (issue 42)
    assert domain["member_problems"] == [f"tray-0 (rack {RACK}, slot 10): warnings: driver_lifecycle",
                                         f"tray-1 (rack {RACK}, slot 11): warnings: driver_lifecycle",
                                         # and its GPUs' pending row remap and reset (issue 43)
                                         f"tray-2 (rack {RACK}, slot 12): failed: fabric_health, gpu_health",
                                         f"tray-3 (rack {RACK}, slot 13): warnings: driver_lifecycle"]
    assert report["hosts"]["tray-2"]["place"] == f"rack {RACK}, slot 12"
    # the other members keep their own verdict (the lifecycle warning): one tray's failure is not its peers'
    assert [report["hosts"][name]["status"] for name in ("tray-0", "tray-1", "tray-3")] == ["warn"] * 3


def test_a_healthy_coherent_domain_passes(trays):
    hostvars = fleet(trays, ["gb200_tray"] * 3)
    domain = only_domain(preflight_report(hostvars, list(hostvars)))
    # the domain's own checks pass; its members warn only about their driver branch, past its end of life (R570)
    assert (domain["own_status"], domain["problems"], domain["notes"]) == ("pass", [], [])
    assert (domain["status"], domain["member_problems"]) == (
        "warn", [f"tray-{index} (rack {RACK}, slot {10 + index}): warnings: driver_lifecycle" for index in range(3)])


def test_members_with_another_driver_are_named_with_both_versions(trays):
    hostvars = fleet(trays, ["gb200_tray"] * 4, driver={3: "580.65.06"})
    report = preflight_report(hostvars, list(hostvars))
    domain = only_domain(report)
    assert domain["status"] == "fail"
    assert domain["problems"] == ["members run different NVIDIA driver versions: 570.172.08 on 3 member(s); "
                                  f"580.65.06 on tray-3 (rack {RACK}, slot 13)"]
    check = next(check for check in report["hosts"]["tray-0"]["checks"] if check["name"] == "imex_domain")
    assert check == {"name": "imex_domain", "status": "fail", "message": domain["problems"][0]}


def test_members_with_another_nvidia_imex_are_named_with_both_versions(trays):
    hostvars = fleet(trays, ["gb200_tray"] * 4, imex={0: "580.65.06-1", 2: "580.65.06-1"})
    domain = only_domain(preflight_report(hostvars, list(hostvars)))
    assert domain["problems"] == [f"members run different nvidia-imex versions: 570.172.08 on tray-1 (rack {RACK}, "
                                  f"slot 11), tray-3 (rack {RACK}, slot 13); 580.65.06 on tray-0 (rack {RACK}, slot "
                                  f"10), tray-2 (rack {RACK}, slot 12) (peers of another version are !V!, "
                                  "communication disabled)"]


def test_a_packaging_revision_is_not_another_nvidia_imex(trays):
    hostvars = fleet(trays, ["gb200_tray"] * 2, imex={1: "570.172.08-2"})
    domain = only_domain(preflight_report(hostvars, list(hostvars)))
    # coherent: its own checks pass (the members' R570 lifecycle warning is theirs, not a version mismatch)
    assert (domain["own_status"], domain["problems"]) == ("pass", [])


def test_an_unknown_version_is_never_coherent(trays):
    hostvars = fleet(trays, ["gb200_tray"] * 3, imex={1: None})
    domain = only_domain(preflight_report(hostvars, list(hostvars)))
    assert domain["status"] == "warn"
    assert domain["notes"] == [f"nvidia-imex version unknown on tray-1 (rack {RACK}, slot 11): the domain's "
                               "nvidia-imex coherence is not shown"]
    hostvars["tray-2"]["ansible_facts"]["gpufabric"]["imex"]["installed"] = False
    domain = only_domain(preflight_report(hostvars, list(hostvars)))
    assert domain["notes"] == [f"nvidia-imex not installed on tray-2 (rack {RACK}, slot 12) while other members "
                               "have it",
                               f"nvidia-imex version unknown on tray-1 (rack {RACK}, slot 11): the domain's "
                               "nvidia-imex coherence is not shown"]
    for entry in hostvars.values():
        entry["ansible_facts"]["gpufabric"]["imex"]["installed"] = False
    assert only_domain(preflight_report(hostvars, list(hostvars)))["notes"] == []  # no host IMEX: not judged


@pytest.mark.parametrize(("single_chassis", "status", "key"), [(False, "warn", "notes"), (True, "fail", "problems")])
def test_members_in_two_chassis(trays, single_chassis, status, key):
    hostvars = fleet(trays, ["gb200_tray", "gb200_tray", "gb200_tray_misconfigured"])
    report = preflight_report(hostvars, list(hostvars), {"imex_domain_single_chassis": single_chassis})
    domain = only_domain(report)
    assert domain["own_status"] == status
    said = [text for text in domain[key] if text.startswith("members sit in 2 chassis")]
    assert len(said) == 1
    assert f"(rack {RACK}: tray-0 (slot 10), tray-1 (slot 11); rack 1823124190733: tray-2 (slot 5))" in said[0]
    assert domain["racks"] == [
        {"chassis_serial": "1823124190518", "trays": [{"host": "tray-0", "slot_number": 10, "tray_index": 11},
                                                      {"host": "tray-1", "slot_number": 11, "tray_index": 11}]},
        {"chassis_serial": "1823124190733", "trays": [{"host": "tray-2", "slot_number": 5, "tray_index": 4}]}]
    assert domain["status"] == "fail"  # the misconfigured tray itself fails fabric_health either way


def test_the_single_chassis_setting_is_a_boolean():
    with pytest.raises(PreflightError, match=r"settings.imex_domain_single_chassis must be a boolean"):
        preflight_report({}, [], {"imex_domain_single_chassis": "sometimes"})
    assert preflight_report({}, [], {"imex_domain_single_chassis": "yes"})["settings"]["imex_domain_single_chassis"]
    assert preflight_report({}, [], {})["settings"]["imex_domain_single_chassis"] is False


@pytest.mark.parametrize(("state", "mark"), [("VERSION_MISMATCH", "!V!: version mismatch, communication disabled"),
                                             ("NODE_MAP_MISMATCH", "!M!: node map mismatch, communication disabled")])
def test_mismatched_imex_connections_are_named_by_state(trays, state, mark):
    hostvars = fleet(trays, ["gb200_tray"])
    domain = hostvars["tray-0"]["ansible_facts"]["gpufabric"]["imex"]["domain"]
    domain["connections"]["0"]["2"] = domain["connections"]["2"]["0"] = state
    domain["connections"]["1"]["2"] = "NEVER_CONNECTED"
    domain["not_connected"] = [[0, 2], [1, 2], [2, 0]]
    domain["nodes"][2]["version"] = "580.65.06"
    report = preflight_report(hostvars, list(hostvars))
    check = next(check for check in report["hosts"]["tray-0"]["checks"] if check["name"] == "imex")
    assert check["status"] == "fail"
    problems = check["message"].split("; ")
    assert f"IMEX connections {state} ({mark}" in check["message"]
    assert "IMEX connections NEVER_CONNECTED (N: never connected): 1->2" in problems
    if state == "VERSION_MISMATCH":
        assert ("0->2, 2->0; nvidia-imex 580.65.06 on node(s) 2; nvidia-imex 570.172.08 on node(s) 0, 1, 3, 4, 5, 6, "
                "7, 8 and 9 more; IMEX connections NEVER_CONNECTED") in check["message"]


@pytest.mark.parametrize(("versions", "expected"), [
    ({"a": "1.0", "b": "1.0", "c": "2.0"}, "x versions: 1.0 on 2 member(s); 2.0 on c"),
    ({"a": "1.0", "b": "2.0"}, "x versions: 1.0 on a; 2.0 on b"),  # no majority: both named
    ({"a": "1.0", "b": "2.0", "c": "3.0", "d": "3.0", "e": "3.0"},
     "x versions: 3.0 on 3 member(s); 1.0 on a; 2.0 on b"),
])
def test_the_odd_members_are_named(versions, expected):
    assert nvlink_domain._differ("x", versions) == "members run different " + expected


MEMBER = st.fixed_dictionaries({
    "tree": st.sampled_from(["gb200_tray", "gb200_tray", "gb200_tray_degraded", "gb200_tray_gfm_down"]),
    "driver": st.sampled_from(["570.172.08", "580.65.06"]),
    "imex": st.sampled_from(["570.172.08-1", "580.65.06-1"])})


@given(members=st.lists(MEMBER, min_size=1, max_size=5), bias=st.booleans())
def test_any_fleet_a_domain_passes_only_when_every_member_passes_on_one_driver_and_one_imex(trays, members, bias):
    if bias:  # half the fleets share their versions, so that passing domains are drawn too
        members = [dict(member, driver=members[0]["driver"], imex=members[0]["imex"]) for member in members]
    hostvars = fleet(trays, [member["tree"] for member in members],
                     driver=dict(enumerate(member["driver"] for member in members)),
                     imex=dict(enumerate(member["imex"] for member in members)))
    report = preflight_report(hostvars, list(hostvars))
    domain = only_domain(report)
    host_statuses = [report["hosts"][f"tray-{index}"]["status"] for index in range(len(members))]
    coherent = len({member["driver"] for member in members}) == 1 and len({member["imex"] for member in members}) == 1
    bad_trees = {"gb200_tray_degraded", "gb200_tray_gfm_down"}
    assert all(status == "fail" for status, member in zip(host_statuses, members, strict=True)
               if member["tree"] in bad_trees)
    assert (domain["status"] == "pass") == (coherent and all(status == "pass" for status in host_statuses))
    if any(member["tree"] in bad_trees for member in members) or not coherent:
        assert domain["status"] == "fail"
    # the members named as failing: those that fail a check of their own (imex_domain is the domain's own verdict)
    failed = [f"tray-{index}" for index in range(len(members)) if any(
        check["status"] == "fail" and check["name"] != "imex_domain"
        for check in report["hosts"][f"tray-{index}"]["checks"])]
    assert [line.split(" ", 1)[0] for line in domain["member_problems"] if ": failed: " in line] == failed
    assert set(failed) >= {f"tray-{index}" for index, member in enumerate(members) if member["tree"] in bad_trees}


def test_the_reports_head_the_domain_by_its_members_and_group_trays_by_rack_and_slot(trays):
    hostvars = fleet(trays, ["gb200_tray", "gb200_tray_degraded", "gb200_tray_misconfigured", "gb200_tray"])
    for index, slot in ((0, 14), (1, 12), (3, 10)):  # slots against name order; tray-0 and tray-3 warn: two chassis
        hostvars[f"tray-{index}"]["ansible_facts"]["gpufabric"]["gpu"]["platform"]["slot_numbers"] = [slot]
    report = preflight_report(hostvars, list(hostvars))
    domain = only_domain(report)
    assert (domain["own_status"], domain["status"]) == ("warn", "fail")
    assert domain["member_problems"] == [f"tray-3 (rack {RACK}, slot 10): warnings: driver_lifecycle",
                                         f"tray-1 (rack {RACK}, slot 12): failed: fabric_health, gpu_health",
                                         f"tray-0 (rack {RACK}, slot 14): warnings: driver_lifecycle",
                                         "tray-2 (rack 1823124190733, slot 5): failed: fabric_health"]
    text = preflight_markdown(report)
    assert f"## tray-3\n\nrack {RACK}, slot 10\n\n| check | status | detail |" in text
    assert (f"### IMEX domain {domain['clique']}: FAIL (its own checks: WARN)\n\n"
            "| rack | slot | tray | host | status |\n|---|---|---|---|---|\n"
            f"| {RACK} | 10 | 11 | tray-3 | WARN |\n| {RACK} | 12 | 11 | tray-1 | FAIL |\n"
            f"| {RACK} | 14 | 11 | tray-0 | WARN |\n| 1823124190733 | 5 | 4 | tray-2 | FAIL |\n") in text
    assert f"tray-1 (rack {RACK}, slot 12): failed: fabric_health, gpu_health" in text.split("## IMEX domains")[1]
    page = preflight_report_html(report)
    section = page.split('<section class="domain"')[1]
    assert section.startswith(f' data-clique="{domain["clique"]}" data-status="fail">')
    assert 'its own checks: <span class="warn">WARN</span>' in section
    assert re.findall(r'<h3 class="rack">([^<]*)</h3>', section) == [f"rack {RACK}", "rack 1823124190733"]
    assert re.findall(r'data-host="([^"]*)"', section) == ["tray-3", "tray-1", "tray-0", "tray-2"]
    assert f'<div class="place">rack {RACK}, slot 12</div>' in section
    assert '<ul class="member_problems"><li>tray-3 (rack' in section
    assert f"<li>tray-1 (rack {RACK}, slot 12): failed" in section


def test_a_report_without_platform_info_keeps_one_group_of_tiles(trays):
    hostvars = fleet(trays, ["gb200_tray"] * 2)
    for entry in hostvars.values():
        entry["ansible_facts"]["gpufabric"]["gpu"]["platform"] = {"chassis_serials": [], "slot_numbers": [],
                                                                  "tray_indices": [], "host_ids": []}
    report = preflight_report(hostvars, list(hostvars))
    assert only_domain(report)["racks"] == [{"chassis_serial": None, "trays": [
        {"host": "tray-0", "slot_number": None, "tray_index": None},
        {"host": "tray-1", "slot_number": None, "tray_index": None}]}]
    assert report["hosts"]["tray-0"]["place"] is None
    page = preflight_report_html(report)
    assert '<h3 class="rack">' not in page and page.count('<div class="tiles">') == 1
    assert "### IMEX domain" not in preflight_markdown(report)
