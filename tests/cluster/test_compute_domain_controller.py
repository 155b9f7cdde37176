# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The DRA driver's real compute-domain controller and the real DRA allocator on the harness.

The dra-driver-nvidia-gpu 0.4.1 chart (the dra_driver role's default) is installed with helm; the harness runs the
controller built from sigs.k8s.io/dra-driver-nvidia-gpu v0.4.1 (``start_compute_domain_controller``) and has
published, at ``up``, the compute-domain ResourceSlices of every tray (what the kubelet plugin publishes). A
ComputeDomain gets its channel ResourceClaimTemplate from the controller; a pod claiming it is placed by the real
kube-scheduler, whose DRA allocator allocates a tray's ``channel-0``. A pod of another namespace cannot use that
template: templates are namespaced, its claim is never created and the pod is never scheduled.
"""

from __future__ import annotations

import time
from pathlib import Path

import cluster_harness as harness
import pytest
import role_runner
from kubernetes import client
from kubernetes.client.rest import ApiException

RELEASE = "nvidia-dra-driver-gpu"
DRA_NAMESPACE = "nvidia-dra-driver-gpu"
CHART = "dra-driver-nvidia-gpu-0.4.1"
CD_GROUP, CD_VERSION = "resource.nvidia.com", "v1beta1"
CD_CRDS = ("computedomains.resource.nvidia.com", "computedomaincliques.resource.nvidia.com")
VALUES = {
    "resources.gpus.enabled": "false",
    "resources.computeDomains.enabled": "true",
    "webhook.enabled": "false",
    "nvidiaDriverRoot": "/run/nvidia/driver",
}
CHANNEL_CLASS = "compute-domain-default-channel.nvidia.com"
# How long a pod of another namespace is watched not getting the channel.
ISOLATION_SECONDS = 20


def crd_names(api_client) -> set[str]:
    crds = client.ApiextensionsV1Api(api_client).list_custom_resource_definition().items
    return {crd.metadata.name for crd in crds}


@pytest.fixture(scope="module")
def controller(cluster, api_client, shared_dir, waiter):
    """The 0.4.1 chart installed and the real compute-domain controller running; both gone afterwards (with the
    ComputeDomain CRDs when this module brought them, so that later modules install their chart's own)."""
    had_crds = set(CD_CRDS) & crd_names(api_client)
    sets = [arg for key, value in VALUES.items() for arg in ("--set", f"{key}={value}")]
    with role_runner.HookCompleter(cluster):
        cluster.run("helm", "install", RELEASE, str(shared_dir / "charts" / CHART), "--namespace", DRA_NAMESPACE,
                    "--create-namespace", "--wait", "--timeout", "5m", *sets)
    run_dir = Path(cluster.state["run_dir"])
    try:
        process = harness.start_compute_domain_controller(run_dir, DRA_NAMESPACE)
        yield process
        # The tests' namespaces go with their ComputeDomains; the controller removes what it made for them
        # (finalizers, the IMEX daemon DaemonSets) before it stops.
        waiter("the ComputeDomains and their DaemonSets to be gone", lambda: not leftovers(api_client), 120)
    finally:
        harness.stop_compute_domain_controller(run_dir)
        with role_runner.HookCompleter(cluster):
            cluster.run("helm", "uninstall", RELEASE, "--namespace", DRA_NAMESPACE, "--wait", "--timeout", "2m",
                        check=False)
        extensions = client.ApiextensionsV1Api(api_client)
        for name in set(CD_CRDS) - had_crds:
            try:
                extensions.delete_custom_resource_definition(name)
            except ApiException as error:
                if error.status != 404:
                    raise


def leftovers(api_client) -> list[str]:
    """The ComputeDomains of any namespace and the controller's DaemonSets still there."""
    domains = client.CustomObjectsApi(api_client).list_cluster_custom_object(CD_GROUP, CD_VERSION, "computedomains")
    daemonsets = client.AppsV1Api(api_client).list_namespaced_daemon_set(
        DRA_NAMESPACE, label_selector="resource.nvidia.com/computeDomain").items
    return [f"{d['metadata']['namespace']}/{d['metadata']['name']}" for d in domains["items"]] + [
        f"{DRA_NAMESPACE}/{d.metadata.name}" for d in daemonsets]


def compute_domain(name: str, template: str, num_nodes: int = 2) -> dict:
    return {
        "apiVersion": f"{CD_GROUP}/{CD_VERSION}",
        "kind": "ComputeDomain",
        "metadata": {"name": name},
        "spec": {"numNodes": num_nodes, "channel": {"resourceClaimTemplate": {"name": template}}},
    }


def channel_pod(name: str, template: str) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "containers": [{"name": "main", "image": "busybox", "resources": {"claims": [{"name": "channel"}]}}],
            "resourceClaims": [{"name": "channel", "resourceClaimTemplateName": template}],
        },
    }


