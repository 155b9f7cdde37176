# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tests of the GPUDirect RDMA readiness reader (module_utils/peermem.py) on the recorded host trees."""

from __future__ import annotations

import os
import subprocess

import pytest

from ansible_collections.gpufabric.cluster.plugins.module_utils.peermem import (
    REASON_CODES,
    collect_peermem,
    dma_buf_support,
    find_module_file,
    find_persisted,
    lists_module,
    parse_kernel_version,
    parse_proc_modules,
)
from ansible_collections.gpufabric.cluster.tests.unit.helpers import write_host_file

OPEN = {"loaded": True, "version": "570.172.08", "kernel_module": "open"}
PROPRIETARY = {"loaded": True, "version": "570.172.08", "kernel_module": "proprietary"}
NOT_LOADED = {"loaded": False, "version": None, "kernel_module": None}


def run(argv, check_rc=False, environ_update=None):
    """A runner with AnsibleModule.run_command's signature, for the stand-in tools of the trees."""
    env = dict(os.environ, **(environ_update or {}))
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, check=False)
    return proc.returncode, proc.stdout, proc.stderr


@pytest.mark.parametrize(("release", "expected"), [
    ("6.8.0-1025-nvidia-64k", (6, 8, 0)),
    ("5.4.0-216-generic", (5, 4, 0)),
    ("5.14.0-503.14.1.el9_5.x86_64", (5, 14, 0)),
    ("6.12", (6, 12, 0)),
    ("6.1.0-28-amd64", (6, 1, 0)),
    ("4.18.0-553.el8_10.x86_64", (4, 18, 0)),
    ("garbage", None),
    ("", None),
    (None, None),
])
def test_parse_kernel_version(release, expected):
    assert parse_kernel_version(release) == expected


def test_parse_proc_modules_reads_only_the_name_column():
    text = ("mlx5_ib 520192 0 - Live 0x0000000000000000 (OE)\n"
            "ib_uverbs 200704 2 nvidia_peermem,mlx5_ib, Live 0x0000000000000000 (OE)\n\n")
    assert parse_proc_modules(text) == ["mlx5_ib", "ib_uverbs"]


def test_lists_module():
    names = ("nvidia_peermem", "nvidia-peermem")
    assert lists_module(["# nvidia_peermem", "; nvidia_peermem", "", "nvidia-peermem"], names)
    assert not lists_module(["# nvidia_peermem", "nvidia_peermemx", "nv_peer_mem"], ("nvidia_peermem",))
    assert lists_module(["nvidia_peermem option=1"], ("nvidia_peermem",))


def reasons(*pairs):
    """dma_buf.reasons entries from (code, message) pairs."""
    return [{"code": code, "message": message} for code, message in pairs]


@pytest.mark.parametrize(("driver", "kernel", "expected"), [
    (OPEN, "6.8.0-60-generic", []),
    (OPEN, "5.12.0-1-generic", []),
    (OPEN, "5.11.22", [("kernel_too_old", "kernel 5.11.22 is older than 5.12")]),
    (PROPRIETARY, "6.8.0-60-generic",
     [("proprietary_modules", "proprietary kernel module loaded; DMA-BUF needs the open kernel module")]),
    (NOT_LOADED, "5.4.0-216-generic",
     [("no_driver", "NVIDIA driver not loaded"), ("kernel_too_old", "kernel 5.4.0-216-generic is older than 5.12")]),
    ({"loaded": True, "version": None, "kernel_module": None}, "6.8.0",
     [("kernel_module_unknown", "NVIDIA kernel module flavour unknown; DMA-BUF needs the open kernel module")]),
    (OPEN, None, [("kernel_unknown", "kernel version unknown; DMA-BUF needs Linux 5.12 or newer")]),
    (OPEN, "weird", [("kernel_unknown", "kernel version 'weird' unknown; DMA-BUF needs Linux 5.12 or newer")]),
])
def test_dma_buf_support(driver, kernel, expected):
    assert dma_buf_support(driver, kernel) == {"supported": not expected, "reasons": reasons(*expected)}
    assert {code for code, _message in expected} <= set(REASON_CODES)


