# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The chart_source filter: which source wins, and what a failed or wrong ``helm show chart`` says."""

from __future__ import annotations

import pytest
from ansible.errors import AnsibleFilterError
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.gpufabric.cluster.plugins.filter.chart_source import chart_source

REPO = "https://helm.ngc.nvidia.com/nvidia"
SPEC = {"path": "", "oci_ref": "", "repo_url": REPO, "name": "gpu-operator", "version": "v26.7.0"}


def shown(stdout="", rc=0, stderr=""):
    return {"rc": rc, "stdout": stdout, "stderr": stderr}


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
                      "credentials": False, "variable": "gpu_operator_chart_path", "name": "gpu-operator",
                      "version": "v26.7.0", "app_version": "v26.7.0"}


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


SECRET_URL = "https://fabric:s3cr3t-pw@charts.example.com/nvidia"


def test_a_repository_url_with_credentials_is_never_returned_or_shown_with_them():
    chosen = chart_source(SPEC | {"repo_url": SECRET_URL}, "gpu_operator")
    assert chosen["show"] == ["show", "chart", "gpu-operator", "--repo", "https://charts.example.com/nvidia",
                              "--version", "v26.7.0"]
    assert (chosen["chart_repo_url"], chosen["credentials"]) == ("https://charts.example.com/nvidia", True)
    assert chosen["location"] == "https://***@charts.example.com/nvidia (gpu-operator)"
    checked = chart_source(SPEC | {"repo_url": SECRET_URL}, "gpu_operator",
                           shown=shown("name: gpu-operator\nversion: v26.7.0\n"))
    assert (checked["chart_repo_url"], checked["credentials"]) == ("https://charts.example.com/nvidia", True)
    assert "s3cr3t" not in repr(chosen) + repr(checked)
    assert chart_source(SPEC, "gpu_operator")["credentials"] is False


@pytest.mark.parametrize(("spec", "result", "message"), [
    ({"repo_url": SECRET_URL}, shown(rc=1, stderr=f'Error: looks like "{SECRET_URL}" is not a valid chart repository'),
     'gpu_operator: chart source not usable: gpu_operator_chart_repo_url https://***@charts.example.com/nvidia '
     '(gpu-operator): Error: looks like "https://***@charts.example.com/nvidia" is not a valid chart repository; '
     'with no repository reachable set gpu_operator_chart_path to a local chart'),
    ({"repo_url": SECRET_URL, "name": ""}, None,
     "gpu_operator: gpu_operator_chart_name is empty: the chart to take from gpu_operator_chart_repo_url "
     "https://***@charts.example.com/nvidia"),
    ({"oci_ref": "oci://robot:tok3n@registry.example.com/c"}, shown(rc=1, stderr="Error: unauthorized"),
     "gpu_operator: chart source not usable: gpu_operator_chart_oci_ref oci://***@registry.example.com/c: "
     "Error: unauthorized; with no repository reachable set gpu_operator_chart_path to a local chart"),
])
def test_messages_redact_the_credentials(spec, result, message):
    with pytest.raises(AnsibleFilterError) as caught:
        chart_source(SPEC | spec, "gpu_operator", shown=result)
    assert str(caught.value) == message


@settings(max_examples=150, deadline=None)
@given(host=st.text(max_size=30), password=st.text("abcdefXYZ0123456789-_.~!$&()*+,;=%@:", min_size=8, max_size=20),
       rc=st.sampled_from([0, 1]), stderr=st.text(max_size=40))
def test_no_repository_password_in_any_result_or_message(host, password, rc, stderr):
    url = f"https://fabric:{password}@{host}"
    spec = SPEC | {"repo_url": url}
    answer = shown("name: gpu-operator\nversion: v26.7.0\n", rc=rc, stderr=f"{stderr} {url}")
    for result in (None, answer):
        try:
            out = chart_source(spec, "gpu_operator", shown=result)
        except AnsibleFilterError as exc:
            assert f"fabric:{password}@" not in str(exc)
            assert str(exc).startswith("gpu_operator: ")
        else:
            assert f"fabric:{password}@" not in repr(out)
            assert out["credentials"] is True
