# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""TEST FIXTURE connection: run tasks in the molecule containers, modules pipelined, without a podman per task.

The molecule podman driver writes ``ansible_connection: podman`` into every scenario's inventory, which resolves to
containers.podman's plugin. That plugin declares ``has_pipelining = False`` (its ``podman exec`` has no ``-i``, so a
module on stdin never arrives) and runs ``podman mount`` before every task, so one task on one host costs five podman
processes: mount, ``echo ~``, mkdir of a temp directory, chmod, and the module. A ``podman exec`` costs 0.2 to 1 s of
wall time on a 2-core machine (conmon, runc exec, the exit file), so the molecule tier spent most of its time there.

This plugin, found first because the scenarios put ``tests/molecule/connection`` on ANSIBLE_CONNECTION_PLUGINS, runs
each command once, with ``nsenter --all`` into the namespaces of the container's init (``../container_exec.py``
explains what that gives and how the init is found). Modules are pipelined into the container's Python, as over SSH
with pipelining; files go through ``cat`` in the container.

Not part of the collection: the roles and playbooks run the same tasks over it as over SSH.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import time

from ansible.errors import AnsibleConnectionFailure, AnsibleError
from ansible.module_utils.common.text.converters import to_bytes, to_text
from ansible.plugins.connection import ConnectionBase, ensure_connect
from ansible.utils.display import Display

# the helper shared with the testinfra backend, beside this plugin's directory (tests/molecule)
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import container_exec

DOCUMENTATION = r"""
name: podman
short_description: TEST FIXTURE - run tasks in the molecule podman containers with pipelining
description:
  - Test fixture of the molecule scenarios, not part of the collection; shadows containers.podman.podman, whose
    name the molecule podman driver writes into the inventory.
  - One C(nsenter --all) into the namespaces of the container's init per command, modules pipelined; files go
    through C(cat) in the container; the init's PID from C(podman inspect), once per container start.
  - A container that restarted (a reboot of its systemd under a restart policy, M(ansible.builtin.reboot)) is
    found again by the next command (the init's start time is checked before each command), once its systemd has
    booted (C(systemctl is-system-running --wait)), as a host's sshd answers after its boot; a container that does
    not run (yet) is a connection failure, which M(ansible.builtin.reboot) retries.
  - Runs as the container's root; C(ansible_user) is not supported.
author: gpufabric.cluster contributors (@gpufabric)
options:
  remote_addr:
    description: The name or ID of the container.
    default: inventory_hostname
    vars:
      - name: inventory_hostname
      - name: ansible_host
      - name: ansible_podman_host
  podman_executable:
    description: The podman command (for C(podman inspect)).
    default: podman
    vars:
      - name: ansible_podman_executable
    env:
      - name: ANSIBLE_PODMAN_EXECUTABLE
  timeout:
    description:
      - Seconds the look-up of the container's init (C(podman inspect)), and the wait for a restarted container's
        boot, may take; M(ansible.builtin.reboot) sets it from its O(ansible.builtin.reboot#module:connect_timeout).
    type: int
    default: 30
    vars:
      - name: ansible_podman_timeout
  pipelining:
    description: Pipe modules into the container's Python instead of copying them there first.
    default: true
    type: boolean
    env:
      - name: ANSIBLE_PIPELINING
    vars:
      - name: ansible_pipelining
"""

display = Display()


