# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""DRA driver chart values (nvidia-dra-driver-gpu 25.x, dra-driver-nvidia-gpu 0.4 and later).

GPU resources agree with the GPU Operator's device plugin (never both), ``nvidiaDriverRoot`` is where the
driver lives (``/`` on the host, the GPU Operator's driver install directory otherwise).
The chart version decides where the two chart lines differ: 0.4 and later get
``nameOverride=nvidia-dra-driver-gpu`` (the objects keep the names the 25.x chart gave them) and take their image
from ``registry.k8s.io/dra-driver-nvidia``.

The logic of the ``gpufabric.cluster.dra_driver_values`` filter; errors are
:class:`...cluster_roles.ClusterRoleError`.
"""

from __future__ import annotations

import typing as t
from collections.abc import Mapping

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments, dra_driver_chart
from ansible_collections.gpufabric.cluster.plugins.plugin_utils import settings as site_settings
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.cluster_roles import (
    ClusterRoleError,
    chosen_settings,
    registry_repository,
    secret_names,
)
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.imex_config import MODES as IMEX_MODES
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.imex_socket import socket_path_problem

# The role's settings the values are derived from (dra_driver_<name>); their defaults are the role's argument spec's.
SETTINGS = ("gpus", "compute_domains", "driver_root", "webhook", "image_registry", "image_pull_secrets",
            "chart_version")
# The settings whose default is a site setting's (the role defaults its variables to them): read from the argument
# spec of roles/gpufabric, never copied here.
SITE_SETTINGS = {"imex_mode": "gpufabric_imex_mode", "imex_socket_path": "gpufabric_imex_socket_path"}
REPOSITORY = "nvcr.io/nvidia/k8s-dra-driver-gpu"
# The image of dra-driver-nvidia-gpu 0.4 and later; an image registry override replaces SIGS_REGISTRY.
SIGS_REGISTRY = "registry.k8s.io/dra-driver-nvidia"
SIGS_REPOSITORY = SIGS_REGISTRY + "/dra-driver-nvidia-gpu"


def dra_driver_values(gpu_operator: Mapping | None, settings: Mapping | None = None) -> dict:
    """Return ``{values, decisions}``; see the filter documentation."""
    if gpu_operator is not None and not isinstance(gpu_operator, Mapping):
        raise ClusterRoleError(f"_input must be the GPU Operator's settings (a mapping) or null, got "
                               f"{type(gpu_operator).__name__}")
    operator = dict(gpu_operator or {})
    defaults = {**site_settings.role_defaults("dra_driver", "dra_driver_", SETTINGS),
                **site_settings.site_defaults(SITE_SETTINGS)}
    chosen = chosen_settings(settings, defaults, {"imex_mode": IMEX_MODES}, "dra_driver_")
    for key in ("device_plugin", "driver_enabled"):
        try:
            operator[key] = arguments.boolean(f"_input.{key}", operator[key]) if operator.get(key) is not None \
                else False
        except arguments.ArgumentError as exc:
            raise ClusterRoleError(str(exc)) from None
    if chosen["chart_version"] in (None, ""):
        raise ClusterRoleError("dra_driver_chart_version is empty: the chart version decides the values "
                               "(25.x or 0.4 and later)")
    line = dra_driver_chart.chart_line(chosen["chart_version"], "dra_driver_chart_version")
    if chosen["gpus"] not in ("auto", "enabled", "disabled"):
        raise ClusterRoleError(f"dra_driver_gpus must be auto, enabled or disabled, got {chosen['gpus']!r}")
    device_plugin = bool(operator.get("device_plugin"))
    if chosen["gpus"] == "enabled" and device_plugin:
        raise ClusterRoleError("dra_driver_gpus is enabled but the GPU Operator's device plugin runs "
                               "(ClusterPolicy spec.devicePlugin.enabled, gpu_operator_device_plugin): the GPUs "
                               "would be published twice; set gpu_operator_device_plugin to false or "
                               "dra_driver_gpus to auto")
    if chosen["gpus"] == "auto":
        gpus = not device_plugin
        gpus_reason = ("the GPU Operator's device plugin publishes the GPUs" if device_plugin
                       else "no GPU Operator device plugin runs")
    else:
        gpus, gpus_reason = chosen["gpus"] == "enabled", f"dra_driver_gpus is {chosen['gpus']}"
    if not gpus and not chosen["compute_domains"]:
        raise ClusterRoleError("dra_driver_compute_domains is false and GPU resources are off "
                               f"({gpus_reason}): the DRA driver would do nothing")
    if chosen["driver_root"]:
        root, root_reason = str(chosen["driver_root"]), "dra_driver_driver_root"
    elif operator.get("driver_enabled"):
        root = str(operator.get("driver_install_dir") or "/run/nvidia/driver")
        root_reason = "the GPU Operator installs the driver"
    else:
        root, root_reason = "/", "the driver is installed on the hosts"
    pull_secrets = secret_names(chosen["image_pull_secrets"], "dra_driver_image_pull_secrets")
    values: dict[str, t.Any] = {
        "nvidiaDriverRoot": root,
        "resources": {"gpus": {"enabled": gpus}, "computeDomains": {"enabled": bool(chosen["compute_domains"])}},
        "webhook": {"enabled": bool(chosen["webhook"])},
    }
    if gpus:
        # The chart refuses GPU resources unless told that they are meant (they are, decided above).
        values["gpuResourcesEnabledOverride"] = True
    if line == dra_driver_chart.SIGS:
        values["nameOverride"] = dra_driver_chart.NAME_OVERRIDE
    if chosen["image_registry"]:
        if line == dra_driver_chart.SIGS:
            repository = str(chosen["image_registry"]).rstrip("/") + SIGS_REPOSITORY[len(SIGS_REGISTRY):]
        else:
            repository = registry_repository(REPOSITORY, chosen["image_registry"])
        values["image"] = {"repository": repository}
    if pull_secrets:
        values["imagePullSecrets"] = [{"name": name} for name in pull_secrets]
    imex = _imex(values, chosen, line)
    clique_label = _clique_label(values, dict(gpu_operator or {}), chosen)
    return {"values": values, "decisions": {"gpus": {"enabled": gpus, "reason": gpus_reason},
                                            "driver_root": {"path": root, "reason": root_reason},
                                            "chart": {"line": line, "name": dra_driver_chart.CHART_NAMES[line],
                                                      "version": str(chosen["chart_version"])},
                                            "imex": imex, "clique_label": clique_label}}


def _imex(values: dict, chosen: Mapping, line: str) -> dict:
    """Host-managed IMEX values in ``dra_host_managed`` mode (0.5 or later); the decision either way."""
    mode, version = chosen["imex_mode"], str(chosen["chart_version"])
    if not chosen["compute_domains"]:
        return {"mode": None, "socket_path": None, "reason": "no ComputeDomains (dra_driver_compute_domains)"}
    if mode != "dra_host_managed":
        return {"mode": "driverManaged", "socket_path": None,
                "reason": f"dra_driver_imex_mode is {mode}: the DRA driver runs IMEX per ComputeDomain"}
    if not dra_driver_chart.from_0_5(version, "dra_driver_chart_version"):
        raise ClusterRoleError(f"dra_driver_imex_mode is dra_host_managed but the chart is "
                               f"{dra_driver_chart.CHART_NAMES[line]} {version}: host-managed IMEX "
                               "(resources.computeDomains.imex.mode=hostManaged) needs dra-driver-nvidia-gpu 0.5 or "
                               "later; set dra_driver_chart_version to 0.5 or later, or gpufabric_imex_mode to dra")
    socket = chosen["imex_socket_path"]
    problem = socket_path_problem("dra_driver_imex_socket_path", socket)
    if problem:
        raise ClusterRoleError(problem)
    values["featureGates"] = {"HostManagedIMEXDaemon": True}
    values["resources"]["computeDomains"]["imex"] = {"mode": "hostManaged", "hostSocketPath": socket}
    return {"mode": "hostManaged", "socket_path": socket,
            "reason": "dra_driver_imex_mode is dra_host_managed: the host nvidia-imex service runs IMEX"}


def _clique_label(values: dict, operator: Mapping, chosen: Mapping) -> dict:
    """``gpuCliqueLabelEnabled`` where no GPU Feature Discovery runs and the chart (0.5 or later) can label."""
    if not chosen["compute_domains"]:
        return {"source": None, "reason": "no ComputeDomains (dra_driver_compute_domains)"}
    source = dra_driver_chart.clique_label_source(operator, chosen["chart_version"], "dra_driver_chart_version")
    if source == "gfd":
        return {"source": "gfd", "reason": "the GPU Operator's GPU Feature Discovery labels the nodes"}
    if source == "dra_driver":
        values["kubeletPlugin"] = {"containers": {"computeDomains": {"gpuCliqueLabelEnabled": True}}}
        return {"source": "dra_driver", "reason": "no GPU Feature Discovery runs: the DRA driver labels the nodes "
                                                  "(gpuCliqueLabelEnabled)"}
    return {"source": None, "reason": f"no GPU Feature Discovery runs and chart {chosen['chart_version']} cannot "
                                      "label the nodes (0.5 or later can): the label must come from elsewhere"}
