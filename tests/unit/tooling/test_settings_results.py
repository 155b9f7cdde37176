# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""settings.RESULTS holds every fact the collection sets under one of its prefixes, and nothing else.

The settings check names a variable with a prefix of the collection (``gpufabric_``, ``<role>_``) that no argument
spec knows as a likely typo. The collection's own results (``set_fact`` keys, ``register`` names, ``set_stats``
keys) carry such prefixes too, and a fact cache or an earlier play hands them to the next run: a result missing from
``RESULTS`` would be refused as a typo there, and a name in ``RESULTS`` that nothing sets hides a real typo.
"""

from __future__ import annotations

import os

import pytest
import yaml

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import settings

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
SETTERS = ("set_fact", "set_stats")


def _yaml_files():
    for top in ("roles", "playbooks"):
        for parent, _dirnames, filenames in os.walk(os.path.join(ROOT, top)):
            if os.sep + "meta" in parent or os.sep + "defaults" in parent or os.sep + "templates" in parent:
                continue
            yield from (os.path.join(parent, name) for name in sorted(filenames) if name.endswith((".yml", ".yaml")))


def _tasks(node):
    """Every mapping of a task file or playbook, nested blocks, rescues and plays included."""
    if isinstance(node, list):
        for item in node:
            yield from _tasks(item)
    elif isinstance(node, dict):
        yield node
        for key in ("tasks", "pre_tasks", "post_tasks", "handlers", "block", "rescue", "always"):
            yield from _tasks(node.get(key))


def _names_set(task: dict) -> set[str]:
    names = set()
    for key, value in task.items():
        if key.rsplit(".", 1)[-1] == "set_fact" and isinstance(value, dict):
            names.update(name for name in value if name != "cacheable")
        if key.rsplit(".", 1)[-1] == "set_stats" and isinstance(value, dict):
            names.update(value.get("data") or {})
    if isinstance(task.get("register"), str):
        names.add(task["register"])
    return names


def _collection_results() -> dict[str, str]:
    """``{name: file}`` of every result named with a prefix of the collection, outside the argument specs."""
    prefixes, _known = settings._known()  # the prefixes the settings check itself uses
    specified = {name for entries in settings.argument_specs().values() for found in entries.values() for name in found}
    found = {}
    for path in _yaml_files():
        with open(path, encoding="utf-8") as handle:
            document = yaml.safe_load(handle)
        for task in _tasks(document):
            for name in _names_set(task):
                if name.startswith(tuple(prefixes)) and name not in specified:
                    found.setdefault(name, os.path.relpath(path, ROOT))
    return found


def test_every_result_under_a_prefix_of_the_collection_is_known_to_the_settings_check():
    unknown = {name: where for name, where in _collection_results().items() if name not in settings.RESULTS}
    assert not unknown, f"add to settings.RESULTS (or rename with a leading _): {unknown}"


def test_every_name_of_results_is_set_somewhere():
    assert sorted(settings.RESULTS - set(_collection_results())) == []


@pytest.mark.parametrize("name", sorted(settings.RESULTS))
def test_a_result_from_an_earlier_run_is_no_typo(name):
    assert settings.settings_problems({"tray": {name: {"anything": 1}}}, ["tray"], ["gpufabric"]) == []
