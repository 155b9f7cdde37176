# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 40 item 1: plugin_utils keep no second default of a site setting; they read it from roles/gpufabric's spec.

On the starting commit dra_driver_prerequisites.py and dra_driver_values.py defaulted the IMEX mode to ``dra`` (the
site's is ``host``) and held their own socket path and minimum driver, and the IMEX modes were written in four Python
constants besides the argument specs.
"""

from __future__ import annotations

import pytest

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import (
    dra_driver_prerequisites,
    dra_driver_values,
    imex_config,
    settings,
    site,
)

SITE = settings.argument_specs()["gpufabric"]["main"]
CLIQUE = "3c1a5f2e-9b7d-4c2a-8e6f-1d0b7a9c4e21.1"
TRAY = {"gpu": {"driver_loaded": True, "driver_version": "570.172.08", "cliques": [CLIQUE], "count": 4},
        "imex": {"service": {"exists": True, "enabled": True, "active": True, "masked": False},
                 "control": {"enabled": True, "socket_path": "/run/imex/ctl.sock", "ready": True}}}
CLUSTER = {"version": "v1.35.4", "apis": ["v1", "resource.k8s.io/v1"],
           "nodes": [{"name": "t1", "labels": {"nvidia.com/gpu.clique": CLIQUE}}], "gpu_operator": {}}


def patched_site(monkeypatch, **defaults):
    """The gpufabric spec with other defaults, as a site that changed them in roles/gpufabric would have it."""
    specs = settings.argument_specs()
    main = {name: ({**spec, "default": defaults[name]} if name in defaults else spec)
            for name, spec in specs["gpufabric"]["main"].items()}
    monkeypatch.setattr(settings, "argument_specs", lambda: {**specs, "gpufabric": {"main": main}})


def test_the_imex_modes_are_the_choices_of_the_site_setting():
    assert tuple(SITE["gpufabric_imex_mode"]["choices"]) == imex_config.MODES
    assert ("none", *imex_config.MODES) == imex_config.DRIVER_MODES
    assert dra_driver_values.IMEX_MODES is imex_config.MODES
    assert dra_driver_prerequisites.IMEX_MODES is imex_config.MODES


def test_the_imex_mode_messages_list_the_modes_of_the_spec():
    assert imex_config.mode_problems("Host") == [
        f"nvidia_imex_mode must be {', '.join(imex_config.MODES[:-1])} or {imex_config.MODES[-1]}, got 'Host'"]


def test_the_dra_driver_values_default_to_the_site_imex_mode():
    """The role passes its mode always; called without, the values follow the site's default (host), not dra."""
    decision = dra_driver_values.dra_driver_values({}, {"chart_version": "0.5.0"})["decisions"]["imex"]
    assert decision["reason"].startswith(f"dra_driver_imex_mode is {SITE['gpufabric_imex_mode']['default']}:")


def test_a_changed_site_default_is_the_dra_driver_default(monkeypatch):
    patched_site(monkeypatch, gpufabric_imex_mode="dra_host_managed", gpufabric_imex_socket_path="/run/imex/ctl.sock")
    result = dra_driver_values.dra_driver_values({}, {"chart_version": "0.5.0"})
    assert result["values"]["resources"]["computeDomains"]["imex"] == {"mode": "hostManaged",
                                                                       "hostSocketPath": "/run/imex/ctl.sock"}
    checks = dra_driver_prerequisites.dra_driver_prerequisites({"t1": {"ansible_facts": {"gpufabric": TRAY}}}, ["t1"],
                                                               CLUSTER, {"chart_version": "0.5.0"})
    assert checks["ok"], checks
    assert "READY on /run/imex/ctl.sock" in checks["checks"][2]["message"]


def test_the_prerequisites_default_to_the_site_minimum_driver(monkeypatch):
    patched_site(monkeypatch, gpufabric_min_driver_version="580.1.1")
    result = dra_driver_prerequisites.dra_driver_prerequisites(
        {"t1": {"ansible_facts": {"gpufabric": TRAY}}}, ["t1"], CLUSTER, {"compute_domains": False})
    assert result["problems"] == ["host t1: driver 570.172.08 is older than 580.1.1 (dra_driver_min_driver_version)"]


def test_the_default_gate_is_the_site_settings_default():
    assert tuple(SITE["gpufabric_site_gate_checks"]["default"]) == site.DEFAULT_GATE_CHECKS


@pytest.mark.parametrize("module", [dra_driver_prerequisites, dra_driver_values])
def test_no_site_setting_has_a_default_in_the_dra_driver_modules(module):
    assert set(module.SETTINGS) & set(module.SITE_SETTINGS) == set()
    assert all(name in SITE for name in module.SITE_SETTINGS.values())


def test_the_site_summary_takes_its_report_directory_from_the_caller():
    with pytest.raises(site.SiteError, match="report_dir must be the report directory"):
        site.site_summary(None, [])
