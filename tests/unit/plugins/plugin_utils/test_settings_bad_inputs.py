# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Bad inputs on the settings check (issue 41): what ``settings_problems`` lets through, the playbook takes.

Every playbook checks the hosts' settings first (playbooks/tasks/check_settings.yml), so that a wrong value is one line
naming the variable and the hosts before anything runs.  On the starting commit the rules of
``gpufabric_preflight_settings`` were checked by their argument spec's types alone, which Ansible converts: an
``imex_domain_members`` of ``"18"``, ``true``, ``0`` or ``-1``, an MTU of ``"9000"``, a rate of ``"400"`` or an empty
``min_driver_version`` passed the check, and the preflight refused them later as ``settings.<rule>``, without the
variable or a host.  Boolean rules given as text (``-e`` JSON, "false", "no", "0") are false, as Ansible reads them.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.gpufabric.cluster.plugins.plugin_utils.preflight import PreflightError, preflight_report
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.settings import settings_problems

VARIABLE = "gpufabric_preflight_settings"


def problems(value, hosts=("tray-1",)):
    return settings_problems({host: {VARIABLE: value} for host in hosts}, list(hosts), ["gpufabric"])


@pytest.mark.parametrize(("rules", "line"), [
    ({"imex_domain_members": "18"}, "imex_domain_members must be a whole number of hosts, 1 or more, got '18'"),
    ({"imex_domain_members": True}, "imex_domain_members must be a whole number of hosts, 1 or more, got True"),
    ({"imex_domain_members": 0}, "imex_domain_members must be a whole number of hosts, 1 or more, got 0"),
    ({"imex_domain_members": -1}, "imex_domain_members must be a whole number of hosts, 1 or more, got -1"),
    ({"rdma_mtu": {"Ethernet": "9000"}}, "rdma_mtu.Ethernet must be a number, got '9000'"),
    ({"rdma_mtu": {"Ethernet": -1}}, "rdma_mtu.Ethernet must be greater than 0, got -1"),
    ({"rdma_min_rate_gbps": "400"}, "rdma_min_rate_gbps must be a number, got '400'"),
    ({"min_driver_version": ""}, "min_driver_version must not be empty"),
])
def test_what_the_preflight_refuses_the_settings_check_refuses_naming_variable_and_hosts(rules, line):
    assert problems(rules, ("tray-1", "tray-2")) == [f"hosts tray-1, tray-2: {VARIABLE}.{line}"]
    with pytest.raises(PreflightError, match=r"^settings\."):
        preflight_report({}, [], rules)


def test_a_long_value_is_not_quoted():
    value = " " * 200 + "18"
    line = problems({"imex_domain_members": value})[0]
    assert value not in line and line.endswith("got a value too long to show")


@pytest.mark.parametrize("text", ["false", "no", "0", "False", "off"])
def test_a_boolean_rule_given_as_text_is_false(text):
    rules = {"imex_domain_single_chassis": text, "rdma_require_active": text}
    assert problems(rules) == []
    merged = preflight_report({}, [], rules)["settings"]
    assert merged["imex_domain_single_chassis"] is False and merged["rdma_require_active"] is False


@pytest.mark.parametrize("value", [[], ["imex_domain_members"], "imex_domain_members=18", ""])
def test_rules_that_are_not_a_mapping_are_one_line(value):
    line, = problems(value)
    assert line.startswith(f"host tray-1: {VARIABLE} must be a mapping of min_driver_version, ")


SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-3, 100), st.floats(allow_nan=True, allow_infinity=True),
                    st.sampled_from(["18", "0", "-1", "true", "false", "no", "yes", "maybe", "", "9000", "nan", "1.5",
                                     "575.51.03", "abc"]))
RULES = st.dictionaries(
    st.sampled_from(["min_driver_version", "rdma_min_rate_gbps", "rdma_mtu", "rdma_require_active",
                     "imex_domain_members", "imex_domain_single_chassis", "imex_domain_member"]),
    SCALARS | st.dictionaries(st.sampled_from(["Ethernet", "InfiniBand"]), SCALARS, max_size=2) | st.lists(SCALARS,
                                                                                                           max_size=2),
    max_size=4)


@settings(max_examples=400, deadline=None)
@given(rules=RULES)
def test_property_the_settings_check_and_the_preflight_agree(rules):
    """Any rules: the check finds nothing exactly when the preflight takes them; each problem is one line naming the
    variable and the host."""
    found = problems(rules)
    try:
        preflight_report({}, [], rules)
        taken = True
    except PreflightError:
        taken = False
    assert (found == []) == taken, (found, taken)
    for line in found:
        assert line.startswith(f"host tray-1: {VARIABLE}") and "\n" not in line


@pytest.mark.parametrize(("variables", "line"), [
    ({VARIABLE: {"min_driver_version": "abc"}},
     f"{VARIABLE}.min_driver_version must be a driver version such as 580.95.05, got 'abc'"),
    ({"gpufabric_min_driver_version": "latest"},
     "gpufabric_min_driver_version must be a driver version such as 580.95.05, got 'latest'"),
])
def test_a_minimum_driver_that_is_no_version_is_refused_not_passed_by_every_driver(variables, line):
    """On the starting commit a minimum without a version number ("abc", "latest") made every driver pass it."""
    assert settings_problems({"tray-1": variables}, ["tray-1"], ["gpufabric"]) == [f"host tray-1: {line}"]
    rules = variables.get(VARIABLE)
    minimum = variables.get("gpufabric_min_driver_version")
    with pytest.raises(PreflightError) as caught:
        preflight_report({}, [], rules, minimum)
    assert str(caught.value) == line.replace(f"{VARIABLE}.", "settings.")
    assert preflight_report({}, [], {"min_driver_version": "v570"})["settings"]["min_driver_version"] == "v570"
