# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""``up``, ``down`` and ``status``: the control plane and the kwok nodes started, stopped and reported.

``up`` runs named steps in order over one :class:`Launch` (where it runs, what it started, the state file):
credentials, etcd, kube-apiserver, controller-manager and scheduler, kwok, the MPI operator (after its CRD), their
health, the nodes, the trays' compute-domain ResourceSlices, and the helm-hook-completer when asked. Any failure
stops what was started and removes the state.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import shutil
import sys
import time
import urllib.error
from pathlib import Path

from cluster_harness.api import Api, http_ok, https_ok, wait_for
from cluster_harness.binaries import bin_dir, check_binaries, versions
from cluster_harness.common import (
    DEFAULT_RUN_DIR,
    HERE,
    KWOK_CRDS,
    KWOK_NODE_ANNOTATION,
    POD_CIDR,
    SERVICE_CIDR,
    Config,
    HarnessError,
    log,
)
from cluster_harness.kwok import install_kwok_crds, kwok_stages, node_manifest, node_names
from cluster_harness.mpi_operator import apply_crd, leading, operator_args
from cluster_harness.pki import make_pki, write_kubeconfig
from cluster_harness.ports import choose_ports
from cluster_harness.processes import Process, processes_of, read_state, start
from cluster_harness.resource_slices import publish_compute_domain_slices


@dataclasses.dataclass
class Launch:
    """One ``up`` in progress: its configuration, run and binary directories, ports, the processes it started
    and the state it writes to ``<run_dir>/state.json`` after every change."""

    config: Config
    run_dir: Path
    bin_dir: Path
    ports: dict[str, int]
    state: dict
    processes: list[Process] = dataclasses.field(default_factory=list)

    @property
    def pki(self) -> Path:
        return self.run_dir / "pki"

    def save(self) -> None:
        self.state["processes"] = [
            {"name": p.name, "pid": p.pid, "log": str(p.log), "binary": p.binary} for p in self.processes
        ]
        (self.run_dir / "state.json").write_text(json.dumps(self.state, indent=2) + "\n")

    def start(self, name: str, binary: Path, args: list[str], env: dict[str, str] | None = None) -> Process:
        """Start a process of the harness and record it in the state."""
        process = start(name, binary, args, self.run_dir, env)
        self.processes.append(process)
        self.save()
        return process

    def wait_for(self, what: str, check) -> None:
        """Wait for ``check()``, failing early when a started process has exited."""
        wait_for(what, check, self.config.timeout, self.processes)


def prepare(config: Config) -> Launch:
    """Refuse a second harness in the same run directory, check the binaries, start from an empty run directory."""
    try:  # a clique size no rack has is refused before anything starts
        node_manifest("gb200-tray-00", "", 0, config.trays_per_clique)
    except ValueError as error:
        raise HarnessError(str(error)) from None
    run_dir = config.run_dir.resolve()
    state = read_state(run_dir)
    if state and any(process.alive() for process in processes_of(state)):
        raise HarnessError(f"a harness is already running from {run_dir}; run `harness.py down` first")
    directory = Path(config.bin_dir) if config.bin_dir else bin_dir()
    check_binaries(directory)
    if run_dir.exists():
        shutil.rmtree(run_dir)
    (run_dir / "logs").mkdir(parents=True)
    ports = choose_ports(config.ports)
    server = f"https://127.0.0.1:{ports['apiserver']}"
    state = {
        "run_dir": str(run_dir),
        "bin_dir": str(directory),
        "ports": ports,
        "server": server,
        "kubeconfig": str(run_dir / "kubeconfig"),
        "processes": [],
        "nodes": [],
    }
    return Launch(config=config, run_dir=run_dir, bin_dir=directory, ports=ports, state=state)


def write_credentials(launch: Launch) -> None:
    """The PKI and the kubeconfigs of the admin (the tests), the controller-manager and the scheduler."""
    make_pki(launch.pki)
    for user, name in (("admin", "kubeconfig"), ("controller-manager", "controller-manager.kubeconfig"),
                       ("scheduler", "scheduler.kubeconfig")):
        write_kubeconfig(launch.run_dir / name, launch.pki, user, launch.state["server"])
    launch.save()


