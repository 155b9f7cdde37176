# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Markdown reports for people: the preflight report, the validation summary, the site summary and the reports
of the roles validate_rdma, validate_compute_domain and validate_nccl.

Pure functions over the dicts of :mod:`.preflight`, the validation playbook, :mod:`.site` and the three validation
roles; the filters ``gpufabric.cluster.preflight_markdown``, ``gpufabric.cluster.validation_markdown``,
``gpufabric.cluster.site_summary_markdown``, ``gpufabric.cluster.rdma_markdown``,
``gpufabric.cluster.compute_domain_markdown`` and ``gpufabric.cluster.nccl_markdown`` are their entry points.
Errors are :class:`ReportError`.

Every document passes through :func:`...plugin_utils.redact.redact` as a whole: a message that quoted a URL with
credentials shows it as ``https://***@host/...``.
"""

from __future__ import annotations

import typing as t
from collections.abc import Mapping

from ansible_collections.gpufabric.cluster.plugins.plugin_utils.preflight_fixes import grouped_problems, named_hosts
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.redact import redact
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.report_stamp import stamp_line


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
    if stamp_line(report):
        lines += [stamp_line(report), ""]
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
    problems = grouped_problems(report["hosts"])
    if problems:
        lines += ["", "## What to fix", "", "| check | status | hosts | detail | fixed by |", "|---|---|---|---|---|"]
        lines += [f"| {_cell(item['check'])} | {_ICONS.get(item['status'], item['status'])} "
                  f"| {len(item['hosts'])}: {_cell(named_hosts(item['hosts']))} | {_cell(item['message'])} "
                  f"| {_cell(item['fixed_by'] or '-')} |" for item in problems]
    for name, entry in sorted(report["hosts"].items()):
        lines += ["", f"## {name}", ""]
        if entry.get("place"):
            lines += [_cell(entry["place"]), ""]
        lines += ["| check | status | detail |", "|---|---|---|"]
        for check in entry.get("checks", []):
            lines.append(f"| {_cell(check['name'])} | {_ICONS.get(check['status'], check['status'])} "
                         f"| {_cell(check['message'])} |")
    domains = report.get("imex_domains") or []
    if domains:
        lines += ["", "## IMEX domains (from GPU fabric cliques)", "",
                  "| clique | members | status | problems |", "|---|---|---|---|"]
        for domain in domains:
            said = domain["problems"] + domain["notes"] + list(domain.get("member_problems") or [])
            lines.append(f"| {_cell(domain['clique'])} | {_cell(domain['members'])} "
                         f"| {_ICONS.get(domain['status'], domain['status'])} | {_cell(said)} |")
        for domain in domains:
            lines += _domain_racks(domain, report["hosts"])
    return _document(lines)


def _domain_racks(domain: Mapping, hosts: Mapping) -> list[str]:
    """A domain's trays by rack and slot (its ``racks``), with each host's verdict; nothing when no tray has a rack."""
    racks = [rack for rack in domain.get("racks") or [] if isinstance(rack, Mapping)]
    if not any(isinstance(rack.get("chassis_serial"), str) for rack in racks):
        return []
    own = domain.get("own_status")
    lines = ["", f"### IMEX domain {_cell(domain['clique'])}: {_ICONS.get(domain['status'], domain['status'])}"
             + (f" (its own checks: {_ICONS.get(own, own)})" if own is not None and own != domain["status"] else ""),
             "", "| rack | slot | tray | host | status |", "|---|---|---|---|---|"]
    for rack in racks:
        serial = rack.get("chassis_serial")
        for tray in rack.get("trays") or []:
            if not isinstance(tray, Mapping):
                continue
            status = (hosts.get(tray.get("host")) or {}).get("status")
            lines.append("| " + " | ".join(_cell(value) for value in (
                serial if serial is not None else "unknown", _or_dash(tray.get("slot_number")),
                _or_dash(tray.get("tray_index")), tray.get("host"), _ICONS.get(status, status))) + " |")
    return lines


def _or_dash(value: t.Any) -> t.Any:
    return "-" if value is None else value


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
    lines = [f"# gpufabric.cluster site run: {str(summary['result']).upper()}", ""]
    if stamp_line(summary):
        lines += [stamp_line(summary), ""]
    lines += ["| host | preflight | outcome |", "|---|---|---|"]
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


def check_dcgm_results(results: t.Any) -> list[Mapping]:
    """``results`` when it is a list of ``judge_dcgm_diag`` verdicts the reports can render; else :class:`ReportError`.

    ``None`` or an empty list is no DCGM result (the stage did not run): an empty list.
    """
    if results is None:
        return []
    if not isinstance(results, (list, tuple)):
        raise ReportError("dcgm must be a list of gpufabric.cluster.judge_dcgm_diag verdicts")
    for index, verdict in enumerate(results):
        if not isinstance(verdict, Mapping) or verdict.get("status") not in ("pass", "warn", "fail") or not all(
                isinstance(verdict.get(key, []), list) for key in ("failures", "warnings", "notes", "tests")):
            raise ReportError(f"dcgm[{index}] is not a gpufabric.cluster.judge_dcgm_diag verdict "
                              "(status pass, warn or fail and lists of failures, warnings, notes and tests)")
    return list(results)


def dcgm_run_name(verdict: Mapping) -> str:
    """What a DCGM verdict covered, for a person: ``dcgmi diag on host X`` or ``dcgmi mndiag over domain D``."""
    if verdict.get("kind") == "mndiag":
        return f"dcgmi mndiag over domain {verdict['domain']}" if verdict.get("domain") else "dcgmi mndiag"
    return f"dcgmi diag on host {verdict.get('host')}"


def dcgm_summary(verdict: Mapping) -> str:
    """The run level, DCGM's version and how many tests ended how: ``run level 2, DCGM 4.6.0, 3 tests: 3 Pass``."""
    counts: dict[str, int] = {}
    for test in verdict.get("tests") or []:
        if isinstance(test, Mapping):
            counts[str(test.get("status"))] = counts.get(str(test.get("status")), 0) + 1
    parts = []
    if verdict.get("run_level") is not None:
        parts.append(f"run level {verdict['run_level']}")
    if verdict.get("version"):
        parts.append(f"DCGM {verdict['version']}")
    tests = sum(counts.values())
    parts.append(f"{tests} test(s)" + (": " + ", ".join(f"{count} {status}" for status, count in counts.items())
                                       if counts else ""))
    return ", ".join(parts)


