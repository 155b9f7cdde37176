# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 42 item 4: a fresh HGX host gets nvidia-fabricmanager planned in its first run.

Before, nvidia_driver's ``auto`` saw NVSwitches only through NVML's fabric info, which needs a loaded driver: a fresh
HGX host got the fabric manager on its second run. The NVSwitches are on the PCI bus before that; the probe now lists
them from sysfs. Here the real probe (fabric_facts, gpu subset) reads the recorded HGX H100 and GB200 trees with the
NVIDIA driver removed (a host's first run), then the role's own decision runs (tasks/validate.yml with its vars).
"""

from __future__ import annotations

import os
import shutil
import sys

import pytest
import yaml

from ansible_collections.gpufabric.cluster.tests.unit.playbooks.runner import ansible_playbook


def driverless(tmp_path, root: str) -> str:
    copy = str(tmp_path / "tree")
    shutil.copytree(root, copy, symlinks=True)
    for path in ("sys/module/nvidia", "proc/driver/nvidia"):
        shutil.rmtree(os.path.join(copy, path), ignore_errors=True)
    return copy


@pytest.mark.parametrize(("tree", "planned"), [("hgx_h100", True), ("gb200_tray", False)])
def test_fabricmanager_is_planned_from_the_nvswitches_on_pci(tmp_path, host_trees, tree, planned):
    root = driverless(tmp_path, host_trees[tree])
    inventory = {"all": {"hosts": {"host-01": {"ansible_connection": "local",
                                               "ansible_python_interpreter": sys.executable,
                                               "gpufabric_probe_root": root}}}}
    (tmp_path / "hosts.yml").write_text(yaml.safe_dump(inventory))
    play = [{"name": "Driver", "hosts": "all", "gather_facts": True, "tasks": [
        {"name": "Probe", "gpufabric.cluster.fabric_facts": {"root": root, "gather_subset": ["gpu"]}},
        {"name": "Load the variables of this OS", "ansible.builtin.include_role": {
            "name": "gpufabric.cluster._os_vars", "tasks_from": "load"}, "vars": {"_os_vars_role": "nvidia_driver"}},
        {"name": "Decide", "ansible.builtin.include_role": {
            "name": "gpufabric.cluster.nvidia_driver", "tasks_from": "validate", "public": True}},
        {"name": "Show", "ansible.builtin.debug": {
            "msg": "DECISION {{ __nvidia_driver_action }} {{ __nvidia_driver_with_fabricmanager | bool }}"}}]}]
    (tmp_path / "play.yml").write_text(yaml.safe_dump(play, sort_keys=False))
    completed = ansible_playbook(["-i", str(tmp_path / "hosts.yml"), str(tmp_path / "play.yml"), "--check",
                                  "-e", '{"nvidia_driver_branch": "580"}'], tmp_path)
    output = " ".join((completed.stdout + completed.stderr).split())
    assert completed.returncode == 0, output[-3000:]
    assert f'"msg": "DECISION install {planned}"' in output, output[-3000:]
