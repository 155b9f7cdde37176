# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""kubernetes.core.k8s and kubernetes.core.helm work against the harness from an Ansible play."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import cluster_harness as harness
import pytest
import yaml
from kubernetes import client


def collections_path() -> str:
    """Our ANSIBLE_COLLECTIONS_PATH (the Makefile's), where `make cluster` puts kubernetes.core."""
    path = os.environ.get("ANSIBLE_COLLECTIONS_PATH") or str(harness.ROOT / ".build" / "collections")
    if not any((Path(p) / "ansible_collections" / "kubernetes" / "core").is_dir() for p in path.split(os.pathsep)):
        pytest.fail(f"kubernetes.core is not in {path}: `make cluster` installs it (tests/cluster/requirements.txt)")
    return path


def write_chart(directory: Path) -> Path:
    """A one-ConfigMap chart for kubernetes.core.helm."""
    chart = directory / "probe-chart"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text(
        yaml.safe_dump({"apiVersion": "v2", "name": "probe-chart", "version": "0.1.0", "kubeVersion": ">=1.34.0-0"})
    )
    (chart / "values.yaml").write_text(yaml.safe_dump({"tray": "none"}))
    (chart / "templates" / "configmap.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-probe\n"
        "data:\n  tray: {{ .Values.tray | quote }}\n"
    )
    return chart


def test_kubernetes_core_k8s_and_helm(api_client, cluster, namespace, tmp_path):
    chart = write_chart(tmp_path)
    tasks = [
        {
            "name": "Create a ConfigMap",
            "kubernetes.core.k8s": {
                "state": "present",
                "definition": {
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "metadata": {"name": "fabric", "namespace": namespace},
                    "data": {"clique": f"{harness.CLUSTER_UUID}.1"},
                },
            },
            "register": "created",
        },
        {
            "name": "Apply it again (idempotent)",
            "kubernetes.core.k8s": {
                "state": "present",
                "definition": "{{ created.result }}",
            },
            "register": "again",
        },
        {
            "name": "Read the GPU nodes",
            "kubernetes.core.k8s_info": {"kind": "Node", "label_selectors": ["nvidia.com/gpu.present=true"]},
            "register": "nodes",
        },
        {
            "name": "Install a chart",
            "kubernetes.core.helm": {
                "name": "probe",
                "chart_ref": str(chart),
                "release_namespace": namespace,
                "values": {"tray": cluster.gpu_nodes[0]},
                "wait": True,
                "binary_path": str(cluster.bin_dir / "helm"),
            },
            "register": "installed",
        },
        {
            "name": "Report",
            "ansible.builtin.copy": {
                "dest": str(tmp_path / "result.json"),
                "mode": "0644",
                "content": (
                    "{{ {'created': created.changed, 'again': again.changed, 'nodes': nodes.resources | length,"
                    " 'installed': installed.changed, 'status': installed.status.status} | to_json }}"
                ),
            },
        },
    ]
    play = [{"name": "Harness smoke", "hosts": "localhost", "gather_facts": False, "tasks": tasks}]
    playbook = tmp_path / "play.yml"
    playbook.write_text(yaml.safe_dump(play, sort_keys=False))
    env = cluster.env() | {
        "ANSIBLE_COLLECTIONS_PATH": collections_path(),
        "ANSIBLE_COLLECTIONS_SCAN_SYS_PATH": "false",
        "ANSIBLE_LOCALHOST_WARNING": "false",
        "ANSIBLE_INVENTORY_UNPARSED_WARNING": "false",
    }
    completed = subprocess.run(
        [
            str(Path(sys.executable).parent / "ansible-playbook"),
            "-i",
            "localhost,",
            "-c",
            "local",
            "-e",
            f"ansible_python_interpreter={sys.executable}",
            str(playbook),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    result = json.loads((tmp_path / "result.json").read_text())
    assert result == {
        "created": True,
        "again": False,
        "nodes": len(cluster.gpu_nodes),
        "installed": True,
        "status": "deployed",
    }
    configmap = client.CoreV1Api(api_client).read_namespaced_config_map("probe-probe", namespace)
    assert configmap.data == {"tray": cluster.gpu_nodes[0]}