def validation_markdown(validation: Mapping) -> str:
    """Return the summary of a validation run (``gpufabric_validation``: compute_domain, rdma, nccl, dcgm,
    failures)."""
    if not isinstance(validation, Mapping) or "failures" not in validation:
        raise ReportError("expected the validation result {compute_domain, rdma, nccl, failures}")
    failures = list(validation.get("failures") or [])
    lines = [f"# gpufabric.cluster validation: {'FAIL' if failures else 'PASS'}", ""]
    compute_domain = validation.get("compute_domain")
    if compute_domain:
        lines.append(f"- ComputeDomain: {compute_domain['verdict']['status']} (compute-domain.md)")
    for result in validation.get("rdma") or []:
        verdict = result.get("verdict") or {}
        lines.append(f"- RDMA {result.get('name')}: {verdict.get('status')}, {verdict.get('best_average_gbps')} of "
                     f"{verdict.get('line_rate_gbps')} Gb/s")
        if verdict.get("status") != "pass":
            lines += [f"  - {line}" for line in pair_placement(result)]
    nccl = validation.get("nccl")
    if nccl:
        lines.append(f"- NCCL all_reduce ({check_nccl_result(nccl).get('shape')}): {nccl_summary(nccl)} (nccl.md)")
    for verdict in check_dcgm_results(validation.get("dcgm")):
        lines.append(f"- DCGM {dcgm_run_name(verdict)}: {str(verdict['status']).upper()} ({dcgm_summary(verdict)})")
        lines += [f"  - {kind}: {line}" for kind, key in (("failed", "failures"), ("warning", "warnings"),
                                                          ("note", "notes"))
                  for line in verdict.get(key) or []]
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
            lines += [f"  - {line}" for line in pair_placement(result)]
    return _document(lines)


