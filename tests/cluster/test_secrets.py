# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""No secret leaves a cluster role's run: the shared Helm steps (gpufabric.cluster._helm_release) against the
harness, with a chart from a real Helm repository that requires basic authentication (its URL written with the
credentials, ``http://user:password@host/charts``) and registry credentials for the pull Secret.

The run is made at -vvv with the change_summary callback writing its report; the output, the report and every
base64 form of the secrets are searched, and the pull Secret is read back from the API server. A kubeconfig
given as a mapping (the harness's own, with its client key) is refused by the role without being shown.
"""

from __future__ import annotations

import base64
import functools
import http.server
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import role_runner
import yaml
from kubernetes import client

REPO_USER, REPO_PASSWORD = "charts-reader", "repo-s3cr3t-never-logged-c81f"
REGISTRY_USER, REGISTRY_PASSWORD = "fabric", "registry-s3cr3t-never-logged-2d7a"
REGISTRY = "registry.example.com"
SECRET_NAME = "probe-registry"


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def forbidden(*extra: str) -> list[str]:
    """Every form of the secrets that must not appear: plain, user:password, base64 of both."""
    plain = [REPO_PASSWORD, f"{REPO_USER}:{REPO_PASSWORD}", REGISTRY_PASSWORD, f"{REGISTRY_USER}:{REGISTRY_PASSWORD}",
             *extra]
    return plain + [b64(text) for text in plain]


class _AuthHandler(http.server.SimpleHTTPRequestHandler):
    """Serves the repository directory only to requests with the right basic credentials."""

    expected = "Basic " + b64(f"{REPO_USER}:{REPO_PASSWORD}")
    seen: list[tuple[str, bool]]

    def do_GET(self):
        allowed = self.headers.get("Authorization") == self.expected
        self.seen.append((self.path, allowed))
        if not allowed:
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="charts"')
            self.end_headers()
            return
        super().do_GET()

    def log_message(self, *args):
        return


@pytest.fixture(scope="module")
def repository(cluster, tmp_path_factory):
    """A Helm repository (helm package + helm repo index) behind basic authentication on 127.0.0.1."""
    work = tmp_path_factory.mktemp("secret-repo")
    chart = work / "secret-probe"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text(yaml.safe_dump({"apiVersion": "v2", "name": "secret-probe", "version": "0.1.0"}))
    (chart / "values.yaml").write_text(yaml.safe_dump({"imagePullSecrets": []}))
    (chart / "templates" / "configmap.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-probe\n"
        "data:\n  pullSecrets: {{ .Values.imagePullSecrets | join \",\" | quote }}\n")
    served = work / "charts"
    served.mkdir()
    cluster.run("helm", "package", str(chart), "--destination", str(served))
    cluster.run("helm", "repo", "index", str(served))
    seen: list[tuple[str, bool]] = []
    handler = functools.partial(type("Handler", (_AuthHandler,), {"seen": seen}), directory=str(work))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        port = server.server_address[1]
        yield {"url": f"http://{REPO_USER}:{REPO_PASSWORD}@127.0.0.1:{port}/charts", "port": port, "seen": seen}
    finally:
        server.shutdown()
        server.server_close()


def run_play(cluster, directory: Path, tasks: list) -> tuple[subprocess.CompletedProcess, str]:
    """ansible-playbook at -vvv with the change_summary callback; the output and every report written."""
    reports = directory / "reports"
    play = [{"name": "Shared Helm steps with secrets", "hosts": "localhost", "gather_facts": False,
             "module_defaults": {"group/kubernetes.core.k8s": {"kubeconfig": str(cluster.kubeconfig)},
                                 "group/kubernetes.core.helm": {"kubeconfig": str(cluster.kubeconfig)}},
             "tasks": tasks}]
    playbook = directory / "play.yml"
    playbook.write_text(yaml.safe_dump(play, sort_keys=False))
    env = cluster.env() | {
        "ANSIBLE_COLLECTIONS_PATH": role_runner.collections_path(),
        "ANSIBLE_COLLECTIONS_SCAN_SYS_PATH": "false",
        "ANSIBLE_LOCALHOST_WARNING": "false",
        "ANSIBLE_NOCOLOR": "true",
        "ANSIBLE_CALLBACKS_ENABLED": "gpufabric.cluster.change_summary",
        "GPUFABRIC_REPORT_DIR": str(reports),
    }
    completed = subprocess.run(
        [str(Path(sys.executable).parent / "ansible-playbook"), "-i", "localhost,", "-c", "local",
         "-e", f"ansible_python_interpreter={sys.executable}", "-vvv", str(playbook)],
        env=env, capture_output=True, text=True, timeout=600, check=False, cwd=str(directory))
    written = "".join(path.read_text() for path in sorted(reports.glob("*"))) if reports.is_dir() else ""
    return completed, completed.stdout + completed.stderr + written


def helm_steps(cluster, namespace: str, repo_url: str, kubeconfig) -> list:
    def step(tasks_from: str, **role_vars) -> dict:
        return {"name": f"Helm step {tasks_from}", "ansible.builtin.include_role": {
            "name": "gpufabric.cluster._helm_release", "tasks_from": tasks_from}, "vars": role_vars}

    return [
        step("source", _helm_release_role="gpu_operator", _helm_release_helm_binary=str(cluster.bin_dir / "helm"),
             _helm_release_chart_source={"path": "", "oci_ref": "", "repo_url": repo_url, "name": "secret-probe",
                                         "version": "0.1.0"}),
        step("cluster", _helm_release_role="gpu_operator", _helm_release_kubeconfig=kubeconfig,
             _helm_release_context=""),
        step("install", _helm_release_name="secret-probe", _helm_release_namespace=namespace,
             _helm_release_values={"imagePullSecrets": [SECRET_NAME]}, _helm_release_wait_timeout="2m",
             _helm_release_helm_binary=str(cluster.bin_dir / "helm"),
             _helm_release_registry_credentials={"server": REGISTRY, "username": REGISTRY_USER,
                                                 "password": REGISTRY_PASSWORD},
             _helm_release_registry_secret_name=SECRET_NAME),
    ]


def test_repository_and_registry_credentials_reach_helm_and_the_secret_and_nothing_else(
        api_client, cluster, namespace, repository, tmp_path):
    completed, output = run_play(cluster, tmp_path, helm_steps(cluster, namespace, repository["url"],
                                                               str(cluster.kubeconfig)))
    assert completed.returncode == 0, output
    # helm read the repository with the credentials (nothing was served without them)
    assert any(path.endswith("index.yaml") and allowed for path, allowed in repository["seen"]), repository["seen"]
    assert any(path.endswith("secret-probe-0.1.0.tgz") and allowed for path, allowed in repository["seen"])
    status = json.loads(cluster.run("helm", "status", "secret-probe", "-n", namespace, "-o", "json").stdout)
    assert status["info"]["status"] == "deployed"
    # the pull Secret itself: the credentials where they belong, and nowhere else in the object
    secret = client.CoreV1Api(api_client).read_namespaced_secret(SECRET_NAME, namespace)
    assert secret.type == "kubernetes.io/dockerconfigjson"
    assert sorted(secret.data) == [".dockerconfigjson"]
    config = json.loads(base64.b64decode(secret.data[".dockerconfigjson"]))
    assert config == {"auths": {REGISTRY: {"username": REGISTRY_USER, "password": REGISTRY_PASSWORD,
                                           "auth": b64(f"{REGISTRY_USER}:{REGISTRY_PASSWORD}")}}}
    metadata = json.dumps(api_client.sanitize_for_serialization(secret.metadata))
    for text in forbidden():
        assert text not in metadata, f"{text!r} in the Secret's metadata"
    # the run's output at -vvv and the change summary: no form of either secret, nor the Secret's data
    for text in forbidden(secret.data[".dockerconfigjson"]):
        assert text not in output, f"{text!r} found in the output or the reports"
    # the URL is shown, redacted, where the chart source is
    assert f"http://***@127.0.0.1:{repository['port']}/charts (secret-probe)" in output


def test_a_kubeconfig_mapping_is_refused_without_showing_it(cluster, namespace, repository, tmp_path):
    kubeconfig = yaml.safe_load(Path(cluster.kubeconfig).read_text())
    keys = [user["user"][key] for user in kubeconfig["users"] for key in ("client-key-data", "token")
            if key in user["user"]]
    assert keys, "the harness's kubeconfig holds a client key"
    completed, output = run_play(cluster, tmp_path, helm_steps(cluster, namespace, repository["url"], kubeconfig))
    assert completed.returncode == 2, output
    assert ("gpu_operator: gpu_operator_kubeconfig must be the path of a kubeconfig file, not a mapping (its content "
            "is not shown); write the kubeconfig to a file and set its path, or leave it empty for "
            "K8S_AUTH_KUBECONFIG, KUBECONFIG or ~/.kube/config") in output
    for text in forbidden(*keys):
        assert text not in output, f"{text[:12]!r}... found in the output or the reports"
    assert os.path.exists(cluster.kubeconfig)
