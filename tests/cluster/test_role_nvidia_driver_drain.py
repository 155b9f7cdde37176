# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The drain of a wave, ComputeDomain workloads first (issue 42), on the real control plane.

``roles/nvidia_driver/tasks/drain.yml`` runs as ``wave.yml`` includes it, over local hosts named after two kwok trays
(the wave); a third tray is outside it. A multi-node job of a ComputeDomain has a pod on each of the three trays,
each holding a ResourceClaim whose allocation the test writes as the kube-scheduler's DRA allocator would (driver
``compute-domain.nvidia.com``, pool the node, device ``channel-0``, the domain's ``ComputeDomainChannelConfig``; no
ComputeDomain exists, so the test marks the pods prepared, as the harness's kubelet plugin stand-in would, and kwok
runs them). An ordinary pod runs on a tray of the wave. The pods are owned by a ConfigMap, which stands for their
Job (an owner that is not a DaemonSet is all a drain asks of a pod).

Check mode names the workload and changes nothing. The run cordons both trays, evicts the job's two pods on them
together (the pods are read every 0.2 s meanwhile) before the drain evicts the ordinary pod, leaves the job's pod
outside the wave and says the workload ends there too; a second run changes nothing. About 25 s besides the
harness's start.
"""

from __future__ import annotations

import contextlib
import re
import sys
import threading

import pytest
import role_runner
import yaml
from cluster_harness.common import PREPARED_ANNOTATION
from kubernetes import client

DOMAIN_UID = "7b0e5c1d-2f3a-4b6c-8d9e-0a1b2c3d4e5f"
RESOURCE = ("resource.k8s.io", "v1", "resourceclaims")


def claim(name: str, namespace: str) -> dict:
    """A claim as kube-controller-manager makes it from the ComputeDomain's channel template."""
    config = {"opaque": {"driver": "compute-domain.nvidia.com",
                         "parameters": {"apiVersion": "resource.nvidia.com/v1beta1",
                                        "kind": "ComputeDomainChannelConfig", "domainID": DOMAIN_UID}},
              "requests": ["channel"]}
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"devices": {"requests": [{"name": "channel", "exactly": {
                "deviceClassName": "compute-domain-default-channel.nvidia.com"}}], "config": [config]}}}


