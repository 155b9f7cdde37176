# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 39 item 12: the dra_driver role refuses to downgrade an installed release before any change, unless
``dra_driver_allow_downgrade`` says the operator means it (``-e dra_driver_allow_downgrade=false`` is the string
"false", and false).

ansible-playbook runs the role's chart source step and its plan (``tasks/plan.yml``: read the installed release with
``kubernetes.core.helm_info``, plan the move) against the fixture helm of ``conftest.py``, which reports the
installed release; no cluster is needed for these steps.
"""

from __future__ import annotations

import sys

import pytest
import yaml

from ansible_collections.gpufabric.cluster.tests.unit.playbooks.runner import ansible_playbook

REFUSAL = ("dra_driver_upgrade: refusing to downgrade the DRA driver from dra-driver-nvidia-gpu 0.6.0 to "
           "dra-driver-nvidia-gpu 0.4.0, nothing changed: upstream upgrades forward only (the kubelet plugin "
           "checkpoint and the ComputeDomain API of a newer release may not be read back by an older one); set "
           "dra_driver_chart_version to 0.6.0 or later, or dra_driver_allow_downgrade to true to downgrade anyway")


def run_plan(workdir, helm, *extra: str) -> tuple[int, str]:
    """The chart source check and the plan of dra_driver, for chart 0.4.0 over an installed 0.6.0."""
    helm.configure({"name": "dra-driver-nvidia-gpu", "version": "0.4.0"},
                   {"chart": "dra-driver-nvidia-gpu-0.6.0", "values": {"nameOverride": "nvidia-dra-driver-gpu"}})
    source = {"path": "", "oci_ref": "", "repo_url": "https://charts.example.com/nvidia",
              "name": "dra-driver-nvidia-gpu", "version": "0.4.0"}
    tasks = [
        {"name": "Check the chart source", "ansible.builtin.include_role": {
            "name": "gpufabric.cluster._helm_release", "tasks_from": "source"},
         "vars": {"_helm_release_role": "dra_driver", "_helm_release_chart_source": source,
                  "_helm_release_helm_binary": str(helm.path)}},
        {"name": "Plan the release", "ansible.builtin.include_role": {
            "name": "gpufabric.cluster.dra_driver", "tasks_from": "plan"},
         "vars": {"dra_driver_helm_binary": str(helm.path)}},
    ]
    play = [{"name": "DRA driver plan", "hosts": "localhost", "gather_facts": False, "tasks": tasks}]
    (workdir / "play.yml").write_text(yaml.safe_dump(play, sort_keys=False))
    completed = ansible_playbook(["-i", "localhost,", "-c", "local", "-e",
                                  f"ansible_python_interpreter={sys.executable}", str(workdir / "play.yml"), *extra],
                                 workdir)
    return completed.returncode, " ".join((completed.stdout + completed.stderr).split())


@pytest.mark.parametrize("extra", [(), ("-e", "dra_driver_allow_downgrade=false"),
                                   ("-e", "dra_driver_allow_downgrade=no"),
                                   ("-e", '{"dra_driver_allow_downgrade": false}')],
                         ids=["default", "string-false", "string-no", "boolean-false"])
def test_an_installed_0_6_0_with_a_wanted_0_4_0_is_refused_before_any_change(tmp_path, fake_helm, extra):
    returncode, output = run_plan(tmp_path, fake_helm, *extra)
    assert returncode == 2, output
    assert REFUSAL in output
    assert "TASK [gpufabric.cluster.dra_driver : Show the plan]" not in output
    # helm was only asked: the chart, the release list and the release's details
    assert {call[0] for call in fake_helm.calls()} <= {"show", "list", "get"}, fake_helm.calls()


@pytest.mark.parametrize("value", ["true", "yes"])
def test_the_downgrade_is_planned_when_the_operator_means_it(tmp_path, fake_helm, value):
    returncode, output = run_plan(tmp_path, fake_helm, "-e", f"dra_driver_allow_downgrade={value}")
    assert returncode == 0, output
    assert "dra_driver: downgrade dra-driver-nvidia-gpu 0.6.0 to dra-driver-nvidia-gpu 0.4.0" in output
    assert "refusing" not in output
