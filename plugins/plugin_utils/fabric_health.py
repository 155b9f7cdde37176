# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fabric health gate: every NVLink of every GPU active and at its model's speed, a clean fabric health
mask, and the clique set where the model is a multi-node NVLink one.

Pure functions over the ``gpu`` facts (``gpufabric.cluster.gpu_info``); :func:`check_fabric_health` is the
preflight check ``fabric_health``.  A value NVML could not give (``null`` with its reason in the facts) makes the
check warn, never fail: the gate does not guess.
"""

from __future__ import annotations

import re
import typing as t
from collections.abc import Mapping
from dataclasses import dataclass

HEALTH_CONDITIONS = {
    "degraded_bandwidth": "degraded bandwidth",
    "route_recovery": "route recovery in progress",
    "route_unhealthy": "route unhealthy",
    "access_timeout_recovery": "access timeout recovery in progress",
}


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
            held = [text for key, text in HEALTH_CONDITIONS.items() if health.get(key) is True]
            unknown = [key for key in HEALTH_CONDITIONS if health.get(key) is None]
            if held:
                fails.append(f"{label}: fabric health: {', '.join(held)}")
            if unknown:
                warns.append(f"{label}: fabric health unknown for {', '.join(unknown)} ({_reasons(health)})")
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
