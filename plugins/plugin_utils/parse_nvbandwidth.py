# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parse nvbandwidth output (text or ``-j`` JSON), with or without MPI launcher noise around it.

The logic of the ``gpufabric.cluster.parse_nvbandwidth`` filter; errors are :class:`NvbandwidthParseError`.

How nvbandwidth (v0.5 to v0.8) prints a testcase, from its ``nvbandwidth.cpp`` and ``output.cpp``:

- a testcase it runs opens with ``Running <name>.``; each matrix it measures follows as a description line
  (``... bandwidth (GB/s)``, or ``(ns)`` for the latency testcases), a line of column labels, one line per row,
  a blank line and ``SUM <key> <sum>`` (``&&&& PERF <key> <sum><unit>`` with ``--perfFormatter``). A
  bidirectional device-to-device testcase prints three matrices, keyed ``<name>_read1``/``<name>_read2``/
  ``<name>_total`` (``_write1``/``_write2``/``_total`` for the write testcases), each with its own SUM line;
- a testcase whose prerequisites are missing is not run: nvbandwidth prints ``Waived: `` in place of the
  ``Running`` line, without its name (v0.4 and older printed ``Waiving <name>.``). Such a testcase is kept as
  ``Waived`` with ``name`` ``None``; it never inherits the matrix of the testcase before it;
- a testcase name that nvbandwidth does not know prints ``ERROR: Testcase <name> not found!``;
- an error while running prints ``Error: <message>`` after the ``Running`` line.

In ``-j`` JSON a waived testcase is named; the matrices of a bidirectional testcase are appended to one
``bandwidth_matrix`` (3 x N rows of N cells) and ``sum``/``bandwidth_description`` are those of the last (total)
matrix; they are split here into the same three matrices the text output shows.

A cell, sum or statistic printed as ``nan``, ``inf`` or ``-inf`` (or a number too large for a float) is a parse
error naming the line or the JSON field: such a cell is no measurement, and is never read as N/A.

