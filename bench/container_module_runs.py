# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What one module task costs in a molecule test container, with the image's zipimport compile cache off and on.

The molecule tier's host-role scenarios run thousands of module tasks in containers of the test image
(tests/images/build-debian12-systemd.sh) over the TEST FIXTURE connection (tests/molecule/connection/podman.py):
each one a fresh Python in the container that imports its module and ``ansible.module_utils`` from the AnsiballZ
zip. The image's TEST FIXTURE ``tests/images/zipimport_compile_cache.py`` keeps the code compiled from those zips;
this benchmark starts one container of the image and runs the same playbook of module tasks with the cache turned
off (``GPUFABRIC_ZIPIMPORT_CACHE`` empty) and on, alternately, and prints wall and CPU per task of each and the
ratio. CPU is that of every process the run started (ansible-playbook, its forks, the nsenter'd module processes):
on a 2-core machine running two scenarios at a time, CPU is what the tier's time is made of.

The tasks: ``ansible.builtin.ping``, ``ansible.builtin.stat``, ``ansible.builtin.command``, ``ansible.builtin.apt``
(query only: ``update_cache: false`` of an installed package) and ``gpufabric.cluster.fabric_facts`` (on the
container's own root: no GPU, but every collector and its module_utils), ``--tasks`` of each per run.

Usage (from the repository root, after ``make test-venv collection molecule-image``):
  .venv/bin/python bench/container_module_runs.py [--tasks 10] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
IMAGE = os.environ.get("GPUFABRIC_IMAGE", "localhost/gpufabric/debian12-systemd:latest")
CONTAINER = "gpufabric-bench-module-runs"
MODULES = {
    "ping": {"ansible.builtin.ping": {}},
    "stat": {"ansible.builtin.stat": {"path": "/etc/hostname"}},
    "command": {"ansible.builtin.command": {"cmd": "true"}, "changed_when": False},
    "apt": {"ansible.builtin.apt": {"name": "procps", "state": "present"}},
    "fabric_facts": {"gpufabric.cluster.fabric_facts": {"root": "/"}},
}
SETTINGS = {"off": "", "on": "/var/cache/gpufabric-zipimport"}


def playbook(path: str, tasks: int) -> str:
    """A play of ``tasks`` tasks of every module, the cache setting from the variable ``cache``."""
    play = {"name": "Module tasks", "hosts": CONTAINER, "gather_facts": False,
            "environment": {"GPUFABRIC_ZIPIMPORT_CACHE": "{{ cache }}"},
            "tasks": [dict(task, name=f"{name} {number}") for number in range(tasks) for name, task in MODULES.items()]}
    with open(path, "w", encoding="utf-8") as handle:
        json.dump([play], handle)  # JSON is YAML
    return path


def environment() -> dict[str, str]:
    return dict(os.environ, NO_COLOR="1", ANSIBLE_PIPELINING="true", ANSIBLE_INJECT_FACT_VARS="false",
                ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, ".build", "collections"),
                ANSIBLE_COLLECTIONS_SCAN_SYS_PATH="true",
                ANSIBLE_CONNECTION_PLUGINS=os.path.join(ROOT, "tests", "molecule", "connection"),
                ANSIBLE_PYTHON_INTERPRETER="/usr/bin/python3", ANSIBLE_HOST_KEY_CHECKING="false")


def run(book: str, inventory: str, cache: str) -> tuple[float, float]:
    """Wall and CPU seconds of one ansible-playbook run of ``book`` with the cache setting ``cache``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    completed = subprocess.run([os.path.join(ROOT, ".venv", "bin", "ansible-playbook"), "-i", inventory, book,
                                "-e", json.dumps({"cache": cache})],
                               env=environment(), capture_output=True, text=True, check=False)
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if completed.returncode != 0:
        sys.exit(f"ansible-playbook failed ({completed.returncode}):\n{completed.stdout[-3000:]}{completed.stderr}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def podman(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["podman", *args], capture_output=True, text=True, check=check)


def start_container() -> None:
    podman("rm", "-f", CONTAINER, check=False)
    podman("run", "-d", "--name", CONTAINER, "--hostname", CONTAINER, "--privileged", "--systemd=always", IMAGE,
           "/sbin/init")
    for _attempt in range(60):
        state = podman("exec", CONTAINER, "systemctl", "is-system-running", check=False).stdout.strip()
        if state in ("running", "degraded"):
            return
        time.sleep(0.5)
    sys.exit(f"{CONTAINER}: systemd did not come up")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=10, help="tasks of each module per run (default 10)")
    parser.add_argument("--rounds", type=int, default=3, help="runs with the cache off and on, alternately (default 3)")
    arguments = parser.parse_args()
    if arguments.tasks < 1 or arguments.rounds < 1:
        parser.error("--tasks and --rounds must be 1 or more")
    if podman("image", "exists", IMAGE, check=False).returncode != 0:
        sys.exit(f"{IMAGE} is missing: make molecule-image builds it")
    work = tempfile.mkdtemp(prefix="gpufabric-bench-module-runs.")
    inventory = os.path.join(work, "inventory.ini")
    with open(inventory, "w", encoding="utf-8") as handle:
        handle.write(f"{CONTAINER} ansible_connection=podman\n")
    book = playbook(os.path.join(work, "playbook.yml"), arguments.tasks)
    count = arguments.tasks * len(MODULES)
    print(f"load average before: {os.getloadavg()}; {count} module tasks per run in one container of {IMAGE}",
          flush=True)
    start_container()
    try:
        run(book, inventory, SETTINGS["on"])  # fills the cache; also the container's first imports
        samples: dict[str, list[tuple[float, float]]] = {name: [] for name in SETTINGS}
        for _round in range(arguments.rounds):
            for name, cache in SETTINGS.items():
                samples[name].append(run(book, inventory, cache))
    finally:
        podman("rm", "-f", CONTAINER, check=False)
    print(f"load average after: {os.getloadavg()}")
    print(f"{'cache':>5} {'runs':>4} {'wall/task ms':>12} {'CPU/task ms':>11}")
    medians = {}
    for name, runs in samples.items():
        wall = statistics.median(sample[0] for sample in runs) / count * 1000
        cpu = statistics.median(sample[1] for sample in runs) / count * 1000
        medians[name] = (wall, cpu)
        print(f"{name:>5} {len(runs):>4} {wall:>12.1f} {cpu:>11.1f}")
    (wall_on, cpu_on), (wall_off, cpu_off) = medians["on"], medians["off"]
    print(f"on / off: wall {wall_on / wall_off:.2f}x, CPU {cpu_on / cpu_off:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
