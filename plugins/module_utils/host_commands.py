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
time is killed and becomes a :class:`CommandError` naming it.  What a tool prints
is bounded too: a tool that prints more than :data:`OUTPUT_LIMIT` bytes on its
standard output or :data:`ERROR_OUTPUT_LIMIT` on its standard error is killed as
soon as it does and becomes a :class:`CommandError` naming it and the limit.
"""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import time
import typing as t

from ansible_collections.gpufabric.cluster.plugins.module_utils.errors import CommandError, CommandTimeout
from ansible_collections.gpufabric.cluster.plugins.module_utils.host_files import jail

COMMAND_DIRS = ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin")
DEFAULT_TIMEOUT = 10
# The most a tool may print.  The largest answer a probe asks for is `nvidia-imex-ctl -N -j` of a large IMEX domain
# (a connection entry for every pair of nodes: about 4 MiB for 256 nodes); `ip -json addr show` of a host with a
# thousand interfaces is about 1 MiB.  Of the standard error only the last line is ever kept.
OUTPUT_LIMIT = 16 * 1024 * 1024
ERROR_OUTPUT_LIMIT = 1024 * 1024
_CHUNK = 64 * 1024

Runner = t.Callable[..., t.Tuple[int, str, str]]


def clean_environment(root: str = "/") -> dict[str, str]:
    """The whole environment a tool runs with: nothing inherited (no PATH, LD_*, proxies of the caller).

    ``PATH`` lists the command directories below ``root`` first, then the host's system directories, so that a
    recorded stand-in script finds its shell utilities; ``LC_ALL=C`` for output in the untranslated form.
    """
    dirs = [os.path.join(root, directory.lstrip("/")) for directory in COMMAND_DIRS] if root != "/" else []
    return {"PATH": ":".join([*dirs, *COMMAND_DIRS]), "LC_ALL": "C", "LANG": "C"}


def _kill(process: subprocess.Popen) -> None:
    """Kill a tool with its process group (it was started in a session of its own) and reap it."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except OSError:
        process.kill()
    process.wait()


def communicate(process: subprocess.Popen, name: str, data: bytes | None, timeout: float,
                limits: tuple[int, int] = (OUTPUT_LIMIT, ERROR_OUTPUT_LIMIT)) -> tuple[bytes, bytes]:
    """Feed ``data`` to a started tool and read its standard output and error, each up to its limit.

    Never holds more than ``limit + 64 KiB`` of either stream.  Kills the tool (with its process group) and
    raises :class:`CommandError` (``"<tool>: printed more than <n> bytes on its standard output (killed)"``) as
    soon as a stream passes its limit, :class:`CommandTimeout` when the tool has not finished within
    ``timeout`` seconds.
    """
    deadline = time.monotonic() + timeout
    streams = {process.stdout: ("standard output", limits[0]), process.stderr: ("standard error", limits[1])}
    received: dict[t.Any, list[bytes]] = {stream: [] for stream in streams}
    sizes = dict.fromkeys(streams, 0)
    pending = data or b""
    with selectors.DefaultSelector() as selector:
        for stream in streams:
            selector.register(stream, selectors.EVENT_READ)
        if process.stdin is not None:
            if pending:
                os.set_blocking(process.stdin.fileno(), False)
                selector.register(process.stdin, selectors.EVENT_WRITE)
            else:
                process.stdin.close()
        while selector.get_map():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                _kill(process)
                raise CommandTimeout(f"{name}: no answer within {timeout:g} s (killed)")
            for key, _events in selector.select(remaining):
                stream = key.fileobj
                if stream is process.stdin:
                    try:
                        written = os.write(stream.fileno(), pending[:_CHUNK])
                    except BrokenPipeError:
                        written = len(pending)  # the tool stopped reading: what it printed still counts
                    except BlockingIOError:
                        continue
                    pending = pending[written:]
                    if not pending:
                        selector.unregister(stream)
                        stream.close()
                    continue
                chunk = os.read(stream.fileno(), _CHUNK)
                if not chunk:
                    selector.unregister(stream)
                    continue
                received[stream].append(chunk)
                sizes[stream] += len(chunk)
                what, limit = streams[stream]
                if sizes[stream] > limit:
                    _kill(process)
                    raise CommandError(f"{name}: printed more than {limit} bytes on its {what} (killed)")
    try:
        process.wait(max(deadline - time.monotonic(), 0))
    except subprocess.TimeoutExpired:
        _kill(process)
        raise CommandTimeout(f"{name}: no answer within {timeout:g} s (killed)") from None
    return b"".join(received[process.stdout]), b"".join(received[process.stderr])


class ToolRunner:
    """A ``run_command``-compatible runner that gives every tool ``timeout`` seconds and a clean environment.

    ``environ_update`` of a call is added to :func:`clean_environment` (never to the caller's environment).
    A tool still running after ``timeout`` seconds is killed with its process group and raises
    :class:`CommandTimeout`, a :class:`CommandError` (``"<tool>: no answer within <n> s (killed)"``); a tool
    that prints more than :data:`OUTPUT_LIMIT` (standard output) or :data:`ERROR_OUTPUT_LIMIT` (standard error)
    bytes is killed as soon as it does and raises :class:`CommandError` naming it and the limit
    (:func:`communicate`).  Output is decoded as UTF-8, undecodable bytes replaced.
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
            # Not run_command: it has neither a timeout nor a limit on a tool's output, which this runner is for (see
            # the class); ansible-core 2.21's sanity asks for run_command in module_utils.
            # pylint: disable-next=ansible-bad-function
            process = subprocess.Popen(  # a tool found below the probe root, no shell
                args, stdin=subprocess.PIPE if data is not None else subprocess.DEVNULL, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, env=env, cwd="/", close_fds=True, start_new_session=True)
        except OSError as exc:
            raise CommandError(f"{name}: cannot be run ({exc.strerror or exc})") from None
        try:
            out, err = communicate(process, name, None if data is None else data.encode("utf-8"), self.timeout)
        finally:
            for stream in (process.stdin, process.stdout, process.stderr):
                if stream is not None:
                    stream.close()
        return (process.returncode, out.decode("utf-8", errors="replace"),
                err.decode("utf-8", errors="replace"))


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
