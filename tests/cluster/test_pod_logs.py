# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pod logs under kwok: the API server's ``pods/log`` reaches kwok's kubelet endpoint, which serves a file.

``harness.serve_logs`` says "pods matching X log the content of file Y" (a kwok ClusterLogs); the
validation roles read the recorded outputs of ib_write_bw and nvbandwidth this way.
"""

from __future__ import annotations

from pathlib import Path

import cluster_harness as harness
import pytest

IB_WRITE_BW = "ib_write_bw-gpu-dmabuf-roce.txt"
NVBANDWIDTH = "nvbandwidth-single-node-write-ce.txt"


def pod(name: str, containers: tuple[str, ...] = ("main",)) -> dict:
    return {
        "metadata": {"name": name},
        "spec": {
            "restartPolicy": "Never",
            "nodeSelector": {"kubernetes.io/hostname": "gb200-tray-01"},
            "containers": [{"name": container, "image": "registry.invalid/none:1"} for container in containers],
        },
    }


@pytest.fixture
def api(cluster):
    return harness.Api(cluster.server, Path(cluster.state["run_dir"]) / "pki")


def running(core, namespace, name):
    item = core.read_namespaced_pod(name, namespace)
    return item.status.phase == "Running" and item


def test_nodes_advertise_kwok_as_their_kubelet(cluster, api):
    node = api.request("GET", f"/api/v1/nodes/{cluster.gpu_nodes[0]}")
    assert {"type": "InternalIP", "address": "127.0.0.1"} in node["status"]["addresses"]
    assert node["status"]["daemonEndpoints"]["kubeletEndpoint"]["Port"] == cluster.state["ports"]["kwok"]


def test_pod_log_is_the_served_file(api_client, cluster, namespace, served, shared_dir, waiter):
    """GET pods/<pod>/log (kubectl logs) returns the file byte for byte, per namespace, pod and container."""
    from kubernetes import client

    core = client.CoreV1Api(api_client)
    tools = shared_dir / "reference" / "tools"
    core.create_namespaced_pod(namespace, pod("rdma-client"))
    core.create_namespaced_pod(namespace, pod("launcher", containers=("mpi-launcher", "sidecar")))
    core.create_namespaced_pod(namespace, pod("not-served"))
    for name in ("rdma-client", "launcher", "not-served"):
        waiter(f"pod {name} Running", lambda name=name: running(core, namespace, name))

    served("rdma", tools / IB_WRITE_BW, namespaces=[namespace], pods=["rdma-client"])
    served("nvbandwidth", tools / NVBANDWIDTH, namespaces=[namespace], pods=["launcher"], containers=["mpi-launcher"])

    expected = (tools / IB_WRITE_BW).read_text()
    assert core.read_namespaced_pod_log("rdma-client", namespace) == expected
    assert core.read_namespaced_pod_log("launcher", namespace, container="mpi-launcher") == (
        (tools / NVBANDWIDTH).read_text()
    )
    assert core.read_namespaced_pod_log("rdma-client", namespace, tail_lines=3) == "".join(
        expected.splitlines(keepends=True)[-3:]
    )
    # kubectl logs is the same request
    assert cluster.run("kubectl", "logs", "-n", namespace, "rdma-client").stdout == expected

    # A container, or a pod, no ClusterLogs serves: an error naming it, not someone else's log.
    for name, container in (("launcher", "sidecar"), ("not-served", None)):
        failed = cluster.run(
            "kubectl", "logs", "-n", namespace, name, *(["-c", container] if container else []), check=False
        )
        assert failed.returncode != 0
        assert "no logs found" in failed.stderr or "log target not found" in failed.stderr, failed.stderr


def test_served_pods_complete_when_asked(api, api_client, cluster, namespace, served, shared_dir, waiter):
    """With complete=True the pods served finish (as the program whose output it is); the others keep running."""
    from kubernetes import client

    core = client.CoreV1Api(api_client)
    core.create_namespaced_pod(namespace, pod("finishes"))
    core.create_namespaced_pod(namespace, pod("keeps-running"))
    for name in ("finishes", "keeps-running"):
        waiter(f"pod {name} Running", lambda name=name: running(core, namespace, name))
    tools = shared_dir / "reference" / "tools"
    served("finishing", tools / IB_WRITE_BW, namespaces=[namespace], pods=["finishes"], complete=True)
    # The test runs the completer's step itself (the session's harness runs no pod completer).
    assert harness.complete_served_pods(api) == [f"{namespace}/finishes"]

    def finished() -> bool:
        return core.read_namespaced_pod("finishes", namespace).status.phase == "Succeeded"

    waiter("pod finishes Succeeded", finished)
    assert core.read_namespaced_pod("keeps-running", namespace).status.phase == "Running"
    assert "RDMA_Write BW Test" in core.read_namespaced_pod_log("finishes", namespace)


def test_serve_logs_cli(api_client, cluster, namespace, tmp_path, waiter):
    """``harness.py serve-logs`` / ``unserve-logs`` against the running harness; blank lines survive."""
    import json
    import subprocess
    import sys

    from kubernetes import client

    core = client.CoreV1Api(api_client)
    core.create_namespaced_pod(namespace, pod("p"))
    waiter("pod p Running", lambda: running(core, namespace, "p"))
    recorded = tmp_path / "out.txt"
    recorded.write_text("first line\n\n  indented line\nlast line without newline")
    base = [sys.executable, str(harness.HERE / "harness.py"), "--run-dir", cluster.state["run_dir"]]
    completed = subprocess.run(
        [*base, "serve-logs", "cli-test", "--file", str(recorded), "--namespace", namespace, "--pod", "p"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(completed.stdout)["spec"]["selector"] == {"matchNamespaces": [namespace], "matchNames": ["p"]}
    assert core.read_namespaced_pod_log("p", namespace) == recorded.read_text() + "\n"
    completed = subprocess.run([*base, "unserve-logs", "cli-test"], capture_output=True, text=True, check=True)
    assert json.loads(completed.stdout)["removed"] is True
    missing = subprocess.run(
        [*base, "serve-logs", "x", "--file", str(tmp_path / "none")], capture_output=True, text=True, check=False
    )
    assert missing.returncode == 1 and "no log file" in missing.stderr
