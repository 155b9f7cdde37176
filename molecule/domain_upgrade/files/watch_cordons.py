# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""TEST FIXTURE of molecule/domain_upgrade: the cordon log, written from the API server, not by the role.

``start`` runs ``kubectl get nodes --watch -o json`` in a background process (started again when the API server ends
the watch) and appends one line each time a node's ``spec.unschedulable`` changes, and one for every node it first
sees::

    2026-11-28T21:49:58.123456Z gb200-tray-01 cordoned
    2026-11-28T21:50:04.654321Z gb200-tray-01 uncordoned

(UTC, the time the event arrived). ``start`` returns once the first listing is in the log; ``stop`` ends the process
of a pid file (the scenario's destroy). files/check_timeline.py reads the log.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime


def _stamp() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def objects(stream):
    """The JSON objects of a stream of concatenated JSON documents (kubectl --watch -o json)."""
    decoder = json.JSONDecoder()
    buffer = ""
    for chunk in iter(lambda: stream.read1(65536).decode("utf-8", errors="replace"), ""):
        buffer += chunk
        while True:
            buffer = buffer.lstrip()
            try:
                found, end = decoder.raw_decode(buffer)
            except ValueError:
                break
            buffer = buffer[end:]
            yield found


def watch(kubectl: str, kubeconfig: str, log: str) -> None:
    """Append the nodes' cordon changes to ``log`` until SIGTERM."""
    state: dict[str, bool] = {}
    child: list[subprocess.Popen] = []

    def terminate(_signum, _frame):
        for process in child:
            process.terminate()
        sys.exit(0)
    signal.signal(signal.SIGTERM, terminate)
    while True:
        process = subprocess.Popen([kubectl, "--kubeconfig", kubeconfig, "get", "nodes", "--watch", "-o", "json"],
                                   stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        child[:] = [process]
        for node in objects(process.stdout):
            name = node.get("metadata", {}).get("name")
            cordoned = bool(node.get("spec", {}).get("unschedulable", False))
            if name and state.get(name) is not cordoned:
                state[name] = cordoned
                with open(log, "a", encoding="ascii") as handle:
                    handle.write(f"{_stamp()} {name} {'cordoned' if cordoned else 'uncordoned'}\n")
        process.wait()
        time.sleep(0.5)


def start(args: argparse.Namespace) -> int:
    """Fork the watcher, write its pid file, return once the log has the first listing (or fail after 30 s)."""
    open(args.log, "a", encoding="ascii").close()
    initial = os.path.getsize(args.log)
    pid = os.fork()
    if pid == 0:
        os.setsid()
        if os.fork() != 0:
            os._exit(0)
        devnull = os.open(os.devnull, os.O_RDWR)
        for descriptor in (0, 1, 2):
            os.dup2(devnull, descriptor)
        with open(args.pid_file, "w", encoding="ascii") as handle:
            handle.write(f"{os.getpid()}\n")
        watch(args.kubectl, args.kubeconfig, args.log)
        os._exit(0)
    os.waitpid(pid, 0)
    deadline = time.monotonic() + 30
    while os.path.getsize(args.log) == initial:
        if time.monotonic() > deadline:
            print(f"watch_cordons: no node listed in {args.log} within 30 s ({args.kubeconfig})", file=sys.stderr)
            return 1
        time.sleep(0.1)
    return 0


def stop(args: argparse.Namespace) -> int:
    """End the watcher of the pid file, if it still runs (and is this script); no pid file: nothing to do."""
    try:
        with open(args.pid_file, encoding="ascii") as handle:
            pid = int(handle.read().strip())
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            ours = os.path.basename(__file__).encode() in handle.read()
    except (OSError, ValueError):
        ours = False
    if ours:
        os.kill(pid, signal.SIGTERM)
    if os.path.exists(args.pid_file):
        os.unlink(args.pid_file)
    return 0


def main(argv: list[str] | None = None) -> int:
    """Command line: start or stop."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    commands = parser.add_subparsers(dest="command", required=True)
    starting = commands.add_parser("start")
    starting.add_argument("--kubectl", required=True)
    starting.add_argument("--kubeconfig", required=True)
    starting.add_argument("--log", required=True)
    starting.add_argument("--pid-file", required=True)
    stopping = commands.add_parser("stop")
    stopping.add_argument("--pid-file", required=True)
    args = parser.parse_args(argv)
    return start(args) if args.command == "start" else stop(args)


if __name__ == "__main__":
    sys.exit(main())
