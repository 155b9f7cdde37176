# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpu_info on a real NVIDIA GPU host: real NVML (nvidia-ml-py), root ``/``.

Run only on such a host, explicitly: ``pytest -s tests/hardware/test_gpu_info_hardware.py``.
The result is printed as JSON so the run documents the host it saw.
"""

from __future__ import annotations

import contextlib
import io
import json
import os

import pytest
from ansible.module_utils.common import warnings as ansible_warnings
from ansible.module_utils.testing import patch_module_args

from ansible_collections.gpufabric.cluster.plugins.module_utils import nvml
from ansible_collections.gpufabric.cluster.plugins.modules import gpu_info

pytestmark = pytest.mark.hardware


def _pci_gpu_functions() -> list[str]:
    """NVIDIA display/3D PCI functions, read straight from sysfs (independently of the module)."""
    found = []
    for name in sorted(os.listdir("/sys/bus/pci/devices")):
        base = os.path.join("/sys/bus/pci/devices", name)
        with open(os.path.join(base, "vendor"), encoding="ascii") as vendor, \
                open(os.path.join(base, "class"), encoding="ascii") as pci_class:
            if vendor.read().strip() == "0x10de" and pci_class.read().strip()[:6] in ("0x0300", "0x0302"):
                found.append(name)
    return found


@pytest.fixture(scope="module")
def result():
    """The module's result on this host."""
    ansible_warnings._global_warnings.clear()
    stdout = io.StringIO()
    with patch_module_args({"root": "/"}), contextlib.redirect_stdout(stdout), pytest.raises(SystemExit):
        gpu_info.main()
    answer = json.loads(stdout.getvalue())
    print(json.dumps(answer, indent=2, sort_keys=True))
    return answer


def test_nvml_is_used(result):
    assert nvml.HAS_PYNVML, nvml.PYNVML_IMPORT_ERROR
    assert "failed" not in result
    assert result["driver_loaded"] is True
    assert result["source"] == "nvml", result.get("warnings")
    assert result["errors"] == []
    assert result["kernel_module"] in ("open", "proprietary")
    assert result["driver_version"].count(".") >= 1
    major, minor = result["cuda_driver_version"].split(".")
    assert int(major) >= 11 and int(minor) >= 0
    assert result["nvml_version"].endswith(result["driver_version"])


def test_every_pci_gpu_is_reported(result):
    functions = _pci_gpu_functions()
    assert result["count"] == len(functions) == len(result["gpus"]) > 0
    assert sorted(gpu["pci_address"] for gpu in result["gpus"]) == functions


def test_gpu_fields_are_sane(result):
    assert [gpu["index"] for gpu in result["gpus"]] == list(range(result["count"]))
    for gpu in result["gpus"]:
        assert gpu["uuid"].startswith("GPU-")
        assert gpu["name"]
        assert gpu["memory_total_mib"] > 0
        assert gpu["device_id"].startswith("0x")
        assert gpu["driver"] == "nvidia"
        assert isinstance(gpu["persistence_mode"], bool)
        assert gpu["numa_node"] is None or gpu["numa_node"] >= 0
        assert gpu["mig_mode"] is None or set(gpu["mig_mode"]) == {"current", "pending"}
        assert gpu["fabric"] is not None
        assert gpu["fabric"]["state"] in ("not_supported", "not_started", "in_progress", "completed")
        if gpu["fabric"]["state"] == "not_supported":
            assert gpu["fabric"] == {"state": "not_supported", "status": None, "cluster_uuid": None,
                                     "clique_id": None, "clique": None}
        if gpu["fabric"]["clique"] is not None:
            assert gpu["fabric"]["clique"] == f"{gpu['fabric']['cluster_uuid']}.{gpu['fabric']['clique_id']}"
    assert result["cliques"] == sorted({gpu["fabric"]["clique"] for gpu in result["gpus"]} - {None})
