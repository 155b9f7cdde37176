# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""reboot_batches: rolling reboots, at most ``serial`` hosts of one NVLink clique per batch."""

from __future__ import annotations

import math

import pytest
from ansible.errors import AnsibleFilterError
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.gpufabric.cluster.plugins.filter.reboot_batches import reboot_batches
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.reboot_batches import NO_CLIQUE, groups_of

RACK1 = "3c1a5f2e-9b7d-4c2a-8e6f-1d0b7a9c4e21.1"
RACK2 = "3c1a5f2e-9b7d-4c2a-8e6f-1d0b7a9c4e21.2"


def host(*cliques):
    return {"ansible_facts": {"gpufabric": {"gpu": {"cliques": list(cliques)}}}}


HOSTVARS = {"tray-01": host(RACK1), "tray-02": host(RACK1), "tray-03": host(RACK1),
            "tray-11": host(RACK2), "tray-12": host(RACK2),
            "hgx-01": host(), "hgx-02": {"ansible_facts": {}}, "split": host(RACK1, RACK2)}


def test_one_host_of_each_clique_at_a_time_by_default():
    hosts = ["tray-03", "tray-01", "tray-02", "tray-11", "tray-12"]
    assert reboot_batches(hosts, HOSTVARS) == [["tray-01", "tray-11"], ["tray-02", "tray-12"], ["tray-03"]]


def test_serial_two():
    hosts = ["tray-01", "tray-02", "tray-03", "tray-11", "tray-12"]
    assert reboot_batches(hosts, HOSTVARS, 2) == [["tray-01", "tray-02", "tray-11", "tray-12"], ["tray-03"]]


def test_hosts_without_a_clique_share_one_group():
    assert reboot_batches(["hgx-02", "hgx-01", "tray-01"], HOSTVARS) == [["hgx-01", "tray-01"], ["hgx-02"]]
    assert groups_of(HOSTVARS, "hgx-02") == [NO_CLIQUE]


def test_a_host_in_two_cliques_counts_in_both():
    assert reboot_batches(["split", "tray-01", "tray-11"], HOSTVARS) == [["split"], ["tray-01", "tray-11"]]


def test_no_hosts_no_batches_and_duplicates_once():
    assert reboot_batches([], HOSTVARS) == []
    assert reboot_batches(["tray-01", "tray-01"], HOSTVARS) == [["tray-01"]]


@pytest.mark.parametrize(("args", "message"), [
    (("tray-01", HOSTVARS, 1), "reboot_batches: hosts must be a list, got a string"),
    (([1], HOSTVARS, 1), "reboot_batches: hosts must be a list of host names, got 1 in it"),
    (([""], HOSTVARS, 1), "reboot_batches: hosts must be a list of host names, got '' in it"),
    ((["tray-01"], ["tray-01"], 1), "reboot_batches: hostvars must be a mapping, got a list"),
    ((["tray-01"], HOSTVARS, 0), "reboot_batches: serial must be greater than 0, got 0"),
    ((["tray-01"], HOSTVARS, -2), "reboot_batches: serial must be greater than 0, got -2"),
    ((["tray-01"], HOSTVARS, "1"), "reboot_batches: serial must be a whole number greater than 0, got '1'"),
    ((["tray-01"], HOSTVARS, 1.5), "reboot_batches: serial must be a whole number greater than 0, got 1.5"),
    ((["tray-01"], HOSTVARS, True), "reboot_batches: serial must be a whole number greater than 0, got True"),
    ((["gone"], HOSTVARS, 1), "reboot_batches: host gone: not in hostvars"),
    ((["bad"], {"bad": "x"}, 1), "reboot_batches: host bad: hostvars must be a mapping, got str"),
    ((["bad"], {"bad": {"ansible_facts": {"gpufabric": {"gpu": {"cliques": RACK1}}}}}, 1),
     "reboot_batches: host bad: ansible_facts['gpufabric']['gpu']['cliques'] must be a list, got str"),
])
def test_bad_input_is_refused_naming_the_argument(args, message):
    with pytest.raises(AnsibleFilterError) as err:
        reboot_batches(*args)
    assert str(err.value) == message


CLIQUES = st.sampled_from([RACK1, RACK2, "c.3"])
HOSTS = st.dictionaries(st.text(min_size=1, max_size=6), st.lists(CLIQUES, max_size=2, unique=True), max_size=12)


@settings(max_examples=200, deadline=None)
@given(HOSTS, st.integers(min_value=1, max_value=4))
def test_every_host_once_and_never_more_than_serial_of_a_clique(cliques, serial):
    hostvars = {name: host(*members) for name, members in cliques.items()}
    batches = reboot_batches(list(cliques), hostvars, serial)
    assert sorted(name for batch in batches for name in batch) == sorted(cliques)
    assert all(batch == sorted(batch) and batch for batch in batches)
    for batch in batches:
        for clique in (RACK1, RACK2, "c.3", NO_CLIQUE):
            assert sum(clique in (cliques[name] or [NO_CLIQUE]) for name in batch) <= serial
    # hosts of one clique each: the fewest batches the limit allows
    if all(len(members) <= 1 for members in cliques.values()):
        sizes = {}
        for members in cliques.values():
            key = (members or [NO_CLIQUE])[0]
            sizes[key] = sizes.get(key, 0) + 1
        assert len(batches) == max((math.ceil(size / serial) for size in sizes.values()), default=0)
    assert reboot_batches(list(reversed(list(cliques))), hostvars, serial) == batches


NAMES = st.one_of(st.none(), st.text(max_size=4), st.integers(),
                  st.lists(st.one_of(st.text(max_size=3), st.none(), st.integers()), max_size=3))
FACTS = st.one_of(st.none(), st.text(max_size=2), st.just({"gpufabric": {"gpu": {"cliques": "x"}}}),
                  st.just({"gpufabric": {"gpu": {"cliques": [RACK1]}}}))
HOST_VARS = st.one_of(st.none(), st.text(max_size=3), st.dictionaries(st.just("ansible_facts"), FACTS))
ANY_HOSTVARS = st.one_of(st.none(), st.text(max_size=3), st.dictionaries(st.text(max_size=3), HOST_VARS, max_size=3))
SERIAL = st.one_of(st.none(), st.booleans(), st.integers(min_value=-2, max_value=3), st.floats(), st.text(max_size=2))


@settings(max_examples=150, deadline=None)
@given(NAMES, ANY_HOSTVARS, SERIAL)
def test_any_input_gives_batches_or_the_filter_error(hosts, hostvars, serial):
    try:
        batches = reboot_batches(hosts, hostvars, serial)
    except AnsibleFilterError as exc:
        assert str(exc).startswith("reboot_batches: ")
        return
    assert isinstance(batches, list)
    assert all(isinstance(batch, list) and all(isinstance(name, str) for name in batch) for batch in batches)
