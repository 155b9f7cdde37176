# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Markdown reports for people: the preflight report, the validation summary, the site summary and the reports
of the roles validate_rdma and validate_compute_domain.

Pure functions over the dicts of :mod:`.preflight`, the validation playbook, :mod:`.site` and the two validation
roles; the filters ``gpufabric.cluster.preflight_markdown``, ``gpufabric.cluster.validation_markdown``,
``gpufabric.cluster.site_summary_markdown``, ``gpufabric.cluster.rdma_markdown`` and
``gpufabric.cluster.compute_domain_markdown`` are their entry points.
Errors are :class:`ReportError`.

Every document passes through :func:`...plugin_utils.redact.redact` as a whole: a message that quoted a URL with
credentials shows it as ``https://***@host/...``.
"""

from __future__ import annotations

import typing as t
from collections.abc import Mapping

from ansible_collections.gpufabric.cluster.plugins.plugin_utils.redact import redact


class ReportError(ValueError):
    """Input that is not the report a renderer expects."""


_ICONS = {"pass": "PASS", "warn": "WARN", "fail": "FAIL", "skip": "skip", "no_hardware": "NO HW"}


def _document(lines: t.Sequence[str]) -> str:
    """The lines as one document, redacted."""
    return redact("\n".join(lines) + "\n")


def _cell(value: t.Any) -> str:
    text = ", ".join(str(item) for item in value) if isinstance(value, (list, tuple)) else str(value)
    return text.replace("|", "\\|").replace("\n", " ") or "-"


def preflight_markdown(report: Mapping, title: str = "GPU fabric readiness") -> str:
    """Return the report as a Markdown document: summary, per-host table, checks, IMEX domains."""
    if not isinstance(report, Mapping) or "hosts" not in report or "summary" not in report:
        raise ReportError("expected the dict returned by gpufabric.cluster.preflight_report")
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
    return _document(lines)


def _outcome(host: str, summary: Mapping) -> str:
    if host in summary["excluded_hosts"]:
        return "excluded: " + "; ".join(summary["excluded_hosts"][host])
    if host in summary["failed_hosts"]:
        return str(summary["failed_hosts"][host])
    return "converged" if host in summary["converged_hosts"] else "-"


def site_summary_markdown(summary: Mapping) -> str:
    """Return the summary of a site run (from ``gpufabric.cluster.site_summary``) as a Markdown document."""
    if not isinstance(summary, Mapping) or "result" not in summary or "preflight" not in summary:
        raise ReportError("expected the dict returned by gpufabric.cluster.site_summary")
    lines = [f"# gpufabric.cluster site run: {str(summary['result']).upper()}", "",
             "| host | preflight | outcome |", "|---|---|---|"]
    lines += [f"| {host} | {status} | {_outcome(host, summary)} |"
              for host, status in sorted((summary["preflight"].get("status") or {}).items())]
    cluster = redact(summary.get("cluster_failure"))
    failures = summary.get("validation_failures") or []
    if failures:
        validation = "FAIL: " + "; ".join(failures)
    else:
        validation = ("PASS" + (f", {summary['reports']['validation']}" if summary['reports'].get('validation') else "")
                      if summary.get("validation_ran") else "not run")
    phase = "ok or not run" if cluster is None else f"failed: {cluster}"
    lines += ["", f"- cluster phase: {phase}",
              f"- validation: {validation}",
              f"- preflight report: {summary['reports'].get('preflight') or 'not written (check mode)'}"]
    return _document(lines)


def validation_markdown(validation: Mapping) -> str:
    """Return the summary of a validation run (``gpufabric_validation``: compute_domain, rdma, failures)."""
    if not isinstance(validation, Mapping) or "failures" not in validation:
        raise ReportError("expected the validation result {compute_domain, rdma, failures}")
    failures = list(validation.get("failures") or [])
    lines = [f"# gpufabric.cluster validation: {'FAIL' if failures else 'PASS'}", ""]
    compute_domain = validation.get("compute_domain")
    if compute_domain:
        lines.append(f"- ComputeDomain: {compute_domain['verdict']['status']} (compute-domain.md)")
    for result in validation.get("rdma") or []:
        verdict = result.get("verdict") or {}
        lines.append(f"- RDMA {result.get('name')}: {verdict.get('status')}, {verdict.get('best_average_gbps')} of "
                     f"{verdict.get('line_rate_gbps')} Gb/s")
    lines += [f"- failed: {failure}" for failure in failures]
    return _document(lines)


MANAGED = "<!-- Ansible managed -->"


def _or_dash(value: t.Any) -> t.Any:
    return "-" if value is None else value


def rdma_markdown(results: t.Sequence[Mapping]) -> str:
    """Return the report of validate_rdma (``validate_rdma_results``): one table row per test, then the reasons."""
    if not isinstance(results, (list, tuple)) or not all(isinstance(result, Mapping) for result in results):
        raise ReportError("expected the list of test results of validate_rdma (validate_rdma_results)")
    lines = [MANAGED, "# GPUDirect RDMA validation", "",
             "| test | pair | rail | memory | GPU (server/client) | best average | line rate | status |",
             "|---|---|---|---|---|---|---|---|"]
    for result in results:
        verdict = result["verdict"]
        gpus = f"{_or_dash(result['server'].get('gpu_index'))}/{_or_dash(result['client'].get('gpu_index'))}"
        lines.append(f"| {result['name']} | {result['pair']} | {result['rail']} | {result['memory']} | {gpus} "
                     f"| {verdict['best_average_gbps']} Gb/s | {verdict['line_rate_gbps']} Gb/s "
                     f"| {verdict['status']} |")
    for result in results:
        if result["verdict"].get("reasons"):
            lines += ["", f"- {result['name']}: {'; '.join(result['verdict']['reasons'])}"]
    return _document(lines)


def _worst(case: Mapping) -> str:
    worst = case.get("worst")
    return f"{worst['gbps']} ({worst['from']}->{worst['to']})" if worst else "-"


def compute_domain_markdown(result: Mapping) -> str:
    """Return the report of validate_compute_domain (``validate_compute_domain_result``)."""
    if not isinstance(result, Mapping) or "verdict" not in result or "placement" not in result:
        raise ReportError("expected the result of validate_compute_domain (validate_compute_domain_result)")
    verdict, placement = result["verdict"], result["placement"]
    status = (result.get("compute_domain_status") or {}).get("status", "unknown")
    lines = [MANAGED, f"# ComputeDomain validation: {str(verdict['status']).upper()}", "",
             f"- ComputeDomain `{result['namespace']}/{result['name']}`: {status}",
             f"- Nodes ({placement['clique']}): {', '.join(placement['nodes'])}",
             *([f"- {result['isolation']['message']}"]
               if isinstance(result.get("isolation"), Mapping) else []),
             f"- GPUs: {verdict['gpus']} ({placement['gpu_model']}), threshold {verdict['threshold_gbps']} GB/s "
             f"({verdict['threshold_source']})", "",
             "| testcase | status | worst pair (GB/s) | best pair (GB/s) | spread |", "|---|---|---|---|---|"]
    for case in verdict.get("testcases") or []:
        best = case["best"]["gbps"] if case.get("best") else "-"
        spread = "-" if case.get("spread_percent") is None else f"{case['spread_percent']} %"
        lines.append(f"| {case['name']} | {case['status']} | {_worst(case)} | {best} | {spread} |")
    if verdict.get("reasons"):
        lines += ["", "## Reasons", *(f"- {reason}" for reason in verdict["reasons"])]
    return _document(lines)
