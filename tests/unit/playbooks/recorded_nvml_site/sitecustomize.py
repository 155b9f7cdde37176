# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""TEST FIXTURE: NVML answered from a recorded tree's recording in the module processes of a playbook run.

NVML always describes the running host, so ``gpufabric.cluster.fabric_facts`` pointed at a recorded tree
(``gpufabric_probe_root``) cannot know the GPUs' NVLink fabric clique.  A test that runs the real playbooks over local
hosts puts this directory first on ``PYTHONPATH`` (the module processes of a local connection inherit it): once the
probe's ``module_utils.nvml`` is imported, its one seam, ``nvml_source(root)``, answers from ``<root>.nvml.json`` when
that recording exists, with the unit tests' double (tests/fixtures/recorded_nvml.py, which ``tests/`` on the same path
makes importable).  Nothing in the collection knows of it.
"""

from __future__ import annotations

import importlib.abc
import os
import sys

TARGET = "ansible_collections.gpufabric.cluster.plugins.module_utils.nvml"


def _patch(nvml) -> None:
    original = nvml.nvml_source

    def recorded_source(root: str):
        if os.path.exists(root.rstrip("/") + ".nvml.json"):
            from fixtures.recorded_nvml import RecordedSource, load_recording
            return RecordedSource(load_recording(root))
        return original(root)

    nvml.nvml_source = recorded_source


class _Loader(importlib.abc.Loader):
    def __init__(self, loader) -> None:
        self._loader = loader

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module) -> None:
        self._loader.exec_module(module)
        _patch(module)


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path, target=None):
        if fullname != TARGET:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None and spec.loader is not None:
                spec.loader = _Loader(spec.loader)
                return spec
        return None


sys.meta_path.insert(0, _Finder())
