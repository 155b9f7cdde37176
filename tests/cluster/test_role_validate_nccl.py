# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpufabric.cluster.validate_nccl against the harness, with the real Kubeflow MPI operator manifest (v0.6.0).

The MPI operator's CRD and Deployment are applied from ``../shared/manifests``, and its controller runs on the
harness (started at ``up``); no log is served to these jobs' launchers and nothing finishes them, so an MPIJob
never finishes: the role must create it with the right ranks, environment and placement, stop at the wait naming
the job and ``validate_nccl_timeout``, and clean up. The nodes' facts are the
recorded GB200 tray (four 400G InfiniBand rails and an Ethernet port, DMA-BUF). The nvlink shape reads the
ComputeDomain CRD of the DRA driver chart in ``../shared/charts`` (no DRA controller: the ComputeDomain is never
Ready). Timeouts are a few seconds.
"""

from __future__ import annotations

import pytest
import role_runner
import yaml
from kubernetes import client
from kubernetes.client.rest import ApiException

MANIFEST = role_runner.SHARED / "manifests" / "mpi-operator-v0.6.0.yaml"
CD_CRD = role_runner.CHARTS / "dra-driver-nvidia-gpu-0.4.1" / "crds" / "resource.nvidia.com_computedomains.yaml"
NODES = ["gb200-tray-01", "gb200-tray-02"]


@pytest.fixture(scope="module")
def runner(cluster, tmp_path_factory):
    facts = role_runner.recorded_facts("gb200_tray", tmp_path_factory.mktemp("trees"))
    return role_runner.Runner(cluster, tmp_path_factory.mktemp("nccl"), dict.fromkeys(cluster.gpu_nodes, facts))


def role_vars(namespace, **extra):
    return {"validate_nccl_shape": "rdma", "validate_nccl_namespace": namespace, "validate_nccl_node_names": NODES,
            "validate_nccl_mpi_operator_manifest": str(MANIFEST), "validate_nccl_timeout": 5,
            "validate_nccl_report_dir": "reports", **extra}


def mpijob(api_client, namespace, name="nccl-tests"):
    try:
        return client.CustomObjectsApi(api_client).get_namespaced_custom_object(
            "kubeflow.org", "v2beta1", namespace, "mpijobs", name)
    except ApiException as error:
        if error.status == 404:
            return None
        raise


def namespace_exists(api_client, name):
    try:
        client.CoreV1Api(api_client).read_namespace(name)
    except ApiException as error:
        if error.status == 404:
            return False
        raise
    return True


@pytest.fixture(scope="module")
def timed_out(cluster, runner):
    """One run with cleanup off: the MPIJob stays for the checks."""
    result = runner.run(runner.role_playbook("validate_nccl", role_vars("nccl-kept", validate_nccl_cleanup=False)))
    yield result
    cluster.run("kubectl", "delete", "namespace", "nccl-kept", "--wait=false", check=False)


def test_the_wait_times_out_naming_the_job_and_the_variable(timed_out):
    output = " ".join(timed_out.output.split())
    assert timed_out.rc != 0
    assert ("MPIJob nccl-kept/nccl-tests did not finish within validate_nccl_timeout (5 s); its conditions:"
            in output), output[-3000:]
    assert "is the MPI operator running" in output
    assert ("rdma: 8 ranks, 4 per node on gb200-tray-01, gb200-tray-02 over =mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1"
            in output)


def test_the_mpijob_has_the_ranks_environment_and_placement(api_client, timed_out):
    job = mpijob(api_client, "nccl-kept")
    assert job is not None, timed_out.output[-3000:]
    spec = job["spec"]
    launcher = spec["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]
    worker = spec["mpiReplicaSpecs"]["Worker"]
    assert spec["slotsPerWorker"] == 4 and worker["replicas"] == 2
    assert launcher["args"][launcher["args"].index("-np") + 1] == "8"
    assert launcher["args"][launcher["args"].index("--map-by") + 1] == "ppr:4:node"
    assert {item["name"]: item["value"] for item in launcher["env"]} == {
        "NCCL_DEBUG": "INFO", "NCCL_IB_HCA": "=mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1", "NCCL_SOCKET_IFNAME": "eth0",
        "NCCL_DMABUF_ENABLE": "1"}
    container = worker["template"]["spec"]["containers"][0]
    assert container["resources"]["limits"] == {"nvidia.com/gpu": 4, "rdma/rdma_shared_device_a": 1}
    [term] = worker["template"]["spec"]["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert term["matchExpressions"] == [{"key": "kubernetes.io/hostname", "operator": "In", "values": NODES}]


def test_cleanup_after_the_timeout_leaves_nothing(api_client, runner):
    result = runner.run(runner.role_playbook("validate_nccl", role_vars("nccl-cleaned")))
    assert result.rc != 0
    assert "MPIJob nccl-cleaned/nccl-tests did not finish within validate_nccl_timeout (5 s)" in " ".join(
        result.output.split())
    assert mpijob(api_client, "nccl-cleaned") is None
    deleted = client.CoreV1Api(api_client).read_namespace("nccl-cleaned") if namespace_exists(
        api_client, "nccl-cleaned") else None
    assert deleted is None or deleted.status.phase == "Terminating"


def test_nvlink_shape_writes_the_compute_domain_as_0_4_serves_it_and_lets_the_job_judge(cluster, api_client, runner):
    # The 0.4.1 CRD makes numNodes optional: the domain is written with numNodes 0 and its status is not waited on
    # (it means little then); the MPIJob is created at once and its run judges the domain. (25.12's numNodes = nodes
    # and the status wait: tests/unit/roles/validate_nccl.)
    cluster.run("kubectl", "apply", "--server-side", "-f", str(CD_CRD))
    clique = yaml.safe_load(cluster.run("kubectl", "get", "node", NODES[0], "-o", "yaml").stdout)["metadata"][
        "labels"]["nvidia.com/gpu.clique"]
    result = runner.run(runner.role_playbook("validate_nccl", role_vars(
        "nccl-nvlink", validate_nccl_shape="nvlink", validate_nccl_node_names=[],
        validate_nccl_clique=clique, validate_nccl_cleanup=False)))
    try:
        output = " ".join(result.output.split())
        assert result.rc != 0
        assert "MPIJob nccl-nvlink/nccl-tests did not finish within validate_nccl_timeout (5 s)" in output, \
            output[-3000:]
        assert "was not Ready on" not in output
        domain = client.CustomObjectsApi(api_client).get_namespaced_custom_object(
            "resource.nvidia.com", "v1beta1", "nccl-nvlink", "computedomains", "nccl-tests")
        assert domain["spec"]["numNodes"] == 0
        assert mpijob(api_client, "nccl-nvlink") is not None
    finally:
        cluster.run("kubectl", "delete", "namespace", "nccl-nvlink", "--wait=false", check=False)
