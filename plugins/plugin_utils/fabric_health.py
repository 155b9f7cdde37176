# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fabric health gate: every NVLink of every GPU active and at its model's speed, a clean fabric health
mask and summary, and the clique set where the model is a multi-node NVLink one.

Pure functions over the ``gpu`` facts (``gpufabric.cluster.gpu_info``); :func:`check_fabric_health` is the
preflight check ``fabric_health``.  Every field of the fabric health the probe decodes is judged
(:func:`judge_health`):

* fail: one of the four conditions held (degraded bandwidth, route recovery, route unhealthy, access timeout
  recovery); ``incorrect_configuration`` anything but ``none`` (a value NVML did not define included); the global
  fabric manager disconnected (``gfm_connected`` false); a summary ``unhealthy`` or ``limited_capacity``; no
  partition assigned (``partition_assigned`` false) on a GPU of an NVLink domain; on such a GPU also a summary of a
  value NVML did not define (``unknown_<n>``).
* warn: a value that is not known (``null`` with its reason, a value NVML did not define, mask bits 16-31 set):
  unknown is never clean, and never a failure the gate would have to guess.  On a GPU of no NVLink domain (HGX, a
  GPU without fabric) the fields that only a multi-node fabric has (configuration, partition, global fabric
  manager) and the summary are not judged when NVML reports them not supported: its driver predates them, and they
  do not apply.

A GPU is of an NVLink domain when its model is a multi-node NVLink one (:data:`NVLINK_MODELS`) or it reports a
clique.
"""

from __future__ import annotations

import re
import typing as t
from collections.abc import Mapping
from dataclasses import dataclass

from ansible_collections.gpufabric.cluster.plugins.module_utils.nvml import (
    FABRIC_HEALTH_FIELDS,
    NVML_GPU_FABRIC_HEALTH_NOT_SUPPORTED,
)

HEALTH_CONDITIONS = {
    "degraded_bandwidth": "degraded bandwidth",
    "route_recovery": "route recovery in progress",
    "route_unhealthy": "route unhealthy",
    "access_timeout_recovery": "access timeout recovery in progress",
}
# INCORRECT_CONFIGURATION values other than ``none`` as the facts name them -> what the message says (NVML's name
# after NVML_GPU_FABRIC_HEALTH_MASK_INCORRECT_CONFIGURATION_).
INCORRECT_CONFIGURATIONS = {
    "incorrect_sysguid": "incorrect system GUID (INCORRECT_SYSGUID)",
    "incorrect_chassis_sn": "incorrect chassis serial number (INCORRECT_CHASSIS_SN)",
    "no_partition": "no partition (NO_PARTITION)",
    "insufficient_nvlinks": "insufficient NVLinks (INSUFFICIENT_NVLINKS)",
    "incompatible_gpu_fw": "incompatible GPU firmware (INCOMPATIBLE_GPU_FW)",
    "invalid_location": "invalid location (INVALID_LOCATION)",
    "gpu_state_invalid": "GPU state invalid (GPU_STATE_INVALID)",
}
# Health summaries (NVML_GPU_FABRIC_HEALTH_SUMMARY_*) that fail, with what the message says.
FAILING_SUMMARIES = {"unhealthy": "summary unhealthy", "limited_capacity": "summary limited capacity"}
# The fields only a multi-node NVLink fabric has, and the summary: on a GPU of no NVLink domain they are judged only
# when NVML reports them (a driver older than the field reports NOT_SUPPORTED).
DOMAIN_ONLY_FIELDS = ("incorrect_configuration", "partition_assigned", "gfm_connected")
_UNKNOWN_VALUE_RE = re.compile(r"unknown_[0-9]{1,10}\Z")


@dataclass(frozen=True)
class NvlinkModel:
    """What a GPU model's NVLink should show: ``links`` active, each at ``speed_mbps`` (None: speed unchecked)."""

    model: str
    links: int
    speed_mbps: int | None
    multi_node: bool  # part of a multi-node NVLink (MNNVL) domain: the clique must be set
    source: str


