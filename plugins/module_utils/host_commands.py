# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Find and run read-only host tools (``nvidia-imex-ctl``, ``ofed_info``, ``systemctl``, ``ip``) below a root.

A probe never runs a tool from outside ``root``: on a live host ``root`` is
``/`` and the tools are the host's own; with a fixture tree the tools are the
recorded stand-ins inside it (a tool whose path leads outside the tree through a
symlink is not run).  Commands are run through a ``runner`` callable with the
signature of ``AnsibleModule.run_command``; the modules hand the collectors a
:class:`ToolRunner`, which runs the tool with a clean environment and a timeout
(``AnsibleModule.run_command`` has no timeout).  A tool that does not finish in
time is killed and becomes a :class:`CommandError` naming it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import typing as t

from ansible_collections.gpufabric.cluster.plugins.module_utils.errors import CommandError, CommandTimeout
from ansible_collections.gpufabric.cluster.plugins.module_utils.host_files import jail

COMMAND_DIRS = ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin")
DEFAULT_TIMEOUT = 10

Runner = t.Callable[..., t.Tuple[int, str, str]]


def clean_environment(root: str = "/") -> dict[str, str]:
    """The whole environment a tool runs with: nothing inherited (no PATH, LD_*, proxies of the caller).

    ``PATH`` lists the command directories below ``root`` first, then the host's system directories, so that a
    recorded stand-in script finds its shell utilities; ``LC_ALL=C`` for output in the untranslated form.
    """
    dirs = [os.path.join(root, directory.lstrip("/")) for directory in COMMAND_DIRS] if root != "/" else []
    return {"PATH": ":".join([*dirs, *COMMAND_DIRS]), "LC_ALL": "C", "LANG": "C"}


class ToolRunner:
    """A ``run_command``-compatible runner that gives every tool ``timeout`` seconds and a clean environment.

    ``environ_update`` of a call is added to :func:`clean_environment` (never to the caller's environment).
    A tool still running after ``timeout`` seconds is killed with its process group and raises
    :class:`CommandTimeout`, a :class:`CommandError` (``"<tool>: no answer within <n> s (killed)"``).
    """

    def __init__(self, timeout: int | float = DEFAULT_TIMEOUT, root: str = "/"):
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
            raise CommandError(f"command_timeout must be a number of seconds greater than 0, got {timeout!r}")
        self.timeout = timeout
        self.root = root

    def __call__(self, args: list[str], check_rc: bool = False, environ_update: dict | None = None,
                 data: str | None = None, **_ignored: t.Any) -> tuple[int, str, str]:
        del check_rc  # the collectors judge the exit status themselves
        env = clean_environment(self.root)
        env.update(environ_update or {})
        name = os.path.basename(args[0])
        try:
            process = subprocess.Popen(  # a tool found below the probe root, no shell
                args, stdin=subprocess.PIPE if data is not None else subprocess.DEVNULL, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, env=env, cwd="/", close_fds=True, start_new_session=True,
                text=True, errors="replace")
        except OSError as exc:
            raise CommandError(f"{name}: cannot be run ({exc.strerror or exc})") from None
        try:
            out, err = process.communicate(input=data, timeout=self.timeout)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except OSError:
                process.kill()
            process.communicate()
            raise CommandTimeout(f"{name}: no answer within {self.timeout:g} s (killed)") from None
        return process.returncode, out, err


def find_command(root: str, name: str) -> str | None:
    """Return the real path of an executable ``name`` in the standard directories below ``root``.

    The path is resolved inside the root (:func:`host_files.jail`): a tool that leads outside it is not found.
    """
    for directory in COMMAND_DIRS:
        try:
            candidate = jail(root, f"{directory}/{name}")
        except OSError:
            continue
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def run_found(runner: Runner, root: str, argv: list[str], data: str | None = None) -> tuple[int, str, str]:
    """Run a tool found below ``root``; return ``(rc, stdout, stderr)``.

    Raises :class:`CommandError` when the tool is absent, cannot be run or does not finish in time.
    """
    path = find_command(root, argv[0])
    if path is None:
        raise CommandError(f"{argv[0]} not found")
    kwargs: dict[str, t.Any] = {"check_rc": False, "environ_update": {"LC_ALL": "C"}}
    if data is not None:
        kwargs["data"] = data
    return runner([path, *argv[1:]], **kwargs)


def run_tool(runner: Runner, root: str, argv: list[str]) -> str:
    """Run a read-only tool found below ``root`` and return its stdout.

    Raises :class:`CommandError` when the tool is absent, exits non-zero or does not finish in time.
    """
    rc, out, err = run_found(runner, root, argv)
    if rc != 0:
        detail = (err or out or "").strip().splitlines()
        raise CommandError(f"{' '.join(argv)} exited {rc}: {detail[-1][:200] if detail else 'no output'}")
    return out
