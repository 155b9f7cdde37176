# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The dra_driver_upgrade filter: install, migrate from 25.x, upgrade within a line, refuse going back to 25.x."""

from __future__ import annotations

import pytest
from ansible.errors import AnsibleFilterError
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.gpufabric.cluster.plugins.filter.dra_driver_upgrade import dra_driver_upgrade

SIGS = {"name": "dra-driver-nvidia-gpu", "version": "0.4.1"}
LEGACY = {"name": "nvidia-dra-driver-gpu", "version": "25.12.0"}


def release(chart):
    """The status kubernetes.core.helm_info returns."""
    return {"chart": chart, "status": "deployed", "name": "nvidia-dra-driver-gpu", "app_version": "x"}


@pytest.mark.parametrize("installed", [None, {}])
def test_no_release_is_installed(installed):
    plan = dra_driver_upgrade(installed, SIGS)
    assert (plan["action"], plan["from"], plan["to"], plan["apply_crds"]) == ("install", None, SIGS, True)
    assert dra_driver_upgrade(installed, LEGACY)["apply_crds"] is False


def test_legacy_release_is_migrated_crds_first():
    plan = dra_driver_upgrade(release("nvidia-dra-driver-gpu-25.12.0"), SIGS)
    assert plan["action"] == "migrate" and plan["apply_crds"] is True
    assert plan["from"] == LEGACY and plan["to"] == SIGS
    assert "nameOverride=nvidia-dra-driver-gpu" in plan["message"]


@pytest.mark.parametrize(("chart", "target", "action"), [
    ("dra-driver-nvidia-gpu-0.4.1", {"name": "dra-driver-nvidia-gpu", "version": "0.5.0-dev"}, "upgrade"),
    ("dra-driver-nvidia-gpu-0.5.0-dev", {"name": "dra-driver-nvidia-gpu", "version": "0.5.0"}, "upgrade"),
    ("dra-driver-nvidia-gpu-0.4.1", SIGS, "none"),
    ("dra-driver-nvidia-gpu-0.4.1", {"name": "", "version": "v0.4.1"}, "none"),
    ("nvidia-dra-driver-gpu-25.12.0", LEGACY, "none"),
    ("nvidia-dra-driver-gpu-25.8.1", LEGACY, "upgrade"),
])
def test_moves_within_a_line(chart, target, action):
    assert dra_driver_upgrade(release(chart), target)["action"] == action


@pytest.mark.parametrize("chart", ["dra-driver-nvidia-gpu-0.4.1", "dra-driver-nvidia-gpu-0.5.0-dev"])
@pytest.mark.parametrize("allow", [False, True])
def test_going_back_to_25_is_refused_naming_both_versions(chart, allow):
    version = chart.rsplit("-gpu-", 1)[1]
    with pytest.raises(AnsibleFilterError, match=f"refusing to downgrade the DRA driver from dra-driver-nvidia-gpu "
                                                 f"{version} to nvidia-dra-driver-gpu 25.12.0"):
        dra_driver_upgrade(release(chart), LEGACY, allow_downgrade=allow)


def downgrade_refusal(installed: str, wanted: str, name: str = "dra-driver-nvidia-gpu") -> str:
    return (f"dra_driver_upgrade: refusing to downgrade the DRA driver from {name} {installed} to {name} {wanted}, "
            "nothing changed: upstream upgrades forward only (the kubelet plugin checkpoint and the ComputeDomain API "
            "of a newer release may not be read back by an older one); set dra_driver_chart_version to "
            f"{installed} or later, or dra_driver_allow_downgrade to true to downgrade anyway")


@pytest.mark.parametrize(("installed", "wanted", "name"), [
    ("0.6.0", "0.4.0", "dra-driver-nvidia-gpu"),
    ("0.5.0-dev", "0.4.1", "dra-driver-nvidia-gpu"),
    ("0.5.0", "0.5.0-dev", "dra-driver-nvidia-gpu"),
    ("25.12.0", "25.8.1", "nvidia-dra-driver-gpu"),
])
@pytest.mark.parametrize("allow", [None, False, "false", "False", "no", "0", 0, "off"])
def test_a_downgrade_within_a_line_is_refused_naming_both_versions_and_the_setting(installed, wanted, name, allow):
    """Issue 39 item 12: an installed 0.6.0 with a wanted 0.4.0 was planned as a downgrade and carried out."""
    kwargs = {} if allow is None else {"allow_downgrade": allow}
    with pytest.raises(AnsibleFilterError) as caught:
        dra_driver_upgrade(release(f"{name}-{installed}"), {"name": name, "version": wanted}, **kwargs)
    assert str(caught.value) == downgrade_refusal(installed, wanted, name)


@pytest.mark.parametrize("allow", [True, "true", "yes", "on", 1, "1"])
def test_a_downgrade_is_planned_when_the_operator_means_it(allow):
    wanted = {"name": "dra-driver-nvidia-gpu", "version": "0.4.0"}
    plan = dra_driver_upgrade(release("dra-driver-nvidia-gpu-0.6.0"), wanted, allow)
    assert plan == {"action": "downgrade", "from": {"name": "dra-driver-nvidia-gpu", "version": "0.6.0"},
                    "to": {"name": "dra-driver-nvidia-gpu", "version": "0.4.0"}, "line": "sigs", "apply_crds": True,
                    "message": "downgrade dra-driver-nvidia-gpu 0.6.0 to dra-driver-nvidia-gpu 0.4.0"}