def create_domain(api_client, namespace: str, name: str, template: str) -> dict:
    return client.CustomObjectsApi(api_client).create_namespaced_custom_object(
        CD_GROUP, CD_VERSION, namespace, "computedomains", compute_domain(name, template)
    )


def claim_template(api_client, namespace: str, name: str):
    templates = client.ResourceV1Api(api_client).list_namespaced_resource_claim_template(namespace).items
    return next((t for t in templates if t.metadata.name == name), None)


@pytest.fixture
def other_namespace(make_namespace, namespace):
    """A second fresh namespace (a second tenant), deleted afterwards."""
    return make_namespace(f"{namespace[:50]}-b")


def test_every_tray_publishes_a_channel_and_a_daemon(api_client, cluster):
    slices = client.ResourceV1Api(api_client).list_resource_slice().items
    ours = {s.spec.node_name: s for s in slices if s.spec.driver == harness.COMPUTE_DOMAIN_DRIVER}
    assert sorted(ours) == sorted(cluster.gpu_nodes)
    for node, item in ours.items():
        assert item.spec.pool.name == node
        assert item.spec.pool.resource_slice_count == 1
        assert [owner.kind + "/" + owner.name for owner in item.metadata.owner_references] == [f"Node/{node}"]
        devices = {d.name: {k: v.string or v.int for k, v in d.attributes.items()} for d in item.spec.devices}
        assert devices == {"channel-0": {"type": "channel", "id": 0}, "daemon-0": {"type": "daemon", "id": 0}}


def test_controller_needs_the_chart(cluster):
    """Without the chart's CRDs and controller Deployment in the namespace there is nothing to run: an error says so,
    and no process is started or recorded."""
    run_dir = Path(cluster.state["run_dir"])
    with pytest.raises(harness.HarnessError, match="DRA driver chart"):
        harness.start_compute_domain_controller(run_dir, "no-dra-driver-here", timeout=2)
    assert "compute-domain-controller" not in {p["name"] for p in harness.read_state(run_dir)["processes"]}


def test_controller_creates_the_channel_claim_template(api_client, namespace, controller, waiter):
    domain = create_domain(api_client, namespace, "imex", "imex-channel")
    uid = domain["metadata"]["uid"]
    template = waiter("the controller's ResourceClaimTemplate", lambda: claim_template(api_client, namespace,
                                                                                       "imex-channel"), 60)
    assert template.metadata.labels["resource.nvidia.com/computeDomain"] == uid
    request = template.spec.spec.devices.requests[0]
    assert (request.name, request.exactly.device_class_name) == ("channel", CHANNEL_CLASS)
    config = template.spec.spec.devices.config[0]
    assert config.requests == ["channel"]
    assert config.opaque.driver == harness.COMPUTE_DOMAIN_DRIVER
    assert config.opaque.parameters["kind"] == "ComputeDomainChannelConfig"
    assert config.opaque.parameters["domainID"] == uid
    # The IMEX daemons: a DaemonSet and its daemon claim template in the driver's namespace, labelled by the domain.
    selector = f"resource.nvidia.com/computeDomain={uid}"
    daemonsets = waiter("the IMEX daemon DaemonSet", lambda: client.AppsV1Api(api_client).list_namespaced_daemon_set(
        DRA_NAMESPACE, label_selector=selector).items, 60)
    assert len(daemonsets) == 1
    daemon_templates = waiter("the daemon claim template", lambda: client.ResourceV1Api(
        api_client).list_namespaced_resource_claim_template(DRA_NAMESPACE, label_selector=selector).items, 60)
    assert daemon_templates[0].spec.spec.devices.requests[0].exactly.device_class_name == (
        "compute-domain-daemon.nvidia.com"
    )
    print(f"\ncompute-domain controller created: ResourceClaimTemplate {namespace}/imex-channel, DaemonSet "
          f"{DRA_NAMESPACE}/{daemonsets[0].metadata.name}, ResourceClaimTemplate "
          f"{DRA_NAMESPACE}/{daemon_templates[0].metadata.name}")