def _numa(value: t.Any) -> str:
    return "NUMA ?" if value is None else f"NUMA {value}"


def pair_placement(result: Mapping) -> list[str]:
    """Where each side's GPU and NIC sit (PCIe address, NUMA node, same PCIe switch), one line per side.

    From the sides of ``gpufabric.cluster.rdma_test_plan``, so a misaligned pair is visible as the cause of a failed
    test; a side without the placement keys (a plan from before they existed) gives no line, an unknown value shows
    as ``?``.
    """
    lines = []
    for role in ("server", "client"):
        side = result.get(role)
        if not isinstance(side, Mapping) or "nic_pci_address" not in side:
            continue
        nic = (f"NIC {side.get('rdma_device') or '?'} ({side.get('nic_pci_address') or '?'}, "
               f"{_numa(side.get('nic_numa_node'))})")
        if side.get("gpu_index") is None:
            lines.append(f"{role} {side.get('node')}: host memory, {nic}")
            continue
        switch = {True: "same PCIe switch", False: "not behind the NIC's PCIe switch"}.get(
            side.get("same_pcie_switch"), "PCIe switch unknown")
        numa = ("same NUMA node" if side.get("gpu_numa_node") == side.get("nic_numa_node")
                and side.get("gpu_numa_node") is not None else "NUMA nodes differ or unknown")
        lines.append(f"{role} {side.get('node')}: GPU {side.get('gpu_index')} ({side.get('gpu_pci_address') or '?'}, "
                     f"{_numa(side.get('gpu_numa_node'))}) with {nic}: {switch}, {numa}")
    return lines


def size_text(value: t.Any) -> str:
    """Bytes as nccl-tests' sizes read: 8 B, 64 KiB, 8 GiB."""
    if not isinstance(value, int) or isinstance(value, bool):
        return "-"
    for unit, scale in (("GiB", 1024 ** 3), ("MiB", 1024 ** 2), ("KiB", 1024)):
        if value >= scale and value % scale == 0:
            return f"{value // scale} {unit}"
    return f"{value} B"


def _number_or_none(value: t.Any) -> bool:
    return value is None or (isinstance(value, (int, float)) and not isinstance(value, bool))


def _int_or_none(value: t.Any) -> bool:
    return value is None or (isinstance(value, int) and not isinstance(value, bool))


def _row_problem(index: int, row: t.Any) -> str | None:
    if not isinstance(row, Mapping) or not _int_or_none(row.get("size_bytes")):
        return f"nccl_tests.rows[{index}] is not a parse_nccl_tests row"
    for key in ("out_of_place", "in_place"):
        placement = row.get(key)
        if placement is not None and (not isinstance(placement, Mapping)
                                      or not _number_or_none(placement.get("busbw_gbps"))
                                      or not _int_or_none(placement.get("wrong"))):
            return f"nccl_tests.rows[{index}].{key} is not a parse_nccl_tests placement"
    return None


def check_nccl_result(result: t.Any) -> Mapping:
    """``result`` when it is a ``validate_nccl_result`` the reports can render; else :class:`ReportError`."""
    if not isinstance(result, Mapping) or not isinstance(result.get("verdict"), Mapping) \
            or not isinstance(result.get("nccl_tests"), Mapping) or not isinstance(result.get("placement"), Mapping):
        raise ReportError("expected the result of validate_nccl (validate_nccl_result: placement, nccl_tests, "
                          "verdict)")
    verdict, placement = result["verdict"], result["placement"]
    problems = [f"verdict.{key} is not a number" for key in ("threshold_gbps", "peak_busbw_gbps", "worst_busbw_gbps")
                if not _number_or_none(verdict.get(key))]
    problems += [f"verdict.{key} is not a size in bytes" for key in ("peak_size_bytes", "worst_size_bytes")
                 if not _int_or_none(verdict.get(key))]
    problems += [f"verdict.{key} is not a list" for key in ("transport", "failures")
                 if not isinstance(verdict.get(key) or [], list)]
    if not isinstance(verdict.get("hosts") or {}, Mapping):
        problems.append("verdict.hosts is not a mapping")
    if not isinstance(placement.get("nodes") or [], list) or not isinstance(placement.get("env") or {}, Mapping):
        problems.append("placement.nodes is not a list or placement.env not a mapping")
    rows = result["nccl_tests"].get("rows")
    if not isinstance(rows or [], list):
        problems.append("nccl_tests.rows is not a list")
    else:
        problems += [problem for index, row in enumerate(rows or []) for problem in [_row_problem(index, row)]
                     if problem]
    if problems:
        raise ReportError(f"expected the result of validate_nccl (validate_nccl_result): {'; '.join(problems[:3])}")
    return result


