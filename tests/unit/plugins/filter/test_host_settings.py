# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The host_settings filter: hosts grouped by the values they give some variables, each host read once."""

from __future__ import annotations

from collections.abc import Mapping

import pytest
from ansible.errors import AnsibleFilterError
from hypothesis import given
from hypothesis import strategies as st

from ansible_collections.gpufabric.cluster.plugins.filter.host_settings import FilterModule, host_settings

NAMES = ["gpufabric_imex_address", "gpufabric_imex_address_family"]


class CountingHostvars(Mapping):
    """hostvars that count how often a host's variables are built (the costly part of hostvars[host])."""

    def __init__(self, data):
        self.data = data
        self.built = {}

    def __getitem__(self, host):
        self.built[host] = self.built.get(host, 0) + 1
        return dict(self.data[host])

    def __iter__(self):
        return iter(self.data)

    def __len__(self):
        return len(self.data)


def test_filter_is_registered():
    assert FilterModule().filters() == {"host_settings": host_settings}


def test_hosts_grouped_by_values_in_host_order_each_host_read_once():
    hostvars = CountingHostvars({
        "a": {"gpufabric_imex_address": "10.0.0.1", "other": 1},
        "b": {"gpufabric_imex_address_family": "ipv6"},
        "c": {},
        "d": {"gpufabric_imex_address_family": "ipv6", "unrelated": "x"},
        "e": {"gpufabric_imex_address": "10.0.0.1"},
    })
    assert host_settings(hostvars, ["a", "b", "c", "d", "e"], NAMES) == [
        {"hosts": ["a", "e"], "settings": {"gpufabric_imex_address": "10.0.0.1"}},
        {"hosts": ["b", "d"], "settings": {"gpufabric_imex_address_family": "ipv6"}},
        {"hosts": ["c"], "settings": {}},
    ]
    assert hostvars.built == {"a": 1, "b": 1, "c": 1, "d": 1, "e": 1}


def test_a_host_without_variables_and_unhashable_values():
    hostvars = {"a": {"gpufabric_preflight_settings": {"min_rate": 400}},
                "b": {"gpufabric_preflight_settings": {"min_rate": 400}}}
    assert host_settings(hostvars, ["a", "b", "gone"], ["gpufabric_preflight_settings"]) == [
        {"hosts": ["a", "b"], "settings": {"gpufabric_preflight_settings": {"min_rate": 400}}},
        {"hosts": ["gone"], "settings": {}},
    ]
    assert host_settings(hostvars, [], ["x"]) == []


@pytest.mark.parametrize(("hostvars", "hosts", "names", "message"), [
    pytest.param([], ["a"], ["x"], "the input must be hostvars, got list", id="not-hostvars"),
    pytest.param({}, "a", ["x"], "hosts must be a list of names, got str", id="hosts-string"),
    pytest.param({}, ["a", "a"], ["x"], "hosts names 'a' twice", id="duplicate-host"),
    pytest.param({}, ["a"], ["x", ""], "names must hold non-empty strings, got ''", id="empty-name"),
    pytest.param({}, ["a"], [True], "names must hold non-empty strings, got True", id="boolean-name"),
    pytest.param({}, ["a"], None, "names must be a list of names, got NoneType", id="no-names"),
    pytest.param({"a": "x"}, ["a"], ["x"], "hostvars of a is not a mapping, got str", id="host-not-mapping"),
])
def test_errors_name_the_argument(hostvars, hosts, names, message):
    with pytest.raises(AnsibleFilterError, match="host_settings: ") as error:
        host_settings(hostvars, hosts, names)
    assert message in str(error.value)


VALUES = st.one_of(st.none(), st.booleans(), st.text(max_size=3), st.sampled_from(["true", "false", "ipv4"]),
                   st.dictionaries(st.text(max_size=2), st.integers(), max_size=2))


@given(st.dictionaries(st.text(min_size=1, max_size=3),
                       st.dictionaries(st.sampled_from([*NAMES, "other"]), VALUES, max_size=3), max_size=6),
       st.lists(st.text(min_size=1, max_size=3), unique=True, max_size=8))
def test_every_host_in_exactly_one_group_with_its_own_values(hostvars, hosts):
    groups = host_settings(hostvars, hosts, NAMES)
    assert [host for group in groups for host in group["hosts"]] == sorted(
        hosts, key=lambda host: (next(i for i, g in enumerate(groups) if host in g["hosts"]), hosts.index(host)))
    assert sorted(host for group in groups for host in group["hosts"]) == sorted(hosts)
    for group in groups:
        for host in group["hosts"]:
            own = hostvars.get(host, {})
            assert group["settings"] == {name: own[name] for name in NAMES if name in own}
    settings = [group["settings"] for group in groups]
    assert all(settings[i] != settings[j] for i in range(len(settings)) for j in range(i + 1, len(settings)))
