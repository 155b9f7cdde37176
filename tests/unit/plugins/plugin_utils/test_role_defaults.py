# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 40 item 1: the cluster roles' plugin_utils keep no second default of a role setting.

On the starting commit gpu_operator.py, network_operator.py, dra_driver_values.py and dra_driver_prerequisites.py each
held a ``DEFAULTS`` dict repeating their role's defaults (dra_driver's chart version differed: ``''`` in Python,
``0.4.1`` in the role). Now they name the settings they judge with and read the defaults from the role's argument
spec; the role passes every one of them, so a default is changed in one line of the spec (and defaults/main.yml,
which test_argument_specs keeps equal).
"""

from __future__ import annotations

import os
import re

import pytest

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import (
    dra_driver_prerequisites,
    dra_driver_values,
    gpu_operator,
    network_operator,
    settings,
)

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
# (module, role, prefix of its variables, the task file that calls the module's filter)
CALLERS = [
    (gpu_operator, "gpu_operator", "gpu_operator_", "roles/gpu_operator/tasks/values.yml"),
    (network_operator, "network_operator", "network_operator_", "roles/network_operator/tasks/values.yml"),
    (dra_driver_values, "dra_driver", "dra_driver_", "roles/dra_driver/tasks/values.yml"),
    (dra_driver_prerequisites, "dra_driver", "dra_driver_", "roles/dra_driver/tasks/prerequisites.yml"),
]
IDS = ["gpu_operator", "network_operator", "dra_driver_values", "dra_driver_prerequisites"]


def patched_role(monkeypatch, role: str, **defaults):
    """``role``'s spec with other defaults, as a change of one line of its argument spec would make it."""
    specs = settings.argument_specs()
    main = {name: ({**spec, "default": defaults[name]} if name in defaults else spec)
            for name, spec in specs[role]["main"].items()}
    monkeypatch.setattr(settings, "argument_specs", lambda: {**specs, role: {"main": main}})


@pytest.mark.parametrize(("module", "role", "prefix", "caller"), CALLERS, ids=IDS)
def test_the_module_keeps_no_copy_of_its_role_defaults(module, role, prefix, caller):
    assert not hasattr(module, "DEFAULTS")
    spec = settings.options(role)
    assert [name for name in module.SETTINGS if f"{prefix}{name}" not in spec] == []


@pytest.mark.parametrize(("module", "role", "prefix", "caller"), CALLERS, ids=IDS)
def test_the_role_passes_every_setting_the_module_reads(module, role, prefix, caller):
    """So that what the role runs with is its variables, never a default the filter would fill in."""
    with open(os.path.join(ROOT, caller), encoding="utf-8") as handle:
        passed = set(re.findall(r"'([a-z_]+)':", handle.read()))
    assert set(module.SETTINGS) - passed == set()


def test_a_changed_gpu_operator_default_is_the_filter_default(monkeypatch):
    assert gpu_operator._settings({})["mofed"] == "auto"
    patched_role(monkeypatch, "gpu_operator", gpu_operator_mofed="host", gpu_operator_cdi=False)
    chosen = gpu_operator._settings({})
    assert (chosen["mofed"], chosen["cdi"]) == ("host", False)


def test_a_changed_network_operator_default_is_the_filter_default(monkeypatch):
    patched_role(monkeypatch, "network_operator", network_operator_ipam_cidr="10.64.0.0/16")
    assert network_operator._settings({})["ipam_cidr"] == "10.64.0.0/16"


def test_the_dra_driver_values_default_to_the_role_chart_version():
    """The old Python default (an empty chart version) refused what the role's default (0.4.1) accepts."""
    default = settings.option("dra_driver", "dra_driver_chart_version")["default"]
    assert dra_driver_values.dra_driver_values({}, {})["decisions"] == \
        dra_driver_values.dra_driver_values({}, {"chart_version": None})["decisions"] == \
        dra_driver_values.dra_driver_values({}, {"chart_version": default})["decisions"]


def test_a_changed_dra_driver_default_is_the_prerequisites_default(monkeypatch):
    cluster = {"version": "v1.34.2", "apis": ["v1", "resource.k8s.io/v1"], "nodes": [], "gpu_operator": {}}
    result = dra_driver_prerequisites.dra_driver_prerequisites({}, [], cluster, {"compute_domains": False})
    assert result["checks"][0]["message"] == "Kubernetes v1.34.2 with DRA (resource.k8s.io/v1)"
    patched_role(monkeypatch, "dra_driver", dra_driver_min_kubernetes_version="1.35.0")
    result = dra_driver_prerequisites.dra_driver_prerequisites({}, [], cluster, {"compute_domains": False})
    assert result["checks"][0]["message"] == ("Kubernetes v1.34.2 is older than 1.35.0 but serves DRA through the "
                                              "feature gates (resource.k8s.io/v1)")
