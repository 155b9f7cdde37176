# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The dra_driver_values filter: GPU resources consistent with the GPU Operator, the driver root."""

from __future__ import annotations

import pytest
from ansible.errors import AnsibleFilterError
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.gpufabric.cluster.plugins.filter.dra_driver_values import FilterModule, dra_driver_values


def test_registered():
    assert FilterModule().filters() == {"dra_driver_values": dra_driver_values}


LEGACY = {"chart_version": "25.12.0"}
SIGS = {"chart_version": "0.4.1"}


def test_beside_the_device_plugin_and_an_operator_driver():
    result = dra_driver_values({"device_plugin": True, "driver_enabled": True,
                                "driver_install_dir": "/run/nvidia/driver"}, LEGACY)
    assert result["values"] == {"nvidiaDriverRoot": "/run/nvidia/driver", "webhook": {"enabled": False},
                                "resources": {"gpus": {"enabled": False}, "computeDomains": {"enabled": True}}}
    assert result["decisions"]["chart"] == {"line": "legacy", "name": "nvidia-dra-driver-gpu", "version": "25.12.0"}


def test_alone_publishes_the_gpus():
    values = dra_driver_values({}, {"image_pull_secrets": ["ngc"], "image_registry": "m.example.com",
                                    **LEGACY})["values"]
    assert values["resources"]["gpus"] == {"enabled": True} and values["gpuResourcesEnabledOverride"] is True
    assert values["nvidiaDriverRoot"] == "/"
    assert values["imagePullSecrets"] == [{"name": "ngc"}]
    assert values["image"] == {"repository": "m.example.com/k8s-dra-driver-gpu"}
    assert "nameOverride" not in values


@pytest.mark.parametrize("version", ["0.4.1", "0.4.0", "0.5.0-dev", "v0.5.0", "1.0.0"])
def test_sigs_chart_keeps_the_object_names_and_takes_its_image_from_its_registry(version):
    result = dra_driver_values({"device_plugin": True}, {"chart_version": version, "image_registry": "m.example.com/"})
    values = result["values"]
    assert values["nameOverride"] == "nvidia-dra-driver-gpu"
    assert values["image"] == {"repository": "m.example.com/dra-driver-nvidia-gpu"}
    assert result["decisions"]["chart"]["name"] == "dra-driver-nvidia-gpu"
    # the keys both lines share are the same
    legacy = dra_driver_values({"device_plugin": True}, {"chart_version": "25.12.0"})["values"]
    assert {k: v for k, v in values.items() if k not in ("nameOverride", "image")} == legacy


def test_sigs_chart_without_registry_keeps_the_chart_image():
    assert "image" not in dra_driver_values({}, SIGS)["values"]


@pytest.mark.parametrize(("version", "message"), [
    (None, "dra_driver_chart_version is empty"),
    ("", "dra_driver_chart_version is empty"),
    ("0.3.2", "neither a calendar version"),
    ("0.1.0", "neither a calendar version"),
    ("latest", "is not a chart version"),
    (True, "must be a string"),
    ([], "must be a string"),
])
def test_chart_version_required_and_known(version, message):
    with pytest.raises(AnsibleFilterError, match=message):
        dra_driver_values({}, {"chart_version": version})


@pytest.mark.parametrize(("operator", "settings", "message"), [
    ({"device_plugin": True}, {"gpus": "enabled"}, "the GPUs would be published twice"),
    ({"device_plugin": True}, {"compute_domains": False}, "the DRA driver would do nothing"),
    ({}, {"gpus": "yes"}, "dra_driver_gpus must be auto, enabled or disabled"),
])
def test_conflicts(operator, settings, message):
    with pytest.raises(AnsibleFilterError, match=message):
        dra_driver_values(operator, {**SIGS, **settings})


@settings(max_examples=300, deadline=None)
@given(version=st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=12),
                         st.from_regex(r"\Av?[0-9]{1,2}\.[0-9]{1,2}\.[0-9]{1,2}(-[a-z]{1,3})?\Z")),
       registry=st.sampled_from(["", "m.example.com", "m.example.com/"]))
def test_property_values_for_the_line_or_a_clear_error(version, registry):
    """Any chart version gives the values of its line, or an error naming dra_driver_chart_version."""
    try:
        result = dra_driver_values({}, {"chart_version": version, "image_registry": registry})
    except AnsibleFilterError as exc:
        assert str(exc).startswith("dra_driver_values: dra_driver_chart_version"), str(exc)
        return
    values, chart = result["values"], result["decisions"]["chart"]
    assert chart["line"] in ("legacy", "sigs")
    assert ("nameOverride" in values) == (chart["line"] == "sigs")
    if registry:
        leaf = "dra-driver-nvidia-gpu" if chart["line"] == "sigs" else "k8s-dra-driver-gpu"
        assert values["image"] == {"repository": f"m.example.com/{leaf}"}
