# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which DRA driver chart line a version belongs to, and how the installed release moves to the chosen chart.

Two chart lines share one release: NVIDIA's ``nvidia-dra-driver-gpu`` (calendar versions, 25.x, the last 25.12.0)
and kubernetes-sigs' ``dra-driver-nvidia-gpu`` (SemVer from 0.4.0). Moving from the first to the second needs the
new chart's CRDs applied first (Helm never updates CRDs) and ``nameOverride=nvidia-dra-driver-gpu`` so that the
objects keep their names; 0.4 is forward-only (the checkpoint format and the ComputeDomain schema changed), so
going back to 25.x is refused, and so is an older version of the same line unless the operator says they mean it
(``dra_driver_allow_downgrade``).

The logic of the ``gpufabric.cluster.dra_driver_upgrade`` filter and of the version-dependent keys of
``gpufabric.cluster.dra_driver_values``; errors are :class:`...cluster_roles.ClusterRoleError`.
"""

from __future__ import annotations

import re
import typing as t
from collections.abc import Mapping

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.cluster_roles import ClusterRoleError

LEGACY = "legacy"
SIGS = "sigs"
# The chart name of each line; the sigs chart is given the legacy name as nameOverride so that the objects of a
# release keep their names across the rename.
CHART_NAMES = {LEGACY: "nvidia-dra-driver-gpu", SIGS: "dra-driver-nvidia-gpu"}
NAME_OVERRIDE = CHART_NAMES[LEGACY]
_VERSION = re.compile(r"\Av?(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)"
                      r"(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?\Z")
# "<chart name>-<version>" as Helm reports a release's chart.
_RELEASE_CHART = re.compile(r"^(?P<name>[a-z0-9]([-a-z0-9]*[a-z0-9])?)-(?P<version>v?[0-9]+\.[0-9]+\.[0-9]+\S*)\Z")


def parse_version(value: t.Any, variable: str) -> tuple[int, int, int, tuple[int, str]]:
    """A sortable key of the chart version ``value`` (a pre-release sorts before its release)."""
    if not isinstance(value, str):
        raise ClusterRoleError(f"{variable} must be a chart version (a string such as 0.4.1), got "
                               f"{type(value).__name__}")
    found = _VERSION.match(value.strip())
    if not found:
        raise ClusterRoleError(f"{variable} {value!r} is not a chart version such as 0.4.1 or 25.12.0")
    major, minor, patch, pre = found.groups()
    return int(major), int(minor), int(patch), (0, pre) if pre else (1, "")


def chart_line(version: t.Any, variable: str = "chart version") -> str:
    """``legacy`` for 25.x and later calendar versions, ``sigs`` for 0.4 up to 24.x; older versions are refused."""
    major, minor = parse_version(version, variable)[:2]
    if major >= 25:
        return LEGACY
    if major >= 1 or minor >= 4:
        return SIGS
    raise ClusterRoleError(f"{variable} {version} is neither a calendar version of nvidia-dra-driver-gpu (25.x) nor "
                           "0.4 or later of dra-driver-nvidia-gpu: no DRA driver chart the role knows")


def from_0_5(version: t.Any, variable: str = "chart version") -> bool:
    """Whether ``version`` is dra-driver-nvidia-gpu 0.5 or later (a pre-release such as 0.5.0-dev counts as 0.5).

    0.5 brought host-managed IMEX (``resources.computeDomains.imex.mode=hostManaged`` behind the feature gate
    ``HostManagedIMEXDaemon``) and the kubelet plugin's ``nvidia.com/gpu.clique`` label
    (``kubeletPlugin.containers.computeDomains.gpuCliqueLabelEnabled``); 0.4 and the 25.x line have neither.
    """
    return chart_line(version, variable) == SIGS and parse_version(version, variable)[:2] >= (0, 5)


def clique_label_source(gpu_operator: Mapping, version: t.Any, variable: str = "chart version") -> str:
    """Who labels the nodes with ``nvidia.com/gpu.clique``: ``gfd``, ``dra_driver`` or ``none``.

    ``gpu_operator`` is the GPU Operator's ClusterPolicy as the role reads it (empty without one); its
    ``gfd`` (``spec.gfd.enabled``) defaults to true as in the ClusterPolicy. Where no GPU Feature Discovery runs,
    a 0.5 or later chart sets the label itself; otherwise (or without a version) nobody the role knows of does
    (``none``).
    """
    if not isinstance(gpu_operator, Mapping):
        raise ClusterRoleError(f"the GPU Operator's settings must be a mapping, got {type(gpu_operator).__name__}")
    if gpu_operator:
        gfd = gpu_operator.get("gfd")
        try:
            if gfd is None or arguments.boolean("gpu_operator.gfd", gfd):
                return "gfd"
        except arguments.ArgumentError as exc:
            raise ClusterRoleError(str(exc)) from None
    if version is None or version == "":
        return "none"
    return "dra_driver" if from_0_5(version, variable) else "none"


def release_chart(status: t.Any) -> dict | None:
    """``{name, version}`` of an installed release from ``kubernetes.core.helm_info``'s ``status``; None without."""
    if status is None or (isinstance(status, Mapping) and not status):
        return None
    if not isinstance(status, Mapping):
        raise ClusterRoleError(f"installed must be the release status (a mapping) or null, got {type(status).__name__}")
    chart = status.get("chart")
    found = _RELEASE_CHART.match(chart) if isinstance(chart, str) else None
    if not found:
        raise ClusterRoleError(f"installed release's chart {chart!r} is not <chart name>-<version>")
    return {"name": found["name"], "version": found["version"]}


