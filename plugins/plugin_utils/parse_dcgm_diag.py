# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parse the JSON that ``dcgmi diag -j`` and ``dcgmi mndiag -j`` (DCGM 4.x) print into tests and per-GPU results.

The logic of the ``gpufabric.cluster.parse_dcgm_diag`` filter; errors are :class:`DcgmDiagParseError` and
:class:`...arguments.ArgumentError`.

What dcgmi 4.6 writes (``dcgmi/Diag.cpp``, ``dcgmi/MnDiag.cpp``, ``nvvs/include/NvvsJsonStrings.h``):

- ``dcgmi diag -j``: ``{"DCGM Diagnostic": {"test_categories": [{"category", "tests": [{"name", "results": [...],
  "test_summary": {...}}]}]}, "entity_groups": [...], "metadata": {"version", "Driver Version Detected"}}``. A
  result names its entity (``entity_group`` ``GPU``, ``entity_id`` the GPU index), its ``status`` and, optionally,
  ``warnings`` (``warning``, ``error_id``, ``error_category``, ``error_severity``) and ``info`` (strings). A test's
  ``test_summary`` holds its overall status and every warning of the test; dcgmi leaves it out for a test that was
  not run. A status is ``Pass``, ``Fail``, ``Warn``, ``Skip`` or ``Not Run``.
- a diagnostic that cannot start prints ``{"DCGM Diagnostic": {"runtime_error": ..., "version": ...}}`` only.
- ``dcgmi diag --iterations N -j`` prints ``{"Overall Result", "iterations": [<one document per run>]}``; the tests
  of every iteration are read, each with its ``iteration`` (0 first; ``None`` for a single run), and the
  ``Overall Result`` and its ``warning`` as ``overall_result`` and ``overall_message`` (``None`` for one run).
- ``dcgmi mndiag -j``: ``{"DCGM Multi-Node Diagnostic": "DCGM Multi-Node Diagnostic", "metadata": {"num_hosts",
  "num_entities"}, "hosts": [{"host_id", "hostname", "dcgm_version", "driver_version", "entities"}],
  "test_categories": [{"category": "Multi-Node Tests", "tests": [{"name", "status", "test_summary", "results",
  "mpi_error"}]}], "global_errors": [...], "runtime_error": ...}``; each result also names its ``host_id``.

The JSON does not say which run level ran (``-r``); the judge takes it as an argument. DCGM 3.x output (its
``DCGM GPU Diagnostic`` key, GPUs as ``gpu_ids`` strings) is refused with a message saying so.

Texts DCGM wrote (warnings, info, a runtime error) are kept to :data:`MAX_TEXT` characters each and at most
:data:`MAX_MESSAGES` per result, so a report stays short however chatty a plugin was.
"""

from __future__ import annotations

import json
import re
import typing as t
from collections.abc import Mapping

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments

DIAG_KEY = "DCGM Diagnostic"
MNDIAG_KEY = "DCGM Multi-Node Diagnostic"
DCGM3_KEY = "DCGM GPU Diagnostic"
# What dcgmi writes for a test or a result; "Unknown" is what mndiag writes for a value it does not know, and what
# a status this parser does not know is read as (its text kept in status_text).
STATUSES = ("Pass", "Fail", "Warn", "Skip", "Not Run", "Unknown")
MAX_TEXT = 300
MAX_MESSAGES = 8
# Places where a document may start that are tried, as in parse_nvbandwidth: the work stays linear in the output.
MAX_JSON_ATTEMPTS = 16
# dcgmi prints its keys sorted (jsoncpp), so a document opens with one of these.
_JSON_START_RE = re.compile(r'\{\s*"(?:DCGM Diagnostic|DCGM Multi-Node Diagnostic|DCGM GPU Diagnostic'
                            r'|Overall Result)"\s*:')


class DcgmDiagParseError(ValueError):
    """Input the ``parse_dcgm_diag`` filter cannot use; the message says what is wrong."""


def short(value: t.Any, limit: int = MAX_TEXT) -> str | None:
    """``value`` as one line of text of at most ``limit`` characters (``...`` marks a cut), ``None`` when empty."""
    if value is None or isinstance(value, (Mapping, list, bool)):
        return None
    text = " ".join(str(value).split())
    if not text:
        return None
    return text if len(text) <= limit else text[:limit - 3].rstrip() + "..."


def _integer(value: t.Any, what: str) -> int | None:
    """An id as an int; ``None`` when absent; anything else is an error naming the field."""
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    raise DcgmDiagParseError(f"{what} must be a whole number, got {arguments.type_name(value)}")


def _status(value: t.Any, what: str) -> tuple[str, str | None]:
    """The status and, for one DCGM 4.6 does not write, its text."""
    if value is None:
        raise DcgmDiagParseError(f"{what} has no status")
    text = short(value, 40)
    for status in STATUSES:
        if text is not None and text.lower() == status.lower():
            return status, None
    return "Unknown", text


def _list(value: t.Any, what: str) -> list:
    if value is None:
        return []
    if not isinstance(value, list):
        raise DcgmDiagParseError(f"{what} must be a list, got {arguments.type_name(value)}")
    return value


def _mapping(value: t.Any, what: str) -> Mapping:
    if not isinstance(value, Mapping):
        raise DcgmDiagParseError(f"{what} must be a mapping, got {arguments.type_name(value)}")
    return value


def _warnings(value: t.Any, what: str) -> list[dict]:
    """DCGM's warnings of a result: each ``message``, ``error_id``, ``category`` and ``severity``."""
    warnings = []
    for index, entry in enumerate(_list(value, what)):
        if isinstance(entry, Mapping):
            warnings.append({"message": short(entry.get("warning")),
                             "error_id": _integer(entry.get("error_id"), f"{what}[{index}].error_id"),
                             "category": entry.get("error_category") if isinstance(entry.get("error_category"),
                                                                                   (int, str)) else None,
                             "severity": _integer(entry.get("error_severity"), f"{what}[{index}].error_severity")})
        else:
            warnings.append({"message": short(entry), "error_id": None, "category": None, "severity": None})
    return warnings[:MAX_MESSAGES]


