# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Running the cluster roles from ansible-playbook against the harness, as a user runs them.

The GPU hosts' ``ansible_facts['gpufabric']`` come from the recorded host trees (``fixtures.build_trees``,
tests/fixtures), gathered by the real collectors with the trees' recorded NVML answers
(``fixtures.recorded_nvml.recorded_facts``), and reach the play through a jsonfile fact cache, as after a
preflight run with fact caching.
The inventory hosts are named after the kwok nodes; nothing connects to them.

Helm hooks (the charts' pre-install/pre-upgrade Jobs) run real pods that kwok keeps ``Running``;
:class:`HookCompleter` annotates those pods so that kwok finishes them, as their container would
(``harness.complete_helm_hook_pods``; molecule scenarios run the same as the harness's helm-hook-completer).
"""

from __future__ import annotations

import copy
import dataclasses
import json
import os
import re
import subprocess
import sys
import threading
from pathlib import Path

import cluster_harness as harness
import yaml
from fixtures import build_trees
from fixtures.commands import run_command

ROOT = harness.ROOT
SHARED = ROOT.parent / "shared"
CHARTS = SHARED / "charts"


def collections_path() -> str:
    """Our ANSIBLE_COLLECTIONS_PATH with kubernetes.core (``make cluster`` puts it there)."""
    return os.environ.get("ANSIBLE_COLLECTIONS_PATH") or str(ROOT / ".build" / "collections")


def recorded_facts(tree: str, directory: Path) -> dict:
    """``ansible_facts['gpufabric']`` of a recorded host tree built into ``directory``, from the real collectors."""
    from fixtures.recorded_nvml import recorded_facts as gather

    return gather(build_trees.build_tree(tree, str(directory)), run_command)


def masked_imex(facts: dict) -> dict:
    """The facts after ``gpufabric.cluster.nvidia_imex`` in ``dra`` mode: the host service masked."""
    changed = copy.deepcopy(facts)
    changed["imex"]["service"].update(enabled=False, active=False, masked=True, unit_file_state="masked",
                                      active_state="inactive")
    return changed


def dra_driver_vars(**extra) -> dict:
    """The dra_driver role's variables of the cluster tests: the 0.4.1 chart from ../shared, no chart repository,
    ComputeDomains only (GPU resources off by intent: the GPU Operator's device plugin serves them), and ``extra``."""
    return {
        "dra_driver_hosts": "{{ groups['gpu_nodes'] }}",
        "dra_driver_chart_path": str(CHARTS / "dra-driver-nvidia-gpu-0.4.1"),
        "dra_driver_chart_repo_url": "http://127.0.0.1:9/unreachable",
        "dra_driver_gpus": "disabled",
        "dra_driver_wait_timeout": "5m",
        **extra,
    }


@dataclasses.dataclass
class Result:
    """One ansible-playbook run."""

    rc: int
    output: str
    recap: dict

    @property
    def changed(self) -> int:
        return self.recap.get("changed", -1)


class Runner:
    """ansible-playbook against the harness with an inventory of GPU hosts whose facts are cached."""

    def __init__(self, cluster, directory: Path, facts: dict[str, dict], host_vars: dict | None = None):
        self.cluster = cluster
        self.directory = directory
        self.cache = directory / "facts"
        self.cache.mkdir(parents=True, exist_ok=True)
        # Written by Ansible's own jsonfile cache plugin, in its own format.
        from ansible.plugins.loader import cache_loader

        cache = cache_loader.get("jsonfile", _uri=str(self.cache), _timeout=0)
        for host, item in facts.items():
            cache.set(host, {"gpufabric": item})
        inventory = {"all": {"hosts": {"localhost": {"ansible_connection": "local",
                                                     "ansible_python_interpreter": sys.executable}},
                             "children": {"gpu_nodes": {"hosts": {host: (host_vars or {}).get(host) or {}
                                                                  for host in facts}}}}}
        self.inventory = directory / "inventory.yml"
        self.inventory.write_text(yaml.safe_dump(inventory))

    def env(self) -> dict:
        return self.cluster.env() | {
            "ANSIBLE_COLLECTIONS_PATH": collections_path(),
            "ANSIBLE_COLLECTIONS_SCAN_SYS_PATH": "false",
            "ANSIBLE_CACHE_PLUGIN": "jsonfile",
            "ANSIBLE_CACHE_PLUGIN_CONNECTION": str(self.cache),
            "ANSIBLE_CACHE_PLUGIN_TIMEOUT": "0",
            "ANSIBLE_GATHERING": "explicit",
            "ANSIBLE_LOCALHOST_WARNING": "false",
            "ANSIBLE_NOCOLOR": "true",
            "ANSIBLE_FORCE_COLOR": "false",
        }

    def role_playbook(self, role: str, role_vars: dict) -> Path:
        """A play applying ``gpufabric.cluster.<role>`` on localhost with ``role_vars``."""
        play = [{"name": f"Apply {role}", "hosts": "localhost", "gather_facts": False,
                 "roles": [{"role": f"gpufabric.cluster.{role}", "vars": role_vars}]}]
        path = self.directory / f"{role}.yml"
        path.write_text(yaml.safe_dump(play, sort_keys=False))
        return path

    def run(self, playbook: str | Path, *args: str, extra_vars: dict | None = None, timeout: float = 900) -> Result:
        command = [str(Path(sys.executable).parent / "ansible-playbook"), "-i", str(self.inventory), str(playbook),
                   *args]
        if extra_vars:
            command += ["-e", json.dumps(extra_vars)]
        with HookCompleter(self.cluster):
            done = subprocess.run(command, env=self.env(), capture_output=True, text=True, timeout=timeout,
                                  check=False, cwd=self.directory)
        output = done.stdout + done.stderr
        recap = {}
        match = re.search(r"^localhost\s*:\s*(.*)$", output, re.MULTILINE)
        if match:
            recap = {key: int(value) for key, value in re.findall(r"(\w+)=(\d+)", match.group(1))}
        return Result(done.returncode, output, recap)


class HookCompleter:
    """While a play runs, finish the pods of Helm hook Jobs and the pods a ClusterLogs marked to complete serves
    (kwok runs pods, no container ends them), as ``up --complete-helm-hooks`` does for the molecule scenarios."""

    def __init__(self, cluster, interval: float = 1.0):
        self.cluster = cluster
        self.interval = interval
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.completed: list[str] = []

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join(timeout=10)

    def _loop(self):
        api = harness.Api(self.cluster.server, Path(self.cluster.state["run_dir"]) / "pki")
        while not self.stop.wait(self.interval):
            try:
                self.completed += harness.complete_helm_hook_pods(api)
                self.completed += harness.complete_served_pods(api)
            except Exception:  # the API server may be busy; the next round tries again
                continue