def upgrade_plan(installed: t.Any, target: t.Any, allow_downgrade: t.Any = False) -> dict:
    """How the installed release (``helm_info`` status, empty without one) moves to ``target`` ({name, version}).

    Returns ``{action, from, to, line, apply_crds, message}``; ``action`` is ``install`` (no release), ``migrate``
    (25.x to 0.4 or later), ``upgrade`` (a newer version of the same line), ``downgrade`` (an older version of the
    same line, only with ``allow_downgrade``) or ``none`` (the same chart and version). An older version of the same
    line is refused without ``allow_downgrade`` (a boolean as Ansible reads one: ``"false"`` is false), naming both
    versions and the setting: upstream upgrades forward only. A move from 0.4 or later back to 25.x is refused
    whatever ``allow_downgrade`` says.
    """
    try:
        allow = arguments.boolean("dra_driver_allow_downgrade", allow_downgrade)
    except arguments.ArgumentError as exc:
        raise ClusterRoleError(str(exc)) from None
    if not isinstance(target, Mapping):
        raise ClusterRoleError(f"target must be the chosen chart (a mapping with name and version), got "
                               f"{type(target).__name__}")
    version = target.get("version")
    line = chart_line(version, "the chosen chart's version")
    name = target.get("name")
    if name not in (None, "") and name != CHART_NAMES[line]:
        raise ClusterRoleError(f"the chosen chart is {name!r} {version}, but version {version} is a version of "
                               f"{CHART_NAMES[line]!r}")
    to = {"name": CHART_NAMES[line], "version": str(version).strip()}
    current = release_chart(installed)
    plan = {"from": current, "to": to, "line": line, "apply_crds": line == SIGS}
    if current is None:
        return {**plan, "action": "install", "message": f"install {to['name']} {to['version']}"}
    current_line = chart_line(current["version"], "the installed release's chart version")
    moving = f"{current['name']} {current['version']} to {to['name']} {to['version']}"
    if current_line == SIGS and line == LEGACY:
        raise ClusterRoleError(f"refusing to downgrade the DRA driver from {moving}: 0.4 and later are forward-only "
                               "(the kubelet plugin checkpoint and the ComputeDomain API changed); keep "
                               "dra_driver_chart_version at 0.4 or later")
    if current_line == LEGACY and line == SIGS:
        return {**plan, "action": "migrate", "message": f"migrate {moving}: CRDs first, then the release "
                                                        f"with nameOverride={NAME_OVERRIDE}"}
    old, new = parse_version(current["version"], "version"), parse_version(to["version"], "version")
    if old == new and current["name"] == to["name"]:
        return {**plan, "action": "none", "message": f"{to['name']} {to['version']} installed"}
    if new < old and not allow:
        raise ClusterRoleError(f"refusing to downgrade the DRA driver from {moving}, nothing changed: upstream "
                               "upgrades forward only (the kubelet plugin checkpoint and the ComputeDomain API of a "
                               f"newer release may not be read back by an older one); set dra_driver_chart_version "
                               f"to {current['version']} or later, or dra_driver_allow_downgrade to true to "
                               "downgrade anyway")
    action = "downgrade" if new < old else "upgrade"
    return {**plan, "action": action, "message": f"{action} {moving}"}
