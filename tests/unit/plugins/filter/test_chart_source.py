# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The chart_source filter: which source wins, and what a failed or wrong ``helm show chart`` says."""

from __future__ import annotations

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.gpufabric.cluster.plugins.filter.chart_source import FilterModule, chart_source

REPO = "https://helm.ngc.nvidia.com/nvidia"
SPEC = {"path": "", "oci_ref": "", "repo_url": REPO, "name": "gpu-operator", "version": "v26.7.0"}


def shown(stdout="", rc=0, stderr=""):
    return {"rc": rc, "stdout": stdout, "stderr": stderr}


def test_registered():
    assert FilterModule().filters() == {"chart_source": chart_source}


def test_sources_in_order():
    assert chart_source(SPEC, "gpu_operator")["show"] == ["show", "chart", "gpu-operator", "--repo", REPO,
                                                          "--version", "v26.7.0"]
    oci = chart_source(SPEC | {"oci_ref": "oci://r.example.com/charts/gpu-operator"}, "gpu_operator")
    assert (oci["source"], oci["chart_version"]) == ("oci", "v26.7.0")
    local = chart_source(SPEC | {"path": "/srv/gpu-operator", "oci_ref": "oci://x/y"}, "gpu_operator")
    assert (local["source"], local["chart_ref"], local["chart_version"]) == ("local", "/srv/gpu-operator", None)


def test_checked_local_chart():
    result = chart_source(SPEC | {"path": "/c"}, "gpu_operator",
                          shown=shown("name: gpu-operator\nversion: v26.7.0\nappVersion: v26.7.0\n"))
    assert result == {"source": "local", "chart_ref": "/c", "chart_repo_url": None, "chart_version": None,
                      "variable": "gpu_operator_chart_path", "name": "gpu-operator", "version": "v26.7.0",
                      "app_version": "v26.7.0"}


@pytest.mark.parametrize(("spec", "result", "message"), [
    ({"path": "", "repo_url": ""}, None, "no chart source: gpu_operator_chart_path, gpu_operator_chart_oci_ref and "
                                         "gpu_operator_chart_repo_url are all empty"),
    ({"oci_ref": "r.example.com/x"}, None, "gpu_operator_chart_oci_ref 'r.example.com/x' is not an oci:// reference"),
    ({}, shown(rc=1, stderr="Error: looks like \"http://x\" is not a valid chart repository or cannot be reached"),
     "chart source not usable: gpu_operator_chart_repo_url .* "
     "with no repository reachable set gpu_operator_chart_path"),
    ({}, shown(rc=1, stderr='Error: chart "gpu-operator" version "v26.7.0" not found in repository'),
     "gpu_operator_chart_version v26.7.0 not found"),
    ({"path": "/c"}, shown("name: gpu-operator\nversion: v1.0.0-devel\n"),
     "gpu_operator_chart_version v26.7.0 does not exist at gpu_operator_chart_path /c: "
     "the chart there is version v1.0.0-devel"),
    ({"path": "/c"}, shown("name: network-operator\nversion: v26.7.0\n"),
     "is chart 'network-operator', not 'gpu-operator'"),
    ({"path": "/c"}, shown(rc=1, stderr="Error: path \"/c\" not found"),
     "chart source not usable: gpu_operator_chart_path /c"),
])
def test_errors_name_the_variable(spec, result, message):
    with pytest.raises(AnsibleFilterError, match=message):
        chart_source(SPEC | spec, "gpu_operator", shown=result)
