# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""may the NVIDIA DRA driver be installed?

Judges, before anything is installed: the Kubernetes version and its DRA API (``resource.k8s.io``), the
NVIDIA driver on every GPU host (host-installed or the GPU Operator's), the host ``nvidia-imex`` service
masked (``imex_mode`` ``dra``: the DRA driver runs IMEX) or active and READY on the control socket the driver is
given (``dra_host_managed``), and the ``nvidia.com/gpu.clique`` label of every GPU host's node, saying which
source labels the nodes (GPU Feature Discovery, or the DRA driver 0.5+ where no GFD runs).

The logic of the ``gpufabric.cluster.dra_driver_prerequisites`` filter; errors are
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
    host_facts,
)
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.imex_config import MODES as IMEX_MODES
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.imex_socket import socket_path_problem
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.versions import at_least

CLIQUE_LABEL = "nvidia.com/gpu.clique"
# What gpufabric.cluster.nvidia_driver publishes about the driver it installs in this run (action, branch, version).
PLAN_VARIABLE = "nvidia_driver_plan"
# The role's settings the prerequisites are judged with (dra_driver_<name>); their defaults are the role's argument
# spec's.
SETTINGS = ("min_kubernetes_version", "compute_domains", "chart_version")
# The filter's own settings, which are no role variable: the oldest Kubernetes whose DRA API the driver can use at all,
# and the host variable that names a host's Kubernetes node.
FILTER_SETTINGS = {"oldest_kubernetes_version": "1.32.0", "node_name_var": "dra_driver_node_name"}
# The settings whose default is a site setting's (the role defaults its variables to them): read from the argument
# spec of roles/gpufabric, never copied here.
SITE_SETTINGS = {"min_driver_version": "gpufabric_min_driver_version", "imex_mode": "gpufabric_imex_mode",
                 "imex_socket_path": "gpufabric_imex_socket_path"}
HOST_MANAGED = "gpufabric.cluster.nvidia_imex with nvidia_imex_mode=dra_host_managed"
RUNNING = f"({HOST_MANAGED})"


def _check(name: str, problems: list[str], ok: str) -> dict:
    return {"name": name, "status": "fail" if problems else "pass", "message": "; ".join(problems) or ok}


def _kubernetes(cluster: Mapping, settings: Mapping) -> dict:
    version = str(cluster.get("version") or "")
    served = sorted(str(api) for api in cluster.get("apis") or [] if str(api).startswith("resource.k8s.io/"))
    if not version:
        return _check("kubernetes", ["the API server reported no version"], "")
    if not at_least(version, settings["oldest_kubernetes_version"]):
        return _check("kubernetes", [f"Kubernetes {version} is older than {settings['oldest_kubernetes_version']}, "
                                     "the oldest the nvidia-dra-driver-gpu chart accepts"], "")
    if not served:
        return _check("kubernetes", [
            f"Kubernetes {version} serves no resource.k8s.io API: Dynamic Resource Allocation is off; it needs "
            f"Kubernetes >= {settings['min_kubernetes_version']} (dra_driver_min_kubernetes_version) or the "
            "DynamicResourceAllocation feature gates and the resource.k8s.io runtime config"], "")
    if at_least(version, settings["min_kubernetes_version"]) and "resource.k8s.io/v1" in served:
        return _check("kubernetes", [], f"Kubernetes {version} with DRA ({', '.join(served)})")
    return _check("kubernetes", [], f"Kubernetes {version} is older than {settings['min_kubernetes_version']} "
                                    f"but serves DRA through the feature gates ({', '.join(served)})")


def _planned(hostvars: Mapping, host: str) -> str | None:
    """The driver ``gpufabric.cluster.nvidia_driver`` installs on ``host`` in this run (its published
    ``nvidia_driver_plan``): the pinned version, else the branch; None when it installs nothing there."""
    plan = (hostvars.get(host) or {}).get(PLAN_VARIABLE)
    if not isinstance(plan, Mapping) or plan.get("action") != "install":
        return None
    version = str(plan.get("version") or plan.get("branch") or "").strip()
    return version or None


def _planned_problem(where: str, planned: str, minimum: str) -> str | None:
    """A pinned version is judged as a loaded one; a branch alone passes only when it is newer than the minimum's
    branch (the repository may serve any version of it)."""
    if "." in planned:
        return None if at_least(planned, minimum) else \
            f"{where}: driver {planned} is older than {minimum} (dra_driver_min_driver_version)"
    if planned.isdigit() and int(planned) > int(minimum.split(".")[0] or 0):
        return None
    return (f"{where}: branch {planned} may install a driver older than {minimum} (dra_driver_min_driver_version): "
            "pin nvidia_driver_package_version, or choose a newer nvidia_driver_branch")


