# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The filter wrapper's contract, part one: each file of plugins/filter registers one filter, under its own name.

Ansible finds a filter by the name ``FilterModule().filters()`` gives it, and ansible-doc finds its documentation by
the file's name (``plugins/filter/<name>.yml``); the two are the same name, and the function registered is the
file's wrapper of that name (not the bare logic of plugin_utils, which raises its own errors, not
AnsibleFilterError). The logic itself is tested beside it, in tests/unit/plugins/plugin_utils/.
"""

from __future__ import annotations

import importlib
import os

import pytest

from ansible_collections.gpufabric.cluster.plugins import filter as filter_package

FOLDER = next(iter(filter_package.__path__))
NAMES = sorted(name[:-3] for name in os.listdir(FOLDER) if name.endswith(".py") and not name.startswith("_"))


def test_every_documented_filter_has_its_file():
    assert sorted(name[:-4] for name in os.listdir(FOLDER) if name.endswith(".yml")) == NAMES


@pytest.mark.parametrize("name", NAMES)
def test_the_filter_is_registered_under_the_name_of_its_file(name):
    module = importlib.import_module(f"{filter_package.__name__}.{name}")
    filters = module.FilterModule().filters()
    assert list(filters) == [name]
    assert callable(filters[name]) and filters[name].__name__ == name
    wrapper = getattr(module, name)
    if wrapper.__module__ == module.__name__:
        # the file's own wrapper, not the logic it calls (a filter of a plugin_utils function wraps it when registered)
        assert filters[name] is wrapper
