# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fixtures of the cluster tier: one harness per session, a fresh namespace per test.

Every test under tests/cluster carries the ``cluster`` marker (``pytest -m cluster``). The
session's harness runs from ``.build/cluster/pytest-run`` (``pytest-run-<worker>`` under
pytest-xdist: one harness per worker) on free ports, so a harness started by hand
(``make cluster-up``) is left alone; it is torn down when the session ends, failed
tests or not. ``GPUFABRIC_CLUSTER_GPU_NODES`` sets the number of fake GB200 trays (18).
"""

from __future__ import annotations

import dataclasses
import os
import re
import subprocess
import time
import uuid
from pathlib import Path

import cluster_harness as harness
import pytest

# one harness per pytest process: `make cluster` runs the tier on two pytest-xdist workers (gw0, gw1), each with its
# own control plane, as a harness takes under one core of the two (the tests wait on the API server)
SESSION_RUN_DIR = harness.ROOT / ".build" / "cluster" / (
    f"pytest-run-{os.environ['PYTEST_XDIST_WORKER']}" if os.environ.get("PYTEST_XDIST_WORKER") else "pytest-run")
SHARED = harness.ROOT.parent / "shared"
DRA_CHART = SHARED / "charts" / "nvidia-dra-driver-gpu"


def pytest_collection_modifyitems(items):
    here = Path(__file__).parent
    for item in items:
        if Path(str(item.fspath)).is_relative_to(here):
            item.add_marker(pytest.mark.cluster)


@dataclasses.dataclass
class Cluster:
    """What a test gets: the kubeconfig, the binaries, the names of the fake nodes."""

    kubeconfig: Path
    bin_dir: Path
    server: str
    gpu_nodes: list[str]
    control_plane_nodes: list[str]
    state: dict

    def env(self) -> dict[str, str]:
        """An environment for kubectl, helm and ansible-playbook against this cluster."""
        return dict(
            os.environ,
            KUBECONFIG=str(self.kubeconfig),
            K8S_AUTH_KUBECONFIG=str(self.kubeconfig),
            PATH=f"{self.bin_dir}:{os.environ.get('PATH', '')}",
        )

    def run(self, *args: str, check: bool = True, timeout: float = 600) -> subprocess.CompletedProcess:
        """Run one of the harness binaries (kubectl, helm) with the kubeconfig set."""
        completed = subprocess.run(
            [str(self.bin_dir / args[0]), *args[1:]],
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        if check and completed.returncode != 0:
            raise AssertionError(
                f"{' '.join(args)} exited {completed.returncode}:\n{completed.stdout}\n{completed.stderr}"
            )
        return completed


@pytest.fixture(scope="session")
def cluster():
    """Build the binaries if needed, bring the harness up once, tear it down at the end."""
    try:
        directory = harness.build()
        gpu_nodes = int(os.environ.get("GPUFABRIC_CLUSTER_GPU_NODES", harness.TRAYS_PER_RACK))
        # What a session killed before its teardown left behind.
        harness.down(SESSION_RUN_DIR)
        state = harness.up(harness.Config(run_dir=SESSION_RUN_DIR, bin_dir=directory, gpu_nodes=gpu_nodes))
    except harness.HarnessError as error:
        pytest.fail(f"cluster harness: {error}", pytrace=False)
    try:
        trays, control = harness.node_names(gpu_nodes, 1)
        yield Cluster(Path(state["kubeconfig"]), directory, state["server"], trays, control, state)
    finally:
        harness.down(SESSION_RUN_DIR)
        left = [p["name"] for p in state["processes"] if harness.Process(**p | {"log": Path(p["log"])}).alive()]
        listening = [port for port in state["ports"].values() if harness.port_in_use(port)]
        assert not left and not listening, f"harness down left processes {left} or listening ports {listening}"


@pytest.fixture(scope="session")
def api_client(cluster):
    """A ``kubernetes`` client ApiClient for the session's cluster."""
    kubernetes = pytest.importorskip("kubernetes")
    client = kubernetes.config.new_client_from_config(config_file=str(cluster.kubeconfig))
    yield client
    client.close()


@pytest.fixture
def make_namespace(api_client):
    """Create fresh test namespaces by name, each returned once its default service account (which pods need and
    the controller-manager adds) exists; all deleted afterwards (without waiting for them to go)."""
    from kubernetes import client

    core = client.CoreV1Api(api_client)
    made = []

    def make(name: str) -> str:
        core.create_namespace({"metadata": {"name": name, "labels": {"gpufabric.cluster/test": "true"}}})
        made.append(name)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if any(sa.metadata.name == "default" for sa in core.list_namespaced_service_account(name).items):
                break
            time.sleep(0.2)
        return name

    yield make
    for name in made:
        core.delete_namespace(name)


@pytest.fixture
def namespace(make_namespace, request):
    """A fresh namespace for one test, deleted afterwards."""
    return make_namespace(re.sub(r"[^a-z0-9-]", "-", request.node.name.lower())[:40].strip("-") + "-"
                          + uuid.uuid4().hex[:6])


@pytest.fixture
def served(cluster):
    """serve_logs bound to the session's harness; every ClusterLogs it made is removed afterwards."""
    api = harness.Api(cluster.server, Path(cluster.state["run_dir"]) / "pki")
    names = []

    def serve(name, log_file, **selector):
        names.append(name)
        return harness.serve_logs(api, Path(cluster.state["run_dir"]), name, log_file, **selector)

    yield serve
    for name in names:
        harness.unserve_logs(api, name)


def wait_until(what: str, check, timeout: float = 120.0, interval: float = 0.5):
    """Poll ``check()`` until it returns something true; return that."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = check()
        if last:
            return last
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what} (last: {last!r})")


@pytest.fixture(scope="session")
def waiter():
    """``wait_until`` for the tests (they do not import conftest)."""
    return wait_until


@pytest.fixture(scope="session")
def shared_dir():
    """../shared beside the checkout: the upstream charts and reference material, read in place."""
    if not DRA_CHART.is_dir():
        pytest.fail(f"{DRA_CHART} is missing: the cluster tier reads the charts from ../shared beside the checkout")
    return SHARED
