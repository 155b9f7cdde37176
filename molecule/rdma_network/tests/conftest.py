# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Collection rules of the rdma_network testinfra tests: a test of one network stack runs on its host only.

Each of the four hosts runs one stack (test_default.BACKEND). A test marked ``@pytest.mark.backend(name)``
checks that stack's files, so on the other three hosts it is deselected at collection rather than
collected and skipped: the run reports only checks that ran.
"""

from __future__ import annotations


def pytest_configure(config):
    config.addinivalue_line("markers", "backend(name, ...): run only on the hosts whose network stack is one of these")


def pytest_collection_modifyitems(config, items):
    selected, deselected = [], []
    for item in items:
        marker = item.get_closest_marker("backend")
        callspec = getattr(item, "callspec", None)
        host = callspec.params.get("_testinfra_host") if callspec else None
        if marker is None or host is None:
            selected.append(item)
            continue
        backend = item.module.BACKEND.get(host.backend.name)
        if backend is None:
            raise ValueError(f"{item.nodeid}: host {host.backend.name} has no network stack in BACKEND")
        (selected if backend in marker.args else deselected).append(item)
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = selected
