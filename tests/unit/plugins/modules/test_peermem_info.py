# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""End-to-end tests of the peermem_info module through AnsibleModule on the recorded host trees."""

from __future__ import annotations

import os

import pytest

from ansible_collections.gpufabric.cluster.plugins.modules import peermem_info
from ansible_collections.gpufabric.cluster.tests.unit.helpers import warning_messages, write_host_file

RESULT_KEYS = {"changed", "kernel_version", "nvidia_peermem", "nv_peer_mem", "ofed", "driver", "dma_buf",
               "gpudirect_rdma", "errors"}
OPEN_570 = {"loaded": True, "version": "570.172.08", "kernel_module": "open"}
NOT_LOADED = {"loaded": False, "version": None, "kernel_module": None}


def test_hgx_h100(module_runner, host_trees):
    result = module_runner(peermem_info, {"root": host_trees["hgx_h100"]})
    assert "failed" not in result
    assert set(result) == RESULT_KEYS
    assert result["changed"] is False
    assert result["errors"] == []
    assert result["kernel_version"] == "6.8.0-60-generic"
    assert result["nvidia_peermem"] == {"loaded": False, "persisted": False, "persisted_in": [], "available": True}
    assert result["nv_peer_mem"] == {"loaded": False}
    assert result["ofed"] == {"installed": True, "version": "OFED-internal-25.04-0.6.1"}
    assert result["driver"] == OPEN_570
    assert result["dma_buf"] == {"supported": True, "reasons": []}
    assert result["gpudirect_rdma"] == {"ready": True, "method": "dma_buf"}


def test_gb200_tray(module_runner, host_trees):
    result = module_runner(peermem_info, {"root": host_trees["gb200_tray"]})
    assert "failed" not in result
    assert set(result) == RESULT_KEYS
    assert result["errors"] == []
    # A 64k-page NVIDIA kernel release still parses as 6.8.
    assert result["kernel_version"] == "6.8.0-1025-nvidia-64k"
    assert result["nvidia_peermem"] == {"loaded": False, "persisted": False, "persisted_in": [], "available": True}
    assert result["ofed"] == {"installed": True, "version": "OFED-internal-25.04-0.6.1"}
    assert result["driver"] == OPEN_570
    assert result["dma_buf"] == {"supported": True, "reasons": []}
    assert result["gpudirect_rdma"] == {"ready": True, "method": "dma_buf"}


def test_broken_node(module_runner, host_trees):
    result = module_runner(peermem_info, {"root": host_trees["broken_node"]})
    assert "failed" not in result
    assert set(result) == RESULT_KEYS
    assert result["errors"] == []
    assert result["kernel_version"] == "5.4.0-216-generic"
    assert result["nvidia_peermem"] == {"loaded": False, "persisted": False, "persisted_in": [], "available": False}
    assert result["nv_peer_mem"] == {"loaded": False}
    assert result["ofed"] == {"installed": False, "version": None}
    assert result["driver"] == NOT_LOADED
    assert result["dma_buf"] == {"supported": False, "reasons": [
        {"code": "no_driver", "message": "NVIDIA driver not loaded"},
        {"code": "kernel_too_old", "message": "kernel 5.4.0-216-generic is older than 5.12"}]}
    assert result["gpudirect_rdma"] == {"ready": False, "method": None}


def test_no_nvidia(module_runner, host_trees):
    result = module_runner(peermem_info, {"root": host_trees["no_nvidia"]})
    assert "failed" not in result
    assert set(result) == RESULT_KEYS
    assert result["errors"] == []
    assert result["kernel_version"] == "6.1.0-28-amd64"
    assert result["nvidia_peermem"] == {"loaded": False, "persisted": False, "persisted_in": [], "available": False}
    assert result["ofed"] == {"installed": False, "version": None}
    assert result["driver"] == NOT_LOADED
    assert result["dma_buf"] == {"supported": False, "reasons": [
        {"code": "no_driver", "message": "NVIDIA driver not loaded"}]}
    assert result["gpudirect_rdma"] == {"ready": False, "method": None}


