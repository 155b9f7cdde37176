# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Kubeflow MPI operator (v0.6.0, built by build.sh) runs beside the controller-manager: an MPIJob gets its
worker pods and launcher Job from the real controller, kwok runs them, the launcher's log is a recorded file and
its end (kwok's pod-complete or pod-fail stage, by annotation) decides the MPIJob's Succeeded or Failed.

The launcher's log is ``nvbandwidth-single-node-write-ce.txt`` of ../shared/reference/tools (a real nvbandwidth
run; its source is named in that directory's README.md).
"""

from __future__ import annotations

from pathlib import Path

import cluster_harness as harness
import pytest

NVBANDWIDTH = "nvbandwidth-single-node-write-ce.txt"
MPIJOBS = ("kubeflow.org", "v2beta1", "mpijobs")


def mpijob(name: str, exit_code: int | None = None) -> dict:
    """An MPIJob of 2 workers, one per GB200 tray, whose launcher finishes (with ``exit_code``: fails)."""
    annotations = {harness.COMPLETE_ANNOTATION: "true"}
    if exit_code is not None:
        annotations[harness.EXIT_CODE_ANNOTATION] = str(exit_code)
    image = "registry.invalid/nvbandwidth:1"
    worker_labels = {"gpufabric.cluster/mpijob": name}
    return {
        "apiVersion": "kubeflow.org/v2beta1",
        "kind": "MPIJob",
        "metadata": {"name": name},
        "spec": {
            "slotsPerWorker": 4,
            "runPolicy": {"cleanPodPolicy": "Running", "backoffLimit": 0},
            "mpiReplicaSpecs": {
                "Launcher": {
                    "replicas": 1,
                    "restartPolicy": "Never",
                    "template": {
                        "metadata": {"annotations": annotations},
                        "spec": {"containers": [{"name": "mpi-launcher", "image": image, "command": ["mpirun"]}]},
                    },
                },
                "Worker": {
                    "replicas": 2,
                    "template": {
                        "metadata": {"labels": worker_labels},
                        "spec": {
                            "nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-GB200"},
                            "affinity": {
                                "podAntiAffinity": {
                                    "requiredDuringSchedulingIgnoredDuringExecution": [
                                        {
                                            "labelSelector": {"matchLabels": worker_labels},
                                            "topologyKey": "kubernetes.io/hostname",
                                        }
                                    ]
                                }
                            },
                            "containers": [
                                {
                                    "name": "mpi-worker",
                                    "image": image,
                                    "command": ["/usr/sbin/sshd", "-De"],
                                    "resources": {"limits": {"nvidia.com/gpu": "4"}},
                                }
                            ],
                        },
                    },
                },
            },
        },
    }


@pytest.fixture
def clients(api_client):
    from kubernetes import client

    return client.CoreV1Api(api_client), client.BatchV1Api(api_client), client.CustomObjectsApi(api_client)


def condition(custom, namespace: str, name: str, kind: str):
    item = custom.get_namespaced_custom_object(*MPIJOBS[:2], namespace, MPIJOBS[2], name)
    return next(
        (c for c in (item.get("status") or {}).get("conditions") or [] if c["type"] == kind and c["status"] == "True"),
        None,
    )


def pods_of(core, namespace: str, role: str):
    selector = f"training.kubeflow.org/job-role={role}"
    return core.list_namespaced_pod(namespace, label_selector=selector).items


def test_operator_runs_beside_the_control_plane(cluster):
    process = next(p for p in cluster.state["processes"] if p["name"] == "mpi-operator")
    assert harness.Process(**process | {"log": Path(process["log"])}).alive()
    assert harness.status(Path(cluster.state["run_dir"]))["processes"]["mpi-operator"]["running"]
    assert Path(process["log"]).name == "mpi-operator.log"


def test_mpijob_succeeds(cluster, clients, namespace, served, shared_dir, waiter):
    """Workers on two trays and the launcher Job come from the operator; the launcher's end completes the MPIJob."""
    core, batch, custom = clients
    log_file = shared_dir / "reference" / "tools" / NVBANDWIDTH
    served("mpijob-launcher", log_file, namespaces=[namespace], containers=["mpi-launcher"])
    custom.create_namespaced_custom_object(*MPIJOBS[:2], namespace, MPIJOBS[2], mpijob("nvbandwidth"))

    def running_workers():
        items = [p for p in pods_of(core, namespace, "worker") if p.status.phase == "Running"]
        return items if len(items) == 2 else None

    workers = waiter("2 worker pods Running", running_workers)
    assert sorted(p.metadata.name for p in workers) == ["nvbandwidth-worker-0", "nvbandwidth-worker-1"]
    nodes = {p.spec.node_name for p in workers}
    assert len(nodes) == 2 and nodes <= set(cluster.gpu_nodes), nodes

    job = waiter("the launcher Job", lambda: batch.read_namespaced_job("nvbandwidth-launcher", namespace))
    assert job.metadata.owner_references[0].kind == "MPIJob"
    waiter("MPIJob Succeeded", lambda: condition(custom, namespace, "nvbandwidth", "Succeeded"), timeout=180)
    launcher = pods_of(core, namespace, "launcher")
    assert [p.status.phase for p in launcher] == ["Succeeded"]
    assert core.read_namespaced_pod_log(launcher[0].metadata.name, namespace, container="mpi-launcher") == (
        log_file.read_text()
    )
    assert batch.read_namespaced_job("nvbandwidth-launcher", namespace).status.succeeded == 1
    # cleanPodPolicy Running: the operator removes the workers once the job has finished.
    waiter("the workers removed", lambda: not pods_of(core, namespace, "worker"))


def test_failing_launcher_fails_the_mpijob(clients, namespace, waiter):
    """A launcher that exits non-zero (kwok's pod-fail stage) fails its Job (backoffLimit 0) and the MPIJob."""
    core, batch, custom = clients
    custom.create_namespaced_custom_object(*MPIJOBS[:2], namespace, MPIJOBS[2], mpijob("broken", exit_code=3))
    failed = waiter("MPIJob Failed", lambda: condition(custom, namespace, "broken", "Failed"), timeout=180)
    assert not condition(custom, namespace, "broken", "Succeeded")
    launcher = pods_of(core, namespace, "launcher")
    assert [p.status.phase for p in launcher] == ["Failed"]
    assert launcher[0].status.container_statuses[0].state.terminated.exit_code == 3
    assert batch.read_namespaced_job("broken-launcher", namespace).status.failed == 1
    assert failed["reason"], failed


def test_crd_server_side_apply_by_another_manager(clients, cluster, shared_dir):
    """The validate roles apply the whole manifest later: the same CRD applied by another field manager,
    without force, does not conflict with the harness's apply."""
    import yaml

    version = harness.versions()["MPI_OPERATOR_VERSION"]
    path = shared_dir / "manifests" / f"mpi-operator-{version}.yaml"
    crd = next(d for d in yaml.safe_load_all(path.read_text()) if d and d["kind"] == "CustomResourceDefinition")
    api = harness.Api(cluster.server, Path(cluster.state["run_dir"]) / "pki")
    applied = api.request(
        "PATCH",
        f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{crd['metadata']['name']}?fieldManager=validate-role",
        crd,
        content_type="application/apply-patch+yaml",
    )
    managers = {entry["manager"] for entry in applied["metadata"]["managedFields"]}
    assert {"validate-role", harness.FIELD_MANAGER} <= managers
    process = next(p for p in cluster.state["processes"] if p["name"] == "mpi-operator")
    assert harness.Process(**process | {"log": Path(process["log"])}).alive()


def test_the_operator_step_of_the_validate_roles_is_idempotent_and_keeps_the_aggregated_role(
        cluster, api_client, shared_dir, waiter, tmp_path):
    """``_mpi_job``'s operator step applies the whole manifest server-side with forced ownership, once per validate
    run. The aggregated ClusterRole ``kubeflow-mpijobs-admin`` (``rules: []`` in the manifest) keeps the rules the
    control plane's aggregation controller gives it, and a run after the first changes nothing."""
    import role_runner
    import yaml
    from kubernetes import client

    version = harness.versions()["MPI_OPERATOR_VERSION"]
    runner = role_runner.Runner(cluster, tmp_path, {})
    playbook = tmp_path / "operator.yml"
    playbook.write_text(yaml.safe_dump([{
        "name": "The operator step of the validate roles", "hosts": "localhost", "gather_facts": False,
        "tasks": [{"name": "Apply the MPI operator", "ansible.builtin.include_role": {
            "name": "gpufabric.cluster._mpi_job", "tasks_from": "operator"}, "vars": {
            "_mpi_job_role": "validate_compute_domain", "_mpi_job_kubeconfig": str(cluster.kubeconfig),
            "_mpi_job_manifest": str(shared_dir / "manifests" / f"mpi-operator-{version}.yaml"),
            "_mpi_job_timeout": 120}}],
    }], sort_keys=False))
    # The first run creates what the harness did not apply at `up` (it applies the CRD only), unless an earlier test
    # ran a validate role.
    first = runner.run(playbook)
    assert first.rc == 0, first.output[-3000:]
    rbac = client.RbacAuthorizationV1Api(api_client)
    edit_rules = rbac.read_cluster_role("kubeflow-mpijobs-edit").rules
    assert edit_rules

    def aggregated():
        rules = rbac.read_cluster_role("kubeflow-mpijobs-admin").rules or []
        return rules if rules == edit_rules else None

    waiter("kubeflow-mpijobs-admin aggregated from kubeflow-mpijobs-edit", aggregated)
    runs = [runner.run(playbook), runner.run(playbook)]
    assert [run.rc for run in runs] == [0, 0], runs[-1].output[-3000:]
    # Before the fix each run set the aggregated role's rules to [] (a change), and the controller filled them again.
    assert [run.changed for run in runs] == [0, 0], [run.output[-3000:] for run in runs]
    assert (rbac.read_cluster_role("kubeflow-mpijobs-admin").rules or []) == edit_rules


def test_one_run_applies_the_operator_once_per_cluster(cluster, shared_dir, tmp_path):
    """validate_compute_domain and validate_nccl in one validate play: the second call of the operator step finds the
    manifest applied to the same kubeconfig by this run and only waits; another kubeconfig (another cluster, here the
    same one under another path) is applied to again."""
    import re
    import shutil

    import role_runner
    import yaml

    version = harness.versions()["MPI_OPERATOR_VERSION"]
    other_kubeconfig = tmp_path / "other-kubeconfig"
    shutil.copy(cluster.kubeconfig, other_kubeconfig)
    runner = role_runner.Runner(cluster, tmp_path, {})

    def step(role, kubeconfig):
        return {"name": f"Apply the MPI operator for {role}", "ansible.builtin.include_role": {
            "name": "gpufabric.cluster._mpi_job", "tasks_from": "operator"}, "vars": {
            "_mpi_job_role": role, "_mpi_job_kubeconfig": str(kubeconfig),
            "_mpi_job_manifest": str(shared_dir / "manifests" / f"mpi-operator-{version}.yaml"),
            "_mpi_job_timeout": 120}}

    playbook = tmp_path / "twice.yml"
    playbook.write_text(yaml.safe_dump([{
        "name": "Two validate roles in one play", "hosts": "localhost", "gather_facts": False,
        "tasks": [step("validate_compute_domain", cluster.kubeconfig), step("validate_nccl", cluster.kubeconfig),
                  step("validate_nccl", other_kubeconfig)],
    }], sort_keys=False))
    result = runner.run(playbook)
    assert result.rc == 0, result.output[-3000:]
    applies = re.findall(r"TASK \[gpufabric\.cluster\._mpi_job : Apply the MPI operator\][^\n]*\n+(\w+):",
                         result.output)
    waits = re.findall(r"TASK \[gpufabric\.cluster\._mpi_job : Wait for the MPI operator\][^\n]*\n+(\w+):",
                       result.output)
    assert [status != "skipping" for status in applies] == [True, False, True], result.output[-3000:]
    assert waits == ["ok", "ok", "ok"], result.output[-3000:]
