# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Process supervision: start a binary in its own process group, know whether it still runs, stop it;
the run directory's state file that lists them."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import signal
import subprocess
import time
from pathlib import Path

from cluster_harness.common import HarnessError


@dataclasses.dataclass
class Process:
    name: str
    pid: int
    log: Path
    binary: str

    # How our own child ended, once ``waitpid`` has reaped it ('' while it runs or is not ours).
    ended: str = dataclasses.field(default="", init=False, repr=False)

    def _reap(self) -> bool | None:
        """For a child of this process: True while it runs, False once it has ended; None otherwise.

        An unreaped child's pid cannot be recycled, so ``waitpid`` is the whole truth for it,
        whatever its command line reads (a script shows its interpreter there).
        """
        if self.ended:
            return False
        try:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
        except ChildProcessError:
            return None
        if pid == 0:
            return True
        if os.WIFSIGNALED(status):
            self.ended = f" (killed by signal {os.WTERMSIG(status)})"
        else:
            self.ended = f" (exit status {os.waitstatus_to_exitcode(status)})"
        return False

    def alive(self) -> bool:
        """Running and still the binary we started (a recycled pid is not ours)."""
        running_child = self._reap()
        if running_child is not None:
            return running_child
        try:
            cmdline = Path(f"/proc/{self.pid}/cmdline").read_bytes().split(b"\0")[0].decode()
            stat = Path(f"/proc/{self.pid}/stat").read_text()
        except OSError:
            return False
        # Right after Popen returns the command line can still read empty: the kernel wakes the
        # parent before it has written the new program's arguments.
        return cmdline in (self.binary, "") and stat.rsplit(")", 1)[1].split()[0] != "Z"

    def exit_status(self) -> str:
        """How it ended, when it is our child (``up`` in this process); '' otherwise."""
        self._reap()
        return self.ended

    def assert_running(self) -> None:
        if not self.alive():
            raise HarnessError(f"{self.name} exited{self.exit_status()}; the end of {self.log}:\n{tail(self.log)}")

    def stop(self, grace: float = 10.0) -> None:
        """SIGTERM to its process group, SIGKILL after ``grace`` seconds."""
        if not self.alive():
            return
        for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5.0)):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.pid, sig)
            deadline = time.monotonic() + wait
            while time.monotonic() < deadline:
                if not self.alive():
                    return
                time.sleep(0.1)


def tail(path: Path, lines: int = 25) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def start(name: str, binary: Path, args: list[str], run_dir: Path, env: dict[str, str] | None = None) -> Process:
    """Start ``binary`` in a process group of its own, logging to ``logs/<name>.log`` (``env``: its environment,
    else ours)."""
    log_path = run_dir / "logs" / f"{name}.log"
    with open(log_path, "ab") as log_file:
        process = subprocess.Popen(
            [str(binary), *args],
            stdin=subprocess.DEVNULL,
            stdout=log_file,
            stderr=subprocess.STDOUT,
            cwd=run_dir,
            env=env,
            start_new_session=True,
        )
    return Process(name, process.pid, log_path, str(binary))


def read_state(run_dir: Path) -> dict | None:
    try:
        return json.loads((run_dir / "state.json").read_text())
    except (OSError, ValueError):
        return None


def processes_of(state: dict) -> list[Process]:
    return [Process(p["name"], p["pid"], Path(p["log"]), p["binary"]) for p in state.get("processes", [])]
