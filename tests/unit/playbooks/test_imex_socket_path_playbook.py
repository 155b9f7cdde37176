# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 39 item 9: the nvidia_imex role refuses a host-managed IMEX control socket another local user could take
(under /tmp) or one that climbs out of its directory ('..'), before it changes anything.

The role runs on localhost against a recorded GB200 tray (gpufabric_probe_root); its input check is the first task
that can fail on the socket path.
"""

from __future__ import annotations

import sys

import pytest
import yaml

from ansible_collections.gpufabric.cluster.tests.unit.playbooks.runner import ansible_playbook

REFUSED = "lies under /tmp, which every local user may write"


def run_nvidia_imex(workdir, root: str, socket: str) -> tuple[int, str]:
    role = {"name": "gpufabric.cluster.nvidia_imex"}
    play = [{"name": "Socket path", "hosts": "localhost", "gather_facts": True,
             "tasks": [{"name": "Run nvidia_imex", "ansible.builtin.include_role": role}]}]
    (workdir / "play.yml").write_text(yaml.safe_dump(play, sort_keys=False))
    completed = ansible_playbook(["-i", "localhost,", "-c", "local", "--check", "-e",
                                  f"ansible_python_interpreter={sys.executable}", "-e", f"gpufabric_probe_root={root}",
                                  "-e", "nvidia_imex_mode=dra_host_managed", "-e", f"nvidia_imex_socket_path={socket}",
                                  str(workdir / "play.yml")], workdir)
    return completed.returncode, " ".join((completed.stdout + completed.stderr).split())


@pytest.mark.parametrize(("socket", "message"), [
    ("/tmp/nvidia-imex/ctl.sock", f"host localhost: nvidia_imex_socket_path '/tmp/nvidia-imex/ctl.sock' {REFUSED}"),
    ("/etc/nvidia-imex/../../tmp/ctl.sock", "host localhost: nvidia_imex_socket_path must be the absolute path of the "
                                            "IMEX control socket in its normal form"),
])
def test_the_role_refuses_the_socket_path_before_any_change(tmp_path, host_trees, socket, message):
    returncode, output = run_nvidia_imex(tmp_path, host_trees["gb200_tray"], socket)
    assert returncode == 2, output[-2000:]
    assert "TASK [gpufabric.cluster.nvidia_imex : Check the settings, the paths and that nvidia_driver agrees" in output
    assert message in output, output[-2000:]


def test_the_default_socket_path_passes_the_check(tmp_path, host_trees):
    _returncode, output = run_nvidia_imex(tmp_path, host_trees["gb200_tray"], "/etc/nvidia-imex/imex_ctrl.sock")
    # the input check passed: the role went on to the next task
    assert "TASK [gpufabric.cluster.nvidia_imex : Check the control socket settings (dra_host_managed mode)]" in output
    assert REFUSED not in output and "in its normal form" not in output
