# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 39 item 7: every file a probe reads has a size limit; a larger one is an error naming it and the limit.

On the starting commit ``host_files`` read whole files: a 1 GiB sparse nodes file took 14 s and 2 GiB of memory.
"""

from __future__ import annotations

import os
import time
import tracemalloc
from unittest import mock

import pytest

from ansible_collections.gpufabric.cluster.plugins.module_utils import host_files
from ansible_collections.gpufabric.cluster.plugins.module_utils.connectx import collect_connectx
from ansible_collections.gpufabric.cluster.plugins.module_utils.gpu import collect_gpu
from ansible_collections.gpufabric.cluster.plugins.module_utils.host_files import (
    ATTRIBUTE_LIMIT,
    IMEX_FILE_LIMIT,
    MODULES_DEP_LIMIT,
    MODULES_LOAD_LIMIT,
    PACKAGE_STATUS_LIMIT,
    PROC_TABLE_LIMIT,
    check_root,
    problem,
    read_lines,
    read_text,
)
from ansible_collections.gpufabric.cluster.plugins.module_utils.imex import collect_imex
from ansible_collections.gpufabric.cluster.plugins.module_utils.peermem import collect_peermem

NODES_PATH = "/etc/nvidia-imex/nodes_config.cfg"
GIB = 1024 ** 3


def _real(root: str, path: str) -> str:
    """The real file behind a host path of a tree (sysfs attributes sit behind links)."""
    return os.path.realpath(os.path.join(root, path.lstrip("/")))


def _pad(root: str, path: str, size: int, comment: bool = False) -> None:
    """Pad a host file to exactly ``size`` bytes: its value and its lines stay what they were.

    With ``comment`` the padding is one ``#`` line (what every file of lines here skips or ignores), else line ends
    (what a value is stripped of).
    """
    real = _real(root, path)
    needed = size - os.path.getsize(real)
    with open(real, "ab") as handle:
        handle.write(b"#" + b"x" * (needed - 2) + b"\n" if comment and needed >= 2 else b"\n" * needed)
    assert os.path.getsize(real) == size


def test_a_1_gib_sparse_nodes_file_is_refused_fast_naming_the_path_and_the_limit(fresh_tree, command_runner):
    root = fresh_tree("gb200_tray")
    os.truncate(_real(root, NODES_PATH), GIB)  # sparse: nothing written, 1 GiB to read
    tracemalloc.start()
    started = time.monotonic()
    try:
        payload = collect_imex(root, command_runner)
        elapsed = time.monotonic() - started
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert payload["nodes"] is None
    assert payload["errors"] == [f"{NODES_PATH}: larger than the limit of 1048576 bytes"]
    assert not [warning for warning in payload["warnings"] if NODES_PATH in warning]  # not "does not exist"
    assert peak < 8 * 1024 * 1024, f"{peak} bytes allocated to refuse the file"
    assert elapsed < 5, f"{elapsed:.1f} s to refuse the file"


def test_at_most_one_byte_more_than_the_limit_is_read(tmp_path):
    (tmp_path / "big").write_bytes(b"x" * 10_000)
    reads = []
    real_read = os.read

    def counting(descriptor, size):
        data = real_read(descriptor, size)
        reads.append(len(data))
        return data

    root = check_root(str(tmp_path))
    with mock.patch.object(host_files.os, "read", counting):
        assert read_lines(root, "/big", limit=100) is None
    assert sum(reads) == 101
    assert problem(root, "/big") == "larger than the limit of 100 bytes"
    assert root.refusal_errors() == ["/big: larger than the limit of 100 bytes"]


def test_a_file_of_exactly_its_limit_is_read(tmp_path):
    (tmp_path / "attr").write_bytes(b"5: LinkUp\n".ljust(ATTRIBUTE_LIMIT, b"\n"))
    root = check_root(str(tmp_path))
    assert read_text(root, "/attr") == "5: LinkUp"
    assert root.refusal_errors() == []


def test_a_plain_root_string_reads_bounded_too(tmp_path):
    (tmp_path / "attr").write_bytes(b"1" * (ATTRIBUTE_LIMIT + 1))
    assert read_text(str(tmp_path), "/attr", default="unread") == "unread"
    assert read_text(str(tmp_path), "/attr", limit=ATTRIBUTE_LIMIT + 1) == "1" * (ATTRIBUTE_LIMIT + 1)


def _errors(payload: dict) -> list[str]:
    return payload["errors"]


# (tree, host path, its limit, the collector that reads it); the error names the path and the limit.
LIMITED_FILES = [
    ("gb200_tray", "/etc/nvidia-imex/config.cfg", IMEX_FILE_LIMIT, collect_imex),
    ("gb200_tray", NODES_PATH, IMEX_FILE_LIMIT, collect_imex),
    ("gb200_tray", "/var/lib/dpkg/status", PACKAGE_STATUS_LIMIT, collect_imex),
    ("gb200_tray", "/proc/devices", PROC_TABLE_LIMIT, collect_imex),
    ("hgx_h100", "/proc/modules", PROC_TABLE_LIMIT, collect_peermem),
    ("hgx_h100", "/proc/sys/kernel/osrelease", ATTRIBUTE_LIMIT, collect_peermem),
    ("hgx_h100", "/etc/modules-load.d/modules.conf", MODULES_LOAD_LIMIT, collect_peermem),
    ("hgx_h100", "/lib/modules/6.8.0-60-generic/modules.dep", MODULES_DEP_LIMIT, collect_peermem),
    ("hgx_h100", "/proc/driver/nvidia/version", ATTRIBUTE_LIMIT, collect_gpu),
    ("hgx_h100", "/sys/module/nvidia/version", ATTRIBUTE_LIMIT, collect_gpu),
    ("hgx_h100", "/sys/class/infiniband/mlx5_0/fw_ver", ATTRIBUTE_LIMIT, collect_connectx),
    ("hgx_h100", "/sys/class/infiniband/mlx5_0/ports/1/rate", ATTRIBUTE_LIMIT, collect_connectx),
    ("hgx_h100", "/sys/class/infiniband/mlx5_0/ports/1/state", ATTRIBUTE_LIMIT, collect_connectx),
]


@pytest.mark.parametrize(("tree", "path", "limit", "collect"), LIMITED_FILES,
                         ids=[f"{tree}:{path}" for tree, path, _limit, _collect in LIMITED_FILES])
def test_every_probed_file_is_read_up_to_its_limit_and_no_further(
        fresh_tree, command_runner, tree, path, limit, collect):
    root = fresh_tree(tree)
    if path.endswith("modules.dep"):  # the tree has no depmod index: one naming the module file
        with open(os.path.join(root, path.lstrip("/")), "w", encoding="utf-8") as handle:
            handle.write("updates/dkms/nvidia-peermem.ko.zst:\n")
    refused = f"{path}: larger than the limit of {limit} bytes"
    _pad(root, path, limit, comment=limit > ATTRIBUTE_LIMIT)
    at_limit = collect(root, command_runner)
    assert refused not in _errors(at_limit)
    assert not [error for error in _errors(at_limit) if "larger than" in error]
    _pad(root, path, limit + 1)
    over = collect(root, command_runner)
    assert _errors(over).count(refused) == 1, _errors(over)


def test_the_limits_are_the_documented_ones():
    assert (ATTRIBUTE_LIMIT, IMEX_FILE_LIMIT, PROC_TABLE_LIMIT, MODULES_LOAD_LIMIT, MODULES_DEP_LIMIT,
            PACKAGE_STATUS_LIMIT) == (4096, 1 << 20, 1 << 20, 64 << 10, 16 << 20, 32 << 20)
