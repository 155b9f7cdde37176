# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The harness is a real control plane: DRA served, CRD schemas enforced, pods scheduled onto kwok GPU nodes."""

from __future__ import annotations

import json
import socket
import urllib.error
from pathlib import Path

import cluster_harness as harness
import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException


def test_dra_api_is_served(api_client):
    versions = client.ApisApi(api_client).get_api_versions()
    groups = {group.name: [v.version for v in group.versions] for group in versions.groups}
    assert "v1" in groups["resource.k8s.io"]
    resources = client.CustomObjectsApi(api_client).get_api_resources("resource.k8s.io", "v1")
    names = {resource.name for resource in resources.resources}
    assert {"deviceclasses", "resourceclaims", "resourceclaimtemplates", "resourceslices"} <= names


def test_server_reports_the_pinned_version(api_client):
    info = client.VersionApi(api_client).get_code()
    assert info.git_version == harness.versions()["KUBERNETES_VERSION"]


def test_nodes_look_like_gb200_trays(api_client, cluster):
    nodes = {node.metadata.name: node for node in client.CoreV1Api(api_client).list_node().items}
    assert set(cluster.gpu_nodes) | set(cluster.control_plane_nodes) <= set(nodes)
    for name in cluster.gpu_nodes:
        node = nodes[name]
        labels = node.metadata.labels
        assert labels["feature.node.kubernetes.io/pci-10de.present"] == "true"
        assert labels["feature.node.kubernetes.io/pci-15b3.present"] == "true"
        assert labels["nvidia.com/gpu.present"] == "true"
        assert labels["nvidia.com/gpu.product"] == "NVIDIA-GB200"
        assert labels["nvidia.com/gpu.count"] == "4"
        assert node.status.allocatable["nvidia.com/gpu"] == "4"
        assert {c.type: c.status for c in node.status.conditions}["Ready"] == "True"
    # The first rack is the clique the unit fixtures describe.
    assert nodes[cluster.gpu_nodes[0]].metadata.labels["nvidia.com/gpu.clique"] == f"{harness.CLUSTER_UUID}.1"
    control = nodes[cluster.control_plane_nodes[0]]
    assert "node-role.kubernetes.io/control-plane" in control.metadata.labels
    assert "nvidia.com/gpu" not in control.status.allocatable


WIDGET_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.harness.gpufabric.invalid"},
    "spec": {
        "group": "harness.gpufabric.invalid",
        "scope": "Namespaced",
        "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {
                                "type": "object",
                                "required": ["gpus"],
                                "properties": {
                                    "gpus": {"type": "integer", "minimum": 1, "maximum": 4},
                                    "mode": {"type": "string", "enum": ["exclusive", "shared"]},
                                },
                            }
                        },
                    }
                },
            }
        ],
    },
}


@pytest.fixture(scope="module")
def widget_crd(api_client, waiter):
    extensions = client.ApiextensionsV1Api(api_client)
    extensions.create_custom_resource_definition(WIDGET_CRD)

    def established():
        crd = extensions.read_custom_resource_definition(WIDGET_CRD["metadata"]["name"])
        return any(c.type == "Established" and c.status == "True" for c in (crd.status.conditions or []))

    waiter("the Widget CRD to be established", established, timeout=60)
    yield
    extensions.delete_custom_resource_definition(WIDGET_CRD["metadata"]["name"])


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"gpus": 8}, "spec.gpus"),
        ({"gpus": "four"}, "spec.gpus"),
        ({"gpus": 2, "mode": "borrowed"}, "spec.mode"),
        ({"mode": "shared"}, "spec.gpus"),
    ],
)
def test_crd_schema_rejects_a_bad_object(api_client, namespace, widget_crd, spec, message):
    objects = client.CustomObjectsApi(api_client)
    good = {"apiVersion": "harness.gpufabric.invalid/v1", "kind": "Widget", "metadata": {"name": "good"}}
    objects.create_namespaced_custom_object(
        "harness.gpufabric.invalid", "v1", namespace, "widgets", good | {"spec": {"gpus": 4, "mode": "shared"}}
    )
    bad = {"apiVersion": "harness.gpufabric.invalid/v1", "kind": "Widget", "metadata": {"name": "bad"}, "spec": spec}
    with pytest.raises(ApiException) as raised:
        objects.create_namespaced_custom_object("harness.gpufabric.invalid", "v1", namespace, "widgets", bad)
    assert raised.value.status == 422
    assert message in raised.value.body


