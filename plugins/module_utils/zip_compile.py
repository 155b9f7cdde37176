# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Compile each source a module imports from its AnsiballZ payload once instead of twice.

An Ansible module runs from a zip of Python sources (its AnsiballZ payload, no bytecode in it), and CPython's
``zipimport`` compiles a source module twice on import: once when the import system asks the importer for the
module's file name while it builds the module's spec (``zipimporter.get_filename`` compiles to find it), and once
more when it executes the module (``get_code``). This is https://github.com/python/cpython/issues/141276, open for
3.11 to 3.15. The collection's module_utils are about 127 KB of source, which a probe module imports on every host
in every run: their second compile is about 20 ms of a 230 ms ``fabric_facts`` run (bench/README.md).
``ansible.module_utils.basic`` pays the same, but AnsiballZ's loader imports it before the module's code runs.

:func:`compile_once` keeps the first answer of zipimport's internal ``_get_module_code`` for one module until the
second question about it, while the module's imports run, and puts the original back afterwards. Where that
function does not exist (another Python's zipimport), or a module is not imported from a zip, nothing changes.
"""

from __future__ import annotations

import contextlib
import typing as t
import zipimport


@contextlib.contextmanager
def compile_once() -> t.Iterator[None]:
    """Within the block, zipimport compiles each module it imports once (see the module's docstring)."""
    original = getattr(zipimport, "_get_module_code", None)
    if not callable(original):
        yield
        return
    answered: dict[tuple[str, str, str], t.Any] = {}

    def get_module_code(importer: t.Any, fullname: str) -> t.Any:
        key = (importer.archive, importer.prefix, fullname)
        if key in answered:  # the second question about this module: the code compiled for the first
            return answered.pop(key)
        answered[key] = result = original(importer, fullname)
        return result

    zipimport._get_module_code = get_module_code
    try:
        yield
    finally:
        zipimport._get_module_code = original
