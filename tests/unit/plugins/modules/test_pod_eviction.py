# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""pod_eviction's own checks, before it reaches a cluster: the pods given, the timeout, a kubeconfig that is not there.

The evictions themselves run on the real control plane (tests/cluster/test_role_nvidia_driver_drain.py).
"""

from __future__ import annotations

import pytest

from ansible_collections.gpufabric.cluster.plugins.modules import pod_eviction


def test_no_pods_is_no_change_and_needs_no_cluster(module_runner, tmp_path):
    result = module_runner(pod_eviction, {"pods": [], "kubeconfig": str(tmp_path / "absent")})
    assert (result["changed"], result["asked"], result["absent"]) == (False, [], [])


@pytest.mark.parametrize(("pods", "message"), [
    ([{"name": "p"}], "pods[0] must have a namespace and a name (and a uid, a string)"),
    ([{"namespace": "n", "name": ""}], "pods[0] must have a namespace and a name (and a uid, a string)"),
    ([{"namespace": "n", "name": "p"}, {"namespace": "n", "name": "q", "uid": 7}],
     "pods[1] must have a namespace and a name (and a uid, a string)"),
    ("n/p", "Elements value for option 'pods' is of type str and we were unable to convert to dict"),
])
def test_pods_without_a_namespace_or_name_are_refused(module_runner, pods, message):
    result = module_runner(pod_eviction, {"pods": pods})
    assert result["failed"] and message in result["msg"]


@pytest.mark.parametrize("timeout", [0, -5])
def test_the_timeout_must_be_positive(module_runner, timeout):
    result = module_runner(pod_eviction, {"pods": [{"namespace": "n", "name": "p"}], "wait_timeout": timeout})
    assert result["failed"] and result["msg"] == f"wait_timeout must be a positive number of seconds, got {timeout}"


def test_a_kubeconfig_that_is_not_there_is_a_clear_error(module_runner, tmp_path):
    path = str(tmp_path / "absent")
    result = module_runner(pod_eviction, {"pods": [{"namespace": "n", "name": "p"}], "kubeconfig": path})
    assert result["failed"] and result["msg"] == f"no Kubernetes API client from {path}: ConfigException"


def test_a_broken_kubeconfig_is_named_without_its_text(module_runner, tmp_path):
    path = tmp_path / "kubeconfig"
    path.write_text("apiVersion: v1\nusers:\n- name: admin\n  user: {token: s3cr3t-t0ken\n")
    result = module_runner(pod_eviction, {"pods": [{"namespace": "n", "name": "p"}], "kubeconfig": str(path)})
    assert result["failed"] and result["msg"].startswith(f"no Kubernetes API client from {path}: ")
    assert "s3cr3t" not in str(result)
