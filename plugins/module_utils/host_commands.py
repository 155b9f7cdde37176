# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Find and run read-only host tools (``nvidia-imex-ctl``, ``ofed_info``, ``systemctl``) below a root.

A probe never runs a tool from outside ``root``: on a live host ``root`` is
``/`` and the tools are the host's own; with a fixture tree the tools are the
recorded stand-ins inside it.  Commands are run through a ``runner`` callable
with the signature of ``AnsibleModule.run_command`` so that module utilities
stay free of ``AnsibleModule``.
"""

from __future__ import annotations

import os
import typing as t

from ansible_collections.gpufabric.cluster.plugins.module_utils.errors import CommandError
from ansible_collections.gpufabric.cluster.plugins.module_utils.host_files import host_path

COMMAND_DIRS = ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin")

Runner = t.Callable[..., t.Tuple[int, str, str]]


def find_command(root: str, name: str) -> str | None:
    """Return the path of an executable ``name`` in the standard directories below ``root``."""
    for directory in COMMAND_DIRS:
        candidate = host_path(root, os.path.join(directory, name))
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def run_tool(runner: Runner, root: str, argv: list[str]) -> str:
    """Run a read-only tool found below ``root`` and return its stdout.

    Raises :class:`CommandError` when the tool is absent or exits non-zero.
    """
    path = find_command(root, argv[0])
    if path is None:
        raise CommandError(f"{argv[0]} not found")
    rc, out, err = runner([path, *argv[1:]], check_rc=False, environ_update={"LC_ALL": "C"})
    if rc != 0:
        detail = (err or out or "").strip().splitlines()
        raise CommandError(f"{' '.join(argv)} exited {rc}: {detail[-1] if detail else 'no output'}")
    return out
