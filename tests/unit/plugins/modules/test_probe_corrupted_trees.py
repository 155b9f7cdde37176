# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Property-based tests of every probe module on corrupted host trees (issue 17).

A recorded tree is copied and corrupted the ways a real host or a stale copy goes wrong: files removed, truncated
or full of garbage, symlinks escaping the root (absolute, climbing with ``..``, to a directory), symlink loops,
FIFOs and directories where files belong, and permission denied (simulated for root, which reads anything).
For any such tree the module never raises, never opens, lists or stats anything outside ``root`` (every path the
process hands the OS is recorded and resolved afterwards), never quotes a file in its errors or warnings, and
returns the documented shape, or fails with the documented message when ``sys/`` itself is gone.
"""

from __future__ import annotations

import builtins
import contextlib
import errno
import os
import shutil
import tempfile
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ansible_collections.gpufabric.cluster.plugins.modules import (
    connectx_info,
    fabric_facts,
    gpu_info,
    imex_info,
    peermem_info,
)

MARKER = "GARBAGE-MARK-7f3"  # written into corrupted files; never to be quoted in a message
SECRET = "OUTSIDE-SECRET-91c"  # the content of every file outside the root
HOSTS = ("hgx_h100", "gb200_tray", "no_nvidia", "broken_node")
KINDS = ("remove", "truncate", "garbage", "escape_absolute", "escape_climb", "escape_directory", "loop", "fifo",
         "directory", "denied")

COMMON = {"changed"}
RESULT_KEYS = {
    "gpu_info": {"driver_loaded", "driver_version", "kernel_module", "cuda_driver_version", "nvml_version", "source",
                 "nvml_bindings", "count", "gpus", "cliques", "platform", "nvswitches", "xid_events", "fabricmanager",
                 "errors"},
    "connectx_info": {"ports", "count", "rdma_devices", "link_layers", "functions_without_rdma", "errors"},
    "imex_info": {"installed", "package", "version", "service", "config_path", "config", "nodes", "channels",
                  "domain", "control", "errors"},
    "peermem_info": {"kernel_version", "nvidia_peermem", "nv_peer_mem", "ofed", "driver", "dma_buf",
                     "gpudirect_rdma", "errors"},
}
PORT_KEYS = {"pci_address", "device_id", "model", "rdma_device", "port", "netdev", "link_layer", "state",
             "state_code", "phys_state", "rate_gbps", "rate", "mtu", "fw_ver", "board_id", "numa_node",
             "gpus_same_switch", "gpus_same_numa", "errors", "counters", "counter_errors"}
MODULES = {"gpu_info": gpu_info, "connectx_info": connectx_info, "imex_info": imex_info,
           "peermem_info": peermem_info, "fabric_facts": fabric_facts}
# The recorded outputs the stand-in tools print are tool data, not host files: left alone.
UNTOUCHED = ("usr/share/fixture",)

mutation = st.tuples(st.sampled_from(KINDS), st.integers(min_value=0, max_value=10 ** 6),
                     st.binary(max_size=24))


class Recorder:
    """Wraps the os/builtins calls that touch a path; records them and denies the ``denied`` real paths."""

    FOLLOWING = ("open", "listdir", "scandir", "stat", "builtins.open", "access")
    NOT_FOLLOWING = ("lstat", "readlink")

    def __init__(self, denied: set[str]):
        self.denied = denied
        self.calls: list[tuple[str, str, bool]] = []

    def _wrap(self, name, func):
        def wrapper(*args, **kwargs):
            path = args[0] if args else kwargs.get("path", kwargs.get("file"))
            if isinstance(path, (str, bytes, os.PathLike)):
                text = os.fsdecode(os.fspath(path))
                follow = name in self.FOLLOWING and kwargs.get("follow_symlinks", True)
                if name == "open" and len(args) > 1 and args[1] & getattr(os, "O_NOFOLLOW", 0):
                    follow = False
                self.calls.append((name, text, follow))
                if name in ("open", "listdir", "scandir", "builtins.open") and os.path.abspath(text) in self.denied:
                    raise PermissionError(errno.EACCES, "Permission denied", text)
            return func(*args, **kwargs)
        return wrapper

    @contextlib.contextmanager
    def active(self):
        with contextlib.ExitStack() as stack:
            for name in ("open", "listdir", "scandir", "stat", "lstat", "readlink", "access"):
                stack.enter_context(mock.patch.object(os, name, self._wrap(name, getattr(os, name))))
            stack.enter_context(mock.patch.object(builtins, "open", self._wrap("builtins.open", builtins.open)))
            yield self

    def escaped(self, outside: str) -> list[tuple[str, str]]:
        """The recorded calls whose path, resolved as the kernel would, lies in ``outside``."""
        found = []
        for name, path, follow in self.calls:
            absolute = os.path.abspath(path)
            real = (os.path.realpath(absolute) if follow
                    else os.path.join(os.path.realpath(os.path.dirname(absolute)), os.path.basename(absolute)))
            if real == outside or real.startswith(outside + os.sep):
                found.append((name, path))
        return found


def _entries(root: str) -> list[str]:
    """Every file, link and directory below ``root`` (relative), sorted; the tool data left out."""
    found = []
    for directory, subdirs, files in os.walk(root):
        subdirs.sort()
        for name in sorted(subdirs) + sorted(files):
            relative = os.path.relpath(os.path.join(directory, name), root)
            if not relative.startswith(UNTOUCHED):
                found.append(relative)
    return found


def _clear(path: str) -> None:
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    elif os.path.lexists(path):
        os.unlink(path)


def corrupt(root: str, outside: str, mutations: list[tuple[str, int, bytes]]) -> set[str]:
    """Apply ``mutations`` to the tree at ``root``; return the real paths that are to answer permission denied."""
    denied: set[str] = set()
    for kind, pick, data in mutations:
        entries = _entries(root)
        if not entries:
            break
        relative = entries[pick % len(entries)]
        path = os.path.join(root, relative)
        is_file = os.path.isfile(path) and not os.path.islink(path)
        if kind == "remove":
            _clear(path)
        elif kind in ("truncate", "garbage"):
            if not is_file:
                continue
            with open(path, "wb") as handle:
                handle.write(data + MARKER.encode() + data if kind == "garbage" else b"")
        elif kind.startswith("escape"):
            target = outside if kind == "escape_directory" else os.path.join(outside, "secret")
            if kind in ("escape_climb", "escape_directory"):
                target = os.path.relpath(target, os.path.dirname(path))
            _clear(path)
            os.symlink(target, path)
        elif kind == "loop":
            _clear(path)
            os.symlink(os.path.basename(path), path)
        elif kind == "fifo":
            _clear(path)
            os.mkfifo(path)
        elif kind == "directory":
            _clear(path)
            os.mkdir(path)
        elif kind == "denied":
            if not os.path.islink(path):
                os.chmod(path, 0)  # enough when the tests do not run as root
            denied.add(os.path.realpath(path))
    return denied


def _messages(name: str, result: dict) -> list[str]:
    warnings = [warning["event"]["msg"] for warning in result.get("warnings", [])]
    if name != "fabric_facts":
        ports = result.get("ports") or []
        return result["errors"] + warnings + [error for port in ports for error in port["errors"]]
    facts = result["ansible_facts"]["gpufabric"]
    errors = [error for subset in facts.values() if isinstance(subset, dict) for error in subset["errors"]]
    ports = (facts.get("connectx") or {}).get("ports") or []
    return errors + warnings + [error for port in ports for error in port["errors"]]


def _assert_shape(name: str, result: dict) -> None:
    if name == "fabric_facts":
        facts = result["ansible_facts"]["gpufabric"]
        assert set(facts) == {"gather_subset", "gpu", "connectx", "imex", "peermem", "network"}
        for subset in ("gpu", "connectx", "imex", "peermem"):
            _assert_payload(f"{subset}_info", facts[subset])
        assert isinstance(facts["network"]["errors"], list)
        return
    assert set(result) - {"warnings"} == RESULT_KEYS[name] | COMMON, set(result)
    assert result["changed"] is False
    _assert_payload(name, result)


def _assert_payload(name: str, payload: dict) -> None:
    assert set(payload) >= RESULT_KEYS[name]
    assert all(isinstance(error, str) for error in payload["errors"])
    if name == "connectx_info":
        assert payload["count"] == len(payload["ports"])
        for port in payload["ports"]:
            assert set(port) == PORT_KEYS
            assert all(isinstance(error, str) for error in port["errors"])
            assert all(isinstance(value, int) and value >= 0 for value in port["counters"].values())
            assert all(isinstance(error, str) for error in port["counter_errors"])
            assert port["link_layer"] in (None, "InfiniBand", "Ethernet")
            assert port["rate_gbps"] is None or port["rate_gbps"] > 0
    if name == "gpu_info":
        assert payload["count"] == len(payload["gpus"])
        assert set(payload["platform"]) == {"chassis_serials", "slot_numbers", "tray_indices", "host_ids"}
    if name == "imex_info":
        control = payload["control"]
        assert set(control) == {"enabled", "socket_path", "ready", "status", "reason"}
        assert isinstance(control["enabled"], bool) and control["ready"] in (None, True, False)
        assert control["socket_path"] is None or isinstance(control["socket_path"], str)
        # ready is true only with READY, and a reason whenever it is not true
        assert (control["ready"] is True) == (control["status"] == "READY" and control["reason"] is None)
        assert control["ready"] is True or isinstance(control["reason"], str)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    return str(tmp_path_factory.mktemp("corrupted"))


@pytest.mark.parametrize("name", sorted(MODULES))
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(host=st.sampled_from(HOSTS), mutations=st.lists(mutation, min_size=1, max_size=6))
def test_corrupted_tree(name, host, mutations, host_trees, module_runner, workspace):
    base = tempfile.mkdtemp(dir=workspace)
    try:
        outside = os.path.join(base, "outside")
        os.makedirs(outside)
        with open(os.path.join(outside, "secret"), "w", encoding="utf-8") as handle:
            handle.write(SECRET + "\n")
        root = os.path.join(base, "jail", host)
        shutil.copytree(host_trees[host], root, symlinks=True)
        denied = corrupt(root, outside, mutations)
        recorder = Recorder(denied)
        with recorder.active():
            result = module_runner(MODULES[name], {"root": root, "command_timeout": 5})
        assert recorder.escaped(outside) == []
        assert SECRET not in str(result)
        if result.get("failed"):
            # Only a root whose sys/ is gone (or leads elsewhere) may fail the task, with the documented message.
            assert result["msg"] == f"root {root!r} has no sys/ directory; the probe cannot read a host there"
            assert not os.path.isdir(os.path.join(root, "sys")) or os.path.islink(os.path.join(root, "sys")) \
                or os.path.realpath(os.path.join(root, "sys")) in denied
            return
        _assert_shape(name, result)
        assert not [message for message in _messages(name, result) if MARKER in message]
    finally:
        for directory, subdirs, _files in os.walk(base):
            for entry in subdirs:
                path = os.path.join(directory, entry)
                if not os.path.islink(path):
                    os.chmod(path, 0o755)
        shutil.rmtree(base, ignore_errors=True)


def test_the_recorder_sees_an_escape(tmp_path):
    # The checker itself: a plain open through a link that leads out is reported.
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret").write_text(SECRET, encoding="utf-8")
    (tmp_path / "root").mkdir()
    os.symlink("../outside/secret", str(tmp_path / "root" / "link"))
    recorder = Recorder(set())
    with recorder.active(), open(str(tmp_path / "root" / "link"), encoding="utf-8") as handle:
        assert handle.read() == SECRET
    assert recorder.escaped(str(outside)) == [("builtins.open", str(tmp_path / "root" / "link"))]
