# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 39 item 3, every task of the cluster roles read as written: a task that handles chart values, registry
credentials or kubeconfig content logs nothing, and what is shown of them (a debug view, a failure message) passes
through gpufabric.cluster.redact.

The playbook tests (tests/unit/playbooks/test_secrets_playbook.py) run the steps that need no cluster at -vvv; this
test covers the others too (the reads of objects the charts render, the release's verification), which need the
API server.
"""

from __future__ import annotations

import os
import re

import pytest
import yaml

ROLES = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", "..", "..", "roles"))
CLUSTER_ROLES = ("_helm_release", "_kubeconfig", "gpu_operator", "network_operator", "dra_driver")
# A variable that holds chart values, registry credentials, a credentialed repository URL or a kubeconfig setting
# (a filter of the same name, gpufabric.cluster.gpu_operator_values(...), is no variable).
SENSITIVE = re.compile(r"\b(?:(?:gpu_operator|network_operator|dra_driver)_values\b(?!\s*\()|__\w+_release_values\b"
                       r"|_helm_release_values\b|\w*registry_credentials\b|__helm_release_repo_url\b"
                       r"|\w*_kubeconfig\b)")
# Only whether a value is set ("x | length > 0"), not the value.
LENGTH = re.compile(r"\w+(?:\[[^\]]*\])*\s*\|\s*length\b")
# The repository URL is kept with its credentials, without logging, when it has any.
WHEN_CREDENTIALS = "{{ __helm_release_chart['credentials'] }}"
# Modules whose result holds a release's values or manifests (kubernetes.core.helm at -vvv also its arguments).
RELEASE_MODULES = {"kubernetes.core.helm", "kubernetes.core.helm_info"}
# Kinds whose objects are chart values rendered (env, repository, licensing settings).
RENDERED_KINDS = {"ClusterPolicy", "GPUCluster", "DaemonSet", "Deployment"}
SHOWING = {"ansible.builtin.debug", "ansible.builtin.fail", "ansible.builtin.assert"}
TASK_KEYS = {"name", "when", "tags", "no_log", "register", "vars", "loop", "block", "rescue", "always", "changed_when",
             "failed_when", "check_mode", "until", "retries", "delay", "module_defaults", "apply", "listen"}


def tasks_of(items: list, path: str):
    """Every task of a task list, blocks opened, with the file it is in."""
    for item in items or []:
        for section in ("block", "rescue", "always"):
            yield from tasks_of(item.get(section), path)
        if not any(section in item for section in ("block", "rescue", "always")):
            yield path, item


def all_tasks():
    for role in CLUSTER_ROLES:
        folder = os.path.join(ROLES, role, "tasks")
        for name in sorted(os.listdir(folder)):
            with open(os.path.join(folder, name), encoding="utf-8") as handle:
                yield from tasks_of(yaml.safe_load(handle), f"{role}/tasks/{name}")


def module_of(task: dict) -> str:
    return next(key for key in task if key not in TASK_KEYS)


def text_of(task: dict) -> str:
    """The task's arguments and vars as text: what its templates read."""
    return yaml.safe_dump({"args": task[module_of(task)], "vars": task.get("vars")})


TASKS = list(all_tasks())


def ids(value):
    return f"{value[0]}:{value[1].get('name')}" if isinstance(value, tuple) else None


@pytest.mark.parametrize("found", TASKS, ids=ids)
def test_a_task_that_handles_secrets_logs_nothing_or_shows_them_redacted(found):
    path, task = found
    module, text = module_of(task), text_of(task)
    where = f"{path}: {task.get('name')}"
    if module in ("ansible.builtin.include_role", "ansible.builtin.import_tasks", "ansible.builtin.include_tasks"):
        return  # the included tasks are checked themselves
    if module in RELEASE_MODULES:
        assert task.get("no_log") is True, f"{where}: {module} returns the release's values: no_log: true"
        return
    if module == "kubernetes.core.k8s_info" and task[module].get("kind") in RENDERED_KINDS | {"{{ item }}"}:
        assert task.get("no_log") is True, f"{where}: a {task[module].get('kind')} holds chart values: no_log: true"
        return
    if module in SHOWING:
        shown = yaml.safe_dump({key: task[module].get(key) for key in ("msg", "fail_msg", "var")})
        for expression in re.findall(r"\{\{(.*?)\}\}", shown, re.S):
            if SENSITIVE.search(expression) or "ansible_failed_result" in expression or "policy_spec" in expression:
                assert "gpufabric.cluster.redact" in expression or "length" in expression, (
                    f"{where}: shows {expression.strip()!r} without gpufabric.cluster.redact")
        return
    if SENSITIVE.search(LENGTH.sub("", text)) and module == "ansible.builtin.set_fact":
        assert task.get("no_log") in (True, WHEN_CREDENTIALS), (
            f"{where}: sets a fact from chart values or credentials: no_log: true")


def test_the_audit_sees_the_tasks_it_is_about():
    """Not vacuous: the merges, the release and its reads are among the tasks checked."""
    names = {(path, task.get("name")) for path, task in TASKS}
    assert ("gpu_operator/tasks/values.yml", "Merge the extra values") in names
    assert ("network_operator/tasks/release_values.yml",
            "Decide the chart's Node Feature Discovery and merge the values") in names
    assert ("dra_driver/tasks/plan.yml", "Read the installed release") in names
    assert any(module_of(task) == "kubernetes.core.helm" for _path, task in TASKS)