def test_deployment_pods_run_on_gpu_nodes(api_client, cluster, namespace, waiter):
    apps = client.AppsV1Api(api_client)
    core = client.CoreV1Api(api_client)
    labels = {"app": "gpu-burn"}
    apps.create_namespaced_deployment(
        namespace,
        {
            "metadata": {"name": "gpu-burn"},
            "spec": {
                "replicas": 6,
                "selector": {"matchLabels": labels},
                "template": {
                    "metadata": {"labels": labels},
                    "spec": {
                        "nodeSelector": {"nvidia.com/gpu.present": "true"},
                        "containers": [
                            {
                                "name": "burn",
                                "image": "registry.invalid/gpu-burn:1",
                                "resources": {"limits": {"nvidia.com/gpu": "4"}},
                            }
                        ],
                    },
                },
            },
        },
    )
    waiter(
        "the Deployment to have 6 ready replicas",
        lambda: (apps.read_namespaced_deployment(name="gpu-burn", namespace=namespace).status.ready_replicas or 0) == 6,
    )
    pods = core.list_namespaced_pod(namespace, label_selector="app=gpu-burn").items
    assert len(pods) == 6
    assert all(pod.status.phase == "Running" for pod in pods)
    # Four GPUs each: one pod per tray, never on the control plane.
    hosts = [pod.spec.node_name for pod in pods]
    assert len(set(hosts)) == 6
    assert set(hosts) <= set(cluster.gpu_nodes)
    assert all(pod.status.pod_ip for pod in pods)


def job(name: str, complete: bool, job_annotations: dict | None = None) -> dict:
    annotations = {harness.COMPLETE_ANNOTATION: "true"} if complete else {}
    return {
        "metadata": {"name": name, "annotations": job_annotations or {}},
        "spec": {
            "backoffLimit": 0,
            "template": {
                "metadata": {"annotations": annotations},
                "spec": {
                    "restartPolicy": "Never",
                    "nodeSelector": {"nvidia.com/gpu.present": "true"},
                    "containers": [{"name": "main", "image": "registry.invalid/nvbandwidth:1"}],
                },
            },
        },
    }


def test_job_pods_complete_when_annotated(api_client, namespace, waiter):
    batch = client.BatchV1Api(api_client)
    core = client.CoreV1Api(api_client)
    batch.create_namespaced_job(namespace, job("finishes", complete=True))
    batch.create_namespaced_job(namespace, job("keeps-running", complete=False))
    waiter("the annotated Job to succeed", lambda: batch.read_namespaced_job("finishes", namespace).status.succeeded)
    finished = batch.read_namespaced_job("finishes", namespace)
    assert any(c.type == "Complete" and c.status == "True" for c in finished.status.conditions)
    running = waiter(
        "the plain Job's pod to run",
        lambda: [
            p
            for p in core.list_namespaced_pod(namespace, label_selector="job-name=keeps-running").items
            if p.status.phase == "Running"
        ],
    )
    assert len(running) == 1
    assert not batch.read_namespaced_job("keeps-running", namespace).status.succeeded


def test_helm_hook_pods_completed_other_jobs_left_running(api_client, cluster, namespace, waiter):
    """harness.complete_helm_hook_pods finishes the pods of Helm hook Jobs only (what a chart's hook would do)."""
    batch = client.BatchV1Api(api_client)
    core = client.CoreV1Api(api_client)
    hook = {"helm.sh/hook": "pre-install"}
    batch.create_namespaced_job(namespace, job("crd-upgrade", complete=False, job_annotations=hook))
    batch.create_namespaced_job(namespace, job("workload", complete=False))

    def running(name):
        return [
            p
            for p in core.list_namespaced_pod(namespace, label_selector=f"job-name={name}").items
            if p.status.phase == "Running"
        ]

    waiter("both Jobs' pods to run", lambda: running("crd-upgrade") and running("workload"))
    api = harness.Api(cluster.server, Path(cluster.state["run_dir"]) / "pki")
    completed = [pod for pod in harness.complete_helm_hook_pods(api) if pod.startswith(f"{namespace}/")]
    assert [pod.split("/")[1].rsplit("-", 1)[0] for pod in completed] == ["crd-upgrade"]
    waiter("the hook Job to succeed", lambda: batch.read_namespaced_job("crd-upgrade", namespace).status.succeeded)
    assert not batch.read_namespaced_job("workload", namespace).status.succeeded
    assert running("workload")


