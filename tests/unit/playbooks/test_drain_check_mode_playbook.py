# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 42: the drain of a wave (roles/nvidia_driver/tasks/drain.yml) in check mode where no cluster can be read.

A plan made before the cluster exists (``make demo``'s upgrade plan has no control plane) reads the cluster for the
ComputeDomain workloads and cannot: the plan says so and that they would leave first, reports the drain, and fails
nothing. Without the drain, the cluster is not read at all. Two hosts of one wave, local, one ansible-playbook run
(about 6 s). The runs against a real control plane are tests/cluster/test_role_nvidia_driver_drain.py.
"""

from __future__ import annotations

import re
import sys

import yaml

from ansible_collections.gpufabric.cluster.tests.unit.playbooks.runner import ansible_playbook

HOSTS = ("gb200-tray-01", "gb200-tray-02")


def play(name: str, drain: bool, kubeconfig: str) -> dict:
    return {"name": name, "hosts": "gpu_nodes", "gather_facts": False,
            "vars": {"nvidia_driver_reboot_drain": drain, "nvidia_driver_kubernetes_node": "{{ inventory_hostname }}",
                     "nvidia_driver_kubeconfig": kubeconfig, "__nvidia_driver_wave": {"number": 1,
                                                                                      "hosts": list(HOSTS)}},
            "tasks": [{"name": "Publish the node of the host, as wave.yml does",
                       "ansible.builtin.set_fact": {"__nvidia_driver_node": "{{ inventory_hostname }}"}},
                      {"name": "Drain the wave", "ansible.builtin.include_role": {
                          "name": "gpufabric.cluster.nvidia_driver", "tasks_from": "drain"}}]}


def test_check_mode_without_a_cluster_reports_and_fails_nothing(tmp_path):
    local = {"ansible_connection": "local", "ansible_python_interpreter": sys.executable}
    (tmp_path / "inventory.yml").write_text(yaml.safe_dump({"all": {"children": {"gpu_nodes": {
        "hosts": dict.fromkeys(HOSTS, local)}}, "hosts": {"localhost": local}}}))
    kubeconfig = str(tmp_path / "no-kubeconfig")
    (tmp_path / "play.yml").write_text(yaml.safe_dump([play("WITH DRAIN", True, kubeconfig),
                                                       play("WITHOUT DRAIN", False, kubeconfig)], sort_keys=False))
    done = ansible_playbook(["-i", "inventory.yml", "play.yml", "--check"], tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    with_drain, without = done.stdout.split("PLAY [WITHOUT DRAIN]")
    text = " ".join(with_drain.split())
    assert ("check mode could not read the cluster: the ComputeDomain workloads on gb200-tray-01, gb200-tray-02 "
            "would leave first, together") in text
    assert all(f"Kubernetes node {host} would be cordoned and drained" in text for host in HOSTS)
    assert "no-kubeconfig" not in done.stdout
    assert "Read the pods of the cluster" in without and not re.search(r"ok: \[\S+ -> localhost\]", without)
    assert re.findall(r"^(\S+)\s*:.*failed=(\d+)", done.stdout, re.M) == [(HOSTS[0], "0"), (HOSTS[1], "0")]
