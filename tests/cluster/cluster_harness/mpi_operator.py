# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Kubeflow MPI operator: its MPIJob CRD applied from the manifest in ../shared, its controller's arguments.

The controller (``mpi-operator`` of build.sh) exits at start when the MPIJob CRD is not served, so ``up``
server-side applies the CRD from the pinned manifest first; the validate roles applying the whole manifest
later share the fields (same values, no conflict). It runs cluster-wide with leader election on a Lease in
kube-system and its health server on 127.0.0.1.
"""

from __future__ import annotations

from pathlib import Path

from cluster_harness.api import Api, wait_for
from cluster_harness.common import (
    FIELD_MANAGER,
    MPI_OPERATOR_CRD,
    MPI_OPERATOR_LOCK_NAMESPACE,
    MPI_OPERATOR_MANIFEST,
    SHARED,
    HarnessError,
)

CRD_PATH = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
LEASE = f"/apis/coordination.k8s.io/v1/namespaces/{MPI_OPERATOR_LOCK_NAMESPACE}/leases/mpi-operator"


def manifest_path(version: str) -> Path:
    return SHARED / MPI_OPERATOR_MANIFEST.format(version=version)


def mpijob_crd(version: str) -> dict:
    """The MPIJob CustomResourceDefinition of the operator's manifest (read in place from ../shared)."""
    import yaml

    path = manifest_path(version)
    if not path.is_file():
        raise HarnessError(f"the MPI operator manifest {path} is missing (../shared beside the checkout)")
    for document in yaml.safe_load_all(path.read_text()):
        if (
            isinstance(document, dict)
            and document.get("kind") == "CustomResourceDefinition"
            and document.get("metadata", {}).get("name") == MPI_OPERATOR_CRD
        ):
            return document
    raise HarnessError(f"{path} has no CustomResourceDefinition {MPI_OPERATOR_CRD}")


def apply_crd(api: Api, version: str, timeout: float) -> None:
    """Server-side apply the MPIJob CRD and wait until the API server serves kubeflow.org/v2beta1 mpijobs."""
    api.request(
        "PATCH",
        f"{CRD_PATH}/{MPI_OPERATOR_CRD}?fieldManager={FIELD_MANAGER}&force=true",
        mpijob_crd(version),
        content_type="application/apply-patch+yaml",
    )

    def served() -> bool:
        item = api.request("GET", f"{CRD_PATH}/{MPI_OPERATOR_CRD}")
        conditions = (item.get("status") or {}).get("conditions") or []
        if not any(c["type"] == "Established" and c["status"] == "True" for c in conditions):
            return False
        api.request("GET", "/apis/kubeflow.org/v2beta1/mpijobs")
        return True

    wait_for(f"the CRD {MPI_OPERATOR_CRD} to be served", served, timeout)


def operator_args(kubeconfig: Path, health_port: int) -> tuple[list[str], dict[str, str]]:
    """Arguments and environment of the controller (flags of v0.6.0's cmd/mpi-operator)."""
    args = [
        f"--kubeConfig={kubeconfig}",
        f"--lock-namespace={MPI_OPERATOR_LOCK_NAMESPACE}",
        "--monitoring-port=0",  # no metrics server
        "--threadiness=2",
        "--kube-api-qps=50",
        "--kube-api-burst=100",
        "-v=2",
    ]
    # build.sh's one-line change: the health server's address (v0.6.0 binds ":8080").
    return args, {"GPUFABRIC_MPI_OPERATOR_HEALTH_ADDR": f"127.0.0.1:{health_port}", "KUBECONFIG": str(kubeconfig)}


def leading(api: Api) -> bool:
    """The controller holds its Lease (it starts its informers and workers once it leads)."""
    lease = api.request("GET", LEASE)
    return bool((lease.get("spec") or {}).get("holderIdentity"))