def _driver(facts: Mapping[str, Mapping], operator: Mapping, settings: Mapping,
            planned: Mapping[str, str] | None = None) -> dict:
    minimum = settings["min_driver_version"]
    problems = []
    for host, item in sorted(facts.items()):
        if host in (planned or {}):
            problem = _planned_problem(f"host {host} (the driver nvidia_driver installs in this run)", planned[host],
                                       minimum)
            problems += [problem] if problem else []
            continue
        gpu = item.get("gpu") or {}
        version = gpu.get("driver_version") if gpu.get("driver_loaded") else None
        where = f"host {host}"
        if not version and operator.get("driver_enabled"):
            version, where = operator.get("driver_version"), f"the GPU Operator's driver for {host}"
        if not version:
            problems.append(f"host {host} has no NVIDIA driver loaded and the GPU Operator does not install one")
        elif not at_least(version, minimum):
            problems.append(f"{where}: driver {version} is older than {minimum} (dra_driver_min_driver_version)")
    return _check("driver", problems, f"NVIDIA driver at least {minimum} on every GPU host ({len(facts)})")


def _section(host: str, item: Mapping, key: str) -> Mapping:
    """``imex.<key>`` of a host's facts, empty when absent; a wrong shape is an error naming the host."""
    imex = item.get("imex")
    if imex is None:
        return {}
    if not isinstance(imex, Mapping):
        raise ClusterRoleError(f"host {host}: its imex facts must be a mapping, got {type(imex).__name__}")
    section = imex.get(key)
    if section is None:
        return {}
    if not isinstance(section, Mapping):
        raise ClusterRoleError(f"host {host}: its imex.{key} facts must be a mapping, got {type(section).__name__}")
    return section


def _flag(host: str, section: Mapping, key: str, name: str) -> bool | None:
    """A boolean fact (Ansible's conversion: "false", "no", 0 are false), None when absent."""
    value = section.get(key)
    if value is None:
        return None
    try:
        return arguments.boolean(f"host {host}: imex.{name}.{key}", value)
    except arguments.ArgumentError as exc:
        raise ClusterRoleError(str(exc)) from None


def _masked(host: str, item: Mapping) -> str | None:
    service = _section(host, item, "service")
    flags = {key: _flag(host, service, key, "service") for key in ("exists", "masked", "active", "enabled")}
    if flags["exists"] and not flags["masked"]:
        state = "active" if flags["active"] else ("enabled" if flags["enabled"] else "not masked")
        return (f"host {host}: the host nvidia-imex service is {state}; the DRA driver runs IMEX, mask it "
                "(gpufabric.cluster.nvidia_imex with nvidia_imex_mode=dra)")
    return None


def _host_managed(host: str, item: Mapping, socket: str) -> str | None:
    service, control = _section(host, item, "service"), _section(host, item, "control")
    flags = {key: _flag(host, service, key, "service") for key in ("exists", "masked", "active")}
    if not flags["exists"]:
        return (f"host {host}: no host nvidia-imex service; dra_host_managed needs it installed and running "
                f"({HOST_MANAGED})")
    if flags["masked"]:
        return f"host {host}: the host nvidia-imex service is masked; dra_host_managed needs it running {RUNNING}"
    if not flags["active"]:
        return f"host {host}: the host nvidia-imex service is not active; dra_host_managed needs it running {RUNNING}"
    if not control:
        return (f"host {host}: its facts report no IMEX control socket (imex.control); gather them again with "
                "gpufabric.cluster.fabric_facts")
    path = control.get("socket_path")
    if path is not None and not isinstance(path, str):
        raise ClusterRoleError(f"host {host}: imex.control.socket_path must be a string or null, got "
                               f"{type(path).__name__}")
    if not _flag(host, control, "enabled", "control"):
        return (f"host {host}: the host nvidia-imex control socket is off (IMEX_CMD_ENABLED); dra_host_managed needs "
                f"it on at {socket} ({HOST_MANAGED})")
    if path != socket:
        return (f"host {host}: the host nvidia-imex control socket is {path or 'not set'}, but the DRA driver is given "
                f"{socket} (dra_driver_imex_socket_path, gpufabric_imex_socket_path)")
    if _flag(host, control, "ready", "control") is not True:
        answer = "; ".join(str(control[key]) for key in ("status", "reason") if control.get(key) not in (None, ""))
        return f"host {host}: host IMEX is not READY on {socket} (nvidia-imex-ctl -q: {answer or 'no answer'})"
    return None


def _imex(facts: Mapping[str, Mapping], settings: Mapping) -> dict:
    problems = []
    host_managed = settings["imex_mode"] == "dra_host_managed"
    socket_problem = socket_path_problem("dra_driver_imex_socket_path", settings["imex_socket_path"]) \
        if host_managed else None
    if socket_problem:
        return _check("imex", [socket_problem], "")
    for host, item in sorted(facts.items()):
        problem = _host_managed(host, item, settings["imex_socket_path"]) if host_managed else _masked(host, item)
        if problem:
            problems.append(problem)
    if host_managed:
        return _check("imex", problems, f"host nvidia-imex active and READY on {settings['imex_socket_path']} on "
                                        f"every GPU host ({len(facts)})")
    return _check("imex", problems, "host nvidia-imex masked or absent on every GPU host")


