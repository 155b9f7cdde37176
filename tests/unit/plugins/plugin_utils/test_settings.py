# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The settings check (issue 40 item 1): every host's settings against the collection's own argument specs, once.

One line per problem naming the hosts and the variable, what it must be, never a spec dump and never the content of a
mapping or a list; unknown variables with a prefix of the collection named with the nearest known one.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

import pytest
import yaml
from ansible.errors import AnsibleFilterError
from ansible.module_utils.common import arg_spec
from hypothesis import given, settings
from hypothesis import strategies as st
from jinja2.exceptions import UndefinedError

from ansible_collections.gpufabric.cluster.plugins.filter.settings_problems import FilterModule
from ansible_collections.gpufabric.cluster.plugins.filter.settings_problems import settings_problems as the_filter
from ansible_collections.gpufabric.cluster.plugins.plugin_utils import settings as site_settings
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.settings import (
    argument_specs,
    settings_problems,
    value_problems,
)

ROLES = os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "roles")
ALL_ROLES = [role for role, entries in argument_specs().items() if "main" in entries]


def test_registered():
    assert FilterModule().filters() == {"settings_problems": the_filter}


def test_the_specs_are_the_collections_own_files():
    """Read relative to the plugin, from the same files the roles validate with."""
    with open(os.path.join(ROLES, "gpufabric", "meta", "argument_specs.yml"), encoding="utf-8") as handle:
        written = yaml.safe_load(handle)["argument_specs"]["main"]["options"]
    assert argument_specs()["gpufabric"]["main"] == written
    assert site_settings.choices("gpufabric", "gpufabric_imex_mode") == tuple(written["gpufabric_imex_mode"]["choices"])
    # internal roles' entry points are read too (their options are no typos)
    assert "check" in argument_specs()["_kubeconfig"]


def test_a_typo_is_named_with_the_nearest_known_variable_and_its_host():
    problems = settings_problems({"tray01": {"gpufabric_imex_mdoe": "dra"}, "tray02": {}}, ["tray01", "tray02"],
                                 ["gpufabric"])
    assert problems == ["host tray01: unknown variable gpufabric_imex_mdoe (did you mean gpufabric_imex_mode?)"]


@pytest.mark.parametrize(("name", "line"), [
    ("nvidia_imex_modes", "unknown variable nvidia_imex_modes (did you mean nvidia_imex_mode?)"),
    ("validate_rdma_pair", "unknown variable validate_rdma_pair (did you mean validate_rdma_pairs?)"),
    ("dra_driver_frobnicate", "unknown variable dra_driver_frobnicate: no argument spec of "
                              "gpufabric.cluster.dra_driver knows it"),
])
def test_every_role_prefix_is_searched_whatever_the_roles_checked(name, line):
    assert settings_problems({"h": {name: 1}}, ["h"], ["gpufabric"]) == [f"host h: {line}"]


def test_results_internal_names_and_other_prefixes_are_no_typos():
    host = {"gpufabric_preflight": {}, "rdma_network_rail_plan": {}, "__nvidia_imex_address": "10.0.0.1",
            "ansible_host": "10.0.0.1", "gpu_nodes_count": 3, "validate_rdma_pairs": []}
    assert settings_problems({"h": host}, ["h"], ALL_ROLES) == []


def test_a_wrong_value_is_one_line_without_a_spec_dump():
    problems = settings_problems({"a": {"nvidia_imex_mode": "DRA"}, "b": {"nvidia_imex_mode": "DRA"},
                                  "c": {"nvidia_imex_mode": "dra"}}, ["a", "b", "c"], ["gpufabric", "nvidia_imex"])
    assert problems == ["hosts a, b: nvidia_imex_mode must be one of: host, dra, dra_host_managed, got 'DRA'"]


def test_only_the_roles_asked_for_are_checked():
    hostvars = {"h": {"nvidia_imex_mode": "DRA"}}
    assert settings_problems(hostvars, ["h"], ["gpufabric"]) == []
    assert len(settings_problems(hostvars, ["h"], ["gpufabric", "nvidia_imex"])) == 1


