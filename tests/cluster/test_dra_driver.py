# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The real nvidia-dra-driver-gpu chart (../shared/charts) installs with helm --wait; its CRDs check ComputeDomains."""

from __future__ import annotations

import copy

import pytest
import yaml
from kubernetes import client
from kubernetes.client.rest import ApiException

RELEASE = "nvidia-dra-driver-gpu"
DRA_NAMESPACE = "nvidia-dra-driver-gpu"
# ComputeDomains only: the GPU kubelet plugin would clash with the device plugin, the webhook
# wants cert-manager; the driver root is where the GPU Operator puts the driver.
VALUES = {
    "resources.gpus.enabled": "false",
    "resources.computeDomains.enabled": "true",
    "webhook.enabled": "false",
    "nvidiaDriverRoot": "/run/nvidia/driver",
}


@pytest.fixture(scope="module")
def dra_driver(cluster, shared_dir):
    chart = shared_dir / "charts" / "nvidia-dra-driver-gpu"
    sets = [arg for key, value in VALUES.items() for arg in ("--set", f"{key}={value}")]
    cluster.run(
        "helm",
        "install",
        RELEASE,
        str(chart),
        "--namespace",
        DRA_NAMESPACE,
        "--create-namespace",
        "--wait",
        "--timeout",
        "5m",
        *sets,
    )
    yield chart
    cluster.run("helm", "uninstall", RELEASE, "--namespace", DRA_NAMESPACE, "--wait", "--timeout", "2m", check=False)


def test_kubelet_plugin_ready_on_every_gpu_node(api_client, cluster, dra_driver, waiter):
    """helm --wait returns once a DaemonSet has at most its maxUnavailable pods not ready, and the chart sets the
    kubelet plugin's to 100%: the pods on the last kwok nodes may still be starting, so the test waits for every one
    (a CI run saw 9 of 18 ready at first)."""
    apps = client.AppsV1Api(api_client)

    def plugin_ready():
        daemonsets = apps.list_namespaced_daemon_set(DRA_NAMESPACE).items
        found = next(ds for ds in daemonsets if "kubelet-plugin" in ds.metadata.name)
        return found if found.status.number_ready == len(cluster.gpu_nodes) else None

    plugin = waiter("the kubelet plugin ready on every GPU node", plugin_ready)
    assert plugin.status.desired_number_scheduled == len(cluster.gpu_nodes)
    assert plugin.status.number_ready == len(cluster.gpu_nodes)
    pods = (
        client.CoreV1Api(api_client)
        .list_namespaced_pod(
            DRA_NAMESPACE, label_selector=",".join(f"{k}={v}" for k, v in plugin.spec.selector.match_labels.items())
        )
        .items
    )
    assert sorted(pod.spec.node_name for pod in pods) == sorted(cluster.gpu_nodes)
    assert all(pod.status.phase == "Running" for pod in pods)


def test_controller_runs_on_the_control_plane(api_client, cluster, dra_driver):
    deployments = client.AppsV1Api(api_client).list_namespaced_deployment(DRA_NAMESPACE).items
    controller = next(d for d in deployments if "controller" in d.metadata.name)
    assert controller.status.ready_replicas == 1
    pods = (
        client.CoreV1Api(api_client)
        .list_namespaced_pod(
            DRA_NAMESPACE, label_selector=",".join(f"{k}={v}" for k, v in controller.spec.selector.match_labels.items())
        )
        .items
    )
    assert [pod.spec.node_name for pod in pods] == cluster.control_plane_nodes


def test_device_classes_use_resource_v1(api_client, dra_driver):
    classes = client.CustomObjectsApi(api_client).list_cluster_custom_object("resource.k8s.io", "v1", "deviceclasses")
    names = {item["metadata"]["name"] for item in classes["items"]}
    assert {"compute-domain-daemon.nvidia.com", "compute-domain-default-channel.nvidia.com"} <= names


def example_compute_domain(shared_dir) -> dict:
    path = shared_dir / "reference" / "examples" / "dra-driver-nvbandwidth-test-job-1.yaml"
    return next(doc for doc in yaml.safe_load_all(path.read_text()) if doc and doc["kind"] == "ComputeDomain")


def create_compute_domain(api_client, namespace, body):
    group, version = body["apiVersion"].split("/")
    return client.CustomObjectsApi(api_client).create_namespaced_custom_object(
        group, version, namespace, "computedomains", body
    )


def test_example_compute_domain_is_accepted(api_client, namespace, dra_driver, shared_dir):
    body = example_compute_domain(shared_dir)
    created = create_compute_domain(api_client, namespace, body)
    assert created["spec"]["numNodes"] == 2
    # The schema's default is applied by the real CRD.
    assert created["spec"]["channel"]["allocationMode"] == "Single"


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda spec: spec.update(numNodes="two"), "spec.numNodes"),
        (lambda spec: spec.pop("channel"), "spec.channel"),
        (lambda spec: spec["channel"].update(allocationMode="Many"), "spec.channel.allocationMode"),
        (lambda spec: spec["channel"].pop("resourceClaimTemplate"), "spec.channel.resourceClaimTemplate"),
    ],
    ids=["numNodes-not-integer", "no-channel", "bad-allocationMode", "no-resourceClaimTemplate"],
)
def test_malformed_compute_domain_is_rejected(api_client, namespace, dra_driver, shared_dir, mutate, message):
    body = copy.deepcopy(example_compute_domain(shared_dir))
    mutate(body["spec"])
    with pytest.raises(ApiException) as raised:
        create_compute_domain(api_client, namespace, body)
    assert raised.value.status == 422
    assert message in raised.value.body
