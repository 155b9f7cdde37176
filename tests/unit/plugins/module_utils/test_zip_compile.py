# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""zip_compile.compile_once: a module imported from a zip of sources is compiled once, and nothing else changes."""

from __future__ import annotations

import itertools
import sys
import types
import zipfile
import zipimport

import pytest

from ansible_collections.gpufabric.cluster.plugins.module_utils import zip_compile
from ansible_collections.gpufabric.cluster.plugins.module_utils.zip_compile import compile_once

_NAMES = itertools.count()


@pytest.fixture
def payload(tmp_path, monkeypatch):
    """A zip of sources like an AnsiballZ payload, on sys.path: returns (package name, archive path)."""
    package = f"zip_compile_payload_{next(_NAMES)}"
    archive = tmp_path / "payload.zip"
    with zipfile.ZipFile(archive, "w") as handle:
        handle.writestr(f"{package}/__init__.py", "")
        handle.writestr(f"{package}/probe.py", "import os\nANSWER = 42\nWHERE = __file__\n")
        handle.writestr(f"{package}/broken.py", "def broken(:\n")
    monkeypatch.syspath_prepend(str(archive))
    yield package, str(archive)
    for name in [name for name in sys.modules if name.startswith(package)]:
        del sys.modules[name]


@pytest.fixture
def compiles(monkeypatch):
    """Counts zipimport's compiles, by the path of the source compiled."""
    counted: list[str] = []
    original = zipimport._compile_source

    def counting(pathname, source):
        counted.append(pathname)
        return original(pathname, source)

    monkeypatch.setattr(zipimport, "_compile_source", counting)
    return counted


def test_without_it_zipimport_compiles_a_module_twice(payload, compiles):
    """The CPython behaviour compile_once works around (python/cpython#141276): when this fails, it is fixed."""
    package, _archive = payload
    __import__(f"{package}.probe")
    assert sum(path.endswith("probe.py") for path in compiles) == 2


def test_within_it_each_module_is_compiled_once_and_runs_as_before(payload, compiles):
    package, archive = payload
    with compile_once():
        probe = __import__(f"{package}.probe", fromlist=["ANSWER"])
    assert sum(path.endswith("probe.py") for path in compiles) == 1
    assert sum(path.endswith("__init__.py") for path in compiles) == 1
    assert probe.ANSWER == 42
    assert probe.__file__ == probe.WHERE and probe.__file__.startswith(archive)


def test_zipimport_is_as_before_after_the_block_also_when_an_import_fails(payload):
    package, _archive = payload
    original = zipimport._get_module_code
    with pytest.raises(SyntaxError), compile_once():
        __import__(f"{package}.broken")
    assert zipimport._get_module_code is original
    # the failed import left no answer behind: the next import of it fails the same way, outside the block too
    with pytest.raises(SyntaxError):
        __import__(f"{package}.broken")


def test_nested_blocks_put_back_the_original(payload):
    package, _archive = payload
    original = zipimport._get_module_code
    with compile_once():
        with compile_once():
            __import__(f"{package}.probe")
        assert zipimport._get_module_code is not original
    assert zipimport._get_module_code is original


def test_a_zipimport_without_the_internal_function_imports_as_usual(payload, compiles, monkeypatch):
    """Another Python's zipimport, without ``_get_module_code``: compile_once changes nothing, imports still work."""
    package, _archive = payload
    monkeypatch.setattr(zip_compile, "zipimport", types.SimpleNamespace())
    original = zipimport._get_module_code
    with compile_once():
        assert zipimport._get_module_code is original
        probe = __import__(f"{package}.probe", fromlist=["ANSWER"])
    assert probe.ANSWER == 42
    assert sum(path.endswith("probe.py") for path in compiles) == 2