SOURCES = {
    "gfd": "labelled by GPU Feature Discovery",
    "dra_driver": "labelled by the DRA driver (gpuCliqueLabelEnabled), no GPU Feature Discovery runs",
    "none": "labelled by another source: no GPU Feature Discovery runs and the DRA driver chart does not label "
            "(0.5 or later does)",
}


def _cliques(hostvars: Mapping, facts: Mapping[str, Mapping], cluster: Mapping, settings: Mapping,
             source: str) -> dict:
    nodes = {str(node.get("name")): dict(node.get("labels") or {}) for node in cluster.get("nodes") or []}
    problems, labelled, to_label = [], 0, 0
    for host, item in sorted(facts.items()):
        cliques = sorted((item.get("gpu") or {}).get("cliques") or [])
        if not cliques:
            continue
        node = str((hostvars.get(host) or {}).get(settings["node_name_var"]) or host)
        if len(cliques) > 1:
            problems.append(f"host {host}: its GPUs are in several fabric cliques ({', '.join(cliques)})")
        elif node not in nodes:
            problems.append(f"host {host}: no Kubernetes node {node} "
                            f"(set {settings['node_name_var']} to its node name)")
        elif source == "dra_driver" and CLIQUE_LABEL not in nodes[node]:
            to_label += 1
        elif nodes[node].get(CLIQUE_LABEL) != cliques[0]:
            found = nodes[node].get(CLIQUE_LABEL)
            problems.append(f"node {node} (host {host}): label {CLIQUE_LABEL} is {found or 'missing'}, its GPUs are in "
                            f"clique {cliques[0]}")
        else:
            labelled += 1
    if problems:
        problems.append(f"the nodes are {SOURCES[source]}")
    ok = f"{CLIQUE_LABEL} present and right on the nodes of {labelled} GPU hosts"
    if to_label:
        ok += f", set by the DRA driver on the nodes of {to_label} more"
    return _check("cliques", problems, f"{ok} ({SOURCES[source]})")


def dra_driver_prerequisites(hostvars: Mapping, hosts: t.Sequence[str], cluster: Mapping,
                             settings: Mapping | None = None) -> dict:
    """Return ``{ok, checks, problems}``; see the filter documentation."""
    defaults = {**FILTER_SETTINGS, **site_settings.role_defaults("dra_driver", "dra_driver_", SETTINGS),
                **site_settings.site_defaults(SITE_SETTINGS)}
    chosen = chosen_settings(settings, defaults, {"imex_mode": IMEX_MODES}, "dra_driver_")
    if not isinstance(cluster, Mapping):
        raise ClusterRoleError(f"cluster must be a dict, got {type(cluster).__name__}")
    shapes = {
        "nodes": ("a list of mappings", lambda v: isinstance(v, list) and all(isinstance(n, Mapping) for n in v)),
        "apis": ("a list", lambda v: isinstance(v, list)),
        "gpu_operator": ("a mapping", lambda v: isinstance(v, Mapping)),
    }
    for key, (kind, check) in shapes.items():
        if cluster.get(key) is not None and not check(cluster[key]):
            raise ClusterRoleError(f"cluster.{key} must be {kind}, got {type(cluster[key]).__name__}")
    operator = dict(cluster.get("gpu_operator") or {})
    if operator.get("driver_enabled") is not None:
        try:
            operator["driver_enabled"] = arguments.boolean("cluster.gpu_operator.driver_enabled",
                                                           operator["driver_enabled"])
        except arguments.ArgumentError as exc:
            raise ClusterRoleError(str(exc)) from None
    source = dra_driver_chart.clique_label_source(cluster.get("gpu_operator") or {}, chosen["chart_version"],
                                                  "dra_driver_chart_version")
    facts = host_facts(hostvars, hosts, "dra_driver_hosts")
    try:
        check_mode = arguments.boolean("cluster.check_mode", cluster.get("check_mode", False))
    except arguments.ArgumentError as exc:
        raise ClusterRoleError(str(exc)) from None
    # In check mode nothing was installed for the facts to show: judge the driver this run would install.
    planned = {host: version for host in facts if (version := _planned(hostvars, host))} if check_mode else {}
    checks = [_kubernetes(cluster, chosen), _driver(facts, operator, chosen, planned)]
    if chosen["compute_domains"]:
        checks += [_imex(facts, chosen), _cliques(hostvars, facts, cluster, chosen, source)]
    problems = [check["message"] for check in checks if check["status"] == "fail"]
    return {"ok": not problems, "checks": checks, "problems": problems}