def _info(value: t.Any, what: str) -> list[str]:
    return [text for text in (short(entry) for entry in _list(value, what)) if text][:MAX_MESSAGES]


def _result(entry: t.Any, what: str, hostnames: Mapping[int, str | None]) -> dict:
    entry = _mapping(entry, what)
    group = short(entry.get("entity_group"), 40)
    entity = _integer(entry.get("entity_id"), f"{what}.entity_id")
    host_id = _integer(entry.get("host_id"), f"{what}.host_id")
    status, status_text = _status(entry.get("status"), what)
    return {"entity_group": group, "entity_id": entity, "gpu": entity if group == "GPU" else None,
            "host_id": host_id, "hostname": hostnames.get(host_id) if host_id is not None else None,
            "status": status, "status_text": status_text,
            "warnings": _warnings(entry.get("warnings"), f"{what}.warnings"),
            "info": _info(entry.get("info"), f"{what}.info")}


def _test(entry: t.Any, category: str | None, what: str, hostnames: Mapping[int, str | None],
          iteration: int | None) -> dict:
    entry = _mapping(entry, what)
    name = short(entry.get("name"), 80)
    if name is None:
        raise DcgmDiagParseError(f"{what} has no name")
    what = f"test {name!r} ({what})"
    results = [_result(result, f"{what}.results[{index}]", hostnames)
               for index, result in enumerate(_list(entry.get("results"), f"{what}.results"))]
    summary = entry.get("test_summary")
    if summary is None and entry.get("status") is None:
        status, status_text, warnings, info = "Not Run", None, [], []
    else:
        summary = _mapping(summary, f"{what}.test_summary") if summary is not None else {}
        status, status_text = _status(summary.get("status", entry.get("status")), f"{what}.test_summary")
        warnings = _warnings(summary.get("warnings"), f"{what}.test_summary.warnings")
        info = _info(summary.get("info"), f"{what}.test_summary.info")
    mpi_error = entry.get("mpi_error")
    if mpi_error is not None:
        mpi_error = short(_mapping(mpi_error, f"{what}.mpi_error").get("warning"))
    return {"name": name, "category": category, "iteration": iteration, "status": status, "status_text": status_text,
            "warnings": warnings, "info": info, "mpi_error": mpi_error, "results": results}


def _tests(categories: t.Any, what: str, hostnames: Mapping[int, str | None], iteration: int | None) -> list[dict]:
    tests = []
    for index, category in enumerate(_list(categories, what)):
        category = _mapping(category, f"{what}[{index}]")
        name = short(category.get("category"), 80)
        for test_index, test in enumerate(_list(category.get("tests"), f"{what}[{index}].tests")):
            tests.append(_test(test, name, f"{what}[{index}].tests[{test_index}]", hostnames, iteration))
    return tests


