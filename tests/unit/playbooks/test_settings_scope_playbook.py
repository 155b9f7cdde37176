# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 40 item 1: the site-wide settings resolve in every role however it is applied, with no per-role workaround.

ansible-core 2.19 gives a role applied with ``include_role`` the defaults of its own dependencies only. The cluster
roles hand the internal ``_helm_release`` their ``<role>_kubeconfig`` (default ``"{{ gpufabric_kubeconfig }}"``),
the validation roles hand it to ``_kubeconfig`` and ``_mpi_job``: on the starting commit each role first copied its
kubeconfig into a fact ("Resolve the kubeconfig setting") so that the include would not fail with
"'gpufabric_kubeconfig' is undefined". Now every role depends on ``gpufabric.cluster.gpufabric`` and the facts are
gone; these runs set no kubeconfig (the inventory sets nothing), so each include must resolve the site default and
get as far as the Kubernetes API, which is not there.

``helm`` is the TEST FIXTURE script of ``fake_helm.py``; there is no cluster.
"""

from __future__ import annotations

import re
import sys

import pytest
import yaml

from ansible_collections.gpufabric.cluster.tests.unit.playbooks.fake_helm import make_fake_helm
from ansible_collections.gpufabric.cluster.tests.unit.playbooks.runner import ansible_playbook

CHARTS = {"gpu_operator": ("gpu-operator", "v26.7.0"), "network_operator": ("network-operator", "v26.4.1"),
          "dra_driver": ("dra-driver-nvidia-gpu", "0.4.1")}


def run(workdir, playbook: str, *extra: str) -> tuple[int, str]:
    completed = ansible_playbook(["-i", "localhost,", "-c", "local", "-e",
                                  f"ansible_python_interpreter={sys.executable}", "-e",
                                  f"gpufabric_report_dir={workdir / 'reports'}", playbook, *extra], workdir,
                                 env={"KUBECONFIG": str(workdir / "no-kubeconfig")})
    return completed.returncode, " ".join((completed.stdout + completed.stderr).split())


@pytest.mark.parametrize("role", list(CHARTS))
def test_a_cluster_role_hands_its_site_default_kubeconfig_to_the_shared_helm_steps(tmp_path, host_trees, role):
    """localhost is the GPU host (the HGX H100 tree), so that every role derives its values from facts first."""
    helm = make_fake_helm(tmp_path / "helm")
    name, version = CHARTS[role]
    helm.configure({"name": name, "version": version})
    plays = [{"name": "Gather the facts of the GPU host", "hosts": "localhost", "gather_facts": False,
              "tasks": [{"name": "Gather", "gpufabric.cluster.fabric_facts": {"root": host_trees["hgx_h100"]}}]},
             {"name": "The cluster phase", "ansible.builtin.import_playbook": "gpufabric.cluster.cluster"}]
    (tmp_path / "play.yml").write_text(yaml.safe_dump(plays, sort_keys=False))
    returncode, output = run(tmp_path, str(tmp_path / "play.yml"), "-e", f'{{"gpufabric_cluster_roles": ["{role}"]}}',
                             "-e", "gpufabric_host_targets=localhost", "-e", f"{role}_helm_binary={helm.path}")
    assert returncode == 2, output[-3000:]
    assert "is undefined" not in output, output[-3000:]
    # _helm_release's own step, templated with the kubeconfig it was handed: empty, the site default
    assert (f"{role}: cannot use the Kubernetes API with {role}_kubeconfig (empty: K8S_AUTH_KUBECONFIG, KUBECONFIG "
            "or ~/.kube/config)") in output, output[-3000:]


@pytest.mark.parametrize("role", ["validate_compute_domain", "validate_rdma", "validate_nccl", "validate_dcgm"])
def test_a_validation_role_alone_hands_its_site_default_kubeconfig_to_the_shared_steps(tmp_path, role):
    """A play that applies the role with include_role and nothing else: its include of _kubeconfig must resolve the
    role's default kubeconfig; with no cluster, a later API read fails."""
    play = [{"name": "A validation role alone", "hosts": "localhost", "gather_facts": False,
             "tasks": [{"name": f"Run {role}", "ansible.builtin.include_role": {"name": f"gpufabric.cluster.{role}"}}]}]
    (tmp_path / "play.yml").write_text(yaml.safe_dump(play, sort_keys=False))
    returncode, output = run(tmp_path, str(tmp_path / "play.yml"))
    assert returncode == 2, output[-3000:]
    assert "is undefined" not in output, output[-3000:]
    assert re.search(r"TASK \[gpufabric\.cluster\._kubeconfig : Check that the kubeconfig is a path\] \** ok: "
                     r"\[localhost\]", output), output[-3000:]
