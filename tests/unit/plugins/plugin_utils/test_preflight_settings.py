# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 40 item 1: the preflight keeps no second default; its rules' and the site settings' defaults come from the
argument spec of roles/gpufabric, and the site's minimum driver from the caller.

On the starting commit preflight.py held DEFAULT_SETTINGS, DEFAULT_IMEX_MODE, DEFAULT_IMEX_SOCKET_PATH and the IMEX
address family's default, copies of the site defaults that a change in roles/gpufabric left behind.
"""

from __future__ import annotations

import pytest

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import preflight, settings
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.preflight import PreflightError, preflight_report

SITE = settings.argument_specs()["gpufabric"]["main"]


def test_the_rules_default_to_the_suboptions_of_the_site_setting():
    rules = SITE["gpufabric_preflight_settings"]["options"]
    report = preflight_report({}, [], {})
    assert report["settings"] == {**{key: spec.get("default") for key, spec in rules.items()},
                                  "min_driver_version": SITE["gpufabric_min_driver_version"]["default"]}


def test_a_changed_spec_default_is_the_preflights_default(monkeypatch):
    """The spec is the one place: what it says is what the preflight judges with."""
    specs = settings.argument_specs()
    patched = {**specs, "gpufabric": {"main": {
        **SITE, "gpufabric_min_driver_version": {**SITE["gpufabric_min_driver_version"], "default": "999.1.1"},
        "gpufabric_preflight_settings": {**SITE["gpufabric_preflight_settings"], "options": {
            **SITE["gpufabric_preflight_settings"]["options"],
            "rdma_require_active": {"type": "bool", "default": False}}}}}}
    monkeypatch.setattr(settings, "argument_specs", lambda: patched)
    report = preflight_report({}, [], {})
    assert report["settings"]["min_driver_version"] == "999.1.1"
    assert report["settings"]["rdma_require_active"] is False


@pytest.mark.parametrize(("rules", "site", "expected"), [
    ({}, "575.51.03", "575.51.03"),  # the site's minimum, passed by the playbook
    ({"min_driver_version": None}, "575.51.03", "575.51.03"),  # null is unset
    ({"min_driver_version": "580.65.06"}, "575.51.03", "580.65.06"),  # the rule wins
])
def test_the_minimum_driver(rules, site, expected):
    assert preflight_report({}, [], rules, site)["settings"]["min_driver_version"] == expected


def test_a_rule_the_site_setting_does_not_know_is_refused():
    with pytest.raises(PreflightError, match="unknown setting"):
        preflight_report({}, [], {"min_driver": "1"})


@pytest.mark.parametrize(("host_vars", "expected"), [
    ({}, (SITE["gpufabric_imex_mode"]["default"], SITE["gpufabric_imex_socket_path"]["default"])),
    ({"gpufabric_imex_mode": "dra_host_managed"}, ("dra_host_managed", SITE["gpufabric_imex_socket_path"]["default"])),
    ({"gpufabric_imex_mode": "dra", "nvidia_imex_mode": "dra_host_managed", "nvidia_imex_socket_path": "/run/x.sock"},
     ("dra_host_managed", "/run/x.sock")),
])
def test_a_hosts_imex_mode_and_socket_fall_back_to_the_site_defaults_of_the_spec(host_vars, expected):
    assert preflight.site_imex_mode(host_vars) == expected


def test_no_default_constant_is_left_in_the_preflight():
    assert [name for name in vars(preflight) if name.startswith("DEFAULT")] == []