def test_the_harness_client_keeps_one_connection_and_reconnects_when_it_is_closed(cluster):
    """harness.Api (the helper processes' client) asks over one kept-alive connection, opens a new one when the
    kept one was closed, and raises urllib's errors: HTTPError with the status and the server's body."""
    api = harness.Api(cluster.server, Path(cluster.state["run_dir"]) / "pki")
    assert api.request("GET", "/readyz") == "ok"
    kept = api._connection.sock  # pylint: disable=protected-access
    assert [api.request("GET", "/version")["major"] for attempt in range(5)] == ["1"] * 5
    assert api._connection.sock is kept  # pylint: disable=protected-access
    kept.shutdown(socket.SHUT_RDWR)  # as when the server drops an idle connection
    assert api.request("GET", "/readyz") == "ok"
    assert api._connection.sock is not kept  # pylint: disable=protected-access
    with pytest.raises(urllib.error.HTTPError) as raised:
        api.request("GET", "/api/v1/namespaces/no-such-namespace")
    assert raised.value.code == 404
    assert json.loads(raised.value.read())["reason"] == "NotFound"
    assert api.request("GET", "/readyz") == "ok"  # the connection survives an error status
    api.close()
    assert api.request("GET", "/readyz") == "ok"


def test_the_harness_client_names_an_unreachable_server(cluster, tmp_path):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    api = harness.Api(f"https://127.0.0.1:{port}", Path(cluster.state["run_dir"]) / "pki")
    with pytest.raises(OSError):
        api.request("GET", "/readyz", timeout=5)
    with pytest.raises(harness.HarnessError, match="not an https:// URL"):
        harness.Api("http://127.0.0.1:1", Path(cluster.state["run_dir"]) / "pki")


@pytest.mark.parametrize(
    ("trays_per_clique", "cliques"),
    [(18, [1] * 18 + [2] * 18), (9, [1] * 9 + [2] * 9 + [3] * 9 + [4] * 9), (1, list(range(1, 37)))],
)
def test_trays_per_clique_splits_the_cliques_and_keeps_the_racks(trays_per_clique, cliques):
    labels = [
        harness.node_manifest(f"gb200-tray-{index + 1:02d}", "v1.34.2", index, trays_per_clique)["metadata"]["labels"]
        for index in range(36)
    ]
    assert [label["nvidia.com/gpu.clique"] for label in labels] == [f"{harness.CLUSTER_UUID}.{c}" for c in cliques]
    assert [label["gpufabric.cluster/rack"] for label in labels] == ["rack-01"] * 18 + ["rack-02"] * 18


def test_the_default_clique_is_a_rack():
    labels = harness.node_manifest("gb200-tray-19", "v1.34.2", 18)["metadata"]["labels"]
    assert labels["nvidia.com/gpu.clique"] == f"{harness.CLUSTER_UUID}.2"
    assert labels["gpufabric.cluster/rack"] == "rack-02"


@pytest.mark.parametrize("trays_per_clique", [0, -1, 19, 72, True, 9.0, "9"])
def test_a_clique_size_no_rack_has_is_refused(trays_per_clique):
    with pytest.raises(ValueError, match=r"trays_per_clique must be a whole number from 1 to 18 .* got"):
        harness.node_manifest("gb200-tray-01", "v1.34.2", 0, trays_per_clique)


def test_up_refuses_a_clique_size_before_starting_anything(tmp_path):
    run_dir = tmp_path / "run"
    with pytest.raises(harness.HarnessError, match="trays_per_clique must be"):
        harness.up(harness.Config(run_dir=run_dir, bin_dir=tmp_path, gpu_nodes=2, trays_per_clique=19))
    assert not run_dir.exists()


@pytest.mark.parametrize(
    ("variable", "value", "option"),
    [("GPUFABRIC_CLUSTER_TRAYS_PER_CLIQUE", "false", "--trays-per-clique: invalid int value: 'false'"),
     ("GPUFABRIC_CLUSTER_TRAYS_PER_CLIQUE", "", "--trays-per-clique: invalid int value: ''"),
     ("GPUFABRIC_CLUSTER_GPU_NODES", "9.0", "--gpu-nodes: invalid int value: '9.0'"),
     ("GPUFABRIC_CLUSTER_TIMEOUT", "soon", "--timeout: invalid float value: 'soon'")],
)
def test_a_bad_value_from_the_environment_is_refused_naming_the_option(
        monkeypatch, capsys, tmp_path, variable, value, option):
    from cluster_harness import cli

    monkeypatch.setenv(variable, value)
    with pytest.raises(SystemExit) as exit_:
        cli.main(["--run-dir", str(tmp_path / "run"), "up", "--no-build"])
    assert exit_.value.code == 2
    assert option in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


def test_the_clique_size_from_the_environment_reaches_up(monkeypatch, tmp_path):
    from cluster_harness import cli

    monkeypatch.setenv("GPUFABRIC_CLUSTER_TRAYS_PER_CLIQUE", "19")
    monkeypatch.setattr(cli.signal, "signal", lambda *_args: None)  # main's SIGTERM handler is not pytest's
    # 19 parses as a number; up refuses it before starting anything (HarnessError, printed, exit 1).
    assert cli.main(["--run-dir", str(tmp_path / "run"), "up", "--no-build", "--gpu-nodes", "2"]) != 0
    assert not (tmp_path / "run").exists()
