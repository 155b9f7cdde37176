# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""tests/molecule/connection/podman.py (TEST FIXTURE connection of the molecule scenarios) across a container restart.

ansible.builtin.reboot in a container with a restart policy: the container's systemd reboots, podman starts the
container again with a new init, and the connection must run the next command in the new one (a container that does
not run yet is a connection failure, which the reboot action retries). A fake ``podman`` answers ``inspect`` with
the PID written in a file; the "inits" are ``sleep`` processes of this machine, so the start-time check is the real
one. The command runs through a stand-in of ``nsenter`` that prints the PID it would enter (no privileges needed).
"""

from __future__ import annotations

import os
import subprocess

import pytest
from ansible.errors import AnsibleConnectionFailure
from ansible.playbook.play_context import PlayContext
from ansible.plugins.loader import connection_loader

CONNECTIONS = os.path.join(os.path.dirname(__file__), "..", "..", "molecule", "connection")


@pytest.fixture
def tray(tmp_path, monkeypatch):
    """A connection to container "tray", whose podman answers the PID in tmp_path/pid; and a way to start inits."""
    monkeypatch.setenv("MOLECULE_EPHEMERAL_DIRECTORY", str(tmp_path))
    podman = tmp_path / "podman"
    podman.write_text(f"#!/bin/sh\n[ -s {tmp_path}/delay ] && sleep \"$(cat {tmp_path}/delay)\"\ncat {tmp_path}/pid\n",
                      encoding="ascii")
    podman.chmod(0o755)
    connection_loader.add_directory(os.path.abspath(CONNECTIONS))
    connection = connection_loader.get("podman", PlayContext())
    assert connection._original_path == os.path.abspath(os.path.join(CONNECTIONS, "podman.py"))
    module = __import__(type(connection).__module__, fromlist=["container_exec"])
    entered_argv = []
    boot_states = []  # what `systemctl is-system-running` says in turn after a restart (then "running")

    def nsenter_argv(pid, argv):
        entered_argv.append(argv)
        if argv[0] == "systemctl":
            return ["echo", boot_states.pop(0) if boot_states else "running"]
        return ["echo", str(pid)]
    monkeypatch.setattr(module.container_exec, "nsenter_argv", nsenter_argv)
    connection.entered_argv = entered_argv
    connection.boot_states = boot_states
    connection.set_options(direct={"remote_addr": "tray", "podman_executable": str(podman)})
    inits = []

    def start_init() -> int:
        init = subprocess.Popen(["sleep", "60"])
        inits.append(init)
        (tmp_path / "pid").write_text(f"{init.pid}\n", encoding="ascii")
        return init.pid

    def stop_init(pid: int) -> None:
        """The container's init ends (its systemd rebooted): gone, not a zombie."""
        init = next(init for init in inits if init.pid == pid)
        init.kill()
        init.wait()

    yield connection, start_init, stop_init, tmp_path
    for init in inits:
        init.kill()
        init.wait()


def entered(connection) -> int:
    rc, stdout, _stderr = connection.exec_command("true")
    assert rc == 0
    return int(stdout)


def test_a_restarted_container_is_entered_through_its_new_init(tray):
    connection, start_init, stop_init, _tmp = tray
    first = start_init()
    assert entered(connection) == first
    stop_init(first)
    second = start_init()
    connection.entered_argv.clear()
    assert entered(connection) == second
    assert entered(connection) == second
    # the first command in the new init waits for its boot, once
    assert [argv[:2] for argv in connection.entered_argv] == [["systemctl", "is-system-running"], ["true"], ["true"]]


def test_a_container_not_running_again_yet_is_a_connection_failure(tray):
    connection, start_init, stop_init, tmp_path = tray
    first = start_init()
    assert entered(connection) == first
    stop_init(first)
    (tmp_path / "pid").write_text("0\n", encoding="ascii")
    with pytest.raises(AnsibleConnectionFailure, match="container tray is not running"):
        connection.exec_command("true")
    second = start_init()
    assert entered(connection) == second


def test_the_reboot_actions_connect_timeout_bounds_the_look_up(tray):
    connection, start_init, _stop_init, tmp_path = tray
    start_init()
    (tmp_path / "delay").write_text("5", encoding="ascii")
    connection.set_option("timeout", 1)
    with pytest.raises(AnsibleConnectionFailure, match="container tray: podman inspect took over 1 s"):
        connection.exec_command("true")


def test_a_restarted_container_answers_once_its_systemd_has_booted(tray):
    """systemctl cannot reach systemd early in the boot (no answer), then says starting: asked again until booted."""
    connection, start_init, stop_init, _tmp = tray
    first = start_init()
    assert entered(connection) == first
    stop_init(first)
    second = start_init()
    connection.boot_states[:] = ["", "initializing", "starting", "degraded"]
    connection.entered_argv.clear()
    assert entered(connection) == second
    assert [argv[0] for argv in connection.entered_argv] == ["systemctl"] * 4 + ["true"]


def test_a_container_that_does_not_finish_booting_is_a_connection_failure(tray):
    connection, start_init, stop_init, _tmp = tray
    first = start_init()
    assert entered(connection) == first
    stop_init(first)
    start_init()
    connection.boot_states[:] = ["starting"] * 100
    connection.set_option("timeout", 1)
    with pytest.raises(AnsibleConnectionFailure, match="container tray: its systemd did not finish booting in 1 s"):
        connection.exec_command("true")
