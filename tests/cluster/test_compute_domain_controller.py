# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The DRA driver's real compute-domain controller and the real DRA allocator on the harness.

The dra-driver-nvidia-gpu 0.4.1 chart (the dra_driver role's default) is installed with helm; the harness runs the
controller built from sigs.k8s.io/dra-driver-nvidia-gpu v0.4.1 (``start_compute_domain_controller``) and has
published, at ``up``, the compute-domain ResourceSlices of every tray (what the kubelet plugin publishes). A
ComputeDomain gets its channel ResourceClaimTemplate from the controller; a pod claiming it is placed by the real
kube-scheduler, whose DRA allocator allocates a tray's ``channel-0``. The harness's stand-in for the driver's
kubelet plugin (TEST FIXTURE, ``cluster_harness.compute_domain_kubelet_plugin``) then prepares the claim as the
plugin does: it labels the node with the domain, the controller's IMEX daemon DaemonSet starts a daemon there, and
the pod starts once that daemon runs. A pod of another namespace cannot use that template: templates are namespaced,
its claim is never created and the pod is never scheduled; a copy of the template is allocated but refused at
prepare, so that pod never starts either, unless the namespace assertion is turned off.
"""

from __future__ import annotations

import time
from pathlib import Path

import cluster_harness as harness
import compute_domain_stack
import pytest
from kubernetes import client

DRA_NAMESPACE = compute_domain_stack.DRA_NAMESPACE
CD_GROUP, CD_VERSION = compute_domain_stack.CD_GROUP, compute_domain_stack.CD_VERSION
CHANNEL_CLASS = "compute-domain-default-channel.nvidia.com"
DOMAIN_LABEL = compute_domain_stack.DOMAIN_LABEL
# How long a pod of another namespace is watched not getting the channel.
ISOLATION_SECONDS = 20


@pytest.fixture(scope="module")
def controller(cluster, api_client, shared_dir, waiter):
    """The 0.4.1 chart installed and the real compute-domain controller running; all gone afterwards."""
    with compute_domain_stack.installed(cluster, api_client, shared_dir, waiter) as process:
        yield process


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
    # Prepared: the node carries the domain, the domain's IMEX daemon runs there, then the pod runs.
    uid = claim.status.allocation.devices.config[0].opaque.parameters["domainID"]
    node = waiter("the node's domain label", lambda: (
        (n := core.read_node(pod.spec.node_name)).metadata.labels.get(DOMAIN_LABEL) == uid and n), 60)
    assert node.metadata.labels[DOMAIN_LABEL] == uid
    daemons = waiter("the domain's IMEX daemon on the node", lambda: [
        d for d in core.list_namespaced_pod(DRA_NAMESPACE, label_selector=f"{DOMAIN_LABEL}={uid}").items
        if d.spec.node_name == pod.spec.node_name and d.status.phase == "Running"], 60)
    assert len(daemons) == 1
    waiter("the pod to run", lambda: core.read_namespaced_pod("worker", namespace).status.phase == "Running", 60)
    # Unprepared when the pod goes: the label goes, and with it the daemon.
    core.delete_namespaced_pod("worker", namespace, grace_period_seconds=0)
    waiter("the node's domain label to go", lambda: DOMAIN_LABEL not in (
        core.read_node(pod.spec.node_name).metadata.labels or {}), 60)


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


def copy_template_and_intrude(api_client, namespace, other_namespace, waiter):
    """A copy of the domain's channel template in ``other_namespace`` and a pod claiming it; return the pod
    once scheduled, with its claim, and the domain's template."""
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
    return pod, resource.read_namespaced_resource_claim(claim_name, other_namespace), original


def test_copied_template_in_another_namespace_is_allocated_and_refused_at_prepare(
        api_client, namespace, other_namespace, controller, waiter):
    """The allocator does not read the channel config: a copy of the template (the domain's ID in it) made in
    another namespace gets a channel allocated. The refusal is the kubelet plugin's, at prepare: it asserts the
    claim's namespace is the ComputeDomain's. The pod stays Pending, with the kubelet's event saying why."""
    pod, claim, original = copy_template_and_intrude(api_client, namespace, other_namespace, waiter)
    assert claim.status.allocation.devices.results[0].device == "channel-0"
    assert claim.status.allocation.devices.config[0].opaque.parameters["domainID"] == original.metadata.labels[
        DOMAIN_LABEL]
    core = client.CoreV1Api(api_client)
    events = waiter("the prepare refusal", lambda: core.list_namespaced_event(
        other_namespace, field_selector="involvedObject.name=intruder,reason=FailedPrepareDynamicResources").items, 60)
    assert "the ResourceClaim's namespace is different than the ComputeDomain's namespace" in events[0].message
    time.sleep(ISOLATION_SECONDS)
    assert core.read_namespaced_pod("intruder", other_namespace).status.phase == "Pending"
    assert DOMAIN_LABEL not in (core.read_node(pod.spec.node_name).metadata.labels or {})


def test_without_the_namespace_assertion_the_copy_gets_in(api_client, cluster, namespace, other_namespace,
                                                          controller, waiter):
    """The same intruder with the stand-in's namespace assertion off (a driver that lost it) runs: what
    validate_compute_domain's isolation check must catch."""
    run_dir = Path(cluster.state["run_dir"])
    harness.set_namespace_assertion(run_dir, False)
    try:
        pod, claim, _original = copy_template_and_intrude(api_client, namespace, other_namespace, waiter)
        core = client.CoreV1Api(api_client)
        waiter("the intruder to run", lambda: core.read_namespaced_pod(
            "intruder", other_namespace).status.phase == "Running", 60)
        uid = claim.status.allocation.devices.config[0].opaque.parameters["domainID"]
        assert core.read_node(pod.spec.node_name).metadata.labels[DOMAIN_LABEL] == uid
    finally:
        harness.set_namespace_assertion(run_dir, True)
