# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The host services the NVLink fabric needs, judged where they must run: one rule for their state.

The probe reports a unit's state as :func:`...module_utils.systemd_units.unit_state` shapes it (``gpu.fabricmanager``
for ``nvidia-fabricmanager.service``, ``imex.service`` for ``nvidia-imex.service``). :func:`unit_finding` is the one
rule over it: a unit that is not installed, masked or not active where it must run fails, one that systemd restarted
on its own warns (a daemon that crashed and came back), naming the host, the unit, its state, since when and its
last result. Where each unit must run is decided here too:

- ``nvidia-fabricmanager``: on an NVSwitch system (HGX) with the driver loaded (:func:`nvswitch_system`):
  :func:`check_fabric_manager` is the preflight check ``fabric_manager``. When the GPUs' fabric registration is not
  completed meanwhile, the finding says so: a fabric stuck "in progress" for days while the fabric manager is down
  (NVSentinel issues 883 and 889) reads as one cause, not two symptoms.
- ``nvidia-imex``: only where the site's IMEX mode runs it on the host (:data:`HOST_SERVICE_MODES`): in ``host`` mode
  on a host whose GPUs are in a multi-node clique, in ``dra_host_managed`` mode on every host with nvidia-imex; in
  ``dra`` mode the DRA driver runs IMEX per ComputeDomain and the host service is masked, and a host without a clique
  (HGX, an idle host) needs none in ``host`` mode: neither raises an IMEX finding.
  :func:`imex_service_findings` gives the lines the preflight check ``imex`` adds (:func:`.preflight.check_imex_host`).

