# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 45 item 3: a failure the host phase deferred (gpufabric_host_failure) is a lost host with its reason."""

from __future__ import annotations

import pytest

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import site

RECORD = {"ready": ["t1", "t2", "t3"], "failed": {"t0": "failed or unreachable in the preflight phase"}}


def test_a_deferred_failure_is_named_with_its_reason_beside_the_hosts_that_left_the_play():
    hostvars = {"t1": {site.HOST_FAILURE: "Install the packages: No package matching 'nvidia-driver-580'"},
                "t2": {"other": 1}, "t3": {}}
    record = site.site_lost(RECORD, ["t0", "t1", "t2", "t3"], ["t1", "t2"], "host", hostvars)
    assert record["failed"] == {
        "t0": "failed or unreachable in the preflight phase",
        "t1": "failed in the host phase: Install the packages: No package matching 'nvidia-driver-580'",
        "t3": "failed or unreachable in the host phase",
    }


def test_without_hostvars_only_the_hosts_that_left_the_play_are_lost():
    hostvars = {"t1": {site.HOST_FAILURE: "x"}}
    assert site.site_lost(RECORD, ["t1", "t2"], ["t1", "t2"], "host")["failed"] == RECORD["failed"]
    assert site.site_lost(RECORD, ["t1", "t2"], ["t1", "t2"], "host", hostvars)["failed"]["t1"] == \
        "failed in the host phase: x"


@pytest.mark.parametrize("hostvars", [[], "t1", 3])
def test_hostvars_that_are_no_mapping_are_refused_by_name(hostvars):
    with pytest.raises(site.SiteError, match=r"^hostvars must be a mapping"):
        site.site_lost(RECORD, ["t1"], ["t1"], "host", hostvars)


@pytest.mark.parametrize("host_vars", [None, "text", ["a"], {site.HOST_FAILURE: None}])
def test_a_host_whose_vars_hold_no_failure_is_not_lost(host_vars):
    assert "t1" not in site.site_lost(RECORD, ["t1"], ["t1"], "host", {"t1": host_vars})["failed"]
