# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""may the NVIDIA DRA driver be installed?

Judges, before anything is installed: the Kubernetes version and its DRA API (``resource.k8s.io``), the
NVIDIA driver on every GPU host (host-installed or the GPU Operator's), the host ``nvidia-imex`` service
masked (the DRA driver runs IMEX), and the ``nvidia.com/gpu.clique`` label of every GPU host's node.

The logic of the ``gpufabric.cluster.dra_driver_prerequisites`` filter; errors are
:class:`...cluster_roles.ClusterRoleError`.
"""

from __future__ import annotations

import typing as t
from collections.abc import Mapping

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.cluster_roles import (
    ClusterRoleError,
    chosen_settings,
    host_facts,
)
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.versions import (
    COMPUTE_DOMAIN_MIN_DRIVER_VERSION,
    at_least,
)

CLIQUE_LABEL = "nvidia.com/gpu.clique"
DEFAULTS = {
    "min_kubernetes_version": "1.34.2",
    "oldest_kubernetes_version": "1.32.0",
    "min_driver_version": COMPUTE_DOMAIN_MIN_DRIVER_VERSION,
    "compute_domains": True,
    "node_name_var": "dra_driver_node_name",
}


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


def _driver(facts: Mapping[str, Mapping], operator: Mapping, settings: Mapping) -> dict:
    minimum = settings["min_driver_version"]
    problems = []
    for host, item in sorted(facts.items()):
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


def _imex(facts: Mapping[str, Mapping]) -> dict:
    problems = []
    for host, item in sorted(facts.items()):
        service = (item.get("imex") or {}).get("service") or {}
        if service.get("exists") and not service.get("masked"):
            state = "active" if service.get("active") else ("enabled" if service.get("enabled") else "not masked")
            problems.append(f"host {host}: the host nvidia-imex service is {state}; the DRA driver runs IMEX, mask it "
                            "(gpufabric.cluster.nvidia_imex with nvidia_imex_mode=dra)")
    return _check("imex", problems, "host nvidia-imex masked or absent on every GPU host")


def _cliques(hostvars: Mapping, facts: Mapping[str, Mapping], cluster: Mapping, settings: Mapping) -> dict:
    nodes = {str(node.get("name")): dict(node.get("labels") or {}) for node in cluster.get("nodes") or []}
    problems, labelled = [], 0
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
        elif nodes[node].get(CLIQUE_LABEL) != cliques[0]:
            found = nodes[node].get(CLIQUE_LABEL)
            problems.append(f"node {node} (host {host}): label {CLIQUE_LABEL} is {found or 'missing'}, its GPUs are in "
                            f"clique {cliques[0]}")
        else:
            labelled += 1
    return _check("cliques", problems, f"{CLIQUE_LABEL} present and right on the nodes of {labelled} GPU hosts")


def dra_driver_prerequisites(hostvars: Mapping, hosts: t.Sequence[str], cluster: Mapping,
                             settings: Mapping | None = None) -> dict:
    """Return ``{ok, checks, problems}``; see the filter documentation."""
    chosen = chosen_settings(settings, DEFAULTS, {}, "dra_driver_")
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
    facts = host_facts(hostvars, hosts, "dra_driver_hosts")
    checks = [_kubernetes(cluster, chosen), _driver(facts, operator, chosen)]
    if chosen["compute_domains"]:
        checks += [_imex(facts), _cliques(hostvars, facts, cluster, chosen)]
    problems = [check["message"] for check in checks if check["status"] == "fail"]
    return {"ok": not problems, "checks": checks, "problems": problems}
