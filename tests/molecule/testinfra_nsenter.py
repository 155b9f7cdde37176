# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""TEST FIXTURE testinfra backend: ``podman://<container>`` checks without a ``podman exec`` per command.

testinfra's own podman backend runs ``podman exec <container> /bin/sh -c <command>`` for every check, and a check
such as ``host.file(path).content_string`` is one command: the verify steps of the host-role scenarios ran hundreds of
them at 0.1 to 1 s each. This backend runs the same ``/bin/sh -c <command>`` with ``nsenter --all`` into the
container's namespaces (``container_exec.py``). molecule/conftest.py puts it in place of testinfra's podman backend,
so the scenarios' ``connection: podman`` and ``podman://`` host names stay as they are. Not part of the collection.
"""

from __future__ import annotations

import subprocess
from typing import Any

import container_exec
from testinfra.backend import base, podman


class NsenterPodmanBackend(podman.PodmanBackend):
    """testinfra's podman backend with each command run through nsenter instead of ``podman exec``."""

    def __init__(self, name: str, *args: Any, **kwargs: Any):
        super().__init__(name, *args, **kwargs)
        if self.user is not None:
            raise ValueError(f"podman://{name}: a user is not supported by the TEST FIXTURE backend; "
                             "the scenarios check as the container's root")

    def run(self, command: str, *args: str, **kwargs: Any) -> base.CommandResult:
        cmd = self.get_command(command, *args)
        pid = container_exec.init_pid(self.name)
        argv = container_exec.nsenter_argv(pid, ["/bin/sh", "-c", cmd])
        completed = subprocess.run([self.encode(part) for part in argv], capture_output=True, check=False,
                                   env=container_exec.init_environment(self.name, pid), cwd="/")
        return self.result(completed.returncode, self.encode(cmd), completed.stdout, completed.stderr)