def test_pod_claiming_the_channel_is_scheduled_and_allocated(api_client, cluster, namespace, controller, waiter):
    create_domain(api_client, namespace, "imex", "imex-channel")
    waiter("the channel claim template", lambda: claim_template(api_client, namespace, "imex-channel"), 60)
    core = client.CoreV1Api(api_client)
    core.create_namespaced_pod(namespace, channel_pod("worker", "imex-channel"))
    pod = waiter("the pod to be scheduled", lambda: (
        (p := core.read_namespaced_pod("worker", namespace)).spec.node_name and p), 60)
    assert pod.spec.node_name in cluster.gpu_nodes
    claim_name = pod.status.resource_claim_statuses[0].resource_claim_name
    claim = client.ResourceV1Api(api_client).read_namespaced_resource_claim(claim_name, namespace)
    results = claim.status.allocation.devices.results
    assert [(r.request, r.driver, r.pool, r.device) for r in results] == [
        ("channel", harness.COMPUTE_DOMAIN_DRIVER, pod.spec.node_name, "channel-0")
    ]
    assert [ref.name for ref in claim.status.reserved_for] == ["worker"]


def test_pod_of_another_namespace_cannot_use_the_template(api_client, namespace, other_namespace, controller,
                                                          waiter):
    create_domain(api_client, namespace, "imex", "imex-channel")
    waiter("the channel claim template", lambda: claim_template(api_client, namespace, "imex-channel"), 60)
    core = client.CoreV1Api(api_client)
    core.create_namespaced_pod(other_namespace, channel_pod("intruder", "imex-channel"))
    time.sleep(ISOLATION_SECONDS)
    pod = core.read_namespaced_pod("intruder", other_namespace)
    assert pod.spec.node_name is None
    assert pod.status.phase == "Pending"
    assert not pod.status.resource_claim_statuses
    assert client.ResourceV1Api(api_client).list_namespaced_resource_claim(other_namespace).items == []
    events = core.list_namespaced_event(other_namespace, field_selector="involvedObject.name=intruder").items
    messages = [f"{e.source.component or e.reporting_component}: {e.reason}: {e.message}" for e in events]
    print("\nintruder pod events:\n" + "\n".join(messages))
    assert any('resourceclaimtemplate.resource.k8s.io "imex-channel" not found' in m for m in messages), messages


def test_copied_template_in_another_namespace_is_allocated(api_client, namespace, other_namespace, controller,
                                                           waiter):
    """The allocator does not read the channel config: a copy of the template (the domain's ID in it) made in
    another namespace gets a channel allocated. The refusal is the kubelet plugin's, at prepare (it asserts the
    claim's namespace is the ComputeDomain's), and no kubelet plugin runs under kwok: the isolation check must
    look at more than the allocation."""
    create_domain(api_client, namespace, "imex", "imex-channel")
    original = waiter("the channel claim template", lambda: claim_template(api_client, namespace, "imex-channel"), 60)
    resource = client.ResourceV1Api(api_client)
    copy = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "imex-channel"},
        "spec": api_client.sanitize_for_serialization(original.spec),
    }
    resource.create_namespaced_resource_claim_template(other_namespace, copy)
    core = client.CoreV1Api(api_client)
    core.create_namespaced_pod(other_namespace, channel_pod("intruder", "imex-channel"))
    pod = waiter("the intruder to be scheduled", lambda: (
        (p := core.read_namespaced_pod("intruder", other_namespace)).spec.node_name and p), 60)
    claim_name = pod.status.resource_claim_statuses[0].resource_claim_name
    claim = resource.read_namespaced_resource_claim(claim_name, other_namespace)
    assert claim.status.allocation.devices.results[0].device == "channel-0"
    assert claim.status.allocation.devices.config[0].opaque.parameters["domainID"] == original.metadata.labels[
        "resource.nvidia.com/computeDomain"]
