# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The site run (``playbooks/site.yml``) on the controller: the preflight gate, the hosts lost on the way, the summary.

Pure functions over plain data, the entry points of the filters ``gpufabric.cluster.site_gate``,
``gpufabric.cluster.site_lost`` and ``gpufabric.cluster.site_summary``.  The record of a run, ``site``, is
``{preflight_hosts, preflight_status, preflight_ready, ready, excluded: {host: [reasons]}, failed: {host: why}}``.
"""

from __future__ import annotations

import typing as t
from collections.abc import Mapping

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import settings
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.redact import redact

NO_HARDWARE = "no NVIDIA GPU or ConnectX port found"
# The fact the host phase records a failure it deferred in (playbooks/hosts.yml with gpufabric_defer_failures).
HOST_FAILURE = "gpufabric_host_failure"
# The preflight checks no host role can repair, the default gate: the default of gpufabric_site_gate_checks, read from
# its argument spec (roles/gpufabric). fabric_health: an inactive NVLink, a degraded fabric or a missing clique is
# hardware or fabric-manager state; fabric_manager: nvidia-fabricmanager down on an NVSwitch system whose driver is
# loaded (nvidia_driver starts it only with a driver it installs); gpu_health: a GPU that needs a reset, a reboot or the
# vendor.
DEFAULT_GATE_CHECKS: tuple[str, ...] = tuple(
    settings.option(settings.SITE_ROLE, "gpufabric_site_gate_checks")["default"])


class SiteError(ValueError):
    """Input from which no gate or summary can be made; the message names the variable."""


def _names(value: t.Any, variable: str) -> list[str]:
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        raise SiteError(f"{variable} must be a list, got {type(value).__name__}")
    return [str(item) for item in value]


def blockers(entry: Mapping, checks: t.Sequence[str]) -> list[str]:
    """Why a host's preflight entry keeps it out: no hardware, then the failed checks named in ``checks``.

    ``checks`` containing ``all`` gates on every failed check.
    """
    found = [NO_HARDWARE] if entry.get("status") == "no_hardware" else []
    every = "all" in checks
    return found + [str(check.get("message")) for check in entry.get("checks") or []
                    if check.get("status") == "fail" and (every or check.get("name") in checks)]


def lost(hosts_all: t.Sequence[str], hosts_active: t.Sequence[str], phase: str) -> dict[str, str]:
    """The hosts of a play that failed or became unreachable in it, each with the reason."""
    active = set(hosts_active)
    return {host: f"failed or unreachable in the {phase} phase" for host in hosts_all if host not in active}


def site_gate(report: Mapping, targets: t.Sequence[str], checks: t.Sequence[str], hosts_all: t.Sequence[str],
              hosts_active: t.Sequence[str]) -> dict:
    """The record of the gate after the preflight: which target hosts go on and which are excluded, and why.

    ``report`` is the preflight report of ``hosts_all`` (``gpufabric.cluster.preflight_report``); ``targets`` the
    GPU hosts the host phase applies to; ``checks`` the gating checks (``gpufabric_site_gate_checks``);
    ``hosts_active`` the hosts still in the play (the others failed or were unreachable in the preflight).
    """
    if not isinstance(report, Mapping) or not isinstance(report.get("hosts"), Mapping):
        raise SiteError("the input must be the report of gpufabric.cluster.preflight_report")
    checks = _names(checks, "gpufabric_site_gate_checks")
    hosts_all = _names(hosts_all, "hosts_all")
    active = set(_names(hosts_active, "hosts_active"))
    wanted = set(_names(targets, "targets"))
    judged = [host for host in hosts_all if host in wanted and host in active]
    # A host the report does not hold was never judged: it does not go on as if it had passed.
    reasons = {host: blockers(report["hosts"][host], checks) if isinstance(report["hosts"].get(host), Mapping)
               else ["not judged by the preflight (no entry in its report)"] for host in judged}
    return {
        "preflight_hosts": hosts_all,
        "preflight_status": {host: entry.get("status") for host, entry in report["hosts"].items()},
        "preflight_ready": bool((report.get("summary") or {}).get("ready")),
        "ready": [host for host in judged if not reasons[host]],
        "excluded": {host: found for host, found in reasons.items() if found},
        "failed": lost(hosts_all, list(active), "preflight"),
    }


def site_lost(site: Mapping, hosts_all: t.Sequence[str], hosts_active: t.Sequence[str], phase: str,
              hostvars: Mapping | None = None) -> dict:
    """``site`` with the hosts lost in ``phase`` added to ``failed`` (a host's earlier reason is kept).

    With ``hostvars``, a host of ``hosts_all`` that holds :data:`HOST_FAILURE` (a failure the phase deferred: the host
    stayed in the play) is lost too, with that failure as its reason.
    """
    hosts_all = _names(hosts_all, "hosts_all")
    found = lost(hosts_all, _names(hosts_active, "hosts_active"), str(phase))
    if hostvars is not None and not isinstance(hostvars, Mapping):
        raise SiteError(f"hostvars must be a mapping, got {type(hostvars).__name__}")
    for host in hosts_all:
        host_vars = (hostvars or {}).get(host)
        failure = host_vars.get(HOST_FAILURE) if isinstance(host_vars, Mapping) else None
        if failure is not None:
            found[host] = f"failed in the {phase} phase: {failure}"
    return {**site, "failed": {**found, **(site.get("failed") or {})}}


def site_summary(site: Mapping | None, converged: t.Sequence[str], cluster_failure: t.Any = None,
                 validation: Mapping | None = None, report_dir: str | None = None, written: bool = True) -> dict:
    """The summary of a site run (written as site-summary.json), with its ``result`` (``pass`` or ``fail``) and,
    when it failed, the one-line ``message`` saying why.

    ``site`` is the record of :func:`site_gate` (None when the gate did not run); ``cluster_failure`` what the
    cluster phase deferred (``gpufabric_cluster_failure``); ``validation`` the validation result
    (``gpufabric_validation``, None when it did not run); ``report_dir`` the report directory
    (``gpufabric_report_dir`` resolved by :func:`...plugin_utils.report_dir.report_dir`). ``written`` false (check
    mode, where no report is written) leaves every path in ``reports`` null, so the summary never points at a file
    the run did not write.
    Every reason and failure is redacted (:func:`...plugin_utils.redact.redact`): a message that quoted a URL with
    credentials or a mapping holding a secret (a kubeconfig, registry credentials) never reaches the summary.
    """
    if not isinstance(report_dir, str) or not report_dir:
        raise SiteError("report_dir must be the report directory (gpufabric_report_dir, resolved)")
    site = site or {}
    excluded = {host: redact(reasons) for host, reasons in dict(site.get("excluded") or {}).items()}
    failed = {host: redact(reason) for host, reason in dict(site.get("failed") or {}).items()}
    failures = [redact(failure) for failure in (validation or {}).get("failures") or []]
    cluster_failure = redact(cluster_failure)
    summary = {
        "preflight": {"ready": site.get("preflight_ready"), "status": dict(site.get("preflight_status") or {})},
        "excluded_hosts": excluded,
        "failed_hosts": failed,
        # sorted: the group the hosts join (group_by) lists them in the order they finished, which differs from run
        # to run, and a second run over unchanged hosts must write the same summary
        "converged_hosts": sorted(_names(converged or [], "converged")),
        "cluster_failure": cluster_failure,
        "validation_failures": failures,
        "validation_ran": validation is not None,
        "reports": {
            "preflight": f"{report_dir}/preflight.md" if written else None,
            "validation": f"{report_dir}/validation.md" if written and validation is not None else None,
            "summary": f"{report_dir}/site-summary.md" if written else None,
        },
        "reports_written": written,
        "result": "fail" if excluded or failed or cluster_failure is not None or failures else "pass",
    }
    summary["message"] = failure_message(summary) if summary["result"] == "fail" else None
    return summary


def failure_message(summary: Mapping) -> str:
    """One line that says why a site run failed, for the last task of the run."""
    return (f"site run incomplete: excluded {', '.join(summary['excluded_hosts']) or 'none'}; "
            f"failed {', '.join(summary['failed_hosts']) or 'none'}; "
            f"cluster {'ok' if summary['cluster_failure'] is None else summary['cluster_failure']}; "
            f"validation {'; '.join(summary['validation_failures']) or 'ok'}. "
            + (f"See {summary['reports']['summary']}" if summary.get("reports_written", True)
               else "No report written (check mode)."))
