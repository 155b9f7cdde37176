# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 45 item 4: a host without nvidia-ml-py is told so by the preflight, per host.

Without the NVML bindings the probe lists GPUs from PCI and has no fabric state and no clique, so the host is in no
IMEX domain and nvidia_imex fails later; the preflight's fabric check said only "NVML was not usable". The probe now
says whether the bindings were there (``nvml_bindings``) and the preflight names them and how to install them.
"""

from __future__ import annotations

import pytest

from ansible_collections.gpufabric.cluster.plugins.module_utils import gpu, nvml
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.preflight import check_fabric


def _missing(_root):
    raise nvml.PynvmlMissing(nvml.pynvml_missing_message(), None)


def _unusable(_root):
    raise nvml.NvmlError("NVML describes the running host, not the tree")


@pytest.mark.parametrize(("factory", "bindings", "message"), [
    (_missing, False, "fabric state and NVLink clique unknown: nvidia-ml-py (the NVML bindings) is not installed for "
                      "the Python that runs the probe on this host; install it there (pip install nvidia-ml-py) so "
                      "that its IMEX domain can be judged"),
    (_unusable, True, "fabric state is unknown: NVML was not usable, GPUs were listed from PCI"),
])
def test_the_fabric_check_names_missing_bindings(host_trees, factory, bindings, message):
    result = gpu.collect_gpu(host_trees["gb200_tray"], None, source_factory=factory)
    assert result["source"] == "pci" and result["nvml_bindings"] is bindings
    assert check_fabric(result) == {"name": "fabric", "status": "warn", "message": message}


def test_without_a_driver_nvml_is_not_tried(host_trees):
    result = gpu.collect_gpu(host_trees["broken_node"], None, source_factory=_missing)
    assert result["driver_loaded"] is False and result["nvml_bindings"] is None
