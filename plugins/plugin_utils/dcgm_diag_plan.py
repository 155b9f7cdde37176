# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Plan the DCGM diagnostic of the ``validate_dcgm`` role: one pod per GPU node, holding every GPU of its node.

The logic of the ``gpufabric.cluster.dcgm_diag_plan`` filter; errors are :class:`DcgmDiagPlanError` and
:class:`...arguments.ArgumentError`, each naming the variable the user set (``validate_dcgm_node_names``,
``validate_dcgm_name``) and the nodes.

The nodes are the GPU nodes the cluster has (the Node objects ``kubernetes.core.k8s_info`` returns for the label
``nvidia.com/gpu.present=true``, as the other validation roles read them); without names asked, every one of them.
A node that is not Ready, or can allocate no ``nvidia.com/gpu``, cannot run the diagnostic and is refused before
anything is created: a pod would stay Pending until the timeout.
"""

from __future__ import annotations

import hashlib
import re
import typing as t
from collections.abc import Mapping

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.k8s_nodes import GPU_RESOURCE, allocatable, node_ready

# A pod name of at most a DNS label's 63 characters, so that it is also the pod's host name unchanged; the prefix
# leaves room for a node's name (a longer one is cut and made unique by a hash of the whole).
MAX_POD_NAME = 63
MAX_PREFIX = 40
_HASH_DIGITS = 10
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
# How many names an error lists before it counts the rest.
_SHOWN = 10


class DcgmDiagPlanError(ValueError):
    """Nodes or names from which no diagnostic can be planned; the message names the variable and the nodes."""


def _listed(names: list[str]) -> str:
    shown = ", ".join(names[:_SHOWN])
    return shown if len(names) <= _SHOWN else f"{shown} and {len(names) - _SHOWN} more"


def pod_name(prefix: str, node: str) -> str:
    """``<prefix>-<node>`` as a DNS label: dots become dashes; a name over 63 characters is cut and ends with a
    hash of the node's whole name, so two long names never give one pod name."""
    name = f"{prefix}-{re.sub(r'[^a-z0-9-]+', '-', node.lower())}".strip("-")
    if len(name) <= MAX_POD_NAME and name == f"{prefix}-{node}":
        return name
    digest = hashlib.sha256(node.encode("utf-8")).hexdigest()[:_HASH_DIGITS]
    return f"{name[:MAX_POD_NAME - _HASH_DIGITS - 1].rstrip('-')}-{digest}"


def _names(node_names: t.Any) -> list[str]:
    if node_names is None:
        return []
    names = arguments.sequence("validate_dcgm_node_names", node_names)
    checked = []
    for index, name in enumerate(names):
        if not isinstance(name, str) or not name.strip():
            raise DcgmDiagPlanError(f"validate_dcgm_node_names[{index}] must be a node name (a non-empty string), "
                                    f"got {arguments.type_name(name)}")
        if name.strip() in checked:
            raise DcgmDiagPlanError(f"validate_dcgm_node_names names node {name.strip()} twice")
        checked.append(name.strip())
    return checked


def dcgm_diag_plan(nodes: t.Any, node_names: t.Any = None, name: t.Any = "dcgm-diag",
                   resource: t.Any = GPU_RESOURCE) -> list[dict]:
    """One entry per node to diagnose, in name order: ``node``, ``pod`` (its pod's name) and ``gpus`` (how many
    ``resource`` the node can allocate, all of which the pod requests)."""
    nodes = arguments.sequence("_input", nodes)
    if not isinstance(name, str) or len(name) > MAX_PREFIX or not _DNS_LABEL.match(name):
        shown = repr(name[:60]) if isinstance(name, str) else arguments.type_name(name)
        raise DcgmDiagPlanError(f"validate_dcgm_name must be a DNS label of at most {MAX_PREFIX} characters "
                                f"(lower-case letters, digits and '-' inside), got {shown}")
    prefix = name
    resource = arguments.text("resource", resource)
    asked = _names(node_names)
    by_name: dict[str, Mapping] = {}
    for index, node in enumerate(nodes):
        metadata = node.get("metadata") if isinstance(node, Mapping) else None
        node_name = metadata.get("name") if isinstance(metadata, Mapping) else None
        if not isinstance(node_name, str) or not node_name:
            raise DcgmDiagPlanError(f"_input[{index}] is not a Node object with metadata.name (pass the resources of "
                                    "kubernetes.core.k8s_info)")
        by_name[node_name] = node
    if not by_name:
        raise DcgmDiagPlanError("the cluster has no GPU node (label nvidia.com/gpu.present=true, set by GPU Feature "
                                "Discovery): is the GPU Operator running?")
    missing = [node for node in asked if node not in by_name]
    if missing:
        raise DcgmDiagPlanError(f"validate_dcgm_node_names names node(s) that are not GPU nodes of the cluster (label "
                                f"nvidia.com/gpu.present=true): {_listed(missing)}")
    chosen = sorted(asked or by_name)
    not_ready = [node for node in chosen if not node_ready(by_name[node])]
    if not_ready:
        raise DcgmDiagPlanError(f"node(s) not Ready, where a diagnostic pod cannot run: {_listed(not_ready)} (leave "
                                "them out with validate_dcgm_node_names)")
    without = [node for node in chosen if allocatable(by_name[node], resource) < 1]
    if without:
        raise DcgmDiagPlanError(f"node(s) that allocate no {resource}: {_listed(without)} (is the GPU Operator's "
                                "device plugin running there? leave them out with validate_dcgm_node_names)")
    plan = [{"node": node, "pod": pod_name(prefix, node), "gpus": allocatable(by_name[node], resource)}
            for node in chosen]
    pods: dict[str, str] = {}
    for entry in plan:
        if entry["pod"] in pods:
            raise DcgmDiagPlanError(f"nodes {pods[entry['pod']]} and {entry['node']} give one pod name "
                                    f"{entry['pod']}: set validate_dcgm_name to a shorter prefix")
        pods[entry["pod"]] = entry["node"]
    return plan
