# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The plan of a day-2 change (issue 42 item 1): one NVLink domain at a time, the first alone, hosts in no domain
after, a domain never changed in part.

On the starting commit the nvidia_driver role installed on every host at once and rebooted at most
``nvidia_driver_reboot_serial`` hosts of each clique per batch (``reboot_batches``), so a rack held two driver
versions from its first reboot to its last; there was no plan to test.
"""

from __future__ import annotations

import copy
import itertools

import pytest
from fixtures.recorded_nvml import recorded_facts
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.gpufabric.cluster.plugins.plugin_utils.arguments import ArgumentError
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.domain_waves import (
    DomainWaveError,
    members_to_probe,
    plan_lines,
    plan_waves,
)

RACK = "1823124190518"


@pytest.fixture(scope="module")
def recorded(tree_builder, tmp_path_factory, command_runner):
    """``ansible_facts['gpufabric']`` of the recorded GB200 tray and HGX H100, gathered by the real probe."""
    dest = str(tmp_path_factory.mktemp("waves"))
    return {name: recorded_facts(tree_builder.build_tree(name, dest), command_runner)
            for name in ("gb200_tray", "hgx_h100")}


def tray(recorded, rack, clique, slot):
    """A GB200 tray in rack ``rack`` (its chassis serial) and clique ``<cluster uuid>.<clique>``, in slot ``slot``."""
    facts = copy.deepcopy(recorded["gb200_tray"])
    gpu = facts["gpu"]
    uuid = gpu["cliques"][0].rsplit(".", 1)[0]
    gpu["cliques"] = [f"{uuid}.{clique}"]
    gpu["platform"]["chassis_serials"] = [rack]
    gpu["platform"]["slot_numbers"] = [slot]
    return {"ansible_facts": {"gpufabric": facts}}


def site(recorded):
    """Two racks of two trays (rack B's serial sorts first), and two HGX hosts in no domain."""
    return {
        "a-tray-1": tray(recorded, "2000000000001", 1, 11), "a-tray-2": tray(recorded, "2000000000001", 1, 10),
        "b-tray-1": tray(recorded, "1000000000001", 2, 10), "b-tray-2": tray(recorded, "1000000000001", 2, 11),
        "hgx-1": {"ansible_facts": {"gpufabric": copy.deepcopy(recorded["hgx_h100"])}},
        "hgx-2": {"ansible_facts": {"gpufabric": copy.deepcopy(recorded["hgx_h100"])}},
    }


def shape(waves):
    return [(wave["canary"], [domain["hosts"] for domain in wave["domains"]], wave["hosts"], wave["changing"])
            for wave in waves]


def test_the_recorded_hgx_is_in_no_clique_and_the_tray_in_one(recorded):
    """The premise of the plan: the recorded HGX H100 registers no multi-node clique, the GB200 tray one."""
    assert recorded["hgx_h100"]["gpu"]["cliques"] == []
    assert len(recorded["gb200_tray"]["gpu"]["cliques"]) == 1


def test_one_domain_first_then_one_at_a_time_then_the_hosts_in_no_domain(recorded):
    hostvars = site(recorded)
    names = list(hostvars)
    waves = plan_waves(hostvars, names, names, names)
    assert [wave["number"] for wave in waves] == [1, 2, 3, 4]
    assert shape(waves) == [
        # rack 1000000000001 first (rack order), its trays in slot order
        (True, [["b-tray-1", "b-tray-2"]], ["b-tray-1", "b-tray-2"], ["b-tray-1", "b-tray-2"]),
        (False, [["a-tray-2", "a-tray-1"]], ["a-tray-2", "a-tray-1"], ["a-tray-1", "a-tray-2"]),
        (False, [], ["hgx-1"], ["hgx-1"]),
        (False, [], ["hgx-2"], ["hgx-2"]),
    ]
    assert waves[0]["domains"][0]["rack"] == "rack 1000000000001"
    assert waves[0]["summary"].startswith("wave 1 (canary): NVLink domain ")
    assert waves[0]["summary"].endswith(" (rack 1000000000001): change b-tray-1, b-tray-2")
    assert waves[2]["summary"] == "wave 3: host(s) in no NVLink domain: hgx-1"


def test_domains_at_a_time_after_the_canary_and_serial_for_the_hosts_in_no_domain(recorded):
    hostvars = site(recorded)
    hostvars["c-tray-1"] = tray(recorded, "3000000000001", 3, 10)
    names = list(hostvars)
    waves = plan_waves(hostvars, names, names, names, domains_at_a_time="2", serial=2)
    assert shape(waves) == [
        (True, [["b-tray-1", "b-tray-2"]], ["b-tray-1", "b-tray-2"], ["b-tray-1", "b-tray-2"]),
        (False, [["a-tray-2", "a-tray-1"], ["c-tray-1"]], ["a-tray-2", "a-tray-1", "c-tray-1"],
         ["a-tray-1", "a-tray-2", "c-tray-1"]),
        (False, [], ["hgx-1", "hgx-2"], ["hgx-1", "hgx-2"]),
    ]


def test_a_member_that_needs_no_change_is_drained_and_verified_with_its_domain(recorded):
    hostvars = site(recorded)
    names = list(hostvars)
    waves = plan_waves(hostvars, ["a-tray-1"], names, names)
    assert shape(waves) == [(True, [["a-tray-2", "a-tray-1"]], ["a-tray-2", "a-tray-1"], ["a-tray-1"])]
    assert waves[0]["summary"].endswith("change a-tray-1; drain and verify with them a-tray-2")


def test_the_plan_says_what_changes_on_each_host_grouped_by_change(recorded):
    """Check mode prints the plan: which hosts change, and from what to what (issue 42 item 1)."""
    hostvars = site(recorded)
    names = list(hostvars)
    changes = {"a-tray-1": "driver 570.124.06 -> branch 580", "a-tray-2": "driver 570.124.06 -> branch 580",
               "b-tray-1": "driver 570.124.06 -> branch 580", "b-tray-2": "driver none loaded  ->\n branch 580",
               "hgx-1": "driver 535.1 -> 580.95.05"}
    waves = plan_waves(hostvars, names, names, names, changes=changes)
    assert waves[0]["summary"].endswith(
        "(rack 1000000000001): change b-tray-1 (driver 570.124.06 -> branch 580); "
        "b-tray-2 (driver none loaded -> branch 580)")
    assert waves[1]["summary"].endswith(": change a-tray-1, a-tray-2 (driver 570.124.06 -> branch 580)")
    assert waves[2]["summary"] == "wave 3: host(s) in no NVLink domain: hgx-1 (driver 535.1 -> 580.95.05)"
    assert waves[3]["summary"] == "wave 4: host(s) in no NVLink domain: hgx-2"
    kept = plan_waves(hostvars, ["a-tray-1"], names, names, changes=changes)
    assert kept[0]["summary"].endswith(
        "change a-tray-1 (driver 570.124.06 -> branch 580); drain and verify with them a-tray-2")
    assert [wave["summary"] for wave in plan_waves(hostvars, names, names, names, changes={"x": "y" * 500})] == [
        wave["summary"] for wave in plan_waves(hostvars, names, names, names)]


@pytest.mark.parametrize("changes", ["driver", ["a-tray-1"], {"a-tray-1": 580}, {"a-tray-1": None}])
def test_changes_that_are_not_text_by_host_are_refused(recorded, changes):
    hostvars = site(recorded)
    names = list(hostvars)
    with pytest.raises(ArgumentError, match=r"^changes must "):
        plan_waves(hostvars, names, names, names, changes=changes)


def test_nothing_to_change_is_no_wave(recorded):
    hostvars = site(recorded)
    assert plan_waves(hostvars, [], list(hostvars), list(hostvars)) == []
    assert plan_lines([]) == []


def test_a_member_outside_the_run_refuses_its_domain_by_name(recorded):
    """--limit a-tray-1 (or a-tray-2 failed earlier): the domain cannot change whole."""
    hostvars = site(recorded)
    with pytest.raises(DomainWaveError, match=r"^NVLink domain \S+\.1: member\(s\) a-tray-2 are not in this run "
                                              r"\(--limit, or they failed or were unreachable earlier\); a domain is "
                                              r"drained, changed, rebooted and verified whole"):
        plan_waves(hostvars, ["a-tray-1"], ["a-tray-1", "hgx-1"], list(hostvars))


def test_hosts_in_no_domain_change_without_their_neighbours(recorded):
    """An HGX change in a run limited to it needs nobody else, even with hosts of unknown facts in the fleet."""
    hostvars = site(recorded)
    hostvars["unknown-1"] = {}
    waves = plan_waves(hostvars, ["hgx-2"], ["hgx-2"], list(hostvars))
    assert shape(waves) == [(False, [], ["hgx-2"], ["hgx-2"])]
    assert members_to_probe(hostvars, ["hgx-2"], ["hgx-2"], list(hostvars)) == []


def test_a_fleet_host_of_unknown_facts_refuses_a_domain_change(recorded):
    hostvars = site(recorded)
    hostvars["unknown-1"] = {"ansible_facts": {}}
    with pytest.raises(DomainWaveError, match=r"^the GPU facts of host\(s\) unknown-1 of nvidia_driver_fleet are not "
                                              r"known, so the members of NVLink domain\(s\) \S+\.1 cannot be told"):
        plan_waves(hostvars, ["a-tray-1"], ["a-tray-1", "a-tray-2"], list(hostvars),
                   fleet_variable="nvidia_driver_fleet")


def test_the_hosts_to_probe_are_the_fleets_outside_the_run_without_gpu_facts(recorded):
    hostvars = site(recorded)
    hostvars["unknown-1"] = {"ansible_facts": {"gpufabric": {"imex": {}}}, "nvidia_imex_probe_root": "/tree"}
    hostvars["unknown-2"] = {}
    probes = members_to_probe(hostvars, ["a-tray-1"], ["a-tray-1", "a-tray-2"], list(hostvars), "/")
    assert probes == [{"name": "unknown-1", "root": "/tree", "gather_subset": ["gpu", "imex"]},
                      {"name": "unknown-2", "root": "/", "gather_subset": ["gpu"]}]


@pytest.mark.parametrize(("changing", "run", "fleet", "message"), [
    (["a-tray-1"], ["a-tray-2"], None, r"^host\(s\) a-tray-1 need the change but are not in this run$"),
    (["a-tray-1"], None, ["hgx-1"], r"^host\(s\) a-tray-1 of this run are not in fleet: the NVLink domains are found "
                                    r"over that fleet; add them to the host pattern fleet$"),
])
def test_a_changing_host_outside_the_run_or_the_fleet_is_refused(recorded, changing, run, fleet, message):
    hostvars = site(recorded)
    with pytest.raises(DomainWaveError, match=message):
        plan_waves(hostvars, changing, run or list(hostvars), fleet or list(hostvars))


def test_two_hosts_with_one_kubernetes_node_name_are_refused(recorded):
    """A value shared by two hosts: both would cordon, drain and annotate one Node."""
    hostvars = site(recorded)
    names = list(hostvars)
    nodes = {name: name for name in names} | {"a-tray-1": "localhost", "hgx-2": "localhost"}
    with pytest.raises(DomainWaveError, match=r"^nvidia_driver_kubernetes_node must name one Kubernetes node per host: "
                                              r"a-tray-1, hgx-2 all name localhost$"):
        plan_waves(hostvars, names, names, names, nodes=nodes, nodes_variable="nvidia_driver_kubernetes_node")
    assert plan_waves(hostvars, names, names, names, nodes={name: name for name in names}) == plan_waves(
        hostvars, names, names, names)


def test_a_host_in_two_cliques_is_refused_by_name(recorded):
    hostvars = site(recorded)
    gpu = hostvars["a-tray-1"]["ansible_facts"]["gpufabric"]["gpu"]
    gpu["cliques"] = [gpu["cliques"][0], gpu["cliques"][0][:-1] + "7"]
    with pytest.raises(DomainWaveError, match=r"^host\(s\) whose GPUs are in more than one NVLink clique cannot be "
                                              r"changed with one domain: a-tray-1 \("):
        plan_waves(hostvars, ["a-tray-1"], list(hostvars), list(hostvars))


@pytest.mark.parametrize("value", [0, "0", -1, True, "two", 1.5, None, [1], "  "])
def test_a_count_that_is_not_a_whole_number_above_0_is_refused(recorded, value):
    hostvars = site(recorded)
    names = list(hostvars)
    with pytest.raises(ArgumentError, match=r"^domains_at_a_time must be a whole number greater than 0, got "):
        plan_waves(hostvars, names, names, names, domains_at_a_time=value)
    with pytest.raises(ArgumentError, match=r"^serial must be a whole number greater than 0, got "):
        plan_waves(hostvars, names, names, names, serial=value)


@pytest.mark.parametrize(("argument", "value"), [("changing", "a-tray-1"), ("run", [None]), ("fleet", {"a": 1}),
                                                 ("changing", [""])])
def test_host_lists_of_the_wrong_shape_are_refused(recorded, argument, value):
    hostvars = site(recorded)
    arguments = {"changing": ["a-tray-1"], "run": list(hostvars), "fleet": list(hostvars), argument: value}
    with pytest.raises(ArgumentError, match=rf"^{argument}"):
        plan_waves(hostvars, **arguments)


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_any_input_order_gives_the_same_plan_and_a_domain_is_never_split(recorded, data):
    """Whatever hosts change, in whatever order and with duplicates: every changing host in exactly one wave, each
    domain whole in one wave, the canary alone, the plan independent of the order."""
    hostvars = site(recorded)
    hostvars["c-tray-1"] = tray(recorded, "3000000000001", 3, 10)
    hostvars["c-tray-2"] = tray(recorded, "3000000000001", 3, 11)
    names = sorted(hostvars)
    changing = data.draw(st.lists(st.sampled_from(names), max_size=12))
    at_a_time = data.draw(st.integers(min_value=1, max_value=4))
    serial = data.draw(st.integers(min_value=1, max_value=3))
    waves = plan_waves(hostvars, changing, names, names, at_a_time, serial)
    shuffled = data.draw(st.permutations(changing))
    assert plan_waves(hostvars, shuffled, list(reversed(names)), names, at_a_time, serial) == waves
    assert sorted(itertools.chain.from_iterable(wave["changing"] for wave in waves)) == sorted(set(changing))
    hosts = list(itertools.chain.from_iterable(wave["hosts"] for wave in waves))
    assert len(hosts) == len(set(hosts))
    for wave in waves:
        for domain in wave["domains"]:
            def cliques(name):
                return hostvars[name]["ansible_facts"]["gpufabric"]["gpu"]["cliques"]
            members = [name for name in names if cliques(name) == cliques(domain["hosts"][0])]
            assert sorted(domain["hosts"]) == members
        assert len(wave["domains"]) <= (1 if wave["canary"] else at_a_time)
        assert wave["domains"] or len(wave["hosts"]) <= serial
    domain_waves = [wave for wave in waves if wave["domains"]]
    assert [wave["canary"] for wave in waves] == [index == 0 and bool(domain_waves) for index in range(len(waves))]
    # what changes on each host only adds words to the summaries, never changes the plan
    changes = data.draw(st.dictionaries(st.sampled_from(names), st.text(max_size=200)))
    described = plan_waves(hostvars, changing, names, names, at_a_time, serial, changes=changes)
    assert [{key: value for key, value in wave.items() if key != "summary"} for wave in described] == [
        {key: value for key, value in wave.items() if key != "summary"} for wave in waves]
    for wave in described:
        assert "\n" not in wave["summary"] and all(name in wave["summary"] for name in wave["changing"])
