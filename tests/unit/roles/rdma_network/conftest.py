# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fixtures of the rdma_network role's unit tests."""

from __future__ import annotations

import pytest

from ansible_collections.gpufabric.cluster.plugins.module_utils.connectx import collect_connectx


@pytest.fixture(scope="module")
def hgx_connectx(host_trees):
    """``ansible_facts['gpufabric']['connectx']`` of the recorded HGX H100, from the real collector."""
    return collect_connectx(host_trees["hgx_h100"])
