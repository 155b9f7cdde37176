# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Time one ``fabric_facts`` call on a recorded host tree and print the medians.

Two figures per host:
- ``module``: the module run as Ansible runs it on a host (a fresh Python process given its
  arguments file), imports and JSON output included, transport excluded; NVML is whatever this
  machine has (none here: the probe warns and reads PCI).
- ``collect``: the collectors alone, in process, with the host's recorded NVML answers.

Usage (from the repository root, after ``make test-venv collection``):
  PYTHONPATH=.build/collections .venv/bin/python bench/fabric_facts_time.py [--runs 30] [--host hgx_h100 ...]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
from fixtures import build_trees
from fixtures.commands import run_command


def time_module(root: str, runs: int) -> list[float]:
    """Wall time of the module as its own process, ``runs`` times."""
    from ansible_collections.gpufabric.cluster.plugins.modules import fabric_facts

    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump({"ANSIBLE_MODULE_ARGS": {"root": root}}, handle)
        args_file = handle.name
    samples = []
    try:
        for _run in range(runs):
            start = time.perf_counter()
            completed = subprocess.run([sys.executable, fabric_facts.__file__, args_file], capture_output=True,
                                       text=True, check=False)
            samples.append(time.perf_counter() - start)
            if completed.returncode != 0 or "ansible_facts" not in completed.stdout:
                raise SystemExit(f"fabric_facts failed: {completed.stdout}{completed.stderr}")
    finally:
        os.unlink(args_file)
    return samples


def time_collect(root: str, recording: dict, runs: int) -> list[float]:
    """Wall time of the collectors in process with recorded NVML answers."""
    from fixtures.recorded_nvml import recorded_nvml

    from ansible_collections.gpufabric.cluster.plugins.module_utils.fabric import collect_fabric, select_subsets

    subsets = select_subsets(["all"])
    samples = []
    with recorded_nvml(recording):
        for _run in range(runs):
            start = time.perf_counter()
            collect_fabric(root, run_command, subsets)
            samples.append(time.perf_counter() - start)
    return samples


def main() -> None:
    """Build the trees, time each host, print a table."""
    from fixtures.recorded_nvml import load_recording

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--host", action="append")
    args = parser.parse_args()
    hosts = args.host or ["hgx_h100", "gb200_tray", "no_nvidia", "broken_node"]
    print(f"fabric_facts, median of {args.runs} runs (min-max), python {sys.version.split()[0]}, {os.cpu_count()} cpus")
    print(f"{'host':<12} {'module process (ms)':>26} {'collectors in process (ms)':>30}")
    with tempfile.TemporaryDirectory() as dest:
        for host in hosts:
            root = build_trees.build_tree(host, dest)
            recording = load_recording(root)
            module = [sample * 1000 for sample in time_module(root, args.runs)]
            collect = [sample * 1000 for sample in time_collect(root, recording, args.runs)]
            print(f"{host:<12} {statistics.median(module):>12.1f} ({min(module):.1f}-{max(module):.1f})"
                  f" {statistics.median(collect):>16.2f} ({min(collect):.2f}-{max(collect):.2f})")


if __name__ == "__main__":
    main()
