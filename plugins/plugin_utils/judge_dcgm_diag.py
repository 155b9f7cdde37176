# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Judge parsed DCGM diagnostics: a run of ``dcgmi diag`` on one node, or of ``dcgmi mndiag`` over one domain.

The logic of the ``gpufabric.cluster.judge_dcgm_diag`` filter; errors are :class:`DcgmDiagJudgeError` and
:class:`...arguments.ArgumentError`.

A run passes when no test failed. Per test and per GPU:

- ``Fail`` (and a status DCGM 4.6 does not write, ``Unknown``) fails the run;
- ``Warn`` is a warning: the run's status is ``warn`` when nothing failed;
- ``Skip`` and ``Not Run`` are notes: DCGM skips a test whose GPU is busy or that the run level does not hold,
  which says nothing about the GPU. A run in which no test ran to a result (every test skipped or not run) fails:
  nothing was shown.

A diagnostic that did not start (``runtime_error``) fails naming why. Each problem names the node (``host``; for
mndiag the host of the result and the ``domain``), the GPU index, the test and DCGM's message, one line per host
and test; at most :data:`MAX_LISTED` lines of each kind, then how many more.
"""

from __future__ import annotations

import typing as t
from collections.abc import Mapping

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments

MAX_LISTED = 20
_RAN = ("Pass", "Fail", "Warn", "Unknown")


class DcgmDiagJudgeError(ValueError):
    """Input the ``judge_dcgm_diag`` filter cannot use; the message says what is wrong."""


def _message(entry: Mapping) -> str | None:
    """The first message DCGM gave for a result or a test: a warning, else the MPI error. Info lines (figures a
    plugin measured, different on every GPU) are not reasons and stay in the parsed result."""
    for warning in entry.get("warnings") or []:
        if isinstance(warning, Mapping) and warning.get("message"):
            return str(warning["message"])
    return str(entry["mpi_error"]) if entry.get("mpi_error") else None


def _what(status: str, status_text: t.Any) -> str:
    return {"Fail": "failed", "Warn": "warned", "Skip": "skipped", "Not Run": "not run"}.get(
        status, f"ended with status {status_text!r}, which DCGM 4.6 does not write")


def _capped(lines: list[str]) -> list[str]:
    if len(lines) <= MAX_LISTED:
        return lines
    return [*lines[:MAX_LISTED], f"and {len(lines) - MAX_LISTED} more"]


def _test_label(test: Mapping) -> str:
    label = str(test.get("name"))
    if test.get("category"):
        label += f" ({test['category']})"
    if test.get("iteration") is not None:
        label += f", iteration {test['iteration'] + 1}"
    return label


def _problems(test: Mapping, where: t.Callable[[Mapping], str]) -> dict[str, list[str]]:
    """Lines for the failed, warned and skipped results of one test, one per host, status and message."""
    lines: dict[str, list[str]] = {"fail": [], "warn": [], "note": []}
    kinds = {"Fail": "fail", "Unknown": "fail", "Warn": "warn", "Skip": "note", "Not Run": "note"}
    groups: dict[tuple[str, str, str | None, t.Any], list[str]] = {}
    for result in test.get("results") or []:
        if not isinstance(result, Mapping) or result.get("status") not in kinds:
            continue
        gpu = f"GPU {result['gpu']}" if result.get("gpu") is not None else \
            f"{result.get('entity_group') or 'entity'} {result.get('entity_id')}"
        key = (where(result), str(result["status"]), _message(result), result.get("status_text"))
        groups.setdefault(key, []).append(gpu)
    for (place, status, message, status_text), entities in groups.items():
        detail = f": {message}" if message else ""
        lines[kinds[status]].append(f"{place}{', '.join(entities)}: {_test_label(test)} "
                                    f"{_what(status, status_text)}{detail}")
    status = test.get("status")
    if status in kinds and not lines[kinds[status]]:
        message = _message(test)
        reason = {"Skip": " (a GPU busy, or a test this run level or GPU does not hold)",
                  "Not Run": " (not in this run level, or an earlier test stopped the run)"}.get(status, "")
        lines[kinds[status]].append(f"{where({})}{_test_label(test)} {_what(status, test.get('status_text'))}"
                                    f"{': ' + message if message else reason}")
    return lines


def judge_dcgm_diag(parsed: t.Any, host: t.Any = None, domain: t.Any = None, run_level: t.Any = None) -> dict:
    """Judge ``parse_dcgm_diag`` output of ``dcgmi diag`` on ``host`` or of ``dcgmi mndiag`` over ``domain``.

    Returns ``status`` (``pass``, ``warn`` or ``fail``), ``failures``, ``warnings`` and ``notes`` (one line each),
    ``kind``, ``host``, ``domain``, ``run_level``, ``version``, ``driver_version``, ``failed_hosts`` (mndiag: the
    hosts with a failed result or a global error; diag: ``host`` when the run failed), ``failed_gpus``
    (``{host, gpu, test}`` of each failed result) and ``tests`` (``name``, ``category``, ``status``, ``iteration``).
    """
    parsed = arguments.mapping("_input", parsed)
    if parsed.get("kind") not in ("diag", "mndiag") or not isinstance(parsed.get("tests"), list):
        raise DcgmDiagJudgeError("_input must be the result of gpufabric.cluster.parse_dcgm_diag "
                                 "(a mapping with kind and a list of tests)")
    kind = parsed["kind"]
    host = arguments.optional(arguments.text, "host", host)
    domain = arguments.optional(arguments.text, "domain", domain)
    if run_level is not None:
        if isinstance(run_level, bool) or not isinstance(run_level, (int, str)) or not str(run_level).strip():
            raise DcgmDiagJudgeError(f"run_level must be dcgmi diag's -r value (1 to 4 or a test name), got "
                                     f"{arguments.type_name(run_level)}")
        run_level = str(run_level).strip()
    if kind == "diag" and host is None:
        raise DcgmDiagJudgeError("host must name the node dcgmi diag ran on, so that each problem names it")
    prefix = f"domain {domain}: " if domain else ""

    def where(result: Mapping) -> str:
        if kind == "diag":
            return f"{prefix}host {host}: "
        host_id = result.get("host_id")
        name = result.get("hostname") or (f"host id {host_id}" if host_id is not None else None)
        return f"{prefix}host {name}: " if name else prefix

    failures: list[str] = []
    warnings: list[str] = []
    notes: list[str] = []
    failed_gpus: list[dict] = []
    failed_hosts: set[str] = set()
    if parsed.get("runtime_error"):
        tool = "dcgmi diag" if kind == "diag" else "dcgmi mndiag"
        failures.append(f"{where({})}{tool} did not run: {parsed['runtime_error']}")
        if kind == "diag":
            failed_hosts.add(str(host))
    for error in parsed.get("errors") or []:
        if isinstance(error, Mapping):
            failures.append(f"{where(error)}{error.get('message') or 'an error without a message'}")
            if error.get("hostname"):
                failed_hosts.add(str(error["hostname"]))
    tests = [test for test in parsed["tests"] if isinstance(test, Mapping)]
    for test in tests:
        lines = _problems(test, where)
        failures.extend(lines["fail"])
        warnings.extend(lines["warn"])
        notes.extend(lines["note"])
        for result in test.get("results") or []:
            if isinstance(result, Mapping) and result.get("status") in ("Fail", "Unknown"):
                name = result.get("hostname") if kind == "mndiag" else host
                failed_gpus.append({"host": name, "gpu": result.get("gpu"), "test": test.get("name")})
                if name:
                    failed_hosts.add(str(name))
        if kind == "diag" and test.get("status") in ("Fail", "Unknown"):
            failed_hosts.add(str(host))
    if not parsed.get("runtime_error"):
        if not tests:
            failures.append(f"{where({})}the output holds no test")
        elif not any(test.get("status") in _RAN for test in tests):
            failures.append(f"{where({})}no test ran to a result: every test was skipped or not run "
                            f"({', '.join(sorted({str(test.get('name')) for test in tests}))})")
    if parsed.get("overall_result") == "Fail" and not failures:
        failures.append(f"{where({})}dcgmi diag --iterations ended with Fail: "
                        f"{parsed.get('overall_message') or 'no message'}")
    if failures and kind == "diag":
        failed_hosts.add(str(host))
    status = "fail" if failures else "warn" if warnings else "pass"
    return {"status": status, "kind": kind, "host": host, "domain": domain, "run_level": run_level,
            "version": parsed.get("version"), "driver_version": parsed.get("driver_version"),
            "failures": _capped(failures), "warnings": _capped(warnings), "notes": _capped(notes),
            "failed_hosts": sorted(failed_hosts), "failed_gpus": failed_gpus,
            "tests": [{"name": test.get("name"), "category": test.get("category"), "status": test.get("status"),
                       "iteration": test.get("iteration")} for test in tests]}
