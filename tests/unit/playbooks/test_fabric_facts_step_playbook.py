# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 40 item 2: one shared facts step (gpufabric.cluster._fabric_facts) instead of five roles' facts.yml.

It probes only when a subset the caller reads is missing, and never loses a subset an earlier step gathered (a facts
module replaces ansible_facts['gpufabric'] as a whole: on the starting commit a role that gathered its own subset
dropped the others'). Run for real by ansible-playbook on a local host reading a recorded tree.
"""

from __future__ import annotations

import json
import re
import sys

import yaml

from ansible_collections.gpufabric.cluster.tests.unit.playbooks.runner import ansible_playbook

STEP = "TASK [gpufabric.cluster._fabric_facts : Gather the fabric facts this run has not gathered yet]"


def step(subsets: list[str], root: str) -> dict:
    return {"name": f"Read {', '.join(subsets)}", "ansible.builtin.include_role": {
        "name": "gpufabric.cluster._fabric_facts", "tasks_from": "gather"},
        "vars": {"_fabric_facts_subsets": subsets, "_fabric_facts_root": root}}


def show() -> dict:
    return {"name": "Show the subsets", "ansible.builtin.debug": {
        "msg": "SUBSETS {{ ansible_facts['gpufabric'].keys() | reject('equalto', 'gather_subset') | sort | to_json }}"}}


def test_the_step_probes_only_what_is_missing_and_keeps_what_is_there(host_trees, tmp_path):
    root = host_trees["hgx_h100"]
    tasks = [step(["gpu"], root), show(), step(["gpu"], root), show(), step(["peermem", "gpu"], root), show()]
    (tmp_path / "play.yml").write_text(yaml.safe_dump([{"name": "Facts step", "hosts": "localhost",
                                                        "gather_facts": False, "tasks": tasks}], sort_keys=False))
    completed = ansible_playbook(["-i", "localhost,", "-c", "local", "-e",
                                  f"ansible_python_interpreter={sys.executable}", str(tmp_path / "play.yml")], tmp_path)
    output = " ".join((completed.stdout + completed.stderr).split())
    assert completed.returncode == 0, output[-3000:]
    runs = re.findall(re.escape(STEP) + r" \** (ok|skipping|changed)", output)
    assert runs == ["ok", "skipping", "ok"], output[-3000:]
    seen = [json.loads(found) for found in re.findall(r'"SUBSETS (\[[^\]]*\])"', output.replace('\\"', '"'))]
    assert seen == [["gpu"], ["gpu"], ["gpu", "peermem"]], output[-3000:]
