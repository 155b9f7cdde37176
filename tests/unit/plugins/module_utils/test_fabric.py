# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""gather_subset resolution of fabric_facts."""

from __future__ import annotations

import pytest

from ansible_collections.gpufabric.cluster.plugins.module_utils.errors import GpuFabricError
from ansible_collections.gpufabric.cluster.plugins.module_utils.fabric import select_subsets


@pytest.mark.parametrize(("requested", "expected"), [
    (["all"], ["gpu", "connectx", "imex", "peermem", "network"]),
    ([], ["gpu", "connectx", "imex", "peermem", "network"]),
    (["peermem", "gpu"], ["gpu", "peermem"]),
    (["all", "!imex"], ["gpu", "connectx", "peermem", "network"]),
    (["!imex", "!peermem", "!network"], ["gpu", "connectx"]),
    (["network"], ["network"]),
    (["gpu", "!gpu"], []),
    ([" connectx "], ["connectx"]),
])
def test_select_subsets(requested, expected):
    assert select_subsets(requested) == expected


def test_unknown_subset_is_named():
    expected = r"unknown subset 'nics'; choose from all, gpu, connectx, imex, peermem, network"
    with pytest.raises(GpuFabricError, match=expected):
        select_subsets(["all", "nics"])
