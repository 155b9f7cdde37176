# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""No secret in the output of a run, at -vvv: the shared Helm steps (gpufabric.cluster._helm_release) run by
ansible-playbook with a kubeconfig mapping and a chart repository URL with credentials, and the cluster roles' value
and Helm steps with secret-shaped values in their variables.

``helm`` here is a TEST FIXTURE script standing in for the helm binary (the unit tier has none): it records its
arguments and answers as helm does, with a Chart.yaml or with helm's own error for an unreachable repository,
which quotes the repository URL. The cluster tier runs the real helm against a real repository.
"""

from __future__ import annotations

import base64
import json
import os
import string
import subprocess
import sys
import textwrap

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.gpufabric.cluster.tests.unit.playbooks.fake_helm import make_fake_helm
from ansible_collections.gpufabric.cluster.tests.unit.playbooks.runner import ansible_playbook

USER, PASSWORD = "fabric", "s3cr3t-never-logged-91d4"
URL = f"https://{USER}:{PASSWORD}@charts.example.com/nvidia"
TOKEN = "kubeconfig-token-never-logged-5e2a"


def forbidden() -> list[str]:
    """Every form of the secrets the output must not hold."""
    pair = f"{USER}:{PASSWORD}"
    return [PASSWORD, pair, TOKEN] + [base64.b64encode(text.encode()).decode() for text in (pair, PASSWORD, TOKEN)]


def run_play(workdir, tasks: list, *extra: str) -> tuple[subprocess.CompletedProcess, str]:
    reports = workdir / "reports"
    play = [{"name": "Shared Helm steps", "hosts": "localhost", "gather_facts": False, "tasks": tasks}]
    (workdir / "play.yml").write_text(yaml.safe_dump(play, sort_keys=False))
    completed = ansible_playbook(["-i", "localhost,", "-c", "local", "-e",
                                  f"ansible_python_interpreter={sys.executable}", "-vvv", str(workdir / "play.yml"),
                                  *extra], workdir,
                                 env={"ANSIBLE_CALLBACKS_ENABLED": "gpufabric.cluster.change_summary",
                                      "GPUFABRIC_REPORT_DIR": str(reports)})
    written = "".join(path.read_text() for path in sorted(reports.glob("*"))) if reports.is_dir() else ""
    return completed, completed.stdout + completed.stderr + written


def assert_no_secret(text: str) -> None:
    for secret in forbidden():
        assert secret not in text, f"{secret!r} found in the output"


def include(tasks_from: str, **role_vars) -> dict:
    return {"name": f"Run {tasks_from}", "ansible.builtin.include_role": {
        "name": "gpufabric.cluster._helm_release", "tasks_from": tasks_from}, "vars": role_vars}


@pytest.fixture
def helm(tmp_path):
    """The fixture helm: records its argv in argv.json; fails as helm does when ``FAIL`` is in the environment."""
    script = tmp_path / "helm"
    script.write_text(textwrap.dedent(f"""\
        #!{sys.executable}
        # TEST FIXTURE: stands in for helm; records its arguments and answers as helm does.
        import json, os, sys
        with open({str(tmp_path / "argv.json")!r}, "w") as handle:
            json.dump(sys.argv[1:], handle)
        if os.environ.get("GPUFABRIC_TEST_HELM_FAIL"):
            url = {URL!r}
            sys.stderr.write(f'Error: looks like "{{url}}" is not a valid chart repository or cannot be reached\\n')
            sys.exit(1)
        print("apiVersion: v2\\nname: gpu-operator\\nversion: v26.7.0\\nappVersion: v26.7.0")
        """))
    script.chmod(0o755)
    return script


def source_vars(helm) -> dict:
    return {"_helm_release_role": "gpu_operator", "_helm_release_helm_binary": str(helm),
            "_helm_release_chart_source": {"path": "", "oci_ref": "", "repo_url": URL, "name": "gpu-operator",
                                           "version": "v26.7.0"}}


def test_a_kubeconfig_mapping_is_refused_naming_the_variable_and_never_shown(tmp_path):
    kubeconfig = {"apiVersion": "v1", "kind": "Config", "current-context": "admin",
                  "users": [{"name": "admin", "user": {"token": TOKEN}}]}
    completed, output = run_play(tmp_path, [include("cluster", _helm_release_role="gpu_operator",
                                                    _helm_release_kubeconfig=kubeconfig, _helm_release_context="")])
    assert completed.returncode == 2, output
    assert ("gpu_operator: gpu_operator_kubeconfig must be the path of a kubeconfig file, not a mapping (its content "
            "is not shown); write the kubeconfig to a file and set its path, or leave it empty for "
            "K8S_AUTH_KUBECONFIG, KUBECONFIG or ~/.kube/config") in output
    assert_no_secret(output)


@pytest.mark.parametrize("role", ["validate_rdma", "validate_compute_domain", "validate_nccl", "validate_dcgm"])
def test_a_validation_role_refuses_a_kubeconfig_mapping_before_anything_and_never_shows_it(tmp_path, role):
    kubeconfig = {"apiVersion": "v1", "kind": "Config", "current-context": "admin",
                  "users": [{"name": "admin", "user": {"token": TOKEN}}]}
    task = {"name": f"Run {role}", "ansible.builtin.include_role": {"name": f"gpufabric.cluster.{role}"},
            "vars": {f"{role}_kubeconfig": kubeconfig}}
    completed, output = run_play(tmp_path, [task])
    assert completed.returncode == 2, output
    assert (f"{role}: {role}_kubeconfig must be the path of a kubeconfig file, not a mapping (its content is not "
            "shown); write the kubeconfig to a file and set its path, or leave it empty for K8S_AUTH_KUBECONFIG, "
            "KUBECONFIG or ~/.kube/config") in output
    assert "changed=0" in output.split("PLAY RECAP")[-1], output
    assert_no_secret(output)


def test_a_repository_url_with_credentials_is_used_by_helm_and_never_shown(tmp_path, helm):
    show = {"name": "Show the chart picked", "ansible.builtin.debug": {"var": "__helm_release_chart"}}
    completed, output = run_play(tmp_path, [include("source", **source_vars(helm)), show])
    assert completed.returncode == 0, output
    assert json.loads((tmp_path / "argv.json").read_text()) == [
        "show", "chart", "gpu-operator", "--repo", "https://charts.example.com/nvidia", "--version", "v26.7.0",
        "--username", USER, "--password", PASSWORD]
    assert '"chart_repo_url": "https://charts.example.com/nvidia"' in output
    assert_no_secret(output)


def test_an_unreachable_repository_with_credentials_fails_redacted(tmp_path, helm):
    os.environ["GPUFABRIC_TEST_HELM_FAIL"] = "1"
    try:
        completed, output = run_play(tmp_path, [include("source", **source_vars(helm))])
    finally:
        del os.environ["GPUFABRIC_TEST_HELM_FAIL"]
    assert completed.returncode == 2, output
    expected = ('gpu_operator: chart source not usable: gpu_operator_chart_repo_url '
                'https://***@charts.example.com/nvidia (gpu-operator): Error: looks like '
                '"https://***@charts.example.com/nvidia" is not a valid chart repository or cannot be reached; '
                'with no repository reachable set gpu_operator_chart_path to a local chart')
    assert expected in output
    summary = json.loads((tmp_path / "reports" / "change-summary.json").read_text())
    failure = summary["plays"][0]["failed"]["localhost"]
    assert failure["task"] == "Check the chart"
    assert ("failed: gpu_operator: chart source not usable: gpu_operator_chart_repo_url "
            "https://***@charts.example.com/nvidia (g") in failure["message"]
    assert_no_secret(output)


# Issue 39 items 3 and 8: secret-shaped values in the cluster roles' variables (chart values, extra values, registry
# credentials, repository URLs, an installed release's values) never come out at -vvv or in a report, in clear or
# base64. The roles' value steps, the shared chart source and release steps and the DRA driver's plan run against
# the fixture helm (fake_helm.py); what needs the API server (the pull Secret, the ClusterPolicy) is the cluster
# tier's.
# Secrets hold a "Z", which nothing else in the play holds.
SECRET = st.builds(lambda first, rest: first + "Z" + rest,
                   st.text(string.ascii_letters.replace("Z", "") + string.digits, min_size=6, max_size=12),
                   st.text(string.ascii_letters.replace("Z", "") + string.digits + "-_.~", min_size=6, max_size=16))


def secret_forms(secrets: dict) -> list[str]:
    """Every form of the generated secrets the output must not hold: clear, base64, base64 as a user's password."""
    found = []
    for secret in secrets.values():
        found += [secret, base64.b64encode(secret.encode()).decode(),
                  base64.b64encode(f"fabric:{secret}".encode()).decode(),
                  base64.b64encode(f"$oauthtoken:{secret}".encode()).decode()]
    return found


