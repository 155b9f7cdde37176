# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""TEST FIXTURE: run a command in a running molecule podman container without a ``podman exec``.

A ``podman exec`` costs 0.1 to 1 s of wall time on a 2-core machine (podman, conmon, runc exec, the exit file).
``nsenter --all`` into the namespaces of the container's init (mount, UTS, IPC, network, PID, cgroup) gives the
same root file system, network, hostname and processes in a few milliseconds; with the init's environment (its
``/proc/<pid>/environ``) and, as the scenarios' containers are privileged, the same capabilities. One difference
from ``podman exec``: the command stays in the caller's cgroup, not the container's.

The init's PID comes from ``podman inspect`` once per container start, remembered beside its start time
(``/proc/<pid>/stat``), so a restarted or recreated container is looked up again.

Used by the two ways the scenarios reach their containers: Ansible's TEST FIXTURE connection plugin
(``connection/podman.py``) and testinfra's backend (``testinfra_nsenter.py``). Not part of the collection.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile


class ContainerNotRunning(RuntimeError):
    """The container is not running, or podman cannot be found."""


def start_time(pid: int) -> str:
    """The start time of ``pid`` (field 22 of ``/proc/<pid>/stat``), or "" when it does not run."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
            return handle.read().rpartition(")")[2].split()[19]
    except (OSError, IndexError):
        return ""


def init_pid(container: str, podman: str = "podman", cache_dir: str | None = None,
             timeout: float | None = None) -> int:
    """The host PID of ``container``'s init: remembered while that process lives, else ``podman inspect``.

    The cache is a file per container in ``cache_dir`` (default: molecule's ephemeral directory of the scenario,
    else the temporary directory); ``timeout``: the seconds ``podman inspect`` may take (default: no limit).
    """
    cache_dir = cache_dir or os.environ.get("MOLECULE_EPHEMERAL_DIRECTORY") or tempfile.gettempdir()
    cache = os.path.join(cache_dir, f"gpufabric-podman-pid-{container}")
    try:
        with open(cache, encoding="ascii") as handle:
            pid, started = handle.read().split()
        if start_time(int(pid)) == started:
            return int(pid)
    except (OSError, ValueError):
        pass
    executable = shutil.which(podman)
    if executable is None:
        raise ContainerNotRunning(f"container {container}: {podman} not found in PATH")
    try:
        inspect = subprocess.run([executable, "inspect", "--format", "{{.State.Pid}}", container],
                                 capture_output=True, text=True, check=False, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise ContainerNotRunning(f"container {container}: podman inspect took over {timeout} s") from None
    pid = inspect.stdout.strip()
    if inspect.returncode != 0 or not pid.isdigit() or pid == "0":
        raise ContainerNotRunning(f"container {container} is not running: {inspect.stderr.strip() or pid}")
    started = start_time(int(pid))
    if started:
        with open(cache, "w", encoding="ascii") as handle:
            handle.write(f"{pid} {started}\n")
    return int(pid)


def init_environment(container: str, pid: int) -> dict[bytes, bytes]:
    """The environment of the container's init, which ``podman exec`` would give a command."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as handle:
            entries = [entry.partition(b"=") for entry in handle.read().split(b"\0") if b"=" in entry]
    except OSError as error:
        raise ContainerNotRunning(f"container {container}: {error}") from None
    return {key: value for key, _sep, value in entries}


def nsenter_argv(pid: int, argv: list) -> list:
    """``argv`` run in every namespace of the process ``pid``."""
    return ["nsenter", f"--target={pid}", "--all", "--", *argv]
