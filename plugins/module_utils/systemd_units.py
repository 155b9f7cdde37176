# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The state of one systemd unit (``nvidia-imex.service``, ``nvidia-fabricmanager.service``), read with one
``systemctl show`` call.

``systemctl show --property=A,B <unit>`` prints the unit's properties as ``KEY=VALUE`` lines (systemctl(1),
"show"; the property names and their meaning are those of the D-Bus API, org.freedesktop.systemd1(5): ``LoadState``,
``UnitFileState``, ``ActiveState``, ``SubState``, ``StateChangeTimestamp``, ``ActiveEnterTimestamp``,
``InactiveEnterTimestamp`` of a unit, ``Result``, ``ExecMainStatus``, ``NRestarts`` of a service).  A unit systemd
does not know is answered ``LoadState=not-found`` with exit status 0.  Timestamps are printed in systemd's own form
(``Sat 2026-11-28 06:08:10 UTC`` with ``LC_ALL=C``); an unset one is empty (older releases print ``n/a``).

:func:`parse_systemctl_show` and :func:`unit_state` are pure; :func:`read_unit` runs the tool through the runner of
read-only host tools (:mod:`.host_commands`), only from below the probe root.  No value reaches the payload unless it
has the shape systemd documents for it; a value of another shape is an error naming the unit and the property, never
quoting it.
"""

from __future__ import annotations

import re
import typing as t

from ansible_collections.gpufabric.cluster.plugins.module_utils.errors import ParseError
from ansible_collections.gpufabric.cluster.plugins.module_utils.host_commands import Runner, find_command, run_tool

# What one `systemctl show` call asks for; systemd releases without a property (NRestarts is systemd 235 and
# newer) leave it out of the answer, and its field is null.
PROPERTIES = ("LoadState", "UnitFileState", "ActiveState", "SubState", "Result", "ExecMainStatus", "NRestarts",
              "StateChangeTimestamp", "ActiveEnterTimestamp", "InactiveEnterTimestamp")
# The words systemd prints for a state or a result: lower-case letters, digits and dashes (active, auto-restart,
# exit-code, start-limit-hit, enabled-runtime, not-found, ...).
_WORD_RE = re.compile(r"[a-z][a-z0-9-]{0,39}\Z")
# A timestamp as systemd formats it (format_timestamp(): "%a %Y-%m-%d %H:%M:%S" and the zone's abbreviation).
_TIMESTAMP_RE = re.compile(r"[A-Z][a-z]{2} [0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}"
                           r"(?: [A-Za-z0-9+_/-]{1,32})?\Z")
_NUMBER_RE = re.compile(r"[0-9]{1,10}\Z")
_UNSET = ("", "n/a")
# The longest answer read (a few hundred bytes are expected).
OUTPUT_LIMIT = 64 * 1024


def empty_state() -> dict:
    """The state of a unit that could not be read: every field unknown or false."""
    return {"exists": False, "enabled": False, "active": None, "masked": False, "unit_file_state": None,
            "active_state": None, "sub_state": None, "since": None, "result": None, "exit_status": None,
            "restarts": None}


def parse_systemctl_show(text: str) -> dict[str, str]:
    """``{KEY: VALUE}`` of ``systemctl show`` output: every line with a ``=``, split at the first one, stripped.

    Lines without ``=`` and empty keys are skipped; a key given twice keeps its last value. Never raises for a
    string.
    """
    properties = {}
    for line in text.splitlines():
        key, separator, value = line.partition("=")
        if separator and key.strip():
            properties[key.strip()] = value.strip()
    return properties


def _word(unit: str, properties: t.Mapping[str, str], key: str) -> str | None:
    value = properties.get(key, "")
    if value in _UNSET:
        return None
    if not _WORD_RE.match(value):
        raise ParseError(f"systemctl show {unit}: {key} is not a systemd state word")
    return value


def _number(unit: str, properties: t.Mapping[str, str], key: str) -> int | None:
    value = properties.get(key, "")
    if value in _UNSET:
        return None
    if not _NUMBER_RE.match(value):
        raise ParseError(f"systemctl show {unit}: {key} is not a whole number")
    return int(value)


def _timestamp(properties: t.Mapping[str, str], key: str) -> str | None:
    value = properties.get(key, "")
    return value if _TIMESTAMP_RE.match(value) else None


def unit_state(properties: t.Mapping[str, str], unit: str) -> dict:
    """The state of ``unit`` from its ``systemctl show`` properties (:func:`parse_systemctl_show`).

    ``exists``: systemd knows the unit (``LoadState`` other than ``not-found``; a masked unit exists). ``enabled``:
    ``UnitFileState`` starts with ``enabled``; ``masked``: ``LoadState`` or ``UnitFileState`` says masked.
    ``active``: ``ActiveState`` is ``active``; ``active_state``, ``sub_state``, ``result`` (``Result``: ``success``,
    ``exit-code``, ``signal``, ``core-dump``, ``timeout``, ``start-limit-hit``, ...) as systemd prints them;
    ``exit_status`` (``ExecMainStatus``: the main process's exit status or signal number) and ``restarts``
    (``NRestarts``: automatic restarts since the unit was last started by hand) as numbers. ``since``: when the unit
    entered its present state (``StateChangeTimestamp``, else ``ActiveEnterTimestamp`` of an active unit or
    ``InactiveEnterTimestamp`` of another), as systemd prints it. A field systemd did not print, an unset timestamp
    and a timestamp not in systemd's form are null. A unit systemd does not know (``LoadState=not-found``: not
    installed) has ``exists`` false and no ``since``, ``result``, ``exit_status`` or ``restarts``.

    Raises :class:`ParseError` naming ``unit`` and the property when there is no ``LoadState`` or a state or number
    has another shape.
    """
    if not properties.get("LoadState"):
        raise ParseError(f"systemctl show {unit} printed no LoadState")
    load_state = _word(unit, properties, "LoadState")
    unit_file_state = _word(unit, properties, "UnitFileState")
    active_state = _word(unit, properties, "ActiveState")
    state = empty_state()
    state.update(
        exists=load_state != "not-found",
        enabled=(unit_file_state or "").startswith("enabled"),
        masked=load_state == "masked" or (unit_file_state or "").startswith("masked"),
        unit_file_state=unit_file_state,
        active=None if active_state is None else active_state == "active",
        active_state=active_state,
        sub_state=_word(unit, properties, "SubState"),
    )
    if state["exists"]:
        state.update(
            since=_timestamp(properties, "StateChangeTimestamp") or _timestamp(
                properties, "ActiveEnterTimestamp" if active_state == "active" else "InactiveEnterTimestamp"),
            result=_word(unit, properties, "Result"),
            exit_status=_number(unit, properties, "ExecMainStatus"),
            restarts=_number(unit, properties, "NRestarts"),
        )
    return state


def show_argv(unit: str) -> list[str]:
    """The one ``systemctl show`` call that reads ``unit``."""
    return ["systemctl", "show", unit, f"--property={','.join(PROPERTIES)}"]


def read_unit(root: str, runner: Runner, unit: str) -> dict | None:
    """The state of ``unit`` on the host below ``root`` (:func:`unit_state`); ``None`` without ``systemctl`` there.

    Raises :class:`.errors.CommandError` when ``systemctl`` fails or does not finish in time
    (:class:`.errors.CommandTimeout`), :class:`ParseError` when its answer is not the state of a unit.
    """
    if find_command(root, "systemctl") is None:
        return None
    out = run_tool(runner, root, show_argv(unit))
    if len(out) > OUTPUT_LIMIT:
        raise ParseError(f"systemctl show {unit} printed more than {OUTPUT_LIMIT} bytes")
    return unit_state(parse_systemctl_show(out), unit)
