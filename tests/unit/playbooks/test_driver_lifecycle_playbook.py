# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 42 item 3: nvidia_driver refuses to install a driver branch past its end of life, unless allowed.

The role's own decision (tasks/validate.yml, where it decides what to install) runs for real over a recorded GB200
tray whose facts are in the fact cache (see test_imex_membership_playbook.py); the tray runs 570.172.08. R575 ended
(NVIDIA's R580 documentation lists it as end of life), R570 ended in February 2026: both are past their end of life
on any day these tests run.
"""

from __future__ import annotations

import json

import pytest
import yaml

from ansible_collections.gpufabric.cluster.tests.unit.playbooks.test_imex_membership_playbook import (
    TRAYS,
    make_site,
    run,
)

PLAY = [{"name": "Driver", "hosts": "gpu_nodes", "gather_facts": True, "tasks": [
    {"name": "Load the variables of this OS", "ansible.builtin.include_role": {
        "name": "gpufabric.cluster._os_vars", "tasks_from": "load"}, "vars": {"_os_vars_role": "nvidia_driver"}},
    {"name": "Decide", "ansible.builtin.include_role": {
        "name": "gpufabric.cluster.nvidia_driver", "tasks_from": "validate"}},
    {"name": "Show the plan", "ansible.builtin.debug": {"msg": "PLAN {{ nvidia_driver_plan | to_json }}"}}]}]


def decide(tmp_path, tray_facts, root, variables: dict, check: bool) -> tuple[int, str]:
    site = make_site(tmp_path, tray_facts, root, cached=tuple(TRAYS))
    (site / "driver.yml").write_text(yaml.safe_dump(PLAY, sort_keys=False))
    return run(site, "--limit", "tray-01", "-e", json.dumps(variables), *(["--check"] if check else []),
               playbook="driver.yml")


@pytest.mark.parametrize("check", [True, False])
@pytest.mark.parametrize(("variables", "named"), [
    ({"nvidia_driver_branch": "575"}, "nvidia_driver_branch 575 is past its end of life 2025-08-04"),
    ({"nvidia_driver_branch": 575, "nvidia_driver_package_version": "575.57.08-1"},
     "nvidia_driver_branch 575 (nvidia_driver_package_version 575.57.08-1) is past its end of life 2025-08-04"),
])
def test_an_install_of_a_branch_past_its_end_of_life_is_refused(tmp_path, tray_facts, host_trees,
                                                                variables, named, check):
    returncode, output = decide(tmp_path, tray_facts, host_trees["gb200_tray"], variables, check)
    assert returncode == 2, output[-3000:]
    assert (f"host tray-01: {named} in NVIDIA's driver lifecycle; choose a supported branch, or set "
            "nvidia_driver_allow_end_of_life to true to install it anyway") in output, output[-3000:]
    assert "PLAN" not in output.replace("Show the plan", "")


def test_the_setting_allows_it(tmp_path, tray_facts, host_trees):
    returncode, output = decide(tmp_path, tray_facts, host_trees["gb200_tray"],
                                {"nvidia_driver_branch": "575", "nvidia_driver_allow_end_of_life": True}, True)
    assert returncode == 0, output[-3000:]
    assert '"msg": "PLAN {\\"action\\": \\"install\\", \\"branch\\": \\"575\\", \\"version\\": \\"\\"}"' in output


def test_a_host_already_running_the_branch_is_not_refused(tmp_path, tray_facts, host_trees):
    """The tray runs 570.172.08 (open kernel modules): R570 is past its end of life, but nothing is installed."""
    returncode, output = decide(tmp_path, tray_facts, host_trees["gb200_tray"], {"nvidia_driver_branch": "570"}, True)
    assert returncode == 0, output[-3000:]
    assert '"msg": "PLAN {\\"action\\": \\"present\\", \\"branch\\": \\"570\\", \\"version\\": \\"\\"}"' in output


def test_a_supported_branch_is_installed(tmp_path, tray_facts, host_trees):
    returncode, output = decide(tmp_path, tray_facts, host_trees["gb200_tray"], {"nvidia_driver_branch": "580"}, True)
    assert returncode == 0, output[-3000:]
    assert "is past its end of life" not in output
    assert '"msg": "PLAN {\\"action\\": \\"install\\", \\"branch\\": \\"580\\", \\"version\\": \\"\\"}"' in output
