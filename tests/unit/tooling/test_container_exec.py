# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""tests/molecule/container_exec.py (TEST FIXTURE of the molecule scenarios): the container's init PID, cached.

A fake ``podman`` (a script that answers ``inspect`` with a PID) stands for the real one; the PIDs are of processes
of this machine, so the start-time check of the cache is the real one.
"""

from __future__ import annotations

import importlib.util
import os

import pytest

_PATH = os.path.join(os.path.dirname(__file__), "..", "..", "molecule", "container_exec.py")
_SPEC = importlib.util.spec_from_file_location("container_exec", _PATH)
container_exec = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(container_exec)


def fake_podman(tmp_path, pid: str, rc: int = 0):
    script = tmp_path / "podman"
    script.write_text(f"#!/bin/sh\necho '{pid}'\nexit {rc}\n", encoding="ascii")
    script.chmod(0o755)
    return str(script)


@pytest.mark.parametrize("cache", ["", "12", "12 ", "not a pid", "1 2 3\n", "\0\0"])
def test_an_empty_or_truncated_cache_is_looked_up_again(tmp_path, cache):
    (tmp_path / "gpufabric-podman-pid-tray").write_text(cache, encoding="latin-1")
    assert container_exec.init_pid("tray", fake_podman(tmp_path, str(os.getpid())), str(tmp_path)) == os.getpid()
    written = (tmp_path / "gpufabric-podman-pid-tray").read_text(encoding="ascii").split()
    assert written == [str(os.getpid()), container_exec.start_time(os.getpid())]


def test_a_cached_pid_whose_process_started_at_another_time_is_not_used(tmp_path):
    # the cached PID is this process's, with a start time that is not its own: a reused PID, another container
    (tmp_path / "gpufabric-podman-pid-tray").write_text(f"{os.getpid()} 1\n", encoding="ascii")
    assert container_exec.init_pid("tray", fake_podman(tmp_path, str(os.getppid())), str(tmp_path)) == os.getppid()


def test_the_cache_of_one_container_is_not_read_for_another(tmp_path):
    container_exec.init_pid("tray-1", fake_podman(tmp_path, str(os.getpid())), str(tmp_path))
    assert container_exec.init_pid("tray-2", fake_podman(tmp_path, str(os.getppid())), str(tmp_path)) == os.getppid()


@pytest.mark.parametrize("answer, rc", [("0", 0), ("", 1), ("abc", 0), ("-5", 0)])
def test_a_container_that_does_not_run_is_named(tmp_path, answer, rc):
    with pytest.raises(container_exec.ContainerNotRunning, match="container tray is not running"):
        container_exec.init_pid("tray", fake_podman(tmp_path, answer, rc), str(tmp_path))


def test_a_missing_podman_is_named(tmp_path):
    with pytest.raises(container_exec.ContainerNotRunning, match="no-such-podman not found"):
        container_exec.init_pid("tray", str(tmp_path / "no-such-podman"), str(tmp_path))