def nccl_summary(result: Mapping) -> str:
    """One line: status, peak and worst busbw with their sizes, threshold, transport."""
    verdict = result["verdict"]
    transport = ", ".join(str(item) for item in verdict.get("transport") or []) or "unknown"
    peak = verdict.get("peak_busbw_gbps")
    worst = verdict.get("worst_busbw_gbps")
    peak = "-" if not isinstance(peak, (int, float)) else f"{peak:g} GB/s"
    worst = "-" if not isinstance(worst, (int, float)) else f"{worst:g} GB/s"
    return (f"{str(verdict.get('status', 'fail')).upper()}: peak busbw {peak} at "
            f"{size_text(verdict.get('peak_size_bytes'))}, worst large size "
            f"{size_text(verdict.get('worst_size_bytes'))} ({worst}), threshold "
            f"{verdict.get('threshold_gbps')} GB/s ({verdict.get('threshold_source')}), transport {transport}")


def nccl_nodes_and_hosts(result: Mapping) -> tuple[str, str]:
    """The job's nodes (its placement) and, apart from them, the hosts the output printed (in an MPIJob the worker
    pods' names), or ``none printed``: the two are not the same thing and the reports say which is which."""
    nodes = ", ".join(map(str, result["placement"].get("nodes") or []))
    hosts = ", ".join(map(str, sorted(result["verdict"].get("hosts") or {}))) or "none printed"
    return nodes, hosts


def nccl_markdown(result: t.Any) -> str:
    """Return the report of validate_nccl (``validate_nccl_result``): verdict, placement, busbw per size."""
    result = check_nccl_result(result)
    verdict, placement, parsed = result["verdict"], result["placement"], result["nccl_tests"]
    nodes, hosts = nccl_nodes_and_hosts(result)
    lines = [MANAGED, f"# NCCL all_reduce validation ({result.get('shape')}): "
             f"{str(verdict.get('status', 'fail')).upper()}", "",
             f"- MPIJob `{result.get('namespace')}/{result.get('name')}`, launcher {result.get('launcher') or '-'}",
             f"- {nccl_summary(result)}",
             f"- Ranks: {verdict.get('ranks')} on nodes {_cell(nodes)}; the output's hosts: {_cell(hosts)}"]
    if result.get("shape") == "nvlink":
        lines.append(f"- Clique {placement.get('clique')} ({placement.get('gpu_model') or '-'})")
    else:
        lines.append(f"- Rails {(placement.get('env') or {}).get('NCCL_IB_HCA', '-')}, GPUDirect RDMA "
                     f"{placement.get('gpudirect', '-')}")
    lines += ["", "| size | type | out-of-place busbw (GB/s) | in-place busbw (GB/s) | #wrong |",
              "|---|---|---|---|---|"]
    for row in parsed.get("rows") or []:
        placements = [row.get("out_of_place") or {}, row.get("in_place") or {}]
        wrong = sum(item.get("wrong") or 0 for item in placements)
        lines.append(f"| {size_text(row.get('size_bytes'))} | {row.get('type') or '-'} | "
                     f"{_or_dash(placements[0].get('busbw_gbps'))} | {_or_dash(placements[1].get('busbw_gbps'))} | "
                     f"{wrong} |")
    if verdict.get("failures"):
        lines += ["", "## Failures", *(f"- {failure}" for failure in verdict["failures"])]
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
