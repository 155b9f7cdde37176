# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 40: the probe modules import their module_utils plainly, and change nothing of the host's import machinery.

On a host a module runs from its AnsiballZ payload, a zip of sources that Python's ``zipimport`` imports from. The
modules once replaced ``zipimport``'s private ``_get_module_code`` while they imported the collection's module_utils
(``module_utils/zip_compile.py``, removed), private-API code run as root on every host's Python. Each case imports a
probe module the way its payload does, in a fresh interpreter, from a zip of the collection's modules and
module_utils, with the import machinery's modules watched for any attribute set or deleted on them.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import zipfile

import pytest

COLLECTION = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
PACKAGE = "ansible_collections/gpufabric/cluster"
PROBES = ("gpu_info", "connectx_info", "imex_info", "peermem_info", "fabric_facts")
MACHINERY = ("zipimport", "importlib._bootstrap", "importlib._bootstrap_external")

# Run in a fresh interpreter (-I: no PYTHONPATH, no user site, no working directory on the path): the watchers first,
# then the payload first on sys.path, as AnsiballZ puts it, then the module's import.
WATCHED_IMPORT = """
import importlib, json, sys, types
changes = []

class Watched(types.ModuleType):
    def __setattr__(self, name, value):
        changes.append(f"{{self.__name__}}.{{name}} set")
        super().__setattr__(name, value)

    def __delattr__(self, name):
        changes.append(f"{{self.__name__}}.{{name}} deleted")
        super().__delattr__(name)

for name in {machinery!r}:
    importlib.import_module(name).__class__ = Watched
sys.path.insert(0, {payload!r})
module = importlib.import_module("ansible_collections.gpufabric.cluster.plugins.modules." + {probe!r})
print(json.dumps({{"changes": changes, "file": module.__file__, "main": callable(getattr(module, "main", None))}}))
"""


def build_payload(path: str) -> str:
    """A zip of the collection's modules and module_utils under their package names, as a module's payload holds
    them (sources only, an ``__init__.py`` in every package); return its path."""
    with zipfile.ZipFile(path, "w") as payload:
        parts = PACKAGE.split("/")
        for depth in range(1, len(parts) + 1):
            payload.writestr("/".join(parts[:depth]) + "/__init__.py", "")
        payload.writestr(f"{PACKAGE}/plugins/__init__.py", "")
        for directory in ("modules", "module_utils"):
            payload.writestr(f"{PACKAGE}/plugins/{directory}/__init__.py", "")
            for name in sorted(os.listdir(os.path.join(COLLECTION, "plugins", directory))):
                if name.endswith(".py"):
                    payload.write(os.path.join(COLLECTION, "plugins", directory, name),
                                  f"{PACKAGE}/plugins/{directory}/{name}")
    return path


@pytest.fixture(name="payload", scope="module")
def fixture_payload(tmp_path_factory):
    return build_payload(str(tmp_path_factory.mktemp("payload") / "payload.zip"))


@pytest.mark.parametrize("probe", PROBES)
def test_a_probe_module_imported_from_its_payload_changes_no_import_machinery(payload, probe):
    program = WATCHED_IMPORT.format(machinery=MACHINERY, payload=payload, probe=probe)
    environment = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C.UTF-8"}
    completed = subprocess.run([sys.executable, "-I", "-c", program], capture_output=True, text=True, env=environment,
                               check=False, timeout=120)
    assert completed.returncode == 0, completed.stderr
    result = json.loads(completed.stdout)
    assert result["file"].startswith(payload + os.sep), result["file"]  # imported from the zip, by zipimport
    assert result["main"] is True
    assert result["changes"] == []


def test_no_module_or_module_util_imports_the_import_machinery():
    """What the modules run on a host names no module of the import machinery (``zipimport``, ``importlib``)."""
    found = []
    for directory in ("modules", "module_utils"):
        folder = os.path.join(COLLECTION, "plugins", directory)
        for name in sorted(os.listdir(folder)):
            if not name.endswith(".py"):
                continue
            with open(os.path.join(folder, name), encoding="utf-8") as handle:
                tree = ast.parse(handle.read(), name)
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    imported = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.module:
                    imported = [node.module]
                else:
                    continue
                found += [f"plugins/{directory}/{name}: {module}" for module in imported
                          if module.split(".")[0] in ("zipimport", "importlib")]
    assert found == []
