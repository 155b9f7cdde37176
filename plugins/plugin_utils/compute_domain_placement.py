# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Choose the nodes of a ComputeDomain validation job: N nodes of one NVLink clique with G GPUs each.

The logic of the ``gpufabric.cluster.compute_domain_placement`` filter; errors are :class:`PlacementError`.
"""

from __future__ import annotations

import typing as t
from collections.abc import Mapping

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.k8s_nodes import GPU_RESOURCE, allocatable, node_ready


class PlacementError(ValueError):
    """Input the ``compute_domain_placement`` filter cannot use; the message says what is wrong."""


CLIQUE_LABEL = "nvidia.com/gpu.clique"
PRODUCT_LABEL = "nvidia.com/gpu.product"


def _positive(label: str, value: t.Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise PlacementError(f"{label} must be a positive integer, got {value!r}")
    return value


def compute_domain_placement(nodes_info: t.Any, nodes: int, gpus_per_node: int, clique: str | None = None,
                             node_names: list[str] | None = None) -> dict:
    """Pick ``nodes`` Ready nodes of one clique with at least ``gpus_per_node`` allocatable GPUs each.

    ``nodes_info`` is the ``resources`` list of ``kubernetes.core.k8s_info`` for the Nodes. ``clique`` or
    ``node_names`` narrow the choice; without them the first clique (sorted) that has enough nodes is used and the
    nodes are taken in name order. Returns the clique, the node names, the GPU model and the MPI launch
    parameters derived from ``nodes`` and ``gpus_per_node`` (``slots_per_worker``, ``np``, ``ppr``).
    """
    nodes = _positive("nodes", nodes)
    gpus_per_node = _positive("gpus_per_node", gpus_per_node)
    clique = arguments.optional(arguments.text, "clique", clique)
    if node_names is not None:
        node_names = arguments.sequence("node_names", node_names)
        if not all(isinstance(name, str) and name for name in node_names):
            raise PlacementError(f"node_names must be a list of node names, got {node_names!r}")
        repeated = sorted({name for name in node_names if node_names.count(name) > 1})
        if repeated:
            # Counted once, a repeated node left the clique short and the error spoke of Ready nodes per clique.
            raise PlacementError(f"node_names names {', '.join(repeated)} more than once")
    if not isinstance(nodes_info, list) or not all(isinstance(node, Mapping) for node in nodes_info):
        raise PlacementError("expected the resources list of k8s_info for Nodes")
    candidates: dict[str, list[str]] = {}
    models: dict[str, str] = {}
    too_small: list[str] = []
    by_name = {}
    for node in nodes_info:
        metadata = node.get("metadata") if isinstance(node.get("metadata"), Mapping) else {}
        name = metadata.get("name")
        labels = metadata.get("labels") if isinstance(metadata.get("labels"), Mapping) else {}
        by_name[name] = (labels.get(CLIQUE_LABEL), allocatable(node, GPU_RESOURCE), node_ready(node))
        if not labels.get(CLIQUE_LABEL) or not node_ready(node) or (node_names and name not in node_names):
            continue
        if allocatable(node, GPU_RESOURCE) < gpus_per_node:
            too_small.append(f"{name} ({allocatable(node, GPU_RESOURCE)})")
            continue
        candidates.setdefault(labels[CLIQUE_LABEL], []).append(name)
        models.setdefault(labels[CLIQUE_LABEL], labels.get(PRODUCT_LABEL, ""))
    if node_names:
        unknown = [name for name in node_names if name not in by_name]
        if unknown:
            raise PlacementError(f"node(s) not in the cluster: {', '.join(unknown)}")
        cliques = {by_name[name][0] for name in node_names}
        if len(cliques) > 1 or None in cliques:
            listed = ", ".join(f"{name} ({by_name[name][0] or 'no clique label'})" for name in node_names)
            raise PlacementError(f"the nodes are not in one NVLink clique: {listed}")
    if too_small and not any(len(members) >= nodes for members in candidates.values()):
        raise PlacementError(f"{gpus_per_node} GPUs per node asked, more than these "
                             f"nodes can allocate: {', '.join(too_small[:10])}")
    usable = {key: sorted(members) for key, members in sorted(candidates.items())
              if len(members) >= nodes and (clique is None or key == clique)}
    if not usable:
        counts = ", ".join(f"{key}: {len(members)}" for key, members in sorted(candidates.items())) or "none"
        wanted = f"clique {clique}" if clique else "any clique"
        raise PlacementError(f"{nodes} Ready nodes with {gpus_per_node} allocatable "
                             f"GPUs wanted in {wanted}; Ready nodes per clique: {counts}")
    chosen_clique, members = next(iter(usable.items()))
    return {"clique": chosen_clique, "nodes": members[:nodes], "gpu_model": models[chosen_clique],
            "slots_per_worker": gpus_per_node, "np": nodes * gpus_per_node, "ppr": f"ppr:{gpus_per_node}:node"}
