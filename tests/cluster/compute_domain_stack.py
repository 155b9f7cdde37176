# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The DRA driver's ComputeDomain side on the harness, for the test modules that need a domain to come up.

``installed`` installs the dra-driver-nvidia-gpu 0.4.1 chart (the dra_driver role's default) with ComputeDomains on
and the GPU side off, and runs the real compute-domain controller built from sigs.k8s.io/dra-driver-nvidia-gpu
v0.4.1 as the chart configures it. The kubelet plugin's part is the harness's stand-in (TEST FIXTURE,
``cluster_harness.compute_domain_kubelet_plugin``), which runs from ``up``. On the way out it waits until the
controller removed what it made for the tests' domains, stops it, uninstalls the chart, and deletes the
ComputeDomain CRDs when it brought them (so that later modules install their chart's own).
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import cluster_harness as harness
import role_runner
from kubernetes import client
from kubernetes.client.rest import ApiException

RELEASE = "nvidia-dra-driver-gpu"
DRA_NAMESPACE = "nvidia-dra-driver-gpu"
CHART = "dra-driver-nvidia-gpu-0.4.1"
CD_GROUP, CD_VERSION = "resource.nvidia.com", "v1beta1"
CD_CRDS = ("computedomains.resource.nvidia.com", "computedomaincliques.resource.nvidia.com")
DOMAIN_LABEL = "resource.nvidia.com/computeDomain"
VALUES = {
    "resources.gpus.enabled": "false",
    "resources.computeDomains.enabled": "true",
    "webhook.enabled": "false",
    "nvidiaDriverRoot": "/run/nvidia/driver",
}


def crd_names(api_client) -> set[str]:
    crds = client.ApiextensionsV1Api(api_client).list_custom_resource_definition().items
    return {crd.metadata.name for crd in crds}


def leftovers(api_client) -> list[str]:
    """The ComputeDomains of any namespace and the controller's DaemonSets still there."""
    domains = client.CustomObjectsApi(api_client).list_cluster_custom_object(CD_GROUP, CD_VERSION, "computedomains")
    daemonsets = client.AppsV1Api(api_client).list_namespaced_daemon_set(
        DRA_NAMESPACE, label_selector=DOMAIN_LABEL).items
    return [f"{d['metadata']['namespace']}/{d['metadata']['name']}" for d in domains["items"]] + [
        f"{DRA_NAMESPACE}/{d.metadata.name}" for d in daemonsets]


@contextlib.contextmanager
def installed(cluster, api_client, shared_dir: Path, waiter):
    """The 0.4.1 chart installed and the compute-domain controller running (the process is yielded)."""
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