def start_etcd(launch: Launch) -> str:
    """Start etcd and wait until it is healthy; return its client URL."""
    etcd_url = f"http://127.0.0.1:{launch.ports['etcd']}"
    peer_url = f"http://127.0.0.1:{launch.ports['etcd_peer']}"
    launch.start(
        "etcd",
        launch.bin_dir / "etcd",
        [
            "--name=harness",
            f"--data-dir={launch.run_dir / 'etcd'}",
            f"--listen-client-urls={etcd_url}",
            f"--advertise-client-urls={etcd_url}",
            f"--listen-peer-urls={peer_url}",
            f"--initial-advertise-peer-urls={peer_url}",
            f"--initial-cluster=harness={peer_url}",
            "--listen-metrics-urls=",
            "--unsafe-no-fsync=true",
            "--quota-backend-bytes=4294967296",
            "--log-level=warn",
        ],
    )
    launch.wait_for("etcd /health", lambda: http_ok(f"{etcd_url}/health"))
    return etcd_url


def start_apiserver(launch: Launch, etcd_url: str) -> Api:
    """Start kube-apiserver, wait until it is ready and check that it serves DRA; return a client of it."""
    pki = launch.pki
    launch.start(
        "kube-apiserver",
        launch.bin_dir / "kube-apiserver",
        [
            f"--etcd-servers={etcd_url}",
            "--bind-address=127.0.0.1",
            "--advertise-address=127.0.0.1",
            f"--secure-port={launch.ports['apiserver']}",
            f"--tls-cert-file={pki / 'apiserver.crt'}",
            f"--tls-private-key-file={pki / 'apiserver.key'}",
            f"--client-ca-file={pki / 'ca.crt'}",
            # Front-proxy settings, so that controllers find a complete extension-apiserver-authentication.
            f"--requestheader-client-ca-file={pki / 'ca.crt'}",
            "--requestheader-allowed-names=front-proxy-client",
            "--requestheader-username-headers=X-Remote-User",
            "--requestheader-group-headers=X-Remote-Group",
            "--requestheader-extra-headers-prefix=X-Remote-Extra-",
            f"--service-account-key-file={pki / 'sa.pub'}",
            f"--service-account-signing-key-file={pki / 'sa.key'}",
            "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
            f"--service-cluster-ip-range={SERVICE_CIDR}",
            "--authorization-mode=RBAC",
            "--allow-privileged=true",
            "--endpoint-reconciler-type=none",
            # pods/log, exec, port-forward: the "kubelet" is kwok's server, at the node's InternalIP
            # (127.0.0.1) and daemonEndpoints port (--node-port), with a certificate of our CA.
            "--kubelet-preferred-address-types=InternalIP",
            f"--kubelet-certificate-authority={pki / 'ca.crt'}",
            f"--kubelet-client-certificate={pki / 'apiserver-kubelet-client.crt'}",
            f"--kubelet-client-key={pki / 'apiserver-kubelet-client.key'}",
            "--profiling=false",
            "--v=1",
        ],
    )
    api = Api(launch.state["server"], pki)
    launch.wait_for("kube-apiserver /readyz", lambda: api.request("GET", "/readyz") == "ok")
    try:
        api.request("GET", "/apis/resource.k8s.io/v1")
    except urllib.error.HTTPError as error:
        raise HarnessError(f"kube-apiserver does not serve resource.k8s.io/v1 (DRA): HTTP {error.code}") from error
    return api


def start_controllers(launch: Launch) -> None:
    """Start kube-controller-manager and kube-scheduler (their health is awaited after kwok has started)."""
    pki = launch.pki
    kubeconfig = launch.run_dir / "controller-manager.kubeconfig"
    launch.start(
        "kube-controller-manager",
        launch.bin_dir / "kube-controller-manager",
        [
            f"--kubeconfig={kubeconfig}",
            f"--authentication-kubeconfig={kubeconfig}",
            f"--authorization-kubeconfig={kubeconfig}",
            "--bind-address=127.0.0.1",
            f"--secure-port={launch.ports['controller_manager']}",
            "--leader-elect=false",
            "--use-service-account-credentials=true",
            f"--service-account-private-key-file={pki / 'sa.key'}",
            f"--root-ca-file={pki / 'ca.crt'}",
            f"--cluster-signing-cert-file={pki / 'ca.crt'}",
            f"--cluster-signing-key-file={pki / 'ca.key'}",
            f"--service-cluster-ip-range={SERVICE_CIDR}",
            "--profiling=false",
            "--v=1",
        ],
    )
    kubeconfig = launch.run_dir / "scheduler.kubeconfig"
    launch.start(
        "kube-scheduler",
        launch.bin_dir / "kube-scheduler",
        [
            f"--kubeconfig={kubeconfig}",
            f"--authentication-kubeconfig={kubeconfig}",
            f"--authorization-kubeconfig={kubeconfig}",
            "--bind-address=127.0.0.1",
            f"--secure-port={launch.ports['scheduler']}",
            "--leader-elect=false",
            "--profiling=false",
            "--v=1",
        ],
    )


