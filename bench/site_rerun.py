# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Converged rerun of ``site.yml``: what a second run costs, phase by phase, on hosts the first run converged.

Uses the molecule ``site`` scenario (three podman systemd hosts as GB200 trays, the real test control plane, the
real charts): ``molecule create``, ``prepare``, ``converge`` (the first run), then ``converge`` again with the
BENCH callback bench/callback/gpufabric_phase_profile.py, and ``destroy`` whatever happened. Prints, per play of
the second run: hosts, tasks executed and skipped per host, changed results, wall seconds, CPU seconds and CPU per
host (CPU: ansible-playbook and every process it waited for, which on these local containers includes the
modules), then the whole run's figures and the load average.

Usage (from the repository root, after ``make test-venv collection molecule-image cluster-build`` and the
kubernetes.core install that ``make molecule`` does):
  .venv/bin/python bench/site_rerun.py [--runs 1] [--json FILE]
Never run it while ``make molecule`` runs the site scenario: the containers have the same names.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def molecule(step: str, environment: dict, log) -> None:
    started = time.monotonic()
    completed = subprocess.run([os.path.join(ROOT, ".venv", "bin", "molecule"), step, "-s", "site"], cwd=ROOT,
                               env=environment, stdout=log, stderr=subprocess.STDOUT, check=False)
    print(f"molecule {step} -s site: rc {completed.returncode} in {time.monotonic() - started:.0f}s", flush=True)
    if completed.returncode != 0:
        raise SystemExit(f"molecule {step} -s site failed; see {log.name}")


def print_table(plays: list[dict], wall: float) -> None:
    print(f"{'phase (play)':<62} {'hosts':>5} {'exec/host':>9} {'skip/host':>9} {'changed':>7} {'wall s':>7}"
          f" {'CPU s':>7} {'CPU/host':>8}")
    total = {"executed": 0, "skipped": 0, "changed": 0, "wall_s": 0.0, "cpu_s": 0.0}
    for play in plays:
        hosts = max(len(play["hosts"]), 1)
        print(f"{play['play'][:62]:<62} {len(play['hosts']):>5} {play['executed'] / hosts:>9.1f}"
              f" {play['skipped'] / hosts:>9.1f} {play['changed']:>7} {play['wall_s']:>7.1f} {play['cpu_s']:>7.1f}"
              f" {play['cpu_s'] / hosts:>8.2f}")
        for key in total:
            total[key] += play[key]
    print(f"{'all plays':<62} {'':>5} {'':>9} {'':>9} {total['changed']:>7} {total['wall_s']:>7.1f}"
          f" {total['cpu_s']:>7.1f}")
    print(f"second run: {total['executed']} task results executed, {total['skipped']} skipped, "
          f"{total['changed']} changed; ansible-playbook wall {wall:.1f}s (molecule included)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="also write the per-play figures of the second run to this file")
    arguments = parser.parse_args()
    work = tempfile.mkdtemp(prefix="gpufabric-site-rerun.")
    profile = os.path.join(work, "phases.json")
    environment = dict(os.environ, NO_COLOR="1",
                       PATH=os.path.join(ROOT, ".venv", "bin") + os.pathsep + os.environ.get("PATH", ""))
    log_path = os.path.join(work, "molecule.log")
    print(f"load average before: {os.getloadavg()}; log: {log_path}", flush=True)
    with open(log_path, "w", encoding="utf-8") as log:
        try:
            molecule("destroy", environment, log)
            for step in ("create", "prepare", "converge"):
                molecule(step, environment, log)
            profiled = dict(environment, GPUFABRIC_PHASE_PROFILE=profile,
                            ANSIBLE_CALLBACK_PLUGINS=os.path.join(ROOT, "bench", "callback"),
                            ANSIBLE_CALLBACKS_ENABLED="gpufabric_phase_profile")
            started = time.monotonic()
            molecule("converge", profiled, log)
            wall = time.monotonic() - started
        finally:
            molecule("destroy", environment, log)
    with open(profile, encoding="utf-8") as handle:
        plays = json.load(handle)
    print(f"load average after: {os.getloadavg()}")
    print_table(plays, wall)
    if arguments.json:
        with open(arguments.json, "w", encoding="utf-8") as handle:
            json.dump(plays, handle, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