def _diag(document: Mapping, iteration: int | None = None) -> dict:
    where = f"iterations[{iteration}]." if iteration is not None else ""
    body = _mapping(document.get(DIAG_KEY), f"{where}'{DIAG_KEY}'")
    metadata = document.get("metadata")
    metadata = _mapping(metadata, f"{where}metadata") if metadata is not None else {}
    if "test_categories" not in body and body.get("runtime_error") is None:
        raise DcgmDiagParseError(f"{where}'{DIAG_KEY}' holds neither test_categories nor runtime_error: the output is "
                                 "cut short or not dcgmi diag -j's")
    gpus = []
    for index, group in enumerate(_list(document.get("entity_groups"), f"{where}entity_groups")):
        group = _mapping(group, f"{where}entity_groups[{index}]")
        if group.get("entity_group") != "GPU":
            continue
        for number, entity in enumerate(_list(group.get("entities"), f"{where}entity_groups[{index}].entities")):
            entity = _mapping(entity, f"{where}entity_groups[{index}].entities[{number}]")
            gpus.append({"index": _integer(entity.get("entity_id"),
                                           f"{where}entity_groups[{index}].entities[{number}].entity_id"),
                         "serial": short(entity.get("serial_num"), 64),
                         "device_id": short(entity.get("device_id"), 16)})
    return {"kind": "diag", "version": short(metadata.get("version") or body.get("version"), 40),
            "driver_version": short(metadata.get("Driver Version Detected"), 40),
            "runtime_error": short(body.get("runtime_error")), "overall_result": None, "overall_message": None,
            "gpus": gpus, "hosts": [], "errors": [],
            "tests": _tests(body.get("test_categories"), f"{where}test_categories", {}, iteration)}


def _mndiag(document: Mapping) -> dict:
    hosts = []
    for index, host in enumerate(_list(document.get("hosts"), "hosts")):
        host = _mapping(host, f"hosts[{index}]")
        gpus = [_integer(_mapping(entity, f"hosts[{index}].entities[{number}]").get("entity_id"),
                         f"hosts[{index}].entities[{number}].entity_id")
                for number, entity in enumerate(_list(host.get("entities"), f"hosts[{index}].entities"))
                if isinstance(entity, Mapping) and entity.get("entity_group") in (None, "GPU")]
        hosts.append({"host_id": _integer(host.get("host_id"), f"hosts[{index}].host_id"),
                      "hostname": short(host.get("hostname"), 253), "dcgm_version": short(host.get("dcgm_version"), 40),
                      "driver_version": short(host.get("driver_version"), 40), "gpus": gpus})
    hostnames = {host["host_id"]: host["hostname"] for host in hosts if host["host_id"] is not None}
    if "test_categories" not in document and document.get("runtime_error") is None:
        raise DcgmDiagParseError(f"the '{MNDIAG_KEY}' document holds neither test_categories nor runtime_error: the "
                                 "output is cut short or not dcgmi mndiag -j's")
    errors = []
    for index, error in enumerate(_list(document.get("global_errors"), "global_errors")):
        error = _mapping(error, f"global_errors[{index}]")
        host_id = _integer(error.get("host_id"), f"global_errors[{index}].host_id")
        errors.append({"message": short(error.get("warning")), "host_id": host_id,
                       "hostname": hostnames.get(host_id) if host_id is not None else None,
                       "error_id": _integer(error.get("error_id"), f"global_errors[{index}].error_id"),
                       "severity": _integer(error.get("error_severity"), f"global_errors[{index}].error_severity")})
    versions = sorted({host["dcgm_version"] for host in hosts if host["dcgm_version"]})
    drivers = sorted({host["driver_version"] for host in hosts if host["driver_version"]})
    return {"kind": "mndiag", "version": ", ".join(versions) or None, "driver_version": ", ".join(drivers) or None,
            "runtime_error": short(document.get("runtime_error")), "overall_result": None, "overall_message": None,
            "gpus": [], "hosts": hosts,
            "errors": errors[:MAX_MESSAGES * 8],
            "tests": _tests(document.get("test_categories"), "test_categories", hostnames, None)}