def allocation(node: str, pod: client.V1Pod) -> dict:
    """The status the DRA allocator writes for ``node``'s channel-0, reserved for ``pod``."""
    config = {"source": "FromClaim", "requests": ["channel"],
              "opaque": {"driver": "compute-domain.nvidia.com",
                         "parameters": {"apiVersion": "resource.nvidia.com/v1beta1",
                                        "kind": "ComputeDomainChannelConfig", "domainID": DOMAIN_UID}}}
    return {"status": {
        "allocation": {"devices": {"results": [{"request": "channel", "driver": "compute-domain.nvidia.com",
                                                "pool": node, "device": "channel-0"}], "config": [config]},
                       "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                           {"key": "metadata.name", "operator": "In", "values": [node]}]}]}},
        "reservedFor": [{"resource": "pods", "name": pod.metadata.name, "uid": pod.metadata.uid}]}}


def pod(name: str, node: str, owner: client.V1ConfigMap | None, claim_name: str | None = None) -> dict:
    metadata = {"name": name, "labels": {"app": "job" if claim_name else "web"}}
    if owner:
        metadata["ownerReferences"] = [{"apiVersion": "v1", "kind": "ConfigMap", "name": owner.metadata.name,
                                        "uid": owner.metadata.uid}]
    spec = {"nodeName": node, "terminationGracePeriodSeconds": 0,
            "containers": [{"name": "main", "image": "busybox"}]}
    if claim_name:
        metadata["annotations"] = {PREPARED_ANNOTATION: "true"}
        spec["containers"][0]["resources"] = {"claims": [{"name": "channel"}]}
        spec["resourceClaims"] = [{"name": "channel", "resourceClaimName": claim_name}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}


class Deletions:
    """Reads a namespace's pods every 0.2 s while a play runs; ``rounds[name]`` is the first round in which the pod
    was marked for deletion or gone (eviction on kwok marks and removes a pod within a round or two)."""

    def __init__(self, api_client, namespace: str):
        self.core = client.CoreV1Api(api_client)
        self.namespace = namespace
        self.rounds: dict[str, int] = {}
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.known = names(self.core, namespace)

    def _loop(self):
        number = 0
        while not self.stop.wait(0.2):
            number += 1
            try:
                items = self.core.list_namespaced_pod(self.namespace).items
            except client.ApiException:  # a busy API server: the next round reads again
                continue
            there = {item.metadata.name for item in items if not item.metadata.deletion_timestamp}
            for name in self.known - there:
                self.rounds.setdefault(name, number)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join(timeout=10)


def names(core, namespace: str) -> set[str]:
    return {item.metadata.name for item in core.list_namespaced_pod(namespace).items}


def wave_runner(cluster, directory, wave: list[str], timeout: int) -> tuple[role_runner.Runner, object]:
    """A runner whose inventory holds the wave's hosts (local, named after their trays) and the play that includes
    drain.yml as wave.yml does; return it and the play's path."""
    runner = role_runner.Runner(cluster, directory, {}, {})
    local = {"ansible_connection": "local", "ansible_python_interpreter": sys.executable}
    runner.inventory.write_text(yaml.safe_dump({"all": {"hosts": {"localhost": local}, "children": {
        "gpu_nodes": {"hosts": dict.fromkeys(wave, local)}}}}))
    play = directory / "drain.yml"
    play.write_text(yaml.safe_dump([{
        "name": "The drain of one wave, as wave.yml includes it", "hosts": "gpu_nodes", "gather_facts": False,
        "vars": {"nvidia_driver_reboot_drain": True, "nvidia_driver_kubernetes_node": "{{ inventory_hostname }}",
                 "nvidia_driver_kubeconfig": str(cluster.kubeconfig), "nvidia_driver_drain_timeout": timeout,
                 "__nvidia_driver_wave": {"number": 1, "hosts": wave}},
        "tasks": [{"name": "Publish the node of the host, as wave.yml does",
                   "ansible.builtin.set_fact": {"__nvidia_driver_node": "{{ inventory_hostname }}"}},
                  {"name": "Drain the wave", "ansible.builtin.include_role": {
                      "name": "gpufabric.cluster.nvidia_driver", "tasks_from": "drain"}}]}], sort_keys=False))
    return runner, play


def start_pods(api_client, waiter, namespace: str, placed: dict[str, str], others: dict[str, str],
               owned: bool = True) -> None:
    """The job's pods (``placed``: name to node), each with its allocated channel claim, and ordinary pods
    (``others``), owned by a ConfigMap (or by nothing), running."""
    core = client.CoreV1Api(api_client)
    custom = client.CustomObjectsApi(api_client)
    owner = core.read_namespaced_config_map("job", namespace) if owned else None
    for name in placed:
        custom.create_namespaced_custom_object(*RESOURCE[:2], namespace, RESOURCE[2], claim(f"{name}-channel",
                                                                                            namespace))
    made = {name: core.create_namespaced_pod(namespace, pod(name, node, owner, f"{name}-channel"))
            for name, node in placed.items()}
    for name, node in others.items():
        core.create_namespaced_pod(namespace, pod(name, node, owner))
    for name, node in placed.items():
        custom.patch_namespaced_custom_object_status(*RESOURCE[:2], namespace, RESOURCE[2], f"{name}-channel",
                                                     allocation(node, made[name]))
    waiter("the pods to run", lambda: all(
        item.status.phase == "Running" for item in core.list_namespaced_pod(namespace).items), 60)


@contextlib.contextmanager
def scratch_namespace(api_client, waiter, namespace: str, nodes: list[str]):
    """A namespace with the ConfigMap that owns the pods; afterwards it goes and ``nodes`` are uncordoned."""
    core = client.CoreV1Api(api_client)
    core.create_namespace({"metadata": {"name": namespace, "labels": {"gpufabric.cluster/test": "true"}}})
    try:
        waiter("the namespace's default service account",
               lambda: core.list_namespaced_service_account(namespace).items, 30)
        core.create_namespaced_config_map(namespace, {"metadata": {"name": "job"}})
        yield core
    finally:
        for node in nodes:
            core.patch_node(node, {"spec": {"unschedulable": None}})
        core.delete_namespace(namespace)


@pytest.fixture(scope="module")
def runs(api_client, cluster, tmp_path_factory, waiter):
    first, second, outside = cluster.gpu_nodes[-3:]
    namespace = "drain-compute-domain"
    runner, play = wave_runner(cluster, tmp_path_factory.mktemp("drain"), [first, second], 60)
    with scratch_namespace(api_client, waiter, namespace, [first, second]) as core:
        start_pods(api_client, waiter, namespace, {"worker-0": first, "worker-1": second, "worker-2": outside},
                   {"web": first})
        checked = runner.run(play, "--check", timeout=300)
        after_check = (names(core, namespace), [core.read_node(node).spec.unschedulable for node in (first, second)])
        with Deletions(api_client, namespace) as deletions:
            drained = runner.run(play, timeout=300)
        left = names(core, namespace)
        cordoned = [core.read_node(node).spec.unschedulable for node in (first, second, outside)]
        again = runner.run(play, timeout=300)
        yield {"checked": checked, "after_check": after_check, "drained": drained, "rounds": deletions.rounds,
               "left": left, "cordoned": cordoned, "again": again, "nodes": (first, second, outside)}


@pytest.fixture(scope="module")
def held(api_client, cluster, tmp_path_factory, waiter):
    """A PodDisruptionBudget that allows no disruption holds the job (4 s timeout), then a job pod no controller
    owns; then nvidia_driver_drain_stuck_pods delete."""
    first, second = cluster.gpu_nodes[-5:-3]
    namespace = "drain-compute-domain-held"
    runner, play = wave_runner(cluster, tmp_path_factory.mktemp("held"), [first, second], 4)
    with scratch_namespace(api_client, waiter, namespace, [first, second]) as core:
        start_pods(api_client, waiter, namespace, {"worker-0": first, "worker-1": second}, {"web": first})
        client.PolicyV1Api(api_client).create_namespaced_pod_disruption_budget(namespace, {
            "metadata": {"name": "job"},
            "spec": {"maxUnavailable": 0, "selector": {"matchLabels": {"app": "job"}}}})
        budget = runner.run(play, timeout=300)
        after_budget = (names(core, namespace), [core.read_node(node).spec.unschedulable for node in (first, second)])
        client.PolicyV1Api(api_client).delete_namespaced_pod_disruption_budget("job", namespace)
        start_pods(api_client, waiter, namespace, {"solo": second}, {}, owned=False)
        unmanaged = runner.run(play, timeout=300)
        after_unmanaged = names(core, namespace)
        deleted = runner.run(play, extra_vars={"nvidia_driver_drain_stuck_pods": "delete"}, timeout=300)
        yield {"budget": budget, "after_budget": after_budget, "unmanaged": unmanaged,
               "after_unmanaged": after_unmanaged, "deleted": deleted, "left": names(core, namespace),
               "nodes": (first, second)}


def test_check_mode_names_the_workload_and_changes_nothing(runs):
    first, second, outside = runs["nodes"]
    checked = " ".join(runs["checked"].output.split())
    assert runs["checked"].rc == 0, runs["checked"].output
    assert (f"ComputeDomain {DOMAIN_UID}: 2 pod(s) on {first}, {second} (drain-compute-domain/worker-0, "
            f"drain-compute-domain/worker-1) leave first, all at once; it also runs on {outside} outside the wave: "
            f"the workload ends there too") in checked
    assert runs["after_check"] == ({"worker-0", "worker-1", "worker-2", "web"}, [None, None])


def test_the_workload_leaves_together_before_the_drain(runs):
    assert runs["drained"].rc == 0, runs["drained"].output
    rounds = runs["rounds"]
    assert set(rounds) == {"worker-0", "worker-1", "web"}, rounds
    assert rounds["web"] > max(rounds["worker-0"], rounds["worker-1"]), rounds


def test_the_pod_outside_the_wave_stays_and_only_the_wave_is_cordoned(runs):
    assert runs["left"] == {"worker-2"}
    assert runs["cordoned"] == [True, True, None]


def test_a_second_run_changes_nothing(runs):
    again = runs["again"]
    assert again.rc == 0, again.output
    assert "no ComputeDomain workload on the nodes of the wave" in again.output
    counts = dict(re.findall(r"^(\S+)\s*:\s*ok=\d+\s+changed=(\d+)", again.output, re.M))
    assert set(counts) == set(runs["nodes"][:2]) and set(counts.values()) == {"0"}, again.output


def test_a_budget_that_holds_the_job_fails_the_wave_before_any_node_is_drained(held):
    first, second = held["nodes"]
    budget = held["budget"]
    output = " ".join(budget.output.split())
    assert budget.rc != 0
    for host in (first, second):
        assert (f"host {host}: the ComputeDomain workloads of wave 1 did not leave (after 4 seconds these pods are "
                f"still there: drain-compute-domain-held/worker-0, drain-compute-domain-held/worker-1; their "
                f"eviction was refused for a PodDisruptionBudget: drain-compute-domain-held/worker-0, "
                f"drain-compute-domain-held/worker-1; nvidia_driver_drain_timeout: 4); Kubernetes node {host} stays "
                f"cordoned and nothing of the wave changes") in output
    assert held["after_budget"] == ({"worker-0", "worker-1", "web"}, [True, True])


def test_a_job_pod_no_controller_owns_fails_the_wave_and_nothing_leaves(held):
    output = " ".join(held["unmanaged"].output.split())
    assert held["unmanaged"].rc != 0
    assert ("did not leave (a drain does not evict drain-compute-domain-held/solo (not managed by a controller); "
            "nvidia_driver_drain_stuck_pods: delete deletes them)") in output
    assert held["after_unmanaged"] == {"worker-0", "worker-1", "web", "solo"}


def test_with_delete_every_pod_of_the_wave_goes(held):
    assert held["deleted"].rc == 0, held["deleted"].output
    assert held["left"] == set()