def start_kwok(launch: Launch, api: Api) -> None:
    """Write kwok's stages, create its CRDs and start it; it manages the nodes annotated as fake."""
    pki = launch.pki
    (launch.run_dir / "kwok.yaml").write_text(kwok_stages(launch.bin_dir / "kwok-stages"))
    install_kwok_crds(api, launch.bin_dir, launch.config.timeout)
    launch.start(
        "kwok",
        launch.bin_dir / "kwok",
        [
            f"--kubeconfig={launch.run_dir / 'kubeconfig'}",
            f"--config={launch.run_dir / 'kwok.yaml'}",
            "--manage-all-nodes=false",
            f"--manage-nodes-with-annotation-selector={KWOK_NODE_ANNOTATION}=fake",
            f"--cidr={POD_CIDR}",
            "--node-ip=127.0.0.1",
            "--node-lease-duration-seconds=40",
            f"--server-address=127.0.0.1:{launch.ports['kwok']}",
            # The nodes report this port as their kubelet endpoint; the API server calls it for pod logs.
            f"--node-port={launch.ports['kwok']}",
            f"--tls-cert-file={pki / 'kwok.crt'}",
            f"--tls-private-key-file={pki / 'kwok.key'}",
            f"--enable-crds={','.join(KWOK_CRDS.values())}",
        ],
    )


def start_mpi_operator(launch: Launch, api: Api) -> None:
    """Apply the MPIJob CRD (the controller exits without it) and start the Kubeflow MPI operator's controller."""
    apply_crd(api, versions()["MPI_OPERATOR_VERSION"], launch.config.timeout)
    args, env = operator_args(launch.run_dir / "kubeconfig", launch.ports["mpi_operator"])
    launch.start("mpi-operator", launch.bin_dir / "mpi-operator", args, env)


def wait_controllers_healthy(launch: Launch) -> None:
    """Wait until kube-controller-manager and kube-scheduler answer /healthz, and the MPI operator leads."""
    for name, port in (
        ("kube-controller-manager", launch.ports["controller_manager"]),
        ("kube-scheduler", launch.ports["scheduler"]),
    ):
        launch.wait_for(f"{name} /healthz", lambda port=port: https_ok(f"https://127.0.0.1:{port}/healthz"))
    launch.wait_for(
        "mpi-operator /healthz", lambda: http_ok(f"http://127.0.0.1:{launch.ports['mpi_operator']}/healthz")
    )
    launch.wait_for("mpi-operator to hold its lease", lambda: leading(Api(launch.state["server"], launch.pki)))


def register_nodes(launch: Launch, api: Api) -> tuple[list[str], list[str]]:
    """Create the control-plane and GB200 tray nodes and wait until kwok has them Ready; return (trays, control)."""
    kube_version = versions()["KUBERNETES_VERSION"]
    trays, control = node_names(launch.config.gpu_nodes, launch.config.control_plane_nodes)
    launch.state["nodes"] = control + trays
    launch.save()
    launch.wait_for(
        "the default service account",
        lambda: api.request("GET", "/api/v1/namespaces/default/serviceaccounts/default"),
    )
    for name in control:
        api.request("POST", "/api/v1/nodes", node_manifest(name, kube_version, None))
    for index, name in enumerate(trays):
        api.request("POST", "/api/v1/nodes", node_manifest(name, kube_version, index, launch.config.trays_per_clique))
    wanted = set(launch.state["nodes"])

    def all_ready() -> bool:
        items = api.request("GET", "/api/v1/nodes?labelSelector=type%3Dkwok", timeout=30)["items"]
        ready = {
            item["metadata"]["name"]
            for item in items
            if any(c["type"] == "Ready" and c["status"] == "True" for c in item["status"].get("conditions", []))
        }
        return wanted <= ready

    launch.wait_for(f"{len(wanted)} kwok nodes to be Ready", all_ready)
    return trays, control


def start_hook_completer(launch: Launch) -> None:
    """Run ``harness.py complete-helm-hooks`` beside kwok (molecule scenarios, where no test drives the hooks)."""
    launch.start(
        "helm-hook-completer",
        Path(sys.executable),
        [str(HERE / "harness.py"), "--run-dir", str(launch.run_dir), "complete-helm-hooks"],
    )


