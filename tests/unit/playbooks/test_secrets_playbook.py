# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""No secret in the output of a run, at -vvv: the shared Helm steps (gpufabric.cluster._helm_release) run by
ansible-playbook with a kubeconfig mapping and a chart repository URL with credentials.

``helm`` here is a TEST FIXTURE script standing in for the helm binary (the unit tier has none): it records its
arguments and answers as helm does, with a Chart.yaml or with helm's own error for an unreachable repository,
which quotes the repository URL. The cluster tier runs the real helm against a real repository.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import textwrap

import pytest
import yaml

import ansible_collections

COLLECTIONS_PATH = next(os.path.dirname(path) for path in ansible_collections.__path__
                        if os.path.isdir(os.path.join(path, "gpufabric", "cluster")))
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
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=COLLECTIONS_PATH, ANSIBLE_NOCOLOR="1",
               ANSIBLE_LOCALHOST_WARNING="false", ANSIBLE_CALLBACKS_ENABLED="gpufabric.cluster.change_summary",
               GPUFABRIC_REPORT_DIR=str(reports))
    command = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", "localhost,", "-c", "local",
               "-e", f"ansible_python_interpreter={sys.executable}", "-vvv", str(workdir / "play.yml"), *extra]
    completed = subprocess.run(command, capture_output=True, text=True, env=env, cwd=str(workdir), check=False)
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


@pytest.mark.parametrize("role", ["validate_rdma", "validate_compute_domain"])
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
