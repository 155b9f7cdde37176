# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Run ``molecule test`` for several scenarios, ``--jobs`` at a time, and say how each went.

Each scenario's output goes to ``<log-dir>/<scenario>.log``, every line prefixed with the seconds since the scenario
started, and is printed whole when the scenario ends, so a CI log reads scenario by scenario even when they ran side
by side; the line that ends it says how long each of molecule's steps took. A scenario that fails is destroyed (no
container or control plane left behind) and the run goes on; the exit status is 1 when any failed. The longest
scenarios start first (durations of the last passing run of each, kept in the ``--durations`` file, which ``make
molecule`` keeps in ``~/.cache/gpufabric`` so that a fresh clone on the same machine orders them too; on a machine
that has none, those of the ``--expected`` file, a recorded run's committed with the scenarios; unknown ones count as
longest), so that the jobs end close together. At most one "heavy" scenario runs at a time (the ``--heavy`` longest
known ones, 2 by default; a scenario without a recorded duration is not, so that a fresh machine still runs ``--jobs``
at a time): two of them side by side slow each other down on a small machine, so while one runs the other slots take
the longest light ones, and a slot waits only when every scenario left is heavy.

Scenarios can share the machine: the host-role scenarios' containers have names of their own, and every cluster
scenario starts its own control plane on free ports (tests/cluster). One scenario never runs twice at once. The
cluster scenarios (molecule's delegated driver) share a second base config, molecule/_shared/base.yml, given
to molecule after the repository's .config/molecule/config.yml.

Usage: python tests/molecule/run_scenarios.py --jobs 2 --log-dir .build/molecule [--durations FILE]
[--expected FILE] [--heavy N] SCENARIO ...
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import subprocess
import sys
import threading
import time

import yaml

# molecule's line at the start and at the end of each step: "INFO     [site > converge] Executing"
# "Executing" alone on its line starts a step ("Executing Testinfra tests found in ..." is a line inside verify).
STEP_LINE = re.compile(r"\[(?P<scenario>[^\s\]]+) > (?P<step>[a-z_]+)\] (?P<event>Executing(?=\s*$)|Executed\b)")


# The base configs of the cluster-role scenarios, those of molecule's delegated driver on the test control plane: the
# repository's, which molecule loads by itself only when no --base-config is given, then theirs.
CLUSTER_BASE_CONFIGS = (".config/molecule/config.yml", "molecule/_shared/base.yml")


def base_config_options(scenario: str) -> list[str]:
    """The options before molecule's command for ``scenario`` (run from the repository's root): the cluster scenarios'
    base configs for one whose molecule.yml names molecule's delegated driver ``default``; none for another (the
    podman scenarios: molecule loads .config/molecule/config.yml by itself) or a name without a molecule.yml."""
    try:
        with open(os.path.join("molecule", scenario, "molecule.yml"), encoding="utf-8") as handle:
            config = yaml.safe_load(handle)
    except FileNotFoundError:
        return []
    driver = config.get("driver") if isinstance(config, dict) else None
    if isinstance(driver, dict) and driver.get("name") == "default":
        return [option for path in CLUSTER_BASE_CONFIGS for option in ("--base-config", path)]
    return []


def order_longest_first(scenarios: list[str], durations: dict) -> list[str]:
    """``scenarios`` without duplicates, longest known duration first, unknown ones before all known."""
    unique = list(dict.fromkeys(scenarios))
    return sorted(unique, key=lambda name: -float(durations.get(name, float("inf"))))


def heavy_scenarios(scenarios: list[str], durations: dict, count: int) -> set[str]:
    """The scenarios that never run side by side: the ``count`` longest of those with a known duration."""
    if count < 0:
        raise ValueError(f"the number of heavy scenarios must be 0 or more, got {count}")
    known = [name for name in order_longest_first(scenarios, durations) if name in durations]
    return set(known[:count])


def next_scenario(waiting: list[str], running, heavy: set[str]) -> str | None:
    """The first of ``waiting`` that may start beside ``running``: not a heavy one while a heavy one runs; else None."""
    heavy_running = any(name in heavy for name in running)
    return next((name for name in waiting if not (heavy_running and name in heavy)), None)


def read_durations(path: str) -> dict:
    """The durations of the last run: the finite non-negative numbers of the file's JSON object, else none."""
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {key: value for key, value in data.items()
            if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value >= 0}


def step_durations(marks: list[tuple[float, str]]) -> list[tuple[str, float]]:
    """The steps of one scenario in the order they ran, each with its seconds from "Executing" to "Executed".

    ``marks`` are (seconds since the scenario started, line) in the order the lines came; a line that is not a step
    line is passed over, and so is an "Executed" with no "Executing" of the same step open before it. A step still
    open at the end (the scenario failed in it) counts until the last mark.
    """
    steps: list[tuple[str, float]] = []
    open_step: tuple[str, float] | None = None
    last = 0.0
    for seconds, line in marks:
        last = max(last, seconds)
        match = STEP_LINE.search(line)
        if not match:
            continue
        step = match.group("step")
        if match.group("event") == "Executing":
            if open_step is not None:
                steps.append((open_step[0], max(0.0, seconds - open_step[1])))
            open_step = (step, seconds)
        elif open_step is not None and open_step[0] == step:
            steps.append((step, max(0.0, seconds - open_step[1])))
            open_step = None
    if open_step is not None:
        steps.append((open_step[0], max(0.0, last - open_step[1])))
    return steps


def describe_steps(steps: list[tuple[str, float]]) -> str:
    """``destroy 2s, create 14s, ...``: the steps that ran, in order."""
    return ", ".join(f"{step} {round(seconds)}s" for step, seconds in steps)


class TimedLog(threading.Thread):
    """Copies a scenario's output into its log, each line prefixed with the seconds since the scenario started.

    Keeps molecule's step lines with their times (``marks``), so that the runner can say how long each step took.
    """

    def __init__(self, stream, path: str, started: float):
        super().__init__(daemon=True)
        self.stream = stream
        self.path = path
        self.started = started
        self.marks: list[tuple[float, str]] = []

    def run(self):
        with open(self.path, "wb") as log:
            for line in iter(self.stream.readline, b""):
                seconds = time.monotonic() - self.started
                log.write(f"[{seconds:7.1f}s] ".encode("ascii") + line)
                log.flush()
                text = line.decode("utf-8", errors="replace")
                if STEP_LINE.search(text):
                    self.marks.append((seconds, text))
            self.marks.append((time.monotonic() - self.started, ""))


def run(scenarios: list[str], jobs: int, log_dir: str, molecule: str, durations_path: str | None = None,
        heavy_count: int = 2, expected_path: str | None = None) -> int:
    os.makedirs(log_dir, exist_ok=True)
    durations_path = durations_path or os.path.join(log_dir, "durations.json")
    # this machine's own figures; the expected ones (a recorded run's, committed) for the scenarios it has none of
    durations = {**(read_durations(expected_path) if expected_path else {}), **read_durations(durations_path)}
    waiting = order_longest_first(scenarios, durations)
    heavy = heavy_scenarios(waiting, durations, heavy_count)
    passed: dict[str, int] = {}
    running: dict[str, tuple[subprocess.Popen, float, TimedLog]] = {}
    failed: list[str] = []
    environment = dict(os.environ, NO_COLOR="1")
    while waiting or running:
        while len(running) < jobs:
            scenario = next_scenario(waiting, running, heavy)
            if scenario is None:
                break
            waiting.remove(scenario)
            started = time.monotonic()
            process = subprocess.Popen([molecule, *base_config_options(scenario), "test", "-s", scenario],
                                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                       env=environment)
            log = TimedLog(process.stdout, os.path.join(log_dir, f"{scenario}.log"), started)
            log.start()
            running[scenario] = (process, started, log)
            print(f"=== molecule scenario {scenario}: started", flush=True)
        time.sleep(1)
        for scenario, (process, started, log) in list(running.items()):
            if process.poll() is None:
                continue
            del running[scenario]
            log.join()
            process.stdout.close()
            elapsed = round(time.monotonic() - started)
            with open(log.path, encoding="utf-8", errors="replace") as handle:
                sys.stdout.write(handle.read())
            steps = describe_steps(step_durations(log.marks))
            if process.returncode == 0:
                passed[scenario] = elapsed
                print(f"=== molecule scenario {scenario} passed in {elapsed}s ({steps})", flush=True)
            else:
                failed.append(scenario)
                print(f"=== molecule scenario {scenario} FAILED after {elapsed}s ({steps})", flush=True)
                subprocess.run([molecule, *base_config_options(scenario), "destroy", "-s", scenario],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=environment, check=False)
    # Read again: another run on this machine may have kept its figures since this one started.
    durations = {**read_durations(durations_path), **passed}
    os.makedirs(os.path.dirname(os.path.abspath(durations_path)), exist_ok=True)
    with open(durations_path, "w", encoding="utf-8") as handle:
        json.dump(durations, handle, indent=1, sort_keys=True)
    if failed:
        print(f"failed molecule scenario(s): {' '.join(failed)}", flush=True)
        return 1
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2, help="scenarios at a time (default 2)")
    parser.add_argument("--log-dir", required=True, help="where each scenario's log and the durations go")
    parser.add_argument("--molecule", default="molecule", help="the molecule command")
    parser.add_argument("--durations", help="the durations file (default: <log-dir>/durations.json)")
    parser.add_argument("--expected",
                        help="durations of a recorded run, for the scenarios the durations file has none of "
                             "(a fresh machine)")
    parser.add_argument("--heavy", type=int, default=2,
                        help="how many of the longest known scenarios never run side by side (default 2, 0: none)")
    parser.add_argument("scenarios", nargs="+")
    arguments = parser.parse_args()
    if arguments.jobs < 1:
        parser.error(f"--jobs must be 1 or more, got {arguments.jobs}")
    if arguments.heavy < 0:
        parser.error(f"--heavy must be 0 or more, got {arguments.heavy}")
    missing = [name for name in arguments.scenarios if not os.path.isfile(f"molecule/{name}/molecule.yml")]
    if missing:
        parser.error(f"no scenario molecule/<name>/molecule.yml for: {' '.join(missing)}")
    return run(arguments.scenarios, arguments.jobs, arguments.log_dir, arguments.molecule, arguments.durations,
               arguments.heavy, arguments.expected)


if __name__ == "__main__":
    sys.exit(main())
