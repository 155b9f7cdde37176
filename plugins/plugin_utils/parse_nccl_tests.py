# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parse nccl-tests output (all_reduce_perf and the other *_perf binaries), text or the JSON of ``-J``.

The logic of the ``gpufabric.cluster.parse_nccl_tests`` filter; errors are :class:`NcclTestsParseError`.

Formats, as NVIDIA/nccl-tests src/util.cu writes them (NCCL_TESTS_VERSION 2.19.6, JSON_FILE_VERSION 3):
text device lines ``#  Rank %2d Group %2d Pid %6d on %10s device %2d [%04x:%02x:%02x] %s`` (older builds:
no ``Group``, ``[0x%02x]``), rows ``size count type redop root`` then out-of-place and in-place
``time algbw busbw #wrong`` (``#wrong`` is ``N/A`` where not checked; ``-I 1`` adds four per-iteration
columns to each, ``-S 1`` a timestamp; builds before 2.10 have no ``root`` column), and the footer
``# Out of bounds values : N OK|FAILED`` and ``# Avg bus bandwidth    : X``. The JSON object holds
``config.devices`` (``rank``, ``group``, ``pid``, ``hostname``, ``device``, ``device_hex``, ``device_info``),
``results`` (``size``, ``count``, ``type``, ``redop``, ``root`` as a padded string, ``out_of_place`` and
``in_place`` with ``time`` or ``cpu_time``, ``alg_bw``, ``bus_bw``, ``nwrong``; NaN written as ``"nan"``),
``out_of_bounds`` (``count``, ``okay``), ``average_bus_bandwidth`` (``bandwidth``, ``okay``) and ``errors``.

