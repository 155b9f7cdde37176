# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The dra_driver_values filter: GPU resources consistent with the GPU Operator, the driver root."""

from __future__ import annotations

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.gpufabric.cluster.plugins.filter.dra_driver_values import FilterModule, dra_driver_values


def test_registered():
    assert FilterModule().filters() == {"dra_driver_values": dra_driver_values}


def test_beside_the_device_plugin_and_an_operator_driver():
    result = dra_driver_values({"device_plugin": True, "driver_enabled": True,
                                "driver_install_dir": "/run/nvidia/driver"})
    assert result["values"] == {"nvidiaDriverRoot": "/run/nvidia/driver", "webhook": {"enabled": False},
                                "resources": {"gpus": {"enabled": False}, "computeDomains": {"enabled": True}}}


def test_alone_publishes_the_gpus():
    values = dra_driver_values({}, {"image_pull_secrets": ["ngc"], "image_registry": "m.example.com"})["values"]
    assert values["resources"]["gpus"] == {"enabled": True} and values["gpuResourcesEnabledOverride"] is True
    assert values["nvidiaDriverRoot"] == "/"
    assert values["imagePullSecrets"] == [{"name": "ngc"}]
    assert values["image"] == {"repository": "m.example.com/k8s-dra-driver-gpu"}


@pytest.mark.parametrize(("operator", "settings", "message"), [
    ({"device_plugin": True}, {"gpus": "enabled"}, "the GPUs would be published twice"),
    ({"device_plugin": True}, {"compute_domains": False}, "the DRA driver would do nothing"),
    ({}, {"gpus": "yes"}, "dra_driver_gpus must be auto, enabled or disabled"),
])
def test_conflicts(operator, settings, message):
    with pytest.raises(AnsibleFilterError, match=message):
        dra_driver_values(operator, settings)
