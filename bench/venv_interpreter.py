# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The controller's CPU for the same play under the interpreters of several virtual environments.

``make venv`` builds ``.venv`` with the interpreter ``tools/venv-python.sh`` chooses. This benchmark shows what that
choice costs: it writes one play of ``--tasks`` ``ansible.builtin.set_fact`` tasks on localhost, each templating a
filter chain (controller work only: no module runs, no fork per host), and runs it with the ``ansible-playbook`` of
every ``--venv`` in turn, ``--rounds`` times, alternating, so that a change in the machine's load falls on all of them.
Prints, per venv, the interpreter its ``python`` links to and the median and range of user CPU, system CPU and wall
seconds of ``ansible-playbook`` and its children.

Usage (from the repository root; build a second venv with the other interpreter and the same requirements first):
  .venv/bin/python bench/venv_interpreter.py --venv .venv --venv /tmp/venv-other [--rounds 4] [--tasks 150]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time


def write_play(directory: str, tasks: int) -> str:
    """A play of ``tasks`` set_fact tasks on localhost; return its path."""
    lines = ["- name: Controller work only", "  hosts: localhost", "  gather_facts: false", "  connection: local",
             "  tasks:"]
    for index in range(tasks):
        lines += [f"    - name: Template a filter chain {index}", "      ansible.builtin.set_fact:",
                  f"        value_{index}: \"{{{{ [1, 2, {index}] | map('string') | join(',') }}}}\""]
    path = os.path.join(directory, "play.yml")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")
    return path


def interpreter(venv: str) -> str:
    """``<version> (<the file the venv's python links to>)``."""
    python = os.path.join(venv, "bin", "python")
    version = subprocess.run([python, "-c", "import sys; print(sys.version.split()[0])"], capture_output=True,
                             text=True, check=True, timeout=60).stdout.strip()
    return f"{version} ({os.path.realpath(python)})"


def run_once(venv: str, play: str, directory: str) -> tuple[float, float, float]:
    """Run the play with the venv's ansible-playbook; return (user s, system s, wall s). Fails loudly."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    completed = subprocess.run([os.path.join(venv, "bin", "ansible-playbook"), "-i", "localhost,", play],
                               cwd=directory, capture_output=True, text=True, check=False, timeout=600,
                               env={**os.environ, "ANSIBLE_LOCALHOST_WARNING": "false"})
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if completed.returncode != 0:
        raise SystemExit(f"{venv}: ansible-playbook exited {completed.returncode}:\n{completed.stdout[-2000:]}"
                         f"{completed.stderr[-2000:]}")
    return after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime, wall


def summary(values: list[float]) -> str:
    return f"{statistics.median(values):6.2f} ({min(values):.2f}-{max(values):.2f})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--venv", action="append", required=True, help="a virtual environment with ansible-core")
    parser.add_argument("--rounds", type=int, default=4, help="runs per venv, alternating (default 4)")
    parser.add_argument("--tasks", type=int, default=150, help="set_fact tasks in the play (default 150)")
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.tasks < 1:
        parser.error("--rounds and --tasks must be at least 1")
    args.venv = [os.path.abspath(venv) for venv in args.venv]  # the runs start in a temporary directory
    for venv in args.venv:
        if args.venv.count(venv) > 1:
            parser.error(f"--venv {venv}: given more than once")
    for venv in args.venv:
        if not os.access(os.path.join(venv, "bin", "ansible-playbook"), os.X_OK):
            parser.error(f"--venv {venv}: no bin/ansible-playbook there")
    print(f"gpufabric.cluster venv interpreter benchmark: {os.cpu_count()} cpus, load average "
          f"{os.getloadavg()[0]:.2f} at start; {args.tasks} set_fact tasks on localhost, {args.rounds} rounds")
    results: dict[str, list[tuple[float, float, float]]] = {venv: [] for venv in args.venv}
    with tempfile.TemporaryDirectory(prefix="gpufabric-venv-bench-") as directory:
        play = write_play(directory, args.tasks)
        for _round in range(args.rounds):
            for venv in args.venv:
                results[venv].append(run_once(venv, play, directory))
    print(f"{'venv':<28} {'user s':>18} {'system s':>18} {'wall s':>18}  interpreter")
    for venv, runs in results.items():
        user, system, wall = ([run[index] for run in runs] for index in range(3))
        print(f"{venv:<28} {summary(user):>18} {summary(system):>18} {summary(wall):>18}  {interpreter(venv)}")
    print(f"median (range) over {args.rounds} runs each; load average {os.getloadavg()[0]:.2f} at the end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
