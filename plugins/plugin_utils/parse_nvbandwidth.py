# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parse nvbandwidth output (text or ``-j`` JSON), with or without MPI launcher noise around it.

The logic of the ``gpufabric.cluster.parse_nvbandwidth`` filter; errors are :class:`NvbandwidthParseError`.
"""

from __future__ import annotations

import json
import re
import typing as t


class NvbandwidthParseError(ValueError):
    """Input the ``parse_nvbandwidth`` filter cannot use; the message says what is wrong."""


_RUNNING_RE = re.compile(r"^Running (?P<name>\S+?)\.?\s*$")
_OUTCOME_RE = re.compile(r"^(?P<status>Waived|Not Found|Error):\s*(?P<message>.*)$")
_SUM_RE = re.compile(r"^SUM (?P<name>\S+) (?P<value>[-+0-9.eE]+)\s*$")
_PERF_RE = re.compile(r"^&&&& PERF (?P<name>\S+) (?P<value>[-+0-9.eE]+)")
_HEADER_FIELDS = {
    "version": re.compile(r"^nvbandwidth Version:\s*(?P<value>\S+)"),
    "git_version": re.compile(r"^Built from Git version:\s*(?P<value>\S+)"),
    "cuda_runtime_version": re.compile(r"^CUDA Runtime Version:\s*(?P<value>\S+)"),
    "cuda_driver_version": re.compile(r"^CUDA Driver Version:\s*(?P<value>\S+)"),
    "driver_version": re.compile(r"^Driver Version:\s*(?P<value>\S+)"),
}
_CELL = r"(?:-?\d+(?:\.\d+)?|N/A)"
_ROW_RE = re.compile(rf"^\s*(?P<label>\d+)((?:\s+{_CELL})+)\s*$")
_COLUMNS_RE = re.compile(r"^\s+\d+(?:\s+\d+)*\s*$")


def _number(cell: t.Any) -> float | None:
    if cell is None:
        return None
    text = str(cell).strip()
    if text in ("", "N/A"):
        return None
    try:
        return float(text)
    except ValueError:
        return None


def _statistics(matrix: list[list[float | None]]) -> dict:
    """sum/min/max/average over all numbers, and the same over off-diagonal cells of a square matrix."""
    values = [cell for row in matrix for cell in row if cell is not None]
    stats: dict[str, t.Any] = {
        "sum": round(sum(values), 2) if values else None,
        "min": min(values) if values else None,
        "max": max(values) if values else None,
        "average": round(sum(values) / len(values), 2) if values else None,
        "off_diagonal": None,
    }
    if matrix and all(len(row) == len(matrix) for row in matrix) and len(matrix) > 1:
        off = [cell for i, row in enumerate(matrix) for j, cell in enumerate(row) if i != j and cell is not None]
        if off:
            stats["off_diagonal"] = {"min": min(off), "max": max(off), "average": round(sum(off) / len(off), 2),
                                     "cells": len(off)}
    return stats


def _find_json(text: str) -> dict | None:
    decoder = json.JSONDecoder()
    for match in re.finditer(r"\{", text):
        try:
            document, _end = decoder.raw_decode(text, match.start())
        except ValueError:
            continue
        if isinstance(document, dict) and "nvbandwidth" in document:
            return document["nvbandwidth"]
    return None


def _from_json(document: dict) -> dict:
    testcases = []
    for case in document.get("testcases") or []:
        matrix = [[_number(cell) for cell in row] for row in case.get("bandwidth_matrix") or []]
        entry = {"name": case.get("name"), "status": case.get("status"),
                 "description": case.get("bandwidth_description"), "matrix": matrix,
                 "message": case.get("error") or case.get("message")}
        entry.update(_statistics(matrix))
        for key in ("sum", "min", "max", "average"):
            reported = _number(case.get(key))
            if reported is not None:
                entry[key] = reported
        testcases.append(entry)
    return {"format": "json", "version": document.get("version"), "git_version": document.get("git_version"),
            "cuda_runtime_version": document.get("CUDA Runtime Version"),
            "driver_version": document.get("Driver Version"), "testcases": testcases}


def _from_text(lines: list[str]) -> dict:
    result: dict[str, t.Any] = {"format": "text", "version": None, "git_version": None,
                                "cuda_runtime_version": None, "cuda_driver_version": None, "driver_version": None,
                                "testcases": []}
    current: dict[str, t.Any] | None = None

    def finish() -> None:
        if current is None:
            return
        reported_sum = current.pop("_sum")
        current.update(_statistics(current["matrix"]))
        if reported_sum is not None:
            current["sum"] = reported_sum
        if current["status"] is None:
            current["status"] = "Passed" if current["matrix"] else "Error"
            if not current["matrix"]:
                current["message"] = "no bandwidth matrix in the output"
        result["testcases"].append(current)

    for raw in lines:
        line = raw.rstrip()
        stripped = line.strip()
        if current is None:
            for key, pattern in _HEADER_FIELDS.items():
                match = pattern.match(stripped)
                if match and result[key] is None:
                    result[key] = match.group("value")
        running = _RUNNING_RE.match(stripped)
        if running:
            finish()
            current = {"name": running.group("name"), "status": None, "description": None, "matrix": [],
                       "message": None, "_sum": None}
            continue
        if current is None:
            continue
        outcome = _OUTCOME_RE.match(stripped)
        if outcome:
            current["status"] = outcome.group("status")
            current["message"] = outcome.group("message")
            continue
        total = _SUM_RE.match(stripped) or _PERF_RE.match(stripped)
        if total and total.group("name") == current["name"]:
            current["_sum"] = float(total.group("value"))
            continue
        if current["description"] is None and "bandwidth" in stripped.lower() and "(" in stripped:
            current["description"] = stripped
            continue
        if current["description"] is not None and _COLUMNS_RE.match(line):
            continue
        row = _ROW_RE.match(line)
        if row and current["description"] is not None:
            current["matrix"].append([_number(cell) for cell in row.group(2).split()])
    finish()
    return result


def parse_nvbandwidth(output: t.Any) -> dict:
    """Parse nvbandwidth's text or ``-j`` JSON output into versions and testcases.

    Each testcase: ``name``, ``status`` (Passed, Waived, Not Found, Error), ``description``, ``matrix``
    (rows of numbers, ``None`` for N/A), ``sum``/``min``/``max``/``average`` over its numbers,
    ``off_diagonal`` statistics for square matrices, and ``message`` for waived or failed testcases.
    Lines that are not nvbandwidth's (ssh warnings, Open MPI binding reports) are ignored.
    """
    if isinstance(output, (list, tuple)):
        output = "\n".join(str(line) for line in output)
    if not isinstance(output, str):
        raise NvbandwidthParseError(f"expected the tool's output as text, got {type(output).__name__}")
    document = _find_json(output)
    parsed = _from_json(document) if document is not None else _from_text(output.splitlines())
    if not parsed["testcases"]:
        raise NvbandwidthParseError("no testcase found in the output "
                                    "(expected 'Running <testcase>.' lines or a JSON document with 'nvbandwidth')")
    return parsed
