# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What gpufabric.cluster._nvidia_repository writes and nothing else: the files named after the repository's URL.

The naming step (tasks/names.yml, included by apt.yml and yum.yml) is run by ansible-playbook on localhost (it only
sets facts) and must set exactly the facts the role's README documents, with the names derived from the URL and the
suite. The apt and yum task files are read as YAML: no task of the role searches the host's repository directories
or removes a file, since the collection is unreleased and no earlier release left per-role files on any host.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys

import yaml

from ansible_collections.gpufabric.cluster.tests.unit.playbooks.runner import COLLECTIONS_PATH, ansible_playbook

ROLE = os.path.join(COLLECTIONS_PATH, "ansible_collections", "gpufabric", "cluster", "roles", "_nvidia_repository")
URL = "https://developer.download.nvidia.com/compute/cuda/repos/debian12/x86_64/"
FACTS = ("__nvidia_repository_name", "__nvidia_repository_keyring", "__nvidia_repository_sources",
         "__nvidia_repository_suite", "__nvidia_repository_trusted", "__nvidia_repository_key_url")


def run_names(workdir, **variables) -> dict:
    """Run tasks/names.yml on localhost with the given role inputs; the __nvidia_repository_* variables it set."""
    play = [{"name": "Names", "hosts": "localhost", "gather_facts": False, "tasks": [
        {"name": "Name the files", "ansible.builtin.include_role": {
            "name": "gpufabric.cluster._nvidia_repository", "tasks_from": "names"}, "vars": variables},
        {"name": "Show what the step set", "ansible.builtin.debug": {
            "msg": "FACTS {{ dict(query('varnames', '^__nvidia_repository_')"
                   " | zip(query('varnames', '^__nvidia_repository_') | map('extract', vars))) | to_json }}"}}]}]
    (workdir / "play.yml").write_text(yaml.safe_dump(play, sort_keys=False))
    completed = ansible_playbook(["-i", "localhost,", "-c", "local", "-e",
                                  f"ansible_python_interpreter={sys.executable}", str(workdir / "play.yml")], workdir,
                                 env={"ANSIBLE_STDOUT_CALLBACK": "ansible.builtin.default"})
    output = completed.stdout + completed.stderr
    assert completed.returncode == 0, output
    line = next(line for line in output.splitlines() if '"msg": "FACTS ' in line)
    return json.loads(json.loads("{" + line.strip().rstrip(",") + "}")["msg"][len("FACTS "):])


def _tasks(tasks: list) -> list:
    """Every task of a task list, those inside blocks, rescues and always sections included."""
    found = []
    for task in tasks:
        found.append(task)
        for section in ("block", "rescue", "always"):
            found.extend(_tasks(task.get(section) or []))
    return found


def test_names_sets_the_documented_facts_named_after_the_url_and_suite(tmp_path):
    facts = run_names(tmp_path, _nvidia_repository_url=URL, _nvidia_repository_suite="./")
    assert sorted(facts) == sorted(FACTS)
    name = "nvidia-" + hashlib.sha256(URL.encode()).hexdigest()[:12]
    assert facts["__nvidia_repository_name"] == name
    assert facts["__nvidia_repository_keyring"] == f"/etc/apt/keyrings/{name}.asc"
    sources = hashlib.sha256(f"{URL} ./".encode()).hexdigest()[:12]
    assert facts["__nvidia_repository_sources"] == f"/etc/apt/sources.list.d/nvidia-{sources}.list"
    assert facts["__nvidia_repository_suite"] == "./"
    assert facts["__nvidia_repository_trusted"] is False
    assert facts["__nvidia_repository_key_url"] == ""


def test_names_defaults_the_optional_inputs(tmp_path):
    facts = run_names(tmp_path, _nvidia_repository_url=URL, _nvidia_repository_trusted="yes",
                      _nvidia_repository_key_url="file:///srv/key.asc")
    assert sorted(facts) == sorted(FACTS)
    assert facts["__nvidia_repository_suite"] == "/"
    assert facts["__nvidia_repository_trusted"] is True
    assert facts["__nvidia_repository_key_url"] == "file:///srv/key.asc"


def test_no_task_searches_for_or_removes_other_repository_files():
    for entry in ("apt", "yum", "names", "key"):
        with open(os.path.join(ROLE, "tasks", f"{entry}.yml"), encoding="utf-8") as handle:
            tasks = _tasks(yaml.safe_load(handle))
        for task in tasks:
            modules = {key for key in task if key.startswith("ansible.")}
            assert "ansible.builtin.find" not in modules, (entry, task["name"])
            for module in modules:
                arguments = task[module] if isinstance(task[module], dict) else {}
                assert arguments.get("state") != "absent", (entry, task["name"])
