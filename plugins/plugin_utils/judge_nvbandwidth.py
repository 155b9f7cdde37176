# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Judge parsed nvbandwidth results of a ComputeDomain: every GPU pair at or above a threshold.

The logic of the ``gpufabric.cluster.judge_nvbandwidth`` filter; errors are :class:`NvbandwidthJudgeError`
and :class:`...arguments.ArgumentError`.

Waived testcases: nvbandwidth waives a testcase it cannot run on the platform (no peer access, one GPU, no
multicast) and measures nothing for it. Its verdict is ``waived``, never ``pass`` or ``fail``; it does not fail
the run by itself, but a run in which no selected testcase was measured fails (nothing was shown). The text
output does not name a waived testcase; when ``testcases`` is given and the output holds exactly one entry per
named testcase, each named one in its place (nvbandwidth runs ``-t`` testcases in the order given, each printing
one entry), the unnamed entries are named by position.

Bidirectional testcases: each direction's matrix (``_read1``/``_read2`` or ``_write1``/``_write2``) is judged
against the threshold, as each direction of a full-duplex NVLink carries the unidirectional peak; the
``_total`` matrix (their sum) is reported, not judged.

A judged cell above :data:`CELL_CEILING_GBPS` fails as physically impossible; a cell that is not a finite number
(NaN, an infinity) cannot be judged.
"""

from __future__ import annotations

import math
import re
import typing as t
from collections.abc import Mapping

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments

# Unidirectional NVLink bandwidth per GPU in GB/s by NVLink generation (NVIDIA's published figures:
# NVLink 3 600 GB/s, NVLink 4 900 GB/s, NVLink 5 1.8 TB/s total, i.e. half of it in each direction).
# The default threshold is DEFAULT_PEAK_FRACTION of it; a site sets its own from a known-good baseline.
NVLINK_PEAK_GBPS: tuple[tuple[str, float], ...] = (
    (r"\bG?B[23]00\b", 900.0),  # Blackwell: B200, B300, GB200, GB300 (NVLink 5)
    (r"\bG?H[12]00\b|\bH800\b", 450.0),  # Hopper: H100, H200, GH200, H800 (NVLink 4)
    (r"\bA100\b|\bA800\b", 300.0),  # Ampere (NVLink 3)
)
# The most one GPU pair can measure in one direction: the fastest NVLink of the table above (NVLink 5, 900 GB/s each
# way). A cell of a judged matrix (unidirectional, or one direction of a bidirectional testcase) above it is
# physically impossible: a parse or unit error, never a measurement.
CELL_CEILING_GBPS = max(peak for _pattern, peak in NVLINK_PEAK_GBPS)
DEFAULT_PEAK_FRACTION = 0.7
MAX_LISTED_PAIRS = 10


class NvbandwidthJudgeError(ValueError):
    """Input the ``judge_nvbandwidth`` filter cannot use; the message says what is wrong."""


def default_threshold(gpu_model: str | None, peak_fraction: float = DEFAULT_PEAK_FRACTION) -> float | None:
    """The default per-pair threshold in GB/s for a GPU model name, or ``None`` for a model not known here."""
    for pattern, peak in NVLINK_PEAK_GBPS:
        if gpu_model and re.search(pattern, str(gpu_model), re.IGNORECASE):
            return round(peak * peak_fraction, 2)
    return None


def _pair(matrix: list[list[float | None]], row: int, column: int, key: str | None) -> dict:
    pair = {"from": row, "to": column, "gbps": matrix[row][column]}
    if key is not None:
        pair["matrix"] = key
    return pair


def _matrices(testcase: Mapping) -> list[tuple[str | None, str, list]]:
    """(key, label, matrix) of each matrix to judge: every direction of a bidirectional testcase, not its total."""
    name = testcase.get("name")
    entries = [entry for entry in testcase.get("matrices") or [] if isinstance(entry, Mapping)]
    if not entries:
        return [(None, f"testcase {name}", testcase.get("matrix") or [])]
    if len(entries) > 1:
        entries = [entry for entry in entries if not str(entry.get("key") or "").endswith("_total")] or entries
    if len(entries) == 1:
        return [(None, f"testcase {name}", entries[0].get("matrix") or [])]
    judged = []
    for entry in entries:
        key = str(entry.get("key"))
        part = key[len(name) + 1:] if name and key.startswith(f"{name}_") else key
        judged.append((entry.get("key"), f"testcase {name} ({part})", entry.get("matrix") or []))
    return judged


def _cells(label: str, matrix: t.Any, gpus: int) -> tuple[list[tuple[int, int]], list[str]]:
    if not isinstance(matrix, list) or not all(isinstance(row, list) for row in matrix) or not all(
            cell is None or (isinstance(cell, (int, float)) and not isinstance(cell, bool) and math.isfinite(cell))
            for row in matrix for cell in row):
        raise NvbandwidthJudgeError(f"{label}: the matrix must be rows of finite numbers or null "
                                    "(the result of gpufabric.cluster.parse_nvbandwidth)")
    lengths = sorted({len(row) for row in matrix})
    if len(lengths) > 1:
        listed = ", ".join(map(str, lengths[:-1])) + f" and {lengths[-1]}"
        return [], [f"{label}: the matrix has {len(matrix)} rows of {listed} cells, not one length, expected "
                    f"{gpus}x{gpus} (nodes x GPUs per node): the output is cut short or mangled"]
    if len(matrix) != gpus or any(len(row) != gpus for row in matrix):
        return [], [f"{label}: the matrix is {len(matrix)}x{lengths[0] if lengths else 0}, expected {gpus}x{gpus} "
                    "(nodes x GPUs per node): the job did not span every GPU of the ComputeDomain"]
    cells = [(row, column) for row in range(gpus) for column in range(gpus) if row != column]
    missing = [(row, column) for row, column in cells if matrix[row][column] is None]
    reasons = []
    if missing:
        listed = ", ".join(f"{row}->{column}" for row, column in missing[:MAX_LISTED_PAIRS])
        reasons.append(f"{label}: {len(missing)} GPU pair(s) without a result (N/A): {listed}")
    measured = [(row, column) for row, column in cells if matrix[row][column] is not None]
    if not measured:
        reasons = reasons or [f"{label}: no GPU pair was measured"]
    return measured, reasons


def _judge_testcase(testcase: Mapping, gpus: int, threshold: float) -> tuple[dict, list[str]]:
    name = testcase.get("name")
    verdict: dict[str, t.Any] = {"name": name, "status": "fail", "worst": None, "best": None,
                                 "spread_gbps": None, "spread_percent": None, "below_threshold": []}
    if testcase.get("status") == "Waived":
        verdict.update(status="waived", message=testcase.get("message"))
        return verdict, []
    if testcase.get("status") != "Passed":
        message = testcase.get("message") or "no message"
        return verdict, [f"testcase {name}: {testcase.get('status')}: {message}"]
    if testcase.get("unit") not in (None, "GB/s"):
        return verdict, [f"testcase {name} measures {testcase.get('unit')}, not bandwidth in GB/s"]
    reasons: list[str] = []
    pairs: list[dict] = []
    below: list[dict] = []
    for key, label, matrix in _matrices(testcase):
        measured, matrix_reasons = _cells(label, matrix, gpus)
        reasons.extend(matrix_reasons)
        matrix_pairs = [_pair(matrix, row, column, key) for row, column in measured]
        impossible = [pair for pair in matrix_pairs if pair["gbps"] > CELL_CEILING_GBPS]
        if impossible:
            listed = ", ".join(f"{pair['from']}->{pair['to']} {pair['gbps']}" for pair in impossible[:MAX_LISTED_PAIRS])
            more = f" and {len(impossible) - MAX_LISTED_PAIRS} more" if len(impossible) > MAX_LISTED_PAIRS else ""
            reasons.append(f"{label}: {len(impossible)} GPU pair(s) above {CELL_CEILING_GBPS:g} GB/s, what NVLink 5 "
                           f"carries in one direction: {listed}{more}; physically impossible, a parse or unit error, "
                           "not a measurement")
        matrix_below = [pair for pair in matrix_pairs if pair["gbps"] < threshold]
        if matrix_below:
            listed = ", ".join(f"{pair['from']}->{pair['to']} {pair['gbps']}"
                               for pair in matrix_below[:MAX_LISTED_PAIRS])
            more = f" and {len(matrix_below) - MAX_LISTED_PAIRS} more" if len(matrix_below) > MAX_LISTED_PAIRS \
                else ""
            reasons.append(f"{label}: {len(matrix_below)} GPU pair(s) below {threshold} GB/s: {listed}{more}")
        pairs.extend(matrix_pairs)
        below.extend(matrix_below)
    if pairs:
        worst = min(pairs, key=lambda pair: pair["gbps"])
        best = max(pairs, key=lambda pair: pair["gbps"])
        low, high = worst["gbps"], best["gbps"]
        verdict.update(worst=worst, best=best, spread_gbps=round(high - low, 2),
                       spread_percent=round((high - low) / high * 100, 2) if high else None, below_threshold=below)
    verdict["status"] = "fail" if reasons else "pass"
    return verdict, reasons


def _named(cases: list, testcases: list[str] | None) -> list:
    """The parsed testcases, the unnamed waived ones named by position when that is unambiguous."""
    cases = [case for case in cases if isinstance(case, Mapping)]
    if testcases and len(cases) == len(testcases) and any(case.get("name") is None for case in cases) and all(
            case.get("name") in (None, wanted) for case, wanted in zip(cases, testcases, strict=True)):
        return [dict(case, name=wanted) if case.get("name") is None else case
                for case, wanted in zip(cases, testcases, strict=True)]
    return cases


def judge_nvbandwidth(parsed: t.Any, nodes: t.Any, gpus_per_node: t.Any, gpu_model: t.Any = None,
                      threshold_gbps: t.Any = None, testcases: t.Any = None,
                      peak_fraction: t.Any = DEFAULT_PEAK_FRACTION) -> dict:
    """Judge ``parse_nvbandwidth`` output of a job over ``nodes`` x ``gpus_per_node`` GPUs.

    Every selected testcase (all of them unless ``testcases`` names some) must have passed or been waived, hold
    square matrices of one row per GPU, and every off-diagonal pair must be measured and at or above the
    threshold: ``threshold_gbps``, or ``peak_fraction`` of the NVLink peak of ``gpu_model``. At least one
    selected testcase must have been measured.
    """
    parsed = arguments.mapping("_input", parsed)
    if not isinstance(parsed.get("testcases"), list):
        raise NvbandwidthJudgeError("_input must be the result of gpufabric.cluster.parse_nvbandwidth "
                                    "(a mapping with a list of testcases)")
    for label, value in (("nodes", nodes), ("gpus_per_node", gpus_per_node)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise NvbandwidthJudgeError(f"{label} must be a positive integer, got {value!r}")
    gpu_model = arguments.optional(arguments.text, "gpu_model", gpu_model)
    threshold_gbps = arguments.optional(arguments.positive, "threshold_gbps", threshold_gbps)
    peak_fraction = arguments.fraction("peak_fraction", peak_fraction)
    if testcases is not None:
        testcases = arguments.sequence("testcases", testcases)
        if not all(isinstance(name, str) and name for name in testcases):
            raise NvbandwidthJudgeError(f"testcases must be a list of testcase names, got {testcases!r}")
    if threshold_gbps is not None:
        threshold, source = float(threshold_gbps), "given"
    else:
        threshold = default_threshold(gpu_model, peak_fraction)
        if threshold is None:
            raise NvbandwidthJudgeError(f"no default bandwidth threshold for GPU model {gpu_model!r}; "
                                        "give threshold_gbps")
        source = f"{peak_fraction:.0%} of the NVLink peak of {gpu_model}"
    cases = _named(parsed["testcases"], testcases)
    unnamed_waived = [case for case in cases if case.get("name") is None and case.get("status") == "Waived"]
    selected = [case for case in cases if not testcases or case.get("name") in testcases]
    reasons: list[str] = []
    absent = sorted(set(testcases or []) - {case.get("name") for case in cases if isinstance(case.get("name"), str)})
    if absent:
        hint = (f" ({len(unnamed_waived)} testcase(s) were waived, which nvbandwidth's text output does not name; "
                "run it with -j to see which)") if unnamed_waived else ""
        reasons.append(f"testcase(s) not in the output: {', '.join(absent)}{hint}")
    verdicts = []
    for case in selected:
        verdict, case_reasons = _judge_testcase(case, nodes * gpus_per_node, threshold)
        verdicts.append(verdict)
        reasons.extend(case_reasons)
    waived = [verdict["name"] for verdict in verdicts if verdict["status"] == "waived"]
    if not selected and not absent:
        reasons.append("the output holds no testcase")
    elif selected and not absent and len(waived) == len(verdicts):
        reasons.append("no testcase was measured: nvbandwidth waived "
                       f"{', '.join(str(name) if name else '(unnamed)' for name in waived)}")
    return {"status": "fail" if reasons else "pass", "reasons": reasons, "threshold_gbps": threshold,
            "threshold_source": source, "gpus": nodes * gpus_per_node, "testcases": verdicts, "waived": waived}
