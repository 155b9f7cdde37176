# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parse perftest bandwidth output (ib_write_bw, ib_read_bw, ib_send_bw) into rows in Gb/s.

The logic of the ``gpufabric.cluster.parse_ib_write_bw`` filter; errors are :class:`IbWriteBwParseError`.
A figure printed as ``nan``, ``inf`` or ``-inf`` (or one too large for a float, or a whole number of more than
:data:`MAX_DIGITS` digits) in a row of the table is a parse error naming the line and the column: such a row is no
measurement, and is never skipped as noise. Every line is read in time linear in its length, and an output longer than
:data:`...arguments.MAX_OUTPUT_CHARACTERS` is refused: a pod's log cannot hold the controller.
"""

from __future__ import annotations

import math
import re
import typing as t

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments

# perftest prints MiB/sec (older builds: MB/sec, also 2^20 bytes) unless --report_gbits asks for Gb/sec.
_TO_GBPS = {"Gb/sec": 1.0, "MiB/sec": 1048576 * 8 / 1e9, "MB/sec": 1048576 * 8 / 1e9}
LARGE_MESSAGE_BYTES = 65536
# The most digits of a whole number perftest prints (bytes, iterations, service level): 18 hold any 64-bit count.
MAX_DIGITS = 18


class IbWriteBwParseError(ValueError):
    """Input the ``parse_ib_write_bw`` filter cannot use; the message says what is wrong."""


_DASHES_RE = re.compile(r"^-{20,}$")
# Where the next key of a header line starts: after two or more spaces (only from the start of a run, so a run of
# spaces is scanned once), at a letter.
_NEXT_KEY_RE = re.compile(r"(?<!\s)\s{2,}(?=[A-Za-z])")
# A unit holds no bracket: a label that opens one and never closes it stops at the next one, not the line's end.
_COLUMN_RE = re.compile(r"#\w+|BW peak\[[^\]\[]+\]|BW average\[[^\]\[]+\]|MsgRate\[[^\]\[]+\]")
_NUMBER_RE = re.compile(r"^(?:-?\d+(?:\.\d+)?|[-+]?(?i:nan|inf(?:inity)?))$")
_LABELS = {"bytes": "#bytes", "iterations": "#iterations", "sl": "#sl", "peak": "BW peak", "average": "BW average",
           "msg_rate": "MsgRate"}
_INTEGER_COLUMNS = ("bytes", "iterations", "sl")


def _pairs(line: str) -> list[tuple[str, str]]:
    """The ``key : value`` pairs of a header line, two to a line where two or more spaces part them
    (``Dual-port       : OFF          Device         : mlx5_0``); a key starts with a letter, a value runs to the
    next key (over a ``:`` that no key precedes) and is never empty."""
    parts = line.split(":")
    pairs = []
    key, value = parts[0].strip(), ""
    for index, part in enumerate(parts[1:], start=1):
        following = _NEXT_KEY_RE.search(part) if index < len(parts) - 1 else None
        if index < len(parts) - 1 and following is None:
            value += part + ":"
            continue
        value += part[:following.start()] if following else part
        if key[:1].isalpha() and value.strip():
            pairs.append((key, value.strip()))
        key, value = (part[following.end():].strip() if following else ""), ""
    return pairs


def _figure(values: dict, key: str, factor: float = 1.0) -> float:
    """The figure of column ``key`` of a row times ``factor``; one that is not a finite number is refused."""
    value = float(values[key]) * factor
    if not math.isfinite(value):
        cell = values[key]
        shown = repr(cell) if len(cell) <= 20 else f"a number of {len(cell)} characters"
        raise IbWriteBwParseError(f"line {values['_line']}: {_LABELS[key]} is {shown}, not a finite number")
    return value


def _count(values: dict, key: str) -> int:
    """The whole number of column ``key`` of a row; more than :data:`MAX_DIGITS` digits are refused."""
    if len(values[key]) > MAX_DIGITS:
        raise IbWriteBwParseError(f"line {values['_line']}: {_LABELS[key]} has {len(values[key])} digits, more than a "
                                  "count perftest prints")
    return int(values[key])


def _column_key(label: str) -> str:
    if label.startswith("BW peak"):
        return "peak"
    if label.startswith("BW average"):
        return "average"
    if label.startswith("MsgRate"):
        return "msg_rate"
    return label.lstrip("#")


def _unit_of(columns: list[str]) -> str:
    for label in columns:
        if label.startswith("BW average"):
            unit = label[label.index("[") + 1:-1]
            if unit not in _TO_GBPS:
                raise IbWriteBwParseError(f"unknown bandwidth unit {unit!r} in {label!r}")
            return unit
    raise IbWriteBwParseError("the table has no 'BW average[...]' column")


def parse_ib_write_bw(output: t.Any) -> dict:
    """Parse perftest bandwidth output.

    Returns ``test`` (the banner, e.g. ``RDMA_Write BW Test``), ``bidirectional`` (the banner says
    ``Bidirectional``: a ``-b`` run, whose figures are the sum of both directions), ``settings`` (the header's
    key/value pairs), ``unit`` (as printed), ``rows`` (``bytes``, ``iterations``, ``bw_peak_gbps`` (``None``
    when not measured), ``bw_average_gbps``, ``msg_rate_mpps``, and ``sl`` when QoS is shown) and
    ``best_average_gbps``: the best average over messages of at least 64 KiB (``None`` when no row is that
    large). Rows whose byte count, iteration count or service level is not a whole number are not perftest's.
    """
    output = arguments.bounded_output("_input", output)
    if isinstance(output, (list, tuple)):
        output = "\n".join(str(line) for line in output)
    if not isinstance(output, str):
        raise IbWriteBwParseError(f"expected the tool's output as text, got {type(output).__name__}")
    lines = [line.rstrip() for line in output.splitlines()]
    test = None
    settings: dict[str, str] = {}
    columns: list[str] = []
    rows: list[dict] = []
    in_header = False
    peak_measured = True
    for number, line in enumerate(lines, start=1):
        stripped = line.strip()
        if _DASHES_RE.match(stripped):
            in_header = test is None and not settings and not columns
            continue
        if "BW peak won't be measured" in stripped:
            peak_measured = False
            continue
        if stripped.endswith(" Test") and test is None and not columns:
            test = stripped
            in_header = True
            continue
        if in_header and test is not None and ":" in stripped and not columns:
            for key, value in _pairs(stripped):
                settings.setdefault(key, value)
            continue
        if stripped.startswith("#bytes"):
            columns = _COLUMN_RE.findall(stripped)
            continue
        if not columns:
            continue
        cells = stripped.split()
        if len(cells) != len(columns) or not all(_NUMBER_RE.match(cell) for cell in cells):
            continue
        values = {_column_key(label): cell for label, cell in zip(columns, cells, strict=True)}
        if not all(values.get(key, "0").isdigit() for key in _INTEGER_COLUMNS) or "average" not in values:
            continue
        values["_line"] = str(number)
        rows.append(values)
    if not columns:
        raise IbWriteBwParseError("no '#bytes ...' bandwidth table found in the output")
    unit = _unit_of(columns)
    factor = _TO_GBPS[unit]
    parsed_rows = []
    for values in rows:
        peak = _figure(values, "peak", factor) if "peak" in values and peak_measured else None
        row = {"bytes": _count(values, "bytes"), "iterations": _count(values, "iterations"),
               "bw_peak_gbps": round(peak, 4) if peak is not None else None,
               "bw_average_gbps": round(_figure(values, "average", factor), 4),
               "msg_rate_mpps": _figure(values, "msg_rate") if "msg_rate" in values else None}
        if "sl" in values:
            row["sl"] = _count(values, "sl")
        parsed_rows.append(row)
    if not parsed_rows:
        raise IbWriteBwParseError("the bandwidth table has no rows (did the test fail?)")
    large = [row["bw_average_gbps"] for row in parsed_rows if row["bytes"] >= LARGE_MESSAGE_BYTES]
    return {"test": test, "bidirectional": bool(test and "Bidirectional" in test.split()),
            "settings": settings, "unit": unit, "rows": parsed_rows,
            "best_average_gbps": max(large) if large else None}
