# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 43: the XID events of the kernel log counted per GPU, read from /dev/kmsg below the probe root; any log
content gives counts or none, an unreadable log a warning and no counts, never an error."""

from __future__ import annotations

import errno
import os

import pytest
from fixtures.recorded_nvml import RecordedSource
from hypothesis import given
from hypothesis import strategies as st

from ansible_collections.gpufabric.cluster.plugins.module_utils import gpu, xid_events
from ansible_collections.gpufabric.cluster.plugins.module_utils.xid_events import (
    KmsgUnreadable,
    collect_xids,
    parse_xid_log,
    read_kmsg,
)

# A real XID line as a driver logs it (github.com/stas00/ml-engineering compute/accelerator/nvidia/debug.md).
REAL_LINE = ("NVRM: Xid (PCI:0000:10:1c): 63, pid=1896, Row Remapper: New row marked for remapping, reset gpu to "
             "activate.")


def _kmsg(root, text):
    os.makedirs(os.path.join(root, "dev"), exist_ok=True)
    with open(os.path.join(root, "dev", "kmsg"), "w", encoding="utf-8") as handle:
        handle.write(text)


def test_parse_a_real_line():
    assert parse_xid_log(REAL_LINE) == ({"0000:10:1c": {63: 1}}, None)


def test_parse_kmsg_records_counts_per_gpu_and_code():
    text = ("6,0,0,-;Linux version 6.8.0\n"
            "4,811,90211,-;NVRM: Xid (PCI:0018:01:00): 74, pid=4, name=python3, NVLink: fatal error\n"
            " SUBSYSTEM=pci\n"
            "4,812,90212,-;NVRM: Xid (PCI:0018:01:00): 74, pid=4, name=python3, NVLink: fatal error\n"
            "4,813,90213,-;NVRM: Xid (0000:3B:00): 79, pid=0, GPU has fallen off the bus.\n"  # older drivers: no PCI:
            "4,814,90214,-;NVRM: Xid (PCI:0000:3b:00.0): 48, pid=9, An uncorrectable double bit error\n"
            "4,815,90215,-;NVRM: GPU at PCI:0000:3b:00: GPU-1234\n")
    assert parse_xid_log(text) == ({"0018:01:00": {74: 2}, "0000:3b:00": {79: 1, 48: 1}}, True)


def test_parse_says_whether_the_boot_is_still_in_the_buffer():
    assert parse_xid_log("6,1204,88,-;x\n")[1] is False
    assert parse_xid_log("\n6,0,0,-;x\n")[1] is True
    assert parse_xid_log("") == ({}, None)


_EVENTS = st.lists(st.tuples(st.integers(0, 0xFFFF), st.integers(0, 255), st.integers(0, 31), st.integers(0, 99999)),
                   max_size=5)


@given(st.text(max_size=400), _EVENTS)
def test_any_log_gives_counts_or_nothing(noise, events):
    """Any text (with XID lines mixed in) gives counts per address and code, never an error."""
    lines = [f"NVRM: Xid (PCI:{domain:04x}:{bus:02x}:{device:02x}): {code}, free text"
             for domain, bus, device, code in events]
    counts, complete = parse_xid_log("\n".join([noise, *lines, noise]))
    assert complete in (True, False, None)
    for address, codes in counts.items():
        assert len(address) == 10 and address == address.lower()
        assert all(isinstance(code, int) and code >= 0 and count >= 1 for code, count in codes.items())
    for domain, bus, device, code in events:
        assert counts[f"{domain:04x}:{bus:02x}:{device:02x}"][code] >= 1


@given(st.binary(max_size=600))
def test_any_kmsg_bytes_give_counts_or_nothing(tmp_path_factory, data):
    root = str(tmp_path_factory.mktemp("kmsg"))
    os.makedirs(os.path.join(root, "dev"))
    with open(os.path.join(root, "dev", "kmsg"), "wb") as handle:
        handle.write(data)
    gpus = [{"pci_address": "0000:1b:00.0"}]
    warnings: list[str] = []
    events = collect_xids(root, gpus, warnings)
    assert warnings == []
    assert set(events) == {"source", "complete", "other_addresses"}
    assert all(isinstance(count, int) and count >= 1 for count in gpus[0]["xid_counts"].values())


def test_unreadable_log_is_a_warning_and_no_counts(tmp_path):
    gpus = [{"pci_address": "0000:1b:00.0"}]
    warnings: list[str] = []
    assert collect_xids(str(tmp_path), gpus, warnings) is None
    assert (gpus, warnings) == ([{"pci_address": "0000:1b:00.0", "xid_counts": None}],
                                ["XID events not read: /dev/kmsg: is missing"])


def test_no_gpu_no_log_read(tmp_path):
    warnings: list[str] = []
    assert collect_xids(str(tmp_path), [], warnings) is None
    assert warnings == []


@pytest.mark.parametrize(("make", "why"), [
    (os.mkdir, "not a character device"),
    (os.mkfifo, "not a character device"),
    (lambda path: os.symlink("kmsg", path), "too many levels of symbolic links"),
    (lambda path: os.symlink("../../../../../../etc/passwd", path), "outside root"),
])
def test_kmsg_that_is_not_a_log(tmp_path, make, why):
    os.makedirs(tmp_path / "dev")
    make(str(tmp_path / "dev" / "kmsg"))
    with pytest.raises(KmsgUnreadable, match=f"^/dev/kmsg: {why}$"):
        read_kmsg(str(tmp_path))


def test_kmsg_larger_than_its_limit(tmp_path):
    _kmsg(str(tmp_path), "6,0,0,-;x\n" * 100)
    with pytest.raises(KmsgUnreadable, match=r"^/dev/kmsg: larger than the limit of 100 bytes$"):
        read_kmsg(str(tmp_path), limit=100)


def test_kmsg_read_record_by_record_until_eagain(tmp_path, monkeypatch):
    """/dev/kmsg answers one record per read, EPIPE for a record overwritten meanwhile, EAGAIN at the end."""
    _kmsg(str(tmp_path), "")
    answers = [b"6,0,0,-;a\n", OSError(errno.EPIPE, "Broken pipe"), b"4,2,5,-;" + REAL_LINE.encode() + b"\n",
               BlockingIOError(errno.EAGAIN, "again"), b"never read"]

    def read(_descriptor, _size):
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer
    monkeypatch.setattr(xid_events.os, "read", read)
    assert read_kmsg(str(tmp_path)) == "6,0,0,-;a\n4,2,5,-;" + REAL_LINE + "\n"
    assert answers == [b"never read"]


def test_kmsg_read_error_names_the_path(tmp_path, monkeypatch):
    _kmsg(str(tmp_path), "")

    def read(_descriptor, _size):
        raise OSError(errno.EIO, "Input/output error")
    monkeypatch.setattr(xid_events.os, "read", read)
    with pytest.raises(KmsgUnreadable, match=r"^/dev/kmsg: input/output error$"):
        read_kmsg(str(tmp_path))


def test_degraded_tray_xids_per_gpu(host_trees, nvml_recording):
    result = gpu.collect_gpu(host_trees["gb200_tray_degraded"], None,
                             source_factory=lambda _root: RecordedSource(nvml_recording("gb200_tray_degraded")))
    expected = [{"13": 1}, {"64": 1}, {"63": 1, "74": 2, "94": 1}, {}]
    assert [item["xid_counts"] for item in result["gpus"]] == expected
    assert result["xid_events"] == {"source": "/dev/kmsg", "complete": True, "other_addresses": {}}
    assert result["warnings"] == []


def test_xids_of_an_address_without_gpu_are_kept_apart(fresh_tree, nvml_recording):
    root = fresh_tree("gb200_tray")
    _kmsg(root, "6,0,0,-;boot\n4,1,2,-;NVRM: Xid (PCI:0030:01:00): 79, pid=0, GPU has fallen off the bus.\n")
    result = gpu.collect_gpu(root, None, source_factory=lambda _root: RecordedSource(nvml_recording("gb200_tray")))
    assert {item["pci_address"]: item["xid_counts"] for item in result["gpus"]} == {
        "0008:01:00.0": {}, "0009:01:00.0": {}, "0018:01:00.0": {}, "0019:01:00.0": {}}
    assert result["xid_events"]["other_addresses"] == {"0030:01:00": {"79": 1}}