Pure functions over plain data; facts of another shape hold nothing (an unknown state is no finding, and says so).
"""

from __future__ import annotations

import typing as t
from collections.abc import Mapping

FABRICMANAGER_UNIT = "nvidia-fabricmanager.service"
IMEX_UNIT = "nvidia-imex.service"
# The IMEX modes (gpufabric_imex_mode / nvidia_imex_mode) that run nvidia-imex.service on the host; in ``dra`` the DRA
# driver runs IMEX per ComputeDomain and the host service is masked.
HOST_SERVICE_MODES = ("host", "dra_host_managed")
# The host variable that hands the driver to the GPU Operator's driver container (role nvidia_driver), which then
# runs the fabric manager itself: no host unit is expected.
GPU_OPERATOR_DRIVER_VARIABLE = "nvidia_driver_gpu_operator"
ZERO_UUID = "00000000-0000-0000-0000-000000000000"
_WORD_LIMIT = 40
_TIMESTAMP_LIMIT = 64


def _map(value: t.Any) -> Mapping:
    return value if isinstance(value, Mapping) else {}


def _word(value: t.Any) -> str | None:
    """A state word of the facts (systemd's, or a fabric state such as ``in_progress``), when it is one (facts cached
    by another probe may hold anything)."""
    if isinstance(value, str) and 0 < len(value) <= _WORD_LIMIT and all(c.isalnum() or c in "-_" for c in value):
        return value
    return None


def _count(value: t.Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _since(value: t.Any) -> str | None:
    if isinstance(value, str) and 0 < len(value) <= _TIMESTAMP_LIMIT and value.isprintable():
        return value
    return None


def unit_text(service: Mapping, unit: str) -> str:
    """``unit`` with its state, since when and its last failure, as one clause.

    ``nvidia-imex.service failed (failed) since Mon 2026-11-09 03:12:44 UTC, last result exit-code, exit status 1,
    restarted 5 time(s) by systemd``; what the facts do not hold is left out.
    """
    if service.get("masked") is True:
        text = f"{unit} is masked"
    elif service.get("exists") is False:
        return f"{unit} is not installed"
    else:
        state = _word(service.get("active_state")) or "in an unknown state"
        sub_state = _word(service.get("sub_state"))
        text = f"{unit} {state}" + (f" ({sub_state})" if sub_state and sub_state != state else "")
    since = _since(service.get("since"))
    if since:
        text += f" since {since}"
    result = _word(service.get("result"))
    status = _count(service.get("exit_status"))
    restarts = _count(service.get("restarts"))
    if result and result != "success":
        text += f", last result {result}" + (f", exit status {status}" if status else "")
    if restarts:
        text += f", restarted {restarts} time(s) by systemd"
    return text


def unit_finding(service: t.Any, unit: str) -> tuple[str, str] | None:
    """``(status, text)`` of a unit that must run: ``fail`` when it is not installed, masked or not active, ``warn``
    when it runs after systemd restarted it on its own (``restarts`` above 0), ``pass`` when it runs; ``None`` when
    the facts do not hold its state (no systemctl on the host, facts of an older probe)."""
    service = _map(service)
    if service.get("exists") is False and service.get("masked") is not True:
        return "fail", unit_text(service, unit)
    active = service.get("active")
    if service.get("masked") is True or active is False:
        return "fail", unit_text(service, unit)
    if active is not True:
        return None
    if _count(service.get("restarts")):
        return "warn", unit_text(service, unit)
    return "pass", unit_text(service, unit)


def nvswitch_system(gpu: Mapping) -> bool:
    """Whether the host is an NVSwitch system that needs nvidia-fabricmanager: NVSwitch PCI functions (an HGX
    baseboard's), or a GPU whose fabric registration completed with the all-zero cluster UUID (an NVLink system that
    is not multi-node). A GB200/GB300 compute tray has neither (its switches are in the rack's switch trays, its
    cluster UUID is the rack's; one still waiting for its partition is not taken for an HGX)."""
    if (_count(_map(gpu.get("nvswitches")).get("count")) or 0) > 0:
        return True
    gpus = gpu.get("gpus") if isinstance(gpu.get("gpus"), (list, tuple)) else []
    return any(_map(_map(item).get("fabric")).get("state") == "completed"
               and _map(_map(item).get("fabric")).get("cluster_uuid") == ZERO_UUID for item in gpus)


def _waiting_fabric(gpu: Mapping) -> str:
    """The GPUs whose fabric registration is not completed, by state (``8 GPU(s) in_progress``), or empty."""
    by_state: dict[str, int] = {}
    for item in gpu.get("gpus") if isinstance(gpu.get("gpus"), (list, tuple)) else []:
        state = _word(_map(_map(item).get("fabric")).get("state"))
        if state and state not in ("completed", "not_supported"):
            by_state[state] = by_state.get(state, 0) + 1
    return ", ".join(f"{count} GPU(s) {state}" for state, count in sorted(by_state.items()))


def _check(status: str, message: str) -> dict:
    return {"name": "fabric_manager", "status": status, "message": message}


def check_fabric_manager(host: str, gpu: Mapping, host_vars: Mapping) -> dict:
    """The preflight check ``fabric_manager``: nvidia-fabricmanager runs on an NVSwitch system.

    ``skip`` without GPUs, on a host that is no NVSwitch system (:func:`nvswitch_system`), while the driver is not
    loaded (the ``nvidia_driver`` role installs the fabric manager with it), when the facts do not hold the unit's
    state, and when the unit is not installed on a host whose driver the GPU Operator's driver container owns (its
    ``nvidia_driver_gpu_operator``: the container runs the fabric manager). Otherwise the verdict of
    :func:`unit_finding`, naming the host; a failure also names the GPUs whose fabric registration waits meanwhile.
    """
    gpus = gpu.get("gpus") if isinstance(gpu.get("gpus"), (list, tuple)) else []
    if not gpus:
        return _check("skip", "no NVIDIA GPU found")
    if not nvswitch_system(gpu):
        return _check("skip", "no NVSwitch system (no NVSwitch on PCI, no single-node NVLink fabric): "
                              "no fabric manager runs on this host")
    if gpu.get("driver_loaded") is not True:
        return _check("skip", "the nvidia driver is not loaded: gpufabric.cluster.nvidia_driver installs "
                              "nvidia-fabricmanager with it")
    service = gpu.get("fabricmanager")
    if not isinstance(service, Mapping):
        return _check("skip", f"the state of {FABRICMANAGER_UNIT} is unknown (no systemctl on {host}, or facts of "
                              "an older probe)")
    if service.get("exists") is False and host_vars.get(GPU_OPERATOR_DRIVER_VARIABLE) is True:
        return _check("skip", f"{FABRICMANAGER_UNIT} is not installed on {host}: the GPU Operator's driver "
                              f"container owns the driver and runs the fabric manager ({GPU_OPERATOR_DRIVER_VARIABLE})")
    finding = unit_finding(service, FABRICMANAGER_UNIT)
    if finding is None:
        return _check("skip", f"the state of {FABRICMANAGER_UNIT} on {host} is unknown")
    status, text = finding
    if status == "fail":
        waiting = _waiting_fabric(gpu)
        tail = f"; the NVLink fabric waits meanwhile ({waiting} instead of completed)" if waiting else ""
        return _check("fail", f"{text} on {host}, an NVSwitch system that needs it{tail}")
    return _check(status, f"{text} on {host}")


def imex_service_findings(host: str | None, gpu: Mapping, imex: Mapping, mode: t.Any) -> tuple[list[str], list[str]]:
    """``(failures, warnings)`` of nvidia-imex.service for the preflight check ``imex``, each one line.

    Judged only where the IMEX mode runs the host service and nvidia-imex is installed (its absence is the ``imex``
    check's own rule): in ``dra_host_managed`` on every host (the DRA driver uses the host's daemon), in ``host`` (and
    a value that is no mode, judged as the default ``host``) on a host whose GPUs are in a multi-node clique. In
    ``dra`` mode and on a host without a clique (HGX, an idle host) nothing. A unit whose state the facts do not hold
    (read from the unit files only) is no finding.
    """
    cliques = gpu.get("cliques") if isinstance(gpu.get("cliques"), (list, tuple)) else []
    if mode == "dra" or not imex.get("installed") or (mode != "dra_host_managed" and not cliques):
        return [], []
    finding = unit_finding(imex.get("service"), IMEX_UNIT)
    if finding is None or finding[0] == "pass":
        return [], []
    status, text = finding
    where = f" on {host}" if host else ""
    shown = mode if mode in HOST_SERVICE_MODES else HOST_SERVICE_MODES[0]
    line = f"{text}{where} (IMEX mode {shown} runs it on the host)"
    return ([line], []) if status == "fail" else ([], [line])