def test_check_mode_returns_the_same(module_runner, host_trees):
    normal = module_runner(peermem_info, {"root": host_trees["hgx_h100"]})
    checked = module_runner(peermem_info, {"root": host_trees["hgx_h100"], "_ansible_check_mode": True})
    assert checked == normal


def test_peermem_loaded_persisted_warns_through_module(module_runner, fresh_tree):
    root = fresh_tree("broken_node")
    with open(os.path.join(root, "proc/modules"), "a", encoding="utf-8") as handle:
        handle.write("nvidia_peermem 16384 0 - Live 0x0000000000000000 (OE)\n"
                     "nv_peer_mem 16384 0 - Live 0x0000000000000000 (OE)\n")
    write_host_file(root, "/etc/modules-load.d/rdma.conf", "ib_umad\nnvidia-peermem\n")
    result = module_runner(peermem_info, {"root": root})
    assert "failed" not in result
    assert result["nvidia_peermem"] == {"loaded": True, "persisted": True,
                                        "persisted_in": ["/etc/modules-load.d/rdma.conf"], "available": False}
    assert result["nv_peer_mem"] == {"loaded": True}
    assert result["gpudirect_rdma"] == {"ready": True, "method": "nvidia_peermem"}
    assert warning_messages(result) == [
        "nvidia_peermem is loaded at boot by /etc/modules-load.d/rdma.conf "
        "but no nvidia-peermem module exists for the running kernel (below /lib/modules)",
        "both nvidia_peermem and the legacy nv_peer_mem are loaded; unload nv_peer_mem",
    ]


def test_garbage_files(module_runner, fresh_tree):
    root = fresh_tree("hgx_h100")
    write_host_file(root, "/proc/sys/kernel/osrelease", "not-a-kernel\n")
    write_host_file(root, "/proc/driver/nvidia/version", "garbage\n")
    write_host_file(root, "/proc/modules", "\n\n")
    write_host_file(root, "/usr/bin/ofed_info", "#!/bin/sh\nexit 1\n", 0o755)
    result = module_runner(peermem_info, {"root": root})
    assert "failed" not in result
    assert result["kernel_version"] is None
    assert result["nvidia_peermem"]["available"] is False
    assert result["ofed"] == {"installed": True, "version": None}
    assert result["errors"] == ["/proc/sys/kernel/osrelease: not a kernel release", "ofed_info -s exited 1: no output"]
    # /sys/module/nvidia/version still says which driver is loaded; the flavour is unknown.
    assert result["driver"] == {"loaded": True, "version": "570.172.08", "kernel_module": None}
    assert result["dma_buf"] == {"supported": False, "reasons": [
        {"code": "kernel_module_unknown",
         "message": "NVIDIA kernel module flavour unknown; DMA-BUF needs the open kernel module"},
        {"code": "kernel_unknown",
         "message": "kernel version unknown; DMA-BUF needs Linux 5.12 or newer"}]}
    assert result["gpudirect_rdma"] == {"ready": False, "method": None}


def test_missing_root(module_runner, tmp_path):
    missing = str(tmp_path / "absent")
    result = module_runner(peermem_info, {"root": missing})
    assert result["failed"] is True
    assert result["msg"] == f"root {missing!r} does not exist or is not a directory"
    assert "gpudirect_rdma" not in result


def test_unknown_option_fails(module_runner, host_trees):
    result = module_runner(peermem_info, {"root": host_trees["no_nvidia"], "kernel": "6.8"})
    assert result["failed"] is True
    assert "Unsupported parameters" in result["msg"]
    assert "kernel" in result["msg"]


@pytest.mark.parametrize("value", [["/"], {"path": "/"}, 5])
def test_non_string_root_is_never_read_as_a_host(module_runner, value):
    # AnsibleModule converts any value of a `path` option to text; the result is no directory: the task fails.
    result = module_runner(peermem_info, {"root": value})
    assert result["failed"] is True
    assert result["msg"] == f"root {str(value)!r} does not exist or is not a directory"