class Connection(ConnectionBase):
    """Commands in the namespaces of a running container, modules pipelined."""

    transport = "podman"
    has_pipelining = True

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._init_pid = None
        self._init_started = ""
        self._environment = None

    def _container(self) -> str:
        return to_text(self.get_option("remote_addr"))

    def _connect(self):
        if not self._connected:
            previous = self._init_pid
            try:
                self._init_pid = container_exec.init_pid(self._container(), self.get_option("podman_executable"),
                                                         timeout=self.get_option("timeout"))
                self._init_started = container_exec.start_time(self._init_pid)
                self._environment = container_exec.init_environment(self._container(), self._init_pid)
            except container_exec.ContainerNotRunning as error:
                raise AnsibleConnectionFailure(str(error)) from None
            if previous is not None and previous != self._init_pid:
                self._wait_for_boot()
            self._connected = True
        return self

    def _wait_for_boot(self) -> None:
        """A restarted container answers once its systemd has booted, as a host's sshd answers after its boot.

        Without this the first command after a reboot would run while the container's units (the stand-in driver's
        load of molecule/domain_upgrade) have not run yet, which no SSH connection to a real host would see. Early in
        the boot ``systemctl`` cannot reach systemd yet (no output) or says ``initializing``/``starting``: asked
        again every 0.2 s until it says anything else, for at most the ``timeout`` option's seconds.
        """
        timeout = self.get_option("timeout")
        deadline = time.monotonic() + timeout
        while True:
            command = container_exec.nsenter_argv(self._init_pid, ["systemctl", "is-system-running", "--wait"])
            display.vvv(f"EXEC {command}", host=self._container())
            try:
                completed = subprocess.run(command, capture_output=True, check=False, env=self._environment, cwd="/",
                                           timeout=max(deadline - time.monotonic(), 0.1))
            except subprocess.TimeoutExpired:
                completed = None
            state = completed.stdout.decode(errors="replace").strip() if completed else ""
            if state not in ("", "initializing", "starting"):
                return
            if time.monotonic() >= deadline:
                raise AnsibleConnectionFailure(f"container {self._container()}: its systemd did not finish booting "
                                               f"in {timeout} s (ansible_podman_timeout)")
            time.sleep(0.2)

    def _run(self, argv: list, in_data: bytes | None) -> tuple[int, bytes, bytes]:
        """Run ``argv`` in the container, ``in_data`` on its standard input; a restarted container's new init."""
        if container_exec.start_time(self._init_pid) != self._init_started:
            display.vvv("the container's init is not the one connected to: looking it up again",
                        host=self._container())
            self.reset()
            self._connect()
        command = container_exec.nsenter_argv(self._init_pid, argv)
        display.vvv(f"EXEC {command}", host=self._container())
        completed = subprocess.run([to_bytes(part, errors="surrogate_or_strict") for part in command],
                                   input=in_data if in_data is not None else b"", capture_output=True, check=False,
                                   env=self._environment, cwd="/")
        return completed.returncode, completed.stdout, completed.stderr

    @ensure_connect
    def exec_command(self, cmd, in_data=None, sudoable=False):
        super().exec_command(cmd, in_data=in_data, sudoable=sudoable)
        return self._run(shlex.split(to_text(cmd, errors="surrogate_or_strict")), in_data)

    @ensure_connect
    def put_file(self, in_path, out_path):
        super().put_file(in_path, out_path)
        display.vvv(f"PUT {in_path} TO {out_path}", host=self._container())
        with open(to_bytes(in_path, errors="surrogate_or_strict"), "rb") as handle:
            data = handle.read()
        rc, _stdout, stderr = self._run(["/bin/sh", "-c", 'cat > "$1"', "sh", out_path], data)
        if rc != 0:
            raise AnsibleError(f"failed to put {in_path} to {out_path} in container {self._container()}: "
                               f"{to_text(stderr).strip()}")

    @ensure_connect
    def fetch_file(self, in_path, out_path):
        super().fetch_file(in_path, out_path)
        display.vvv(f"FETCH {in_path} TO {out_path}", host=self._container())
        rc, stdout, stderr = self._run(["cat", in_path], None)
        if rc != 0:
            raise AnsibleError(f"failed to fetch {in_path} from container {self._container()}: "
                               f"{to_text(stderr).strip()}")
        with open(to_bytes(out_path, errors="surrogate_or_strict"), "wb") as handle:
            handle.write(stdout)

    def reset(self):
        """Forget the container's init: the next command looks it up again (after a reboot, a restart)."""
        self._connected = False

    def close(self):
        self._connected = False