@pytest.mark.parametrize(("name", "value", "line"), [
    ("gpufabric_imex_mode", None, "gpufabric_imex_mode is null: leave it unset for its default ('host') or set a "
                                  "value"),
    ("gpufabric_preflight_hosts", "", "gpufabric_preflight_hosts is empty: leave it unset for its default ('all') or "
                                      "set a value"),
    ("gpufabric_host_targets", "  ", "gpufabric_host_targets is empty: "),
    ("gpufabric_defer_failures", None, "gpufabric_defer_failures is null: leave it unset for its default (false)"),
    ("gpufabric_report_dir", "", "gpufabric_report_dir is empty: set it to a directory on the controller, or leave it "
                                 "unset for reports in the working directory"),
    ("gpufabric_report_dir", None, "gpufabric_report_dir is null: "),
    ("gpufabric_preflight_fail_on_error", "perhaps", "gpufabric_preflight_fail_on_error must be a boolean (true or "
                                                     "false), got 'perhaps'"),
    ("gpufabric_preflight_settings", "fast", "gpufabric_preflight_settings must be a mapping of min_driver_version, "
                                             "rdma_min_rate_gbps, rdma_mtu, rdma_require_active, imex_domain_members, "
                                             "imex_domain_single_chassis, port_counter_thresholds, "
                                             "gpu_health_thresholds, got a string"),
    ("gpufabric_host_roles", ["nvidia_drvier", "doca_ofed"],
     "gpufabric_host_roles must list only nvidia_driver, doca_ofed, nvidia_peermem, nvidia_imex, rdma_network, got "
     "'nvidia_drvier'"),
    ("gpufabric_site_gate_checks", "probe", None),
    ("gpufabric_kubeconfig", {"token": "s3cr3t"}, "gpufabric_kubeconfig must be a string, got a mapping"),
    ("gpufabric_imex_interface", True, "gpufabric_imex_interface must be a string, got a boolean"),
])
def test_site_settings(name, value, line):
    problems = settings_problems({"h": {name: value}}, ["h"], ["gpufabric"])
    if line is None:
        assert problems == []
    else:
        assert len(problems) == 1 and problems[0].startswith(f"host h: {line}"), problems


@pytest.mark.parametrize(("name", "value"), [
    ("gpufabric_validate_rdma", None),  # null is its default: auto
    ("gpufabric_kubeconfig", ""), ("gpufabric_imex_address", ""),  # empty is their default
    ("gpufabric_host_roles", []),  # an empty list applies no role, as asked
    ("gpufabric_preflight_fail_on_error", "false"), ("gpufabric_validate_nccl", "yes"),  # booleans as -e gives them
    ("gpufabric_preflight_settings", {"imex_domain_members": 18, "rdma_mtu": {"Ethernet": 4200}}),
])
def test_site_settings_that_are_good(name, value):
    assert settings_problems({"h": {name: value}}, ["h"], ["gpufabric"]) == []


@pytest.mark.parametrize(("value", "line"), [
    ({"imex_domain_member": 18}, "gpufabric_preflight_settings has no key 'imex_domain_member' (did you mean "
                                 "gpufabric_preflight_settings.imex_domain_members?)"),
    ({"rdma_require_active": "perhaps"}, "gpufabric_preflight_settings.rdma_require_active must be a boolean (true or "
                                         "false), got 'perhaps'"),
    ({"imex_domain_members": [18]}, "gpufabric_preflight_settings.imex_domain_members must be a whole number, got a "
                                    "list"),
    ({"rdma_mtu": "9000"}, "gpufabric_preflight_settings.rdma_mtu must be a mapping, got '9000'"),
])
def test_the_preflight_rules_are_checked_key_by_key(value, line):
    problems = settings_problems({"h": {"gpufabric_preflight_settings": value}}, ["h"], ["gpufabric"])
    assert problems == [f"host h: {line}"]


def test_a_mapping_or_a_list_is_never_shown():
    secret = "kubeconfig-token-never-shown"
    hostvars = {"h": {"gpufabric_kubeconfig": {"users": [{"token": secret}]}, "gpufabric_imex_mode": [secret],
                      "gpufabric_preflight_settings": {"rdma_mtu": [secret]}}}
    problems = settings_problems(hostvars, ["h"], ["gpufabric"])
    assert len(problems) == 3 and not any(secret in line for line in problems), problems


def test_a_long_string_is_counted_not_shown():
    value = "x" * 200
    (line,) = settings_problems({"h": {"gpufabric_imex_mode": value}}, ["h"], ["gpufabric"])
    assert line.endswith("got a string of 200 characters") and value not in line


class CountingHostvars(Mapping):
    """hostvars that counts how often each host's variables are built."""

    def __init__(self, hosts):
        self.hosts, self.reads = hosts, {}

    def __getitem__(self, host):
        self.reads[host] = self.reads.get(host, 0) + 1
        return self.hosts[host]

    def __iter__(self):
        return iter(self.hosts)

    def __len__(self):
        return len(self.hosts)


