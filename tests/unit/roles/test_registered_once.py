# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every task file of the roles and playbooks registers each variable in one task only.

A skipped task still registers its (skipped) result, so of two tasks of one file that register the same variable
under opposite conditions the later one always overwrites the result of the earlier: nvidia_driver's check mode lost
the simulated installation that way and tried to enable daemons that no package had brought (`make demo`'s upgrade
plan, issue 45).
"""

from __future__ import annotations

import collections
import glob
import os

import pytest
import yaml

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
TASK_FILES = sorted(glob.glob(os.path.join(ROOT, "roles", "*", "tasks", "*.yml"))
                    + glob.glob(os.path.join(ROOT, "roles", "*", "handlers", "*.yml"))
                    + glob.glob(os.path.join(ROOT, "playbooks", "tasks", "*.yml")))
PLAYBOOKS = sorted(glob.glob(os.path.join(ROOT, "playbooks", "*.yml")))


def _registered(tasks, found):
    """The register names of ``tasks`` and of the tasks of their blocks, one entry per registering task."""
    for task in tasks or []:
        if not isinstance(task, dict):
            continue
        for section in ("block", "rescue", "always"):
            _registered(task.get(section), found)
        if "register" in task:
            found.append((task["register"], task.get("name")))
    return found


def _twice(found):
    counts = collections.Counter(name for name, _task in found)
    return {name: [task for registered, task in found if registered == name] for name, count in counts.items()
            if count > 1}


@pytest.mark.parametrize("path", TASK_FILES, ids=lambda path: os.path.relpath(path, ROOT))
def test_a_task_file_registers_each_variable_once(path):
    with open(path, encoding="utf-8") as handle:
        assert _twice(_registered(yaml.safe_load(handle), [])) == {}


@pytest.mark.parametrize("path", PLAYBOOKS, ids=lambda path: os.path.relpath(path, ROOT))
def test_a_play_registers_each_variable_once(path):
    with open(path, encoding="utf-8") as handle:
        plays = yaml.safe_load(handle) or []
    for play in plays:
        found = []
        for section in ("pre_tasks", "tasks", "post_tasks", "handlers"):
            _registered(play.get(section), found)
        assert _twice(found) == {}, play.get("name")


def test_two_registers_of_one_variable_are_found_in_blocks_too():
    tasks = [{"name": "a", "register": "x", "when": "c"},
             {"block": [{"name": "b", "register": "x", "when": "not c"}], "rescue": [{"name": "r", "register": "y"}]}]
    assert _twice(_registered(tasks, [])) == {"x": ["a", "b"]}
    assert _twice(_registered([{"name": "a", "register": "x"}, "not a task", None], [])) == {}
