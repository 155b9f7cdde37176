# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Paths, pinned names and ports, the configuration of ``up``, the harness's error and its progress log."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent  # tests/cluster
ROOT = HERE.parent.parent
BUILD_SCRIPT = HERE / "build.sh"
VERSIONS_FILE = HERE / "versions.env"
DEFAULT_RUN_DIR = ROOT / ".build" / "cluster" / "run"
SHARED = ROOT.parent / "shared"

# The cluster the unit fixtures describe: one NVL72 rack is one NVLink clique.
CLUSTER_UUID = "3c1a5f2e-9b7d-4c2a-8e6f-1d0b7a9c4e21"
TRAYS_PER_RACK = 18
GPUS_PER_TRAY = 4
# Pods annotated so go Running -> Succeeded (kwok's pod-complete stage selects them).
COMPLETE_ANNOTATION = "gpufabric.cluster/kwok-complete"
# kwok's kubelet endpoint serves pod logs from files: ClusterLogs objects (kwok.x-k8s.io/v1alpha1) say which.
# A ClusterLogs annotated COMPLETE_ANNOTATION: "true" also has the pods it serves finish (the pod completer).
KWOK_API = "/apis/kwok.x-k8s.io/v1alpha1"
KWOK_CRDS = {"clusterlogs": "ClusterLogs"}  # plural: kind
MANAGED_BY_LABEL = "app.kubernetes.io/managed-by"
KWOK_NODE_ANNOTATION = "kwok.x-k8s.io/node"
SERVICE_CIDR = "10.96.0.0/16"
POD_CIDR = "10.244.0.0/16"
BINARIES = (
    "etcd",
    "kube-apiserver",
    "kube-controller-manager",
    "kube-scheduler",
    "kwok",
    "kubectl",
    "helm",
    "mpi-operator",
    "compute-domain-controller",
)
# The Kubeflow MPI operator: its manifest (read in place, never copied; the CRD is applied at ``up``), the
# field manager of that apply, and its leader-election Lease (kube-system/mpi-operator).
MPI_OPERATOR_MANIFEST = "manifests/mpi-operator-{version}.yaml"  # under SHARED, MPI_OPERATOR_VERSION of versions.env
MPI_OPERATOR_CRD = "mpijobs.kubeflow.org"
MPI_OPERATOR_LOCK_NAMESPACE = "kube-system"
FIELD_MANAGER = "gpufabric-cluster-harness"
# kwok: a pod annotated COMPLETE_ANNOTATION and this one ends Failed with that (non-zero) exit code.
EXIT_CODE_ANNOTATION = "gpufabric.cluster/kwok-exit-code"
# kwok starts a pod with resource claims only once the compute-domain kubelet plugin stand-in (TEST FIXTURE) has
# prepared them all and annotated it so; DOMAIN_ANNOTATION: the ComputeDomain whose channel it holds on its node.
PREPARED_ANNOTATION = "gpufabric.cluster/kwok-claims-prepared"
DOMAIN_ANNOTATION = "gpufabric.cluster/kwok-compute-domain"
# Ports: name -> (environment variable, what it is).
PORTS = {
    "etcd": ("GPUFABRIC_CLUSTER_ETCD_PORT", "etcd client"),
    "etcd_peer": ("GPUFABRIC_CLUSTER_ETCD_PEER_PORT", "etcd peer"),
    "apiserver": ("GPUFABRIC_CLUSTER_APISERVER_PORT", "kube-apiserver"),
    "controller_manager": ("GPUFABRIC_CLUSTER_CONTROLLER_MANAGER_PORT", "kube-controller-manager"),
    "scheduler": ("GPUFABRIC_CLUSTER_SCHEDULER_PORT", "kube-scheduler"),
    "kwok": ("GPUFABRIC_CLUSTER_KWOK_PORT", "kwok"),
    "mpi_operator": ("GPUFABRIC_CLUSTER_MPI_OPERATOR_PORT", "mpi-operator health"),
}


class HarnessError(Exception):
    """A step of the harness failed; the message names the cause."""


@dataclasses.dataclass
class Config:
    """What ``up`` starts."""

    run_dir: Path = DEFAULT_RUN_DIR
    bin_dir: Path | None = None
    gpu_nodes: int = TRAYS_PER_RACK
    # Trays of one NVLink clique (the label nvidia.com/gpu.clique): a rack by default, 1..TRAYS_PER_RACK.
    trays_per_clique: int = TRAYS_PER_RACK
    control_plane_nodes: int = 1
    ports: dict[str, int] = dataclasses.field(default_factory=dict)
    timeout: float = 120.0
    # Run the helm-hook-completer beside kwok (for molecule scenarios, where no test drives the hooks).
    complete_helm_hooks: bool = False
    # Start the DRA driver's compute-domain controller once its chart is installed in this namespace (empty: never;
    # for molecule scenarios, where a role installs the chart).
    compute_domain_controller_namespace: str = ""


def log(message: str) -> None:
    """Progress on stderr, so that stdout stays machine-readable."""
    print(f"cluster harness: {message}", file=sys.stderr, flush=True)