def test_one_check_per_distinct_value_and_one_read_per_host(monkeypatch):
    names = [f"tray{index:03}" for index in range(300)]
    hostvars = CountingHostvars({name: {"gpufabric_imex_mode": "bogus" if index % 2 else "dra",
                                        "gpufabric_imex_address": f"10.0.{index // 256}.{index % 256}"}
                                 for index, name in enumerate(names)})
    calls = []
    original = arg_spec.ArgumentSpecValidator.validate
    monkeypatch.setattr(arg_spec.ArgumentSpecValidator, "validate",
                        lambda self, parameters, *args, **kwargs: calls.append(1) or original(self, parameters))
    problems = settings_problems(hostvars, [*names, "tray000"], ["gpufabric"])
    assert len(problems) == 1
    assert problems[0].startswith("hosts tray001, tray003, tray005, ") and problems[0].count("tray") == 10
    assert " and 140 more: gpufabric_imex_mode must be one of: host, dra, dra_host_managed, got 'bogus'" in problems[0]
    # two values of the mode and 300 addresses: 302 checks, not one per host and variable of every spec
    assert len(calls) == 302
    assert set(hostvars.reads.values()) == {1}


@pytest.mark.parametrize(("hostvars", "hosts", "roles", "message"), [
    ([], ["h"], ["gpufabric"], "the input must be hostvars, got a list"),
    ({}, "h", ["gpufabric"], "hosts must be a list of names, got a string"),
    ({}, [""], ["gpufabric"], "hosts must hold non-empty strings, got ''"),
    ({}, ["h"], ["_kubeconfig"], "roles must name roles of gpufabric.cluster with an argument spec"),
    ({}, ["h"], ["nvidia_imexx"], "roles must name roles of gpufabric.cluster with an argument spec"),
])
def test_bad_arguments_are_named(hostvars, hosts, roles, message):
    with pytest.raises(AnsibleFilterError, match=re.escape(f"settings_problems: {message}")):
        the_filter(hostvars, hosts, roles)


def test_a_host_hostvars_does_not_hold_sets_nothing():
    assert settings_problems({}, ["ghost"], ["gpufabric"]) == []


def _literal_defaults():
    for role in ALL_ROLES:
        for name, spec in argument_specs()[role]["main"].items():
            if "default" in spec and "{{" not in str(spec["default"]):
                yield pytest.param(role, name, spec, id=name)


@pytest.mark.parametrize(("role", "name", "spec"), list(_literal_defaults()))
def test_every_written_default_passes_its_own_check(role, name, spec):
    """A default is not checked when a host leaves the variable unset: it must be good as written."""
    assert value_problems(name, spec, spec["default"], site=role == "gpufabric") == []


VARIABLES = sorted((role, name) for role in ALL_ROLES for name in argument_specs()[role]["main"])
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True), st.text(max_size=80),
                    st.binary(max_size=8))
VALUES = st.recursive(SCALARS, lambda children: st.one_of(
    st.lists(children, max_size=4), st.dictionaries(st.one_of(st.text(max_size=12), st.integers()), children,
                                                    max_size=4)), max_leaves=8)


@settings(max_examples=400, deadline=None)
@given(variable=st.sampled_from(VARIABLES), value=VALUES, second=VALUES)
def test_property_any_value_of_any_variable_is_accepted_or_one_clear_line(variable, value, second):
    role, name = variable
    problems = settings_problems({"a": {name: value}, "b": {name: second}}, ["a", "b"], [role])
    assert isinstance(problems, list)
    for line in problems:
        assert isinstance(line, str) and "\n" not in line
        assert re.match(rf"hosts? (a|b|a, b): {re.escape(name)}[ .]", line), line
        assert "Supported parameters" not in line and "description" not in line
    # the same value on both hosts is one line naming both
    both = settings_problems({"a": {name: value}, "b": {name: value}}, ["a", "b"], [role])
    assert all(line.startswith("hosts a, b: ") for line in both), both


class Unresolvable:
    """A value Ansible cannot template for this host: using it raises, as an undefined marker does."""

    def __repr__(self):
        raise UndefinedError("'inventory_dir' is undefined")


class LocalhostVars(Mapping):
    """The variables of the implicit localhost, whose gpufabric_report_dir is built on inventory_dir (undefined)."""

    def __init__(self, how):
        self.how = how

    def __getitem__(self, name):
        if name == "gpufabric_imex_mode":
            return "bogus"
        if self.how == "access":
            raise UndefinedError("'inventory_dir' is undefined")
        return {"nested": Unresolvable()} if self.how == "nested" else Unresolvable()

    def __iter__(self):
        return iter(["gpufabric_report_dir", "gpufabric_imex_mode"])

    def __len__(self):
        return 2


@pytest.mark.parametrize("how", ["access", "use", "nested"])
def test_a_value_that_cannot_be_templated_for_the_host_is_left_to_the_play(how):
    """Judged where a play uses it; the other variables are still checked. On the first version of the check the
    marker Ansible returns for such a value failed the whole check with "'inventory_dir' is undefined"."""
    problems = settings_problems({"localhost": LocalhostVars(how)}, ["localhost"], ["gpufabric"])
    assert problems == ["host localhost: gpufabric_imex_mode must be one of: host, dra, dra_host_managed, got 'bogus'"]
