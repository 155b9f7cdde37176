# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Start and stop the cluster test harness: etcd, a real Kubernetes control plane and kwok GPU nodes.

``python tests/cluster/harness.py up|down|status`` (``make cluster-up`` / ``make cluster-down``);
``serve-logs`` makes pods log the content of a file (kwok's server is the nodes' kubelet endpoint).
Everything listens on 127.0.0.1; certificates and service-account keys are generated at start;
the state (pids, ports, kubeconfig, logs) lives in the run directory, by default
``.build/cluster/run`` under the repository root (ignored by git). ``down`` ends the process
group of every process ``up`` started and removes the state. The binaries come from
``build.sh`` (a cache outside the repository); the fake nodes look like GB200 compute trays
labelled by Node Feature Discovery and GPU Feature Discovery.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import dataclasses
import datetime
import ipaddress
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
BUILD_SCRIPT = HERE / "build.sh"
VERSIONS_FILE = HERE / "versions.env"
DEFAULT_RUN_DIR = ROOT / ".build" / "cluster" / "run"

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
BINARIES = ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok", "kubectl", "helm")
# Ports: name -> (environment variable, what it is).
PORTS = {
    "etcd": ("GPUFABRIC_CLUSTER_ETCD_PORT", "etcd client"),
    "etcd_peer": ("GPUFABRIC_CLUSTER_ETCD_PEER_PORT", "etcd peer"),
    "apiserver": ("GPUFABRIC_CLUSTER_APISERVER_PORT", "kube-apiserver"),
    "controller_manager": ("GPUFABRIC_CLUSTER_CONTROLLER_MANAGER_PORT", "kube-controller-manager"),
    "scheduler": ("GPUFABRIC_CLUSTER_SCHEDULER_PORT", "kube-scheduler"),
    "kwok": ("GPUFABRIC_CLUSTER_KWOK_PORT", "kwok"),
}


class HarnessError(Exception):
    """A step of the harness failed; the message names the cause."""


@dataclasses.dataclass
class Config:
    """What ``up`` starts."""

    run_dir: Path = DEFAULT_RUN_DIR
    bin_dir: Path | None = None
    gpu_nodes: int = TRAYS_PER_RACK
    control_plane_nodes: int = 1
    ports: dict[str, int] = dataclasses.field(default_factory=dict)
    timeout: float = 120.0
    # Run the helm-hook-completer beside kwok (for molecule scenarios, where no test drives the hooks).
    complete_helm_hooks: bool = False


def log(message: str) -> None:
    """Progress on stderr, so that stdout stays machine-readable."""
    print(f"cluster harness: {message}", file=sys.stderr, flush=True)


# --- binaries ---------------------------------------------------------------------------------


def versions() -> dict[str, str]:
    """The pinned versions (KEY=value lines of versions.env)."""
    result = {}
    for line in VERSIONS_FILE.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#") and "=" in line:
            key, value = line.split("=", 1)
            result[key.strip()] = value.strip()
    return result


def bin_dir() -> Path:
    """The cache directory build.sh builds into (it says where; nothing is built)."""
    out = subprocess.run(["bash", str(BUILD_SCRIPT), "--print-dir"], capture_output=True, text=True, check=True)
    return Path(out.stdout.strip())


def build() -> Path:
    """Build the binaries unless the cache holds them; return their directory."""
    completed = subprocess.run(["bash", str(BUILD_SCRIPT)], check=False)
    if completed.returncode != 0:
        raise HarnessError(
            f"building the cluster binaries failed (tests/cluster/build.sh exited {completed.returncode})"
        )
    return bin_dir()


def check_binaries(directory: Path) -> None:
    missing = [name for name in BINARIES if not os.access(directory / name, os.X_OK)]
    if missing or not (directory / "kwok-stages").is_dir():
        raise HarnessError(
            f"cluster binaries missing in {directory}: {', '.join(missing) or 'kwok-stages'}; run `make cluster-build`"
        )


# --- ports ------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def port_in_use(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return True
    return False


def choose_ports(requested: dict[str, int]) -> dict[str, int]:
    """Requested ports (arguments, then environment) must be free; the others are picked free."""
    ports: dict[str, int] = {}
    for name, (env, what) in PORTS.items():
        port = requested.get(name) or int(os.environ.get(env) or 0)
        if port:
            if port_in_use(port):
                raise HarnessError(f"port {port} on 127.0.0.1 ({what}, {env}) is already in use")
        else:
            port = free_port()
            while port in ports.values():
                port = free_port()
        ports[name] = port
    return ports


# --- certificates -----------------------------------------------------------------------------