@pytest.mark.parametrize("allow", [False, True])
def test_allow_downgrade_changes_nothing_else(allow):
    wanted = {"name": "dra-driver-nvidia-gpu", "version": "0.6.0"}
    assert dra_driver_upgrade(release("dra-driver-nvidia-gpu-0.4.1"), wanted, allow)["action"] == "upgrade"
    assert dra_driver_upgrade(None, SIGS, allow)["action"] == "install"
    assert dra_driver_upgrade(release("nvidia-dra-driver-gpu-25.12.0"), SIGS, allow)["action"] == "migrate"


@pytest.mark.parametrize("allow", ["maybe", "", None, [True], {"x": 1}])
def test_allow_downgrade_that_is_no_boolean_is_refused_by_name(allow):
    with pytest.raises(AnsibleFilterError, match=r"^dra_driver_upgrade: dra_driver_allow_downgrade must be a boolean"):
        dra_driver_upgrade(release("dra-driver-nvidia-gpu-0.4.1"), SIGS, allow)


@pytest.mark.parametrize(("installed", "target", "message"), [
    (None, {"name": "nvidia-dra-driver-gpu", "version": "0.4.1"}, "is a version of 'dra-driver-nvidia-gpu'"),
    (None, {"version": "0.3.0"}, "neither a calendar version"),
    (None, {"version": ""}, "is not a chart version"),
    (None, {"version": 0.4}, "must be a chart version"),
    (None, {}, "must be a chart version"),
    (None, "0.4.1", "target must be the chosen chart"),
    (None, None, "target must be the chosen chart"),
    ("nvidia-dra-driver-gpu-25.12.0", SIGS, "installed must be the release status"),
    ({"chart": "nvidia-dra-driver-gpu"}, SIGS, "is not <chart name>-<version>"),
    ({"chart": None}, SIGS, "is not <chart name>-<version>"),
    ({"status": "deployed"}, SIGS, "is not <chart name>-<version>"),
    ({"chart": "other-chart-0.1.0"}, SIGS, "installed release's chart version 0.1.0 is neither"),
])
def test_wrong_input_is_a_clear_error(installed, target, message):
    with pytest.raises(AnsibleFilterError, match=message):
        dra_driver_upgrade(installed, target)


_VERSIONS = st.one_of(
    st.sampled_from(["25.12.0", "25.8.1", "0.4.0", "0.4.1", "0.5.0-dev", "0.5.0", "v0.5.1", "0.3.9", "1.0.0",
                     "", "0.4", "0.4.1.2", " 0.4.1 ", "0.04.1"]),
    st.from_regex(r"\A[0-9]{1,2}\.[0-9]{1,2}\.[0-9]{1,2}(-[a-z0-9]{1,4})?\Z"),
    st.text(max_size=12),
)
_NAMES = st.sampled_from(["dra-driver-nvidia-gpu", "nvidia-dra-driver-gpu", "other", ""])


@settings(max_examples=400, deadline=None)
@given(installed=st.one_of(st.none(), st.just({}), st.builds(lambda n, v: {"chart": f"{n}-{v}"}, _NAMES, _VERSIONS),
                           st.dictionaries(st.text(max_size=5), st.one_of(st.none(), st.text(max_size=8)),
                                           max_size=3)),
       target=st.one_of(st.builds(lambda n, v: {"name": n, "version": v}, _NAMES, _VERSIONS),
                        st.none(), st.text(max_size=5), st.integers()),
       allow=st.one_of(st.booleans(), st.sampled_from(["true", "false", "yes", "no", "maybe"])))
def test_property_a_plan_or_a_clear_error(installed, target, allow):
    """Any input gives a documented plan, or an AnsibleFilterError naming the filter; never 0.4+ back to 25.x, and
    a downgrade only when allowed."""
    try:
        plan = dra_driver_upgrade(installed, target, allow)
    except AnsibleFilterError as exc:
        assert str(exc).startswith("dra_driver_upgrade: ")
        return
    assert allow in (True, "true", "yes") or plan["action"] != "downgrade"
    assert plan["action"] in ("install", "migrate", "upgrade", "downgrade", "none")
    assert plan["line"] in ("legacy", "sigs") and plan["apply_crds"] == (plan["line"] == "sigs")
    assert plan["to"]["name"] == {"legacy": "nvidia-dra-driver-gpu", "sigs": "dra-driver-nvidia-gpu"}[plan["line"]]
    assert (plan["from"] is None) == (plan["action"] == "install")
    if plan["action"] == "migrate":
        assert plan["line"] == "sigs" and plan["from"]["version"].lstrip("v").split(".")[0] >= "25"
    if plan["from"] is not None and plan["line"] == "legacy":
        # a 0.4+ release is never moved to 25.x
        assert int(plan["from"]["version"].lstrip("v").split(".")[0]) >= 25