A figure printed as ``nan``, ``inf`` or ``-inf`` (or one too large for a float) is a parse error naming the line and
the field, in the text and in the JSON (where nccl-tests writes NaN as ``"nan"``): a ``#wrong`` of ``inf`` is no
unchecked count and a busbw of ``nan`` no measurement. Every line is read in time linear in its length (no pattern
here backtracks over a run of spaces), a whole number holds at most :data:`MAX_DIGITS` digits, and an output longer
than :data:`...arguments.MAX_OUTPUT_CHARACTERS` is refused: a pod's log cannot hold the controller.
"""

from __future__ import annotations

import json
import math
import re
import typing as t

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments

# The most digits of a whole number nccl-tests prints (a rank, a pid, a size in bytes, a count): 18 digits hold
# any 64-bit count it can print; more is not a number it printed, and Python refuses to convert very long ones.
MAX_DIGITS = 18


class NcclTestsParseError(ValueError):
    """Input the ``parse_nccl_tests`` filter cannot use; the message says what is wrong."""


class _NotFinite(NcclTestsParseError):
    """A figure that is no finite number: the output is refused, not the row skipped."""


# mpirun --tag-output prefixes every line with [job,rank]<stdout>:
_TAG_RE = re.compile(r"^\[\d+,\d+\]<std(?:out|err)>:")
# The patterns read stripped lines: none ends in ``\s*$`` after a lazy or optional part, which would try every
# position of a run of spaces against the rest of it (quadratic in the run's length).
_DEVICE_RE = re.compile(
    r"^#\s+Rank\s+(?P<rank>\d+)(?:\s+Group\s+(?P<group>\d+))?\s+Pid\s+(?P<pid>\d+)\s+on\s+(?P<host>\S+)"
    r"\s+device\s+(?P<gpu>\d+)\s+\[(?P<bus>[^\]]*)\]\s*(?P<name>.*)$")
_OOB_RE = re.compile(r"^#\s*Out of bounds values\s*:\s*(?P<count>\d+)(?:\s+(?P<verdict>OK|FAILED))?$")
_AVG_RE = re.compile(r"^#\s*Avg bus bandwidth\s*:\s*(?P<value>\S+)(?:\s+(?P<verdict>OK|FAILED))?$")
_START_RE = re.compile(r"^#\s*Collective test starting:\s*(?P<name>\S+)")
_ERROR_RE = re.compile(r"^#\s*error:\s*(?P<message>.+)$")
_WORD_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_INT_RE = re.compile(r"^-?\d+$")
_TIMESTAMP_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$|^\d{2}:\d{2}:\d{2}$")


def _shown(token: str) -> str:
    """``token`` for a message: quoted when short, else its length."""
    return repr(token) if len(token) <= 20 else f"a figure of {len(token)} characters"


def _number(token: str, what: str) -> float | None:
    """A printed figure as a float; ``N/A`` (not checked) is ``None``, a figure that is not finite is refused."""
    if token == "N/A":
        return None
    try:
        value = float(token)
    except ValueError:
        raise NcclTestsParseError(f"{_shown(token)} is not a number") from None
    if not math.isfinite(value):
        raise _NotFinite(f"{what} is {_shown(token)}, not a finite number")
    return value


def _whole(digits: str, what: str) -> int:
    """``digits`` (a match of ``-?\\d+``) as an int; more than :data:`MAX_DIGITS` digits are refused."""
    if len(digits.lstrip("-")) > MAX_DIGITS:
        raise NcclTestsParseError(f"{what} has {len(digits.lstrip('-'))} digits, more than a count nccl-tests prints")
    return int(digits)


def _wrong(token: str, what: str) -> int | None:
    value = _number(token, what)
    if value is None:
        return None
    if value < 0 or value != int(value):
        raise NcclTestsParseError(f"#wrong {token!r} is not a count")
    return int(value)


def _placement(tokens: list[str], which: str) -> dict:
    return {"time_us": _number(tokens[0], f"the {which} time"), "algbw_gbps": _number(tokens[1], f"the {which} algbw"),
            "busbw_gbps": _number(tokens[2], f"the {which} busbw"), "wrong": _wrong(tokens[3], f"the {which} #wrong")}


def _text_row(tokens: list[str]) -> dict | None:
    """A data row, or ``None`` when the tokens are not one (log noise); raises on a row cut short."""
    if len(tokens) < 2 or not (_INT_RE.match(tokens[0]) and _INT_RE.match(tokens[1])):
        return None
    if len(tokens) < 4 or not (_WORD_RE.match(tokens[2]) and _WORD_RE.match(tokens[3])):
        raise NcclTestsParseError("a row is cut short")
    while tokens and _TIMESTAMP_RE.match(tokens[-1]):
        tokens = tokens[:-1]
    rest = tokens[4:]
    # With the root column: 1 + 8 figures (1 + 16 with -I 1), or 1 + 4 for a trace replay (in-place only).
    root: int | None = None
    if len(rest) in (5, 9, 17) and _INT_RE.match(rest[0]):
        root, rest = _whole(rest[0], "the root"), rest[1:]
    elif len(rest) != 8:
        raise NcclTestsParseError(f"a row has {len(tokens)} fields, not the columns nccl-tests prints")
    if len(rest) == 4:
        out_of_place, in_place = None, _placement(rest, "in-place")
    else:
        half = len(rest) // 2
        out_of_place, in_place = _placement(rest[:4], "out-of-place"), _placement(rest[half:half + 4], "in-place")
    size, count = _whole(tokens[0], "the size"), _whole(tokens[1], "the count")
    if size < 0 or count < 0:
        raise NcclTestsParseError("a row has a negative size or count")
    return {"size_bytes": size, "count": count, "type": tokens[2], "redop": tokens[3], "root": root,
            "out_of_place": out_of_place, "in_place": in_place}


def _parse_text(text: str) -> dict:
    result: dict[str, t.Any] = {"format": "text", "test": None, "devices": [], "rows": [], "out_of_bounds": None,
                                "out_of_bounds_ok": None, "avg_busbw_gbps": None, "errors": [],
                                "skipped_lines": []}
    for number, raw in enumerate(text.splitlines(), start=1):
        try:
            _text_line(result, _TAG_RE.sub("", raw).strip())
        except _NotFinite as exc:
            raise NcclTestsParseError(f"line {number}: {exc}") from None
    if not (result["test"] or result["devices"] or result["rows"] or result["out_of_bounds"] is not None
            or result["avg_busbw_gbps"] is not None):
        raise NcclTestsParseError("no nccl-tests banner, device line, data row or summary line in the output")
    return result


def _text_line(result: dict, line: str) -> None:
    """Read one stripped line of the text output into ``result``."""
    if not line:
        return
    if line.startswith("#"):
        match = _DEVICE_RE.match(line)
        if match:
            result["devices"].append({
                "rank": _whole(match["rank"], "a device line's rank"),
                "group": _whole(match["group"], "a device line's group") if match["group"] else None,
                "pid": _whole(match["pid"], "a device line's pid"), "host": match["host"],
                "gpu_index": _whole(match["gpu"], "a device line's device"), "pci_bus": match["bus"],
                "name": match["name"] or None})
        elif (match := _OOB_RE.match(line)):
            result["out_of_bounds"] = _whole(match["count"], "the out-of-bounds count")
            result["out_of_bounds_ok"] = result["out_of_bounds"] == 0
        elif (match := _AVG_RE.match(line)):
            result["avg_busbw_gbps"] = _number(match["value"], "the average bus bandwidth")
        elif (match := _START_RE.match(line)):
            result["test"] = match["name"]
        elif (match := _ERROR_RE.match(line)):
            result["errors"].append(match["message"])
        return
    try:
        row = _text_row(line.split())
    except _NotFinite:
        raise
    except NcclTestsParseError as exc:
        result["skipped_lines"].append(f"{line} ({exc})")
        return
    if row is not None:
        result["rows"].append(row)


def _json_number(value: t.Any, what: str) -> float | None:
    """A JSON figure as a float; null (not measured) is ``None``, NaN (``"nan"``) or an infinity is refused."""
    if value is None:
        return None
    if isinstance(value, str) and value.strip().lower() in ("nan", "-nan", "inf", "-inf", "infinity", "-infinity"):
        raise NcclTestsParseError(f"{what} is {value.strip()!r}, not a finite number")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise NcclTestsParseError(f"{what} is {value!r}, not a number")
    if not math.isfinite(value):
        raise NcclTestsParseError(f"{what} is {value!r}, not a finite number")
    return float(value)


def _json_int(value: t.Any, what: str) -> int:
    if isinstance(value, str) and _INT_RE.match(value.strip()):
        return _whole(value.strip(), what)
    if isinstance(value, bool) or not isinstance(value, int):
        raise NcclTestsParseError(f"{what} is {value!r}, not a whole number")
    return value


def _json_placement(value: t.Any, what: str) -> dict | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise NcclTestsParseError(f"{what} is not an object")
    wrong = _json_number(value.get("nwrong"), f"{what}.nwrong")
    if wrong is not None and (wrong < 0 or wrong != int(wrong)):
        raise NcclTestsParseError(f"{what}.nwrong is not a count")
    time_us = value.get("time", value.get("cpu_time"))
    return {"time_us": _json_number(time_us, f"{what}.time"),
            "algbw_gbps": _json_number(value.get("alg_bw"), f"{what}.alg_bw"),
            "busbw_gbps": _json_number(value.get("bus_bw"), f"{what}.bus_bw"),
            "wrong": None if wrong is None else int(wrong)}


def _text_or_none(value: t.Any, what: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise NcclTestsParseError(f"{what} is {value!r}, not a string")
    return value.strip() or None


def _parse_json(data: dict) -> dict:
    results = data.get("results")
    config = data.get("config", {})
    if not isinstance(results, list) or not isinstance(config, dict):
        raise NcclTestsParseError("the JSON has no 'results' list (not nccl-tests -J output)")
    devices = []
    for index, device in enumerate(config.get("devices") or []):
        if not isinstance(device, dict):
            raise NcclTestsParseError(f"config.devices[{index}] is not an object")
        what = f"config.devices[{index}]"
        devices.append({
            "rank": _json_int(device.get("rank"), f"{what}.rank"),
            "group": None if device.get("group") is None else _json_int(device["group"], f"{what}.group"),
            "pid": None if device.get("pid") is None else _json_int(device["pid"], f"{what}.pid"),
            "host": _text_or_none(device.get("hostname"), f"{what}.hostname"),
            "gpu_index": None if device.get("device") is None else _json_int(device["device"], f"{what}.device"),
            "pci_bus": _text_or_none(device.get("device_hex"), f"{what}.device_hex"),
            "name": _text_or_none(device.get("device_info"), f"{what}.device_info")})
    rows = []
    for index, entry in enumerate(results):
        what = f"results[{index}]"
        if not isinstance(entry, dict):
            raise NcclTestsParseError(f"{what} is not an object")
        root = entry.get("root")
        rows.append({
            "size_bytes": _json_int(entry.get("size"), f"{what}.size"),
            "count": _json_int(entry.get("count"), f"{what}.count"),
            "type": _text_or_none(entry.get("type"), f"{what}.type"),
            "redop": _text_or_none(entry.get("redop"), f"{what}.redop"),
            "root": None if root is None else _json_int(root, f"{what}.root"),
            "out_of_place": _json_placement(entry.get("out_of_place"), f"{what}.out_of_place"),
            "in_place": _json_placement(entry.get("in_place"), f"{what}.in_place")})
        if rows[-1]["size_bytes"] < 0 or rows[-1]["count"] < 0:
            raise NcclTestsParseError(f"{what} has a negative size or count")
    oob = data.get("out_of_bounds")
    oob_count = None
    if isinstance(oob, dict) and oob.get("count") is not None:
        oob_count = _json_int(oob["count"], "out_of_bounds.count")
    average = data.get("average_bus_bandwidth")
    avg = _json_number(average.get("bandwidth"), "average_bus_bandwidth.bandwidth") if isinstance(average, dict) \
        else None
    errors = data.get("errors") or []
    if not isinstance(errors, list):
        raise NcclTestsParseError("'errors' is not a list")
    names = [entry.get("experiment_name") for entry in results if isinstance(entry, dict)]
    test = next((name.strip() for name in names if isinstance(name, str) and name.strip()), None)
    return {"format": "json", "test": test, "devices": devices, "rows": rows, "out_of_bounds": oob_count,
            "out_of_bounds_ok": None if oob_count is None else oob_count == 0, "avg_busbw_gbps": avg,
            "errors": [str(error) for error in errors if str(error).strip()], "skipped_lines": []}


def parse_nccl_tests(output: t.Any) -> dict:
    """Parse nccl-tests output: text (stdout) or the JSON written by ``-J`` (a string or the parsed object).

    Returns ``format`` (``text``/``json``), ``test`` (the binary named by ``# Collective test starting``, or
    the JSON rows' ``experiment_name``; ``None`` when not given), ``devices`` (``rank``, ``group``, ``pid``,
    ``host``, ``gpu_index``, ``pci_bus``, ``name``) and ``rows`` (``size_bytes``, ``count``, ``type``,
    ``redop``, ``root`` (``None`` when not printed), ``out_of_place`` (``None`` when not run) and ``in_place``,
    each ``time_us``, ``algbw_gbps``, ``busbw_gbps``, ``wrong`` (``None`` for ``N/A``)), both as printed, in
    order, duplicates kept, ``out_of_bounds`` and ``out_of_bounds_ok``,
    ``avg_busbw_gbps`` (``None`` when the summary is missing: a truncated run), ``peak_busbw_gbps`` (the
    highest busbw of any row and placement, ``None`` without one), ``wrong_total`` (the sum of the checked
    ``#wrong``), ``complete`` (the summary lines were printed), ``errors`` (``# error:`` lines, JSON ``errors``)
    and ``skipped_lines`` (lines that start like a row but are not one, e.g. cut short, with the reason).
    An output longer than :data:`...arguments.MAX_OUTPUT_CHARACTERS` is refused (:class:`...arguments.ArgumentError`
    naming ``_input``).
    """
    output = arguments.bounded_output("_input", output)
    if isinstance(output, (bytes, bytearray)):
        try:
            output = output.decode("utf-8")
        except UnicodeDecodeError:
            raise NcclTestsParseError("the output is not UTF-8 text") from None
    if isinstance(output, dict):
        result = _parse_json(output)
    elif isinstance(output, str):
        stripped = output.strip()
        if not stripped:
            raise NcclTestsParseError("the output is empty")
        if stripped.startswith("{"):
            try:
                data = json.loads(stripped)
            except ValueError as exc:
                raise NcclTestsParseError(f"the output starts like JSON but is not JSON ({exc.args[0]})") from None
            except RecursionError:
                raise NcclTestsParseError("the output's JSON nests lists and mappings deeper than a JSON reader "
                                          "follows (nccl-tests -J nests four levels)") from None
            if not isinstance(data, dict):
                raise NcclTestsParseError("the JSON is not an object")
            result = _parse_json(data)
        else:
            result = _parse_text(output)
    else:
        raise NcclTestsParseError(f"expected the tool's output as a string or the -J JSON object, got "
                                  f"{type(output).__name__}")
    busbws = [placement["busbw_gbps"] for row in result["rows"] for placement in (row["out_of_place"],
              row["in_place"]) if placement is not None and placement["busbw_gbps"] is not None]
    result["peak_busbw_gbps"] = max(busbws) if busbws else None
    result["wrong_total"] = sum(placement["wrong"] for row in result["rows"]
                                for placement in (row["out_of_place"], row["in_place"])
                                if placement is not None and placement["wrong"] is not None)
    result["complete"] = result["out_of_bounds"] is not None and result["avg_busbw_gbps"] is not None
    return result
