# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Judge parsed nvbandwidth results of a ComputeDomain: every GPU pair at or above a threshold.

The logic of the ``gpufabric.cluster.judge_nvbandwidth`` filter; errors are :class:`NvbandwidthJudgeError`.
"""

from __future__ import annotations

import re
import typing as t
from collections.abc import Mapping

# Unidirectional NVLink bandwidth per GPU in GB/s by NVLink generation (NVIDIA's published figures:
# NVLink 3 600 GB/s, NVLink 4 900 GB/s, NVLink 5 1.8 TB/s total, i.e. half of it in each direction).
# The default threshold is DEFAULT_PEAK_FRACTION of it; a site sets its own from a known-good baseline.
NVLINK_PEAK_GBPS: tuple[tuple[str, float], ...] = (
    (r"\bG?B[23]00\b", 900.0),  # Blackwell: B200, B300, GB200, GB300 (NVLink 5)
    (r"\bG?H[12]00\b|\bH800\b", 450.0),  # Hopper: H100, H200, GH200, H800 (NVLink 4)
    (r"\bA100\b|\bA800\b", 300.0),  # Ampere (NVLink 3)
)
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


def _pair(matrix: list[list[float | None]], row: int, column: int) -> dict:
    return {"from": row, "to": column, "gbps": matrix[row][column]}


def _judge_testcase(testcase: Mapping, gpus: int, threshold: float) -> tuple[dict, list[str]]:
    name = testcase.get("name")
    verdict: dict[str, t.Any] = {"name": name, "status": "fail", "worst": None, "best": None,
                                 "spread_gbps": None, "spread_percent": None, "below_threshold": []}
    reasons: list[str] = []
    if testcase.get("status") != "Passed":
        message = testcase.get("message") or "no message"
        return verdict, [f"testcase {name}: {testcase.get('status')}: {message}"]
    matrix = testcase.get("matrix") or []
    size = f"{len(matrix)}x{len(matrix[0]) if matrix else 0}"
    if len(matrix) != gpus or any(len(row) != gpus for row in matrix):
        return verdict, [f"testcase {name}: the matrix is {size}, expected {gpus}x{gpus} (nodes x GPUs per node): "
                         "the job did not span every GPU of the ComputeDomain"]
    cells = [(row, column) for row in range(gpus) for column in range(gpus) if row != column]
    missing = [(row, column) for row, column in cells if matrix[row][column] is None]
    if missing:
        listed = ", ".join(f"{row}->{column}" for row, column in missing[:MAX_LISTED_PAIRS])
        reasons.append(f"testcase {name}: {len(missing)} GPU pair(s) without a result (N/A): {listed}")
    measured = [(row, column) for row, column in cells if matrix[row][column] is not None]
    if not measured:
        return verdict, reasons or [f"testcase {name}: no GPU pair was measured"]
    worst = min(measured, key=lambda cell: matrix[cell[0]][cell[1]])
    best = max(measured, key=lambda cell: matrix[cell[0]][cell[1]])
    low, high = matrix[worst[0]][worst[1]], matrix[best[0]][best[1]]
    below = [cell for cell in measured if matrix[cell[0]][cell[1]] < threshold]
    verdict.update(
        worst=_pair(matrix, *worst), best=_pair(matrix, *best), spread_gbps=round(high - low, 2),
        spread_percent=round((high - low) / high * 100, 2) if high else None,
        below_threshold=[_pair(matrix, *cell) for cell in below],
    )
    if below:
        listed = ", ".join(f"{row}->{column} {matrix[row][column]}" for row, column in below[:MAX_LISTED_PAIRS])
        more = f" and {len(below) - MAX_LISTED_PAIRS} more" if len(below) > MAX_LISTED_PAIRS else ""
        reasons.append(f"testcase {name}: {len(below)} GPU pair(s) below {threshold} GB/s: {listed}{more}")
    verdict["status"] = "fail" if reasons else "pass"
    return verdict, reasons


def judge_nvbandwidth(parsed: t.Any, nodes: int, gpus_per_node: int, gpu_model: str | None = None,
                      threshold_gbps: float | None = None, testcases: list[str] | None = None,
                      peak_fraction: float = DEFAULT_PEAK_FRACTION) -> dict:
    """Judge ``parse_nvbandwidth`` output of a job over ``nodes`` x ``gpus_per_node`` GPUs.

    Every selected testcase (all of them unless ``testcases`` names some) must have passed, hold a square
    matrix of one row per GPU, and every off-diagonal pair must be measured and at or above the threshold:
    ``threshold_gbps``, or ``peak_fraction`` of the NVLink peak of ``gpu_model``.
    """
    if not isinstance(parsed, Mapping) or not isinstance(parsed.get("testcases"), list):
        raise NvbandwidthJudgeError("expected the result of gpufabric.cluster.parse_nvbandwidth")
    for label, value in (("nodes", nodes), ("gpus_per_node", gpus_per_node)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise NvbandwidthJudgeError(f"{label} must be a positive integer, got {value!r}")
    if threshold_gbps is not None:
        threshold, source = float(threshold_gbps), "given"
    else:
        threshold = default_threshold(gpu_model, peak_fraction)
        if threshold is None:
            raise NvbandwidthJudgeError(f"no default bandwidth threshold for GPU model {gpu_model!r}; "
                                        "give threshold_gbps")
        source = f"{peak_fraction:.0%} of the NVLink peak of {gpu_model}"
    selected = [case for case in parsed["testcases"] if not testcases or case.get("name") in testcases]
    reasons: list[str] = []
    absent = sorted(set(testcases or []) - {case.get("name") for case in parsed["testcases"]})
    if absent:
        reasons.append(f"testcase(s) not in the output: {', '.join(absent)}")
    if not selected and not absent:
        reasons.append("the output holds no testcase")
    verdicts = []
    for case in selected:
        verdict, case_reasons = _judge_testcase(case, nodes * gpus_per_node, threshold)
        verdicts.append(verdict)
        reasons.extend(case_reasons)
    return {"status": "fail" if reasons else "pass", "reasons": reasons, "threshold_gbps": threshold,
            "threshold_source": source, "gpus": nodes * gpus_per_node, "testcases": verdicts}