def make_pki(directory: Path) -> None:
    """A CA, the API server's serving certificate, client certificates and the service-account key."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    directory.mkdir(parents=True, exist_ok=True)
    now = datetime.datetime.now(datetime.UTC)

    def write_key(name: str, key) -> None:
        path = directory / f"{name}.key"
        path.write_bytes(
            key.private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
            )
        )
        path.chmod(0o600)

    def name_of(common_name: str, organization: str | None = None) -> x509.Name:
        attributes = [x509.NameAttribute(NameOID.COMMON_NAME, common_name)]
        if organization:
            attributes.append(x509.NameAttribute(NameOID.ORGANIZATION_NAME, organization))
        return x509.Name(attributes)

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = name_of("gpufabric-cluster-harness-ca")
    ca_cert = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=7))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(True, False, False, False, False, True, True, False, False), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    write_key("ca", ca_key)
    (directory / "ca.crt").write_bytes(ca_cert.public_bytes(serialization.Encoding.PEM))

    def issue(name: str, subject: x509.Name, server: bool) -> None:
        key = ec.generate_private_key(ec.SECP256R1())
        builder = (
            x509.CertificateBuilder()
            .subject_name(subject)
            .issuer_name(ca_name)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=7))
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(
                x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH if server else ExtendedKeyUsageOID.CLIENT_AUTH]),
                critical=False,
            )
        )
        if server:
            service_ip = next(ipaddress.ip_network(SERVICE_CIDR).hosts())
            builder = builder.add_extension(
                x509.SubjectAlternativeName(
                    [
                        x509.DNSName("localhost"),
                        x509.DNSName("kubernetes"),
                        x509.DNSName("kubernetes.default"),
                        x509.DNSName("kubernetes.default.svc"),
                        x509.DNSName("kubernetes.default.svc.cluster.local"),
                        x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
                        x509.IPAddress(service_ip),
                    ]
                ),
                critical=False,
            )
        cert = builder.sign(ca_key, hashes.SHA256())
        write_key(name, key)
        (directory / f"{name}.crt").write_bytes(cert.public_bytes(serialization.Encoding.PEM))

    issue("apiserver", name_of("kube-apiserver"), server=True)
    issue("admin", name_of("gpufabric-harness-admin", "system:masters"), server=False)
    issue("controller-manager", name_of("system:kube-controller-manager"), server=False)
    issue("scheduler", name_of("system:kube-scheduler"), server=False)
    # kwok's kubelet endpoint (pod logs): served with a certificate of our CA for 127.0.0.1, which the API
    # server checks (--kubelet-certificate-authority) and presents its own client certificate to.
    issue("kwok", name_of("kwok-kubelet"), server=True)
    issue("apiserver-kubelet-client", name_of("kube-apiserver-kubelet-client", "system:masters"), server=False)

    sa_key = ec.generate_private_key(ec.SECP256R1())
    write_key("sa", sa_key)
    (directory / "sa.pub").write_bytes(
        sa_key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )


def write_kubeconfig(path: Path, pki: Path, user: str, server: str) -> None:
    """A kubeconfig with the certificates embedded (JSON is YAML)."""

    def b64(name: str) -> str:
        return base64.b64encode((pki / name).read_bytes()).decode()

    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {"name": "gpufabric-harness", "cluster": {"server": server, "certificate-authority-data": b64("ca.crt")}}
        ],
        "users": [
            {
                "name": user,
                "user": {"client-certificate-data": b64(f"{user}.crt"), "client-key-data": b64(f"{user}.key")},
            }
        ],
        "contexts": [{"name": "gpufabric-harness", "context": {"cluster": "gpufabric-harness", "user": user}}],
        "current-context": "gpufabric-harness",
    }
    path.write_text(json.dumps(config, indent=2) + "\n")
    path.chmod(0o600)


# --- API ------------------------------------------------------------------------------------


class Api:
    """Just enough of a Kubernetes client for the harness (the tests use the real ones)."""

    def __init__(self, server: str, pki: Path):
        self.server = server
        self.context = ssl.create_default_context(cafile=str(pki / "ca.crt"))
        self.context.load_cert_chain(str(pki / "admin.crt"), str(pki / "admin.key"))

    def request(
        self, method: str, path: str, body: dict | None = None, timeout: float = 10.0, content_type: str = ""
    ):
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.server + path, data=data, method=method)
        request.add_header("Content-Type", content_type or "application/json")
        request.add_header("Accept", "application/json")
        with urllib.request.urlopen(request, context=self.context, timeout=timeout) as response:
            payload = response.read()
        try:
            return json.loads(payload)
        except ValueError:
            return payload.decode()


def wait_for(what: str, check, timeout: float, process_checks=()) -> None:
    """Poll ``check()`` until it is true; fail early when a process we started has exited."""
    deadline = time.monotonic() + timeout
    last_error = None
    while time.monotonic() < deadline:
        for process in process_checks:
            process.assert_running()
        try:
            if check():
                return
        except (OSError, urllib.error.URLError, ssl.SSLError, ValueError) as error:
            last_error = error
        time.sleep(0.25)
    raise HarnessError(
        f"timed out after {timeout:.0f}s waiting for {what}" + (f" (last error: {last_error})" if last_error else "")
    )


def http_ok(url: str, timeout: float = 2.0) -> bool:
    with urllib.request.urlopen(url, timeout=timeout) as response:
        return response.status == 200


def https_ok(url: str, timeout: float = 2.0) -> bool:
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    try:
        with urllib.request.urlopen(url, context=context, timeout=timeout) as response:
            return response.status == 200
    except urllib.error.HTTPError:
        return False


# --- processes --------------------------------------------------------------------------------


@dataclasses.dataclass
class Process:
    name: str
    pid: int
    log: Path
    binary: str

    # How our own child ended, once ``waitpid`` has reaped it ('' while it runs or is not ours).
    ended: str = dataclasses.field(default="", init=False, repr=False)

    def _reap(self) -> bool | None:
        """For a child of this process: True while it runs, False once it has ended; None otherwise.

        An unreaped child's pid cannot be recycled, so ``waitpid`` is the whole truth for it,
        whatever its command line reads (a script shows its interpreter there).
        """
        if self.ended:
            return False
        try:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
        except ChildProcessError:
            return None
        if pid == 0:
            return True
        if os.WIFSIGNALED(status):
            self.ended = f" (killed by signal {os.WTERMSIG(status)})"
        else:
            self.ended = f" (exit status {os.waitstatus_to_exitcode(status)})"
        return False

    def alive(self) -> bool:
        """Running and still the binary we started (a recycled pid is not ours)."""
        running_child = self._reap()
        if running_child is not None:
            return running_child
        try:
            cmdline = Path(f"/proc/{self.pid}/cmdline").read_bytes().split(b"\0")[0].decode()
            stat = Path(f"/proc/{self.pid}/stat").read_text()
        except OSError:
            return False
        # Right after Popen returns the command line can still read empty: the kernel wakes the
        # parent before it has written the new program's arguments.
        return cmdline in (self.binary, "") and stat.rsplit(")", 1)[1].split()[0] != "Z"

    def exit_status(self) -> str:
        """How it ended, when it is our child (``up`` in this process); '' otherwise."""
        self._reap()
        return self.ended

    def assert_running(self) -> None:
        if not self.alive():
            raise HarnessError(f"{self.name} exited{self.exit_status()}; the end of {self.log}:\n{tail(self.log)}")

    def stop(self, grace: float = 10.0) -> None:
        """SIGTERM to its process group, SIGKILL after ``grace`` seconds."""
        if not self.alive():
            return
        for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5.0)):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.pid, sig)
            deadline = time.monotonic() + wait
            while time.monotonic() < deadline:
                if not self.alive():
                    return
                time.sleep(0.1)


def tail(path: Path, lines: int = 25) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def start(name: str, binary: Path, args: list[str], run_dir: Path) -> Process:
    """Start ``binary`` in a process group of its own, logging to ``logs/<name>.log``."""
    log_path = run_dir / "logs" / f"{name}.log"
    with open(log_path, "ab") as log_file:
        process = subprocess.Popen(
            [str(binary), *args],
            stdin=subprocess.DEVNULL,
            stdout=log_file,
            stderr=subprocess.STDOUT,
            cwd=run_dir,
            start_new_session=True,
        )
    return Process(name, process.pid, log_path, str(binary))


# --- nodes ------------------------------------------------------------------------------------


def node_names(gpu_nodes: int, control_plane_nodes: int) -> tuple[list[str], list[str]]:
    width = max(2, len(str(gpu_nodes)))
    trays = [f"gb200-tray-{index:0{width}d}" for index in range(1, gpu_nodes + 1)]
    control = [f"control-plane-{index:02d}" for index in range(1, control_plane_nodes + 1)]
    return trays, control


def node_manifest(name: str, kube_version: str, gpu_index: int | None) -> dict:
    """A Node as kwok manages it, labelled as NFD and GPU Feature Discovery label a GB200 tray."""
    labels = {
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "arm64",
        "beta.kubernetes.io/os": "linux",
        "beta.kubernetes.io/arch": "arm64",
        "type": "kwok",
    }
    capacity = {"cpu": "144", "memory": "880Gi", "pods": "110", "ephemeral-storage": "3500Gi"}
    taints = []
    if gpu_index is None:
        labels["node-role.kubernetes.io/control-plane"] = ""
        capacity = {"cpu": "32", "memory": "128Gi", "pods": "110", "ephemeral-storage": "500Gi"}
        taints = [{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}]
    else:
        clique = gpu_index // TRAYS_PER_RACK + 1
        labels.update(
            {
                "feature.node.kubernetes.io/pci-10de.present": "true",
                "feature.node.kubernetes.io/pci-15b3.present": "true",
                "feature.node.kubernetes.io/cpu-model.vendor_id": "NVIDIA",
                "feature.node.kubernetes.io/kernel-version.major": "6",
                "feature.node.kubernetes.io/system-os_release.ID": "ubuntu",
                "feature.node.kubernetes.io/system-os_release.VERSION_ID": "24.04",
                "nvidia.com/gpu.present": "true",
                "nvidia.com/gpu.product": "NVIDIA-GB200",
                "nvidia.com/gpu.family": "blackwell",
                "nvidia.com/gpu.count": str(GPUS_PER_TRAY),
                "nvidia.com/gpu.memory": "189471",
                "nvidia.com/gpu.compute.major": "10",
                "nvidia.com/gpu.compute.minor": "0",
                "nvidia.com/gpu.clique": f"{CLUSTER_UUID}.{clique}",
                "nvidia.com/gpu.machine": "GB200-NVL72",
                "nvidia.com/mig.capable": "true",
                "nvidia.com/cuda.driver-version.major": "580",
                "nvidia.com/gpu.deploy.dcgm-exporter": "true",
                "gpufabric.cluster/rack": f"rack-{clique:02d}",
            }
        )
        capacity["nvidia.com/gpu"] = str(GPUS_PER_TRAY)
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": labels,
            "annotations": {KWOK_NODE_ANNOTATION: "fake", "node.alpha.kubernetes.io/ttl": "0"},
        },
        "spec": {"taints": taints} if taints else {},
        "status": {
            "capacity": capacity,
            "allocatable": dict(capacity),
            "nodeInfo": {
                "architecture": "arm64",
                "operatingSystem": "linux",
                "osImage": "Ubuntu 24.04.3 LTS",
                "kubeletVersion": kube_version,
                "containerRuntimeVersion": "containerd://2.1.4",
                "kernelVersion": "6.8.0-1036-nvidia-64k",
            },
        },
    }


def kwok_stages(stage_dir: Path) -> str:
    """kwok's own default stages, with pod-complete selecting pods by COMPLETE_ANNOTATION.

    kwok's default pod-complete finishes every pod a Job owns; here only the pods annotated
    ``gpufabric.cluster/kwok-complete: "true"`` finish (Job or not), the others keep running.
    """
    import yaml

    documents = []
    for path in sorted(stage_dir.glob("*.yaml")):
        stage = yaml.safe_load(path.read_text())
        if not isinstance(stage, dict) or stage.get("kind") != "Stage":
            continue
        if stage["metadata"]["name"] == "pod-complete":
            expressions = [
                expression
                for expression in stage["spec"]["selector"]["matchExpressions"]
                if "ownerReferences" not in expression["key"]
            ]
            expressions.append(
                {"key": f'.metadata.annotations["{COMPLETE_ANNOTATION}"]', "operator": "In", "values": ["true"]}
            )
            stage["spec"]["selector"]["matchExpressions"] = expressions
        documents.append(stage)

    class Dumper(yaml.SafeDumper):
        """Multi-line strings (the status templates) as literal blocks, as kwok writes them."""

    def represent_str(dumper, value):
        style = "|" if "\n" in value else None
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)

    Dumper.add_representer(str, represent_str)
    return yaml.dump_all(documents, Dumper=Dumper, sort_keys=False)


# --- up / down / status -----------------------------------------------------------------------


def complete_helm_hook_pods(api: Api) -> list[str]:
    """Annotate the Running pods of Helm hook Jobs so that kwok's pod-complete stage finishes them.

    Under kwok no container runs, so a chart's pre-install or post-delete hook Job would never end and
    ``helm install --wait`` would time out; a real container would exit. Returns the pods annotated now.
    """
    jobs = api.request("GET", "/apis/batch/v1/jobs", timeout=30)["items"]
    hooks = {
        (job["metadata"]["namespace"], job["metadata"]["name"])
        for job in jobs
        if "helm.sh/hook" in (job["metadata"].get("annotations") or {})
    }
    if not hooks:
        return []
    selector = urllib.parse.quote("batch.kubernetes.io/job-name")
    pods = api.request("GET", f"/api/v1/pods?labelSelector={selector}", timeout=30)["items"]
    completed = []
    for pod in pods:
        meta = pod["metadata"]
        job = (meta.get("labels") or {}).get("batch.kubernetes.io/job-name")
        done = (meta.get("annotations") or {}).get(COMPLETE_ANNOTATION) == "true"
        if (meta["namespace"], job) in hooks and not done and pod.get("status", {}).get("phase") == "Running":
            api.request(
                "PATCH",
                f"/api/v1/namespaces/{meta['namespace']}/pods/{meta['name']}",
                {"metadata": {"annotations": {COMPLETE_ANNOTATION: "true"}}},
                content_type="application/merge-patch+json",
            )
            completed.append(f"{meta['namespace']}/{meta['name']}")
    return completed


def complete_served_pods(api: Api) -> list[str]:
    """Annotate the Running pods that a ClusterLogs annotated COMPLETE_ANNOTATION serves, so that they finish.

    Their log is the recorded output of a program that ran to its end: the container would have exited.
    Returns the pods annotated now.
    """
    rules = [
        (item["spec"].get("selector") or {})
        for item in api.request("GET", f"{KWOK_API}/clusterlogs", timeout=30)["items"]
        if (item["metadata"].get("annotations") or {}).get(COMPLETE_ANNOTATION) == "true"
    ]
    if not rules:
        return []
    completed = []
    for pod in api.request("GET", "/api/v1/pods?fieldSelector=status.phase%3DRunning", timeout=30)["items"]:
        meta = pod["metadata"]
        if (meta.get("annotations") or {}).get(COMPLETE_ANNOTATION) == "true":
            continue
        if any(
            (not rule.get("matchNamespaces") or meta["namespace"] in rule["matchNamespaces"])
            and (not rule.get("matchNames") or meta["name"] in rule["matchNames"])
            for rule in rules
        ):
            api.request(
                "PATCH",
                f"/api/v1/namespaces/{meta['namespace']}/pods/{meta['name']}",
                {"metadata": {"annotations": {COMPLETE_ANNOTATION: "true"}}},
                content_type="application/merge-patch+json",
            )
            completed.append(f"{meta['namespace']}/{meta['name']}")
    return completed


def run_helm_hook_completer(run_dir: Path, interval: float = 1.0) -> None:
    """Loop of the helm-hook-completer process until stopped (SIGTERM): finish Helm hook pods, and the pods
    that a ClusterLogs marked to complete serves (``serve_logs(..., complete=True)``)."""
    state = read_state(run_dir.resolve())
    if not state:
        raise HarnessError(f"no harness state in {run_dir}")
    api = Api(state["server"], Path(state["run_dir"]) / "pki")
    while True:
        for what, step in (("Helm hook pod", complete_helm_hook_pods), ("served pod", complete_served_pods)):
            try:
                for pod in step(api):
                    log(f"completed {what} {pod}")
            except urllib.error.HTTPError as error:
                if error.code != 409:  # a pod that changed since the list: the next round sees it again
                    log(f"pod completer: {what}: HTTP {error.code}")
            except (OSError, urllib.error.URLError, ssl.SSLError, ValueError, KeyError) as error:
                log(f"pod completer: {what}: {error}")
        time.sleep(interval)


# --- pod logs (kwok ClusterLogs) --------------------------------------------------------------


def _safe_name(text: str) -> str:
    import re

    name = re.sub(r"[^a-z0-9.-]+", "-", text.lower()).strip("-.")
    return name[:253] or "logs"


def cri_log(text: str, stream: str = "stdout") -> str:
    """``text`` as a container runtime writes it (the CRI log format kwok's server reads): one
    ``<RFC 3339 time> <stream> F <line>`` per line."""
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return "".join(f"{stamp} {stream} F {line}\n" for line in text.splitlines())


def serve_logs(
    api: Api,
    run_dir: Path,
    name: str,
    log_file: Path,
    namespaces: list[str] | None = None,
    pods: list[str] | None = None,
    containers: list[str] | None = None,
    complete: bool = False,
) -> dict:
    """Pods matching ``namespaces``/``pods`` (empty: all) log the content of ``log_file`` from now on.

    A ClusterLogs ``name`` (created or replaced) tells kwok's kubelet endpoint which file to serve for
    ``GET .../pods/<pod>/log`` (``containers``: only those; empty: every container); kwok reads the CRI log
    format, so the file is served from a CRI copy in ``<run_dir>/served-logs/``. With ``complete``
    the pod completer (``up --complete-helm-hooks``, or ``complete_served_pods``) also has those pods
    finish once Running, as a container that printed that output would. Returns the object.
    """
    source = Path(log_file).resolve()
    if not source.is_file():
        raise HarnessError(f"serve_logs {name}: no log file {source}")
    name = _safe_name(name)
    path = run_dir.resolve() / "served-logs" / f"{name}.log"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(cri_log(source.read_text(errors="replace")))
    selector = {}
    if namespaces:
        selector["matchNamespaces"] = list(namespaces)
    if pods:
        selector["matchNames"] = list(pods)
    entry: dict = {"logsFile": str(path)}
    if containers:
        entry["containers"] = list(containers)
    body = {
        "apiVersion": "kwok.x-k8s.io/v1alpha1",
        "kind": "ClusterLogs",
        "metadata": {
            "name": name,
            "labels": {MANAGED_BY_LABEL: "gpufabric-cluster-harness"},
            "annotations": {COMPLETE_ANNOTATION: "true", "gpufabric.cluster/log-source": str(source)}
            if complete
            else {"gpufabric.cluster/log-source": str(source)},
        },
        "spec": {"selector": selector, "logs": [entry]},
    }
    with contextlib.suppress(urllib.error.HTTPError):
        api.request("DELETE", f"{KWOK_API}/clusterlogs/{name}")
    return api.request("POST", f"{KWOK_API}/clusterlogs", body)


def unserve_logs(api: Api, name: str) -> bool:
    """Remove the ClusterLogs ``name``; False when there was none."""
    try:
        api.request("DELETE", f"{KWOK_API}/clusterlogs/{_safe_name(name)}")
    except urllib.error.HTTPError as error:
        if error.code == 404:
            return False
        raise
    return True


def api_of(run_dir: Path) -> Api:
    """A client of the running harness in ``run_dir``."""
    state = read_state(run_dir.resolve())
    if not state:
        raise HarnessError(f"no harness state in {run_dir}; is it up?")
    return Api(state["server"], Path(state["run_dir"]) / "pki")


def install_kwok_crds(api: Api, directory: Path, timeout: float) -> None:
    """Create kwok's CRDs (KWOK_CRDS, from build.sh) and wait until the API server serves them."""
    import yaml

    for crd in KWOK_CRDS:
        path = directory / "kwok-crds" / f"kwok.x-k8s.io_{crd}.yaml"
        if not path.is_file():
            raise HarnessError(f"kwok CRD {path} is missing; run `make cluster-build`")
        api.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", yaml.safe_load(path.read_text()))

    def established() -> bool:
        for crd in KWOK_CRDS:
            item = api.request("GET", f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{crd}.kwok.x-k8s.io")
            conditions = (item.get("status") or {}).get("conditions") or []  # null until the API server sets them
            if not any(c["type"] == "Established" and c["status"] == "True" for c in conditions):
                return False
        api.request("GET", f"{KWOK_API}/clusterlogs")
        return True

    wait_for("kwok's CRDs to be served", established, timeout)


def read_state(run_dir: Path) -> dict | None:
    try:
        return json.loads((run_dir / "state.json").read_text())
    except (OSError, ValueError):
        return None


def processes_of(state: dict) -> list[Process]:
    return [Process(p["name"], p["pid"], Path(p["log"]), p["binary"]) for p in state.get("processes", [])]


def up(config: Config) -> dict:
    """Start everything; return the state. On failure stop what was started and raise HarnessError."""
    run_dir = config.run_dir.resolve()
    state = read_state(run_dir)
    if state and any(process.alive() for process in processes_of(state)):
        raise HarnessError(f"a harness is already running from {run_dir}; run `harness.py down` first")
    directory = Path(config.bin_dir) if config.bin_dir else bin_dir()
    check_binaries(directory)
    started_at = time.monotonic()
    if run_dir.exists():
        shutil.rmtree(run_dir)
    (run_dir / "logs").mkdir(parents=True)
    ports = choose_ports(config.ports)
    kube_version = versions()["KUBERNETES_VERSION"]
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
    processes: list[Process] = []

    def save() -> None:
        state["processes"] = [
            {"name": p.name, "pid": p.pid, "log": str(p.log), "binary": p.binary} for p in processes
        ]
        (run_dir / "state.json").write_text(json.dumps(state, indent=2) + "\n")

    try:
        pki = run_dir / "pki"
        make_pki(pki)
        write_kubeconfig(run_dir / "kubeconfig", pki, "admin", server)
        write_kubeconfig(run_dir / "controller-manager.kubeconfig", pki, "controller-manager", server)
        write_kubeconfig(run_dir / "scheduler.kubeconfig", pki, "scheduler", server)
        save()

        etcd_url = f"http://127.0.0.1:{ports['etcd']}"
        peer_url = f"http://127.0.0.1:{ports['etcd_peer']}"
        processes.append(
            start(
                "etcd",
                directory / "etcd",
                [
                    "--name=harness",
                    f"--data-dir={run_dir / 'etcd'}",
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
                run_dir,
            )
        )
        save()
        wait_for(
            "etcd /health",
            lambda: http_ok(f"{etcd_url}/health"),
            config.timeout,
            processes,
        )

        processes.append(
            start(
                "kube-apiserver",
                directory / "kube-apiserver",
                [
                    f"--etcd-servers={etcd_url}",
                    "--bind-address=127.0.0.1",
                    "--advertise-address=127.0.0.1",
                    f"--secure-port={ports['apiserver']}",
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
                run_dir,
            )
        )
        save()
        api = Api(server, pki)
        wait_for("kube-apiserver /readyz", lambda: api.request("GET", "/readyz") == "ok", config.timeout, processes)
        try:
            api.request("GET", "/apis/resource.k8s.io/v1")
        except urllib.error.HTTPError as error:
            raise HarnessError(f"kube-apiserver does not serve resource.k8s.io/v1 (DRA): HTTP {error.code}") from error

        processes.append(
            start(
                "kube-controller-manager",
                directory / "kube-controller-manager",
                [
                    f"--kubeconfig={run_dir / 'controller-manager.kubeconfig'}",
                    f"--authentication-kubeconfig={run_dir / 'controller-manager.kubeconfig'}",
                    f"--authorization-kubeconfig={run_dir / 'controller-manager.kubeconfig'}",
                    "--bind-address=127.0.0.1",
                    f"--secure-port={ports['controller_manager']}",
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
                run_dir,
            )
        )
        processes.append(
            start(
                "kube-scheduler",
                directory / "kube-scheduler",
                [
                    f"--kubeconfig={run_dir / 'scheduler.kubeconfig'}",
                    f"--authentication-kubeconfig={run_dir / 'scheduler.kubeconfig'}",
                    f"--authorization-kubeconfig={run_dir / 'scheduler.kubeconfig'}",
                    "--bind-address=127.0.0.1",
                    f"--secure-port={ports['scheduler']}",
                    "--leader-elect=false",
                    "--profiling=false",
                    "--v=1",
                ],
                run_dir,
            )
        )
        (run_dir / "kwok.yaml").write_text(kwok_stages(directory / "kwok-stages"))
        install_kwok_crds(api, directory, config.timeout)
        processes.append(
            start(
                "kwok",
                directory / "kwok",
                [
                    f"--kubeconfig={run_dir / 'kubeconfig'}",
                    f"--config={run_dir / 'kwok.yaml'}",
                    "--manage-all-nodes=false",
                    f"--manage-nodes-with-annotation-selector={KWOK_NODE_ANNOTATION}=fake",
                    f"--cidr={POD_CIDR}",
                    "--node-ip=127.0.0.1",
                    "--node-lease-duration-seconds=40",
                    f"--server-address=127.0.0.1:{ports['kwok']}",
                    # The nodes report this port as their kubelet endpoint; the API server calls it for pod logs.
                    f"--node-port={ports['kwok']}",
                    f"--tls-cert-file={pki / 'kwok.crt'}",
                    f"--tls-private-key-file={pki / 'kwok.key'}",
                    f"--enable-crds={','.join(KWOK_CRDS.values())}",
                ],
                run_dir,
            )
        )
        save()
        for name, port in (
            ("kube-controller-manager", ports["controller_manager"]),
            ("kube-scheduler", ports["scheduler"]),
        ):
            wait_for(
                f"{name} /healthz",
                lambda port=port: https_ok(f"https://127.0.0.1:{port}/healthz"),
                config.timeout,
                processes,
            )
        control_plane_seconds = time.monotonic() - started_at
        log(f"control plane ready in {control_plane_seconds:.1f}s at {server}")

        nodes_started = time.monotonic()
        trays, control = node_names(config.gpu_nodes, config.control_plane_nodes)
        state["nodes"] = control + trays
        save()
        wait_for(
            "the default service account",
            lambda: api.request("GET", "/api/v1/namespaces/default/serviceaccounts/default"),
            config.timeout,
            processes,
        )
        for name in control:
            api.request("POST", "/api/v1/nodes", node_manifest(name, kube_version, None))
        for index, name in enumerate(trays):
            api.request("POST", "/api/v1/nodes", node_manifest(name, kube_version, index))
        wanted = set(state["nodes"])

        def all_ready() -> bool:
            items = api.request("GET", "/api/v1/nodes?labelSelector=type%3Dkwok", timeout=30)["items"]
            ready = {
                item["metadata"]["name"]
                for item in items
                if any(c["type"] == "Ready" and c["status"] == "True" for c in item["status"].get("conditions", []))
            }
            return wanted <= ready

        wait_for(f"{len(wanted)} kwok nodes to be Ready", all_ready, config.timeout, processes)
        if config.complete_helm_hooks:
            processes.append(
                start(
                    "helm-hook-completer",
                    Path(sys.executable),
                    [str(Path(__file__).resolve()), "--run-dir", str(run_dir), "complete-helm-hooks"],
                    run_dir,
                )
            )
            save()
        state["timings"] = {
            "control_plane_seconds": round(control_plane_seconds, 1),
            "nodes_ready_seconds": round(time.monotonic() - nodes_started, 1),
            "total_seconds": round(time.monotonic() - started_at, 1),
        }
        save()
        log(
            f"{len(trays)} GPU nodes and {len(control)} control-plane node Ready in "
            f"{state['timings']['nodes_ready_seconds']}s; up in {state['timings']['total_seconds']}s; "
            f"KUBECONFIG={run_dir / 'kubeconfig'}"
        )
        return state
    except BaseException as error:
        for process in reversed(processes):
            process.stop()
        with contextlib.suppress(OSError):
            (run_dir / "state.json").unlink()
        if isinstance(error, HarnessError):
            raise
        if isinstance(error, urllib.error.HTTPError):
            detail = error.read().decode(errors="replace")[:2000]
            raise HarnessError(f"API request failed: HTTP {error.code} {error.reason}: {detail}") from error
        if isinstance(error, Exception):
            raise HarnessError(f"{type(error).__name__}: {error}") from error
        raise


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


def install_kubernetes_core(wheel_dir: Path, collections: Path) -> Path:
    """Extract kubernetes.core from the ``ansible`` wheel that tests/cluster/requirements.txt pins.

    Galaxy is not reachable; PyPI is. The collection goes under ``<collections>/ansible_collections``
    (our ANSIBLE_COLLECTIONS_PATH) rather than into the virtual environment, which the Makefile keeps
    out of the collection search path (ANSIBLE_COLLECTIONS_SCAN_SYS_PATH=false).
    """
    wheels = sorted(wheel_dir.glob("ansible-*.whl"))
    if not wheels:
        raise HarnessError(f"no ansible wheel in {wheel_dir}")
    prefix = "ansible_collections/kubernetes/core/"
    target = collections / prefix
    if target.exists():
        shutil.rmtree(target)
    with zipfile.ZipFile(wheels[-1]) as wheel:
        members = [name for name in wheel.namelist() if name.startswith(prefix)]
        if not members:
            raise HarnessError(f"{wheels[-1].name} holds no kubernetes.core collection")
        wheel.extractall(collections, members)
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--run-dir", type=Path, default=Path(os.environ.get("GPUFABRIC_CLUSTER_RUN_DIR", DEFAULT_RUN_DIR))
    )
    commands = parser.add_subparsers(dest="command", required=True)
    up_parser = commands.add_parser("up", help="build if needed, start everything, wait until the nodes are Ready")
    up_parser.add_argument(
        "--gpu-nodes", type=int, default=int(os.environ.get("GPUFABRIC_CLUSTER_GPU_NODES", TRAYS_PER_RACK))
    )
    up_parser.add_argument("--control-plane-nodes", type=int, default=1)
    up_parser.add_argument("--timeout", type=float, default=float(os.environ.get("GPUFABRIC_CLUSTER_TIMEOUT", 180)))
    up_parser.add_argument("--no-build", action="store_true", help="fail instead of building missing binaries")
    up_parser.add_argument(
        "--complete-helm-hooks",
        action="store_true",
        help="also run the helm-hook-completer: Helm hook Jobs' pods finish, as their containers would",
    )
    for name, (env, what) in PORTS.items():
        up_parser.add_argument(f"--{name.replace('_', '-')}-port", type=int, default=0, help=f"{what} port (or {env})")
    commands.add_parser("down", help="stop everything the harness started and remove its state")
    commands.add_parser("status", help="print the state as JSON")
    commands.add_parser(
        "complete-helm-hooks", help="finish Helm hook pods and served pods marked to complete until stopped (by up)"
    )
    serve_parser = commands.add_parser(
        "serve-logs", help="pods matching the selector log the content of FILE (a kwok ClusterLogs named NAME)"
    )
    serve_parser.add_argument("name")
    serve_parser.add_argument("--file", type=Path, required=True, help="the log, served as the container's output")
    serve_parser.add_argument("--namespace", action="append", default=[], help="pods of this namespace (repeatable)")
    serve_parser.add_argument("--pod", action="append", default=[], help="pods of this name (repeatable)")
    serve_parser.add_argument("--container", action="append", default=[], help="only this container (repeatable)")
    serve_parser.add_argument(
        "--complete", action="store_true", help="the pods also finish once Running (needs up --complete-helm-hooks)"
    )
    unserve_parser = commands.add_parser("unserve-logs", help="remove the ClusterLogs NAME")
    unserve_parser.add_argument("name")
    commands.add_parser("build", help="build the binaries into the cache (build.sh)")
    core_parser = commands.add_parser("install-kubernetes-core", help="extract kubernetes.core from the ansible wheel")
    core_parser.add_argument("wheel_dir", type=Path)
    core_parser.add_argument("collections", type=Path)
    args = parser.parse_args(argv)

    def terminated(signum, _frame):
        raise SystemExit(128 + signum)

    # SIGTERM in the middle of `up` unwinds like Ctrl-C: what was started is stopped.
    signal.signal(signal.SIGTERM, terminated)
    try:
        if args.command == "up":
            directory = bin_dir() if args.no_build else build()
            ports = {name: getattr(args, f"{name}_port") for name in PORTS}
            state = up(
                Config(
                    run_dir=args.run_dir,
                    bin_dir=directory,
                    gpu_nodes=args.gpu_nodes,
                    control_plane_nodes=args.control_plane_nodes,
                    ports=ports,
                    timeout=args.timeout,
                    complete_helm_hooks=args.complete_helm_hooks,
                )
            )
            print(f"export KUBECONFIG={state['kubeconfig']} PATH={state['bin_dir']}:$PATH")
        elif args.command == "down":
            for process in down(args.run_dir):
                log(
                    f"stopped {process['name']} (pid {process['pid']})"
                    + ("" if process["was_running"] else ", had exited")
                )
        elif args.command == "status":
            print(json.dumps(status(args.run_dir), indent=2))
        elif args.command == "complete-helm-hooks":
            run_helm_hook_completer(args.run_dir)
        elif args.command == "serve-logs":
            served = serve_logs(
                api_of(args.run_dir),
                args.run_dir,
                args.name,
                args.file,
                namespaces=args.namespace,
                pods=args.pod,
                containers=args.container,
                complete=args.complete,
            )
            print(json.dumps({"name": served["metadata"]["name"], "spec": served["spec"]}))
        elif args.command == "unserve-logs":
            print(json.dumps({"name": args.name, "removed": unserve_logs(api_of(args.run_dir), args.name)}))
        elif args.command == "build":
            print(build())
        elif args.command == "install-kubernetes-core":
            log(f"kubernetes.core in {install_kubernetes_core(args.wheel_dir, args.collections)}")
    except HarnessError as error:
        print(f"cluster harness: error: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