def pem(body: str) -> str:
    return f"-----BEGIN RSA PRIVATE KEY-----\n{body}\n-----END RSA PRIVATE KEY-----\n"


def cluster_role_tasks(helm, secrets: dict) -> list:
    """The value and Helm steps of gpu_operator, network_operator and dra_driver, with the secrets in their inputs."""
    url = f"https://fabric:{secrets['url_password']}@charts.example.com/nvidia"
    helm_binary = str(helm.path)
    extra_values = {
        "driver": {"env": [{"name": "NGC_API_KEY", "value": secrets["api_key"]}, {"name": "LOG_LEVEL", "value": "4"}],
                   "repoConfig": {"configMapName": "repo", "password": secrets["password"]}},
        "licensing": {"clientToken": secrets["token"], "tlsKey": pem(secrets["pem_body"])},
        "proxy": {"url": f"http://proxy:{secrets['proxy_password']}@proxy.example.com:3128"},
        "registry": {"dockerConfig": json.dumps({"auths": {"nvcr.io": {
            "auth": base64.b64encode(f"$oauthtoken:{secrets['docker_password']}".encode()).decode()}}})}}
    credentials = {"server": "nvcr.io", "username": "$oauthtoken", "password": secrets["registry_password"]}
    return [
        {"name": "GPU Operator values", "ansible.builtin.include_role": {
            "name": "gpufabric.cluster.gpu_operator", "tasks_from": "values"},
         "vars": {"gpu_operator_hosts": [], "gpu_operator_driver": "operator", "gpu_operator_values": extra_values,
                  "gpu_operator_registry_credentials": credentials}},
        include("source", _helm_release_role="gpu_operator", _helm_release_helm_binary=helm_binary,
                _helm_release_chart_source={"path": "", "oci_ref": "", "repo_url": url, "name": "gpu-operator",
                                            "version": "v26.7.0"}),
        include("install", _helm_release_name="gpu-operator", _helm_release_namespace="gpu-operator",
                _helm_release_values="{{ __gpu_operator_release_values }}", _helm_release_wait_timeout="1m",
                _helm_release_helm_binary=helm_binary, _helm_release_registry_credentials={},
                _helm_release_registry_secret_name="gpu-operator-registry"),
        {"name": "Network Operator values", "ansible.builtin.include_role": {
            "name": "gpufabric.cluster.network_operator", "tasks_from": "release_values"},
         "vars": {"network_operator_values": extra_values, "network_operator_registry_credentials": credentials,
                  "__network_operator_nfd_found": {"resources": []}}},
        include("source", _helm_release_role="dra_driver", _helm_release_helm_binary=helm_binary,
                _helm_release_chart_source={"path": "", "oci_ref": "", "repo_url": url,
                                            "name": "dra-driver-nvidia-gpu", "version": "0.4.1"}),
        {"name": "DRA driver plan", "ansible.builtin.include_role": {
            "name": "gpufabric.cluster.dra_driver", "tasks_from": "plan"},
         "vars": {"dra_driver_helm_binary": helm_binary}},
        {"name": "DRA driver values", "ansible.builtin.include_role": {
            "name": "gpufabric.cluster.dra_driver", "tasks_from": "values"},
         "vars": {"dra_driver_values": extra_values, "dra_driver_registry_credentials": credentials,
                  "dra_driver_imex_mode": "dra"}},
    ]