def test_collect_hgx_h100(host_trees):
    result = collect_peermem(host_trees["hgx_h100"], run)
    assert result == {
        "kernel_version": "6.8.0-60-generic",
        # ib_uverbs lists nvidia_peermem as a user in /proc/modules; that is not nvidia_peermem being loaded.
        "nvidia_peermem": {"loaded": False, "persisted": False, "persisted_in": [], "available": True},
        "nv_peer_mem": {"loaded": False},
        "ofed": {"installed": True, "version": "OFED-internal-25.04-0.6.1"},
        "driver": OPEN,
        "dma_buf": {"supported": True, "reasons": []},
        "gpudirect_rdma": {"ready": True, "method": "dma_buf"},
        "errors": [],
        "warnings": [],
    }


def test_collect_broken_node(host_trees):
    result = collect_peermem(host_trees["broken_node"], run)
    assert result["kernel_version"] == "5.4.0-216-generic"
    assert result["nvidia_peermem"] == {"loaded": False, "persisted": False, "persisted_in": [], "available": False}
    assert result["ofed"] == {"installed": False, "version": None}
    assert result["driver"] == NOT_LOADED
    assert result["dma_buf"] == {"supported": False, "reasons": reasons(
        ("no_driver", "NVIDIA driver not loaded"), ("kernel_too_old", "kernel 5.4.0-216-generic is older than 5.12"))}
    assert result["gpudirect_rdma"] == {"ready": False, "method": None}
    assert result["errors"] == []


def test_collect_loaded_and_persisted_peermem_on_proprietary_driver(fresh_tree):
    root = fresh_tree("hgx_h100")
    with open(os.path.join(root, "proc/modules"), "a", encoding="utf-8") as handle:
        handle.write("nvidia_peermem 16384 0 - Live 0x0000000000000000 (OE)\n")
    version = os.path.join(root, "proc/driver/nvidia/version")
    with open(version, encoding="utf-8") as handle:
        text = handle.read()
    write_host_file(root, "/proc/driver/nvidia/version", text.replace("Open Kernel Module", "Kernel Module"))
    write_host_file(root, "/etc/modules-load.d/nvidia-peermem.conf", "# GPUDirect RDMA\nnvidia-peermem\n")
    write_host_file(root, "/etc/modules", "# /etc/modules\nloop\nnvidia_peermem\n")
    result = collect_peermem(root, run)
    assert result["nvidia_peermem"] == {
        "loaded": True, "persisted": True,
        "persisted_in": ["/etc/modules-load.d/nvidia-peermem.conf", "/etc/modules"], "available": True}
    assert result["driver"]["kernel_module"] == "proprietary"
    assert result["dma_buf"] == {"supported": False, "reasons": reasons(
        ("proprietary_modules", "proprietary kernel module loaded; DMA-BUF needs the open kernel module"))}
    assert result["gpudirect_rdma"] == {"ready": True, "method": "nvidia_peermem"}
    assert result["warnings"] == []


def test_loaded_from_sysfs_initstate_and_legacy_module(fresh_tree):
    root = fresh_tree("broken_node")
    write_host_file(root, "/sys/module/nvidia_peermem/initstate", "live\n")
    write_host_file(root, "/sys/module/nv_peer_mem/initstate", "live\n")
    result = collect_peermem(root, run)
    assert result["nvidia_peermem"]["loaded"] is True
    assert result["nv_peer_mem"] == {"loaded": True}
    assert result["gpudirect_rdma"] == {"ready": True, "method": "nvidia_peermem"}
    assert result["warnings"] == [
        "both nvidia_peermem and the legacy nv_peer_mem are loaded; unload nv_peer_mem"]


def test_modules_load_precedence_and_mask(fresh_tree):
    root = fresh_tree("no_nvidia")
    write_host_file(root, "/usr/lib/modules-load.d/gpu.conf", "nvidia_peermem\n")
    write_host_file(root, "/lib/modules-load.d/rdma.conf", "nvidia_peermem\n")
    write_host_file(root, "/run/modules-load.d/rdma.conf", "# overridden, nothing loaded\n")
    write_host_file(root, "/usr/lib/modules-load.d/not-a-conf.txt", "nvidia_peermem\n")
    assert find_persisted(root) == ["/usr/lib/modules-load.d/gpu.conf"]
    os.symlink("/dev/null", os.path.join(root, "etc/modules-load.d/gpu.conf"))
    assert find_persisted(root) == []