# Matched against the NVML product name, first match wins.  Only public figures; a speed no public source pins
# is None (links checked, speed not).
NVLINK_MODELS: tuple[tuple[re.Pattern, NvlinkModel], ...] = (
    (re.compile(r"\bGB200\b"), NvlinkModel(
        "GB200", 18, 53125, True,
        # NVIDIA GB200 NVL72 (nvidia.com/en-us/data-center/gb200-nvl72): fifth-generation NVLink, 1.8 TB/s a GPU
        # over 18 links; 53,125 MB/s a link is what NVML (nvidia-smi nvlink -s) reports on a healthy GB200 and
        # the figure NVIDIA's fabric health checks expect (gpufabric.cluster issue 19).
        "NVIDIA GB200 NVL72: 18 NVLink 5 links a GPU, 53,125 MB/s each as NVML reports them")),
    (re.compile(r"\bGB300\b"), NvlinkModel(
        "GB300", 18, None, True,
        # NVIDIA GB300 NVL72 (nvidia.com/en-us/data-center/gb300-nvl72): fifth-generation NVLink, 1.8 TB/s a GPU.
        "NVIDIA GB300 NVL72: 18 NVLink 5 links a GPU (1.8 TB/s); no public per-link NVML figure")),
    (re.compile(r"\bB200\b"), NvlinkModel(
        "B200", 18, None, False,
        # NVIDIA HGX B200 (nvidia.com/en-us/data-center/hgx): fifth-generation NVLink, 1.8 TB/s a GPU.
        "NVIDIA HGX B200: 18 NVLink 5 links a GPU (1.8 TB/s); no public per-link NVML figure")),
    (re.compile(r"\b(H100|H200)\b.*\b(HBM3e?|SXM\w*)\b", re.IGNORECASE), NvlinkModel(
        "H100/H200 SXM", 18, None, False,
        # NVIDIA H100 / H200 datasheets: SXM form factor, NVLink 900 GB/s a GPU (fourth generation, 18 links).
        "NVIDIA H100/H200 SXM datasheets: NVLink 4, 900 GB/s a GPU over 18 links")),
    (re.compile(r"\bA100-SXM", re.IGNORECASE), NvlinkModel(
        "A100 SXM", 12, None, False,
        # NVIDIA A100 datasheet: SXM4, NVLink 600 GB/s a GPU (third generation, 12 links).
        "NVIDIA A100 datasheet: SXM4, NVLink 3, 600 GB/s a GPU over 12 links")),
)


def nvlink_model(name: t.Any) -> NvlinkModel | None:
    """The NVLink expectations for an NVML product name (``'NVIDIA GB200'``); ``None`` for a model not in the table."""
    if not isinstance(name, str):
        return None
    for pattern, model in NVLINK_MODELS:
        if pattern.search(name):
            return model
    return None


def _map(value: t.Any) -> Mapping:
    return value if isinstance(value, Mapping) else {}


def _list(value: t.Any) -> list:
    return list(value) if isinstance(value, (list, tuple)) else []


