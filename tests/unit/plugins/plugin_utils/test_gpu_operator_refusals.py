# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The gpu_cluster_refusals filter: the GPU Operator's GPUCluster path refused, naming the reason."""

from __future__ import annotations

import hypothesis
import pytest
from ansible.errors import AnsibleFilterError
from hypothesis import strategies as st

from ansible_collections.gpufabric.cluster.plugins.filter.gpu_cluster_refusals import (
    gpu_cluster_refusals,
)
from ansible_collections.gpufabric.cluster.plugins.plugin_utils import gpu_operator

SITE = {"roles": ["gpu_operator", "network_operator"]}
STANDALONE = {"name": "nvidia-dra-driver-gpu-kubelet-plugin", "namespace": "nvidia-dra-driver-gpu",
              "labels": {"app.kubernetes.io/name": "nvidia-dra-driver-gpu"}}


def test_a_fresh_cluster_at_1_35_takes_the_path():
    assert gpu_cluster_refusals({"version": "v1.35.4", "cluster_policies": [], "daemonsets": []}, SITE) == []
    assert gpu_cluster_refusals({"version": "v1.34.2"}, {}) == []


@pytest.mark.parametrize(("version", "refused"), [
    ("v1.34.1", True), ("v1.33.9-gke.100", True), ("v1.34.2", False), ("1.34.2-eks.3", False), ("v1.36.0", False),
    ("", True), ("unknown", True),
])
def test_kubernetes_older_than_1_34_2_is_refused_naming_the_version(version, refused):
    found = gpu_operator.gpu_cluster_refusals({"version": version}, SITE)
    assert bool(found) is refused
    if refused:
        assert found == [f"Kubernetes {version} is older than 1.34.2, which the GPU Operator's GPUCluster needs "
                         "(Dynamic Resource Allocation on by default)"] if version.startswith(("v", "1")) else \
            [f"the API server reported no Kubernetes version ({version!r}); the GPUCluster needs Kubernetes >= 1.34.2"]


def test_a_cluster_policy_the_dra_driver_role_and_a_standalone_driver_are_each_named():
    found = gpu_cluster_refusals({"version": "v1.35.4", "cluster_policies": ["cluster-policy"],
                                  "daemonsets": [STANDALONE]},
                                 {"roles": ["gpu_operator", "network_operator", "dra_driver"]})
    assert len(found) == 3
    assert found[0].startswith("ClusterPolicy cluster-policy exists: a cluster has either a ClusterPolicy or a "
                               "GPUCluster")
    assert "gpu_operator_dra_driver_via_gpu_cluster and the role gpufabric.cluster.dra_driver exclude each other" in \
        found[1] and "gpufabric_cluster_roles: gpu_operator, network_operator, dra_driver" in found[1]
    assert found[2].startswith("a standalone DRA driver runs (DaemonSet "
                               "nvidia-dra-driver-gpu/nvidia-dra-driver-gpu-kubelet-plugin;")


def test_the_gpu_clusters_own_dra_driver_and_other_daemonsets_are_not_standalone():
    owned = dict(STANDALONE, ownerReferences=[{"kind": "GPUCluster", "name": "gpu-cluster"}])
    other = {"name": "x", "namespace": "y", "labels": {"app.kubernetes.io/name": "something-else"}}
    assert gpu_cluster_refusals({"version": "v1.35.4", "daemonsets": [owned, other, {"name": "bare"}]}, SITE) == []


@pytest.mark.parametrize(("cluster", "site", "message"), [
    ([], SITE, "cluster must be a mapping"),
    ({"version": 1.35}, SITE, "cluster.version must be a string"),
    ({"cluster_policies": "cluster-policy"}, SITE, "cluster.cluster_policies must be a list"),
    ({"cluster_policies": [None]}, SITE, "cluster.cluster_policies item must be a string"),
    ({"daemonsets": ["ds"]}, SITE, "cluster.daemonsets item must be a mapping"),
    ({"nodes": []}, SITE, "unknown key.s. nodes"),
    ({}, {"roles": "dra_driver"}, "site.roles must be a list"),
    ({}, {"min_kubernetes_version": "latest"}, "site.min_kubernetes_version must be a version, got 'latest'"),
    ({}, None, "site must be a mapping"),
])
def test_wrong_shapes_are_refused_naming_the_key(cluster, site, message):
    with pytest.raises(AnsibleFilterError, match=f"gpu_cluster_refusals: {message}"):
        gpu_cluster_refusals(cluster, site)


VALUES = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=12), st.lists(st.text(max_size=8),
                                                                                           max_size=3))


@hypothesis.given(
    version=st.one_of(st.none(), st.text(max_size=16), st.from_regex(r"v?1\.3[0-9]\.[0-9]{1,2}(-gke\.[0-9])?",
                                                                     fullmatch=True)),
    policies=st.one_of(VALUES, st.lists(st.sampled_from(["cluster-policy", "other"]), max_size=2, unique=True)),
    roles=st.one_of(VALUES, st.lists(st.sampled_from(["gpu_operator", "network_operator", "dra_driver"]),
                                     max_size=3, unique=True)),
)
@hypothesis.settings(deadline=None)
def test_any_input_gives_named_reasons_or_a_clear_error(version, policies, roles):
    try:
        found = gpu_cluster_refusals({"version": version, "cluster_policies": policies}, {"roles": roles})
    except AnsibleFilterError as exc:
        assert str(exc).startswith("gpu_cluster_refusals: cluster.") or str(exc).startswith(
            "gpu_cluster_refusals: site."), exc
        return
    assert isinstance(found, list) and all(isinstance(item, str) and item for item in found)
    assert any("ClusterPolicy" in item for item in found) == bool(policies)
    assert any("gpufabric.cluster.dra_driver" in item for item in found) == ("dra_driver" in (roles or []))
    too_old = not gpu_operator.at_least(version or "", "1.34.2")
    assert any("Kubernetes" in item and "1.34.2" in item for item in found) == too_old