def _iterations(document: Mapping) -> dict:
    runs = [_diag(_mapping(run, f"iterations[{index}]"), index)
            for index, run in enumerate(_list(document.get("iterations"), "iterations"))]
    if not runs:
        raise DcgmDiagParseError("the document of dcgmi diag --iterations holds no iteration")
    return {"kind": "diag", "version": runs[0]["version"], "driver_version": runs[0]["driver_version"],
            "runtime_error": next((run["runtime_error"] for run in runs if run["runtime_error"]), None),
            "overall_result": short(document.get("Overall Result"), 40),
            "overall_message": short(document.get("warning")), "gpus": runs[0]["gpus"], "hosts": [], "errors": [],
            "tests": [test for run in runs for test in run["tests"]]}


def _document(output: str) -> Mapping:
    """The first whole dcgmi document in ``output``."""
    decoder = json.JSONDecoder()
    problem = None
    if output.lstrip().startswith("{"):
        try:
            return json.loads(output)
        except RecursionError:
            problem = "it nests lists and mappings deeper than a JSON reader follows"
        except ValueError:
            pass
    attempt = 0
    for match in _JSON_START_RE.finditer(output):
        if output[max(0, match.start() - 4096):match.start()].rstrip()[-1:] in ("[", ",", ":"):
            continue  # a document inside another (one iteration of --iterations), not the output's own
        attempt += 1
        if attempt > MAX_JSON_ATTEMPTS:
            break
        try:
            document, _end = decoder.raw_decode(output, match.start())
        except RecursionError:
            problem = "it nests lists and mappings deeper than a JSON reader follows"
            continue
        except ValueError as exc:
            problem = problem or f"it is cut short or not valid JSON ({short(getattr(exc, 'msg', exc), 80)} at " \
                                 f"character {getattr(exc, 'pos', '?')})"
            continue
        return document
    if problem:
        raise DcgmDiagParseError(f"the DCGM diagnostic JSON document in the output cannot be read: {problem}")
    raise DcgmDiagParseError(f"no DCGM diagnostic JSON document in the output (expected the output of dcgmi diag -j "
                             f"or dcgmi mndiag -j, a document with '{DIAG_KEY}' or '{MNDIAG_KEY}')")


def parse_dcgm_diag(output: t.Any) -> dict:
    """Parse the output of ``dcgmi diag -j`` or ``dcgmi mndiag -j`` (text, a list of lines, or the JSON document).

    Returns ``kind`` (``diag`` or ``mndiag``), ``version`` (DCGM's), ``driver_version``, ``runtime_error`` (why
    the diagnostic did not run, or ``None``), ``overall_result`` and ``overall_message`` (``--iterations``),
    ``gpus`` (diag: ``index``, ``serial``, ``device_id``), ``hosts`` (mndiag: ``host_id``, ``hostname``,
    ``dcgm_version``, ``driver_version``, ``gpus``), ``errors`` (mndiag's global errors: ``message``, ``host_id``,
    ``hostname``, ``error_id``, ``severity``) and ``tests``: each ``name``, ``category``, ``iteration``, ``status``
    (one of :data:`STATUSES`), ``status_text`` (the text of a status read as ``Unknown``), ``warnings``
    (``message``, ``error_id``, ``category``, ``severity``), ``info``, ``mpi_error`` and ``results``
    (``entity_group``, ``entity_id``, ``gpu``, ``host_id``, ``hostname``, ``status``, ``status_text``,
    ``warnings``, ``info``).
    """
    output = arguments.bounded_output("_input", output)
    if isinstance(output, (list, tuple)):
        output = "\n".join(str(line) for line in output)
    if isinstance(output, (bytes, bytearray)):
        output = output.decode("utf-8", errors="replace")
    if isinstance(output, str):
        output = _document(output)
    if not isinstance(output, Mapping):
        raise DcgmDiagParseError("expected the output of dcgmi diag -j or dcgmi mndiag -j as text or as its JSON "
                                 f"document (a mapping), got {arguments.type_name(output)}")
    if DIAG_KEY in output:
        return _diag(output)
    if MNDIAG_KEY in output:
        return _mndiag(output)
    if "iterations" in output:
        return _iterations(output)
    if DCGM3_KEY in output:
        raise DcgmDiagParseError(f"the document is DCGM 3.x's ('{DCGM3_KEY}'); this parser reads DCGM 4.0 and later "
                                 "(the GPU Operator's DCGM image is 4.x)")
    raise DcgmDiagParseError(f"the JSON document has neither '{DIAG_KEY}' nor '{MNDIAG_KEY}': it is not the output of "
                             "dcgmi diag -j or dcgmi mndiag -j")