def installed_release(secrets: dict) -> dict:
    """The DRA driver release the fixture helm reports installed, its values and manifest holding a secret."""
    token = secrets["installed_token"]
    manifest = ("apiVersion: v1\nkind: Secret\nmetadata:\n  name: nvidia-dra-driver-gpu-token\ndata:\n  token: "
                + base64.b64encode(token.encode()).decode() + "\n")
    return {"chart": "dra-driver-nvidia-gpu-0.4.1", "values": {"kubeletPlugin": {"env": [
        {"name": "HF_TOKEN", "value": token}]}}, "manifest": manifest}


SECRET_NAMES = ("url_password", "api_key", "password", "token", "pem_body", "proxy_password", "docker_password",
                "registry_password", "installed_token")


@settings(max_examples=3, deadline=None)
@given(st.lists(SECRET, min_size=len(SECRET_NAMES), max_size=len(SECRET_NAMES), unique=True))
def test_property_secrets_in_the_cluster_roles_variables_never_come_out(tmp_path_factory, drawn):
    secrets = dict(zip(SECRET_NAMES, drawn, strict=True))
    workdir = tmp_path_factory.mktemp("cluster-roles")
    helm = make_fake_helm(workdir / "fake-helm")
    helm.configure({"name": "gpu-operator", "version": "v26.7.0"}, installed_release(secrets))
    completed, output = run_play(workdir, cluster_role_tasks(helm, secrets))
    assert completed.returncode == 0, output[-3000:]
    for form in secret_forms(secrets):
        assert form not in output, f"{form!r} found in the output"
    # not vacuous: helm got the values with the secrets, the repository credentials as its own options ...
    assert secrets["api_key"] in helm.installed_values() and secrets["password"] in helm.installed_values()
    assert ["--username", "fabric", "--password", secrets["url_password"]] == helm.calls()[0][-4:]
    # ... and -v shows what is applied with the secrets hidden
    assert '"name": "NGC_API_KEY",' in output and '"value": "********"' in output
    assert "dra_driver: dra-driver-nvidia-gpu 0.4.1 installed" in output


def test_a_release_that_fails_is_shown_redacted_and_no_secret_comes_out(tmp_path, fake_helm):
    secrets = dict(zip(SECRET_NAMES, [f"s3cr3t{index}Zx9" for index in range(len(SECRET_NAMES))], strict=True))
    url = f"https://fabric:{secrets['url_password']}@charts.example.com/nvidia"
    fake_helm.configure({"name": "gpu-operator", "version": "v26.7.0"}, fail_upgrade=True, error_url=url)
    completed, output = run_play(tmp_path, cluster_role_tasks(fake_helm, secrets)[:3])
    assert completed.returncode == 2, output[-3000:]
    assert ('Error: upgrade: looks like "https://***@charts.example.com/nvidia" is not a valid chart repository or '
            'cannot be reached') in output
    summary = json.loads((tmp_path / "reports" / "change-summary.json").read_text())
    assert summary["plays"][0]["failed"]["localhost"]["task"] == "Install or upgrade the Helm release gpu-operator"
    for form in secret_forms(secrets):
        assert form not in output, f"{form!r} found in the output"