def _int(value: t.Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _reasons(payload: Mapping) -> str:
    reasons = [str(reason) for reason in _list(payload.get("reasons")) if reason]
    return "; ".join(reasons) or "NVML did not report it"


def _raw_field(health: Mapping, name: str) -> int | None:
    """The NVML value of the health mask's field ``name`` (nvml.h's layout), ``None`` when there is no mask."""
    mask = _int(health.get("mask"))
    if mask is None:
        return None
    field = FABRIC_HEALTH_FIELDS[name]
    return (mask >> field.shift) & field.width


def _not_reported(health: Mapping, name: str) -> bool:
    """Whether NVML reports the field ``name`` not supported (its value 0) or gave no mask at all."""
    raw = _raw_field(health, name)
    return raw is None or raw == NVML_GPU_FABRIC_HEALTH_NOT_SUPPORTED


def _health_reasons(health: Mapping, fields: list[str]) -> str:
    """The probe's reasons that concern ``fields`` (a reason starts with its field's name) or the whole mask."""
    names = set(FABRIC_HEALTH_FIELDS) | {"summary"}
    reasons = [str(reason) for reason in _list(health.get("reasons")) if reason]
    kept = [reason for reason in reasons
            if reason.split(":", 1)[0] in fields or reason.split(":", 1)[0] not in names]
    return "; ".join(kept) or "NVML did not report it"


def judge_health(health: Mapping, in_domain: bool) -> tuple[list[str], list[str], int]:
    """The conditions that fail, the fields that are unknown, and the undefined mask bits of one GPU's fabric health.

    ``health`` is a GPU's ``fabric.health`` as the probe decodes it; ``in_domain``: the GPU is of an NVLink domain (a
    partition is then expected, and every field applies).  See the module's docstring for the rules.
    """
    held = [text for key, text in HEALTH_CONDITIONS.items() if health.get(key) is True]
    unknown = [key for key in HEALTH_CONDITIONS if not isinstance(health.get(key), bool)]
    configuration = health.get("incorrect_configuration")
    configuration = configuration if isinstance(configuration, str) or configuration is None else repr(configuration)
    if configuration in INCORRECT_CONFIGURATIONS:
        held.append(f"incorrect configuration: {INCORRECT_CONFIGURATIONS[configuration]}")
    elif configuration is not None and _UNKNOWN_VALUE_RE.match(configuration):
        held.append(f"incorrect configuration: {configuration} (a value NVML did not define when this gate was "
                    "written, not NONE)")
    elif configuration is not None and configuration != "none":
        held.append("incorrect configuration: a value the probe does not report (not NONE)")
    partition = health.get("partition_assigned")
    if partition is False and in_domain:
        held.append("no partition assigned (PARTITION_ASSIGNED false on a GPU of an NVLink domain)")
    if health.get("gfm_connected") is False:
        held.append("global fabric manager disconnected (GFM_STATE DISCONNECTED)")
    for key in DOMAIN_ONLY_FIELDS:
        value = health.get(key)
        known = isinstance(value, bool) if key != "incorrect_configuration" else value is not None
        if not known and (in_domain or not _not_reported(health, key)):
            unknown.append(key)
    summary = health.get("summary")
    summary = summary if isinstance(summary, str) or summary is None else repr(summary)
    if summary in FAILING_SUMMARIES:
        held.append(FAILING_SUMMARIES[summary])
    elif summary != "healthy":
        undefined = summary is not None and _UNKNOWN_VALUE_RE.match(summary) is not None
        if undefined and in_domain:
            held.append(f"summary {summary} (a value NVML did not define when this gate was written)")
        elif undefined or in_domain or summary not in (None, "not_supported"):
            unknown.append("summary")
    bits = _int(health.get("undefined_bits")) or 0
    return held, unknown, bits


def judge_gpu(gpu: Mapping) -> tuple[list[str], list[str]]:
    """The failures and the warnings of one GPU's NVLinks and fabric health."""
    index = gpu.get("index")
    label = f"GPU {index}"
    model = nvlink_model(gpu.get("name"))
    fails: list[str] = []
    warns: list[str] = []
    nvlink = gpu.get("nvlink")
    if not isinstance(nvlink, Mapping):
        warns.append(f"{label}: NVLink state not reported by the probe")
    else:
        present, active = _int(nvlink.get("present")), _int(nvlink.get("active"))
        if present is None or active is None:
            warns.append(f"{label}: NVLink state unknown ({_reasons(nvlink)})")
        else:
            expected = model.links if model else present
            inactive = [str(link) for link in _list(nvlink.get("inactive_links"))]
            if active < expected:
                detail = f"; inactive links {', '.join(inactive)}" if inactive else ""
                fails.append(f"{label}: {active} of {expected} NVLinks active{detail}")
            speed = _int(nvlink.get("speed_mbps"))
            if active and speed is None:
                warns.append(f"{label}: NVLink speed unknown ({_reasons(nvlink)})")
            elif active and model and model.speed_mbps is not None and speed is not None and speed < model.speed_mbps:
                fails.append(f"{label}: NVLink speed {speed} MB/s, below the {model.model}'s {model.speed_mbps} MB/s")
    fabric = gpu.get("fabric")
    if isinstance(fabric, Mapping) and fabric.get("state") != "not_supported":
        health = fabric.get("health")
        if not isinstance(health, Mapping):
            warns.append(f"{label}: fabric health not reported by the probe")
        else:
            in_domain = bool(model and model.multi_node) or bool(fabric.get("clique"))
            held, unknown, undefined_bits = judge_health(health, in_domain)
            if held:
                fails.append(f"{label}: fabric health: {', '.join(held)}")
            if unknown:
                warns.append(f"{label}: fabric health unknown for {', '.join(unknown)} "
                             f"({_health_reasons(health, unknown)})")
            if undefined_bits:
                warns.append(f"{label}: fabric health mask bits 16-31 set (0x{undefined_bits:08x}): conditions "
                             "NVML did not define when this gate was written")
        if model and model.multi_node and not fabric.get("clique"):
            fails.append(f"{label}: no clique ({fabric.get('clique_unset') or 'clique not set'}); "
                         f"a {model.model} belongs to a multi-node NVLink domain")
    elif model and model.multi_node:
        fails.append(f"{label}: no NVLink fabric reported on a {model.model}")
    return fails, warns


def check_fabric_health(gpu: Mapping) -> dict:
    """The preflight check ``fabric_health`` of a host's ``gpu`` facts."""
    gpus = [item for item in _list(gpu.get("gpus")) if isinstance(item, Mapping)]
    if not gpus:
        return {"name": "fabric_health", "status": "skip", "message": "no NVIDIA GPU found"}
    if not gpu.get("driver_loaded"):
        return {"name": "fabric_health", "status": "skip",
                "message": "NVLink health is unknown while the driver is not loaded"}
    if gpu.get("source") != "nvml":
        return {"name": "fabric_health", "status": "warn",
                "message": "NVLink health is unknown: NVML was not usable, GPUs were listed from PCI"}
    no_links = all(_map(item.get("nvlink")).get("present") == 0 and nvlink_model(item.get("name")) is None
                   and _map(item.get("fabric")).get("state") in (None, "not_supported") for item in gpus)
    if no_links:
        return {"name": "fabric_health", "status": "skip", "message": "GPUs have no NVLink"}
    fails: list[str] = []
    warns: list[str] = []
    for item in gpus:
        gpu_fails, gpu_warns = judge_gpu(item)
        fails += gpu_fails
        warns += gpu_warns
    if fails:
        return {"name": "fabric_health", "status": "fail", "message": "; ".join(fails + warns)}
    if warns:
        return {"name": "fabric_health", "status": "warn", "message": "; ".join(warns)}
    models = sorted({model.model for model in (nvlink_model(item.get("name")) for item in gpus) if model})
    links = sum(_int(_map(item.get("nvlink")).get("active")) or 0 for item in gpus)
    what = f"as the {', '.join(models)} table expects" if models else "(model not in the table: links checked only)"
    return {"name": "fabric_health", "status": "pass",
            "message": f"{links} NVLinks active on {len(gpus)} GPU(s) {what}; fabric health clean"}
