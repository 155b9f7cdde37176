# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""`make demo` and `make demo-down`: gpufabric.cluster.site on a simulated GB200 NVL72 rack, no GPU needed.

``up`` runs the molecule scenario molecule/demo with the site scenario's molecule.yml as a second base config: the
test control plane with 18 kwok trays in two cliques of 9, podman trays gb200-tray-07, -08 (clique 1) and -16
(clique 2) probing the recorded GB200 tray tree with the collection's fabric_facts, whose NVML a TEST FIXTURE
stand-in answers from each tray's recording (slot, tray index, clique; tray-16's GPU 2 with two NVLinks down and its
fabric degraded), and site.yml whole on them. The site run fails on purpose (tray-16 is excluded), so its exit
status says nothing; the judgement is its summary, reports/demo/site-summary.json: exactly tray-16 excluded for its
degraded NVLink fabric, tray-07 and -08 through every phase, the validation (nvbandwidth, ib_write_bw and nccl-tests
all_reduce, from the site scenario's served outputs) run and passed; and its preflight report, preflight.json: the
rack's IMEX domains from the cliques (tray-07 and -08 in clique 1, tray-16 in clique 2), every tray placed by rack
and slot. Then the scenario's side effect prints the plan nvidia_driver would follow to upgrade the rack's driver,
one NVLink domain at a time (check mode, nothing changed). ``up`` prints the reports and exits 0 when all that is
so, 1 when not.
``down`` runs the scenario's destroy (site's destroy.yml): the containers removed, the control plane stopped.

    python tools/demo.py up [--molecule PATH]
    python tools/demo.py down [--molecule PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import typing as t
from collections.abc import Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCENARIO = "demo"
# The shared base config, then the site scenario's molecule.yml; molecule/demo/molecule.yml merges on top.
BASE_CONFIGS = (".config/molecule/config.yml", "molecule/site/molecule.yml")
REPORT_DIR = Path("reports") / SCENARIO
SUMMARY = "site-summary.json"
# Set for the side effect only: molecule/demo/molecule.yml then passes --check to ansible-playbook.
CHECK_MODE = "GPUFABRIC_DEMO_CHECK_MODE"
PREFLIGHT = "preflight.json"
FAILING_TRAY = "gb200-tray-16"
# What the preflight's fabric_health check says of it, in the reasons the gate excluded it for.
FAILING_REASONS = ("GPU 2: 16 of 18 NVLinks active", "GPU 2: fabric health: degraded bandwidth")
FAILING_WHAT = "its GPU 2's NVLink fabric is degraded (two links down)"
READY_TRAYS = ("gb200-tray-07", "gb200-tray-08")
# The rack's IMEX domains as the preflight finds them from the trays' cliques (kwok's: trays 1-9 clique 1, 10-18
# clique 2; tests/cluster/cluster_harness), and each tray's slot (tests/fixtures/build_trees.py DEMO_TRAYS).
CLUSTER_UUID = "3c1a5f2e-9b7d-4c2a-8e6f-1d0b7a9c4e21"
DOMAINS = {f"{CLUSTER_UUID}.1": ("gb200-tray-07", "gb200-tray-08"), f"{CLUSTER_UUID}.2": ("gb200-tray-16",)}
SLOTS = {"gb200-tray-07": 7, "gb200-tray-08": 8, "gb200-tray-16": 26}
# What the site run writes in gpufabric_report_dir, the pages to open first.
REPORTS = (
    "preflight.html",
    "validation.html",
    "site-summary.md",
    "preflight.md",
    "validation.md",
    "preflight.json",
    "validation.json",
    "site-summary.json",
)


class DemoError(Exception):
    """A report that cannot be judged: missing, not JSON, or not shaped as site.yml writes it."""


def molecule_command(molecule: str, action: str) -> list[str]:
    """The molecule command line of ``action`` (converge, side-effect, destroy) on the demo scenario."""
    base = [arg for config in BASE_CONFIGS for arg in ("-c", config)]
    return [molecule, *base, action, "-s", SCENARIO]


def load_summary(path: Path) -> dict:
    """The report (site summary, preflight report) at ``path``; DemoError when it is missing, empty, not JSON or not a
    JSON object."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DemoError(f"{path}: not written; the site run ended before it (see its output above)") from None
    except (OSError, UnicodeDecodeError) as error:
        raise DemoError(f"{path}: unreadable ({error})") from None
    if not text.strip():
        raise DemoError(f"{path}: empty; the site run did not finish writing it")
    try:
        summary = json.loads(text)
    except ValueError as error:
        raise DemoError(f"{path}: not JSON ({error}); truncated or not a report of gpufabric.cluster.site") from None
    if not isinstance(summary, dict):
        raise DemoError(f"{path}: a report is a JSON object, got {type(summary).__name__}")
    return summary


def _field(summary: Mapping, key: str, kind: type | tuple[type, ...], what: str, name: str = SUMMARY) -> t.Any:
    if key not in summary:
        raise DemoError(f"{name}: no {key!r}; not a report of gpufabric.cluster.site")
    value = summary[key]
    if isinstance(value, bool) and bool not in (kind if isinstance(kind, tuple) else (kind,)):
        raise DemoError(f"{name}: {key!r} must be {what}, got bool")
    if not isinstance(value, kind):
        raise DemoError(f"{name}: {key!r} must be {what}, got {type(value).__name__}")
    return value


def judge(summary: Mapping) -> list[str]:
    """What in the site summary differs from the demo's expected run; empty when it is exactly that.

    Expected: only FAILING_TRAY excluded, for FAILING_REASONS; no host failed; READY_TRAYS converged; the cluster
    phase without failure; the validation ran without failure; the run's result ``fail`` (the exclusion).
    DemoError when a field is missing or of the wrong type.
    """
    if not isinstance(summary, Mapping):
        raise DemoError(f"{SUMMARY}: a site summary is a JSON object, got {type(summary).__name__}")
    excluded = _field(summary, "excluded_hosts", Mapping, "an object of host: [reasons]")
    failed = _field(summary, "failed_hosts", Mapping, "an object of host: reason")
    converged = _field(summary, "converged_hosts", list, "a list of hosts")
    validation_ran = _field(summary, "validation_ran", bool, "true or false")
    validation_failures = _field(summary, "validation_failures", list, "a list of messages")
    result = _field(summary, "result", str, "'pass' or 'fail'")
    problems = []
    others = sorted(str(host) for host in excluded if host != FAILING_TRAY)
    if others:
        problems.append(f"excluded besides {FAILING_TRAY}: " + "; ".join(
            f"{host} ({_reasons(excluded[host])})" for host in others))
    if FAILING_TRAY not in excluded:
        problems.append(f"{FAILING_TRAY} was not excluded; {FAILING_WHAT}")
    else:
        reasons = _reasons(excluded[FAILING_TRAY])
        if not all(part in reasons for part in FAILING_REASONS):
            problems.append(f"{FAILING_TRAY} was excluded, but not because {FAILING_WHAT}: {reasons}")
    if failed:
        problems.append("failed: " + "; ".join(f"{host} ({reason})" for host, reason in failed.items()))
    if sorted(str(host) for host in converged) != sorted(READY_TRAYS):
        problems.append(f"converged {', '.join(map(str, converged)) or 'no host'}, expected {', '.join(READY_TRAYS)}")
    if summary.get("cluster_failure") is not None:
        problems.append(f"the cluster phase failed: {summary['cluster_failure']}")
    if validation_ran is not True:
        problems.append("the validation did not run")
    if validation_failures:
        problems.append("the validation failed: " + "; ".join(map(str, validation_failures)))
    if result != "fail":
        problems.append(f"the site run's result is {result!r}, expected 'fail' (the excluded tray)")
    return problems


def judge_preflight(report: Mapping) -> list[str]:
    """What in the preflight report differs from the demo's rack; empty when it is exactly that.

    Expected: the IMEX domains DOMAINS (clique -> members, from the trays' NVML cliques), each tray in its rack at its
    slot (SLOTS, from its NVML platform info), READY_TRAYS not failed and FAILING_TRAY failed. DemoError when a field
    is missing or of the wrong type.
    """
    if not isinstance(report, Mapping):
        raise DemoError(f"{PREFLIGHT}: a preflight report is a JSON object, got {type(report).__name__}")
    domains = _field(report, "imex_domains", list, "a list of domains", PREFLIGHT)
    hosts = _field(report, "hosts", Mapping, "an object of host: entry", PREFLIGHT)
    problems = []
    found: dict[str, tuple[str, ...]] = {}
    slots: dict[str, t.Any] = {}
    for domain in domains:
        if not isinstance(domain, Mapping):
            raise DemoError(f"{PREFLIGHT}: an IMEX domain must be an object, got {type(domain).__name__}")
        members = domain.get("members")
        if not isinstance(members, list):
            raise DemoError(f"{PREFLIGHT}: the members of an IMEX domain must be a list, got {type(members).__name__}")
        found[str(domain.get("clique"))] = tuple(sorted(map(str, members)))
        for rack in domain.get("racks") if isinstance(domain.get("racks"), list) else []:
            for tray in (rack.get("trays") if isinstance(rack, Mapping) and isinstance(rack.get("trays"), list)
                         else []):
                if isinstance(tray, Mapping) and rack.get("chassis_serial"):
                    slots[str(tray.get("host"))] = tray.get("slot_number")
    if not found:
        problems.append("the preflight found no IMEX domain: the trays' NVML cliques were not read "
                        "(is the stand-in pynvml installed?)")
    elif found != DOMAINS:
        problems.append("IMEX domains " + "; ".join(f"{clique}: {', '.join(members)}"
                                                    for clique, members in sorted(found.items()))
                        + ", expected " + "; ".join(f"{clique}: {', '.join(members)}"
                                                    for clique, members in sorted(DOMAINS.items())))
    for host, slot in SLOTS.items():
        if found and slots.get(host) != slot:
            problems.append(f"{host} is not placed in its rack at slot {slot} (found {slots.get(host)!r})")
    for host in READY_TRAYS:
        status = hosts.get(host, {}).get("status") if isinstance(hosts.get(host), Mapping) else None
        if status not in ("pass", "warn"):
            problems.append(f"{host}: preflight status {status!r}, expected pass or warn")
    failing = hosts.get(FAILING_TRAY)
    if not isinstance(failing, Mapping) or failing.get("status") != "fail":
        problems.append(f"{FAILING_TRAY}: the preflight did not fail it; {FAILING_WHAT}")
    return problems


def _reasons(reasons: t.Any) -> str:
    if isinstance(reasons, (list, tuple)):
        return "; ".join(map(str, reasons))
    return str(reasons)


def report_paths(report_dir: Path) -> list[Path]:
    """The reports of the run in ``report_dir``, those written, in the order to open them."""
    return [report_dir / name for name in REPORTS if (report_dir / name).is_file()]


# A line molecule logs at CRITICAL or ERROR (its level first, maybe coloured), as it logs a converge whose playbook
# failed: "CRITICAL Ansible return code was 2, ...", "ERROR demo > converge: Executed: Failed". Ansible's own lines
# (the site run's failure, indented in molecule's frame) never start so.
MOLECULE_FAILURE_LINE = re.compile(r"(?:\x1b\[[0-9;]*m)*(?:CRITICAL|ERROR)\b")


def _run(command: list[str], root: Path = ROOT, held: list[str] | None = None,
         environment: Mapping[str, str] | None = None) -> int:
    """Run ``command`` in ``root`` (with ``environment`` added), its output passed on as it comes; with ``held``,
    molecule's CRITICAL and ERROR lines are kept there instead, for the caller to print or not once it has judged the
    run."""
    print("+ " + " ".join([*(f"{name}={value}" for name, value in (environment or {}).items()), *command]),
          flush=True)
    env = dict(os.environ, **(environment or {}))
    if os.sep in command[0]:  # molecule runs ansible-config and ansible-playbook: those of its own directory
        env["PATH"] = os.pathsep.join([str(Path(command[0]).parent), env.get("PATH", "")])
    if held is None:
        return subprocess.run(command, cwd=root, env=env, check=False).returncode
    with subprocess.Popen(command, cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, errors="replace") as process:
        assert process.stdout is not None
        for line in process.stdout:
            if MOLECULE_FAILURE_LINE.match(line):
                held.append(line)
            else:
                sys.stdout.write(line)
                sys.stdout.flush()
    return process.returncode


# molecule's CRITICAL line when the checkout has no molecule/default scenario; it goes on ("default scenario not
# found, disabling shared state").
NO_DEFAULT_SCENARIO = re.compile(r".*'molecule/default/molecule\.yml' glob failed")


def _release(held: list[str]) -> None:
    """Print molecule's held CRITICAL and ERROR lines: the run is not the one the demo means."""
    sys.stderr.writelines(held)
    sys.stderr.flush()


def _left_out(held: list[str], failure: str) -> str:
    """What the demo says instead of molecule's held lines when the run is the one it means; ``failure`` names the
    intended failure they report, if any."""
    search = sum(1 for line in held if NO_DEFAULT_SCENARIO.match(line))
    parts = []
    if search:
        parts.append(f"{search} about the molecule/default scenario this checkout has none of (molecule goes on)")
    if len(held) > search:
        parts.append(f"{len(held) - search} reporting {failure}")
    return f"(left out: molecule's failure-level log lines, {' and '.join(parts)}.)"


def up(molecule: str, root: Path = ROOT) -> int:
    """Converge the demo rack, judge its site summary and preflight report, print the plan of a driver upgrade; the
    exit status of ``make demo``."""
    report_dir = root / REPORT_DIR
    # Reports of an earlier run are never judged as this run's.
    for name in (SUMMARY, PREFLIGHT):
        (report_dir / name).unlink(missing_ok=True)
    # The site run fails on purpose, and molecule reports that as a failed converge (CRITICAL, ERROR): its lines are
    # held until the run is judged, and printed unless the run is the one the demo means.
    held: list[str] = []
    status = _run(molecule_command(molecule, "converge"), root, held)
    try:
        problems = judge(load_summary(report_dir / SUMMARY))
        problems += judge_preflight(load_summary(report_dir / PREFLIGHT))
    except DemoError as error:
        _release(held)
        print(f"\nmake demo: FAILED (molecule converge exited {status}): {error}", file=sys.stderr)
        return 1
    print("\nReports:")
    for path in report_paths(report_dir):
        print(f"  {path}")
    if problems:
        _release(held)
        print("\nmake demo: FAILED, the run is not the one the demo shows:", file=sys.stderr)
        for problem in problems:
            print(f"  - {problem}", file=sys.stderr)
        return 1
    if held:
        failure = (f"the converge failed, exit status {status}: the site run failing on the excluded tray, the "
                   "outcome the demo means (its summary is above)")
        print("\n" + _left_out(held, failure))
    print("\nThe plan of a driver upgrade (570 to 580) of the rack, one NVLink domain at a time: nvidia_driver in "
          "check mode, nothing changes.", flush=True)
    held = []
    plan_status = _run(molecule_command(molecule, "side-effect"), root, held, {CHECK_MODE: "true"})
    if plan_status != 0:
        _release(held)
        print(f"\nmake demo: FAILED, the upgrade plan's check-mode run (molecule side-effect) exited {plan_status}",
              file=sys.stderr)
        return 1
    # a run that passed: only molecule's line about the missing default scenario is left out
    _release([line for line in held if not NO_DEFAULT_SCENARIO.match(line)])
    if any(NO_DEFAULT_SCENARIO.match(line) for line in held):
        print(_left_out([line for line in held if NO_DEFAULT_SCENARIO.match(line)], ""))
    domains = "; ".join(f"clique {clique.rsplit('.', 1)[-1]}: "
                        + ", ".join(f"{host} (slot {SLOTS[host]})" for host in members)
                        for clique, members in sorted(DOMAINS.items()))
    print(f"\nThe preflight found the rack's NVLink domains from the trays' cliques ({domains}; NVML is simulated: a "
          "TEST FIXTURE stand-in answers from recordings).")
    print(f"The site run failed as the demo means it to (molecule converge exited {status}): {FAILING_TRAY} was "
          f"excluded by the preflight gate, {FAILING_WHAT}.")
    print(f"make demo: as expected. {', '.join(READY_TRAYS)} went through every phase and passed the validation; the "
          "upgrade plan is above (\"Report the plan\"). The rack is still up (run it again: `make demo`); "
          "`make demo-down` removes it.")
    return 0


def down(molecule: str, root: Path = ROOT) -> int:
    """Remove the containers and stop the control plane; the exit status of ``make demo-down``."""
    return _run(molecule_command(molecule, "destroy"), root)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["up", "down"])
    parser.add_argument("--molecule", default="molecule", help="the molecule program (default: molecule on PATH)")
    args = parser.parse_args(argv)
    return up(args.molecule) if args.command == "up" else down(args.molecule)


if __name__ == "__main__":
    sys.exit(main())
