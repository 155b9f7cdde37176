# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""`make demo` and `make demo-down`: gpufabric.cluster.site on a simulated GB200 NVL72 rack, no GPU needed.

``up`` runs the molecule scenario molecule/demo with the site scenario's molecule.yml as a second base config: the
test control plane with 18 kwok trays in two cliques of 9, podman trays gb200-tray-07, -08 (clique 1) and -16
(clique 2, rail mlx5_1 DOWN) probing the recorded GB200 tray tree, and site.yml whole on them. The site run fails on
purpose (tray-16 is excluded), so its exit status says nothing; the judgement is its summary,
reports/demo/site-summary.json: exactly tray-16 excluded for mlx5_1 DOWN, tray-07 and -08 through every phase, the
validation (nvbandwidth, ib_write_bw and nccl-tests all_reduce, from the site scenario's served outputs) run and
passed. ``up`` prints the reports and exits 0 when the summary says just that, 1 when not.
``down`` runs the scenario's destroy (site's destroy.yml): the containers removed, the control plane stopped.

    python tools/demo.py up [--molecule PATH]
    python tools/demo.py down [--molecule PATH]
"""

from __future__ import annotations

import argparse
import json
import os
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
FAILING_TRAY = "gb200-tray-16"
FAILING_RAIL = "mlx5_1"
READY_TRAYS = ("gb200-tray-07", "gb200-tray-08")
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
    """A summary that cannot be judged: missing, not JSON, or not shaped as site.yml writes it."""


def molecule_command(molecule: str, action: str) -> list[str]:
    """The molecule command line of ``action`` (converge, destroy) on the demo scenario."""
    base = [arg for config in BASE_CONFIGS for arg in ("-c", config)]
    return [molecule, *base, action, "-s", SCENARIO]


def load_summary(path: Path) -> dict:
    """The site summary at ``path``; DemoError when it is missing, empty, not JSON or not a JSON object."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DemoError(f"{path}: not written; the site run ended before its summary (see its output above)") from None
    except (OSError, UnicodeDecodeError) as error:
        raise DemoError(f"{path}: unreadable ({error})") from None
    if not text.strip():
        raise DemoError(f"{path}: empty; the site run did not finish writing its summary")
    try:
        summary = json.loads(text)
    except ValueError as error:
        raise DemoError(f"{path}: not JSON ({error}); truncated or not a site summary") from None
    if not isinstance(summary, dict):
        raise DemoError(f"{path}: a site summary is a JSON object, got {type(summary).__name__}")
    return summary


def _field(summary: Mapping, key: str, kind: type | tuple[type, ...], what: str) -> t.Any:
    if key not in summary:
        raise DemoError(f"{SUMMARY}: no {key!r}; not a summary of gpufabric.cluster.site")
    value = summary[key]
    if isinstance(value, bool) and bool not in (kind if isinstance(kind, tuple) else (kind,)):
        raise DemoError(f"{SUMMARY}: {key!r} must be {what}, got bool")
    if not isinstance(value, kind):
        raise DemoError(f"{SUMMARY}: {key!r} must be {what}, got {type(value).__name__}")
    return value


def judge(summary: Mapping) -> list[str]:
    """What in the site summary differs from the demo's expected run; empty when it is exactly that.

    Expected: only FAILING_TRAY excluded, for FAILING_RAIL DOWN; no host failed; READY_TRAYS converged; the cluster
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
        problems.append(f"{FAILING_TRAY} was not excluded; its rail {FAILING_RAIL} is DOWN")
    else:
        reasons = _reasons(excluded[FAILING_TRAY])
        if FAILING_RAIL not in reasons or "DOWN" not in reasons:
            problems.append(f"{FAILING_TRAY} was excluded, but not for {FAILING_RAIL} DOWN: {reasons}")
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


def _reasons(reasons: t.Any) -> str:
    if isinstance(reasons, (list, tuple)):
        return "; ".join(map(str, reasons))
    return str(reasons)


def report_paths(report_dir: Path) -> list[Path]:
    """The reports of the run in ``report_dir``, those written, in the order to open them."""
    return [report_dir / name for name in REPORTS if (report_dir / name).is_file()]


def _run(command: list[str], root: Path = ROOT) -> int:
    print("+ " + " ".join(command), flush=True)
    env = dict(os.environ)
    if os.sep in command[0]:  # molecule runs ansible-config and ansible-playbook: those of its own directory
        env["PATH"] = os.pathsep.join([str(Path(command[0]).parent), env.get("PATH", "")])
    return subprocess.run(command, cwd=root, env=env, check=False).returncode


def up(molecule: str, root: Path = ROOT) -> int:
    """Converge the demo rack and judge its site summary; the exit status of ``make demo``."""
    summary_path = root / REPORT_DIR / SUMMARY
    # A summary of an earlier run is never judged as this run's.
    summary_path.unlink(missing_ok=True)
    status = _run(molecule_command(molecule, "converge"), root)
    try:
        problems = judge(load_summary(summary_path))
    except DemoError as error:
        print(f"\nmake demo: FAILED (molecule converge exited {status}): {error}", file=sys.stderr)
        return 1
    print("\nReports:")
    for path in report_paths(root / REPORT_DIR):
        print(f"  {path}")
    if problems:
        print("\nmake demo: FAILED, the run is not the one the demo shows:", file=sys.stderr)
        for problem in problems:
            print(f"  - {problem}", file=sys.stderr)
        return 1
    print(f"\nThe site run failed as the demo means it to (molecule converge exited {status}): {FAILING_TRAY} "
          f"was excluded by the preflight gate, its rail {FAILING_RAIL} DOWN.")
    print(f"make demo: as expected. {', '.join(READY_TRAYS)} went through every phase and passed the validation. "
          "The rack is still up (run it again: `make demo`); `make demo-down` removes it.")
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
