# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Whether a wave of a day-2 change may return to service, judged on the controller (issue 42).

A wave (:mod:`.domain_waves`) is judged after its members rebooted, from what each member's probe answered then
(``gpu_info`` and, where the site's IMEX mode runs nvidia-imex on the host, ``imex_info``).  A NVLink domain passes
only when every member does and the members agree:

- every member answered (a member that did not come back fails its domain);
- the wanted driver is loaded on every member: the branch, and the version when one is pinned;
- its fabric is healthy as the preflight judges it (:func:`.fabric_health.check_fabric_health`: fabric state
  completed, health clean, the NVLinks the model has); a member whose probe could not use NVML is a note, not a pass
  of the fabric;
- its GPUs need no repair (:func:`.preflight.check_gpu_health`'s failures: a pending or failed row remap, a volatile
  uncorrectable ECC error, a recovery action asking for a reset or a reboot);
- one driver version and one nvidia-imex version on all members (:func:`.nvlink_domain.version_problems`);
- where the IMEX mode runs nvidia-imex on the host, each member's IMEX domain is UP with every node connected
  (:func:`.preflight.check_imex_host`), and its nvidia-imex is of the loaded driver's version: nvidia-imex is a
  user-space component of the driver, and the kernel module refuses a client of another version (NVRM "API
  mismatch: ... make sure that this kernel module and all NVIDIA driver components have the same version"; NVIDIA's
  driver container installs ``nvidia-imex-<branch>=<driver version>``, NVIDIA/gpu-driver-container pull 149).

A host in no domain is judged alone, on the same terms.  Each problem names the member with its rack and slot.
"""

from __future__ import annotations

import typing as t
from collections.abc import Mapping

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.fabric_health import check_fabric_health
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.nvlink_domain import (
    imex_version,
    place_text,
    tray_place,
    version_problems,
)
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.preflight import check_gpu_health, check_imex_host

HOST_IMEX_MODES = ("host", "dra_host_managed")


class DomainVerificationError(ValueError):
    """Input that cannot be judged; the message names the argument."""


def _map(value: t.Any) -> Mapping:
    return value if isinstance(value, Mapping) else {}


def _label(name: str, gpu: Mapping, before: Mapping) -> str:
    place = place_text(tray_place({"gpu": gpu}) or tray_place(before))
    return f"{name} ({place})" if place else name


def member_problems(name: str, answer: t.Any, wanted: Mapping, imex_mode: str, socket_path: str,
                    before: Mapping, step: t.Any = None) -> tuple[list[str], list[str]]:
    """``(problems, notes)`` of one member from its probe's answer after the reboot.

    ``answer`` is ``{gpu, imex}`` (``imex`` may be absent where the IMEX mode does not run it on the host), or not a
    mapping when the member did not answer; ``wanted`` is ``{branch, version}`` (``version`` empty: any of the
    branch); ``before`` the member's facts before the change, for its place when the new probe names none; ``step``
    the step of the wave the member last began (``drain``, ``change``, ``verification``), named when it gave no answer.
    """
    gpu = _map(_map(answer).get("gpu"))
    label = _label(name, gpu, before)
    if not gpu:
        if step in ("drain", "change"):
            return [f"{label}: failed during the {step} (see its task's error); nothing was verified"], []
        return [f"{label}: no answer after the change (it did not come back, or its probe failed)"], []
    problems: list[str] = []
    notes: list[str] = []
    version = gpu.get("driver_version") if isinstance(gpu.get("driver_version"), str) else None
    branch = str(wanted.get("branch") or "")
    pinned = str(wanted.get("version") or "")
    if not gpu.get("driver_loaded") or not version:
        problems.append(f"{label}: the NVIDIA driver is not loaded (wanted branch {branch})")
    elif version.split(".")[0] != branch:
        problems.append(f"{label}: driver {version} is loaded, not branch {branch}")
    elif pinned and version != pinned:
        problems.append(f"{label}: driver {version} is loaded, not the pinned {pinned}")
    health = check_fabric_health(gpu)
    if health["status"] == "fail":
        problems.append(f"{label}: {health['message']}")
    elif health["status"] == "warn":
        notes.append(f"{label}: {health['message']}")
    memory = check_gpu_health(name, gpu, {})
    if memory["status"] == "fail":
        problems.append(f"{label}: {memory['message']}")
    if imex_mode in HOST_IMEX_MODES and "imex" in _map(answer):
        imex = check_imex_host(dict(gpu), dict(_map(_map(answer).get("imex"))), imex_mode, socket_path)
        if imex["status"] == "fail":
            problems.append(f"{label}: IMEX: {imex['message']}")
        elif imex["status"] == "warn":
            notes.append(f"{label}: IMEX: {imex['message']}")
        daemon = imex_version({"imex": _map(_map(answer).get("imex"))})
        if daemon and version and daemon != version:
            problems.append(f"{label}: nvidia-imex {daemon} runs over driver {version}: nvidia-imex is a user-space "
                            "component of the driver and must be of its version (the kernel module refuses a client "
                            "of another one)")
    return problems, notes


def _judge(kind: str, name: str, rack: t.Any, members: t.Sequence[str], answers: Mapping, wanted: Mapping,
           imex_mode: str, socket_path: str, before: Mapping, steps: Mapping) -> dict:
    lost: list[str] = []
    problems: list[str] = []
    notes: list[str] = []
    for member in members:
        member_wanted = _map(wanted.get(member))
        found, noted = member_problems(member, answers.get(member), member_wanted, imex_mode, socket_path,
                                       _map(before.get(member)), steps.get(member))
        (problems if _map(_map(answers.get(member)).get("gpu")) else lost).extend(found)
        notes += noted
    problems = lost + problems
    answered = {member: {"gpu": _map(_map(answers.get(member)).get("gpu")),
                         "imex": _map(_map(answers.get(member)).get("imex"))}
                for member in members if _map(_map(answers.get(member)).get("gpu"))}
    coherence, coherence_notes = version_problems(answered)
    return {"kind": kind, "name": name, "rack": rack, "hosts": list(members), "passed": not problems and not coherence,
            "problems": problems + coherence, "notes": notes + coherence_notes}


def verify_wave(wave: t.Any, answers: t.Any, wanted: t.Any, imex_mode: t.Any = "none",
                socket_path: t.Any = "", before: t.Any = None, steps: t.Any = None) -> dict:
    """Judge ``wave`` (one of :func:`.domain_waves.plan_waves`): ``{passed, domains: [{kind, name, rack, hosts, passed,
    problems, notes, reason}], failed_hosts, reasons}`` (``reason``: :func:`failure_reason` of a failed one, else
    ``None``; ``reasons`` maps each failed host to its domain's).

    ``answers`` maps a host to its probe's answer after the reboot (``{gpu, imex}``; a host without one did not come
    back), ``wanted`` a host to ``{branch, version}``, ``before`` a host to its facts before the change, ``steps`` a
    host to the step it last began (named for a host without an answer).  A wave
    of hosts in no domain is judged host by host (``kind`` is ``host``, ``name`` the host).  ``failed_hosts`` are
    the hosts of every domain that failed: they stay out of service.
    """
    wave = arguments.mapping("wave", wave)
    answers = arguments.mapping("answers", answers)
    wanted = arguments.mapping("wanted", wanted)
    before = arguments.mapping("before", before or {})
    steps = arguments.mapping("steps", steps or {})
    imex_mode = arguments.text("imex_mode", imex_mode)
    socket_path = arguments.text("socket_path", socket_path, allow_empty=True)
    domains = [_map(domain) for domain in arguments.sequence("wave['domains']", wave.get("domains") or [])]
    judged = [_judge("domain", str(domain.get("name")), domain.get("rack"),
                     arguments.sequence("domain hosts", domain.get("hosts")), answers, wanted, imex_mode,
                     socket_path, before, steps) for domain in domains]
    if not domains:
        judged = [_judge("host", name, None, [name], answers, wanted, imex_mode, socket_path, before, steps)
                  for name in arguments.sequence("wave['hosts']", wave.get("hosts") or [])]
    for domain in judged:
        domain["reason"] = None if domain["passed"] else failure_reason(domain)
    failed = [name for domain in judged if not domain["passed"] for name in domain["hosts"]]
    reasons = {name: domain["reason"] for domain in judged if not domain["passed"] for name in domain["hosts"]}
    return {"passed": not failed, "domains": judged, "failed_hosts": failed, "reasons": reasons}


def failure_reason(domain: Mapping, limit: int = 3) -> str:
    """One line for the node annotation and the report: the domain and its first problems, never file text."""
    problems = list(domain.get("problems") or [])
    shown = "; ".join(problems[:limit]) + (f"; and {len(problems) - limit} more" if len(problems) > limit else "")
    what = f"NVLink domain {domain.get('name')}" if domain.get("kind") == "domain" else f"host {domain.get('name')}"
    return f"{what} failed verification after the change: {shown}"