The JSON document is found where ``{"nvbandwidth":`` opens it (its one top-level key, as ``output.cpp`` writes
it), at most :data:`MAX_JSON_ATTEMPTS` such places tried, so that the work stays linear in the output however many
``{`` the launcher's noise holds; an output longer than :data:`...arguments.MAX_OUTPUT_CHARACTERS` is refused.
"""

from __future__ import annotations

import json
import math
import re
import typing as t
from collections.abc import Mapping

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments

STATUSES = ("Passed", "Waived", "Not Found", "Error")
_BIDIRECTIONAL_KEYS = {"read": ("read1", "read2", "total"), "write": ("write1", "write2", "total")}
# Where the -j document can start: its one top-level key is "nvbandwidth". Each place that looks like it but is not
# a whole document costs a pass over the rest of the output, so only this many are tried (a launcher log holds one
# document; a log with more broken starts than this is not one run's).
MAX_JSON_ATTEMPTS = 16


class NvbandwidthParseError(ValueError):
    """Input the ``parse_nvbandwidth`` filter cannot use; the message says what is wrong."""


_RUNNING_RE = re.compile(r"^Running (?P<name>\S+?)\.?\s*$")
_WAIVING_RE = re.compile(r"^Waiving (?P<name>\S+?)\.?\s*$")
_WAIVED_RE = re.compile(r"^Waived:\s*(?P<message>.*)$")
_NOT_FOUND_RE = re.compile(r"^ERROR:\s*(?P<message>Testcase (?:index )?(?P<name>\S+) (?:not found!|out of bound!).*)$")
_OUTCOME_RE = re.compile(r"^(?P<status>Not Found|Error):\s*(?P<message>.*)$")
_NOT_FINITE = r"[-+]?(?i:nan|inf(?:inity)?)"
_SUM_RE = re.compile(rf"^SUM (?P<key>\S+) (?P<value>[-+0-9.eE]+|{_NOT_FINITE})\s*$")
_PERF_RE = re.compile(rf"^&&&& PERF (?P<key>\S+) (?P<value>[-+]?[0-9.]+(?:[eE][-+]?\d+)?|{_NOT_FINITE})")
_DESCRIPTION_RE = re.compile(r"^(?=.*[A-Za-z]).*\((?P<unit>GB/s|ns)\)$")
_HEADER_FIELDS = {
    "version": re.compile(r"^nvbandwidth Version:\s*(?P<value>\S+)"),
    "git_version": re.compile(r"^Built from Git version:\s*(?P<value>\S+)"),
    "cuda_runtime_version": re.compile(r"^CUDA Runtime Version:\s*(?P<value>\S+)"),
    "cuda_driver_version": re.compile(r"^CUDA Driver Version:\s*(?P<value>\S+)"),
    "driver_version": re.compile(r"^Driver Version:\s*(?P<value>\S+)"),
}
_JSON_START_RE = re.compile(r'\{\s*"nvbandwidth"\s*:')
_CELL = rf"(?:-?\d+(?:\.\d+)?|N/A|{_NOT_FINITE})"
_ROW_RE = re.compile(rf"^\s*(?P<label>\d+)((?:\s+{_CELL})+)\s*$")
_COLUMNS_RE = re.compile(r"^\s+\d+(?:\s+\d+)*\s*$")


def _number(cell: t.Any, what: str) -> float | None:
    """A cell or figure as a float; ``None`` for N/A, empty or no number; one that is not finite is refused."""
    if cell is None or isinstance(cell, bool):
        return None
    if isinstance(cell, (int, float)):
        value = float(cell)
    else:
        text = str(cell).strip()
        if text in ("", "N/A"):
            return None
        try:
            value = float(text)
        except ValueError:
            return None
    if not math.isfinite(value):
        shown = repr(cell) if len(str(cell)) <= 20 else f"a number of {len(str(cell))} characters"
        raise NvbandwidthParseError(f"{what} is {shown}, not a finite number")
    return value


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


def _matrix_entry(key: str | None, description: str | None, matrix: list, reported_sum: float | None) -> dict:
    unit = None
    if description:
        match = _DESCRIPTION_RE.match(description)
        unit = match.group("unit") if match else None
    entry = {"key": key, "description": description, "unit": unit, "matrix": matrix}
    entry.update(_statistics(matrix))
    if reported_sum is not None:
        entry["sum"] = reported_sum
    return entry


def _testcase(name: str | None, status: str | None, message: str | None = None) -> dict:
    return {"name": name, "status": status, "description": None, "unit": None, "matrix": [], "message": message,
            "sum": None, "min": None, "max": None, "average": None, "off_diagonal": None, "matrices": []}


def _primary(testcase: dict) -> dict:
    """Copy the last matrix (the total of a bidirectional testcase) to the testcase's own fields."""
    if testcase["matrices"]:
        last = testcase["matrices"][-1]
        for key in ("description", "unit", "matrix", "sum", "min", "max", "average", "off_diagonal"):
            testcase[key] = last[key]
    if testcase["status"] is None:
        if any(entry["matrix"] for entry in testcase["matrices"]):
            testcase["status"] = "Passed"
        else:
            testcase["status"], testcase["message"] = "Error", "no bandwidth matrix in the output"
    return testcase


def _find_json(text: str) -> tuple[dict | None, bool]:
    """The ``nvbandwidth`` mapping of the first whole ``-j`` document in ``text`` (or ``None``), and whether a
    place that starts like one nests deeper than a JSON reader follows (read as not a document)."""
    decoder = json.JSONDecoder()
    too_deep = False
    for attempt, match in enumerate(_JSON_START_RE.finditer(text)):
        if attempt == MAX_JSON_ATTEMPTS:
            break
        try:
            document, _end = decoder.raw_decode(text, match.start())
        except ValueError:
            continue
        except RecursionError:
            too_deep = True
            continue
        if isinstance(document, dict) and "nvbandwidth" in document:
            if not isinstance(document["nvbandwidth"], dict):
                raise NvbandwidthParseError("the JSON document's 'nvbandwidth' must be a mapping, got "
                                            f"{type(document['nvbandwidth']).__name__}")
            return document["nvbandwidth"], too_deep
    return None, too_deep


def _json_text(case: Mapping, key: str) -> str | None:
    value = case.get(key)
    return str(value) if isinstance(value, (str, int, float)) and not isinstance(value, bool) else None


def _json_matrices(name: str | None, case: Mapping) -> list[dict]:
    rows = case.get("bandwidth_matrix") or []
    if not isinstance(rows, list) or not all(isinstance(row, list) for row in rows):
        raise NvbandwidthParseError(f"testcase {name}: bandwidth_matrix must be a list of rows")
    matrix = [[_number(cell, f"testcase {name}: bandwidth_matrix[{row_index}][{column}]")
               for column, cell in enumerate(row)] for row_index, row in enumerate(rows)]
    if not matrix:
        return []
    description = _json_text(case, "bandwidth_description")
    columns = len(matrix[0])
    direction = next((word for word in _BIDIRECTIONAL_KEYS if name and word in name), None)
    if name and "bidirectional" in name and direction and columns and len(matrix) == 3 * columns:
        parts = [matrix[index * columns:(index + 1) * columns] for index in range(3)]
        return [_matrix_entry(f"{name}_{suffix}", description if suffix == "total" else None, part,
                              _number(case.get("sum"), f"testcase {name}: sum") if suffix == "total" else None)
                for suffix, part in zip(_BIDIRECTIONAL_KEYS[direction], parts, strict=True)]
    entry = _matrix_entry(name, description, matrix, _number(case.get("sum"), f"testcase {name}: sum"))
    for key in ("min", "max", "average"):
        reported = _number(case.get(key), f"testcase {name}: {key}")
        if reported is not None:
            entry[key] = reported
    return [entry]


def _from_json(document: Mapping) -> dict:
    cases = document.get("testcases") or []
    if not isinstance(cases, list) or not all(isinstance(case, Mapping) for case in cases):
        raise NvbandwidthParseError("the JSON document's 'testcases' must be a list of mappings")
    testcases = []
    for case in cases:
        name = _json_text(case, "name")
        status = _json_text(case, "status")
        message = _json_text(case, "error") or _json_text(case, "message")
        if status == "ERROR":  # nvbandwidth's status for a testcase name it does not know
            status = "Not Found"
        elif status == "Running":
            status, message = "Error", message or "the testcase did not finish (status Running)"
        elif status not in STATUSES:
            status, message = "Error", f"unknown testcase status {status!r}"
        entry = _testcase(name, status, message)
        entry["matrices"] = _json_matrices(name, case) if status == "Passed" else []
        testcases.append(_primary(entry))
    return {"format": "json", "version": _json_text(document, "version"),
            "git_version": _json_text(document, "git_version"),
            "cuda_runtime_version": _json_text(document, "CUDA Runtime Version"),
            "cuda_driver_version": _json_text(document, "CUDA Driver Version"),
            "driver_version": _json_text(document, "Driver Version"), "testcases": testcases}


class _TextParser:
    """The text output, line by line: the testcase being read and the matrix being read within it."""

    def __init__(self) -> None:
        self.result: dict[str, t.Any] = {"format": "text", "version": None, "git_version": None,
                                         "cuda_runtime_version": None, "cuda_driver_version": None,
                                         "driver_version": None, "testcases": []}
        self.current: dict | None = None
        self.block: dict | None = None  # {description, rows}
        self.number = 0  # the line being read, from 1

    def close_block(self, key: str | None = None, reported_sum: float | None = None) -> None:
        if self.block is not None and self.current is not None and (self.block["rows"] or key):
            self.current["matrices"].append(_matrix_entry(key, self.block["description"], self.block["rows"],
                                                          reported_sum))
        self.block = None

    def finish(self) -> None:
        self.close_block()
        if self.current is not None:
            self.result["testcases"].append(_primary(self.current))
        self.current = None

    def add(self, entry: dict) -> None:
        self.finish()
        self.result["testcases"].append(_primary(entry))

    def line(self, raw: str) -> None:
        self.number += 1
        line = raw.rstrip()
        stripped = line.strip()
        if self.current is None and not self.result["testcases"]:
            for key, pattern in _HEADER_FIELDS.items():
                match = pattern.match(stripped)
                if match and self.result[key] is None:
                    self.result[key] = match.group("value")
        running = _RUNNING_RE.match(stripped)
        if running:
            self.finish()
            self.current = _testcase(running.group("name"), None)
            return
        waived = _WAIVED_RE.match(stripped)
        if waived:
            self.add(_testcase(None, "Waived", waived.group("message").strip() or None))
            return
        waiving = _WAIVING_RE.match(stripped)
        if waiving:
            self.add(_testcase(waiving.group("name"), "Waived"))
            return
        not_found = _NOT_FOUND_RE.match(stripped)
        if not_found:
            self.add(_testcase(not_found.group("name"), "Not Found", not_found.group("message")))
            return
        if self.current is None:
            return
        self.in_testcase(line, stripped)

    def in_testcase(self, line: str, stripped: str) -> None:
        current = t.cast(dict, self.current)
        outcome = _OUTCOME_RE.match(stripped)
        if outcome:
            self.close_block()
            current["status"], current["message"] = outcome.group("status"), outcome.group("message")
            return
        total = _SUM_RE.match(stripped) or _PERF_RE.match(stripped)
        if total and total.group("key").startswith(current["name"]):
            key = total.group("key")
            self.close_block(key, _number(total.group("value"), f"line {self.number}: the sum of {key}"))
            return
        if _DESCRIPTION_RE.match(stripped):
            self.close_block()
            self.block = {"description": stripped, "rows": []}
            return
        if self.block is None:
            return
        if not self.block["rows"] and _COLUMNS_RE.match(line):
            return
        row = _ROW_RE.match(line)
        if row:
            index = len(self.block["rows"])
            self.block["rows"].append([_number(cell, f"line {self.number}: testcase {current['name']}, row {index} "
                                                     f"column {column}")
                                       for column, cell in enumerate(row.group(2).split())])


def _from_text(lines: list[str]) -> dict:
    parser = _TextParser()
    for raw in lines:
        parser.line(raw)
    parser.finish()
    return parser.result


def parse_nvbandwidth(output: t.Any) -> dict:
    """Parse nvbandwidth's text or ``-j`` JSON output into versions and testcases.

    Each testcase: ``name`` (``None`` for a testcase the text output announces only as ``Waived:``),
    ``status`` (Passed, Waived, Not Found, Error), ``message`` for waived or failed testcases, ``matrices``
    (each ``key``, ``description``, ``unit`` (``GB/s`` or ``ns``), ``matrix`` (rows of numbers, ``None`` for
    N/A), ``sum``/``min``/``max``/``average`` and ``off_diagonal`` statistics for a square matrix), and the
    fields of its last matrix (the total of a bidirectional testcase) at the testcase's top level.
    Lines that are not nvbandwidth's (ssh warnings, Open MPI binding reports) are ignored. An output longer than
    :data:`...arguments.MAX_OUTPUT_CHARACTERS` is refused (:class:`...arguments.ArgumentError` naming ``_input``).
    """
    output = arguments.bounded_output("_input", output)
    if isinstance(output, (list, tuple)):
        output = "\n".join(str(line) for line in output)
    if not isinstance(output, str):
        raise NvbandwidthParseError(f"expected the tool's output as text, got {type(output).__name__}")
    document, too_deep = _find_json(output)
    parsed = _from_json(document) if document is not None else _from_text(output.splitlines())
    if not parsed["testcases"] and too_deep:
        raise NvbandwidthParseError("no testcase found in the output: its JSON document nests lists and mappings "
                                    "deeper than a JSON reader follows (nvbandwidth -j nests six levels)")
    if not parsed["testcases"]:
        raise NvbandwidthParseError("no testcase found in the output "
                                    "(expected 'Running <testcase>.' lines or a JSON document with 'nvbandwidth')")
    return parsed