def start_compute_domain_kubelet_plugin(launch: Launch) -> None:
    """Run ``harness.py compute-domain-kubelet-plugin`` (TEST FIXTURE) beside kwok: the prepare-time decisions of
    the DRA driver's kubelet plugin for the trays' compute-domain claims."""
    launch.start(
        "compute-domain-kubelet-plugin",
        Path(sys.executable),
        [str(HERE / "harness.py"), "--run-dir", str(launch.run_dir), "compute-domain-kubelet-plugin"],
    )


def start_compute_domain_controller_once_installed(launch: Launch) -> None:
    """Run ``harness.py compute-domain-controller-once-installed``: the controller once the chart is installed."""
    launch.start(
        "compute-domain-controller",
        Path(sys.executable),
        [str(HERE / "harness.py"), "--run-dir", str(launch.run_dir), "compute-domain-controller-once-installed",
         "--namespace", launch.config.compute_domain_controller_namespace],
    )


def abort(launch: Launch, error: BaseException) -> None:
    """Stop what ``up`` started, remove the state, and raise ``error`` as a HarnessError (interrupts as they are)."""
    for process in reversed(launch.processes):
        process.stop()
    with contextlib.suppress(OSError):
        (launch.run_dir / "state.json").unlink()
    if isinstance(error, HarnessError):
        raise error
    if isinstance(error, urllib.error.HTTPError):
        detail = error.read().decode(errors="replace")[:2000]
        raise HarnessError(f"API request failed: HTTP {error.code} {error.reason}: {detail}") from error
    if isinstance(error, Exception):
        raise HarnessError(f"{type(error).__name__}: {error}") from error
    raise error


def up(config: Config) -> dict:
    """Start everything; return the state. On failure stop what was started and raise HarnessError."""
    launch = prepare(config)
    started_at = time.monotonic()
    try:
        write_credentials(launch)
        etcd_url = start_etcd(launch)
        api = start_apiserver(launch, etcd_url)
        start_controllers(launch)
        start_kwok(launch, api)
        start_mpi_operator(launch, api)
        wait_controllers_healthy(launch)
        control_plane_seconds = time.monotonic() - started_at
        log(f"control plane ready in {control_plane_seconds:.1f}s at {launch.state['server']}")

        nodes_started = time.monotonic()
        trays, control = register_nodes(launch, api)
        # What the DRA driver's compute-domain kubelet plugin would publish on each tray (none runs under kwok).
        launch.state["resource_slices"] = publish_compute_domain_slices(api, trays)
        launch.save()
        start_compute_domain_kubelet_plugin(launch)
        if config.compute_domain_controller_namespace:
            start_compute_domain_controller_once_installed(launch)
        if config.complete_helm_hooks:
            start_hook_completer(launch)
        timings = launch.state["timings"] = {
            "control_plane_seconds": round(control_plane_seconds, 1),
            "nodes_ready_seconds": round(time.monotonic() - nodes_started, 1),
            "total_seconds": round(time.monotonic() - started_at, 1),
        }
        launch.save()
        log(
            f"{len(trays)} GPU nodes and {len(control)} control-plane node Ready in "
            f"{timings['nodes_ready_seconds']}s; up in {timings['total_seconds']}s; "
            f"KUBECONFIG={launch.run_dir / 'kubeconfig'}"
        )
        return launch.state
    except BaseException as error:
        abort(launch, error)
        raise  # abort always raises; this keeps the type checker and readers sure of it


def down(run_dir: Path = DEFAULT_RUN_DIR) -> list[dict]:
    """Stop every process the harness started (its process group) and remove the state."""
    run_dir = run_dir.resolve()
    state = read_state(run_dir)
    stopped = []
    if state:
        for process in reversed(processes_of(state)):
            was_alive = process.alive()
            process.stop()
            if process.alive():
                raise HarnessError(f"could not stop {process.name} (pid {process.pid})")
            stopped.append({"name": process.name, "pid": process.pid, "was_running": was_alive})
    if run_dir.exists():
        shutil.rmtree(run_dir)
    return stopped


def status(run_dir: Path = DEFAULT_RUN_DIR) -> dict:
    state = read_state(run_dir.resolve())
    if not state:
        return {"running": False}
    processes = {process.name: {"pid": process.pid, "running": process.alive()} for process in processes_of(state)}
    return {
        "running": bool(processes) and all(p["running"] for p in processes.values()),
        "kubeconfig": state["kubeconfig"],
        "server": state["server"],
        "ports": state["ports"],
        "processes": processes,
        "nodes": len(state.get("nodes", [])),
        "timings": state.get("timings"),
    }
