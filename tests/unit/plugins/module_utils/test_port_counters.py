# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tests of the port error counters: read on the recorded trees, absent where the kernel has none, and any file
content a number, absent or an error naming the file."""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ansible_collections.gpufabric.cluster.plugins.module_utils.connectx import collect_connectx
from ansible_collections.gpufabric.cluster.plugins.module_utils.port_counters import (
    COUNTER_MAX,
    COUNTERS,
    HW_COUNTERS,
    PMA_COUNTERS,
    CounterError,
    parse_counter,
    read_port_counters,
)

PORT = "/sys/class/infiniband/mlx5_0/ports/1"


def _port(payload: dict, rdma_device: str) -> dict:
    matches = [port for port in payload["ports"] if port["rdma_device"] == rdma_device]
    assert len(matches) == 1
    return matches[0]


def _real(root: str, path: str) -> str:
    return os.path.realpath(os.path.join(root, path.lstrip("/")))


# --- the parser ------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, expected", [
    ("0", 0), ("27\n", 27), (" 65535 ", 65535), ("4294967295", 4294967295), ("6442450944", 6442450944),
    (str(COUNTER_MAX), COUNTER_MAX), ("007", 7),
])
def test_parse_counter(text, expected):
    assert parse_counter(text) == expected


@pytest.mark.parametrize("text", ["", "  ", "-1", "+5", "0x10", "1e3", "1.5", "12 34", "N/A", "\uff11\uff12",
                                  str(COUNTER_MAX + 1), "1" * 21, "27\ufffd"])
def test_parse_counter_refuses_what_the_kernel_never_prints(text):
    with pytest.raises(CounterError, match=r"^not a counter") as caught:
        parse_counter(text)
    if text.strip():
        assert text.strip() not in str(caught.value)


# --- the recorded trees ----------------------------------------------------------------------------

def test_healthy_tree_reads_every_counter_as_zero(host_trees):
    payload = collect_connectx(host_trees["gb200_tray"])
    for port in payload["ports"]:
        assert port["counters"] == dict.fromkeys(COUNTERS, 0), port["rdma_device"]
        assert list(port["counters"]) == list(COUNTERS)
        assert port["counter_errors"] == []


def test_degraded_tray_reads_each_counter(host_trees):
    payload = collect_connectx(host_trees["gb200_tray_degraded"])
    assert payload["errors"] == []
    zero = dict.fromkeys(COUNTERS, 0)
    assert _port(payload, "mlx5_0")["counters"] == {
        **zero, "symbol_error": 27, "link_error_recovery": 4, "link_downed": 3, "port_rcv_errors": 19,
        "port_rcv_remote_physical_errors": 112}
    # saturated PMA counters (16 and 8 bits) are reported as they read
    assert _port(payload, "mlx5_1")["counters"] == {**zero, "symbol_error": 65535, "link_downed": 255}
    assert _port(payload, "mlx5_2")["counters"] == {
        **zero, "local_link_integrity_errors": 12, "excessive_buffer_overrun_errors": 11, "port_xmit_discards": 4096}
    assert _port(payload, "mlx5_3")["counters"] == zero
    ethernet = _port(payload, "mlx5_4")
    assert ethernet["link_layer"] == "Ethernet"
    assert ethernet["counters"] == {**zero, "out_of_sequence": 6442450944, "packet_seq_err": 1834}
    assert all(port["counter_errors"] == [] and port["errors"] == [] for port in payload["ports"])


def test_old_kernel_without_hw_counters_and_ethernet_without_pma(fresh_tree):
    """An InfiniBand port of a kernel without hw_counters has its PMA counters only; an Ethernet port of a driver
    without PMA on RoCE its hw_counters only; a port with neither directory no counters. None of it is an error."""
    root = fresh_tree("gb200_tray")
    shutil.rmtree(_real(root, "/sys/class/infiniband/mlx5_0/ports/1/hw_counters"))
    shutil.rmtree(_real(root, "/sys/class/infiniband/mlx5_4/ports/1/counters"))
    shutil.rmtree(_real(root, "/sys/class/infiniband/mlx5_1/ports/1/counters"))
    shutil.rmtree(_real(root, "/sys/class/infiniband/mlx5_1/ports/1/hw_counters"))
    os.unlink(_real(root, "/sys/class/infiniband/mlx5_2/ports/1/counters/port_rcv_remote_physical_errors"))
    payload = collect_connectx(root)
    assert payload["errors"] == []
    assert _port(payload, "mlx5_0")["counters"] == dict.fromkeys(PMA_COUNTERS, 0)
    assert _port(payload, "mlx5_4")["counters"] == dict.fromkeys(HW_COUNTERS, 0)
    assert _port(payload, "mlx5_1")["counters"] == {}
    assert "port_rcv_remote_physical_errors" not in _port(payload, "mlx5_2")["counters"]
    assert len(_port(payload, "mlx5_2")["counters"]) == len(COUNTERS) - 1
    assert all(port["counter_errors"] == [] for port in payload["ports"])


def test_unreadable_counters_are_named_by_file_and_kept_out_of_the_port_errors(fresh_tree):
    root = fresh_tree("gb200_tray")
    counters = _real(root, "/sys/class/infiniband/mlx5_0/ports/1/counters")
    with open(os.path.join(counters, "symbol_error"), "w", encoding="utf-8") as handle:
        handle.write("secret-text\n")
    with open(os.path.join(counters, "link_downed"), "wb") as handle:
        handle.write(b"\xff\xfe3\n")
    os.unlink(os.path.join(counters, "port_rcv_errors"))
    os.mkdir(os.path.join(counters, "port_rcv_errors"))
    os.unlink(os.path.join(counters, "port_xmit_discards"))
    os.symlink("port_xmit_discards", os.path.join(counters, "port_xmit_discards"))
    payload = collect_connectx(root)
    port = _port(payload, "mlx5_0")
    base = "/sys/class/infiniband/mlx5_0/ports/1/counters"
    assert port["counter_errors"] == [
        f"{base}/symbol_error: not a counter (expected a decimal number)",
        f"{base}/link_downed: not a counter (expected a decimal number)",
        f"{base}/port_rcv_errors: cannot be read",
        f"{base}/port_xmit_discards: dangling link",
    ]
    assert not {"symbol_error", "link_downed", "port_rcv_errors", "port_xmit_discards"} & set(port["counters"])
    assert port["counters"]["link_error_recovery"] == 0
    assert port["errors"] == []  # the port itself reads fine: rdma_ports does not fail it for a counter
    assert "secret" not in str(payload)


def test_only_the_named_files_are_read(fresh_tree, monkeypatch):
    """No directory walk: neither listing a directory nor an extra file in hw_counters plays a part."""
    root = fresh_tree("gb200_tray")
    hw = _real(root, "/sys/class/infiniband/mlx5_4/ports/1/hw_counters")
    with open(os.path.join(hw, "rx_write_requests"), "w", encoding="utf-8") as handle:
        handle.write("not read\n")

    def refuse(*_args, **_kwargs):
        raise AssertionError("a counters directory was listed")

    monkeypatch.setattr(os, "listdir", refuse)
    monkeypatch.setattr(os, "scandir", refuse)
    counters, errors = read_port_counters(root, "/sys/class/infiniband/mlx5_4/ports/1")
    assert counters == dict.fromkeys(COUNTERS, 0)
    assert errors == []


# --- property: any file content, any kind of file ----------------------------------------------------

REASONS = ("not a counter (expected a decimal number)", "not a counter (larger than 64 bits)", "cannot be read",
           "dangling link", "outside root", "larger than the limit of 4096 bytes", "is missing")
KINDS = st.sampled_from(["file", "missing", "directory", "loop", "dangling", "outside"])


@given(content=st.one_of(st.binary(max_size=64),
                         st.integers(min_value=-(2 ** 70), max_value=2 ** 70).map(lambda n: str(n).encode()),
                         st.integers(min_value=0, max_value=2 ** 64).map(lambda n: f" {n:#x}\n".encode()),
                         st.binary(min_size=4097, max_size=4200)),
       kind=KINDS, name=st.sampled_from(COUNTERS))
def test_any_counter_file_is_a_number_absent_or_an_error_naming_it(content, kind, name):
    with tempfile.TemporaryDirectory() as root:
        directory = "counters" if name in PMA_COUNTERS else "hw_counters"
        base = os.path.join(root, "sys/class/infiniband/mlx5_0/ports/1", directory)
        os.makedirs(base)
        path = os.path.join(base, name)
        if kind == "file":
            with open(path, "wb") as handle:
                handle.write(content)
        elif kind == "directory":
            os.mkdir(path)
        elif kind == "loop":
            os.symlink(name, path)
        elif kind == "dangling":
            os.symlink("nowhere", path)
        elif kind == "outside":
            os.symlink("../../../../../../../../etc/passwd", path)
        counters, errors = read_port_counters(root, PORT)
        host_path = f"{PORT}/{directory}/{name}"
        assert set(counters) <= {name}
        if name in counters:
            value = counters[name]
            assert isinstance(value, int) and 0 <= value <= COUNTER_MAX
            assert kind == "file" and value == int(content.decode().strip())
            assert errors == []
        elif kind == "missing":
            assert errors == []
        else:
            # one error naming the file with a reason of the probe's own words: the content is never quoted
            assert errors in ([f"{host_path}: {reason}"] for reason in REASONS)
