# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A host's fabric verdict and counters as a Prometheus node-exporter textfile (``gpufabric_fabric.prom``).

:func:`textfile` renders, in the text exposition format (``# HELP`` and ``# TYPE`` lines, then the samples of each
metric family, every family once), the gauges a fleet's Prometheus graphs between runs:

- ``gpufabric_fabric_verdict``: the host's preflight verdict, 0 pass, 1 warn, 2 fail (no sample without a verdict);
- ``gpufabric_fabric_checks{status}``: how many checks failed and warned;
- ``gpufabric_port_errors{device,port,netdev,counter}``: the ConnectX port error counters the probe read
  (:data:`.port_counters.COUNTERS`);
- ``gpufabric_gpu_ecc_uncorrected{gpu,pci_bus_id,kind}``, ``gpufabric_gpu_remapped_rows{gpu,pci_bus_id,state}`` and
  ``gpufabric_gpu_reset_needed{gpu,pci_bus_id}``: each GPU's health facts, where NVML reported them.

Only numbers and names from the facts (device and interface names, PCI addresses, counter names): no text of a host
file, no check message. Label values are escaped as the format wants (backslash, double quote, line feed) and cut at
:data:`LABEL_VALUE_MAX` characters. No timestamp: node-exporter's ``node_textfile_mtime_seconds`` says when the file
was written, and a file with the same content is not rewritten (a second run changes nothing).
"""

from __future__ import annotations

import re
import typing as t
from collections.abc import Mapping

from ansible_collections.gpufabric.cluster.plugins.module_utils.port_counters import COUNTERS
from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.preflight import RESET_ACTIONS

FILE_NAME = "gpufabric_fabric.prom"
VERDICT_VALUES = {"pass": 0, "warn": 1, "fail": 2}
LABEL_VALUE_MAX = 128
# The exposition format's names.
METRIC_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
LABEL_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")


class TextfileError(ValueError):
    """An input from which no textfile can be written; the message names it."""


def escape(value: t.Any) -> str:
    """A label value as the text format writes it: ``\\``, ``"`` and line feed escaped, at most
    :data:`LABEL_VALUE_MAX` characters of the value."""
    text = str(value)[:LABEL_VALUE_MAX]
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _count(value: t.Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _map(value: t.Any) -> Mapping:
    return value if isinstance(value, Mapping) else {}


def _list(value: t.Any) -> list:
    return value if isinstance(value, list) else []


class _Families:
    """Metric families in order of first use, each with its help, type gauge and samples."""

    def __init__(self) -> None:
        self.families: dict[str, tuple[str, list[str]]] = {}

    def add(self, name: str, help_text: str, value: int, **labels: t.Any) -> None:
        if not METRIC_NAME.fullmatch(name) or not all(LABEL_NAME.fullmatch(label) for label in labels):
            raise TextfileError(f"not a metric or label name of the exposition format: {name} {sorted(labels)}")
        rendered = ",".join(f'{label}="{escape(value)}"' for label, value in labels.items())
        self.families.setdefault(name, (help_text, []))[1].append(
            f"{name}{{{rendered}}} {value}" if labels else f"{name} {value}")

    def text(self) -> str:
        lines = []
        for name, (help_text, samples) in self.families.items():
            lines += [f"# HELP {name} {help_text}", f"# TYPE {name} gauge", *samples]
        return "\n".join(lines) + "\n" if lines else ""


def _gpu(families: _Families, gpu: Mapping) -> None:
    labels = {"gpu": gpu.get("index"), "pci_bus_id": gpu.get("pci_address") or gpu.get("pci_bus_id") or ""}
    if _count(labels["gpu"]) is None:
        return
    memory = _map(gpu.get("memory_errors"))
    ecc = _map(memory.get("ecc_uncorrected"))
    for kind in ("volatile", "aggregate"):
        count = _count(ecc.get(kind))
        if count is not None:
            families.add("gpufabric_gpu_ecc_uncorrected", "Uncorrectable ECC errors of the GPU (NVML), volatile "
                         "since the last reset or aggregate over its life.", count, **labels, kind=kind)
    rows = _map(memory.get("remapped_rows"))
    for state in ("pending", "failure"):
        if isinstance(rows.get(state), bool):
            families.add("gpufabric_gpu_remapped_rows", "1 when the GPU has a row remap pending or a row-remap "
                         "failure (NVML).", int(rows[state]), **labels, state=state)
    action = gpu.get("recovery_action")
    if isinstance(action, str):
        families.add("gpufabric_gpu_reset_needed", "1 when NVML asks for a GPU reset or a reboot.",
                     int(action in RESET_ACTIONS), **labels)


def textfile(entry: t.Any, facts: t.Any = None) -> str:
    """The textfile of one host: its preflight report ``entry`` (``{status, checks}``) and its
    ``ansible_facts['gpufabric']`` ``facts`` (optional: without them, the verdict and checks only)."""
    entry = arguments.mapping("entry", entry)
    facts = arguments.mapping("facts", facts or {})
    families = _Families()
    status = entry.get("status")
    if isinstance(status, str) and status in VERDICT_VALUES:
        families.add("gpufabric_fabric_verdict", "The preflight verdict of the host: 0 pass, 1 warn, 2 fail.",
                     VERDICT_VALUES[status])
        checks = [_map(check) for check in _list(entry.get("checks"))]
        for state in ("fail", "warn"):
            families.add("gpufabric_fabric_checks", "Preflight checks of the host that failed or warned.",
                         sum(1 for check in checks if check.get("status") == state), status=state)
    for port in sorted((_map(port) for port in _list(_map(facts.get("connectx")).get("ports"))),
                       key=lambda port: (str(port.get("rdma_device")), str(port.get("port")))):
        counters = _map(port.get("counters"))
        for counter in COUNTERS:
            count = _count(counters.get(counter))
            if count is not None:
                families.add("gpufabric_port_errors", "Error counters of the ConnectX port (sysfs counters/ and "
                             "hw_counters/), since the device last reset them.", count,
                             device=port.get("rdma_device") or "", port=port.get("port") or "",
                             netdev=port.get("netdev") or "", counter=counter)
    for gpu in _list(_map(facts.get("gpu")).get("gpus")):
        _gpu(families, _map(gpu))
    return families.text()