def test_persisted_but_not_available_warns(fresh_tree):
    root = fresh_tree("no_nvidia")
    write_host_file(root, "/etc/modules-load.d/nvidia-peermem.conf", "nvidia_peermem\n")
    result = collect_peermem(root, run)
    assert result["nvidia_peermem"] == {"loaded": False, "persisted": True,
                                        "persisted_in": ["/etc/modules-load.d/nvidia-peermem.conf"],
                                        "available": False}
    assert result["warnings"] == [
        "nvidia_peermem is loaded at boot by /etc/modules-load.d/nvidia-peermem.conf "
        "but no nvidia-peermem module exists for the running kernel (below /lib/modules)"]


@pytest.mark.parametrize("name", ["nvidia-peermem.ko", "nvidia-peermem.ko.xz", "nvidia-peermem.ko.gz",
                                  "nvidia_peermem.ko"])
def test_find_module_file_compressions(fresh_tree, name):
    root = fresh_tree("no_nvidia")
    assert find_module_file(root, "6.1.0-28-amd64") is None
    write_host_file(root, f"/lib/modules/6.1.0-28-amd64/kernel/drivers/video/{name}", "")
    write_host_file(root, "/lib/modules/6.1.0-28-amd64/kernel/drivers/video/nvidia-peermem.ko.sig", "")
    write_host_file(root, "/lib/modules/5.15.0-1-generic/updates/nvidia-peermem.ko", "")
    assert find_module_file(root, "6.1.0-28-amd64") == f"/lib/modules/6.1.0-28-amd64/kernel/drivers/video/{name}"
    assert find_module_file(root, "../5.15.0-1-generic/x") is None
    assert find_module_file(root, "..") is None
    assert find_module_file(root, None) is None


def test_ofed_info_failing_and_silent(fresh_tree):
    root = fresh_tree("hgx_h100")
    write_host_file(root, "/usr/bin/ofed_info", "#!/bin/sh\necho 'ofed_info: broken install' >&2\nexit 2\n", 0o755)
    result = collect_peermem(root, run)
    assert result["ofed"] == {"installed": True, "version": None}
    assert result["errors"] == ["ofed_info -s exited 2: ofed_info: broken install"]
    write_host_file(root, "/usr/bin/ofed_info", "#!/bin/sh\nexit 0\n", 0o755)
    result = collect_peermem(root, run)
    assert result["ofed"] == {"installed": True, "version": None}
    assert result["errors"] == ["ofed_info -s printed no version"]


def test_unreadable_kernel_and_modules(fresh_tree):
    root = fresh_tree("gb200_tray")
    os.unlink(os.path.join(root, "proc/sys/kernel/osrelease"))
    os.unlink(os.path.join(root, "proc/modules"))
    result = collect_peermem(root, run)
    assert result["kernel_version"] is None
    assert result["errors"] == ["/proc/sys/kernel/osrelease: is missing", "/proc/modules: is missing"]
    assert result["nvidia_peermem"]["available"] is False
    assert result["dma_buf"] == {"supported": False, "reasons": reasons(
        ("kernel_unknown", "kernel version unknown; DMA-BUF needs Linux 5.12 or newer"))}


def test_missing_root():
    result = collect_peermem("/nonexistent/gpufabric-root", run)
    message = "root '/nonexistent/gpufabric-root' does not exist or is not a directory"
    assert result["errors"] == [message]
    assert result["dma_buf"] == {"supported": False,
                                 "reasons": reasons(("host_unreadable", f"host not readable: {message}"))}
    assert result["gpudirect_rdma"] == {"ready": False, "method": None}


def test_find_module_file_reads_modules_dep_before_walking(fresh_tree):
    root = fresh_tree("no_nvidia")
    base = "/lib/modules/6.1.0-28-amd64"
    write_host_file(root, f"{base}/modules.dep",
                    "kernel/drivers/net/virtio_net.ko.xz: kernel/drivers/net/net_failover.ko.xz\n"
                    "updates/dkms/nvidia-peermem.ko.xz: updates/dkms/nvidia.ko.xz\n")
    # depmod's index is trusted: the file itself need not be walked to
    assert find_module_file(root, "6.1.0-28-amd64") == f"{base}/updates/dkms/nvidia-peermem.ko.xz"
    write_host_file(root, f"{base}/modules.dep", "kernel/drivers/net/virtio_net.ko.xz:\n")
    assert find_module_file(root, "6.1.0-28-amd64") is None
