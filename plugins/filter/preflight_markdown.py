# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Render a preflight report (from ``gpufabric.cluster.preflight_report``) as Markdown for people."""

from __future__ import annotations

import typing as t
from collections.abc import Mapping

from ansible.errors import AnsibleFilterError

_ICONS = {"pass": "PASS", "warn": "WARN", "fail": "FAIL", "skip": "skip", "no_hardware": "NO HW"}


def _cell(value: t.Any) -> str:
    text = ", ".join(str(item) for item in value) if isinstance(value, (list, tuple)) else str(value)
    return text.replace("|", "\\|").replace("\n", " ") or "-"


def preflight_markdown(report: Mapping, title: str = "GPU fabric readiness") -> str:
    """Return the report as a Markdown document: summary, per-host table, checks, IMEX domains."""
    if not isinstance(report, Mapping) or "hosts" not in report or "summary" not in report:
        raise AnsibleFilterError("preflight_markdown: expected the dict returned by gpufabric.cluster.preflight_report")
    summary = report["summary"]
    lines = [f"# {title}", ""]
    verdict = "READY" if summary.get("ready") else "NOT READY: " + ", ".join(summary.get("failed_hosts") or [])
    lines += [f"**{verdict}** - {summary.get('hosts', 0)} host(s): {summary.get('pass', 0)} pass, "
              f"{summary.get('warn', 0)} warn, {summary.get('fail', 0)} fail, "
              f"{summary.get('no_hardware', 0)} without NVIDIA GPU or ConnectX port", ""]
    lines += ["| host | status | GPUs | driver | ConnectX ports | clique | summary |",
              "|---|---|---|---|---|---|---|"]
    for name, entry in sorted(report["hosts"].items()):
        lines.append("| " + " | ".join(_cell(value) for value in (
            name, _ICONS.get(entry.get("status"), entry.get("status")), entry.get("gpus", "-"),
            entry.get("driver_version") or "-", entry.get("connectx_ports", "-"),
            entry.get("cliques") or "-", entry.get("summary", ""))) + " |")
    for name, entry in sorted(report["hosts"].items()):
        lines += ["", f"## {name}", "", "| check | status | detail |", "|---|---|---|"]
        for check in entry.get("checks", []):
            lines.append(f"| {_cell(check['name'])} | {_ICONS.get(check['status'], check['status'])} "
                         f"| {_cell(check['message'])} |")
    domains = report.get("imex_domains") or []
    if domains:
        lines += ["", "## IMEX domains (from GPU fabric cliques)", "",
                  "| clique | members | status | problems |", "|---|---|---|---|"]
        for domain in domains:
            lines.append(f"| {_cell(domain['clique'])} | {_cell(domain['members'])} "
                         f"| {_ICONS.get(domain['status'], domain['status'])} "
                         f"| {_cell(domain['problems'] + domain['notes'])} |")
    return "\n".join(lines) + "\n"


class FilterModule:
    """The preflight Markdown filter."""

    def filters(self) -> dict[str, t.Callable]:
        """Return the filters of this file."""
        return {"preflight_markdown": preflight_markdown}
