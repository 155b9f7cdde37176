# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpufabric.cluster.dra_driver puts the GPU Operator's ``nvidia.com/gpu.deploy.client`` label on the GPU nodes.

GPU Operator 26.7 flips that node label around a driver upgrade, so GPU clients whose nodeSelector holds
``nvidia.com/gpu.deploy.client=true`` (a standalone DRA driver's kubelet plugin) leave the node before the driver is
unloaded. With ``dra_driver_deploy_client_label: auto`` the role does it when the GPU Operator installs the driver:
here the GPU Operator is the ClusterPolicy its real chart (../shared/charts/gpu-operator) renders, applied with the
chart's CRD (no operator runs under kwok). One tray starts with the label at ``false``, as the operator leaves it
while that tray's driver is upgraded: the role must leave it so and the kubelet plugin must stay off that tray.
"""

from __future__ import annotations

import pytest
import role_runner
import yaml
from kubernetes import client

RELEASE = "nvidia-dra-driver-gpu"
NAMESPACE = "nvidia-dra-driver-gpu"
LABEL = "nvidia.com/gpu.deploy.client"
GPU_OPERATOR_CHART = role_runner.CHARTS / "gpu-operator"
CLUSTER_POLICY_CRD = GPU_OPERATOR_CHART / "crds" / "nvidia.com_clusterpolicies.yaml"


def role_vars(**extra):
    return role_runner.dra_driver_vars(**extra)


def set_label(core, node: str, value: str | None):
    core.patch_node(node, {"metadata": {"labels": {LABEL: value}}})


def labels_of(core, nodes) -> dict:
    return {node: (core.read_node(node).metadata.labels or {}).get(LABEL) for node in nodes}


@pytest.fixture(scope="module")
def gpu_operator(api_client, cluster, waiter, tmp_path_factory):
    """The GPU Operator's ClusterPolicy as its chart renders it (driver installed by the operator)."""
    rendered = cluster.run("helm", "template", "gpu-operator", str(GPU_OPERATOR_CHART), "--namespace", "gpu-operator",
                           "--show-only", "templates/clusterpolicy.yaml").stdout
    path = tmp_path_factory.mktemp("gpu-operator") / "clusterpolicy.yaml"
    path.write_text(rendered)
    cluster.run("kubectl", "apply", "--server-side", "-f", str(CLUSTER_POLICY_CRD))

    # Accepted once the API server serves the new CRD.
    def accepted():
        return cluster.run("kubectl", "apply", "--server-side", "-f", str(path), check=False).returncode == 0

    waiter("the ClusterPolicy CRD served", accepted, timeout=60)
    policy = yaml.safe_load(rendered)
    assert policy["kind"] == "ClusterPolicy" and policy["spec"]["driver"]["enabled"] is True
    yield policy
    cluster.run("kubectl", "delete", "clusterpolicy", "--all", "--wait=false", check=False)
    cluster.run("kubectl", "delete", "-f", str(CLUSTER_POLICY_CRD), "--wait=true", check=False)


@pytest.fixture(scope="module")
def runs(api_client, cluster, gpu_operator, tmp_path_factory):
    core = client.CoreV1Api(api_client)
    facts = role_runner.masked_imex(role_runner.recorded_facts("gb200_tray", tmp_path_factory.mktemp("trees")))
    runner = role_runner.Runner(cluster, tmp_path_factory.mktemp("dra-labels"), dict.fromkeys(cluster.gpu_nodes, facts))
    playbook = runner.role_playbook("dra_driver", role_vars())
    upgrading = cluster.gpu_nodes[0]
    set_label(core, upgrading, "false")
    try:
        checked = runner.run(playbook, "--check")
        after_check = labels_of(core, cluster.gpu_nodes + cluster.control_plane_nodes)
        first = runner.run(playbook)
        again = runner.run(playbook)
        yield {"runner": runner, "playbook": playbook, "upgrading": upgrading, "checked": checked,
               "after_check": after_check, "first": first, "again": again}
    finally:
        with role_runner.HookCompleter(cluster):
            cluster.run("helm", "uninstall", RELEASE, "--namespace", NAMESPACE, "--wait", "--timeout", "2m",
                        check=False)
        for node in cluster.gpu_nodes:
            set_label(core, node, None)


def test_check_mode_names_the_nodes_it_would_label_and_labels_none(cluster, runs):
    checked = runs["checked"]
    assert checked.rc == 0, checked.output
    assert "gpu.deploy.client: on (dra_driver_deploy_client_label auto, the GPU Operator installs the driver)" in \
        " ".join(checked.output.split())
    for node in cluster.gpu_nodes[1:]:
        assert f"changed: [localhost] => (item={node})" in checked.output
    assert f"(item={runs['upgrading']})" not in checked.output
    assert runs["after_check"] == {node: ("false" if node == runs["upgrading"] else None)
                                   for node in cluster.gpu_nodes + cluster.control_plane_nodes}


def test_gpu_nodes_labelled_and_a_value_already_there_kept(api_client, cluster, runs):
    assert runs["first"].rc == 0, runs["first"].output
    core = client.CoreV1Api(api_client)
    assert labels_of(core, cluster.gpu_nodes) == {node: ("false" if node == runs["upgrading"] else "true")
                                                  for node in cluster.gpu_nodes}
    assert labels_of(core, cluster.control_plane_nodes) == dict.fromkeys(cluster.control_plane_nodes)


def test_kubelet_plugin_selects_the_label_and_leaves_the_upgrading_tray(api_client, cluster, runs):
    values = yaml.safe_load(cluster.run("helm", "get", "values", RELEASE, "-n", NAMESPACE, "-o", "yaml").stdout)
    assert values["kubeletPlugin"]["nodeSelector"] == {LABEL: "true"}
    apps, core = client.AppsV1Api(api_client), client.CoreV1Api(api_client)
    plugin = next(ds for ds in apps.list_namespaced_daemon_set(NAMESPACE).items if "kubelet-plugin" in ds.metadata.name)
    assert plugin.spec.template.spec.node_selector == {LABEL: "true"}
    selector = ",".join(f"{k}={v}" for k, v in plugin.spec.selector.match_labels.items())
    assert sorted(p.spec.node_name for p in core.list_namespaced_pod(NAMESPACE, label_selector=selector).items) == \
        sorted(cluster.gpu_nodes[1:])


def test_second_run_changes_nothing(runs):
    assert runs["again"].rc == 0 and runs["again"].changed == 0, runs["again"].output


def test_disabled_leaves_the_labels_and_the_selector_alone(runs):
    checked = runs["runner"].run(runs["runner"].role_playbook("dra_driver", role_vars(
        dra_driver_deploy_client_label="disabled")), "--check", "--diff")
    assert checked.rc == 0, checked.output
    assert "gpu.deploy.client: off (dra_driver_deploy_client_label disabled" in " ".join(checked.output.split())
    assert not [node for node in runs["runner"].cluster.gpu_nodes
                if f"changed: [localhost] => (item={node})" in checked.output]
